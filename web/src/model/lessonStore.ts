// One store for a lesson on show: the scenario being edited and the one that
// ran, the player (step, playing, speed), the tree on show, the questions,
// and the crash-and-replay view's state. Views render it and dispatch
// actions; this reducer is the only place it changes (pure, tested in
// lessonStore.test.ts). The worker's answers arrive as actions too.
import type { TreeDump } from './dump';
import type { ReplayStep } from './replay';
import type { Choice } from './schedule';
import type { Lens, StepInfo, StepView } from './steps';

export interface QuestionLike {
  beforeLine: number;
}

export interface ReplayState {
  /** The crash point: the last line that runs (null until the view knows its points). */
  at: number | null;
  /** Inside line `at`: the crash comes right after its write number `write` (1-based; null: after the whole line). */
  write: number | null;
  /** The run cut at `at`: the image as the crash left it, after replay, and the replay's actions. */
  data: { before: TreeDump; after: TreeDump; steps: ReplayStep[] } | null;
  /** Replay actions done (0: before replay). */
  step: number;
  /** The fs tree after `step` actions, and the step it is of. */
  fsAt: TreeDump | null;
  fsAtStep: number;
  logTree: string;
  fsTree: string;
  error: string | null;
}

export interface LessonState {
  /** The scenario text in the editor. */
  draft: string;
  /** The last script that ran to its end (what the steps are of). */
  ran: string;
  /** A run is under way (Run waits; what is shown is the last run's). */
  running: boolean;
  steps: StepInfo[];
  /** Events of the run's commands (the final commit's come after: not steppable). */
  commandEvents: number;
  /** The player: the step on show (clamped to the steps), playing, speed. */
  step: number;
  /** Event-level stepping: the moment of the step on show (model/moments.ts), or null for the step's end. */
  moment: number | null;
  /** Whose moments event-level stepping goes through: the tree's, or the timeline's (lesson 3). */
  lens: Lens;
  playing: boolean;
  speed: number;
  /** The tree on show and its dump at `dumpStep` (and `dumpMoment`). */
  treeName: string;
  dump: TreeDump | null;
  dumpStep: number;
  dumpMoment: number | null;
  /** The step told, marked and counted in the tree on show, with the dump (the worker's, core/runs.ts). */
  view: StepView | null;
  error: string | null;
  /** Answers given, by question index; the question being asked and the step it leads to. */
  answers: Record<number, number>;
  asking: { question: number; to: number } | null;
  replay: ReplayState;
  /** Choose mode (lesson 4): the base script, the section and the turns picked; ran is (when it ran) the base with them as schedule lines. Null: the policy decides. */
  choice: Choice | null;
}

export type LessonAction =
  | { type: 'edit'; text: string }
  | { type: 'choose'; choice: Choice | null }
  | { type: 'ran'; script: string; steps: StepInfo[]; commandEvents?: number }
  | { type: 'runFailed'; message: string }
  | { type: 'failed'; message: string }
  | { type: 'running' }
  | { type: 'runStopped' }
  | { type: 'seek'; step: number }
  | { type: 'moment'; step: number; moment: number | null }
  | { type: 'ask'; question: number; to: number }
  | { type: 'answer'; question: number; choice: number }
  | { type: 'asked' } // "see it happen": the question closes and the player moves on
  | { type: 'play'; playing: boolean }
  | { type: 'speed'; speed: number }
  | { type: 'treeName'; name: string }
  | { type: 'lens'; lens: Lens }
  | { type: 'dump'; step: number; moment?: number | null; dump: TreeDump; view?: StepView | null }
  | { type: 'crashAt'; at: number }
  | { type: 'crashWrite'; write: number | null }
  | { type: 'replayRun'; at: number; before: TreeDump; after: TreeDump; steps: ReplayStep[] }
  | { type: 'replayFailed'; message: string }
  | { type: 'replayStep'; step: number }
  | { type: 'replayFs'; step: number; dump: TreeDump }
  | { type: 'replayError'; message: string }
  | { type: 'logTree'; name: string }
  | { type: 'fsTree'; name: string };

export const initialReplay: ReplayState = { at: null, write: null, data: null, step: 0, fsAt: null, fsAtStep: -1, logTree: 'log', fsTree: 'fs', error: null };

export function initLesson(init: { draft: string; ran: string; step: number; crash?: number; write?: number; lens?: Lens; choice?: Choice | null }): LessonState {
  return {
    draft: init.draft, ran: init.ran, running: false, steps: [], commandEvents: Infinity, step: Math.max(0, init.step), moment: null, lens: init.lens ?? 'tree', playing: false, speed: 1,
    treeName: 'fs', dump: null, dumpStep: -1, dumpMoment: null, view: null, error: null, answers: {}, asking: null, replay: init.crash === undefined ? initialReplay : { ...initialReplay, at: init.crash, write: init.write ?? null },
    choice: init.choice ?? null,
  };
}

/** The step on show: the state's step, within the steps there are. */
export function stepIndex(s: LessonState): number {
  return s.steps.length ? Math.min(s.step, s.steps.length - 1) : 0;
}

function replay(s: LessonState, r: Partial<ReplayState>): LessonState {
  return { ...s, replay: { ...s.replay, ...r } };
}

export function lessonReduce(s: LessonState, a: LessonAction): LessonState {
  switch (a.type) {
    case 'edit':
      return { ...s, draft: a.text };
    case 'choose':
      return { ...s, choice: a.choice };
    case 'ran':
      // a new run: its steps; the tree on show stays until the new run's dump
      // arrives, and the replay view starts over (its crash points are the new
      // script's); a question left open closes (it was about the old run)
      return { ...s, running: false, ran: a.script, steps: a.steps, commandEvents: a.commandEvents ?? Infinity, moment: null, error: null, asking: null,
        replay: a.script === s.ran ? s.replay : { ...initialReplay, logTree: s.replay.logTree, fsTree: s.replay.fsTree } };
    case 'runFailed':
      return { ...s, running: false, steps: [], dump: null, dumpStep: -1, view: null, playing: false, error: a.message };
    case 'failed':
      return { ...s, error: a.message };
    case 'running':
      return { ...s, running: true, error: null };
    case 'runStopped': // cancelled: what was shown stays
      return { ...s, running: false };
    case 'seek': {
      const step = Math.max(0, a.step);
      const last = s.steps.length - 1;
      return { ...s, step, moment: null, playing: s.playing && step < last };
    }
    case 'moment':
      return { ...s, step: Math.max(0, a.step), moment: a.moment, playing: false };
    case 'ask':
      return { ...s, asking: { question: a.question, to: a.to }, playing: false };
    case 'answer':
      return s.answers[a.question] !== undefined ? s : { ...s, answers: { ...s.answers, [a.question]: a.choice } };
    case 'asked':
      return s.asking ? { ...s, step: s.asking.to, moment: null, asking: null } : s;
    case 'play':
      return { ...s, playing: a.playing && stepIndex(s) < s.steps.length - 1 };
    case 'speed':
      return { ...s, speed: a.speed };
    case 'treeName': // moments are the tree's own (the timeline's stay)
      return { ...s, treeName: a.name, moment: s.lens === 'tree' ? null : s.moment };
    case 'lens':
      return a.lens === s.lens ? s : { ...s, lens: a.lens, moment: null };
    case 'dump':
      return { ...s, dump: a.dump, dumpStep: a.step, dumpMoment: a.moment ?? null, view: a.view ?? null };
    case 'crashAt':
      return replay(s, a.at === s.replay.at ? { at: a.at } : { at: a.at, write: null });
    case 'crashWrite':
      return replay(s, { write: a.write });
    case 'replayRun':
      return replay(s, { at: a.at, data: { before: a.before, after: a.after, steps: a.steps }, step: 0, fsAt: a.before, fsAtStep: 0, error: null });
    case 'replayFailed':
      return replay(s, { data: null, fsAt: null, fsAtStep: -1, error: a.message });
    case 'replayStep': {
      const total = s.replay.data?.steps.length ?? 0;
      return replay(s, { step: Math.max(0, Math.min(total, a.step)) });
    }
    case 'replayFs':
      return replay(s, { fsAt: a.dump, fsAtStep: a.step });
    case 'replayError':
      return replay(s, { error: a.message });
    case 'logTree':
      return replay(s, { logTree: a.name });
    case 'fsTree':
      return replay(s, { fsTree: a.name });
  }
}

/**
 * Moving the player from step `from` to `to`: a forward move past a step a
 * question is about asks the first unanswered such question first (only on
 * the lesson's own scenario: the questions are about it). The action to
 * dispatch.
 */
export function moveTo(s: LessonState, questions: QuestionLike[], ownScenario: boolean, to: number): LessonAction {
  const from = stepIndex(s);
  if (to > from && ownScenario) {
    const passed = s.steps.slice(from + 1, to + 1);
    const qi = questions.findIndex((q, n) => s.answers[n] === undefined && passed.some((st) => !st.final && st.line === q.beforeLine));
    if (qi >= 0) {
      const line = questions[qi].beforeLine;
      return { type: 'ask', question: qi, to: s.steps.findIndex((st, n) => n > from && !st.final && st.line === line) };
    }
  }
  return { type: 'seek', step: to };
}

/**
 * Stepping event by event (Shift and the arrow keys): the next or previous
 * moment of the step on show, its end after its last moment, and over a
 * step boundary the neighbour step's first moment (forward, a question
 * first, as moveTo asks) or its end (back). momentsAt gives a step's number
 * of moments in the tree on show.
 */
export function moveByEvent(s: LessonState, questions: QuestionLike[], ownScenario: boolean, dir: 1 | -1, momentsAt: (step: number) => number): LessonAction {
  const from = stepIndex(s);
  const n = momentsAt(from);
  const m = s.moment === null || s.moment >= n ? null : s.moment;
  if (dir > 0) {
    if (m !== null) return { type: 'moment', step: from, moment: m + 1 < n ? m + 1 : null };
    if (from >= s.steps.length - 1) return { type: 'moment', step: from, moment: null };
    const ask = moveTo(s, questions, ownScenario, from + 1);
    if (ask.type === 'ask') return ask;
    return { type: 'moment', step: from + 1, moment: momentsAt(from + 1) ? 0 : null };
  }
  if (m !== null && m > 0) return { type: 'moment', step: from, moment: m - 1 };
  if (m === null && n > 0) return { type: 'moment', step: from, moment: n - 1 };
  return { type: 'moment', step: Math.max(0, from - 1), moment: null };
}
