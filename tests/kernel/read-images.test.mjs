// Reading images we did not write: mkfs.btrfs --rootdir images at three
// nodesizes, and the same images after the kernel changed them, read back
// through `btrfslab extract` identically to the kernel's mount; dump-tree
// header and item lines equal btrfs-progs'; our own check finds nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, linkSync, mkdirSync, renameSync, rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { btrfsCheck, CLI, COMPARE, dumpTreeAll, progsDumpTree, run, scratchDir, skipReason, withMount } from './lib.mjs';
import { dataBytes } from './model.mjs';

const skip = skipReason();
const dir = scratchDir('read');

function source() {
  const src = join(dir, 'src');
  mkdirSync(join(src, 'a/b/c'), { recursive: true });
  for (let i = 0; i < 400; i++) writeFileSync(join(src, 'a', `small${i}`), `${i}\n`.repeat(i % 40));
  writeFileSync(join(src, 'a/b/big'), dataBytes(9, 0, 2 * 1024 * 1024 + 5));
  writeFileSync(join(src, 'a/b/c/inline'), 'inline data');
  linkSync(join(src, 'a/b/c/inline'), join(src, 'hard'));
  symlinkSync('a/b/big', join(src, 'sym'));
  execFileSync('python3', ['-c', `import os; os.setxattr(${JSON.stringify(join(src, 'a'))}, 'user.x', b'y')`]);
  return src;
}

function extract(img) {
  const out = join(dir, `x-${Math.random().toString(36).slice(2)}`);
  execFileSync(CLI, ['extract', img, out]);
  return out;
}

function sameAsKernel(img) {
  const ours = extract(img);
  return withMount(img, (mnt) => JSON.parse(execFileSync('python3', [COMPARE, mnt, ours], { encoding: 'utf8', maxBuffer: 1 << 26 })), { readOnly: true })
    .finally(() => rmSync(ours, { recursive: true, force: true }));
}

function ourCheck(img) {
  try {
    execFileSync(CLI, ['check', '--check-data-csum', img], { encoding: 'utf8' });
    return '';
  } catch (e) {
    return `${e.stdout}${e.stderr}`;
  }
}

describe('images made by mkfs.btrfs and changed by the kernel', { skip }, () => {
  const src = source();
  for (const ns of [4096, 16384, 65536]) {
    test(`nodesize ${ns}`, async () => {
      const img = join(dir, `progs-${ns}.img`);
      writeFileSync(img, '');
      truncateSync(img, 256 << 20);
      run('mkfs.btrfs', ['-q', '-f', '-n', String(ns), '--rootdir', src, img]);
      assert.deepEqual(await sameAsKernel(img), [], 'as made by mkfs.btrfs');
      assert.deepEqual(dumpTreeAll(execFileSync(CLI, ['dump-tree', img], { encoding: 'utf8', maxBuffer: 1 << 28 })), dumpTreeAll(progsDumpTree(img)));
      assert.equal(ourCheck(img), '');

      await withMount(img, (mnt) => {
        for (let i = 0; i < 400; i += 3) unlinkSync(join(mnt, 'a', `small${i}`));
        renameSync(join(mnt, 'a/b'), join(mnt, 'moved'));
        appendFileSync(join(mnt, 'moved/big'), dataBytes(10, 0, 100_000));
        truncateSync(join(mnt, 'moved/c/inline'), 3);
        mkdirSync(join(mnt, 'new'));
        for (let i = 0; i < 300; i++) writeFileSync(join(mnt, 'new', `f${i}`), dataBytes(i, 0, (i * 997) % 9000));
        linkSync(join(mnt, 'new/f7'), join(mnt, 'f7-again'));
        symlinkSync('/nowhere', join(mnt, 'new/dangling'));
        execFileSync('python3', ['-c', `import os; os.setxattr(${JSON.stringify(join(mnt, 'new/f1'))}, 'user.k', b'v' * 200)`]);
      });
      assert.ok(btrfsCheck(img).ok);
      assert.deepEqual(await sameAsKernel(img), [], 'after the kernel changed it');
      assert.deepEqual(dumpTreeAll(execFileSync(CLI, ['dump-tree', img], { encoding: 'utf8', maxBuffer: 1 << 28 })), dumpTreeAll(progsDumpTree(img)));
      assert.equal(ourCheck(img), '');
    });
  }
});
