import { useEffect, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { FsyncMetrics } from '../core/wasm';
import type { DirLoggingSeed } from '../lessons';
import { MODES, pct, seedScript, withMode, type Mode } from '../model/modes';
import { BarChart } from './PairedBars';
import type { BarChartSpec } from './barChart';
import { CompareLogs } from './CompareLogs';

export interface CompareViewProps {
  core: CoreClient;
  script: string;
  reducedMotion: boolean;
  /** The lesson's seed (lesson.json): its experiment is run against its published table. */
  seed?: DirLoggingSeed;
}

const RUN = { seed: 1n, now: 1700000000n, trace: false };
async function fsyncsOf(core: CoreClient, script: string, mode: Mode): Promise<FsyncMetrics[]> {
  const { text, at } = withMode(script, mode);
  const { handle } = await core.call({ op: 'run', script: text, opts: RUN });
  try {
    // line numbers of the learner's script, not of the one with the inserted line
    return (await core.call({ op: 'metrics', handle })).fsyncs.map((f) => ({ ...f, line: at !== null && f.line > at ? f.line - 1 : f.line }));
  } finally {
    await core.call({ op: 'close', handle });
  }
}

type CostRow = { label: string; legacy: number; indexOnly: number };
type SeedRow = { label: string; seed: number; model: number };

/** Bars of each fsync's modelled cost in the two modes (one scale: the largest cost). */
const COST: BarChartSpec<CostRow> = {
  width: 520, pad: 40, top: 10, rowHeight: 44, barX: 110, barHeight: 13, textDy: 13, room: 520 - 230,
  scale: (rows, room) => {
    const max = Math.max(1, ...rows.map((r) => Math.max(r.legacy, r.indexOnly)));
    return (v) => (v / max) * room;
  },
  label: (r) => r.label,
  series: [
    { cls: 'legacy', dy: 0, value: (r) => r.legacy, text: (r) => `${r.legacy.toFixed(0)} µs legacy` },
    { cls: 'index-only', dy: 16, value: (r) => r.indexOnly, text: (r) => `${r.indexOnly.toFixed(0)} µs index-only` },
  ],
};

/** The seed's measured change beside the model's, per experiment and phase (percent, capped at 100). */
const SEED: BarChartSpec<SeedRow> = {
  width: 520, pad: 30, top: 8, rowHeight: 40, barX: 150, barHeight: 12, textDy: 12, room: 520 - 260,
  scale: (_rows, room) => (v) => (Math.min(100, Math.abs(v)) / 100) * room,
  label: (r) => r.label,
  series: [
    { cls: 'seed', dy: 0, value: (r) => r.seed, text: (r) => `${r.seed.toFixed(1)}% measured (seed)` },
    { cls: 'model', dy: 15, value: (r) => r.model, text: (r) => `${r.model.toFixed(1)}% modelled` },
  ],
};

/** The same scenario in both directory logging modes side by side, charted, and the seed's experiment against its published table. */
export function CompareView({ core, script, reducedMotion, seed }: CompareViewProps) {
  const table = seed?.table ?? [];
  const [res, setRes] = useState<Record<Mode, FsyncMetrics[]> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [shown, setShown] = useState<Mode>('index-only');
  const [seedRows, setSeedRows] = useState<Record<number, { create: number; delete: number; items: [number, number] }>>({});
  const [busy, setBusy] = useState<number | null>(null);

  useEffect(() => {
    let live = true;
    setError(null);
    Promise.all(MODES.map((m) => fsyncsOf(core, script, m))).then(
      ([legacy, indexOnly]) => live && setRes({ legacy, 'index-only': indexOnly }),
      (e: Error) => live && !(e instanceof CancelledError) && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [core, script]);

  const runSeed = async (n: number, d: number) => {
    setBusy(n);
    try {
      const [legacy, indexOnly] = await Promise.all(MODES.map((m) => fsyncsOf(core, seedScript(n, d), m)));
      setSeedRows((s) => ({ ...s, [n]: { create: pct(indexOnly[0].cost_us, legacy[0].cost_us), delete: pct(indexOnly[1].cost_us, legacy[1].cost_us),
        items: [legacy[0].items_total, indexOnly[0].items_total] } }));
    } catch (e) {
      if (!(e instanceof CancelledError)) setError((e as Error).message);
    } finally {
      setBusy(null);
    }
  };

  const rows = res ? res.legacy.map((l, i) => ({ label: `fsync, line ${l.line}`, legacy: l.cost_us, indexOnly: res['index-only'][i]?.cost_us ?? 0 })) : [];
  const cur = res?.[shown] ?? [];
  return (
    <section className="panel compare-view" aria-labelledby="compare-h">
      <h3 id="compare-h">Before and after: legacy and index-only directory logging</h3>
      {error && <p className="error" role="alert">{error}</p>}
      {res && (
        <>
          <div role="radiogroup" aria-label="Directory logging mode" className="mode-switch">
            {MODES.map((m) => (
              <button key={m} type="button" role="radio" aria-checked={shown === m} onClick={() => setShown(m)}>
                {m === 'legacy' ? 'Before the change (DIR_ITEM + DIR_INDEX)' : 'After the change (DIR_INDEX only)'}
              </button>
            ))}
          </div>
          <div className="table-scroll" role="region" aria-label={`fsyncs, ${shown} (scrolls sideways)`} tabIndex={0}>
          <table className="metrics" aria-label={`fsyncs, ${shown}`}>
            <thead><tr><th>fsync</th><th>result</th><th>items logged</th><th>leaves</th><th>bytes</th><th>cost (µs)</th><th>vs other mode</th></tr></thead>
            <tbody>
              {cur.map((f, i) => {
                const other = res[shown === 'legacy' ? 'index-only' : 'legacy'][i];
                return (
                  <tr key={f.line}>
                    <td>line {f.line}</td><td>{f.result}</td>
                    <td title={Object.entries(f.items).map(([k, v]) => `${k} ${v}`).join(', ')}>{f.items_total}</td>
                    <td>{f.leaves}</td><td>{f.bytes}</td><td>{f.cost_us.toFixed(0)}</td>
                    <td>{other ? `${pct(f.cost_us, other.cost_us).toFixed(1)}%` : ''}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          </div>
          {rows.length > 0 && <BarChart spec={COST} rows={rows} reducedMotion={reducedMotion} className="cost-chart" label="Modelled fsync cost, legacy and index-only" />}
          {res.legacy.some((f) => f.result === 'logged') && (
            <CompareLogs core={core} script={script} reducedMotion={reducedMotion} lines={res.legacy.filter((f) => f.result === 'logged').map((f) => f.line)} />
          )}
        </>
      )}
      {seed && (<>
      <h4>The seed's experiment</h4>
      <p>{seed.experiment}. The kernel's times are the seed's; ours are the modelled cost of the same work in the core.</p>
      <div className="table-scroll" role="region" aria-label="The seed's table and the model (scrolls sideways)" tabIndex={0}>
      <table className="metrics seed-table" aria-label="The seed's table and the model">
        <thead><tr><th>N / D</th><th>seed: create</th><th>model: create</th><th>seed: delete</th><th>model: delete</th><th>run</th></tr></thead>
        <tbody>
          {table.map((r) => {
            const m = seedRows[r.n];
            return (
              <tr key={r.n}>
                <td>{r.n.toLocaleString('en')} / {r.d.toLocaleString('en')}</td>
                <td>{pct(r.create[1], r.create[0]).toFixed(1)}%</td>
                <td data-testid={`model-create-${r.n}`}>{m ? `${m.create.toFixed(1)}%` : ''}</td>
                <td>{pct(r.delete[1], r.delete[0]).toFixed(1)}%</td>
                <td>{m ? `${m.delete.toFixed(1)}%` : ''}</td>
                <td>{r.n <= 100000 && (
                  <button type="button" disabled={busy !== null} onClick={() => void runSeed(r.n, r.d)}>
                    {busy === r.n ? 'Running…' : `Run N=${r.n.toLocaleString('en')}`}
                  </button>
                )}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      </div>
      {Object.keys(seedRows).length > 0 && (
        <BarChart spec={SEED} className="cost-chart seed-chart" label="The seed's measured change and the model's" reducedMotion={reducedMotion} rows={table.filter((r) => seedRows[r.n]).flatMap((r) => [
          { label: `N=${r.n.toLocaleString('en')}, create`, seed: pct(r.create[1], r.create[0]), model: seedRows[r.n].create },
          { label: `N=${r.n.toLocaleString('en')}, delete`, seed: pct(r.delete[1], r.delete[0]), model: seedRows[r.n].delete },
        ])} />
      )}
      </>)}
    </section>
  );
}
