// Lesson 4's scenario through the WASM core and the worker's step grouping:
// its two timed sections as timelines with their lock events; the locks
// replayed at a moment where a creator waits behind a fsync that holds the
// fs leaf's read lock while its allocation stalls in reclaim; a full fsync
// flushing its delayed inode item under the inode's delayed node mutex; and the figures
// of both log_copy modes (the compare view's).
import { beforeAll, describe, expect, test } from 'vitest';
import type { RunSteps } from './runs';
import { loadCore, stepsOf as stepsOfScript } from './testCore';
import type { Core } from './wasm';
import { LESSONS } from '../lessons';
import { isMutex, lockFrame, stateOf } from '../model/locks';
import { lockContention, withLogCopy } from '../model/logCopyModes';

let core: Core;

beforeAll(async () => {
  core = await loadCore();
});

const lesson = LESSONS.find((l) => l.id === '04-leaf-locks')!;

const stepsOf = (script: string): RunSteps => stepsOfScript(core, script);

const timedOf = (runs: RunSteps) => runs.steps.filter((s) => s.kinds.has('task_new')).map((s) => runs.timeline(s.index));

describe("lesson 4's scenario: leaf locks under memory pressure", () => {
  test('two sections; the second has two fsyncers and two creators; lock events carry blocks by level', () => {
    const lines = lesson.scenario.split('\n');
    const runs = stepsOf(lesson.scenario);
    const sections = runs.steps.filter((s) => s.kinds.has('task_new'));
    expect(sections.map((s) => [s.line, lines[s.line - 1]])).toEqual([[11, 'thread A'], [22, 'thread A']]);
    const tl = runs.timeline(sections[1].index);
    expect(tl.lanes.filter((l) => l.kind === 'thread').map((l) => l.name)).toEqual(['A', 'B', 'C', 'D']);
    const locks = tl.locks!;
    expect(locks.length).toBeGreaterThan(100);
    // the fs tree grows a level in the section: its root node is locked above its leaves
    expect(locks.some((e) => e.tree === '5' && e.level === 1)).toBe(true);
    // at the step's end every lock is let go
    expect(lockFrame(locks, null).busy).toEqual([]);
  });

  test('log_copy=clone: a creator waits for a leaf that a fsyncer holds for read while it waits for memory', () => {
    const runs = stepsOf(lesson.scenario);
    const [, tl] = timedOf(runs);
    const name = new Map(tl.lanes.map((l) => [l.task, l.name]));
    const memoryWaits = tl.waits.filter((w) => w.cause === 'memory allocation' && w.end);
    const found = tl.locks!.filter((e) => e.kind === 'wait' && ['C', 'D'].includes(name.get(e.task)!)).find((e) => {
      const f = lockFrame(tl.locks!, e.seq);
      const b = f.busy.find((n) => n.bytenr === e.bytenr && n.tree === e.tree)!;
      return stateOf(b) === 'read' && b.readers.some((r) => memoryWaits.some((w) => w.task === r && w.start.seq < e.seq && w.end!.seq > e.seq));
    });
    expect(found, 'a creator queued behind a reader stalled in reclaim').toBeDefined();
    const f = lockFrame(tl.locks!, found!.seq);
    const leaf = f.busy.find((n) => n.bytenr === found!.bytenr)!;
    expect(leaf.level).toBe(0);
    // the creator has just come: last in the queue. It waits to insert (write), or to look its name up (read) behind a
    // writer queued first. Ahead of it, when the seed's interleaving has it so, only the other fsyncer, for write: a new
    // file's full fsync flushes the inode's delayed inode item into the leaf before it logs the inode whole, holding that
    // inode's delayed node mutex (kept apart from the tree blocks)
    expect(leaf.waiters.at(-1)!.task).toBe(found!.task);
    if (found!.mode === 'read') expect(leaf.waiters.slice(0, -1).some((w) => w.mode === 'write')).toBe(true);
    for (const w of leaf.waiters.slice(0, -1)) expect(w.mode).toBe('write');
    for (const w of leaf.waiters.slice(0, -1)) {
      expect(['A', 'B']).toContain(name.get(w.task));
      expect(leaf.readers).not.toContain(w.task);
      expect(f.mutexes.filter((m) => m.writer === w.task)).toHaveLength(1);
    }
    expect(f.trees.flatMap((t) => t.levels).every((l) => l >= 0)).toBe(true);
  });

  test("a new file's full fsync flushes its delayed inode item first: the inode's delayed node mutex, then its leaf for write", () => {
    const [lone] = timedOf(stepsOf(lesson.scenario));
    const a = lone.lanes.find((l) => l.name === 'A')!.task;
    const locks = lone.locks!;
    // (its write's inode update took that mutex before, as btrfs_delayed_update_inode does: no tree lock)
    const fsync = lone.ops.find((o) => o.op === 'fsync')!;
    // (its delayed node's mutex, level -1; the creators take their directory's inode lock, level -2, meanwhile)
    const taken = locks.find((e) => e.level === -1 && e.kind === 'acquire' && e.seq > fsync.start.seq)!;
    expect(taken.task).toBe(a);
    // its leaf write-locked next (a read lock of the root above it first: the probe of a write-locked search)
    const next = locks.find((e) => e.seq > taken.seq && e.task === a && !isMutex(e) && e.kind === 'acquire' && e.level === 0)!;
    expect([next.kind, next.tree, next.level, next.mode]).toEqual(['acquire', '5', 0, 'write']);
    expect(locks.filter((e) => e.seq > taken.seq && e.seq < next.seq && e.task === a && e.kind === 'acquire').every((e) => e.level > 0)).toBe(true);
    const f = lockFrame(locks, next.seq);
    expect(f.mutexes.filter((m) => m.level === -1).map((m) => [m.bytenr, m.writer, m.parent])).toEqual([[taken.bytenr, a, null]]);
    expect(f.trees.flatMap((t) => t.levels).every((l) => l >= 0)).toBe(true);
    expect(lockFrame(locks, null).busy).toEqual([]);
  });

  test('both modes: preallocating takes the creators off the leaf lock', () => {
    const [clone, prealloc] = (['clone', 'prealloc'] as const).map((m) => lockContention(timedOf(stepsOf(withLogCopy(lesson.scenario, m).text))));
    expect(clone.creators).toEqual(['C', 'D']);
    expect(clone.fsyncers).toEqual(['A', 'B']);
    expect(clone.create.n).toBe(24);
    expect(clone.fsync.n).toBe(7);
    expect(clone.creatorLockWaitNs).toBeGreaterThan(1_000_000);
    expect(prealloc.creatorLockWaitNs).toBeLessThan(clone.creatorLockWaitNs / 100);
    expect(prealloc.create.p99).toBeLessThan(clone.create.p99 / 10);
    // (the 7 fsyncs: set by the log's batching sleeps, two jiffies when both fsyncers share a log commit, and by their
    // own stalls for memory, in either mode)
  });
});
