// The timeline of the player's current step, fetched from the core as the
// step changes (a stale answer for another step is dropped; a cancelled one
// is not an error); setError for the panel's own errors.
import { useEffect, useState } from 'react';
import { CancelledError } from '../core/client';
import type { Timeline } from '../model/timeline';
import type { PlayerContext } from './registry';

export function useStepTimeline(player: Pick<PlayerContext, 'index' | 'timelineOf'>) {
  const { index, timelineOf } = player;
  const [tl, setTl] = useState<{ index: number; timeline: Timeline } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    timelineOf(index).then((t) => live && setTl({ index, timeline: t }), (e: Error) => live && !(e instanceof CancelledError) && setError(e.message));
    return () => {
      live = false;
    };
  }, [index, timelineOf]);
  return { tl, timeline: tl?.timeline ?? null, error, setError };
}
