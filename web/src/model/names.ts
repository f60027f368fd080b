// Names a learner reads: trees by objectid, blocks by level.
import { isInodeLock, isMutex } from './locks';
import { KEY_TYPE_NAMES, OBJECTID_NAMES, type Key } from './trace-schema.gen';

const TREE_NAMES: Record<string, string> = {
  '1': 'root tree', '2': 'extent tree', '3': 'chunk tree', '4': 'device tree', '5': 'fs tree', '7': 'csum tree', '8': 'quota tree',
  '9': 'uuid tree', '10': 'free space tree', '18446744073709551607': 'data reloc tree', '18446744073709551610': 'log tree',
};

export function treeName(id: bigint): string {
  return TREE_NAMES[id.toString()] ?? (id >= 256n && id <= 0xffffffffffffff00n ? `subvolume tree ${id}` : `tree ${id}`);
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

/** A trace event's key as dump-tree prints keys, e.g. "257 DIR_INDEX 3" (the core's
 * name tables: print-tree.c's format_objectid and key types, via the trace schema). */
export function keyText([objectid, type, offset]: Key): string {
  const typeName = KEY_TYPE_NAMES[type] ?? `UNKNOWN.${type}`;
  const UUID_SUBVOL = 251, UUID_RECEIVED = 252;
  if (type === UUID_SUBVOL || type === UUID_RECEIVED) return `0x${objectid.toString(16).padStart(16, '0')} ${typeName} 0x${offset.toString(16).padStart(16, '0')}`;
  const numeric = type === 204 /* DEV_EXTENT */ || (type >= 168 && type <= 192) /* extent tree items, block groups */ || (type >= 198 && type <= 200) /* free space */;
  let obj: string;
  if (numeric) obj = objectid.toString();
  else if (objectid === 1n && type === 216 /* DEV_ITEM */) obj = 'DEV_ITEMS';
  else if (objectid === 256n && type === 228 /* CHUNK_ITEM */) obj = 'FIRST_CHUNK_TREE';
  else if (objectid === 0n && type === 249 /* PERSISTENT_ITEM */) obj = 'DEV_STATS';
  else if (objectid === 0xffffffffffffffffn) obj = '-1';
  else obj = OBJECTID_NAMES[objectid.toString()] ?? objectid.toString();
  const off = type >= 242 && type <= 246 /* qgroup items */ ? `${offset >> 48n}/${offset & ((1n << 48n) - 1n)}` : offset.toString();
  return `${obj} ${typeName} ${off}`;
}
