// Crafted hostile images, one per way an attacker would try, with valid
// checksums (tests/cli/btrfs-edit.mjs): names that lie about their length,
// names that climb out of extract's directory, a symlink posing as a
// directory, directory cycles, a tree whose pointers all lead to one child,
// a huge sparse file, a huge sparse image. Used by hostile-images.test.mjs,
// and by hand: node tests/cli/hostile-images.mjs OUTDIR [SENTINEL_DIR]
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FT, Image, TYPE, dirEntries, dirEntry, inodeRef, nameHash } from './btrfs-edit.mjs';

export const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));

function run(dir, name, script) {
  const s = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(s, script);
  const r = spawnSync(CLI, ['run', s, '--image', img, '--seed', '1', '--time', '1700000000'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`btrfslab run ${name}: ${r.stderr}`);
  return img;
}

const BASE = 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f\nwrite /d/f 0 5000 1\nsetxattr /d/f user.a v\nmkdir /a\ncreate /a/g\n';

/** Finds the entry of dir named name in tree: {hit (DIR_INDEX), item (DIR_ITEM)}. */
function entryOf(im, dirIno, name, tree = 'fs') {
  const isName = (d) => dirEntries(d).some((e) => e.name.toString('latin1') === name);
  const index = im.find(tree, (k, d) => k.objectid === dirIno && k.type === TYPE.DIR_INDEX && isName(d));
  const item = im.find(tree, (k, d) => k.objectid === dirIno && k.type === TYPE.DIR_ITEM && isName(d));
  return { index, item };
}

/** Renames dir/name to newName in its DIR_INDEX and DIR_ITEM (the hash kept valid), leaving its INODE_REF. */
function renameEntry(im, dirIno, name, newName, { indexOnly = false } = {}) {
  const { index, item } = entryOf(im, dirIno, name);
  const rewrite = (hit, rekey) => {
    const it = hit.items[hit.index], e = dirEntries(it.data)[0];
    it.data = dirEntry({ location: e.location, transid: e.transid, type: e.type, name: Buffer.from(newName, 'latin1') });
    if (rekey) it.key = { ...it.key, offset: nameHash(Buffer.from(newName, 'latin1')) };
    im.writeLeaf(hit.bytenr, hit.items);
  };
  rewrite(index, false);
  if (!indexOnly) rewrite(im.find('fs', (k, d) => k.objectid === dirIno && k.type === TYPE.DIR_ITEM &&
    dirEntries(d).some((e) => e.name.toString('latin1') === name)), true);
  void item;
}

/** Makes every case in dir; returns [{name, img, kind, ...}]. sentinel: a directory symlinks may point at. */
export function makeHostileImages(dir, sentinel) {
  mkdirSync(dir, { recursive: true });
  const base = run(dir, 'base', BASE);
  const cases = [];
  const craft = (name, kind, edit, from = base) => {
    const img = join(dir, `${name}.img`);
    const im = new Image(CLI, from);
    edit(im);
    im.save(img);
    cases.push({ name, img, kind });
  };

  // 1. names that lie about their length, and names no file may have
  craft('101-dir-index-name-300', 'corrupt', (im) => {
    const { index } = entryOf(im, im.ino('/d'), 'f');
    const it = index.items[index.index], e = dirEntries(it.data)[0];
    it.data = dirEntry({ location: e.location, type: FT.REG, name: 'A'.repeat(300) });
    im.writeLeaf(index.bytenr, index.items);
  });
  craft('102-dir-item-name-past-item', 'corrupt', (im) => {
    const { item } = entryOf(im, im.ino('/d'), 'f');
    item.items[item.index].data.writeUInt16LE(65535, 27);
    im.writeLeaf(item.bytenr, item.items);
  });
  craft('103-inode-ref-name-300', 'corrupt', (im) => {
    const f = im.ino('/d/f');
    const hit = im.find('fs', (k) => k.objectid === f && k.type === TYPE.INODE_REF);
    const it = hit.items[hit.index];
    it.data = inodeRef(it.data.readBigUInt64LE(0), 'B'.repeat(300));
    im.writeLeaf(hit.bytenr, hit.items);
  });
  craft('104-xattr-name-300', 'corrupt', (im) => {
    const f = im.ino('/d/f');
    const hit = im.find('fs', (k) => k.objectid === f && k.type === TYPE.XATTR_ITEM);
    const name = `user.${'x'.repeat(295)}`;
    hit.items[hit.index] = { key: { objectid: f, type: TYPE.XATTR_ITEM, offset: nameHash(name) },
      data: dirEntry({ type: FT.XATTR, name, data: 'v' }) };
    im.writeLeaf(hit.bytenr, hit.items);
  });
  craft('105-xattr-value-past-item', 'corrupt', (im) => {
    const f = im.ino('/d/f');
    const hit = im.find('fs', (k) => k.objectid === f && k.type === TYPE.XATTR_ITEM);
    hit.items[hit.index].data.writeUInt16LE(4000, 25);
    im.writeLeaf(hit.bytenr, hit.items);
  });
  for (const [name, bad] of [['106-name-with-slash', 'x/y'], ['107-name-dotdot-nul', '..\0'], ['108-name-dot', '.'], ['109-name-dotdot', '..']]) {
    craft(name, 'unsafe-name', (im) => renameEntry(im, im.ino('/d'), 'f', bad));
  }
  // a directory named "..\0": an extract that tests names as C strings climbs one level (and no more: one such entry)
  craft('111-dir-named-dotdot-nul', 'climb', (im) => renameEntry(im, 256n, 'a', '..\0'));
  const logged = run(dir, 'logged', 'mkfs nodesize=4K size=64M\ncreate /f\nwrite /f 0 100 1\ncommit\nsetxattr /f user.a v\nfsync /f\ncrash\n');
  craft('110-log-xattr-name-300', 'corrupt-log', (im) => {
    const hit = im.find('log', (k) => k.type === TYPE.XATTR_ITEM);
    const k = hit.items[hit.index].key, name = `user.${'y'.repeat(295)}`;
    hit.items[hit.index] = { key: { ...k, offset: nameHash(name) }, data: dirEntry({ type: FT.XATTR, name, data: 'v' }) };
    im.writeLeaf(hit.bytenr, hit.items);
  }, logged);

  // 2. extract's escapes: a symlink, then a directory of the same name
  if (sentinel) {
    const s = run(dir, 'symlink-dir', `mkfs nodesize=4K size=64M\nmkdir /e\nsymlink "${sentinel}" /e/x\nmkdir /e/y\ncreate /e/y/evil\nwrite /e/y/evil 0 100 1\n`);
    craft('201-symlink-then-dir-same-name', 'escape', (im) => renameEntry(im, im.ino('/e'), 'y', 'x', { indexOnly: true }), s);
  }

  // 3. walks the image shapes: cycles, a shared child, a deep tree
  const addEntry = (im, dirIno, name, index) => {
    const loc = { objectid: 256n, type: TYPE.INODE_ITEM, offset: 0n };
    const hit = im.find('fs', (k) => k.objectid === dirIno && k.type === TYPE.INODE_ITEM);
    hit.items.push({ key: { objectid: dirIno, type: TYPE.DIR_INDEX, offset: BigInt(index) }, data: dirEntry({ location: loc, type: FT.DIR, name }) });
    hit.items.push({ key: { objectid: dirIno, type: TYPE.DIR_ITEM, offset: nameHash(name) }, data: dirEntry({ location: loc, type: FT.DIR, name }) });
    im.writeLeaf(hit.bytenr, hit.items);
  };
  craft('301-entry-back-to-root', 'cycle', (im) => addEntry(im, im.ino('/a'), 'up', 1000));
  craft('302-two-entries-back-to-root', 'cycle', (im) => { addEntry(im, im.ino('/a'), 'up', 1000); addEntry(im, im.ino('/d'), 'up2', 1000); });
  const wide = run(dir, 'wide', 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/file_with_a_long_name_{1..2000}\n');
  craft('303-all-pointers-to-one-child', 'shared-child', (im) => {
    const root = im.tree('fs').blocks.find((b) => b.level > 0);
    const ptrs = im.node(root.bytenr);
    for (const p of ptrs.slice(1)) {
      im.buf.writeBigUInt64LE(ptrs[0].blockptr, p.at + 17);
      im.buf.writeBigUInt64LE(ptrs[0].generation, p.at + 25);
    }
    im.csum(root.bytenr);
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
