// The "space" view a lesson declares (lesson 5): the space story of the step
// under the player (the space_info gauges, the tickets, the reclaim worker's
// flush states, the delalloc flushes), the step's timeline when asked (tar's
// waits on tickets beside the reclaim workers' lanes: an untar's step is tens
// of thousands of events, seconds to draw), then before and after (the
// scenario with whole-inode and page budgets, against the seed's untar
// times), and the time model's cost table.
import { useEffect, useState, type Dispatch } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { ReclaimSeed } from '../lessons';
import type { LessonAction } from '../model/lessonStore';
import { SPACES, type Counters, type SpaceName } from '../model/space';
import { CostTable } from './CostTable';
import type { PlayerContext } from './registry';
import { ShrinkModesCompare } from './ShrinkModesCompare';
import { SpacePanel } from './SpacePanel';
import { TimelinePanel } from './TimelinePanel';

const RUN = { seed: 1n, now: 1700000000n, trace: true };

export interface SpaceLessonProps {
  core: CoreClient;
  script: string;
  reducedMotion: boolean;
  player: PlayerContext;
  dispatch: Dispatch<LessonAction>;
  seed?: ReclaimSeed;
}

/** The run's counters at its end (its metrics), for the final commit's step. */
function useEndCounters(core: CoreClient, script: string) {
  const [end, setEnd] = useState<{ script: string; counters: Partial<Record<SpaceName, Counters>> } | null>(null);
  useEffect(() => {
    let live = true;
    core.call({ op: 'runSteps', script, opts: RUN }).then(({ metrics }) => {
      const s = metrics.space;
      if (live && s) setEnd({ script, counters: Object.fromEntries(SPACES.map((k) => [k, s[k]])) });
    }, (e: Error) => { if (!(e instanceof CancelledError)) console.warn(e.message); });
    return () => {
      live = false;
    };
  }, [core, script]);
  return end?.script === script ? end.counters : null;
}

export function SpaceLesson({ core, script, reducedMotion, player, dispatch, seed }: SpaceLessonProps) {
  const endCounters = useEndCounters(core, script);
  const [timeline, setTimeline] = useState(false);
  return (
    <>
      {player.steps.length > 0 && <SpacePanel core={core} script={script} opts={RUN} player={player} endCounters={endCounters} />}
      {player.steps.length > 0 && (timeline
        ? <TimelinePanel core={core} script={script} opts={RUN} player={player} dispatch={dispatch} />
        : (
          <section className="panel" aria-labelledby="space-timeline-h">
            <h3 id="space-timeline-h">Timeline: tasks, the device and the page cache</h3>
            <p><button type="button" onClick={() => setTimeline(true)}>Draw the step's timeline</button>{' '}
              <span className="hint">tar's waits on tickets beside the reclaim workers' lanes, and below them the page cache of every file the step wrote: for an untar,
                a strip for each of its hundreds of files, a long panel that takes seconds to draw.</span></p>
          </section>
        ))}
      <ShrinkModesCompare core={core} script={script} seed={seed} reducedMotion={reducedMotion} />
      <CostTable core={core} />
    </>
  );
}
