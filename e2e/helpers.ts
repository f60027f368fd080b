// Small helpers for what a person does on the page.
import { expect, type Page } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function openApp(page: Page) {
  await page.goto('./?view=playground');
  await expect(page.getByRole('status')).not.toHaveText(/Loading the core/);
}

export async function format(page: Page, opts: { size?: string; nodesize?: string; label?: string } = {}) {
  if (opts.size) await page.getByLabel('Size', { exact: true }).fill(opts.size);
  if (opts.nodesize) await page.getByLabel('Node size').selectOption({ label: opts.nodesize });
  if (opts.label) await page.getByLabel('Label').fill(opts.label);
  await page.getByRole('button', { name: 'Format' }).click();
}

export function scratchDir(): string {
  return mkdtempSync(join(tmpdir(), 'btrfslab-e2e-'));
}
