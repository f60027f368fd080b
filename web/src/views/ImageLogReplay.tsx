import { useMemo, useReducer } from 'react';
import type { CoreClient } from '../core/client';
import type { Handle } from '../core/wasm';
import { initLesson, lessonReduce } from '../model/lessonStore';
import { LogReplayView } from './LogReplayView';

/** An opened image's pending log, replayed step by step as a scenario's crash is (the replay view's own state, kept here). */
export function ImageLogReplay({ core, handle, name, reducedMotion }: { core: CoreClient; handle: Handle; name: string; reducedMotion: boolean }) {
  const [state, dispatch] = useReducer(lessonReduce, { draft: '', ran: '', step: 0 }, initLesson);
  const image = useMemo(() => ({ handle, name }), [handle, name]); // one identity: the view's effects depend on it
  return <LogReplayView core={core} image={image} reducedMotion={reducedMotion} state={state.replay} dispatch={dispatch} />;
}
