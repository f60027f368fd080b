// Lesson 4 as a learner uses it: the tree locks at a moment of a timed
// section (blocks by level, who holds each, who waits), replayed exactly
// both ways; a creator queued for a leaf that an fsyncer holds for read
// while its lane waits for memory; a full fsync flushing its delayed inode
// item under the inode's delayed node mutex, drawn apart from the trees; the
// questions; before and after (both log_copy modes side by side) and the
// seed's bonnie++ latencies; screenshots at desktop and phone width; axe.
import { expect, test, type Page } from '@playwright/test';
import { axeViolations, noSidewaysScroll, unstick } from './helpers';

const LESSON = '04-leaf-locks';
// the scenario's steps: 7 is line 11 (A's full fsync alone), 9 line 20 (memory pressure set), 10 line 22 (fsyncers and creators)
const LONE = 7, CONTENDED = 10;

async function open(page: Page, step: number) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?lesson=${LESSON}&step=${step}`);
  await expect(page.getByTestId('sentence')).not.toBeEmpty();
}

const locks = (page: Page) => page.getByRole('region', { name: 'Tree locks: who holds each block, who waits' });
const timeline = (page: Page) => page.getByRole('region', { name: 'Timeline: tasks, the device and the page cache' });

/** What the lock view draws, exactly: each block's place, state and words; and what it says. */
async function drawn(page: Page) {
  await page.waitForTimeout(60);
  const blocks = await locks(page).locator('g.lock-block, g.lock-mutex').evaluateAll((els) =>
    els.map((e) => `${e.getAttribute('class')}|${e.getAttribute('transform')}|${e.getAttribute('data-state')}|${e.textContent}`));
  return { blocks, said: await locks(page).getByTestId('lock-said').textContent(), sentence: await page.getByTestId('sentence').textContent() };
}

/** Next wait until a creator is queued for a leaf an fsyncer holds for read (the first creator waits are for writers). */
async function toCreatorLockWait(page: Page) {
  const sentence = page.getByTestId('sentence');
  const said = locks(page).getByTestId('lock-said');
  for (let i = 0; i < 80; i++) {
    await page.getByRole('button', { name: 'Next wait' }).click();
    await expect(sentence).toContainText(/event \d+ of \d+/);
    if (!/: [CD] waits for a lock on the fs tree/.test((await sentence.textContent())!)) continue;
    if (/read-held by [AB](, [AB])?; waiting: [^.]*[CD] \((read|write)\)/.test((await said.textContent())!)) return;
  }
  throw new Error('no creator waited for a leaf held for read');
}

test.describe('at desktop width', () => {
  test.use({ viewport: { width: 1400, height: 950 } });

  test('a creator queued for the leaf an fsyncer holds for read while it waits for memory', async ({ page }) => {
    await open(page, CONTENDED);
    await expect(locks(page).locator('figure.lock-tree')).not.toHaveCount(0);
    // at the step's end every lock is let go
    await expect(locks(page).getByTestId('lock-said')).toHaveText('No block is locked at this moment.');
    await expect(locks(page).locator('g.lock-block[data-state="free"]').first()).toBeAttached();
    // the fs tree grew a level in the section: a node above its leaves
    await expect(locks(page).locator('figure[data-tree="fs tree"] g.lock-block[data-level="1"]')).not.toHaveCount(0);
    await toCreatorLockWait(page);
    const said = locks(page).getByTestId('lock-said');
    // one fsyncer reads the leaf. The creator has just come: last in its queue, to insert (write) or to look its name up
    // (read) behind a writer. Ahead of it, when the seed's interleaving has it so, only the other fsyncer, for write: a new
    // file's full fsync flushes the inode's delayed inode item into the leaf before it logs the inode, holding the inode's
    // delayed node mutex
    const creator = /: ([CD]) waits for a lock on the fs tree/.exec((await page.getByTestId('sentence').textContent())!)![1];
    const queue = new RegExp(`leaf \\d+ of the fs tree: read-held by ([AB]); waiting: (?:((?!\\1)[AB]) \\(write\\), )?${creator} \\((read|write)\\)\\.`);
    await expect(said).toContainText(queue);
    const leaf = locks(page).locator('figure[data-tree="fs tree"] g.lock-block.contended');
    await expect(leaf).toHaveAttribute('data-state', 'read');
    await expect(leaf).toContainText(new RegExp(`R: ([AB])waits: (?:(?!\\1)[AB]\\(w\\) )?${creator}\\([rw]\\)$`));
    const fsyncer = queue.exec((await said.textContent())!)![2];
    if (fsyncer) await expect(said).toContainText(new RegExp(`the delayed node mutex of inode \\d+: held by ${fsyncer}\\.`));
    // a delayed node mutex is never drawn as a tree block (at level -1)
    await expect(locks(page).locator('g.lock-block[data-level="-1"]')).toHaveCount(0);
    // the reader's lane: waiting for memory, the creator's: for the tree lock
    const svg = timeline(page).getByTestId('timeline-svg');
    await expect(svg.locator('g.wait.open[data-cause="memory allocation"]').first()).toBeAttached();
    await expect(svg.locator('g.wait.open[data-cause="tree lock"]').first()).toBeAttached();
    await unstick(page);
    await expect(locks(page).locator('figure[data-tree="fs tree"]')).toHaveScreenshot('lesson4-locks.png', { maxDiffPixelRatio: 0.02 });
  });

  test("a new file's full fsync flushes its delayed inode item: the inode's delayed node mutex, drawn apart from the trees", async ({ page }) => {
    await open(page, LONE);
    const said = locks(page).getByTestId('lock-said');
    const sentence = page.getByTestId('sentence');
    await timeline(page).getByRole('slider', { name: 'Timeline event' }).fill('0');
    await expect(sentence).toContainText('event 1 of');
    /** The next moment, its locks drawn (the flush is one moment: none may be passed over). */
    const step = async () => {
      const was = (await sentence.textContent())!;
      await page.getByRole('button', { name: 'Next event' }).click();
      await expect(sentence).not.toHaveText(was);
      await page.waitForTimeout(60);
    };
    // (its write took the mutex before, for the inode update, with no tree lock: on to the flush, the leaf under it)
    for (let i = 0; i < 200 && !/write-held by A\.the delayed node mutex/.test((await said.textContent())!); i++) await step();
    // inside A's fsync: the inode's mutex held, and under it the inode's leaf write-locked for the flush
    await expect(sentence).toContainText(/Line 11, thread A, event \d+ of \d+: A runs on a CPU/);
    await expect(said).toContainText(/leaf \d+ of the fs tree: write-held by A\.the delayed node mutex of inode (\d+): held by A\.$/);
    const mutexes = locks(page).locator('figure[data-tree="delayed nodes"]');
    await expect(mutexes.locator('figcaption')).toHaveText('inode locks and delayed node mutexes');
    // (beside it, free by now: the inode locks of its directory and its file, which A's create and write took)
    await expect(mutexes.locator('g.lock-mutex[data-kind="delayed node"]')).toHaveCount(1);
    await expect(mutexes.locator('g.lock-mutex[data-kind="inode lock"][data-state="free"]')).toHaveCount(2);
    const ino = /inode (\d+): held by A/.exec((await said.textContent())!)![1];
    await expect(mutexes.locator(`g.lock-mutex[data-inode="${ino}"][data-kind="delayed node"][data-state="held"]`)).toHaveText(`delayed, inode ${ino}held: A`);
    await expect(locks(page).getByRole('img', { name: new RegExp(`^Inode mutexes: .*the delayed node mutex of inode ${ino}: held by A`) })).toBeVisible();
    await expect(locks(page).locator('g.lock-block[data-level="-1"]')).toHaveCount(0);
    await unstick(page);
    await expect(mutexes).toHaveScreenshot('lesson4-delayed-mutex.png', { maxDiffPixelRatio: 0.02 });
    // flushed: the mutex let go, then the leaf read-locked (its node above it first) to copy the inode's items into the log
    for (let i = 0; i < 20 && !/^leaf \d+ of the fs tree: read-held by A\.$/.test((await said.textContent())!); i++) await step();
    await expect(mutexes.locator(`g.lock-mutex[data-inode="${ino}"][data-kind="delayed node"][data-state="free"]`)).toHaveText(`delayed, inode ${ino}free`);
    await expect(said).toContainText(/^leaf \d+ of the fs tree: read-held by A\.$/);
  });

  test('event by event: the locks replayed exactly back and forward', async ({ page }) => {
    await open(page, CONTENDED);
    await toCreatorLockWait(page);
    const here = await drawn(page);
    const next = page.getByRole('button', { name: 'Next event' });
    const prev = page.getByRole('button', { name: 'Previous event' });
    const seen = [here];
    for (let i = 0; i < 6; i++) {
      await next.click();
      seen.push(await drawn(page));
    }
    expect(new Set(seen.map((s) => JSON.stringify(s.blocks))).size).toBeGreaterThan(1);
    for (let i = 5; i >= 0; i--) {
      await prev.click();
      expect(await drawn(page)).toEqual(seen[i]);
    }
    // the slider, away and back
    const slider = timeline(page).getByRole('slider', { name: 'Timeline event' });
    const at = await slider.inputValue();
    await slider.fill('3');
    await slider.fill(at);
    expect(await drawn(page)).toEqual(here);
  });

  test('the questions: the clone under the read lock, then the creator behind it', async ({ page }) => {
    await open(page, LONE - 1);
    await page.getByRole('button', { name: 'Next wait' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('While A allocates that clone, what does it hold?');
    await dialog.getByRole('radio', { name: /The fs leaf's read lock, inside the log transaction/ }).click();
    await expect(dialog.getByRole('status')).toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    await expect(page.getByTestId('sentence')).toContainText('Line 11, thread A:');
    // A alone: its fs leaf read-locked while it allocates the clone (quickly: memory to spare), nobody waiting
    for (let i = 0; i < 30; i++) {
      await page.getByRole('button', { name: 'Next wait' }).click();
      await expect(page.getByTestId('sentence')).toContainText(/event \d+ of \d+/);
      if (/A waits for memory/.test((await page.getByTestId('sentence').textContent())!)) break;
    }
    await expect(locks(page).getByTestId('lock-said')).toContainText(/leaf \d+ of the fs tree: read-held by A/);
    await expect(locks(page).locator('g.lock-block.contended')).toHaveCount(0);
    // on to the contended section: its question first
    await page.getByRole('slider', { name: 'Step' }).fill(String(CONTENDED));
    await expect(dialog).toContainText('What happens to C?');
    await dialog.getByRole('radio', { name: /It inserts at once/ }).click();
    await expect(dialog.getByRole('status')).not.toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    await expect(page.getByTestId('sentence')).toContainText('Line 22, thread A:');
  });

  test("before and after: both log_copy modes side by side, the seed's latencies", async ({ page }) => {
    await open(page, CONTENDED);
    const cmp = page.getByRole('region', { name: "Before and after: where the copy's extent buffer is allocated" });
    const table = cmp.getByRole('table', { name: 'Latencies and lock waits in both modes' });
    await expect(table).toBeVisible({ timeout: 30_000 });
    await expect(cmp).toContainText('Creators: C, D');
    await expect(cmp).toContainText('fsyncers: A, B');
    for (const id of ['create-p50', 'create-p99', 'fsync-p50', 'fsync-p99', 'creator-lock-wait', 'memory-wait', 'virtual-time']) {
      await expect(table.getByTestId(id).locator('td')).toHaveCount(4);
    }
    await expect(table.getByTestId('create-p50')).toContainText('24 creates');
    await expect(table.getByTestId('fsync-p50')).toContainText('7 fsyncs');
    // the creators wait for tree locks for milliseconds before the change, microseconds after
    await expect(table.getByTestId('creator-lock-wait').locator('td').nth(1)).toHaveText(/ ms$/);
    await expect(table.getByTestId('creator-lock-wait').locator('td').nth(2)).toHaveText(/ µs$/);
    await expect(table.getByTestId('creator-lock-wait').locator('td').nth(3)).toHaveText(/× less$/);
    await expect(table.getByTestId('create-p99').locator('td').nth(3)).toHaveText(/× less$/);
    // the leaves full fsyncs copy from: as many in both modes, each a clone allocated under its read lock before
    const leaves = table.getByTestId('leaves-per-fsync').locator('td');
    await expect(leaves).toHaveCount(4);
    await expect(leaves.nth(0)).toHaveText(/\(\d+ fsyncs logged\)$/);
    await expect(leaves.nth(1)).toHaveText(/^\d+\.\d: each cloned, an extent buffer allocated under its read lock$/);
    await expect(leaves.nth(3)).toHaveText(/^[1-9]\d* allocations under a lock before, none after$/);
    const seed = cmp.getByRole('table', { name: "The seed's bonnie++ latencies" });
    await expect(seed.locator('tbody tr')).toHaveCount(6);
    await expect(seed.locator('tbody tr').first()).toContainText('Sequential Create: Create');
    await expect(seed.locator('tbody tr').first()).toContainText('411 ms');
    await expect(seed.locator('tbody tr').first()).toContainText('-22.1%');
    await expect(page.getByRole('table', { name: 'Costs' })).toContainText('reclaim');
  });
});

test.describe('at phone width', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('the lock view fits, its trees scroll in their own boxes; a screenshot', async ({ page }) => {
    await open(page, CONTENDED);
    await noSidewaysScroll(page);
    await toCreatorLockWait(page);
    await expect(locks(page).locator('g.lock-block.contended')).toHaveCount(1);
    await noSidewaysScroll(page);
    await unstick(page);
    await expect(locks(page).locator('figure[data-tree="fs tree"]')).toHaveScreenshot('phone-lesson4-locks.png', { maxDiffPixelRatio: 0.02 });
  });
});

for (const size of [{ name: 'desktop', width: 1440, height: 900 }, { name: 'phone', width: 390, height: 844 }]) {
  test.describe(`lesson 4: no accessibility violations at ${size.name} width`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });

    test('the locks at a moment, the timeline, the before and after', async ({ page }) => {
      await open(page, CONTENDED);
      await expect(page.getByRole('table', { name: 'Latencies and lock waits in both modes' })).toBeVisible({ timeout: 30_000 });
      expect(await axeViolations(page)).toEqual([]);
      await toCreatorLockWait(page);
      await expect(locks(page).locator('g.lock-block.contended')).toHaveCount(1);
      expect(await axeViolations(page)).toEqual([]);
    });
  });
}
