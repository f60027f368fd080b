// The CLI's contract with people: clear errors and exit codes on bad input,
// and no half-written image left behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as CRC from './crc32c.mjs';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('help and version', () => {
  const h = cli('--help');
  assert.equal(h.code, 0);
  for (const cmd of ['mkfs [--rootdir DIR]', 'run SCRIPT', 'replay IMAGE -o OUT', 'ls [--replay] [-R] [-l] IMAGE', 'cat [--replay] IMAGE PATH', 'extract [--same-permissions] [--devices] [--all-xattrs] [--max-size S] IMAGE DIR', 'check [--check-data-csum] IMAGE', 'dump-tree [-t TREE]']) {
    assert.ok(h.out.includes(cmd), `help mentions ${cmd}`);
  }
  assert.match(cli('--version').out, /^btrfslab \d+\.\d+\.\d+/);
});

test('unknown command and unknown option', () => {
  const c = cli('frobnicate');
  assert.equal(c.code, 2);
  assert.match(c.err, /unknown command 'frobnicate'/);
  const o = cli('mkfs', '--bogus', join(dir, 'x.img'));
  assert.equal(o.code, 2);
  assert.match(o.err, /unknown option '--bogus'/);
  assert.ok(!existsSync(join(dir, 'x.img')));
});

test('sizes: malformed, and too small names the minimum', () => {
  const m = cli('mkfs', '--size', '12Q', join(dir, 'x.img'));
  assert.equal(m.code, 2);
  assert.match(m.err, /--size: '12Q' is not a size/);
  const s = cli('mkfs', '--size', '10M', join(dir, 'x.img'));
  assert.equal(s.code, 1);
  assert.match(s.err, /too small: the minimum is 25165824 bytes \(24 MiB\)/);
  const s64 = cli('mkfs', '--size', '40M', '--nodesize', '64K', join(dir, 'x.img'));
  assert.match(s64.err, /the minimum is 67108864 bytes \(64 MiB\)/);
  assert.ok(!existsSync(join(dir, 'x.img')));
});

test('missing value, missing image, bad nodesize', () => {
  assert.match(cli('mkfs', '--size').err, /option --size needs a value/);
  assert.match(cli('mkfs').err, /missing IMAGE/);
  const n = cli('mkfs', '--nodesize', '12K', join(dir, 'x.img'));
  assert.equal(n.code, 1);
  assert.match(n.err, /nodesize 12288 is invalid/);
});

test('an existing output that is not a regular file is refused and left alone', () => {
  const d = join(dir, 'adir');
  mkdirSync(d);
  writeFileSync(join(d, 'keep'), 'precious');
  const r = cli('mkfs', '--size', '32M', d);
  assert.equal(r.code, 1);
  assert.match(r.err, /exists and is not a regular file/);
  assert.equal(readFileSync(join(d, 'keep'), 'utf8'), 'precious');
  const dev = cli('mkfs', '--size', '32M', '/dev/null');
  assert.equal(dev.code, 1);
  assert.match(dev.err, /\/dev\/null exists and is not a regular file/);
});

test('an existing regular file is replaced whole, with no temporary left', () => {
  const img = join(dir, 'over.img');
  writeFileSync(img, 'old contents');
  const r = cli('mkfs', '--size', '32M', img);
  assert.equal(r.code, 0, r.err);
  assert.equal(statSync(img).size, 32 * 1024 * 1024);
  assert.deepEqual(readdirSync(dir).filter((f) => f.includes('.tmp-')), []);
});

test('an unwritable place fails cleanly', () => {
  const r = cli('mkfs', '--size', '32M', join(dir, 'no/such/dir/x.img'));
  assert.equal(r.code, 1);
  assert.match(r.err, /cannot create .*x\.img: No such file or directory/);
});

test('same seed and time give the same bytes', () => {
  const a = join(dir, 'a.img');
  const b = join(dir, 'b.img');
  assert.equal(cli('mkfs', '--size', '32M', '--seed', '9', '--time', '1700000000', a).code, 0);
  assert.equal(cli('mkfs', '--size', '32M', '--seed', '9', '--time', '1700000000', b).code, 0);
  assert.ok(readFileSync(a).equals(readFileSync(b)));
});

test('dump-tree on a file that is not btrfs says so', () => {
  const junk = join(dir, 'junk.img');
  writeFileSync(junk, Buffer.alloc(1 << 20, 0x5a));
  const r = cli('dump-tree', junk);
  assert.equal(r.code, 1);
  assert.match(r.err, /no btrfs magic/);
  const t = cli('dump-tree', '-t', 'nosuchtree', junk);
  assert.equal(t.code, 2);
  assert.match(t.err, /unknown tree 'nosuchtree'/);
});

function script(name, text) {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

test('scenario errors name the file, the line and an errno-style reason', () => {
  const cases = [
    ['mkdir /a\ncreate /a/b/c\n', /s\.txt:2: create: ENOENT: \/a\/b: no such file or directory/],
    ['create /x\ncreate /x\n', /s\.txt:2: create: EEXIST: \/x: file exists/],
    ['mkdir /d\ncreate /d/f\nrmdir /d\n', /s\.txt:3: rmdir: ENOTEMPTY: \/d: directory not empty/],
    ['create /f\nmkdir /f/g\n', /s\.txt:2: mkdir: ENOTDIR: \/f: not a directory/],
    ['mkdir /d\nunlink /d\n', /s\.txt:2: unlink: EISDIR/],
    ['mkdir /d\nmkdir /d/e\nrename /d /d/e/f\n', /s\.txt:3: rename: EINVAL: \/d: cannot move a directory into itself/],
    ['frobnicate /x\n', /s\.txt:1: frobnicate: EPARSE: unknown command/],
    ['write /f 0\n', /s\.txt:1: write: EPARSE: expects write PATH OFFSET LENGTH \[SEED\]/],
    ['create /f\nwrite /f zero 10\n', /s\.txt:2: write: EPARSE: offset 'zero' is not a number/],
    ['create "/unterminated\n', /s\.txt:1: EPARSE: unterminated quote/],
    ['create /d/f_{5..1}\n', /s\.txt:1: create: EPARSE: '\/d\/f_\{5\.\.1\}': a brace range looks like/],
    ['# a comment\n\nmkfs nodesize=12K\n', /s\.txt:3: mkfs: EINVAL: nodesize 12288 is invalid/],
    ['create /a\nmkfs\n', /s\.txt:2: mkfs: EPARSE: mkfs may only be the first command/],
    [`create /${'n'.repeat(256)}\n`, /ENAMETOOLONG/],
  ];
  for (const [text, want] of cases) {
    const img = join(dir, 'never.img');
    const r = cli('run', script('s.txt', text), '--image', img);
    assert.equal(r.code, 1, `exit code for ${JSON.stringify(text)}`);
    assert.match(r.err, want, `message for ${JSON.stringify(text)}`);
    assert.ok(!existsSync(img), 'no image written on error');
  }
});

test('a scenario runs, and ls, cat and extract read its image', () => {
  const img = join(dir, 'run.img');
  const s = script('ok.txt', '# comment\nmkfs nodesize=4K size=64M label=lab\nmkdir /d\ncreate /d/f_{1..50}\nwrite /d/f_1 0 5000 3\nsymlink /d/f_1 /ln\n"setxattr" /d/f_2 user.k "two words"\ncommit\nunlink /d/f_{10..20}\n');
  const r = cli('run', s, '--image', img, '--metrics', join(dir, 'm.json'), '--trace', join(dir, 't.jsonl'));
  assert.equal(r.code, 0, r.err);
  const m = JSON.parse(readFileSync(join(dir, 'm.json'), 'utf8'));
  assert.equal(m.commits, 2);
  assert.equal(m.nodesize, 4096);
  const trace = readFileSync(join(dir, 't.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(trace.some((e) => e.kind === 'cow') && trace.at(-1).kind === 'commit');
  assert.deepEqual(cli('ls', img).out.split('\n').filter(Boolean), ['d', 'ln']);
  const names = cli('ls', img, '/d').out.trim().split('\n');
  assert.equal(names.length, 39);
  assert.match(cli('ls', '-l', img, '/').out, /^lrwxrwxrwx 1 0 0 6 ln -> \/d\/f_1$/m);
  assert.equal(cli('ls', '-R', img).out.trim().split('\n').length, 41);
  const cat = spawnSync(CLI, ['cat', img, '/d/f_1']);
  assert.equal(cat.stdout.length, 5000);
  assert.match(cli('cat', img, '/d').err, /\/d: is a directory/);
  assert.match(cli('cat', img, '/nope').err, /\/nope: no such file or directory/);
  assert.match(cli('ls', img, '/d/f_1/x').err, /\/d\/f_1: not a directory/);
  const out = join(dir, 'extracted');
  assert.equal(cli('extract', img, out).code, 0);
  assert.ok(readFileSync(join(out, 'd/f_1')).equals(cat.stdout));
  assert.match(cli('extract', img, out).err, /exists: give a directory to create/);
  assert.equal(cli('check', img).code, 0);
});

test('check reports problems a person can act on', () => {
  const img = join(dir, 'bad.img');
  assert.equal(cli('run', script('b.txt', 'mkfs nodesize=4K size=64M\ncreate /f_{1..300}\n'), '--image', img).code, 0);
  const bytes = readFileSync(img);
  const extentRoot = (() => {
    const d = cli('dump-tree', '-t', 'extent', img).out;
    return Number(/^(?:leaf|node) (\d+)/m.exec(d)[1]);
  })();
  bytes[extentRoot + 200] ^= 0xff; // a bit flip in the extent tree root
  writeFileSync(img, bytes);
  const r = cli('check', img);
  assert.equal(r.code, 1);
  assert.match(r.err + r.out, /checksum verify failed on logical \d+ \(root 2\)/);
});

test('outputs: devices and pipes are written in place, links are followed and kept', () => {
  const s = script('o.txt', 'create /a\n');
  const r = spawnSync(CLI, ['run', s, '--metrics', '/dev/stdout'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).ops, 1);
  assert.ok(lstatSync('/dev/stdout').isSymbolicLink(), '/dev/stdout is still a link');
  const real = join(dir, 'real.img');
  const link = join(dir, 'link.img');
  writeFileSync(real, '');
  symlinkSync(real, link);
  assert.equal(cli('mkfs', '--size', '32M', link).code, 0);
  assert.ok(lstatSync(link).isSymbolicLink(), 'the link stays a link');
  assert.equal(statSync(real).size, 32 << 20);
  assert.equal(cli('run', s, '--image', link).code, 0);
  assert.ok(lstatSync(link).isSymbolicLink());
  symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling.img'));
  assert.match(cli('mkfs', '--size', '32M', join(dir, 'dangling.img')).err, /symbolic link to a missing file/);
});

test('fsync, crash and replay: the image keeps the log, replay brings it back, metrics count it', () => {
  const s = join(dir, 'crash.txt'), img = join(dir, 'crash.img'), out = join(dir, 'replayed.img');
  writeFileSync(s, 'mkdir /d\ncreate /d/old{1..3}\ncommit\ncreate /d/new\nwrite /d/new 0 5000 3\nfsync /d/new\nunlink /d/old2\nfsync /d\ncrash\n');
  const r = cli('run', s, '--image', img, '--metrics', '-');
  assert.equal(r.code, 0, r.err);
  const m = JSON.parse(r.out);
  assert.equal(m.crashed, true);
  assert.equal(m.fsyncs.length, 2);
  assert.deepEqual(m.fsyncs[0].items, { INODE_ITEM: 1, INODE_REF: 1, EXTENT_DATA: 1, EXTENT_CSUM: 1 });
  assert.equal(m.fsyncs[1].items.DIR_LOG_INDEX, 2);
  for (const f of m.fsyncs) assert.ok(f.cost_us > 0 && f.leaves >= 1 && f.result === 'logged');
  // without replay the image shows the last commit; with it, what fsync kept
  assert.doesNotMatch(cli('ls', img, '/d').out, /new/);
  assert.match(cli('ls', '--replay', img, '/d').out, /new/);
  assert.equal(spawnSync(CLI, ['cat', '--replay', img, '/d/new']).stdout.length, 5000);
  const rep = cli('replay', img, '-o', out);
  assert.equal(rep.code, 0, rep.err);
  assert.match(rep.out, /replayed the log of transaction \d+/);
  assert.deepEqual(cli('ls', out, '/d').out.split('\n').filter(Boolean).sort(), ['new', 'old1', 'old3']);
  assert.equal(cli('check', '--check-data-csum', out).code, 0);
  // replaying an image with no log copies it unchanged
  const again = cli('replay', out, '-o', join(dir, 'again.img'));
  assert.equal(again.code, 0);
  assert.match(again.out, /no log to replay/);
  assert.deepEqual(readFileSync(join(dir, 'again.img')), readFileSync(out));
});

test('replay: usage errors and a corrupt log are named, and no output is left', () => {
  assert.equal(cli('replay').code, 2);
  assert.match(cli('replay', join(dir, 'x.img')).err, /usage: replay IMAGE -o OUT/);
  const s = join(dir, 'c2.txt'), img = join(dir, 'c2.img'), out = join(dir, 'c2-out.img');
  writeFileSync(s, 'create /f\nwrite /f 0 100 1\nfsync /f\ncrash\n');
  assert.equal(cli('run', s, '--image', img).code, 0);
  // point log_root past the end of every chunk, with the superblock checksum redone
  const b = readFileSync(img);
  b.writeBigUInt64LE(60n << 30n, 0x10000 + 0x60);
  const { crc32c } = CRC;
  b.writeUInt32LE(crc32c(b.subarray(0x10000 + 32, 0x10000 + 4096)), 0x10000);
  const bad = join(dir, 'c2-bad.img');
  writeFileSync(bad, b);
  const r = cli('replay', bad, '-o', out);
  assert.equal(r.code, 1);
  assert.match(r.err, /log[ _]root\b.*64424509440/);
  assert.ok(!existsSync(out), 'no output image after a failed replay');
  assert.match(cli('ls', '--replay', bad).err, /replaying the log of .*: .*log_root/);
});

test('dump-tree -t: a tree by name or number, any u64 (TREE_RELOC is 2^64-8); one the image lacks is named in the error', () => {
  const img = join(dir, 'trees.img');
  assert.equal(cli('run', script('t.txt', 'mkfs size=64M\ncreate /f\n'), '--image', img).code, 0);
  const ext = cli('dump-tree', '-t', 'extent', img);
  assert.equal(ext.code, 0, ext.err);
  assert.match(ext.out, /^extent tree key \(EXTENT_TREE ROOT_ITEM 0\) \n/);
  assert.match(ext.out, /\ntotal bytes 67108864\nbytes used \d+\nuuid [0-9a-f-]{36}\n$/);
  assert.equal(cli('dump-tree', '-t', '2', img).out, ext.out);
  assert.doesNotMatch(cli('dump-tree', '-t', 'root', img).out, /total bytes/); // as btrfs-progs: the root tree alone
  for (const t of ['TREE_RELOC', '18446744073709551608', '-8']) {
    const r = cli('dump-tree', '-t', t, img);
    assert.equal(r.code, 1);
    assert.match(r.err, /no tree TREE_RELOC \(18446744073709551608\) in this image/, t);
  }
  assert.match(cli('dump-tree', '-t', '999', img).err, /no tree with id 999 in this image/);
  assert.match(cli('dump-tree', '-t', '18446744073709551616', img).err, /-t: unknown tree '18446744073709551616'/); // 2^64
});
