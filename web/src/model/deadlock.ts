// A deadlock's cycle, from the trace: a run that stops on a deadlock ends
// with one deadlock_edge event for each wait of the cycle (the task, the lock
// it waits to take and in which mode, the task that holds it). Put in cycle
// order here, for the cycle view (views/DeadlockCycle.tsx) to draw: each task
// a node, each wait an edge from the waiter to the holder. Pure.
import { treeName } from './names';
import type { TraceEvent } from './trace';
import type { LockMode } from './trace-schema.gen';

export interface DeadlockEdge {
  /** The waiting task and the one holding what it waits for. */
  task: number;
  holder: number;
  /** What it waits for: the tree's objectid and the block (decimal strings); level < 0: not a tree block but a mutex (bytenr: the inode). */
  tree: string;
  bytenr: string;
  level: number;
  mode: LockMode;
  atNs: number;
}

export interface DeadlockCycle {
  /** The tasks in cycle order: edges[i] is tasks[i] waiting for what tasks[i + 1] (the first, after the last) holds. */
  tasks: number[];
  edges: DeadlockEdge[];
  /** Whether the waits close on themselves (the last holder is the first waiter). */
  closed: boolean;
}

export function deadlockEdges(events: TraceEvent[]): DeadlockEdge[] {
  const out: DeadlockEdge[] = [];
  for (const e of events) {
    if (e.kind !== 'deadlock_edge') continue;
    out.push({ task: e.task, holder: e.holder, tree: e.tree.toString(), bytenr: e.bytenr.toString(), level: e.level, mode: e.mode, atNs: Number(e.atNs) });
  }
  return out;
}

/**
 * The cycle the deadlock_edge events describe (null: none in the trace). The
 * core writes them in order from the wait that closed the cycle; they are
 * followed here from the first edge, holder to the holder's own wait, so any
 * order gives the same cycle. Edges outside the chain (a trace the core did
 * not write as one cycle) come after it, and closed says so.
 */
export function deadlockCycle(events: TraceEvent[]): DeadlockCycle | null {
  const edges = deadlockEdges(events);
  if (!edges.length) return null;
  const left = [...edges];
  const chain: DeadlockEdge[] = [left.shift()!];
  for (;;) {
    const holder = chain[chain.length - 1].holder;
    if (holder === chain[0].task) break;
    const i = left.findIndex((e) => e.task === holder);
    if (i < 0) break;
    chain.push(left.splice(i, 1)[0]);
  }
  const closed = chain[chain.length - 1].holder === chain[0].task && !left.length;
  const all = [...chain, ...left];
  const tasks: number[] = [];
  for (const e of all) for (const t of [e.task, e.holder]) if (!tasks.includes(t)) tasks.push(t);
  return { tasks, edges: all, closed };
}

/** What an edge waits for, in words: "a write lock on leaf 5255168 of the fs tree", "the delayed node mutex of inode 259". */
export function edgeWhat(e: Pick<DeadlockEdge, 'tree' | 'bytenr' | 'level' | 'mode'>): string {
  if (e.level < 0) return e.level === -2 ? `the inode lock of inode ${e.bytenr}` : `the delayed node mutex of inode ${e.bytenr}`;
  if (e.bytenr === '0') return `a ${e.mode} lock on the ${treeName(BigInt(e.tree))} (one lock for the whole tree)`;
  return `a ${e.mode} lock on ${e.level === 0 ? 'leaf' : `node (level ${e.level})`} ${e.bytenr} of the ${treeName(BigInt(e.tree))}`;
}

/** The cycle in one sentence: "A waits for a write lock on leaf … held by B; B waits for … held by A." */
export function cycleSentence(c: DeadlockCycle, name: (task: number) => string): string {
  return `${c.edges.map((e) => `${name(e.task)} waits for ${edgeWhat(e)}, held by ${name(e.holder)}`).join('; ')}.${c.closed ? '' : ' (The waits the core reported do not close on themselves.)'}`;
}
