// hostile-writers.mjs — crafted images (valid checksums, tests/cli/craft.mjs)
// for the commands that write an image from another: balance and replay
// (issue 39, items 1, 2 and 8). Each case names the one thing wrong:
//   - two ROOT_ITEMs, or the superblock and a ROOT_ITEM, naming one root block
//   - a sys_chunk_array chunk typed DATA (alone, or with its chunk item and
//     block group item typed DATA too)
//   - a DUP chunk whose two stripes overlap
//   - a chunk reaching past the superblock's total_bytes
//   - a snapshot whose ROOT_ITEM has refs 0 but no ORPHAN item, still named
//     by a directory (valid: the kernel keeps such a root, and so must we)
//   - a log holding a file extent at offset 2^63, or a csum item at 2^64-4096
// Used by hostile-writers.test.mjs and by make-corpus.mjs (fuzz seeds):
//   node tests/cli/hostile-writers.mjs OUTDIR
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Image, KEY_TYPE, SUPER_OFFSET, cmpKey } from './craft.mjs';

export const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));

// ROOT_ITEM: bytenr at 176, refs (u32) at 216, level at 238; CHUNK: type at 24, num_stripes at 44, stripes from 48 (32 each)
const RI_BYTENR = 176, RI_REFS = 216, RI_LEVEL = 238;
const SYSTEM = 2n, DATA = 1n, METADATA = 4n, DUP = 1n << 5n;
const BLOCK_GROUP_ITEM = 192, EXTENT_CSUM = 128, CSUM_OBJECTID = 0xfffffffffffffff6n; // -10

function run(dir, name, script) {
  const s = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(s, script);
  const r = spawnSync(CLI, ['run', s, '--image', img, '--seed', '1', '--time', '1700000000'], { encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) throw new Error(`btrfslab run ${name}: exit ${r.status} ${r.signal ?? ''}\n${r.stderr}`);
  return img;
}

const SNAP = 'mkfs nodesize=4K size=128M\nmkdir /d\ncreate /d/f_{1..40}\nwrite /d/f_1 0 20K 1\nsnapshot / /s\nwrite /d/f_2 0 4K 2\ncommit\n';
const LOGGED = 'mkfs nodesize=4K size=128M\ncreate /f\nwrite /f 0 8K 1\ncommit\nwrite /f 8K 8K 2\nfsync /f\ncrash\n';

const rootItemOf = (im, id) => im.find('root', (k) => k.objectid === BigInt(id) && k.type === KEY_TYPE.ROOT_ITEM, `ROOT_ITEM ${id}`);
function setRootItem(im, id, fn) {
  const hit = rootItemOf(im, id);
  im.edit('root', (k) => cmpKey(k, hit.key) === 0, (items, i) => fn(items[i].data));
}
/** The sys_chunk_array's first chunk item: {at (absolute offset of its chunk), logical}. */
function sysChunk(im) {
  const at = SUPER_OFFSET + 811;
  return { at: at + 17, logical: im.buf.readBigUInt64LE(at + 9) };
}

/** Makes every case in dir; returns [{name, img, cmd, why}]: cmd the writer it aims at, why what the refusal must name. */
export function makeWriterCases(dir) {
  mkdirSync(dir, { recursive: true });
  const snap = run(dir, 'snap', SNAP), logged = run(dir, 'logged', LOGGED);
  const cases = [];
  const craft = (name, from, cmd, why, edit) => {
    const img = join(dir, `${name}.img`);
    const im = new Image(readFileSync(from));
    edit(im);
    im.save(img);
    cases.push({ name, img, cmd, why });
  };

  // item 1: one root block named twice
  craft('501-two-root-items-one-block', snap, ['balance', '-m'], /roots? 256 .*root 5|root 5 .*256|same (root )?block/i, (im) => {
    const fs = im.rootItem('fs');
    setRootItem(im, 256, (d) => { d.writeBigUInt64LE(fs.bytenr, RI_BYTENR); d[RI_LEVEL] = fs.level; });
  });
  craft('502-super-and-root-item-one-block', snap, ['balance', '-m'], /root tree|superblock/i, (im) => {
    const rt = im.rootItem('root');
    setRootItem(im, 256, (d) => { d.writeBigUInt64LE(rt.bytenr, RI_BYTENR); d[RI_LEVEL] = rt.level; });
  });
  // item 2a: the system chunk array holding a DATA chunk
  craft('511-sys-array-chunk-data', snap, ['balance', '-d'], /sys_chunk_array.*DATA|DATA.*sys_chunk_array/i, (im) => {
    const c = sysChunk(im);
    im.buf.writeBigUInt64LE(DATA, c.at + 24);
    im.sealSuper();
  });
  craft('512-sys-array-chunk-all-data', snap, ['balance', '-d'], /sys_chunk_array.*DATA|DATA.*sys_chunk_array/i, (im) => {
    const c = sysChunk(im);
    im.buf.writeBigUInt64LE(DATA, c.at + 24);
    im.sealSuper();
    const key = { objectid: 256n, type: KEY_TYPE.CHUNK_ITEM, offset: c.logical };
    im.edit('chunk', (k) => cmpKey(k, key) === 0, (items, i) => items[i].data.writeBigUInt64LE(DATA, 24));
    im.edit(2n, (k) => k.objectid === c.logical && k.type === BLOCK_GROUP_ITEM, (items, i) => items[i].data.writeBigUInt64LE(DATA, 16));
  });
  // item 8: a DUP chunk whose second stripe overlaps its first
  craft('521-dup-stripes-overlap', snap, ['balance', '-m'], /overlap/i, (im) => {
    const meta = im.chunks.find((c) => c.type & METADATA);
    const key = { objectid: 256n, type: KEY_TYPE.CHUNK_ITEM, offset: meta.logical };
    im.edit('chunk', (k) => cmpKey(k, key) === 0, (items, i) => {
      const d = items[i].data, s0 = d.subarray(48, 80);
      const two = Buffer.concat([d.subarray(0, 80), s0]);
      two.writeBigUInt64LE(METADATA | DUP, 24);
      two.writeUInt16LE(2, 44);
      two.writeBigUInt64LE(s0.readBigUInt64LE(8) + 4096n, 80 + 8);
      items[i].data = two;
    });
  });
  // sizes: a chunk's stripe past total_bytes
  craft('522-chunk-past-total-bytes', snap, ['balance', '-m'], /total_bytes/i, (im) => {
    im.buf.writeBigUInt64LE(24n << 20n, SUPER_OFFSET + 112);
    im.sealSuper();
  });
  // item 2b: refs 0 without an ORPHAN item, the snapshot still named by / (kept, as the kernel keeps it)
  craft('531-refs0-no-orphan', snap, null, null, (im) => setRootItem(im, 256, (d) => d.writeUInt32LE(0, RI_REFS)));
  // item 2c: the log moves a file extent to 2^63, a csum item to 2^64-4096
  craft('541-log-extent-at-2p63', logged, ['replay'], /offset|2\^63|9223372036854775808/i, (im) => {
    im.edit('log:5', (k) => k.type === KEY_TYPE.EXTENT_DATA, (items, i) => { items[i].key = { ...items[i].key, offset: 1n << 63n }; });
  });
  craft('542-log-csum-at-2p64-4096', logged, ['replay'], /csum|checksum/i, (im) => {
    im.edit('log:5', (k) => k.objectid === CSUM_OBJECTID && k.type === EXTENT_CSUM, (items, i) => {
      items[i].key = { ...items[i].key, offset: (1n << 64n) - 4096n };
    });
  });
  return cases;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [out] = process.argv.slice(2);
  if (!out) {
    console.error('usage: node tests/cli/hostile-writers.mjs OUTDIR');
    process.exit(2);
  }
  for (const c of makeWriterCases(out)) console.log(`${c.name.padEnd(34)} ${c.img}`);
}
