// A deadlock as the core reports it, as plain data for tests (no scenario
// deadlocks yet): the cycle of log_copy=direct's deadlock (docs/seed000-deadlock.md),
// one deadlock_edge event for each wait.
import type { TraceEvent } from './trace';

export type Edge = Extract<TraceEvent, { kind: 'deadlock_edge' }>;
export const edge = (seq: number, task: number, holder: number, tree: bigint, bytenr: bigint, level: number, mode: 'read' | 'write'): Edge =>
  ({ seq, kind: 'deadlock_edge', tree, bytenr, level, task, mode, holder, atNs: 5_000_000n });

export const LOG = 18446744073709551610n;
// A (task 6) holds fs leaf L for read and waits for a log block that B (7) holds;
// B waits for the delayed node mutex of inode 259 that the reclaim worker (8)
// holds; the reclaim worker waits to write-lock L
export const FIXTURE: TraceEvent[] = [
  { seq: 1, kind: 'task_new', task: 6, taskKind: 'thread', index: 0, atNs: 0n },
  edge(10, 6, 7, LOG, 30408704n, 0, 'write'),
  edge(11, 7, 8, 5n, 259n, -1, 'write'),
  edge(12, 8, 6, 5n, 30539776n, 0, 'write'),
];
export const NAMES = new Map([[6, 'A'], [7, 'B'], [8, 'reclaim']]);
export const name = (t: number) => NAMES.get(t) ?? `task ${t}`;

