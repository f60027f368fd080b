// Seed 002's machinery against the kernel: images made while space ran
// short (tickets, the reclaim worker, shrink_delalloc in either mode), and
// one that stopped with ENOSPC mid-untar, pass btrfs check, mount, and hold
// the files the model says, byte for byte; the kernel can write to them.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { btrfsCheck, CLI, run, scratchDir, skipReason, withMount } from './lib.mjs';
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { runInKernel } from './kernel-run.mjs';

const skip = skipReason();
const dir = scratchDir('kernel-space');

/** The model's files under path as {path: sha256}, read with btrfslab cat. */
function modelFiles(img, paths) {
  const out = {};
  for (const p of paths) {
    const r = spawnSync(CLI, ['cat', img, p], { maxBuffer: 1 << 28 });
    assert.equal(r.status, 0, `cat ${p}: ${r.stderr}`);
    out[p] = createHash('sha256').update(r.stdout).digest('hex');
  }
  return out;
}

describe('space reservation images in the kernel', { skip }, () => {
  for (const [name, text, fails] of [
    ['pages', 'mkfs size=512M\nset device=loop\nset tree_locks=path\nset shrink_delalloc=pages\nuntar random files=1500 seed=5\n', false],
    ['inodes', 'mkfs size=512M\nset device=loop\nset tree_locks=path\nset shrink_delalloc=inodes\nuntar random files=1500 seed=5\n', false],
    ['enospc', 'mkfs size=128M\nset device=ssd\nuntar random files=100000 seed=2\n', true],
  ]) {
    test(`${name}: btrfs check clean, mounted, the same files, writable`, async () => {
      const s = join(dir, `${name}.txt`), img = join(dir, `${name}.img`), m = join(dir, `${name}.json`);
      writeFileSync(s, text);
      const r = spawnSync(CLI, ['run', s, '--image', img, '--metrics', m], { encoding: 'utf8' });
      assert.equal(r.status, fails ? 1 : 0, r.stderr);
      if (fails) assert.match(r.stderr, /ENOSPC/);
      const metrics = JSON.parse(readFileSync(m, 'utf8'));
      assert.ok(metrics.timed.reclaim.tickets > 0, 'reservations waited on tickets');
      const c = btrfsCheck(img, ['--check-data-csum']);
      assert.ok(c.ok, c.output);
      // a sample of the files: the first directory's
      const names = spawnSync(CLI, ['ls', img, '/src/m000'], { encoding: 'utf8' }).stdout.split('\n').filter((n) => n.endsWith('.c'));
      assert.ok(names.length > 0);
      const want = modelFiles(img, names.map((n) => `/src/m000/${n}`));
      await withMount(img, async (mnt) => {
        for (const [p, h] of Object.entries(want))
          assert.equal(createHash('sha256').update(readFileSync(join(mnt, p))).digest('hex'), h, p);
        if (!fails) {
          writeFileSync(join(mnt, 'after.txt'), 'written by the kernel\n');
          run('sync', []);
        }
      });
      assert.ok(btrfsCheck(img).ok, 'still clean after the kernel used it');
    });
  }
});

// ENOSPC at write time, as the kernel's: on our 128 MiB filesystem (single
// data, single metadata, 12 MiB chunks each), 64 MiB files written one after
// another. The kernel (its VFS writing on a fresh image of our mkfs) fills
// the first and stops the second short with ENOSPC; measured on 6.18:
// 67108864 and 49217536 bytes (all the data space its chunks can take, less
// the superblock copy's 64 KiB at 64 MiB). Our scenario must stop the same
// write after the same bytes, within one data-reservation granule (a page:
// 4 KiB, the unit both reserve in), and keep an image that passes btrfs
// check, mounts and holds what was written.
describe('ENOSPC on the write that does not fit, as the kernel\'s', { skip }, () => {
  test('64 MiB files on 128 MiB: the same bytes written, the image kept and clean', async () => {
    const ENOSPC = 28, GRANULE = 4096;
    const cmds = ['a', 'b', 'c'].flatMap((f, i) => [['create', `/${f}`], ['write', `/${f}`, 0, 64 << 20, i + 1]]);
    const s = join(dir, 'full.txt'), img = join(dir, 'full.img'), fresh = join(dir, 'full-kernel.img'), mk = join(dir, 'mkfs.txt');
    writeFileSync(s, ['mkfs size=128M', ...cmds.map((c) => c.join(' '))].join('\n') + '\n');
    const r = spawnSync(CLI, ['run', s, '--image', img], { encoding: 'utf8' });
    assert.equal(r.status, 1, r.stderr);
    const m = r.stderr.match(/full\.txt:(\d+): write: ENOSPC: \/(\w): write of 67108864 bytes at 0 finds no room in the data space .*: (\d+) bytes written\n/);
    assert.ok(m, r.stderr);
    const ours = { index: Number(m[1]) - 2, written: Number(m[3]) };
    const c = btrfsCheck(img, ['--check-data-csum']);
    assert.ok(c.ok, c.output);
    writeFileSync(mk, 'mkfs size=128M\n');
    execFileSync(CLI, ['run', mk, '--image', fresh]);
    const theirs = await withMount(fresh, (mnt) => {
      try {
        runInKernel(cmds, mnt);
        return null;
      } catch (e) {
        assert.equal(e.errno, -ENOSPC, `command ${e.cmdIndex} failed otherwise: ${e.message}`);
        return { index: e.cmdIndex, written: e.written };
      }
    });
    process.stdout.write(`# kernel: command ${theirs?.index} wrote ${theirs?.written} bytes before ENOSPC; ours: command ${ours.index}, ${ours.written}\n`);
    assert.ok(theirs, 'the kernel wrote every file');
    assert.equal(ours.index, theirs.index, 'the same write fails');
    assert.ok(Math.abs(ours.written - theirs.written) <= GRANULE, `bytes written: ours ${ours.written}, the kernel's ${theirs.written}`);
    // our image in the kernel: the files as written (the full one and the short one)
    const want = modelFiles(img, ['/a', `/${m[2]}`]);
    await withMount(img, (mnt) => {
      for (const [p, h] of Object.entries(want)) assert.equal(createHash('sha256').update(readFileSync(join(mnt, p))).digest('hex'), h, p);
      assert.equal(readFileSync(join(mnt, m[2])).length, ours.written);
    }, { options: ['noatime'] });
    assert.ok(btrfsCheck(img).ok, 'still clean after the kernel mounted it');
  });
});

after(() => dir && spawnSync('rm', ['-rf', dir]));
