// The page cache on the timeline: a strip per file along its offsets (not
// time): pages dirty, under writeback, covered by an ordered extent in
// flight, clean; under it the ordered extents over the file, each a bar that
// appears at writeback, says when its bio is done and when a fast fsync
// logged it in flight, completes, and is gone at the next event.
import { select, type Selection } from 'd3-selection';
import type { PageState } from '../model/pageCache';
import type { OrderedPhase, TimelineFrame } from '../model/timelineFrame';
import { formatBytes } from '../model/units';
import { fit, OE_H, OE_Y, STRIP_H, STRIP_Y, type TimelineLayout } from './timelineLayout';

type G = Selection<SVGGElement, unknown, null, undefined>;
type FileRow = TimelineFrame['files'][number] & { y: number };

export const PAGE_WORDS: Record<PageState | 'clean', string> = { dirty: 'dirty', writeback: 'under writeback', ordered: 'ordered extent in flight', clean: 'clean' };
export const PHASE_WORDS: Record<OrderedPhase, string> = { writeback: 'bio in flight', 'io-done': 'I/O done, in flight', complete: 'complete' };

export function renderPages(g: G, frame: TimelineFrame, layout: TimelineLayout) {
  const yOf = new Map(layout.files.map((f) => [f.ino, f.y]));
  const rows: FileRow[] = frame.files.map((f) => ({ ...f, y: yOf.get(f.info.ino) ?? 0 }));
  const span = layout.stripX1 - layout.stripX0;
  const off = (size: number) => (o: number) => layout.stripX0 + (size > 0 ? (o / size) * span : 0);

  const files = g.selectAll<SVGGElement, FileRow>('g.file').data(rows, (d) => String(d.info.ino));
  files.exit().remove();
  const fe = files.enter().append('g').attr('class', 'file');
  fe.append('text').attr('class', 'file-name').attr('x', 6).attr('y', STRIP_Y + 12);
  fe.append('text').attr('class', 'file-size').attr('y', 11).attr('text-anchor', 'end');
  fe.append('rect').attr('class', 'page-clean').attr('y', STRIP_Y).attr('height', STRIP_H);
  fe.append('g').attr('class', 'ranges');
  fe.append('g').attr('class', 'oes');
  const fa = fe.merge(files).attr('transform', (d) => `translate(0,${d.y})`).attr('data-path', (d) => d.info.path);
  fa.select('text.file-name').text((d) => fit(d.info.path, layout.labelW - 8));
  fa.select('text.file-size').attr('x', layout.stripX1).text((d) => `page cache, offsets 0 to ${formatBytes(d.size)}`);
  fa.select('rect.page-clean').attr('x', layout.stripX0).attr('width', span);

  fa.each(function (this: SVGGElement, d) {
    const at = off(d.size);
    const file = select(this);
    const r = file.select<SVGGElement>('g.ranges').selectAll<SVGRectElement, (typeof d.pages.ranges)[number]>('rect').data(d.pages.ranges, (x) => `${x.start}:${x.state}`);
    r.exit().remove();
    r.enter().append('rect').attr('y', STRIP_Y).attr('height', STRIP_H).merge(r)
      .attr('class', (x) => `page-${x.state}`).attr('data-state', (x) => x.state)
      .attr('x', (x) => at(x.start)).attr('width', (x) => Math.max(1, at(x.end) - at(x.start)));
    const oes = file.select<SVGGElement>('g.oes').selectAll<SVGGElement, TimelineFrame['ordered'][number]>('g.oe')
      .data(frame.ordered.filter((o) => o.oe.ino === d.info.ino), (o) => String(o.oe.id));
    oes.exit().remove();
    const oe = oes.enter().append('g');
    oe.append('rect').attr('height', OE_H);
    oe.append('text').attr('y', OE_H - 5).attr('x', 3);
    oe.append('title');
    const oa = oe.merge(oes).attr('class', (o) => `oe phase-${o.phase}${o.logged ? ' logged' : ''}`).attr('data-oe', (o) => o.oe.id).attr('data-phase', (o) => o.phase)
      .attr('transform', (o) => `translate(${at(o.oe.offset)},${OE_Y})`);
    const w = (o: TimelineFrame['ordered'][number]) => Math.max(2, at(o.oe.offset + o.oe.length) - at(o.oe.offset));
    oa.select('rect').attr('width', w);
    oa.select('text').text((o) => fit(oeLabel(o), w(o)));
    oa.select('title').text((o) => `ordered extent ${o.oe.id}: ${formatBytes(o.oe.length)} at ${formatBytes(o.oe.offset)}, disk extent ${o.oe.diskBytenr}; ${oeLabel(o)}`);
  });
}

export function oeLabel(o: TimelineFrame['ordered'][number]): string {
  return `OE ${o.oe.id}: ${PHASE_WORDS[o.phase]}${o.logged ? ', in the log' : ''}`;
}
