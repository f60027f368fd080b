// How long the kernel's ordered extent completion holds the fs tree's and the
// csum tree's leaves (issue 13: the model's finish_fs, finish_fs_page,
// finish_csum and finish_rest costs). fio-like jobs on a loop device of our
// own (withTracedBtrfs: a tracefs instance of our own, lines of our fsid
// only, trace clock x86-tsc for cycle timestamps): sequential writes of BS
// with an fsync after each (rw=write fsync=1), or random 4 KiB writes into a
// sparse file of SIZE, each block once, an fsync after every 16 (fio's
// rw=randwrite fsync=16 fallocate=none: fio ftruncates the file to its size
// and writes each block once in a random order).
//
// Each completion is a btrfs workqueue work that runs finish_ordered_fn on
// an endio-write kworker (btrfs_work_sched .. btrfs_all_work_done on one
// pid, with btrfs_ordered_extent_remove inside). Within it, each tree block
// write-locked (btrfs_tree_lock) is held until its btrfs_tree_unlock by the
// same pid; a tree's leaf is the block held longest (the descent locks the
// root and nodes, then lets them go once the leaf is locked). Timestamps are
// TSC ticks, converted to ns with the rate fitted (least squares) from the
// lock events' end_ns fields (ktime_get_ns when the lock was taken).
//
// With `ordered` each fsync is preceded by FS_IOC_FIEMAP with FIEMAP_FLAG_SYNC
// over one byte, which waits for the file's ordered extents (the kernel's
// wait before seed 003: fsync_wait=ordered); without, fsync waits for the
// writeback only (since 5.10); `control` calls the same FIEMAP after each fsync,
// when there is nothing to wait for (its own cost, to set against ordered's).
//
// Run (root): node tests/kernel/seed003-locks.mjs [seq|rand] [jobs] [MiB a job] [writeback|ordered|control|both]
// (both: throughput only, ordered against control, 3 runs each, alternately).
import { fileURLToPath } from 'node:url';
import { runFio, withTracedBtrfs } from './seed003-measure.mjs';
import { fitTscRate } from './trace-clock.mjs';

const EVENTS = ['btrfs_tree_lock', 'btrfs_tree_unlock', 'btrfs_tree_read_lock', 'btrfs_tree_read_unlock', 'btrfs_work_sched',
  'btrfs_all_work_done', 'btrfs_ordered_extent_add', 'btrfs_ordered_extent_remove', 'btrfs_finish_ordered_extent', 'btrfs_sync_file',
  'btrfs_ordered_extent_lookup_for_logging'];

const LINE = /^\s*(.+)-(\d+)\s+\[\d+\].*?\s(\d+):\s+(btrfs_\w+):\s+[0-9a-f-]+:\s?(.*)$/;
const field = (rest, k) => rest.match(new RegExp(`(?:^|\\s)${k}=(\\S+)`))?.[1];

const quantile = (xs, q) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The completions found in a trace's lines: for each, the ordered extent's
 * length, the work's duration, and per tree (owner) the longest write-lock
 * hold, the time from its first lock to its last unlock, and the waits. */
export function completions(lines) {
  const events = [];
  for (const l of lines) {
    const m = l.match(LINE);
    if (m) events.push({ comm: m[1], pid: Number(m[2]), t: Number(m[3]), ev: m[4], rest: m[5] });
  }
  const pairs = events.filter((e) => e.ev === 'btrfs_tree_lock' || e.ev === 'btrfs_tree_read_lock')
    .map((e) => [Number(field(e.rest, 'end_ns')), e.t]);
  const [rate, a] = fitTscRate(pairs) ?? [NaN, NaN]; // (no lock traced: no figures)
  const ns = (ticks) => ticks / rate;
  // contended write locks of the fs and csum trees: how long after the holder's unlock the waiter had the lock
  // (a waiter that spins on a running owner has it at once; one that slept, after its wakeup)
  const lastUnlock = new Map(), handoffs = { 5: [], 7: [] };
  for (const e of events) {
    if (e.ev === 'btrfs_tree_unlock') lastUnlock.set(field(e.rest, 'block'), { pid: e.pid, ns: (e.t - a) / rate });
    else if (e.ev === 'btrfs_tree_lock' && Number(field(e.rest, 'diff_ns')) > 500) {
      const owner = Number(field(e.rest, 'owner')), u = lastUnlock.get(field(e.rest, 'block'));
      const start = Number(field(e.rest, 'start_ns')), end = Number(field(e.rest, 'end_ns'));
      if (handoffs[owner] && u && u.pid !== e.pid && u.ns >= start && u.ns <= end + 200) handoffs[owner].push(end - u.ns);
    }
  }
  const open = new Map(); // pid -> the work under way
  const done = [];
  for (const e of events) {
    let w = open.get(e.pid);
    if (e.ev === 'btrfs_work_sched') {
      open.set(e.pid, { start: e.t, func: field(e.rest, 'func'), locks: new Map(), trees: {}, len: 0, removes: 0 });
      continue;
    }
    if (!w) continue;
    if (e.ev === 'btrfs_all_work_done') {
      if (w.removes) {
        const fs = w.trees[5], csum = w.trees[7];
        // the work's phases: before the fs tree, the fs tree (first lock to last unlock), between, the csum tree, after
        const phases = fs && csum && fs.last <= csum.first
          ? [fs.first - w.start, fs.last - fs.first, csum.first - fs.last, csum.last - csum.first, e.t - csum.last].map(ns) : null;
        done.push({ len: w.len, removes: w.removes, ns: ns(e.t - w.start), trees: w.trees, func: w.func, phases });
      }
      open.delete(e.pid);
    } else if (e.ev === 'btrfs_ordered_extent_remove') {
      w.len += Number(field(e.rest, 'len'));
      w.removes++;
    } else if (e.ev === 'btrfs_tree_lock' || e.ev === 'btrfs_tree_read_lock') {
      const owner = Number(field(e.rest, 'owner'));
      const tr = (w.trees[owner] ??= { first: e.t, last: e.t, hold: 0, wait: 0, locks: 0, reads: 0 });
      tr.wait += Number(field(e.rest, 'diff_ns'));
      if (e.ev === 'btrfs_tree_lock') tr.locks++;
      else tr.reads++;
      w.locks.set(`${e.ev === 'btrfs_tree_lock' ? 'w' : 'r'}${field(e.rest, 'block')}`, e.t);
    } else if (e.ev === 'btrfs_tree_unlock' || e.ev === 'btrfs_tree_read_unlock') {
      const key = `${e.ev === 'btrfs_tree_unlock' ? 'w' : 'r'}${field(e.rest, 'block')}`;
      const t0 = w.locks.get(key);
      if (t0 === undefined) continue;
      w.locks.delete(key);
      const tr = w.trees[Number(field(e.rest, 'owner'))];
      if (!tr) continue;
      tr.last = e.t;
      if (key[0] === 'w') tr.hold = Math.max(tr.hold, ns(e.t - t0));
    }
  }
  for (const c of done)
    for (const tr of Object.values(c.trees)) tr.span = ns(tr.last - tr.first);
  // per fsync (btrfs_sync_file to the next): from the first and the last ordered extent's I/O end
  // (btrfs_finish_ordered_extent) to the last completion's end (btrfs_ordered_extent_remove): what an fsync
  // that waits for ordered extents waits beyond the writeback
  const batches = [];
  let cur = null;
  for (const e of events) {
    if (e.ev === 'btrfs_sync_file') {
      if (cur && cur.ends.length && cur.removes.length) batches.push(cur);
      cur = { start: e.t, adds: [], ends: [], removes: [] };
    } else if (cur && e.ev === 'btrfs_ordered_extent_add') cur.adds.push(e.t);
    else if (cur && e.ev === 'btrfs_finish_ordered_extent') cur.ends.push(e.t);
    else if (cur && e.ev === 'btrfs_ordered_extent_remove') cur.removes.push(e.t);
  }
  // and the writeback's pace: from the fsync's start to its first ordered extent, and between its ordered extents
  // (each one an extent reserved, its ordered extent made, its pages' bio built: cow_file_range's loop)
  const tails = batches.map((b) => ({
    n: b.removes.length, tail: ns(Math.max(...b.removes) - Math.max(...b.ends)), batch: ns(Math.max(...b.removes) - Math.min(...b.ends)),
    firstAdd: b.adds.length ? ns(b.adds[0] - b.start) : NaN, addGap: b.adds.length > 1 ? ns(b.adds[b.adds.length - 1] - b.adds[0]) / (b.adds.length - 1) : NaN,
    lastAddToEnd: b.adds.length ? ns(Math.max(...b.ends) - b.adds[b.adds.length - 1]) : NaN,
  }));
  return { rate, completions: done, handoffs, tails };
}

/** The kernel's completions for one workload, summarised by extent length (us). */
export function measureLocks({ mode = 'rand', jobs = 1, size = 16 << 20, wait = 'writeback', trace = true }) {
  const bs = mode === 'rand' ? 4096 : 65536, every = mode === 'rand' ? 16 : 1;
  const { result: seconds, lines, overrun } = withTracedBtrfs({ bytes: jobs * size, events: trace ? EVENTS : ['btrfs_sync_file', 'btrfs_ordered_extent_lookup_for_logging'], clock: 'x86-tsc', tag: 'seed003-locks' },
    (mnt) => runFio(mnt, { jobs, size, bs, every, order: mode, wait }));
  const { rate, completions: cs, handoffs, tails } = completions(lines);
  const byLen = {};
  for (const c of cs) (byLen[c.len] ??= []).push(c);
  const us = (x) => Math.round(x / 100) / 10;
  const summary = {};
  for (const [len, list] of Object.entries(byLen)) {
    const tree = (owner, k) => list.map((c) => c.trees[owner]?.[k]).filter((x) => x !== undefined);
    const row = { n: list.length, work: { p50: us(quantile(list.map((c) => c.ns), 0.5)), mean: us(mean(list.map((c) => c.ns))) } };
    const ph = list.map((c) => c.phases).filter(Boolean);
    if (ph.length)
      row.phasesP50 = Object.fromEntries(['beforeFs', 'fs', 'between', 'csum', 'after'].map((k, i) => [k, us(quantile(ph.map((p) => p[i]), 0.5))]));
    for (const [name, owner] of [['fs', 5], ['csum', 7], ['extent', 2], ['root', 1]]) {
      const hold = tree(owner, 'hold'), span = tree(owner, 'span'), wait = tree(owner, 'wait');
      if (!hold.length) continue;
      row[name] = {
        n: hold.length, holdP10: us(quantile(hold, 0.1)), holdP50: us(quantile(hold, 0.5)), holdMean: us(mean(hold)),
        spanP50: us(quantile(span, 0.5)), waitP50: us(quantile(wait, 0.5)), waitMean: us(mean(wait)),
        locks: mean(tree(owner, 'locks')), reads: mean(tree(owner, 'reads')),
      };
    }
    summary[len] = row;
  }
  const handoff = Object.fromEntries(Object.entries(handoffs).map(([o, xs]) =>
    [o === '5' ? 'fs' : 'csum', { n: xs.length, p50: us(quantile(xs, 0.5)), p90: us(quantile(xs, 0.9)), mean: us(mean(xs)) }]));
  const tail = { n: tails.length, oesP50: quantile(tails.map((t) => t.n), 0.5), tailP50: us(quantile(tails.map((t) => t.tail), 0.5)),
    tailMean: us(mean(tails.map((t) => t.tail))), batchP50: us(quantile(tails.map((t) => t.batch), 0.5)),
    firstAddP50: us(quantile(tails.map((t) => t.firstAdd).filter((x) => x === x), 0.5)),
    addGapP50: us(quantile(tails.map((t) => t.addGap).filter((x) => x === x), 0.5)),
    lastAddToIoEndP50: us(quantile(tails.map((t) => t.lastAddToEnd).filter((x) => x === x), 0.5)) };
  const loggedInFlight = lines.filter((l) => l.includes(' btrfs_ordered_extent_lookup_for_logging: ')).length;
  return { mode, wait, jobs, size, seconds, loggedInFlight, handoff, tail, MiBps: (jobs * size) / 1048576 / seconds, ticksPerNs: rate, overrun, lines: lines.length, byLen: summary };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [mode = 'rand', jobs = '1', mib = '16', wait = 'writeback'] = process.argv.slice(2);
  if (wait === 'both') {
    // throughput only (no lock events traced), the two waits alternately, 3 runs each: the change's after/before
    // (after: fsync waiting for the writeback, the FIEMAP called after it)
    const runs = { ordered: [], writeback: [] };
    for (let i = 0; i < 3; i++)
      for (const w of ['ordered', 'control']) runs[w === 'control' ? 'writeback' : w].push(measureLocks({ mode, jobs: Number(jobs), size: Number(mib) << 20, wait: w, trace: false }).MiBps);
    const [b, a] = [quantile(runs.ordered, 0.5), quantile(runs.writeback, 0.5)];
    console.log(JSON.stringify({ mode, jobs: Number(jobs), mib: Number(mib), ordered: runs.ordered.map((x) => +x.toFixed(1)), writeback: runs.writeback.map((x) => +x.toFixed(1)), change: `${((a / b - 1) * 100).toFixed(1)}%` }));
  } else console.log(JSON.stringify(measureLocks({ mode, jobs: Number(jobs), size: Number(mib) << 20, wait }), null, 1));
}
