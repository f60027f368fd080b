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
import { spawnSync } from 'node:child_process';

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

after(() => dir && spawnSync('rm', ['-rf', dir]));
