// The device's queue on the timeline: each bio from its submit to its done,
// a row per bio in flight together; the part before the device served it
// (queued behind others) light, its service solid, labelled by its kind
// (data, log, metadata, flush, superblock) and size.
import type { Selection } from 'd3-selection';
import type { TimelineFrame } from '../model/timelineFrame';
import { formatBytes, formatNs } from '../model/units';
import { DEVICE_ROW_H, fit, type TimelineLayout } from './timelineLayout';

type G = Selection<SVGGElement, unknown, null, undefined>;

const bioLabel = (op: string, bytes: number) => (bytes > 0 ? `${op} ${formatBytes(bytes)}` : op);

/** The device lane's background and name into bg, its bios into g (clipped to the time window). */
export function renderDevice(bg: G, g: G, frame: TimelineFrame, layout: TimelineLayout, timed: boolean) {
  const head = bg.selectAll<SVGGElement, number>('g.device-lane').data(timed ? [layout.deviceY] : []);
  head.exit().remove();
  const he = head.enter().append('g').attr('class', 'device-lane');
  he.append('rect').attr('class', 'lane-bg').attr('x', 0);
  he.append('text').attr('class', 'lane-name').attr('x', 6).attr('y', 19).text('device');
  he.append('text').attr('class', 'lane-kind').attr('x', 6).attr('y', 33).text('bio queue');
  const ha = he.merge(head).attr('transform', (d) => `translate(0,${d})`);
  ha.select('rect').attr('width', layout.width).attr('height', layout.deviceH);

  const x = layout.x;
  const bios = g.selectAll<SVGGElement, TimelineFrame['bios'][number]>('g.bio').data(frame.bios, (d) => String(d.span.id));
  bios.exit().remove();
  const be = bios.enter().append('g');
  be.append('rect').attr('class', 'queued').attr('height', DEVICE_ROW_H - 4);
  be.append('rect').attr('class', 'service').attr('height', DEVICE_ROW_H - 4);
  be.append('text').attr('y', DEVICE_ROW_H - 8);
  be.append('title');
  const ba = be.merge(bios).attr('class', (d) => `bio bio-${d.span.op}${d.open ? ' open' : ''}`).attr('data-bio', (d) => d.span.id)
    .attr('transform', (d) => `translate(${x(d.span.submit.at)},${layout.deviceY + 4 + d.span.row * DEVICE_ROW_H})`);
  const served = (d: TimelineFrame['bios'][number]) => (d.serviceStart === null ? d.span.submit.at : Math.max(d.span.submit.at, d.serviceStart));
  ba.select('rect.queued').attr('width', (d) => Math.max(1, x(d.end) - x(d.span.submit.at)));
  ba.select('rect.service').attr('x', (d) => x(served(d)) - x(d.span.submit.at)).attr('width', (d) => (d.open ? 0 : Math.max(1, x(d.end) - x(served(d)))));
  ba.select('text').attr('x', 3).text((d) => fit(bioLabel(d.span.op, d.span.bytes), Math.max(1, x(d.end) - x(d.span.submit.at))));
  ba.select('title').text((d) => `bio ${d.span.id}: ${bioLabel(d.span.op, d.span.bytes)}${d.open ? ' (in flight)' : `, done after ${formatNs(d.end - d.span.submit.at)} (${formatNs(d.span.serviceNs)} served)`}`);
}
