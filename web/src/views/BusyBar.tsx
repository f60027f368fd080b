// What the core is doing, once it has taken a moment: the request, the time
// it has taken, and a Cancel button (the worker is restarted). Past the
// watchdog's limit it says why that may be, and moves focus to Cancel.
import { useEffect, useRef, useState } from 'react';
import type { Busy, CoreClient } from '../core/client';

export const SHOW_AFTER_MS = 300;
export const LONG_MS = 20_000;

const WHAT: Partial<Record<Busy['op'], string>> = {
  open: 'Opening the image', dump: 'Reading the trees', trace: 'Reading the trace', traceRun: 'Running the scenario', runSteps: 'Running the scenario', stepView: 'Stepping the scenario', stateAt: 'Stepping the scenario', stateAtEvent: 'Stepping the scenario', sessionStats: 'Counting',
  run: 'Running the scenario', metrics: 'Counting', mkfs: 'Formatting', export: 'Writing the image', crashReplay: 'Replaying the log',
  replayStateAt: 'Replaying the log', ls: 'Listing the directory', cat: 'Reading the file', check: 'Checking the filesystem',
};

export interface BusyView {
  text: string; // "Opening the image… 1.2 s"
  long: boolean; // past the watchdog's limit
}

/** What the bar shows at time now (performance.now()), or null while the core is idle or has only just started. */
export function busyView(busy: Busy | null, now: number): BusyView | null {
  if (!busy) return null;
  const ms = Math.max(0, now - busy.since);
  if (ms < SHOW_AFTER_MS) return null;
  return { text: `${WHAT[busy.op] ?? `Working (${busy.op})`}… ${(ms / 1000).toFixed(1)} s`, long: ms >= LONG_MS };
}

export function BusyBar({ core }: { core: CoreClient }) {
  const [busy, setBusy] = useState<Busy | null>(() => core.busy());
  const [now, setNow] = useState(() => performance.now());
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => core.onBusy(setBusy), [core]);
  useEffect(() => {
    if (!busy) return undefined;
    setNow(performance.now());
    const t = setInterval(() => setNow(performance.now()), 100);
    return () => clearInterval(t);
  }, [busy]);
  const view = busyView(busy, now);
  const long = view?.long ?? false;
  useEffect(() => {
    if (long) cancel.current?.focus();
  }, [long]);
  if (!view) return null;
  return (
    <div className="busybar" data-testid="busybar">
      <span>{view.text}</span>{' '}
      <button type="button" ref={cancel} onClick={() => core.cancel()}>Cancel</button>
      {long && (
        <span className="hint" role="alert">
          This is taking long: the image may be hostile, or too big for the page. Cancel stops it and restarts the core.
        </span>
      )}
    </div>
  );
}
