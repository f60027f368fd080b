// Lesson 5 as a learner uses it: the space panel of an untar's step (the
// metadata gauge, tar's ticket queued, the reclaim worker's ladder unlit, then
// FLUSH_DELALLOC lit and running at the first delalloc flush, each inode's
// dirty pages drained); the same tree with whole inodes (passes of 10 inodes,
// dirty inodes left, longer waits); the player's events moving the panel; the
// questions; before and after (both budgets on each device) against the
// seed's untar times; the state exported and read back by the CLI;
// screenshots at desktop and phone width; axe.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { CLI } from '../tests/kernel/lib.mjs';
import { axeViolations, noSidewaysScroll, scratchDir, unstick } from './helpers';

const LESSON = '05-space-reclaim';
// the scenario's steps: 5 is line 10 (mkdir /pages), 6 line 12 (the untar with a page budget), 9 line 17 (the untar with whole inodes)
const BEFORE = 5, PAGES = 6, INODES = 9;

async function open(page: Page, step: number) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?lesson=${LESSON}&step=${step}`);
  await expect(page.getByTestId('sentence')).not.toBeEmpty();
}

const space = (page: Page) => page.getByRole('region', { name: 'Space: the gauges, the tickets and the reclaim worker' });
const compare = (page: Page) => page.getByRole('region', { name: 'Before and after: whole inodes or a budget of pages' });
const rung = (page: Page, state: string) => space(page).locator(`li.rung[data-state="${state}"]`);

/** The step's summary line, as numbers: tickets, their wait (ms), delalloc flushes, the step's time (ms). */
async function summary(page: Page) {
  const text = (await space(page).getByTestId('space-summary').textContent())!;
  const ms = (s: string) => (s.endsWith(' ms') ? parseFloat(s) : s.endsWith(' s') ? parseFloat(s) * 1000 : parseFloat(s) / 1000);
  const m = /: ([\d,]+) tickets \(all granted\), waited for ([\d.]+ (?:ms|s|µs)) in all;.* (\d+) delalloc flushes wrote .*; the step took ([\d.]+ (?:ms|s))\./.exec(text);
  expect(m, text).not.toBeNull();
  return { tickets: Number(m![1].replace(/,/g, '')), waitMs: ms(m![2]), flushes: Number(m![3]), tookMs: ms(m![4]) };
}

test.describe('at desktop width', () => {
  test.use({ viewport: { width: 1400, height: 950 } });

  test('the first ticket queues with the ladder unlit; at the first delalloc flush FLUSH_DELALLOC is lit and the dirty pages drain', async ({ page }) => {
    await open(page, PAGES);
    const panel = space(page);
    await expect(panel.getByTestId('space-summary')).toContainText('Line 12:');
    // at the step's end: the ladder's last round, every ticket granted
    await expect(panel.getByTestId('ticket-queue')).toHaveText('No ticket waits at this moment.');
    await panel.getByRole('button', { name: 'Next ticket' }).click();
    await expect(panel.getByTestId('ticket-queue').locator('li.ticket')).toHaveCount(1);
    await expect(panel.getByTestId('ticket-queue')).toContainText('tar asks 1.25 MiB, waiting 0 ns');
    await expect(panel.getByTestId('space-said')).toContainText("tar's reservation of 1.25 MiB of metadata does not fit");
    await expect(panel.getByTestId('gauge-metadata')).toContainText('past the chunks: overcommitted');
    await expect(panel.locator('li.rung[data-lit="true"]')).toHaveCount(0);
    await panel.getByRole('button', { name: 'Next delalloc flush' }).click();
    await expect(rung(page, 'FLUSH_DELALLOC')).toHaveAttribute('data-lit', 'true');
    await expect(rung(page, 'FLUSH_DELALLOC')).toHaveAttribute('data-running', 'true');
    await expect(rung(page, 'FLUSH_DELALLOC')).toContainText('running: a delalloc flush');
    await expect(rung(page, 'FLUSH_DELAYED_ITEMS_NR')).toHaveAttribute('data-lit', 'true');
    await expect(rung(page, 'COMMIT_TRANS')).toHaveAttribute('data-lit', 'false');
    const flush = panel.getByTestId('delalloc-flush');
    await expect(flush).toHaveAttribute('data-mode', 'pages');
    await expect(flush).toContainText(/budget \d+ pages \(5\.11\+/);
    await expect(flush).toContainText('no delalloc left');
    await expect(flush.locator('.drain-files li')).not.toHaveCount(0);
    await expect(flush.locator('.drain-files li .drain-said').first()).toHaveText(/^(\d+) of \1 pages?(, inline)?$/);
    // the next event on: the flush's state ends, and the moment after it is told
    await panel.getByRole('button', { name: 'Next space event' }).click();
    await expect(panel.getByRole('slider', { name: 'Space event' })).not.toHaveValue('0');
    await panel.getByRole('button', { name: 'Previous space event' }).click();
    await expect(rung(page, 'FLUSH_DELALLOC')).toHaveAttribute('data-running', 'true');
    await unstick(page);
    await expect(panel).toHaveScreenshot('lesson5-space.png', { maxDiffPixelRatio: 0.02 });
  });

  test('the same tree with whole inodes: passes of 10 inodes leave inodes dirty; more flushes, longer waits', async ({ page }) => {
    await open(page, PAGES);
    await expect(space(page).getByTestId('space-summary')).toContainText('Line 12:');
    const pages = await summary(page);
    await open(page, INODES); // from the address: no question on the way
    await expect(space(page).getByTestId('space-summary')).toContainText('Line 17:');
    const inodes = await summary(page);
    expect(pages.tickets).toBeGreaterThan(50);
    expect(inodes.tickets).toBeGreaterThan(50);
    expect(inodes.flushes).toBeGreaterThan(2 * pages.flushes);
    expect(inodes.waitMs).toBeGreaterThan(1.5 * pages.waitMs);
    expect(inodes.tookMs).toBeGreaterThan(1.2 * pages.tookMs);
    await space(page).getByRole('button', { name: 'Next delalloc flush' }).click();
    const flush = space(page).getByTestId('delalloc-flush');
    await expect(flush).toHaveAttribute('data-mode', 'inodes');
    await expect(flush).toContainText('budget 10 inodes (5.10');
    await expect(flush).toContainText(/wrote \d+ pages of 10 inodes .*; \d+ inodes \(\d+ pages\) still dirty/);
    await expect(flush.locator('.drain-files li')).toHaveCount(10);
  });

  test("the player's events move the panel: a wait on a ticket shows tar's ticket queued", async ({ page }) => {
    await open(page, PAGES);
    await expect(space(page).getByTestId('space-summary')).toContainText('Line 12:');
    const queue = space(page).getByTestId('ticket-queue');
    for (let i = 0; i < 60; i++) {
      await page.getByRole('button', { name: 'Next wait' }).click();
      await expect(page.getByTestId('sentence')).toContainText(/event \d+ of \d+/);
      if (await queue.locator('li.ticket').count()) break;
    }
    await expect(queue).toContainText('tar asks 1.25 MiB');
    await expect(space(page).getByRole('slider', { name: 'Space event' })).not.toHaveValue('0');
  });

  test('the questions: a reservation that does not fit, then the budget in whole inodes', async ({ page }) => {
    await open(page, BEFORE);
    await page.getByRole('button', { name: 'Step forward' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('What happens when one of tar\'s reservations does not fit?');
    await dialog.getByRole('radio', { name: /tar queues a ticket and sleeps/ }).click();
    await expect(dialog.getByRole('status')).toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    await expect(page.getByTestId('sentence')).toContainText('Line 12');
    await expect(space(page).getByTestId('space-summary')).toContainText('Line 12:');
    await page.getByRole('slider', { name: 'Step' }).fill(String(INODES));
    await expect(dialog).toContainText('On the same tree of small files, what do you expect?');
    await dialog.getByRole('radio', { name: /Fewer flushes, each bigger/ }).click();
    await expect(dialog.getByRole('status')).not.toContainText('Right.');
    await dialog.getByRole('button', { name: 'See it happen' }).click();
    await expect(page.getByTestId('sentence')).toContainText('Line 17');
  });

  test("before and after: whole inodes against pages on each device, charted against the seed's untar times", async ({ page }) => {
    await open(page, PAGES);
    const cmp = compare(page);
    const table = cmp.getByRole('table', { name: 'The untar in both modes' });
    await expect(table).toBeVisible({ timeout: 30_000 });
    await expect(cmp).toContainText('The scenario run twice on its device (ssd)');
    for (const id of ['untar-time', 'tickets', 'ticket-wait', 'passes', 'budget', 'pages-written', 'pages-per-pass', 'inodes-written']) {
      await expect(table.getByTestId(id).locator('td')).toHaveCount(4);
    }
    // whole inodes: a longer untar, more tickets and longer waits, more flushes of fewer pages
    await expect(table.getByTestId('untar-time').locator('td').nth(3)).toHaveText(/× more before$/);
    await expect(table.getByTestId('tickets').locator('td').nth(3)).toHaveText(/× more before$/);
    await expect(table.getByTestId('ticket-wait').locator('td').nth(3)).toHaveText(/× more before$/);
    await expect(table.getByTestId('passes').locator('td').nth(3)).toHaveText(/× more before$/);
    await expect(table.getByTestId('pages-per-pass').locator('td').nth(3)).toHaveText(/× less before$/);
    await expect(table.getByTestId('budget')).toContainText('10 inodes');
    // every device run: the limits said in figures
    const limits = cmp.getByTestId('model-limits');
    await expect(limits).toBeVisible({ timeout: 30_000 });
    await expect(limits).toContainText(/[\d.]+× slower on ssd, [\d.]+× slower on nvme, [\d.]+× slower on hdd/);
    await expect(limits).toContainText('2.2× (NVMe, 5.10), 3.5× (consumer SSD, 5.10.5), 3.5× (consumer SSD, 5.11-rc2)');
    await expect(cmp.getByRole('img', { name: /^Untar time before and after the fix/ }).locator('g.row')).toHaveCount(6);
    await expect(cmp.getByRole('img', { name: /^Bytes a delalloc flush wrote/ }).locator('g.row')).toHaveCount(3);
    const seed = cmp.getByRole('table', { name: "The seed's untar times" });
    await expect(seed.locator('tbody tr')).toHaveCount(7);
    await expect(seed.locator('tbody tr').nth(1)).toContainText('5.10whole inodes86.2 s');
    await expect(seed.locator('tbody tr').nth(2)).toContainText('5.10 + the fixpages38.8 s');
    await unstick(page);
    await expect(cmp.getByRole('img', { name: /^Untar time before and after the fix/ })).toHaveScreenshot('lesson5-time-chart.png', { maxDiffPixelRatio: 0.02 });
  });

  test('export this state: the image after the untar, read back by the CLI', async ({ page }) => {
    await open(page, PAGES);
    await expect(space(page).getByTestId('space-summary')).toContainText('Line 12:');
    const saved = page.waitForEvent('download');
    await space(page).getByRole('button', { name: 'Export this state' }).click();
    const file = await saved;
    expect(file.suggestedFilename()).toBe('state-line12.img');
    const dir = scratchDir();
    try {
      const img = join(dir, 'state.img');
      copyFileSync((await file.path())!, img);
      const ls = execFileSync(CLI, ['ls', '-R', img, '/pages'], { encoding: 'utf8' });
      expect(ls.trim().split('\n').length).toBeGreaterThan(500); // 500 files and their directories
      expect(execFileSync(CLI, ['check', '--check-data-csum', img], { encoding: 'utf8' })).toContain('0 errors');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test.describe('at phone width', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('the space panel fits; a screenshot at the first delalloc flush', async ({ page }) => {
    await open(page, PAGES);
    await expect(space(page).getByTestId('space-summary')).toContainText('Line 12:');
    await noSidewaysScroll(page);
    await space(page).getByRole('button', { name: 'Next delalloc flush' }).click();
    await expect(rung(page, 'FLUSH_DELALLOC')).toHaveAttribute('data-running', 'true');
    await noSidewaysScroll(page);
    await unstick(page);
    await expect(space(page)).toHaveScreenshot('phone-lesson5-space.png', { maxDiffPixelRatio: 0.02 });
  });
});

for (const size of [{ name: 'desktop', width: 1440, height: 900 }, { name: 'phone', width: 390, height: 844 }]) {
  test.describe(`lesson 5: no accessibility violations at ${size.name} width`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });

    test('the space panel at a delalloc flush, the before and after', async ({ page }) => {
      await open(page, PAGES);
      await expect(compare(page).getByTestId('model-limits')).toBeVisible({ timeout: 30_000 });
      expect(await axeViolations(page)).toEqual([]);
      await space(page).getByRole('button', { name: 'Next delalloc flush' }).click();
      await expect(rung(page, 'FLUSH_DELALLOC')).toHaveAttribute('data-running', 'true');
      expect(await axeViolations(page)).toEqual([]);
    });
  });
}
