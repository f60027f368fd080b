// Crafted hostile images, one per way an attacker would try, with valid
// checksums (tests/cli/craft.mjs): names that lie about their length,
// names that climb out of extract's directory, a symlink posing as a
// directory, directory cycles, a tree whose pointers all lead to one child,
// a huge sparse file, a huge sparse image. Used by hostile-images.test.mjs,
// and by hand: node tests/cli/hostile-images.mjs OUTDIR [SENTINEL_DIR]
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FT, Image, KEY_TYPE as TYPE, cmpKey, decodeDirEntries, encodeDirEntry, encodeInodeRefs, nameHash } from './craft.mjs';

export const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));

function run(dir, name, script) {
  const s = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(s, script);
  const r = spawnSync(CLI, ['run', s, '--image', img, '--seed', '1', '--time', '1700000000'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`btrfslab run ${name}: ${r.stderr}`);
  return img;
}

const BASE = 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f\nwrite /d/f 0 5000 1\nsetxattr /d/f user.a v\nmkdir /a\ncreate /a/g\n';

/** Edits the one item of tree (fs by default) that pred accepts: fn(item) changes its key or data. */
function editItem(im, pred, fn, tree = 'fs') {
  im.edit(tree, pred, (items, i) => fn(items[i]));
}
const ofType = (ino, type) => (k) => k.objectid === ino && k.type === type;

/** Makes every case in dir; returns [{name, img, kind, ...}]. sentinel: a directory symlinks may point at. */
export function makeHostileImages(dir, sentinel) {
  mkdirSync(dir, { recursive: true });
  const base = run(dir, 'base', BASE);
  const cases = [];
  const craft = (name, kind, edit, from = base) => {
    const img = join(dir, `${name}.img`);
    const im = new Image(readFileSync(from));
    edit(im);
    im.save(img);
    cases.push({ name, img, kind });
  };

  // 1. names that lie about their length, and names no file may have
  const f = (im) => im.lookup('/d/f'), d = (im) => im.lookup('/d');
  craft('101-dir-index-name-300', 'corrupt', (im) => editItem(im, (k, data) => k.objectid === d(im) && k.type === TYPE.DIR_INDEX &&
    decodeDirEntries(data)[0].name.toString() === 'f', (it) => {
    it.data = encodeDirEntry({ ...decodeDirEntries(it.data)[0], name: 'A'.repeat(300), nameLen: undefined, dataLen: undefined });
  }));
  craft('102-dir-item-name-past-item', 'corrupt', (im) => editItem(im, (k) => cmpKey(k, { objectid: d(im), type: TYPE.DIR_ITEM, offset: nameHash('f') }) === 0,
    (it) => it.data.writeUInt16LE(65535, 27)));
  craft('103-inode-ref-name-300', 'corrupt', (im) => editItem(im, ofType(f(im), TYPE.INODE_REF), (it) => {
    it.data = encodeInodeRefs([{ index: it.data.readBigUInt64LE(0), name: 'B'.repeat(300) }]);
  }));
  craft('104-xattr-name-300', 'corrupt', (im) => editItem(im, ofType(f(im), TYPE.XATTR_ITEM), (it) => {
    const name = `user.${'x'.repeat(295)}`;
    it.key = { ...it.key, offset: nameHash(name) };
    it.data = encodeDirEntry({ type: FT.XATTR, name, data: Buffer.from('v') });
  }));
  craft('105-xattr-value-past-item', 'corrupt', (im) => editItem(im, ofType(f(im), TYPE.XATTR_ITEM), (it) => it.data.writeUInt16LE(4000, 25)));
  for (const [name, bad] of [['106-name-with-slash', 'x/y'], ['107-name-dotdot-nul', '..\0'], ['108-name-dot', '.'], ['109-name-dotdot', '..']]) {
    craft(name, 'unsafe-name', (im) => im.renameEntry(im.lookup('/d'), 'f', bad));
  }
  // a directory named "..\0": an extract that tests names as C strings climbs one level (and no more: one such entry)
  craft('111-dir-named-dotdot-nul', 'climb', (im) => im.renameEntry(256n, 'a', '..\0'));
  const logged = run(dir, 'logged', 'mkfs nodesize=4K size=64M\ncreate /f\nwrite /f 0 100 1\ncommit\nsetxattr /f user.a v\nfsync /f\ncrash\n');
  craft('110-log-xattr-name-300', 'corrupt-log', (im) => editItem(im, (k) => k.type === TYPE.XATTR_ITEM, (it) => {
    const name = `user.${'y'.repeat(295)}`;
    it.key = { ...it.key, offset: nameHash(name) };
    it.data = encodeDirEntry({ type: FT.XATTR, name, data: Buffer.from('v') });
  }, 'log:5'), logged);

  // 2. extract's escapes: a symlink, then a directory of the same name
  if (sentinel) {
    const s = run(dir, 'symlink-dir', `mkfs nodesize=4K size=64M\nmkdir /e\nsymlink "${sentinel}" /e/x\nmkdir /e/y\ncreate /e/y/evil\nwrite /e/y/evil 0 100 1\n`);
    craft('201-symlink-then-dir-same-name', 'escape', (im) => im.renameEntry(im.lookup('/e'), 'y', 'x', { items: ['index'] }), s);
  }

  // 3. walks the image shapes: cycles, a shared child, a deep tree
  const addEntry = (im, dirIno, name, index) => im.addEntry(dirIno, name, 256n, { type: FT.DIR, index: BigInt(index) });
  craft('301-entry-back-to-root', 'cycle', (im) => addEntry(im, im.lookup('/a'), 'up', 1000));
  craft('302-two-entries-back-to-root', 'cycle', (im) => { addEntry(im, im.lookup('/a'), 'up', 1000); addEntry(im, im.lookup('/d'), 'up2', 1000); });
  const wide = run(dir, 'wide', 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/file_with_a_long_name_{1..2000}\n');
  craft('303-all-pointers-to-one-child', 'shared-child', (im) => {
    const root = im.rootOf('fs');
    const ptrs = im.ptrs(root);
    im.writeNode(root, ptrs.map((p) => ({ ...p, blockptr: ptrs[0].blockptr, generation: ptrs[0].generation })));
  }, wide);
  // a valid tree 2,090 directories deep, each level a mkdir of a longer path
  let p = '', script = 'mkfs nodesize=4K size=64M\n';
  for (let i = 0; i < 2090; i++) script += `mkdir ${(p += '/d')}\n`;
  const deep = run(dir, '304-valid-2090-deep', `${script}create ${p}/bottom\n`);
  cases.push({ name: '304-valid-2090-deep', img: deep, kind: 'deep' });

  // 4. size: a 1 TiB sparse file, an image file of 15 TB apparent size
  const sparse = run(dir, '401-sparse-file-1t', 'mkfs nodesize=4K size=64M\ncreate /big\ntruncate /big 1024G\nwrite /big 4096000 5000 2\n');
  cases.push({ name: '401-sparse-file-1t', img: sparse, kind: 'sparse' });
  const huge = join(dir, '402-image-15t-apparent.img');
  copyFileSync(base, huge);
  execFileSync('truncate', ['-s', '15T', huge]);
  cases.push({ name: '402-image-15t-apparent', img: huge, kind: 'huge' });
  return cases;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [out, sentinel] = process.argv.slice(2);
  if (!out) {
    console.error('usage: node tests/cli/hostile-images.mjs OUTDIR [SENTINEL_DIR]');
    process.exit(2);
  }
  for (const c of makeHostileImages(out, sentinel)) console.log(`${c.kind.padEnd(13)} ${c.img}`);
}
