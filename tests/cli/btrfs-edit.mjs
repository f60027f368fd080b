// A small editor of btrfs images for crafting hostile ones: every block it
// changes gets a valid checksum again, so what a reader meets is exactly the
// damage a case means, not a checksum error. Blocks are found through
// `btrfslab dump-json` of the untouched image; in the images btrfslab makes
// a logical address is its physical one, which is checked on every access.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { crc32c, crc32cRaw } from './crc32c.mjs';

const HEADER = 101;
const ITEM = 25;
const KEY_PTR = 33;
export const TYPE = { INODE_ITEM: 1, INODE_REF: 12, XATTR_ITEM: 24, DIR_ITEM: 84, DIR_INDEX: 96, EXTENT_DATA: 108, ROOT_ITEM: 132 };
export const FT = { REG: 1, DIR: 2, SYMLINK: 7, XATTR: 8 };

/** The key offset of a DIR_ITEM or XATTR_ITEM: crc32c seeded ~1, not inverted. */
export function nameHash(name) {
  return BigInt(crc32cRaw(0xfffffffe, Buffer.from(name)));
}

export class Image {
  constructor(cli, path) {
    this.cli = cli;
    this.buf = readFileSync(path);
    const r = spawnSync(cli, ['dump-json', path], { encoding: 'utf8', maxBuffer: 1 << 28 });
    if (r.status !== 0) throw new Error(`dump-json ${path}: ${r.stderr}`);
    this.json = JSON.parse(r.stdout);
    this.nodesize = this.json.nodesize;
  }

  save(path) { writeFileSync(path, this.buf); }

  /** The tree named name ("fs", "root", "log", ...) of the dump. */
  tree(name) {
    const t = this.json.trees.find((x) => x.name === name);
    if (!t) throw new Error(`no tree ${name}`);
    return t;
  }

  block(bytenr) {
    const at = Number(bytenr);
    if (this.buf.readBigUInt64LE(at + 48) !== BigInt(bytenr)) throw new Error(`block ${bytenr} is not at its logical address`);
    return at;
  }

  /** The items of a leaf: [{key: {objectid, type, offset} (BigInt offsets), data: Buffer}]. */
  leaf(bytenr) {
    const at = this.block(bytenr);
    const n = this.buf.readUInt32LE(at + 96);
    const items = [];
    for (let i = 0; i < n; i++) {
      const h = at + HEADER + i * ITEM;
      const off = this.buf.readUInt32LE(h + 17), size = this.buf.readUInt32LE(h + 21);
      items.push({ key: readKey(this.buf, h), data: Buffer.from(this.buf.subarray(at + HEADER + off, at + HEADER + off + size)) });
    }
    return items;
  }

  /** Writes items (sorted by key) as the leaf at bytenr, data packed from the end. */
  writeLeaf(bytenr, items) {
    const at = this.block(bytenr);
    items.sort((a, b) => cmpKey(a.key, b.key));
    let end = this.nodesize - HEADER;
    const used = items.reduce((s, it) => s + ITEM + it.data.length, 0);
    if (used > this.nodesize - HEADER) throw new Error(`leaf ${bytenr}: ${used} bytes do not fit`);
    this.buf.fill(0, at + HEADER, at + this.nodesize);
    items.forEach((it, i) => {
      end -= it.data.length;
      const h = at + HEADER + i * ITEM;
      writeKey(this.buf, h, it.key);
      this.buf.writeUInt32LE(end, h + 17);
      this.buf.writeUInt32LE(it.data.length, h + 21);
      it.data.copy(this.buf, at + HEADER + end);
    });
    this.buf.writeUInt32LE(items.length, at + 96);
    this.csum(bytenr);
  }

  /** Key pointers of a node: [{key, blockptr, generation}] (BigInt). */
  node(bytenr) {
    const at = this.block(bytenr);
    const n = this.buf.readUInt32LE(at + 96);
    return Array.from({ length: n }, (_, i) => {
      const h = at + HEADER + i * KEY_PTR;
      return { at: h, key: readKey(this.buf, h), blockptr: this.buf.readBigUInt64LE(h + 17), generation: this.buf.readBigUInt64LE(h + 25) };
    });
  }

  csum(bytenr) {
    const at = this.block(bytenr);
    this.buf.writeUInt32LE(crc32c(this.buf.subarray(at + 32, at + this.nodesize)), at);
    this.buf.fill(0, at + 4, at + 32);
  }

  /** The leaf of tree holding an item that pred accepts: {bytenr, items, index}. */
  find(treeName, pred) {
    for (const b of this.tree(treeName).blocks) {
      if (b.level !== 0) continue;
      const items = this.leaf(b.bytenr);
      const index = items.findIndex((it) => pred(it.key, it.data));
      if (index >= 0) return { bytenr: b.bytenr, items, index };
    }
    throw new Error(`no such item in tree ${treeName}`);
  }

  /** The inode number of path (as btrfslab ls -l sees the directory entries). */
  ino(path) {
    const parts = path.split('/').filter(Boolean);
    let dir = 256n;
    for (const name of parts) {
      const hit = this.find('fs', (k, d) => k.objectid === dir && k.type === TYPE.DIR_INDEX && dirEntries(d)[0].name.toString() === name);
      dir = dirEntries(hit.items[hit.index].data)[0].location.objectid;
    }
    return dir;
  }
}

export function readKey(buf, at) {
  return { objectid: buf.readBigUInt64LE(at), type: buf[at + 8], offset: buf.readBigUInt64LE(at + 9) };
}
export function writeKey(buf, at, k) {
  buf.writeBigUInt64LE(BigInt(k.objectid), at);
  buf[at + 8] = k.type;
  buf.writeBigUInt64LE(BigInt(k.offset), at + 9);
}
export function cmpKey(a, b) {
  for (const f of ['objectid', 'type', 'offset']) {
    const x = BigInt(a[f]), y = BigInt(b[f]);
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** A dir item entry (DIR_ITEM, DIR_INDEX, XATTR_ITEM), with nameLen/dataLen overridable to lie. */
export function dirEntry({ location = { objectid: 0n, type: 0, offset: 0n }, transid = 1n, type, name, data = Buffer.alloc(0), nameLen, dataLen }) {
  const n = Buffer.from(name), d = Buffer.from(data);
  const b = Buffer.alloc(30 + n.length + d.length);
  writeKey(b, 0, location);
  b.writeBigUInt64LE(BigInt(transid), 17);
  b.writeUInt16LE(dataLen ?? d.length, 25);
  b.writeUInt16LE(nameLen ?? n.length, 27);
  b[29] = type;
  n.copy(b, 30);
  d.copy(b, 30 + n.length);
  return b;
}
export function dirEntries(data) {
  const out = [];
  for (let o = 0; o + 30 <= data.length;) {
    const nl = data.readUInt16LE(o + 27), dl = data.readUInt16LE(o + 25);
    out.push({ location: readKey(data, o), transid: data.readBigUInt64LE(o + 17), type: data[o + 29],
      name: data.subarray(o + 30, o + 30 + nl), data: data.subarray(o + 30 + nl, o + 30 + nl + dl) });
    o += 30 + nl + dl;
  }
  return out;
}
/** An INODE_REF entry: index u64, name_len u16, name. */
export function inodeRef(index, name, nameLen) {
  const n = Buffer.from(name);
  const b = Buffer.alloc(10 + n.length);
  b.writeBigUInt64LE(BigInt(index), 0);
  b.writeUInt16LE(nameLen ?? n.length, 8);
  n.copy(b, 10);
  return b;
}
