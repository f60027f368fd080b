// The lessons and the playground at a phone's width (390×844): nothing
// scrolls sideways (a wide table scrolls inside its own box), the trees
// stack, a question opens where it can be read; screenshots compared.
import { expect, test, type Page } from '@playwright/test';
import { noSidewaysScroll } from './helpers';

test.use({ viewport: { width: 390, height: 844 } });

async function open(page: Page, query: string) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?${query}`);
  await expect(page.getByTestId('sentence').first()).not.toBeEmpty();
  await expect(page.getByTestId('tree-canvas').first().locator('g.block').first()).toBeVisible();
}

test('lesson 1 on a phone: fits, a question opens in view, screenshots', async ({ page }) => {
  await open(page, 'lesson=01-cow-btree&step=6');
  await noSidewaysScroll(page);
  await page.waitForTimeout(200);
  await expect(page.getByRole('region', { name: 'Player' })).toHaveScreenshot('phone-lesson1-player.png', { maxDiffPixelRatio: 0.02 });
  await expect(page.getByTestId('tree-canvas')).toHaveScreenshot('phone-lesson1-tree.png', { maxDiffPixelRatio: 0.02 });
  await page.getByRole('slider', { name: 'Step' }).fill('0');
  await page.getByRole('button', { name: 'Step forward' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByRole('radio').first()).toBeFocused();
  await expect(dialog.getByRole('radio').first()).toBeInViewport();
  await noSidewaysScroll(page);
});

test('lesson 2 on a phone: the replay trees stack, the tables scroll in their boxes', async ({ page }) => {
  await open(page, 'lesson=02-fsync-log-tree&step=7');
  const log = page.getByRole('region', { name: 'The log, as the crash left it', exact: true });
  const fs = page.getByRole('region', { name: 'The fs tree during replay', exact: true });
  await expect(fs.getByTestId('tree-canvas').locator('g.block').first()).toBeVisible();
  const [a, b] = [await log.boundingBox(), await fs.boundingBox()];
  expect(b!.y).toBeGreaterThanOrEqual(a!.y + a!.height - 1); // one above the other
  await noSidewaysScroll(page);
  const table = page.getByRole('region', { name: /The seed's table and the model \(scrolls sideways\)/ });
  await expect(table).toBeVisible();
  expect(await table.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
});

test('the playground on a phone, with an image made', async ({ page }) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('./?view=playground');
  await page.getByRole('button', { name: 'Format' }).click();
  await expect(page.getByTestId('tree-canvas').locator('g.block')).toHaveCount(1);
  await noSidewaysScroll(page);
});
