// Hostile images (crafted with valid checksums by hostile-images.mjs) and
// hostile places: every reader of the CLI on every image ends with exit 0 or
// 1 and a message, never a signal, a hang or unbounded output; extract never
// writes outside its target, which sits three levels down a throwaway tree
// whose other directories (sentinels) must stay exactly as they were.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { CLI, makeHostileImages } from './hostile-images.mjs';

const root = mkdtempSync(join(tmpdir(), 'btrfslab-hostile-'));
// rm walks relative to directory fds: the 2,090-deep trees cost it nothing
after(() => execFileSync('rm', ['-rf', root]));
const sentinel = join(root, 's1');
mkdirSync(join(sentinel, 'inner'), { recursive: true });
writeFileSync(join(sentinel, 'keep'), 'sentinel\n');
mkdirSync(join(root, 'a', 's2'), { recursive: true });
mkdirSync(join(root, 'a', 'b', 'c'), { recursive: true });
writeFileSync(join(root, 'a', 'b', 'keep'), 'sentinel\n');
const images = join(root, 'images');
const work = join(root, 'work'); // the test's own outputs, outside the snapshot
mkdirSync(work);
const cases = makeHostileImages(images, sentinel);
const byName = Object.fromEntries(cases.map((c) => [c.name, c]));

function cli(args, timeout = 20000) {
  const t0 = Date.now();
  const r = spawnSync(CLI, args, { encoding: 'utf8', timeout, maxBuffer: 64 << 20 });
  return { ...r, ms: Date.now() - t0 };
}
function ended(r, what) {
  assert.equal(r.error?.code, undefined, `${what}: ${r.error?.message} (a hang or unbounded output)`);
  assert.equal(r.signal, null, `${what}: killed by ${r.signal}\n${r.stderr}`);
  assert.ok(r.status === 0 || r.status === 1, `${what}: exit ${r.status}\n${r.stderr}`);
}

/** Everything under root except the extraction targets: path -> mode, size, mtime. */
function snapshot() {
  const out = {};
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (p === images || p === work || p.startsWith(join(root, 'a', 'b', 'c', 't'))) continue;
      const s = lstatSync(p);
      // the targets' parent changes as they are made: its mode must not
      out[p] = p === join(root, 'a', 'b', 'c') ? `${s.mode}` : `${s.mode} ${s.size} ${s.mtimeMs}`;
      if (s.isDirectory()) walk(p);
    }
  };
  walk(root);
  return out;
}
const before = snapshot();
let nTarget = 0;
/** A fresh extraction target, three levels below root. */
const target = () => join(root, 'a', 'b', 'c', `t${nTarget++}`);

/** Every file below dir that is setuid/setgid, a device node, or has a trusted/security xattr. */
function privileged(dir) {
  const found = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name), s = lstatSync(p);
      if (s.mode & 0o6000) found.push(`${p}: setuid/setgid`);
      if (s.isCharacterDevice() || s.isBlockDevice()) found.push(`${p}: device`);
      if (!s.isSymbolicLink()) {
        const x = spawnSync('python3', ['-c', 'import os,sys; print(" ".join(os.listxattr(sys.argv[1])))', p], { encoding: 'utf8' }).stdout;
        if (/\b(trusted|security)\./.test(x)) found.push(`${p}: ${x.trim()}`);
      }
      if (s.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return found;
}

const MESSAGE = {
  corrupt: /corrupt leaf: root=5 block=\d+ slot=\d+, (invalid (dir item|inode ref) name_len (300|65535), expect 1\.\.255|dir item name_len \d+ \+ data_len 4000 overruns the item)/,
  cycle: /corrupt: directory inode 256 is reached a second time/,
  'shared-child': /tree first key mismatch detected/,
};

// Which readers must fail (exit 1, naming the problem) on each kind of image;
// the rest may succeed, and must end either way.
const MUST_FAIL = {
  corrupt: ['ls', 'ls -R', 'check', 'dump-tree', 'dump-json', 'replay', 'extract'],
  cycle: ['ls -R', 'extract'],
  'shared-child': ['ls -R', 'check', 'dump-tree', 'dump-json', 'extract'],
};

describe('every reader on every crafted image', () => {
  for (const c of cases) {
    test(c.name, () => {
      const readers = { ls: ['ls', c.img, '/'], 'ls -R': ['ls', '-R', '-l', c.img], check: ['check', '--check-data-csum', c.img],
        'dump-tree': ['dump-tree', c.img], 'dump-json': ['dump-json', c.img], replay: ['replay', c.img, '-o', join(work, `${c.name}.out`)],
        extract: ['extract', c.img, target()] };
      for (const [name, args] of Object.entries(readers)) {
        const r = cli(args);
        ended(r, `${name} ${c.name}`);
        if (!(MUST_FAIL[c.kind] ?? []).includes(name)) continue;
        assert.equal(r.status, 1, `${name} ${c.name}: exit 1\n${r.stderr}`);
        const want = name === 'check' && c.kind === 'shared-child' ? /referenced twice/ : MESSAGE[c.kind];
        assert.match(`${r.stdout}${r.stderr}`, want, `${name} ${c.name} names the problem`);
      }
    });
  }
});

describe('what each class must give', () => {
  test('over-long names: check reports them, nothing reads past the item', () => {
    for (const c of cases.filter((x) => x.kind === 'corrupt')) {
      const r = cli(['check', c.img]);
      assert.equal(r.status, 1, c.name);
      assert.match(`${r.stdout}${r.stderr}`, MESSAGE.corrupt, c.name);
    }
  });

  test('a log holding an over-long xattr name is refused by replay, and nothing is written', () => {
    const c = byName['110-log-xattr-name-300'];
    const out = join(work, 'log-replayed.img');
    const r = cli(['replay', c.img, '-o', out]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /corrupt leaf: root=-6 block=\d+ slot=\d+, invalid dir item name_len 300/);
    assert.ok(!existsSync(out), 'no output image');
    assert.equal(cli(['ls', '--replay', c.img]).status, 1);
  });

  test('names with /, NUL, . or .. are refused by extract, which stays in its directory', () => {
    for (const c of cases.filter((x) => x.kind === 'unsafe-name')) {
      const t = target();
      const r = cli(['extract', c.img, t]);
      assert.equal(r.status, 1, c.name);
      assert.match(r.stderr, /refusing an unsafe name \(inode \d+\)/, c.name);
      assert.deepEqual(readdirSync(join(t, 'd')), [], `${c.name}: nothing made for the bad name`);
      assert.ok(existsSync(join(t, 'a', 'g')), `${c.name}: the rest is extracted`);
    }
  });

  test('a directory named "..\\0" is refused, not climbed into', () => {
    const t = target();
    const r = cli(['extract', byName['111-dir-named-dotdot-nul'].img, t]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /\/\.\.\\x00: refusing an unsafe name/);
    assert.deepEqual(readdirSync(t).sort(), ['d']);
    assert.deepEqual(readdirSync(join(root, 'a', 'b', 'c')).filter((n) => !n.startsWith('t')), [], 'nothing beside the targets');
  });

  test('a directory entry named like a symlink before it is not written through the link', () => {
    const t = target();
    const r = cli(['extract', byName['201-symlink-then-dir-same-name'].img, t]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /e\/x: File exists/);
    assert.equal(lstatSync(join(t, 'e', 'x')).isSymbolicLink(), true);
    assert.deepEqual(readdirSync(sentinel).sort(), ['inner', 'keep']);
  });

  test('cycles: ls -R and extract stop at once with the cycle named', () => {
    for (const c of cases.filter((x) => x.kind === 'cycle')) {
      for (const args of [['ls', '-R', c.img], ['extract', c.img, target()]]) {
        const r = cli(args);
        assert.equal(r.status, 1, `${c.name} ${args[0]}`);
        assert.match(r.stderr, MESSAGE.cycle);
        assert.ok(r.stdout.length < 10000, `${c.name} ${args[0]}: ${r.stdout.length} bytes of output`);
        assert.ok(r.ms < 10000, `${c.name} ${args[0]} took ${r.ms} ms`);
      }
    }
  });

  test('a node whose pointers all lead to one child: check, dump-tree and dump-json fail fast', () => {
    const c = byName['303-all-pointers-to-one-child'];
    for (const cmd of ['check', 'dump-tree', 'dump-json']) {
      const r = cli([cmd, c.img]);
      assert.equal(r.status, 1, cmd);
      assert.match(`${r.stdout}${r.stderr}`, cmd === 'check' ? /block \d+ is referenced twice/ : MESSAGE['shared-child'], cmd);
      assert.ok(r.ms < 10000, `${cmd} took ${r.ms} ms`);
    }
  });

  test('a valid tree 2,090 directories deep lists and extracts whole', () => {
    const c = byName['304-valid-2090-deep'];
    const ls = cli(['ls', '-R', c.img]);
    assert.equal(ls.status, 0, ls.stderr);
    assert.equal(ls.stdout.trim().split('\n').length, 2091);
    const t = target();
    const r = cli(['extract', c.img, t]);
    assert.equal(r.status, 0, r.stderr);
    // the bottom, reached with relative steps (its absolute path is longer than PATH_MAX; bash's cd would resolve it whole)
    const found = execFileSync('python3', ['-c', 'import os,sys\nos.chdir(sys.argv[1])\nfor _ in range(2090): os.chdir("d")\nprint(os.path.getsize("bottom"))', t], { encoding: 'utf8' });
    assert.equal(found.trim(), '0');
    execFileSync('rm', ['-rf', t]);
  });

  test('a 1 TiB sparse file extracts as a sparse file in moments', () => {
    const t = target();
    const r = cli(['extract', byName['401-sparse-file-1t'].img, t]);
    assert.equal(r.status, 0, r.stderr);
    const s = statSync(join(t, 'big'));
    assert.equal(s.size, 1024 * 2 ** 30);
    assert.ok(s.blocks * 512 < 1 << 20, `${s.blocks * 512} bytes allocated`);
    assert.ok(r.ms < 10000, `extract took ${r.ms} ms`);
    const limited = cli(['extract', '--max-size', '4K', byName['401-sparse-file-1t'].img, target()]);
    assert.equal(limited.status, 1);
    assert.match(limited.stderr, /stopped: the files hold more than 4096 bytes of data \(--max-size\)/);
  });

  test('an image file of 15 TB apparent size opens in moments', () => {
    const r = cli(['ls', '-R', byName['402-image-15t-apparent'].img]);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.ms < 5000, `ls -R took ${r.ms} ms`);
  });

  test('privileged things are restored only when asked for', () => {
    const src = join(work, 'priv-src');
    mkdirSync(join(src, 'd'), { recursive: true });
    writeFileSync(join(src, 'suid'), 'x');
    execFileSync('chmod', ['4755', join(src, 'suid')]);
    execFileSync('mknod', [join(src, 'null'), 'c', '1', '3']);
    writeFileSync(join(src, 'd', 'f'), 'y');
    execFileSync('python3', ['-c', 'import os,sys; os.setxattr(sys.argv[1], "trusted.evil", b"1"); os.setxattr(sys.argv[1], "user.fine", b"2")', join(src, 'd', 'f')]);
    const img = join(images, 'privileged.img');
    assert.equal(cli(['mkfs', '--rootdir', src, img]).status, 0);
    const t1 = target();
    const plain = cli(['extract', img, t1]);
    assert.equal(plain.status, 0, plain.stderr);
    assert.deepEqual(privileged(t1), []);
    for (const note of ['setuid/setgid bits not restored (use --same-permissions)', 'device node not created (use --devices)',
      'xattr trusted.evil not restored (use --all-xattrs)']) assert.ok(plain.stderr.includes(note), note);
    assert.equal(statSync(join(t1, 'suid')).mode & 0o7777, 0o755);
    const t2 = target();
    const all = cli(['extract', '--same-permissions', '--devices', '--all-xattrs', img, t2]);
    assert.equal(all.status, 0, all.stderr);
    assert.equal(privileged(t2).length, 3, privileged(t2).join('\n'));
  });

  test('extract refuses a target that exists, as a directory or as a link', () => {
    const t = target();
    mkdirSync(t);
    assert.match(cli(['extract', byName['304-valid-2090-deep'].img, t]).stderr, /exists: give a directory to create/);
    const l = target();
    execFileSync('ln', ['-s', sentinel, l]);
    const r = cli(['extract', byName['304-valid-2090-deep'].img, l]);
    assert.equal(r.status, 1);
    assert.deepEqual(readdirSync(sentinel).sort(), ['inner', 'keep']);
  });

  test('the places around every target are as they were', () => {
    assert.deepEqual(snapshot(), before);
  });
});

describe('hostile places and arguments', () => {
  test('a failed write to standard output is an error, for every command that prints', () => {
    const img = byName['304-valid-2090-deep'].img;
    for (const args of [['ls', '-R', img], ['dump-tree', img], ['dump-json', img], ['check', img], ['cat', byName['401-sparse-file-1t'].img, '/big']]) {
      const r = spawnSync('bash', ['-c', '"$@" > /dev/full', '-', CLI, ...args], { encoding: 'utf8', timeout: 20000 });
      assert.equal(r.status, 1, `${args[0]} > /dev/full: exit ${r.status}`);
      assert.match(r.stderr, new RegExp(`btrfslab ${args[0]}: write error: No space left on device`));
    }
  });

  test('outputs go through a temporary file no one can plant: a failed mkfs leaves nothing', () => {
    const dir = join(work, 'out');
    mkdirSync(dir);
    // the old predictable names, planted as links to a sentinel file
    for (let pid = 1; pid < 50; pid++) execFileSync('ln', ['-sf', join(sentinel, 'keep'), join(dir, `x.img.tmp-${pid}`)]);
    const before = readdirSync(dir).sort();
    const r = cli(['mkfs', '--size', '1M', join(dir, 'x.img')]);
    assert.equal(r.status, 1);
    assert.deepEqual(readdirSync(dir).sort(), before, 'no temporary file left, no planted link replaced');
    assert.equal(cli(['mkfs', '--size', '64M', join(dir, 'x.img')]).status, 0);
    assert.deepEqual(readdirSync(dir).sort(), [...before, 'x.img'].sort());
  });

  test('scripts: brace ranges at the edge of 2^64, over the limit, and SCRIPT that is not a file', () => {
    const s = (text) => { const p = join(work, `s${nTarget++}.txt`); writeFileSync(p, text); return p; };
    const edge = cli(['run', s('create /f_{18446744073709551610..18446744073709551615}\n'), '--metrics', '-'], 20000);
    assert.equal(edge.status, 0, edge.stderr);
    assert.equal(JSON.parse(edge.stdout).ops, 6);
    const wrap = cli(['run', s('create /f_{0..18446744073709551615}\n')]);
    assert.equal(wrap.status, 1);
    assert.match(wrap.stderr, /a brace range may hold at most 2000000 names/);
    const over = cli(['run', s('create /f_{0..99999999999999999999}\n')]);
    assert.match(over.stderr, /bounds must be below 2\^64/);
    const ops = cli(['run', s('mkdir /d\ncreate /d/f_{1..6}\ncreate /d/g_{1..6}\n'), '--max-ops', '10']);
    assert.equal(ops.status, 1);
    assert.match(ops.stderr, /:3: create: EINVAL: the script does more than 10 operations/);
    const d = cli(['run', work]);
    assert.equal(d.status, 1);
    assert.match(d.stderr, /is a directory \(SCRIPT must be a regular file or -\)/);
  });

  test('a FIFO as IMAGE is refused at once', () => {
    const fifo = join(work, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const r = cli(['ls', fifo], 5000);
    ended(r, 'ls FIFO');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /is a FIFO \(IMAGE must be a regular file or a block device\)/);
  });
});
