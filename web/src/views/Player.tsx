import { useEffect, useRef, type Dispatch } from 'react';
import type { LessonAction } from '../model/lessonStore';
import { nextStepWith, type StepInfo } from '../model/steps';
import type { TraceKind } from '../model/trace';

export interface PlayerProps {
  steps: StepInfo[];
  index: number;
  playing: boolean;
  speed: number;
  /** Moving to a step (a question may come first). */
  onIndex: (i: number) => void;
  /** Play, pause and speed go to the lesson's store. */
  dispatch: Dispatch<LessonAction>;
  reducedMotion: boolean;
  /** Event-level stepping: the moment on show in the step (null: the step's end), how many the step has, and a move by one event. */
  moment?: { index: number; count: number; sentence: string } | null;
  /** The step's sentence for the tree on screen (model/steps.ts treeSentence); the step's own when absent. */
  stepSentence?: string;
  onEvent?: (dir: 1 | -1) => void;
  /** Jumps of a lesson's own views (the timeline's "Next wait"), after the player's. */
  extraJumps?: { label: string; onClick: () => void; disabled?: boolean }[];
}

const JUMPS: [TraceKind, string][] = [['split', 'Next split'], ['cow', 'Next COW'], ['merge', 'Next merge'], ['commit', 'Next commit'], ['log_sync', 'Next log write']];

function typingIn(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
}

/** Step forward and back, play and pause at a speed, scrub, jump to the next event of a kind. */
export function Player({ steps, index, playing, speed, onIndex, dispatch, reducedMotion, moment = null, onEvent, stepSentence, extraJumps = [] }: PlayerProps) {
  const setPlaying = (p: boolean) => dispatch({ type: 'play', playing: p });
  const last = steps.length - 1;
  const step = steps[index];
  const go = useRef(onIndex);
  go.current = onIndex;
  const playingRef = useRef(playing);
  playingRef.current = playing;
  const byEvent = useRef(onEvent);
  byEvent.current = onEvent;

  useEffect(() => {
    if (!playing) return;
    if (index >= last) {
      dispatch({ type: 'play', playing: false });
      return;
    }
    const t = setTimeout(() => go.current(index + 1), reducedMotion ? 300 / speed : 1200 / speed);
    return () => clearTimeout(t);
  }, [playing, index, last, speed, reducedMotion, dispatch]);

  useEffect(() => {
    const onKey = (ev: KeyboardEvent) => {
      if (typingIn(ev.target) || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      if ((ev.target as HTMLElement | null)?.closest?.('[role="dialog"]')) return; // a question's own keys
      if ((ev.key === 'ArrowRight' || ev.key === 'ArrowLeft') && ev.shiftKey) {
        // Shift and an arrow: one event (the arrows alone: one line)
        ev.preventDefault();
        byEvent.current?.(ev.key === 'ArrowRight' ? 1 : -1);
      } else if (ev.key === 'ArrowRight') {
        ev.preventDefault();
        go.current(Math.min(last, index + 1));
      } else if (ev.key === 'ArrowLeft') {
        ev.preventDefault();
        go.current(Math.max(0, index - 1));
      } else if (ev.key === ' ' && (ev.target as HTMLElement)?.tagName !== 'BUTTON') {
        ev.preventDefault();
        dispatch({ type: 'play', playing: !playingRef.current });
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [index, last]);

  return (
    <section className="player" aria-label="Player">
      <div className="player-controls">
        <button type="button" onClick={() => onIndex(0)} disabled={index === 0} aria-label="First step">|◀</button>
        <button type="button" onClick={() => onIndex(Math.max(0, index - 1))} disabled={index === 0} aria-label="Step back">◀</button>
        <button type="button" onClick={() => setPlaying(!playing)} disabled={index >= last && !playing} aria-label={playing ? 'Pause' : 'Play'}>
          {playing ? 'Pause' : 'Play'}
        </button>
        <button type="button" onClick={() => onIndex(Math.min(last, index + 1))} disabled={index >= last} aria-label="Step forward">▶</button>
        <button type="button" onClick={() => onIndex(last)} disabled={index >= last} aria-label="Last step">▶|</button>
        <span className="event-steps" role="group" aria-label="Event by event (Shift and the arrow keys)">
          <button type="button" className="event" onClick={() => onEvent?.(-1)} disabled={!onEvent || (index === 0 && !moment)}
            aria-label="Previous event">◁ event</button>
          <button type="button" className="event" onClick={() => onEvent?.(1)} disabled={!onEvent || (index >= last && !moment)} aria-label="Next event">event ▷</button>
        </span>
        <label className="speed">
          Speed
          <select value={speed} onChange={(e) => dispatch({ type: 'speed', speed: Number(e.target.value) })}>
            {[0.5, 1, 2, 4].map((s) => <option key={s} value={s}>{s}×</option>)}
          </select>
        </label>
        {JUMPS.map(([kind, label]) => {
          const to = nextStepWith(steps, index, kind);
          return <button key={kind} type="button" className="jump" disabled={to < 0} onClick={() => onIndex(to)}>{label}</button>;
        })}
        {extraJumps.map((j) => <button key={j.label} type="button" className="jump" disabled={j.disabled} onClick={j.onClick}>{j.label}</button>)}
      </div>
      <label className="scrub">
        <span>Step {index} of {last}</span>
        <input type="range" min={0} max={last} value={index} aria-label="Step" onChange={(e) => onIndex(Number(e.target.value))} />
      </label>
      <p className="sentence" aria-live="polite" data-testid="sentence">
        {step ? (step.final ? 'After the last line, ' : step.line ? `Line ${step.line}, ` : 'Before the first command: ') : ''}
        {step && moment ? `${step.command}, event ${moment.index + 1} of ${moment.count}: ${moment.sentence}.` : step ? stepSentence ?? step.sentence : ''}
      </p>
    </section>
  );
}
