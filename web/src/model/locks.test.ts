// Tree locks replayed from a step's lock events (lesson 4): holders, modes
// and waiter queues at any cut, parents from lock coupling, rows by level;
// the delayed node mutexes (level -1) kept apart, and told as mutexes.
import { describe, expect, test } from 'vitest';
import { blockSentence } from '../views/LockPanel';
import { describeEvent } from '../views/sentences';
import { blockKey, isMutex, lockEventsOf, lockFrame, locksAt, parentsOf, stateOf, type LockEvent } from './locks';
import type { TraceEvent } from './trace';

const FS = '5', LOG = '18446744073709551610';
let seq = 0;
const ev = (kind: LockEvent['kind'], task: number, bytenr: string, level: number, mode: 'read' | 'write', tree = FS): LockEvent =>
  ({ seq: ++seq, kind, tree, bytenr, level, task, mode, at: seq * 100 });

// A (task 1) reads down root R → leaf L (coupling), keeps L; C (task 3) write-searches R → L and queues on L;
// B (task 2) read-locks L too; A lets go, B lets go, C takes L; C lets go of R and L.
function story(): LockEvent[] {
  seq = 0;
  return [
    ev('acquire', 1, 'R', 1, 'read'), //  1
    ev('acquire', 1, 'L', 0, 'read'), //  2
    ev('release', 1, 'R', 1, 'read'), //  3
    ev('acquire', 3, 'R', 1, 'write'), // 4
    ev('wait', 3, 'L', 0, 'write'), //    5
    ev('acquire', 2, 'L', 0, 'read'), //  6 (a reader the queued writer does not keep out, as the model allows)
    ev('release', 1, 'L', 0, 'read'), //  7
    ev('release', 2, 'L', 0, 'read'), //  8
    ev('acquire', 3, 'L', 0, 'write'), // 9
    ev('release', 3, 'R', 1, 'write'), // 10
    ev('acquire', 4, 'M', 0, 'write', LOG), // 11
    ev('release', 3, 'L', 0, 'write'), // 12
    ev('release', 4, 'M', 0, 'write', LOG), // 13
  ];
}

describe('lock state at a cut', () => {
  test('readers share, a writer queues behind them and takes the lock when the last lets go', () => {
    const locks = story();
    const at = (cut: number | null) => locksAt(locks, cut);
    const L = blockKey(FS, 'L'), R = blockKey(FS, 'R');
    expect(stateOf(at(0).get(L)!)).toBe('free'); // named by the step, untouched yet
    expect(at(2).get(L)!.readers).toEqual([1]);
    expect(at(2).get(R)!.readers).toEqual([1]); // coupling: both held
    expect(stateOf(at(3).get(R)!)).toBe('free');
    expect(at(5).get(L)!.waiters).toEqual([{ task: 3, mode: 'write', since: 500 }]);
    expect(at(5).get(R)!.writer).toBe(3);
    expect(at(6).get(L)!.readers).toEqual([1, 2]);
    expect(at(8).get(L)!.readers).toEqual([]);
    expect(at(8).get(L)!.waiters).toHaveLength(1);
    const taken = at(9).get(L)!;
    expect([stateOf(taken), taken.writer, taken.waiters]).toEqual(['write', 3, []]);
    expect(stateOf(at(11).get(blockKey(LOG, 'M'))!)).toBe('write');
    for (const b of at(null).values()) expect([stateOf(b), b.waiters.length]).toEqual(['free', 0]);
  });

  test('exact both ways: a cut gives the same state whatever was asked before', () => {
    const locks = story();
    const seen = Array.from({ length: 14 }, (_, i) => JSON.stringify(lockFrame(locks, i)));
    for (const i of [9, 2, 13, 5, 0, 5]) expect(JSON.stringify(lockFrame(locks, i))).toBe(seen[i]);
  });

  test('parents from lock coupling; rows by level, root on top; the busy blocks and the one cut at', () => {
    const locks = story();
    expect(parentsOf(locks)).toEqual(new Map([[blockKey(FS, 'L'), blockKey(FS, 'R')]]));
    const f = lockFrame(locks, 5);
    expect(f.trees.map((t) => [t.tree, t.levels, t.rows.map((r) => r.map((n) => n.bytenr))])).toEqual([
      [FS, [1, 0], [['R'], ['L']]],
      [LOG, [0], [['M']]], // the log tree after the fs tree
    ]);
    expect(f.busy.map((n) => n.bytenr)).toEqual(['R', 'L']);
    expect(f.trees[0].rows[1][0].current).toBe(true);
    expect(f.trees[0].rows[1][0].parent).toBe(blockKey(FS, 'R'));
    expect(lockFrame(locks, null).busy).toEqual([]);
  });

  test('leaves are ordered under their parents, then by block number', () => {
    seq = 0;
    const locks = [
      ev('acquire', 1, '300', 1, 'read'), ev('acquire', 1, '900', 0, 'read'), ev('release', 1, '300', 1, 'read'), ev('release', 1, '900', 0, 'read'),
      ev('acquire', 1, '200', 1, 'read'), ev('acquire', 1, '100', 0, 'read'), ev('release', 1, '200', 1, 'read'), ev('release', 1, '100', 0, 'read'),
      ev('acquire', 1, '200', 1, 'read'), ev('acquire', 1, '50', 0, 'read'), ev('release', 1, '200', 1, 'read'), ev('release', 1, '50', 0, 'read'),
    ];
    const [t] = lockFrame(locks, null).trees;
    expect(t.rows.map((r) => r.map((n) => n.bytenr))).toEqual([['200', '300'], ['50', '100', '900']]);
  });

  test('lock events from the trace: only the three lock kinds, u64s as decimal strings', () => {
    const trace = [
      { seq: 1, kind: 'task_wait', task: 1, cause: 'tree lock', object: 5n, atNs: 10n },
      { seq: 2, kind: 'lock_wait', tree: 5n, bytenr: 5255168n, level: 0, task: 3, mode: 'write', holder: 1, atNs: 10n },
      { seq: 3, kind: 'lock_acquire', tree: 0xfffffffffffffffan, bytenr: 5312512n, level: 0, task: 1, mode: 'write', waitNs: 0n, atNs: 20n },
      { seq: 4, kind: 'lock_release', tree: 5n, bytenr: 5255168n, level: 1, task: 1, mode: 'read', atNs: 30n },
    ] as TraceEvent[];
    expect(lockEventsOf(trace)).toEqual([
      { seq: 2, kind: 'wait', tree: '5', bytenr: '5255168', level: 0, task: 3, mode: 'write', at: 10 },
      { seq: 3, kind: 'acquire', tree: LOG, bytenr: '5312512', level: 0, task: 1, mode: 'write', at: 20 },
      { seq: 4, kind: 'release', tree: '5', bytenr: '5255168', level: 1, task: 1, mode: 'read', at: 30 },
    ]);
  });
});

// B (task 2) flushes inode 259's delayed items: it takes the inode's delayed node mutex, then
// write-locks leaf L (under R); A (task 1) read-holds L, then waits for the mutex (direct reclaim
// evicting inode 259) while it still holds L; a block whose bytenr is 259 is another lock
function delayedStory(): LockEvent[] {
  seq = 0;
  return [
    ev('acquire', 1, 'R', 1, 'read'), //    1
    ev('acquire', 1, 'L', 0, 'read'), //    2
    ev('release', 1, 'R', 1, 'read'), //    3
    ev('acquire', 2, '259', -1, 'write'), // 4 the mutex
    ev('acquire', 2, 'R', 1, 'write'), //   5
    ev('wait', 2, 'L', 0, 'write'), //      6
    ev('release', 2, 'R', 1, 'write'), //   7
    ev('wait', 1, '259', -1, 'write'), //   8 A, holding L, waits for the mutex
    ev('acquire', 3, '259', 0, 'read'), //  9 leaf 259 (a bytenr, not the inode)
    ev('release', 1, 'L', 0, 'read'), //   10
    ev('acquire', 2, 'L', 0, 'write'), //  11
    ev('release', 2, 'L', 0, 'write'), //  12
    ev('release', 2, '259', -1, 'write'), // 13
    ev('acquire', 1, '259', -1, 'write'), // 14
    ev('release', 1, '259', -1, 'write'), // 15
    ev('release', 3, '259', 0, 'read'), //  16
  ];
}

describe('delayed node mutexes: level -1, the inode as bytenr', () => {
  test('kept apart from the tree blocks: no row at level -1, no parent or child, a key of their own', () => {
    const locks = delayedStory();
    const f = lockFrame(locks, 8);
    expect(f.trees.map((t) => [t.tree, t.levels, t.rows.map((r) => r.map((n) => n.bytenr))])).toEqual([[FS, [1, 0], [['R'], ['L', '259']]]]);
    expect(f.mutexes.map((n) => [n.bytenr, n.writer, n.waiters.map((w) => w.task), n.parent, n.current])).toEqual([['259', 2, [1], null, true]]);
    expect(isMutex(f.mutexes[0])).toBe(true);
    // A held leaf L when it waited for the mutex: L is not the mutex's parent (lock coupling is for tree blocks)
    expect(parentsOf(locks)).toEqual(new Map([[blockKey(FS, 'L'), blockKey(FS, 'R')]]));
    expect(blockKey(FS, '259', -1)).not.toBe(blockKey(FS, '259', 0));
    expect(stateOf(locksAt(locks, 9).get(blockKey(FS, '259'))!)).toBe('read');
    expect(locksAt(locks, 9).get(blockKey(FS, '259', -1))!.writer).toBe(2);
    // busy: the blocks in tree order, then the mutexes
    expect(f.busy.map((n) => [n.bytenr, n.level])).toEqual([['L', 0], ['259', -1]]);
    expect(lockFrame(locks, 14).mutexes[0]).toMatchObject({ writer: 1, waiters: [] });
    expect(lockFrame(locks, null).busy).toEqual([]);
    // exact both ways
    const seen = Array.from({ length: 17 }, (_, i) => JSON.stringify(lockFrame(locks, i)));
    for (const i of [14, 4, 8, 16, 0, 8]) expect(JSON.stringify(lockFrame(locks, i))).toBe(seen[i]);
  });

  test('told as the delayed node mutex of an inode, never as a block at level -1', () => {
    const name = (t: number) => 'ABCD'[t - 1];
    const f = lockFrame(delayedStory(), 8);
    expect(f.busy.map((n) => blockSentence(n, name))).toEqual(['leaf L of the fs tree: read-held by A; waiting: B (write)', 'the delayed node mutex of inode 259: held by B; waiting: A']);
    const e = (kind: string, rest: object) => ({ seq: 1, kind, tree: 5n, bytenr: 259n, level: -1, task: 2, mode: 'write', atNs: 10n, ...rest }) as TraceEvent;
    expect(describeEvent(e('lock_wait', { holder: 1 }))).toBe('Task 2 waits for the delayed node mutex of inode 259, held by task 1');
    expect(describeEvent(e('lock_acquire', { waitNs: 500n }))).toBe('Task 2 takes the delayed node mutex of inode 259 after waiting 500 ns');
    expect(describeEvent(e('lock_release', {}))).toBe('Task 2 lets go of the delayed node mutex of inode 259');
    expect(describeEvent(e('lock_acquire', { level: 0, bytenr: 5255168n, waitNs: 0n }))).toBe('Task 2 write-locks leaf 5255168 of the fs tree');
    expect(describeEvent(e('lock_wait', { level: 0, bytenr: 0n, holder: -1, mode: 'read' }))).toBe('Task 2 waits to read-lock the fs tree, held by readers');
  });
});
