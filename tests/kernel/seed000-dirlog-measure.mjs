// Seed 000's bonnie++ delete phases in the kernel: how many fs tree leaves of
// the running transaction a directory fsync read-locks, after an unlink in
// index order (bonnie++'s sequential delete: readdir order) and in random
// order, beside the leaves btrfslab's model copies from for the same work.
// Before seed 000's change each fs leaf logging copies from is cloned (an
// extent buffer allocated) while read-locked; the kernel's reads bound those
// clones from above (they also count the leaf btrfs_previous_item steps back
// into, and the one btrfs_next_leaf looks at past the last changed one).
//
// How: on a fresh btrfs (default mkfs, 16 KiB nodes) on a loop device of our
// own, mounted -o ssd, one directory gets N files of 16 KiB named as bonnie++
// names them (7 digits and 0-12 random characters, digits first; random
// phase: characters first), each created, written, fsynced and its directory
// fsynced; sync; then each is unlinked and the directory fsynced (in index
// order, then, after the same for the random names, in a seeded random
// order). A tracefs instance of our own records btrfs_tree_read_lock and
// btrfs_try_tree_read_lock (btrfs_next_leaf try-locks the next leaf first,
// and only a failed try shows as btrfs_tree_read_lock), our filesystem's
// lines only; a trace_marker line before and after each directory fsync
// delimits it; the workload sets the events' filters to its own pid first,
// so other btrfs work on the machine cannot fill the ring buffer (a capture
// that overran anyway is retried by the test). For each fsync: the distinct fs tree blocks (owner 5) the
// process read-locked whose generation is the running transaction's (the
// highest seen so far), the root (the first block locked) apart. The model
// runs the same names in a timed run (the delayed items decide which leaves
// changed, as in the kernel), btrfslab's metrics timed.logLeaves.
//
// Run: node tests/kernel/seed000-dirlog-measure.mjs [N]   (root; N = 1000)
// Seen on this machine (kernel 6.18, N = 1000): the kernel read-locks 4.0
// leaves a fsync in index order and 4.64-5.21 in random order (nine runs);
// the model copies from 2.6 and 4.6 (and reads 2.7 and 5.1). Without the
// try-locks the kernel's counts look smaller (stop 29's 4.3 and 4.9, the root included).
// tests/kernel/seed000.test.mjs checks these bounds. Clean-room: from the
// tracepoints' format files and what the trace shows.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI } from './lib.mjs';

const TRACING = '/sys/kernel/tracing';

const WORKLOAD = `
import os, sys, random
mnt, marker, N, names_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
# only this process's lock events reach the ring buffer (other btrfs work on the machine would crowd it)
for e in ('btrfs_tree_read_lock', 'btrfs_try_tree_read_lock'):
    with open(os.path.join(os.path.dirname(marker), 'events', 'btrfs', e, 'filter'), 'w') as f:
        f.write('common_pid == %d' % os.getpid())
mk = os.open(marker, os.O_WRONLY)
lists = open(names_out, 'w')
d = os.path.join(mnt, 'd'); os.mkdir(d)
buf = os.urandom(16384)
C = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'
for phase in ('seq', 'rand'):
    rr = random.Random(phase)
    ex = [''.join(rr.choice(C) for _ in range(rr.randrange(13))) for i in range(N)]
    names = [('%07d%s' % (i, ex[i])) if phase == 'seq' else ('%s%07d' % (ex[i], i)) for i in range(N)]
    lists.write('create %s %s\\n' % (phase, ' '.join(names)))
    dfd = os.open(d, os.O_RDONLY)
    for n in names:
        fd = os.open(os.path.join(d, n), os.O_CREAT | os.O_WRONLY, 0o644); os.write(fd, buf); os.fsync(fd); os.close(fd)
        os.fsync(dfd)
    os.sync()
    if phase == 'rand': random.Random(7).shuffle(names)
    lists.write('delete %s %s\\n' % (phase, ' '.join(names)))
    os.write(mk, ('PHASE %s' % phase).encode())
    for n in names:
        os.unlink(os.path.join(d, n))
        os.write(mk, b'FS'); os.fsync(dfd); os.write(mk, b'FE')
    os.close(dfd)
lists.close()
`;

/** Per phase: for each directory fsync, the fs tree blocks of the running transaction the process read-locked
 * (btrfs_tree_read_lock, and btrfs_try_tree_read_lock, which btrfs_next_leaf takes first for the next leaf), the
 * first one (the root: every search starts there) apart. */
export function parseDirlogTrace(text, fsid) {
  const out = {};
  let phase = null, cur = null, root = null, maxGen = 0, gen0 = 0;
  for (const line of text.split('\n')) {
    const mark = line.match(/tracing_mark_write: (.*)$/);
    if (mark) {
      const m = mark[1].trim();
      if (m.startsWith('PHASE ')) out[(phase = m.slice(6))] = [];
      else if (m === 'FS' && phase) { cur = new Set(); root = null; gen0 = maxGen; }
      else if (m === 'FE' && cur) { out[phase].push(cur.size); cur = null; }
      continue;
    }
    const ev = line.match(/btrfs_(?:try_)?tree_read_lock: \S+ block=(\d+) generation=(\d+) .*owner=(\d+) /);
    if (!ev || ev[3] !== '5' || (fsid && !line.includes(fsid))) continue;
    const gen = Number(ev[2]);
    if (gen > maxGen) maxGen = gen;
    if (!cur || !line.includes('python3')) continue;
    if (root === null) root = ev[1];
    if (gen >= gen0 && ev[1] !== root) cur.add(ev[1]);
  }
  return Object.fromEntries(Object.entries(out).map(([p, v]) => [p, stats(v)]));
}

function stats(v) {
  const s = [...v].sort((a, b) => a - b);
  return { n: s.length, mean: s.reduce((a, b) => a + b, 0) / (s.length || 1), p50: s[s.length >> 1], max: s[s.length - 1] };
}

/** The same workload in btrfslab (a timed run: the kernel's delayed items, since v6.1 logged straight from the
 * directory's delayed node, are what decides which leaves changed): per delete phase, the fsyncs' fs leaves logging
 * copied from (leavesCloned: the ones the kernel clones before copying under log_copy=clone) and read, per fsync.
 * lists: the workload's 'create PHASE names...' and 'delete PHASE names...' lines. */
export function modelDirlog(lists, cli = CLI) {
  const phases = [];
  for (const line of lists.trim().split('\n')) {
    const [what, phase, ...names] = line.split(' ');
    const cmds = what === 'create'
      ? names.flatMap((n) => [`create /d/${n}`, `write /d/${n} 0 16384 1`, `fsync /d/${n}`, 'fsync /d'])
      : names.flatMap((n) => [`unlink /d/${n}`, 'fsync /d']);
    phases.push({ what, phase, text: ['thread A', ...cmds, 'end', ...(what === 'create' ? ['sync'] : [])].join('\n') });
  }
  const totals = (k) => {
    const text = ['mkfs size=2G', 'set device=loop', 'mkdir /d', ...phases.slice(0, k).map((p) => p.text)].join('\n') + '\n';
    const m = JSON.parse(execFileSync(cli, ['run', '-', '--metrics', '-'], { input: text, encoding: 'utf8', maxBuffer: 1 << 28 }));
    return m.timed.logLeaves;
  };
  const out = {};
  for (let k = 0; k < phases.length; k++) {
    if (phases[k].what !== 'delete') continue;
    const a = totals(k), b = totals(k + 1), n = b.fsyncs - a.fsyncs;
    out[phases[k].phase] = { n, cloned: (b.cloned - a.cloned) / n, read: (b.read - a.read) / n };
  }
  return out;
}

export function measureDirlog(n = 1000) {
  if (!existsSync(join(TRACING, 'events'))) execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACING]);
  const work = mkdtempSync(join(tmpdir(), 'btrfslab-seed000-dirlog-'));
  const img = join(work, 'img'), mnt = join(work, 'mnt'), lists = join(work, 'names');
  const inst = join(TRACING, 'instances', `btrfslab-seed000-dirlog-${process.pid}-${Date.now()}`);
  let loop = null, mounted = false, traced = false;
  try {
    mkdirSync(mnt);
    writeFileSync(img, '');
    execFileSync('truncate', ['-s', '2G', img]);
    execFileSync('mkfs.btrfs', ['-q', '-f', img]);
    const fsid = execFileSync('blkid', ['-s', 'UUID', '-o', 'value', img], { encoding: 'utf8' }).trim();
    loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
    if (!/^\/dev\/loop\d+$/.test(loop)) throw new Error(`losetup gave ${JSON.stringify(loop)}`);
    execFileSync('mount', ['-t', 'btrfs', '-o', 'ssd', loop, mnt]);
    mounted = true;
    mkdirSync(inst);
    traced = true;
    writeFileSync(join(inst, 'buffer_size_kb'), '65536');
    for (const e of ['btrfs_tree_read_lock', 'btrfs_try_tree_read_lock']) writeFileSync(join(inst, `events/btrfs/${e}/enable`), '1');
    const r = spawnSync('python3', ['-c', WORKLOAD, mnt, join(inst, 'trace_marker'), String(n), lists], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`workload failed: ${r.stderr}`);
    writeFileSync(join(inst, 'tracing_on'), '0');
    // a full ring buffer drops the oldest lines (a phase's marker among them): then the capture is spoiled
    let overrun = 0;
    for (const cpu of readdirSync(join(inst, 'per_cpu'))) overrun += Number(readFileSync(join(inst, 'per_cpu', cpu, 'stats'), 'utf8').match(/^overrun: (\d+)/m)?.[1] ?? 0);
    return { overrun, kernel: parseDirlogTrace(readFileSync(join(inst, 'trace'), 'utf8'), fsid), model: modelDirlog(readFileSync(lists, 'utf8')) };
  } finally {
    if (traced) {
      for (const e of ['btrfs_tree_read_lock', 'btrfs_try_tree_read_lock']) {
        spawnSync('sh', ['-c', `echo 0 > ${join(inst, 'events/btrfs', e, 'enable')}; echo 0 > ${join(inst, 'events/btrfs', e, 'filter')}`]);
      }
      spawnSync('rmdir', [inst]);
    }
    if (mounted) spawnSync('umount', [mnt]);
    if (loop) spawnSync('losetup', ['-d', loop]);
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(measureDirlog(Number(process.argv[2] ?? 1000)), null, 1));
}
