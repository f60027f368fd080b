// The lesson's timelines (lesson 3): each step's, asked of the worker once per
// run, and the player's "Next wait" over them (a question first, as a step
// forward asks).
import { useCallback, useRef, type Dispatch, type MutableRefObject } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { RunOptions } from '../core/wasm';
import type { Lesson } from '../lessons';
import { moveTo, stepIndex, type LessonAction, type LessonState } from '../model/lessonStore';
import type { Timeline } from '../model/timeline';
import { findNextWait } from '../model/timelineNav';

export function useTimelines(core: CoreClient, ran: string, opts: RunOptions, lesson: Lesson, stateRef: MutableRefObject<LessonState>, dispatch: Dispatch<LessonAction>) {
  const cache = useRef<{ ran: string; byStep: Map<number, Promise<Timeline>> }>({ ran, byStep: new Map() });
  const timelineOf = useCallback((i: number): Promise<Timeline> => {
    if (cache.current.ran !== ran) cache.current = { ran, byStep: new Map() }; // a new run: the old one's are gone
    const byStep = cache.current.byStep;
    let p = byStep.get(i);
    if (!p) {
      p = core.call({ op: 'timeline', script: ran, opts, index: i });
      p.catch(() => byStep.delete(i));
      byStep.set(i, p);
    }
    return p;
  }, [core, ran, opts]);

  const nextWait = useCallback(() => {
    const s = stateRef.current;
    findNextWait(s.steps, stepIndex(s), s.lens === 'timeline' ? s.moment : null, timelineOf).then((to) => {
      const cur = stateRef.current;
      if (!to || cur.steps !== s.steps) return;
      const ask = moveTo(cur, lesson.questions, cur.ran === lesson.scenario, to.step);
      if (ask.type === 'ask') return dispatch(ask);
      dispatch({ type: 'lens', lens: 'timeline' });
      dispatch({ type: 'moment', step: to.step, moment: to.moment });
    }, (e: Error) => !(e instanceof CancelledError) && dispatch({ type: 'failed', message: e.message }));
  }, [lesson, timelineOf, stateRef, dispatch]);

  return { timelineOf, nextWait };
}
