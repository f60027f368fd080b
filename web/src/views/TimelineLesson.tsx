// The "timeline" view a lesson declares (lesson 3): the step's timeline
// under the player, then before and after (the scenario in both fsync_wait
// modes, and the seed's fio experiment when the lesson follows seed 003),
// and the time model's cost table.
import type { Dispatch } from 'react';
import type { CoreClient } from '../core/client';
import type { FsyncWaitSeed } from '../lessons';
import type { LessonAction } from '../model/lessonStore';
import { CostTable } from './CostTable';
import { FioCompare } from './FioCompare';
import { FsyncModesCompare } from './FsyncModesCompare';
import type { PlayerContext } from './registry';
import { TimelinePanel } from './TimelinePanel';

const RUN = { seed: 1n, now: 1700000000n, trace: true };

export interface TimelineLessonProps {
  core: CoreClient;
  script: string;
  reducedMotion: boolean;
  player: PlayerContext;
  dispatch: Dispatch<LessonAction>;
  seed?: FsyncWaitSeed;
}

export function TimelineLesson({ core, script, reducedMotion, player, dispatch, seed }: TimelineLessonProps) {
  return (
    <>
      {player.steps.length > 0 && <TimelinePanel core={core} script={script} opts={RUN} player={player} dispatch={dispatch} />}
      <FsyncModesCompare core={core} script={script} reducedMotion={reducedMotion} />
      {seed && <FioCompare core={core} seed={seed} reducedMotion={reducedMotion} />}
      <CostTable core={core} />
    </>
  );
}
