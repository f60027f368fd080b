// How a full fsync copies fs leaf items into the log (seed 000, "btrfs:
// preallocate temporary extent buffer for inode logging when needed"):
// before it, through a clone of each leaf allocated while holding the leaf's
// read lock inside the log transaction; since, through one extent buffer
// allocated before locking anything. The compare view runs one scenario in
// each mode and sums up its timed sections: the creators' creates, the
// fsyncers' fsyncs, and the time creators waited for tree locks.
import { withSetting } from './scriptSettings';
import type { Timeline } from './timeline';

export const LOG_COPIES = ['clone', 'prealloc'] as const;
export type LogCopy = (typeof LOG_COPIES)[number];

export const LOG_COPY_LABEL: Record<LogCopy, string> = {
  clone: 'Before: a clone allocated under the leaf\'s read lock',
  prealloc: 'After: one extent buffer allocated before locking',
};

/** The script in one mode throughout (scriptSettings.ts). */
export function withLogCopy(script: string, mode: LogCopy): { text: string; at: number | null } {
  return withSetting(script, 'log_copy', mode);
}

/** The p-th percentile (0..100) by nearest rank; 0 for no values. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return 0;
  const v = [...values].sort((a, b) => a - b);
  return v[Math.max(0, Math.ceil((p / 100) * v.length) - 1)];
}

export interface Latencies {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

export function latencies(values: number[]): Latencies {
  return { n: values.length, p50: percentile(values, 50), p99: percentile(values, 99), max: values.length ? Math.max(...values) : 0 };
}

export interface LockContention {
  /** Thread names: those that ran an fsync, and those that ran creates and no fsync. */
  fsyncers: string[];
  creators: string[];
  /** Latencies (ns) of the creators' creates and of the fsyncers' fsyncs. */
  create: Latencies;
  fsync: Latencies;
  /** Time the creators spent waiting for tree locks, in all (ns). */
  creatorLockWaitNs: number;
  /** Time any task spent waiting for memory allocation (direct reclaim), in all (ns). */
  memoryWaitNs: number;
}

/**
 * The timed sections' figures: a thread that runs an fsync is an fsyncer;
 * one that runs creates and no fsync is a creator. Threads are told apart by
 * section and task (a name may come back in a later section).
 */
export function lockContention(timelines: Timeline[]): LockContention {
  const fsyncers = new Set<string>(), creators = new Set<string>();
  const create: number[] = [], fsync: number[] = [];
  let creatorLockWaitNs = 0, memoryWaitNs = 0;
  for (const tl of timelines) {
    const threads = tl.lanes.filter((l) => l.kind === 'thread');
    const fsyncing = new Set(tl.ops.filter((o) => o.op === 'fsync').map((o) => o.task));
    const creating = new Set(threads.filter((l) => !fsyncing.has(l.task) && tl.ops.some((o) => o.task === l.task && isCreate(o.text))).map((l) => l.task));
    for (const l of threads) {
      if (fsyncing.has(l.task)) fsyncers.add(l.name);
      else if (creating.has(l.task)) creators.add(l.name);
    }
    for (const o of tl.ops) {
      if (!o.end) continue;
      const d = o.end.at - o.start.at;
      if (o.op === 'fsync' && fsyncing.has(o.task)) fsync.push(d);
      else if (creating.has(o.task) && isCreate(o.text)) create.push(d);
    }
    for (const w of tl.waits) {
      const d = (w.end?.at ?? tl.t1) - w.start.at;
      // a tree block's lock, or its directory's (the VFS holds it through a create: behind a creator who waits for a leaf)
      if ((w.cause === 'tree lock' || w.cause === 'inode lock') && creating.has(w.task)) creatorLockWaitNs += d;
      if (w.cause === 'memory allocation') memoryWaitNs += d;
    }
  }
  return { fsyncers: [...fsyncers], creators: [...creators], create: latencies(create), fsync: latencies(fsync), creatorLockWaitNs, memoryWaitNs };
}

const isCreate = (text: string) => /^(\S+:\s*)?create\s/.test(text);
