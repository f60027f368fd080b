// The relocation view's full mode (lesson 7): the blocks qgroup_swap=full
// traces come from the core's walks (qgroup_trace_subtree), which only a run
// in full mode makes. A step of a script in another mode gets them from the
// script run once more in full mode (the same blocks: the mode changes the
// qgroup records only), its swaps' walks kept by line, for the last script asked
// (or run in full mode by relocModes, whose trace gives them: not run again).
import { lineInMode, scriptInMode, swapWalksByLine, withFullWalks, type RelocStep, type SwapWalks } from '../model/relocation';
import type { RunSteps } from './runs';
import { runKey } from './sessions';
import type { TraceEvent } from '../model/trace';
import type { Core, RunOptions } from './wasm';

let last: { key: string; byLine: Map<number, SwapWalks[]> } | null = null;

/** A run of script in full mode done elsewhere (relocModes): its walks kept, so a step's story does not run it again. */
export function keepFullWalks(script: string, opts: RunOptions, trace: TraceEvent[]): void {
  last = { key: runKey(script, opts), byLine: swapWalksByLine(trace) };
}

/** The swaps' walks of script run in full mode, by line (run once per script and options). */
export function fullWalksByLine(core: Core, script: string, opts: RunOptions): Map<number, SwapWalks[]> {
  const key = runKey(script, opts);
  if (last?.key !== key) {
    const h = core.run(scriptInMode(script, 'full'), { ...opts, trace: true });
    try {
      last = { key, byLine: swapWalksByLine(core.trace(h)) };
    } finally {
      core.close(h);
    }
  }
  return last.byLine;
}

/** Step index's relocation story, its full-mode walks from a run in full mode when the script's own run is in another. */
export function relocationStory(core: Core, runs: RunSteps, script: string, opts: RunOptions, index: number): RelocStep {
  const story = runs.relocation(index);
  if (!story.moments.some((m) => m.kind === 'swap') || scriptInMode(script, 'full') === script) return story;
  return withFullWalks(story, fullWalksByLine(core, script, opts), lineInMode(script, runs.steps[index].line));
}
