// The timeline of the step on show (lesson 3), cut at the player's moment:
// which moments the player steps through (the timeline's or the tree's), a
// slider over the step's events, a click on the lanes to seek to a time,
// what the frame shows in words, a legend, and the state exported as an
// image to mount.
import { useMemo, useState, type Dispatch } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { RunOptions } from '../core/wasm';
import type { LessonAction } from '../model/lessonStore';
import { frameAt, momentAt, type TimelineFrame } from '../model/timelineFrame';
import { formatNs } from '../model/units';
import type { PlayerContext } from './registry';
import { saveStateImage } from './saveBlob';
import { useStepTimeline } from './useStepTimeline';
import { TimelineCanvas } from './TimelineCanvas';
import { zoomWindow } from './timelineLayout';
import { oeLabel } from './timelinePages';

export interface TimelinePanelProps {
  core: CoreClient;
  script: string;
  opts: RunOptions;
  player: PlayerContext;
  dispatch: Dispatch<LessonAction>;
}

/** The frame told in a few sentences: each fsync's wait and return, the ordered extents in flight. */
function said(frame: TimelineFrame): string[] {
  const out: string[] = [];
  for (const o of frame.ops) {
    if (o.span.op !== 'fsync') continue;
    const what = o.waited && o.span.waited ? `waited for ${o.span.waited.what}` : 'has not finished waiting';
    out.push(`${o.span.text} (line ${o.span.line}): ${what}${o.logged.length ? `, logged ordered extent ${o.logged.join(', ')} in flight` : ''}${o.open ? '; still running' : `; returned after ${formatNs(o.end - o.span.start.at)}`}.`);
  }
  const flying = frame.ordered.filter((o) => o.phase !== 'complete');
  if (flying.length) out.push(`In flight: ${flying.map(oeLabel).join('; ')}.`);
  return out;
}

export function TimelinePanel({ core, script, opts, player, dispatch }: TimelinePanelProps) {
  const { steps, index, momentSeq, lens } = player;
  const step = steps[index];
  const { tl, timeline, error, setError } = useStepTimeline(player);
  // a zoom into the step's time (null: all of it), around the moment on show; a new step shows all
  const [zoom, setZoom] = useState<{ index: number; span: [number, number] } | null>(null);
  const zoomed = zoom && zoom.index === index ? zoom.span : null;
  const frame = useMemo(() => (timeline ? frameAt(timeline, tl!.index === index ? momentSeq : null) : null), [timeline, tl, index, momentSeq]);
  const moments = timeline?.moments ?? [];
  // the slider's place: the timeline moment at or before the player's event (the step's end: past the last)
  const at = momentSeq === null ? moments.length : Math.max(0, moments.indexOf(momentAt(moments, momentSeq)!));
  const seekMoment = (m: number) => {
    dispatch({ type: 'lens', lens: 'timeline' });
    dispatch({ type: 'moment', step: index, moment: m >= moments.length ? null : m });
  };
  const zoomBy = (factor: number) => {
    if (!timeline || !frame) return;
    const at = frame.cut !== null ? frame.now : zoomed ? (zoomed[0] + zoomed[1]) / 2 : (timeline.t0 + timeline.t1) / 2;
    const w = zoomWindow(timeline, zoomed, factor, at);
    setZoom(w ? { index, span: w } : null);
  };
  const onSeek = (ns: number) => {
    let k = -1;
    for (let i = 0; i < moments.length && moments[i].at <= ns; i++) k = i;
    if (k >= 0) seekMoment(k);
  };
  const download = async () => {
    try {
      await saveStateImage(core, script, opts, step?.line ?? 0);
    } catch (e) {
      if (!(e instanceof CancelledError)) setError((e as Error).message);
    }
  };


  return (
    <section className="panel timeline-panel" aria-labelledby="timeline-h">
      <h3 id="timeline-h">Timeline: tasks, the device and the page cache</h3>
      <div className="timeline-bar">
        <div role="radiogroup" aria-label="Event by event, step through" className="mode-switch">
          <span className="hint" aria-hidden="true">Event by event, step through</span>
          {(['timeline', 'tree'] as const).map((l) => (
            <button key={l} type="button" role="radio" aria-checked={lens === l} onClick={() => dispatch({ type: 'lens', lens: l })}>
              {l === 'timeline' ? 'the timeline\'s events' : 'the tree\'s events'}
            </button>
          ))}
        </div>
        {moments.length > 0 && (
          <label className="timeline-scrub">
            <span>Event {Math.min(at + 1, moments.length)} of {moments.length}{momentSeq === null ? ' (the step\'s end)' : ''}</span>
            <input type="range" min={0} max={moments.length} value={at} aria-label="Timeline event" onChange={(e) => seekMoment(Number(e.target.value))} />
          </label>
        )}
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      {timeline && frame && (
        <>
          {!timeline.timed && <p className="hint">No threads ran in this step: no time passed. {timeline.files.length ? 'Its page cache is below.' : ''}</p>}
          {timeline.truncated > 0 && <p className="hint">The first {timeline.moments.length.toLocaleString('en')} events are drawn; {timeline.truncated.toLocaleString('en')} more are left out.</p>}
          {(timeline.timed || timeline.files.length > 0) && (
            <TimelineCanvas timeline={timeline} frame={frame} label={`Timeline of line ${step?.line ?? 0}`} onSeek={timeline.timed ? onSeek : undefined} timeWindow={zoomed} />
          )}
          {timeline.timed && (
            <div className="timeline-zoom" role="group" aria-label="Zoom">
              <button type="button" onClick={() => zoomBy(0.25)}>Zoom in</button>
              <button type="button" onClick={() => zoomBy(4)} disabled={!zoomed}>Zoom out</button>
              <button type="button" onClick={() => setZoom(null)} disabled={!zoomed}>Show it all</button>
              <span className="hint">{zoomed ? `${formatNs(zoomed[0] - timeline.t0)} to ${formatNs(zoomed[1] - timeline.t0)} of ${formatNs(timeline.t1 - timeline.t0)}, around the event on show` : `all ${formatNs(timeline.t1 - timeline.t0)}; click the lanes to go to the event at that time`}</span>
            </div>
          )}
          {timeline.idleWorkers > 0 && <p className="hint">{timeline.idleWorkers} more endio-write worker{timeline.idleWorkers === 1 ? '' : 's'} had no work and are not drawn.</p>}
          <ul className="timeline-said" aria-live="polite" data-testid="timeline-said">{said(frame).map((t) => <li key={t}>{t}</li>)}</ul>
          <Legend />
        </>
      )}
      <p className="export-state">
        <button type="button" onClick={() => void download()} disabled={!step || step.final}>Export this state</button>{' '}
        <span className="hint">The image a power cut right after this step leaves (a log pending): mount it with <code>sudo mount -o loop FILE /mnt</code> and the kernel replays the log, or ask the kernel above.</span>
      </p>
    </section>
  );
}

function Legend() {
  return (
    <p className="legend timeline-legend" aria-label="Legend">
      <span><i className="k-cpu" />CPU, by its work</span>
      <span><i className="k-wait" />waiting, by its cause</span>
      <span><i className="k-op" />a command, start to return</span>
      <span><i className="k-bio" />bio: queued, then served</span>
      <span><i className="k-dirty" />dirty</span>
      <span><i className="k-writeback" />under writeback</span>
      <span><i className="k-ordered" />ordered extent in flight</span>
      <span><i className="k-clean" />clean</span>
    </p>
  );
}
