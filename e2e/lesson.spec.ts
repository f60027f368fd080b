// Lesson 1 as a learner uses it: run the scenario, answer the questions
// before the steps they ask about (keyboard and mouse, shuffled choices with
// feedback for each), step forward and back (exactly), scrub,
// use the keyboard, reopen a step from the address bar, switch trees,
// export the diagram; screenshots of the views compared with the baselines.
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { choiceOrder, questionKey, type Question } from '../web/src/model/questions';

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

const LESSON1 = '01-cow-btree';
const QUESTIONS = JSON.parse(readFileSync(fileURLToPath(new URL(`../lessons/${LESSON1}/questions.json`, import.meta.url)), 'utf8')) as Question[];

/** Answers the open question with the first choice shown, by keyboard, and moves on. */
async function answerAny(page: Page) {
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByRole('radio').first()).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(dialog.getByRole('button', { name: 'See it happen' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(dialog).toHaveCount(0);
}

test('step through lesson 1, answering before each reveal, by keyboard and by mouse', async ({ page }) => {
  await openLesson(page);
  await expect(page.getByRole('heading', { name: 'The copy-on-write B-tree' })).toBeVisible();
  const forward = page.getByRole('button', { name: 'Step forward' });
  const dialog = page.getByRole('dialog');
  await forward.click(); // onto "mkdir /docs", the first copy-on-write: asked about first
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('sentence')).toContainText('Before the first command');
  // the choices in their fixed shuffled order, the first focused
  const q = QUESTIONS[0];
  const order = choiceOrder(questionKey(LESSON1, 0), q.choices.length);
  expect(await dialog.getByRole('radio').allTextContents()).toEqual(order.map((i) => q.choices[i].text));
  await expect(dialog.getByRole('radio').first()).toBeFocused();
  // the arrow keys move to the right answer, Enter chooses it
  const right = order.indexOf(q.answer);
  for (let k = 0; k < right; k++) await page.keyboard.press('ArrowDown');
  await expect(dialog.getByRole('radio').nth(right)).toBeFocused();
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue('0'); // the arrows stayed in the question
  await page.keyboard.press('Enter');
  await expect(dialog.getByRole('status')).toContainText('Right.');
  const chosen = dialog.getByRole('radio', { checked: true });
  await expect(chosen).toContainText('✓');
  await expect(chosen).toContainText('your answer');
  await expect(chosen).toContainText(`Right: ${q.choices[q.answer].why}`);
  await expect(dialog.getByText(/^Wrong: /)).toHaveCount(q.choices.length - 1); // each other choice says why not
  await expect(dialog.getByRole('button', { name: 'See it happen' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('sentence')).toContainText('Line 3, mkdir /docs');
  await expect(page.getByTestId('sentence')).toContainText(/COW leaf \d+ → \d+ in the fs tree/);
  await expect(page.getByTestId('tree-canvas').locator('g.block[data-mark="cow"]').first()).toBeVisible();
  await expect(forward).toBeFocused(); // back to the player
  // by mouse, a wrong answer: marked, and explained
  await forward.click();
  await dialog.getByRole('radio', { name: /fails with ENOSPC/ }).click();
  await expect(dialog.getByRole('status')).toContainText('Not quite.');
  const wrong = dialog.getByRole('radio', { checked: true });
  await expect(wrong).toContainText('✗');
  await expect(wrong).toContainText('your answer');
  await expect(wrong).toContainText('Not this: ENOSPC means the device is full');
  await expect(dialog.getByRole('radio', { name: /It splits in two/ })).toContainText('✓');
  await expect(dialog.getByRole('radio', { name: /It splits in two/ })).toContainText('The answer: ');
  await dialog.getByRole('button', { name: 'See it happen' }).click();
  await expect(page.getByTestId('sentence')).toContainText('Line 4');
  await expect(page.getByTestId('sentence')).toContainText(/split/);
  expect(await page.getByTestId('tree-canvas').locator('g.block').count()).toBeGreaterThan(2);
  await expect(page).toHaveURL(/step=2/);
});

test('a question left open closes when the learner runs a scenario', async ({ page }) => {
  await openLesson(page);
  await page.getByRole('button', { name: 'Step forward' }).click();
  await expect(page.getByRole('dialog')).toBeVisible();
  await page.getByLabel('Scenario script').fill('mkfs nodesize=4K size=64M\nmkdir /mine\n');
  await page.getByRole('button', { name: 'Run scenario' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await page.getByRole('button', { name: 'Step forward' }).click(); // the learner's own script: no questions
  await expect(page.getByTestId('sentence')).toContainText('Line 2, mkdir /mine');
});

test('event by event inside a line: a search path, an item landing in its slot, a split and the pointer its parent gains; the replaced blocks stay until the commit', async ({ page }) => {
  await openLesson(page);
  await page.getByLabel('Scenario script').fill('mkfs nodesize=4K size=64M\nmkdir /d\ncommit\ncreate /d/f{1..14}\ncommit\n');
  await page.getByRole('button', { name: 'Run scenario' }).click();
  await expect(page.getByTestId('sentence')).toContainText('Before the first command');
  const canvas = page.getByTestId('tree-canvas');
  const sentence = page.getByTestId('sentence');
  await page.getByRole('slider', { name: 'Step' }).fill('2'); // line 3, the commit
  await expect(sentence).toContainText('Line 3, commit');
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur()); // the slider keeps its own arrow keys
  // Shift and the right arrow: the first event of line 4
  await page.keyboard.press('Shift+ArrowRight');
  await expect(sentence).toContainText(/^Line 4, create \/d\/f\{1\.\.14\}, event 1 of \d+: /);
  await expect(canvas).toHaveAttribute('data-state', '3.0');
  let moment = 0;
  const next = async () => {
    await page.keyboard.press('Shift+ArrowRight');
    moment++;
    await expect(canvas).toHaveAttribute('data-state', `3.${moment}`); // drawn: the state right after that event
    return (await sentence.textContent()) ?? '';
  };
  // the first COW: the committed leaf stays on disk, drawn faded behind its copy
  let text = await sentence.textContent() ?? '';
  while (!/: COW leaf/.test(text) && moment < 20) text = await next();
  expect(text).toMatch(/COW leaf (\d+) → (\d+) in the fs tree/);
  const [, from, to] = /COW leaf (\d+) → (\d+)/.exec(text)!;
  await expect(canvas.locator(`g.block[data-bytenr="${to}"][data-mark="cow"] text.badge`)).toHaveText('[COW]');
  await expect(canvas.locator(`g.ghost[data-bytenr="${from}"]`)).toContainText(`on disk, generation 2: leaf ${from}`);
  // an item lands in its slot, after the search that found the slot
  while (!/: Insert item/.test(text) && moment < 40) text = await next();
  const [, leaf, slot] = /into leaf (\d+) of the fs tree at slot (\d+)/.exec(text)!;
  await expect(canvas.locator(`g.block[data-bytenr="${leaf}"] rect.item.focus`)).toHaveCount(1);
  expect(await canvas.locator(`g.block[data-bytenr="${leaf}"] rect.item`).nth(Number(slot)).getAttribute('class')).toContain('focus');
  // the split, and the parent's new pointer
  while (!/: Split leaf/.test(text) && moment < 200) text = await next();
  const [, left, right] = /Split leaf (\d+) of the fs tree: items from slot \d+ move to new leaf (\d+)/.exec(text)!;
  await expect(canvas.locator(`g.block[data-bytenr="${left}"]`)).toHaveAttribute('data-mark', 'split');
  await expect(canvas.locator(`g.block[data-bytenr="${right}"]`)).toHaveAttribute('data-mark', 'new');
  await expect(canvas.locator('g.block text.badge', { hasText: '+1 pointer' })).toHaveCount(1);
  const at = await viewState(page);
  // one event back, and forward again: the same view (the button does what Shift+arrow does)
  await page.getByRole('button', { name: 'Previous event' }).click();
  await expect(canvas).toHaveAttribute('data-state', `3.${moment - 1}`);
  await expect(sentence).not.toContainText('Split');
  await page.getByRole('button', { name: 'Next event' }).click();
  await expect(canvas).toHaveAttribute('data-state', `3.${moment}`);
  expect(await viewState(page)).toEqual(at);
  // the commit drops the replaced blocks
  await expect(canvas.locator('g.ghost').first()).toBeVisible();
  await page.getByRole('button', { name: 'Step forward' }).click();
  await expect(sentence).toContainText('Line 5, commit');
  await expect(canvas.locator('g.ghost')).toHaveCount(0);
});

test("the address bar keeps the learner's own scenario: a reload brings it back, run and at its step", async ({ page }) => {
  await openLesson(page);
  const mine = 'mkfs nodesize=4K size=64M\nmkdir /mine\ncreate /mine/a{1..3}\n';
  await page.getByLabel('Scenario script').fill(mine);
  await page.getByRole('button', { name: 'Run scenario' }).click();
  await page.getByRole('button', { name: 'Step forward' }).click();
  await page.getByRole('button', { name: 'Step forward' }).click();
  await expect(page.getByTestId('sentence')).toContainText('Line 3, create /mine/a{1..3}');
  await expect(page).toHaveURL(/step=2&script=mkfs/);
  await page.reload();
  await expect(page.getByLabel('Scenario script')).toHaveValue(mine);
  await expect(page.getByTestId('sentence')).toContainText('Line 3, create /mine/a{1..3}');
  // the lesson's own scenario again: the address drops it
  await page.getByRole('button', { name: 'Reset' }).click();
  await expect(page).not.toHaveURL(/script=/);
});

test('keyboard only: open an item from a focused leaf, move between items, close back to the leaf', async ({ page }) => {
  await openLesson(page, '&step=3');
  const leaf = page.getByTestId('tree-canvas').locator('g.block').filter({ hasText: /^leaf/ }).first();
  await leaf.focus();
  await page.keyboard.press('Enter');
  const item = page.getByRole('region', { name: 'Item' });
  await expect(item).toBeVisible();
  await expect(item.getByRole('heading')).toBeFocused();
  await expect(item.getByRole('heading')).toContainText(/^Item 0 of leaf \d+/);
  await item.getByRole('button', { name: 'Next item' }).press('Enter');
  await expect(item.getByRole('heading')).toContainText(/^Item 1 of leaf/);
  await item.getByRole('button', { name: 'Close' }).press('Enter');
  await expect(item).toHaveCount(0);
  await expect(leaf).toBeFocused();
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
  await page.locator('body').press('ArrowRight'); // onto line 4: its question first
  await answerAny(page);
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue('2');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue('0');
  await page.getByRole('button', { name: 'Next commit' }).click(); // past line 3: its question first, then its step
  await answerAny(page);
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue('1');
  await page.getByRole('button', { name: 'Next commit' }).click();
  await expect(page.getByTestId('sentence')).toContainText('Commit: generation 2 is on disk');
  const here = await viewState(page);
  // a link reopens the same view (the address bar follows the player once it pauses: wait for it)
  await expect(page).toHaveURL(new RegExp(`step=${here.step}(&|$)`));
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

test('a live figure in the text: the number of files in its sentence changes the tree it draws', async ({ page }) => {
  await openLesson(page);
  const fig = page.getByRole('figure', { name: /Make .* files in one directory/ });
  const canvas = fig.getByTestId('live-canvas');
  await expect(canvas).toHaveAttribute('data-state', '8');
  await expect(canvas.locator('g.block')).toHaveCount(1); // 8 files: one leaf
  await fig.getByRole('spinbutton', { name: 'files' }).fill('20');
  await expect(canvas).toHaveAttribute('data-state', '20');
  await expect(canvas.locator('g.block')).toHaveCount(3); // split: two leaves and a root
  await expect(fig).toContainText('The fs tree: 3 blocks, 2 leaves.');
});

test('legible trees: no text under 8 px, untouched siblings folded into "… N leaves" that open on click', async ({ page }) => {
  await openLesson(page);
  await page.getByLabel('Scenario script').fill('mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f{1..400}\ncommit\nwrite /d/f200 0 100 1\n');
  await page.getByRole('button', { name: 'Run scenario' }).click();
  await expect(page.getByText('Step 0 of 5')).toBeVisible();
  await page.getByRole('slider', { name: 'Step' }).fill('4'); // the write: one leaf copied, with its path
  await expect(page.getByTestId('sentence')).toContainText('Line 5, write /d/f200');
  const canvas = page.getByTestId('tree-canvas');
  await expect(canvas).toHaveAttribute('data-state', '4');
  const smallest = () => canvas.locator('svg text').evaluateAll((els) => Math.min(...els
    .filter((e) => (e.textContent ?? '').trim() && e.getClientRects().length)
    .map((e) => parseFloat(getComputedStyle(e).fontSize) * ((e as SVGGraphicsElement).getScreenCTM()?.a ?? 1))));
  expect(await smallest()).toBeGreaterThanOrEqual(8);
  const fold = canvas.locator('g.block.fold').first();
  await expect(fold).toContainText(/… \d+ leaves/);
  await expect(canvas.locator('g.block[data-mark="cow"]').first()).toBeVisible(); // what the step touched is never folded
  const before = await canvas.locator('g.block').count();
  await fold.click();
  await expect.poll(() => canvas.locator('g.block').count()).toBeGreaterThan(before);
  await expect(canvas.locator('g.block.fold')).toHaveCount(0);
  // too wide to fit readably: the minimap shows the whole tree and the part on screen, and moves the view
  const minimap = canvas.locator('svg.minimap');
  await expect(minimap).toBeVisible();
  const viewBefore = await canvas.locator('g.viewport').getAttribute('transform');
  await minimap.click({ position: { x: 4, y: 4 } });
  await expect.poll(() => canvas.locator('g.viewport').getAttribute('transform')).not.toBe(viewBefore);
});
