// Lesson 7 as a learner uses it: one metadata group's relocation stepped
// through its phases (the group chosen, three reloc trees built, merged by
// pointer swaps each traced in subtree mode, dropped, the group removed), the
// seed's picture at each (old blocks, the reloc tree's new copies, the leaves
// both trees share, the swap), the blocks each mode traces; the deferred
// relocation's commit; the question
// before the swap; the scenario in the three modes (full > subtree >
// deferred dirty extents, the same qgroups); the seed's table beside ours;
// the state exported and read back by the CLI; screenshots at desktop and
// phone width; axe.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { CLI } from '../tests/kernel/lib.mjs';
import { axeViolations, noSidewaysScroll, scratchDir, unstick } from './helpers';

const LESSON = '07-relocation';
// the scenario's steps: 12 is line 16 (the commit after the snapshots), 14 line 21 (relocate, subtree), 16 line 25 (relocate, deferred)
const BEFORE = 13, SUBTREE = 14, DEFERRED = 16;

async function open(page: Page, step: number) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?lesson=${LESSON}&step=${step}`);
  await expect(page.getByTestId('sentence')).not.toBeEmpty();
}

const panel = (page: Page) => page.getByRole('region', { name: 'Relocation: reloc trees and the subtree swap' });
const said = (page: Page) => panel(page).getByTestId('reloc-said');
const slots = (page: Page, side: 'file' | 'reloc') => panel(page).locator(`g.reloc-side.${side} g.r-slot`);

async function settled(page: Page, line: number) {
  await expect(panel(page).getByTestId('reloc-summary')).toContainText(`Line ${line}:`);
  await expect(panel(page)).toHaveAttribute('data-ready', 'true');
}

async function press(page: Page, name: string) {
  const was = await panel(page).getAttribute('data-at');
  await panel(page).getByRole('button', { name, exact: true }).click();
  await expect(panel(page)).not.toHaveAttribute('data-at', was!);
}

test.describe('at desktop width', () => {
  test.use({ viewport: { width: 1400, height: 950 } });

  test('the metadata balance, phase by phase: chosen, reloc trees built, merged by swaps, dropped, removed', async ({ page }) => {
    await open(page, SUBTREE);
    await settled(page, 21);
    await expect(panel(page).getByTestId('reloc-summary')).toContainText('Relocated the metadata group at 17.3 MiB (256.0 KiB) (reloc trees for the fs tree, tree 256, tree 257), 15 extents found. 14 pointer swaps, 14 traced at once; 16 qgroup dirty extents');
    await expect(panel(page).getByTestId('reloc-dirty')).toContainText('= 16');
    await panel(page).getByRole('slider', { name: 'Relocation event' }).fill('0');
    await expect(said(page)).toContainText("Before the step's first relocation event.");
    await press(page, 'Next phase');
    await expect(said(page)).toContainText('Balance chooses the metadata group at 17.3 MiB (256.0 KiB): it is made read-only, and the extent tree lists 15 extents');
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Group chosen (read-only)');
    await press(page, 'Next phase');
    await expect(said(page)).toContainText(/The fs tree reaches the group, so it gets a reloc tree: its root \d+ is a copy of the fs tree's root \(level 1\), pointing at the same 57 blocks below\./);
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Reloc trees built');
    // the fs tree's picture: right after the reloc trees are built, the copies are in the reloc tree, the subvolume still at the old blocks
    await press(page, 'Next phase');
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Merged (pointer swaps)');
    await expect(said(page)).toContainText(/Merge: the fs tree's root \d+ is copied to \d+/);
    await panel(page).getByRole('combobox', { name: 'Subvolume' }).selectOption({ label: 'the fs tree' });
    // 5 of the 57 leaves were in the group: copied (N) in the reloc tree, old (O) in the fs tree; 52 shared (S) by both, traced by no mode
    await expect(slots(page, 'file')).toHaveCount(57);
    await expect(slots(page, 'file').and(page.locator('[data-kind="old"]'))).toHaveCount(5);
    await expect(slots(page, 'reloc').and(page.locator('[data-kind="new"]'))).toHaveCount(5);
    await expect(slots(page, 'file').and(page.locator('[data-kind="shared"]'))).toHaveCount(52);
    await expect(slots(page, 'reloc').and(page.locator('[data-kind="shared"]'))).toHaveCount(52);
    await expect(slots(page, 'file').and(page.locator('[data-kind="shared"][data-traced="true"]'))).toHaveCount(0);
    await unstick(page);
    await expect(panel(page).locator('.shared-figure-box')).toHaveScreenshot('lesson7-built.png', { maxDiffPixelRatio: 0.02 });
    // the swaps: the subvolume takes the new block, the reloc tree the old one, the pair traced
    await press(page, 'Next swap');
    await expect(said(page)).toContainText(/Swap in the fs tree: it takes the reloc tree's new leaf \d+, and the reloc tree takes the old \d+\. Qgroups trace the pair now \(subtree mode\)/);
    await press(page, 'Next phase');
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Reloc trees dropped');
    await panel(page).getByRole('button', { name: 'Previous relocation event', exact: true }).click();
    await expect(slots(page, 'file').and(page.locator('[data-swapped="true"][data-kind="new"]'))).toHaveCount(5);
    await expect(slots(page, 'reloc').and(page.locator('[data-kind="old"]'))).toHaveCount(5);
    await expect(slots(page, 'file').and(page.locator('[data-kind="shared"]'))).toHaveCount(52);
    await expect(panel(page).locator('.shared-figure-box')).toHaveScreenshot('lesson7-swapped.png', { maxDiffPixelRatio: 0.02 });
    // which blocks each mode traces at the swap
    await expect(slots(page, 'file').and(page.locator('[data-traced="true"]'))).toHaveCount(5);
    await panel(page).getByRole('radio', { name: 'full' }).check();
    await expect(slots(page, 'file').and(page.locator('[data-traced="true"]'))).toHaveCount(5);
    await expect(slots(page, 'file').and(page.locator('[data-kind="shared"][data-traced="true"]'))).toHaveCount(0);
    await expect(panel(page).getByTestId('reloc-mode-said')).toContainText('the data those leaves point at');
    await panel(page).getByRole('radio', { name: 'deferred' }).check();
    await expect(slots(page, 'file').and(page.locator('[data-traced="true"]'))).toHaveCount(0);
    await expect(panel(page).getByTestId('reloc-mode-said')).toContainText('nothing at the swap');
    await press(page, 'Next commit');
    await expect(said(page)).toContainText('16 qgroup dirty extents accounted');
    await press(page, 'Next phase');
    await expect(said(page)).toContainText('is empty: its block group item, chunk and device extents are removed');
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Group removed');
  });

  test('the deferred relocation: no pair traced at the swaps, 6 dirty extents', async ({ page }) => {
    await open(page, DEFERRED);
    await settled(page, 25);
    await expect(panel(page).getByTestId('reloc-summary')).toContainText('Relocated the metadata group at 17.5 MiB (256.0 KiB)');
    await expect(panel(page).getByTestId('reloc-summary')).toContainText('11 pointer swaps, 0 traced at once; 6 qgroup dirty extents at the commits');
  });

  test('the question before the relocation: which blocks need tracing after the swaps', async ({ page }) => {
    await open(page, BEFORE);
    await page.getByRole('button', { name: 'Step forward' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('which blocks must qgroups trace after the swaps?');
    await dialog.getByRole('radio', { name: /The 5 new leaves and the 5 old leaves they replaced/ }).click();
    await expect(dialog.getByRole('status')).toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    await expect(page.getByTestId('sentence')).toContainText('Line 21');
    await settled(page, 21);
  });

  test('the three modes: full > subtree > deferred dirty extents, the same qgroups; the seed\'s table beside ours', async ({ page }) => {
    await open(page, SUBTREE);
    const compare = page.getByRole('region', { name: 'The same scenario in the three modes' });
    await compare.getByRole('button', { name: 'Run in the three modes' }).click();
    await expect(compare).toHaveAttribute('data-ready', 'true');
    const dirty = async (mode: string) => Number(await compare.locator(`li[data-mode="${mode}"]`).getAttribute('data-dirty'));
    const [full, subtree, deferred] = [await dirty('full'), await dirty('subtree'), await dirty('deferred')];
    expect(full).toBeGreaterThan(subtree);
    expect(subtree).toBeGreaterThan(deferred);
    expect([full, subtree, deferred]).toEqual([161, 30, 12]);
    await expect(compare.getByTestId('reloc-same')).toHaveText('The qgroups are the same in all three modes: only the work to count them differs.');
    for (const row of await compare.getByTestId('reloc-qgroups').locator('tbody tr').all()) {
      const cells = await row.locator('td').allTextContents();
      expect(new Set(cells).size, await row.getAttribute('data-qgroup') ?? '').toBe(1);
    }
    await unstick(page);
    await expect(compare).toHaveScreenshot('lesson7-modes.png', { maxDiffPixelRatio: 0.02 });
    const seed = page.getByTestId('seed004-table');
    await expect(seed.locator('tr[data-snapshots="16"][data-metric="dirty"]')).toContainText('225,251');
    await expect(seed.locator('tr[data-snapshots="16"][data-metric="dirty"]')).toContainText('−37.7%');
    await expect(seed.locator('tr[data-snapshots="16"][data-metric="dirty"]')).toContainText('−49.0%');
    await expect(seed.locator('tr[data-snapshots="64"][data-metric="dirty"]')).toContainText('260 (deferred)');
  });

  test('export this state: the image after the relocation, its qgroups read back by the CLI, the group gone', async ({ page }) => {
    await open(page, SUBTREE);
    await settled(page, 21);
    const saved = page.waitForEvent('download');
    await panel(page).getByRole('button', { name: 'Export this state' }).click();
    const file = await saved;
    expect(file.suggestedFilename()).toBe('state-line21.img');
    const dir = scratchDir();
    try {
      const img = join(dir, 'state.img');
      copyFileSync((await file.path())!, img);
      const show = execFileSync(CLI, ['qgroup', 'show', '-p', '--raw', img], { encoding: 'utf8' });
      expect(show).toMatch(/^0\/5 +\d+ +\d+/m);
      expect(show).toMatch(/^0\/257 +\d+ +\d+ +- +tuesday$/m);
      expect(execFileSync(CLI, ['check', img], { encoding: 'utf8' })).toContain('0 errors');
      const chunks = execFileSync(CLI, ['dump-tree', '-t', 'chunk', img], { encoding: 'utf8' });
      expect(chunks).not.toMatch(/CHUNK_ITEM 18087936\)/);
      // the copies' group, 256K as in a straight run (the export resumes from a checkpoint)
      expect(chunks).toMatch(/CHUNK_ITEM 18350080\)[^]*?length 262144 owner 2 stripe_len 65536 type METADATA/);
      expect(chunks).toMatch(/CHUNK_ITEM 5242880\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test.describe('at phone width', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('the relocation panel fits; its picture scrolls sideways', async ({ page }) => {
    await open(page, SUBTREE);
    await settled(page, 21);
    await noSidewaysScroll(page);
    await press(page, 'Next swap');
    await noSidewaysScroll(page);
    await unstick(page);
    await expect(panel(page).locator('.shared-figure-box')).toHaveScreenshot('phone-lesson7-swap.png', { maxDiffPixelRatio: 0.02 });
  });
});

for (const size of [{ name: 'desktop', width: 1440, height: 900 }, { name: 'phone', width: 390, height: 844 }]) {
  test.describe(`lesson 7: no accessibility violations at ${size.name} width`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });

    test('the relocation panel at the step\'s end and at a swap, and the three modes', async ({ page }) => {
      await open(page, SUBTREE);
      await settled(page, 21);
      expect(await axeViolations(page)).toEqual([]);
      await press(page, 'Next swap');
      const compare = page.getByRole('region', { name: 'The same scenario in the three modes' });
      await compare.getByRole('button', { name: 'Run in the three modes' }).click();
      await expect(compare).toHaveAttribute('data-ready', 'true');
      expect(await axeViolations(page)).toEqual([]);
    });
  });
}
