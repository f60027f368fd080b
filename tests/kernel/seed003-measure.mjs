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
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TRACING = '/sys/kernel/tracing';
const BLOCK_EVENTS = ['block_rq_issue', 'block_rq_complete'];
const EVENTS = ['btrfs_ordered_extent_add', 'btrfs_finish_ordered_extent', 'btrfs_ordered_extent_lookup_for_logging', 'btrfs_sync_file'];

// The fio-like jobs, in one Python program: each job writes its own file in
// BS pwrites, sequentially (seq) or in a random order over a sparse file of
// SIZE (rand: fio's rw=randwrite fallocate=none, each block once), with an
// fsync after every EVERY; WAIT `ordered` precedes each fsync with
// FS_IOC_FIEMAP + FIEMAP_FLAG_SYNC over one byte (btrfs writes the file back
// and waits for its ordered extents, as fsync did before seed 003),
// `control` calls the same after each fsync (its own cost, to set against
// ordered's), `writeback` neither. Prints the seconds all jobs took.
export const FIO_WORKLOAD = `
import os, sys, time, random, fcntl, struct
d, jobs, size, bs, every, rnd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == 'rand'
wait, control = sys.argv[7] == 'ordered', sys.argv[7] == 'control'
buf = os.urandom(bs)
FIEMAP = struct.pack('QQIIII', 0, 1, 1, 0, 0, 0)
pids = []
t0 = time.monotonic()
for j in range(jobs):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.path.join(d, 'job%d' % j), os.O_CREAT | os.O_WRONLY, 0o644)
        offs = list(range(0, size, bs))
        if rnd:
            os.ftruncate(fd, size)
            random.Random(3 + j).shuffle(offs)
        for i, off in enumerate(offs):
            os.pwrite(fd, buf, off)
            if (i + 1) % every == 0:
                if wait:
                    fcntl.ioctl(fd, 0xC020660B, bytearray(FIEMAP))
                os.fsync(fd)
                if control:
                    fcntl.ioctl(fd, 0xC020660B, bytearray(FIEMAP))
        os.close(fd)
        os._exit(0)
    pids.append(pid)
for p in pids:
    os.waitpid(p, 0)
print(time.monotonic() - t0)
`;

/** Runs FIO_WORKLOAD in dir: its seconds. */
export function runFio(dir, { jobs, size, bs, every = 1, order = 'seq', wait = 'writeback' }) {
  return Number(execFileSync('python3', ['-c', FIO_WORKLOAD, dir, String(jobs), String(size), String(bs), String(every), order, wait], { encoding: 'utf8' }).trim());
}

function tracefs() {
  if (!existsSync(join(TRACING, 'events'))) execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACING]);
}

/** Runs `work(mnt)` on a fresh btrfs on a loop device of our own, with a
 * tracefs instance of our own tracing `events` (btrfs's) in trace clock
 * `clock`, and with `block` the block layer's requests to that loop device;
 * returns work's result, the trace's lines of our filesystem (by its fsid)
 * or device, and the events the ring buffer lost. The instance, the mount
 * and the loop device go even when something fails. */
export function withTracedBtrfs({ bytes, events, clock = 'local', tag = 'seed003', block = false }, work) {
  tracefs();
  const dir = mkdtempSync(join(tmpdir(), `btrfslab-${tag}-`));
  const img = join(dir, 'fs.img');
  const mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  let loop = null;
  const inst = join(TRACING, 'instances', `btrfslab-${tag}-${process.pid}`);
  let mounted = false;
  try {
    execFileSync('truncate', ['-s', String(Math.max(1 << 30, bytes * 3)), img]);
    execFileSync('mkfs.btrfs', ['-q', '-f', img]);
    const fsid = execFileSync('blkid', ['-s', 'UUID', '-o', 'value', img], { encoding: 'utf8' }).trim();
    loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
    execFileSync('mount', ['-t', 'btrfs', loop, mnt]);
    mounted = true;
    mkdirSync(inst);
    writeFileSync(join(inst, 'buffer_size_kb'), '65536');
    writeFileSync(join(inst, 'trace_clock'), clock);
    for (const e of events) writeFileSync(join(inst, 'events', 'btrfs', e, 'enable'), '1');
    if (block) {
      // the block layer's requests, of our loop device only (filtered by its dev_t in the kernel)
      const [major, minor] = readFileSync(`/sys/block/${loop.replace('/dev/', '')}/dev`, 'utf8').trim().split(':').map(Number);
      for (const e of BLOCK_EVENTS) {
        writeFileSync(join(inst, 'events', 'block', e, 'filter'), `dev == ${(major << 20) | minor}`);
        writeFileSync(join(inst, 'events', 'block', e, 'enable'), '1');
      }
    }
    writeFileSync(join(inst, 'tracing_on'), '1');
    const result = work(mnt);
    writeFileSync(join(inst, 'tracing_on'), '0');
    const lines = readFileSync(join(inst, 'trace'), 'utf8').split('\n')
      .filter((l) => l.includes(fsid) || (block && / block_rq_(issue|complete): /.test(l))); // ours only
    let overrun = 0;
    for (const cpu of readdirSync(join(inst, 'per_cpu')))
      overrun += Number(readFileSync(join(inst, 'per_cpu', cpu, 'stats'), 'utf8').match(/overrun: (\d+)/)?.[1] ?? 0);
    return { result, lines, overrun };
  } finally {
    if (existsSync(inst)) {
      for (const e of events) spawnSync('sh', ['-c', `echo 0 > ${join(inst, 'events', 'btrfs', e, 'enable')}`]);
      if (block) for (const e of BLOCK_EVENTS) spawnSync('sh', ['-c', `echo 0 > ${join(inst, 'events', 'block', e, 'enable')}`]);
      spawnSync('rmdir', [inst]);
    }
    if (mounted) spawnSync('umount', [mnt]);
    if (loop) spawnSync('losetup', ['-d', loop]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The kernel's counts and throughput for `jobs` jobs of `size` bytes each in `bs` writes, fsync after each. */
export function measureKernel({ jobs, size = 16 << 20, bs = 64 << 10 }) {
  const { result: seconds, lines, overrun } = withTracedBtrfs({ bytes: jobs * size, events: EVENTS }, (mnt) => runFio(mnt, { jobs, size, bs }));
  const counts = Object.fromEntries(EVENTS.map((e) => [e, 0]));
  for (const line of lines) {
    const m = line.match(/ (btrfs_\w+): /);
    if (m && m[1] in counts) counts[m[1]]++;
  }
  return { jobs, size, bs, fsyncs: jobs * Math.ceil(size / bs), seconds, MiBps: (jobs * size) / 1048576 / seconds, counts, overrun };
}

const DEVICE = `
import os, sys, time, json, mmap
fd = os.open(sys.argv[1], os.O_RDWR | os.O_DIRECT)
big, small = mmap.mmap(-1, 65536), mmap.mmap(-1, 4096)
big.write(os.urandom(65536)); small.write(os.urandom(4096))
w, f, o = [], [], []
off = 64 << 20
for i in range(int(sys.argv[2])):
    t0 = time.monotonic_ns(); os.pwrite(fd, big, off); t1 = time.monotonic_ns(); os.fdatasync(fd); t2 = time.monotonic_ns()
    w.append(t1 - t0); f.append(t2 - t1); off += 65536
    t0 = time.monotonic_ns(); os.pwrite(fd, small, 65536); os.fdatasync(fd); o.append(time.monotonic_ns() - t0)
p50 = lambda xs: sorted(xs)[len(xs) // 2]
print(json.dumps({"write64kNs": p50(w), "flushNs": p50(f), "fuaNs": p50(o)}))
`;

/** This machine's loop device as the model's device fields, measured on a
 * loop device of our own (O_DIRECT, QD1, medians): a 64 KiB write to new
 * space, a flush after it (fdatasync of the device: REQ_OP_FLUSH, an fsync
 * of the backing file), and a 4 KiB overwrite with a flush (what a FUA
 * superblock write is on a loop device). */
export function measureLoopDevice({ n = 200 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'btrfslab-loopdev-'));
  const img = join(dir, 'dev.img');
  execFileSync('truncate', ['-s', String(1 << 30), img]);
  const loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
  try {
    return JSON.parse(execFileSync('python3', ['-c', DEVICE, loop, String(n)], { encoding: 'utf8' }).trim());
  } finally {
    spawnSync('losetup', ['-d', loop]);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'device') {
    console.log(JSON.stringify(measureLoopDevice()));
    process.exit(0);
  }
  const jobs = process.argv.slice(2).map(Number);
  for (const j of jobs.length ? jobs : [1, 4, 8]) console.log(JSON.stringify(measureKernel({ jobs: j })));
}
