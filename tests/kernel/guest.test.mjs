// One boot of an old kernel in a guest (scripts/guest/, docs/guest-kernels.md):
// Debian's 5.10 mounts an image our core wrote, creates, writes and fsyncs N
// files, and is powered off while mounted. tracefs in the guest counts
// exactly N btrfs_sync_file; the image that comes back holds 5.10's log
// tree, which this machine's kernel and our core replay to the same tree,
// every file there with its data, and `btrfs check` passes.
// The kernel package is fetched on first use (about 15 s from Debian's
// mirror, into the guest cache); one boot takes 20-40 s of both cores.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { cachedKernel, prepareKernel } from '../../scripts/guest/kernel.mjs';
import { runWorkload } from '../../scripts/guest/run.mjs';
import { CLI, replayBothWays, scratchDir, skipReason } from './lib.mjs';
import { countImageLog } from './seed001.mjs';

const KERNEL = '5.10';
const N = 200;

function guestSkip() {
  const k = skipReason();
  if (k) return k;
  if (spawnSync('qemu-system-x86_64', ['--version']).status !== 0) {
    const why = 'qemu-system-x86_64 is missing (npm test installs qemu-system-x86 through scripts/setup.mjs)';
    process.stderr.write(`\n*** GUEST KERNEL TEST SKIPPED: ${why} ***\n\n`);
    return why;
  }
  return false;
}

const skip = guestSkip();
const dir = scratchDir('guest');

describe(`a guest kernel (${KERNEL}) in QEMU`, { skip }, () => {
  test(`${KERNEL} fsyncs ${N} files on our image: exactly ${N} btrfs_sync_file, its log replayed alike here and by us`, async (t) => {
    if (!cachedKernel(KERNEL)) {
      t.diagnostic(`fetching Debian's ${KERNEL} kernel package on first use`);
      try {
        prepareKernel(KERNEL);
      } catch (e) {
        // no way to the mirror: say so loudly and skip; anything else (a bad package, our build) fails
        if (!/^(apt-get|apt-cache) /.test(e.message)) throw e;
        process.stderr.write(`\n*** GUEST KERNEL TEST SKIPPED: the ${KERNEL} package could not be fetched: ${e.message.split('\n').slice(0, 3).join(' ')} ***\n\n`);
        t.skip(`the ${KERNEL} package could not be fetched`);
        return;
      }
    }
    const scenario = join(dir, 'start.txt');
    writeFileSync(scenario, 'mkfs size=512M\nmkdir /d\ncreate /d/old\nwrite /d/old 0 8192 7\ncommit\n');
    const start = join(dir, 'start.img');
    execFileSync(CLI, ['run', scenario, '--image', start]);
    const workload = [
      'mount -t btrfs -o commit=600 "$IMG" "$MNT"',
      `blab cwf "$MNT/d" ${N} 4096`,
      'crash',
      '',
    ].join('\n');
    const r = await runWorkload({
      kernel: KERNEL, workload, image: start, out: join(dir, 'out'), progress: null,
      events: ['btrfs:btrfs_sync_file', 'btrfs:btrfs_transaction_commit'],
    });
    assert.equal(r.status, 0, `the workload failed in the guest:\n${r.stderr}\n${r.log}`);
    assert.match(r.kver, /^5\.10\./);
    assert.deepEqual(r.lost, { overrun: 0, dropped: 0 }, 'tracefs lost events: the counts are not exact');
    assert.equal(r.counts['btrfs:btrfs_sync_file'], N);
    // commit=600 and a crash: no transaction committed after the mount's own (if any); the fsyncs logged
    assert.ok(r.counts['btrfs:btrfs_transaction_commit'] <= 1, `${r.counts['btrfs:btrfs_transaction_commit']} commits`);
    const log = await countImageLog(r.image);
    assert.ok(log.hasLog, "the image after has no log tree: 5.10's fsyncs did not log");
    const items = log.trees['5']?.items ?? {};
    // each new file of a directory made in an earlier transaction: its inode, its one reference (replay links
    // the name from it) and its one extent; no directory entries (measured: 200 of each, one EXTENT_CSUM)
    for (const type of ['INODE_ITEM', 'INODE_REF', 'EXTENT_DATA']) {
      assert.equal(items[type] ?? 0, N, `5.10's log holds ${items[type] ?? 0} ${type} items for the ${N} files fsynced`);
    }
    t.diagnostic(`5.10's log: ${JSON.stringify(items)}; boot ${r.times.bootMs} ms, workload ${r.times.workloadEmulatorS} s emulator time`);
    const tree = await replayBothWays(r.image, `${KERNEL}'s log`);
    const files = Object.keys(tree).filter((p) => /^\/d\/file_\d+$/.test(p));
    assert.equal(files.length, N, `${files.length} of the ${N} fsynced files after replay`);
    const sha = createHash('sha256').update(Buffer.alloc(4096, 'a')).digest('hex'); // what blab cwf writes
    for (const p of files) assert.deepEqual([tree[p].size, tree[p].sha], [4096, sha], `${p} after replay`);
    assert.equal(tree['/d/old']?.size, 8192, 'the file our core wrote is gone');
  });
});
