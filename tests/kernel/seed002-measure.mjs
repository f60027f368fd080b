// Seed 002 in the kernel, measured: space reservation (tickets) and delalloc
// flushing during an "untar" onto a small btrfs.
//
// What: a fresh btrfs (mkfs.btrfs defaults: data single, metadata DUP; or
// `profile: 'single'` for -m single -d single, `'mixed'` for -M) on a loop
// device of our own, `fsMiB` large, mounted with defaults. A Python workload
// creates, in tar order (depth-first pre-order: a directory, then its files,
// then its subdirectories), a seeded tree under src/: directories of 2-30
// files and 1-5 subdirectories, at most 7 levels deep; each file is created,
// written with one buffered write() of its whole content (slices of an 8 MiB
// seeded random pool: incompressible) and closed. No fsync. It stops at
// `files` files or `totalMiB` MiB of file data, whichever comes first (or at
// the first ENOSPC), then calls sync(). File sizes: 92% log-normal with
// median 5.4 KiB (e^8.6 B, sigma 0.9) clamped to 64 B..64 KiB (so about a
// quarter are inline, <= 2 KiB); 8% a Pareto tail (alpha 1.2) from 20 KiB,
// capped at 4 MiB. With 24 GiB of RAM, the dirty-page thresholds are far
// above the filesystem's size, so nothing forces writeback but btrfs's own
// space reservation: the delalloc must be flushed by reclaim (seed 002's
// shrink_delalloc) or by the 30 s periodic writeback.
//
// How: a tracefs instance of our own (trace_clock mono, so timestamps and
// the ticket's start_ns share a clock) records btrfs_flush_space,
// btrfs_reserve_ticket, btrfs_trigger_flush, btrfs_done_preemptive_reclaim,
// btrfs_fail_all_tickets, extent_writepage (one per folio btrfs writes back,
// with the writeback_control's remaining nr_to_write), and writeback_start /
// writeback_written (the flusher thread's work items, filtered to our bdi).
// btrfs_space_reservation is counted by a hist trigger keyed by fsid-less
// type/reserve (it fires several times per file), so its counts are for all
// btrfs filesystems while it runs (see `spaceReservation`). Every other line
// is kept only if it carries our fsid (btrfs events) or our bdi name
// (writeback events). Other work may use other loop devices and tracefs
// instances at the same time; we touch only ours.
//
// Figures (the object measureKernelReclaim returns):
//  params           fsMiB, files, totalMiB, seed, profile, mkfs arguments.
//  workload         files and dirs made, bytes of file data written,
//                   writeSeconds (create+write+close of all files),
//                   syncSeconds (the final sync()), seconds (both), enospc
//                   (null, or the files/bytes done when write/open/mkdir
//                   first failed with ENOSPC).
//  flush.runs       btrfs_flush_space events in time order, compressed to
//                   [stateName, flag, count] runs of consecutive equal
//                   (state, flag); flag is DATA / METADATA / ... from the
//                   event's flags; a trailing "*" on the state marks
//                   for_preempt=1 (preemptive reclaim, no ticket waiting).
//  flush.byState    per state name: n (calls), preempt (of which
//                   for_preempt), byFlag {flag: n}, ret {value: n} (ret is
//                   the state's own return, 0 or -errno, e.g. -28 ENOSPC
//                   when a chunk cannot be allocated), numBytes {sum, max}
//                   (num_bytes: the bytes the flusher was asked to reclaim).
//  flush.order      state names in order of first appearance.
//  tickets          btrfs_reserve_ticket (one per reservation that had to
//                   wait on a ticket, emitted when it is granted or fails):
//                   n, byFlag, byFlush (the reservation's flush mode),
//                   errors {errno: n}, bytes {sum, max}, waitMs {median,
//                   p90, max} = event time minus start_ns (both monotonic).
//  triggers         btrfs_trigger_flush by "reason (flag)": n (the reasons
//                   are the kernel's strings: "enospc", "preempt", ...).
//  preemptiveDone   btrfs_done_preemptive_reclaim count; failAllTickets:
//                   btrfs_fail_all_tickets count (tickets failed = ENOSPC).
//  delalloc         page budgets of shrink_delalloc's writeback. The flush
//                   a btrfs_flush_space event reports ran in the task (pid)
//                   that emitted it, just before it (flush_space traces at
//                   its end). So the extent_writepage events of our fs by
//                   the same pid after that pid's previous btrfs_flush_space
//                   (or the start) and before a btrfs_flush_space of state
//                   FLUSH_DELALLOC, FLUSH_DELALLOC_WAIT or
//                   FLUSH_DELALLOC_FULL are that flush's writeback, excluding
//                   any inside a writeback_start..writeback_written bracket of
//                   that pid (flusher-thread work on the same kworker).
//                   Within a window, the writeback_control is shared by all
//                   inodes of one btrfs_start_delalloc_roots call and its
//                   nr_to_write falls as folios are written; a new call (up
//                   to 3 loops in one shrink_delalloc) shows as nr_to_write
//                   rising again. budgets = the nr_to_write seen at the first
//                   folio of each call (pages): n, median, max, min, and
//                   byState; written = pages written per call (first minus
//                   last nr_to_write plus one; 4 KiB pages): median, max,
//                   sum; windows = delalloc flush_space events, emptyWindows
//                   = those with no folio written (nothing to write, or
//                   others' writeback got there first); rangeCyclic = folios
//                   in windows whose wbc had range_cyclic set (0 expected:
//                   shrink_delalloc's wbc is a whole-file range, the
//                   flusher's is cyclic).
//  writeback        all extent_writepage folios of our fs: total, and how many
//                   were tied to delalloc flushes (delalloc), to flusher work
//                   (flusher), or neither (other: e.g. the final sync).
//  spaceReservation hist counts of btrfs_space_reservation by "type
//                   reserve|release" (all btrfs filesystems; null if the hist
//                   trigger could not be set).
//  events           lines kept per event name; overrun / dropped: summed
//                   over per_cpu/*/stats (non-zero means lost events).
//  seconds          wall time of the whole measurement (mkfs to cleanup).
//
// Run: node tests/kernel/seed002-measure.mjs [fsMiB files totalMiB seed]
// (root; mounts tracefs if it is not mounted).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TRACING = '/sys/kernel/tracing';
const BTRFS_EVENTS = ['btrfs_flush_space', 'btrfs_reserve_ticket', 'btrfs_trigger_flush', 'btrfs_done_preemptive_reclaim', 'btrfs_fail_all_tickets', 'extent_writepage'];
const WB_EVENTS = ['writeback_start', 'writeback_written'];
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
t0 = time.monotonic(); enospc = None
try:
    top = os.path.join(root, 'src'); os.mkdir(top); k = 0
    while not full():
        fill(os.path.join(top, 'm%03d' % k), 0); k += 1
except OSError as e:
    if e.errno != errno.ENOSPC: raise
    enospc = {'files': made, 'bytes': wrote}
t1 = time.monotonic(); os.sync(); t2 = time.monotonic()
print(json.dumps({'files': made, 'dirs': dirs, 'bytes': wrote, 'writeSeconds': t1 - t0, 'syncSeconds': t2 - t1, 'enospc': enospc}))
`;

const PROFILES = { default: [], single: ['-m', 'single', '-d', 'single'], mixed: ['-M'] };

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

/** Parse our lines of the instance's trace into the figures above. */
function analyse(lines, fsid, bdi) {
  const kept = {};
  const flushEvents = [];
  const runs = [];
  const byState = {};
  const order = [];
  const tickets = { n: 0, byFlag: {}, byFlush: {}, errors: {}, bytes: { sum: 0, max: 0 }, waitMs: null };
  const waits = [];
  const triggers = {};
  let preemptiveDone = 0;
  let failAllTickets = 0;
  // Per pid: the pending extent_writepage events since its last flush_space, and whether it is inside flusher work.
  const pending = new Map();
  const inFlusher = new Map();
  const wb = { total: 0, delalloc: 0, flusher: 0, other: 0 };
  const calls = []; // { state, first, last }
  let windows = 0;
  let emptyWindows = 0;
  let rangeCyclic = 0;
  for (const line of lines) {
    const m = line.match(LINE);
    if (!m) continue;
    const [, , pidText, tsText, event, body] = m;
    const pid = Number(pidText);
    if (WB_EVENTS.includes(event)) {
      if (!body.startsWith(`bdi ${bdi}:`)) continue;
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
      pending.get(pid).push({ nr: Number(field(body, 'nr_to_write')), cyclic: field(body, 'range_cyclic') === '1' });
    } else if (event === 'btrfs_flush_space') {
      const sm = body.match(/state=(-?\d+)\((\w*)\)/);
      const state = sm ? sm[2] || `state${sm[1]}` : '?';
      const flag = flagName(field(body, 'flags'));
      const preempt = field(body, 'for_preempt') === '1';
      const ret = field(body, 'ret');
      const numBytes = Number(field(body, 'num_bytes'));
      const label = state + (preempt ? '*' : '');
      const last = runs.at(-1);
      if (last && last[0] === label && last[1] === flag) last[2]++;
      else runs.push([label, flag, 1]);
      if (!byState[state]) { byState[state] = { n: 0, preempt: 0, byFlag: {}, ret: {}, numBytes: { sum: 0, max: 0 } }; order.push(state); }
      const s = byState[state];
      s.n++; if (preempt) s.preempt++;
      bump(s.byFlag, flag); bump(s.ret, ret);
      s.numBytes.sum += numBytes; s.numBytes.max = Math.max(s.numBytes.max, numBytes);
      flushEvents.push(state);
      const folios = pending.get(pid) ?? [];
      pending.set(pid, []);
      if (DELALLOC_STATES.has(state)) {
        windows++;
        if (!folios.length) emptyWindows++;
        wb.delalloc += folios.length;
        let call = null;
        for (const f of folios) {
          if (f.cyclic) rangeCyclic++;
          if (!call || f.nr > call.last) { call = { state, first: f.nr, last: f.nr }; calls.push(call); }
          else call.last = f.nr;
        }
      } else wb.other += folios.length;
    } else if (event === 'btrfs_reserve_ticket') {
      tickets.n++;
      const flag = field(body, 'flags') ?? '?';
      bump(tickets.byFlag, flag);
      bump(tickets.byFlush, field(body, 'flush') ?? '?');
      const err = field(body, 'error');
      if (err && err !== '0') bump(tickets.errors, err);
      const bytes = Number(field(body, 'bytes'));
      tickets.bytes.sum += bytes; tickets.bytes.max = Math.max(tickets.bytes.max, bytes);
      const start = field(body, 'start_ns');
      if (start) {
        // Timestamps are printed in µs; start_ns is ns on the same (mono) clock.
        const [sec, usec] = tsText.split('.');
        const nowNs = BigInt(sec) * 1000000000n + BigInt(usec.padEnd(9, '0').slice(0, 9));
        waits.push(Number(nowNs - BigInt(start)) / 1e6);
      }
    } else if (event === 'btrfs_trigger_flush') {
      const r = body.slice(fsid.length + 2).match(/^(.*?): flush=/)?.[1] ?? '?';
      bump(triggers, `${r} (${flagName(field(body, 'flags'))})`);
    } else if (event === 'btrfs_done_preemptive_reclaim') preemptiveDone++;
    else if (event === 'btrfs_fail_all_tickets') failAllTickets++;
  }
  for (const folios of pending.values()) wb.other += folios.length;
  if (waits.length) tickets.waitMs = { median: median(waits), p90: quantile(waits, 0.9), max: Math.max(...waits) };
  const budgets = calls.map((c) => c.first);
  const written = calls.map((c) => c.first - c.last + 1);
  const budgetByState = {};
  for (const c of calls) (budgetByState[c.state] ??= []).push(c.first);
  return {
    flush: { runs, byState, order, n: flushEvents.length },
    tickets,
    triggers,
    preemptiveDone,
    failAllTickets,
    delalloc: {
      windows,
      emptyWindows,
      calls: calls.length,
      budgets: { n: budgets.length, median: median(budgets), max: budgets.length ? Math.max(...budgets) : null, min: budgets.length ? Math.min(...budgets) : null,
        byState: Object.fromEntries(Object.entries(budgetByState).map(([k, v]) => [k, { n: v.length, median: median(v), max: Math.max(...v) }])) },
      written: { median: median(written), max: written.length ? Math.max(...written) : null, sum: written.reduce((a, b) => a + b, 0) },
      rangeCyclic,
    },
    writeback: wb,
    events: kept,
  };
}

/** Untar-like workload on a small fresh btrfs; the kernel's reservation tickets, flush states and delalloc page budgets. */
export function measureKernelReclaim({ fsMiB = 512, files = 40000, totalMiB = 360, seed = 1, profile = 'default', traceFile = null } = {}) {
  const t0 = Date.now();
  if (!(profile in PROFILES)) throw new Error(`profile: one of ${Object.keys(PROFILES).join(', ')}`);
  tracefs();
  const dir = mkdtempSync(join(tmpdir(), 'btrfslab-seed002-'));
  const img = join(dir, 'fs.img');
  const mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  execFileSync('truncate', ['-s', `${fsMiB}M`, img]);
  const mkfsArgs = ['-q', '-f', ...PROFILES[profile]];
  execFileSync('mkfs.btrfs', [...mkfsArgs, img]);
  const fsid = execFileSync('blkid', ['-s', 'UUID', '-o', 'value', img], { encoding: 'utf8' }).trim();
  let loop = null;
  const inst = join(TRACING, 'instances', `btrfslab-seed002-${process.pid}-${t0}`);
  let mounted = false;
  let madeInst = false;
  const enabled = [];
  try {
    loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
    execFileSync('mount', ['-t', 'btrfs', loop, mnt]);
    mounted = true;
    const bdi = basename(readlinkSync(join('/sys/fs/btrfs', fsid, 'bdi')));
    mkdirSync(inst);
    madeInst = true;
    put(join(inst, 'tracing_on'), '0');
    put(join(inst, 'buffer_size_kb'), '65536');
    put(join(inst, 'trace_clock'), 'mono');
    for (const e of BTRFS_EVENTS) {
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
    const hist = join(inst, 'events', 'btrfs', 'btrfs_space_reservation', 'trigger');
    let histOn = false;
    try { put(hist, 'hist:keys=type,reserve:vals=hitcount,bytes:size=256'); histOn = true; } catch { /* no hist triggers */ }
    put(join(inst, 'tracing_on'), '1');
    const workload = JSON.parse(execFileSync('python3', ['-c', WORKLOAD, mnt, String(files), String(totalMiB * 1048576), String(seed)], { encoding: 'utf8' }).trim());
    put(join(inst, 'tracing_on'), '0');
    workload.seconds = workload.writeSeconds + workload.syncSeconds;
    let spaceReservation = null;
    if (histOn) {
      spaceReservation = {};
      for (const l of readFileSync(hist.replace(/trigger$/, 'hist'), 'utf8').split('\n')) {
        const h = l.match(/type:\s*(\S+)\s+reserve:\s*(\d+)\s+hitcount:\s*(\d+)\s+bytes:\s*(\d+)/);
        if (h) spaceReservation[`${h[1]} ${h[2] === '1' ? 'reserve' : 'release'}`] = { n: Number(h[3]), bytes: Number(h[4]) };
      }
      quiet(hist, '!hist:keys=type,reserve:vals=hitcount,bytes:size=256');
    }
    const trace = readFileSync(join(inst, 'trace'), 'utf8');
    if (traceFile) writeFileSync(traceFile, trace);
    const result = analyse(trace.split('\n'), fsid, bdi);
    let overrun = 0;
    let dropped = 0;
    for (const cpu of readdirSync(join(inst, 'per_cpu'))) {
      const st = readFileSync(join(inst, 'per_cpu', cpu, 'stats'), 'utf8');
      overrun += Number(st.match(/^overrun: (\d+)/m)?.[1] ?? 0);
      dropped += Number(st.match(/^dropped events: (\d+)/m)?.[1] ?? 0);
    }
    const df = execFileSync('btrfs', ['filesystem', 'df', '-b', mnt], { encoding: 'utf8' });
    return {
      params: { fsMiB, files, totalMiB, seed, profile, mkfs: mkfsArgs.slice(2) },
      workload,
      ...result,
      spaceReservation,
      overrun,
      dropped,
      fsDf: df.trim().split('\n'),
      seconds: (Date.now() - t0) / 1000,
    };
  } finally {
    for (const p of enabled) quiet(join(p, 'enable'), '0');
    if (madeInst) {
      quiet(join(inst, 'events', 'btrfs', 'btrfs_space_reservation', 'trigger'), '!hist:keys=type,reserve:vals=hitcount,bytes:size=256');
      spawnSync('rmdir', [inst]);
    }
    if (mounted) spawnSync('umount', [mnt]);
    if (loop) spawnSync('losetup', ['-d', loop]);
    rmSync(dir, { recursive: true, force: true });
  }
}

function summary(r) {
  const w = r.workload;
  const d = r.delalloc;
  return [
    `${r.params.fsMiB} MiB btrfs (${r.params.profile}), seed ${r.params.seed}: ${w.files} files / ${w.dirs} dirs, ${(w.bytes / 1048576).toFixed(1)} MiB in ${w.writeSeconds.toFixed(2)} s + sync ${w.syncSeconds.toFixed(2)} s; ENOSPC: ${w.enospc ? JSON.stringify(w.enospc) : 'no'}`,
    `tickets: ${r.tickets.n} ${JSON.stringify(r.tickets.byFlag)}, wait ms median ${r.tickets.waitMs?.median?.toFixed(2) ?? '-'} max ${r.tickets.waitMs?.max?.toFixed(1) ?? '-'}; triggers ${JSON.stringify(r.triggers)}`,
    `flush states (${r.flush.n}), first seen: ${r.flush.order.join(' > ')}`,
    `  ${Object.entries(r.flush.byState).map(([k, v]) => `${k} ${v.n}`).join(', ')}`,
    `delalloc flushes: ${d.windows} (${d.emptyWindows} wrote nothing), ${d.calls} writeback calls; nr_to_write median ${d.budgets.median} max ${d.budgets.max} pages; written per call median ${d.written.median} max ${d.written.max}`,
    `folios: ${JSON.stringify(r.writeback)}; overrun ${r.overrun}, dropped ${r.dropped}; ${r.seconds.toFixed(1)} s`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [fsMiB, files, totalMiB, seed] = process.argv.slice(2).map(Number);
  const r = measureKernelReclaim({ fsMiB: fsMiB || undefined, files: files || undefined, totalMiB: totalMiB || undefined, seed: Number.isFinite(seed) ? seed : undefined });
  console.log(JSON.stringify(r));
  console.error(summary(r));
}
