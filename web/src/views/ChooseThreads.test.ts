// A thread's row in choose mode, in words: what it is inside and waits for,
// the locks it holds; a delayed node mutex told as one, never as a tree
// block at level -1.
import { describe, expect, test } from 'vitest';
import type { ThreadNow } from '../model/turns';
import { nowText } from './ChooseThreads';

const leaf = { tree: '5', bytenr: '5255168', level: 0 };
const mutex = { tree: '5', bytenr: '259', level: -1 };
const thread = (t: Partial<ThreadNow>): ThreadNow =>
  ({ name: 'A', started: 1, op: { line: 4, text: 'fsync /d/a0', sinceNs: 0, returnsNs: 5000 }, wait: null, holds: [], done: false, ...t });

describe("a thread's row", () => {
  test('waiting for a tree lock, holding a leaf and a delayed node mutex', () => {
    const t = thread({
      wait: { cause: 'tree lock', object: '5', sinceNs: 1000, lock: { ...leaf, mode: 'write', holders: ['B'] } },
      holds: [{ ...mutex, mode: 'write' }, { tree: '5', bytenr: '0', level: 0, mode: 'read' }],
    });
    expect(nowText(t, 3000)).toEqual({
      doing: 'inside fsync /d/a0, waiting to write-lock leaf 5255168 of the fs tree, held by B (for 2.00 µs so far)',
      then: 'holds the delayed node mutex of inode 259, a read lock on the fs tree; it returns 2.00 µs later',
    });
  });

  test('waiting for a delayed node mutex, holding a leaf for read', () => {
    const t = thread({
      wait: { cause: 'delayed node mutex', object: '259', sinceNs: 1000, lock: { ...mutex, mode: 'write', holders: ['delayed-meta'] } },
      holds: [{ ...leaf, mode: 'read' }],
    });
    expect(nowText(t, 3000).doing).toBe('inside fsync /d/a0, waiting for the delayed node mutex of inode 259, held by delayed-meta (for 2.00 µs so far)');
    expect(nowText(t, 3000).then).toMatch(/^holds a read lock on leaf 5255168 of the fs tree;/);
  });
});
