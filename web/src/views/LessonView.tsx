import { Fragment, memo, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import { TREE_IDS, type TreeDump } from '../model/dump';
import { renderMarkdown } from '../model/markdown';
import { marksFor } from '../model/marks';
import { groupSteps, type Step } from '../model/steps';
import type { Lesson, Question } from '../lessons';
import { Player } from './Player';
import { lessonViews } from './registry';
import { TreeExplorer } from './TreeExplorer';

export interface LessonViewProps {
  core: CoreClient;
  lesson: Lesson;
  step: number;
  onStep: (i: number) => void;
  reducedMotion: boolean;
  /** The scenario text and the last script that ran to its end, when the lesson was shown before (the core restarted since). */
  scripts?: LessonScripts;
  onScripts?: (s: LessonScripts) => void;
}

export interface LessonScripts {
  draft: string;
  ran: string;
}

const RUN = { seed: 1n, now: 1700000000n, trace: true };

interface ScenarioEditorProps {
  script: string;
  rows: number;
  error: string | null;
  onChange: (text: string) => void;
  onRun: (text: string) => void;
  onReset: () => void;
}

/** The scenario's text, Run and Reset. Memoized: a step does not touch it
 * (a script of 36,000 lines costs milliseconds to compare on every render). */
const ScenarioEditor = memo(function ScenarioEditor({ script, rows, error, onChange, onRun, onReset }: ScenarioEditorProps) {
  return (
    <section className="panel" aria-labelledby="scenario-h">
      <h3 id="scenario-h">Scenario</h3>
      <textarea aria-label="Scenario script" value={script} rows={rows} spellCheck={false} onChange={(e) => onChange(e.target.value)} />
      <div>
        <button type="button" onClick={() => onRun(script)}>Run scenario</button>{' '}
        <button type="button" onClick={onReset}>Reset</button>
      </div>
      {error && <p className="error" role="alert">{error}</p>}
    </section>
  );
});

/** A lesson: its text, a live scenario the learner can change and run, the player, and questions before the steps they ask about. */
export function LessonView({ core, lesson, step, onStep, reducedMotion, scripts, onScripts }: LessonViewProps) {
  const [script, setScript] = useState(scripts?.draft ?? lesson.scenario);
  const [ranScript, setRanScript] = useState(scripts?.ran ?? lesson.scenario);
  const kept = useRef(scripts); // what to come back to, read once at mount
  const [steps, setSteps] = useState<Step[]>([]);
  const [dump, setDump] = useState<TreeDump | null>(null);
  const [dumpStep, setDumpStep] = useState(-1); // the step the shown dump is of
  const [error, setError] = useState<string | null>(null);
  const [treeName, setTreeName] = useState('fs');
  const [answers, setAnswers] = useState<Record<number, number>>({});
  const [asking, setAsking] = useState<{ q: Question; to: number } | null>(null);
  const cache = useRef(new Map<string, TreeDump>());
  const lines = useMemo(() => ranScript.split('\n'), [ranScript]);

  const run = useCallback(async (text: string) => {
    setError(null);
    try {
      const r = await core.call({ op: 'traceRun', script: text, opts: RUN });
      cache.current.clear();
      setRanScript(text);
      setSteps(groupSteps(r.events, text.split('\n')));
    } catch (e) {
      if (e instanceof CancelledError) return; // the page says so; what was shown stays until the lesson comes back
      setSteps([]);
      setDump(null);
      setError((e as Error).message);
    }
  }, [core]);

  useEffect(() => {
    const back = kept.current;
    setScript(back?.draft ?? lesson.scenario);
    setAnswers({});
    void run(back?.ran ?? lesson.scenario);
  }, [lesson, run]);

  useEffect(() => {
    onScripts?.({ draft: script, ran: ranScript });
  }, [script, ranScript, onScripts]);

  const index = steps.length ? Math.min(step, steps.length - 1) : 0;
  useEffect(() => {
    if (!steps.length) return;
    let live = true;
    const key = `${index}:${treeName}`;
    const have = cache.current.get(key);
    if (have) {
      setDump(have);
      setDumpStep(index);
      return;
    }
    // only the tree on show, and leaves of many items as their first and last (the core does the cutting)
    // the worker keeps the run: the state comes from its nearest checkpoint
    core.call({ op: 'stateAt', script: ranScript, opts: RUN, line: steps[index]?.line ?? 0, tree: TREE_IDS[treeName] ?? 5n, maxLeafEntries: 24 }).then(
      (d) => {
        cache.current.set(key, d);
        if (live) {
          setDump(d);
          setDumpStep(index);
        }
      },
      (e: Error) => live && !(e instanceof CancelledError) && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [core, steps, index, ranScript, treeName]);

  const onStepRef = useRef(onStep);
  onStepRef.current = onStep;
  const runFromStart = useCallback((text: string) => {
    onStepRef.current(0);
    void run(text);
  }, [run]);
  const reset = useCallback(() => {
    setScript(lesson.scenario);
    runFromStart(lesson.scenario);
  }, [lesson, runFromStart]);

  // Moving forward onto a step a question is about asks it first.
  const goTo = (i: number) => {
    // the questions are about the lesson's own scenario, not one the learner changed
    if (i > index && ranScript === lesson.scenario) {
      const qi = lesson.questions.findIndex((q, n) => answers[n] === undefined && steps.slice(index + 1, i + 1).some((s) => s.line === q.beforeLine));
      if (qi >= 0) {
        const q = lesson.questions[qi];
        const to = steps.findIndex((s, n) => n > index && s.line === q.beforeLine);
        setAsking({ q, to });
        return;
      }
    }
    onStep(i);
  };

  const views = useMemo(() => lessonViews(lesson), [lesson]);
  const qIndex = asking ? lesson.questions.indexOf(asking.q) : -1;
  const answered = qIndex >= 0 ? answers[qIndex] : undefined;
  const marks = useMemo(() => {
    const tree = dump?.trees.find((t) => t.name === treeName);
    const all = marksFor(steps[index]?.events ?? []);
    if (!tree) return all;
    const own = new Set(tree.blocks.map((b) => b.bytenr.toString()));
    return new Map([...all].filter(([b]) => own.has(b)));
  }, [dump, steps, index, treeName]);

  return (
    <article className="lesson" aria-labelledby="lesson-title">
      <div className="lesson-text">
        <h2 id="lesson-title">{lesson.title}</h2>
        <div dangerouslySetInnerHTML={{ __html: renderMarkdown(lesson.text) }} />
      </div>
      <div className="lesson-lab">
      <ScenarioEditor script={script} rows={Math.min(14, lines.length + 1)} error={error} onChange={setScript} onRun={runFromStart}
        onReset={reset} />
      {asking && (
        <section className="question panel" role="dialog" aria-labelledby="q-h">
          <h3 id="q-h">Predict: {asking.q.prompt}</h3>
          <div role="radiogroup" aria-label="Answers">
            {asking.q.choices.map((c, i) => (
              <button key={c} type="button" role="radio" aria-checked={answered === i} disabled={answered !== undefined}
                className={answered === undefined ? '' : i === asking.q.answer ? 'right' : answered === i ? 'wrong' : ''}
                onClick={() => setAnswers({ ...answers, [qIndex]: i })}>{c}</button>
            ))}
          </div>
          {answered !== undefined && (
            <>
              <p className="reveal" role="status">{answered === asking.q.answer ? 'Right. ' : 'Not quite. '}{asking.q.explain}</p>
              <button type="button" onClick={() => { const to = asking.to; setAsking(null); onStep(to); }}>See it happen</button>
            </>
          )}
        </section>
      )}
      {steps.length > 0 && <Player steps={steps} index={index} onIndex={goTo} reducedMotion={reducedMotion} />}
      {dump && <TreeExplorer dump={dump} marks={marks} treeName={treeName} onTreeName={setTreeName} reducedMotion={reducedMotion} stateKey={String(dumpStep)} />}
      {views.map((v) => <Fragment key={v.name}>{v.render({ core, script: ranScript, lesson, reducedMotion })}</Fragment>)}
      </div>
    </article>
  );
}
