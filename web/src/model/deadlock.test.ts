// A deadlock's cycle from its deadlock_edge events (a synthetic trace, the
// fixture: no scenario deadlocks yet): in cycle order, and in words.
import { describe, expect, test } from 'vitest';
import { cycleSentence, deadlockCycle, edgeWhat } from './deadlock';
import { edge, FIXTURE, LOG, name } from './deadlock.fixture';

describe("a deadlock's cycle", () => {
  test('the edges in cycle order, the tasks once each, closed; any order of events gives the same cycle', () => {
    const c = deadlockCycle(FIXTURE)!;
    expect(c.tasks).toEqual([6, 7, 8]);
    expect(c.closed).toBe(true);
    expect(c.edges.map((e) => [e.task, e.holder])).toEqual([[6, 7], [7, 8], [8, 6]]);
    expect(c.edges[0]).toEqual({ task: 6, holder: 7, tree: String(LOG), bytenr: '30408704', level: 0, mode: 'write', atNs: 5_000_000 });
    const shuffled = deadlockCycle([FIXTURE[2], FIXTURE[3], FIXTURE[1]])!;
    expect(shuffled.closed).toBe(true);
    expect(shuffled.edges.map((e) => e.task)).toEqual([7, 8, 6]); // from the first event, round the same cycle
    expect(deadlockCycle(FIXTURE.slice(0, 1))).toBe(null);
  });

  test('waits that do not close: the chain, then the rest, and closed false', () => {
    const c = deadlockCycle([edge(1, 6, 7, 5n, 1n, 0, 'read'), edge(2, 9, 10, 5n, 2n, 1, 'write'), edge(3, 7, 9, 5n, 3n, 0, 'write')])!;
    expect(c.closed).toBe(false);
    expect(c.edges.map((e) => e.task)).toEqual([6, 7, 9]);
    expect(c.tasks).toEqual([6, 7, 9, 10]);
  });

  test('each wait in words: the lock, its mode, block, level and tree, or the mutex', () => {
    const c = deadlockCycle(FIXTURE)!;
    expect(c.edges.map(edgeWhat)).toEqual([
      'a write lock on leaf 30408704 of the log tree',
      'the delayed node mutex of inode 259',
      'a write lock on leaf 30539776 of the fs tree',
    ]);
    expect(edgeWhat({ tree: '5', bytenr: '0', level: 0, mode: 'read' })).toBe('a read lock on the fs tree (one lock for the whole tree)');
    expect(edgeWhat({ tree: '5', bytenr: '5279744', level: 1, mode: 'read' })).toBe('a read lock on node (level 1) 5279744 of the fs tree');
    expect(cycleSentence(c, name)).toBe('A waits for a write lock on leaf 30408704 of the log tree, held by B; B waits for the delayed node mutex of inode 259, held by reclaim; '
      + 'reclaim waits for a write lock on leaf 30539776 of the fs tree, held by A.');
  });
});

