// The timeline's time axis and task lanes, drawn from a frame (plain render
// functions of the frame and the layout): a row per task; its commands as
// thin bars on top (an fsync marked where what it waited for happened), its
// CPU spans as bars labelled by their work, its waits as hatched gaps
// labelled by their cause; a line at the frame's time ("now").
import type { Selection } from 'd3-selection';
import type { TimelineFrame } from '../model/timelineFrame';
import type { Timeline } from '../model/timeline';
import { formatNs } from '../model/units';
import { waitWhat } from './timeline.sentences';
import { fit, LANE_H, OP_H, OP_Y, RUN_H, RUN_Y, slug, type TimelineLayout } from './timelineLayout';

type G = Selection<SVGGElement, unknown, null, undefined>;

const KIND_HINT: Record<string, string> = { thread: 'thread', 'endio-write': 'worker', flusher: 'kthread', transaction: 'kthread', 'delayed-meta': 'worker' };

export function renderAxis(g: G, layout: TimelineLayout) {
  const t = g.selectAll<SVGGElement, { x: number; label: string }>('g.tick').data(layout.ticks, (d) => String(d.x));
  t.exit().remove();
  const enter = t.enter().append('g').attr('class', 'tick');
  enter.append('line').attr('y1', 16).attr('y2', layout.height);
  enter.append('text').attr('y', 12).attr('text-anchor', 'middle');
  const all = enter.merge(t).attr('transform', (d) => `translate(${d.x},0)`);
  all.select('line').attr('y2', layout.height);
  // a label at the left edge starts there (centred, half of it would be under the lanes' names)
  all.select('text').text((d) => d.label).attr('text-anchor', (d) => (d.x - layout.labelW < 24 ? 'start' : 'middle'));
}

/** The lanes' backgrounds and names into bg, their spans into g (clipped to the time window). */
export function renderLanes(bg: G, g: G, frame: TimelineFrame, layout: TimelineLayout) {
  const yOf = new Map(layout.lanes.map((l) => [l.lane.task, l.y]));
  const lanes = bg.selectAll<SVGGElement, (typeof layout.lanes)[number]>('g.lane').data(layout.lanes, (d) => String(d.lane.task));
  lanes.exit().remove();
  const le = lanes.enter().append('g').attr('class', 'lane');
  le.append('rect').attr('class', 'lane-bg').attr('x', 0).attr('height', LANE_H);
  le.append('text').attr('class', 'lane-name').attr('x', 6).attr('y', 19);
  le.append('text').attr('class', 'lane-kind').attr('x', 6).attr('y', 33);
  const la = le.merge(lanes).attr('transform', (d) => `translate(0,${d.y})`).attr('data-lane', (d) => d.lane.name);
  la.select('rect.lane-bg').attr('width', layout.width).classed('odd', (_, i) => i % 2 === 1);
  la.select('text.lane-name').text((d) => fit(d.lane.name, layout.labelW - 8));
  la.select('text.lane-kind').text((d) => KIND_HINT[d.lane.kind] ?? d.lane.kind);

  const x = layout.x;
  const w = (a: number, b: number) => Math.max(1, x(b) - x(a));
  // CPU spans
  const cpu = g.selectAll<SVGGElement, TimelineFrame['cpu'][number]>('g.cpu').data(frame.cpu.filter((c) => yOf.has(c.span.task)), (d) => String(d.span.start.seq));
  cpu.exit().remove();
  const ce = cpu.enter().append('g').attr('class', 'cpu');
  ce.append('rect').attr('height', RUN_H);
  ce.append('text').attr('y', RUN_H / 2 + 4);
  ce.append('title');
  const ca = ce.merge(cpu).attr('transform', (d) => `translate(${x(d.span.start.at)},${yOf.get(d.span.task)! + RUN_Y})`)
    .attr('data-work', (d) => d.span.work).attr('class', (d) => `cpu work-${slug(d.span.work)}${d.open ? ' open' : ''}`);
  ca.select('rect').attr('width', (d) => w(d.span.start.at, d.end));
  ca.select('text').attr('x', 3).text((d) => fit(d.span.work, w(d.span.start.at, d.end)));
  ca.select('title').text((d) => `${d.span.work}: ${formatNs(d.span.end - d.span.start.at)} on a CPU${d.open ? ` (${formatNs(d.end - d.span.start.at)} of it so far)` : ''}`);

  // waits: a hatched gap, its cause written in it
  const waits = g.selectAll<SVGGElement, TimelineFrame['waits'][number]>('g.wait').data(frame.waits.filter((d) => yOf.has(d.span.task)), (d) => String(d.span.start.seq));
  waits.exit().remove();
  const we = waits.enter().append('g');
  we.append('rect').attr('height', RUN_H);
  we.append('text').attr('y', RUN_H / 2 + 4);
  we.append('title');
  const wa = we.merge(waits).attr('transform', (d) => `translate(${x(d.span.start.at)},${yOf.get(d.span.task)! + RUN_Y})`)
    .attr('class', (d) => `wait cause-${slug(d.span.cause)}${d.open ? ' open' : ''}`).attr('data-cause', (d) => d.span.cause);
  wa.select('rect').attr('width', (d) => w(d.span.start.at, d.end));
  wa.select('text').attr('x', 3).text((d) => fit(d.span.cause, w(d.span.start.at, d.end)));
  wa.select('title').text((d) => `waits for ${waitWhat(d.span.cause, BigInt(d.span.object))}${d.open ? ' (still waiting)' : `: ${formatNs(d.end - d.span.start.at)}`}`);

  // commands: start to return; an fsync marked where what it waited for happened
  const ops = g.selectAll<SVGGElement, TimelineFrame['ops'][number]>('g.op').data(frame.ops.filter((d) => yOf.has(d.span.task)), (d) => String(d.span.start.seq));
  ops.exit().remove();
  const oe = ops.enter().append('g');
  oe.append('rect').attr('class', 'op-bar').attr('height', OP_H);
  oe.append('text').attr('class', 'op-text').attr('y', OP_H - 3);
  oe.append('title');
  const oa = oe.merge(ops).attr('transform', (d) => `translate(${x(d.span.start.at)},${yOf.get(d.span.task)! + OP_Y})`)
    .attr('class', (d) => `op op-${d.span.op}${d.open ? ' open' : ''}`).attr('data-line', (d) => d.span.line);
  oa.select('rect.op-bar').attr('width', (d) => w(d.span.start.at, d.end));
  oa.select('text.op-text').attr('x', 3).text((d) => fit(opLabel(d), w(d.span.start.at, d.end)));
  oa.select('title').text((d) => `line ${d.span.line}: ${d.span.text}${d.open ? ' (running)' : `, returned after ${formatNs(d.end - d.span.start.at)}`}`);
  // the waited-for mark
  const marks = g.selectAll<SVGGElement, TimelineFrame['ops'][number]>('g.waited')
    .data(frame.ops.filter((d) => d.waited && d.span.waited && yOf.has(d.span.task)), (d) => String(d.span.start.seq));
  marks.exit().remove();
  const me = marks.enter().append('g').attr('class', 'waited');
  me.append('line').attr('y1', -2).attr('y2', RUN_Y + RUN_H + 2);
  me.append('text').attr('y', RUN_Y + RUN_H + 1).attr('x', 3);
  const ma = me.merge(marks).attr('transform', (d) => `translate(${x(d.span.waited!.at.at)},${yOf.get(d.span.task)! + OP_Y})`)
    .attr('data-waited', (d) => d.span.waited!.what);
  ma.select('text').text((d) => d.span.waited!.what);
}

/** A command's bar label: its text; a returned fsync says what it waited for. */
function opLabel(d: TimelineFrame['ops'][number]): string {
  const logged = d.logged.length ? `, logged OE ${d.logged.join(', ')} in flight` : '';
  if (d.span.op !== 'fsync' || d.open || !d.span.waited) return `${d.span.text}${logged}`;
  return `${d.span.text}: waited for ${d.span.waited.what}${logged}`;
}

export function renderNow(g: G, frame: TimelineFrame, layout: TimelineLayout, tl: Timeline) {
  const data = tl.timed && frame.cut !== null ? [frame.now] : [];
  const now = g.selectAll<SVGGElement, number>('g.now').data(data);
  now.exit().remove();
  const ne = now.enter().append('g').attr('class', 'now');
  ne.append('line').attr('y1', 16);
  ne.append('text').attr('y', 10).attr('x', 4);
  const na = ne.merge(now).attr('transform', (d) => `translate(${layout.x(d)},0)`);
  na.select('line').attr('y2', layout.pagesY > 0 ? layout.deviceY + layout.deviceH : layout.height);
  // the label goes left of the line near the right edge
  na.select('text').attr('text-anchor', (d) => (layout.x(d) > layout.width - 90 ? 'end' : 'start')).attr('x', (d) => (layout.x(d) > layout.width - 90 ? -4 : 4))
    .text((d) => `now ${formatNs(d - tl.t0)}`);
}
