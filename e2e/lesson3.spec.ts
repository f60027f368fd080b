// Lesson 3 as a learner uses it: a timed section on the timeline (lanes,
// waits, each fsync marked with what it waited for, the page cache), stepped
// event by event exactly both ways, scrubbed, zoomed, jumped from wait to
// wait; the power cut with an ordered extent in flight, its state exported
// and read back by the CLI; before and after (both fsync_wait modes side by
// side, the seed's fio experiment run in the page and charted); the cost
// table; screenshots at desktop and phone width; axe.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { CLI } from '../tests/kernel/lib.mjs';
import { axeViolations, noSidewaysScroll, scratchDir, unstick } from './helpers';

const LESSON = '03-ordered-extents-fast-fsync';
// the scenario's steps: 6 is line 9 (thread A, since 5.10), 8 line 19 (before 5.10), 11 line 30 (A: with slow completions), 12 the crash
const AFTER = 6, BEFORE = 8, SLOW = 11, CRASH = 12;

async function open(page: Page, step: number) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?lesson=${LESSON}&step=${step}`);
  await expect(page.getByTestId('sentence')).not.toBeEmpty();
  if (step === AFTER - 1) await expect(timeline(page)).toContainText('No threads ran in this step');
  else await expect(timeline(page).getByTestId('timeline-svg')).toBeVisible();
}

const timeline = (page: Page) => page.getByRole('region', { name: 'Timeline: tasks, the device and the page cache' });
const svg = (page: Page) => timeline(page).getByTestId('timeline-svg');

/** What the timeline draws, exactly: every shape's kind, place, size and words; the sentence; the event slider. */
async function drawn(page: Page) {
  await page.waitForTimeout(120); // one animation frame
  const shapes = await svg(page).locator('g.cpu, g.wait, g.op, g.waited, g.bio, g.oe, g.now, g.file rect').evaluateAll((els) =>
    els.map((e) => `${e.getAttribute('class')}|${e.getAttribute('transform') ?? ''}|${[...e.querySelectorAll('rect')].map((r) => r.getAttribute('width')).join(',')}|${e.textContent}|${e.getAttribute('x') ?? ''},${e.getAttribute('width') ?? ''}`));
  const slider = timeline(page).getByRole('slider', { name: 'Timeline event' });
  return { shapes: shapes.sort(), sentence: await page.getByTestId('sentence').textContent(), event: await slider.inputValue() };
}

test.describe('at desktop width', () => {
  test.use({ viewport: { width: 1400, height: 950 } });

  test('a section on the timeline: a lane per task, waits by cause, each fsync marked with what it waited for, the page cache', async ({ page }) => {
    await open(page, AFTER);
    const s = svg(page);
    await expect(s.locator('g.lane').first()).toBeAttached();
    const lanes = await s.locator('g.lane').evaluateAll((els) => els.map((e) => e.getAttribute('data-lane')!));
    expect(lanes.slice(0, 4)).toEqual(['A', 'B', 'flusher', 'transaction kthread']);
    expect(lanes.length).toBeGreaterThan(4); // the endio-write workers that completed the ordered extents
    for (const l of lanes.slice(4)) expect(l).toMatch(/^endio-write \d+$/);
    await expect(s.locator('g.wait[data-cause="writeback"]').first()).toBeAttached();
    await expect(s.locator('g.bio.bio-flush').first()).toBeAttached();
    // since 5.10: both fsyncs waited for their I/O only, and logged their ordered extents in flight
    await expect(s.locator('g.waited[data-waited="I/O done"]')).toHaveCount(2);
    const said = timeline(page).getByTestId('timeline-said');
    await expect(said).toContainText(/fsync \/a \(line 11\): waited for I\/O done, logged ordered extent \d+ in flight; returned after/);
    await expect(said).toContainText(/fsync \/b \(line 15\): waited for I\/O done, logged ordered extent \d+ in flight; returned after/);
    await expect(s.locator('g.file')).toHaveCount(2);
    // before 5.10: they waited for the ordered extents to complete, and logged none in flight
    await page.getByRole('slider', { name: 'Step' }).fill(String(BEFORE));
    await expect(s.locator('g.waited[data-waited="ordered extent complete"]')).toHaveCount(2);
    await expect(said).toContainText('fsync /a (line 21): waited for ordered extent complete; returned after');
    await expect(said).not.toContainText('in flight');
    await unstick(page);
    await expect(timeline(page).locator('.timeline-canvas')).toHaveScreenshot('lesson3-timeline.png', { maxDiffPixelRatio: 0.02 });
  });

  test('event by event on the timeline: exact back and forward, the slider, a click on the lanes, zoom', async ({ page }) => {
    await open(page, AFTER);
    const next = page.getByRole('button', { name: 'Next event' });
    const prev = page.getByRole('button', { name: 'Previous event' });
    const slider = timeline(page).getByRole('slider', { name: 'Timeline event' });
    // from the step's end, back into its events: its last one
    await prev.click();
    await expect(page.getByTestId('sentence')).toContainText(/event (\d+) of \1:/);
    await slider.fill('10');
    await expect(page.getByTestId('sentence')).toContainText('event 11 of');
    for (let i = 0; i < 4; i++) await next.click();
    await expect(page.getByTestId('sentence')).toContainText('event 15 of');
    const here = await drawn(page);
    expect(here.event).toBe('14');
    await page.keyboard.press('Shift+ArrowRight');
    await expect(page.getByTestId('sentence')).toContainText('event 16 of');
    const later = await drawn(page);
    expect(later.shapes).not.toEqual(here.shapes);
    await prev.click();
    await expect(page.getByTestId('sentence')).toContainText('event 15 of');
    expect(await drawn(page)).toEqual(here);
    await page.keyboard.press('Shift+ArrowRight');
    expect(await drawn(page)).toEqual(later);
    // the slider over the step's events, both ways
    await slider.fill('40');
    await expect(page.getByTestId('sentence')).toContainText('event 41 of');
    const at40 = await drawn(page);
    await slider.fill('3');
    await slider.fill('40');
    expect(await drawn(page)).toEqual(at40);
    // nothing after the event on show is drawn: the page cache and extents as they were then
    await slider.fill('0');
    await expect(svg(page).locator('g.oe')).toHaveCount(0);
    await expect(svg(page).locator('g.file rect[data-state="dirty"]')).toHaveCount(0);
    // a click on the lanes goes to the event at that time
    const box = (await svg(page).boundingBox())!;
    await svg(page).click({ position: { x: box.width * 0.5, y: 60 } });
    await expect(page.getByTestId('sentence')).toContainText(/event \d+ of/);
    expect(Number(await slider.inputValue())).toBeGreaterThan(10);
    // zoom in around the event on show, and out again
    await timeline(page).getByRole('button', { name: 'Zoom in' }).click();
    await expect(timeline(page).getByText(/around the event on show/)).toBeVisible();
    await timeline(page).getByRole('button', { name: 'Show it all' }).click();
    await expect(timeline(page).getByText(/click the lanes/)).toBeVisible();
  });

  test('Next wait: a question first, then each wait of the section in turn', async ({ page }) => {
    await open(page, AFTER - 1);
    await page.getByRole('button', { name: 'Next wait' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('What must have happened before');
    await dialog.getByRole('radio', { name: /Writeback: the bio of its pages is done/ }).click();
    await expect(dialog.getByRole('status')).toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    const sentence = page.getByTestId('sentence');
    await expect(sentence).toContainText('Line 9, thread A:');
    const waits: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.getByRole('button', { name: 'Next wait' }).click();
      await expect(sentence).toContainText(/event \d+ of \d+: .* waits for/);
      const t = (await sentence.textContent())!;
      expect(waits).not.toContain(t);
      waits.push(t);
    }
    const nums = waits.map((t) => Number(/event (\d+) of/.exec(t)![1]));
    expect([...nums].sort((a, b) => a - b)).toEqual(nums);
    expect(waits.some((t) => /[AB] waits for writeback of inode 25[78]/.test(t))).toBe(true);
    // the waits are drawn as they start: the last one is open, up to now
    await expect(svg(page).locator('g.wait.open').first()).toBeAttached();
  });

  test('the power cut after fsync returned: the extent logged in flight survives, the state exported and read back', async ({ page }) => {
    await open(page, SLOW);
    const oe = svg(page).locator('g.oe');
    await expect(oe).toHaveCount(1);
    await expect(oe).toHaveAttribute('data-phase', 'io-done');
    await expect(oe).toHaveClass(/logged/);
    await expect(oe).toContainText('in the log');
    await expect(svg(page).locator('g.file[data-path="/a"] rect[data-state="ordered"]')).toHaveCount(1);
    // onto the crash: its question first
    await page.getByRole('slider', { name: 'Step' }).fill(String(CRASH));
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('The power fails now');
    await dialog.getByRole('radio', { name: /All 192 KiB/ }).click();
    await expect(dialog.getByRole('status')).toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    await expect(page.getByTestId('sentence')).toContainText('Line 33');
    const saved = page.waitForEvent('download');
    await timeline(page).getByRole('button', { name: 'Export this state' }).click();
    const file = await saved;
    expect(file.suggestedFilename()).toBe('state-line33.img');
    const dir = scratchDir();
    try {
      const img = join(dir, 'state.img');
      copyFileSync((await file.path())!, img);
      const ls = execFileSync(CLI, ['ls', '--replay', '-l', img, '/'], { encoding: 'utf8' });
      expect(ls).toMatch(/ 196608 a\n/);
      // replayed as a mount replays it: the extent and its checksums are in the trees
      execFileSync(CLI, ['replay', img, '-o', join(dir, 'replayed.img')]);
      expect(execFileSync(CLI, ['check', '--check-data-csum', join(dir, 'replayed.img')], { encoding: 'utf8' })).toContain('0 errors');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("before and after: both modes side by side, the seed's fio experiment charted, the cost table", async ({ page }) => {
    await open(page, AFTER);
    const cmp = page.getByRole('region', { name: 'Before and after: what a fast fsync waits for' });
    await expect(cmp.getByTestId('timeline-svg')).toHaveCount(2);
    const latencies = cmp.getByRole('table', { name: 'fsync latencies in both modes' });
    await expect(latencies.locator('tbody tr')).toHaveCount(2);
    await expect(cmp.locator('[data-mode="ordered"] g.waited[data-waited="ordered extent complete"]')).toHaveCount(2);
    await expect(cmp.locator('[data-mode="writeback"] g.waited[data-waited="I/O done"]')).toHaveCount(2);
    await cmp.getByRole('combobox').selectOption({ label: 'line 30: A: write /a 128K 64K' });
    await expect(latencies.locator('tbody tr')).toHaveCount(1);
    const fio = page.getByRole('region', { name: "The seed's experiment: fio throughput" });
    await fio.getByRole('button', { name: "Run the model's fio jobs" }).click();
    for (const id of ['write-1', 'write-64', 'randwrite-64']) await expect(fio.getByTestId(`model-${id}`)).toHaveText(/^\d+\.\d → \d+\.\d$/, { timeout: 60_000 });
    await expect(fio.getByRole('button', { name: "Run the model's fio jobs" })).toBeEnabled({ timeout: 60_000 });
    await expect(fio.locator('svg.fio-chart g.row')).toHaveCount(14);
    const costs = page.getByRole('table', { name: 'Costs' });
    await expect(costs).toContainText('finish_csum');
    await expect(costs).toContainText('seed 003');
    await expect(page.getByRole('table', { name: 'Devices' })).toContainText('nvme');
    await unstick(page);
    await expect(cmp.locator('svg.fsync-chart')).toHaveScreenshot('lesson3-fsync-chart.png', { maxDiffPixelRatio: 0.02 });
    await expect(fio.locator('svg.fio-chart')).toHaveScreenshot('lesson3-fio-chart.png', { maxDiffPixelRatio: 0.02 });
  });
});

test.describe('at phone width', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('the timeline scrolls inside its own box; a screenshot', async ({ page }) => {
    await open(page, AFTER);
    await noSidewaysScroll(page);
    const box: Locator = timeline(page).locator('.timeline-canvas');
    expect(await box.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
    await page.getByRole('button', { name: 'Next wait' }).click();
    await expect(page.getByTestId('sentence')).toContainText('waits for');
    await noSidewaysScroll(page);
    await unstick(page);
    await expect(box).toHaveScreenshot('phone-lesson3-timeline.png', { maxDiffPixelRatio: 0.02 });
  });
});

for (const size of [{ name: 'desktop', width: 1440, height: 900 }, { name: 'phone', width: 390, height: 844 }]) {
  test.describe(`lesson 3: no accessibility violations at ${size.name} width`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });

    test('the timeline at a moment, the before and after, the fio table run, the costs', async ({ page }) => {
      await open(page, AFTER);
      await expect(page.getByRole('table', { name: 'fsync latencies in both modes' })).toBeVisible();
      await expect(page.getByRole('table', { name: 'Costs' })).toBeVisible();
      expect(await axeViolations(page)).toEqual([]);
      await page.getByRole('button', { name: 'Next wait' }).click();
      await expect(page.getByTestId('sentence')).toContainText('waits for');
      await timeline(page).getByRole('button', { name: 'Zoom in' }).click();
      expect(await axeViolations(page)).toEqual([]);
      const fio = page.getByRole('region', { name: "The seed's experiment: fio throughput" });
      await fio.getByRole('button', { name: "Run the model's fio jobs" }).click();
      await expect(fio.getByTestId('model-randwrite-64')).not.toBeEmpty({ timeout: 60_000 });
      expect(await axeViolations(page)).toEqual([]);
    });
  });
}
