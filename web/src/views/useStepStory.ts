// A lesson panel's story of the step on show, read once in the worker, and
// the panel's own place among its moments, which the player's event moves:
// what the space (lesson 5) and shared-blocks (lesson 6) panels both need.
import { useEffect, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { Request, Results } from '../core/protocol';

type StoryOp = 'space' | 'shared' | 'relocation';

/** The step's story (null while the worker reads it) and the error, if reading it failed. */
export function useStepStory<Op extends StoryOp>(core: CoreClient, request: Extract<Request, { op: Op }>): {
  story: Results[Op] | null;
  error: string | null;
} {
  const key = JSON.stringify(request, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
  const [story, setStory] = useState<{ key: string; value: Results[Op] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setError(null);
    core.call(request).then((value) => live && setStory({ key, value: value as Results[Op] }),
      (e: Error) => live && !(e instanceof CancelledError) && setError(e.message));
    return () => {
      live = false;
    };
    // the request is what the key says
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [core, key]);
  return { story: story && story.key === key ? story.value : null, error };
}

/** The moment the panel is at in story (null: the step's end): where the player's event puts it, or where the panel moved it. */
export function useMomentCursor<S>(story: S | null, momentSeq: number | null, atSeq: (s: S, seq: number) => number | null) {
  const [cursor, setCursor] = useState<{ story: S; at: number | null } | null>(null);
  useEffect(() => {
    if (story && momentSeq !== null) setCursor({ story, at: atSeq(story, momentSeq) });
    // atSeq is a module function
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [story, momentSeq]);
  const at = cursor && cursor.story === story ? cursor.at : null;
  return [at, (at: number | null) => story && setCursor({ story, at })] as const;
}
