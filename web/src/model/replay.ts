// Log replay as a learner steps it: crash points along a scenario, the
// script a crash after a line keeps, and a replay's events grouped by action.
import type { TraceEvent } from './trace';

type ReplayEvent = Extract<TraceEvent, { kind: 'replay' }>;

/** One replay action and the fs-tree changes it made. */
export interface ReplayStep {
  action: ReplayEvent;
  events: TraceEvent[];
}

/** Groups a replay's events: each replay action with the changes after it. */
export function replaySteps(events: TraceEvent[]): ReplayStep[] {
  const out: ReplayStep[] = [];
  for (const e of events) {
    if (e.kind === 'replay') out.push({ action: e, events: [e] });
    else if (out.length) out[out.length - 1].events.push(e);
  }
  return out;
}

/** The lines a crash after line `at` (1-based) keeps, with the crash. */
export function crashScript(lines: string[], at: number): string {
  return [...lines.slice(0, at), 'crash'].join('\n') + '\n';
}

/** Lines after which a crash is worth showing: after a fsync up to the end. */
export function crashPoints(lines: string[]): number[] {
  const first = lines.findIndex((l) => /^\s*fsync\s/.test(l));
  if (first < 0) return [];
  const out: number[] = [];
  for (let i = first; i < lines.length; i++) if (lines[i].trim() && !/^\s*(#|crash\b)/.test(lines[i])) out.push(i + 1);
  return out;
}
