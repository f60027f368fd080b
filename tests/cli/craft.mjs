// craft.mjs — a small editor of btrfs images for crafting hostile ones.
//
// It reads the image itself (superblock, sys_chunk_array and chunk tree for
// the logical-to-physical map, root tree for the other trees), parses leaves
// into items and nodes into key pointers, repacks a leaf from an edited item
// list (so an item may grow or shrink), and gives every block it writes a
// valid checksum again: what a reader meets is exactly the damage a case
// means, never a checksum error. Written from the on-disk format alone.
//
//   const im = Image.open('base.img');
//   const f = im.lookup('/d/f');
//   im.editInode(f, { mode: 0o104755, uid: 0 });
//   im.save('out.img');
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { crc32c, crc32cRaw } from './crc32c.mjs';

export const SUPER_OFFSET = 65536;
export const SUPER_SIZE = 4096;
const HEADER = 101; // csum 32, fsid 16, bytenr 8, flags 8, chunk_tree_uuid 16, generation 8, owner 8, nritems 4, level 1
const ITEM = 25; // key 17, offset u32, size u32
const KEY_PTR = 33; // key 17, blockptr u64, generation u64
const KEY = 17;
export const DIR_ENTRY = 30; // location key 17, transid u64, data_len u16, name_len u16, type u8
export const INODE_ITEM_SIZE = 160;

export const KEY_TYPE = {
  INODE_ITEM: 1, INODE_REF: 12, INODE_EXTREF: 13, XATTR_ITEM: 24, DIR_LOG_ITEM: 60, DIR_LOG_INDEX: 72,
  DIR_ITEM: 84, DIR_INDEX: 96, EXTENT_DATA: 108, ROOT_ITEM: 132, CHUNK_ITEM: 228,
};
/** Directory entry file types (the type byte of a dir entry). */
export const FT = { UNKNOWN: 0, REG: 1, DIR: 2, CHRDEV: 3, BLKDEV: 4, FIFO: 5, SOCK: 6, SYMLINK: 7, XATTR: 8 };
export const TREE = { ROOT: 1n, EXTENT: 2n, CHUNK: 3n, DEV: 4n, FS: 5n, CSUM: 7n, LOG: 0xfffffffffffffffan /* -6 */ };
export const ROOT_DIR = 256n;

const U64 = (1n << 64n) - 1n;

// --- keys -------------------------------------------------------------------

export function readKey(buf, at) {
  return { objectid: buf.readBigUInt64LE(at), type: buf[at + 8], offset: buf.readBigUInt64LE(at + 9) };
}
export function writeKey(buf, at, k) {
  buf.writeBigUInt64LE(BigInt(k.objectid) & U64, at);
  buf[at + 8] = k.type;
  buf.writeBigUInt64LE(BigInt(k.offset) & U64, at + 9);
}
export function cmpKey(a, b) {
  for (const f of ['objectid', 'type', 'offset']) {
    const x = BigInt(a[f]), y = BigInt(b[f]);
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
export const fmtKey = (k) => `(${k.objectid} ${k.type} ${k.offset})`;

// --- names ------------------------------------------------------------------

/** The kernel's btrfs_name_hash: crc32c seeded with ~1, not inverted at the end.
 *  It is the key offset of a DIR_ITEM or XATTR_ITEM. */
export const nameHash = (name) => BigInt(crc32cRaw(0xfffffffe, toBytes(name)));
/** The kernel's btrfs_extref_hash: crc32c seeded with the parent's objectid (its low 32 bits),
 *  not inverted. It is the key offset of an INODE_EXTREF. */
export const extrefHash = (parent, name) => BigInt(crc32cRaw(Number(BigInt(parent) & 0xffffffffn), toBytes(name)));
/** A name as bytes: Buffers as they are, strings as latin1 (so "\0" and "\xff" are one byte each). */
export const toBytes = (s) => (Buffer.isBuffer(s) ? s : Buffer.from(s, 'latin1'));
const sameName = (a, b) => Buffer.compare(toBytes(a), toBytes(b)) === 0;

// --- item payloads ----------------------------------------------------------

/** One dir entry (DIR_ITEM, DIR_INDEX, XATTR_ITEM). nameLen/dataLen, when given, are written instead
 *  of the true lengths (to lie about them); the bytes written are always name then data. */
export function encodeDirEntry({ location = { objectid: 0n, type: 0, offset: 0n }, transid = 0n, type, name, data = Buffer.alloc(0), nameLen, dataLen }) {
  const n = toBytes(name), d = toBytes(data);
  const b = Buffer.alloc(DIR_ENTRY + n.length + d.length);
  writeKey(b, 0, location);
  b.writeBigUInt64LE(BigInt(transid), 17);
  b.writeUInt16LE(dataLen ?? d.length, 25);
  b.writeUInt16LE(nameLen ?? n.length, 27);
  b[29] = type;
  n.copy(b, DIR_ENTRY);
  d.copy(b, DIR_ENTRY + n.length);
  return b;
}
/** The entries of a dir item. Lengths are trusted but clipped to the item (this is a test tool). */
export function decodeDirEntries(data) {
  const out = [];
  for (let o = 0; o + DIR_ENTRY <= data.length;) {
    const dataLen = data.readUInt16LE(o + 25), nameLen = data.readUInt16LE(o + 27);
    const n0 = o + DIR_ENTRY, d0 = n0 + nameLen;
    out.push({ location: readKey(data, o), transid: data.readBigUInt64LE(o + 17), type: data[o + 29], nameLen, dataLen,
      name: Buffer.from(data.subarray(n0, Math.min(d0, data.length))), data: Buffer.from(data.subarray(Math.min(d0, data.length), Math.min(d0 + dataLen, data.length))) });
    o = d0 + dataLen;
  }
  return out;
}
export const encodeDirEntries = (entries) => Buffer.concat(entries.map(encodeDirEntry));

/** One INODE_REF entry: index u64, name_len u16, name (nameLen to lie). */
export function encodeInodeRef({ index, name, nameLen }) {
  const n = toBytes(name);
  const b = Buffer.alloc(10 + n.length);
  b.writeBigUInt64LE(BigInt(index), 0);
  b.writeUInt16LE(nameLen ?? n.length, 8);
  n.copy(b, 10);
  return b;
}
export function decodeInodeRefs(data) {
  const out = [];
  for (let o = 0; o + 10 <= data.length;) {
    const nameLen = data.readUInt16LE(o + 8);
    out.push({ index: data.readBigUInt64LE(o), nameLen, name: Buffer.from(data.subarray(o + 10, Math.min(o + 10 + nameLen, data.length))) });
    o += 10 + nameLen;
  }
  return out;
}
export const encodeInodeRefs = (refs) => Buffer.concat(refs.map(encodeInodeRef));
/** One INODE_EXTREF entry: parent u64, index u64, name_len u16, name (nameLen to lie). */
export function encodeInodeExtref({ parent, index, name, nameLen }) {
  const n = toBytes(name);
  const b = Buffer.alloc(18 + n.length);
  b.writeBigUInt64LE(BigInt(parent), 0);
  b.writeBigUInt64LE(BigInt(index), 8);
  b.writeUInt16LE(nameLen ?? n.length, 16);
  n.copy(b, 18);
  return b;
}

// INODE_ITEM fields: name -> [offset, width]
const INODE_FIELDS = {
  generation: [0, 8], transid: [8, 8], size: [16, 8], nbytes: [24, 8], block_group: [32, 8], nlink: [40, 4],
  uid: [44, 4], gid: [48, 4], mode: [52, 4], rdev: [56, 8], flags: [64, 8], sequence: [72, 8],
};
export function decodeInode(data) {
  const o = {};
  for (const [f, [at, w]] of Object.entries(INODE_FIELDS)) o[f] = w === 8 ? data.readBigUInt64LE(at) : data.readUInt32LE(at);
  return o;
}
/** Sets the given fields (numbers or BigInts) in an INODE_ITEM's bytes, in place. */
export function patchInode(data, fields) {
  for (const [f, v] of Object.entries(fields)) {
    const spec = INODE_FIELDS[f];
    if (!spec) throw new Error(`no inode field ${f}`);
    if (spec[1] === 8) data.writeBigUInt64LE(BigInt(v), spec[0]);
    else data.writeUInt32LE(Number(v), spec[0]);
  }
  return data;
}
/** The kernel's dev_t as btrfs stores it in an inode's rdev: major << 20 | minor. */
export const encodeDev = (major, minor) => (BigInt(major) << 20n) | BigInt(minor);

// ROOT_ITEM: the inode item (160), generation, root_dirid, bytenr, ..., level at 238
const ROOT_ITEM_BYTENR = 176, ROOT_ITEM_LEVEL = 238;

// --- the image --------------------------------------------------------------

export class Image {
  /** @param {Buffer} buf the whole image */
  constructor(buf) {
    this.buf = buf;
    const sb = this.sbAt = SUPER_OFFSET;
    if (buf.length < sb + SUPER_SIZE || buf.toString('latin1', sb + 64, sb + 72) !== '_BHRfS_M') throw new Error('not a btrfs image (no superblock magic at 64 KiB)');
    const u64 = (o) => buf.readBigUInt64LE(sb + o), u32 = (o) => buf.readUInt32LE(sb + o);
    this.super = {
      generation: u64(72), root: u64(80), chunkRoot: u64(88), logRoot: u64(96), logRootTransid: u64(104), totalBytes: u64(112),
      sectorsize: u32(144), nodesize: u32(148), sysChunkArraySize: u32(160), rootLevel: buf[sb + 198], chunkRootLevel: buf[sb + 199], logRootLevel: buf[sb + 200],
    };
    this.nodesize = this.super.nodesize;
    this.parents = new Map(); // block logical -> {parent, slot}, from the walks done so far
    this.chunks = [];
    // bootstrap: the chunks of the system chunk array, then every chunk of the chunk tree
    const arr = buf.subarray(sb + 811, sb + 811 + this.super.sysChunkArraySize);
    for (let o = 0; o < arr.length;) {
      const key = readKey(arr, o);
      if (key.type !== KEY_TYPE.CHUNK_ITEM) throw new Error(`sys_chunk_array: key type ${key.type}`);
      const c = parseChunk(key, arr.subarray(o + KEY));
      this.chunks.push(c);
      o += KEY + c.size;
    }
    for (const leaf of this.leaves(this.super.chunkRoot)) {
      for (const it of this.items(leaf)) {
        if (it.key.type !== KEY_TYPE.CHUNK_ITEM) continue;
        const c = parseChunk(it.key, it.data);
        if (!this.chunks.some((x) => x.logical === c.logical)) this.chunks.push(c);
      }
    }
  }

  static open(path) { return new Image(readFileSync(path)); }
  /** An editable copy of this image. */
  copy() { return new Image(Buffer.from(this.buf)); }
  /** Writes the image sparse (runs of zeros become holes), replacing path. */
  save(path) {
    const fd = openSync(path, 'w');
    try {
      const CH = 65536, zero = Buffer.alloc(CH);
      for (let at = 0; at < this.buf.length; at += CH) {
        const part = this.buf.subarray(at, Math.min(at + CH, this.buf.length));
        if (!part.equals(zero.subarray(0, part.length))) writeSync(fd, part, 0, part.length, at);
      }
      ftruncateSync(fd, this.buf.length);
    } finally {
      closeSync(fd);
    }
  }

  /** The physical offsets (one per copy) of length bytes at logical. */
  physical(logical, length = this.nodesize) {
    const L = BigInt(logical);
    const c = this.chunks.find((x) => x.logical <= L && L + BigInt(length) <= x.logical + x.length);
    if (!c) throw new Error(`logical ${L}: in no chunk`);
    if (c.type & STRIPED) throw new Error(`logical ${L}: striped profile 0x${c.type.toString(16)} not supported`);
    return c.stripes.map((s) => Number(s.offset + (L - c.logical)));
  }

  /** The bytes of the tree block at logical (the first copy; a view, not a copy). */
  block(logical) {
    const at = this.physical(logical)[0];
    const b = this.buf.subarray(at, at + this.nodesize);
    if (b.readBigUInt64LE(48) !== BigInt(logical)) throw new Error(`block ${logical}: header says ${b.readBigUInt64LE(48)}`);
    return b;
  }
  header(logical) {
    const b = this.block(logical);
    return { bytenr: b.readBigUInt64LE(48), generation: b.readBigUInt64LE(80), owner: b.readBigUInt64LE(88), nritems: b.readUInt32LE(96), level: b[100] };
  }
  /** Recomputes the block's checksum and copies it to every mirror. */
  seal(logical) {
    const b = this.block(logical);
    b.fill(0, 4, 32);
    b.writeUInt32LE(crc32c(b.subarray(32)), 0);
    for (const at of this.physical(logical).slice(1)) b.copy(this.buf, at);
  }
  /** Recomputes the superblock's checksum (after an edit of its fields). */
  sealSuper() {
    const s = this.buf.subarray(this.sbAt, this.sbAt + SUPER_SIZE);
    s.fill(0, 4, 32);
    s.writeUInt32LE(crc32c(s.subarray(32)), 0);
  }

  /** A leaf's items: [{key, data}] (data copied: edit freely, then writeLeaf). */
  items(logical) {
    const b = this.block(logical);
    if (b[100] !== 0) throw new Error(`block ${logical} is a node, not a leaf`);
    const out = [];
    for (let i = 0, n = b.readUInt32LE(96); i < n; i++) {
      const h = HEADER + i * ITEM, off = b.readUInt32LE(h + 17), size = b.readUInt32LE(h + 21);
      out.push({ key: readKey(b, h), data: Buffer.from(b.subarray(HEADER + off, HEADER + off + size)) });
    }
    return out;
  }
  /** A node's key pointers: [{key, blockptr, generation}]. */
  ptrs(logical) {
    const b = this.block(logical);
    if (b[100] === 0) throw new Error(`block ${logical} is a leaf, not a node`);
    return Array.from({ length: b.readUInt32LE(96) }, (_, i) => {
      const h = HEADER + i * KEY_PTR;
      return { key: readKey(b, h), blockptr: b.readBigUInt64LE(h + 17), generation: b.readBigUInt64LE(h + 25) };
    });
  }

  /** Rewrites a leaf from items: sorted by key unless {sort: false}, data packed from the block's end,
   *  header kept. A changed first key is carried up into the parents' key pointers. */
  writeLeaf(logical, items, { sort = true } = {}) {
    const b = this.block(logical);
    if (sort) items = [...items].sort((x, y) => cmpKey(x.key, y.key));
    const space = this.nodesize - HEADER;
    const used = items.reduce((s, it) => s + ITEM + it.data.length, 0);
    if (used > space) throw new Error(`leaf ${logical}: ${used} bytes of items do not fit in ${space}`);
    const first = b.readUInt32LE(96) ? readKey(b, HEADER) : null;
    b.fill(0, HEADER);
    let end = space;
    items.forEach((it, i) => {
      end -= it.data.length;
      const h = HEADER + i * ITEM;
      writeKey(b, h, it.key);
      b.writeUInt32LE(end, h + 17);
      b.writeUInt32LE(it.data.length, h + 21);
      it.data.copy(b, HEADER + end);
    });
    b.writeUInt32LE(items.length, 96);
    this.seal(logical);
    if (items.length && first && cmpKey(first, items[0].key) !== 0) this.fixFirstKey(logical, items[0].key);
  }
  /** Rewrites a node's key pointers as given (in the order given). */
  writeNode(logical, ptrs) {
    const b = this.block(logical);
    if ((this.nodesize - HEADER) < ptrs.length * KEY_PTR) throw new Error(`node ${logical}: ${ptrs.length} pointers do not fit`);
    const first = b.readUInt32LE(96) ? readKey(b, HEADER) : null;
    b.fill(0, HEADER);
    ptrs.forEach((p, i) => {
      const h = HEADER + i * KEY_PTR;
      writeKey(b, h, p.key);
      b.writeBigUInt64LE(BigInt(p.blockptr), h + 17);
      b.writeBigUInt64LE(BigInt(p.generation), h + 25);
    });
    b.writeUInt32LE(ptrs.length, 96);
    this.seal(logical);
    if (ptrs.length && first && cmpKey(first, ptrs[0].key) !== 0) this.fixFirstKey(logical, ptrs[0].key);
  }
  fixFirstKey(logical, key) {
    const up = this.parents.get(BigInt(logical));
    if (!up) return;
    const ptrs = this.ptrs(up.parent);
    ptrs[up.slot].key = key;
    this.writeNode(up.parent, ptrs);
  }

  /** Every block of the tree rooted at logical, parents before children, each once:
   *  [{logical, level, parent, slot}]. Records the parents for writeLeaf. */
  walk(root) {
    const out = [], seen = new Set(), stack = [{ logical: BigInt(root), parent: null, slot: 0 }];
    while (stack.length) {
      const b = stack.pop();
      if (seen.has(b.logical)) continue;
      seen.add(b.logical);
      const { level } = this.header(b.logical);
      out.push({ ...b, level });
      if (b.parent !== null) this.parents.set(b.logical, { parent: b.parent, slot: b.slot });
      if (level > 0) {
        const ptrs = this.ptrs(b.logical);
        for (let slot = ptrs.length - 1; slot >= 0; slot--) stack.push({ logical: ptrs[slot].blockptr, parent: b.logical, slot });
      }
    }
    return out;
  }
  /** The leaves of the tree rooted at logical, in key order. */
  leaves(root) { return this.walk(root).filter((b) => b.level === 0).map((b) => b.logical); }

  /** The root block of a tree: 'root', 'chunk', 'log' (the log root tree), 'log:5' (subvolume 5's log tree),
   *  or a tree id (5n, 'fs' for the fs tree, 2n, ...) found by its ROOT_ITEM in the root tree. */
  rootOf(tree) { return this.rootItem(tree).bytenr; }
  /** Where a tree starts: {bytenr, level}, from the superblock (root, chunk and log root trees: the
   *  log_root at 0x60, its level at 0xc8) or from the tree's ROOT_ITEM (bytenr at 176, level at 238). */
  rootItem(tree) {
    const sb = this.super;
    if (tree === 'root') return { bytenr: sb.root, level: sb.rootLevel };
    if (tree === 'chunk') return { bytenr: sb.chunkRoot, level: sb.chunkRootLevel };
    if (tree === 'log') {
      if (!sb.logRoot) throw new Error('no log tree (log_root is 0)');
      return { bytenr: sb.logRoot, level: sb.logRootLevel };
    }
    if (tree === 'fs') tree = TREE.FS;
    const [where, id] = typeof tree === 'string' && tree.startsWith('log:') ? ['log', BigInt(tree.slice(4))] : ['root', BigInt(tree)];
    const objectid = where === 'log' ? TREE.LOG : id, offset = where === 'log' ? id : null;
    for (const leaf of this.leaves(this.rootOf(where))) {
      for (const it of this.items(leaf)) {
        if (it.key.objectid === objectid && it.key.type === KEY_TYPE.ROOT_ITEM && (offset === null || it.key.offset === offset)) {
          return { bytenr: it.data.readBigUInt64LE(ROOT_ITEM_BYTENR), level: it.data[ROOT_ITEM_LEVEL] };
        }
      }
    }
    throw new Error(`no ROOT_ITEM for tree ${tree}`);
  }
  /** The level of a tree's root (for checking a crafted tree has nodes). */
  levelOf(tree) {
    const { bytenr, level } = this.rootItem(tree);
    if (this.header(bytenr).level !== level) throw new Error(`tree ${tree}: root item says level ${level}, block ${bytenr} is level ${this.header(bytenr).level}`);
    return level;
  }

  /** Every item of a tree that pred accepts: [{leaf, index, key, data}] in key order. */
  findAll(tree, pred) {
    const out = [];
    for (const leaf of this.leaves(this.rootOf(tree))) {
      this.items(leaf).forEach((it, index) => { if (pred(it.key, it.data)) out.push({ leaf, index, ...it }); });
    }
    return out;
  }
  find(tree, pred, what = 'an item') {
    const hit = this.findAll(tree, pred)[0];
    if (!hit) throw new Error(`tree ${tree}: no ${what}`);
    return hit;
  }
  /** The item of exactly this key, or undefined. */
  get(tree, key) { return this.findAll(tree, (k) => cmpKey(k, key) === 0)[0]; }

  /** Edits the leaf holding the item pred accepts: fn(items, index) changes the array (or its items'
   *  data and keys) in place; the leaf is then repacked. Returns the hit. */
  edit(tree, pred, fn, what) {
    const hit = this.find(tree, pred, what);
    const items = this.items(hit.leaf);
    fn(items, hit.index);
    this.writeLeaf(hit.leaf, items);
    return hit;
  }
  /** Replaces the item of key (which must exist) by newItems (any number, any keys that stay in its leaf). */
  replace(tree, key, newItems) {
    return this.edit(tree, (k) => cmpKey(k, key) === 0, (items, i) => items.splice(i, 1, ...newItems), `item ${fmtKey(key)}`);
  }
  /** Inserts items into the leaf holding the item of key near (which must exist). */
  insertNear(tree, near, newItems) {
    return this.edit(tree, (k) => cmpKey(k, near) === 0, (items) => items.push(...newItems), `item ${fmtKey(near)}`);
  }

  // --- the file system's view ------------------------------------------------

  /** The inode a directory entry of dir names, by the DIR_ITEM of the name's hash. */
  entry(dir, name, tree = 'fs') {
    const it = this.get(tree, { objectid: dir, type: KEY_TYPE.DIR_ITEM, offset: nameHash(name) });
    const e = it && decodeDirEntries(it.data).find((x) => sameName(x.name, name));
    if (!e) throw new Error(`no entry ${JSON.stringify(toBytes(name).toString('latin1'))} in directory ${dir}`);
    return e;
  }
  /** The inode number of an absolute path. */
  lookup(path, tree = 'fs') {
    let ino = ROOT_DIR;
    for (const name of path.split('/').filter(Boolean)) ino = this.entry(ino, name, tree).location.objectid;
    return ino;
  }
  inode(ino, tree = 'fs') {
    const it = this.get(tree, { objectid: BigInt(ino), type: KEY_TYPE.INODE_ITEM, offset: 0n });
    if (!it) throw new Error(`no inode ${ino}`);
    return decodeInode(it.data);
  }
  editInode(ino, fields, tree = 'fs') {
    const key = { objectid: BigInt(ino), type: KEY_TYPE.INODE_ITEM, offset: 0n };
    this.edit(tree, (k) => cmpKey(k, key) === 0, (items, i) => patchInode(items[i].data, fields), `inode ${ino}`);
  }
  /** The DIR_INDEX item of dir naming name. */
  dirIndex(dir, name, tree = 'fs') {
    return this.find(tree, (k, d) => k.objectid === BigInt(dir) && k.type === KEY_TYPE.DIR_INDEX && sameName(decodeDirEntries(d)[0]?.name ?? '', name),
      `DIR_INDEX ${toBytes(name).toString('latin1')} in ${dir}`);
  }

  /**
   * Gives the entry dir/oldName a new name in its DIR_INDEX, DIR_ITEM (re-keyed to the new name's
   * hash, joining an existing DIR_ITEM of that hash as a second entry when there is one) and the
   * child's INODE_REF; the directory's i_size follows. Options: nameLen (a lying name_len written in
   * all three), items (which of 'index', 'item', 'ref' to change; the default all).
   */
  renameEntry(dir, oldName, newName, { nameLen, items = ['index', 'item', 'ref'], tree = 'fs' } = {}) {
    dir = BigInt(dir);
    const old = this.entry(dir, oldName, tree);
    const child = old.location.objectid;
    const idx = this.dirIndex(dir, oldName, tree);
    const index = idx.key.offset;
    if (items.includes('index')) {
      this.edit(tree, (k) => cmpKey(k, idx.key) === 0, (its, i) => {
        its[i].data = encodeDirEntry({ ...decodeDirEntries(its[i].data)[0], name: newName, nameLen, dataLen: undefined });
      });
    }
    if (items.includes('item')) {
      const oldKey = { objectid: dir, type: KEY_TYPE.DIR_ITEM, offset: nameHash(oldName) };
      const newKey = { ...oldKey, offset: nameHash(newName) };
      const moved = encodeDirEntry({ ...old, name: newName, nameLen, dataLen: undefined });
      // take the entry out of its DIR_ITEM (the item goes when it was alone)
      this.edit(tree, (k) => cmpKey(k, oldKey) === 0, (its, i) => {
        const rest = decodeDirEntries(its[i].data).filter((e) => !sameName(e.name, oldName));
        if (rest.length) its[i].data = encodeDirEntries(rest);
        else its.splice(i, 1);
      });
      const there = this.get(tree, newKey);
      if (there) this.edit(tree, (k) => cmpKey(k, newKey) === 0, (its, i) => { its[i].data = Buffer.concat([its[i].data, moved]); });
      else this.insertNear(tree, this.nearKey(tree, newKey), [{ key: newKey, data: moved }]);
    }
    if (items.includes('ref')) {
      const refKey = { objectid: child, type: KEY_TYPE.INODE_REF, offset: dir };
      this.edit(tree, (k) => cmpKey(k, refKey) === 0, (its, i) => {
        its[i].data = encodeInodeRefs(decodeInodeRefs(its[i].data).map((r) => (r.index === index ? { index, name: newName, nameLen } : r)));
      }, `INODE_REF ${fmtKey(refKey)}`);
    }
    if (nameLen === undefined) {
      const grow = BigInt((toBytes(newName).length - toBytes(oldName).length) * (items.includes('index') + items.includes('item')));
      if (grow) this.editInode(dir, { size: this.inode(dir, tree).size + grow }, tree);
    }
    return { child, index };
  }

  /**
   * Adds a name in dir for inode child (a DIR_INDEX at index and a DIR_ITEM, joining an existing
   * DIR_ITEM of the same hash), and grows dir's i_size. No INODE_REF (pass ref: true to add one,
   * and the child's nlink then grows too).
   */
  addEntry(dir, name, child, { type, index, ref = false, tree = 'fs' } = {}) {
    dir = BigInt(dir); child = BigInt(child);
    const ci = this.inode(child, tree);
    type ??= fileType(ci.mode);
    index ??= this.nextIndex(dir, tree);
    const location = { objectid: child, type: KEY_TYPE.INODE_ITEM, offset: 0n };
    const e = encodeDirEntry({ location, transid: this.super.generation, type, name });
    const itemKey = { objectid: dir, type: KEY_TYPE.DIR_ITEM, offset: nameHash(name) };
    const there = this.get(tree, itemKey);
    if (there) this.edit(tree, (k) => cmpKey(k, itemKey) === 0, (its, i) => { its[i].data = Buffer.concat([its[i].data, e]); });
    else this.insertNear(tree, this.nearKey(tree, itemKey), [{ key: itemKey, data: e }]);
    const indexKey = { objectid: dir, type: KEY_TYPE.DIR_INDEX, offset: BigInt(index) };
    this.insertNear(tree, this.nearKey(tree, indexKey), [{ key: indexKey, data: e }]);
    if (ref) {
      const refKey = { objectid: child, type: KEY_TYPE.INODE_REF, offset: dir };
      const r = encodeInodeRef({ index, name });
      if (this.get(tree, refKey)) this.edit(tree, (k) => cmpKey(k, refKey) === 0, (its, i) => { its[i].data = Buffer.concat([its[i].data, r]); });
      else this.insertNear(tree, this.nearKey(tree, refKey), [{ key: refKey, data: r }]);
      this.editInode(child, { nlink: ci.nlink + 1 }, tree);
    }
    const di = this.inode(dir, tree);
    if (fileType(di.mode) === FT.DIR) this.editInode(dir, { size: di.size + 2n * BigInt(toBytes(name).length) }, tree);
    return BigInt(index);
  }
  /** One past the highest DIR_INDEX of dir. */
  nextIndex(dir, tree = 'fs') {
    const all = this.findAll(tree, (k) => k.objectid === BigInt(dir) && k.type === KEY_TYPE.DIR_INDEX);
    return all.length ? all[all.length - 1].key.offset + 1n : 2n;
  }
  /** The key of an existing item in the leaf where key belongs (the last key at or below it). */
  nearKey(tree, key) {
    let best = null;
    for (const leaf of this.leaves(this.rootOf(tree))) {
      for (const it of this.items(leaf)) if (cmpKey(it.key, key) <= 0) best = it.key;
    }
    if (!best) throw new Error(`no item at or below ${fmtKey(key)}`);
    return best;
  }
}

const STRIPED = (1n << 3n) | (1n << 6n) | (1n << 7n) | (1n << 8n); // RAID0, RAID10, RAID5, RAID6
function parseChunk(key, b) {
  const numStripes = b.readUInt16LE(44);
  const stripes = Array.from({ length: numStripes }, (_, i) => ({ devid: b.readBigUInt64LE(48 + i * 32), offset: b.readBigUInt64LE(56 + i * 32) }));
  return { logical: key.offset, length: b.readBigUInt64LE(0), type: b.readBigUInt64LE(24), stripes, size: 48 + 32 * numStripes };
}
/** The dir entry type of an inode mode. */
export function fileType(mode) {
  return { 0o01: FT.FIFO, 0o02: FT.CHRDEV, 0o04: FT.DIR, 0o06: FT.BLKDEV, 0o10: FT.REG, 0o12: FT.SYMLINK, 0o14: FT.SOCK }[(Number(mode) >> 12) & 0o17] ?? FT.UNKNOWN;
}
