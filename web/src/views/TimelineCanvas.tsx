// The timeline's D3 view in React: made in an effect on a ref
// (createTimelineView), updated when the frame or the width changes,
// destroyed on cleanup. Its box scrolls sideways when the page is narrower
// than the drawing (a phone): keyboard users scroll it too.
import { useEffect, useRef, useState } from 'react';
import type { Timeline } from '../model/timeline';
import type { TimelineFrame } from '../model/timelineFrame';
import { createTimelineView, frameSummary, type TimelineView } from './timelineView';
import './timeline.css';

export interface TimelineCanvasProps {
  timeline: Timeline;
  frame: TimelineFrame;
  /** Names the scrolling region and the picture. */
  label: string;
  /** A click at a virtual time. */
  onSeek?: (ns: number) => void;
  /** The narrowest drawing (px); wider boxes draw wider. */
  minWidth?: number;
  /** A zoom: the window of virtual time drawn. */
  timeWindow?: [number, number] | null;
}

export function TimelineCanvas({ timeline, frame, label, onSeek, minWidth = 620, timeWindow = null }: TimelineCanvasProps) {
  const box = useRef<HTMLDivElement>(null);
  const view = useRef<TimelineView | null>(null);
  const seek = useRef(onSeek);
  seek.current = onSeek;
  const [width, setWidth] = useState(0);

  useEffect(() => {
    const el = box.current!;
    view.current = createTimelineView({ el, onSeek: onSeek ? (ns) => seek.current?.(ns) : undefined });
    const measure = () => setWidth(el.clientWidth);
    measure();
    const ro = typeof ResizeObserver !== 'undefined' ? new ResizeObserver(measure) : null;
    ro?.observe(el);
    return () => {
      ro?.disconnect();
      view.current?.destroy();
      view.current = null;
    };
  }, [!!onSeek]); // made once (a click handler or none); the rest comes through refs

  useEffect(() => {
    if (!view.current || !width) return;
    // drawn once per animation frame at most: a scrub moves through many moments
    const id = requestAnimationFrame(() => {
      const v = view.current;
      if (!v) return;
      v.update(frame, { timeline, width: Math.max(minWidth, width - 2), label: `${label}: ${frameSummary(timeline, frame)}`, window: timeWindow });
      // a drawing wider than its box (a phone): "now" stays in sight
      const x = v.nowX(), el = box.current!;
      if (x !== null && (x < el.scrollLeft + 40 || x > el.scrollLeft + el.clientWidth - 40)) el.scrollLeft = Math.max(0, x - el.clientWidth / 2);
    });
    return () => cancelAnimationFrame(id);
  }, [timeline, frame, width, label, minWidth, timeWindow]);

  return <div className="timeline-canvas" ref={box} role="region" aria-label={`${label} (scrolls sideways)`} tabIndex={0} />;
}
