// What the core is doing, once it has taken a moment: the request, the time
// it has taken, and a Cancel button (the worker is restarted). After a long
// while it says why that may be.
import { useEffect, useState } from 'react';
import type { Busy, CoreClient } from '../core/client';

const SHOW_AFTER_MS = 300;
export const LONG_MS = 20_000;

const WHAT: Partial<Record<Busy['op'], string>> = {
  open: 'Opening the image', dump: 'Reading the trees', traceRun: 'Running the scenario', stateAt: 'Running the scenario',
  mkfs: 'Formatting', export: 'Writing the image', crashReplay: 'Replaying the log', replayStateAt: 'Replaying the log',
};

export function BusyBar({ core }: { core: CoreClient }) {
  const [busy, setBusy] = useState<Busy | null>(() => core.busy());
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => core.onBusy(setBusy), [core]);
  useEffect(() => {
    if (!busy) return undefined;
    const t = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(t);
  }, [busy]);
  if (!busy || now - busy.since < SHOW_AFTER_MS) return null;
  const ms = now - busy.since;
  return (
    <div className="busybar" data-testid="busybar">
      <span aria-live="polite">{WHAT[busy.op] ?? `Working (${busy.op})`}… {(ms / 1000).toFixed(1)} s</span>{' '}
      <button type="button" onClick={() => core.cancel()}>Cancel</button>
      {ms > LONG_MS && <span className="hint"> This is taking long: the image may be hostile, or too big for the page.</span>}
    </div>
  );
}
