// Seed 002 in the kernel, measured (shrink_delalloc writes back a budget of
// pages, not a number of inodes): space reservation tickets, the flush states
// btrfs runs to reclaim space, and the nr_to_write budgets of its delalloc
// flushing, during an "untar" onto a small btrfs.
//
// The filesystem: a fresh btrfs of `fsMiB` (default 512) on a loop device of
// our own, mounted with default options. `profile`: 'default' (mkfs.btrfs
// defaults: data single, metadata and system DUP, no mixed block groups),
// 'single' (-m single -d single) or 'mixed' (-M). With DUP metadata the data
// chunks soon take the whole device, metadata cannot grow past its first
// 32 MiB chunk and every create must wait for reclaim: the default shows
// seed 002's machinery the hardest.
// The workload (Python, python3 -c): in tar order (depth-first pre-order: a
// directory, its files, then its subdirectories) a seeded tree under src/,
// each directory with 2-30 files and 1-5 subdirectories, 7 levels at most;
// each file is created, filled by one buffered write() and closed (no
// fsync), until `files` files (default 40000) or `totalMiB` MiB of file data
// (default 360, 70% of the filesystem) or the first ENOSPC; then syncfs() of
// our filesystem only. Sizes: 92% log-normal (median e^8.6 B = 5.4 KiB,
// sigma 0.9) clamped to 64 B..64 KiB, 8% a Pareto tail (alpha 1.2) from
// 20 KiB capped at 4 MiB: median about 6 KiB, mean about 14 KiB, 13% at most
// 2 KiB (inline extents), 83% within 1-20 KiB, the few files over 1 MiB
// carry about 8% of the bytes; 360 MiB makes about 26,000 files. Contents
// are slices of an 8 MiB seeded random pool (incompressible). On this
// machine (24 GiB of RAM) the dirty-page thresholds are far above the
// filesystem's size, so nothing but space reservation forces writeback
// before the 30 s expiry: the delalloc is flushed by reclaim.
//
// Tracing: a tracefs instance of our own (trace_clock mono, so the event
// times and a ticket's start_ns are on one clock), drained into a file by a
// `cat` of its trace_pipe while the workload runs (btrfs_space_reservation
// alone fires about a million times; a buffer would overrun). Events:
// btrfs_flush_space, btrfs_reserve_ticket, btrfs_trigger_flush,
// btrfs_space_reservation (counted, not kept; `spaceReservation: false`
// leaves it out), btrfs_done_preemptive_reclaim and btrfs_fail_all_tickets
// where the kernel has them, extent_writepage (one per folio btrfs writes,
// with the writeback_control's nr_to_write at that folio, in pages), and
// writeback_start / writeback_written filtered to our bdi (the flusher
// thread's work items). btrfs lines count only if they carry our fsid,
// writeback lines only if they name our bdi: other work may trace or use
// loop devices at the same time. Cleanup (always): the reader ended by its
// pid, events disabled, our instance removed, our mount unmounted, our loop
// device detached, the scratch directory removed.
//
// Tying writeback to delalloc flushing: flush_space() traces at its end, in
// the task that ran the flush (the async reclaim kworker, or the reserving
// task for priority tickets). So the extent_writepage folios of our fs by
// the same pid since that pid's previous btrfs_flush_space are that flush's
// writeback, excluding folios inside a writeback_start..writeback_written
// bracket of that pid (flusher work run by the same kworker). For the states
// FLUSH_DELALLOC, FLUSH_DELALLOC_WAIT and FLUSH_DELALLOC_FULL those folios
// are shrink_delalloc's. In one such window each btrfs_start_delalloc_roots
// call has one writeback_control shared by the inodes it visits: nr_to_write
// falls by one per 4 KiB folio. It rises in two cases, told apart by the
// folio: at the next folio of the same inode it is btrfs extending the budget
// over the rest of a delalloc range it has just set up ("extensions");
// otherwise a new call begins (shrink_delalloc loops up to 3 times). A call's
// budget is the nr_to_write at its first folio, which is the page budget the
// writeback path was handed (the tracepoint fires before the folio counts).
//
// Figures (the object measureKernelReclaim returns):
//  params           fsMiB, files, totalMiB, seed, profile, mkfs (extra
//                   mkfs.btrfs arguments), spaceReservation.
//  workload         files, dirs made; bytes of file data written;
//                   writeSeconds (creating the tree), syncSeconds (syncfs),
//                   seconds (both); enospc: null, or {files, bytes} done when
//                   a create, write or mkdir first failed with ENOSPC.
//  flush            btrfs_flush_space: n calls; order: state names (from the
//                   event's print fmt) in order of first use; byState[name]:
//                   n, preempt (of which for_preempt=1), byFlag (DATA,
//                   METADATA, DATA|METADATA for mixed), ret {value: n} (0 or
//                   -errno of the state's own work), numBytes {sum, max, all}
//                   (the bytes the flusher was asked to reclaim; all: calls
//                   with num_bytes = U64_MAX, "as much as it can", left out
//                   of sum and max); passes[flag]:
//                   a pass starts each time the flag's first state is run
//                   again (the flusher restarts when a ticket is served): n,
//                   first, endedAt {last state of the pass: n} (non-preempt
//                   calls only); runs: the first 120 runs of consecutive
//                   equal (state, flag) as [state, flag, count], a "*" after
//                   the state marking for_preempt; runsTotal: all runs.
//  tickets          btrfs_reserve_ticket (one per reservation that had to
//                   queue a ticket, traced when it is served or fails): n,
//                   byFlag, byFlush (reservation flush mode; "0x3" is a mode
//                   the print fmt does not name: data reservations), errors
//                   {error: n} (-28 = ENOSPC), bytes {sum, max}, waitMs
//                   {median, p90, max}: event time minus start_ns.
//  triggers         btrfs_trigger_flush per "reason (flag)" (the kernel's
//                   reason strings, e.g. "enospc", "preempt").
//  preemptiveDone   btrfs_done_preemptive_reclaim events; failAllTickets:
//                   btrfs_fail_all_tickets events (tickets failed, ENOSPC).
//  delalloc         windows: n delalloc flush_space calls, empty (those that
//                   wrote no folio), byState, callsPerWindow {calls: n};
//                   calls: writeback calls found; budgets: nr_to_write at each
//                   call's first folio, pages (n, median, p90, max, min, and
//                   byState); pages: folios written per call (median, p90,
//                   max, min, sum); inodes: distinct inodes per call;
//                   extensions: {n, calls, max} budget raises within a range
//                   (max: the highest raised nr_to_write); rangeCyclic: folios
//                   in windows whose wbc was range_cyclic (0 expected: that
//                   is the flusher's kind, shrink_delalloc's is a whole-file
//                   range).
//  writeback        extent_writepage folios of our fs: total, and how many
//                   fell in delalloc windows (delalloc), in flusher brackets
//                   (flusher; e.g. syncfs), or elsewhere (other).
//  spaceReservation btrfs_space_reservation of our fs by "type
//                   reserve|release": {n, bytes} (null if left out).
//  events           our lines per event name; overrun, dropped: lost events
//                   summed over the instance's CPUs (non-zero: figures are
//                   partial); unread: events left in the buffer at the end.
//  fsDf             `btrfs filesystem df -b` at the end.
//  seconds          wall time of the whole measurement (mkfs to analysis).
//
// Run: node tests/kernel/seed002-measure.mjs [fsMiB files totalMiB seed
// profile] ('-' keeps a default); prints the JSON on stdout and a summary on
// stderr. Root; mounts tracefs if it is not mounted.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tracefsCpuStats } from './lib.mjs';

const TRACING = '/sys/kernel/tracing';
const BTRFS_EVENTS = ['btrfs_space_reservation', 'btrfs_flush_space', 'btrfs_reserve_ticket', 'btrfs_trigger_flush', 'btrfs_done_preemptive_reclaim', 'btrfs_fail_all_tickets', 'extent_writepage'];
const WB_EVENTS = ['writeback_start', 'writeback_written'];
const BUFFER_KB = 32768; // per CPU; drained as it fills
const DELALLOC_STATES = new Set(['FLUSH_DELALLOC', 'FLUSH_DELALLOC_WAIT', 'FLUSH_DELALLOC_FULL']);

const WORKLOAD = `
import os, sys, time, random, json, errno
root, nfiles, total, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
pool = random.Random(seed + 1).randbytes(8 << 20)
def size():
    if rng.random() < 0.92:
        return max(64, min(int(rng.lognormvariate(8.6, 0.9)), 64 << 10))
    return min(int((20 << 10) * rng.paretovariate(1.2)), 4 << 20)
made = wrote = dirs = 0
def full(): return made >= nfiles or wrote >= total
def fill(d, depth):
    global made, wrote, dirs
    os.mkdir(d); dirs += 1
    for i in range(rng.randint(2, 30)):
        if full(): return
        n = size(); off = rng.randrange(0, len(pool) - n)
        fd = os.open(os.path.join(d, 'f%03d.c' % i), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        try: os.write(fd, pool[off:off + n])
        finally: os.close(fd)
        made += 1; wrote += n
    for j in range(rng.randint(1, 5) if depth < 6 else 0):
        if full(): return
        fill(os.path.join(d, 'd%02d' % j), depth + 1)
def from_list(path):
    # the tree btrfslab untar-list printed (the model's untar random): 'd PATH' and 'f PATH SIZE' in tar order
    global made, wrote, dirs
    with open(path) as lst:
        for line in lst:
            kind, rel, *rest = line.split()
            p = os.path.join(root, rel)
            if kind == 'd':
                os.mkdir(p); dirs += 1; continue
            n = int(rest[0]); off = rng.randrange(0, len(pool) - n)
            fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
            try:
                # as tar writes: a record (10240 bytes) at a time
                for at in range(0, n, 10240): os.write(fd, pool[off + at:off + min(n, at + 10240)])
            finally: os.close(fd)
            made += 1; wrote += n
t0 = time.monotonic(); enospc = None
try:
    if len(sys.argv) > 5:
        from_list(sys.argv[5])
    else:
        top = os.path.join(root, 'src'); os.mkdir(top); k = 0
        while not full():
            fill(os.path.join(top, 'm%03d' % k), 0); k += 1
except OSError as e:
    if e.errno != errno.ENOSPC: raise
    enospc = {'files': made, 'bytes': wrote}
t1 = time.monotonic()
try:
    import ctypes
    fd = os.open(root, os.O_RDONLY)
    try:
        if ctypes.CDLL(None, use_errno=True).syncfs(fd) != 0: os.sync()
    finally: os.close(fd)
except (OSError, AttributeError):
    os.sync()
t2 = time.monotonic()
print(json.dumps({'files': made, 'dirs': dirs, 'bytes': wrote, 'writeSeconds': t1 - t0, 'syncSeconds': t2 - t1, 'enospc': enospc}))
`;

const PROFILES = { default: [], single: ['-m', 'single', '-d', 'single'], mixed: ['-M'] };

// Our mount only: retry while a writeback worker still holds it, then detach it lazily.
function unmount(mnt) {
  for (let i = 0; i < 5; i++) {
    if (spawnSync('umount', [mnt]).status === 0) return;
    spawnSync('sleep', ['0.5']);
  }
  spawnSync('umount', ['-l', mnt]);
}


/** trace_pipe merges the CPUs' buffers as it reads them: put the lines back in time order (stable). */
function byTime(lines) {
  const ts = (l) => Number(l.match(/\]\s+(?:\S{4,5}\s+)?(\d+\.\d+): /)?.[1] ?? 0);
  return lines.filter((l) => l && !l.startsWith('#')).map((l) => [ts(l), l]).sort((a, b) => a[0] - b[0]).map((x) => x[1]);
}

function tracefs() {
  if (!existsSync(join(TRACING, 'events'))) execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACING]);
}

const put = (path, text) => writeFileSync(path, text);
const quiet = (path, text) => { try { writeFileSync(path, text); } catch { /* cleanup: best effort */ } };

function quantile(xs, q) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
const median = (xs) => quantile(xs, 0.5);
const bump = (o, k, n = 1) => { o[k] = (o[k] ?? 0) + n; };

// "  comm-123  [001] .....  12.345678: event: body" (the flags column is optional).
const LINE = /^\s*(.*?)-(\d+)\s+\[\d+\](?:\s+\S{4,5})?\s+(\d+\.\d+): (\w+): (.*)$/;
const field = (body, name) => body.match(new RegExp(`(?:^|[ :])${name}=(\\S+)`))?.[1];
// "4(METADATA)" -> "METADATA"; "DATA|METADATA" stays.
const flagName = (v) => (v?.match(/\((.*)\)$/)?.[1] ?? v ?? '?');

const max = (xs) => (xs.length ? xs.reduce((a, b) => (b > a ? b : a)) : null);
const min = (xs) => (xs.length ? xs.reduce((a, b) => (b < a ? b : a)) : null);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const stats = (xs) => ({ n: xs.length, median: median(xs), p90: quantile(xs, 0.9), max: max(xs), min: min(xs) });
const RUNS_KEPT = 120;
const U64_MAX = '18446744073709551615'; // num_bytes of a flush that is to reclaim all it can

/** Parse the instance's trace (our lines only) into the figures above. */
function analyse(lines, fsid, bdi) {
  const kept = {};
  const runs = [];
  let runsTotal = 0;
  const byState = {};
  const order = [];
  const passes = {}; // flag -> { n, endedAt: {state: n}, first: state, last: state }
  const tickets = { n: 0, byFlag: {}, byFlush: {}, errors: {}, bytes: { sum: 0, max: 0 }, waitMs: null };
  const waits = [];
  const triggers = {};
  const spaceReservation = {};
  let preemptiveDone = 0;
  let failAllTickets = 0;
  // Per pid: our extent_writepage folios since its last btrfs_flush_space, and whether it is inside flusher work.
  const pending = new Map();
  const inFlusher = new Map();
  const wb = { total: 0, delalloc: 0, flusher: 0, other: 0 };
  const calls = []; // { state, first, pages, inodes: Set, extended }
  const windows = { n: 0, empty: 0, byState: {}, callsPerWindow: {} };
  let extensions = 0;
  let extendedTo = [];
  let rangeCyclic = 0;
  let lastRun = null;
  for (const line of lines) {
    const m = line.match(LINE);
    if (!m) continue;
    const [, , pidText, tsText, event, body] = m;
    const pid = Number(pidText);
    if (WB_EVENTS.includes(event)) {
      if (!body.startsWith(`bdi ${bdi}:`)) continue; // ours only
      bump(kept, event);
      inFlusher.set(pid, event === 'writeback_start');
      continue;
    }
    if (!body.startsWith(`${fsid}:`)) continue; // ours only
    bump(kept, event);
    if (event === 'extent_writepage') {
      wb.total++;
      if (inFlusher.get(pid)) { wb.flusher++; continue; }
      if (!pending.has(pid)) pending.set(pid, []);
      pending.get(pid).push({ nr: Number(field(body, 'nr_to_write')), ino: field(body, 'ino'), index: Number(field(body, 'page_index')), cyclic: field(body, 'range_cyclic') === '1' });
    } else if (event === 'btrfs_space_reservation') {
      const r = body.slice(fsid.length + 2).match(/^(.*): \d+ (reserve|release) (\d+)$/);
      if (r) {
        const k = `${r[1]} ${r[2]}`;
        spaceReservation[k] ??= { n: 0, bytes: 0 };
        spaceReservation[k].n++; spaceReservation[k].bytes += Number(r[3]);
      }
    } else if (event === 'btrfs_flush_space') {
      const sm = body.match(/state=(-?\d+)\((\w*)\)/);
      const state = sm ? sm[2] || `state${sm[1]}` : '?';
      const flag = flagName(field(body, 'flags'));
      const preempt = field(body, 'for_preempt') === '1';
      const numText = field(body, 'num_bytes');
      const numBytes = numText === U64_MAX ? null : Number(numText);
      const label = state + (preempt ? '*' : '');
      if (lastRun && lastRun[0] === label && lastRun[1] === flag) lastRun[2]++;
      else { lastRun = [label, flag, 1]; runsTotal++; if (runs.length < RUNS_KEPT) runs.push(lastRun); }
      if (!byState[state]) { byState[state] = { n: 0, preempt: 0, byFlag: {}, ret: {}, numBytes: { sum: 0, max: 0, all: 0 } }; order.push(state); }
      const s = byState[state];
      s.n++; if (preempt) s.preempt++;
      bump(s.byFlag, flag); bump(s.ret, field(body, 'ret'));
      if (numBytes === null) s.numBytes.all++;
      else { s.numBytes.sum += numBytes; s.numBytes.max = Math.max(s.numBytes.max, numBytes); }
      if (!preempt) {
        const p = (passes[flag] ??= { n: 0, endedAt: {}, first: state, last: null });
        if (state === p.first) { if (p.last) bump(p.endedAt, p.last); p.n++; }
        p.last = state;
      }
      const folios = pending.get(pid) ?? [];
      pending.set(pid, []);
      if (!DELALLOC_STATES.has(state)) { wb.other += folios.length; continue; }
      windows.n++;
      bump(windows.byState, label);
      if (!folios.length) { windows.empty++; bump(windows.callsPerWindow, 0); continue; }
      wb.delalloc += folios.length;
      // One writeback_control per btrfs_start_delalloc_roots call, shared by its inodes; nr_to_write
      // falls by one per 4 KiB folio. It rises (a) at a new call, or (b) when btrfs raises it to cover
      // the rest of a delalloc range it has just started on: the next folio of the same inode.
      let call = null;
      let prev = null;
      let n = 0;
      for (const f of folios) {
        if (f.cyclic) rangeCyclic++;
        if (call && f.nr > prev.nr && f.ino === prev.ino && f.index > prev.index) { extensions++; extendedTo.push(f.nr); call.extended = true; }
        else if (!call || f.nr > prev.nr) { call = { state: label, first: f.nr, pages: 0, inodes: new Set(), extended: false }; calls.push(call); n++; }
        call.pages++;
        call.inodes.add(f.ino);
        prev = f;
      }
      bump(windows.callsPerWindow, n);
    } else if (event === 'btrfs_reserve_ticket') {
      tickets.n++;
      bump(tickets.byFlag, field(body, 'flags') ?? '?');
      bump(tickets.byFlush, field(body, 'flush') ?? '?');
      const err = field(body, 'error');
      if (err && err !== '0') bump(tickets.errors, err);
      const bytes = Number(field(body, 'bytes'));
      tickets.bytes.sum += bytes; tickets.bytes.max = Math.max(tickets.bytes.max, bytes);
      const start = field(body, 'start_ns');
      if (start) {
        // The timestamp is printed in µs; start_ns is in ns on the same (mono) clock.
        const [sec, usec] = tsText.split('.');
        waits.push(Number(BigInt(sec) * 1000000000n + BigInt(usec.padEnd(9, '0')) - BigInt(start)) / 1e6);
      }
    } else if (event === 'btrfs_trigger_flush') {
      const r = body.slice(fsid.length + 2).match(/^(.*?): flush=/)?.[1] ?? '?';
      bump(triggers, `${r} (${flagName(field(body, 'flags'))})`);
    } else if (event === 'btrfs_done_preemptive_reclaim') preemptiveDone++;
    else if (event === 'btrfs_fail_all_tickets') failAllTickets++;
  }
  for (const folios of pending.values()) wb.other += folios.length;
  for (const p of Object.values(passes)) { if (p.last) bump(p.endedAt, p.last); delete p.last; }
  if (waits.length) tickets.waitMs = { median: median(waits), p90: quantile(waits, 0.9), max: max(waits) };
  const budgetByState = {};
  for (const c of calls) (budgetByState[c.state] ??= []).push(c.first);
  return {
    flush: { n: sum(Object.values(byState).map((s) => s.n)), order, byState, passes, runs, runsTotal },
    tickets,
    triggers,
    preemptiveDone,
    failAllTickets,
    delalloc: {
      windows,
      calls: calls.length,
      budgets: { ...stats(calls.map((c) => c.first)), byState: Object.fromEntries(Object.entries(budgetByState).map(([k, v]) => [k, stats(v)])) },
      pages: { ...stats(calls.map((c) => c.pages)), sum: sum(calls.map((c) => c.pages)) },
      inodes: stats(calls.map((c) => c.inodes.size)),
      extensions: { n: extensions, calls: calls.filter((c) => c.extended).length, max: max(extendedTo) },
      rangeCyclic,
    },
    writeback: wb,
    spaceReservation,
    events: kept,
  };
}

/** Untar-like workload on a small fresh btrfs; the kernel's reservation tickets, flush states and delalloc page budgets. */
export function measureKernelReclaim({ fsMiB = 512, files = 40000, totalMiB = 360, seed = 1, profile = 'default', spaceReservation = true, traceFile = null, treeList = null } = {}) {
  const t0 = Date.now();
  if (!(profile in PROFILES)) throw new Error(`profile: one of ${Object.keys(PROFILES).join(', ')}`);
  tracefs();
  const dir = mkdtempSync(join(tmpdir(), 'btrfslab-seed002-'));
  const img = join(dir, 'fs.img');
  const mnt = join(dir, 'mnt');
  const mkfsArgs = ['-q', '-f', ...PROFILES[profile]];
  const inst = join(TRACING, 'instances', `btrfslab-seed002-${process.pid}-${t0}`);
  let loop = null;
  let mounted = false;
  let madeInst = false;
  const enabled = [];
  let reader = null;
  try {
    mkdirSync(mnt);
    execFileSync('truncate', ['-s', `${fsMiB}M`, img]);
    execFileSync('mkfs.btrfs', [...mkfsArgs, img]);
    const fsid = execFileSync('blkid', ['-s', 'UUID', '-o', 'value', img], { encoding: 'utf8' }).trim();
    loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
    execFileSync('mount', ['-t', 'btrfs', loop, mnt]);
    mounted = true;
    const bdi = basename(readlinkSync(join('/sys/fs/btrfs', fsid, 'bdi')));
    mkdirSync(inst);
    madeInst = true;
    put(join(inst, 'tracing_on'), '0');
    put(join(inst, 'buffer_size_kb'), String(BUFFER_KB));
    put(join(inst, 'trace_clock'), 'mono');
    for (const e of BTRFS_EVENTS) {
      if (e === 'btrfs_space_reservation' && !spaceReservation) continue;
      const p = join(inst, 'events', 'btrfs', e);
      if (!existsSync(p)) continue; // e.g. btrfs_done_preemptive_reclaim on older kernels
      put(join(p, 'enable'), '1');
      enabled.push(p);
    }
    for (const e of WB_EVENTS) {
      const p = join(inst, 'events', 'writeback', e);
      put(join(p, 'filter'), `name == "${bdi}"`);
      put(join(p, 'enable'), '1');
      enabled.push(p);
    }
    // Drain the buffer into a file while the workload runs (a million events or more: the
    // buffer alone would overrun); `cat` is ours, ended by its pid once the buffer is empty.
    const out = openSync(join(dir, 'trace.txt'), 'w');
    reader = spawn('cat', [join(inst, 'trace_pipe')], { stdio: ['ignore', out, 'ignore'] });
    closeSync(out);
    put(join(inst, 'tracing_on'), '1');
    // treeList: a file of `btrfslab untar-list` lines, the model's tree (else the Python generator's own)
    const workload = JSON.parse(execFileSync('python3', ['-c', WORKLOAD, mnt, String(files), String(totalMiB * 1048576), String(seed), ...(treeList ? [treeList] : [])], { encoding: 'utf8' }).trim());
    put(join(inst, 'tracing_on'), '0');
    workload.seconds = workload.writeSeconds + workload.syncSeconds;
    for (let i = 0; i < 100 && tracefsCpuStats(inst).entries > 0; i++) spawnSync('sleep', ['0.1']);
    spawnSync('sleep', ['0.2']);
    reader.kill('SIGTERM');
    reader = null;
    const { overrun, dropped, entries: unread } = tracefsCpuStats(inst);
    const trace = readFileSync(join(dir, 'trace.txt'), 'utf8');
    if (traceFile) writeFileSync(traceFile, trace);
    const result = analyse(byTime(trace.split('\n')), fsid, bdi);
    const df = execFileSync('btrfs', ['filesystem', 'df', '-b', mnt], { encoding: 'utf8' });
    return {
      params: { fsMiB, files, totalMiB, seed, profile, mkfs: mkfsArgs.slice(2), spaceReservation },
      workload,
      ...result,
      spaceReservation: spaceReservation ? result.spaceReservation : null,
      overrun,
      dropped,
      unread,
      fsDf: df.trim().split('\n'),
      seconds: (Date.now() - t0) / 1000,
    };
  } finally {
    if (reader) reader.kill('SIGTERM');
    for (const p of enabled) quiet(join(p, 'enable'), '0');
    if (madeInst) spawnSync('rmdir', [inst]);
    if (mounted) unmount(mnt);
    if (loop) spawnSync('losetup', ['-d', loop]);
    rmSync(dir, { recursive: true, force: true });
  }
}

function summary(r) {
  const w = r.workload;
  const d = r.delalloc;
  const b = d.budgets;
  const mib = (x) => (x / 1048576).toFixed(1);
  return [
    `${r.params.fsMiB} MiB btrfs (${r.params.profile}), seed ${r.params.seed}: ${w.files} files, ${w.dirs} dirs, ${mib(w.bytes)} MiB in ${w.writeSeconds.toFixed(1)} s + syncfs ${w.syncSeconds.toFixed(2)} s; ENOSPC: ${w.enospc ? `after ${w.enospc.files} files` : 'no'}`,
    `tickets: ${r.tickets.n} ${JSON.stringify(r.tickets.byFlag)}${Object.keys(r.tickets.errors).length ? ` errors ${JSON.stringify(r.tickets.errors)}` : ''}, wait ms median ${r.tickets.waitMs?.median?.toFixed(2) ?? '-'} p90 ${r.tickets.waitMs?.p90?.toFixed(1) ?? '-'} max ${r.tickets.waitMs?.max?.toFixed(1) ?? '-'}; trigger_flush ${JSON.stringify(r.triggers)}`,
    `flush_space: ${r.flush.n} calls; states in order of first use: ${r.flush.order.map((k) => `${k} ${r.flush.byState[k].n}`).join(', ')}`,
    `  passes (restarts at the first state): ${Object.entries(r.flush.passes).map(([f, p]) => `${f} ${p.n}, ended at ${JSON.stringify(p.endedAt)}`).join('; ')}`,
    `delalloc flushes: ${d.windows.n} (${d.windows.empty} wrote nothing), ${d.calls} writeback calls; nr_to_write at a call's first folio: median ${b.median}, p90 ${b.p90}, max ${b.max} pages; pages written per call median ${d.pages.median} max ${d.pages.max}; inodes per call median ${d.inodes.median} max ${d.inodes.max}`,
    `folios written back: ${JSON.stringify(r.writeback)}; lost events: overrun ${r.overrun}, dropped ${r.dropped}; ${r.seconds.toFixed(1)} s in all`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [fsMiB, files, totalMiB, seed] = process.argv.slice(2, 6).map((x) => (x === undefined || x === '-' ? undefined : Number(x)));
  const profile = process.argv[6];
  const r = measureKernelReclaim({ fsMiB, files, totalMiB, seed, profile });
  console.log(JSON.stringify(r));
  console.error(summary(r));
}
