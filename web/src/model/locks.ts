// Tree block locks in one step (lesson 4), replayed from its lock events:
// which task holds each block's lock, in which mode, and who waits for it, at
// any event of the step. With `set tree_locks=path` every tree block has its
// own read/write lock, taken from the root down with lock coupling as
// btrfs_search_slot does: the child is locked before the parent is let go.
// The blocks a step locks are laid out as a small tree per btrfs tree, by
// level (the root on top), their parents found from that coupling: a task
// that holds a block at level L+1 when it locks (or waits for) one at level L
// of the same tree went down from the one to the other. The delayed node
// mutexes (delayed-inode.c) come through the same events at level -1, the
// inode as their bytenr: they are no tree block (no row, no parent, no
// child) and are kept apart, one per inode. Pure: the same cut gives the
// same state, so stepping back is exact.
import type { TraceEvent } from './trace';
import type { LockMode } from './trace-schema.gen';

/** One lock event, as the view needs it (the trace's lock_wait / lock_acquire / lock_release). */
export interface LockEvent {
  seq: number;
  kind: 'wait' | 'acquire' | 'release';
  /** The tree's objectid and the block's bytenr, as decimal strings (u64). bytenr "0": a whole tree's one lock (tree_locks=tree). */
  tree: string;
  bytenr: string;
  /** The block's level; -1 or -2: not a tree block but an inode's delayed node mutex or its lock, bytenr the inode (see isMutex). */
  level: number;
  task: number;
  mode: LockMode;
  /** Virtual time, ns. */
  at: number;
}

/**
 * Whether a lock is an inode's mutex rather than a tree block's lock: the
 * core gives its delayed node's mutex level -1 (tasks.c's struct
 * delayed_node) and its inode lock, i_rwsem, level -2 (sched.h's
 * SCHED_LOCK_INODE), the inode as bytenr. A mutex has one holder at a time
 * (taken as "write").
 */
export const isMutex = (l: { level: number }) => l.level < 0;
/** Whether a mutex is an inode's lock (i_rwsem, which the VFS takes for a namespace command, btrfs for a write). */
export const isInodeLock = (l: { level: number }) => l.level === -2;

/** A lock's key among the step's locks: a tree block's, or an inode's mutex (apart: an inode number is no bytenr). */
export const blockKey = (tree: string, bytenr: string, level = 0) =>
  level === -2 ? `${tree}:ilock ${bytenr}` : level < 0 ? `${tree}:inode ${bytenr}` : `${tree}:${bytenr}`;
const keyOf = (l: { tree: string; bytenr: string; level: number }) => blockKey(l.tree, l.bytenr, l.level);

/** The step's lock events, in order. */
export function lockEventsOf(events: TraceEvent[]): LockEvent[] {
  const out: LockEvent[] = [];
  for (const e of events) {
    if (e.kind !== 'lock_wait' && e.kind !== 'lock_acquire' && e.kind !== 'lock_release') continue;
    out.push({
      seq: e.seq, kind: e.kind === 'lock_wait' ? 'wait' : e.kind === 'lock_acquire' ? 'acquire' : 'release',
      tree: e.tree.toString(), bytenr: e.bytenr.toString(), level: e.level, task: e.task, mode: e.mode, at: Number(e.atNs),
    });
  }
  return out;
}

export interface Waiter {
  task: number;
  mode: LockMode;
  /** When it began to wait (ns). */
  since: number;
}

export interface BlockLock {
  tree: string;
  bytenr: string;
  level: number;
  /** Tasks holding it for read, in the order they took it. */
  readers: number[];
  /** The task holding it for write (null: none). */
  writer: number | null;
  /** Tasks waiting for it, first come first. */
  waiters: Waiter[];
}

export type BlockState = 'free' | 'read' | 'write';

export const stateOf = (b: BlockLock): BlockState => (b.writer !== null ? 'write' : b.readers.length ? 'read' : 'free');

/** A block drawn: its lock at the cut, its place (row: level from the top; x: 0..1 order in its row), its parent. */
export interface LockNode extends BlockLock {
  key: string;
  parent: string | null;
  /** Whether an event of this block is the one cut at. */
  current: boolean;
}

export interface LockTree {
  tree: string;
  /** Levels from the highest (the root's) down to 0. */
  levels: number[];
  /** Blocks by level (same order as levels), each row ordered under its parents. */
  rows: LockNode[][];
}

export interface LockFrame {
  /** The event cut at (null: the step's end). */
  cut: number | null;
  trees: LockTree[];
  /** The inode mutexes the step takes (inode locks and delayed node mutexes, bytenr: the inode; no parent). */
  mutexes: LockNode[];
  /** Blocks locked or waited for at the cut, in tree and level order, then the mutexes held or waited for. */
  busy: LockNode[];
}

/**
 * The lock of every block the step's lock events name, after the events up
 * to seq `cut` (null: all of them). Each block is free before the step (a
 * section starts with no lock held). A waiter leaves the queue when it takes
 * the lock.
 */
export function locksAt(locks: LockEvent[], cut: number | null): Map<string, BlockLock> {
  const c = cut ?? Infinity;
  const blocks = new Map<string, BlockLock>();
  for (const e of locks) {
    const k = keyOf(e);
    let b = blocks.get(k);
    if (!b) {
      b = { tree: e.tree, bytenr: e.bytenr, level: e.level, readers: [], writer: null, waiters: [] };
      blocks.set(k, b);
    }
    if (e.seq > c) continue; // named by the step, not yet touched at the cut: free
    switch (e.kind) {
      case 'wait':
        if (!b.waiters.some((w) => w.task === e.task)) b.waiters.push({ task: e.task, mode: e.mode, since: e.at });
        break;
      case 'acquire':
        b.waiters = b.waiters.filter((w) => w.task !== e.task);
        if (e.mode === 'write') b.writer = e.task;
        else if (!b.readers.includes(e.task)) b.readers.push(e.task);
        break;
      case 'release':
        if (e.mode === 'write') {
          if (b.writer === e.task) b.writer = null;
        } else {
          b.readers = b.readers.filter((t) => t !== e.task);
        }
        break;
    }
  }
  return blocks;
}

/**
 * Each block's parent, from lock coupling over the whole step: when a task
 * locks or waits for a block at level L while it holds one at level L+1 of
 * the same tree, the holder is the parent (the last such seen wins: a split
 * can move a leaf under a new parent). A delayed node mutex is nobody's
 * parent or child: a task holding a leaf while it waits for one went down
 * no tree.
 */
export function parentsOf(locks: LockEvent[]): Map<string, string> {
  const held = new Map<number, Map<string, LockEvent>>(); // task → blocks it holds
  const parents = new Map<string, string>();
  for (const e of locks) {
    if (isMutex(e)) continue;
    const k = keyOf(e);
    let mine = held.get(e.task);
    if (!mine) held.set(e.task, (mine = new Map()));
    if (e.kind === 'release') {
      mine.delete(k);
      continue;
    }
    for (const [pk, p] of mine) if (p.tree === e.tree && p.level === e.level + 1 && pk !== k) parents.set(k, pk);
    if (e.kind === 'acquire') mine.set(k, e);
  }
  return parents;
}

/** Lock coupling's tree order: objectid as a number for sorting, the log tree (a negative objectid) last. */
const treeOrder = (t: string) => (BigInt(t) > 1n << 62n ? Number.MAX_SAFE_INTEGER : Number(t));

/** The step's locks at event `cut` (null: the step's end), laid out per tree by level. */
export function lockFrame(locks: LockEvent[], cut: number | null): LockFrame {
  const state = locksAt(locks, cut);
  const parents = parentsOf(locks);
  const current = cut === null ? null : locks.find((e) => e.seq === cut);
  const byTree = new Map<string, LockNode[]>();
  const mutexes: LockNode[] = [];
  for (const [key, b] of state) {
    const n: LockNode = { ...b, key, parent: parents.get(key) ?? null, current: !!current && keyOf(current) === key };
    if (isMutex(b)) {
      mutexes.push(n);
      continue;
    }
    const list = byTree.get(b.tree) ?? [];
    list.push(n);
    byTree.set(b.tree, list);
  }
  const trees: LockTree[] = [];
  for (const [tree, nodes] of [...byTree].sort((a, b) => treeOrder(a[0]) - treeOrder(b[0]))) {
    const levels = [...new Set(nodes.map((n) => n.level))].sort((a, b) => b - a);
    const rows: LockNode[][] = [];
    let above: LockNode[] = [];
    for (const level of levels) {
      const place = (n: LockNode) => {
        const i = above.findIndex((p) => p.key === n.parent);
        return i < 0 ? above.length : i;
      };
      const row = nodes.filter((n) => n.level === level).sort((a, b) => place(a) - place(b) || cmpBytenr(a.bytenr, b.bytenr));
      rows.push(row);
      above = row;
    }
    trees.push({ tree, levels, rows });
  }
  mutexes.sort((a, b) => cmpBytenr(a.bytenr, b.bytenr) || treeOrder(a.tree) - treeOrder(b.tree));
  const busy = [...trees.flatMap((t) => t.rows.flat()), ...mutexes].filter((n) => stateOf(n) !== 'free' || n.waiters.length > 0);
  return { cut, trees, mutexes, busy };
}

function cmpBytenr(a: string, b: string): number {
  const x = BigInt(a), y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
