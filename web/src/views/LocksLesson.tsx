// The "locks" view a lesson declares (lesson 4): choose mode (the learner
// picks each turn of a section's threads), the step's timeline under the
// player (a lane per task: its waits for tree locks and for memory
// allocation), the tree locks at the same moment, then before and after (the
// scenario in both log_copy modes) and the time model's cost table.
import type { Dispatch } from 'react';
import type { CoreClient } from '../core/client';
import type { LeafLocksSeed } from '../lessons';
import type { LessonAction } from '../model/lessonStore';
import { ChooseThreads } from './ChooseThreads';
import { CostTable } from './CostTable';
import { LockPanel } from './LockPanel';
import { LogCopyCompare } from './LogCopyCompare';
import type { ChooseContext, PlayerContext } from './registry';
import { TimelinePanel } from './TimelinePanel';

const RUN = { seed: 1n, now: 1700000000n, trace: true };

export interface LocksLessonProps {
  core: CoreClient;
  script: string;
  player: PlayerContext;
  dispatch: Dispatch<LessonAction>;
  choose: ChooseContext;
  seed?: LeafLocksSeed;
}

export function LocksLesson({ core, script, player, dispatch, choose, seed }: LocksLessonProps) {
  return (
    <>
      <ChooseThreads core={core} script={script} choose={choose} />
      {player.steps.length > 0 && <TimelinePanel core={core} script={script} opts={RUN} player={player} dispatch={dispatch} />}
      {player.steps.length > 0 && <LockPanel player={player} />}
      <LogCopyCompare core={core} script={script} seed={seed} />
      <CostTable core={core} />
    </>
  );
}
