// Lesson 2 as a learner uses it: step to the fsyncs, see the log tree appear,
// move the crash point and step through the replay (forward and back,
// exactly), switch the before/after compare, run the seed's experiment;
// screenshots of the replay and compare views compared with the baselines.
import { readFileSync } from 'node:fs';
import { expect, test, type Locator, type Page } from '@playwright/test';

test.use({ viewport: { width: 1400, height: 950 } });

async function openLesson2(page: Page, query = '') {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?lesson=02-fsync-log-tree${query}`);
  await expect(page.getByTestId('sentence')).not.toBeEmpty();
}

const replay = (page: Page) => page.getByRole('region', { name: 'Crash and log replay' });
const logSide = (page: Page) => page.getByRole('region', { name: 'The log, as the crash left it' });
const fsSide = (page: Page) => page.getByRole('region', { name: 'The fs tree during replay' });

async function blocks(side: Locator) {
  await side.page().waitForTimeout(100);
  return side.getByTestId('tree-canvas').locator('g.block:not(.leaving)').evaluateAll((els) =>
    els.map((e) => `${e.getAttribute('data-bytenr')}:${e.getAttribute('data-mark') ?? ''}`).sort());
}

test('fsync writes a log tree: the player shows it and the explorer lists it', async ({ page }) => {
  await openLesson2(page);
  await expect(page.getByRole('heading', { name: 'fsync and the log tree' })).toBeVisible();
  await page.getByRole('button', { name: 'Next log write' }).click();
  // the first fsync is asked about first
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByRole('radio', { name: /small log tree with this file's items/ }).click();
  await expect(dialog.getByRole('status')).toContainText('Right.');
  await dialog.getByRole('button', { name: 'See it happen' }).click();
  await expect(page.getByTestId('sentence')).toContainText('fsync /docs/report');
  await expect(page.getByTestId('sentence')).toContainText('copied into the log');
  const explorer = page.getByRole('region', { name: 'Tree explorer' }).first();
  await explorer.getByRole('combobox').selectOption('log');
  await expect(explorer.getByRole('combobox')).toHaveValue('log');
  await expect(explorer.getByTestId('tree-canvas').locator('g.block').first()).toBeVisible();
});

test('crash point and replay, step by step, exact back and forward', async ({ page }) => {
  await openLesson2(page);
  const view = replay(page);
  await expect(view.locator('p.step-text')).toContainText(/Replay has \d+ actions/);
  await expect(logSide(page).getByTestId('tree-canvas').locator('g.block').first()).toBeVisible();
  const next = view.getByRole('button', { name: 'Next replay step' });
  await next.click();
  await expect(view.locator('p.step-text')).toContainText('pin');
  for (let i = 0; i < 6; i++) await next.click();
  await expect(view.locator('p.step-text')).toContainText(/inodes|dir index|all/);
  const before = { fs: await blocks(fsSide(page)), text: await view.locator('p.step-text').textContent() };
  await view.getByRole('button', { name: 'Previous replay step' }).click();
  await expect(view.locator('p.step-text')).not.toHaveText(before.text!);
  await next.click();
  await expect(view.locator('p.step-text')).toHaveText(before.text!);
  expect(await blocks(fsSide(page))).toEqual(before.fs);
  await view.getByRole('button', { name: 'After replay' }).click();
  await expect(fsSide(page).getByRole('heading')).toContainText('after replay (committed)');
  // the crash point moves: right after the first fsync the log holds less
  const total = async () => Number((await view.locator('.step-count').textContent())!.split('/')[1]);
  const late = await total();
  const slider = view.getByRole('slider', { name: 'Crash point' });
  await slider.focus();
  await page.keyboard.press('Home');
  await expect(view.locator('.crash-line')).toHaveText('fsync /docs/report');
  await expect.poll(total).toBeLessThan(late);
  await expect(view).toHaveScreenshot('replay-view.png', { maxDiffPixelRatio: 0.02 });
});

test('a crash between two writes of a line: its own slider and sentence, the address bar, the image downloaded', async ({ page }) => {
  await openLesson2(page);
  const view = replay(page);
  await view.getByRole('slider', { name: 'Crash point' }).focus();
  await page.keyboard.press('Home');
  await expect(view.locator('.crash-line')).toHaveText('fsync /docs/report');
  await expect(view.locator('p.step-text')).toContainText(/Replay has \d+ actions/);
  const said = view.getByTestId('crash-write');
  await expect(said).toContainText("the line's last write");
  await expect(said).toContainText('superblock copy 1');
  // after the first write of the fsync: a log block on the device, but no superblock names it yet
  const writes = view.getByRole('slider', { name: 'Crash after write' });
  await writes.focus();
  await page.keyboard.press('Home');
  await expect(said).toContainText('after writing a log tree leaf');
  await expect(said).toContainText('in the middle of the line');
  await expect(view.locator('p.step-text')).toContainText('No log at this crash point');
  await expect(page).toHaveURL(/crash=\d+\.1(&|$)/);
  // the superblock copy a mount reads, written: the log is there
  const max = Number(await writes.getAttribute('max'));
  for (let i = 1; i < max - 1; i++) await page.keyboard.press('ArrowRight');
  await expect(said).toContainText("superblock copy 0 (generation 2: the one a mount reads)");
  await expect(view.locator('p.step-text')).toContainText(/Replay has \d+ actions/);
  // the image of that crash point, as a file
  const saved = page.waitForEvent('download');
  await view.getByRole('button', { name: 'Download this crash image' }).click();
  const file = await saved;
  expect(file.suggestedFilename()).toMatch(/^crash-line\d+-write\d+\.img$/);
  const bytes = readFileSync((await file.path())!);
  expect(bytes.subarray(0x10040, 0x10048).toString('latin1')).toBe('_BHRfS_M');
  // the address brings the same crash point back
  await page.reload();
  await expect(replay(page).getByTestId('crash-write')).toContainText('superblock copy 0');
});

test('before and after: the two directory logging modes and the seed\'s experiment', async ({ page }) => {
  await openLesson2(page);
  const cmp = page.getByRole('region', { name: /Before and after/ });
  const table = cmp.getByRole('table', { name: 'fsyncs, index-only' });
  await expect(table).toBeVisible();
  const cells = async (t: Locator) => t.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.textContent));
  const after = await cells(table);
  await cmp.getByRole('radio', { name: /Before the change/ }).click();
  const legacy = cmp.getByRole('table', { name: 'fsyncs, legacy' });
  await expect(legacy).toBeVisible();
  expect(await cells(legacy)).not.toEqual(after);
  await cmp.getByRole('button', { name: 'Run N=1,000' }).click();
  await expect(cmp.getByTestId('model-create-1000')).toHaveText(/^-\d+\.\d%$/);
  await cmp.getByRole('button', { name: 'Run N=10,000' }).click();
  await expect(cmp.getByTestId('model-create-10000')).toHaveText(/^-4\d\.\d%$/, { timeout: 20_000 });
  await expect(cmp.getByRole('img', { name: "The seed's measured change and the model's" }).locator('rect.model')).toHaveCount(4);
  for (const m of ['legacy', 'index-only']) await expect(cmp.getByRole('region', { name: `The log tree, ${m}`, exact: true }).locator('g.block').first()).toBeVisible();
  await expect(cmp).toHaveScreenshot('compare-view.png', { maxDiffPixelRatio: 0.02 });
});

test('a step that wrote the log says so and shows the log tree on request; the crash point is kept in the address bar', async ({ page }) => {
  await openLesson2(page, '&step=7');
  await expect(page.getByTestId('sentence')).toContainText('Line 9, fsync /docs/report');
  const note = page.getByText('This step wrote the log tree (fsync)');
  await expect(note).toBeVisible();
  await page.getByRole('button', { name: 'Show the log tree' }).click();
  const explorer = page.getByRole('region', { name: 'Tree explorer' }).first();
  await expect(explorer.getByRole('combobox')).toHaveValue('log');
  await expect(note).toHaveCount(0);
  // the crash point: moved, then kept by a reload
  const slider = replay(page).getByRole('slider', { name: 'Crash point' });
  await slider.fill('9');
  await expect(slider).toHaveValue('9');
  await expect(page).toHaveURL(/crash=9(&|$)/);
  await page.reload();
  await expect(replay(page).getByRole('slider', { name: 'Crash point' })).toHaveValue('9');
  await expect(replay(page).getByText('fsync /docs/report')).toBeVisible();
});


test('the commit that ends the script is its own step, not the last line\'s', async ({ page }) => {
  await openLesson2(page, '&step=99'); // past the end: the last step (moving there would ask the lesson's questions first)
  await expect(page.getByTestId('sentence')).toContainText(/^After the last line, the commit at the end of the script: .*Commit: generation \d+ is on disk/);
  await page.getByRole('button', { name: 'Step back' }).click();
  await expect(page.getByTestId('sentence')).toContainText('Line 15, write /docs/a1 0 100 9');
  await expect(page.getByTestId('sentence')).not.toContainText('Commit:');
});

test('replay by pass: each action said and explained, its fs-tree items listed, its log leaf marked even when folded', async ({ page }) => {
  await openLesson2(page);
  const view = replay(page);
  await expect(view.locator('p.step-text')).toContainText(/Replay has \d+ actions/);
  const passes = view.getByRole('group', { name: 'Jump to a pass' });
  await passes.getByRole('button', { name: /^inodes \(\d+\)$/ }).click();
  await expect(passes.getByRole('button', { name: /^inodes/ })).toHaveAttribute('aria-pressed', 'true');
  const text = view.locator('p.step-text');
  await expect(text).toContainText(/^inodes /);
  // step on to an inode made after the commit: its item is listed as added
  const next = view.getByRole('button', { name: 'Next replay step' });
  for (let i = 0; i < 10 && !/inode new/.test((await text.textContent()) ?? ''); i++) {
    const was = (await text.textContent()) ?? '';
    await next.click();
    await expect(text).not.toHaveText(was);
  }
  await expect(text).toContainText(/inode new: inode (\d+) is not in the fs tree/);
  const ino = /inode new: inode (\d+)/.exec((await text.textContent())!)![1];
  await expect(view.getByRole('list', { name: 'Items this action changed in the fs tree' })).toContainText(`added (${ino} INODE_ITEM 0)`);
  // the dir index pass: "link later" says what it means
  await passes.getByRole('button', { name: /^dir index/ }).click();
  await expect(text).toContainText('link later');
  await expect(text).toContainText("The inode's INODE_REF, replayed in the next pass, adds the name");
  await expect(text).toContainText(/log item \(257 DIR_INDEX \d+\)|dir 257/);
  // its log item sits in the folded middle of a leaf of many items: that leaf is marked
  await expect(logSide(page).getByTestId('tree-canvas').locator('g.block[data-mark="touched"]')).toHaveCount(1);
});

test('a live figure in the text: a crash point slider in a sentence, and what the mount keeps', async ({ page }) => {
  await openLesson2(page);
  const fig = page.getByRole('figure', { name: /Cut the power after line/ });
  const canvas = fig.getByTestId('live-canvas');
  await expect(canvas).toHaveAttribute('data-state', '6');
  await expect(fig).toContainText('fsync /docs/synced');
  await expect(fig).toContainText('After the mount (and its log replay): docs, kept, synced');
  const slider = fig.getByRole('slider', { name: 'crash after line' });
  await slider.focus();
  await page.keyboard.press('ArrowRight'); // line 7: made after the fsync, never synced
  await expect(canvas).toHaveAttribute('data-state', '7');
  await expect(fig).toContainText('create /docs/lost');
  await expect(fig).toContainText('After the mount (and its log replay): docs, kept, synced in');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft'); // line 5: synced made, not yet fsynced
  await expect(canvas).toHaveAttribute('data-state', '5');
  await expect(fig).toContainText('After the mount (and its log replay): docs, kept in');
});

test("the compare view sets the two modes' log trees side by side after the same fsync", async ({ page }) => {
  await openLesson2(page);
  const legacy = page.getByRole('region', { name: 'The log tree, legacy', exact: true });
  const indexOnly = page.getByRole('region', { name: 'The log tree, index-only', exact: true });
  await expect(legacy.getByTestId('tree-canvas').locator('g.block').first()).toBeVisible();
  await expect(indexOnly.getByTestId('tree-canvas').locator('g.block').first()).toBeVisible();
  const said = await page.getByTestId('compare-logs-said').textContent();
  const [, a, b] = /legacy: (\d+) items in \d+ leaves.*index-only: (\d+) items/.exec(said!)!;
  expect(Number(a)).toBeGreaterThan(Number(b)); // legacy logs DIR_ITEMs too
  await page.getByRole('combobox', { name: /Right after the fsync at/ }).selectOption('9');
  await expect(page.getByTestId('compare-logs-said')).not.toHaveText(said!);
});
