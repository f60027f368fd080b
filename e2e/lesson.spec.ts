// Lesson 1 as a learner uses it: run the scenario, answer the questions
// before the steps they ask about, step forward and back (exactly), scrub,
// use the keyboard, reopen a step from the address bar, switch trees,
// export the diagram; screenshots of the views compared with the baselines.
import { expect, test, type Page } from '@playwright/test';

test.use({ viewport: { width: 1400, height: 950 } });

async function openLesson(page: Page, query = '') {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?lesson=01-cow-btree${query}`);
  await expect(page.getByTestId('sentence')).not.toBeEmpty();
  await expect(page.getByTestId('tree-canvas').locator('g.block').first()).toBeVisible();
}

/** What the explorer shows: the blocks by bytenr with their marks, and the sentence. */
async function viewState(page: Page) {
  await page.waitForTimeout(100);
  const blocks = await page.getByTestId('tree-canvas').locator('g.block:not(.leaving)').evaluateAll((els) =>
    els.map((e) => `${e.getAttribute('data-bytenr')}:${e.getAttribute('data-mark') ?? ''}`).sort());
  return { blocks, sentence: await page.getByTestId('sentence').textContent(), step: await page.getByRole('slider', { name: 'Step' }).inputValue() };
}

async function answer(page: Page, choice: RegExp) {
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();
  await dialog.getByRole('radio', { name: choice }).click();
  await expect(dialog.getByRole('status')).toContainText(/Right\.|Not quite\./);
  await dialog.getByRole('button', { name: 'See it happen' }).click();
}

test('step through lesson 1, answering before each reveal', async ({ page }) => {
  await openLesson(page);
  await expect(page.getByRole('heading', { name: 'The copy-on-write B-tree' })).toBeVisible();
  const forward = page.getByRole('button', { name: 'Step forward' });
  for (let i = 0; i < 3; i++) await forward.click();
  await expect(page.getByTestId('sentence')).toContainText('Line 5, commit');
  await forward.click(); // onto "create /docs/note_13": a question first
  await answer(page, /copied to a new block first/);
  await expect(page.getByTestId('sentence')).toContainText('Line 6, create /docs/note_13');
  await expect(page.getByTestId('sentence')).toContainText('copied on write');
  await expect(page.getByTestId('tree-canvas').locator('g.block[data-mark="cow"]').first()).toBeVisible();
  await forward.click();
  await answer(page, /The create fails/); // a wrong answer is explained too
  await expect(page.getByTestId('sentence')).toContainText('Line 7');
  await expect(page.getByTestId('sentence')).toContainText(/split|push/);
  expect(await page.getByTestId('tree-canvas').locator('g.block').count()).toBeGreaterThan(2);
  await expect(page).toHaveURL(/step=5/);
});

test('stepping back is exact: back then forward shows the same view', async ({ page }) => {
  await openLesson(page, '&step=3');
  const before = await viewState(page);
  await page.getByRole('button', { name: 'Step back' }).click();
  const back = await viewState(page);
  expect(back).not.toEqual(before);
  await page.getByRole('button', { name: 'Step forward' }).click();
  expect(await viewState(page)).toEqual(before);
});

test('scrub, keyboard, jumps, and the address bar', async ({ page }) => {
  await openLesson(page, '&step=2');
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue('2');
  await page.getByRole('slider', { name: 'Step' }).fill('1');
  await expect(page.getByTestId('sentence')).toContainText('Line 3, mkdir /docs');
  await page.locator('body').press('ArrowRight');
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue('2');
  await page.locator('body').press('ArrowLeft');
  await page.locator('body').press('ArrowLeft');
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue('0');
  await page.getByRole('button', { name: 'Next commit' }).click();
  await expect(page.getByTestId('sentence')).toContainText('Commit: generation 2 is on disk');
  const here = await viewState(page);
  // a link reopens the same view
  await page.reload();
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue(here.step);
  expect(await viewState(page)).toEqual(here);
});

test('explore another tree, open an item, export the diagram', async ({ page }) => {
  await openLesson(page, '&step=3');
  await page.getByRole('combobox', { name: 'Tree', exact: true }).selectOption('extent');
  await expect(page.getByTestId('tree-canvas').locator('g.block').first()).toContainText(/leaf|node/);
  await page.getByTestId('tree-canvas').locator('rect.item').first().click();
  await expect(page.getByRole('region', { name: 'Item' })).toContainText(/key \(\d+ (BLOCK_GROUP_ITEM|METADATA_ITEM|EXTENT_ITEM)/);
  await expect(page.getByLabel('Fields as dump-tree prints them')).toContainText(/block group used \d+ chunk_objectid 256 flags \w+\|\w+|refs 1 gen \d+ flags TREE_BLOCK/);
  const [svg] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export SVG' }).click()]);
  expect(svg.suggestedFilename()).toBe('extent-tree.svg');
  const text = await (await svg.createReadStream()).toArray();
  expect(Buffer.concat(text).toString()).toMatch(/^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg".*<g class="block"/s);
  const [png] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export PNG' }).click()]);
  expect(png.suggestedFilename()).toBe('extent-tree.png');
});

test('a bad scenario line shows the core error', async ({ page }) => {
  await openLesson(page);
  await page.getByLabel('Scenario script').fill('mkfs nodesize=4K size=64M\nmkdir /a\nrmdir /nope\n');
  await page.getByRole('button', { name: 'Run scenario' }).click();
  await expect(page.getByRole('alert')).toHaveText('scenario:3: rmdir: ENOENT: /nope: no such file or directory');
  await page.getByRole('button', { name: 'Reset' }).click();
  await expect(page.getByRole('alert')).toHaveCount(0);
});

test('screenshots of the views', async ({ page }) => {
  await openLesson(page, '&step=6');
  await expect(page.getByTestId('tree-canvas')).toHaveScreenshot('lesson1-step6-tree.png', { maxDiffPixelRatio: 0.02 });
  await expect(page.getByRole('region', { name: 'Player' })).toHaveScreenshot('lesson1-player.png', { maxDiffPixelRatio: 0.02 });
  await page.goto('./?view=playground');
  await page.getByRole('button', { name: 'Format' }).click();
  await expect(page.getByTestId('tree-canvas').locator('g.block')).toHaveCount(1);
  await page.waitForTimeout(200);
  await expect(page.getByTestId('tree-canvas')).toHaveScreenshot('playground-fs-tree.png', { maxDiffPixelRatio: 0.02 });
});
