// The views a lesson can declare in its lesson.json, by name. The tree
// explorer and the player are every lesson's; the others are drawn below
// them, in the manifest's order. The timeline, space and locking views of
// the lessons to come register here.
import type { Dispatch, ReactElement } from 'react';
import type { CoreClient } from '../core/client';
import type { Lesson } from '../lessons';
import type { LessonAction, ReplayState } from '../model/lessonStore';
import { CompareView } from './CompareView';
import { LogReplayView } from './LogReplayView';

/** What a lesson's extra view is given: the core, the script last run, the lesson, and the lesson's store (its part of the state, and dispatch). */
export interface LessonViewContext {
  core: CoreClient;
  script: string;
  lesson: Lesson;
  reducedMotion: boolean;
  replay: ReplayState;
  dispatch: Dispatch<LessonAction>;
}

export const VIEWS: Record<string, ((c: LessonViewContext) => ReactElement) | null> = {
  tree: null, // drawn by the lesson itself, with the player
  replay: (c) => <LogReplayView core={c.core} script={c.script} reducedMotion={c.reducedMotion} state={c.replay} dispatch={c.dispatch} />,
  compare: (c) => <CompareView core={c.core} script={c.script} reducedMotion={c.reducedMotion} seed={c.lesson.seed} />,
};

/** The lesson's views past the tree, or an error naming an unknown one. */
export function lessonViews(lesson: Lesson): { name: string; render: (c: LessonViewContext) => ReactElement }[] {
  const out: { name: string; render: (c: LessonViewContext) => ReactElement }[] = [];
  for (const name of lesson.views) {
    if (!Object.hasOwn(VIEWS, name)) throw new Error(`lessons/${lesson.id}/lesson.json: unknown view "${name}" (known: ${Object.keys(VIEWS).join(', ')})`);
    const render = VIEWS[name];
    if (render) out.push({ name, render });
  }
  return out;
}
