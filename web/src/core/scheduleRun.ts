// Choose mode's run, in the worker: the script with the learner's picks as
// `schedule` lines, run once more with its state kept even when it fails (a
// deadlock is what a learner may be looking for), told as the section's
// turns and its threads at the moment of the next choice (model/turns.ts),
// with the error that stopped it and a deadlock's cycle. Small and plain:
// it crosses to the page.
import { deadlockCycle, type DeadlockCycle } from '../model/deadlock';
import { namedInMessage } from '../model/names';
import { threadSections } from '../model/schedule';
import { groupSteps } from '../model/steps';
import { turnsAt, type TurnsView } from '../model/turns';
import { CORE_ERRNO, CoreError, errorName, type CoreErrorName } from './errors';
import type { Core, RunOptions } from './wasm';

/** Why a run stopped: the core's error as a value. */
export interface RunFailure {
  code: number;
  name: CoreErrorName;
  message: string;
}

export interface ScheduleRun extends TurnsView {
  failed: RunFailure | null;
  /** A deadlock's cycle (its deadlock_edge events), tasks by number: names has them. */
  cycle: DeadlockCycle | null;
}

const failure = (code: number, message: string): RunFailure => ({ code, name: errorName(code), message });

/** The run of script, seen in its section of threads number `section` after `picks` turns. */
export function scheduleRun(core: Core, script: string, opts: RunOptions, section: number, picks: number): ScheduleRun {
  const lines = script.split('\n');
  const sec = threadSections(lines).find((s) => s.number === section);
  if (!sec) throw new CoreError(CORE_ERRNO.EINVAL, `EINVAL: the script has no section of threads number ${section}`);
  const empty: TurnsView = { turns: [], at: picks, reached: picks === 0, atNs: 0, threads: [], names: [] };
  let h;
  try {
    h = core.run(script, { ...opts, trace: true, keepFailed: true });
  } catch (e) {
    if (!(e instanceof CoreError)) throw e;
    return { ...empty, failed: failure(e.code, e.message), cycle: null }; // it failed before a filesystem was made
  }
  try {
    const events = core.trace(h);
    const m = core.metrics(h);
    const step = groupSteps(events, lines).find((s) => !s.final && s.line === sec.first);
    const known = m.failed && Object.hasOwn(CORE_ERRNO, m.failed.code) ? (m.failed.code as keyof typeof CORE_ERRNO) : null;
    const failed: RunFailure | null = m.failed ? { code: known ? CORE_ERRNO[known] : 0, name: known ?? 'EUNKNOWN', message: namedInMessage(m.failed.message) } : null;
    return { ...(step ? turnsAt(step.events, sec, picks) : empty), failed, cycle: deadlockCycle(step?.events ?? events) };
  } finally {
    core.close(h);
  }
}
