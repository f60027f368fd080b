// Opening an image costs what it holds, not its apparent size: a 15 TB sparse
// file opens in milliseconds, and what is written from a lazily opened image
// (replay -o, extract) is what an image read whole gives. IMAGE must be a
// regular file or a block device: anything else is refused at once.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-lazy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// Every run has a timeout: a command that blocks fails the test instead of hanging it.
function cli(...args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', timeout: 20000, maxBuffer: 1 << 28 });
  assert.equal(r.error, undefined, `${args.join(' ')}: ${r.error}`);
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const TB15 = 15 * 2 ** 40;
// The same bytes in a file of 15 TB apparent size (holes after the image).
function padded(src, name) {
  const p = join(dir, name);
  execFileSync('cp', ['--sparse=always', src, p]);
  truncateSync(p, TB15);
  return p;
}

const img = join(dir, 'crash.img');
before(() => {
  const s = join(dir, 'crash.txt');
  writeFileSync(s, 'mkfs size=128M\nmkdir /d\ncreate /d/old{1..200}\nwrite /d/old1 0 300000 3\nsetxattr /d/old2 user.k v\n' +
    'symlink /d/old1 /ln\ncommit\ncreate /d/new\nwrite /d/new 0 5000 3\nfsync /d/new\nunlink /d/old3\nfsync /d\ncrash\n');
  const r = cli('run', s, '--image', img);
  assert.equal(r.code, 0, r.err);
});

test('a 15 TB sparse image with a 64 MiB filesystem lists in milliseconds', () => {
  const small = join(dir, 'a.img');
  assert.equal(cli('mkfs', '--size', '64M', small).code, 0);
  const big = padded(small, 'big.img');
  assert.equal(statSync(big).size, TB15);
  const t0 = process.hrtime.bigint();
  const r = cli('ls', '-R', big);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  console.log(`ls -R of a 15 TB apparent-size image: ${ms.toFixed(1)} ms`);
  assert.equal(r.code, 0, r.err);
  assert.ok(ms < 2000, `took ${ms} ms`);
  assert.equal(cli('check', big).code, 0);
  assert.equal(cli('dump-tree', big).out, cli('dump-tree', small).out);
});

test('a FIFO, a directory or a character device as IMAGE is refused at once', () => {
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  for (const [path, what] of [[fifo, 'a FIFO'], [dir, 'a directory'], ['/dev/null', 'a character device']]) {
    const t0 = Date.now();
    const r = cli('ls', path);
    assert.equal(r.code, 1);
    assert.equal(r.err, `btrfslab ls: EINVAL: ${path}: is ${what} (IMAGE must be a regular file or a block device)\n`);
    assert.ok(Date.now() - t0 < 5000);
  }
  assert.match(cli('dump-tree', fifo).err, /is a FIFO/);
  assert.match(cli('replay', fifo, '-o', join(dir, 'never.img')).err, /is a FIFO/);
});

test('replay -o of a lazily opened image writes what replaying the whole image does', () => {
  const out = join(dir, 'replayed.img');
  const r = cli('replay', img, '-o', out);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /replayed the log/);
  // the same image padded to 15 TB, and a copy with no holes, replay to the same bytes
  const bigOut = join(dir, 'replayed-big.img');
  const t0 = Date.now();
  assert.equal(cli('replay', padded(img, 'crash-big.img'), '-o', bigOut).code, 0);
  console.log(`replay -o of a 15 TB apparent-size image: ${Date.now() - t0} ms`);
  const st = statSync(bigOut);
  assert.equal(st.size, TB15);
  assert.ok(st.blocks * 512 < 64 << 20, `written sparse (${st.blocks} blocks)`);
  const want = readFileSync(out);
  // never read 15 TB: the head must be the replayed image, the rest holes
  const head = Buffer.alloc(want.length);
  const fd = openSync(bigOut, 'r');
  try {
    assert.equal(readSync(fd, head, 0, head.length, 0), head.length);
  } finally {
    closeSync(fd);
  }
  assert.ok(head.equals(want), 'the first 128 MiB are the replayed image');
  const dense = join(dir, 'dense.img');
  execFileSync('cp', ['--sparse=never', img, dense]);
  const denseOut = join(dir, 'replayed-dense.img');
  assert.equal(cli('replay', dense, '-o', denseOut).code, 0);
  assert.ok(readFileSync(denseOut).equals(want));
  // an image with no log is written unchanged: the same trees, the same bytes
  const again = join(dir, 'again.img');
  const a = cli('replay', out, '-o', again);
  assert.match(a.out, /no log to replay/);
  assert.equal(cli('dump-tree', again).out, cli('dump-tree', out).out);
  assert.ok(readFileSync(again).equals(want));
});

function tree(root) {
  const out = [];
  const walk = (rel) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true }).sort((x, y) => (x.name < y.name ? -1 : 1))) {
      const p = join(rel, e.name);
      const full = join(root, p);
      if (e.isDirectory()) {
        out.push(`${p}/`);
        walk(p);
      } else if (e.isFile()) {
        out.push(`${p} ${readFileSync(full).toString('base64')}`);
      } else {
        out.push(`${p} ${e.isSymbolicLink() ? 'link' : 'other'}`);
      }
    }
  };
  walk('');
  return out;
}

test('extract of a lazily opened 15 TB image gives the same files', () => {
  const x1 = join(dir, 'x1'), x2 = join(dir, 'x2');
  assert.equal(cli('extract', img, x1).code, 0);
  assert.equal(cli('extract', padded(img, 'crash-big2.img'), x2).code, 0);
  const a = tree(x1), b = tree(x2);
  assert.ok(a.length > 200);
  assert.deepEqual(b, a);
});
