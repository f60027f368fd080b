import { describe, expect, test } from 'vitest';
import { MODES, pct, seedScript, withMode } from './modes';
import { crashPoints, crashScript, replaySteps } from './replay';
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
  test("each replay action takes the changes after it; changes before the first are dropped", () => {
    const r = (action: string): TraceEvent => ({ seq: 0, kind: 'replay', tree: 5n, pass: 'all', action: action as 'link add', key: [257n, 1, 0n], a: 0n, b: 0n, c: 0n });
    const ins: TraceEvent = { seq: 0, kind: 'item_insert', tree: 5n, bytenr: 1n, slot: 0, key: [257n, 1, 0n], size: 160 };
    const steps = replaySteps([ins, r('inode new'), ins, ins, r('link add'), ins]);
    expect(steps.map((s) => [s.action.action, s.events.length])).toEqual([['inode new', 3], ['link add', 2]]);
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
