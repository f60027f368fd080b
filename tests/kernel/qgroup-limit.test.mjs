// Qgroup limits, against the kernel. The same `qgroup limit` lines done by
// the core and by the kernel (btrfs qgroup limit [-e] on a mkfs.btrfs image):
// the LIMIT items are the same (dump-tree -t quota). Our image with limits
// passes `btrfs check --qgroup-report`; the kernel mounts it and `btrfs
// qgroup show -pre --raw` prints what `btrfslab qgroup show -pre --raw`
// prints; the kernel then refuses a write past our limit (EDQUOT) at the
// byte the core refuses the same write. Then the same scenarios run by both
// (runInKernel: its VFS writing until EDQUOT): the command that fails and
// the bytes the short writes before it wrote must be the same, and are
// printed.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { runInKernel } from './kernel-run.mjs';
import { CLI, scratchDir, skipReason, withMount } from './lib.mjs';

const skip = skipReason();
const dir = scratchDir('qgroup-limit');
const EDQUOT = 122; // Linux errno

const W = (path, off, len, seed = 1) => ['write', path, off, len, seed];
/** n writes of chunk bytes to path from start. */
const seq = (path, chunk, n, start = 0) => Array.from({ length: n }, (_, i) => W(path, start + i * chunk, chunk, i + 1));
const script = (nodesize, cmds) => [`mkfs nodesize=${nodesize} size=256M`, ...cmds.map((c) => c.join(' '))].join('\n') + '\n';

/** Runs cmds in the core: { img, failed: {index, written} | null, stderr }. */
function ours(name, nodesize, cmds) {
  const txt = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(txt, script(nodesize, cmds));
  const r = spawnSync(CLI, ['run', txt, '--image', img], { encoding: 'utf8' });
  const m = r.stderr.match(/:(\d+): write: EDQUOT: .*: (\d+) bytes written\n/);
  assert.ok(r.status === 0 || m, `${name}: ${r.stderr}`);
  return { img, failed: m ? { index: Number(m[1]) - 2, written: Number(m[2]) } : null, stderr: r.stderr };
}
/** Runs cmds in the kernel on a fresh mkfs.btrfs image: { img, failed: {index, written} | null }. */
async function theirs(name, nodesize, cmds) {
  const img = join(dir, `${name}-kernel.img`);
  execFileSync('truncate', ['-s', '256M', img]);
  execFileSync('mkfs.btrfs', ['-q', '-f', '-n', String(nodesize), img]);
  const failed = await withMount(img, (mnt) => {
    try {
      runInKernel(cmds, mnt);
      return null;
    } catch (e) {
      assert.equal(e.errno, -EDQUOT, `${name}: command ${e.cmdIndex} failed otherwise: ${e.message}`);
      execFileSync('sync', ['-f', mnt]);
      return { index: e.cmdIndex, written: e.written };
    }
  });
  return { img, failed };
}
const limitItems = (img) => execFileSync('btrfs', ['inspect-internal', 'dump-tree', '-t', 'quota', img], { encoding: 'utf8' })
  .match(/key \(0 QGROUP_LIMIT \S+\) itemoff \d+ itemsize 40\n(\t\t.*\n){3}/g).map((s) => s.replace(/itemoff \d+ /, ''));

const LIMITS = [['quota', 'enable'], ['subvol', 'create', '/sv'], ['qgroup', 'create', '1/7'], ['qgroup', 'assign', '0/256', '1/7'],
  ['quota', 'rescan'], ['create', '/sv/f'], W('/sv/f', 0, 200000), ['commit'], ['qgroup', 'limit', '10M', '0/5'],
  ['qgroup', 'limit', '5M', '0/256', 'excl'], ['qgroup', 'limit', '3M', '1/7'], ['qgroup', 'limit', '2M', '1/7', 'excl'],
  ['qgroup', 'limit', '1G', '0/256'], ['qgroup', 'limit', 'none', '0/256']];

describe('qgroup limits: the kernel writes, reads and enforces them as we do', { skip }, () => {
  test('the LIMIT items as the kernel writes them', async () => {
    const o = ours('items', 4096, LIMITS), t = await theirs('items', 4096, LIMITS);
    assert.equal(t.failed, null);
    const items = limitItems(o.img);
    assert.equal(items.length, 3);
    assert.deepEqual(items, limitItems(t.img));
  });

  test('our image: btrfs check --qgroup-report, the kernel\'s qgroup show -pre, and its EDQUOT at our byte', async () => {
    const base = [...LIMITS, ['qgroup', 'limit', '1M', '0/256']];
    const o = ours('mounted', 4096, base);
    const c = spawnSync('btrfs', ['check', '--qgroup-report', o.img], { encoding: 'utf8' });
    assert.equal(c.status, 0, c.stdout + c.stderr);
    assert.doesNotMatch(c.stdout + c.stderr, /are different|Rescan hasn't been/);
    const shown = execFileSync(CLI, ['qgroup', 'show', '-pre', '--raw', o.img], { encoding: 'utf8' });
    assert.match(shown, /^0\/256 +\d+ +\d+ +1048576 +5242880 1\/7 +sv$/m);
    // the kernel writes into our image past the limit, 64 KiB at a time; the core does the same writes
    const more = seq('/sv/f', 65536, 20, 200704);
    const seen = await withMount(o.img, (mnt) => {
      const text = execFileSync('btrfs', ['qgroup', 'show', '-pre', '--raw', mnt], { encoding: 'utf8' });
      let failed = null;
      const fd = openSync(join(mnt, 'sv/f'), 'r+');
      try {
        for (const [i, [, , off, len]] of more.entries()) {
          let done = 0;
          try {
            while (done < len) done += writeSync(fd, Buffer.alloc(len - done, i + 1), 0, len - done, off + done);
          } catch (e) {
            assert.equal(e.errno, -EDQUOT, e.message);
            failed = { index: i, written: done };
            break;
          }
        }
      } finally {
        closeSync(fd);
      }
      return { text, failed };
    });
    assert.equal(seen.text, shown, 'btrfs qgroup show -pre --raw on the kernel\'s mount');
    assert.ok(seen.failed, 'the kernel refused a write past our limit');
    const again = ours('mounted-more', 4096, [...base, ...more]);
    assert.deepEqual(again.failed, { index: base.length + seen.failed.index, written: seen.failed.written },
      `the kernel stopped at write ${seen.failed.index} after ${seen.failed.written} bytes; ours: ${again.stderr}`);
    process.stdout.write(`# our image, limit 1M on 0/256: the kernel and the core stop at write ${seen.failed.index} of 64 KiB, ${seen.failed.written} bytes into it\n`);
  });

  const CASES = [
    ['a subvolume, 64 KiB writes', 4096, [['quota', 'enable'], ['subvol', 'create', '/sv'], ['qgroup', 'limit', '1M', '0/256'], ['create', '/sv/f'], ...seq('/sv/f', 65536, 20)]],
    ['a subvolume, 4 KiB writes', 4096, [['quota', 'enable'], ['subvol', 'create', '/sv'], ['qgroup', 'limit', '1M', '0/256'], ['create', '/sv/f'], ...seq('/sv/f', 4096, 300)]],
    ['unaligned writes, 16K nodes', 16384, [['quota', 'enable'], ['subvol', 'create', '/sv'], ['qgroup', 'limit', '3M', '0/256'], ['create', '/sv/f'], ...seq('/sv/f', 77777, 60)]],
    ['the top level, with data before', 4096, [['mkdir', '/d'], ['create', '/d/a'], W('/d/a', 0, 300000), ['commit'], ['quota', 'enable'], ['qgroup', 'limit', '1M', '0/5'],
      ['create', '/d/b'], ...seq('/d/b', 65536, 20)]],
    ['overwriting committed data', 4096, [['quota', 'enable'], ['subvol', 'create', '/sv'], ['create', '/sv/f'], W('/sv/f', 0, 600000), ['commit'],
      ['qgroup', 'limit', '1M', '0/256'], ...seq('/sv/f', 65536, 20)]],
    ['commits between writes', 4096, [['quota', 'enable'], ['subvol', 'create', '/sv'], ['qgroup', 'limit', '1M', '0/256'], ['create', '/sv/f'],
      ...seq('/sv/f', 65536, 20).flatMap((w) => [w, ['commit']])]],
    ['a group over two subvolumes', 4096, [['quota', 'enable'], ['subvol', 'create', '/a'], ['subvol', 'create', '/b'], ['qgroup', 'create', '1/1'],
      ['qgroup', 'assign', '0/256', '1/1'], ['qgroup', 'assign', '0/257', '1/1'], ['quota', 'rescan'], ['qgroup', 'limit', '2M', '1/1'], ['create', '/a/f'], ['create', '/b/f'],
      ...Array.from({ length: 40 }, (_, i) => W(i % 2 ? '/b/f' : '/a/f', Math.floor(i / 2) * 65536, 65536, i + 1))]],
    ['exclusive, beside a snapshot', 4096, [['quota', 'enable'], ['subvol', 'create', '/sv'], ['create', '/sv/f'], W('/sv/f', 0, 700000), ['commit'],
      ['snapshot', '/sv', '/snap'], ['qgroup', 'limit', '1M', '0/256', 'excl'], ['create', '/sv/g'], ...seq('/sv/g', 65536, 20)]],
    ['referenced, beside a snapshot', 4096, [['quota', 'enable'], ['subvol', 'create', '/sv'], ['create', '/sv/f'], W('/sv/f', 0, 700000), ['commit'],
      ['snapshot', '/sv', '/snap'], ['qgroup', 'limit', '1M', '0/256'], ['create', '/sv/g'], ...seq('/sv/g', 65536, 20)]],
  ];
  for (const [what, nodesize, cmds] of CASES) {
    test(`the same work in the kernel: ${what}: the same write fails, after the same bytes`, async () => {
      const name = what.replace(/\W+/g, '-');
      const o = ours(name, nodesize, cmds);
      const at = (f) => f && `command ${f.index} (${cmds[f.index].join(' ')}), ${f.written} bytes written`;
      // where the kernel's write fails depends on when it flushes and commits: a commit of its own (the transaction
      // kthread, writeback on a busy machine) in the middle moves it; such a run is done again, up to 3 times
      const tried = [];
      let t;
      for (let attempt = 0; attempt < 3; attempt++) {
        t = await theirs(name, nodesize, cmds);
        assert.ok(t.failed, `${what}: the kernel never refused a write`);
        tried.push(at(t.failed));
        if (JSON.stringify(t.failed) === JSON.stringify(o.failed)) break;
        process.stdout.write(`# ${what}: the kernel stopped at ${at(t.failed)} this time, ours at ${at(o.failed)}; again\n`);
      }
      process.stdout.write(`# ${what}: kernel ${at(t.failed)}; ours ${at(o.failed)}\n`);
      assert.deepEqual(o.failed, t.failed, `the kernel's runs: ${tried.join('; ')}`);
    });
  }
});
