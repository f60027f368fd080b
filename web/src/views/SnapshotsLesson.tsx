// The "shared" view a lesson declares (lesson 6): the shared blocks of the
// step under the player (the subvolume trees as one figure, each block's
// references on disk and queued, the qgroups and what each commit accounted).
import type { CoreClient } from '../core/client';
import type { PlayerContext } from './registry';
import { SharedPanel } from './SharedPanel';

const RUN = { seed: 1n, now: 1700000000n, trace: true };

export interface SnapshotsLessonProps {
  core: CoreClient;
  script: string;
  player: PlayerContext;
}

export function SnapshotsLesson({ core, script, player }: SnapshotsLessonProps) {
  return player.steps.length > 0 ? <SharedPanel core={core} script={script} opts={RUN} player={player} /> : <></>;
}
