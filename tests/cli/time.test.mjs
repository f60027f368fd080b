// Threads and time through the CLI: a timed run's metrics, the cost table,
// the same seed giving the same trace, and a crash right as the threads
// return replayed to what their fsyncs promised.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-time-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
function script(name, text) {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

test('a fio section: metrics count ordered extents, fsyncs logging one in flight, latencies and waits', () => {
  const s = script('fio.txt', 'mkfs size=512M\nset device=nvme\nfio jobs=4 size=1M bs=64K fsync=1 rw=write\n');
  const r = cli('run', s, '--metrics', '-');
  assert.equal(r.code, 0, r.err);
  const m = JSON.parse(r.out);
  assert.deepEqual(m.ordered, { added: 64, finished: 64, loggedInFlight: 60, fsyncsLoggingInFlight: 60 });
  assert.equal(m.fsyncWait, 'writeback');
  assert.equal(m.timed.device, 'nvme');
  assert.equal(m.timed.fsyncs, 64);
  assert.equal(m.timed.bytesWritten, 4 << 20);
  assert.ok(m.timed.throughputMiBs > 0 && m.timed.virtualNs > 0);
  assert.equal(m.timed.ops.write.n, 64);
  assert.ok(m.timed.ops.fsync.p99Ns >= m.timed.ops.fsync.p50Ns && m.timed.ops.fsync.maxNs >= m.timed.ops.fsync.p99Ns);
  assert.ok(m.timed.waitedNs.bio > 0, 'fsyncs wait for their bios');
  assert.ok(m.timed.bios.flush.n > 0 && m.timed.bios.superblock.n > 0);
  const o = JSON.parse(cli('run', script('fio-o.txt', 'set fsync_wait=ordered\nfio jobs=4 size=1M bs=64K fsync=1 rw=write\n'), '--metrics', '-').out);
  assert.equal(o.ordered.loggedInFlight, 0);
  assert.ok(o.timed.waitedNs['ordered extent'] > 0, 'before 5.10 fast fsyncs wait for ordered extents');
});

test('an fsync waits for its ordered extents one at a time, each woken by its own completion; none is logged twice', () => {
  // ordered: 16 random 4 KiB extents an fsync, completing on 8 workers; the fsync
  // sleeps on the last one (btrfs_wait_ordered_range walks down from the end) and
  // then on any still in flight, never woken by another's completion
  const o = cli('run', script('wait-oe.txt', 'mkfs size=512M\nset fsync_wait=ordered\nfio jobs=1 size=1M bs=4K fsync=16 rw=randwrite\n'),
    '--trace', '-', '--metrics', join(dir, 'wait-oe.json'));
  assert.equal(o.code, 0, o.err);
  const ev = o.out.trim().split('\n').map((l) => JSON.parse(l));
  const thread = ev.find((e) => e.kind === 'task_new' && e.taskKind === 'thread').task;
  const wakes = ev.filter((e) => e.kind === 'task_wake' && e.task === thread && e.cause === 'ordered extent').length;
  const fsyncs = JSON.parse(readFileSync(join(dir, 'wait-oe.json'), 'utf8')).timed.fsyncs;
  assert.equal(fsyncs, 16);
  assert.ok(wakes > 0 && wakes <= 2 * fsyncs, `${wakes} wakes for ${fsyncs} fsyncs of 16 ordered extents`);
  // writeback, many jobs: completions lag behind the fsyncs, yet an ordered extent
  // a log holds is not taken again (btrfs_get_ordered_extents_for_logging skips
  // BTRFS_ORDERED_LOGGED)
  const w = JSON.parse(cli('run', script('relog.txt', 'mkfs size=512M\nfio jobs=32 size=256K bs=4K fsync=16 rw=randwrite\n'), '--metrics', '-').out);
  // (blocks next to each other written back together make one extent)
  assert.ok(w.ordered.added > 32 * 48 && w.ordered.added <= 32 * 64, JSON.stringify(w.ordered));
  assert.ok(w.ordered.loggedInFlight > 0 && w.ordered.loggedInFlight <= w.ordered.added, JSON.stringify(w.ordered));
});

test('same seed, same trace; another seed, another interleaving', () => {
  const s = script('two.txt', 'create /a\ncreate /b\nthread A\nwrite /a 0 64K\nfsync /a\nend\nthread B\nwrite /b 0 64K\nfsync /b\nend\n');
  const t = (seed) => {
    const out = join(dir, `t${seed}.jsonl`);
    assert.equal(cli('run', s, '--trace', out, '--seed', String(seed)).code, 0);
    return readFileSync(out, 'utf8');
  };
  const a = t(3);
  assert.equal(a, t(3));
  assert.notEqual(a, t(4));
  assert.match(a, /"kind":"task_new","task":\d+,"taskKind":"thread"/);
  assert.match(a, /"kind":"task_wait","task":\d+,"cause":"bio"/);
});

test('a crash as the threads return: replay gives every fsynced file whole', () => {
  const s = script('crash.txt', 'mkfs size=256M\nset cost.finish_fs=3ms\nfio jobs=3 size=256K bs=64K fsync=1 rw=write\ncrash\n');
  const img = join(dir, 'crash.img');
  assert.equal(cli('run', s, '--image', img).code, 0);
  const ls = cli('ls', '--replay', '-l', img, '/');
  assert.equal(ls.code, 0, ls.err);
  for (let j = 0; j < 3; j++) assert.match(ls.out, new RegExp(`262144 .*writers\\.${j}\\.0`));
  const c = cli('crashes', s, '--all');
  assert.equal(c.code, 0, c.out + c.err);
  assert.match(c.out, /broken: 0/);
});

test('a write over pages an ordered extent still covers waits for it to complete; every crash point keeps the fsyncs after it', () => {
  // completions slowed (3 ms of checksums each), so the fast fsyncs log ordered extents in flight; the write at line 15
  // lands in the 64K extent line 13 wrote, still in flight: it waits (the kernel's lock_and_cleanup_extent_if_need),
  // as the write at line 8 does. Before, it made a second ordered extent over the first, and the fsync at line 16
  // logged both from offset 128K: the log's item of the older one went, and a crash in the final commit replayed
  // the file with 136K-192K lost (5 of 5 promises broken).
  const s = script('over-ordered.txt', 'mkfs size=256M\ncreate /a\ncommit\nset cost.finish_csum=3ms\nthread A\nwrite /a 0 64K\nfsync /a\n' +
    'write /a 0 4K\nfsync /a\nwrite /a 8K 4K\nwrite /a 60K 8K\nfsync /a\nwrite /a 128K 64K\nfsync /a\nwrite /a 130K 4K\nfsync /a\nend\n');
  const trace = join(dir, 'over-ordered.jsonl');
  assert.equal(cli('run', s, '--trace', trace).code, 0);
  const ev = readFileSync(trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  for (const line of [8, 15]) {
    const at = ev.findIndex((e) => e.kind === 'task_op' && e.line === line);
    const next = ev.slice(at + 1).find((e) => e.kind === 'task_wait' || e.kind === 'task_op');
    assert.equal(next?.kind === 'task_wait' && next.cause, 'ordered extent', `line ${line}: ${JSON.stringify(next)}`);
  }
  const c = cli('crashes', s, '--all');
  assert.equal(c.code, 0, c.out + c.err);
  assert.match(c.out, /fsync promises made: 5; broken: 0/);
});

test('costs: every row with its source; --json', () => {
  const r = cli('costs');
  assert.equal(r.code, 0);
  assert.match(r.out, /finish_csum\s+\d+\s+ordered extent/);
  assert.match(r.out, /^loop\s+2\s/m);
  const j = JSON.parse(cli('costs', '--json').out);
  assert.ok(j.costs.length > 15 && j.costs.every((c) => c.source && c.key && Number.isInteger(c.ns)));
  assert.deepEqual(j.devices.map((d) => d.name), ['nvme', 'ssd', 'hdd', 'loop']);
  assert.equal(cli('costs', '--bogus').code, 2);
});

test('a section may last an hour of virtual time; past it, an error names who waits for what', () => {
  const s = script('long.txt', 'create /a\nA: sleep 40m\nA: sleep 40m\nB: write /a 0 4K\n');
  const r = cli('run', s);
  assert.notEqual(r.code, 0);
  assert.match(r.err, /long\.txt:\d+: .*has not ended after an hour of virtual time \(A waits for sleep\)/);
  // over the dirty limit the writer throttles until the flusher writes back
  const t = JSON.parse(cli('run', script('dirty.txt', 'create /a\nset dirty=16K\nA: write /a 0 1M\nA: write /a 1M 1M\n'), '--metrics', '-').out);
  assert.ok(t.timed.waitedNs['dirty throttle'] > 0);
  assert.equal(t.timed.dirty.limitBytes, 16384);
  assert.ok(t.timed.dirty.peakBytes > 16384, `peak ${t.timed.dirty.peakBytes}`);
});

test('log batching on a rotational device (loop): schedule_timeout(1) ends on a tick, syncing holds the log mutex', () => {
  // The kernel on this machine's loop device (tests/kernel/seed003-measure.mjs,
  // and a user-side timing of each fsync): 2 jobs never share a log commit
  // (each finds the other still in writeback, and syncs alone, without the
  // batching sleep); 4 jobs share one every ~16 ms (4 jiffies at HZ=250: a
  // sleep to the tick after next, then a whole 2 jiffies more because a
  // task that synced alone joined meanwhile), a lone sync between two.
  const run = (jobs) => {
    const s = script(`loop${jobs}.txt`, `mkfs size=1G\nset device=loop\nfio jobs=${jobs} size=4M bs=64K fsync=1 rw=write\n`);
    const r = cli('run', s, '--metrics', '-', '--trace', join(dir, `loop${jobs}.jsonl`));
    assert.equal(r.code, 0, r.err);
    return JSON.parse(r.out).timed;
  };
  const two = run(2);
  // (the two start together: their first commits are shared, then they take turns, with a shared one now and then:
  // the kernel's two fsyncers shared 2 of 3,600 commits, docs/seed000-locks.md)
  assert.ok(two.logSyncs >= two.fsyncs - 3, `2 jobs: ${two.logSyncs} log syncs for ${two.fsyncs} fsyncs`);
  assert.ok(two.ops.fsync.p50Ns < 4_000_000, `2 jobs sleep no jiffy (p50 ${two.ops.fsync.p50Ns} ns)`);
  const four = run(4);
  assert.ok(four.logSyncs > four.fsyncs / 4 && four.logSyncs < four.fsyncs / 2, `4 jobs: ${four.logSyncs} log syncs for ${four.fsyncs} fsyncs`);
  assert.ok(four.ops.fsync.p50Ns > 12_000_000 && four.ops.fsync.p50Ns < 20_000_000, `4 jobs: fsync p50 ${four.ops.fsync.p50Ns} ns`);
  assert.ok(four.waitedNs['log mutex'] > 0, 'fsyncs wait for the log mutex');
  // every batching sleep ends on a jiffy boundary (4 ms), 1 to 2 jiffies after it began
  const sleeps = readFileSync(join(dir, 'loop4.jsonl'), 'utf8').split('\n').filter((l) => l.includes('"task_wake"') && l.includes('"sleep"')).map((l) => JSON.parse(l));
  const batching = sleeps.filter((e) => BigInt(e.waitNs) < 8_000_001n);
  assert.ok(batching.length > 10);
  for (const e of batching) {
    assert.equal(BigInt(e.atNs) % 4_000_000n, 0n, `a sleep ends at ${e.atNs}`);
    assert.ok(BigInt(e.waitNs) >= 4_000_000n, `slept ${e.waitNs}`);
  }
});

test("the loop profile's wakeups: its worker woken for a request on an idle device; a log commit's waiters after the committer", () => {
  // (dirs: the directory each fsyncer creates in: one, as in the kernel run, or one each, where their creates do not
  // take turns on its inode lock)
  const lines = (extra, dirs = ['/d', '/d']) => ['mkfs size=1G', 'set device=loop', 'set tree_locks=path', ...extra, 'mkdir /d', 'mkdir /e', 'commit',
    ...[0, 1].flatMap((f) => [`thread F${f}`, ...Array.from({ length: 300 }, (_, k) => [`create ${dirs[f]}/f${f}.${k}`, `write ${dirs[f]}/f${f}.${k} 0 4096 ${k + 1}`,
      `setxattr ${dirs[f]}/f${f}.${k} user.x v`, `fsync ${dirs[f]}/f${f}.${k}`]).flat(), 'end'])].join('\n') + '\n';
  const run = (name, extra, dirs) => {
    const r = cli('run', script(`wake-${name}.txt`, lines(extra, dirs)), '--metrics', '-', '--trace', join(dir, `wake-${name}.jsonl`));
    assert.equal(r.code, 0, r.err);
    return JSON.parse(r.out).timed;
  };
  // two fsyncers, 300 loops each as the kernel run they are set against: with both wakeups they take turns, a log
  // commit each (the kernel here: all but 2 of 3,600), and a log sync seldom sleeps to batch (the waiter, woken onto
  // the committer's CPU, closes its log transaction before the committer is back with its next file)
  const turns = run('loop', []);
  assert.ok(turns.logSyncs >= turns.fsyncs * 0.97, `${turns.logSyncs} log syncs for ${turns.fsyncs} fsyncs`);
  assert.ok(turns.ops.fsync.p50Ns < 4_000_000 && turns.ops.fsync.p99Ns < 4_000_000, `fsync p50 ${turns.ops.fsync.p50Ns}, p99 ${turns.ops.fsync.p99Ns} ns`);
  const sleeps = readFileSync(join(dir, 'wake-loop.jsonl'), 'utf8').split('\n').filter((l) => l.includes('"cause":"sleep"') && l.includes('"task_wait"')).length;
  assert.ok(sleeps <= turns.fsyncs * 0.02, `${sleeps} batching sleeps in ${turns.fsyncs} fsyncs`);
  // without them the two stay in step: every log commit shared, its committer asleep a jiffy or two (each in a directory
  // of its own: creating in one, they would take turns on its lock and fall out of step)
  const step = run('none', ['set device.idle_wake=0', 'set device.log_wake=0'], ['/d', '/e']);
  assert.equal(step.logSyncs, step.fsyncs / 2);
  assert.ok(step.ops.fsync.p50Ns > 4_000_000, `fsync p50 ${step.ops.fsync.p50Ns} ns`);
  // a data write alone on the idle device waits for the worker: 30 us (+-30%), then 5 us and its transfer
  const bios = readFileSync(join(dir, 'wake-loop.jsonl'), 'utf8').split('\n').filter((l) => l.includes('"bio_done"')).map((l) => JSON.parse(l));
  const first = bios.find((b) => b.op === 'data');
  assert.ok(Number(first.serviceNs) >= 30_000 * 0.7 + 3_500, `first data write ${first.serviceNs} ns`);
  const noWake = readFileSync(join(dir, 'wake-none.jsonl'), 'utf8').split('\n').filter((l) => l.includes('"bio_done"')).map((l) => JSON.parse(l));
  assert.ok(Number(noWake.find((b) => b.op === 'data').serviceNs) < 15_000);
});

test("the loop profile's slow flushes: flush_tail_ppm in a million take flush_tail; the other profiles have none", () => {
  const flushes = (name, device, extra) => {
    const lines = ['mkfs size=512M', `set device=${device}`, ...extra, 'thread A',
      ...Array.from({ length: 400 }, (_, k) => [`create /f${k}`, `write /f${k} 0 4096 ${k + 1}`, `fsync /f${k}`]).flat(), 'end'];
    const r = cli('run', script(`tail-${name}.txt`, lines.join('\n') + '\n'), '--trace', '-');
    assert.equal(r.code, 0, r.err);
    return r.out.split('\n').filter((l) => l.includes('"bio_done"') && l.includes('"op":"flush"')).map((l) => Number(JSON.parse(l).serviceNs));
  };
  // every flush slow: 5 ms, +-30% (the profile's jitter)
  const all = flushes('all', 'loop', ['set device.flush_tail_ppm=1000000', 'set device.flush_tail=5ms']);
  assert.ok(all.length >= 400 && all.every((ns) => ns >= 3_500_000 && ns <= 6_500_000), `${all.length} flushes, ${Math.min(...all)}..${Math.max(...all)} ns`);
  // none: all within the flush row's jitter (300 us on the loop profile; a flush may also wait for writes before it)
  const none = flushes('none', 'loop', ['set device.flush_tail_ppm=0']);
  assert.ok(none.every((ns) => ns < 1_000_000), `slowest ${Math.max(...none)} ns`);
  // one in ten: drawn from the run's seeded stream, about 40 of 400
  const tenth = flushes('tenth', 'loop', ['set device.flush_tail_ppm=100000']);
  const slow = tenth.filter((ns) => ns >= 1_190_000).length;
  assert.ok(slow >= 20 && slow <= 70, `${slow} slow flushes of ${tenth.length}`);
  // the loop profile's own (3,300 in a million taking 1.7 ms, measured here), none on the others
  const devices = JSON.parse(cli('costs', '--json').out).devices;
  assert.deepEqual(devices.map((d) => [d.name, d.flushTailPpm, d.flushTailNs]), [['nvme', 0, 0], ['ssd', 0, 0], ['hdd', 0, 0], ['loop', 3300, 1700000]]);
  assert.ok(flushes('ssd', 'ssd', []).every((ns) => ns < 3_000_000));
  const bad = cli('run', script('tail-bad.txt', 'mkfs\nset device=loop\nset device.flush_tail_ppm=2000000\n'));
  assert.equal(bad.code, 1);
  assert.match(bad.err, /:3: .*device\.flush_tail_ppm is a count in a million, 0 to 1000000/);
});

test('set tree_locks=path: each tree block its own lock, taken top-down as btrfs_search_slot does', () => {
  const events = (locks) => {
    const s = script(`locks-${locks}.txt`, `mkfs size=512M\nset tree_locks=${locks}\nfio jobs=4 size=2M bs=4K fsync=16 rw=randwrite\n`);
    const r = cli('run', s, '--trace', '-', '--image', join(dir, `locks-${locks}.img`));
    assert.equal(r.code, 0, r.err);
    const c = cli('check', join(dir, `locks-${locks}.img`));
    assert.equal(c.code, 0, c.out + c.err);
    // tree block locks (level -1: an inode's delayed node mutex, not a tree block)
    const ev = r.out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    // the blocks a change COWed (old and new) or split off: locked for that, not on a search's way down
    for (const e of ev) if (e.kind === 'cow' || e.kind === 'split') changed.add(e.from ?? e.left).add(e.to ?? e.right);
    return ev.filter((e) => e.kind.startsWith('lock_') && e.level >= 0);
  };
  const changed = new Set();
  const tree = events('tree');
  assert.ok(tree.length > 0 && tree.every((e) => e.bytenr === '0'), 'tree: one lock a tree, no block');
  const path = events('path');
  const acq = path.filter((e) => e.kind === 'lock_acquire');
  const leaves = new Set(acq.filter((e) => e.tree === '5' && e.level === 0).map((e) => e.bytenr));
  assert.ok(leaves.size >= 2, `fs tree leaves locked: ${leaves.size}`);
  assert.ok(acq.some((e) => e.level >= 1), 'nodes above the leaves are locked on the way down');
  assert.ok(acq.some((e) => e.tree === '7'), 'the csum tree is locked by block too');
  // lock coupling: a task takes a child's lock while it holds the parent's, so
  // each of its acquisitions at level L>0 is followed by one at level L-1
  // before that parent lock is released; but for a write search's probe: the
  // root read-locked and let go, then write-locked by the same task (as the
  // kernel's trace shows before every write-locked search)
  const held = new Map();
  const mine = (e) => path.filter((x) => x.task === e.task);
  let probes = 0;
  for (const e of path) {
    const k = `${e.task}:${e.bytenr}`;
    if (e.kind === 'lock_acquire') held.set(k, e);
    if (e.kind === 'lock_release') {
      const a = held.get(k);
      assert.ok(a, `a release without an acquire: ${JSON.stringify(e)}`);
      const seq = mine(e), next = seq[seq.indexOf(e) + 1];
      const probe = a.mode === 'read' && seq.indexOf(e) === seq.indexOf(a) + 1 && next && next.bytenr === e.bytenr &&
        next.mode === 'write' && (next.kind === 'lock_acquire' || next.kind === 'lock_wait');
      if (probe) probes++;
      if (a.level > 0 && !probe && !changed.has(e.bytenr)) {
        const between = path.slice(path.indexOf(a) + 1, path.indexOf(e));
        assert.ok(between.some((x) => x.task === e.task && (x.kind === 'lock_acquire' || x.kind === 'lock_wait') && x.level === a.level - 1),
          `task ${e.task} released level ${a.level} block ${e.bytenr} before taking or queueing for a child`);
      }
      held.delete(k);
    }
  }
  assert.equal(held.size, 0, 'every lock is released');
  // every write-locked root above a leaf was probed with a read lock first
  const rootWrites = acq.filter((e) => e.mode === 'write' && e.level >= 1 && e.tree === '5');
  assert.ok(probes > 0 && probes >= rootWrites.length, `probes ${probes}, write-locked roots ${rootWrites.length}`);
  // uncontended, an acquisition reports the lock's own cost (cost.lock_acquire) as its wait, as the kernel's diff_ns does,
  // spread as this kernel's are: the median cost.lock_acquire (340 ns, the default nvme profile), p99 9.2 times it
  assert.ok(acq.every((e) => BigInt(e.waitNs) > 0n), 'every acquisition takes some time');
  const waited = new Set(), all = [];
  for (const e of path) {
    const k = `${e.task}:${e.bytenr}`;
    if (e.kind === 'lock_wait') waited.add(k);
    else if (e.kind === 'lock_acquire' && !waited.delete(k)) all.push(Number(e.waitNs)); // (not queued behind a holder)
  }
  all.sort((a, b) => a - b);
  const q = (p) => all[Math.floor(p * all.length)];
  assert.ok(all.length > 1000 && q(0.5) >= 320 && q(0.5) <= 360 && q(0.99) >= 340 * 5, `${all.length} locks: p50 ${q(0.5)}, p99 ${q(0.99)}`);
});

test('set tree_locks=path: each command makes the searches the kernel makes for it (docs/seed000-locks.md)', () => {
  const lines = ['mkfs size=512M', 'set device=loop', 'set tree_locks=path', 'mkdir /d'];
  for (let k = 0; k < 300; k++) lines.push(`create /d/p${k}`); // a directory of files: the fs tree two levels high
  // (a first create after the commit COWs the leaves it changes: see the next test)
  lines.push('commit', 'thread A', 'create /d/w', 'create /d/x', 'write /d/x 0 4096 1', 'setxattr /d/x user.x v', 'end');
  const r = cli('run', script('searches.txt', lines.join('\n') + '\n'), '--trace', '-');
  assert.equal(r.code, 0, r.err);
  const ev = r.out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  const thread = ev.find((e) => e.kind === 'task_new' && e.taskKind === 'thread').task;
  const per = {};
  let op = null, prev = null;
  for (const e of ev) {
    if (e.task !== thread) continue;
    if (e.kind === 'task_op') op = e.op === 'namespace' ? (per.create ? 'setxattr' : per.warm ? 'create' : 'warm') : e.op;
    if (e.kind === 'task_op_end') op = null;
    if (op && e.kind === 'lock_acquire') {
      const c = (per[op] ??= { leafRead: 0, leafWrite: 0, rootRead: 0, rootWrite: 0, mutex: 0, ilock: [], waitNs: [], replayed: 0 });
      if (e.level === -1) c.mutex++;
      else if (e.level === -2) c.ilock.push(e.bytenr);
      // a search's leaf comes right after its root (level 1 here); a block COWed, split or pushed into under the leaf
      // comes after the leaf (btrfs_lock_replay)
      else if (e.level === 0 && !(prev?.level === 1 && prev.mode === e.mode)) c.replayed++;
      else c[`${e.level === 0 ? 'leaf' : 'root'}${e.mode === 'read' ? 'Read' : 'Write'}`]++;
      if (e.level >= 0) c.waitNs.push(Number(e.waitNs));
      prev = e;
    }
  }
  // a create: its name looked up twice, read-locked; the inode and the name inserted, write-locked, each
  // write-locked search probing the root with a read lock first
  // write-locked search probing the root with a read lock first; all of it under its directory's inode lock
  assert.deepEqual({ ...per.create, waitNs: undefined, ilock: per.create.ilock.length, replayed: undefined }, { leafRead: 2, leafWrite: 2, rootRead: 4, rootWrite: 2, mutex: 0, ilock: 1, waitNs: undefined, replayed: undefined });
  // a write: no tree lock, its inode update into the delayed node, under that node's mutex; its file's inode lock
  assert.equal(per.write?.leafWrite ?? 0, 0);
  assert.equal(per.write?.mutex, 1);
  assert.equal(per.write.ilock.length, 1);
  // a setxattr: one write-locked search, under its file's inode lock (the one the write took)
  assert.deepEqual({ ...per.setxattr, waitNs: undefined, ilock: undefined, replayed: undefined }, { leafRead: 0, leafWrite: 1, rootRead: 1, rootWrite: 1, mutex: 0, ilock: undefined, waitNs: undefined, replayed: undefined });
  assert.deepEqual(per.setxattr.ilock, per.write.ilock);
  assert.notDeepEqual(per.create.ilock, per.write.ilock, 'the create locked the directory, the write the file');
  // uncontended, each lock reports its acquisition's own time: cost.lock_acquire on the loop profile (340 ns x 25%) as
  // the median, spread as this kernel's (0.92 to 66 times the median; p99 9.2 times)
  assert.ok(per.create.waitNs.every((w) => w >= 78 && w <= 5610), JSON.stringify(per.create.waitNs));
});

test("an inode's lock: namespace commands in one directory take turns on it, in two directories they do not; a rename locks both directories, lower inode first", () => {
  const run = (name, dirs, extra = []) => {
    const l = ['mkfs size=512M', 'set device=loop', 'set tree_locks=path', 'mkdir /d', 'mkdir /e', 'commit'];
    for (const [i, d] of dirs.entries()) {
      l.push(`thread T${i}`);
      for (let k = 0; k < 50; k++) l.push(`create ${d}/t${i}.${k}`);
      l.push('end');
    }
    l.push(...extra);
    const r = cli('run', script(`ilock-${name}.txt`, l.join('\n') + '\n'), '--metrics', '-', '--trace', join(dir, `ilock-${name}.jsonl`));
    assert.equal(r.code, 0, r.err);
    const ev = readFileSync(join(dir, `ilock-${name}.jsonl`), 'utf8').split('\n').filter(Boolean).map((x) => JSON.parse(x));
    return { m: JSON.parse(r.out).timed, ev };
  };
  const one = run('one', ['/d', '/d']), two = run('two', ['/d', '/e']);
  const waits = (ev) => ev.filter((e) => e.kind === 'lock_wait' && e.level === -2);
  // in one directory: each create waits for the other's, the cause named
  assert.ok(waits(one.ev).length >= 25, `${waits(one.ev).length} waits for the directory's lock`);
  assert.ok(one.m.waitedNs['inode lock'] > 0, JSON.stringify(one.m.waitedNs));
  assert.equal(new Set(waits(one.ev).map((e) => e.bytenr)).size, 1, 'one lock: the directory');
  // in two: none, and the creates take less time
  assert.equal(waits(two.ev).length, 0);
  assert.ok(two.m.ops.namespace.p50Ns < one.m.ops.namespace.p50Ns, `${two.m.ops.namespace.p50Ns} vs ${one.m.ops.namespace.p50Ns} ns`);
  // a rename from /e to /d: both directories (the lower inode number first), then the inode it renames
  const ren = run('rename', [], ['create /e/x', 'commit', 'thread R', 'rename /e/x /d/y', 'end']);
  const r = ren.ev.find((e) => e.kind === 'task_new' && e.taskKind === 'thread').task;
  const got = ren.ev.filter((e) => e.kind === 'lock_acquire' && e.level === -2 && e.task === r).map((e) => BigInt(e.bytenr));
  assert.equal(got.length, 3, JSON.stringify(got.map(String)));
  assert.ok(got[0] < got[1] && got[2] > got[1], `locked in order ${got.join(', ')}: /d, /e, then the file`);
  // a command that names its own directory takes that lock once, and fails for what it is
  const self = cli('run', script('ilock-self.txt', 'mkfs size=256M\nset tree_locks=path\nmkdir /d\ncommit\nthread A\nlink /d /d/x\nend\n'));
  assert.equal(self.code, 1);
  assert.match(self.err, /:6: link: EISDIR/);
  assert.doesNotMatch(self.err, /EDEADLK/);
  // each taken is let go by the command's end
  for (const x of [one, two, ren]) {
    const held = new Map();
    for (const e of x.ev.filter((e) => e.level === -2 && (e.kind === 'lock_acquire' || e.kind === 'lock_release')))
      held.set(`${e.task}:${e.bytenr}`, (held.get(`${e.task}:${e.bytenr}`) ?? 0) + (e.kind === 'lock_acquire' ? 1 : -1));
    assert.ok([...held.values()].every((v) => v === 0));
  }
});

test("set tree_locks=path: a leaf is held for what its insert moves aside (leaf_shift_kib), and an fsync's search for the leaf it clones (leaf_clone)", () => {
  // one thread: 400 new names in one directory, each fsynced
  const l = ['mkfs size=512M', 'set device=loop', 'set tree_locks=path', 'mkdir /d', 'commit', 'thread A'];
  for (let k = 0; k < 400; k++) l.push(`create /d/n${k}`, `fsync /d/n${k}`);
  l.push('end');
  const holds = (name, extra) => {
    const text = l.join('\n').replace('commit', ['commit', ...extra].join('\n')) + '\n';
    const r = cli('run', script(`shift-${name}.txt`, text), '--trace', '-');
    assert.equal(r.code, 0, r.err);
    const ev = r.out.split('\n').filter((x) => x.startsWith('{')).map((x) => JSON.parse(x));
    const thread = ev.find((e) => e.kind === 'task_new' && e.taskKind === 'thread').task;
    const out = { name: [], fsyncRead: [] }, open = new Map();
    let op = null, writes = 0, reads = 0, prev = null;
    for (const e of ev) {
      if (e.task !== thread) continue;
      if (e.kind === 'task_op') { op = e.op; writes = reads = 0; }
      // a search's leaf: locked right after its root (level 1 here), where a block the change COWed, split or
      // pushed into is locked under the leaf
      if (e.kind === 'lock_acquire' && e.level === 0 && e.tree === '5' && prev?.level === 1 && prev.mode === e.mode) open.set(e.bytenr + e.mode, Number(e.atNs));
      if (e.kind === 'lock_acquire') prev = e;
      if (e.kind === 'lock_release' && e.level === 0 && e.tree === '5' && open.has(e.bytenr + e.mode)) {
        const ns = Number(e.atNs) - open.get(e.bytenr + e.mode);
        open.delete(e.bytenr + e.mode);
        // a create's second write-locked search: its name's leaf; an fsync's first read-locked fs leaf: the one it clones
        if (op === 'namespace' && e.mode === 'write' && ++writes === 2) out.name.push(ns);
        if (op === 'fsync' && e.mode === 'read' && ++reads === 1) out.fsyncRead.push(ns);
      }
    }
    return out;
  };
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  // p90 - p10 (a split or COW under the same hold, 5.5 us, falls outside)
  const spread = (xs) => { const v = [...xs].sort((a, b) => a - b); return v[Math.floor(v.length * 0.9)] - v[Math.floor(v.length * 0.1)]; };
  const base = holds('none', ['set cost.leaf_shift_kib=0', 'set cost.leaf_clone=0']), on = holds('on', []);
  // (all but the first creates, while the fs tree is one leaf high: no root above their leaf)
  assert.ok(base.name.length > 300 && on.name.length === base.name.length, `${base.name.length} names`);
  // without the row a name's leaf is held the same time whatever its place (the spread of its locks' acquisitions aside)
  assert.ok(spread(base.name) < 500, `spread ${spread(base.name)} ns`);
  // with it (1,100 ns a KiB, 25% on the loop profile): by where the name lands, up to a few microseconds
  assert.ok(spread(on.name) > 1500, `spread ${spread(on.name)} ns`);
  assert.ok(med(on.name) > med(base.name) + 300, `${med(on.name)} vs ${med(base.name)} ns`);
  // the clone: 10 us a leaf, 2.5 us on the loop profile, on the fsync's first read-locked search
  assert.ok(Math.abs(med(on.fsyncRead) - med(base.fsyncRead) - 2500) < 300, `${med(on.fsyncRead)} vs ${med(base.fsyncRead)} ns`);
});

test('set tree_locks=path: a COWed block is locked, then its copy, before the old one goes; log blocks are locked to be written out', () => {
  const lines = ['mkfs size=512M', 'set device=loop', 'set tree_locks=path', 'mkdir /d'];
  for (let k = 0; k < 300; k++) lines.push(`create /d/p${k}`);
  // the second fsync COWs the log blocks the first one's log sync wrote
  lines.push('commit', 'thread A', 'create /d/x', 'write /d/x 0 4096 1', 'fsync /d/x', 'create /d/y', 'write /d/y 0 4096 2', 'fsync /d/y', 'end');
  const r = cli('run', script('cowlocks.txt', lines.join('\n') + '\n'), '--trace', '-');
  assert.equal(r.code, 0, r.err);
  const ev = r.out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  const thread = ev.find((e) => e.kind === 'task_new' && e.taskKind === 'thread').task;
  const locks = ev.filter((e) => e.task === thread && (e.kind === 'lock_acquire' || e.kind === 'lock_release') && e.level >= 0);
  const is = (kind, bytenr) => (e) => e.kind === kind && e.bytenr === bytenr && e.mode === 'write';
  let checked = { fs: 0, log: 0 };
  const start = ev.find((e) => e.kind === 'task_op' && e.task === thread).seq;
  for (const c of ev.filter((e) => e.seq > start && e.kind === 'cow' && (e.tree === '5' || e.tree === '18446744073709551610'))) {
    const newIn = locks.findIndex(is('lock_acquire', c.to));
    const oldIn = locks.slice(0, newIn).findLastIndex(is('lock_acquire', c.from));
    const after = (kind, bytenr) => { const k = locks.slice(newIn).findIndex(is(kind, bytenr)); return k < 0 ? -1 : newIn + k; };
    const [oldOut, newOut] = [after('lock_release', c.from), after('lock_release', c.to)];
    // the old block write-locked (by the search, or for the COW), the copy locked while it is held, the old let go, then the copy
    assert.ok(oldIn >= 0 && oldIn < newIn && newIn < oldOut && oldOut < newOut, `${JSON.stringify(c)}: ${[oldIn, newIn, oldOut, newOut]}`);
    // the old block held for the COW's time (cost.cow on the loop profile: 22 us x 25%, each CPU span +-30%: the profile's jitter)
    const held = Number(locks[oldOut].atNs) - Number(locks[oldIn].atNs);
    assert.ok(held >= 5500 * 0.7, `old block held ${held} ns`);
    checked[c.tree === '5' ? 'fs' : 'log']++;
  }
  assert.ok(checked.fs >= 2 && checked.log >= 2, JSON.stringify(checked));
  // the log sync write-locks each log block it writes, 170 ns each (+-30%)
  const written = ev.filter((e) => e.seq > start && e.kind === 'block_write' && e.tree === '18446744073709551610');
  assert.ok(written.length >= 4);
  for (const { bytenr: b, seq } of written) {
    // (the log sync writes its blocks, then their locks are taken in that order, as the time passes; a
    // block the sync COWed first is locked for that too)
    const i = locks.findIndex((e, k) => e.seq > seq && e.kind === 'lock_acquire' && e.bytenr === b && e.mode === 'write' &&
      locks[k + 1]?.kind === 'lock_release' && locks[k + 1].bytenr === b);
    const held = Number(locks[i + 1]?.atNs) - Number(locks[i]?.atNs);
    assert.ok(i >= 0 && held >= 119 && held <= 221, `written block ${b}: held ${held} ns`);
  }
  // a write-locked search's probe holds the root's read lock 80 ns (cost.lock_probe x 25%, +-30%)
  const probes = locks.filter((e, k) => e.kind === 'lock_acquire' && e.mode === 'read' && e.level >= 1 && locks[k + 1]?.kind === 'lock_release' &&
    locks[k + 1].bytenr === e.bytenr && locks[k + 2]?.mode === 'write' && locks[k + 2].bytenr === e.bytenr);
  const probeHolds = probes.map((e) => Number(locks[locks.indexOf(e) + 1].atNs) - Number(e.atNs));
  assert.ok(probes.length >= 3 && probeHolds.every((h) => h >= 56 && h <= 104), JSON.stringify(probeHolds));
});

test("set tree_locks=path: a push write-locks the neighbour for the bytes it moves (leaf_shift_kib); a COWed node's copy is held while its child is COWed", () => {
  const l = ['mkfs size=512M', 'set device=loop', 'set tree_locks=path', 'mkdir /d', 'commit', 'thread A'];
  for (let k = 0; k < 400; k++) l.push(`create /d/n${k}`, `fsync /d/n${k}`);
  l.push('end');
  const r = cli('run', script('push.txt', l.join('\n') + '\n'), '--trace', '-');
  assert.equal(r.code, 0, r.err);
  const ev = r.out.split('\n').filter((x) => x.startsWith('{')).map((x) => JSON.parse(x));
  const thread = ev.find((e) => e.kind === 'task_new' && e.taskKind === 'thread').task;
  const locks = ev.filter((e) => e.task === thread && (e.kind === 'lock_acquire' || e.kind === 'lock_release') && e.level >= 0);
  const start = ev.find((e) => e.kind === 'task_op' && e.task === thread).seq;
  // each push of a leaf: its neighbour write-locked after it, held for what moved (275 ns a KiB on the loop profile)
  const pushes = ev.filter((e) => e.seq > start && e.kind === 'push' && e.level === 0 && (e.tree === '5' || e.tree === '18446744073709551610'));
  assert.ok(pushes.length >= 20, `${pushes.length} pushes`);
  let held = 0;
  for (const p of pushes) {
    const i = locks.findIndex((e) => e.seq > p.seq && e.kind === 'lock_acquire' && e.bytenr === p.to && e.mode === 'write');
    const j = locks.findIndex((e, k) => k > i && e.kind === 'lock_release' && e.bytenr === p.to && e.mode === 'write');
    if (i < 0 || j < 0) continue; // (a neighbour another task held then is passed over)
    const ns = Number(locks[j].atNs) - Number(locks[i].atNs);
    // (at most both leaves: 32 KiB at 16 KiB nodes, each CPU span +-30%)
    assert.ok(ns >= 275 * 0.7 && ns <= 32 * 275 * 1.3 + 1000, `push into ${p.to}: held ${ns} ns`);
    held++;
  }
  assert.ok(held >= pushes.length * 0.9, `${held} of ${pushes.length} neighbours locked`);
  // the log tree's first COW in a log transaction: its root (level 1), then its leaf; the root's copy is let go only
  // after the leaf's copy is locked
  let chains = 0;
  const cows = ev.filter((e) => e.seq > start && e.kind === 'cow' && e.tree === '18446744073709551610');
  for (let k = 0; k + 1 < cows.length; k++) {
    const [up, down] = cows.slice(k, k + 2);
    if (up.level !== 1 || down.level !== 0) continue;
    const upOut = locks.findIndex((e) => e.seq > up.seq && e.kind === 'lock_release' && e.bytenr === up.to && e.mode === 'write');
    const downIn = locks.findIndex((e) => e.seq > up.seq && e.kind === 'lock_acquire' && e.bytenr === down.to && e.mode === 'write');
    assert.ok(downIn >= 0 && downIn < upOut, `root copy ${up.to} let go at ${upOut}, leaf copy ${down.to} locked at ${downIn}`);
    chains++;
  }
  assert.ok(chains >= 10, `${chains} root-then-leaf COWs`);
});

test('seed 000: log_copy=clone allocates under an fs leaf read lock, prealloc before any lock; memory_pressure stalls allocations', () => {
  const run = (copy, pressure) => {
    const lines = ['mkfs size=512M', 'set device=loop', 'set tree_locks=path', `set log_copy=${copy}`, `set memory_pressure=${pressure}`, 'mkdir /d', 'commit'];
    for (const f of [0, 1]) {
      lines.push(`thread F${f}`);
      for (let k = 0; k < 40; k++) lines.push(`create /d/f${f}.${k}`, `write /d/f${f}.${k} 0 4096 ${k + 1}`, `setxattr /d/f${f}.${k} user.x v`, `fsync /d/f${f}.${k}`);
      lines.push('end');
    }
    lines.push('thread C0');
    for (let k = 0; k < 80; k++) lines.push(`create /d/c${k}`);
    lines.push('end');
    const s = script(`copy-${copy}-${pressure}.txt`, lines.join('\n') + '\n');
    const r = cli('run', s, '--trace', '-', '--image', join(dir, `copy-${copy}.img`));
    assert.equal(r.code, 0, r.err);
    assert.equal(cli('check', join(dir, `copy-${copy}.img`)).code, 0);
    const ev = r.out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    // the locks each task holds when its allocation stalls begin
    const held = new Map();
    const allocs = { underLeafLock: 0, free: 0, stalled: 0 };
    for (const e of ev) {
      if (e.kind === 'lock_acquire') held.set(`${e.task}:${e.bytenr}`, e);
      if (e.kind === 'lock_release') held.delete(`${e.task}:${e.bytenr}`);
      if (e.kind === 'task_wait' && e.cause === 'memory allocation') {
        const mine = [...held.values()].filter((h) => h.task === e.task);
        if (mine.some((h) => h.tree === '5' && h.level === 0 && h.mode === 'read')) allocs.underLeafLock++;
        else if (!mine.length) allocs.free++;
      }
      if (e.kind === 'task_wake' && e.cause === 'memory allocation' && BigInt(e.waitNs) > 100_000n) allocs.stalled++;
    }
    return allocs;
  };
  const clone = run('clone', 'heavy');
  assert.ok(clone.underLeafLock > 0 && clone.free === 0, `clone: ${JSON.stringify(clone)}`);
  assert.ok(clone.stalled > 0, 'heavy memory pressure stalls some allocations');
  const pre = run('prealloc', 'heavy');
  assert.ok(pre.free > 0 && pre.underLeafLock === 0, `prealloc: ${JSON.stringify(pre)}`);
  const calm = run('prealloc', 'none');
  assert.equal(calm.stalled, 0, 'no pressure, no stall');
});

test('every schedule of a two-thread scenario, log_copy=clone and prealloc: no deadlock, a clean image with every file', () => {
  const A = ['create /d/a', 'write /d/a 0 4096 1', 'setxattr /d/a user.x v', 'fsync /d/a'];
  const B = ['create /d/b', 'fsync /d/b', 'write /d/b 0 8192 2', 'fsync /d/b'];
  // every interleaving of A's and B's command starts: C(8, 4) = 70
  const orders = [];
  const walk = (a, b, acc) => {
    if (a === A.length && b === B.length) return orders.push(acc);
    if (a < A.length) walk(a + 1, b, [...acc, 'A']);
    if (b < B.length) walk(a, b + 1, [...acc, 'B']);
  };
  walk(0, 0, []);
  assert.equal(orders.length, 70);
  let runs = 0;
  for (const copy of ['clone', 'prealloc']) {
    for (const order of orders) {
      const text = ['mkfs size=256M', 'set device=loop', 'set tree_locks=path', `set log_copy=${copy}`, 'set memory_pressure=heavy', 'mkdir /d', 'commit',
        `schedule ${order.slice(0, 4).join(' ')}`, `schedule ${order.slice(4).join(' ')}`, 'thread A', ...A, 'end', 'thread B', ...B, 'end'].join('\n') + '\n';
      const s = script('sched.txt', text);
      const img = join(dir, 'sched.img');
      const r = cli('run', s, '--image', img);
      assert.equal(r.code, 0, `${copy}, schedule ${order.join(' ')}: ${r.err}`);
      const c = cli('check', img);
      assert.equal(c.code, 0, `${copy}, schedule ${order.join(' ')}: ${c.out}${c.err}`);
      const ls = cli('ls', img, '/d');
      assert.deepEqual(ls.out.split('\n').filter(Boolean).sort(), ['a', 'b'], `${copy}, schedule ${order.join(' ')}: ${ls.out}`);
      runs++;
    }
  }
  assert.equal(runs, 140);
});

test('a run that fails still writes its trace and metrics up to the error, and no image', () => {
  const s = script('fails.txt', 'mkfs size=256M\nmkdir /d\ncommit\nthread A\ncreate /d/a\nfsync /d/a\nend\ncreate /nope/x\n');
  const img = join(dir, 'fails.img');
  const tr = join(dir, 'fails.jsonl');
  const r = cli('run', s, '--image', img, '--trace', tr, '--metrics', '-');
  assert.equal(r.code, 1);
  assert.match(r.err, /:8: create: ENOENT: \/nope/);
  const m = JSON.parse(r.out);
  assert.equal(m.failed.code, 'ENOENT');
  assert.match(m.failed.message, /:8: create: ENOENT/);
  const kinds = readFileSync(tr, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).kind);
  assert.ok(kinds.includes('task_op_end'), 'the thread before the error is in the trace');
  assert.throws(() => readFileSync(img), /ENOENT/, 'no image is written');
});

// Seed 000's "why the clone exists" (796787c978ef): fsyncer A logs new files
// whole, B makes dirty files, C creates; the delayed-items worker (woken at
// delayed_background=4 pending items) flushes the oldest delayed node: its
// mutex, then its inode's leaf write-locked. With log_copy=direct, A keeps the
// fs leaf read-locked while the log tree changes, and a log block allocated in
// direct reclaim evicts an inode, taking that inode's delayed node mutex.
function directScript(mode, seed, schedule = []) {
  const l = ['mkfs nodesize=4K size=256M', 'set device=loop', 'set tree_locks=path', 'set memory_pressure=heavy', `set log_copy=${mode}`,
    `set seed=${seed}`, 'set delayed_background=4', 'mkdir /d', 'commit'];
  for (let k = 0; k < schedule.length; k += 6) l.push(`schedule ${schedule.slice(k, k + 6).join(' ')}`);
  l.push('thread A');
  for (let k = 0; k < 6; k++) l.push(`create /d/a${k}`, `write /d/a${k} 0 4096 ${k + 1}`, `fsync /d/a${k}`);
  l.push('end', 'thread B');
  for (let k = 0; k < 10; k++) l.push(`create /d/b${k}`, `write /d/b${k} 0 4096 ${k + 1}`);
  l.push('end', 'thread C');
  for (let k = 0; k < 10; k++) l.push(`create /d/c${k}`);
  l.push('end');
  return l.join('\n') + '\n';
}

test('log_copy=direct: a reclaim under the fs leaf lock closes a cycle with the delayed-items worker; clone and prealloc never deadlock', () => {
  const outcomes = { direct: [], clone: [], prealloc: [] };
  for (const mode of Object.keys(outcomes)) {
    // (a few of these seeds reach the cycle in direct mode with no schedule: which ones moves with any change of timing)
    for (let seed = 11; seed <= 30; seed++) {
      const img = join(dir, `direct-${mode}-${seed}.img`);
      const r = cli('run', script(`direct-${mode}-${seed}.txt`, directScript(mode, seed)), '--image', img, '--trace', join(dir, 'direct.jsonl'));
      if (r.code === 0) {
        const c = cli('check', img);
        assert.equal(c.code, 0, `${mode} seed ${seed}: ${c.out}${c.err}`);
        outcomes[mode].push('ok');
        continue;
      }
      // the worker waits for the fs leaf A holds, or for a node a third task holds while it waits for that leaf
      assert.match(r.err, /:\d+: fsync: EDEADLK: deadlock: A \(task \d+\) waits for the delayed node mutex of inode \d+, held by delayed-meta; delayed-meta \(task \d+\) waits to (write|read)-lock block \d+ \(level \d\) of tree 5, held by (A|B|C)(; [BC] \(task \d+\) waits to write-lock block \d+ \(level 0\) of tree 5, held by A)?$/m, `${mode} seed ${seed}`);
      const ev = readFileSync(join(dir, 'direct.jsonl'), 'utf8').split('\n').filter(Boolean).map((x) => JSON.parse(x));
      const edges = ev.slice(ev.findIndex((e) => e.kind === 'deadlock_edge'));
      assert.ok(edges.length >= 2 && edges.every((e) => e.kind === 'deadlock_edge'));
      for (let k = 0; k < edges.length; k++) assert.equal(edges[k].holder, edges[(k + 1) % edges.length].task, 'each waits for the next');
      assert.equal(edges[0].level, -1, "A waits for an inode's delayed node mutex");
      assert.equal(edges.at(-1).level, 0, 'the last waits for the fs leaf A holds');
      assert.throws(() => readFileSync(img), /ENOENT/, 'no image from a deadlocked run');
      outcomes[mode].push('deadlock');
    }
  }
  console.log(JSON.stringify(outcomes));
  assert.ok(outcomes.direct.includes('deadlock'), `direct: ${outcomes.direct}`);
  assert.ok(outcomes.clone.every((o) => o === 'ok') && outcomes.prealloc.every((o) => o === 'ok'));
  // one interleaving, chosen by schedule lines: a deadlock in direct mode only
  // (seed 1, whose direct run ends without a schedule; the order: the first 39 of 48 picks found by trying seeded random
  // orders, each thread picked no more often than it has commands)
  const order = 'B C A C A A B C B C C C A A C A A A B A B B C A C C B B A B A A A B A A B B B'.split(' ');
  const res = {};
  for (const mode of ['direct', 'clone', 'prealloc']) res[mode] = cli('run', script(`sched-${mode}.txt`, directScript(mode, 1, order))).code;
  assert.deepEqual(res, { direct: 1, clone: 0, prealloc: 0 });
  assert.equal(cli('run', script('nosched.txt', directScript('direct', 1))).code, 0, 'the same seed without the schedule ends');
});

test('a timed run is the same whether or not it is asked for metrics or a trace: the same image', () => {
  // (a commit's written blocks were taken from the trace's counts, which only count when something is printed)
  const s = script('observe.txt', 'mkfs size=256M\nset device=ssd\nset tree_locks=path\nset memory_pressure=heavy\nset log_copy=clone\nset seed=10\nbonnie files=200 dirs=2 size=16K fsyncers=1\n');
  const [a, b] = [join(dir, 'observe-a.img'), join(dir, 'observe-b.img')];
  assert.equal(cli('run', s, '--image', a).code, 0);
  assert.equal(cli('run', s, '--image', b, '--metrics', join(dir, 'observe.json')).code, 0);
  assert.ok(readFileSync(a).equals(readFileSync(b)), 'the two images differ');
});

test('tree_locks=path: a change that frees a block and takes its place again is not waited for by its own task', () => {
  // (seed 10 of the seed 000 bonnie bench, clone: a leaf freed by a merge and allocated again by a split in one
  // change; its lock, held by the task's path, was waited for by the same task: EDEADLK)
  const s = script('bonnie-self.txt', 'mkfs size=2G\nset device=ssd\nset tree_locks=path\nset memory_pressure=heavy\nset log_copy=clone\nset seed=10\nbonnie files=2000 dirs=2 size=16K\n');
  const r = cli('run', s, '--metrics', '-');
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(Object.keys(JSON.parse(r.out).timed.bonnie), ['seqCreate', 'seqDelete', 'randCreate', 'randDelete']);
});

test('bonnie: bonnie++ -b file phases (create, write, fsync; unlink, fsync the directory), latencies by phase, every file gone, a clean image', () => {
  const s = script('bonnie.txt', 'mkfs size=512M\nset device=ssd\nset memory_pressure=heavy\nset log_copy=clone\nbonnie files=60 dirs=3 size=8K fsyncers=1\n');
  const img = join(dir, 'bonnie.img');
  const r = cli('run', s, '--metrics', '-', '--image', img);
  assert.equal(r.code, 0, r.err);
  const m = JSON.parse(r.out);
  assert.deepEqual(Object.keys(m.timed.bonnie), ['seqCreate', 'seqDelete', 'randCreate', 'randDelete']);
  for (const [k, v] of Object.entries(m.timed.bonnie)) {
    assert.equal(v.n, 60, k);
    assert.ok(v.maxNs >= v.p99Ns && v.p99Ns >= v.p50Ns && v.p50Ns > 0, k);
  }
  // bonnie's 60 files twice, each written once (8 KiB) and fsynced, plus the fsyncer's loops
  assert.ok(m.timed.ops.fsync.n >= 4 * 60, `fsyncs: ${m.timed.ops.fsync.n}`);
  // the fs leaves logging copied from: a create fsyncs its file and its directory, a delete the directory; those
  // logged are counted by phase (the fsyncer's own, meanwhile, too), each copying from at least its inode's leaf;
  // the kernel clones every one of them before seed 000's change (log_copy=clone stalls in their allocations)
  const ll = m.timed.logLeaves;
  assert.ok(ll.fsyncs > 0 && ll.fsyncs <= m.timed.fsyncs && ll.cloned <= ll.read && ll.cloned >= ll.fsyncs, JSON.stringify(ll));
  let phaseFsyncs = 0;
  for (const [k, v] of Object.entries(m.timed.bonnie)) {
    assert.ok(v.fsyncs >= (k.endsWith('Create') ? 2 : 1) * 60 * 0.9, `${k}: ${v.fsyncs} fsyncs logged`);
    assert.ok(v.leavesCloned >= v.fsyncs && v.leavesCloned <= v.leavesRead, `${k}: ${JSON.stringify(v)}`);
    phaseFsyncs += v.fsyncs;
  }
  assert.ok(phaseFsyncs <= ll.fsyncs, `${phaseFsyncs} of ${ll.fsyncs}`);
  assert.ok(m.timed.waitedNs['memory allocation'] > 0, 'clones stall in direct reclaim');
  assert.equal(cli('check', img).code, 0);
  for (let d = 0; d < 3; d++) assert.equal(cli('ls', img, `/bonnie/d${d}`).out.trim(), '', `d${d} is empty`);
  assert.ok(cli('ls', img, '/bonnie').out.includes('fsyncer0.0'), "the fsyncer's files stay");
  for (const [bad, msg] of [['bonnie files=0', /files is 1 to/], ['bonnie files=10 dirs=20', /dirs is 1 to 1000, and at most files/], ['bonnie files=4 colour=red', /bonnie takes files=N/]]) {
    const e = cli('run', script('bad-bonnie.txt', `mkfs size=256M\n${bad}\n`));
    assert.equal(e.code, 1);
    assert.match(e.err, msg);
  }
});

test('a delayed node a commit flushes while the reclaim worker is locking its leaf: the worker finishes its search and lets the path go', () => {
  // the interleaving of bonnie seed 19 with the cost table of cb9d3f1: the reclaim worker (FLUSH_DELAYED_ITEMS)
  // write-locked the fs tree's root on its way to an inode item, the transaction kthread's commit wrote that delayed
  // node meanwhile, and the worker skipped the rest of the search, the root still held: bonnie waited for it
  // until the run gave up after an hour of virtual time
  const s = script('bonnie-19.txt', ['mkfs size=2G', 'set device=ssd', 'set tree_locks=path', 'set memory_pressure=heavy', 'set log_copy=clone',
    'set seed=19', 'set cost.finish_fs=40us', 'set cost.finish_fs_page=9us', 'set cost.finish_csum=47us', 'set cost.finish_rest=13us',
    'set cost.log_csum_lookup=16us', 'bonnie files=2000 dirs=2 size=16K'].join('\n') + '\n');
  const img = join(dir, 'bonnie-19.img');
  const r = cli('run', s, '--metrics', '-', '--image', img);
  assert.equal(r.code, 0, r.err);
  for (const [k, v] of Object.entries(JSON.parse(r.out).timed.bonnie)) assert.equal(v.n, 2000, k);
  assert.equal(cli('check', img).code, 0);
  for (let d = 0; d < 2; d++) assert.equal(cli('ls', img, `/bonnie/d${d}`).out.trim(), '', `d${d} is empty`);
});

test('untar random: a seeded source-like tree in tar order, then syncfs; the same seed makes the same tree', () => {
  const run = (seed) => {
    const img = join(dir, `untar-${seed}.img`);
    const r = cli('run', script(`untar-${seed}.txt`, `mkfs size=256M\nset device=ssd\nuntar random files=400 seed=${seed}\n`), '--metrics', '-', '--image', img);
    assert.equal(r.code, 0, r.err);
    assert.equal(cli('check', img).code, 0);
    return { m: JSON.parse(r.out).timed, img };
  };
  const a = run(3), b = run(3), c = run(4);
  assert.equal(a.m.untar.files, 400);
  assert.ok(a.m.untar.dirs >= 400 / 30 && a.m.untar.dirs <= 400 / 2, `dirs: ${a.m.untar.dirs}`);
  assert.ok(a.m.untar.bytes / 400 > 4000 && a.m.untar.bytes / 400 < 40000, `mean size ${a.m.untar.bytes / 400}`);
  assert.ok(a.m.untar.writeNs > 0 && a.m.untar.syncNs > 0);
  // tar writes a record (10240 bytes) at a time: a write per record of each file
  assert.ok(a.m.ops.write.n > 400 && a.m.ops.write.n <= 400 + Math.ceil(a.m.untar.bytes / 10240), `writes: ${a.m.ops.write.n}`);
  const whole = cli('run', script('untar-whole.txt', 'mkfs size=256M\nuntar random files=400 seed=3 chunk=0\n'), '--metrics', '-');
  assert.equal(JSON.parse(whole.out).timed.ops.write.n, 400, 'chunk=0: one write a file');
  assert.deepEqual(a.m.untar, b.m.untar);
  assert.notEqual(a.m.untar.bytes, c.m.untar.bytes);
  assert.deepEqual(cli('ls', a.img, '/src/m000').out, cli('ls', b.img, '/src/m000').out);
  assert.match(cli('ls', a.img, '/src/m000').out, /^f000\.c$/m);
  const e = cli('run', script('bad-untar.txt', 'mkfs size=256M\nuntar random files=0\n'));
  assert.match(e.err, /untar: files is 1 to 1000000/);
});

test('space reservation: tickets when metadata runs short, the reclaim worker in the kernel\'s state order, shrink_delalloc by pages or whole inodes; ENOSPC names the line and leaves a clean image', () => {
  // rules: this kernel's reservation sizes (6.18), or the seed's (5.10: 5.10 against 5.10 with the fix)
  const runMode = (mode, rules = '6.18') => {
    const name = `reclaim-${mode}-${rules}`;
    const img = join(dir, `${name}.img`);
    const r = cli('run', script(`${name}.txt`, `mkfs size=512M\nset device=loop\nset tree_locks=path\nset space_rules=${rules}\nset shrink_delalloc=${mode}\nuntar random files=3000 seed=3\n`),
      '--metrics', '-', '--image', img, '--trace', join(dir, `${name}.jsonl`));
    assert.equal(r.code, 0, r.err);
    assert.equal(cli('check', img).code, 0);
    const m = JSON.parse(r.out);
    const ev = readFileSync(join(dir, `${name}.jsonl`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    return { m, ev };
  };
  const pages = runMode('pages'), inodes = runMode('inodes'), pages510 = runMode('pages', '5.10'), inodes510 = runMode('inodes', '5.10');
  for (const { m, ev } of [pages, inodes, pages510, inodes510]) {
    const rc = m.timed.reclaim;
    assert.ok(rc.tickets > 10, `tickets: ${rc.tickets}`);
    assert.equal(rc.ticketsFailed, 0);
    // this kernel's order of first use starts so (tests/kernel/seed002-measure.mjs)
    assert.deepEqual(rc.order.slice(0, 5), ['FLUSH_DELAYED_ITEMS_NR', 'FLUSH_DELAYED_ITEMS', 'FLUSH_DELAYED_REFS_NR', 'FLUSH_DELAYED_REFS', 'FLUSH_DELALLOC']);
    // every ticket made is granted (reserve_ticket with no error) once, after a trigger when the worker was idle
    const tickets = ev.filter((e) => e.kind === 'reserve_ticket');
    assert.equal(tickets.length, rc.tickets);
    assert.ok(tickets.every((e) => e.error === '0'));
    assert.ok(ev.some((e) => e.kind === 'trigger_flush' && e.space === 'metadata'));
    assert.equal(m.space.metadata.mayUse, m.space.globalRsv, 'after the final commit only the global reserve is held');
    assert.equal(m.space.data.mayUse, 0);
  }
  // pages (5.11+): a budget of pages, min(delalloc, max(to_reclaim, delalloc / 8)); inodes (5.10): 2 x to_reclaim / insert(1) whole inodes
  const shrink = (run) => run.ev.filter((e) => e.kind === 'shrink_delalloc');
  const shrinkP = shrink(pages), shrinkI = shrink(inodes), shrinkI510 = shrink(inodes510);
  assert.ok([...shrinkP, ...shrink(pages510)].every((e) => e.mode === 0 && Number(e.pages) >= Math.min(Number(e.budget), 1)));
  assert.ok([...shrinkI, ...shrinkI510].every((e) => e.mode === 1 && Number(e.inodes) <= Number(e.budget)));
  // 6.18: a create asks insert(5) + delayed_ref_bytes(5) = 3.75 MiB (the kernel's tickets here); 5.10: insert(5)
  // while the delayed refs reserve is full, 1.25 MiB
  assert.ok(shrinkI.some((e) => e.budget === '30'), '6.18: a 3.75 MiB create ticket: 2 x 15 inodes');
  assert.ok(pages.ev.some((e) => e.kind === 'flush_space' && e.numBytes === String(15 * 256 * 1024)), '6.18: to_reclaim of a create ticket, 3.75 MiB');
  assert.ok(shrinkP.every((e) => Number(e.budget) <= 960), '6.18: 960 pages at most');
  assert.ok(shrinkI510.some((e) => e.budget === '10'), '5.10: a 1.25 MiB create ticket: 2 x 5 inodes');
  // the seed: whole inodes a few at a time, a tick after each pass, leave more reservations waiting, for longer
  assert.ok(inodes510.m.timed.reclaim.tickets > pages510.m.timed.reclaim.tickets);
  assert.ok(inodes510.m.timed.untar.writeNs > 2 * pages510.m.timed.untar.writeNs, `untar ${inodes510.m.timed.untar.writeNs} vs ${pages510.m.timed.untar.writeNs}`);
  for (const run of [pages, inodes, pages510, inodes510]) {
    assert.ok(run.m.timed.deviceBusyNs > 0 && run.m.timed.deviceBusyNs < run.m.timed.virtualNs);
    // reclaim writes the data back long before the dirty limits (20% and 10% of 4 GiB): tar never throttles
    const d = run.m.timed.dirty;
    assert.equal(d.limitBytes, Math.floor(4 * 2 ** 30 / 5));
    assert.ok(d.peakBytes > 0 && d.peakBytes < 16 * 2 ** 20, `dirty and writeback peak ${d.peakBytes}`);
    assert.equal(run.m.timed.waitedNs['dirty throttle'], undefined);
  }
  assert.equal(cli('ls', join(dir, 'reclaim-pages-6.18.img'), '/src/m000').out, cli('ls', join(dir, 'reclaim-inodes-5.10.img'), '/src/m000').out);

  // a filesystem too small: ENOSPC at the write that could not be reserved, the image as unmounting leaves it
  const img = join(dir, 'enospc.img');
  const e = cli('run', script('enospc.txt', 'mkfs size=128M\nset device=ssd\nuntar random files=100000 seed=2\n'), '--image', img, '--metrics', join(dir, 'enospc.json'));
  assert.equal(e.code, 1);
  assert.match(e.err, /enospc\.txt:3: write: ENOSPC: no data space for a reservation of \d+ bytes/);
  assert.equal(cli('check', img).code, 0, 'the image at that point checks clean');
  const em = JSON.parse(readFileSync(join(dir, 'enospc.json'), 'utf8'));
  assert.equal(em.failed.code, 'ENOSPC');
  assert.equal(em.timed.reclaim.ticketsFailed, 1);
});
