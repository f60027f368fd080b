// Seed 000's bonnie++ delete phases in the kernel: how many fs tree blocks of
// the current transaction a directory fsync read-locks, after an unlink in
// index order (bonnie++'s sequential delete: readdir order) and in random
// order. Before seed 000's change each fs leaf logging copies from is cloned
// (an extent buffer allocated) while read-locked, so this bounds the clones
// an fsync of each phase makes; bench/seed000-bonnie.bench.mjs's model makes
// its clones from the same walk.
//
// How: on a fresh btrfs (default mkfs, 16 KiB nodes) on a loop device of our
// own, mounted -o ssd, one directory gets N files of 16 KiB named as bonnie++
// names them (7 digits and 0-12 random characters, digits first; random
// phase: characters first), each created, written, fsynced and its directory
// fsynced; sync; then each is unlinked and the directory fsynced (in index
// order, then, after the same for the random names, in a seeded random
// order). A tracefs instance of our own records btrfs_tree_read_lock; a
// trace_marker line before and after each directory fsync delimits it. For
// each fsync: the distinct fs tree blocks (owner 5) the process read-locked
// whose generation is the running transaction's (the highest seen so far):
// the root node (level 1 here) and the leaves changed in this transaction.
//
// Run: node tests/kernel/seed000-dirlog-measure.mjs [N]   (root; N = 1000)
// Seen on this machine (kernel 6.18, N = 1000: six DIR_INDEX leaves, as the
// model lays them out): index order 4.3 a fsync (p50 5, max 5), random order
// 4.9 (p50 6, max 6 or 7 by run), the root included. Clean-room: from the
// tracepoint's format file and what the trace shows.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TRACING = '/sys/kernel/tracing';

const WORKLOAD = `
import os, sys, random
mnt, marker, N = sys.argv[1], sys.argv[2], int(sys.argv[3])
mk = os.open(marker, os.O_WRONLY)
d = os.path.join(mnt, 'd'); os.mkdir(d)
buf = os.urandom(16384)
C = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'
for phase in ('seq', 'rand'):
    rr = random.Random(phase)
    ex = [''.join(rr.choice(C) for _ in range(rr.randrange(13))) for i in range(N)]
    names = [('%07d%s' % (i, ex[i])) if phase == 'seq' else ('%s%07d' % (ex[i], i)) for i in range(N)]
    dfd = os.open(d, os.O_RDONLY)
    for n in names:
        fd = os.open(os.path.join(d, n), os.O_CREAT | os.O_WRONLY, 0o644); os.write(fd, buf); os.fsync(fd); os.close(fd)
        os.fsync(dfd)
    os.sync()
    if phase == 'rand': random.Random(7).shuffle(names)
    os.write(mk, ('PHASE %s' % phase).encode())
    for n in names:
        os.unlink(os.path.join(d, n))
        os.write(mk, b'FS'); os.fsync(dfd); os.write(mk, b'FE')
    os.close(dfd)
`;

/** Per phase: the count of current-transaction fs blocks each directory fsync read-locked. */
export function parseDirlogTrace(text) {
  const out = {};
  let phase = null, cur = null, maxGen = 0, gen0 = 0;
  for (const line of text.split('\n')) {
    const mark = line.match(/tracing_mark_write: (.*)$/);
    if (mark) {
      const m = mark[1].trim();
      if (m.startsWith('PHASE ')) out[(phase = m.slice(6))] = [];
      else if (m === 'FS') { cur = new Set(); gen0 = maxGen; }
      else if (m === 'FE' && cur) { out[phase].push(cur.size); cur = null; }
      continue;
    }
    const ev = line.match(/btrfs_tree_read_lock: \S+ block=(\d+) generation=(\d+) .* owner=(\d+) /);
    if (!ev || ev[3] !== '5') continue;
    const gen = Number(ev[2]);
    if (gen > maxGen) maxGen = gen;
    if (cur && gen >= gen0 && line.includes('python3')) cur.add(ev[1]);
  }
  const stats = {};
  for (const [p, v] of Object.entries(out)) {
    const s = [...v].sort((a, b) => a - b);
    stats[p] = { n: s.length, mean: s.reduce((a, b) => a + b, 0) / (s.length || 1), p50: s[s.length >> 1], p90: s[Math.floor(s.length * 0.9)], max: s[s.length - 1] };
  }
  return stats;
}

export function measureDirlog(n = 1000) {
  if (!existsSync(join(TRACING, 'events'))) execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACING]);
  const work = mkdtempSync(join(tmpdir(), 'btrfslab-seed000-dirlog-'));
  const img = join(work, 'img'), mnt = join(work, 'mnt');
  const inst = join(TRACING, 'instances', `btrfslab-seed000-dirlog-${process.pid}-${Date.now()}`);
  let loop = null, mounted = false, traced = false;
  try {
    mkdirSync(mnt);
    writeFileSync(img, '');
    execFileSync('truncate', ['-s', '2G', img]);
    execFileSync('mkfs.btrfs', ['-q', '-f', img]);
    loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
    if (!/^\/dev\/loop\d+$/.test(loop)) throw new Error(`losetup gave ${JSON.stringify(loop)}`);
    execFileSync('mount', ['-t', 'btrfs', '-o', 'ssd', loop, mnt]);
    mounted = true;
    mkdirSync(inst);
    traced = true;
    writeFileSync(join(inst, 'buffer_size_kb'), '65536');
    writeFileSync(join(inst, 'events/btrfs/btrfs_tree_read_lock/enable'), '1');
    const r = spawnSync('python3', ['-c', WORKLOAD, mnt, join(inst, 'trace_marker'), String(n)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`workload failed: ${r.stderr}`);
    writeFileSync(join(inst, 'tracing_on'), '0');
    return parseDirlogTrace(readFileSync(join(inst, 'trace'), 'utf8'));
  } finally {
    if (traced) spawnSync('rmdir', [inst]);
    if (mounted) spawnSync('umount', [mnt]);
    if (loop) spawnSync('losetup', ['-d', loop]);
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(measureDirlog(Number(process.argv[2] ?? 1000)), null, 1));
}
