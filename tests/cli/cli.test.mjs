// The CLI's contract with people: clear errors and exit codes on bad input,
// and no half-written image left behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-cli-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('help and version', () => {
  const h = cli('--help');
  assert.equal(h.code, 0);
  assert.match(h.out, /mkfs \[--size S\]/);
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
