// The space story of the step on show (lesson 5), at a moment: the gauge of
// each space_info, the tickets waiting, the reclaim worker's flush states lit
// as it walks them, and the last delalloc flush with each inode's dirty pages
// draining. The step's space moments are asked of the worker once
// (model/space.ts reads them there); the panel steps through them on its own
// (a step of an untar holds thousands), and follows the player when it
// stops at an event. The state after the step can be exported and mounted.
import { useMemo, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { RunOptions } from '../core/wasm';
import { momentAtSeq, nextMoment, SPACES, spaceFrame, gaugeOf, type Counters, type SpaceMomentKind, type SpaceName, type SpaceStep } from '../model/space';
import { formatNs } from '../model/units';
import type { PlayerContext } from './registry';
import { saveStateImage } from './saveBlob';
import { frameSaid, formatSize } from './space.sentences';
import { DelallocFlush, FlushLadders, SpaceGauges, TicketQueues } from './spaceParts';
import { useMomentCursor, useStepStory } from './useStepStory';
import './space.css';

export interface SpacePanelProps {
  core: CoreClient;
  script: string;
  opts: RunOptions;
  player: PlayerContext;
  /** Each space_info's counters at the end of the run (the metrics'), for the final commit's step. */
  endCounters: Partial<Record<SpaceName, Counters>> | null;
}

/** The step in one sentence: its tickets and their wait, the worker's states, the delalloc flushes. */
function summary(step: SpaceStep): string {
  const f = spaceFrame(step, null);
  const t = f.totals;
  if (!t.tickets && !f.ladders.length) return 'No reservation waited in this step.';
  const runs = f.ladders.map((l) => `the ${l.space} reclaim worker ran ${l.rungs.reduce((n, r) => n + r.runs, 0).toLocaleString('en')} flush states`);
  const took = step.t0 !== null && step.t1 !== null ? `; the step took ${formatNs(step.t1 - step.t0)}` : '';
  return `${t.tickets.toLocaleString('en')} tickets (${t.failed ? `${t.failed} failed with ENOSPC` : 'all granted'}), waited for ${formatNs(t.waitNs)} in all; ${runs.join(', ') || 'no reclaim worker ran'}; ` +
    `${t.passes} delalloc flushes wrote ${t.pagesWritten.toLocaleString('en')} pages (${formatSize(t.pagesWritten * 4096)}) of ${t.inodesWritten.toLocaleString('en')} inodes${took}.`;
}

export function SpacePanel({ core, script, opts, player, endCounters }: SpacePanelProps) {
  const { steps, index, momentSeq } = player;
  const step = steps[index];
  const { story: sp, error: storyError } = useStepStory(core, { op: 'space', script, opts, index });
  const [otherError, setError] = useState<string | null>(null); /* a picture or an export that failed */
  const error = storyError ?? otherError;
  // the panel's own place among the step's moments (null: the step's end); the player's event moves it
  const [at, setAt] = useMomentCursor<SpaceStep>(sp, momentSeq, momentAtSeq);
  const frame = useMemo(() => (sp ? spaceFrame(sp, at) : null), [sp, at]);
  const names = sp?.names ?? {};
  const name = (task: number) => names[task] ?? `task ${task}`;
  const n = sp?.moments.length ?? 0;
  const here = at ?? n - 1;
  const go = (i: number | null) => setAt(i === null || i >= n - 1 ? null : Math.max(-1, i));
  // from the step's end a jump goes to the first of its kind: the step's end is where the panel starts
  const jump = (kinds: SpaceMomentKind[]) => {
    if (!sp) return;
    const to = nextMoment(sp, at ?? -1, kinds);
    if (to >= 0) go(to);
  };
  const canJump = (kinds: SpaceMomentKind[]) => !!sp && nextMoment(sp, at ?? -1, kinds) >= 0;

  // the final commit's step: the run's end as its metrics report every space_info
  const gauges = step?.final && endCounters ? SPACES.filter((s) => endCounters[s]).map((s) => gaugeOf(s, endCounters[s]!)) : frame?.gauges ?? [];
  const missing = SPACES.filter((s) => s !== 'system' && !gauges.some((g) => g.space === s));

  const download = async () => {
    try {
      await saveStateImage(core, script, opts, step?.line ?? 0);
    } catch (e) {
      if (!(e instanceof CancelledError)) setError((e as Error).message);
    }
  };


  return (
    <section className="panel space-panel" aria-labelledby="space-h">
      <h3 id="space-h">Space: the gauges, the tickets and the reclaim worker</h3>
      {error && <p className="error" role="alert">{error}</p>}
      {!sp && !error && <p className="hint" role="status">Reading the step's space events…</p>}
      {sp && frame && (
        <>
          <p className="space-summary" data-testid="space-summary">Line {step?.line ?? 0}{step?.final ? ' (the final commit)' : ''}: {summary(sp)}</p>
          {n > 0 && (
            <div className="space-nav" role="group" aria-label="Space events">
              <button type="button" onClick={() => go(here - 1)} disabled={here < 0}>Previous space event</button>
              <button type="button" onClick={() => go(here + 1)} disabled={here >= n - 1}>Next space event</button>
              <button type="button" className="jump" onClick={() => jump(['ticket'])} disabled={!canJump(['ticket'])}>Next ticket</button>
              <button type="button" className="jump" onClick={() => jump(['shrink'])} disabled={!canJump(['shrink'])}>Next delalloc flush</button>
              <button type="button" className="jump" onClick={() => go(null)} disabled={at === null}>The step's end</button>
              <label className="space-scrub">
                <span>Space event {here + 1} of {n}{at === null ? ' (the step\'s end)' : ''}</span>
                <input type="range" min={0} max={n} value={here + 1} aria-label="Space event" onChange={(e) => go(Number(e.target.value) - 1)} />
              </label>
            </div>
          )}
          <ul className="space-said" aria-live="polite" data-testid="space-said">
            {(frameSaid(frame, name).length ? frameSaid(frame, name) : [n ? 'Before the step\'s first space event.' : 'No space event in this step.']).map((t) => <li key={t}>{t}</li>)}
          </ul>
          <div className="space-grid">
            <div>
              <h4>space_info gauges</h4>
              {step?.final && endCounters ? <p className="hint">After the final commit, as the run's metrics report them.</p>
                : n === 0 && gauges.length > 0 ? <p className="hint">Nothing was reported in this step: the counters as last reported, in an earlier step.</p> : null}
              <SpaceGauges gauges={gauges} missing={missing} />
              <h4>Tickets</h4>
              <TicketQueues queues={frame.queues} name={name} any={frame.totals.tickets > 0} />
            </div>
            <div>
              <h4>Flush states</h4>
              <FlushLadders ladders={frame.ladders} />
            </div>
          </div>
          <h4>Delalloc flush</h4>
          <DelallocFlush pass={frame.pass?.pass ?? null} at={frame.pass?.at ?? null} fresh={frame.pass?.fresh ?? false} />
        </>
      )}
      <p className="export-state">
        <button type="button" onClick={() => void download()} disabled={!step || step.final || step.line === 0}>Export this state</button>{' '}
        <span className="hint">The image right after this step's line (what a power cut then leaves): mount it with <code>sudo mount -o loop FILE /mnt</code>, or ask the kernel above.</span>
      </p>
    </section>
  );
}
