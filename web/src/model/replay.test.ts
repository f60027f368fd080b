import { describe, expect, test } from 'vitest';
import { MODES, pct, seedScript, withMode } from './modes';
import type { Block } from './dump';
import { crashPoints, crashScript, itemChanges, keyCompare, leafHolding, passStarts, replaySteps } from './replay';
import type { TraceEvent } from './trace';

describe('replay steps and crash points', () => {
  const lines = ['mkfs', 'create /a', '# why', 'fsync /a', '', 'write /a 0 10', 'fsync /a', 'crash'];
  test('a crash is worth showing from the first fsync on, past blanks, comments and crash lines', () => {
    expect(crashPoints(lines)).toEqual([4, 6, 7]);
    expect(crashPoints(['mkfs', 'create /a'])).toEqual([]);
  });
  test('a crash after line N keeps lines 1..N and crashes', () => {
    expect(crashScript(lines, 4)).toBe('mkfs\ncreate /a\n# why\nfsync /a\ncrash\n');
  });
  test('each replay action takes the changes it made (said once done): those since the action before; the rest go with the last', () => {
    const r = (action: string): TraceEvent => ({ seq: 0, kind: 'replay', tree: 5n, pass: 'all', action: action as 'link add', key: [257n, 1, 0n], a: 0n, b: 0n, c: 0n });
    const ins: TraceEvent = { seq: 0, kind: 'item_insert', tree: 5n, bytenr: 1n, slot: 0, key: [257n, 1, 0n], size: 160 };
    const steps = replaySteps([ins, r('inode new'), ins, ins, r('link add'), ins]);
    expect(steps.map((s) => [s.action.action, s.events.length])).toEqual([['inode new', 2], ['link add', 4]]);
    expect(steps[1].events.map((e) => e.kind)).toEqual(['item_insert', 'item_insert', 'replay', 'item_insert']);
  });
});

describe('a replay action at item level', () => {
  const r = (action: string, pass = 'all'): TraceEvent => ({ seq: 0, kind: 'replay', tree: 5n, pass: pass as 'all', action: action as 'link add', key: [257n, 1, 0n], a: 0n, b: 0n, c: 0n });
  const ins = (k: [bigint, number, bigint], tree = 5n): TraceEvent => ({ seq: 0, kind: 'item_insert', tree, bytenr: 1n, slot: 0, key: k, size: 1 });
  const del = (k: [bigint, number, bigint]): TraceEvent => ({ seq: 0, kind: 'item_delete', tree: 5n, bytenr: 1n, slot: 0, key: k });
  test('added, changed (deleted and put back, or an inode overwritten) and removed items of one tree', () => {
    const [step] = replaySteps([ins([258n, 1, 0n]), del([257n, 96, 3n]), del([257n, 84, 9n]), ins([257n, 84, 9n]), ins([9n, 1, 0n], 7n), r('link add')]);
    const keys = (ks: unknown[]) => ks.map((k) => String(k));
    const c = itemChanges(step, 5n);
    expect([keys(c.added), keys(c.changed), keys(c.removed)]).toEqual([['258,1,0'], ['257,84,9'], ['257,96,3']]);
    const [ow] = replaySteps([ins([257n, 1, 0n]), r('inode overwrite')]);
    expect(itemChanges(ow, 5n).changed.map(String)).toEqual(['257,1,0']);
  });
  test('passes: where each starts and how many actions; the leaf holding a key, folded or not', () => {
    const steps = replaySteps([r('pin block', 'pin'), r('pin block', 'pin'), r('inode new', 'inodes'), r('link add', 'all')]);
    expect(passStarts(steps)).toEqual([{ pass: 'pin', first: 1, count: 2 }, { pass: 'inodes', first: 3, count: 1 }, { pass: 'all', first: 4, count: 1 }]);
    const e = (o: bigint, t: number, off: bigint) => ({ key: { objectid: o, type: t, offset: off } });
    const blocks = [
      { bytenr: 1n, level: 1, entries: [e(0n, 0, 0n)] },
      { bytenr: 2n, level: 0, entries: [e(256n, 1, 0n), e(257n, 84, 5n)] }, // its middle folded
      { bytenr: 3n, level: 0, entries: [e(258n, 1, 0n), e(300n, 96, 2n)] },
    ] as unknown as Block[];
    expect(leafHolding(blocks, [257n, 1, 0n])?.bytenr).toBe(2n);
    expect(leafHolding(blocks, [299n, 96, 9n])?.bytenr).toBe(3n);
    expect(leafHolding(blocks, [400n, 1, 0n])).toBeUndefined();
    expect(keyCompare([1n, 2, 3n], [1n, 2, 3n])).toBe(0);
    expect(keyCompare([1n, 2, 3n], [1n, 3, 0n])).toBeLessThan(0);
  });
});

describe('directory logging modes', () => {
  test('a set line is replaced where it is, else added after mkfs (and its line said)', () => {
    expect(withMode('mkfs\nset dir_logging=legacy\nfsync /\n', 'index-only')).toEqual({ text: 'mkfs\nset dir_logging=index-only\nfsync /\n', at: null });
    expect(withMode('mkfs\nfsync /\n', 'legacy')).toEqual({ text: 'mkfs\nset dir_logging=legacy\nfsync /\n', at: 2 });
    expect(withMode('fsync /', 'legacy')).toEqual({ text: 'set dir_logging=legacy\nfsync /\n', at: 1 });
    expect(MODES).toEqual(['legacy', 'index-only']);
  });
  test("the seed's experiment: N files, every (N/D)-th deleted", () => {
    const s = seedScript(1000, 100).split('\n');
    expect(s.slice(0, 6)).toEqual(['mkfs size=4G', 'mkdir /testdir', 'commit', 'create /testdir/file_{1..1000}', 'fsync /testdir', 'commit']);
    expect(s.filter((l) => l.startsWith('unlink')).length).toBe(100);
    expect(s.at(-2)).toBe('fsync /testdir');
    expect(pct(7, 9)).toBeCloseTo(-22.22, 2);
  });
});
