import { describe, expect, test } from 'vitest';
import { crashPointsOf, describeCrashPoint } from './crashPoints';
import { groupSteps } from './steps';
import type { TraceEvent } from './trace';

const LOG = 18446744073709551610n;

describe('crash points inside lines', () => {
  test('every block and superblock write after mkfs, with its line; the final commit\'s past the last line', () => {
    const lines = ['mkfs', 'create /a', 'fsync /a'];
    const ev = (e: Partial<TraceEvent> & { seq: number; kind: string }) => e as TraceEvent;
    const events: TraceEvent[] = [
      ev({ seq: 0, kind: 'block_write', tree: 1n, bytenr: 1n, physical: 1n, level: 0, generation: 1n }), // mkfs's: no crash point
      ev({ seq: 1, kind: 'op', line: 2 }),
      ev({ seq: 2, kind: 'op', line: 3 }),
      ev({ seq: 3, kind: 'block_write', tree: LOG, bytenr: 40960n, physical: 40960n, level: 0, generation: 3n }),
      ev({ seq: 4, kind: 'super_write', physical: 65536n, generation: 2n, mirror: 0 }),
      ev({ seq: 5, kind: 'commit', generation: 3n, rootBytenr: 1n }),
      ev({ seq: 6, kind: 'block_write', tree: 5n, bytenr: 8192n, physical: 8192n, level: 1, generation: 3n }),
    ];
    const steps = groupSteps(events, lines, 5);
    const points = crashPointsOf(steps, 3);
    expect(points.map((p) => [p.index, p.seq, p.line, p.final, p.kind])).toEqual([
      [0, 3, 3, false, 'block_write'],
      [1, 4, 3, false, 'super_write'],
      [2, 6, 4, true, 'block_write'],
    ]);
    expect(describeCrashPoint(points[0])).toBe('after writing a log tree leaf 40960 (generation 3)');
    expect(describeCrashPoint(points[1])).toBe('after writing superblock copy 0 (generation 2: the one a mount reads)');
    expect(describeCrashPoint(points[2])).toBe('after writing a fs tree node (level 1) 8192 (generation 3)');
  });
});
