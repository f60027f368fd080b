// Names a learner reads: trees by objectid, blocks by level, keys as
// dump-tree prints them. The one place a sentence turns an objectid, a tree
// or a key type into words: no sentence shows a raw u64 ((u64)-8 is the
// reloc tree, never 18446744073709551608) or an UNKNOWN key type.
import { isInodeLock, isMutex } from './locks';
import { KEY_TYPE_NAMES, OBJECTID_NAMES, type Key } from './trace-schema.gen';

/** The kernel's trees (uapi btrfs_tree.h's *_OBJECTID) as prose names them; the reloc tree is (u64)-8, TREE_RELOC. */
const TREE_NAMES: Record<string, string> = {
  '1': 'root tree', '2': 'extent tree', '3': 'chunk tree', '4': 'device tree', '5': 'fs tree', '7': 'csum tree', '8': 'quota tree',
  '9': 'uuid tree', '10': 'free space tree', '11': 'block group tree', '18446744073709551607': 'data reloc tree', '18446744073709551608': 'reloc tree',
  '18446744073709551610': 'log tree',
};

/** BTRFS_LAST_FREE_OBJECTID, (u64)-256: the end of the inode and subvolume numbers (dump-tree prints it as a number; the kernel's name is kept here). */
const LAST_FREE = 0xffffffffffffff00n;
/** Objectids at or past 2^63 are the kernel's negative constants: told signed when they have no name ("-256" would be; LAST_FREE has one). */
const signed = (id: bigint) => (id >= 1n << 63n ? `-${(1n << 64n) - id}` : id.toString());

export function treeName(id: bigint): string {
  const s = id.toString();
  if (TREE_NAMES[s]) return TREE_NAMES[s];
  if (id >= 256n && id < LAST_FREE) return `subvolume tree ${id}`;
  return OBJECTID_NAMES[s] ? `${OBJECTID_NAMES[s]} tree` : `tree ${signed(id)}`;
}

/** "leaf" or "node (level N)". */
export function blockWhat(level: number): string {
  return level === 0 ? 'leaf' : `node (level ${level})`;
}

/**
 * What a lock is, in words: "leaf 5255168 of the fs tree", "the fs tree" (bytenr
 * 0: the timed model's one lock for a whole tree), "the delayed node mutex
 * of inode 259" (level -1: an inode's delayed node mutex, model/locks.ts's
 * isMutex, bytenr the inode) or "the inode lock of inode 257" (level -2: its
 * i_rwsem).
 */
export function lockWhat(l: { tree: bigint | string; bytenr: bigint | string; level: number }): string {
  const bytenr = String(l.bytenr), tree = treeName(BigInt(l.tree));
  if (isMutex(l)) return isInodeLock(l) ? `the inode lock of inode ${bytenr}` : `the delayed node mutex of inode ${bytenr}`;
  return bytenr === '0' ? `the ${tree}` : `${blockWhat(l.level)} ${bytenr} of the ${tree}`;
}

/**
 * A trace event's key as dump-tree prints keys, e.g. "257 DIR_INDEX 3" (the core's
 * name tables: print-tree.c's format_objectid and key types, via the trace schema),
 * with two departures for prose: a type with no name (a search key's type 0, which
 * sorts before every item of its objectid) is its number, where dump-tree says
 * UNKNOWN.0, and (u64)-256 is LAST_FREE, the kernel's BTRFS_LAST_FREE_OBJECTID.
 */
export function keyText([objectid, type, offset]: Key): string {
  const typeName = KEY_TYPE_NAMES[type] ?? String(type);
  const UUID_SUBVOL = 251, UUID_RECEIVED = 252;
  if (type === UUID_SUBVOL || type === UUID_RECEIVED) return `0x${objectid.toString(16).padStart(16, '0')} ${typeName} 0x${offset.toString(16).padStart(16, '0')}`;
  const numeric = type === 204 /* DEV_EXTENT */ || (type >= 168 && type <= 192) /* extent tree items, block groups */ || (type >= 198 && type <= 200) /* free space */;
  let obj: string;
  if (numeric) obj = objectid.toString();
  else if (objectid === 1n && type === 216 /* DEV_ITEM */) obj = 'DEV_ITEMS';
  else if (objectid === 256n && type === 228 /* CHUNK_ITEM */) obj = 'FIRST_CHUNK_TREE';
  else if (objectid === 0n && type === 249 /* PERSISTENT_ITEM */) obj = 'DEV_STATS';
  else if (objectid === 0xffffffffffffffffn) obj = '-1';
  else if (objectid === LAST_FREE) obj = 'LAST_FREE';
  else obj = OBJECTID_NAMES[objectid.toString()] ?? signed(objectid);
  const off = type >= 242 && type <= 246 /* qgroup items */ ? `${offset >> 48n}/${offset & ((1n << 48n) - 1n)}` : offset === 0xffffffffffffffffn ? '-1' : offset.toString();
  return `${obj} ${typeName} ${off}`;
}

/**
 * A core message with its trees and blocks named as sentences name them:
 * "block 5255168 (level 0) of tree 5" becomes "leaf 5255168 of the fs tree",
 * "tree 18446744073709551608" the "reloc tree" (the core's C messages print
 * objectids; the page says names).
 */
export function namedInMessage(text: string): string {
  return text
    .replace(/\bblock (\d+) \(level (\d+)\) of tree (\d+)\b/g, (_, b: string, l: string, t: string) => `${blockWhat(Number(l))} ${b} of the ${treeName(BigInt(t))}`)
    .replace(/\b(of |in |on )?tree (\d+)\b/g, (_, prep: string | undefined, t: string) => `${prep ? `${prep}the ` : ''}${treeName(BigInt(t))}`);
}
