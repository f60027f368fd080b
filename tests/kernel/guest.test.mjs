// One boot of an old kernel in a guest (scripts/guest/, docs/guest-kernels.md):
// Debian's 5.10 mounts an image our core wrote with a pending log of our 5.10
// directory logging mode (and so replays it), creates, writes and fsyncs N
// files, and is powered off while mounted. tracefs in the guest counts
// exactly N btrfs_sync_file; the image that comes back holds 5.10's log
// tree, which this machine's kernel and our core replay to the same tree,
// every file there with its data, and `btrfs check` passes.
// The same workload on this machine's kernel (--kernel host) counts only its
// own processes' events and gives a log replayed alike too.
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

const hostSkip = skipReason();

function guestSkip() {
  if (hostSkip) return hostSkip;
  if (spawnSync('qemu-system-x86_64', ['--version']).status !== 0) {
    const why = 'qemu-system-x86_64 is missing (npm test installs qemu-system-x86 through scripts/setup.mjs)';
    process.stderr.write(`\n*** GUEST KERNEL TEST SKIPPED: ${why} ***\n\n`);
    return why;
  }
  return false;
}

const skip = guestSkip();
const dir = scratchDir('guest');

/** Our image: a directory made and a file written in an earlier transaction, then a log of our 5.10 mode
 * (50 new names and one gone, the directory fsynced) left by a crash: the kernel's mount replays it. */
function startImage(name) {
  const scenario = join(dir, `${name}.txt`);
  writeFileSync(scenario, ['mkfs size=512M', 'set dir_logging=5.10', 'mkdir /d', 'create /d/old', 'write /d/old 0 8192 7',
    'create /d/gone', 'commit', 'create /d/new_{1..50}', 'unlink /d/gone', 'fsync /d', 'crash', ''].join('\n'));
  const start = join(dir, `${name}.img`);
  execFileSync(CLI, ['run', scenario, '--image', start]);
  return start;
}

const WORKLOAD = ['mount -t btrfs -o commit=600 "$IMG" "$MNT"', `blab cwf "$MNT/d" ${N} 4096`, 'crash', ''].join('\n');

/** N fsyncs counted exactly, no commit, a log of N files that this kernel and btrfslab replay alike. */
async function checkRun(t, r, name) {
  assert.equal(r.status, 0, `${name}: the workload failed:\n${r.stderr}\n${r.log ?? ''}`);
  assert.deepEqual(r.lost, { overrun: 0, dropped: 0 }, 'tracefs lost events: the counts are not exact');
  assert.equal(r.counts['btrfs:btrfs_sync_file'], N);
  // commit=600 and a crash: no transaction committed after the mount's (its replay of our log); the fsyncs logged
  assert.ok(r.counts['btrfs:btrfs_transaction_commit'] <= 2, `${r.counts['btrfs:btrfs_transaction_commit']} commits`);
  const log = await countImageLog(r.image);
  assert.ok(log.hasLog, `the image after has no log tree: ${name}'s fsyncs did not log`);
  const items = log.trees['5']?.items ?? {};
  // each new file of a directory made in an earlier transaction: its inode, its one reference (replay links
  // the name from it) and its one extent; no directory entries (measured on 5.10 and 6.18: N of each)
  for (const type of ['INODE_ITEM', 'INODE_REF', 'EXTENT_DATA']) {
    assert.equal(items[type] ?? 0, N, `${name}'s log holds ${items[type] ?? 0} ${type} items for the ${N} files fsynced`);
  }
  t.diagnostic(`${name}'s log: ${JSON.stringify(items)}; times ${JSON.stringify(r.times)}`);
  const tree = await replayBothWays(r.image, `${name}'s log`);
  const files = Object.keys(tree).filter((p) => /^\/d\/file_\d+$/.test(p));
  assert.equal(files.length, N, `${files.length} of the ${N} fsynced files after replay`);
  const sha = createHash('sha256').update(Buffer.alloc(4096, 'a')).digest('hex'); // what blab cwf writes
  for (const p of files) assert.deepEqual([tree[p].size, tree[p].sha], [4096, sha], `${p} after replay`);
  assert.equal(tree['/d/old']?.size, 8192, 'the file our core wrote is gone');
  // what the mount replayed from our log, since committed
  assert.equal(Object.keys(tree).filter((p) => /^\/d\/new_\d+$/.test(p)).length, 50, `${name} did not replay the 50 names our log holds`);
  assert.ok(!tree['/d/gone'], `${name} kept the name our log deletes`);
}

const EVENTS = ['btrfs:btrfs_sync_file', 'btrfs:btrfs_transaction_commit'];

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
    const r = await runWorkload({ kernel: KERNEL, workload: WORKLOAD, image: startImage('guest'), out: join(dir, 'out-guest'), progress: null, events: EVENTS });
    assert.match(r.kver, /^5\.10\./);
    await checkRun(t, r, KERNEL);
  });
});

describe('the same workload on this kernel (--kernel host)', { skip: hostSkip }, () => {
  test(`this kernel fsyncs ${N} files: the script's own ${N} btrfs_sync_file, its log replayed alike by us`, async (t) => {
    const r = await runWorkload({ kernel: 'host', workload: WORKLOAD, image: startImage('host'), out: join(dir, 'out-host'), progress: null, events: EVENTS });
    await checkRun(t, r, 'host');
  });
});
