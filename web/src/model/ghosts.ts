// The blocks a COW replaced since the last commit: they are still on disk,
// holding the last committed tree, until the commit that frees them. The
// explorer draws them faded behind their copies ("on disk, generation N"),
// so the learner sees the committed tree survive beside the new one, and the
// commit drop them.
import type { Step } from './steps';
import type { TraceEvent } from './trace';

export interface Ghost {
  /** The replaced block, still on disk. */
  bytenr: bigint;
  level: number;
  /** Its generation: the commit it belongs to. */
  generation: bigint;
  /** Its copy, which the ghost is drawn behind. */
  copy: bigint;
}

/**
 * The ghosts of tree at a point of the run: after step `index` (its whole
 * events) or, when `seq` is given, right after that event of the step. COWs
 * since the last commit before that point, in that tree.
 */
export function ghostsAt(steps: Step[], index: number, tree: bigint, seq: number | null = null): Ghost[] {
  const found: Ghost[] = [];
  for (let i = Math.min(index, steps.length - 1); i >= 0; i--) {
    const events: TraceEvent[] = steps[i].events;
    for (let k = events.length - 1; k >= 0; k--) {
      const e = events[k];
      if (i === index && seq !== null && e.seq > seq) continue;
      if (e.kind === 'commit') return found.reverse();
      if (e.kind === 'cow' && e.tree === tree) found.push({ bytenr: e.from, level: e.level, generation: e.fromGeneration, copy: e.to });
    }
  }
  return found.reverse();
}
