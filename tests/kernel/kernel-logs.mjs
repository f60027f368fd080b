// Images holding a pending log written by the real kernel, and what the
// kernel makes of them when it replays that log at mount.
//
// A capture: mkfs.btrfs a 256M image, mount it with commit=600 (no periodic
// commit wipes the log), run the scenario's setup, sync (a commit), run its
// steps (shell commands and fsyncs), copy the image while it is still
// mounted (the copy holds the log the fsyncs wrote; its superblock's
// log_root says so), unmount. The kernel's answer: mount a copy of the
// capture read-write (the kernel replays the log), snapshot every path,
// unmount, btrfs check. Ours: `btrfslab replay` the capture and compare.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { btrfsCheck, progsDumpTree, run, withMount } from './lib.mjs';
import { countLogItems } from './log-items.mjs';

// BTRFSLAB_CLI points the comparison at another build of the CLI.
export const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const SNAP = fileURLToPath(new URL('./snapshot.py', import.meta.url));
const STATE = fileURLToPath(new URL('./fsync_state.py', import.meta.url));

// ---------------------------------------------------------------------------
// Shell fragments for scenarios. Content is deterministic: xfs_io fill bytes,
// or gen(), a sha256 counter stream keyed by a seed.

const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
// paths go in double quotes so a scenario can write d/f$i inside a shell loop
const dq = (s) => `"${s}"`;
const hex = (b) => `0x${b.toString(16).padStart(2, '0')}`;

/** Writes len bytes of byte at off into path (created if missing). */
export function pw(path, len, byte = 0x61, off = 0) {
  return `xfs_io -f -c ${q(`pwrite -S ${hex(byte)} ${off} ${len}`)} ${dq(path)} >/dev/null`;
}

/** Writes len bytes of the stream for seed at off into path (created if missing, not truncated). */
export function gen(path, len, seed, off = 0) {
  const py = 'import hashlib,os,sys\n' +
    'p,n,s,o=sys.argv[1],int(sys.argv[2]),sys.argv[3],int(sys.argv[4])\n' +
    'b=b"".join(hashlib.sha256(f"{s}:{i}".encode()).digest() for i in range((n+31)//32))[:n]\n' +
    'fd=os.open(p,os.O_WRONLY|os.O_CREAT,0o644)\nos.pwrite(fd,b,o)\nos.close(fd)\n';
  return `python3 -c ${q(py)} ${dq(path)} ${len} ${q(seed)} ${off}`;
}

const HAVE_SETFATTR = spawnSync('bash', ['-c', 'command -v setfattr && command -v getfattr'], { stdio: 'ignore' }).status === 0;

/** Sets user xattr name=value on path (setfattr when installed, else python3 os.setxattr). */
export function setx(path, name, value) {
  if (HAVE_SETFATTR) return `setfattr -n ${q(name)} -v ${q(value)} ${dq(path)}`;
  return `python3 -c ${q('import os,sys; os.setxattr(sys.argv[1], sys.argv[2], sys.argv[3].encode())')} ${dq(path)} ${q(name)} ${q(value)}`;
}

/** Removes user xattr name from path. */
export function rmx(path, name) {
  if (HAVE_SETFATTR) return `setfattr -x ${q(name)} ${dq(path)}`;
  return `python3 -c ${q('import os,sys; os.removexattr(sys.argv[1], sys.argv[2])')} ${dq(path)} ${q(name)}`;
}

// ---------------------------------------------------------------------------
// Scenarios: { name, setup: sh, ops: sh | [{sh} | {fsync: path}], fsync: [path],
// minLeaves?: the kernel's log tree must span at least this many leaves }.
// The ops run first, then the fsyncs listed in fsync, in order.

const five = ['f1', 'f2', 'f3', 'f4', 'f5'];

export const SCENARIOS = [
  // renames within one directory
  { name: 'rename within a dir, fsync the file',
    setup: `mkdir d && ${pw('d/a', 10000)}`, ops: 'mv d/a d/b', fsync: ['d/b'] },
  { name: 'rename within a dir, fsync the dir',
    setup: `mkdir d && ${pw('d/a', 10000)} && ${pw('d/keep', 300, 0x6b)}`, ops: 'mv d/a d/b', fsync: ['d'] },
  { name: 'rename within a dir, write, fsync the file then the dir',
    setup: `mkdir d && ${pw('d/a', 10000)}`, ops: `mv d/a d/b && ${pw('d/b', 5000, 0x62, 8000)}`, fsync: ['d/b', 'd'] },
  { name: 'rename within the root dir twice, fsync the file',
    setup: `${pw('a', 7000)}`, ops: 'mv a b && mv b c', fsync: ['c'] },
  // renames across directories. A rename to another directory makes a later
  // fsync of the file, the old dir or the moved dir commit the transaction
  // instead of logging (the kernel cannot find the new parent from the old
  // one), unless the file or the old dir was logged earlier in the same
  // transaction: so most of these fsync it first.
  { name: 'rename across dirs of a file fsynced before, fsync the renamed file',
    setup: `mkdir d1 d2 && ${pw('d1/a', 10000)} && ${pw('d2/x', 100, 0x78)}`,
    ops: [{ sh: pw('d1/a', 500, 0x62, 10000) }, { fsync: 'd1/a' }, { sh: 'mv d1/a d2/a' }, { fsync: 'd2/a' }] },
  { name: 'rename across dirs, fsync the old dir (logged before)',
    setup: `mkdir d1 d2 && ${pw('d1/a', 10000)} && ${pw('d1/b', 200, 0x62)}`,
    ops: [{ sh: ': > d1/n' }, { fsync: 'd1' }, { sh: 'mv d1/a d2/a' }, { fsync: 'd1' }] },
  { name: 'rename across dirs, fsync the new dir',
    setup: `mkdir d1 d2 && ${pw('d1/a', 10000)}`, ops: 'mv d1/a d2/a', fsync: ['d2'] },
  { name: 'rename across dirs to a new name, fsync file, old dir, new dir',
    setup: `mkdir d1 d2 && ${pw('d1/a', 10000)} && ${pw('d1/b', 3000, 0x62)}`,
    ops: [{ sh: pw('d1/a', 4096, 0x63, 0) }, { fsync: 'd1/a' }, { sh: 'mv d1/a d2/z' }], fsync: ['d2/z', 'd1', 'd2'] },
  { name: 'rename a populated dir within its parent, fsync the renamed dir',
    setup: `mkdir -p d1/sub && ${pw('d1/sub/f', 5000)} && ${pw('d1/sub/g', 6000, 0x67)}`, ops: 'mv d1/sub d1/sub2', fsync: ['d1/sub2'] },
  { name: 'move a populated dir to another parent, fsync the old parent (logged before)',
    setup: `mkdir -p d1/sub d2 && ${pw('d1/sub/f', 5000)} && ${pw('d1/keep', 100)}`,
    ops: [{ sh: ': > d1/x' }, { fsync: 'd1' }, { sh: 'mv d1/sub d2/sub2' }, { fsync: 'd1' }] },
  { name: 'rename a file fsynced before into a new dir, fsync the file',
    setup: `mkdir d1 && ${pw('d1/a', 12000)}`,
    ops: [{ sh: pw('d1/a', 1000, 0x62, 12000) }, { fsync: 'd1/a' }, { sh: 'mkdir d2 && mv d1/a d2/a' }, { fsync: 'd2/a' }] },
  // replace by rename
  { name: 'rename over an existing name, fsync the file',
    setup: `mkdir d && ${pw('d/old', 9000, 0x6f)}`, ops: `${pw('d/new', 4000, 0x6e)} && mv d/new d/old`, fsync: ['d/old'] },
  { name: 'rename over an existing name, fsync the dir',
    setup: `mkdir d && ${pw('d/old', 9000, 0x6f)} && ${pw('d/new', 4000, 0x6e)}`, ops: 'mv d/new d/old', fsync: ['d'] },
  { name: 'rename over an existing name across dirs, fsync file then both dirs',
    setup: `mkdir d1 d2 && ${pw('d1/src', 5000, 0x73)} && ${pw('d2/dst', 8000, 0x64)}`,
    ops: [{ sh: pw('d1/src', 100, 0x74, 5000) }, { fsync: 'd1/src' }, { sh: 'mv d1/src d2/dst' }], fsync: ['d2/dst', 'd1', 'd2'] },
  // hard links
  { name: 'unlink one of three hard links, fsync the file',
    setup: `mkdir d && ${pw('d/a', 10000)} && ln d/a d/b && ln d/a d/c`, ops: 'rm d/b', fsync: ['d/a'] },
  { name: 'unlink one of three hard links, fsync the dir',
    setup: `mkdir d && ${pw('d/a', 10000)} && ln d/a d/b && ln d/a d/c`, ops: 'rm d/b', fsync: ['d'] },
  { name: 'unlink a hard link in another dir, fsync the file',
    setup: `mkdir d1 d2 && ${pw('d1/a', 10000)} && ln d1/a d2/l1 && ln d1/a d2/l2`, ops: 'rm d2/l1', fsync: ['d1/a'] },
  { name: 'unlink a hard link in another dir, fsync that dir',
    setup: `mkdir d1 d2 && ${pw('d1/a', 10000)} && ln d1/a d2/l1 && ln d1/a d2/l2`, ops: 'rm d2/l1', fsync: ['d2'] },
  { name: 'new hard link across dirs, fsync the file',
    setup: `mkdir d1 d2 && ${pw('d1/a', 10000)}`, ops: 'ln d1/a d2/b', fsync: ['d1/a'] },
  { name: 'new hard link across dirs, fsync the new dir',
    setup: `mkdir d1 d2 && ${pw('d1/a', 10000)}`, ops: 'ln d1/a d2/b', fsync: ['d2'] },
  { name: 'new hard links in four dirs, fsync the file',
    setup: `mkdir d0 d1 d2 d3 d4 && ${pw('d0/a', 20000)}`, ops: 'for i in 1 2 3 4; do ln d0/a d$i/link$i; done && ln d0/a d0/second', fsync: ['d0/a'] },
  // directory fsync after deletions
  { name: 'delete some files, fsync the dir',
    setup: `mkdir d && for i in $(seq 1 10); do ${pw('d/f$i', 1000)}; done`, ops: 'rm d/f2 d/f5 d/f9', fsync: ['d'] },
  { name: 'delete all files, fsync the dir',
    setup: `mkdir d && for i in $(seq 1 10); do ${pw('d/f$i', 1000)}; done`, ops: 'rm d/f*', fsync: ['d'] },
  { name: 'delete files interleaved with new files, fsync the dir',
    setup: `mkdir d && for f in ${five.join(' ')}; do ${pw('d/$f', 2000)}; done`,
    ops: `rm d/f1 && ${pw('d/n1', 300, 0x31)} && rm d/f3 && ${pw('d/n2', 300, 0x32)} && rm d/f5 && : > d/n3`, fsync: ['d'] },
  { name: 'delete and recreate the same name, fsync the new file then the dir',
    setup: `mkdir d && ${pw('d/same', 8000, 0x41)} && ${pw('d/other', 100)}`, ops: `rm d/same && ${pw('d/same', 3000, 0x42)}`, fsync: ['d/same', 'd'] },
  { name: 'delete a whole subtree, fsync the parent',
    setup: `mkdir -p d/s1/s2 && ${pw('d/s1/a', 1000)} && ${pw('d/s1/s2/b', 1000)} && ${pw('d/c', 1000)}`, ops: 'rm -r d/s1', fsync: ['d'] },
  // truncates and overwrites, then fsync of the file
  { name: 'truncate down, fsync the file',
    setup: `${gen('f', 200000, 'trunc-down')}`, ops: 'truncate -s 5000 f', fsync: ['f'] },
  { name: 'truncate up, fsync the file',
    setup: `${gen('f', 50000, 'trunc-up')}`, ops: 'truncate -s 300000 f', fsync: ['f'] },
  { name: 'truncate to 0, fsync the file',
    setup: `${gen('f', 100000, 'trunc-zero')}`, ops: 'truncate -s 0 f', fsync: ['f'] },
  { name: 'truncate down then write, fsync the file',
    setup: `${gen('f', 120000, 'trunc-write')}`, ops: `truncate -s 10000 f && ${pw('f', 20000, 0x57, 30000)}`, fsync: ['f'] },
  { name: 'overwrite the middle, fsync the file',
    setup: `${gen('f', 262144, 'mid')}`, ops: `${pw('f', 12288, 0x4d, 100000)}`, fsync: ['f'] },
  { name: 'overwrite 192 KiB in the middle of 1 MiB, fsync the file',
    setup: `${gen('f', 1048576, 'mid-big')}`, ops: `${pw('f', 196608, 0x4e, 300000)}`, fsync: ['f'] },
  { name: 'write past EOF leaving a hole, fsync the file',
    setup: `${gen('f', 10000, 'past-eof')}`, ops: `${pw('f', 8192, 0x50, 1048576)}`, fsync: ['f'] },
  { name: 'many small pwrites in one xfs_io, fsync the file',
    setup: `${gen('f', 65536, 'small')}`,
    ops: `xfs_io -f ${Array.from({ length: 60 }, (_, i) => `-c ${q(`pwrite -S ${hex(0x20 + i)} ${i * 3001} ${100 + i * 7}`)}`).join(' ')} f >/dev/null`,
    fsync: ['f'] },
  { name: 'many small pwrites 8 KiB apart, fsync the file',
    setup: `${gen('f', 524288, 'apart')}`,
    ops: `xfs_io ${Array.from({ length: 60 }, (_, i) => `-c ${q(`pwrite -S ${hex(0x40 + i)} ${i * 8192 + 17 * i} ${100 + i * 7}`)}`).join(' ')} f >/dev/null`,
    fsync: ['f'] },
  { name: 'grow an inline file past the inline limit, fsync it',
    setup: `${pw('f', 300, 0x69)}`, ops: `${pw('f', 9000, 0x6a, 300)}`, fsync: ['f'] },
  { name: 'write, fsync, overwrite, fsync again',
    setup: `${gen('f', 40000, 'twice')}`, ops: [{ sh: pw('f', 4096, 0x31, 0) }, { fsync: 'f' }, { sh: pw('f', 4096, 0x32, 16384) }, { fsync: 'f' }] },
  // new subdirectories
  { name: 'nested new dirs, fsync the deepest file',
    setup: 'mkdir top', ops: `mkdir -p top/a/b/c/d && ${pw('top/a/b/c/d/deep', 7000)}`, fsync: ['top/a/b/c/d/deep'] },
  { name: 'nested new dirs, fsync the new top dir',
    setup: 'mkdir top', ops: `mkdir -p top/a/b/c && ${pw('top/a/b/c/f', 7000)} && ${pw('top/a/g', 100)}`, fsync: ['top/a'] },
  { name: 'new dir with files, fsync the new dir',
    setup: `${pw('old', 100)}`, ops: `mkdir nd && for i in 1 2 3; do ${pw('nd/f$i', 1000 * 3)}; done`, fsync: ['nd'] },
  { name: 'new file in a new dir, fsync the file',
    setup: 'mkdir p', ops: `mkdir p/newdir && ${pw('p/newdir/f', 15000)}`, fsync: ['p/newdir/f'] },
  { name: 'new file in a new dir in the root, fsync the file',
    setup: '', ops: `mkdir newdir && ${gen('newdir/f', 30000, 'newparent')}`, fsync: ['newdir/f'] },
  // xattrs
  { name: 'xattrs set, fsync the file',
    setup: `${pw('f', 1000)}`, ops: `${setx('f', 'user.one', 'first')} && ${setx('f', 'user.two', 'x'.repeat(300))}`, fsync: ['f'] },
  { name: 'xattrs removed and replaced, fsync the file',
    setup: `${pw('f', 1000)} && ${setx('f', 'user.a', 'A')} && ${setx('f', 'user.b', 'B')} && ${setx('f', 'user.c', 'C')}`,
    ops: `${rmx('f', 'user.a')} && ${setx('f', 'user.b', 'B2')} && ${setx('f', 'user.d', 'D')}`, fsync: ['f'] },
  { name: 'all xattrs removed, fsync the file',
    setup: `${pw('f', 1000)} && ${setx('f', 'user.a', 'A')} && ${setx('f', 'user.b', 'B')}`,
    ops: `${rmx('f', 'user.a')} && ${rmx('f', 'user.b')}`, fsync: ['f'] },
  { name: 'xattr on a dir, fsync the dir',
    setup: 'mkdir d', ops: `${setx('d', 'user.dirattr', 'on a dir')} && ${pw('d/f', 500)}`, fsync: ['d'] },
  // symlinks
  { name: 'symlinks created, fsync the dir',
    setup: `mkdir d && ${pw('d/target', 1000)}`, ops: `ln -s target d/l1 && ln -s /some/absolute/path d/l2 && ln -s ${'x'.repeat(200)} d/l3`, fsync: ['d'] },
  { name: 'symlinks in a new dir, fsync the parent',
    setup: '', ops: 'mkdir s && ln -s ../a s/up && ln -s . s/self', fsync: ['.'] },
  // large logs
  { name: 'dir with 250 new entries, fsync the dir',
    setup: 'mkdir big',
    ops: 'for i in $(seq 1 250); do : > big/entry_with_a_longish_name_$i; done', fsync: ['big'], minLeaves: 2 },
  { name: 'dir with 300 new files with data and 50 removed, fsync the dir',
    setup: 'mkdir big && for i in $(seq 1 50); do echo old$i > big/old_$i; done',
    ops: 'for i in $(seq 1 300); do echo "content $i" > big/new_file_$i; done; rm big/old_*', fsync: ['big'], minLeaves: 2 },
  { name: 'file of 2 MiB written in pieces, fsync it',
    setup: '',
    ops: Array.from({ length: 8 }, (_, i) => gen('big.bin', 262144, `piece${i}`, i * 262144)).join(' && '), fsync: ['big.bin'] },
  { name: 'file of 2 MiB written in pieces with an fsync between',
    setup: `${pw('keep', 100)}`,
    ops: [
      { sh: Array.from({ length: 4 }, (_, i) => gen('big.bin', 262144, `p${i}`, i * 262144)).join(' && ') },
      { fsync: 'big.bin' },
      { sh: Array.from({ length: 4 }, (_, i) => gen('big.bin', 262144, `p${i + 4}`, (i + 4) * 262144)).join(' && ') },
      { fsync: 'big.bin' },
    ] },
  // several fsyncs
  { name: 'fsync two files one after another',
    setup: 'mkdir d', ops: `${pw('d/one', 5000, 0x31)} && ${gen('d/two', 70000, 'two')}`, fsync: ['d/one', 'd/two'] },
  { name: 'fsync a file, rename it, fsync the dir',
    setup: 'mkdir d', ops: [{ sh: pw('d/a', 6000) }, { fsync: 'd/a' }, { sh: 'mv d/a d/b' }, { fsync: 'd' }] },
  { name: 'fsync the dir, then add a link and fsync the file',
    setup: `mkdir d e && ${pw('d/a', 6000)}`, ops: [{ sh: pw('d/n', 700) }, { fsync: 'd' }, { sh: 'ln d/a e/a2' }, { fsync: 'd/a' }] },
  { name: 'fsync a file, unlink its other link, fsync the dir',
    setup: `mkdir d && ${pw('d/a', 6000)} && ln d/a d/b`, ops: [{ sh: pw('d/a', 100, 0x7a, 6000) }, { fsync: 'd/a' }, { sh: 'rm d/b' }, { fsync: 'd' }] },
];

// ---------------------------------------------------------------------------

// Run before every setup, in the setup's transaction: a 4 KiB and a 256 KiB
// file in /.warm. Data block groups take the size class (small < 128 KiB,
// medium < 8 MiB, large) of their first extent, and an allocation of
// another class makes a new block group before it settles for a wrong
// class; an fsync in a transaction that made a block group commits the
// transaction instead of logging. mkfs.btrfs makes one 8 MiB data block
// group, so without these a 256 KiB setup write followed by a 4 KiB write
// in the steps leaves no log. With them both classes have a block group.
const WARMUP = `mkdir .warm && ${pw('.warm/small', 4096, 0x77)} && ${pw('.warm/medium', 262144, 0x77)}`;

function stepsOf(s) {
  const ops = typeof s.ops === 'string' ? [{ sh: s.ops }] : (s.ops ?? []);
  return [...ops, ...(s.fsync ?? []).map((p) => ({ fsync: p }))];
}

function sh(name, cmd, cwd) {
  if (!cmd) return;
  const r = spawnSync('bash', ['-e', '-c', cmd], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scenario ${name}: command failed (status ${r.status}): ${cmd}\n${r.stdout}${r.stderr}`);
}

/** The snapshot.py JSON of a mounted filesystem. */
export function snapshot(mnt) {
  return JSON.parse(execFileSync('python3', [SNAP, mnt], { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

/** fsync_state.py for paths (relative to mnt). */
function probe(mnt, paths) {
  if (!paths.length) return {};
  return JSON.parse(execFileSync('python3', [STATE, mnt, ...paths], { encoding: 'utf8', maxBuffer: 1 << 28 }));
}

/** The superblock's log_root of an image (0: no pending log). */
export function superLogRoot(img) {
  const text = run('btrfs', ['inspect-internal', 'dump-super', img]);
  const m = /^log_root\s+(\d+)/m.exec(text);
  if (!m) throw new Error(`dump-super ${img} printed no log_root:\n${text}`);
  return Number(m[1]);
}

/**
 * Captures scenario s under dir/<n>: returns { work, captured, logRoot, log,
 * fsynced, durable } where captured is the image with the kernel's pending
 * log, log its countLogItems(), fsynced each fsynced path's state at its last
 * fsync and durable the fsynced paths that did not change after it (what
 * the replay must give back). Throws when the copy holds no log.
 */
export async function captureScenario(s, dir, n = 0, attempt = 0) {
  const work = join(dir, `${String(n).padStart(2, '0')}-${s.name.replace(/[^a-z0-9]+/gi, '-').replace(/-$/, '')}${attempt ? `-try${attempt + 1}` : ''}`);
  mkdirSync(work, { recursive: true });
  const img = join(work, 'fs.img');
  const captured = join(work, 'captured.img');
  run('truncate', ['-s', '256M', img]);
  run('mkfs.btrfs', ['-q', '-f', img]);
  const fsynced = {};
  let last = {};
  await withMount(img, (mnt) => {
    sh(s.name, WARMUP, mnt);
    sh(s.name, s.setup, mnt);
    run('sync', []);
    for (const st of stepsOf(s)) {
      if (st.sh !== undefined) sh(s.name, st.sh, mnt);
      else {
        run('xfs_io', ['-c', 'fsync', st.fsync], { cwd: mnt });
        Object.assign(fsynced, probe(mnt, [st.fsync]));
      }
    }
    // the copy first: the shorter the time after the last fsync, the smaller
    // the chance that an outside commit takes the log away
    run('cp', ['--sparse=always', img, captured]);
    last = probe(mnt, Object.keys(fsynced));
  }, { options: ['commit=600'] });
  const logRoot = superLogRoot(captured);
  if (!logRoot) {
    const e = new Error(`scenario ${s.name}: the copy ${captured} holds no pending log (log_root 0): an fsync ` +
      'committed the transaction instead of logging, or another process committed every btrfs filesystem ' +
      '(a sync) before the copy. Known causes of the first: a rename to another directory before ' +
      'the fsync of the file, its old dir or a moved dir; a data write that needed a new block group');
    e.noLog = true;
    throw e;
  }
  const log = countLogItems(progsDumpTree(captured));
  const durable = Object.keys(fsynced).filter((p) => isDeepStrictEqual(fsynced[p], last[p]));
  return { name: s.name, work, captured, logRoot, log, fsynced, durable };
}

/**
 * captureScenario, tried again (up to tries times in all) when the copy
 * holds no log: any `sync` on the machine commits every btrfs filesystem,
 * and a commit between the fsync and the copy leaves nothing to replay.
 * onRetry(message) hears of each spoiled capture. A scenario that commits
 * by itself fails every try, and the last error is thrown.
 */
export async function captureWithRetry(s, dir, n = 0, { tries = 3, onRetry = () => {} } = {}) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await captureScenario(s, dir, n, attempt);
    } catch (e) {
      if (!e.noLog || attempt + 1 >= tries) throw e;
      onRetry(`capture ${attempt + 1} of ${tries} held no log (an outside commit?); capturing again`);
    }
  }
}

/**
 * The kernel's replay of a capture: mounts a copy read-write (the kernel
 * replays the log), snapshots it and the durable paths, unmounts, checks.
 * Returns { image, snapshot, durableState, logRootAfter, check }.
 */
export async function kernelReplay(cap) {
  const image = join(cap.work, 'kernel.img');
  run('cp', ['--sparse=always', cap.captured, image]);
  const { snap, durableState } = await withMount(image, (mnt) => ({ snap: snapshot(mnt), durableState: probe(mnt, cap.durable) }));
  return { image, snapshot: snap, durableState, logRootAfter: superLogRoot(image), check: btrfsCheck(image) };
}

/** Why `btrfslab replay` cannot run yet, or null when it can. */
export function replayUnavailable() {
  if (!existsSync(CLI)) return `btrfslab replay not built yet (${CLI} is missing)`;
  const r = spawnSync(CLI, ['replay'], { encoding: 'utf8' });
  if (r.error) return `btrfslab replay not built yet (${r.error.message})`;
  if (/unknown command/i.test(`${r.stdout}${r.stderr}`)) return 'btrfslab replay not built yet';
  return null;
}

/**
 * Our replay of a capture: `btrfslab replay captured -o ours.img`, then
 * btrfs check, the superblock's log_root, and (when that is 0) a read-only
 * snapshot; also whether `btrfslab ls --replay -R -l captured` runs.
 * Returns { image, check, logRoot, snapshot, ls: {ok, output} }.
 */
export async function ourReplay(cap) {
  const image = join(cap.work, 'ours.img');
  const r = spawnSync(CLI, ['replay', cap.captured, '-o', image], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scenario ${cap.name}: btrfslab replay ${cap.captured} -o ${image} failed (status ${r.status}):\n${r.stdout}${r.stderr}`);
  const check = btrfsCheck(image);
  const logRoot = superLogRoot(image);
  const snap = logRoot === 0 ? await withMount(image, snapshot, { readOnly: true }) : null;
  const l = spawnSync(CLI, ['ls', '--replay', '-R', '-l', cap.captured], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { image, check, logRoot, snapshot: snap, ls: { ok: l.status === 0, output: `${l.stdout}${l.stderr}` } };
}
