// Paired bar charts: one row per label, two bars in it (say legacy and
// index-only, or measured and modelled), each with its value written after
// it; rows keyed by label, bars growing into place. The factory beside
// createTreeView: the compare view's charts are specs of it, not copies.
import { select, type Selection } from 'd3-selection';
import 'd3-transition';

export interface BarSeries<R> {
  /** CSS class of the bar and its value text (the colour). */
  cls: string;
  /** Offset of this bar inside its row. */
  dy: number;
  value: (r: R) => number;
  text: (r: R) => string;
}

export interface BarChartSpec<R> {
  width: number;
  /** Height = pad + rows × rowHeight; the first row starts at top. */
  pad: number;
  top: number;
  rowHeight: number;
  /** Where bars start (the labels are left of it), and their height. */
  barX: number;
  barHeight: number;
  /** Baseline of a value text below its bar's top. */
  textDy: number;
  /** Bar length in pixels of a value, given all rows (for a shared maximum). */
  scale: (rows: R[], room: number) => (v: number) => number;
  /** Pixels left for the bars and their values. */
  room: number;
  label: (r: R) => string;
  series: [BarSeries<R>, BarSeries<R>];
  /** Values may be negative: a zero line inside the room, negative bars
   * drawn left of it and positive ones right, on one linear scale (the
   * scale function is then not used). */
  signed?: boolean;
}

/** Where a bar of value v starts and how wide it is, and where its text goes. */
type Place = { x: (v: number) => number; width: (v: number) => number; text: (v: number) => number; zero: number | null };

export function placement<R>(spec: BarChartSpec<R>, rows: R[]): Place {
  if (spec.signed) {
    const values = rows.flatMap((r) => spec.series.map((s) => s.value(r)));
    const neg = Math.max(0, ...values.map((v) => -v)), pos = Math.max(0, ...values);
    const k = spec.room / Math.max(1e-9, neg + pos);
    const zero = spec.barX + neg * k;
    return {
      x: (v) => zero + Math.min(0, v) * k,
      width: (v) => Math.abs(v) * k,
      text: (v) => zero + Math.max(0, v) * k + 6,
      zero: neg > 0 ? zero : null,
    };
  }
  const x = spec.scale(rows, spec.room);
  return { x: () => spec.barX, width: x, text: (v) => spec.barX + 6 + x(v), zero: null };
}

export function createBarChart<R>(el: SVGSVGElement, spec: BarChartSpec<R>) {
  const svg = select(el);
  return {
    update(rows: R[], reducedMotion: boolean) {
      const h = spec.pad + rows.length * spec.rowHeight;
      svg.attr('viewBox', `0 0 ${spec.width} ${h}`).attr('width', spec.width).attr('height', h);
      const place = placement(spec, rows);
      const axis = svg.selectAll<SVGLineElement, number>('line.zero').data(place.zero === null ? [] : [place.zero]);
      axis.exit().remove();
      axis.enter().append('line').attr('class', 'zero').merge(axis)
        .attr('x1', (z) => z).attr('x2', (z) => z).attr('y1', spec.top).attr('y2', h - spec.pad + spec.top);
      const g = svg.selectAll<SVGGElement, R>('g.row').data(rows, (r) => spec.label(r));
      g.exit().remove();
      const enter = g.enter().append('g').attr('class', 'row');
      enter.append('text').attr('class', 'label').attr('x', 0).attr('y', 14);
      for (const s of spec.series) {
        enter.append('rect').attr('class', `bar ${s.cls}`).attr('x', spec.barX).attr('y', s.dy + 2).attr('height', spec.barHeight).attr('width', 0);
        enter.append('text').attr('class', `val ${s.cls}`).attr('y', s.dy + spec.textDy);
      }
      const all = enter.merge(g).attr('transform', (_, i) => `translate(0,${spec.top + i * spec.rowHeight})`);
      all.select('text.label').text((r) => spec.label(r));
      type Bars = Selection<SVGRectElement, R, SVGGElement, unknown>;
      const grow = (b: Bars) => (reducedMotion ? b : b.transition().duration(400)) as unknown as Bars;
      for (const s of spec.series) {
        grow(all.select<SVGRectElement>(`rect.${s.cls}`)).attr('x', (r) => place.x(s.value(r))).attr('width', (r) => place.width(s.value(r)));
        all.select(`text.val.${s.cls}`).attr('x', (r) => place.text(s.value(r))).text((r) => s.text(r));
      }
    },
  };
}
