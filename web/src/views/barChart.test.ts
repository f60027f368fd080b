// Paired bar charts: where bars go, on an unsigned scale and a signed one.
import { describe, expect, test } from 'vitest';
import { placement, type BarChartSpec } from './barChart';

type Row = { a: number; b: number };
const spec = (signed: boolean): BarChartSpec<Row> => ({
  width: 400, pad: 20, top: 0, rowHeight: 30, barX: 100, barHeight: 10, textDy: 10, room: 200, signed,
  scale: (rows, room) => {
    const max = Math.max(...rows.map((r) => Math.max(r.a, r.b)));
    return (v) => (v / max) * room;
  },
  label: () => '',
  series: [{ cls: 'a', dy: 0, value: (r) => r.a, text: () => '' }, { cls: 'b', dy: 12, value: (r) => r.b, text: () => '' }],
});

describe('paired bar charts', () => {
  test('unsigned: every bar starts at barX, the largest fills the room, its value written after it', () => {
    const p = placement(spec(false), [{ a: 10, b: 40 }]);
    expect([p.x(10), p.width(10), p.width(40), p.text(40), p.zero]).toEqual([100, 50, 200, 306, null]);
  });

  test('signed: a loss is drawn left of the zero line, a gain right of it, on one scale filling the room', () => {
    const p = placement(spec(true), [{ a: -20, b: 30 }, { a: 10, b: -5 }]);
    // 20 below zero and 30 above share 200 px: 4 px a unit, zero at 100 + 80
    expect(p.zero).toBe(180);
    expect([p.x(-20), p.width(-20)]).toEqual([100, 80]); // ends at the zero line
    expect([p.x(30), p.width(30)]).toEqual([180, 120]); // ends at the room's end
    expect(p.x(-5) + p.width(-5)).toBe(180);
    expect(p.text(-20)).toBe(186); // a loss's value is written right of the zero line, not over the labels
    expect(p.text(30)).toBe(306);
  });

  test('signed with no loss: no zero line, bars from barX as before', () => {
    const p = placement(spec(true), [{ a: 10, b: 20 }]);
    expect([p.zero, p.x(10), p.width(20)]).toEqual([null, 100, 200]);
  });
});
