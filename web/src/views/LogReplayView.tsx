import { useEffect, useMemo, useRef, useState, type Dispatch } from 'react';
import { saveBlob } from './saveBlob';
import { CancelledError, type CoreClient } from '../core/client';
import type { Handle } from '../core/wasm';
import { describeCrashPoint, type CrashPoint } from '../model/crashPoints';
import type { TreeDump } from '../model/dump';
import { inodePaths } from '../model/files';
import { marksFor } from '../model/marks';
import type { LessonAction, ReplayState } from '../model/lessonStore';
import { keyText } from '../model/names';
import { crashPoints, itemChanges, leafHolding, passStarts, replaySteps } from '../model/replay';
import { replayMeans, replaySaid } from './replay.sentences';
import type { Mark } from './treeView';
import { AskKernel } from './AskKernel';
import { TreeExplorer } from './TreeExplorer';

export interface LogReplayViewProps {
  core: CoreClient;
  /** The scenario; the crash point cuts it after a line (or inside one, after a write). */
  script?: string;
  /** Or an opened image with a pending log (the kernel's, copied while mounted, or a crash point's): its replay, on a copy. */
  image?: { handle: Handle; name: string };
  reducedMotion: boolean;
  /** Its state, in the lesson's store. */
  state: ReplayState;
  dispatch: Dispatch<LessonAction>;
}

const RUN = { seed: 1n, now: 1700000000n, trace: true };
const LOD = 24;

/** The fs tree and the log tree side by side; a crash point the learner moves along the scenario, then the replay step by step, each action highlighted in both trees and labelled with its pass. */
export function LogReplayView({ core, script = '', image, reducedMotion, state, dispatch }: LogReplayViewProps) {
  const lines = useMemo(() => script.replace(/\n*$/, '').split('\n').filter((l) => !/^\s*crash\s*$/.test(l)), [script]);
  const points = useMemo(() => (image ? [] : crashPoints(lines)), [lines, image]);
  // one run of the scenario, kept by the worker: a crash point is a checkpoint of it plus a power cut
  const runScript = useMemo(() => lines.join('\n') + '\n', [lines]);
  const { data, step, fsAt, fsAtStep, logTree, fsTree, error } = state;
  // the crash point chosen (from the slider or the address bar) when it is one of this script's, else the last
  const at = state.at !== null && points.includes(state.at) ? state.at : points[points.length - 1] ?? lines.length;
  const cache = useRef(new Map<number, TreeDump>());
  // every write of the run is a crash point too (wasm-core/src/crash.h): the ones of line `at` refine it
  const [writes, setWrites] = useState<{ script: string; points: CrashPoint[] } | null>(null);
  useEffect(() => {
    let live = true;
    if (image) return;
    core.call({ op: 'crashPoints', script: runScript, opts: RUN }).then((points) => live && setWrites({ script: runScript, points }), () => {});
    return () => {
      live = false;
    };
  }, [core, runScript, image]);
  const lineWrites = useMemo(() => (writes?.script === runScript ? writes.points.filter((p) => p.line === at) : []), [writes, runScript, at]);
  // inside the line: after write `w` of it (its last, or none: the whole line)
  const w = state.write !== null && state.write >= 1 && state.write < lineWrites.length ? state.write : null;
  const point = w !== null ? lineWrites[w - 1] : null;
  const seq = point?.seq;

  useEffect(() => {
    let live = true;
    (image ? core.call({ op: 'imageReplay', handle: image.handle, maxLeafEntries: LOD })
      : core.call({ op: 'crashReplay', script: runScript, opts: RUN, line: at, seq, maxLeafEntries: LOD })).then(
      (r) => {
        if (!live) return;
        const steps = replaySteps(r.events);
        cache.current = new Map([[0, r.before], [steps.length, r.after]]);
        dispatch({ type: 'replayRun', at, before: r.before, after: r.after, steps });
      },
      (e: Error) => live && !(e instanceof CancelledError) && dispatch({ type: 'replayFailed', message: e.message }),
    );
    return () => {
      live = false;
    };
  }, [core, runScript, at, seq, image, dispatch]);

  const download = () => {
    core.call({ op: 'crashImage', script: runScript, opts: RUN, line: at, seq }).then(({ blob }) => {
      saveBlob(`crash-line${at}${w !== null ? `-write${w}` : ''}.img`, blob);
    }, (e: Error) => !(e instanceof CancelledError) && dispatch({ type: 'replayError', message: e.message }));
  };

  // the fs tree after `step` replay actions, from the core (the replay stops there)
  useEffect(() => {
    if (!data || fsAtStep === step) return;
    const have = cache.current.get(step);
    if (have) {
      dispatch({ type: 'replayFs', step, dump: have });
      return;
    }
    let live = true;
    (image ? core.call({ op: 'imageReplayStateAt', handle: image.handle, steps: step, maxLeafEntries: LOD })
      : core.call({ op: 'replayStateAt', script: runScript, opts: RUN, line: at, seq, steps: step, maxLeafEntries: LOD })).then(
      (d) => {
        cache.current.set(step, d);
        if (live) dispatch({ type: 'replayFs', step, dump: d });
      },
      (e: Error) => live && !(e instanceof CancelledError) && dispatch({ type: 'replayError', message: e.message }),
    );
    return () => {
      live = false;
    };
  }, [core, data, step, fsAtStep, runScript, at, seq, image, dispatch]);

  const cur = data && step > 0 ? data.steps[step - 1] : null;
  // the log leaf holding the action's item (by key range: a leaf drawn with its middle folded holds it too), marked, and the item in it when drawn
  const { logMarks, logFocus } = useMemo(() => {
    const m = new Map<string, Mark>();
    if (!data || !cur) return { logMarks: m, logFocus: null };
    const tr = data.before.trees.find((x) => x.name === logTree);
    const leaf = tr && leafHolding(tr.blocks, cur.action.key);
    if (!leaf) return { logMarks: m, logFocus: null };
    m.set(leaf.bytenr.toString(), 'touched');
    const [o, t, off] = cur.action.key;
    const item = leaf.entries.find((e) => e.key.objectid === o && e.key.type === t && e.key.offset === off);
    return { logMarks: m, logFocus: item ? { bytenr: leaf.bytenr.toString(), slot: item.slot } : null };
  }, [data, cur, logTree]);
  const changes = useMemo(() => (cur ? itemChanges(cur, 5n) : null), [cur]);
  // the files' names, from the fs tree and log before replay and the fs tree after it: "inode 257 (/a)"
  const paths = useMemo(() => (data ? inodePaths([data.before, data.after]) : undefined), [data]);
  const passes = useMemo(() => (data ? passStarts(data.steps) : []), [data]);
  const fsMarks = useMemo(() => {
    const all = marksFor((cur?.events ?? []).filter((e) => 'tree' in e && e.tree === 5n));
    const own = new Set(fsAt?.trees.find((t) => t.name === fsTree)?.blocks.map((b) => b.bytenr.toString()) ?? []);
    return new Map([...all].filter(([b]) => own.has(b)));
  }, [cur, fsAt, fsTree]);

  const total = data?.steps.length ?? 0;
  const hasLog = !!data?.before.trees.some((t) => t.name === 'log');
  return (
    <section className="panel replay-view" aria-labelledby="replay-h">
      <h3 id="replay-h">{image ? `Log replay: ${image.name}` : 'Crash and log replay'}</h3>
      {image ? (
        <p>This image holds a log no mount has replayed yet: step through the replay a mount would do. The image itself is left as it is (the replay runs on a copy).</p>
      ) : points.length === 0 ? (
        <p>This scenario has no fsync: a crash would leave only the last commit, with no log to replay.</p>
      ) : (
        <div className="replay-controls">
          <label>
            Crash after line <output aria-live="polite">{at}</output>
            <input type="range" aria-label="Crash point" min={points[0]} max={points[points.length - 1]} value={at}
              onChange={(e) => dispatch({ type: 'crashAt', at: Number(e.target.value) })} />
          </label>
          <code className="crash-line" title="the last line that ran">{lines[at - 1]}</code>
          {lineWrites.length > 1 ? (
            <label>
              Inside it: after write <output aria-live="polite">{w ?? lineWrites.length}</output> of {lineWrites.length}
              <input type="range" aria-label="Crash after write" min={1} max={lineWrites.length} value={w ?? lineWrites.length}
                onChange={(e) => { const v = Number(e.target.value); dispatch({ type: 'crashWrite', write: v >= lineWrites.length ? null : v }); }} />
            </label>
          ) : null}
          <p className="crash-write" data-testid="crash-write">
            {lineWrites.length === 0 ? 'This line writes nothing to the device: a crash during it leaves what the lines before left.'
              : `Crash ${describeCrashPoint(point ?? lineWrites[lineWrites.length - 1])}${point ? ', in the middle of the line: the writes after it never happen.' : ', the line\'s last write.'}`}
          </p>
          <button type="button" onClick={download}>Download this crash image</button>
          <AskKernel core={core} script={runScript} opts={RUN} line={at} seq={seq} what="this crash point" />
        </div>
      )}
      {error && <p className="error" role="alert">{error}</p>}
      {data && (
        <>
          <div className="replay-steps" role="group" aria-label="Replay steps">
            <button type="button" onClick={() => dispatch({ type: 'replayStep', step: 0 })} disabled={step === 0}>Before replay</button>
            <button type="button" aria-label="Previous replay step" onClick={() => dispatch({ type: 'replayStep', step: step - 1 })} disabled={step === 0}>◀</button>
            <input type="range" aria-label="Replay step" min={0} max={total} value={step} onChange={(e) => dispatch({ type: 'replayStep', step: Number(e.target.value) })} />
            <button type="button" aria-label="Next replay step" onClick={() => dispatch({ type: 'replayStep', step: step + 1 })} disabled={step >= total}>▶</button>
            <button type="button" onClick={() => dispatch({ type: 'replayStep', step: total })} disabled={step >= total}>After replay</button>
            <span className="step-count">{step} / {total}</span>
          </div>
          {passes.length > 0 && (
            <div className="replay-passes" role="group" aria-label="Jump to a pass">
              <span className="hint">Passes:</span>
              {passes.map((p) => (
                <button key={p.pass} type="button" className={cur?.action.pass === p.pass ? 'pass-on' : undefined} aria-pressed={cur?.action.pass === p.pass}
                  onClick={() => dispatch({ type: 'replayStep', step: p.first })}>{p.pass} ({p.count})</button>
              ))}
            </div>
          )}
          <p className="step-text" role="status" aria-live="polite">
            {!hasLog ? (image ? 'This image has no pending log: a mount finds nothing to replay.' : 'No log at this crash point: the last commit is all there is (the fsyncs before it committed, or nothing was logged).')
              : step === 0 ? `The image as the ${image ? 'power cut' : 'crash'} left it: the last commit, and the log that fsync wrote. Replay has ${total} actions.`
              : <><span className={`pass pass-${cur!.action.pass.replace(' ', '-')}`}>{cur!.action.pass}</span> {cur!.action.action}: {replaySaid(cur!.action, paths)}.
                {' '}<span className="means">{replayMeans(cur!.action)}</span></>}
          </p>
          {changes && (changes.added.length + changes.changed.length + changes.removed.length > 0) && (
            <ul className="item-changes" aria-label="Items this action changed in the fs tree">
              {changes.added.map((k) => <li key={`a${keyText(k)}`} className="added">added <code>({keyText(k)})</code></li>)}
              {changes.changed.map((k) => <li key={`c${keyText(k)}`} className="changed">changed <code>({keyText(k)})</code></li>)}
              {changes.removed.map((k) => <li key={`r${keyText(k)}`} className="removed">removed <code>({keyText(k)})</code></li>)}
            </ul>
          )}
          <div className="side-by-side">
            <div className="side" aria-label="The log, as the crash left it" role="region">
              <h4>Log tree (written by fsync)</h4>
              {hasLog && <TreeExplorer dump={data.before} marks={logMarks} treeName={logTree} onTreeName={(name) => dispatch({ type: 'logTree', name })} reducedMotion={reducedMotion} label="Tree explorer: the log" focusItem={logFocus} />}
            </div>
            <div className="side" aria-label="The fs tree during replay" role="region">
              <h4>fs tree {step === 0 ? 'at the crash' : step >= total ? 'after replay (committed)' : `after ${step} replay action${step === 1 ? '' : 's'}`}</h4>
              {fsAt && <TreeExplorer dump={fsAt} marks={fsMarks} treeName={fsTree} onTreeName={(name) => dispatch({ type: 'fsTree', name })} reducedMotion={reducedMotion} label="Tree explorer: the fs tree during replay" />}
            </div>
          </div>
        </>
      )}
    </section>
  );
}
