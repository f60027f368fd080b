// Where the timeline's parts go (pure): a time axis, a row per lane (its
// commands on top, its CPU spans and waits below), the device's queue with a
// row per bio in flight together, then a page-cache strip per file with its
// ordered extents under it.
import { scaleLinear } from 'd3-scale';
import type { Lane, Timeline } from '../model/timeline';
import { formatNs } from '../model/units';

export const AXIS_H = 24;
export const LANE_H = 46;
/** Inside a lane: the command bar, then the CPU / wait bar. */
export const OP_Y = 3, OP_H = 13, RUN_Y = 20, RUN_H = 20;
export const DEVICE_ROW_H = 20;
export const FILE_H = 64;
/** Inside a file's block: its label, its strip of pages, its ordered extents. */
export const STRIP_Y = 16, STRIP_H = 16, OE_Y = 38, OE_H = 18;
export const PAD_R = 14;
/** Average width of a character of the 11 px labels (to leave out a label with no room). */
export const CHAR_W = 6.3;

export interface TimelineLayout {
  width: number;
  height: number;
  labelW: number;
  /** Virtual time to x. */
  x: (ns: number) => number;
  /** x back to virtual time (a click). */
  time: (x: number) => number;
  ticks: { x: number; label: string }[];
  lanes: { lane: Lane; y: number }[];
  deviceY: number;
  deviceH: number;
  pagesY: number;
  files: { ino: number; path: string; y: number }[];
  /** The window of time drawn. */
  from: number;
  to: number;
  /** The strip's span of x (file offsets are scaled into it). */
  stripX0: number;
  stripX1: number;
}

/** The layout of a timeline at a width (px), over its whole time or a window of it (a zoom). */
export function layoutTimeline(tl: Timeline, width: number, window?: [number, number]): TimelineLayout {
  const labelW = width < 600 ? 92 : 136;
  const [from, to] = window ?? [tl.t0, tl.t1];
  const scale = scaleLinear().domain([from, to > from ? to : from + 1]).range([labelW, width - PAD_R]);
  const lanesTop = AXIS_H;
  const lanes = tl.timed ? tl.lanes.map((lane, i) => ({ lane, y: lanesTop + i * LANE_H })) : [];
  const deviceY = lanesTop + lanes.length * LANE_H + (tl.timed ? 6 : 0);
  const deviceH = tl.timed ? Math.max(1, tl.bioRows) * DEVICE_ROW_H + 8 : 0;
  const pagesY = deviceY + deviceH + (tl.files.length ? 14 : 0);
  const files = tl.files.map((f, i) => ({ ino: f.ino, path: f.path, y: pagesY + i * FILE_H }));
  const ticks = tl.timed ? scale.ticks(Math.max(2, Math.floor((width - labelW) / 110))).map((t) => ({ x: scale(t), label: formatNs(Math.round(t - tl.t0)) })) : [];
  return {
    width, labelW, x: (ns) => scale(ns), time: (x) => scale.invert(x), ticks, lanes, deviceY, deviceH, pagesY, files, from, to,
    height: pagesY + files.length * FILE_H + 4, stripX0: labelW, stripX1: width - PAD_R,
  };
}

/** A label that fits in w pixels, or '' (the shape's title still says it). */
export function fit(text: string, w: number): string {
  if (text.length * CHAR_W + 6 <= w) return text;
  const n = Math.floor((w - 6) / CHAR_W) - 1;
  return n >= 4 ? `${text.slice(0, n)}…` : '';
}

/** A class name from a cause or work ("finish: fs tree" → "finish-fs-tree"). */
export const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

/** A zoom window: the width of w scaled by factor around the time at (kept inside [t0, t1]); null when it covers it all. */
export function zoomWindow(tl: Pick<Timeline, 't0' | 't1'>, w: [number, number] | null, factor: number, at: number): [number, number] | null {
  const [a, b] = w ?? [tl.t0, tl.t1];
  const span = Math.min(tl.t1 - tl.t0, Math.max(1000, (b - a) * factor)); // at most the whole, at least 1 µs
  if (span >= tl.t1 - tl.t0) return null;
  const lo = Math.min(Math.max(tl.t0, at - span / 2), tl.t1 - span);
  return [lo, lo + span];
}
