// Seed 000's two modes: the script set to each, percentiles, and the
// figures the compare view shows from timelines (who is a creator, who an
// fsyncer, the creators' lock waits).
import { describe, expect, test } from 'vitest';
import { lockContention, percentile, withLogCopy } from './logCopyModes';
import type { Timeline } from './timeline';

describe('log_copy modes', () => {
  test('every set log_copy= line is set in place; without one it goes after mkfs', () => {
    expect(withLogCopy('mkfs\nset log_copy=clone\nthread A\nend\nset log_copy=clone\n', 'prealloc')).toEqual({ text: 'mkfs\nset log_copy=prealloc\nthread A\nend\nset log_copy=prealloc\n', at: null });
    expect(withLogCopy('mkfs size=1G\ncreate /a\n', 'clone')).toEqual({ text: 'mkfs size=1G\nset log_copy=clone\ncreate /a\n', at: 2 });
    expect(withLogCopy('create /a', 'clone')).toEqual({ text: 'set log_copy=clone\ncreate /a\n', at: 1 });
  });

  test('percentiles by nearest rank', () => {
    const v = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 .. 1
    expect([percentile(v, 50), percentile(v, 99), percentile(v, 100)]).toEqual([50, 99, 100]);
    expect([percentile([7], 50), percentile([7], 99), percentile([], 50)]).toEqual([7, 7, 0]);
    expect(percentile([1, 1000], 99)).toBe(1000);
  });

  test("creators and fsyncers from a section's ops; the creators' tree lock waits summed", () => {
    const m = (seq: number, at: number) => ({ seq, at });
    const op = (task: number, op: 'fsync' | 'namespace' | 'write', text: string, s: number, e: number | null) =>
      ({ task, line: 1, op, ino: 0, offset: 0, length: 0, text, start: m(s, s), end: e === null ? null : m(e, e), logged: [] });
    const lane = (task: number, name: string) => ({ task, kind: 'thread' as const, index: task, name });
    const tl = {
      lanes: [lane(1, 'A'), lane(2, 'C'), lane(3, 'S'), { task: 9, kind: 'endio-write' as const, index: 0, name: 'endio-write 0' }],
      ops: [
        op(1, 'namespace', 'create /d/a', 0, 10), op(1, 'fsync', 'fsync /d/a', 10, 1000),
        op(2, 'namespace', 'create /d/c1', 0, 5), op(2, 'namespace', 'create /d/c2', 5, 505), op(2, 'namespace', 'setxattr /d/c2 user.x v', 505, 510),
        op(3, 'namespace', 'setxattr /d/a user.y v', 0, 3), // neither
      ],
      waits: [
        { task: 2, cause: 'tree lock', object: '5', start: m(6, 6), end: m(400, 400) },
        { task: 1, cause: 'tree lock', object: '5', start: m(20, 20), end: m(30, 30) }, // an fsyncer's: not counted
        { task: 1, cause: 'memory allocation', object: '4096', start: m(40, 40), end: m(440, 440) },
        { task: 9, cause: 'memory allocation', object: '4096', start: m(900, 900), end: null }, // open: to the step's end
      ],
      t1: 1000,
    } as unknown as Timeline;
    const f = lockContention([tl]);
    expect([f.fsyncers, f.creators]).toEqual([['A'], ['C']]);
    expect(f.create).toEqual({ n: 2, p50: 5, p99: 500, max: 500 });
    expect(f.fsync).toEqual({ n: 1, p50: 990, p99: 990, max: 990 });
    expect(f.creatorLockWaitNs).toBe(394);
    expect(f.memoryWaitNs).toBe(500);
  });
});
