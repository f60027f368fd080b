// Names a learner reads: trees by objectid, blocks by level.

const TREE_NAMES: Record<string, string> = {
  '1': 'root tree', '2': 'extent tree', '3': 'chunk tree', '4': 'device tree', '5': 'fs tree', '7': 'csum tree',
  '9': 'uuid tree', '10': 'free space tree', '18446744073709551607': 'data reloc tree', '18446744073709551610': 'log tree',
};

export function treeName(id: bigint): string {
  return TREE_NAMES[id.toString()] ?? `tree ${id}`;
}

/** "leaf" or "node (level N)". */
export function blockWhat(level: number): string {
  return level === 0 ? 'leaf' : `node (level ${level})`;
}
