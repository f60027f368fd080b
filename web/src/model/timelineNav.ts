// "Next wait" on the timeline: the next moment, in this step or a later one,
// at which a task starts to wait. At a step's end (no moment chosen) the
// search starts from that step's first event: the step as a whole is on
// show, its waits not yet visited one by one.
import type { StepInfo } from './steps';
import type { TimelineMoment } from './timeline';
import { nextWait } from './timelineFrame';

export type MomentsOf = (step: number) => Promise<{ moments: TimelineMoment[] }>;

/** The step and moment of the next wait after (step, moment), or null when there is none. */
export async function findNextWait(steps: StepInfo[], step: number, moment: number | null, momentsOf: MomentsOf): Promise<{ step: number; moment: number } | null> {
  for (let i = step; i < steps.length; i++) {
    if (!steps[i].kinds.has('task_wait')) continue;
    const from = i === step && moment !== null ? moment : -1;
    const k = nextWait((await momentsOf(i)).moments, from);
    if (k >= 0) return { step: i, moment: k };
  }
  return null;
}
