// The worker's live runs: one session (a run kept with its checkpoints,
// wasm-core/src/checkpoint.h) per script, so that stepping, crash points
// and replays start from the nearest checkpoint instead of running the
// script again. The few most recently used are kept; older ones are closed.
import type { Core, Handle, RunOptions } from './wasm';

export class Sessions {
  private readonly live = new Map<string, Handle>(); // oldest first

  constructor(private readonly core: Core, private readonly max = 3) {}

  /** The session of script (run now, with its trace, unless it is live). */
  get(script: string, o: RunOptions): Handle {
    const key = `${o.seed}:${o.now}:${script}`;
    const have = this.live.get(key);
    if (have !== undefined) {
      this.live.delete(key);
      this.live.set(key, have);
      return have;
    }
    const h = this.core.session(script, { ...o, trace: true });
    this.live.set(key, h);
    for (const [k, old] of this.live) {
      if (this.live.size <= this.max) break;
      this.live.delete(k);
      this.core.close(old);
    }
    return h;
  }

  /** How many are live (tests). */
  get size(): number {
    return this.live.size;
  }
}
