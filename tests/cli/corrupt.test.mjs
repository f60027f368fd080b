// A corpus of corrupt images, numbered: each case damages a fresh image in
// one way and names the message `btrfslab` must give. Nothing may crash: the
// exit code is 1 with a message, never a signal.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { crc32c } from './crc32c.mjs';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-corrupt-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...args) => spawnSync(CLI, args, { encoding: 'utf8' });
const base = join(dir, 'base.img');
writeFileSync(join(dir, 's.txt'), 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f_{1..200}\nwrite /d/f_9 0 20000 3\n');
assert.equal(cli('run', join(dir, 's.txt'), '--image', base).status, 0);

/** Logical address of a tree's root block (logical == physical in our layout). */
function treeRoot(img, tree) {
  return Number(/^(?:leaf|node) (\d+)/m.exec(cli('dump-tree', '-t', tree, img).stdout)[1]);
}
function firstLeaf(img, tree) {
  return Number(/^leaf (\d+)/m.exec(cli('dump-tree', '-t', tree, img).stdout)[1]);
}
function recsum(buf, off, size) {
  buf.writeUInt32LE(crc32c(buf.subarray(off + 32, off + size)), off);
  buf.fill(0, off + 4, off + 32);
}

const CASES = [
  ['001-not-btrfs', (b) => b.fill(0x41, 0x10000, 0x11000), ['ls'], /no btrfs magic/],
  ['002-superblock-csum', (b) => { b[0x10000 + 0x100] ^= 1; }, ['ls'], /superblock checksum mismatch/],
  ['003-truncated-image', null, ['ls', '-R'], /image is 6291456 bytes but the filesystem is 67108864 bytes: the image is truncated/],
  ['004-bit-flip-root-tree', (b, img) => { b[treeRoot(img, 'root') + 300] ^= 4; }, ['ls'], /checksum verify failed on logical \d+ \(root 1\)/],
  ['005-keys-out-of-order', (b, img) => {
    const leaf = firstLeaf(img, 'fs');
    const a = leaf + 101, c = leaf + 101 + 25; // swap the keys of items 0 and 1
    const k0 = Buffer.from(b.subarray(a, a + 17));
    b.copy(b, a, c, c + 17);
    k0.copy(b, c);
    recsum(b, leaf, 4096);
  }, ['ls', '-R'], /corrupt leaf: root=5 block=\d+ slot=1, key out of order/],
  ['006-items-overlap', (b, img) => {
    const leaf = firstLeaf(img, 'fs');
    const it1 = leaf + 101 + 25;
    b.writeUInt32LE(b.readUInt32LE(it1 + 17) + 8, it1 + 17); // item 1's data moves into item 0's
    recsum(b, leaf, 4096);
  }, ['ls', '-R'], /corrupt leaf: root=5 block=\d+ slot=1, unexpected item end/],
  ['007-bad-nritems', (b, img) => {
    const leaf = firstLeaf(img, 'fs');
    b.writeUInt32LE(5000, leaf + 96);
    recsum(b, leaf, 4096);
  }, ['ls', '-R'], /corrupt leaf: root=5 block=\d+, invalid nritems 5000/],
  ['008-root-to-nowhere', (b) => {
    b.writeBigUInt64LE(0x7fff0000n, 0x10000 + 0x50); // super root -> unmapped
    recsum(b, 0x10000, 4096);
  }, ['ls'], /logical \d+ len \d+ is not mapped by any chunk/],
  ['009-crc-type', (b) => { b.writeUInt16LE(1, 0x10000 + 0xc4); recsum(b, 0x10000, 4096); }, ['ls'], /checksum type 1 is not supported, only crc32c/],
  ['010-data-csum', (b, img) => {
    const m = /extent data disk byte (\d+)/.exec(spawnSync('btrfs', ['inspect-internal', 'dump-tree', '-t', 'fs', img], { encoding: 'utf8' }).stdout);
    b[Number(m[1]) + 10] ^= 0xff;
  }, ['cat', '/d/f_9'], /csum mismatch at logical \d+/],
  ['011-sys-array-size', (b) => { b.writeUInt32LE(4000, 0x10000 + 0xa0); recsum(b, 0x10000, 4096); }, ['ls'], /sys_chunk_array_size 4000 exceeds 2048/],
];

for (const [name, damage, cmd, want] of CASES) {
  test(name, () => {
    const img = join(dir, `${name}.img`);
    writeFileSync(img, readFileSync(base));
    if (name === '003-truncated-image') truncateSync(img, 6 << 20);
    else {
      const b = readFileSync(img);
      damage(b, base);
      writeFileSync(img, b);
    }
    const args = cmd[0] === 'cat' ? ['cat', img, cmd[1]] : [...cmd, img];
    const r = cli(...args);
    assert.equal(r.signal, null, `${name}: no crash`);
    assert.equal(r.status, 1, `${name}: exit 1 (stderr: ${r.stderr})`);
    assert.match(r.stderr, want);
    const c = cli('check', '--check-data-csum', img);
    assert.equal(c.signal, null);
    assert.equal(c.status, 1, `${name}: check finds it`);
  });
}
