// The time model's cost table (wasm-core/src/costs.c, through
// blab_costs_json): what each unit of work costs in virtual time and where
// the figure comes from, and the device profiles `set device=` picks.
import { useEffect, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { CostTable as Costs } from '../core/wasm';
import { formatNs } from '../model/units';

export function CostTable({ core }: { core: CoreClient }) {
  const [t, setT] = useState<Costs | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    core.call({ op: 'costs' }).then((c) => live && setT(c), (e: Error) => live && !(e instanceof CancelledError) && setError(e.message));
    return () => {
      live = false;
    };
  }, [core]);
  return (
    <section className="panel cost-table" aria-labelledby="costs-h">
      <h3 id="costs-h">The model's costs, and where each comes from</h3>
      {error && <p className="error" role="alert">{error}</p>}
      {t && (
        <>
          <p className="hint">Each can be changed in a scenario: <code>set cost.KEY=DURATION</code> (the lesson slows <code>finish_csum</code>); <code>set device=NAME</code> picks a device.</p>
          <div className="table-scroll" role="region" aria-label="Costs (scrolls sideways)" tabIndex={0}>
            <table className="metrics costs" aria-label="Costs">
              <thead><tr><th>key</th><th>work</th><th>cost</th><th>per</th><th>source</th></tr></thead>
              <tbody>{t.costs.map((c) => (
                <tr key={c.key}><td><code>{c.key}</code></td><td>{c.name}</td><td>{formatNs(c.ns)}</td><td>{c.unit}</td><td className="source">{c.source}</td></tr>
              ))}</tbody>
            </table>
          </div>
          <div className="table-scroll" role="region" aria-label="Devices (scrolls sideways)" tabIndex={0}>
            <table className="metrics costs" aria-label="Devices">
              <thead><tr><th>device</th><th>CPUs</th><th>CPU time</th><th>queue</th><th>write latency</th><th>bandwidth</th><th>flush</th><th>slow flushes</th><th>FUA</th><th>idle wake</th><th>log waiter wake</th><th>source</th></tr></thead>
              <tbody>{t.devices.map((d) => (
                <tr key={d.name}><td>{d.name}</td><td>{d.cpus}</td><td>{d.cpuPct}%</td><td>{d.queueDepth}</td><td>{formatNs(d.writeLatencyNs)}</td><td>{(d.bandwidth / 1e6).toFixed(0)} MB/s</td>
                  <td>{formatNs(d.flushNs)}</td><td>{d.flushTailPpm ? `${(d.flushTailPpm / 1e4).toFixed(2)}% take ${formatNs(d.flushTailNs)}` : '-'}</td><td>{formatNs(d.fuaNs)}</td><td>{formatNs(d.idleWakeNs)}</td><td>{formatNs(d.logWakeNs)}</td>
                  <td className="source">{d.source}</td></tr>
              ))}</tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
