// Choose mode (lesson 4, issue 16) as a learner uses it: pick the thread of
// each turn of the contended section; the address holds the picks, and
// opening it again gives the same picks, the same threads at the moment, and
// the same lock waits; a sleep's turn holds the others back; a pick timed
// while A holds the fs leaf for read and waits for memory queues C's create
// behind it, and B's behind C on their directory's lock; undo, start over, let the policy finish, stop; bad picks in the
// address are left out; with log_copy=direct a picked interleaving deadlocks
// and its cycle is drawn. Screenshots at desktop and phone width; axe.
import { expect, test, type Page } from '@playwright/test';
import { axeViolations, noSidewaysScroll, unstick } from './helpers';

const LESSON = '04-leaf-locks';
const CONTENDED = 10; // the step of line 22 (fsyncers and creators) in the lesson's own scenario

const panel = (page: Page) => page.getByRole('region', { name: 'Choose the next thread' });
const locks = (page: Page) => page.getByRole('region', { name: 'Tree locks: who holds each block, who waits' });
const timeline = (page: Page) => page.getByRole('region', { name: 'Timeline: tasks, the device and the page cache' });
const picksList = (page: Page) => panel(page).getByTestId('choose-picks').locator('li');
const row = (page: Page, thread: string) => panel(page).getByTestId('choose-next').locator(`li[data-thread="${thread}"]`);

async function open(page: Page, query: string, runs = true) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?lesson=${LESSON}&${query}`);
  if (runs) await expect(page.getByTestId('sentence')).not.toBeEmpty();
}

/** The panel once its run has answered for the picks on show (nothing greyed). */
async function settled(page: Page, picks: number) {
  await expect(picks ? picksList(page) : panel(page).getByTestId('choose-picks')).toHaveCount(picks || 0);
  await expect(panel(page).locator('[aria-busy="true"]')).toHaveCount(0);
  await expect(panel(page).getByRole('button', { name: 'Stop choosing' })).toBeEnabled();
}

async function pick(page: Page, threads: string[]) {
  for (const t of threads) {
    const n = await picksList(page).count();
    await panel(page).getByRole('button', { name: `Pick ${t}` }).click();
    await settled(page, n + 1);
  }
}

/** What the panel says: the picks, and each thread that can take the next turn. */
async function said(page: Page) {
  return {
    picks: await picksList(page).allTextContents(),
    next: await panel(page).getByTestId('choose-next').locator('li').allTextContents(),
  };
}

/** Next wait until B queues for a lock (its directory's); the lock view's words then. */
async function toBLockWait(page: Page) {
  const sentence = page.getByTestId('sentence');
  for (let i = 0; i < 150; i++) {
    await page.getByRole('button', { name: 'Next wait' }).click();
    await expect(sentence).toContainText(/event \d+ of \d+/);
    if (/: B waits for (a lock on the fs tree|the lock of inode \d+)/.test((await sentence.textContent())!)) {
      return { sentence: await sentence.textContent(), locks: await locks(page).getByTestId('lock-said').textContent() };
    }
  }
  throw new Error('B never waited for a tree lock');
}

/** The waits of a cause drawn in a task's lane of the timeline (open: still waiting at the moment on show), by the lane's place. */
async function laneWaits(page: Page, lane: string, cause: string, open = false): Promise<number> {
  return timeline(page).getByTestId('timeline-svg').evaluate((svg, [lane, cause, open]) => {
    const y = (el: Element) => Number(/translate\([^,]+,([-\d.]+)\)/.exec(el.getAttribute('transform') ?? '')?.[1] ?? NaN);
    const lanes = [...svg.querySelectorAll('g.lane')].map((l) => ({ name: l.getAttribute('data-lane'), y: y(l) })).sort((a, b) => a.y - b.y);
    const i = lanes.findIndex((l) => l.name === lane);
    if (i < 0) return -1;
    const top = lanes[i].y, bottom = lanes[i + 1]?.y ?? Infinity;
    return [...svg.querySelectorAll(`g.wait${open ? '.open' : ''}[data-cause="${cause}"]`)].filter((w) => y(w) >= top && y(w) < bottom).length;
  }, [lane, cause, open] as const);
}

// D, C create; A's create, write, setxattr and fsync; C's 500 µs sleep and its next create: A is inside its fsync then
const TIMED = ['C', 'D', 'A', 'A', 'A', 'A', 'C', 'C'];

test.describe('at desktop width', () => {
  test.use({ viewport: { width: 1400, height: 950 } });

  test('a sleep\'s turn holds the others back; the picks go in the address and come back from it', async ({ page }) => {
    await open(page, `step=${CONTENDED}`);
    await panel(page).getByRole('button', { name: "Choose the threads' turns" }).click();
    await expect(page).toHaveURL(/sched=2:$/);
    await expect(panel(page)).toContainText('Turn 1 of 72: which thread starts its next command?');
    for (const t of ['A', 'B', 'C', 'D']) await expect(row(page, t)).toContainText('now: has not started');
    await expect(row(page, 'C')).toContainText('next: create /d/c1');
    await pick(page, ['C', 'C', 'C']);
    await expect(page).toHaveURL(/sched=2:C,C,C$/);
    // the script runs with the picks as a schedule line before the section; the player is on the section
    await expect(page.getByLabel('Scenario script')).toHaveValue(/\nschedule C C C\nthread A\n/);
    await expect(page.getByTestId('sentence')).toContainText('Line 23, thread A');
    // C's second create could not start before its sleep ended: the others waited for their turn meanwhile
    await expect(picksList(page)).toHaveText([/^C: create \/d\/c1 at 0 ns$/, /^C: sleep 500us at /, /^C: create \/d\/c2 at 5\d\d µs$/]);
    for (const t of ['A', 'B', 'D']) await expect(row(page, t)).toContainText('now: has not started');
    await expect(row(page, 'C')).toContainText('now: inside create /d/c2, running');
    await expect(timeline(page).getByTestId('timeline-svg').locator('g.lane')).not.toHaveCount(0);
    for (const t of ['A', 'B', 'D']) expect(await laneWaits(page, t, 'schedule'), `${t} waited for its turn`).toBeGreaterThan(0);
    expect(await laneWaits(page, 'C', 'schedule'), 'C never waited for its turn').toBe(0);
    // undo, start over
    await panel(page).getByRole('button', { name: 'Undo last pick' }).click();
    await settled(page, 2);
    await expect(page).toHaveURL(/sched=2:C,C$/);
    await expect(row(page, 'C')).toContainText('now: inside sleep 500us');
    await panel(page).getByRole('button', { name: 'Start over' }).click();
    await settled(page, 0);
    await expect(page).toHaveURL(/sched=2:$/);
    await expect(page.getByLabel('Scenario script')).not.toHaveValue(/schedule/);
  });

  test("B queues for the directory's lock C holds while C queues for the leaf A holds for read, A waiting for memory; the link gives the same picks and the same waits", async ({ page }) => {
    await open(page, `step=${CONTENDED}&sched=2:`);
    await settled(page, 0);
    await pick(page, TIMED);
    // A is inside its fsync: its clone's allocation stalls under the fs leaf's read lock
    const a = row(page, 'A');
    await expect(a).toContainText('now: inside fsync /d/a1, waiting for memory');
    await expect(a).toContainText(/holds a read lock on leaf (\d+) of the fs tree/);
    const leaf = /holds a read lock on leaf (\d+) of the fs tree/.exec((await a.textContent())!)![1];
    await expect(row(page, 'B')).toContainText('next: create /d/b1');
    await pick(page, ['B']);
    await expect(page).toHaveURL(/step=12&sched=2:C,D,A,A,A,A,C,C,B$/);
    await expect(row(page, 'C')).toContainText(`waiting to write-lock leaf ${leaf} of the fs tree, held by A`);
    const before = await said(page);
    const wait = await toBLockWait(page);
    // B's create waits for its directory's lock (the VFS's, held through a create), which C holds while it queues
    // at a leaf A holds (that one, or the next A clones by then)
    expect(wait.sentence).toMatch(/: B waits for the lock of inode \d+/);
    expect(wait.locks).toMatch(/leaf \d+ of the fs tree: read-held by A; waiting: C \(write\)/);
    expect(wait.locks).toMatch(/the inode lock of inode \d+: held by C; waiting: [^.]*B/);
    expect(await laneWaits(page, 'A', 'memory allocation', true), 'A waits for memory meanwhile').toBe(1);
    await unstick(page);
    await expect(panel(page)).toHaveScreenshot('choose-panel.png', { maxDiffPixelRatio: 0.02 });

    // the same address, opened again: the same picks, the same threads at the moment, the same wait
    await page.goto(page.url().replace(/step=\d+/, 'step=12'));
    await expect(page.getByTestId('sentence')).not.toBeEmpty();
    await settled(page, TIMED.length + 1);
    expect(await said(page)).toEqual(before);
    expect(await toBLockWait(page)).toEqual(wait);

    // the same picks with log_copy=prealloc: A's stall comes before it locks anything, and B's create goes through
    const editor = page.getByLabel('Scenario script');
    await editor.fill((await editor.inputValue()).replace('set log_copy=clone', 'set log_copy=prealloc'));
    await page.getByRole('button', { name: 'Run scenario' }).click();
    await settled(page, TIMED.length + 1);
    await expect(page).toHaveURL(/script=.*prealloc.*&sched=2:C,D,A,A,A,A,C,C,B$/);
    await expect(row(page, 'B')).toContainText('now: inside create /d/b1');
    await expect(row(page, 'B')).not.toContainText('waiting to write-lock');
    await expect(row(page, 'C')).not.toContainText('held by A');
  });

  test('let the policy finish, then stop choosing; bad picks in the address are left out', async ({ page }) => {
    await open(page, `step=${CONTENDED}&sched=2:D,A`);
    await settled(page, 2);
    const policy = (await panel(page).getByTestId('choose-policy').textContent())!;
    await panel(page).getByRole('button', { name: 'Let the policy finish' }).click();
    await settled(page, 72);
    await expect(panel(page)).toContainText('Every command of the section has started');
    const names = await picksList(page).locator('strong').allTextContents();
    expect(names.slice(0, 2)).toEqual(['D', 'A']);
    expect(policy).toContain(`Then the policy: ${names.slice(2, 10).join(', ')} and 62 more turns.`);
    await expect(page).toHaveURL(new RegExp(`sched=2:${names.join(',')}$`));
    await panel(page).getByRole('button', { name: 'Stop choosing' }).click();
    await expect(panel(page).getByRole('button', { name: "Choose the threads' turns" })).toBeVisible();
    await expect(page).not.toHaveURL(/sched=/);
    await expect(page.getByLabel('Scenario script')).not.toHaveValue(/schedule/);

    // a thread the section lacks ends the picks there; a section it lacks, or a bad value, is no choose mode at all
    await open(page, 'sched=2:B,B,Z,A');
    await settled(page, 2);
    await expect(picksList(page)).toHaveText([/^B: create \/d\/b1/, /^B: write \/d\/b1/]);
    await expect(page).toHaveURL(/sched=2:B,B$/);
    for (const bad of ['sched=9:A', 'sched=2:A;B', 'sched=x']) {
      await open(page, `step=${CONTENDED}&${bad}`);
      await expect(panel(page).getByRole('button', { name: "Choose the threads' turns" })).toBeVisible();
      await expect(page.getByRole('alert')).toHaveCount(0);
      await expect(page.getByTestId('sentence')).toContainText('Line 22, thread A');
    }
  });
});

// tests/cli/time.test.mjs's direct-mode scenario and the interleaving that deadlocks it
function directScript(mode: string): string {
  const l = ['mkfs nodesize=4K size=256M', 'set device=loop', 'set tree_locks=path', 'set memory_pressure=heavy', `set log_copy=${mode}`,
    'set seed=1', 'set delayed_background=4', 'mkdir /d', 'commit', 'thread A'];
  for (let k = 0; k < 6; k++) l.push(`create /d/a${k}`, `write /d/a${k} 0 4096 ${k + 1}`, `fsync /d/a${k}`);
  l.push('end', 'thread B');
  for (let k = 0; k < 10; k++) l.push(`create /d/b${k}`, `write /d/b${k} 0 4096 ${k + 1}`);
  l.push('end', 'thread C');
  for (let k = 0; k < 10; k++) l.push(`create /d/c${k}`);
  l.push('end');
  return l.join('\n') + '\n';
}
const DEADLOCK_ORDER = 'B C A C A A B C B C C C A A C A A A B A B B C A C C B B A B A A A B A A B B B'.split(' ');

test.describe('a deadlock, at desktop width', () => {
  test.use({ viewport: { width: 1400, height: 950 } });

  test('log_copy=direct: the picked interleaving stops in a deadlock; its cycle drawn, the same from the link', async ({ page }) => {
    await open(page, `script=${encodeURIComponent(directScript('direct'))}&sched=1:${DEADLOCK_ORDER.join(',')}`, false);
    const failed = panel(page).getByTestId('choose-failed');
    await expect(failed).toContainText('With these picks the run stops in a deadlock: ');
    await expect(failed).toContainText(/EDEADLK: deadlock: A \(task \d+\) waits for the delayed node mutex of inode \d+, held by delayed-meta/);
    // (at turn 39 of the 48 picked: one of A's fsyncs and the worker close the cycle)
    await expect(panel(page)).toContainText('The run stopped before turn 39');
    // the player has no run to show: the scenario says why
    await expect(page.getByRole('region', { name: 'Scenario' }).getByRole('alert')).toContainText('EDEADLK');
    const cycle = failed.getByTestId('deadlock-cycle');
    await expect(cycle.locator('g.cycle-task')).toHaveCount(2);
    await expect(cycle.locator('g.cycle-edge[data-task="A"][data-holder="delayed-meta"]')).toContainText('mutex');
    const leafEdge = cycle.locator('g.cycle-edge[data-task="delayed-meta"][data-holder="A"][data-mode="write"]');
    await expect(leafEdge).toContainText(/leaf \d+, fs tree/);
    const leaf = await leafEdge.getAttribute('data-block');
    await expect(cycle.getByTestId('cycle-said').locator('li')).toHaveText([
      /^A waits for the delayed node mutex of inode \d+, held by delayed-meta\.$/,
      `delayed-meta waits for a write lock on leaf ${leaf} of the fs tree, held by A.`,
    ]);
    const said = await cycle.getByTestId('cycle-said').textContent();
    await unstick(page);
    await expect(cycle.locator('svg')).toHaveScreenshot('deadlock-cycle.png', { maxDiffPixelRatio: 0.02 });
    // the link again: the same deadlock
    await page.reload();
    await expect(panel(page).getByTestId('cycle-said')).toHaveText(said!);
    // the same picks with the clone: the run ends
    const editor = page.getByLabel('Scenario script');
    await editor.fill((await editor.inputValue()).replace('set log_copy=direct', 'set log_copy=clone'));
    await page.getByRole('button', { name: 'Run scenario' }).click();
    await expect(page.getByTestId('sentence')).not.toBeEmpty();
    await expect(panel(page).getByTestId('choose-failed')).toHaveCount(0);
    // the picks the deadlocked run reached are kept, and the clone's run goes on past them
    await expect(panel(page)).toContainText('Turn 40 of 48: which thread starts its next command?');
  });
});

test.describe('at phone width', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('the panel fits; a screenshot', async ({ page }) => {
    await open(page, `step=12&sched=2:${TIMED.join(',')}`);
    await settled(page, TIMED.length);
    await expect(row(page, 'A')).toContainText('waiting for memory');
    await noSidewaysScroll(page);
    await unstick(page);
    await expect(panel(page)).toHaveScreenshot('phone-choose-panel.png', { maxDiffPixelRatio: 0.02 });
  });
});

for (const size of [{ name: 'desktop', width: 1440, height: 900 }, { name: 'phone', width: 390, height: 844 }]) {
  test.describe(`choose mode: no accessibility violations at ${size.name} width`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });

    test('the panel with picks, the threads that can go next', async ({ page }) => {
      await open(page, `step=12&sched=2:${TIMED.join(',')}`);
      await settled(page, TIMED.length);
      expect(await axeViolations(page)).toEqual([]);
    });
  });
}
