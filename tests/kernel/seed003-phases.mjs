// Where an fsync's time goes in the kernel, for seed 003's two workloads
// (issue 13: the model's log_extent row, and what it leaves out): fio-like
// jobs (seed003-measure.mjs runFio: sequential BS writes, or random 4 KiB
// writes into a sparse file, an fsync every EVERY) on a loop device of our
// own, with a tracefs instance of our own (btrfs events of our fsid, block
// requests of our device, trace clock local: microseconds). Each fsync, from its
// btrfs_sync_file to the next one of the same task, is cut into phases:
//   writeback   to its data bio's issue (extents reserved, ordered extents made)
//   io          to that bio's completion
//   endio       to the last btrfs_finish_ordered_extent of its extents (the
//               workers ending the pages' writeback: what fsync waits for)
//   log         from its first log tree COW to its first log block write
//               (logging the inode and its extents into the log tree)
//   log write   to the last log block write's completion
//   tail        from the log write's end to the superblock's flush completing
// and the medians printed with the number of extents an fsync logs.
// Run (root): node tests/kernel/seed003-phases.mjs [seq|rand] [EVERY] [MiB] [BS]
import { fileURLToPath } from 'node:url';
import { runFio, withTracedBtrfs } from './seed003-measure.mjs';

const EVENTS = ['btrfs_sync_file', 'btrfs_ordered_extent_add', 'btrfs_finish_ordered_extent', 'btrfs_cow_block'];
const LINE = /^\s*(.+)-(\d+)\s+\[\d+\].*?\s(\d+\.\d+):\s+(\w+):\s+(.*)$/;

const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? s[s.length >> 1] : NaN;
};

/** The phases of each fsync in a trace's lines, in microseconds. */
export function fsyncPhases(lines) {
  const ev = [];
  for (const l of lines) {
    const m = l.match(LINE);
    if (m) ev.push({ comm: m[1], pid: Number(m[2]), t: Number(m[3]) * 1e6, name: m[4], rest: m[5] });
  }
  const starts = ev.filter((e) => e.name === 'btrfs_sync_file');
  const out = [];
  for (let i = 0; i < starts.length; i++) {
    const s = starts[i];
    const next = starts.slice(i + 1).find((e) => e.pid === s.pid);
    const end = next ? next.t : Infinity;
    const win = ev.filter((e) => e.t >= s.t && e.t < end);
    const adds = win.filter((e) => e.name === 'btrfs_ordered_extent_add' && e.pid === s.pid);
    // requests: data writes ("WS" with sectors), log blocks ("WSM" 16 KiB), the superblock's flush ("FF")
    const dataIssue = win.find((e) => e.name === 'block_rq_issue' && / WS \d+ \(\) \d+ \+ \d+/.test(e.rest) && !/ WS 0 /.test(e.rest));
    const sector = dataIssue?.rest.match(/\(\) (\d+) \+/)?.[1];
    const dataDone = sector && win.find((e) => e.name === 'block_rq_complete' && e.rest.includes(`() ${sector} +`));
    const finished = win.filter((e) => e.name === 'btrfs_finish_ordered_extent');
    const cow = win.find((e) => e.name === 'btrfs_cow_block' && e.pid === s.pid && /TREE_LOG/.test(e.rest));
    const logIssues = win.filter((e) => e.name === 'block_rq_issue' && / WSM 16384 /.test(e.rest) && e.t > (cow?.t ?? Infinity));
    const logSectors = new Set(logIssues.map((e) => e.rest.match(/\(\) (\d+) \+/)?.[1]));
    const logDone = win.filter((e) => e.name === 'block_rq_complete' && / WSM \(\) (\d+) \+/.test(e.rest) && logSectors.has(e.rest.match(/\(\) (\d+) \+/)[1]));
    const flushDone = win.filter((e) => e.name === 'block_rq_complete' && / FF /.test(e.rest)).at(-1);
    if (!dataIssue || !cow || !logIssues.length) continue;
    out.push({
      extents: adds.length,
      writeback: dataIssue.t - s.t,
      io: dataDone ? dataDone.t - dataIssue.t : NaN,
      endio: dataDone && finished.length ? finished.at(-1).t - dataDone.t : NaN,
      log: logIssues[0].t - cow.t,
      logWrite: logDone.length ? logDone.at(-1).t - logIssues[0].t : NaN,
      tail: flushDone && logDone.length ? flushDone.t - logDone.at(-1).t : NaN,
      cows: win.filter((e) => e.name === 'btrfs_cow_block' && e.pid === s.pid && /TREE_LOG/.test(e.rest)).length,
    });
  }
  return out;
}

/** One job of `order` writes (bs bytes, an fsync every `every`) over `mib` MiB: the medians of its fsyncs' phases. */
export function measurePhases({ order = 'rand', every = 16, mib = 16, bs = order === 'rand' ? 4096 : 65536 }) {
  const size = mib << 20;
  const { lines, overrun } = withTracedBtrfs({ bytes: size, events: EVENTS, clock: 'local', tag: 'seed003-phases', block: true },
    (mnt) => runFio(mnt, { jobs: 1, size, bs, every, order }));
  const phases = fsyncPhases(lines);
  const keys = ['extents', 'writeback', 'io', 'endio', 'log', 'logWrite', 'tail', 'cows'];
  return { order, every, bs, fsyncs: phases.length, overrun, ...Object.fromEntries(keys.map((k) => [k, +median(phases.map((p) => p[k])).toFixed(1)])) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [order = 'rand', every = '16', mib = '16', bs] = process.argv.slice(2);
  console.log(JSON.stringify(measurePhases({ order, every: Number(every), mib: Number(mib), bs: bs ? Number(bs) : undefined })));
}
