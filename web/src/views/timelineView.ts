// The timeline (lesson 3) behind a factory, as the tree explorer is:
// createTimelineView({el, onSeek}) returns {update, destroy}; React makes it
// in an effect on a ref, calls update with a frame (model/timelineFrame.ts)
// when the step or the moment changes, and destroy on cleanup. The drawing is
// the plain render functions of timelineLanes, timelineDevice and
// timelinePages; a click on the lanes asks to seek to that time.
import { select } from 'd3-selection';
import type { Timeline } from '../model/timeline';
import type { TimelineFrame } from '../model/timelineFrame';
import { formatNs } from '../model/units';
import { renderDevice } from './timelineDevice';
import { layoutTimeline, type TimelineLayout } from './timelineLayout';
import { renderAxis, renderLanes, renderNow } from './timelineLanes';
import { renderPages } from './timelinePages';

export interface TimelineViewOptions {
  el: HTMLElement;
  /** A click on the lanes at a virtual time (omit: not clickable). */
  onSeek?: (ns: number) => void;
}

export interface TimelineConfig {
  timeline: Timeline;
  /** Drawing width in px (the svg is at least this wide; its box scrolls). */
  width: number;
  /** What the picture shows, in words (the svg's accessible name). */
  label: string;
  /** A zoom: the window of virtual time drawn (none: all of it). */
  window?: [number, number] | null;
}

export interface TimelineView {
  update(frame: TimelineFrame, config: TimelineConfig): void;
  /** Where "now" is drawn (px from the drawing's left), or null when it is not (the step's end). */
  nowX(): number | null;
  destroy(): void;
}

/** A short description of a frame for its accessible name. */
export function frameSummary(tl: Timeline, frame: TimelineFrame): string {
  if (!tl.timed) return `No threads ran in this step; ${tl.files.length} file${tl.files.length === 1 ? '' : 's'} in the page cache.`;
  const open = frame.ops.filter((o) => o.open).map((o) => o.span.text);
  const waiting = frame.waits.filter((w) => w.open).length;
  return `${tl.lanes.length} tasks over ${formatNs(tl.t1 - tl.t0)}; at ${formatNs(frame.now - tl.t0)}: ${open.length ? `running ${open.join(', ')}` : 'no command running'}, ${waiting} waiting, ${frame.ordered.length} ordered extent${frame.ordered.length === 1 ? '' : 's'} in flight.`;
}

let views = 0;

export function createTimelineView({ el, onSeek }: TimelineViewOptions): TimelineView {
  const svg = select(el).append('svg').attr('class', 'timeline-svg').attr('role', 'img').attr('data-testid', 'timeline-svg');
  const title = svg.append('title');
  const clipId = `timeline-clip-${++views}`;
  const clip = svg.append('defs').append('clipPath').attr('id', clipId).append('rect');
  const lanes = svg.append('g').attr('class', 'lanes');
  const device = svg.append('g').attr('class', 'device');
  const axis = svg.append('g').attr('class', 'axis').attr('clip-path', `url(#${clipId})`);
  // what moves with time is clipped to the window; the lanes' names are not
  const spans = svg.append('g').attr('class', 'spans').attr('clip-path', `url(#${clipId})`);
  const bios = svg.append('g').attr('class', 'bios').attr('clip-path', `url(#${clipId})`);
  const pages = svg.append('g').attr('class', 'pages');
  const now = svg.append('g').attr('class', 'now-layer').attr('clip-path', `url(#${clipId})`);
  let layout: TimelineLayout | null = null;
  let nowAt: number | null = null;
  let laid: { tl: Timeline; width: number; window: [number, number] | null } | null = null;
  if (onSeek) {
    svg.classed('seekable', true).on('click', (ev: MouseEvent) => {
      if (!layout || !laid?.tl.timed) return;
      const box = (svg.node() as SVGSVGElement).getBoundingClientRect();
      const px = ((ev.clientX - box.left) / box.width) * layout.width;
      if (px < layout.labelW || ev.clientY - box.top > ((layout.deviceY + layout.deviceH) / layout.height) * box.height) return;
      onSeek(layout.time(px));
    });
  }
  return {
    update(frame, { timeline: tl, width, label, window = null }) {
      if (!laid || laid.tl !== tl || laid.width !== width || laid.window?.[0] !== window?.[0] || laid.window?.[1] !== window?.[1]) {
        layout = layoutTimeline(tl, width, window ?? undefined);
        laid = { tl, width, window };
      }
      const l = layout!;
      svg.attr('viewBox', `0 0 ${l.width} ${l.height}`).attr('width', l.width).attr('height', l.height).attr('aria-label', label);
      clip.attr('x', l.labelW - 1).attr('y', 0).attr('width', l.width - l.labelW + 1).attr('height', l.height);
      title.text(label);
      renderAxis(axis, l);
      renderLanes(lanes, spans, frame, l);
      renderDevice(device, bios, frame, l, tl.timed);
      renderPages(pages, frame, l);
      renderNow(now, frame, l, tl);
      nowAt = tl.timed && frame.cut !== null ? l.x(frame.now) : null;
    },
    nowX: () => nowAt,
    destroy() {
      svg.on('click', null);
      svg.remove();
    },
  };
}
