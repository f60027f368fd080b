// Seed 001 ("btrfs: only copy dir index keys when logging a directory",
// /work/shared/seeds/001-only-copy-dir-index-keys-when-logging.txt), run in
// the kernel: a directory of N new empty files is fsynced; after a commit,
// D of them are deleted and the directory is fsynced again. Each fsync is
// timed, the image is copied while mounted (the copy holds the pending
// log), and the log tree in each copy is counted: items per key type,
// leaves, nodes, level.
//
// The fsync is timed in the process that calls it: python3 opens testdir
// O_RDONLY and calls fsync(2) on it, which is what `xfs_io -c fsync testdir`
// does; ms is the fsync(2) call alone, wallMs the whole process (start-up
// included), which is what the seed's `date +%s%N` around xfs_io measured.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import assert from 'node:assert/strict';
import { CLI, run, withMount } from './lib.mjs';
import { countLogItems, createLogCounter } from './log-items.mjs';

export { countLogItems };

// Sparse, so its size costs nothing; 4 GiB because mkfs.btrfs then makes a
// 256 MiB metadata block group. At 1 GiB it makes 51 MiB, and 100,000 new
// inodes plus their log outgrow it: the kernel allocates a metadata block
// group during the fsync, and an fsync in a transaction that made a block
// group commits the transaction instead of logging, leaving no log to count.
const SIZE = '4G';

const CREATE = `
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
t = time.perf_counter()
for i in range(1, n + 1):
    os.close(os.open(f'{d}/file_{i}', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
print((time.perf_counter() - t) * 1000)
`;

// every (N/D)-th file from file_1: the seed's  for ((i = 1; i <= N; i += N/D))
const DELETE = `
import os, sys, time
d, n, step = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
t = time.perf_counter()
k = 0
for i in range(1, n + 1, step):
    os.unlink(f'{d}/file_{i}')
    k += 1
print((time.perf_counter() - t) * 1000, k)
`;

const FSYNC = `
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
t = time.perf_counter()
os.fsync(fd)
dt = time.perf_counter() - t
os.close(fd)
print(dt * 1000)
`;

// the interpreter itself, not a launcher script in front of it (pyenv's shim costs ~40 ms a call)
const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
const py = (code, args) => execFileSync(PYTHON, ['-c', code, ...args.map(String)], { encoding: 'utf8' }).trim();
const round = (ms) => Math.round(ms * 1000) / 1000;

function timedFsync(path) {
  const t0 = process.hrtime.bigint();
  const ms = Number(py(FSYNC, [path]));
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  return { ms: round(ms), wallMs: round(wallMs) };
}

/** The superblock fields this measurement reports. */
function superOf(img) {
  const text = run('btrfs', ['inspect-internal', 'dump-super', img]);
  const field = (name) => {
    const m = new RegExp(`^${name}\\s+(\\d+)`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  return { generation: field('generation'), logRoot: field('log_root'), logRootLevel: field('log_root_level'), nodesize: field('nodesize') };
}

/** createLogCounter() over `btrfs inspect-internal dump-tree img`, streamed (the dump of 100,000 files is large). */
export function countImageLog(img) {
  return new Promise((resolve, reject) => {
    const p = spawn('btrfs', ['inspect-internal', 'dump-tree', img], { stdio: ['ignore', 'pipe', 'pipe'] });
    const c = createLogCounter();
    let err = '';
    p.stderr.on('data', (b) => { err += b; });
    createInterface({ input: p.stdout, crlfDelay: Infinity }).on('line', (l) => c.feed(l));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(c.result()) : reject(new Error(`dump-tree ${img} exited ${code}: ${err}`))));
  });
}

/** The figures of one capture: its subvolume log tree (root 5) and superblock. */
async function measure(img, timing, before) {
  const sb = superOf(img);
  const log = await countImageLog(img);
  const fs = log.trees['5'] ?? { items: {}, leaves: 0, nodes: 0, level: 0 };
  return {
    ...timing,
    items: fs.items,
    leaves: fs.leaves,
    nodes: fs.nodes,
    level: fs.level,
    logRootTree: { leaves: log.logRootTree.leaves, nodes: log.logRootTree.nodes },
    hasLog: sb.logRoot !== 0,
    logRootLevel: sb.logRootLevel,
    // commits between the last sync and the copy; 0 means the fsync logged
    // everything since that sync (a commit wipes the log of what it wrote)
    commits: sb.generation - before,
  };
}

/**
 * Runs the seed's experiment in the kernel for N new files and D deletions.
 * Returns { N, D, kernel, imageSize, nodesize, create: {ms, wallMs, items,
 * leaves, nodes, level, hasLog, commits, ...}, delete: {...} }. opts.dir:
 * where the images go (removed afterwards unless opts.keep); opts.size: the
 * image size (default 4G).
 */
export async function kernelSeed001(N, D, opts = {}) {
  if (!(N > 0 && D > 0 && N % D === 0)) throw new Error(`kernelSeed001: N (${N}) must be a positive multiple of D (${D})`);
  const work = mkdtempSync(join(opts.dir ?? tmpdir(), 'btrfslab-seed001-'));
  try {
    const img = join(work, 'fs.img');
    const capA = join(work, 'create.img');
    const capB = join(work, 'delete.img');
    run('truncate', ['-s', opts.size ?? SIZE, img]);
    run('mkfs.btrfs', ['-q', '-f', img]);
    let genA, genB, create, del;
    await withMount(img, (mnt) => {
      const dir = join(mnt, 'testdir');
      run('mkdir', [dir]);
      run('sync', []);
      genA = superOf(img).generation;
      const createMs = Number(py(CREATE, [dir, N]));
      create = { createFilesMs: round(createMs), ...timedFsync(dir) };
      run('cp', ['--sparse=always', img, capA]);
      run('sync', []);
      genB = superOf(img).generation;
      const [deleteMs, deleted] = py(DELETE, [dir, N, N / D]).split(' ').map(Number);
      if (deleted !== D) throw new Error(`kernelSeed001: deleted ${deleted} files, not ${D}`);
      del = { deleteFilesMs: round(deleteMs), ...timedFsync(dir) };
      run('cp', ['--sparse=always', img, capB]);
    }, { options: ['commit=600'] });
    return {
      N,
      D,
      kernel: run('uname', ['-r']).trim(),
      imageSize: opts.size ?? SIZE,
      nodesize: superOf(capA).nodesize,
      create: await measure(capA, create, genA),
      delete: await measure(capB, del, genB),
    };
  } finally {
    if (!opts.keep) rmSync(work, { recursive: true, force: true });
  }
}

/** The seed's script in the scenario language, for the core in dir_logging mode. */
export function seedScript(N, D, mode) {
  const l = ['mkfs size=4G', `set dir_logging=${mode}`, 'mkdir /testdir', 'commit', `create /testdir/file_{1..${N}}`,
    'fsync /testdir', 'commit'];
  for (let i = 1; i <= N; i += N / D) l.push(`unlink /testdir/file_${i}`);
  l.push('fsync /testdir', 'crash');
  return l.join('\n') + '\n';
}

/** The seed's experiment run by the core (btrfslab run --metrics) in mode: its two fsyncs' metrics, { create, delete }. */
export function modelSeed001(N, D, mode, dir) {
  const script = join(dir, `seed-${N}-${mode}.txt`);
  writeFileSync(script, seedScript(N, D, mode));
  const m = JSON.parse(execFileSync(CLI, ['run', script, '--metrics', '-'], { encoding: 'utf8', maxBuffer: 1 << 26 }));
  assert.equal(m.fsyncs.length, 2);
  for (const f of m.fsyncs) assert.equal(f.result, 'logged', `N=${N} ${mode}: fsync at line ${f.line} did not log`);
  return { create: m.fsyncs[0], delete: m.fsyncs[1] };
}
