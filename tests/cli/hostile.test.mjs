// Hostile images (made by make-hostile.mjs with craft.mjs: valid checksums,
// one thing wrong each) and hostile places (a directory as SCRIPT, a FIFO as
// IMAGE). Every reader of the CLI runs on every image and must end: exit 0
// or 1, no signal, no timeout, bounded output, and a message naming the
// problem when the image is corrupt. Each class then gets what it must give.
//
// extract only ever runs into a fresh directory under a mkdtemp root:
//   ROOT/a/b/c/t-N               the targets, three levels down
//   ROOT/s1, ROOT/a/s2           sentinel directories (the images' symlinks point at them:
//                                s1 by its absolute path, s2 by ../../../../s2 from T/e)
//   ROOT/keep, a/keep, a/b/keep, a/b/c/keep, s1/keep, s2/keep   sentinel files
// so a name that climbs ("..\0") or a symlink that escapes can only reach
// the sentinels, and everything under ROOT but the images, the outputs and
// the targets is snapshotted (path, mode, owner, size, mtime) before and
// compared after every extract.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { Image, KEY_TYPE, decodeDirEntries, fmtKey, nameHash } from './craft.mjs';
import { makeHostile } from './make-hostile.mjs';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const TIMEOUT = 20000; // per command: generous for a busy machine
const MAX_OUT = 64 << 20;

const ROOT = mkdtempSync(join(tmpdir(), 'btrfslab-hostile-'));
// rm works relative to directory fds: 2,090-deep trees and odd modes cost it nothing
after(() => spawnSync('rm', ['-rf', ROOT]));
const IMAGES = join(ROOT, 'images'), OUT = join(ROOT, 'out');
const OUTER = join(ROOT, 'a', 'b', 'c'), S1 = join(ROOT, 's1'), S2 = join(ROOT, 'a', 's2');
for (const d of [IMAGES, OUT, OUTER, join(S1, 'inner'), S2]) mkdirSync(d, { recursive: true });
for (const d of [ROOT, join(ROOT, 'a'), join(ROOT, 'a', 'b'), OUTER, S1, S2]) writeFileSync(join(d, 'keep'), 'sentinel\n');

const cases = await makeHostile(IMAGES, { cli: CLI, sentinel: S1, relSentinel: '../../../../s2' });
const byName = Object.fromEntries(cases.map((c) => [c.name, c]));
const images = cases.filter((c) => c.kind !== 'script');
const XATTR_IMAGES = new Set(cases.filter((c) => c.kind === 'privileged').map((c) => c.file)); // with trusted.*/security.* xattrs

// --- running the CLI ----------------------------------------------------------------

function cli(args, { timeout = TIMEOUT } = {}) {
  const t0 = Date.now();
  const r = spawnSync(CLI, args, { timeout, maxBuffer: MAX_OUT, killSignal: 'SIGKILL' });
  const stdout = r.stdout ?? Buffer.alloc(0);
  return { args, status: r.status, signal: r.signal, error: r.error, stdout, out: stdout.toString('latin1'), stderr: (r.stderr ?? '').toString(), ms: Date.now() - t0 };
}
/** cli() without blocking: the readers of one image run side by side (the same result fields). */
function cliAsync(args, { timeout = TIMEOUT } = {}) {
  return new Promise((done) => {
    const t0 = Date.now(), out = [], err = [];
    let size = 0, error;
    const p = spawn(CLI, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => { error = Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }); p.kill('SIGKILL'); }, timeout);
    p.stdout.on('data', (b) => {
      size += b.length;
      if (size > MAX_OUT) { error ??= Object.assign(new Error('too much output'), { code: 'ENOBUFS' }); p.kill('SIGKILL'); } else out.push(b);
    });
    p.stderr.on('data', (b) => err.push(b));
    p.on('error', (e) => { error ??= e; });
    p.on('close', (status, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out);
      done({ args, status, signal: error ? null : signal, error, stdout, out: stdout.toString('latin1'), stderr: Buffer.concat(err).toString(), ms: Date.now() - t0 });
    });
  });
}
const show = (r) => `exit ${r.status}${r.signal ? ` signal ${r.signal}` : ''} after ${r.ms} ms\nstderr: ${r.stderr.slice(0, 600)}`;
/** The command ended by itself: no timeout, no signal, no unbounded output, exit 0 or 1. */
function ended(r, what) {
  assert.notEqual(r.error?.code, 'ETIMEDOUT', `${what}: still running after ${TIMEOUT / 1000} s (a hang?)`);
  assert.notEqual(r.error?.code, 'ENOBUFS', `${what}: more than ${MAX_OUT} bytes of output`);
  assert.equal(r.error, undefined, `${what}: ${r.error?.message}`);
  assert.equal(r.signal, null, `${what}: killed by ${r.signal}\n${r.stderr.slice(0, 2000)}`);
  assert.ok(r.status === 0 || r.status === 1, `${what}: ${show(r)}`);
  assert.ok(r.stdout.length < MAX_OUT, `${what}: ${r.stdout.length} bytes of output`);
  // a name from the image never reaches the terminal raw through a message (escape sequences, NULs)
  assert.doesNotMatch(r.stderr, /[\x00-\x08\x0b-\x1f\x7f]/, `${what}: control characters in a message: ${JSON.stringify(r.stderr.slice(0, 300))}`);
}
/** The command failed (exit 1) with a message matching re on stderr (check may report on stdout:
 *  its findings are its output, as btrfs check's are). */
function failed(r, re, what) {
  ended(r, what);
  assert.equal(r.status, 1, `${what}: must fail\n${show(r)}`);
  const said = r.args?.[0] === 'check' ? `${r.stderr}\n${r.out}` : r.stderr;
  assert.match(said, re, `${what}: the message must name the problem\n${show(r)}`);
}

// --- the places around the targets -------------------------------------------------------

let nTarget = 0;
const newTarget = () => join(OUTER, `t-${nTarget++}`);
/** Everything under ROOT except the images, outputs and targets: path -> mode size mtime. */
function snapshot() {
  const out = {};
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (p === IMAGES || p === OUT || (dir === OUTER && name.startsWith('t-'))) continue;
      const s = lstatSync(p);
      out[p] = `${s.mode.toString(8)} ${s.uid}:${s.gid} ${s.isDirectory() ? '' : s.size} ${s.isDirectory() ? '' : s.mtimeMs}`;
      if (s.isDirectory()) walk(p);
    }
  };
  walk(ROOT);
  return out;
}
const BEFORE = snapshot();
/** extract into a fresh target, then check nothing else under ROOT changed. */
function extract(img, flags = [], what = img, { deep = false } = {}) {
  const target = newTarget();
  const r = cli(['extract', ...flags, img, target]);
  ended(r, `extract ${flags.join(' ')} ${what}`);
  assert.deepEqual(snapshot(), BEFORE, `extract ${what} changed something outside its target\n${r.stderr.slice(0, 1000)}`);
  // without its flags, no extract makes anything setuid/setgid, a device or a trusted/security xattr
  // (os.walk recurses: a 2,090-deep tree is inspected by its own test)
  if (!flags.length && !deep && existsSync(target)) {
    assert.deepEqual(privileged(inventory(target, { xattrs: XATTR_IMAGES.has(img) })), [], `extract ${what}: privileged files without the flags`);
  }
  return { ...r, target };
}

/** What is in dir: [{path (relative), mode, rdev, xattrs}]; xattrs listed (by python, without following
 *  links) only when asked. */
function inventory(dir, { xattrs = false } = {}) {
  if (!xattrs) { // node alone (no listxattr): spares a python start per extract
    const out = [], stack = [[Buffer.from(dir), '']];
    while (stack.length) {
      const [abs, rel] = stack.pop();
      for (const n of readdirSync(abs, { encoding: 'buffer' })) {
        const p = Buffer.concat([abs, Buffer.from('/'), n]), path = rel ? `${rel}/${n.toString('latin1')}` : n.toString('latin1');
        const s = lstatSync(p);
        out.push({ path, mode: s.mode, rdev: s.rdev, xattrs: [] });
        if (s.isDirectory()) stack.push([p, path]);
      }
    }
    return out;
  }
  const py = `
import json, os, stat, sys
top = sys.argv[1]
out = []
for d, dirs, files in os.walk(top):
    for n in dirs + files:
        p = os.path.join(d, n)
        s = os.lstat(p)
        x = [] if stat.S_ISLNK(s.st_mode) else os.listxattr(p, follow_symlinks=False)
        out.append({"path": os.path.relpath(p, top), "mode": s.st_mode, "rdev": s.st_rdev, "xattrs": sorted(x)})
print(json.dumps(out))`;
  const r = spawnSync('python3', ['-c', py, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}
/** What in an inventory a plain extract must not have made. */
const privileged = (inv) => inv.filter((f) => (f.mode & 0o6000) || [0o020000, 0o060000].includes(f.mode & 0o170000) ||
  f.xattrs.some((x) => /^(trusted|security)\./.test(x))).map((f) => `${f.path} ${f.mode.toString(8)} ${f.xattrs}`);

// --- what each kind of image must give -------------------------------------------------

const NAME_PROBLEM = /corrupt leaf: root=5 block=\d+ slot=\d+, .*(name_len \d+|overruns the item|name hash mismatch)/;
const LOG_PROBLEM = /corrupt leaf: root=-6 block=\d+ slot=\d+, .*(name_len \d+|overruns the item)/;
const META_PROBLEM = /corrupt (node|leaf)[^\n]*level \d+|sys_chunk_array|not mapped by any chunk|chunk/;
const CYCLE = /corrupt: directory inode \d+ is reached a second time|cycle/;
const SHAPE = /first key mismatch|has level \d+, expect \d+|referenced twice|reached twice|corrupt/;
// loose: any message that names a problem (check prints its findings as "ERROR: ..." on stdout)
// a crafted image whose checksums are wrong tests nothing but the checksum: craft.mjs seals every block
const BAD_CSUM = /checksum verify failed|checksum mismatch|csum mismatch/i;
const ANY_PROBLEM = /corrupt|invalid|too long|too large|overrun|cycle|twice|second time|mismatch|refus|unsafe|exists|limit|not mapped|ERROR: /i;

describe('every reader on every crafted image ends, and says why when it fails', () => {
  for (const c of images) {
    test(c.name, async () => {
      const readers = [
        ['ls', c.file, '/'], ['ls', '-R', '-l', c.file], ['ls', '--replay', '-R', c.file],
        ...(c.cat ?? []).map((p) => ['cat', c.file, p]),
        ['check', '--check-data-csum', c.file], ['dump-tree', c.file], ['dump-json', c.file],
        ['replay', c.file, '-o', join(OUT, `${c.name}.replayed`)],
      ];
      if (c.deep) readers.splice(2, 1); // ls -R once is enough for 4 MB of paths
      const results = await Promise.all(readers.map((args) => cliAsync(args)));
      for (const [i, args] of readers.entries()) {
        const r = results[i];
        const what = `${args.slice(0, -1).filter((a) => a !== c.file).join(' ')} ${c.name}`;
        ended(r, what);
        assert.doesNotMatch(r.stderr, BAD_CSUM, `${what}: a crafted image must keep valid checksums`);
        if (r.status !== 0 && !(args[0] === 'replay' && /no log|log_root/.test(r.stderr))) {
          assert.match(args[0] === 'check' ? `${r.stderr}\n${r.out}` : r.stderr, ANY_PROBLEM, `${what}: fails without saying why\n${show(r)}`);
        }
        if (c.kind === 'corrupt') failed(r, NAME_PROBLEM, what);
        if (c.kind === 'corrupt-meta') failed(r, META_PROBLEM, what);
        if (c.kind === 'valid') assert.equal(r.status, 0, `${what}: a valid image\n${show(r)}`);
      }
      if (c.deep || c.kind === 'escape-root') return; // extracted by their own tests below (escape-root: in a sandbox only)
      const x = extract(c.file, [], c.name);
      if (c.kind === 'corrupt') failed(x, NAME_PROBLEM, `extract ${c.name}`);
      if (c.kind === 'corrupt-meta') failed(x, META_PROBLEM, `extract ${c.name}`);
      if (c.kind === 'valid') assert.equal(x.status, 0, `extract ${c.name}\n${show(x)}`);
      if (x.status === 1) assert.match(x.stderr, ANY_PROBLEM, `extract ${c.name}: fails without saying why`);
    });
  }
});

test('a chunk whose stripe length is 0 is refused, as the kernel and btrfs check refuse it', () => {
  const c = byName['503-chunks-stripe-len-0'];
  for (const args of [['ls', c.file, '/'], ['check', c.file], ['dump-tree', c.file]]) failed(cli(args), /stripe/, `${args[0]} ${c.name}`);
});

describe('the crafted images are wrong only where they mean to be', () => {
  test('every DIR_ITEM and XATTR_ITEM key offset is its name hash (craft.mjs hashes as the CLI does)', () => {
    let n = 0;
    for (const c of images.filter((x) => ['unsafe-name', 'escape', 'privileged', 'cycle'].includes(x.kind))) {
      const im = Image.open(c.file);
      for (const it of im.findAll('fs', (k) => k.type === KEY_TYPE.DIR_ITEM || k.type === KEY_TYPE.XATTR_ITEM)) {
        for (const e of decodeDirEntries(it.data)) {
          assert.equal(it.key.offset, nameHash(e.name), `${c.name}: ${fmtKey(it.key)} holds ${JSON.stringify(e.name.toString('latin1'))}`);
          n++;
        }
      }
    }
    assert.ok(n > 50, `${n} entries compared`);
  });

  test('btrfs check (btrfs-progs) finds nothing wrong in the images whose fault is only what extract must refuse', (t) => {
    if (spawnSync('btrfs', ['--version']).error) return t.skip('btrfs-progs is not installed');
    // 204 gives a symlink inode directory entries: btrfs check rightly calls that an odd dir item
    const clean = images.filter((x) => ['unsafe-name', 'escape', 'privileged', 'valid'].includes(x.kind) && !x.name.startsWith('204-'));
    for (const c of clean) {
      const r = spawnSync('btrfs', ['check', '--readonly', c.file], { encoding: 'utf8', timeout: TIMEOUT });
      assert.equal(r.status, 0, `btrfs check ${c.name}:\n${r.stdout}${r.stderr}`.slice(0, 2000));
    }
  });
});

describe('names', () => {
  test('over-long names and names past their items: check reports them (never "0 errors")', () => {
    for (const c of images.filter((x) => x.kind === 'corrupt')) {
      const r = cli(['check', c.file]);
      failed(r, NAME_PROBLEM, `check ${c.name}`);
      assert.doesNotMatch(r.out, /\b0 errors found/, c.name);
    }
  });

  test('a log holding an over-long name is refused by replay, and no output is written', () => {
    for (const c of images.filter((x) => x.kind === 'corrupt-log')) {
      const out = join(OUT, `${c.name}.refused`);
      failed(cli(['replay', c.file, '-o', out]), LOG_PROBLEM, `replay ${c.name}`);
      assert.ok(!existsSync(out), `${c.name}: replay wrote ${out}`);
      assert.deepEqual(readdirSync(OUT).filter((n) => n.startsWith(`${c.name}.refused`)), [], `${c.name}: a temporary output left behind`);
      failed(cli(['ls', '--replay', c.file]), LOG_PROBLEM, `ls --replay ${c.name}`);
      failed(cli(['dump-tree', c.file]), LOG_PROBLEM, `dump-tree ${c.name}`);
      // without --replay the log is not read: the committed tree lists
      assert.equal(cli(['ls', c.file]).status, 0, `ls ${c.name}`);
    }
  });

  test('names with "/", NUL, "." or ".." are refused by extract, and nothing is made for them', () => {
    for (const c of images.filter((x) => x.kind === 'unsafe-name')) {
      for (const flags of [[], ['--same-permissions', '--devices', '--all-xattrs']]) {
        const x = extract(c.file, flags, c.name);
        failed(x, /unsafe name|refus/, `extract ${c.name}`);
        const made = inventory(x.target).map((f) => f.path);
        assert.deepEqual(made.filter((p) => /[\0]|(^|\/)\.\.?$/.test(p)), [], `${c.name}: ${made}`);
        if (c.name === '124-names-dir-dotdot-nul') {
          assert.deepEqual(made.sort(), ['d', 'd/f'], `${c.name}: only the safe part`);
        } else {
          assert.ok(made.includes('a/b/g'), `${c.name}: the safe rest is extracted (${made})`);
          assert.deepEqual(made.filter((p) => p.startsWith('d/')), [], `${c.name}: something was made for the bad name`);
        }
      }
    }
  });
});

describe('extract escapes', () => {
  test('a symlink then a directory of the same name: nothing is written through the link', () => {
    for (const name of ['201-escape-symlink-abs-then-dir', '202-escape-symlink-rel-then-dir', '203-escape-hardlink-in-symlinked-dir', '207-escape-symlink-then-file']) {
      for (const flags of [[], ['--same-permissions', '--devices', '--all-xattrs']]) {
        const x = extract(byName[name].file, flags, name);
        failed(x, /File exists|exists|symlink|refus|twice/, `extract ${name}`);
        const link = lstatSync(join(x.target, 'e', 'x'));
        assert.ok(link.isSymbolicLink(), `${name}: e/x is the link, not a directory`);
        assert.deepEqual(privileged(inventory(x.target, { xattrs: true })), [], name);
      }
    }
    assert.deepEqual(readdirSync(S1).sort(), ['inner', 'keep']);
    assert.deepEqual(readdirSync(S2).sort(), ['keep']);
  });

  test("a symlink's owner, times and xattrs go on the link, never on the sentinel it points at", () => {
    for (const flags of [[], ['--same-permissions', '--devices', '--all-xattrs']]) {
      const x = extract(byName['208-escape-symlink-attrs'].file, flags, '208-escape-symlink-attrs');
      const l = lstatSync(join(x.target, 'l'));
      assert.ok(l.isSymbolicLink(), 'l is a link');
      if (process.getuid() === 0) assert.equal(l.uid, 4321, "the link's own owner (lchown)");
      assert.equal(lstatSync(join(x.target, 'f')).isFile(), true, 'the rest is extracted');
      const py = 'import os,sys,json\nprint(json.dumps([os.listxattr(p, follow_symlinks=False) for p in sys.argv[1:]]))';
      const r = spawnSync('python3', ['-c', py, S1, join(S1, 'keep'), S2], { encoding: 'utf8' });
      assert.deepEqual(JSON.parse(r.stdout), [[], [], []], 'no xattr set on a sentinel');
    }
  });

  test('entries under a symlink inode are not followed', () => {
    const x = extract(byName['204-escape-entries-under-symlink'].file);
    assert.ok(lstatSync(join(x.target, 's')).isSymbolicLink());
    assert.equal(lstatSync(join(x.target, 'f')).size, 100);
  });

  test('setuid/setgid, device nodes and trusted/security xattrs only with their flags, and said when skipped', () => {
    const img = byName['210-escape-privileged'].file;
    const plain = extract(img, [], 'privileged');
    assert.equal(plain.status, 0, show(plain));
    const inv = inventory(plain.target, { xattrs: true });
    assert.deepEqual(privileged(inv), [], 'nothing privileged without the flags');
    const at = (i, p) => i.find((f) => f.path === p);
    assert.equal(at(inv, 'suid').mode & 0o7777, 0o755, 'the file is there, without its setuid bit');
    assert.deepEqual(at(inv, 'x').xattrs, ['user.ok'], 'user xattrs are restored');
    for (const flag of ['--same-permissions', '--devices', '--all-xattrs']) assert.match(plain.stderr, new RegExp(flag), `says ${flag} would restore it`);

    const all = extract(img, ['--same-permissions', '--devices', '--all-xattrs'], 'privileged with flags');
    assert.equal(all.status, 0, show(all));
    const inv2 = inventory(all.target, { xattrs: true });
    assert.equal(at(inv2, 'suid').mode & 0o7777, 0o4755);
    assert.equal(at(inv2, 'sgid').mode & 0o7777, 0o2755);
    assert.equal(at(inv2, 'sgid-dir').mode & 0o2000, 0o2000);
    assert.equal(at(inv2, 'null').mode & 0o170000, 0o020000, 'a character device');
    assert.equal(at(inv2, 'null').rdev, (1 << 8) | 3, 'rdev 1:3');
    assert.ok(at(inv2, 'x').xattrs.includes('trusted.evil'), `${at(inv2, 'x').xattrs}`);
    assert.equal(lstatSync(join(all.target, 'suid')).uid, 0);
  });

  test('a target that exists, as a directory or as a link to a sentinel, is refused', () => {
    const img = byName['210-escape-privileged'].file;
    const t = newTarget();
    mkdirSync(t);
    failed(cli(['extract', img, t]), /exists/, 'extract into an existing directory');
    assert.deepEqual(readdirSync(t), []);
    const l = newTarget();
    spawnSync('ln', ['-s', S1, l]);
    failed(cli(['extract', img, l]), /exists|link/, 'extract into a link');
    assert.deepEqual(snapshot(), BEFORE, 'the link was followed');
  });
});

// --- a sandbox for the images that lead back to the root ----------------------------------
//
// An extract that trusts an entry "..\0" naming the root directory climbs every parent up to /.
// Those images are extracted only in a private mount namespace where / is read-only and a fresh
// tmpfs over ROOT holds the same sentinel tree at the same paths (the image is read through a
// descriptor opened before): whatever escapes can only meet the tmpfs sentinels or a read-only /.
// The sandbox refuses to run unless it really is in a mount namespace of its own (a remount there
// must never reach the machine's /).
const SANDBOX = String.raw`
set -u
cli=$1 img=$2 target=$3; shift 3
[ "$(readlink /proc/self/ns/mnt)" != "$HOST_NS" ] || { echo 'not in a private mount namespace' >&2; exit 97; }
exec 3< "$img" || exit 98
mount -o remount,bind,ro / || exit 98
mount -t tmpfs -o size=256m,mode=0700 none "$ROOT" || exit 98
mkdir -p "$S1/inner" "$S2" "$OUTER"
for d in "$ROOT" "$ROOT/a" "$ROOT/a/b" "$OUTER" "$S1" "$S2"; do echo sentinel > "$d/keep"; done
snap() { python3 -c "$PY" "$ROOT" "$target"; }
echo "BEFORE $(snap)"
"$cli" extract "$@" /dev/fd/3 "$target" > /dev/null
echo "RC $?"
echo "AFTER $(snap)"
`;
const SNAP_PY = `
import json, os, stat, sys
top, target = sys.argv[1], sys.argv[2]
tree, inside = {}, []
for d, dirs, files in os.walk(top):
    for n in dirs + files:
        p = os.path.join(d, n)
        s = os.lstat(p)
        if p == target or p.startswith(target + "/"):
            x = [] if stat.S_ISLNK(s.st_mode) else os.listxattr(p, follow_symlinks=False)
            inside.append({"path": os.path.relpath(p, target), "mode": s.st_mode, "rdev": s.st_rdev, "xattrs": sorted(x)})
        else:
            tree[p] = "%o %d:%d %s" % (s.st_mode, s.st_uid, s.st_gid, "" if stat.S_ISDIR(s.st_mode) else "%d %d" % (s.st_size, s.st_mtime_ns))
print(json.dumps({"tree": tree, "target": inside}))`;
const HOST_NS = readlinkSync('/proc/self/ns/mnt');
const sandboxOK = spawnSync('unshare', ['-m', '--propagation', 'private', 'bash', '-c', '[ "$(readlink /proc/self/ns/mnt)" != "$1" ]', '-', HOST_NS]).status === 0;

function sandboxExtract(img, flags = []) {
  const target = join(OUTER, 't-sandbox');
  const t0 = Date.now();
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'bash', '-c', SANDBOX, 'sandbox', CLI, img, target, ...flags],
    { encoding: 'utf8', timeout: TIMEOUT * 2, maxBuffer: MAX_OUT, killSignal: 'SIGKILL', env: { ...process.env, HOST_NS, PY: SNAP_PY, ROOT, OUTER, S1, S2 } });
  assert.equal(r.error, undefined, `sandbox: ${r.error?.message}`);
  assert.equal(r.status, 0, `sandbox: exit ${r.status}
${r.stderr}`);
  const line = (tag) => r.stdout.split('\n').find((l) => l.startsWith(`${tag} `))?.slice(tag.length + 1);
  const status = Number(line('RC'));
  return { status, signal: status > 128 ? `signal ${status - 128}` : null, stderr: r.stderr, ms: Date.now() - t0,
    before: JSON.parse(line('BEFORE')), after: JSON.parse(line('AFTER')) };
}

describe('entries back to the root directory: extracted only in a sandbox', { skip: !sandboxOK && 'no private mount namespace (unshare -m) here' }, () => {
  for (const name of ['205-escape-dotdot-nul-to-root', '206-escape-symlink-then-root']) {
    test(name, () => {
      for (const flags of [[], ['--same-permissions', '--devices', '--all-xattrs']]) {
        const x = sandboxExtract(byName[name].file, flags);
        const what = `extract ${flags.join(' ')} ${name}`;
        assert.equal(x.signal, null, `${what}: killed (${x.signal})
${x.stderr.slice(0, 1000)}`);
        assert.equal(x.status, 1, `${what}: must fail
${x.stderr.slice(0, 1000)}`);
        assert.match(x.stderr, /unsafe name|refus|exists|second time|cycle/, what);
        assert.doesNotMatch(x.stderr, /Read-only file system/, `${what}: tried to write outside the sandbox's tree`);
        assert.deepEqual(x.after.tree, x.before.tree, `${what}: changed something outside its target`);
        assert.deepEqual(x.after.target.filter((f) => f.path.includes('\0') || (flags.length === 0 && (f.mode & 0o6000))), [], what);
      }
      assert.deepEqual(snapshot(), BEFORE);
    });
  }
});

describe('walks', () => {
  test('a directory entry back to an ancestor: ls -R and extract stop at once and name the cycle', () => {
    for (const c of images.filter((x) => x.kind === 'cycle')) {
      for (const args of [['ls', '-R', c.file], ['ls', '--replay', '-R', '-l', c.file]]) {
        const r = cli(args);
        failed(r, CYCLE, `${args.join(' ')}`);
        assert.ok(r.ms < 5000 && r.stdout.length < 1 << 20, `${c.name} ${args[0]}: ${r.ms} ms, ${r.stdout.length} bytes`);
      }
      const x = extract(c.file, [], c.name);
      failed(x, CYCLE, `extract ${c.name}`);
      assert.ok(x.ms < 5000, `extract ${c.name}: ${x.ms} ms`);
    }
  });

  test('check finds the entries back to an ancestor (a directory with a second name; btrfs check does too)', () => {
    for (const c of images.filter((x) => x.kind === 'cycle')) {
      const r = cli(['check', c.file]);
      failed(r, /(ERROR|corrupt)[^\n]*(link|name|ref|twice|second|cycle|reached)/i, `check ${c.name}`);
      assert.doesNotMatch(r.out, /\b0 errors found/, c.name);
      assert.ok(r.ms < 5000, `check ${c.name}: ${r.ms} ms`);
    }
  });

  test('nodes whose pointers lead to one child (or back to themselves): check, dump-tree, dump-json fail fast', () => {
    for (const c of images.filter((x) => x.kind === 'shared-child')) {
      for (const cmd of ['check', 'dump-tree', 'dump-json']) {
        const r = cli([cmd, c.file]);
        failed(r, SHAPE, `${cmd} ${c.name}`);
        assert.ok(r.ms < 5000, `${cmd} ${c.name}: ${r.ms} ms`);
      }
      // ls -R -l and extract read every inode, so they must meet the bad pointer (ls -R alone may not)
      failed(cli(['ls', '-R', '-l', c.file]), SHAPE, `ls -R -l ${c.name}`);
      failed(cli(['ls', '--replay', '-R', '-l', c.file]), SHAPE, `ls --replay -R -l ${c.name}`);
      failed(extract(c.file, [], c.name), SHAPE, `extract ${c.name}`);
    }
  });

  test('a valid tree 2,090 directories deep lists, checks and extracts whole', () => {
    const c = byName['301-walks-deep-2090'];
    const ls = cli(['ls', '-R', c.file]);
    assert.equal(ls.status, 0, show(ls));
    assert.equal(ls.out.trim().split('\n').length, 2091);
    assert.equal(cli(['check', '--check-data-csum', c.file]).status, 0);
    const progs = spawnSync('btrfs', ['check', c.file], { encoding: 'utf8' });
    if (!progs.error) assert.equal(progs.status, 0, `btrfs check: ${progs.stdout}${progs.stderr}`);
    const x = extract(c.file, [], c.name, { deep: true });
    assert.equal(x.status, 0, show(x));
    // its absolute path is longer than PATH_MAX: reach the bottom with relative steps
    const py = 'import os,sys\nos.chdir(sys.argv[1])\nfor _ in range(2090): os.chdir("d")\nprint(os.path.getsize("bottom"))';
    assert.equal(spawnSync('python3', ['-c', py, x.target], { encoding: 'utf8' }).stdout.trim(), '10');
  });
});

describe('sizes', () => {
  test('a 1 TiB sparse file extracts sparse in moments', () => {
    const x = extract(byName['401-size-sparse-file-1t'].file);
    assert.equal(x.status, 0, show(x));
    assert.ok(x.ms < 10000, `extract took ${x.ms} ms`);
    const s = lstatSync(join(x.target, 'big'));
    assert.equal(s.size, 2 ** 40);
    assert.ok(s.blocks * 512 < 1 << 20, `${s.blocks * 512} bytes allocated`);
  });

  test('one data extent shared 400 times extracts whole, and --max-size bounds what is written', () => {
    const c = byName['403-size-one-extent-400-times'];
    const x = extract(c.file, [], c.name);
    assert.equal(x.status, 0, show(x));
    assert.ok(x.ms < 10000, `extract took ${x.ms} ms`);
    const g = readFileSync(join(x.target, c.shared.path)), f = readFileSync(join(x.target, c.shared.source));
    assert.equal(g.length, c.shared.size);
    for (let at = 0; at < g.length; at += f.length) assert.ok(g.subarray(at, at + f.length).equals(f), `g at ${at}: the shared extent`);

    const m = extract(c.file, ['--max-size', '1M'], `${c.name} --max-size 1M`);
    failed(m, /max-size/, `extract --max-size 1M ${c.name}`);
    const written = inventory(m.target).reduce((n, e) => n + ((e.mode & 0o170000) === 0o100000 ? lstatSync(join(m.target, e.path)).blocks * 512 : 0), 0);
    assert.ok(written <= (1 << 20) + (1 << 16), `${written} bytes written under --max-size 1M`);

    failed(extract(byName['401-size-sparse-file-1t'].file, ['--max-size', '4K']), /max-size/, 'extract --max-size 4K of a file with 9,096 bytes of data');
    assert.equal(extract(byName['401-size-sparse-file-1t'].file, ['--max-size', '1M']).status, 0, 'holes do not count against --max-size');
  });

  test('an image file of 15 TB apparent size opens in moments', () => {
    const img = byName['404-size-image-15t'].file;
    for (const args of [['ls', img, '/'], ['ls', '-R', '-l', img], ['check', img], ['extract', img, newTarget()]]) {
      const r = cli(args);
      assert.equal(r.status, 0, show(r));
      assert.ok(r.ms < 5000, `${args.join(' ')} took ${r.ms} ms`);
    }
  });

  test('a file whose i_size says 2^62 ends with a message, not a 4 EiB write', () => {
    const x = extract(byName['402-size-isize-2e62'].file);
    assert.ok(x.ms < 5000, `${x.ms} ms`);
    if (x.status === 0) assert.ok(lstatSync(join(x.target, 'd', 'f')).blocks * 512 < 1 << 20);
  });
});

describe('scripts and arguments', () => {
  const run = (c, extra = []) => cli(['run', c.file, ...extra, '--image', join(OUT, `${c.name}.img`)]);
  test('brace ranges to 2^64 and past it, op and byte limits: refused at once with a message', () => {
    const want = {
      '601-scenario-brace-to-2e64': /brace range may hold at most \d+ names/,
      '602-scenario-brace-over-2e64': /below 2\^64/,
      '604-scenario-op-limit': /:2: create: .*(at most 2,?000,?000 names|more than 2,?000,?000 operations)/,
      '606-scenario-write-4g': /writes more than \d+ bytes/,
      '607-scenario-unlink-range-2e64': /brace range may hold at most \d+ names/,
    };
    for (const [name, re] of Object.entries(want)) {
      const r = run(byName[name]);
      failed(r, re, name);
      assert.ok(r.ms < 5000, `${name}: ${r.ms} ms`);
      assert.ok(!existsSync(join(OUT, `${name}.img`)), `${name}: an image was written`);
    }
    const ops = run(byName['605-scenario-ops-over-max'], ['--max-ops', String(byName['605-scenario-ops-over-max'].maxOps)]);
    failed(ops, /:3: create: .*more than 1000 operations/, '605 with --max-ops 1000');
  });

  test('a range ending exactly at 2^64-1 runs', () => {
    const c = byName['603-scenario-brace-edge-2e64'];
    const img = join(OUT, `${c.name}.img`);
    const r = cli(['run', c.file, '--metrics', '-', '--image', img]);
    assert.equal(r.status, 0, show(r));
    assert.ok(r.ms < 5000, `${r.ms} ms`);
    assert.equal(JSON.parse(r.out).ops, c.ops);
    const ls = cli(['ls', img, '/d']);
    assert.equal(ls.status, 0, show(ls));
    const names = ls.out.split('\n').filter(Boolean).map((l) => l.split('/').pop()).sort();
    assert.deepEqual(names, ['0', '1', '2', '3', '4', '5'].map((i) => `f_1844674407370955161${i}`), 'exactly the six names');
  });

  test('a directory as SCRIPT fails at once', () => {
    const r = cli(['run', OUT], { timeout: 5000 });
    failed(r, /directory|regular file/, 'run DIR');
  });

  test('a FIFO or an endless device as SCRIPT, a directory or /dev/zero as IMAGE: refused at once, never read', () => {
    const fifo = join(OUT, 'script-fifo');
    spawnSync('mkfifo', [fifo]);
    for (const [args, re] of [[['run', fifo], /FIFO|regular file/], [['run', '/dev/zero'], /device|regular file/],
      [['ls', OUT], /directory/], [['ls', '-R', '/dev/zero'], /character device/], [['check', '/dev/urandom'], /character device/],
      [['extract', '/dev/zero', newTarget()], /character device/]]) {
      const r = cli(args, { timeout: 5000 });
      assert.notEqual(r.error?.code, 'ETIMEDOUT', `${args.join(' ')} blocked`);
      failed(r, re, args.join(' '));
      assert.ok(r.ms < 3000, `${args.join(' ')}: ${r.ms} ms`);
    }
  });

  test('a full standard output is an error, not a truncated success', () => {
    const img = byName['401-size-sparse-file-1t'].file;
    for (const args of [['ls', '-R', '-l', img], ['cat', img, '/big'], ['check', img], ['dump-tree', img], ['dump-json', img],
      ['run', byName['603-scenario-brace-edge-2e64'].file, '--metrics', '-']]) {
      const full = openSync('/dev/full', 'w');
      const t0 = Date.now();
      const r = spawnSync(CLI, args, { stdio: ['ignore', full, 'pipe'], timeout: TIMEOUT, killSignal: 'SIGKILL' });
      closeSync(full);
      const res = { args, status: r.status, signal: r.signal, error: r.error, stdout: Buffer.alloc(0), out: '', stderr: r.stderr.toString(), ms: Date.now() - t0 };
      failed(res, /write error|No space left/, `${args[0]} > /dev/full`);
      assert.ok(res.ms < 10000, `${args[0]} > /dev/full: ${res.ms} ms (cat of 1 TiB must stop at the first failed write)`);
    }
  });

  test('a FIFO as IMAGE fails at once, for every reader', () => {
    const fifo = join(OUT, 'fifo');
    spawnSync('mkfifo', [fifo]);
    for (const args of [['ls', fifo], ['ls', '-R', fifo], ['cat', fifo, '/f'], ['check', fifo], ['dump-tree', fifo], ['dump-json', fifo],
      ['replay', fifo, '-o', join(OUT, 'fifo.out')], ['extract', fifo, newTarget()]]) {
      const r = cli(args, { timeout: 5000 });
      assert.notEqual(r.error?.code, 'ETIMEDOUT', `${args[0]} FIFO blocked`);
      failed(r, /FIFO/, `${args[0]} FIFO`);
    }
  });
});

test('the places around every target are as they were', () => {
  assert.deepEqual(snapshot(), BEFORE);
  assert.deepEqual(readdirSync(ROOT).sort(), ['a', 'images', 'keep', 'out', 's1']);
  assert.deepEqual(readdirSync(join(ROOT, 'a')).sort(), ['b', 'keep', 's2']);
  assert.deepEqual(readdirSync(OUTER).filter((n) => !n.startsWith('t-')), ['keep']);
});
