// The views a lesson can declare in its lesson.json, by name. The tree
// explorer and the player are every lesson's; the others are drawn below
// them, in the manifest's order.
import type { Dispatch, ReactElement } from 'react';
import type { CoreClient } from '../core/client';
import type { Lesson } from '../lessons';
import type { LessonAction, ReplayState } from '../model/lessonStore';
import type { Choice } from '../model/schedule';
import type { Lens, StepInfo } from '../model/steps';
import type { Timeline } from '../model/timeline';
import { CompareView } from './CompareView';
import { LocksLesson } from './LocksLesson';
import { LogReplayView } from './LogReplayView';
import { RelocationLesson } from './RelocationLesson';
import { SnapshotsLesson } from './SnapshotsLesson';
import { SpaceLesson } from './SpaceLesson';
import { TimelineLesson } from './TimelineLesson';

/** The player as a view sees it: the steps, the one on show and its moment (the event's seq), whose moments it steps through, each step's timeline (asked of the worker once). */
export interface PlayerContext {
  steps: StepInfo[];
  index: number;
  /** The event the player stopped at (null: the step's end) and its index among the lens's moments. */
  momentSeq: number | null;
  momentIndex: number | null;
  lens: Lens;
  timelineOf: (index: number) => Promise<Timeline>;
}

/** What a lesson's extra view is given: the core, the script last run, the lesson, and the lesson's store (its part of the state, and dispatch). */
export interface LessonViewContext {
  core: CoreClient;
  script: string;
  lesson: Lesson;
  reducedMotion: boolean;
  replay: ReplayState;
  dispatch: Dispatch<LessonAction>;
  player: PlayerContext;
  /** Choose mode: the picks (null: off), whether a run is under way, and a new choice to run (null: back to the policy). */
  choose: ChooseContext;
}

export interface ChooseContext {
  choice: Choice | null;
  running: boolean;
  onChoose: (c: Choice | null) => void;
}

export const VIEWS: Record<string, ((c: LessonViewContext) => ReactElement) | null> = {
  tree: null, // drawn by the lesson itself, with the player
  replay: (c) => <LogReplayView core={c.core} script={c.script} reducedMotion={c.reducedMotion} state={c.replay} dispatch={c.dispatch} />,
  timeline: (c) => <TimelineLesson core={c.core} script={c.script} reducedMotion={c.reducedMotion} player={c.player} dispatch={c.dispatch}
    seed={c.lesson.seed?.id === '003' ? c.lesson.seed : undefined} />,
  locks: (c) => <LocksLesson core={c.core} script={c.script} player={c.player} dispatch={c.dispatch} choose={c.choose} seed={c.lesson.seed?.id === '000' ? c.lesson.seed : undefined} />,
  space: (c) => <SpaceLesson core={c.core} script={c.script} reducedMotion={c.reducedMotion} player={c.player} dispatch={c.dispatch} seed={c.lesson.seed?.id === '002' ? c.lesson.seed : undefined} />,
  shared: (c) => <SnapshotsLesson core={c.core} script={c.script} player={c.player} />,
  relocation: (c) => <RelocationLesson core={c.core} script={c.script} player={c.player} seed={c.lesson.seed?.id === '004' ? c.lesson.seed : undefined} />,
  compare: (c) => <CompareView core={c.core} script={c.script} reducedMotion={c.reducedMotion} seed={c.lesson.seed?.id === '001' ? c.lesson.seed : undefined} />,
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
