// Lesson 6 as a learner uses it: the snapshot (a new root over the same six
// leaves, a reference of the new tree queued for each, both on disk at the
// commit, the ROOT_ITEM keyed by the transaction, the qgroups inherited);
// the fs tree letting go of a shared leaf (FULL_BACKREF, its data extents
// referenced by it) and what that leaf has once the queue runs; the commit's
// accounting, each extent's old roots and new roots in a sentence; the
// clone's extent shared again; the snapshot deleted (the cleaner's drop,
// the fs tree's qgroup holding all it references); the state exported and read back by the CLI
// (its qgroups as btrfs qgroup show prints them); the player's events moving
// the panel; the snapshot's tree in the explorer; the questions; screenshots
// at desktop and phone width; axe.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { CLI } from '../tests/kernel/lib.mjs';
import { axeViolations, noSidewaysScroll, scratchDir, unstick } from './helpers';

const LESSON = '06-snapshots';
// the scenario's steps: 11 is line 14 (the first commit), 12 line 16 (the snapshot), 13 line 18 (the fs tree changes note_7),
// 14 line 19 (its commit), 19 line 27 (the clone), 20 line 28 (its commit), 21 line 30 (the snapshot deleted)
const BEFORE = 11, SNAPSHOT = 12, LET_GO = 13, LET_GO_COMMIT = 14, CLONE_COMMIT = 20, DELETE = 21;

async function open(page: Page, step: number) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?lesson=${LESSON}&step=${step}`);
  await expect(page.getByTestId('sentence')).not.toBeEmpty();
}

const shared = (page: Page) => page.getByRole('region', { name: 'Shared blocks: references and qgroups' });

/** The panel once its picture is the one of its cursor. */
async function settled(page: Page, line: number) {
  await expect(shared(page).getByTestId('shared-summary')).toContainText(`Line ${line}:`);
  await expect(shared(page)).toHaveAttribute('data-ready', 'true');
}

async function press(page: Page, name: string) {
  const was = await shared(page).getAttribute('data-at');
  await shared(page).getByRole('button', { name, exact: true }).click();
  await expect(shared(page)).not.toHaveAttribute('data-at', was!);
  await expect(shared(page)).toHaveAttribute('data-ready', 'true');
}

const said = (page: Page) => shared(page).getByTestId('shared-said');
const block = (page: Page, bytenr: string) => shared(page).locator(`g.shared-block[data-bytenr="${bytenr}"]`);
const row = (page: Page, bytenr: string) => shared(page).getByTestId('ref-table').locator(`tr[data-bytenr="${bytenr}"]`);

test.describe('at desktop width', () => {
  test.use({ viewport: { width: 1400, height: 950 } });

  test('the snapshot: a new root over the same six leaves, a reference of tree 257 queued for each, on disk at the commit', async ({ page }) => {
    await open(page, SNAPSHOT);
    await settled(page, 16);
    const panel = shared(page);
    // at the step's end: three roots, and six leaves each reached by both trees, two references each
    await expect(panel.locator('g.shared-block:not([data-root=""])')).toHaveCount(3);
    const leaves = panel.locator('g.shared-block[data-trees="5 257"][data-level="0"]');
    await expect(leaves).toHaveCount(6);
    for (const l of await leaves.all()) await expect(l).toHaveAttribute('data-refs', '2');
    await expect(panel.getByTestId('root-items')).toContainText('(257 ROOT_ITEM 5) keyed by transaction 5, which made the snapshot');
    await expect(panel.getByTestId('root-items')).toContainText('(FS_TREE ROOT_ITEM 0) root');
    await expect(panel.getByTestId('root-items')).toContainText('last_snapshot 5');
    await expect(panel.getByTestId('qgroup-table').locator('tr[data-qgroup="0/257"]')).toHaveAttribute('data-exclusive', '4096');
    await expect(panel.getByTestId('qgroup-table').locator('tr[data-qgroup="0/257"]')).toHaveAttribute('data-referenced', '110592');
    await unstick(page);
    await expect(panel.locator('.shared-figure-box')).toHaveScreenshot('lesson6-snapshot.png', { maxDiffPixelRatio: 0.02 });
    // from the start: the root's copy, then the first reference of tree 257 queued
    await panel.getByRole('slider', { name: 'Reference event' }).fill('0');
    await expect(panel).toHaveAttribute('data-ready', 'true');
    await expect(said(page)).toContainText('Before the step\'s first reference event.');
    await press(page, 'Next reference');
    await expect(said(page)).toContainText(/Queued: \+1 reference to leaf (\d+), keyed by tree 257 \(TREE_BLOCK_REF\): tree 257's new root points at it\./);
    const leaf = /to leaf (\d+)/.exec((await said(page).textContent())!)![1];
    await expect(row(page, leaf)).toContainText('refs 1: keyed by the fs tree (TREE_BLOCK_REF)');
    await expect(row(page, leaf)).toContainText('+1 keyed by tree 257 (TREE_BLOCK_REF)');
    await expect(row(page, leaf)).toContainText(/refs 2: keyed by the fs tree \(TREE_BLOCK_REF\); keyed by tree 257/);
    await expect(row(page, leaf)).toHaveClass('current');
    // back to the step's end: the queue ran at the commit, the leaf's two references on disk
    await press(page, 'The step\'s end');
    await expect(row(page, leaf)).toContainText(/refs 2: keyed by tree 257 \(TREE_BLOCK_REF\); keyed by the fs tree/);
  });

  test('line 18: the fs tree owns the shared leaf it copies and lets go of it; its data extents get references by the leaf', async ({ page }) => {
    await open(page, LET_GO);
    await settled(page, 18);
    await press(page, 'Next COW of a shared block');
    await expect(said(page)).toContainText(/The fs tree copies leaf (\d+) → (\d+) \(COW\): \1 is shared and the fs tree owns it, so it lets go: \1's children get references by \1 itself, \1 is marked FULL_BACKREF/);
    const [, from, to] = /copies leaf (\d+) → (\d+)/.exec((await said(page).textContent())!)!;
    await expect(block(page, from)).toHaveClass(/current/);
    await expect(block(page, to)).toHaveClass(/current/);
    await expect(block(page, from)).toHaveAttribute('data-trees', '257'); // the fs tree points at its copy already
    await expect(block(page, to)).toContainText('new: not on disk');
    await press(page, 'Next reference');
    await expect(said(page)).toContainText(/Queued: \+1 reference to data extent \d+, shared, by leaf (\d+) \(SHARED_DATA_REF\): the fs tree's COW of \1\./);
    await press(page, 'The step\'s end');
    await expect(row(page, from)).toContainText('gets FULL_BACKREF');
    await expect(row(page, from)).toContainText('−1 keyed by the fs tree (TREE_BLOCK_REF)');
    await expect(row(page, from).locator('td').nth(3)).toHaveText('refs 1, FULL_BACKREF: keyed by tree 257 (TREE_BLOCK_REF)');
    await expect(block(page, from)).toContainText('q FULL −fs');
    await expect(block(page, from)).toContainText('→ 1 F: 257');
    await expect(said(page)).toContainText('Queued since the last commit: 7 reference changes');
    await unstick(page);
    await expect(shared(page)).toHaveScreenshot('lesson6-let-go.png', { maxDiffPixelRatio: 0.02 });
  });

  test("the commit after: each accounted extent's old roots and new roots in a sentence, the qgroups moved", async ({ page }) => {
    await open(page, LET_GO_COMMIT);
    await settled(page, 19);
    const accounted = shared(page).getByTestId('accounted');
    await expect(accounted.locator('li')).toHaveCount(6);
    await expect(accounted).toContainText(/Data extent \d+ \(4\.0 KiB\): old roots the fs tree and tree 257 → new roots tree 257; only tree 257 reaches it now: 0\/5 referenced −4\.0 KiB; 0\/257 exclusive \+4\.0 KiB\./);
    await expect(accounted).toContainText(/Leaf \d+ \(4\.0 KiB\): old roots the fs tree and tree 257 → new roots tree 257/);
    const q = shared(page).getByTestId('qgroup-table');
    await expect(q.locator('tr[data-qgroup="0/257"]')).toContainText('12.0 KiB (+8.0 KiB)');
    await expect(q.locator('tr[data-qgroup="0/5"]')).toContainText('12.0 KiB (+8.0 KiB)');
    // stepped through: the first accounted extent, nothing yet in the table's numbers
    await shared(page).getByRole('slider', { name: 'Reference event' }).fill('0');
    await expect(shared(page)).toHaveAttribute('data-ready', 'true');
    await press(page, 'Next qgroup extent');
    await expect(accounted.locator('li')).toHaveCount(1);
    await expect(accounted.locator('li.current')).toHaveCount(1);
    await expect(q.locator('tr[data-qgroup="0/257"]')).toHaveAttribute('data-exclusive', '4096');
  });

  test('the clone: the old note_7 shared again, 0/257 no longer holds it alone', async ({ page }) => {
    await open(page, CLONE_COMMIT);
    await settled(page, 28);
    await expect(shared(page).getByTestId('accounted')).toContainText(
      /Data extent \d+ \(4\.0 KiB\): old roots tree 257 → new roots the fs tree and tree 257; it is shared now: 0\/5 referenced \+4\.0 KiB; 0\/257 exclusive −4\.0 KiB\./);
    await expect(shared(page).getByTestId('qgroup-table').locator('tr[data-qgroup="0/5"]')).toHaveAttribute('data-referenced', '114688');
  });

  test('the snapshot deleted: the cleaner drops its references, the fs tree holds all it references', async ({ page }) => {
    await open(page, DELETE);
    await settled(page, 30);
    await expect(shared(page).getByTestId('shared-summary')).toContainText('Deleted tree 257 dropped by the cleaner');
    await expect(shared(page).locator('g.shared-block:not([data-root=""])')).toHaveCount(2);
    await expect(shared(page).locator('g.shared-block[data-trees~="257"]')).toHaveCount(0);
    const q = shared(page).getByTestId('qgroup-table').locator('tr[data-qgroup="0/5"]');
    await expect(q).toHaveAttribute('data-exclusive', '114688');
    await expect(q).toHaveAttribute('data-referenced', '114688');
    await expect(shared(page).getByTestId('accounted')).toContainText(/Leaf \d+ \(4\.0 KiB\): old roots the fs tree and tree 257 → new roots the fs tree; only the fs tree reaches it now: 0\/5 exclusive \+4\.0 KiB; 0\/257 referenced −4\.0 KiB\./);
    await shared(page).getByRole('slider', { name: 'Reference event' }).fill('0');
    await expect(shared(page)).toHaveAttribute('data-ready', 'true');
    await press(page, 'Next reference');
    await expect(said(page)).toContainText(/Queued: −1 reference to leaf (\d+), keyed by tree 257 \(TREE_BLOCK_REF\): the cleaner drops deleted tree 257, which let go of it\./);
    const leaf = /to leaf (\d+)/.exec((await said(page).textContent())!)![1];
    await expect(row(page, leaf).locator('td').nth(3)).toHaveText('refs 1: keyed by the fs tree (TREE_BLOCK_REF)');
  });

  test("export this state: the image after the clone's commit, its qgroups read back by the CLI", async ({ page }) => {
    await open(page, CLONE_COMMIT);
    await settled(page, 28);
    const saved = page.waitForEvent('download');
    await shared(page).getByRole('button', { name: 'Export this state' }).click();
    const file = await saved;
    expect(file.suggestedFilename()).toBe('state-line28.img');
    const dir = scratchDir();
    try {
      const img = join(dir, 'state.img');
      copyFileSync((await file.path())!, img);
      const show = execFileSync(CLI, ['qgroup', 'show', '-p', '--raw', img], { encoding: 'utf8' });
      expect(show).toMatch(/^0\/5 +114688 +36864 +- +<toplevel>$/m);
      expect(show).toMatch(/^0\/257 +110592 +32768 +- +snapshots\/monday$/m);
      expect(execFileSync(CLI, ['ls', img, '/docs'], { encoding: 'utf8' })).toContain('note_7.old');
      expect(execFileSync(CLI, ['check', '--check-data-csum', img], { encoding: 'utf8' })).toContain('0 errors');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the player's events move the panel; the explorer shows the snapshot's own tree", async ({ page }) => {
    await open(page, LET_GO);
    await settled(page, 18);
    await expect(shared(page)).toHaveAttribute('data-at', `${LET_GO}:end`);
    await page.getByRole('button', { name: 'Next event' }).click();
    await expect(page.getByTestId('sentence')).toContainText(/event 1 of \d+/);
    await expect(shared(page)).not.toHaveAttribute('data-at', `${LET_GO}:end`);
    await expect(shared(page)).toHaveAttribute('data-ready', 'true');
    const explorer = page.getByRole('region', { name: 'Tree explorer' });
    await explorer.getByRole('combobox', { name: 'Tree' }).selectOption('subvolume 257');
    await expect(explorer.getByRole('combobox', { name: 'Tree' })).toHaveValue('subvolume 257');
    await expect(page.getByTestId('tree-canvas').locator('g.block')).toHaveCount(7);
  });

  test('the questions: what a snapshot writes, then how the snapshot still finds the data of a leaf its owner let go of', async ({ page }) => {
    await open(page, BEFORE);
    await page.getByRole('button', { name: 'Step forward' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('What does it write?');
    await dialog.getByRole('radio', { name: /A copy of the fs tree's root node; each leaf gains a reference/ }).click();
    await expect(dialog.getByRole('status')).toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    await expect(page.getByTestId('sentence')).toContainText('Line 16');
    await settled(page, 16);
    await page.getByRole('button', { name: 'Step forward' }).click();
    await expect(dialog).toContainText('How will the snapshot still find them once the fs tree has its copy?');
    await dialog.getByRole('radio', { name: /The data extents are copied too/ }).click();
    await expect(dialog.getByRole('status')).not.toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    await expect(page.getByTestId('sentence')).toContainText('Line 18');
    await settled(page, 18);
  });
});

test.describe('at phone width', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('the shared panel fits; its figure scrolls to the block a moment is about', async ({ page }) => {
    await open(page, LET_GO);
    await settled(page, 18);
    await noSidewaysScroll(page);
    await press(page, 'Next COW of a shared block');
    const [, from] = /copies leaf (\d+) → (\d+)/.exec((await said(page).textContent())!)!;
    await expect(block(page, from)).toBeInViewport();
    await noSidewaysScroll(page);
    await unstick(page);
    await expect(shared(page).locator('.shared-figure-box')).toHaveScreenshot('phone-lesson6-let-go.png', { maxDiffPixelRatio: 0.02 });
  });
});

for (const size of [{ name: 'desktop', width: 1440, height: 900 }, { name: 'phone', width: 390, height: 844 }]) {
  test.describe(`lesson 6: no accessibility violations at ${size.name} width`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });

    test('the shared panel at the step\'s end and at a COW of a shared block', async ({ page }) => {
      await open(page, LET_GO);
      await settled(page, 18);
      expect(await axeViolations(page)).toEqual([]);
      await press(page, 'Next COW of a shared block');
      expect(await axeViolations(page)).toEqual([]);
    });
  });
}
