// Lesson 3's scenario through the WASM core and the worker's step grouping:
// its timed sections as timelines (lanes, what each fsync waited for, the
// ordered extents logged in flight, the one a crash leaves in flight), the
// player's timeline moments, the cost table, and the metrics of both
// fsync_wait modes.
import { beforeAll, describe, expect, test } from 'vitest';
import type { RunSteps } from './runs';
import { loadCore, RUN, stepsOf as stepsOfScript } from './testCore';
import type { Core } from './wasm';
import { LESSONS } from '../lessons';
import { fioScript, withFsyncWait } from '../model/fsyncModes';
import { frameAt } from '../model/timelineFrame';

let core: Core;

beforeAll(async () => {
  core = await loadCore();
});

const lesson = LESSONS.find((l) => l.id === '03-ordered-extents-fast-fsync')!;

const stepsOf = (script: string): RunSteps => stepsOfScript(core, script);

describe("lesson 3's scenario as timelines", () => {
  test('each section a step; what each fsync waited for follows the mode; the crash leaves a logged extent in flight', () => {
    const lines = lesson.scenario.split('\n');
    const runs = stepsOf(lesson.scenario);
    const sections = runs.steps.filter((s) => /^(thread |A:)/.test(s.command));
    expect(sections.map((s) => lines[s.line - 1])).toEqual(['thread A', 'thread A', 'A: write /a 128K 64K']);
    const [after, before, crash] = sections.map((s) => runs.timeline(s.index));
    for (const tl of [after, before, crash]) {
      expect(tl.timed).toBe(true);
      expect(tl.t1).toBeGreaterThan(tl.t0);
      expect(tl.lanes.slice(0, 1).map((l) => l.name)).toEqual(['A']);
      expect(tl.lanes.some((l) => l.kind === 'endio-write')).toBe(true);
      expect(tl.bios.some((b) => b.op === 'flush')).toBe(true);
    }
    expect(after.lanes.slice(0, 2).map((l) => l.name)).toEqual(['A', 'B']);
    const fsyncs = (tl: typeof after) => tl.ops.filter((o) => o.op === 'fsync');
    // since 5.10: writeback only, the extents logged in flight with their checksums
    expect(fsyncs(after).map((o) => [o.text, o.waited?.what, o.logged.length]).sort()).toEqual([['fsync /a', 'I/O done', 1], ['fsync /b', 'I/O done', 1]]);
    // before: the ordered extents complete first, so nothing is in flight to log
    expect(fsyncs(before).map((o) => [o.text, o.waited?.what, o.logged.length]).sort()).toEqual([['fsync /a', 'ordered extent complete', 0], ['fsync /b', 'ordered extent complete', 0]]);
    // the power cut: A's fsync returned, its extent logged and still in flight
    const [f] = fsyncs(crash);
    expect(f.logged).toHaveLength(1);
    const end = frameAt(crash, null);
    expect(end.ordered.map((o) => [o.oe.id, o.phase, o.logged])).toEqual([[f.logged[0], 'io-done', true]]);
    expect(end.now).toBe(crash.t1); // the section ends as A returns: the completion running then is cut
    expect(end.cpu.filter((c) => c.open).map((c) => c.span.work)).toEqual(['finish: csum tree']);
    expect(end.files.find((x) => x.info.path === '/a')!.pages.ranges).toEqual([{ start: 131072, end: 196608, state: 'ordered' }]);
    expect(crash.files.map((x) => x.path)).toEqual(['/a']); // /b's pages are clean: no strip
  });

  test("the player's timeline moments: the view at each is the timeline's, cut there", () => {
    const runs = stepsOf(lesson.scenario);
    const i = runs.steps.findIndex((s) => s.command === 'thread A');
    const tl = runs.timeline(i);
    expect(tl.moments.length).toBeGreaterThan(20);
    const v = runs.view(i, 5n, 3, 'timeline');
    expect(v.moments).toBe(tl.moments.length);
    expect(v.moment).toMatchObject({ seq: tl.moments[3].seq, sentence: tl.moments[3].sentence });
    expect(runs.view(i, 5n, null, 'tree').moments).not.toBe(tl.moments.length); // the tree's moments are its own
    expect(runs.timeline(0).moments).toEqual([]); // mkfs: the core does not stop there
    expect(tl.moments.some((m) => m.kind === 'task_wait' && m.sentence.startsWith('A waits for writeback'))).toBe(true);
  });

  test('both fsync_wait modes, the same scenario: the same lines, fsyncs slower when waiting for ordered extents', () => {
    const m = (mode: 'ordered' | 'writeback') => {
      const { text } = withFsyncWait(lesson.scenario, mode);
      expect(text.split('\n').length).toBe(lesson.scenario.split('\n').length);
      const h = core.run(text, { ...RUN, trace: false });
      try {
        return core.metrics(h);
      } finally {
        core.close(h);
      }
    };
    const before = m('ordered'), after = m('writeback');
    // (the scenario ends in a crash: the metrics' fsyncWait and ordered counts are the remounted filesystem's, not the run's)
    expect(before.crashed).toBe(true);
    expect(after.timed!.fsyncsLoggingInFlight).toBeGreaterThan(0);
    expect(before.timed!.fsyncsLoggingInFlight).toBe(0);
    expect(after.timed!.ops.fsync!.meanNs).toBeLessThan(before.timed!.ops.fsync!.meanNs);
  });
});

describe('the time model', () => {
  test('the cost table: every row with its source, the devices', () => {
    const t = core.costs();
    expect(t.costs.length).toBeGreaterThan(10);
    for (const c of t.costs) {
      expect(c.ns).toBeGreaterThan(0);
      expect(c.source.length).toBeGreaterThan(0);
    }
    expect(t.costs.map((c) => c.key)).toEqual(expect.arrayContaining(['finish_fs', 'finish_csum', 'finish_rest', 'log_csum_lookup']));
    expect(t.devices.map((d) => d.name)).toEqual(['nvme', 'ssd', 'hdd', 'loop']);
  });

  test("fio at small sizes: ordered extents logged in flight only since 5.10's change", () => {
    const run = (mode: 'ordered' | 'writeback') => {
      const h = core.run(fioScript({ jobs: 4, rw: 'write', bs: '64K', fsync: 1 }, mode, 4 << 20), { ...RUN, trace: false });
      try {
        return core.metrics(h);
      } finally {
        core.close(h);
      }
    };
    const before = run('ordered'), after = run('writeback');
    expect(after.ordered!.added).toBe(64);
    expect(after.ordered!.loggedInFlight).toBeGreaterThan(0);
    expect(before.ordered!.loggedInFlight).toBe(0);
    expect(after.timed!.throughputMiBs).toBeGreaterThan(0);
  });
});
