// extract, ls and the CLI's outputs against the places they write to:
// extract makes exactly what the image holds (contents, modes, links,
// xattrs) inside a new directory, privileged things only when asked for,
// holes as holes and no more data than --max-size; every writer to standard
// output fails on a full disk; outputs never follow a planted link and
// leave no temporary file behind.
//
// Every extract target is a fresh name inside a mkdtemp directory, beside
// sentinel directories that must stay untouched.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, readlinkSync, rmSync,
  statSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const ROOT = mkdtempSync(join(tmpdir(), 'btrfslab-extract-'));
const WORK = join(ROOT, 'work'); // images and scripts
const PLACE = join(ROOT, 'place'); // extract targets, beside the sentinels
const SENTINELS = [join(ROOT, 's1'), join(PLACE, 's2')];
const isRoot = process.getuid?.() === 0;
after(() => rmSync(ROOT, { recursive: true, force: true }));

function cli(args, opts = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(CLI, args, { encoding: 'utf8', timeout: 60000, ...opts });
  return { code: r.status, out: r.stdout, err: r.stderr, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

let targets = 0;
/** A fresh, absent name for an extract target, inside PLACE. */
const target = () => join(PLACE, `t${++targets}`);

/** Runs a scenario into WORK/name.img (fixed seed and time); returns the image. */
function image(name, script) {
  const s = join(WORK, `${name}.txt`), img = join(WORK, `${name}.img`);
  writeFileSync(s, script);
  const r = cli(['run', s, '--image', img, '--seed', '1', '--time', '1700000000']);
  assert.equal(r.code, 0, r.err);
  return img;
}

/** Every path below dir with what lstat says of it (the sentinels' fingerprint). */
function snapshot(dir) {
  const out = [];
  const walk = (d, rel) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n), s = lstatSync(p);
      out.push(`${rel}${n} ${s.mode.toString(8)} ${s.size} ${s.mtimeMs} ${s.isFile() ? readFileSync(p, 'hex') : ''}`);
      if (s.isDirectory()) walk(p, `${rel}${n}/`);
    }
  };
  walk(dir, '');
  return out;
}

/** The xattrs of path, not following a link: {name: value as text}. */
function xattrs(path) {
  const py = 'import os,sys,json\np=sys.argv[1]\nprint(json.dumps({n: os.getxattr(p, n, follow_symlinks=False).decode("latin-1") for n in os.listxattr(p, follow_symlinks=False)}))';
  return JSON.parse(execFileSync('python3', ['-c', py, path], { encoding: 'utf8' }));
}

let sentinelsBefore;
before(() => {
  mkdirSync(WORK);
  mkdirSync(PLACE);
  for (const s of SENTINELS) {
    mkdirSync(join(s, 'inner'), { recursive: true });
    writeFileSync(join(s, 'keep'), 'sentinel\n');
  }
  sentinelsBefore = SENTINELS.map(snapshot);
});

const NORMAL = `mkfs nodesize=4K size=64M
mkdir /d
create /d/f
write /d/f 0 5000 1
setxattr /d/f user.a v
setxattr /d user.dir "dir value"
link /d/f /d/g
symlink ../d/f /l
symlink /nowhere/at/all /abs
mkdir /d/e
create /d/e/big
write /d/e/big 0 300000 7
write /d/e/big 1000000 5000 8
create /empty
create /inline
write /inline 0 100 2
mkdir /d/e/deeper
`;

describe('extract of a normal image', () => {
  let img, t, r;
  before(() => {
    img = image('normal', NORMAL);
    t = target();
    r = cli(['extract', img, t]);
  });

  test('succeeds quietly', () => {
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err, '');
  });

  test('every path ls -R -l lists is there, with its type, mode, links, owner and size', () => {
    const ls = cli(['ls', '-R', '-l', img]);
    assert.equal(ls.code, 0, ls.err);
    const lines = ls.out.trim().split('\n');
    assert.equal(lines.length, 10);
    for (const line of lines) {
      const [mode, nlink, uid, gid, size, path, arrow, link] = line.split(' ');
      const s = lstatSync(join(t, path));
      const type = { d: s.isDirectory(), '-': s.isFile(), l: s.isSymbolicLink() }[mode[0]];
      assert.ok(type, `${path} is of type ${mode[0]}`);
      if (mode[0] !== 'l') assert.equal(modeString(s.mode), mode, path);
      if (mode[0] !== 'd') {
        assert.equal(s.nlink, Number(nlink), path);
        assert.equal(s.size, Number(size), path);
      }
      if (isRoot) assert.deepEqual([s.uid, s.gid], [Number(uid), Number(gid)], path);
      assert.equal(Math.floor(s.mtimeMs / 1000), 1700000000, `${path} keeps its mtime`);
      if (arrow) assert.equal(readlinkSync(join(t, path)), link, path);
    }
    assert.deepEqual(readdirSync(t).sort(), ['abs', 'd', 'empty', 'inline', 'l']);
  });

  test('file contents are what cat reads, holes stay holes', () => {
    for (const p of ['/d/f', '/d/g', '/d/e/big', '/empty', '/inline']) {
      const c = spawnSync(CLI, ['cat', img, p]);
      assert.equal(c.status, 0);
      assert.ok(readFileSync(join(t, p)).equals(c.stdout), `${p} differs`);
    }
    assert.ok(readFileSync(join(t, 'd/f')).equals(dataBytes(1, 0, 5000)));
    assert.ok(readFileSync(join(t, 'inline')).equals(dataBytes(2, 0, 100)));
    const bigData = readFileSync(join(t, 'd/e/big'));
    assert.ok(bigData.subarray(0, 300000).equals(dataBytes(7, 0, 300000)));
    assert.ok(bigData.subarray(1000000).equals(dataBytes(8, 1000000, 5000)));
    const big = statSync(join(t, 'd/e/big'));
    assert.ok(big.blocks * 512 < 400000, `the hole in /d/e/big is kept (${big.blocks} blocks)`);
  });

  test('hard links are one inode, symlinks are links', () => {
    assert.equal(statSync(join(t, 'd/f')).ino, statSync(join(t, 'd/g')).ino);
    assert.equal(readlinkSync(join(t, 'l')), '../d/f');
    assert.equal(readlinkSync(join(t, 'abs')), '/nowhere/at/all');
  });

  test('xattrs of files and directories', () => {
    assert.deepEqual(xattrs(join(t, 'd/f')), { 'user.a': 'v' });
    assert.deepEqual(xattrs(join(t, 'd/g')), { 'user.a': 'v' });
    assert.deepEqual(xattrs(join(t, 'd')), { 'user.dir': 'dir value' });
  });
});

function modeString(m) {
  const t = (m & 0o170000) === 0o040000 ? 'd' : (m & 0o170000) === 0o120000 ? 'l' : '-';
  let s = t;
  for (let i = 8; i >= 0; i--) s += m & (1 << i) ? 'rwxrwxrwx'[8 - i] : '-';
  const a = [...s];
  if (m & 0o4000) a[3] = m & 0o100 ? 's' : 'S';
  if (m & 0o2000) a[6] = m & 0o10 ? 's' : 'S';
  if (m & 0o1000) a[9] = m & 0o1 ? 't' : 'T';
  return a.join('');
}

describe('the target', () => {
  let img;
  before(() => { img = image('small', 'mkfs nodesize=4K size=64M\ncreate /f\nwrite /f 0 10 1\n'); });

  test('an existing directory, file or link (even dangling) is refused, and left as it was', () => {
    const dir = target();
    mkdirSync(dir);
    writeFileSync(join(dir, 'mine'), 'mine');
    const file = target();
    writeFileSync(file, 'a file');
    const link = target();
    symlinkSync(SENTINELS[1], link);
    const dangling = target();
    symlinkSync(join(PLACE, 'not-there'), dangling);
    for (const t of [dir, file, link, dangling]) {
      const r = cli(['extract', img, t]);
      assert.equal(r.code, 1, t);
      assert.match(r.err, /exists: give a directory to create/);
    }
    assert.deepEqual(readdirSync(dir), ['mine']);
    assert.equal(readFileSync(file, 'utf8'), 'a file');
    assert.ok(!existsSync(join(PLACE, 'not-there')));
  });

  test('a bad image leaves no target; a missing parent is an error', () => {
    const bad = join(WORK, 'not-an-image');
    writeFileSync(bad, Buffer.alloc(1 << 20));
    const t = target();
    const r = cli(['extract', bad, t]);
    assert.equal(r.code, 1);
    assert.ok(!existsSync(t), 'no directory made for an image that does not open');
    const m = cli(['extract', img, join(PLACE, 'missing', 'x')]);
    assert.equal(m.code, 1);
    assert.match(m.err, /No such file or directory/);
  });

  test('usage errors exit 2', () => {
    assert.equal(cli(['extract', img]).code, 2);
    assert.equal(cli(['extract', '--bogus', img, target()]).code, 2);
    const s = cli(['extract', '--max-size', '12Q', img, target()]);
    assert.equal(s.code, 2);
    assert.match(s.err, /--max-size: '12Q' is not a size/);
  });

  test('the target is made private (0700 less nothing) until filled, then gets the root directory mode', () => {
    const t = target();
    assert.equal(cli(['extract', img, t]).code, 0);
    assert.equal(statSync(t).mode & 0o777, 0o755);
  });
});

/** The bytes a scenario's `write PATH off len seed` puts there (scenario_data_byte). */
function dataBytes(seed, off, len) {
  const M = (1n << 64n) - 1n, G = 0x9E3779B97F4A7C15n, out = Buffer.alloc(len);
  for (let i = 0; i < len; i++) {
    const pos = BigInt(off + i);
    let z = (BigInt(seed) * G + (pos >> 3n) + G) & M;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & M;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & M;
    z ^= z >> 31n;
    out[i] = Number((z >> ((pos & 7n) * 8n)) & 0xffn);
  }
  return out;
}

/** len bytes of path at off. */
function readAt(path, off, len) {
  const fd = openSync(path, 'r'), b = Buffer.alloc(len);
  try {
    assert.equal(readSync(fd, b, 0, len, off), len);
  } finally {
    closeSync(fd);
  }
  return b;
}

describe('size', () => {
  test('a 1 TiB sparse file extracts in moments and takes almost no space', () => {
    const far = 2 ** 39;
    const img = image('sparse', `mkfs nodesize=4K size=64M\ncreate /s\nwrite /s 4096 4096 1\nwrite /s ${far} 8192 2\ntruncate /s 1099511627776\n`);
    const t = target();
    const r = cli(['extract', img, t]);
    assert.equal(r.code, 0, r.err);
    const s = statSync(join(t, 's'));
    assert.equal(s.size, 2 ** 40);
    assert.ok(s.blocks * 512 <= 64 * 1024, `${s.blocks} blocks`);
    assert.ok(r.ms < 5000, `took ${r.ms} ms`);
    assert.ok(readAt(join(t, 's'), 4096, 4096).equals(dataBytes(1, 4096, 4096)));
    assert.ok(readAt(join(t, 's'), far, 8192).equals(dataBytes(2, far, 8192)));
    assert.ok(readAt(join(t, 's'), 0, 4096).equals(Buffer.alloc(4096)));
    assert.ok(readAt(join(t, 's'), 2 ** 40 - 4096, 4096).equals(Buffer.alloc(4096)));
  });

  test('zero blocks inside data are left as holes', () => {
    const img = image('zeros', 'mkfs nodesize=4K size=64M\ncreate /z\nwrite /z 0 4096 1\nwrite /z 1048576 4096 2\n');
    const fill = join(WORK, 'zeros-src');
    mkdirSync(fill);
    writeFileSync(join(fill, 'z'), Buffer.concat([Buffer.alloc(4096, 1), Buffer.alloc(1 << 20), Buffer.alloc(4096, 2)]));
    const img2 = join(WORK, 'zeros2.img');
    assert.equal(cli(['mkfs', '--rootdir', fill, img2]).code, 0);
    for (const i of [img, img2]) {
      const t = target();
      assert.equal(cli(['extract', i, t]).code, 0);
      const st = statSync(join(t, 'z'));
      assert.equal(st.size, (1 << 20) + 4096 + (i === img2 ? 4096 : 0));
      assert.ok(st.blocks * 512 <= 16384, `${i}: ${st.blocks} blocks`);
    }
  });

  test('--max-size stops extraction with a message naming the flag; 0 means no limit', () => {
    const img = image('data', 'mkfs nodesize=4K size=64M\ncreate /a\nwrite /a 0 300000 1\ncreate /b\nwrite /b 0 300000 2\n');
    const t = target();
    const r = cli(['extract', '--max-size', '256K', img, t]);
    assert.equal(r.code, 1);
    assert.match(r.err, /stopped: the files hold more than 262144 bytes of data \(--max-size\)/);
    let bytes = 0;
    for (const n of readdirSync(t)) bytes += statSync(join(t, n)).blocks * 512;
    assert.ok(bytes <= 262144 + 8192, `${bytes} bytes on disk`);
    const t0 = target();
    assert.equal(cli(['extract', '--max-size', '0', img, t0]).code, 0);
    assert.equal(statSync(join(t0, 'b')).size, 300000);
    const t1 = target();
    assert.equal(cli(['extract', '--max-size', '1M', img, t1]).code, 0);
  });
});


describe('privileged things only when asked for', { skip: !isRoot && 'needs root (mknod, chown, trusted xattrs)' }, () => {
  let img, src;
  before(() => {
    src = join(WORK, 'priv-src');
    mkdirSync(join(src, 'sticky'), { recursive: true });
    writeFileSync(join(src, 'sticky', 'in'), 'in');
    const files = { suid: 0o4755, sgid: 0o2711, x: 0o644, owned: 0o640 };
    for (const [n, m] of Object.entries(files)) {
      writeFileSync(join(src, n), n);
      execFileSync('chmod', [m.toString(8), join(src, n)]);
    }
    execFileSync('chmod', ['1777', join(src, 'sticky')]);
    execFileSync('chown', ['1234:5678', join(src, 'owned')]);
    execFileSync('mknod', ['-m', '666', join(src, 'cdev'), 'c', '1', '3']);
    execFileSync('mknod', ['-m', '660', join(src, 'bdev'), 'b', '7', '200']);
    execFileSync('mkfifo', ['-m', '640', join(src, 'fifo')]);
    execFileSync('python3', ['-c', 'import os,sys,socket; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', join(src, 'sock')]);
    execFileSync('python3', ['-c', 'import os,sys; os.setxattr(sys.argv[1], "trusted.evil", b"1"); os.setxattr(sys.argv[1], "user.fine", b"2")', join(src, 'x')]);
    img = join(WORK, 'priv.img');
    const r = cli(['mkfs', '--rootdir', src, img]);
    assert.equal(r.code, 0, r.err);
  });

  test('without flags: no setuid, setgid or sticky bit, no device node, no trusted xattr, each said', () => {
    const t = target();
    const r = cli(['extract', img, t]);
    assert.equal(r.code, 0, r.err);
    assert.equal(statSync(join(t, 'suid')).mode & 0o7777, 0o755);
    assert.equal(statSync(join(t, 'sgid')).mode & 0o7777, 0o711);
    assert.equal(statSync(join(t, 'sticky')).mode & 0o7777, 0o777);
    assert.ok(!existsSync(join(t, 'cdev')) && !existsSync(join(t, 'bdev')));
    assert.deepEqual(xattrs(join(t, 'x')), { 'user.fine': '2' });
    for (const note of [`${t}/suid: setuid/setgid bits not restored (use --same-permissions)`,
      `${t}/sgid: setuid/setgid bits not restored (use --same-permissions)`,
      `${t}/sticky: sticky bit not restored (use --same-permissions)`,
      `${t}/cdev: device node not created (use --devices)`, `${t}/bdev: device node not created (use --devices)`,
      `${t}/x: xattr trusted.evil not restored (use --all-xattrs)`]) {
      assert.ok(r.err.includes(`btrfslab extract: ${note}\n`), `says ${note}\n${r.err}`);
    }
    assert.ok(statSync(join(t, 'fifo')).isFIFO(), 'FIFOs are fine');
    assert.ok(lstatSync(join(t, 'sock')).isSocket(), 'sockets are fine');
    assert.equal(statSync(join(t, 'fifo')).mode & 0o7777, 0o640);
    const o = statSync(join(t, 'owned'));
    assert.deepEqual([o.uid, o.gid, o.mode & 0o7777], [1234, 5678, 0o640], 'owners are restored as root');
  });

  test('with --same-permissions, --devices and --all-xattrs: all of it', () => {
    const t = target();
    const r = cli(['extract', '--same-permissions', '--devices', '--all-xattrs', img, t]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err, '');
    assert.equal(statSync(join(t, 'suid')).mode & 0o7777, 0o4755);
    assert.equal(statSync(join(t, 'sgid')).mode & 0o7777, 0o2711);
    assert.equal(statSync(join(t, 'sticky')).mode & 0o7777, 0o1777);
    const c = lstatSync(join(t, 'cdev')), b = lstatSync(join(t, 'bdev'));
    assert.ok(c.isCharacterDevice() && b.isBlockDevice());
    assert.deepEqual([c.rdev, b.rdev], [lstatSync(join(src, 'cdev')).rdev, lstatSync(join(src, 'bdev')).rdev]);
    assert.deepEqual([c.mode & 0o777, b.mode & 0o777], [0o666, 0o660]);
    assert.deepEqual(xattrs(join(t, 'x')), { 'trusted.evil': '1', 'user.fine': '2' });
  });

  test('each flag lifts only its own protection', () => {
    const t = target();
    const r = cli(['extract', '--devices', img, t]);
    assert.equal(r.code, 0, r.err);
    assert.ok(lstatSync(join(t, 'cdev')).isCharacterDevice());
    assert.equal(statSync(join(t, 'suid')).mode & 0o7777, 0o755);
    assert.deepEqual(xattrs(join(t, 'x')), { 'user.fine': '2' });
  });
});

describe('walks', () => {
  test('a tree deeper than the descriptors allow stops with a message, inside the target', () => {
    let script = 'mkfs nodesize=4K size=64M\n', p = '';
    for (let i = 0; i < 120; i++) script += `mkdir ${(p += '/d')}\n`;
    script += `create ${p}/bottom\n`;
    const img = image('deep', script);
    const t = target();
    const r = spawnSync('sh', ['-c', 'ulimit -n 48 && exec "$0" extract "$1" "$2"', CLI, img, t], { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /directory tree too deep to extract \(no file descriptors left at depth \d+\); stopped\n/);
    assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, r.stderr);
    const full = target();
    assert.equal(cli(['extract', img, full]).code, 0, 'with descriptors to spare it extracts whole');
    assert.ok(existsSync(join(full, p, 'bottom')));
  });

  test('ls -R of a deep tree prints every path', () => {
    let script = 'mkfs nodesize=4K size=64M\n', p = '';
    for (let i = 0; i < 300; i++) script += `mkdir ${(p += '/dd')}\n`;
    const img = image('deep-ls', script);
    const r = cli(['ls', '-R', img]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.split('\n').filter(Boolean).length, 300);
    assert.ok(r.out.endsWith(`${p}\n`));
  });
});

describe('standard output', () => {
  let img, logged, script;
  before(() => {
    img = image('out', 'mkfs nodesize=4K size=64M\ncreate /f\nwrite /f 0 300000 1\nmkdir /d\n');
    logged = image('out-log', 'mkfs nodesize=4K size=64M\ncreate /f\nwrite /f 0 100 1\ncommit\nwrite /f 0 200 2\nfsync /f\ncrash\n');
    script = join(WORK, 'out.txt');
  });

  test('a full disk (/dev/full) fails every command that writes to it', () => {
    const full = openSync('/dev/full', 'w');
    try {
      const cases = [
        ['cat', ['cat', img, '/f']], ['ls', ['ls', img]], ['ls', ['ls', '-R', '-l', img]], ['check', ['check', img]],
        ['dump-tree', ['dump-tree', img]], ['dump-json', ['dump-json', img]],
        ['replay', ['replay', logged, '-o', join(WORK, 'replayed.img')]],
        ['run', ['run', script, '--metrics', '-']], ['run', ['run', script, '--trace', '-']],
        ['--help', ['--help']], ['--version', ['--version']],
      ];
      for (const [cmd, args] of cases) {
        const r = spawnSync(CLI, args, { encoding: 'utf8', stdio: ['ignore', full, 'pipe'], timeout: 60000 });
        assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stderr, `btrfslab ${cmd}: write error: No space left on device\n`, args.join(' '));
      }
    } finally {
      closeSync(full);
    }
  });

  test('a closed pipe ends cat and ls -R without a hang', () => {
    for (const args of [['cat', img, '/f'], ['ls', '-R', img]]) {
      const r = spawnSync('sh', ['-c', '"$0" "$@" | head -c 1 > /dev/null', CLI, ...args], { encoding: 'utf8', timeout: 20000 });
      assert.equal(r.status, 0, r.stderr);
    }
  });
});

describe('SCRIPT', () => {
  test('a directory, a FIFO or a device is refused at once', () => {
    const fifo = join(WORK, 'script.fifo');
    execFileSync('mkfifo', [fifo]);
    for (const [path, what] of [[WORK, 'is a directory'], [fifo, 'is a FIFO'], ['/dev/null', 'is a device']]) {
      const r = cli(['run', path], { timeout: 10000 });
      assert.equal(r.code, 1, `${path}: ${r.err}`);
      assert.equal(r.err, `btrfslab run: ${path}: ${what} (SCRIPT must be a regular file or -)\n`);
    }
  });

  test('standard input and a regular file run', () => {
    const s = join(WORK, 'ok.txt');
    writeFileSync(s, 'mkdir /x\n');
    assert.equal(cli(['run', s]).code, 0);
    assert.equal(cli(['run', '-'], { input: 'mkdir /x\n' }).code, 0);
  });
});
