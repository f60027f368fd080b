// Seed 003's experiment against its published table: the seed's fio jobs
// (N writers, each its own file, an fsync every F writes) run in the core at
// a small size, on its NVMe profile, in both fsync_wait modes; the model's
// throughput beside the seed's, and both changes charted.
import { useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { FsyncWaitSeed } from '../lessons';
import { change, fioScript, FSYNC_WAITS, type FioRow } from '../model/fsyncModes';
import type { BarChartSpec } from './barChart';
import { BarChart } from './PairedBars';

const RUN = { seed: 1n, now: 1700000000n, trace: false };
/** Bytes each row writes in all (the seed wrote 8 to 32 GiB; the model's runs stay in the browser's memory). */
export const FIO_TOTAL = { write: 16 << 20, randwrite: 8 << 20 } as const;

type Model = { before: number; after: number };
type ChartRow = { label: string; seed: number; model: number };

const key = (r: FioRow) => `${r.rw}-${r.jobs}`;
const rowLabel = (r: FioRow) => `${r.jobs} job${r.jobs === 1 ? '' : 's'}, ${r.rw === 'write' ? 'sequential' : 'random'} ${r.bs}`;

/** The seed's change and the model's, in percent, on one scale: a loss drawn
 * left of the zero line, a gain right of it. */
const CHANGE: BarChartSpec<ChartRow> = {
  width: 560, pad: 30, top: 8, rowHeight: 40, barX: 190, barHeight: 12, textDy: 12, room: 560 - 330, signed: true,
  scale: () => (v) => v,
  label: (r) => r.label,
  series: [
    { cls: 'seed', dy: 0, value: (r) => r.seed, text: (r) => `${r.seed >= 0 ? '+' : ''}${r.seed.toFixed(1)}% measured (seed)` },
    { cls: 'model', dy: 15, value: (r) => r.model, text: (r) => `${r.model >= 0 ? '+' : ''}${r.model.toFixed(1)}% modelled` },
  ],
};

async function throughput(core: CoreClient, row: FioRow, mode: (typeof FSYNC_WAITS)[number]): Promise<number> {
  const { handle } = await core.call({ op: 'run', script: fioScript(row, mode, FIO_TOTAL[row.rw]), opts: RUN });
  try {
    return (await core.call({ op: 'metrics', handle })).timed?.throughputMiBs ?? 0;
  } finally {
    await core.call({ op: 'close', handle });
  }
}

export function FioCompare({ core, seed, reducedMotion }: { core: CoreClient; seed: FsyncWaitSeed; reducedMotion: boolean }) {
  const [model, setModel] = useState<Record<string, Model>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      for (const r of seed.table) {
        const [before, after] = [await throughput(core, r, 'ordered'), await throughput(core, r, 'writeback')];
        setModel((m) => ({ ...m, [key(r)]: { before, after } }));
      }
    } catch (e) {
      if (!(e instanceof CancelledError)) setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const mib = (v: number) => v.toFixed(1);
  const chart: ChartRow[] = seed.table.filter((r) => model[key(r)]).map((r) => ({ label: rowLabel(r), seed: r.change, model: change(model[key(r)].before, model[key(r)].after) }));
  return (
    <section className="panel fio-compare" aria-labelledby="fio-h">
      <h3 id="fio-h">The seed's experiment: fio throughput</h3>
      <p>{seed.experiment}. The seed's figures are {seed.source}'s ({seed.unit}, before → after the change). The model runs the same jobs on
        its NVMe profile at {FIO_TOTAL.write >> 20} MiB in all per sequential row and {FIO_TOTAL.randwrite >> 20} MiB per random row, in both modes, in this page.</p>
      <button type="button" onClick={() => void run()} disabled={busy}>{busy ? 'Running the model…' : 'Run the model\'s fio jobs'}</button>
      {error && <p className="error" role="alert">{error}</p>}
      <div className="table-scroll" role="region" aria-label="The seed's fio table and the model's (scrolls sideways)" tabIndex={0}>
        <table className="metrics seed-table" aria-label="The seed's fio table and the model's">
          <thead><tr><th>jobs</th><th>writes</th><th>seed: before → after</th><th>seed: change</th><th>model: before → after</th><th>model: change</th></tr></thead>
          <tbody>
            {seed.table.map((r) => {
              const m = model[key(r)];
              return (
                <tr key={key(r)}>
                  <td>{r.jobs}</td><td>{r.rw === 'write' ? 'sequential' : 'random'} {r.bs}, fsync={r.fsync}</td>
                  <td>{r.before} → {r.after}</td><td>{r.change >= 0 ? '+' : ''}{r.change}%</td>
                  <td data-testid={`model-${key(r)}`}>{m ? `${mib(m.before)} → ${mib(m.after)}` : ''}</td>
                  <td>{m ? `${change(m.before, m.after) >= 0 ? '+' : ''}${change(m.before, m.after).toFixed(1)}%` : ''}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {chart.length > 0 && <BarChart spec={CHANGE} rows={chart} reducedMotion={reducedMotion} className="cost-chart seed-chart fio-chart" label="Throughput change: the seed's measured and the model's" />}
    </section>
  );
}
