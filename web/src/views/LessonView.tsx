import { Fragment, memo, useCallback, useEffect, useLayoutEffect, useMemo, useReducer, useRef } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import { treeIdOf, type TreeDump } from '../model/dump';
import { renderMarkdown } from '../model/markdown';
import { initLesson, lessonReduce, moveByEvent, moveTo, stepIndex } from '../model/lessonStore';
import { momentLabels } from '../model/moments';
import type { Lens, StepView } from '../model/steps';
import type { Lesson } from '../lessons';
import { questionKey } from '../model/questions';
import { chosenScript, openChoice, scriptSchedule, threadSections, type Choice, type Schedule } from '../model/schedule';
import { Player } from './Player';
import { AskKernel } from './AskKernel';
import { LiveFigure } from './LiveFigure';
import { QuestionPanel } from './QuestionPanel';
import { lessonViews } from './registry';
import { TreeExplorer } from './TreeExplorer';
import { useTimelines } from './useTimelines';
import type { Ghost } from '../model/ghosts';
import type { Mark } from './treeView';

export interface LessonViewProps {
  core: CoreClient;
  lesson: Lesson;
  step: number;
  onStep: (i: number) => void;
  reducedMotion: boolean;
  /** The scenario text and the last script that ran to its end, when the lesson was shown before (the core restarted since). */
  scripts?: LessonScripts;
  onScripts?: (s: LessonScripts) => void;
  /** The crash point to start the replay view at (from the address bar). */
  crash?: number;
  /** Inside that line, the write to crash after (1-based). */
  write?: number;
  /** Choose mode's picks to start with (from the address bar): the section's turns fixed as schedule lines. */
  sched?: Schedule;
  /** Where the learner is, for the address bar: their own script (null: the lesson's; without choose mode's schedule lines), the crash point and choose mode's picks. */
  onPlace?: (p: { script: string | null; crash: number | null; write: number | null; sched: Schedule | null }) => void;
}

export interface LessonScripts {
  draft: string;
  ran: string;
}

const RUN = { seed: 1n, now: 1700000000n, trace: true };
const NO_GHOSTS: Ghost[] = [];

interface ScenarioEditorProps {
  script: string;
  running: boolean;
  rows: number;
  error: string | null;
  onChange: (text: string) => void;
  onRun: (text: string) => void;
  onReset: () => void;
}

/** The scenario's text, Run and Reset. Memoized: a step does not touch it
 * (a script of 36,000 lines costs milliseconds to compare on every render). */
const ScenarioEditor = memo(function ScenarioEditor({ script, running, rows, error, onChange, onRun, onReset }: ScenarioEditorProps) {
  return (
    <section className="panel" aria-labelledby="scenario-h">
      <h3 id="scenario-h">Scenario</h3>
      <textarea aria-label="Scenario script" value={script} rows={rows} spellCheck={false} onChange={(e) => onChange(e.target.value)} />
      <div>
        <button type="button" onClick={() => onRun(script)} disabled={running}>{running ? 'Running…' : 'Run scenario'}</button>{' '}
        <button type="button" onClick={onReset} disabled={running}>Reset</button>
        {running && <span className="hint" role="status"> Running the scenario; the tree below is the last run's until it ends.</span>}
      </div>
      {error && <p className="error" role="alert">{error}</p>}
    </section>
  );
});

/** The lesson's first state: its script (or the learner's), with choose mode's picks as schedule lines when the address has them. */
function firstState(lesson: Lesson, step: number, scripts: LessonScripts | undefined, crash: number | undefined, write: number | undefined, sched: Schedule | undefined) {
  const base = scripts?.ran ?? lesson.scenario;
  const choice = sched ? openChoice(base, sched) : null;
  const ran = choice ? chosenScript(choice).text : base;
  // the editor shows what runs (the picks' schedule lines too), unless the learner's draft differs from their script
  const draft = scripts && scripts.draft !== scripts.ran ? scripts.draft : ran;
  return initLesson({ draft, ran, step, crash, write, lens: timelined(lesson) ? 'timeline' : 'tree', choice });
}

/** Whether the lesson's views step through the timeline under the player (lesson 3's, lesson 4's locks beside it, lesson 5's space panel, which follows its events). */
const timelined = (lesson: Lesson) => lesson.views.some((v) => v === 'timeline' || v === 'locks' || v === 'space');

/** The 1-based first line of section of threads number n in script (0: none). */
const sectionFirst = (script: string, n: number) => threadSections(script.split('\n')).find((s) => s.number === n)?.first ?? 0;

/** A lesson: its text, a live scenario the learner can change and run, the player, and questions before the steps they ask about. All its state is one store (model/lessonStore.ts); this renders it. */
export function LessonView({ core, lesson, step, onStep, reducedMotion, scripts, onScripts, crash, write, sched, onPlace }: LessonViewProps) {
  const hasTimeline = timelined(lesson);
  const [state, dispatch] = useReducer(lessonReduce, undefined, () => firstState(lesson, step, scripts, crash, write, sched));
  const { draft, ran, steps, dump, dumpStep, dumpMoment, view, error, treeName, answers, asking } = state;
  const cache = useRef(new Map<string, TreeDump>());
  // what the worker told of a step in a tree (at a moment): its sentence, marks, ghosts and moments (core/runs.ts)
  const stepViews = useRef(new Map<string, Promise<StepView>>());
  const momentCounts = useRef(new Map<string, number>());
  const lines = useMemo(() => ran.split('\n'), [ran]);

  // seekLine: then show the step of that line (choose mode: the section whose turns were picked)
  const run = useCallback(async (text: string, seekLine = 0) => {
    dispatch({ type: 'running' });
    try {
      // the worker runs it and groups its events into steps: the page gets the steps, never the events
      const r = await core.call({ op: 'runSteps', script: text, opts: RUN });
      cache.current.clear();
      stepViews.current.clear();
      momentCounts.current.clear();
      dispatch({ type: 'ran', script: text, steps: r.steps, commandEvents: r.commandEvents });
      const at = seekLine ? r.steps.findIndex((s) => !s.final && s.line === seekLine) : -1;
      if (at >= 0) dispatch({ type: 'seek', step: at });
    } catch (e) {
      if (e instanceof CancelledError) { // the page says so; what was shown stays until the lesson comes back
        dispatch({ type: 'runStopped' });
        return;
      }
      dispatch({ type: 'runFailed', message: (e as Error).message });
    }
  }, [core]);

  // the lesson's scenario (or what the learner last ran, when it comes back after a restart) runs once, at mount
  const firstRun = useRef(ran);
  useEffect(() => {
    void run(firstRun.current);
  }, [run]);

  const { choice } = state;
  // the learner's script as kept and put in the address: without choose mode's schedule lines (the address has its picks)
  const base = choice?.base ?? ran;
  useEffect(() => {
    onScripts?.({ draft, ran: base });
  }, [draft, base, onScripts]);
  const onPlaceRef = useRef(onPlace);
  onPlaceRef.current = onPlace;
  const crashAt = state.replay.at;
  const crashWrite = state.replay.write;
  useEffect(() => {
    onPlaceRef.current?.({ script: base === lesson.scenario ? null : base, crash: crashAt, write: crashWrite, sched: choice ? { section: choice.section, picks: choice.picks } : null });
  }, [base, crashAt, crashWrite, lesson, choice]);

  // the address bar follows the player
  const onStepRef = useRef(onStep);
  onStepRef.current = onStep;
  useEffect(() => onStepRef.current(state.step), [state.step]);

  const index = stepIndex(state);
  const treeId = treeIdOf(treeName);
  const { lens } = state;
  // whose moments event stepping counts: the tree's on show, or the timeline's
  const lensKey = (tree: bigint, l: Lens) => (l === 'timeline' ? 'timeline' : String(tree));
  // a step's view in a tree at a moment of the lens (null: its end), asked of the worker once per run
  const viewOf = useCallback((i: number, tree: bigint, m: number | null, l: Lens): Promise<StepView> => {
    const key = `${i}:${tree}:${l}:${m}`;
    let p = stepViews.current.get(key);
    if (!p) {
      p = core.call({ op: 'stepView', script: ran, opts: RUN, index: i, tree, moment: m, lens: l });
      p.then((v) => momentCounts.current.set(`${i}:${lensKey(tree, l)}`, v.moments), () => stepViews.current.delete(key));
      stepViews.current.set(key, p);
    }
    return p;
  }, [core, ran]);
  // event-level stepping: the moment of the step on show, in the tree on show (the view says how many there are)
  const shown = view && dumpStep === index ? view : null;
  const moment = shown?.moment ?? null;
  const momentIndex = moment ? dumpMoment : null;
  useEffect(() => {
    if (!steps.length) return;
    let live = true;
    const want = state.moment;
    const dumpOf = (v: StepView | null): Promise<TreeDump> => {
      const key = v?.moment ? `e${v.moment.seq}:${treeName}` : `${index}:${treeName}`;
      const have = cache.current.get(key);
      if (have) return Promise.resolve(have);
      // only the tree on show, and leaves of many items as their first and last (the core does the cutting)
      // the worker keeps the run: the state comes from its nearest checkpoint (for a moment, the run stops at its event)
      const req = v?.moment
        ? core.call({ op: 'stateAtEvent', script: ran, opts: RUN, seq: v.moment.seq, tree: treeId, maxLeafEntries: 24 })
        : core.call({ op: 'stateAt', script: ran, opts: RUN, line: steps[index]?.final ? -1 : steps[index]?.line ?? 0, tree: treeId, maxLeafEntries: 24 });
      return req.then((d) => (cache.current.set(key, d), d));
    };
    const v = viewOf(index, treeId, want, lens);
    // the step's end needs no view to find its dump: both at once; a moment's dump is at its event
    Promise.all([v, want === null ? dumpOf(null) : v.then(dumpOf)]).then(
      ([sv, d]) => live && dispatch({ type: 'dump', step: index, moment: sv.moment ? want : null, dump: d, view: sv }),
      (e: Error) => live && !(e instanceof CancelledError) && dispatch({ type: 'failed', message: e.message }),
    );
    return () => {
      live = false;
    };
  }, [core, steps, index, ran, treeName, treeId, state.moment, lens, viewOf]);

  const stateRef = useRef(state);
  stateRef.current = state;
  const goTo = useCallback((i: number) => dispatch(moveTo(stateRef.current, lesson.questions, stateRef.current.ran === lesson.scenario, i)), [lesson]);
  // a move by one event needs the step's moments and the next step's: known once their views came, else asked first
  const byEvent = useCallback((dir: 1 | -1) => {
    const s0 = stateRef.current;
    const from = stepIndex(s0);
    const need = [from, from + 1].filter((i) => i < s0.steps.length);
    const count = (i: number) => momentCounts.current.get(`${i}:${lensKey(treeId, s0.lens)}`);
    const move = () => {
      const s = stateRef.current;
      if (stepIndex(s) !== from || s.moment !== s0.moment || s.steps !== s0.steps) return; // moved meanwhile
      dispatch(moveByEvent(s, lesson.questions, s.ran === lesson.scenario, dir, (i) => count(i) ?? 0));
    };
    if (need.every((i) => count(i) !== undefined)) move();
    else Promise.all(need.map((i) => viewOf(i, treeId, null, s0.lens))).then(move, () => {});
  }, [lesson, treeId, viewOf]);
  const { timelineOf, nextWait } = useTimelines(core, ran, RUN, lesson, stateRef, dispatch);
  const runFromStart = useCallback((text: string) => {
    // choose mode stays on: the section's schedule lines in the text are its picks (the learner may have changed the rest)
    const c = stateRef.current.choice;
    const next = c ? openChoice(text, { section: c.section, picks: scriptSchedule(text, c.section) }) : null;
    if (c) dispatch({ type: 'choose', choice: next });
    const script = next ? chosenScript(next).text : text;
    if (script !== text) dispatch({ type: 'edit', text: script });
    dispatch({ type: 'seek', step: 0 });
    void run(script);
  }, [run]);
  const setDraft = useCallback((text: string) => dispatch({ type: 'edit', text }), []);
  const reset = useCallback(() => {
    dispatch({ type: 'choose', choice: null });
    dispatch({ type: 'edit', text: lesson.scenario });
    dispatch({ type: 'seek', step: 0 });
    void run(lesson.scenario);
  }, [lesson, run]);
  // choose mode: the picks as schedule lines run (null: back to the base script, the policy deciding), the player on the section
  const choose = useCallback((c: Choice | null) => {
    const s = stateRef.current;
    const was = s.choice;
    const { text, first } = c ? chosenScript(c) : { text: was?.base ?? s.ran, first: was ? sectionFirst(was.base, was.section) : 0 };
    dispatch({ type: 'choose', choice: c });
    dispatch({ type: 'edit', text });
    if (text !== s.ran || s.running || !s.steps.length) {
      void run(text, first);
      return;
    }
    const at = s.steps.findIndex((st) => !st.final && st.line === first);
    if (at >= 0) dispatch({ type: 'seek', step: at });
  }, [run]);
  const chooseContext = useMemo(() => ({ choice, running: state.running, onChoose: choose }), [choice, state.running, choose]);

  // focus goes to a question when it opens (QuestionPanel) and back where it was, or to the player, when it closes
  const lab = useRef<HTMLDivElement>(null);
  const focusBefore = useRef<Element | null>(null);
  const open = asking !== null;
  useLayoutEffect(() => { // before QuestionPanel's own effect takes focus
    if (open) {
      focusBefore.current = document.activeElement;
      return;
    }
    const back = focusBefore.current;
    focusBefore.current = null;
    if (!back) return;
    const to = back instanceof HTMLElement && back.isConnected && !(back as HTMLButtonElement).disabled && back !== document.body
      ? back : lab.current?.querySelector<HTMLElement>('.player button[aria-label="Step forward"]:not([disabled]), .player button:not([disabled])');
    to?.focus();
  }, [open]);

  const views = useMemo(() => lessonViews(lesson), [lesson]);
  const q = asking ? lesson.questions[asking.question] : null;
  const answered = asking ? answers[asking.question] : undefined;
  // the committed blocks COW replaced since the last commit, on disk still (drawn behind their copies); shown with the dump they belong to
  const ghosts = shown && dump ? shown.ghosts : NO_GHOSTS;
  // the step told for the tree on screen (by the worker, once per step and tree: a step can hold a million events)
  const stepSentence = shown?.sentence;
  // the marks of the moment on show, or of the whole step
  const momentView = useMemo(() => (moment ? momentLabels(moment, dump, treeName) : null), [moment, dump, treeName]);
  const focusItem = useMemo(() => (moment?.item ? { bytenr: moment.item.bytenr.toString(), slot: moment.item.slot } : null), [moment]);
  const marks = useMemo(() => {
    if (momentView) return momentView.marks;
    const tree = dump?.trees.find((t) => t.name === treeName);
    const all = shown?.marks ?? new Map<string, Mark>();
    if (!tree) return all;
    const own = new Set(tree.blocks.map((b) => b.bytenr.toString()));
    return new Map([...all].filter(([b]) => own.has(b)));
  }, [dump, shown, treeName, momentView]);

  const player = useMemo(() => ({ steps, index, momentSeq: moment?.seq ?? null, momentIndex, lens, timelineOf }), [steps, index, moment, momentIndex, lens, timelineOf]);

  return (
    <article className="lesson" aria-labelledby="lesson-title">
      <div className="lesson-text" role="region" aria-labelledby="lesson-title" tabIndex={0 /* it scrolls on its own: keyboard users scroll it too */}>
        <h2 id="lesson-title">{lesson.title}</h2>
        {lesson.parts.map((p, i) => (p.kind === 'text'
          ? <div key={i} dangerouslySetInnerHTML={{ __html: renderMarkdown(p.text) }} />
          : <LiveFigure key={i} id={`fig-${lesson.id}-${p.line}`} core={core} figure={p.figure} reducedMotion={reducedMotion} />))}
      </div>
      <div className="lesson-lab" ref={lab}>
      <ScenarioEditor script={draft} running={state.running} rows={Math.min(14, lines.length + 1)} error={error} onChange={setDraft} onRun={runFromStart}
        onReset={reset} />
      {asking && q && (
        <QuestionPanel question={q} shuffleKey={questionKey(lesson.id, asking.question)} answered={answered}
          onAnswer={(choice) => dispatch({ type: 'answer', question: asking.question, choice })} onDone={() => dispatch({ type: 'asked' })} />
      )}
      {steps.length > 0 && <Player steps={steps} index={index} playing={state.playing} speed={state.speed} onIndex={goTo} dispatch={dispatch} reducedMotion={reducedMotion}
        moment={moment && momentIndex !== null ? { index: momentIndex, count: shown?.moments ?? 0, sentence: moment.sentence } : null} onEvent={byEvent}
        stepSentence={stepSentence}
        extraJumps={hasTimeline ? [{ label: 'Next wait', onClick: nextWait, disabled: !steps.slice(index).some((s) => s.kinds.has('task_wait')) }] : undefined} />}
      {steps[index]?.kinds.has('log_sync') && treeName !== 'log' && dump?.trees.some((t) => t.name === 'log') && (
        <p className="hint log-note">This step wrote the log tree (fsync): the change is there, not in the {treeName} tree's blocks.{' '}
          <button type="button" onClick={() => dispatch({ type: 'treeName', name: 'log' })}>Show the log tree</button></p>
      )}
      <div className={state.running ? 'stale' : undefined} aria-busy={state.running}>
      {dump && <TreeExplorer dump={dump} marks={marks} treeName={treeName} onTreeName={(name) => dispatch({ type: 'treeName', name })} reducedMotion={reducedMotion} stateKey={dumpMoment === null ? String(dumpStep) : `${dumpStep}.${dumpMoment}`} labels={momentView?.labels} focusItem={focusItem} ghosts={ghosts} />}
      </div>
      {steps.length > 0 && !state.running && (
        // what is on the device at this step (the last commit and any log; the end: committed), for the kernel to mount
        <AskKernel core={core} script={ran} opts={RUN} line={steps[index]?.final ? -1 : steps[index]?.line ?? 0} what="this step" />
      )}
      {views.map((v) => <Fragment key={v.name}>{v.render({ core, script: ran, lesson, reducedMotion, replay: state.replay, dispatch, player, choose: chooseContext })}</Fragment>)}
      </div>
    </article>
  );
}
