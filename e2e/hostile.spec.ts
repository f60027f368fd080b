// Hostile images in the page, and cancelling what takes long: the core's
// error is shown, the page stays usable, and a cancelled request restarts
// the core's worker without freezing anything.
import { expect, test } from '@playwright/test';
import { join } from 'node:path';
import { format, openApp, scratchDir } from './helpers';
// @ts-expect-error: a plain ES module of the CLI tests (crafts images with valid checksums)
import { makeHostileImages } from '../tests/cli/hostile-images.mjs';

type Case = { name: string; img: string; kind: string };
let cases: Case[] = [];
test.beforeAll(() => {
  cases = makeHostileImages(join(scratchDir(), 'hostile'));
});
const img = (name: string) => cases.find((c) => c.name === name)!.img;

test('crafted images give the tree checker\'s error, and the page goes on working', async ({ page }) => {
  await openApp(page);
  await page.getByLabel(/Or open an image/).setInputFiles(img('101-dir-index-name-300'));
  await expect(page.getByRole('alert')).toContainText('invalid dir item name_len 300, expect 1..255');
  await page.getByLabel(/Or open an image/).setInputFiles(img('105-xattr-value-past-item'));
  await expect(page.getByRole('alert')).toContainText('data_len 4000 overruns the item');
  await format(page, { size: '64M' });
  await expect(page.getByRole('alert')).toHaveCount(0);
  await expect(page.getByRole('status')).toHaveText('Ready.');
});

test('an image whose tree pointers all lead to one child opens or is refused, never hangs the page', async ({ page }) => {
  await openApp(page);
  await page.getByLabel(/Or open an image/).setInputFiles(img('303-all-pointers-to-one-child'));
  await expect(page.getByRole('alert').or(page.getByRole('status').filter({ hasText: 'Ready.' }))).toBeVisible();
  await format(page, { size: '64M' });
  await expect(page.getByRole('status')).toHaveText('Ready.');
});

test('a long run can be cancelled: the core restarts and the lesson runs again', async ({ page }) => {
  await page.goto('./?lesson=01-cow-btree');
  const script = page.getByLabel('Scenario script');
  await expect(script).toBeVisible();
  const original = await script.inputValue();
  await script.fill('mkfs nodesize=4K size=1G\nmkdir /d\ncreate /d/f_{1..1000000}\n');
  await page.getByRole('button', { name: 'Run scenario' }).click();
  const bar = page.getByTestId('busybar');
  await expect(bar).toBeVisible({ timeout: 20_000 });
  await expect(bar).toContainText(/Running the scenario… \d+\.\d s/);
  await bar.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'Cancelled' })).toHaveText('Cancelled: the core stopped what it was doing and started afresh.');
  await expect(bar).toBeHidden({ timeout: 20_000 });
  // a new worker serves the lesson again: its own scenario, run to its end
  await expect(script).toHaveValue(original);
  await page.getByRole('button', { name: 'Run scenario' }).click();
  await expect(bar).toBeHidden({ timeout: 30_000 });
  await expect(page.getByRole('button', { name: 'Run scenario' })).toBeEnabled();
});
