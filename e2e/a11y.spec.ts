// axe-core over every view, at desktop and phone width, with a question
// open and an item selected: no violations. axe runs in the page (its
// source injected), with the WCAG 2.x A and AA rules and best practices.
import { expect, test, type Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CLI } from '../tests/kernel/lib.mjs';
import { axeViolations as violations } from './helpers';

async function settle(page: Page) {
  await expect(page.getByTestId('sentence').first()).not.toBeEmpty();
  await expect(page.getByTestId('tree-canvas').first().locator('g.block').first()).toBeVisible();
  await page.waitForTimeout(150); // transitions (reduced motion: short) end
}

const SIZES = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
];

for (const size of SIZES) {
  test.describe(`no accessibility violations at ${size.name} width`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });
    test.beforeEach(async ({ page }) => {
      await page.emulateMedia({ reducedMotion: 'reduce' });
    });

    test('lesson 1: the tree, a question open, an item selected', async ({ page }) => {
      await page.goto('./?lesson=01-cow-btree');
      await settle(page);
      expect(await violations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Step forward' }).click();
      await expect(page.getByRole('dialog')).toBeVisible();
      expect(await violations(page)).toEqual([]);
      await page.keyboard.press('Enter');
      await expect(page.getByRole('dialog').getByRole('status')).toBeVisible();
      expect(await violations(page)).toEqual([]);
      await page.getByRole('button', { name: 'See it happen' }).click();
      await settle(page);
      await page.getByTestId('tree-canvas').locator('rect.item').first().click();
      await expect(page.getByRole('region', { name: 'Item' })).toBeVisible();
      expect(await violations(page)).toEqual([]);
      // an event inside a line: a COW's copy with the committed block faded behind it
      await page.goto('./?lesson=01-cow-btree&step=4');
      await settle(page);
      await page.getByRole('button', { name: 'Next event' }).click();
      await page.getByRole('button', { name: 'Next event' }).click();
      await expect(page.getByTestId('tree-canvas').locator('g.ghost').first()).toBeVisible();
      expect(await violations(page)).toEqual([]);
      // a wide tree: untouched leaves folded
      await page.getByLabel('Scenario script').fill('mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f{1..400}\ncommit\nwrite /d/f200 0 100 1\n');
      await page.getByRole('button', { name: 'Run scenario' }).click();
      await expect(page.getByText('Step 0 of 5')).toBeVisible();
      await page.getByRole('slider', { name: 'Step' }).fill('4');
      await expect(page.getByTestId('tree-canvas').locator('g.block.fold').first()).toBeVisible();
      expect(await violations(page)).toEqual([]);
    });

    test('lesson 2: replay and compare views', async ({ page }) => {
      await page.goto('./?lesson=02-fsync-log-tree&step=6');
      await settle(page);
      await expect(page.getByRole('region', { name: /replay/i }).first()).toBeVisible();
      expect(await violations(page)).toEqual([]);
      // a replay action on show: its pass pressed, its items listed
      await page.getByRole('group', { name: 'Jump to a pass' }).getByRole('button', { name: /^inodes/ }).click();
      await expect(page.getByRole('list', { name: 'Items this action changed in the fs tree' })).toBeVisible();
      expect(await violations(page)).toEqual([]);
      // a crash inside a line: the write slider and its sentence
      await page.goto('./?lesson=02-fsync-log-tree&crash=9.1');
      await settle(page);
      await expect(page.getByRole('slider', { name: 'Crash after write' })).toBeVisible();
      expect(await violations(page)).toEqual([]);
    });

    test('an opened image with a pending log: its replay view', async ({ page }) => {
      const img = join(mkdtempSync(join(tmpdir(), 'btrfslab-a11y-')), 'crashed.img');
      execFileSync(CLI, ['run', 'tests/scenarios/007-fsync-crash/scenario.txt', '--image', img]);
      await page.goto('./?view=playground');
      await expect(page.getByRole('status').first()).not.toHaveText(/Loading the core/);
      await page.getByLabel(/Or open an image/).setInputFiles(img);
      await expect(page.getByRole('region', { name: 'Log replay: crashed.img' }).locator('p.step-text')).toContainText('Replay has');
      await page.getByRole('button', { name: 'Next replay step' }).click();
      expect(await violations(page)).toEqual([]);
      rmSync(dirname(img), { recursive: true, force: true });
    });

    test('the image playground, with an image made', async ({ page }) => {
      await page.goto('./?view=playground');
      await expect(page.getByRole('status').first()).not.toHaveText(/Loading the core/);
      expect(await violations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Format' }).click();
      await expect(page.getByTestId('tree-canvas').locator('g.block')).toHaveCount(1);
      expect(await violations(page)).toEqual([]);
    });
  });
}
