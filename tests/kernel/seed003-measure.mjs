// Seed 003's workload in the kernel, measured (the oracle side of issue 13):
// N jobs, each writing its own file sequentially in BS pwrites with an fsync
// after each (fio's rw=write fsync=1), on a fresh btrfs on a loop device of
// our own. A tracefs instance of our own counts, for our filesystem only (by
// its fsid: other work may trace too), the ordered extents added and
// finished, the fsyncs, and the lookups of in-flight ordered extents for
// logging (fast fsyncs that logged one: seed 003's "after"). Throughput is
// bytes over wall time. Run: node tests/kernel/seed003-measure.mjs [jobs...]
// (root; mounts tracefs if it is not mounted).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TRACING = '/sys/kernel/tracing';
const EVENTS = ['btrfs_ordered_extent_add', 'btrfs_finish_ordered_extent', 'btrfs_ordered_extent_lookup_for_logging', 'btrfs_sync_file'];

const WORKLOAD = `
import os, sys, time
d, jobs, size, bs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
buf = os.urandom(bs)
pids = []
t0 = time.monotonic()
for j in range(jobs):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.path.join(d, 'job%d' % j), os.O_CREAT | os.O_WRONLY, 0o644)
        for off in range(0, size, bs):
            os.pwrite(fd, buf, off)
            os.fsync(fd)
        os.close(fd)
        os._exit(0)
    pids.append(pid)
for p in pids:
    os.waitpid(p, 0)
print(time.monotonic() - t0)
`;

function tracefs() {
  if (!existsSync(join(TRACING, 'events'))) execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACING]);
}

/** The kernel's counts and throughput for `jobs` jobs of `size` bytes each in `bs` writes, fsync after each. */
export function measureKernel({ jobs, size = 16 << 20, bs = 64 << 10 }) {
  tracefs();
  const dir = mkdtempSync(join(tmpdir(), 'btrfslab-seed003-'));
  const img = join(dir, 'fs.img');
  const mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  execFileSync('truncate', ['-s', String(Math.max(1 << 30, jobs * size * 3)), img]);
  execFileSync('mkfs.btrfs', ['-q', '-f', img]);
  const fsid = execFileSync('blkid', ['-s', 'UUID', '-o', 'value', img], { encoding: 'utf8' }).trim();
  const loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
  const inst = join(TRACING, 'instances', `btrfslab-seed003-${process.pid}`);
  let mounted = false;
  try {
    execFileSync('mount', ['-t', 'btrfs', loop, mnt]);
    mounted = true;
    mkdirSync(inst);
    writeFileSync(join(inst, 'buffer_size_kb'), '65536');
    for (const e of EVENTS) writeFileSync(join(inst, 'events', 'btrfs', e, 'enable'), '1');
    writeFileSync(join(inst, 'tracing_on'), '1');
    const seconds = Number(execFileSync('python3', ['-c', WORKLOAD, mnt, String(jobs), String(size), String(bs)], { encoding: 'utf8' }).trim());
    writeFileSync(join(inst, 'tracing_on'), '0');
    const counts = Object.fromEntries(EVENTS.map((e) => [e, 0]));
    for (const line of readFileSync(join(inst, 'trace'), 'utf8').split('\n')) {
      if (!line.includes(fsid)) continue; // ours only
      const m = line.match(/ (btrfs_\w+): /);
      if (m && m[1] in counts) counts[m[1]]++;
    }
    const lost = readFileSync(join(inst, 'per_cpu', 'cpu0', 'stats'), 'utf8').match(/overrun: (\d+)/)?.[1];
    return { jobs, size, bs, fsyncs: jobs * Math.ceil(size / bs), seconds, MiBps: (jobs * size) / 1048576 / seconds, counts, overrun: Number(lost ?? 0) };
  } finally {
    if (existsSync(inst)) {
      for (const e of EVENTS) spawnSync('sh', ['-c', `echo 0 > ${join(inst, 'events', 'btrfs', e, 'enable')}`]);
      spawnSync('rmdir', [inst]);
    }
    if (mounted) spawnSync('umount', [mnt]);
    spawnSync('losetup', ['-d', loop]);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const jobs = process.argv.slice(2).map(Number);
  for (const j of jobs.length ? jobs : [1, 4, 8]) console.log(JSON.stringify(measureKernel({ jobs: j })));
}
