// Hostile images in the page, and cancelling what takes long. The images are
// crafted here from one the CLI makes (tests/cli/craft.mjs repacks the leaf
// and gives it a valid checksum, so what the core meets is the lie itself,
// never a checksum error); the page must show the core's own error, list and
// check what it can, and stay usable. A cancelled request restarts the
// core's worker without freezing anything, and the lesson comes back.
import { expect, test, type Page } from '@playwright/test';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, openApp, scratchDir } from './helpers';
// @ts-expect-error: a plain ES module of the CLI tests
import { FT, Image, cmpKey } from '../tests/cli/craft.mjs';

const CLI = new URL('../wasm-core/build/btrfslab', import.meta.url).pathname;

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(CLI, args, { encoding: 'utf8', timeout: 30_000, maxBuffer: 1 << 28 });
}

type Key = { objectid: bigint; type: number; offset: bigint };
type Item = { key: Key; data: Buffer };
type CraftImage = {
  lookup(path: string): bigint;
  dirIndex(dir: bigint, name: string): { key: Key };
  edit(tree: string, pred: (k: Key) => boolean, fn: (items: Item[], i: number) => void): void;
  addEntry(dir: bigint, name: string, child: bigint, o: { type: number }): void;
  rootOf(tree: string): bigint;
  ptrs(node: bigint): { key: Key; blockptr: bigint; generation: bigint }[];
  writeNode(node: bigint, ptrs: { key: Key; blockptr: bigint; generation: bigint }[]): void;
  save(path: string): void;
};
const open = (path: string): CraftImage => Image.open(path);

let dir = '';
const img: Record<string, string> = {};
test.beforeAll(() => {
  dir = scratchDir();
  const script = join(dir, 'base.txt');
  writeFileSync(script, 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f\nwrite /d/f 0 5000 1\nmkdir /a\ncreate /a/g\n');
  img.base = join(dir, 'base.img');
  const r = cli(['run', script, '--image', img.base, '--seed', '1', '--time', '1700000000']);
  expect(r.status, r.stderr).toBe(0);

  // /d/f's DIR_INDEX says its name is 300 bytes: past BTRFS_NAME_LEN and past the end of its item
  let im = open(img.base);
  const at = im.dirIndex(im.lookup('/d'), 'f').key;
  im.edit('fs', (k) => cmpKey(k, at) === 0, (items, i) => items[i].data.writeUInt16LE(300, 27)); // name_len: u16 at 27
  im.save((img.nameLen = join(dir, 'name-len-300.img')));

  // /a/up names the root directory: a cycle / -> /a -> /a/up = /
  im = open(img.base);
  im.addEntry(im.lookup('/a'), 'up', 256n, { type: FT.DIR });
  im.save((img.cycle = join(dir, 'cycle.img')));

  // every pointer of the fs tree's root node leads to its first child (whose keys then disagree with theirs)
  const wide = join(dir, 'wide.txt');
  writeFileSync(wide, 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/file_with_a_long_name_{1..2000}\n');
  img.wide = join(dir, 'wide.img');
  expect(cli(['run', wide, '--image', img.wide, '--seed', '1', '--time', '1700000000']).status).toBe(0);
  im = open(img.wide);
  const root = im.rootOf('fs');
  const ptrs = im.ptrs(root);
  im.writeNode(root, ptrs.map((p) => ({ ...p, blockptr: ptrs[0].blockptr, generation: ptrs[0].generation })));
  im.save((img.oneChild = join(dir, 'one-child.img')));
});

/** What the CLI says of the image (its message without the "btrfslab CMD: " prefix). */
function cliError(cmd: string, image: string): string {
  const r = cli([cmd, image]);
  expect(r.status).not.toBe(0);
  return r.stderr.trim().split('\n')[0].replace(/^btrfslab [\w-]+: /, '');
}

async function openImage(page: Page, path: string) {
  await page.getByLabel(/Or open an image/).setInputFiles(path);
}

test('a DIR_INDEX whose name_len runs past its item gives the tree checker\'s error, exactly, and the page goes on working', async ({ page }) => {
  const expected = cliError('ls', img.nameLen);
  expect(expected).toMatch(/^ECORRUPT: corrupt leaf: root=5 block=\d+ slot=\d+, .*name_len 300/);
  await openApp(page);
  await openImage(page, img.nameLen);
  await expect(page.getByRole('alert')).toHaveText(`name-len-300.img: ${expected}`);
  await expect(page.getByRole('region', { name: /Image:/ })).toHaveCount(0);
  // responsive: a button still works, and the core serves the next request
  await format(page, { size: '64M' });
  await expect(page.getByRole('status')).toHaveText('Ready.');
  await expect(page.getByRole('alert')).toHaveCount(0);
  await openImage(page, img.base);
  await expect(page.getByRole('heading', { name: 'Image: base.img' })).toBeVisible();
});

test('a directory cycle: listing stops at the directory reached twice, and the core\'s check names it', async ({ page }) => {
  const checkLine = cli(['check', img.cycle]).stdout.split('\n').find((l) => l.startsWith('ERROR: '))!;
  expect(checkLine).toContain('inode 256');
  await openApp(page);
  await openImage(page, img.cycle);
  const files = page.getByRole('region', { name: 'Files', exact: true });
  await expect(files.getByRole('table', { name: 'Directory /' })).toContainText('d/');
  await files.getByRole('button', { name: 'a/', exact: true }).click();
  const a = files.getByRole('table', { name: 'Directory /a' });
  await expect(a).toContainText('g');
  await a.getByRole('button', { name: 'up/', exact: true }).click();
  await expect(files.getByRole('alert')).toHaveText('/a/up: corrupt: directory inode 256 is reached a second time (a directory has one name): a cycle');
  await expect(files.getByRole('table', { name: 'Directory /a' })).toBeVisible();
  await files.getByRole('button', { name: 'Check the filesystem' }).click();
  const result = files.getByRole('region', { name: 'Check result' });
  await expect(result).toContainText('1 problem found:');
  await expect(result).toContainText(checkLine.replace(/^ERROR: /, ''));
  // the way back up still works
  await files.getByRole('navigation', { name: 'Path' }).getByRole('button', { name: '/', exact: true }).click();
  await expect(files.getByRole('table', { name: 'Directory /' })).toBeVisible();
});

test('a tree whose pointers all lead to one child is refused with the core\'s error, never a hung page', async ({ page }) => {
  const expected = cliError('dump-json', img.oneChild);
  await openApp(page);
  await openImage(page, img.oneChild);
  await expect(page.getByRole('alert')).toHaveText(`one-child.img: ${expected}`);
  await format(page, { size: '64M' });
  await expect(page.getByRole('status')).toHaveText('Ready.');
});

const HUGE = 'mkfs nodesize=4K size=1G\nmkdir /d\ncreate /d/f_{1..1000000}\n';

async function startHugeRun(page: Page) {
  await page.goto('./?lesson=01-cow-btree');
  const script = page.getByLabel('Scenario script');
  await expect(page.getByTestId('sentence')).not.toBeEmpty(); // the lesson's own run is done
  await script.fill(HUGE);
  await page.getByRole('button', { name: 'Run scenario' }).click();
  const bar = page.getByTestId('busybar');
  await expect(bar).toBeVisible({ timeout: 20_000 });
  return bar;
}

test('a long run can be cancelled: the page stays live, the core restarts, the lesson comes back', async ({ page }) => {
  const bar = await startHugeRun(page);
  const before = await page.getByRole('slider', { name: 'Step' }).getAttribute('max');
  await expect(bar).toContainText(/^Running the scenario… \d+\.\d s/);
  // the page's thread is free: the elapsed time moves while the core works
  const first = await bar.textContent();
  await expect(bar).not.toHaveText(first!, { timeout: 10_000 });
  await bar.getByRole('button', { name: 'Cancel' }).click();
  // usable again at once: the bar gone and the page saying so within a second
  await expect(bar).toBeHidden({ timeout: 1_000 });
  await expect(page.getByRole('alert').filter({ hasText: 'Cancelled' })).toHaveText('Cancelled: the core stopped what it was doing and started afresh.', { timeout: 1_000 });
  // the text kept for editing, the last good run shown again (by the new worker)
  await expect(page.getByLabel('Scenario script')).toHaveValue(HUGE);
  await expect(page.getByRole('slider', { name: 'Step' })).toHaveAttribute('max', before!, { timeout: 30_000 });
  // a later small run works
  await page.getByLabel('Scenario script').fill('mkfs nodesize=4K size=64M\nmkdir /after_cancel\n');
  await page.getByRole('button', { name: 'Run scenario' }).click();
  await page.getByRole('button', { name: 'Last step' }).click(); // the commit that ends the script
  await expect(page.getByTestId('sentence')).toContainText('After the last line', { timeout: 30_000 });
  await page.getByRole('button', { name: 'Step back' }).click();
  await expect(page.getByTestId('sentence')).toContainText('mkdir /after_cancel');
  await expect(bar).toBeHidden();
});

test('past the watchdog\'s limit the bar says the work may be hostile, and Cancel has the focus', async ({ page }) => {
  await page.clock.install();
  const bar = await startHugeRun(page);
  await page.clock.fastForward(21_000);
  const hint = bar.getByRole('alert');
  await expect(hint).toContainText('the image may be hostile, or too big for the page');
  await expect(bar.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(bar).toBeHidden({ timeout: 1_000 });
  await page.getByRole('link', { name: /Images/ }).click();
  await format(page, { size: '64M' });
  await expect(page.getByRole('status')).toHaveText('Ready.', { timeout: 30_000 });
});
