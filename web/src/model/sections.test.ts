// A timed section as the script writes it (thread names, its last line, fio
// jobs), the scripts the before/after view runs (one fsync_wait mode
// throughout, the seed's fio jobs at a small size), and "Next wait" over
// steps.
import { describe, expect, test } from 'vitest';
import { change, fioScript, parseSize, withFsyncWait } from './fsyncModes';
import { commandPath, sectionAt, sectionEnd } from './sections';
import { scriptPrefix, type StepInfo } from './steps';
import type { TimelineMoment } from './timeline';
import { findNextWait } from './timelineNav';

const SCRIPT = `mkfs size=256M
create /a
thread A
# a comment inside the section
write /a 0 64K
end
B: write /b 0 8K
A: fsync /a
commit
fio jobs=3 size=128K bs=64K fsync=1 rw=write dir=/d
`.split('\n');

describe('sections', () => {
  test('thread names in the order they first appear, the last line, fio jobs and their files', () => {
    expect(sectionAt(SCRIPT, 3)).toEqual({ names: ['A', 'B'] });
    expect(sectionEnd(SCRIPT, 3)).toBe(8);
    expect(sectionEnd(SCRIPT, 2)).toBe(2); // a plain command is its own section
    expect(sectionAt(SCRIPT, 10)).toEqual({ names: ['job0', 'job1', 'job2'], fio: { jobs: 3, dir: '/d' } });
    expect([commandPath('B: write /b 0 8K'), commandPath('fsync /a # why'), commandPath('commit')]).toEqual(['/b', '/a', null]);
  });

  test("a step's script prefix holds its whole section", () => {
    const step = (index: number, line: number): StepInfo => ({ index, line, command: SCRIPT[line - 1], eventCount: 0, kinds: new Set(), sentence: '' });
    const steps = [step(0, 0), step(1, 2), step(2, 3), step(3, 9)];
    expect(scriptPrefix(SCRIPT, steps, 2).trim().split('\n').pop()).toBe('A: fsync /a');
    expect(scriptPrefix(SCRIPT, steps, 1).trim().split('\n').pop()).toBe('create /a');
  });
});

describe('the before/after scripts', () => {
  test('one fsync_wait mode throughout: set lines replaced in place, else one after mkfs', () => {
    expect(withFsyncWait('mkfs\nset fsync_wait=writeback\nA: fsync /a\nset fsync_wait=ordered\n', 'ordered'))
      .toEqual({ text: 'mkfs\nset fsync_wait=ordered\nA: fsync /a\nset fsync_wait=ordered\n', at: null });
    expect(withFsyncWait('mkfs size=64M\ncreate /a\n', 'writeback')).toEqual({ text: 'mkfs size=64M\nset fsync_wait=writeback\ncreate /a\n', at: 2 });
  });

  test("the seed's fio job at a small size, on its NVMe profile", () => {
    expect(parseSize('64K')).toBe(65536);
    expect(fioScript({ jobs: 64, rw: 'write', bs: '64K', fsync: 1 }, 'ordered', 16 << 20))
      .toBe('mkfs size=1G\nset device=nvme\nset fsync_wait=ordered\nset space_rules=5.10\nfio jobs=64 size=256K bs=64K fsync=1 rw=write\n');
    // never less than a block a job
    expect(fioScript({ jobs: 4, rw: 'randwrite', bs: '4K', fsync: 16 }, 'writeback', 4096)).toContain('fio jobs=4 size=4K bs=4K fsync=16 rw=randwrite');
    expect(change(36.6, 40.2).toFixed(1)).toBe('9.8');
  });
});

describe('Next wait', () => {
  const info = (index: number, waits: boolean): StepInfo => ({ index, line: index, command: '', eventCount: 0, kinds: new Set(waits ? ['task_wait'] : []), sentence: '' });
  const m = (kind: TimelineMoment['kind']): TimelineMoment => ({ seq: 0, at: 0, kind, sentence: '' });
  const moments: Record<number, TimelineMoment[]> = {
    1: [m('task_op'), m('task_wait'), m('task_wake'), m('task_wait')],
    2: [m('task_cpu')], // only idle waits: none drawn
    3: [m('task_wait')],
  };
  const steps = [info(0, false), info(1, true), info(2, true), info(3, true)];
  const of = async (i: number) => ({ moments: moments[i] ?? [] });

  test("from a step's end its first wait; then each in turn, over steps with none", async () => {
    expect(await findNextWait(steps, 1, null, of)).toEqual({ step: 1, moment: 1 });
    expect(await findNextWait(steps, 1, 1, of)).toEqual({ step: 1, moment: 3 });
    expect(await findNextWait(steps, 1, 3, of)).toEqual({ step: 3, moment: 0 });
    expect(await findNextWait(steps, 0, null, of)).toEqual({ step: 1, moment: 1 });
    expect(await findNextWait(steps, 3, 0, of)).toBeNull();
  });
});
