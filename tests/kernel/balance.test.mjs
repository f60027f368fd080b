// Balance: block groups relocated and removed. Seeded random scenarios
// (4K and 16K nodes, quotas in half of them, snapshots, subvolumes and
// reflinks: their shared blocks move through reloc trees) with `balance -m`
// between their steps and at the end: every image passes `btrfs check --check-data-csum`
// (and `--qgroup-report`: relocation must not change what a qgroup counts),
// our check, the kernel's read-only mount holds the model's files, and the
// kernel then balances our image again and it checks clean. Then the same
// image balanced by us and by the kernel: the extents each finds in the
// block groups it relocates (the kernel's "found N extents" log lines for
// its device) are close (printed; the difference comes from when each
// commits between groups). And a filesystem mkfs.btrfs made (DUP metadata)
// and the kernel filled, balanced by us: checked clean, the same files.
// Rerun one seed with
//   BTRFSLAB_SEED=<seed> node --test tests/kernel/balance.test.mjs
// and more with BTRFSLAB_BALANCE_SEEDS=<n> (default 8 a node size).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { btrfsCheck, CLI, scratchDir, skipReason, snapshotOf, withMount } from './lib.mjs';
import { randomScenario } from './model.mjs';

const skip = skipReason();
const dir = scratchDir('balance');
const only = process.env.BTRFSLAB_SEED ? [Number(process.env.BTRFSLAB_SEED)] : null;
const SEEDS = Number(process.env.BTRFSLAB_BALANCE_SEEDS ?? 8);

/** The extents the kernel's balance of the filesystem at mnt reports finding ("found N extents" of its device). */
function kernelBalance(mnt, args) {
  const dev = execFileSync('findmnt', ['-n', '-o', 'SOURCE', mnt], { encoding: 'utf8' }).trim().replace('/dev/', '');
  // a line of our own in the kernel log first: what follows it is this balance's (loop devices are reused)
  const marker = `btrfslab-balance-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  writeFileSync('/dev/kmsg', `${marker}\n`);
  const said = execFileSync('btrfs', ['balance', 'start', ...args, mnt], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks = Number(said.match(/had to relocate (\d+) out of/)?.[1] ?? NaN);
  const all = execFileSync('dmesg', ['--notime'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const at = all.lastIndexOf(marker);
  assert.ok(at >= 0, 'our marker is in the kernel log');
  const log = all.slice(at);
  let found = 0, groups = 0;
  for (const line of log.split('\n')) {
    if (!line.includes(`(device ${dev})`)) continue;
    const f = line.match(/found (\d+) extents, stage: move data extents/);
    if (f) found += Number(f[1]);
    if (/relocating block group \d+ flags/.test(line)) groups++;
  }
  // btrfs_printk is rate limited for all filesystems together: on a busy machine lines of ours can be missing
  return { found, groups, complete: groups === chunks };
}

async function checkScenario(seed, nodesize) {
  const quota = seed % 2 === 0;
  const { text, model } = randomScenario(seed, { ops: 70, nodesize, commitEvery: 10, balance: 0.04, quota, snapshots: 0.05, subvols: 0.03, clones: 0.05 });
  const script = join(dir, `b${seed}-${nodesize}.txt`), img = join(dir, `b${seed}-${nodesize}.img`);
  // every few seeds a whole balance (data too) at the end
  writeFileSync(script, text + (seed % 3 === 0 ? 'balance\n' : 'balance -m\n'));
  try {
    const metrics = JSON.parse(execFileSync(CLI, ['run', script, '--image', img, '--metrics', '-'], { encoding: 'utf8', maxBuffer: 1 << 28 }));
    assert.ok(metrics.relocated.block_groups >= 2 && metrics.relocated.extents > 0, JSON.stringify(metrics.relocated));
    const c = btrfsCheck(img, ['--check-data-csum', ...(quota ? ['--qgroup-report'] : [])]);
    assert.ok(c.ok, `seed ${seed} nodesize ${nodesize}: btrfs check failed (script ${script}):\n${c.output}`);
    assert.doesNotMatch(c.output, /are different|Rescan hasn't been/, `seed ${seed}: qgroups (script ${script}):\n${c.output}`);
    execFileSync(CLI, ['check', '--check-data-csum', img], { encoding: 'utf8' });
    const seen = await withMount(img, snapshotOf, { readOnly: true });
    delete seen['/'];
    const want = model.snapshot();
    delete want['/'];
    assert.deepEqual(seen, want, `seed ${seed} nodesize ${nodesize}: the kernel's view differs from the model (script ${script})`);
    // the kernel balances what we balanced; with quotas, its own rescan then counts what we counted
    const ours = quota ? execFileSync(CLI, ['qgroup', 'show', '--raw', img], { encoding: 'utf8' }) : null;
    const rescanned = await withMount(img, (mnt) => {
      kernelBalance(mnt, ['-m']);
      if (!quota) return null;
      execFileSync('btrfs', ['quota', 'rescan', '-w', mnt], { stdio: 'ignore' });
      return execFileSync('btrfs', ['qgroup', 'show', '--raw', mnt], { encoding: 'utf8' });
    }, { options: ['noatime'] });
    if (quota) assert.equal(rescanned, ours, `seed ${seed} nodesize ${nodesize}: the kernel's rescan after its balance differs from our numbers (script ${script})`);
    const again = btrfsCheck(img, ['--check-data-csum']);
    assert.ok(again.ok, `seed ${seed} nodesize ${nodesize}: after the kernel's balance:\n${again.output}`);
    rmSync(script);
    return metrics.relocated;
  } finally {
    rmSync(img, { force: true });
  }
}

describe('balance: our relocation, checked and mounted, balanced again by the kernel', { skip }, () => {
  let groups = 0;
  for (const nodesize of [4096, 16384]) {
    for (let seed = 1; seed <= SEEDS; seed++) {
      if (only && !only.includes(seed)) continue;
      test(`seed ${seed}, nodesize ${nodesize}`, async () => { groups += (await checkScenario(seed, nodesize)).block_groups; });
    }
  }
  test('block groups were relocated', { skip: !!only }, () => assert.ok(groups > 0));
});

describe('the same image balanced by us and by the kernel', { skip }, () => {
  for (const nodesize of [4096, 16384]) {
    test(`nodesize ${nodesize}: the extents found, ours and the kernel's`, async () => {
      const script = join(dir, `same-${nodesize}.txt`), img = join(dir, `same-${nodesize}.img`);
      const ours = join(dir, `same-${nodesize}-ours.img`), theirs = join(dir, `same-${nodesize}-kernel.img`);
      writeFileSync(script, [`mkfs nodesize=${nodesize} size=256M`, 'mkdir /a', 'mkdir /b', 'create /a/f_{1..3000}', 'create /b/g_{1..1500}',
        'write /a/f_7 0 300K 1', 'setxattr /b/g_9 user.x y', 'commit', 'unlink /a/f_{100..900}', 'commit'].join('\n') + '\n');
      try {
        execFileSync(CLI, ['run', script, '--image', img]);
        const out = execFileSync(CLI, ['balance', '-m', img, '-o', ours], { encoding: 'utf8' });
        const found = [...out.matchAll(/^found (\d+) extents$/gm)].reduce((s, m) => s + Number(m[1]), 0);
        assert.match(out, /relocating block group \d+ flags metadata/);
        const c = btrfsCheck(ours, ['--check-data-csum']);
        assert.ok(c.ok, c.output);
        let k;
        for (let attempt = 0; attempt < 4; attempt++) {
          copyFileSync(img, theirs);
          k = await withMount(theirs, (mnt) => kernelBalance(mnt, ['-m']));
          if (k.complete) break;
          process.stdout.write(`# the kernel log lost lines of ours (rate limited: ${k.groups} block groups logged); again\n`);
        }
        process.stdout.write(`# nodesize ${nodesize}: extents found, ours ${found}, the kernel's ${k.found} (ratio ${(found / k.found).toFixed(3)})\n`);
        assert.ok(k.found > 0, 'the kernel logged what it found');
        assert.ok(Math.abs(found - k.found) <= Math.max(6, k.found * 0.04), `ours ${found}, the kernel's ${k.found}`);
        // the two balanced filesystems hold the same files
        const a = await withMount(ours, snapshotOf, { readOnly: true });
        const b = await withMount(theirs, snapshotOf, { readOnly: true });
        assert.deepEqual(a, b);
      } finally {
        for (const f of [script, img, ours, theirs]) rmSync(f, { force: true });
      }
    });
  }
});

describe('a filesystem mkfs.btrfs made and the kernel filled, balanced by us', { skip }, () => {
  test('DUP metadata: every metadata and system group relocated, checked clean, the same files', async () => {
    const img = join(dir, 'kernel-made.img'), out = join(dir, 'kernel-made-balanced.img');
    try {
      execFileSync('truncate', ['-s', '512M', img]);
      execFileSync('mkfs.btrfs', ['-q', '-f', '-n', '4096', img]);
      const before = await withMount(img, (mnt) => {
        mkdirSync(join(mnt, 'd'));
        for (let i = 0; i < 2000; i++) writeFileSync(join(mnt, 'd', `file-${i}`), i % 7 ? '' : 'x'.repeat(i * 3));
        execFileSync('sync', ['-f', mnt]);
        return snapshotOf(mnt);
      });
      const printed = execFileSync(CLI, ['balance', '-m', img, '-o', out], { encoding: 'utf8' });
      assert.match(printed, /relocating block group \d+ flags system/);
      assert.match(printed, /relocating block group \d+ flags metadata/);
      const c = btrfsCheck(out, ['--check-data-csum']);
      assert.ok(c.ok, c.output);
      const chunks = execFileSync('btrfs', ['inspect-internal', 'dump-tree', '-t', 'chunk', out], { encoding: 'utf8' });
      assert.match(chunks, /type METADATA\|DUP/, 'new metadata chunks keep the DUP profile');
      assert.deepEqual(await withMount(out, snapshotOf, { readOnly: true }), before);
      // and everything, data too: the kernel's files still
      const all = join(dir, 'kernel-made-all.img');
      execFileSync(CLI, ['balance', img, '-o', all]);
      const ca = btrfsCheck(all, ['--check-data-csum']);
      assert.ok(ca.ok, ca.output);
      assert.deepEqual(await withMount(all, snapshotOf, { readOnly: true }), before);
      rmSync(all, { force: true });
    } finally {
      rmSync(img, { force: true });
      rmSync(out, { force: true });
      rmSync(join(dir, 'no.img'), { force: true });
    }
  });
});

describe('deleted subvolumes at balance time: dropped, or not yet by the cleaner (dropped first)', { skip }, () => {
  const base = ['mkfs nodesize=4K size=256M', 'quota enable', 'mkdir /d', 'create /d/f_{1..300}', 'subvol create /v', 'create /v/g_{1..700}',
    'write /v/g_7 0 40K 3', 'snapshot /v /s', 'write /s/g_9 0 8K 4', 'unlink /s/g_{20..60}', 'subvol create /w', 'create /w/h_{1..300}', 'commit'];
  for (const [name, del] of [['dropped', ['subvol delete /v', 'subvol delete /w']],
    ['not started', ['subvol delete /v nosync', 'subvol delete /w nosync']],
    ['half dropped', ['set drop_batch=3', 'subvol delete /v nosync', 'subvol delete /w nosync', 'commit', 'commit']]]) {
    test(`${name}: balance -m; checked with qgroups, the files of before, the kernel's rescan after its own balance gives ours`, async () => {
      const tag = name.replace(' ', '-');
      const script = join(dir, `dead-${tag}.txt`), before = join(dir, `dead-${tag}-before.img`), img = join(dir, `dead-${tag}.img`);
      try {
        // before: the same deletions, the cleaner run to the end (subvol sync), no balance
        writeFileSync(script, [...base, ...del, 'subvol sync'].join('\n') + '\n');
        execFileSync(CLI, ['run', script, '--image', before]);
        writeFileSync(script, [...base, ...del, 'balance -m'].join('\n') + '\n');
        execFileSync(CLI, ['run', script, '--image', img]);
        const c = btrfsCheck(img, ['--check-data-csum', '--qgroup-report']);
        assert.ok(c.ok, `${name}: ${c.output}`);
        assert.doesNotMatch(c.output, /are different|Rescan hasn't been/, `${name}: qgroups:\n${c.output}`);
        assert.deepEqual(await withMount(img, snapshotOf, { readOnly: true }), await withMount(before, snapshotOf, { readOnly: true }));
        const ours = execFileSync(CLI, ['qgroup', 'show', '--raw', img], { encoding: 'utf8' });
        const rescanned = await withMount(img, (mnt) => {
          kernelBalance(mnt, ['-m']);
          execFileSync('btrfs', ['quota', 'rescan', '-w', mnt], { stdio: 'ignore' });
          return execFileSync('btrfs', ['qgroup', 'show', '--raw', mnt], { encoding: 'utf8' });
        });
        assert.equal(rescanned, ours, `${name}: the kernel's rescan after its balance`);
        assert.ok(btrfsCheck(img, ['--check-data-csum']).ok, `${name}: after the kernel's balance`);
      } finally {
        for (const f of [script, before, img]) rmSync(f, { force: true });
      }
    });
  }
});
