// Lesson 7 as a learner uses it: one metadata group's relocation stepped
// through its phases (the group chosen, three reloc trees built, merged by
// pointer swaps each traced in subtree mode, dropped, the group removed), the
// seed's three-level picture at each (the roots, the level-1 nodes merge
// swaps, below them the reloc tree's new leaves and the leaves the old node
// and the new share, in labelled groups), the blocks each mode traces and
// their counter (full counting the shared leaves below the swaps, subtree
// not); the deferred relocation's commit; the question before the swap; the
// scenario in the three modes (full > subtree > deferred dirty extents, the
// same qgroups); the seed's table beside ours; the state exported and read
// back by the CLI; screenshots at desktop and phone width; axe.
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
const leaves = (page: Page, side: 'file' | 'reloc', sel = '') => panel(page).locator(`g.reloc-side.${side} g.r-leaf${sel}`);
/** The leaves a selection stands for: a labelled group of shared leaves counts as many. */
const count = async (page: Page, side: 'file' | 'reloc', sel = '') =>
  (await leaves(page, side, sel).evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-count'))))).reduce((a, b) => a + b, 0);
const traced = (page: Page, mode: string) => panel(page).getByTestId('reloc-traced').locator(`li[data-mode="${mode}"]`);

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

  test('the metadata balance, phase by phase: chosen, reloc trees built, merged by swaps at level 1 over shared leaves, dropped, removed', async ({ page }) => {
    await open(page, SUBTREE);
    await settled(page, 21);
    await expect(panel(page).getByTestId('reloc-summary')).toContainText('Relocated the metadata group at 17.8 MiB (256.0 KiB) (reloc trees for the fs tree, tree 256, tree 257), 20 extents found. 6 pointer swaps, 6 traced at once; 26 qgroup dirty extents');
    await expect(panel(page).getByTestId('reloc-dirty')).toContainText('= 26');
    await panel(page).getByRole('slider', { name: 'Relocation event' }).fill('0');
    await expect(said(page)).toContainText("Before the step's first relocation event.");
    await press(page, 'Next phase');
    await expect(said(page)).toContainText('Balance chooses the metadata group at 17.8 MiB (256.0 KiB): it is made read-only, and the extent tree lists 21 extents');
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Group chosen (read-only)');
    await press(page, 'Next phase');
    // three levels: the reloc tree's root is a copy of the level-2 root, over its two level-1 nodes
    await expect(said(page)).toContainText(/The fs tree reaches the group, so it gets a reloc tree: its root \d+ is a copy of the fs tree's root \(level 2\), pointing at the same 2 blocks below\./);
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Reloc trees built');
    // right before merge: the copies are in the reloc tree, the subvolume still at the old blocks
    await press(page, 'Next phase');
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Merged (pointer swaps)');
    await expect(said(page)).toContainText(/Merge: the fs tree's root \d+ is copied to \d+/);
    await panel(page).getByRole('combobox', { name: 'Subvolume' }).selectOption({ label: 'the fs tree' });
    await expect(panel(page).getByTestId('reloc-svg')).toHaveAttribute('data-level', '2');
    // the seed's (b), (c): both level-1 nodes copied (N) in the reloc tree, old (O) in the fs tree
    await expect(slots(page, 'file')).toHaveCount(2);
    await expect(slots(page, 'file').and(page.locator('[data-level="1"][data-kind="old"]'))).toHaveCount(2);
    await expect(slots(page, 'reloc').and(page.locator('[data-level="1"][data-kind="new"]'))).toHaveCount(2);
    // below them: 181 leaves on each side, (g) 4 old in the fs tree and their 4 copies in the reloc tree, (d)-(f) 177 shared by both, in labelled groups
    expect(await count(page, 'file')).toBe(181);
    expect(await count(page, 'reloc')).toBe(181);
    expect(await count(page, 'file', '[data-kind="old"]')).toBe(4);
    expect(await count(page, 'reloc', '[data-kind="new"]')).toBe(4);
    expect(await count(page, 'file', '[data-kind="shared"]')).toBe(177);
    expect(await count(page, 'reloc', '[data-kind="shared"]')).toBe(177);
    await expect(leaves(page, 'file', '.r-run').first()).toContainText('shared');
    expect(await leaves(page, 'file', '.r-run').count()).toBeLessThan(10);
    // nothing is swapped yet: no mode has traced anything
    expect(await count(page, 'file', '[data-traced="true"]')).toBe(0);
    await unstick(page);
    await expect(panel(page).locator('.shared-figure-box')).toHaveScreenshot('lesson7-built.png', { maxDiffPixelRatio: 0.02 });
    // the swaps: at level 1, the subvolume takes the new node (and what is below it), the reloc tree the old one, the pairs traced
    await press(page, 'Next swap');
    await expect(said(page)).toContainText(/Swap in the fs tree: it takes the reloc tree's new node \d+, and the reloc tree takes the old \d+, with everything below them\. Qgroups trace the pair now \(subtree mode\): the new node and the one it replaced/);
    await press(page, 'Next phase');
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Reloc trees dropped');
    await panel(page).getByRole('button', { name: 'Previous relocation event', exact: true }).click();
    await expect(slots(page, 'file').and(page.locator('[data-swapped="true"][data-kind="new"]'))).toHaveCount(2);
    await expect(slots(page, 'reloc').and(page.locator('[data-kind="old"]'))).toHaveCount(2);
    expect(await count(page, 'file', '[data-kind="new"]')).toBe(4);
    expect(await count(page, 'reloc', '[data-kind="old"]')).toBe(4);
    expect(await count(page, 'file', '[data-kind="shared"]')).toBe(177);
    await expect(panel(page).locator('.shared-figure-box')).toHaveScreenshot('lesson7-swapped.png', { maxDiffPixelRatio: 0.02 });
    // which blocks each mode traces at the swaps: subtree the swapped nodes and the new leaves with the old, not the shared ones
    await expect(slots(page, 'file').and(page.locator('[data-traced="true"]'))).toHaveCount(2);
    expect(await count(page, 'file', '[data-traced="true"]')).toBe(4);
    expect(await count(page, 'file', '[data-kind="shared"][data-traced="true"]')).toBe(0);
    // full: both subtrees, the 177 shared leaves below the swapped nodes too
    await panel(page).getByRole('radio', { name: 'full' }).check();
    await expect(slots(page, 'file').and(page.locator('[data-traced="true"]'))).toHaveCount(2);
    expect(await count(page, 'file', '[data-kind="shared"][data-traced="true"]')).toBe(177);
    await expect(panel(page).getByTestId('reloc-mode-said')).toContainText('the shared leaves below them included, and the data those leaves point at');
    // the counter: full traces at least the shared leaves below the swaps more than subtree
    const blocks = async (m: string) => Number(await traced(page, m).getAttribute('data-blocks'));
    const shared = Number(await traced(page, 'full').getAttribute('data-shared'));
    expect(shared).toBe(177);
    expect(await blocks('full') - await blocks('subtree')).toBeGreaterThanOrEqual(shared);
    expect([await blocks('full'), await blocks('subtree'), await blocks('deferred')]).toEqual([189, 12, 0]);
    await expect(traced(page, 'full')).toContainText('189 blocks (177 shared below the swaps)');
    // full's outline is the core's walks at the fs tree's two swaps (qgroup_trace_subtree, from the scenario run in full mode): each node's old and new subtree, the node and its 84 or 97 leaves
    const walked = async (k: string) => Number(await traced(page, 'full').getAttribute(`data-${k}`));
    expect([await walked('walks'), await walked('walked-blocks'), await walked('walked-extents')]).toEqual([4, 2 * (85 + 98), 6]);
    await panel(page).getByRole('radio', { name: 'deferred' }).check();
    await expect(slots(page, 'file').and(page.locator('[data-traced="true"]'))).toHaveCount(0);
    expect(await count(page, 'file', '[data-traced="true"]')).toBe(0);
    await expect(panel(page).getByTestId('reloc-mode-said')).toContainText('nothing at the swap');
    await press(page, 'Next commit');
    await expect(said(page)).toContainText('26 qgroup dirty extents accounted');
    await press(page, 'Next phase');
    await expect(said(page)).toContainText('is empty: its block group item, chunk and device extents are removed');
    await expect(panel(page).locator('.reloc-phases li[aria-current="step"]')).toHaveText('Group removed');
  });

  test('the deferred relocation: no pair traced at the swaps, 6 dirty extents', async ({ page }) => {
    await open(page, DEFERRED);
    await settled(page, 25);
    await expect(panel(page).getByTestId('reloc-summary')).toContainText('Relocated the metadata group at 18.0 MiB (256.0 KiB)');
    await expect(panel(page).getByTestId('reloc-summary')).toContainText('6 pointer swaps, 0 traced at once; 6 qgroup dirty extents at the commits');
  });

  test('the question before the relocation: which blocks need tracing after the swaps', async ({ page }) => {
    await open(page, BEFORE);
    await page.getByRole('button', { name: 'Step forward' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('which blocks must qgroups trace after the swaps?');
    await dialog.getByRole('radio', { name: /The new level-1 nodes and the old ones they replaced, and below them the 4 new leaves/ }).click();
    await expect(dialog.getByRole('status')).toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    await expect(page.getByTestId('sentence')).toContainText('Line 21');
    await settled(page, 21);
  });

  test('the three modes: full > subtree > deferred dirty extents, the same qgroups; the seed\'s table beside ours', async ({ page }) => {
    await open(page, SUBTREE);
    await settled(page, 21);
    const compare = page.getByRole('region', { name: 'The same scenario in the three modes' });
    await compare.getByRole('button', { name: 'Run in the three modes' }).click();
    await expect(compare).toHaveAttribute('data-ready', 'true');
    const dirty = async (mode: string) => Number(await compare.locator(`li[data-mode="${mode}"]`).getAttribute('data-dirty'));
    const [full, subtree, deferred] = [await dirty('full'), await dirty('subtree'), await dirty('deferred')];
    expect(full).toBeGreaterThan(subtree);
    expect(subtree).toBeGreaterThan(deferred);
    expect([full, subtree, deferred]).toEqual([429, 50, 12]);
    // the relocation panel's counter gets the core's count for its group's commit in each mode: full counts the shared leaves below the swaps, subtree does not
    const group = (mode: string) => panel(page).getByTestId('reloc-group-dirty').locator(`[data-mode="${mode}"]`);
    const groupDirty = async (mode: string) => Number(await group(mode).getAttribute('data-dirty'));
    expect([await groupDirty('full'), await groupDirty('subtree'), await groupDirty('deferred')]).toEqual([215, 26, 6]);
    const shared = Number(await traced(page, 'full').getAttribute('data-shared'));
    expect(shared).toBe(177);
    expect(await groupDirty('full') - await groupDirty('subtree')).toBeGreaterThanOrEqual(shared);
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
    // the caption's words and the note below all inside the table's scroll box, none cut at its edge
    const cut = await seed.evaluate((t) => {
      const box = t.parentElement!.getBoundingClientRect(), words = document.createRange();
      words.selectNodeContents(t.querySelector('caption')!);
      const note = document.getElementById(t.getAttribute('aria-describedby')!)!.getBoundingClientRect();
      return { caption: words.getBoundingClientRect().right - box.right, note: note.right - box.right };
    });
    expect(cut.caption).toBeLessThanOrEqual(0);
    expect(cut.note).toBeLessThanOrEqual(0);
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
      expect(chunks).not.toMatch(/CHUNK_ITEM 18612224\)/);
      // the copies' group, 256K as in a straight run (the export resumes from a checkpoint)
      expect(chunks).toMatch(/CHUNK_ITEM 18874368\)[^]*?length 262144 owner 2 stripe_len 65536 type METADATA/);
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
