import { describe, expect, test } from 'vitest';
import type { TreeDump } from './dump';
import { initLesson, lessonReduce, moveByEvent, moveTo, stepIndex, type LessonAction, type LessonState } from './lessonStore';
import type { StepInfo } from './steps';

const step = (index: number, line: number): StepInfo => ({ index, line, command: `line ${line}`, eventCount: 0, kinds: new Set(), sentence: '' });
const steps = [step(0, 0), step(1, 1), step(2, 2), step(3, 4), step(4, 5)];
const dump = (tag: string) => ({ trees: [], tag }) as unknown as TreeDump;
const reduce = (s: LessonState, ...actions: LessonAction[]) => actions.reduce(lessonReduce, s);
const ran = () => reduce(initLesson({ draft: 'x', ran: 'x', step: 0 }), { type: 'ran', script: 'x', steps });

describe('the lesson store', () => {
  test('the step on show is clamped to the steps there are; the URL step waits for the run', () => {
    const s = initLesson({ draft: 'a', ran: 'a', step: 9 });
    expect(stepIndex(s)).toBe(0);
    expect(stepIndex(reduce(s, { type: 'ran', script: 'a', steps }))).toBe(4);
  });

  test('playing stops at the last step, and cannot start there', () => {
    let s = reduce(ran(), { type: 'play', playing: true });
    expect(s.playing).toBe(true);
    s = reduce(s, { type: 'seek', step: 3 });
    expect(s.playing).toBe(true);
    s = reduce(s, { type: 'seek', step: 4 });
    expect(s.playing).toBe(false);
    expect(reduce(s, { type: 'play', playing: true }).playing).toBe(false);
  });

  test('a forward move past a question asks it first, once answered it moves on', () => {
    const questions = [{ beforeLine: 4 }, { beforeLine: 2 }];
    const s = ran();
    // from 0 to 4 passes line 2 (question 1) and line 4 (question 0): the first in the lesson's order is asked
    const ask = moveTo(s, questions, true, 4);
    expect(ask).toEqual({ type: 'ask', question: 0, to: 3 });
    let t = reduce(s, ask, { type: 'answer', question: 0, choice: 1 }, { type: 'answer', question: 0, choice: 2 });
    expect(t.answers).toEqual({ 0: 1 }); // the first answer stands
    t = reduce(t, { type: 'asked' });
    expect([t.step, t.asking]).toEqual([3, null]);
    // back, then forward again over line 4: answered, so no question; line 2 is behind
    expect(moveTo(reduce(t, { type: 'seek', step: 2 }), questions, true, 4)).toEqual({ type: 'seek', step: 4 });
    // a backward move never asks; a changed scenario never asks
    expect(moveTo(t, questions, true, 1)).toEqual({ type: 'seek', step: 1 });
    expect(moveTo(s, questions, false, 4)).toEqual({ type: 'seek', step: 4 });
  });

  test('asking pauses the player', () => {
    const s = reduce(ran(), { type: 'play', playing: true }, { type: 'ask', question: 0, to: 3 });
    expect(s.playing).toBe(false);
  });

  test('a failed run drops the steps and says why; the next run clears the error', () => {
    let s = reduce(ran(), { type: 'runFailed', message: 'x:2: bad' });
    expect([s.steps.length, s.error]).toEqual([0, 'x:2: bad']);
    s = reduce(s, { type: 'running' });
    expect(s.error).toBe(null);
  });

  test('the tree on show stays through a new run until its dump arrives', () => {
    let s = reduce(ran(), { type: 'dump', step: 2, dump: dump('old') });
    s = reduce(s, { type: 'ran', script: 'y', steps });
    expect([s.dumpStep, (s.dump as unknown as { tag: string }).tag]).toEqual([2, 'old']);
  });

  test('replay: a run sets the state before replay; steps are clamped; a new script starts over, the same one keeps it', () => {
    let s = reduce(ran(), { type: 'crashAt', at: 3 });
    const rsteps = [{ action: {}, events: [] }, { action: {}, events: [] }] as never;
    s = reduce(s, { type: 'replayRun', at: 3, before: dump('b'), after: dump('a'), steps: rsteps });
    expect([s.replay.at, s.replay.step, s.replay.fsAtStep]).toEqual([3, 0, 0]);
    expect(reduce(s, { type: 'replayStep', step: 9 }).replay.step).toBe(2);
    expect(reduce(s, { type: 'replayStep', step: -1 }).replay.step).toBe(0);
    s = reduce(s, { type: 'logTree', name: 'log root' });
    expect(reduce(s, { type: 'ran', script: 'x', steps }).replay.data).not.toBe(null);
    const fresh = reduce(s, { type: 'ran', script: 'z', steps }).replay;
    expect([fresh.data, fresh.at, fresh.logTree]).toEqual([null, null, 'log root']);
    const failed = reduce(s, { type: 'replayFailed', message: 'no' }).replay;
    expect([failed.data, failed.fsAt, failed.error]).toEqual([null, null, 'no']);
  });

  test("a question left open closes when a scenario runs (the learner's own, or the lesson's again)", () => {
    const s = reduce(ran(), { type: 'ask', question: 0, to: 3 });
    expect(s.asking).not.toBe(null);
    const after = reduce(s, { type: 'ran', script: 'mine', steps });
    expect([after.asking, after.step]).toEqual([null, 0]);
    expect(reduce(s, { type: 'ran', script: 'x', steps }).asking).toBe(null);
  });

  test('event by event: moments of a step, then its end; over a boundary the next first moment (a question first) or the previous end', () => {
    const counts = [0, 2, 0, 3, 1];
    const at = (i: number) => counts[i];
    const ev = (s: LessonState, dir: 1 | -1, questions: { beforeLine: number }[] = []) => moveByEvent(s, questions, true, dir, at);
    let s = reduce(ran(), { type: 'seek', step: 0 });
    expect(ev(s, 1)).toEqual({ type: 'moment', step: 1, moment: 0 });
    s = reduce(s, ev(s, 1));
    s = reduce(s, ev(s, 1));
    expect([s.step, s.moment]).toEqual([1, 1]);
    s = reduce(s, ev(s, 1));
    expect([s.step, s.moment]).toEqual([1, null]); // the step's end
    expect(ev(s, 1)).toEqual({ type: 'moment', step: 2, moment: null }); // a step with no moments: its end
    expect(ev(s, 1, [{ beforeLine: 2 }])).toEqual({ type: 'ask', question: 0, to: 2 });
    // back: the last moment of the step, then the ones before, then the previous step's end
    expect(ev(s, -1)).toEqual({ type: 'moment', step: 1, moment: 1 });
    s = reduce(s, { type: 'moment', step: 1, moment: 0 });
    expect(ev(s, -1)).toEqual({ type: 'moment', step: 0, moment: null });
    // a seek or another tree goes back to a step's end
    expect(reduce(s, { type: 'seek', step: 3 }).moment).toBe(null);
    expect(reduce(s, { type: 'treeName', name: 'extent' }).moment).toBe(null);
    // the timeline's moments (lesson 3): another lens starts at the step's end; another tree keeps the timeline's moment
    expect(s.lens).toBe('tree');
    const t = reduce(reduce(s, { type: 'lens', lens: 'timeline' }), { type: 'moment', step: 1, moment: 0 });
    expect([t.lens, t.moment]).toEqual(['timeline', 0]);
    expect(reduce(t, { type: 'treeName', name: 'extent' }).moment).toBe(0);
    expect(reduce(t, { type: 'lens', lens: 'timeline' })).toBe(t);
    expect(reduce(t, { type: 'lens', lens: 'tree' }).moment).toBe(null);
    expect(initLesson({ draft: 'x', ran: 'x', step: 0, lens: 'timeline' }).lens).toBe('timeline');
    // at the last step's end, forward stays; back reaches its moments
    s = reduce(s, { type: 'seek', step: 4 });
    expect(ev(s, 1)).toEqual({ type: 'moment', step: 4, moment: null });
    s = reduce(s, ev(s, -1));
    expect([s.step, s.moment]).toEqual([4, 0]);
    expect(ev(s, 1)).toEqual({ type: 'moment', step: 4, moment: null });
  });

  test('a run under way: Run waits, the last run stays shown; it ends with the run, a failure or a cancel', () => {
    let s = reduce(ran(), { type: 'running' });
    expect(s.running).toBe(true);
    expect(reduce(s, { type: 'ran', script: 'x', steps }).running).toBe(false);
    expect(reduce(s, { type: 'runFailed', message: 'no' }).running).toBe(false);
    s = reduce(s, { type: 'runStopped' });
    expect([s.running, s.steps.length]).toEqual([false, steps.length]);
  });

  test("the final commit's step is not the last line's: a question about that line is not asked again there", () => {
    const withFinal = [...steps, { ...step(5, 5), final: true }];
    const s = reduce(initLesson({ draft: 'x', ran: 'x', step: 4 }), { type: 'ran', script: 'x', steps: withFinal });
    expect(moveTo(s, [{ beforeLine: 5 }], true, 5)).toEqual({ type: 'seek', step: 5 });
  });

  test("choose mode's picks: set and cleared by the choose action, kept through a run and a failed one", () => {
    const choice = { base: 'x', section: 2, picks: ['A', 'B'] };
    expect(initLesson({ draft: 'x', ran: 'x', step: 0 }).choice).toBe(null);
    expect(initLesson({ draft: 'x', ran: 'x', step: 0, choice }).choice).toBe(choice);
    let s = reduce(ran(), { type: 'choose', choice }, { type: 'running' });
    expect(s.choice).toBe(choice);
    expect(reduce(s, { type: 'runFailed', message: 'EDEADLK' }).choice).toBe(choice); // the panel still says which picks deadlocked
    s = reduce(s, { type: 'ran', script: 'schedule A B\nx', steps });
    expect([s.choice, s.ran]).toEqual([choice, 'schedule A B\nx']);
    expect(reduce(s, { type: 'choose', choice: null }).choice).toBe(null);
  });
});
