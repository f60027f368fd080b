// Lessons declare their views and their seed's table in lesson.json; the
// registry knows every view a lesson names.
import { describe, expect, test } from 'vitest';
import { LESSONS } from '../lessons';
import { lessonViews, VIEWS } from './registry';

describe('lesson manifests', () => {
  test('every lesson names known views, the tree first', () => {
    expect(LESSONS.length).toBeGreaterThanOrEqual(2);
    for (const l of LESSONS) {
      expect(l.views[0], l.id).toBe('tree');
      for (const v of l.views) expect(Object.keys(VIEWS), `${l.id}: ${v}`).toContain(v);
      expect(() => lessonViews(l)).not.toThrow();
    }
    const fsync = LESSONS.find((l) => l.id === '02-fsync-log-tree')!;
    expect(lessonViews(fsync).map((v) => v.name)).toEqual(['replay', 'compare']);
    expect(lessonViews(LESSONS.find((l) => l.id === '01-cow-btree')!)).toEqual([]);
  });

  test("seed 001's published table lives in its lesson, as the seed gives it", () => {
    const seed = LESSONS.find((l) => l.id === '02-fsync-log-tree')!.seed!;
    expect(seed.id).toBe('001');
    expect(seed.table.map((r) => [r.n, r.d])).toEqual([[1000, 100], [10000, 1000], [100000, 1000], [1000000, 10000]]);
    // the seed's percentages (-22.2% ... -46.2%) follow from its times
    const pct = ([b, a]: [number, number]) => Math.round(((a - b) / b) * 1000) / 10;
    expect(seed.table.map((r) => [pct(r.create), pct(r.delete)])).toEqual([[-22.2, -25], [-46.3, -44.4], [-45.8, -47.5], [-49.5, -46.2]]);
  });

  test('an unknown view is an error naming the lesson and the view', () => {
    const l = { ...LESSONS[0], views: ['tree', 'teleport'] };
    expect(() => lessonViews(l)).toThrow(`lessons/${l.id}/lesson.json: unknown view "teleport"`);
  });
});
