// Snapshots and the blocks trees share (lesson 6), as the trees and the trace
// tell them. A snapshot is a new subvolume tree whose root is a copy of the
// source's root node: both point at the same blocks, each of which gains a
// reference. A change to either tree copies (COWs) the blocks on its path,
// and the kernel's update_ref_for_cow decides who refers to a shared block's
// children from then on: keyed references name a tree (TREE_BLOCK_REF,
// EXTENT_DATA_REF), shared ones the block that points at them
// (SHARED_BLOCK_REF, SHARED_DATA_REF, once that block is FULL_BACKREF).
//
// Two sources, read apart:
// - the picture (pictureOf): the subvolume trees, the extent tree and the
//   root tree dumped at a moment (the core's own state there), parsed into
//   each block with the trees that reach it and its children, each extent's
//   references as the extent tree holds them, and the subvolumes' root items;
// - the step (readShared): its events read once, in the worker, into moments
//   (a COW and how it treated a shared block, each reference queued, a block
//   marked FULL_BACKREF, a snapshot, qgroup accounting) and the reference
//   changes queued since the last commit.
// References are delayed refs: queued as the trees change, put in the extent
// tree when the commit runs them. The page folds a step up to a cursor
// (sharedFrame): the queue then, each tree block's references once it runs
// (projectRefs), the qgroups' numbers, and each accounted extent's trees
// before and after. Plain data: it crosses from the worker to the page.
import type { Tree, TreeDump } from './dump';
import type { TraceEvent } from './trace';
import { OBJECTID_NAMES } from './trace-schema.gen';

/** Whether a tree is a subvolume's (the fs tree, 5, or a subvolume or snapshot, 256 and up): the trees that share blocks. */
export function isSubvolTree(id: bigint | string): boolean {
  const v = BigInt(id);
  return v === 5n || (v >= 256n && v <= 0xffffffffffffff00n);
}

/** A reference to an extent, as the extent tree keeps it. */
export type Backref =
  /** TREE_BLOCK_REF: a tree block referred to by a tree (keyed). */
  | { type: 'tree'; root: string }
  /** SHARED_BLOCK_REF: a tree block referred to by the block that points at it. */
  | { type: 'shared'; parent: string }
  /** EXTENT_DATA_REF: a data extent referred to by a tree's file (keyed by tree, inode and the file offset its extent starts at). */
  | { type: 'data'; root: string; objectid: string; offset: string; count: number }
  /** SHARED_DATA_REF: a data extent referred to by the leaf that points at it. */
  | { type: 'sharedData'; parent: string; count: number };

/** An extent's references in the extent tree (its EXTENT_ITEM or METADATA_ITEM and its backrefs). */
export interface ExtentRefs {
  bytenr: string;
  /** A tree block's level; -1: a data extent. */
  level: number;
  /** Bytes (a tree block: the nodesize). */
  size: number;
  refs: number;
  generation: string;
  fullBackref: boolean;
  backrefs: Backref[];
  /** Keyed data references kept as items of their own (EXTENT_DATA_REF, SHARED_DATA_REF past a sixteenth of a leaf), whose fields the dump does not decode. */
  undecoded: number;
}

/** A leaf's file extent item pointing at a data extent. */
export interface FileExtent {
  inode: string;
  /** The file offset of the item. */
  offset: string;
  disk: string;
  diskLen: number;
}

/** A block of a subvolume tree, drawn once however many trees reach it. */
export interface SharedBlock {
  bytenr: string;
  level: number;
  /** The tree its header names (the tree that made it). */
  owner: string;
  generation: string;
  /** Its first key, as dump-tree prints it (the blocks are drawn in key order). */
  firstKey: string;
  /** A node's children. */
  children: string[];
  /** A leaf's file extents with data on disk. */
  files: FileExtent[];
  /** The subvolume trees that reach it, by id. */
  trees: string[];
  /** The tree whose root it is (null: none). */
  rootOf: string | null;
}

/** A subvolume tree: its id, its path (from the ROOT_BACKREFs), its root, and its ROOT_ITEM as last written. */
export interface SubvolTree {
  id: string;
  /** "" for the top level (5); else as btrfs qgroup show prints it, "snapshots/monday". */
  path: string;
  root: string;
  level: number;
  blocks: number;
  readonly: boolean;
  /** Whether the root tree has its ROOT_ITEM yet (a new subvolume's is written at the commit). */
  hasItem: boolean;
  /** Deleted: its ROOT_ITEM's refs are 0 (its name is gone; the cleaner drops its tree). */
  deleted: boolean;
  /** The root its ROOT_ITEM names: as last committed (a changed tree's new root is written there at the commit). */
  itemRoot: string;
  /** Its ROOT_ITEM's offset: 0, or the transaction that made the snapshot. */
  itemOffset: string;
  lastSnapshot: string;
  otransid: string;
}

/** A root tree item about subvolumes: a ROOT_ITEM, ROOT_REF or ROOT_BACKREF, as dump-tree prints it. */
export interface RootTreeItem {
  key: string;
  type: 'ROOT_ITEM' | 'ROOT_REF' | 'ROOT_BACKREF';
  objectid: string;
  offset: string;
  body: string;
}

/** The shared picture at a moment (or a step's end): the trees, their blocks, and the extents' references on disk. */
export interface SharedPicture {
  nodesize: number;
  trees: SubvolTree[];
  /** Each block of every subvolume tree, once. */
  blocks: SharedBlock[];
  /** The extent tree's references, by bytenr: tree blocks and data extents. */
  extents: Record<string, ExtentRefs>;
  /** The data extents the drawn leaves point at, by bytenr, in order. */
  data: string[];
  rootItems: RootTreeItem[];
  /** Too many blocks to draw (the subvolume trees' and the extent tree's, counted): the picture is empty. */
  tooBig: number | null;
}

const EXTENT_ITEM = 168, METADATA_ITEM = 169, TREE_BLOCK_REF = 176, EXTENT_DATA_REF = 178, SHARED_BLOCK_REF = 182, SHARED_DATA_REF = 184;
const EXTENT_DATA = 108, ROOT_ITEM = 132, ROOT_BACKREF = 144, ROOT_REF = 156;

const NAME_IDS: Record<string, string> = Object.fromEntries(Object.entries(OBJECTID_NAMES).map(([id, name]) => [name, id]));
/** A root as dump-tree names it ("FS_TREE", "257") as its id. */
const rootId = (name: string) => NAME_IDS[name] ?? name;

/** The references of every extent item of the extent tree (whose leaves must be whole). */
export function extentRefsOf(t: Tree, nodesize: number): Record<string, ExtentRefs> {
  const out: Record<string, ExtentRefs> = {};
  for (const b of t.blocks) {
    if (b.level !== 0) continue;
    for (const e of b.entries) {
      if (e.kind !== 'item') continue;
      const bytenr = e.key.objectid.toString();
      const type = e.key.type;
      if (type === EXTENT_ITEM || type === METADATA_ITEM) {
        const head = /refs (\d+) gen (\d+) flags (\S+)/.exec(e.body);
        const isData = head?.[3].split('|').includes('DATA') ?? false;
        const level = type === METADATA_ITEM ? Number(e.key.offset) : isData ? -1 : Number(/level (\d+)/.exec(e.body)?.[1] ?? 0);
        const x: ExtentRefs = {
          bytenr, level, size: type === EXTENT_ITEM ? Number(e.key.offset) : nodesize, refs: Number(head?.[1] ?? 0), generation: head?.[2] ?? '0',
          fullBackref: head?.[3].split('|').includes('FULL_BACKREF') ?? false, backrefs: [], undecoded: 0,
        };
        for (const line of e.body.split('\n')) {
          let m: RegExpExecArray | null;
          if ((m = /tree block backref root (\S+)/.exec(line))) x.backrefs.push({ type: 'tree', root: rootId(m[1]) });
          else if ((m = /shared block backref parent (\d+)/.exec(line))) x.backrefs.push({ type: 'shared', parent: m[1] });
          else if ((m = /extent data backref root (\S+) objectid (\d+) offset (\d+) count (\d+)/.exec(line))) x.backrefs.push({ type: 'data', root: rootId(m[1]), objectid: m[2], offset: m[3], count: Number(m[4]) });
          else if ((m = /shared data backref parent (\d+) count (\d+)/.exec(line))) x.backrefs.push({ type: 'sharedData', parent: m[1], count: Number(m[2]) });
        }
        out[bytenr] = x;
      } else if (out[bytenr] && (type === TREE_BLOCK_REF || type === SHARED_BLOCK_REF)) {
        // a keyed item of its own: its key says it all
        out[bytenr].backrefs.push(type === TREE_BLOCK_REF ? { type: 'tree', root: e.key.offset.toString() } : { type: 'shared', parent: e.key.offset.toString() });
      } else if (out[bytenr] && (type === EXTENT_DATA_REF || type === SHARED_DATA_REF)) {
        out[bytenr].undecoded++;
      }
    }
  }
  return out;
}

/** The subvolumes' items of the root tree (whose leaves must be whole). */
export function rootItemsOf(t: Tree): RootTreeItem[] {
  const out: RootTreeItem[] = [];
  for (const b of t.blocks) {
    if (b.level !== 0) continue;
    for (const e of b.entries) {
      if (e.kind !== 'item') continue;
      const type = e.key.type === ROOT_ITEM ? 'ROOT_ITEM' : e.key.type === ROOT_REF ? 'ROOT_REF' : e.key.type === ROOT_BACKREF ? 'ROOT_BACKREF' : null;
      if (!type || (type === 'ROOT_ITEM' && !isSubvolTree(e.key.objectid)) || e.key.objectid === 0xfffffffffffffff7n) continue;
      out.push({ key: e.key.text, type, objectid: e.key.objectid.toString(), offset: e.key.offset.toString(), body: e.body.replace(/^\t+/gm, '').trim() });
    }
  }
  return out;
}

/** A subvolume's path from the ROOT_BACKREFs ("" for the top level; a parent directory other than its subvolume's root shown as "…"). */
export function subvolPath(id: string, items: readonly RootTreeItem[]): string {
  const parts: string[] = [];
  let at = id;
  for (let guard = 0; at !== '5' && guard < 64; guard++) {
    const back = items.find((i) => i.type === 'ROOT_BACKREF' && i.objectid === at);
    if (!back) return parts.length ? parts.join('/') : `subvolume ${id}`;
    const m = /dirid (\d+) sequence \d+ name (.*)$/.exec(back.body);
    parts.unshift(m?.[2] ?? `subvolume ${at}`);
    if (m && m[1] !== '256') parts.unshift('…');
    at = back.offset;
  }
  return parts.join('/');
}

const fileExtentOf = (body: string) => {
  const m = /extent data disk byte (\d+) nr (\d+)/.exec(body);
  return m && m[1] !== '0' ? { disk: m[1], diskLen: Number(m[2]) } : null;
};

/** Blocks past which the picture is not drawn (the lesson's scenario is a few dozen). */
export const MAX_PICTURE_BLOCKS = 400;

/**
 * The picture from the dumps of one moment: the root tree and the extent
 * tree, and each subvolume tree, all with whole leaves (the dumps' other
 * trees only listed). Its blocks come once each, in rows: the roots, then
 * each level down, each row in key order.
 */
export function pictureOf(root: TreeDump, extent: TreeDump, subvols: TreeDump[]): SharedPicture {
  const rootTree = root.trees.find((t) => t.id === 1n);
  const rootItems = rootTree ? rootItemsOf(rootTree) : [];
  const extentTree = extent.trees.find((t) => t.id === 2n);
  const extents = extentTree ? extentRefsOf(extentTree, extent.nodesize) : {};
  const blocks = new Map<string, SharedBlock>();
  const trees: SubvolTree[] = [];
  for (const d of subvols) {
    for (const t of d.trees) {
      if (!isSubvolTree(t.id) || !t.blocks.length) continue;
      const id = t.id.toString();
      const item = rootItems.find((i) => i.type === 'ROOT_ITEM' && i.objectid === id);
      const num = (re: RegExp) => (item ? re.exec(item.body)?.[1] ?? '0' : '0');
      const top = t.blocks[0]; // dump-tree's order: the root first
      trees.push({
        id, path: id === '5' ? '' : subvolPath(id, rootItems), root: top.bytenr.toString(), level: top.level, blocks: t.blocks.length,
        readonly: /flags 0x[0-9a-f]*\([^)]*RDONLY/.test(item?.body ?? ''), itemOffset: item?.offset ?? '0', hasItem: !!item, deleted: /\brefs 0\b/.test(item?.body ?? ''), itemRoot: num(/ bytenr (\d+)/),
        lastSnapshot: num(/last_snapshot (\d+)/), otransid: num(/otransid (\d+)/),
      });
      for (const b of t.blocks) {
        const key = b.bytenr.toString();
        let s = blocks.get(key);
        if (!s) {
          s = {
            bytenr: key, level: b.level, owner: b.owner.toString(), generation: b.generation.toString(), firstKey: b.entries[0]?.key.text ?? '',
            children: b.level > 0 ? b.entries.flatMap((e) => (e.kind === 'ptr' ? [e.blockptr.toString()] : [])) : [],
            files: b.level === 0 ? b.entries.flatMap((e) => {
              if (e.kind !== 'item' || e.key.type !== EXTENT_DATA) return [];
              const f = fileExtentOf(e.body);
              return f ? [{ inode: e.key.objectid.toString(), offset: e.key.offset.toString(), ...f }] : [];
            }) : [],
            trees: [], rootOf: null,
          };
          blocks.set(key, s);
        }
        if (!s.trees.includes(id)) s.trees.push(id);
        if (b === top) s.rootOf = id;
      }
    }
  }
  trees.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  const data = [...new Set([...blocks.values()].flatMap((b) => b.files.map((f) => f.disk)))].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  return { nodesize: extent.nodesize, trees, blocks: orderBlocks([...blocks.values()]), extents, data, rootItems, tooBig: null };
}

/** Keys as dump-tree prints them compared as keys: objectid, type, offset (names such as FS_TREE before numbers). */
function keyOrder(a: string, b: string): number {
  const parse = (k: string) => {
    const [o, t, off] = k.split(' ');
    const n = (s: string) => (/^\d+$/.test(s ?? '') ? BigInt(s) : -1n);
    return [n(o), t ?? '', n(off)] as const;
  };
  const [ao, at, aoff] = parse(a), [bo, bt, boff] = parse(b);
  if (ao !== bo) return ao < bo ? -1 : 1;
  if (at !== bt) return at < bt ? -1 : 1;
  return aoff === boff ? 0 : aoff < boff ? -1 : 1;
}

/** The blocks in drawing order: roots (by tree), then each level down, in key order (a block and its copy side by side, the older first). */
function orderBlocks(blocks: SharedBlock[]): SharedBlock[] {
  const roots = blocks.filter((b) => b.rootOf !== null).sort((a, b) => (BigInt(a.rootOf!) < BigInt(b.rootOf!) ? -1 : 1));
  const rest = blocks.filter((b) => b.rootOf === null).sort((a, b) => b.level - a.level || keyOrder(a.firstKey, b.firstKey) || (BigInt(a.generation) < BigInt(b.generation) ? -1 : BigInt(a.generation) > BigInt(b.generation) ? 1 : 0));
  return [...roots, ...rest];
}

/** The picture's rows: the roots, then each level of the other blocks, the highest first. */
export function pictureRows(p: SharedPicture): SharedBlock[][] {
  const rows: SharedBlock[][] = [p.blocks.filter((b) => b.rootOf !== null)];
  const levels = [...new Set(p.blocks.filter((b) => b.rootOf === null).map((b) => b.level))].sort((a, b) => b - a);
  for (const l of levels) rows.push(p.blocks.filter((b) => b.rootOf === null && b.level === l));
  return rows.filter((r) => r.length);
}

// ---------------------------------------------------------------------------
// The step's events

/** A reference change the trees queued (a delayed ref), in the order they queued it. */
export type Change =
  /** A new block (a tree block keyed by its tree), or a new data extent (level -1). */
  | { seq: number; op: 'new'; bytenr: string; level: number; tree: string; size: number }
  /** A block's last reference dropped: freed (its level as last allocated; 0 when unknown). */
  | { seq: number; op: 'free'; bytenr: string; level: number; tree: string }
  | { seq: number; op: 'ref'; bytenr: string; level: number; ref: Backref; mod: 1 | -1 }
  /** The block's extent gets FULL_BACKREF. */
  | { seq: number; op: 'flag'; bytenr: string; level: number; tree: string };

/**
 * How a COW treated the block it copied (ctree.c's update_ref_for_cow):
 * alone: only this tree referred to it, it is freed; letGo: shared, and this
 * tree owns it: its children get references by the block itself, which is
 * marked FULL_BACKREF, and the tree's keyed references pass to the copy;
 * copy: shared, and another tree owns it (or it is FULL_BACKREF already): the
 * copy's children gain keyed references of this tree; lastHolder: this tree
 * was its last holder and it was FULL_BACKREF: the references by the block
 * become keyed references of this tree, and it is freed.
 */
export type CowHow = 'alone' | 'letGo' | 'copy' | 'lastHolder';

/** Why a reference was queued: a snapshot's new root, a COW, a clone (reflink), a deleted subvolume's tree dropped by the cleaner. */
export type RefWhy = 'snapshot' | 'cow' | 'clone' | 'drop' | 'other';

export type SharedMoment =
  | { seq: number; kind: 'cow'; tree: string; from: string; to: string; level: number; how: CowHow }
  /** The snapshot's root: a copy of the source's root node, pointing at the same children. */
  | { seq: number; kind: 'copyRoot'; tree: string; bytenr: string; level: number; source: string }
  /** The snapshot in place: its ROOT_ITEM, its name, its qgroup inherited. */
  | { seq: number; kind: 'snapshot'; tree: string; root: string; level: number; source: string; generation: string }
  /** A new tree block not made by a COW (a split's half, a new subvolume's leaf). */
  | { seq: number; kind: 'alloc'; tree: string; bytenr: string; level: number }
  /** A block freed (not the one a COW just replaced); dropped: by the cleaner, with a deleted subvolume's tree. */
  | { seq: number; kind: 'free'; tree: string; bytenr: string; level: number; dropped: boolean }
  /** The cleaner has dropped a deleted subvolume's tree (btrfs_drop_snapshot), its ROOT_ITEM gone. */
  | { seq: number; kind: 'drop'; tree: string }
  /** A new data extent, and the file whose ordered extent wrote it (null: not in this step). */
  | { seq: number; kind: 'data'; tree: string; bytenr: string; size: number; inode: string | null; offset: string | null }
  /** A reference queued; by: the tree whose COW, snapshot or clone queued it. */
  | { seq: number; kind: 'ref'; bytenr: string; level: number; ref: Backref; mod: 1 | -1; why: RefWhy; by: string | null; cow: string | null }
  | { seq: number; kind: 'flag'; bytenr: string; level: number; tree: string }
  /** An extent qgroups accounted at the commit: the subvolume trees that reached it before and after (level: null when unknown). */
  | { seq: number; kind: 'qextent'; bytenr: string; size: number; level: number | null; before: string[]; after: string[] }
  /** A qgroup's numbers: after the commit's accounting, or set (inherited by a snapshot, a new subvolume's, a rescan). */
  | { seq: number; kind: 'qgroup'; qgroup: string; referenced: number; exclusive: number; how: 'accounted' | 'inherited' | 'set' }
  | { seq: number; kind: 'commit'; generation: string };

export type SharedMomentKind = SharedMoment['kind'];

export interface QgroupNumbers {
  referenced: number;
  exclusive: number;
}

/** One step's story of shared blocks and qgroups. */
export interface SharedStep {
  moments: SharedMoment[];
  /** Changes queued by earlier steps since the last commit (what this step starts with). */
  queuedBefore: Change[];
  /** The step's own changes, in order. */
  changes: Change[];
  /** Each qgroup's numbers when the step began, by "level/id". */
  qgroupsBefore: Record<string, QgroupNumbers>;
}

/** What a step leaves the next: the queue since the last commit, the qgroups' numbers, each block's level as last allocated. */
export interface SharedCarry {
  queue: Change[];
  qgroups: Record<string, QgroupNumbers>;
  levels: Record<string, number>;
}

export const EMPTY_SHARED: SharedCarry = { queue: [], qgroups: {}, levels: {} };

/** A qgroup id as btrfs prints it: "0/257". */
export function qgroupName(id: bigint): string {
  return `${id >> 48n}/${id & ((1n << 48n) - 1n)}`;
}

function backrefOf(e: Extract<TraceEvent, { kind: 'backref' }>): Backref {
  if (e.level >= 0) return e.parent !== 0n ? { type: 'shared', parent: e.parent.toString() } : { type: 'tree', root: e.root.toString() };
  return e.parent !== 0n ? { type: 'sharedData', parent: e.parent.toString(), count: 1 }
    : { type: 'data', root: e.root.toString(), objectid: e.objectid.toString(), offset: e.offset.toString(), count: 1 };
}

/** How the COW at events[i] treated the block it copied, from what follows it up to the next COW or line. */
function cowHow(events: readonly TraceEvent[], i: number): CowHow {
  const c = events[i] as Extract<TraceEvent, { kind: 'cow' }>;
  let byBlockDropped = false;
  // its references move right after it (a node's, one per child): a bounded look ahead
  for (let j = i + 1; j < Math.min(events.length, i + 4096); j++) {
    const e = events[j];
    if (e.kind === 'cow' || e.kind === 'op' || e.kind === 'commit') break;
    if (e.kind === 'full_backref' && e.bytenr === c.from) return 'letGo';
    if (e.kind === 'backref' && e.bytenr === c.from && e.mod < 0) return 'copy';
    if (e.kind === 'backref' && e.parent === c.from && e.mod < 0) byBlockDropped = true;
    if (e.kind === 'block_free' && e.bytenr === c.from) return byBlockDropped ? 'lastHolder' : 'alone';
  }
  return 'alone';
}

/**
 * One step's events read into its moments and the reference changes it
 * queues, from what the steps before left (not changed); and what it leaves.
 * command is the step's script line (a clone's references are told so).
 */
export function readShared(events: readonly TraceEvent[], carry: SharedCarry, command = ''): { step: SharedStep; carry: SharedCarry } {
  const moments: SharedMoment[] = [];
  const changes: Change[] = [];
  let queue = [...carry.queue];
  const qgroups = { ...carry.qgroups };
  const levels = { ...carry.levels };
  const snapshots = events.filter((e): e is Extract<TraceEvent, { kind: 'snapshot' }> => e.kind === 'snapshot');
  const clone = /^clone\s/.test(command.trim());
  // a deleted subvolume's drop: its events come after the commit that removed its name, up to its subvol_drop
  const commits = events.filter((e) => e.kind === 'commit').map((e) => e.seq);
  const drops = events.filter((e): e is Extract<TraceEvent, { kind: 'subvol_drop' }> => e.kind === 'subvol_drop')
    .map((d) => ({ tree: d.tree.toString(), from: Math.max(-1, ...commits.filter((c) => c < d.seq)), to: d.seq }));
  const droppedBy = (at: number) => drops.find((d) => at > d.from && at < d.to)?.tree ?? null;
  // each data extent's file, from the ordered extent that wrote it
  const files = new Map<bigint, Extract<TraceEvent, { kind: 'ordered_finish' }>>();
  for (const e of events) if (e.kind === 'ordered_finish' && !files.has(e.diskBytenr)) files.set(e.diskBytenr, e);
  // what queued the references that follow it at once: a COW (its tree and the block), a snapshot's new root
  let context: { why: RefWhy; by: string; cow: string | null } | null = null;
  // the block a COW just replaced, freed right after it: no moment of its own
  let lastCow: { from: string; moments: number } | null = null;
  // qgroup accounting: extents accounted since the last qgroup numbers; the extent whose roots come next
  let accounted = 0;
  let qextent: Extract<SharedMoment, { kind: 'qextent' }> | null = null;
  const push = (c: Change) => {
    changes.push(c);
    queue.push(c);
  };
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (e.kind !== 'qgroup_root') qextent = null;
    if (e.kind !== 'backref' && e.kind !== 'full_backref' && e.kind !== 'block_free') context = null;
    switch (e.kind) {
      case 'block_alloc': {
        if (!isSubvolTree(e.tree)) break;
        const bytenr = e.bytenr.toString(), tree = e.tree.toString();
        levels[bytenr] = e.level;
        if (e.level < 0) {
          // a data extent: the ordered extent that wrote it names its file
          const done = files.get(e.bytenr);
          push({ seq: e.seq, op: 'new', bytenr, level: -1, tree, size: Number(e.generation) });
          moments.push({ seq: e.seq, kind: 'data', tree, bytenr, size: Number(e.generation), inode: done ? done.ino.toString() : null, offset: done ? done.offset.toString() : null });
          break;
        }
        push({ seq: e.seq, op: 'new', bytenr, level: e.level, tree, size: 0 });
        const snap = snapshots.find((s) => s.root === e.bytenr && s.tree === e.tree);
        const next = events[i + 1];
        if (snap) {
          moments.push({ seq: e.seq, kind: 'copyRoot', tree, bytenr, level: e.level, source: snap.source.toString() });
          context = { why: 'snapshot', by: tree, cow: null };
        } else if (!(next?.kind === 'cow' && next.to === e.bytenr)) {
          moments.push({ seq: e.seq, kind: 'alloc', tree, bytenr, level: e.level });
        }
        break;
      }
      case 'cow':
        if (!isSubvolTree(e.tree)) break;
        moments.push({ seq: e.seq, kind: 'cow', tree: e.tree.toString(), from: e.from.toString(), to: e.to.toString(), level: e.level, how: cowHow(events, i) });
        context = { why: 'cow', by: e.tree.toString(), cow: e.from.toString() };
        lastCow = { from: e.from.toString(), moments: moments.length };
        break;
      case 'block_free': {
        if (!isSubvolTree(e.tree)) break;
        const bytenr = e.bytenr.toString();
        push({ seq: e.seq, op: 'free', bytenr, level: levels[bytenr] ?? 0, tree: e.tree.toString() });
        if (!(lastCow?.from === bytenr && lastCow.moments === moments.length)) moments.push({ seq: e.seq, kind: 'free', tree: e.tree.toString(), bytenr, level: levels[bytenr] ?? 0, dropped: droppedBy(e.seq) !== null });
        lastCow = null;
        break;
      }
      case 'backref': {
        const ref = backrefOf(e);
        const mod = e.mod < 0 ? -1 : 1;
        push({ seq: e.seq, op: 'ref', bytenr: e.bytenr.toString(), level: e.level, ref, mod });
        const dropped = context ? null : droppedBy(e.seq);
        const why: RefWhy = context?.why ?? (dropped !== null ? 'drop' : clone ? 'clone' : 'other');
        const by = context?.by ?? dropped ?? (ref.type === 'data' || ref.type === 'tree' ? ref.root : null);
        moments.push({ seq: e.seq, kind: 'ref', bytenr: e.bytenr.toString(), level: e.level, ref, mod, why, by, cow: context?.cow ?? null });
        break;
      }
      case 'full_backref':
        push({ seq: e.seq, op: 'flag', bytenr: e.bytenr.toString(), level: e.level, tree: e.tree.toString() });
        moments.push({ seq: e.seq, kind: 'flag', bytenr: e.bytenr.toString(), level: e.level, tree: e.tree.toString() });
        break;
      case 'subvol_drop':
        moments.push({ seq: e.seq, kind: 'drop', tree: e.tree.toString() });
        break;
      case 'snapshot':
        moments.push({ seq: e.seq, kind: 'snapshot', tree: e.tree.toString(), root: e.root.toString(), level: e.level, source: e.source.toString(), generation: e.generation.toString() });
        break;
      case 'qgroup_extent': {
        const bytenr = e.bytenr.toString();
        qextent = { seq: e.seq, kind: 'qextent', bytenr, size: Number(e.size), level: levels[bytenr] ?? null, before: [], after: [] };
        moments.push(qextent);
        accounted++;
        break;
      }
      case 'qgroup_root':
        if (qextent && e.bytenr.toString() === qextent.bytenr) (e.after ? qextent.after : qextent.before).push(e.root.toString());
        break;
      case 'qgroup_update': {
        const q = qgroupName(e.qgroup);
        // numbers set with no extent accounted since the last: a snapshot's inheritance (before its snapshot event), a new qgroup, a rescan
        const inherits = snapshots.some((s) => s.seq > e.seq && (qgroupName(s.tree) === q || qgroupName(s.source) === q));
        const how = accounted > 0 ? 'accounted' : inherits ? 'inherited' : 'set';
        qgroups[q] = { referenced: Number(e.referenced), exclusive: Number(e.exclusive) };
        moments.push({ seq: e.seq, kind: 'qgroup', qgroup: q, referenced: Number(e.referenced), exclusive: Number(e.exclusive), how });
        if (events[i + 1]?.kind !== 'qgroup_update') accounted = 0;
        break;
      }
      case 'commit':
        moments.push({ seq: e.seq, kind: 'commit', generation: e.generation.toString() });
        queue = [];
        accounted = 0;
        break;
    }
  }
  return { step: { moments, queuedBefore: carry.queue, changes, qgroupsBefore: carry.qgroups }, carry: { queue, qgroups, levels } };
}

/** The changes queued at moment upTo of the step (null: its end; -1: before its first): those since the last commit up to there. */
export function queueAt(step: SharedStep, upTo: number | null): Change[] {
  const last = upTo === null ? step.moments.length - 1 : Math.min(upTo, step.moments.length - 1);
  const cut = last >= 0 ? step.moments[last].seq : -1;
  let since = -1;
  let committed = false;
  for (const m of step.moments) if (m.kind === 'commit' && m.seq <= cut) (since = m.seq), (committed = true);
  return [...(committed ? [] : step.queuedBefore), ...step.changes.filter((c) => c.seq > since && c.seq <= cut)];
}

/** A tree block's references once the queue runs; freed: its last reference dropped. */
export interface Projected {
  refs: number;
  fullBackref: boolean;
  backrefs: Backref[];
  freed: boolean;
}

const sameRef = (a: Backref, b: Backref) => (a.type === 'tree' && b.type === 'tree' && a.root === b.root) || (a.type === 'shared' && b.type === 'shared' && a.parent === b.parent) ||
  (a.type === 'data' && b.type === 'data' && a.root === b.root && a.objectid === b.objectid && a.offset === b.offset) || (a.type === 'sharedData' && b.type === 'sharedData' && a.parent === b.parent);

/**
 * Each tree block's references after the queued changes run, from the
 * extent tree's (the last commit's): the blocks the queue names. A data
 * extent's are not projected: the trace tells of the references COWs, a
 * snapshot and clones queue, not of those a write's own file extents make or
 * drop (the extent tree shows them at the commit).
 */
export function projectRefs(onDisk: Readonly<Record<string, ExtentRefs>>, queue: readonly Change[]): Record<string, Projected> {
  const out: Record<string, Projected> = {};
  const get = (bytenr: string): Projected => {
    let p = out[bytenr];
    if (!p) {
      const d = onDisk[bytenr];
      p = out[bytenr] = d ? { refs: d.refs, fullBackref: d.fullBackref, backrefs: d.backrefs.map((b) => ({ ...b })), freed: false } : { refs: 0, fullBackref: false, backrefs: [], freed: true };
    }
    return p;
  };
  for (const c of queue) {
    if (c.level < 0) continue;
    if (c.op === 'new') out[c.bytenr] = { refs: 1, fullBackref: false, backrefs: [{ type: 'tree', root: c.tree }], freed: false };
    else if (c.op === 'free') out[c.bytenr] = { refs: 0, fullBackref: false, backrefs: [], freed: true };
    else if (c.op === 'flag') get(c.bytenr).fullBackref = true;
    else {
      const p = get(c.bytenr);
      p.refs += c.mod;
      const k = p.backrefs.findIndex((b) => sameRef(b, c.ref));
      if (c.mod > 0 && k < 0) p.backrefs.push({ ...c.ref });
      else if (c.mod < 0 && k >= 0) p.backrefs.splice(k, 1);
      p.freed = p.refs <= 0;
    }
  }
  return out;
}

/** What an accounted extent did to a level-0 qgroup (bytes, signed). */
export interface QgroupEffect {
  qgroup: string;
  referenced: number;
  exclusive: number;
}

/**
 * The level-0 qgroups' changes for an extent of size bytes reached by the
 * trees before and after (qgroup.c's accounting, as the kernel's
 * qgroup_update_counters): a tree's qgroup references the extent when the
 * tree reaches it, and holds it exclusively when no other tree does.
 */
export function qgroupEffects(before: readonly string[], after: readonly string[], size: number): QgroupEffect[] {
  const out: QgroupEffect[] = [];
  const ids = [...new Set([...before, ...after])].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  for (const id of ids) {
    const was = before.includes(id), is = after.includes(id);
    const wasAlone = was && before.length === 1, isAlone = is && after.length === 1;
    const referenced = (is ? size : 0) - (was ? size : 0), exclusive = (isAlone ? size : 0) - (wasAlone ? size : 0);
    if (referenced || exclusive) out.push({ qgroup: `0/${id}`, referenced, exclusive });
  }
  return out;
}

/** A qgroup at a moment: its numbers, and how they moved since the step began. */
export interface QgroupRow extends QgroupNumbers {
  qgroup: string;
  /** Its subvolume's id (level 0), else null. */
  subvol: string | null;
  delta: QgroupNumbers;
  /** Set at this moment. */
  fresh: boolean;
}

/** A row of the step's reference changes: a block or extent, its references on disk, what is queued for it, and (a tree block) what it has once the queue runs. */
export interface RefRow {
  bytenr: string;
  level: number;
  onDisk: ExtentRefs | null;
  queued: Change[];
  after: Projected | null;
}

/** The shared story at a moment. */
export interface SharedFrame {
  /** The moment's index (-1: before the step's first), the moment, its event's seq (null: none yet). */
  index: number;
  moment: SharedMoment | null;
  queue: Change[];
  /** Every block and extent the step's queue (and what it started with) names, in the order first named. */
  rows: RefRow[];
  qgroups: QgroupRow[];
  /** The extents accounted so far in the step, each with its qgroups' changes. */
  accounted: { m: Extract<SharedMoment, { kind: 'qextent' }>; effects: QgroupEffect[] }[];
  /** The blocks the moment is about. */
  current: string[];
}

/** The blocks a moment is about. */
export function momentBlocks(m: SharedMoment | null): string[] {
  if (!m) return [];
  switch (m.kind) {
    case 'cow': return [m.from, m.to];
    case 'copyRoot': case 'alloc': case 'data': return [m.bytenr];
    case 'snapshot': return [m.root];
    case 'free': case 'ref': case 'flag': case 'qextent': return [m.bytenr];
    default: return [];
  }
}

/** The step's story up to and including moment upTo (null: the step's end; -1: before its first moment), with the picture of that moment (its extents on disk). */
export function sharedFrame(step: SharedStep, upTo: number | null, picture: SharedPicture | null): SharedFrame {
  const last = upTo === null ? step.moments.length - 1 : Math.min(upTo, step.moments.length - 1);
  const moment = last >= 0 ? step.moments[last] : null;
  const queue = queueAt(step, last);
  const onDisk = picture?.extents ?? {};
  const projected = projectRefs(onDisk, queue);
  const order: string[] = [];
  for (const c of [...step.queuedBefore, ...step.changes]) if (!order.includes(c.bytenr)) order.push(c.bytenr);
  const rows: RefRow[] = order.map((bytenr) => {
    const queued = queue.filter((c) => c.bytenr === bytenr);
    const named = [...step.queuedBefore, ...step.changes].find((c) => c.bytenr === bytenr)!;
    const level = onDisk[bytenr]?.level ?? named.level;
    return { bytenr, level, onDisk: onDisk[bytenr] ?? null, queued, after: level >= 0 && queued.length ? projected[bytenr] ?? null : null };
  });
  const numbers: Record<string, QgroupNumbers & { fresh: boolean }> = {};
  for (const [q, n] of Object.entries(step.qgroupsBefore)) numbers[q] = { ...n, fresh: false };
  const accounted: SharedFrame['accounted'] = [];
  for (let i = 0; i <= last; i++) {
    const m = step.moments[i];
    if (m.kind === 'qgroup') numbers[m.qgroup] = { referenced: m.referenced, exclusive: m.exclusive, fresh: i === last };
    if (m.kind === 'qextent') accounted.push({ m, effects: qgroupEffects(m.before, m.after, m.size) });
  }
  const qgroups: QgroupRow[] = Object.entries(numbers).sort(([a], [b]) => qgroupOrder(a, b)).map(([qgroup, n]) => {
    const was = step.qgroupsBefore[qgroup] ?? { referenced: 0, exclusive: 0 };
    return {
      qgroup, referenced: n.referenced, exclusive: n.exclusive, fresh: n.fresh, subvol: qgroup.startsWith('0/') ? qgroup.slice(2) : null,
      delta: { referenced: n.referenced - was.referenced, exclusive: n.exclusive - was.exclusive },
    };
  });
  return { index: last, moment, queue, rows, qgroups, accounted, current: momentBlocks(moment) };
}

function qgroupOrder(a: string, b: string): number {
  const [al, ai] = a.split('/').map(BigInt), [bl, bi] = b.split('/').map(BigInt);
  return al !== bl ? (al < bl ? -1 : 1) : ai === bi ? 0 : ai < bi ? -1 : 1;
}

/** The index of the next moment after from whose kind is one of kinds (and that passes also, if given; -1: none). */
export function nextShared(step: SharedStep, from: number, kinds: readonly SharedMomentKind[], also?: (m: SharedMoment) => boolean): number {
  for (let i = Math.max(-1, from) + 1; i < step.moments.length; i++) {
    const m = step.moments[i];
    if (kinds.includes(m.kind) && (!also || also(m))) return i;
  }
  return -1;
}

/** The index of the last moment at or before event seq (-1: none). */
export function sharedAtSeq(step: SharedStep, seq: number): number {
  let found = -1;
  for (let i = 0; i < step.moments.length && step.moments[i].seq <= seq; i++) found = i;
  return found;
}
