// Before and after seed 002's change, side by side: the lesson's scenario run
// with every delalloc flush counting its budget in whole inodes (5.10, the
// regression) and in pages (5.11+, the fix), on the script's device and on
// the others; the untar's time, the tickets and their wait, the delalloc
// flushes and what they wrote, from each run's metrics; the slowdown charted
// against the seed's untar times, and the bytes each flush wrote.
import { useEffect, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { ReclaimSeed } from '../lessons';
import { compareDevices, pagesPerPass, reclaimFigures, scriptDevice, seedPairs, SHRINK_LABEL, SHRINK_MODES, slowdown, withShrink, type ReclaimFigures, type ShrinkModeName } from '../model/shrinkModes';
import { formatNs } from '../model/units';
import type { BarChartSpec } from './barChart';
import { BarChart } from './PairedBars';
import { formatSize } from './space.sentences';

const RUN = { seed: 1n, now: 1700000000n, trace: false };
const MACHINE: Record<string, string> = { nvme: 'NVMe', ssd: 'consumer SSD' };

type Runs = Record<string, Partial<Record<ShrinkModeName, ReclaimFigures>>>;
type TimeRow = { label: string; before: number; after: number; unit: 's' | 'ns' };
type BytesRow = { label: string; inodes: number; pages: number; passes: [number, number] };

const fmtTime = (v: number, unit: 's' | 'ns') => (unit === 's' ? `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} s` : formatNs(v));

/** Each pair's time after the fix as a share of its time before (before = 100). */
const TIME: BarChartSpec<TimeRow> = {
  width: 600, pad: 30, top: 8, rowHeight: 40, barX: 220, barHeight: 12, textDy: 12, room: 600 - 220 - 170,
  scale: (_rows, room) => (v) => (v / 100) * room,
  label: (r) => r.label,
  series: [
    { cls: 'inodes', dy: 0, value: () => 100, text: (r) => `${fmtTime(r.before, r.unit)} whole inodes` },
    { cls: 'pages', dy: 15, value: (r) => (100 * r.after) / r.before, text: (r) => `${fmtTime(r.after, r.unit)} pages: ${slowdown(r.before, r.after).toFixed(1)}× faster` },
  ],
};

/** Bytes a delalloc flush wrote, on average, in each mode. */
const BYTES: BarChartSpec<BytesRow> = {
  width: 600, pad: 30, top: 8, rowHeight: 40, barX: 120, barHeight: 12, textDy: 12, room: 600 - 120 - 230,
  scale: (rows, room) => {
    const max = Math.max(1, ...rows.map((r) => Math.max(r.inodes, r.pages)));
    return (v) => (v / max) * room;
  },
  label: (r) => r.label,
  series: [
    { cls: 'inodes', dy: 0, value: (r) => r.inodes, text: (r) => `${formatSize(r.inodes)} a flush, ${r.passes[0]} flushes (whole inodes)` },
    { cls: 'pages', dy: 15, value: (r) => r.pages, text: (r) => `${formatSize(r.pages)} a flush, ${r.passes[1]} flushes (pages)` },
  ],
};

export function ShrinkModesCompare({ core, script, seed, reducedMotion }: { core: CoreClient; script: string; seed?: ReclaimSeed; reducedMotion: boolean }) {
  const [runs, setRuns] = useState<Runs>({});
  const [error, setError] = useState<string | null>(null);
  const own = scriptDevice(script);
  const devices = compareDevices(script);

  useEffect(() => {
    let live = true;
    setError(null);
    setRuns({});
    (async () => {
      for (const device of compareDevices(script)) {
        for (const mode of SHRINK_MODES) {
          const { handle } = await core.call({ op: 'run', script: withShrink(script, mode, device), opts: RUN });
          try {
            const f = reclaimFigures(await core.call({ op: 'metrics', handle }));
            if (!live) return;
            setRuns((r) => ({ ...r, [device]: { ...r[device], [mode]: f } }));
          } finally {
            await core.call({ op: 'close', handle });
          }
        }
      }
    })().catch((e: Error) => live && !(e instanceof CancelledError) && setError(e.message));
    return () => {
      live = false;
    };
  }, [core, script]);

  const both = (d: string) => (runs[d]?.inodes && runs[d]?.pages ? (runs[d] as Record<ShrinkModeName, ReclaimFigures>) : null);
  const mine = both(own);
  const done = devices.filter((d) => both(d));
  const row = (label: string, get: (f: ReclaimFigures) => number, show: (v: number) => string, testid: string, ratio = true) => {
    const [b, a] = SHRINK_MODES.map((m) => get(mine![m]));
    return (
      <tr key={testid} data-testid={testid}><td>{label}</td><td>{show(b)}</td><td>{show(a)}</td>
        <td>{ratio && b && a ? (b >= a ? `${(b / a).toFixed(1)}× more before` : `${(a / b).toFixed(1)}× less before`) : ''}</td></tr>
    );
  };
  const pairs = seed ? seedPairs(seed.table) : [];
  const timeRows: TimeRow[] = [
    ...pairs.map((p) => ({ label: `seed, ${MACHINE[p.machine] ?? p.machine}: ${p.kernel}`, before: p.before, after: p.after, unit: 's' as const })),
    ...done.map((d) => ({ label: `model, ${d}`, before: both(d)!.inodes.untarNs, after: both(d)!.pages.untarNs, unit: 'ns' as const })),
  ];
  const bytesRows: BytesRow[] = done.map((d) => ({
    label: `model, ${d}`, inodes: pagesPerPass(both(d)!.inodes) * 4096, pages: pagesPerPass(both(d)!.pages) * 4096, passes: [both(d)!.inodes.passes, both(d)!.pages.passes],
  }));
  const n = (v: number) => v.toLocaleString('en');

  return (
    <section className="panel shrink-compare" aria-labelledby="shrink-h">
      <h3 id="shrink-h">Before and after: whole inodes or a budget of pages</h3>
      {error && <p className="error" role="alert">{error}</p>}
      {!mine && !error && <p className="hint" role="status">Running the scenario in both modes…</p>}
      {mine && (
        <>
          <p className="hint">
            The scenario run twice on its device ({own}), every <code>set shrink_delalloc=</code> line set to each mode: {SHRINK_MODES.map((m) => `${m} (${SHRINK_LABEL[m]})`).join('; ')}.
            {mine.inodes.files ? ` Its untars make ${n(mine.inodes.files)} files in all.` : ''}
          </p>
          <div className="table-scroll" role="region" aria-label="The untar in both modes (scrolls sideways)" tabIndex={0}>
            <table className="metrics" aria-label="The untar in both modes">
              <thead><tr><th>over the run</th><th>before: whole inodes (5.10)</th><th>after: pages (5.11+)</th><th>before vs after</th></tr></thead>
              <tbody>
                {row('untar time (writing, then syncfs)', (f) => f.untarNs, formatNs, 'untar-time')}
                {row('tickets', (f) => f.tickets, n, 'tickets')}
                {row('time tar waited on tickets, in all', (f) => f.ticketWaitNs, formatNs, 'ticket-wait')}
                {row('delalloc flushes (shrink_delalloc passes)', (f) => f.passes, n, 'passes')}
                <tr data-testid="budget"><td>median budget of a flush</td><td>{n(mine.inodes.budgetP50)} inodes</td><td>{n(mine.pages.budgetP50)} pages</td><td /></tr>
                {row('pages the flushes wrote', (f) => f.pages, (v) => `${n(v)} (${formatSize(v * 4096)})`, 'pages-written')}
                {row('pages a flush wrote, on average', pagesPerPass, (v) => v.toFixed(0), 'pages-per-pass')}
                {row('inodes the flushes wrote', (f) => f.inodes, n, 'inodes-written')}
              </tbody>
            </table>
          </div>
        </>
      )}
      {timeRows.length > 0 && (
        <>
          <h4>The untar's time, whole inodes against pages: the seed's kernels and the model</h4>
          <BarChart spec={TIME} rows={timeRows} reducedMotion={reducedMotion} className="cost-chart seed-chart time-chart"
            label={`Untar time before and after the fix: ${timeRows.map((r) => `${r.label}, ${fmtTime(r.before, r.unit)} then ${fmtTime(r.after, r.unit)}`).join('; ')}`} />
        </>
      )}
      {bytesRows.length > 0 && (
        <>
          <h4>What a delalloc flush wrote, on average</h4>
          <BarChart spec={BYTES} rows={bytesRows} reducedMotion={reducedMotion} className="cost-chart bytes-chart"
            label={`Bytes a delalloc flush wrote: ${bytesRows.map((r) => `${r.label}, ${formatSize(r.inodes)} with whole inodes, ${formatSize(r.pages)} with pages`).join('; ')}`} />
        </>
      )}
      {done.length === devices.length && pairs.length > 0 && (
        <p data-testid="model-limits">
          The model's untar is {done.map((d) => `${slowdown(both(d)!.inodes.untarNs, both(d)!.pages.untarNs).toFixed(1)}× slower on ${d}`).join(', ')} with whole inodes;
          the seed measured {pairs.map((p) => `${slowdown(p.before, p.after).toFixed(1)}× (${MACHINE[p.machine] ?? p.machine}, ${p.kernel})`).join(', ')}, and saw no slowdown on a disk.
        </p>
      )}
      {seed && (
        <div className="table-scroll" role="region" aria-label={`The seed's measurement: ${seed.experiment} (scrolls sideways)`} tabIndex={0}>
          <table className="metrics" aria-label="The seed's untar times">
            <caption>The seed's measurement ({seed.source}): {seed.experiment}</caption>
            <thead><tr><th>machine</th><th>kernel</th><th>delalloc flush</th><th>untar</th></tr></thead>
            <tbody>{seed.table.map((r) => (
              <tr key={`${r.machine} ${r.kernel} ${r.fix}`}><td>{MACHINE[r.machine] ?? r.machine}</td><td>{r.kernel}{r.fix ? ' + the fix' : ''}</td>
                <td>{r.shrink === 'inodes' ? 'whole inodes' : r.kernel === '5.9' ? 'pages, through the flusher' : 'pages'}</td><td>{fmtTime(r.seconds, 's')}</td></tr>
            ))}</tbody>
          </table>
        </div>
      )}
    </section>
  );
}
