// Small helpers for what a person does on the page.
import { expect, type Page } from '@playwright/test';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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

/** The page is no wider than the screen (nothing scrolls it sideways). */
export async function noSidewaysScroll(page: Page) {
  const { sw, cw } = await page.evaluate(() => ({ sw: document.documentElement.scrollWidth, cw: document.documentElement.clientWidth }));
  expect(sw, 'the page is no wider than the screen').toBeLessThanOrEqual(cw);
}

/** The player stays where it is while a picture is taken (sticky, it would cover the top of a tall view). */
export async function unstick(page: Page) {
  await page.addStyleTag({ content: '.player { position: static !important; }' });
}

export function scratchDir(): string {
  return mkdtempSync(join(tmpdir(), 'btrfslab-e2e-'));
}

// axe-core, injected into the page: the WCAG 2.x A and AA rules and best practices
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** The violations axe finds on the page as it is, one line each (rule, help, where). */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: axeSource });
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return r.violations;
  });
  return found.flatMap((v) => v.nodes.map((n) => `${v.id}: ${v.help} at ${n.target.join(' ')}`));
}
