// Seed 000's workload in the kernel, measured: tree-lock contention during
// fsync. "fsyncers (new file, xattr, fsync) against creators in one
// directory": F fsyncer processes each loop N times over {create a new file
// in directory D, write 4 KiB, set the xattr user.x, fsync it}; C creator
// processes each loop N times over {create an empty file in D (open O_CREAT,
// close)}, no fsync. All start together (a pipe barrier) on a fresh btrfs on
// a loop device of our own (default mkfs: 16 KiB nodes, space_cache=v2).
//
// How: user-side, each process times its own ops with time.monotonic_ns()
// (fsync = the os.fsync call alone; create = os.open(O_CREAT) + os.close).
// Kernel-side, a tracefs instance of our own (clock "mono", 65536 KiB per
// cpu) records btrfs_tree_read_lock, btrfs_tree_lock,
// btrfs_try_tree_read_lock, btrfs_tree_read_unlock, btrfs_tree_unlock and
// btrfs_sync_file; only lines carrying our filesystem's fsid are kept (other
// work may trace and mount btrfs too). Every task touching our fs is counted
// (the workload, btrfs-transaction, kworkers).
//
// The figures:
// - fsync / create {n, p50Us, p99Us}: user-side latency per op, microseconds.
// - locks.wait.{read,write}.{fs,log,other}: the tracepoints' diff_ns, i.e.
//   end_ns - start_ns, both ktime_get_ns() (CLOCK_MONOTONIC): start_ns when
//   the locking call began to take an extent buffer's lock (an rwsem), end_ns
//   when the event fires, once it has it. So it is the time spent acquiring,
//   uncontended acquisitions included (~0.2 us here, tracing overhead
//   included).
//   read = btrfs_tree_read_lock, write = btrfs_tree_lock (btrfs_tree_lock is
//   also what the _nested variants emit). Tree: `owner` is the block's header
//   owner (tree id): fs = 5 (FS_TREE, where D lives); log = is_log_tree set
//   (owner -6, TREE_LOG_OBJECTID: the per-subvolume log tree and the log root
//   tree alike); other = everything else (root, extent, csum, free space ...
//   trees). The tree is taken from the matching unlock event: a block that is
//   write-locked as it is allocated has no header yet when its lock event
//   fires, so that event's owner is stale page bytes (0 or garbage; counted
//   in staleOwner), while is_log_tree (a property of the buffer, not of the
//   header) is right. {n, p50Ns, p99Ns, maxNs, over10us (> 10 us), sumNs}.
// - locks.hold: each lock event paired with the next unlock event of the same
//   kind (read_lock -> read_unlock, lock -> unlock) of the same block by the
//   same pid; hold = unlock line timestamp - lock line timestamp. The lock
//   event fires after acquisition and the unlock event before the release, so
//   hold is the time the lock was held (tracing one event included). The
//   instance's clock is x86-tsc where the kernel offers it: line timestamps
//   are then raw TSC counts, turned into ns by the TSC's rate over the run,
//   fitted from the lock events' own end_ns (ktime_get_ns) fields
//   (ticksPerNs, trace-clock.mjs's least squares), so sub-microsecond
//   holds are measured, not rounded. Without x86-tsc the clock is "mono",
//   whose lines print rounded to 1 us: hold figures are then multiples of
//   1000 ns, each +-1 us (lockEventLagUs, the median of line timestamp -
//   end_ns, checks the lock event fires after acquisition: within the print
//   resolution of 0). Same shape as wait.
//   Unlocks with no lock before them (unmatchedUnlocks) and locks with no
//   unlock after them (unmatchedLocks; their wait is counted, by the lock
//   event's tree) should both be 0.
//   Try-read-locks that succeeded (btrfs_try_tree_read_lock) are paired too
//   so their unlocks match nothing else, but are not counted in hold; this
//   kernel has no event for successful try-write-locks, so their unlocks stay
//   unmatched (unmatchedUnlocks).
// - seconds: wall time of the workload (barrier release to the last exit).
// - syncFile: btrfs_sync_file events (one per fsync entering btrfs; should
//   equal F * N).
// - overrun: sum over cpus of per_cpu/cpuN/stats "overrun" (events lost to a
//   full ring buffer; must be 0 for the figures to be whole), plus "dropped".
//
// Run: node tests/kernel/seed000-measure.mjs [F C N]   (root; mounts tracefs
// if it is not mounted; about 2 s for the defaults, 128 MiB of ring buffer
// on a 2-cpu machine while it runs). Clean-room: written from the
// tracepoints' format files and what the trace shows.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fitTscRate } from './trace-clock.mjs';

const TRACING = '/sys/kernel/tracing';
const EVENTS = ['btrfs_tree_read_lock', 'btrfs_tree_lock', 'btrfs_try_tree_read_lock', 'btrfs_tree_read_unlock', 'btrfs_tree_unlock', 'btrfs_sync_file'];
const LOG_OWNER = '18446744073709551610'; // (u64)-6, BTRFS_TREE_LOG_OBJECTID

const WORKLOAD = `
import os, sys, time, json
d, out, F, C, N = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
each = len(sys.argv) > 6 and sys.argv[6] == 'each'  # a directory each process, made before they start
base = d
buf = os.urandom(4096)
r, w = os.pipe()
pids = []
def fsyncer(j):
    d = os.path.join(base, 'F%d' % j) if each else base
    lat = []
    for i in range(N):
        fd = os.open(os.path.join(d, 'f%d_%d' % (j, i)), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        os.write(fd, buf)
        os.setxattr(fd, 'user.x', b'v%d' % i)
        t0 = time.monotonic_ns(); os.fsync(fd); lat.append(time.monotonic_ns() - t0)
        os.close(fd)
    return lat
def creator(j):
    d = os.path.join(base, 'C%d' % j) if each else base
    lat = []
    for i in range(N):
        t0 = time.monotonic_ns()
        fd = os.open(os.path.join(d, 'c%d_%d' % (j, i)), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        os.close(fd)
        lat.append(time.monotonic_ns() - t0)
    return lat
for kind, n, fn in (('fsync', F, fsyncer), ('create', C, creator)):
    for j in range(n):
        if each:
            os.mkdir(os.path.join(base, ('F' if kind == 'fsync' else 'C') + str(j)))
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)  # barrier: returns when the parent closes w
            lat = fn(j)
            with open(os.path.join(out, '%s%d.json' % (kind, j)), 'w') as f:
                json.dump(lat, f)
            os._exit(0)
        pids.append(pid)
os.close(r)
t0 = time.monotonic()
os.close(w)
bad = 0
for p in pids:
    bad |= os.waitpid(p, 0)[1]
print(time.monotonic() - t0)
sys.exit(1 if bad else 0)
`;

function tracefs() {
  if (!existsSync(join(TRACING, 'events'))) execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACING]);
}

const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : null);
/** {n, p10Ns, p50Ns, p90Ns, p99Ns, maxNs, over10us, sumNs} of ns values (bench/seed000-model.mjs's too: one
 * percentile rule). */
export function statsNs(xs) {
  const s = Float64Array.from(xs).sort();
  let sumNs = 0, over10us = 0;
  for (const v of s) { sumNs += v; if (v > 10000) over10us++; }
  return { n: s.length, p10Ns: quantile(s, 0.1), p50Ns: quantile(s, 0.5), p90Ns: quantile(s, 0.9), p99Ns: quantile(s, 0.99), maxNs: s.length ? s[s.length - 1] : null, over10us, sumNs };
}
function statsUs(nsList) {
  const s = Float64Array.from(nsList).sort();
  const us = (v) => (v === null ? null : Math.round(v / 100) / 10);
  return { n: s.length, p50Us: us(quantile(s, 0.5)), p90Us: us(quantile(s, 0.9)), p99Us: us(quantile(s, 0.99)) };
}

// "  python3-1234    [001] .....  123.456789: btrfs_tree_lock: <fsid>: block=... "
// (trace clock mono), or "... 106250223328976: btrfs_tree_lock: ..." (x86-tsc: raw counts)
const LINE = /-(\d+)\s+\[\d+\]\s.*?\s(\d+)(?:\.(\d{6}))?: (btrfs_\w+): (.*)$/;
const field = (rest, name) => rest.match(new RegExp(`\\b${name}=(\\d+)`))?.[1];

/** Parse our filesystem's lines of a trace into wait and hold figures. */
export function analyseTrace(text, fsid) {
  const wait = { read: { fs: [], log: [], other: [] }, write: { fs: [], log: [], other: [] } };
  const hold = { read: { fs: [], log: [], other: [] }, write: { fs: [], log: [], other: [] } };
  const open = new Map(); // pid|block|kind -> { ts, diffNs, owner, tree } (tree null: a try-lock)
  const lags = [];
  let syncFile = 0, tryRead = 0, unmatchedUnlocks = 0, lines = 0;
  const staleOwner = { read: 0, write: 0 };
  const treeOf = (isLog, owner) => (isLog || owner === LOG_OWNER ? 'log' : owner === '5' ? 'fs' : 'other');
  const recs = [];
  let tsc = false;
  for (const line of text.split('\n')) {
    if (!line.includes(fsid)) continue; // ours only
    const m = line.match(LINE);
    if (!m) continue;
    lines++;
    const [, pid, sec, usec, ev, rest] = m;
    if (usec === undefined) tsc = true;
    recs.push({ pid, ts: usec === undefined ? Number(sec) : Number(sec) * 1e6 + Number(usec), ev, rest });
  }
  // line timestamps to ns: x86-tsc counts by the rate fitted from the lock events' end_ns, mono's microseconds by 1000
  let ticksPerNs = null;
  if (tsc) {
    const pairs = recs.filter((r) => r.ev === 'btrfs_tree_read_lock' || r.ev === 'btrfs_tree_lock').map((r) => [Number(field(r.rest, 'end_ns')), r.ts]);
    ticksPerNs = fitTscRate(pairs)?.[0];
    if (!(ticksPerNs > 0)) throw new Error('x86-tsc trace: too few lock events to fit the TSC rate');
  }
  const ns = (ts) => (tsc ? ts / ticksPerNs : ts * 1000);
  for (const { pid, ts, ev, rest } of recs) {
    if (ev === 'btrfs_sync_file') { syncFile++; continue; }
    const block = field(rest, 'block'), owner = field(rest, 'owner'), isLog = field(rest, 'is_log_tree') !== '0';
    if (ev === 'btrfs_tree_read_lock' || ev === 'btrfs_tree_lock') {
      const kind = ev === 'btrfs_tree_lock' ? 'write' : 'read';
      if (!tsc && lags.length < 100000) lags.push(ts * 1000 - Number(field(rest, 'end_ns')));
      const key = `${pid}|${block}|${kind}`;
      const prev = open.get(key);
      if (prev?.tree) wait[kind][prev.tree].push(prev.diffNs); // never unlocked (not seen): wait only, by its own owner
      open.set(key, { ts, diffNs: Number(field(rest, 'diff_ns')), owner, tree: treeOf(isLog, owner) });
    } else if (ev === 'btrfs_try_tree_read_lock') {
      tryRead++;
      open.set(`${pid}|${block}|read`, { ts, tree: null });
    } else if (ev === 'btrfs_tree_read_unlock' || ev === 'btrfs_tree_unlock') {
      const kind = ev === 'btrfs_tree_unlock' ? 'write' : 'read';
      const key = `${pid}|${block}|${kind}`;
      const o = open.get(key);
      if (!o) { unmatchedUnlocks++; continue; }
      open.delete(key);
      if (!o.tree) continue; // a try-lock
      // The tree is the one the unlock names: a block locked as it is
      // allocated has no header yet, so its lock event's owner is stale.
      const tree = treeOf(isLog, owner);
      if (o.owner !== owner) staleOwner[kind]++;
      wait[kind][tree].push(o.diffNs);
      hold[kind][tree].push(Math.round(ns(ts) - ns(o.ts)));
    }
  }
  let unmatchedLocks = 0;
  for (const [key, o] of open) if (o.tree) { unmatchedLocks++; wait[key.endsWith('write') ? 'write' : 'read'][o.tree].push(o.diffNs); }
  const shape = (x, f) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([t, xs]) => [t, f(xs)]))]));
  const lagSorted = Float64Array.from(lags).sort();
  return {
    locks: { wait: shape(wait, statsNs), hold: shape(hold, statsNs) },
    syncFile,
    tryReadLocks: tryRead,
    unmatchedLocks,
    unmatchedUnlocks,
    staleOwner,
    lockEventLagUs: lagSorted.length ? Math.round(quantile(lagSorted, 0.5) / 100) / 10 : null,
    clock: tsc ? 'x86-tsc' : 'mono',
    ticksPerNs,
    traceLines: lines,
  };
}

/** The workload on a fresh btrfs on a loop device of our own, traced in a tracefs instance of our own with `events`
 * ([group, name] pairs) and `clock` ('tsc': x86-tsc where the kernel has it, else mono): the trace's text, our fsid,
 * the fsyncers' and the creators' op latencies (ns), the wall seconds and the ring buffer's losses. */
function tracedWorkload({ fsyncers, creators, iterations, dirs, events, clock }) {
  tracefs();
  const dir = mkdtempSync(join(tmpdir(), 'btrfslab-seed000-'));
  const img = join(dir, 'fs.img');
  const mnt = join(dir, 'mnt');
  const out = join(dir, 'lat');
  let loop = null;
  let mounted = false;
  const inst = join(TRACING, 'instances', `btrfslab-seed000-${process.pid}-${Date.now()}`);
  try {
    mkdirSync(mnt);
    mkdirSync(out);
    execFileSync('truncate', ['-s', String(1 << 30), img]);
    execFileSync('mkfs.btrfs', ['-q', '-f', img]);
    const fsid = execFileSync('blkid', ['-s', 'UUID', '-o', 'value', img], { encoding: 'utf8' }).trim();
    loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
    if (!/^\/dev\/loop\d+$/.test(loop)) throw new Error(`losetup gave ${JSON.stringify(loop)}`);
    const devno = readFileSync(`/sys/block/${loop.slice(5)}/dev`, 'utf8').trim().replace(':', ','); // "7,1", as block events print it
    execFileSync('mount', ['-t', 'btrfs', loop, mnt]);
    mounted = true;
    const d = join(mnt, 'd');
    mkdirSync(d);
    execFileSync('sync', ['-f', mnt]);
    mkdirSync(inst);
    writeFileSync(join(inst, 'tracing_on'), '0');
    writeFileSync(join(inst, 'buffer_size_kb'), '65536');
    // x86-tsc: line timestamps to the cycle (hold times below a microsecond); else mono, the events' own clock
    const clocks = readFileSync(join(inst, 'trace_clock'), 'utf8');
    writeFileSync(join(inst, 'trace_clock'), clock === 'tsc' && /\bx86-tsc\b/.test(clocks) ? 'x86-tsc' : 'mono');
    for (const [g, e] of events) writeFileSync(join(inst, 'events', g, e, 'enable'), '1');
    writeFileSync(join(inst, 'tracing_on'), '1');
    const seconds = Number(
      execFileSync('python3', ['-c', WORKLOAD, d, out, String(fsyncers), String(creators), String(iterations), dirs], { encoding: 'utf8' }).trim(),
    );
    writeFileSync(join(inst, 'tracing_on'), '0');
    let overrun = 0, dropped = 0;
    for (const cpu of readdirSync(join(inst, 'per_cpu'))) {
      const s = readFileSync(join(inst, 'per_cpu', cpu, 'stats'), 'utf8');
      overrun += Number(s.match(/^overrun: (\d+)/m)?.[1] ?? 0);
      dropped += Number(s.match(/^dropped events: (\d+)/m)?.[1] ?? 0);
    }
    const lat = (kind, n) => Array.from({ length: n }, (_, j) => JSON.parse(readFileSync(join(out, `${kind}${j}.json`), 'utf8'))).flat();
    return { text: readFileSync(join(inst, 'trace'), 'utf8'), fsid, devno, fsync: lat('fsync', fsyncers), create: lat('create', creators), seconds, overrun, dropped };
  } finally {
    if (existsSync(inst)) {
      spawnSync('sh', ['-c', `echo 0 > ${join(inst, 'tracing_on')}`]);
      for (const [g, e] of events) spawnSync('sh', ['-c', `echo 0 > ${join(inst, 'events', g, e, 'enable')}`]);
      spawnSync('rmdir', [inst]);
    }
    if (mounted) spawnSync('umount', [mnt]);
    if (loop) spawnSync('losetup', ['-d', loop]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Tree-lock wait and hold times in the kernel for `fsyncers` fsyncing and `creators` creating processes, `iterations` ops each, in one directory. */
export function measureKernelLocks({ fsyncers = 2, creators = 2, iterations = 500, dirs = 'one' } = {}) {
  const w = tracedWorkload({ fsyncers, creators, iterations, dirs, events: EVENTS.map((e) => ['btrfs', e]), clock: 'tsc' });
  const a = analyseTrace(w.text, w.fsid);
  return {
    fsyncers, creators, iterations, seconds: w.seconds,
    fsync: statsUs(w.fsync),
    create: statsUs(w.create),
    locks: a.locks,
    syncFile: a.syncFile,
    overrun: w.overrun,
    dropped: w.dropped,
    tryReadLocks: a.tryReadLocks,
    unmatchedLocks: a.unmatchedLocks,
    unmatchedUnlocks: a.unmatchedUnlocks,
    staleOwner: a.staleOwner,
    lockEventLagUs: a.lockEventLagUs,
    clock: a.clock,
    ticksPerNs: a.ticksPerNs,
    traceLines: a.traceLines,
  };
}

// "  python3-1234    [001] d..2.  123.456789: sched_waking: comm=python3 pid=1235 prio=120 target_cpu=001"
const SCHED_LINE = /-(\d+)\s+\[(\d+)\]\s.*?\s(\d+)\.(\d{6}): (sched_waking|sched_switch|btrfs_sync_file|block_rq_issue|block_rq_complete): (.*)$/;

/** How long a woken fsyncer waits for a CPU (sched_waking to the sched_switch that runs it, microseconds): woken by
 * the other fsyncer (the end of the log commit it waited for: wait_log_commit) and by anything else (the end of its
 * own bios, kworkers, softirqs). The fsyncers are the pids of our filesystem's btrfs_sync_file events; the sched
 * events carry no fsid, so only theirs are read. Also: how many of the first kind were put on the waker's CPU. */
export function analyseWakes(text, fsid, devno = null) {
  const recs = [];
  const fsyncers = new Set();
  const flushStart = [], flush = [];
  for (const line of text.split('\n')) {
    const m = line.match(SCHED_LINE);
    if (!m) continue;
    const [, pid, cpu, sec, usec, ev, rest] = m;
    if (ev === 'btrfs_sync_file') {
      if (line.includes(fsid)) fsyncers.add(pid);
      continue;
    }
    const us = Number(sec) * 1e6 + Number(usec);
    if (ev === 'block_rq_issue' || ev === 'block_rq_complete') {
      // our loop device's cache flushes (rwbs FF: a flush request with no data): issued, completed in order
      if (devno && rest.startsWith(`${devno} FF `)) {
        if (ev === 'block_rq_issue') flushStart.push(us);
        else if (flushStart.length) flush.push(us - flushStart.shift());
      }
      continue;
    }
    recs.push({ pid, cpu, us, ev, rest });
  }
  const pending = new Map();
  const byFsyncer = [], byOther = [];
  let onWakersCpu = 0;
  for (const r of recs) {
    if (r.ev === 'sched_waking') {
      const target = r.rest.match(/\bpid=(\d+)/)?.[1];
      if (!fsyncers.has(target) || pending.has(target)) continue;
      const fromFsyncer = fsyncers.has(r.pid) && r.pid !== target;
      if (fromFsyncer && Number(r.rest.match(/target_cpu=(\d+)/)?.[1]) === Number(r.cpu)) onWakersCpu++;
      pending.set(target, { us: r.us, fromFsyncer });
    } else {
      const next = r.rest.match(/next_pid=(\d+)/)?.[1];
      const p = pending.get(next);
      if (!p) continue;
      pending.delete(next);
      (p.fromFsyncer ? byFsyncer : byOther).push(r.us - p.us);
    }
  }
  const q = (xs) => {
    const s = Float64Array.from(xs).sort();
    return { n: s.length, p10Us: quantile(s, 0.1), p50Us: quantile(s, 0.5), p90Us: quantile(s, 0.9) };
  };
  // flushes: their spread, and the slow ones (over 4x the median: the loop device's backing file on ext4 now and then)
  const fs = Float64Array.from(flush).sort();
  const p50 = quantile(fs, 0.5), slow = [...fs].filter((v) => v > 4 * p50);
  const flushes = { n: fs.length, p50Us: p50, p99Us: quantile(fs, 0.99), maxUs: fs.length ? fs[fs.length - 1] : null,
    slow: slow.length, slowMeanUs: slow.length ? slow.reduce((a, b) => a + b, 0) / slow.length : null };
  return { fsyncers: fsyncers.size, byFsyncer: { ...q(byFsyncer), onWakersCpu }, byOther: q(byOther), flushes };
}

/** The same workload traced for the scheduler alone (sched_waking, sched_switch, and btrfs_sync_file to know the
 * fsyncers): analyseWakes's figures, and the fsync latencies of that run. */
export function measureKernelWakes({ fsyncers = 2, creators = 2, iterations = 500, dirs = 'one' } = {}) {
  const w = tracedWorkload({
    fsyncers, creators, iterations, dirs, clock: 'mono',
    events: [['btrfs', 'btrfs_sync_file'], ['sched', 'sched_waking'], ['sched', 'sched_switch'], ['block', 'block_rq_issue'], ['block', 'block_rq_complete']],
  });
  return { fsyncers, creators, iterations, seconds: w.seconds, overrun: w.overrun, dropped: w.dropped, fsync: statsUs(w.fsync), ...analyseWakes(w.text, w.fsid, w.devno) };
}

function table(r) {
  const rows = [`F=${r.fsyncers} C=${r.creators} N=${r.iterations}  ${r.seconds.toFixed(2)} s  fsync p50/p99 ${r.fsync.p50Us}/${r.fsync.p99Us} us  create p50/p99 ${r.create.p50Us}/${r.create.p99Us} us  sync_file ${r.syncFile}  overrun ${r.overrun}`];
  rows.push('            tree        n     p50 ns     p99 ns     max ns  >10us  sum ms');
  for (const what of ['wait', 'hold'])
    for (const kind of ['read', 'write'])
      for (const tree of ['fs', 'log', 'other']) {
        const s = r.locks[what][kind][tree];
        const f = (v) => String(v ?? '-').padStart(10);
        rows.push(`${what} ${kind.padEnd(5)}  ${tree.padEnd(5)} ${String(s.n).padStart(8)} ${f(s.p50Ns)} ${f(s.p99Ns)} ${f(s.maxNs)} ${String(s.over10us).padStart(6)} ${(s.sumNs / 1e6).toFixed(1).padStart(7)}`);
      }
  return rows.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [F, C, N] = process.argv.slice(2).map(Number);
  const or = (v, d) => (Number.isInteger(v) && v >= 0 ? v : d);
  const r = measureKernelLocks({ fsyncers: or(F, 2), creators: or(C, 2), iterations: or(N, 500) || 500 });
  console.log(JSON.stringify(r));
  console.log(table(r));
}
