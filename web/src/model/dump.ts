// The trees of a filesystem as the core describes them (blab_dump_json),
// with every 64-bit value as a BigInt. The UI never decodes image bytes.

export interface Key {
  objectid: bigint;
  type: number;
  offset: bigint;
  /** As dump-tree prints it, e.g. "256 INODE_ITEM 0". */
  text: string;
}

export interface LeafItem {
  kind: 'item';
  slot: number;
  key: Key;
  offset: number;
  size: number;
  summary: string;
  /** The item's fields, as `btrfs inspect-internal dump-tree` prints them. */
  body: string;
}

export interface KeyPtr {
  kind: 'ptr';
  slot: number;
  key: Key;
  blockptr: bigint;
  generation: bigint;
}

export interface Block {
  bytenr: bigint;
  level: number;
  generation: bigint;
  owner: bigint;
  nritems: number;
  free: number;
  entries: (LeafItem | KeyPtr)[];
}

export interface Tree {
  id: bigint;
  name: string;
  owner: string;
  /** Blocks in the tree (blocks may be empty when only another tree was asked for). */
  blockCount: number;
  blocks: Block[];
}

export interface TreeDump {
  nodesize: number;
  generation: bigint;
  totalBytes: bigint;
  bytesUsed: bigint;
  trees: Tree[];
}

type RawKey = [string, number, string];
interface RawEntry {
  slot?: number;
  key: RawKey;
  text: string;
  offset?: number;
  size?: number;
  summary?: string;
  body?: string;
  blockptr?: string;
  gen?: string;
}
interface RawBlock {
  bytenr: string;
  level: number;
  generation: string;
  owner: string;
  nritems: number;
  free: number;
  items: RawEntry[];
}
interface RawDump {
  nodesize: number;
  generation: string;
  total_bytes: string;
  bytes_used: string;
  trees: { id: string; name: string; owner: string; block_count?: number; blocks: RawBlock[] }[];
}

/** Parses the core's JSON (64-bit values as decimal strings) without loss. */
export function parseTreeDump(json: string): TreeDump {
  const raw = JSON.parse(json) as RawDump;
  return {
    nodesize: raw.nodesize,
    generation: BigInt(raw.generation),
    totalBytes: BigInt(raw.total_bytes),
    bytesUsed: BigInt(raw.bytes_used),
    trees: raw.trees.map((t) => ({
      id: BigInt(t.id),
      // every subvolume's tree is a "file" tree to dump-tree: named apart by its id, so each can be chosen
      name: t.name === 'file' ? `subvolume ${t.id}` : t.name,
      owner: t.owner,
      blockCount: t.blocks.length || t.block_count || 0,
      blocks: t.blocks.map((b) => ({
        bytenr: BigInt(b.bytenr),
        level: b.level,
        generation: BigInt(b.generation),
        owner: BigInt(b.owner),
        nritems: b.nritems,
        free: b.free,
        entries: b.items.map((e, i) => {
          const slot = e.slot ?? i;
          const key: Key = { objectid: BigInt(e.key[0]), type: e.key[1], offset: BigInt(e.key[2]), text: e.text };
          return b.level === 0
            ? { kind: 'item', slot, key, offset: e.offset ?? 0, size: e.size ?? 0, summary: e.summary ?? '', body: e.body ?? '' }
            : { kind: 'ptr', slot, key, blockptr: BigInt(e.blockptr ?? '0'), generation: BigInt(e.gen ?? '0') };
        }),
      })),
    })),
  };
}

/** The tree's title as dump-tree prints it ("fs tree", "root tree"). */
export function treeTitle(t: Tree): string {
  return `${t.name} tree`;
}

/** One-line header of a block, in dump-tree's words. */
export function blockHeadline(b: Block): string {
  const what = b.level === 0 ? 'leaf' : `node level ${b.level}`;
  return `${what} ${b.bytenr} items ${b.nritems} free space ${b.free} generation ${b.generation}`;
}

/** Tree names as the core gives them, to their objectids. */
export const TREE_IDS: Record<string, bigint> = {
  root: 1n, extent: 2n, chunk: 3n, device: 4n, fs: 5n, checksum: 7n, quota: 8n, uuid: 9n, 'free space': 10n,
  'data reloc': 18446744073709551607n, 'log root': 18446744073709551610n, log: 18446744073709551610n,
};

/** A tree's objectid from its name in a dump ("fs", "subvolume 257"); the fs tree's when unknown. */
export function treeIdOf(name: string): bigint {
  const sub = /^subvolume (\d+)$/.exec(name);
  return sub ? BigInt(sub[1]) : TREE_IDS[name] ?? 5n;
}
