// What a person does on the first page: format an image in the browser, see
// its trees, download it (and the kernel mounts it), open images made
// elsewhere, and see clear errors for bad input.
import { expect, test } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { btrfsCheck, CLI, kernelUnavailable, withMount } from '../tests/kernel/lib.mjs';
import { format, openApp, scratchDir } from './helpers';

let dir: string;
test.beforeAll(() => {
  dir = scratchDir();
});
test.afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('format an image in the browser and see its trees', async ({ page }) => {
  await openApp(page);
  await format(page, { size: '64M', nodesize: '4 KiB', label: 'browser' });
  await expect(page.getByRole('heading', { name: 'Image: “browser”' })).toBeVisible();
  await expect(page.getByTestId('tree-count')).toHaveText('9');
  await expect(page.getByTestId('bytes-used')).toHaveText(String(9 * 4096));
  await page.getByText('Every block and item as a list').click();
  for (const name of ['root tree', 'chunk tree', 'extent tree', 'device tree', 'fs tree', 'checksum tree', 'uuid tree', 'free space tree', 'data reloc tree']) {
    await expect(page.getByRole('region', { name, exact: true })).toBeVisible();
  }
  const fsTree = page.getByRole('region', { name: 'fs tree', exact: true });
  await expect(fsTree.getByRole('cell', { name: '(256 INODE_ITEM 0)' })).toBeVisible();
  await expect(fsTree.getByRole('cell', { name: 'index 0 name ..' })).toBeVisible();
});

test('the downloaded image mounts in the kernel and passes btrfs check', async ({ page }) => {
  await openApp(page);
  await format(page, { size: '128M', label: 'download' });
  await expect(page.getByRole('button', { name: 'Download image' })).toBeVisible();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download image' }).click()]);
  expect(download.suggestedFilename()).toBe('btrfs-lab.img');
  const img = join(dir, 'downloaded.img');
  await download.saveAs(img);
  expect(readFileSync(img).length).toBe(128 * 1024 * 1024);
  const why = kernelUnavailable();
  test.skip(!!why, `KERNEL PART SKIPPED: ${why}`);
  let c = btrfsCheck(img);
  expect(c.ok, c.output).toBe(true);
  await withMount(img, (mnt) => writeFileSync(join(mnt, 'from-browser.txt'), 'made in a browser\n'));
  await withMount(img, (mnt) => expect(readFileSync(join(mnt, 'from-browser.txt'), 'utf8')).toBe('made in a browser\n'), { readOnly: true });
  c = btrfsCheck(img);
  expect(c.ok, c.output).toBe(true);
  expect(execFileSync('btrfs', ['filesystem', 'label', img], { encoding: 'utf8' }).trim()).toBe('download');
});

test('open an image made by mkfs.btrfs', async ({ page }) => {
  const img = join(dir, 'progs.img');
  writeFileSync(img, '');
  execFileSync('truncate', ['-s', '128M', img]);
  execFileSync('mkfs.btrfs', ['-q', '-f', '-L', 'progs', img]);
  await openApp(page);
  await page.getByLabel(/Or open an image/).setInputFiles(img);
  await expect(page.getByRole('heading', { name: 'Image: progs.img' })).toBeVisible();
  await page.getByText('Every block and item as a list').click();
  const uuid = page.getByRole('region', { name: 'uuid tree', exact: true });
  await expect(uuid.getByText(/UUID_KEY_SUBVOL/)).toBeVisible();
  await expect(page.getByRole('region', { name: 'fs tree', exact: true }).getByRole('cell', { name: '(256 INODE_REF 256)' })).toBeVisible();
});

test('a corrupt image shows the core’s error, not a blank page', async ({ page }) => {
  await openApp(page);
  const junk = join(dir, 'junk.img');
  writeFileSync(junk, Buffer.alloc(1 << 20, 0x41));
  await page.getByLabel(/Or open an image/).setInputFiles(junk);
  await expect(page.getByRole('alert')).toHaveText(/junk\.img: ECORRUPT: superblock at 65536: no btrfs magic/);

  const flipped = join(dir, 'flipped.img');
  execFileSync(new URL('../wasm-core/build/btrfslab', import.meta.url).pathname, ['mkfs', '--size', '32M', flipped]);
  const bytes = readFileSync(flipped);
  const root = bytes.readBigUInt64LE(0x10000 + 0x50);
  bytes[Number(root) + 500] ^= 0x01;
  writeFileSync(flipped, bytes);
  await page.getByLabel(/Or open an image/).setInputFiles(flipped);
  await expect(page.getByRole('alert')).toHaveText(/checksum verify failed on logical \d+ \(root 1\)/);
  await expect(page.getByRole('heading', { name: 'btrfs-lab' })).toBeVisible();
});

test('bad sizes get clear errors', async ({ page }) => {
  await openApp(page);
  await format(page, { size: 'lots' });
  await expect(page.getByRole('alert')).toHaveText('"lots" is not a size: write it like 128M or 1G');
  await format(page, { size: '8M' });
  await expect(page.getByRole('alert')).toHaveText(/ETOOSMALL: size 8388608 bytes is too small: the minimum is 25165824 bytes \(24 MiB\)/);
});

test('keyboard only: format and download', async ({ page }) => {
  await openApp(page);
  const size = page.getByLabel('Size', { exact: true });
  for (let i = 0; i < 12 && !(await size.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab'); // past the tabs, a lesson each
  await expect(size).toBeFocused();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.type('48M');
  await page.keyboard.press('Tab'); // node size
  await page.keyboard.press('Tab'); // label
  await page.keyboard.type('keys');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('heading', { name: 'Image: “keys”' })).toBeVisible();
  await page.getByRole('button', { name: 'Download image' }).focus();
  const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
  expect(download.suggestedFilename()).toBe('btrfs-lab.img');
});

test('import an image the kernel wrote and find a file in the fs tree', async ({ page }) => {
  const why = kernelUnavailable();
  test.skip(!!why, `KERNEL PART SKIPPED: ${why}`);
  const img = join(dir, 'kernel.img');
  writeFileSync(img, '');
  execFileSync('truncate', ['-s', '128M', img]);
  execFileSync('mkfs.btrfs', ['-q', '-f', img]);
  await withMount(img, (mnt) => {
    execFileSync('mkdir', ['-p', join(mnt, 'docs')]);
    writeFileSync(join(mnt, 'docs', 'hello.txt'), 'written by the kernel\n');
  });
  await openApp(page);
  await page.getByLabel(/Or open an image/).setInputFiles(img);
  await expect(page.getByRole('heading', { name: 'Image: kernel.img' })).toBeVisible();
  // the explorer shows the fs tree; its items include the file's inode (258: /docs is 257)
  await expect(page.getByRole('combobox', { name: 'Tree', exact: true })).toHaveValue('fs');
  await page.getByText('Every block and item as a list').click();
  const fs = page.getByRole('region', { name: 'fs tree', exact: true });
  await expect(fs.getByRole('cell', { name: '(258 INODE_ITEM 0)', exact: true })).toBeVisible();
  await expect(fs.getByRole('cell', { name: /index 2 name hello\.txt/ })).toBeVisible();
  await expect(fs.getByRole('cell', { name: /size 22 nbytes 22 mode 100644 links 1/ })).toBeVisible();
});

test('a large tree opens with its leaves folded and stays usable', async ({ page }) => {
  // 20,000 creates in the page's core: on a busy machine this takes far more
  // than the default 5 s a state gets, so each state below is waited for longer
  test.setTimeout(240_000);
  const slow = { timeout: 90_000 };
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto('./?lesson=01-cow-btree');
  await page.getByLabel('Scenario script').fill('mkfs nodesize=4K size=256M\nmkdir /d\ncreate /d/f_{1..20000}\n');
  await page.getByRole('button', { name: 'Run scenario' }).click();
  await expect(page.getByText('Step 0 of 3')).toBeVisible(slow); // mkfs, the line, the commit that ends the script
  await page.getByRole('button', { name: 'Last step' }).click();
  await expect(page.getByTestId('sentence')).toContainText('After the last line, the commit at the end of the script', slow);
  const canvas = page.getByTestId('tree-canvas');
  await expect(canvas.locator('g.block').first()).toBeVisible(slow);
  await expect(page.getByTestId('busybar')).toBeHidden(slow); // the step's tree is drawn: the core is idle
  const shown = await canvas.locator('g.block').count();
  expect(shown).toBeLessThan(100); // 80,000 items: only the nodes are drawn
  const folded = canvas.locator('g.block[aria-expanded="false"]').first();
  await folded.focus();
  await page.keyboard.press('Enter');
  await expect.poll(() => canvas.locator('g.block').count(), slow).toBeGreaterThan(shown);
});

/** Replay actions `btrfslab replay` takes on img (its trace's replay events). */
function replayActions(img: string): number {
  const trace = `${img}.trace.jsonl`;
  execFileSync(CLI, ['replay', img, '-o', `${img}.out`, '--trace', trace]);
  return readFileSync(trace, 'utf8').split('\n').filter((l) => l.includes('"kind":"replay"')).length;
}

async function stepsThroughReplay(page: import('@playwright/test').Page, name: string, actions: number) {
  const view = page.getByRole('region', { name: `Log replay: ${name}` });
  await expect(view).toBeVisible();
  await expect(view.locator('p.step-text')).toHaveText(new RegExp(`Replay has ${actions} actions`));
  await view.getByRole('button', { name: 'Next replay step' }).click();
  await expect(view.locator('p.step-text')).toContainText('pin');
  await view.getByRole('button', { name: 'After replay' }).click();
  await expect(view.getByRole('region', { name: 'The fs tree during replay' }).getByRole('heading')).toContainText('after replay (committed)');
  await expect(view.locator('.step-count')).toHaveText(`${actions} / ${actions}`);
}

test('an image with a pending log (a crash point of ours) opens in the replay view and steps through its replay', async ({ page }) => {
  const img = join(dir, 'ours-crashed.img');
  execFileSync(CLI, ['run', 'tests/scenarios/007-fsync-crash/scenario.txt', '--image', img]);
  const actions = replayActions(img);
  expect(actions).toBeGreaterThan(5);
  await openApp(page);
  await page.getByLabel(/Or open an image/).setInputFiles(img);
  await expect(page.getByRole('heading', { name: 'Image: ours-crashed.img' })).toBeVisible();
  await stepsThroughReplay(page, 'ours-crashed.img', actions);
  // the image itself is left as it was: its log still pending in the explorer
  await expect(page.getByRole('combobox', { name: 'Tree', exact: true }).first().locator('option', { hasText: /^log/ }).first()).toBeAttached();
});

test('a log the kernel wrote (copied while mounted) opens in the replay view', async ({ page }) => {
  const why = kernelUnavailable();
  test.skip(!!why, `KERNEL PART SKIPPED: ${why}`);
  const img = join(dir, 'kernel-log.img');
  // an outside commit can write the log away before the copy: taken again then
  let copied = false;
  for (let attempt = 0; attempt < 4 && !copied; attempt++) {
    writeFileSync(img, '');
    execFileSync('truncate', ['-s', '128M', img]);
    execFileSync('mkfs.btrfs', ['-q', '-f', img]);
    await withMount(img, (mnt) => {
      execFileSync('mkdir', ['-p', join(mnt, 'docs')]);
      execFileSync('sync', ['-f', mnt]);
      writeFileSync(join(mnt, 'docs', 'fsynced.txt'), 'kept by fsync\n');
      execFileSync('xfs_io', ['-c', 'fsync', join(mnt, 'docs', 'fsynced.txt')]);
      execFileSync('cp', ['--sparse=always', img, `${img}.copy`]);
    }, { options: ['commit=600'] });
    const sb = execFileSync('btrfs', ['inspect-internal', 'dump-super', `${img}.copy`], { encoding: 'utf8' });
    copied = /^log_root\s+[1-9]/m.test(sb);
  }
  expect(copied, 'a log_root in the copy (4 tries)').toBe(true);
  const actions = replayActions(`${img}.copy`);
  await openApp(page);
  await page.getByLabel(/Or open an image/).setInputFiles(`${img}.copy`);
  await stepsThroughReplay(page, 'kernel-log.img.copy', actions);
});
