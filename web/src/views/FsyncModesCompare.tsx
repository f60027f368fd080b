// Before and after seed 003's change, side by side: the lesson's scenario
// run twice, every fsync waiting for its ordered extents (before 5.10) and
// for writeback only (since), one of its timed sections drawn for each, its
// fsyncs' latencies in a table and a chart, and the runs' figures.
import { useEffect, useMemo, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { ScenarioMetrics } from '../core/wasm';
import { change, FSYNC_WAIT_LABEL, FSYNC_WAITS, withFsyncWait, type FsyncWait } from '../model/fsyncModes';
import type { StepInfo } from '../model/steps';
import type { OpSpan, Timeline } from '../model/timeline';
import { frameAt } from '../model/timelineFrame';
import { formatNs } from '../model/units';
import { BarChart } from './PairedBars';
import type { BarChartSpec } from './barChart';
import { TimelineCanvas } from './TimelineCanvas';

const RUN = { seed: 1n, now: 1700000000n, trace: true };

interface ModeRun {
  text: string;
  steps: StepInfo[];
  metrics: ScenarioMetrics;
}

type LatencyRow = { label: string; before: number; after: number };

/** Each fsync's latency (µs) in the two modes, one scale. */
const LATENCY: BarChartSpec<LatencyRow> = {
  width: 520, pad: 30, top: 8, rowHeight: 40, barX: 150, barHeight: 12, textDy: 12, room: 520 - 280,
  scale: (rows, room) => {
    const max = Math.max(1, ...rows.map((r) => Math.max(r.before, r.after)));
    return (v) => (v / max) * room;
  },
  label: (r) => r.label,
  series: [
    { cls: 'ordered', dy: 0, value: (r) => r.before, text: (r) => `${formatNs(r.before)} before 5.10` },
    { cls: 'writeback', dy: 15, value: (r) => r.after, text: (r) => `${formatNs(r.after)} since 5.10` },
  ],
};

const fsyncsOf = (tl: Timeline | undefined) => (tl?.ops ?? []).filter((o): o is OpSpan & { end: NonNullable<OpSpan['end']> } => o.op === 'fsync' && !!o.end);

export function FsyncModesCompare({ core, script, reducedMotion }: { core: CoreClient; script: string; reducedMotion: boolean }) {
  const [runs, setRuns] = useState<Record<FsyncWait, ModeRun> | null>(null);
  const [section, setSection] = useState(0);
  const [timelines, setTimelines] = useState<Partial<Record<FsyncWait, Timeline>>>({});
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    setError(null);
    setRuns(null);
    Promise.all(FSYNC_WAITS.map(async (m) => {
      const { text } = withFsyncWait(script, m);
      const r = await core.call({ op: 'runSteps', script: text, opts: RUN });
      return { text, steps: r.steps, metrics: r.metrics };
    })).then(([ordered, writeback]) => live && setRuns({ ordered, writeback }), (e: Error) => live && !(e instanceof CancelledError) && setError(e.message));
    return () => {
      live = false;
    };
  }, [core, script]);

  // the timed sections: the steps where tasks ran (the same steps in both runs: the lines are the same)
  const sections = useMemo(() => (runs ? runs.writeback.steps.filter((s) => s.kinds.has('task_new')) : []), [runs]);
  const chosen = sections[Math.min(section, sections.length - 1)];
  useEffect(() => {
    if (!runs || !chosen) return;
    let live = true;
    Promise.all(FSYNC_WAITS.map((m) => core.call({ op: 'timeline', script: runs[m].text, opts: RUN, index: chosen.index }))).then(
      ([ordered, writeback]) => live && setTimelines({ ordered, writeback }),
      (e: Error) => live && !(e instanceof CancelledError) && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [core, runs, chosen]);

  const longest = Math.max(1, ...FSYNC_WAITS.map((m) => (timelines[m] ? timelines[m]!.t1 - timelines[m]!.t0 : 0)));
  const rows: (LatencyRow & { line: number })[] = fsyncsOf(timelines.writeback).map((a) => {
    const b = fsyncsOf(timelines.ordered).find((o) => o.line === a.line && o.task === a.task);
    return { line: a.line, label: `${a.text} (line ${a.line})`, before: b ? b.end.at - b.start.at : 0, after: a.end.at - a.start.at };
  });
  const t = (m: FsyncWait) => runs?.[m].metrics.timed;
  return (
    <section className="panel fsync-compare" aria-labelledby="fsync-compare-h">
      <h3 id="fsync-compare-h">Before and after: what a fast fsync waits for</h3>
      {error && <p className="error" role="alert">{error}</p>}
      {!runs && !error && <p className="hint" role="status">Running the scenario in both modes…</p>}
      {runs && sections.length === 0 && <p className="hint">This scenario runs no threads: nothing to time.</p>}
      {runs && sections.length > 0 && (
        <>
          <label className="section-pick">Section{' '}
            <select value={Math.min(section, sections.length - 1)} onChange={(e) => setSection(Number(e.target.value))}>
              {sections.map((s, i) => <option key={s.index} value={i}>line {s.line}: {s.command}</option>)}
            </select>
          </label>
          <div className="side-by-side">
            {FSYNC_WAITS.map((m) => {
              const tl = timelines[m];
              // one time scale for both: each from its start, as long as the longer
              return (
                <div key={m} className="side" data-mode={m}>
                  <h4>{FSYNC_WAIT_LABEL[m]}</h4>
                  {tl && <TimelineCanvas timeline={tl} frame={frameAt(tl, null)} label={`Line ${chosen.line}, ${m === 'ordered' ? 'before 5.10' : 'since 5.10'}`} minWidth={420}
                    timeWindow={[tl.t0, tl.t0 + longest]} />}
                </div>
              );
            })}
          </div>
          <div className="table-scroll" role="region" aria-label="fsync latencies in both modes (scrolls sideways)" tabIndex={0}>
            <table className="metrics" aria-label="fsync latencies in both modes">
              <thead><tr><th>fsync</th><th>before 5.10</th><th>since 5.10</th><th>change</th></tr></thead>
              <tbody>{rows.map((r) => (
                <tr key={r.label}><td>{r.label}</td><td>{formatNs(r.before)}</td><td>{formatNs(r.after)}</td><td>{r.before ? `${change(r.before, r.after).toFixed(1)}%` : ''}</td></tr>
              ))}</tbody>
            </table>
          </div>
          {rows.length > 0 && <BarChart spec={LATENCY} rows={rows} reducedMotion={reducedMotion} className="cost-chart fsync-chart" label="fsync latency before and after the change" />}
          <div className="table-scroll" role="region" aria-label="The whole run in both modes (scrolls sideways)" tabIndex={0}>
            <table className="metrics" aria-label="The whole run in both modes">
              <thead><tr><th>the whole run</th><th>before 5.10</th><th>since 5.10</th></tr></thead>
              <tbody>
                <tr><td>simulated time</td><td>{formatNs(t('ordered')?.virtualNs ?? 0)}</td><td>{formatNs(t('writeback')?.virtualNs ?? 0)}</td></tr>
                <tr><td>fsync, mean</td><td>{formatNs(t('ordered')?.ops.fsync?.meanNs ?? 0)}</td><td>{formatNs(t('writeback')?.ops.fsync?.meanNs ?? 0)}</td></tr>
                <tr><td>fsyncs that logged an extent in flight</td><td>{t('ordered')?.fsyncsLoggingInFlight ?? 0}</td><td>{t('writeback')?.fsyncsLoggingInFlight ?? 0}</td></tr>
                <tr><td>waiting for ordered extents</td><td>{formatNs(t('ordered')?.waitedNs['ordered extent'] ?? 0)}</td><td>{formatNs(t('writeback')?.waitedNs['ordered extent'] ?? 0)}</td></tr>
                <tr><td>waiting for writeback</td><td>{formatNs(t('ordered')?.waitedNs.writeback ?? 0)}</td><td>{formatNs(t('writeback')?.waitedNs.writeback ?? 0)}</td></tr>
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
