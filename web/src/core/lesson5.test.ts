// Lesson 5's scenario through the WASM core and the worker's step grouping:
// each untar one step; its space story (tickets, the metadata worker's flush
// states, the delalloc flushes with the inodes each wrote, matching what the
// core counted); the same tree unpacked with whole inodes waits longer and
// flushes more often; and the figures the lesson's text quotes are the
// model's (the compare view's runs).
import { beforeAll, describe, expect, test } from 'vitest';
import type { RunSteps } from './runs';
import { loadCore, RUN, stepsOf } from './testCore';
import type { Core } from './wasm';
import { LESSONS } from '../lessons';
import { nextMoment, spaceFrame, type ShrinkPass, type SpaceStep } from '../model/space';
import { pagesPerPass, reclaimFigures, SHRINK_MODES, slowdown, withShrink, type ReclaimFigures } from '../model/shrinkModes';

let core: Core;
let runs: RunSteps;
const lesson = LESSONS.find((l) => l.id === '05-space-reclaim')!;

beforeAll(async () => {
  core = await loadCore();
  runs = stepsOf(core, lesson.scenario);
});

const untars = () => runs.steps.filter((s) => s.command.startsWith('untar'));
const passesOf = (sp: SpaceStep): ShrinkPass[] => sp.moments.flatMap((m) => (m.kind === 'shrink' ? [m.pass] : []));

function figures(mode: (typeof SHRINK_MODES)[number], device?: string): ReclaimFigures {
  const h = core.run(withShrink(lesson.scenario, mode, device), { ...RUN, trace: false });
  try {
    return reclaimFigures(core.metrics(h));
  } finally {
    core.close(h);
  }
}

describe("lesson 5's scenario: the same untar with a page budget, then with whole inodes", () => {
  test('each untar is one step, tar its one thread, with tickets, the metadata worker and delalloc flushes', () => {
    expect(untars().map((s) => s.line)).toEqual([12, 17]);
    for (const s of untars()) {
      const sp = runs.space(s.index);
      expect(Object.values(sp.names)).toContain('tar');
      expect(Object.values(sp.names)).toContain('async reclaim metadata');
      const f = spaceFrame(sp, null);
      expect(f.totals.tickets).toBeGreaterThan(50);
      expect(f.totals.failed).toBe(0);
      expect(f.totals.passes).toBeGreaterThan(2);
      expect(f.ladders.map((l) => l.space)).toEqual(['metadata']);
      expect(f.gauges.find((g) => g.space === 'metadata')!.total).toBeGreaterThan(0);
    }
  });

  test("each delalloc flush's own writes are the inodes and pages the core counted", () => {
    for (const s of untars()) {
      const passes = passesOf(runs.space(s.index));
      for (const [i, p] of passes.entries()) {
        expect(p.files.length).toBe(p.inodes);
        const written = p.files.reduce((n, f) => n + f.written, 0);
        expect(Math.abs(written - p.pages)).toBeLessThanOrEqual(p.files.length); // the core counts a file's bytes, the fold its pages
        // the state that ran it (the flush_space after its passes); the passes of a state the step's end cut short
        // have none yet: only at the end
        if (p.state === null) expect(passes.slice(i).every((q) => q.state === null)).toBe(true);
        else expect(p.state).toBe('FLUSH_DELALLOC');
        expect(p.before.pages - p.left.pages).toBe(written);
      }
    }
  });

  test('pages: a pass writes its budget (all the delalloc, or 320 pages for a 1.25 MiB ticket and the rest of a range); whole inodes: 10 a pass, most left dirty, three passes a FLUSH_DELALLOC', () => {
    const [pages, inodes] = untars().map((s) => passesOf(runs.space(s.index)));
    expect(pages.every((p) => p.mode === 'pages' && p.budget !== null && p.pages >= p.budget && (p.left.pages === 0 || p.budget === 320))).toBe(true);
    expect(pages.filter((p) => p.left.pages === 0).length).toBeGreaterThan(pages.length / 2);
    expect(inodes.every((p) => p.mode === 'inodes' && p.budget === 10 && p.inodes === 10 && p.left.inodes > 0)).toBe(true);
    expect(inodes.length).toBeGreaterThanOrEqual(2 * pages.length);
    const mean = (ps: ShrinkPass[]) => ps.reduce((n, p) => n + p.pages, 0) / ps.length;
    expect(mean(pages)).toBeGreaterThan(2 * mean(inodes));
  });

  test('the first ticket: tar queued, the ladder unlit; the first delalloc flush: FLUSH_DELALLOC lit and running', () => {
    const sp = runs.space(untars()[0].index);
    const first = nextMoment(sp, -1, ['ticket']);
    const at = spaceFrame(sp, first);
    expect(at.queues).toEqual([{ space: 'metadata', tickets: [{ task: expect.any(Number), bytes: 1.25 * 2 ** 20, since: at.at, waited: 0 }] }]);
    expect(sp.names[at.queues[0].tickets[0].task]).toBe('tar');
    expect(at.ladders[0].rungs.filter((r) => r.lit)).toEqual([]);
    const flush = spaceFrame(sp, nextMoment(sp, first, ['shrink']));
    const rung = flush.ladders[0].rungs.find((r) => r.state === 'FLUSH_DELALLOC')!;
    expect([rung.lit, rung.current, rung.running]).toEqual([true, true, true]);
    expect(flush.ladders[0].rungs.filter((r) => r.lit).map((r) => r.state)).toContain('FLUSH_DELAYED_ITEMS_NR');
    expect(flush.pass?.fresh).toBe(true);
  });

  test('with whole inodes the untar takes longer and tar waits longer on its tickets', () => {
    const [pages, inodes] = untars().map((s) => {
      const sp = runs.space(s.index);
      return { ns: sp.t1! - sp.t0!, totals: spaceFrame(sp, null).totals };
    });
    expect(inodes.ns).toBeGreaterThan(1.2 * pages.ns);
    expect(inodes.totals.waitNs).toBeGreaterThan(1.5 * pages.totals.waitNs);
    expect(inodes.totals.passes).toBeGreaterThan(2 * pages.totals.passes);
  });
});

describe("before and after: the compare view's runs, and the figures the lesson quotes", () => {
  const text = lesson.text.replace(/\s+/g, ' ');
  const near = (model: number, quoted: number, within: number) => expect(Math.abs(model - quoted), `quoted ${quoted}, the model ${model}`).toBeLessThanOrEqual(within);

  test('on the SSD: slower with whole inodes, more flushes of fewer pages, longer ticket waits; as the text says', () => {
    const [inodes, pages] = SHRINK_MODES.map((m) => figures(m));
    expect(inodes.files).toBe(1000);
    const ratio = slowdown(inodes.untarNs, pages.untarNs);
    expect(ratio).toBeGreaterThan(1.2);
    expect(inodes.ticketWaitNs).toBeGreaterThan(pages.ticketWaitNs);
    expect(inodes.passes).toBeGreaterThan(pages.passes);
    expect(inodes.budgetP50).toBe(10);
    const m = /take ([\d.]+)× as long with whole inodes as with pages \(about ([\d.]+) s against ([\d.]+) s of simulated time\), with (\d+) delalloc flushes of about (\d+) pages against (\d+) of about (\d+)/.exec(text);
    expect(m, 'the text quotes the SSD figures').not.toBeNull();
    const [, r, tb, ta, nb, pb, na, pa] = m!.map(Number);
    near(ratio, r, 0.15);
    near(inodes.untarNs / 1e9, tb, 0.06);
    near(pages.untarNs / 1e9, ta, 0.06);
    near(inodes.passes, nb, nb / 5);
    near(pagesPerPass(inodes), pb, pb / 5);
    near(pages.passes, na, na / 5);
    near(pagesPerPass(pages), pa, pa / 5);
    const w = /tar waiting about (\d+) times as long on its tickets/.exec(text);
    expect(w, 'the text quotes the ticket waits').not.toBeNull();
    near(inodes.ticketWaitNs / pages.ticketWaitNs, Number(w![1]), 2);
  });

  test('on NVMe and on a disk: as the text says', () => {
    const m = /the model finds ([\d.]+)× on its NVMe profile too, and ([\d.]+)× on a disk/.exec(text);
    expect(m, 'the text quotes the NVMe and disk figures').not.toBeNull();
    for (const [device, quoted] of [['nvme', Number(m![1])], ['hdd', Number(m![2])]] as const) {
      const [inodes, pages] = SHRINK_MODES.map((mode) => figures(mode, device));
      near(slowdown(inodes.untarNs, pages.untarNs), quoted, 0.15);
    }
  });
});
