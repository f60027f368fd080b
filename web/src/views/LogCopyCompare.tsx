// Before and after seed 000's change, side by side: the lesson's scenario run
// twice, full fsyncs copying fs leaves through a clone allocated under the
// leaf's read lock (before) and through one extent buffer allocated before
// locking anything (after); the creators' create latency, the fsyncers'
// fsync latency, and the time creators waited for tree locks, summed over
// the run's timed sections from their timelines; the seed's own bonnie++
// latencies beside.
import { useEffect, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { LeafLocksSeed } from '../lessons';
import { LOG_COPIES, LOG_COPY_LABEL, lockContention, withLogCopy, type LockContention, type LogCopy } from '../model/logCopyModes';
import { formatNs } from '../model/units';

const RUN = { seed: 1n, now: 1700000000n, trace: true };

interface ModeRun {
  figures: LockContention;
  virtualNs: number;
  /** The fs leaves the logged fsyncs copied from, and how many fsyncs logged (metrics timed.logLeaves). */
  leaves: { fsyncs: number; cloned: number };
}

const times = (before: number, after: number) => (!before || !after ? '' : before >= after ? `${(before / after).toFixed(1)}× less` : `${(after / before).toFixed(1)}× more`);

export function LogCopyCompare({ core, script, seed }: { core: CoreClient; script: string; seed?: LeafLocksSeed }) {
  const [runs, setRuns] = useState<Record<LogCopy, ModeRun> | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    setError(null);
    setRuns(null);
    Promise.all(LOG_COPIES.map(async (m) => {
      const { text } = withLogCopy(script, m);
      const r = await core.call({ op: 'runSteps', script: text, opts: RUN });
      const timed = r.steps.filter((s) => s.kinds.has('task_new'));
      const tls = await Promise.all(timed.map((s) => core.call({ op: 'timeline', script: text, opts: RUN, index: s.index })));
      const ll = r.metrics.timed?.logLeaves;
      return { figures: lockContention(tls), virtualNs: r.metrics.timed?.virtualNs ?? 0, leaves: { fsyncs: ll?.fsyncs ?? 0, cloned: ll?.cloned ?? 0 } };
    })).then(([clone, prealloc]) => live && setRuns({ clone, prealloc }), (e: Error) => live && !(e instanceof CancelledError) && setError(e.message));
    return () => {
      live = false;
    };
  }, [core, script]);

  const f = (m: LogCopy) => runs![m].figures;
  const row = (label: string, get: (m: LogCopy) => number, testid: string) => {
    const [b, a] = LOG_COPIES.map(get);
    return <tr key={label} data-testid={testid}><td>{label}</td><td>{formatNs(b)}</td><td>{formatNs(a)}</td><td>{times(b, a)}</td></tr>;
  };
  // the fs leaves a logged fsync copies from: the same in both modes; what differs is the allocations they cost under a lock
  const leavesRow = (l: ModeRun['leaves']) => {
    const per = l.fsyncs ? l.cloned / l.fsyncs : 0;
    return (
      <tr data-testid="leaves-per-fsync">
        <td>fs leaves a logged fsync copies from ({l.fsyncs} fsyncs logged)</td>
        <td>{per.toFixed(1)}: each cloned, an extent buffer allocated under its read lock</td>
        <td>{per.toFixed(1)}: each copied through the one buffer allocated before any lock</td>
        <td>{l.cloned} allocations under a lock before, none after</td>
      </tr>
    );
  };
  return (
    <section className="panel log-copy-compare" aria-labelledby="log-copy-h">
      <h3 id="log-copy-h">Before and after: where the copy's extent buffer is allocated</h3>
      {error && <p className="error" role="alert">{error}</p>}
      {!runs && !error && <p className="hint" role="status">Running the scenario in both modes…</p>}
      {runs && (
        <>
          <p className="hint">
            The scenario run twice, every <code>set log_copy=</code> line set to each mode: {LOG_COPIES.map((m) => `${m} (${LOG_COPY_LABEL[m].toLowerCase()})`).join('; ')}.
            Creators: {f('clone').creators.join(', ') || 'none'} (threads that create and never fsync); fsyncers: {f('clone').fsyncers.join(', ') || 'none'}.
            Percentiles by nearest rank, over every timed section.
          </p>
          <div className="table-scroll" role="region" aria-label="Latencies and lock waits in both modes (scrolls sideways)" tabIndex={0}>
            <table className="metrics" aria-label="Latencies and lock waits in both modes">
              <thead><tr><th>over the run</th><th>before: clone under the read lock</th><th>after: preallocated</th><th>after vs before</th></tr></thead>
              <tbody>
                {row(`creators' create, p50 (${f('clone').create.n} creates)`, (m) => f(m).create.p50, 'create-p50')}
                {row("creators' create, p99", (m) => f(m).create.p99, 'create-p99')}
                {row(`fsyncers' fsync, p50 (${f('clone').fsync.n} fsyncs)`, (m) => f(m).fsync.p50, 'fsync-p50')}
                {row("fsyncers' fsync, p99", (m) => f(m).fsync.p99, 'fsync-p99')}
                {row('creators waiting for locks (tree blocks, their directory), in all', (m) => f(m).creatorLockWaitNs, 'creator-lock-wait')}
                {row('any task waiting for memory (direct reclaim), in all', (m) => f(m).memoryWaitNs, 'memory-wait')}
                {row('simulated time', (m) => runs[m].virtualNs, 'virtual-time')}
                {leavesRow(runs.clone.leaves)}
              </tbody>
            </table>
          </div>
        </>
      )}
      {seed && (
        <div className="table-scroll" role="region" aria-label={`The seed's measurement: ${seed.experiment} (scrolls sideways)`} tabIndex={0}>
          <table className="metrics" aria-label="The seed's bonnie++ latencies">
            <caption>The seed's measurement ({seed.source}): {seed.experiment}</caption>
            <thead><tr><th>bonnie++ latency</th><th>before</th><th>after</th><th>change</th></tr></thead>
            <tbody>{seed.table.map((r) => (
              <tr key={`${r.phase} ${r.op}`}><td>{r.phase}: {r.op}</td><td>{formatNs(r.before * 1000)}</td><td>{formatNs(r.after * 1000)}</td><td>{(((r.after - r.before) / r.before) * 100).toFixed(1)}%</td></tr>
            ))}</tbody>
          </table>
        </div>
      )}
    </section>
  );
}
