import { describe, expect, test } from 'vitest';
import { ghostsAt } from './ghosts';
import { momentLabels, momentsOf } from './moments';
import { groupSteps } from './steps';
import type { TraceEvent } from './trace';
import type { TreeDump } from './dump';

let seq = 0;
const ev = (e: Record<string, unknown>) => ({ seq: seq++, tree: 5n, ...e }) as unknown as TraceEvent;
const search = (bytenr: bigint, level: number, slot: number) => ev({ kind: 'search', bytenr, level, slot, key: [257n, 96, 3n], found: false });
const events: TraceEvent[] = [
  ev({ kind: 'commit', generation: 1n, rootBytenr: 1n }),
  ev({ kind: 'op', line: 3 }),
  search(100n, 0, 0), // a lookup that changes nothing: no moment
  search(100n, 0, 4), // the search an insert follows
  ev({ kind: 'cow', from: 100n, to: 200n, level: 0, generation: 2n, fromGeneration: 1n }),
  ev({ kind: 'item_insert', bytenr: 200n, slot: 4, key: [257n, 96, 3n], size: 32 }),
  ev({ kind: 'item_insert', tree: 2n, bytenr: 900n, slot: 0, key: [1n, 169, 0n], size: 33 }), // another tree
  ev({ kind: 'op', line: 4 }),
  search(500n, 1, 0),
  search(200n, 0, 9),
  ev({ kind: 'split', left: 200n, right: 300n, level: 0, slot: 5 }),
  ev({ kind: 'op', line: 5 }),
  ev({ kind: 'commit', generation: 2n, rootBytenr: 2n }),
  ev({ kind: 'cow', from: 50n, to: 60n, level: 0, generation: 3n, fromGeneration: 2n }), // the final commit's
];
const steps = groupSteps(events, ['', 'mkfs', 'create /a', 'create /b', 'commit']);

describe('event-level stepping', () => {
  test("a step's moments in one tree: the search an insert follows, the COW, the insert", () => {
    const m = momentsOf(steps[1].events, 5n);
    expect(m.map((x) => x.kind)).toEqual(['search', 'cow', 'item_insert']);
    expect(m[0].seq).toBe(3);
    expect(m[0].item).toEqual({ bytenr: 100n, slot: 4 });
    expect(m[0].marks.get('100')).toBe('path');
    expect(m[0].sentence).toBe('Search the fs tree for (257 DIR_INDEX 3): leaf 100, slot 4 (not found: insert here)');
    expect(m[1].marks.get('200')).toBe('cow');
    expect(m[2].item).toEqual({ bytenr: 200n, slot: 4 });
    expect(momentsOf(steps[1].events, 2n).map((x) => x.kind)).toEqual(['item_insert']);
  });

  test('a search path from the root, and a split: both halves marked, the parent gains "+1 pointer"', () => {
    const m = momentsOf(steps[2].events, 5n);
    expect(m.map((x) => x.kind)).toEqual(['search', 'split']);
    expect(m[0].path).toEqual([500n, 200n]);
    expect(m[0].sentence).toContain('1 node down to leaf 200');
    const dump = { trees: [{ name: 'fs', blocks: [
      { bytenr: 500n, level: 1, entries: [{ kind: 'ptr', blockptr: 200n }, { kind: 'ptr', blockptr: 300n }] },
      { bytenr: 200n, level: 0, entries: [] }, { bytenr: 300n, level: 0, entries: [] }] }] } as unknown as TreeDump;
    const { marks, labels } = momentLabels(m[1], dump, 'fs');
    expect([marks.get('200'), marks.get('300'), marks.get('500')]).toEqual(['split', 'new', 'touched']);
    expect(labels.get('500')).toBe('+1 pointer');
  });

  test("the final commit's events are not moments", () => {
    expect(momentsOf(steps[3].events, 5n, 13)).toEqual([]);
    expect(momentsOf(steps[3].events, 5n).map((x) => x.kind)).toEqual(['cow']);
  });

  test('ghosts: COW originals since the last commit, up to the moment, dropped by the commit', () => {
    expect(ghostsAt(steps, 1, 5n, 3)).toEqual([]); // before the COW
    expect(ghostsAt(steps, 1, 5n, 4)).toEqual([{ bytenr: 100n, level: 0, generation: 1n, copy: 200n }]);
    expect(ghostsAt(steps, 2, 5n)).toEqual([{ bytenr: 100n, level: 0, generation: 1n, copy: 200n }]); // still, a step later
    expect(ghostsAt(steps, 2, 2n)).toEqual([]); // another tree
    expect(ghostsAt(steps, 3, 5n, 12)).toEqual([]); // the commit drops them
  });
});
