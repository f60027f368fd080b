// The README's picture: lesson 1 at its sixth step, the whole window. A baseline
// like the others, so the suite fails when the page no longer looks like it
// (update with: npx playwright test -c e2e/playwright.config.ts readme.spec.ts --update-snapshots).
import { expect, test } from '@playwright/test';
import { unstick } from './helpers';

test.use({ viewport: { width: 1280, height: 1280 } });

test('the README screenshot: lesson 1, step 6', async ({ page }) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('./?lesson=01-cow-btree&step=6');
  await expect(page.getByRole('heading', { name: 'The copy-on-write B-tree' })).toBeVisible();
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveValue('6');
  await expect(page.getByTestId('tree-canvas').locator('g.block').first()).toBeVisible();
  await unstick(page);
  await expect(page).toHaveScreenshot('readme-lesson1.png', { maxDiffPixelRatio: 0.02 });
});
