// The worker's live runs: one session (a run kept with its checkpoints,
// wasm-core/src/checkpoint.h) per script, so that stepping, crash points
// and replays start from the nearest checkpoint instead of running the
// script again. The few most recently used are kept; older ones are closed.
// A session's steps (runs.ts) are kept with it and closed with it.
import { RunSteps } from './runs';
import type { Core, Handle, RunOptions } from './wasm';

interface Live {
  handle: Handle;
  steps?: RunSteps;
}

/** What makes two runs of a script the same run: its text and the options that change its bytes. */
export const runKey = (script: string, o: RunOptions): string => `${o.seed}:${o.now}:${script}`;

export class Sessions {
  private readonly live = new Map<string, Live>(); // oldest first

  constructor(private readonly core: Core, private readonly max = 3) {}

  /** The session of script (run now, with its trace, unless it is live). */
  get(script: string, o: RunOptions): Handle {
    return this.entry(script, o).handle;
  }

  /** The steps of script's session: its trace grouped once, here in the worker. */
  steps(script: string, o: RunOptions): RunSteps {
    const e = this.entry(script, o);
    return (e.steps ??= new RunSteps(this.core.trace(e.handle), script.split('\n'), this.core.sessionStats(e.handle).commandEvents));
  }

  private entry(script: string, o: RunOptions): Live {
    const key = runKey(script, o);
    const have = this.live.get(key);
    if (have !== undefined) {
      this.live.delete(key);
      this.live.set(key, have);
      return have;
    }
    const e: Live = { handle: this.core.session(script, { ...o, trace: true }) };
    this.live.set(key, e);
    for (const [k, old] of this.live) {
      if (this.live.size <= this.max) break;
      this.live.delete(k);
      this.core.close(old.handle);
    }
    return e;
  }

  /** How many are live (tests). */
  get size(): number {
    return this.live.size;
  }
}
