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
    expect(lessonViews(LESSONS.find((l) => l.id === '03-ordered-extents-fast-fsync')!).map((v) => v.name)).toEqual(['timeline']);
    expect(lessonViews(LESSONS.find((l) => l.id === '04-leaf-locks')!).map((v) => v.name)).toEqual(['locks']);
    expect(lessonViews(LESSONS.find((l) => l.id === '05-space-reclaim')!).map((v) => v.name)).toEqual(['space']);
    expect(lessonViews(LESSONS.find((l) => l.id === '06-snapshots')!).map((v) => v.name)).toEqual(['shared']);
    expect(lessonViews(LESSONS.find((l) => l.id === '07-relocation')!).map((v) => v.name)).toEqual(['relocation']);
  });

  test("seed 004's dirty extents live in lesson 7 as the seed prints them, with our measured figures beside", () => {
    const seed = LESSONS.find((l) => l.id === '07-relocation')!.seed!;
    if (seed.id !== '004') throw new Error(`lesson 7's seed is ${seed.id}`);
    expect(seed.table.map((r) => [r.snapshots, r.metric, r.before, r.after])).toEqual([
      [16, 'relocated extents', 22874, 22856], [16, 'qgroup dirty extents', 225251, 140431],
      [64, 'relocated extents', 22462, 22467], [64, 'qgroup dirty extents', 314380, 140826]]);
    expect(seed.measured.rows.map((r) => [r.snapshots, r.relocatedOurs, r.relocatedKernel, r.full, r.subtree, r.deferred, r.deferredKernel])).toEqual([
      [16, 22080, 21937, 83038, 42324, 68, 68], [64, 23360, 23263, 85942, 45000, 260, 260]]);
  });

  test("seed 000's bonnie++ latencies live in lesson 4, as the seed prints them (µs)", () => {
    const seed = LESSONS.find((l) => l.id === '04-leaf-locks')!.seed!;
    if (seed.id !== '000') throw new Error(`lesson 4's seed is ${seed.id}`);
    expect([seed.change, seed.unit]).toEqual(['btrfs: preallocate temporary extent buffer for inode logging when needed', 'µs']);
    expect(seed.table.map((r) => [r.phase, r.op, r.before, r.after])).toEqual([
      ['Sequential Create', 'Create', 411000, 320000], ['Sequential Create', 'Read', 11914, 11237], ['Sequential Create', 'Delete', 119000, 77779],
      ['Random Create', 'Create', 617000, 518000], ['Random Create', 'Read', 10296, 6470], ['Random Create', 'Delete', 110000, 86389]]);
  });

  test("seed 003's fio table lives in its lesson: each row's change is the seed's, and follows from its throughputs", () => {
    const seed = LESSONS.find((l) => l.id === '03-ordered-extents-fast-fsync')!.seed!;
    if (seed.id !== '003') throw new Error(`lesson 3's seed is ${seed.id}`);
    expect([seed.change, seed.source, seed.unit]).toEqual(['btrfs: make fast fsyncs wait only for writeback', 'Filipe Manana, Linux 5.10', 'MiB/s']);
    const seq = seed.table.filter((r) => r.rw === 'write');
    expect(seq.map((r) => [r.jobs, r.before, r.after, r.change])).toEqual([
      [1, 36.6, 40.2, 9.8], [2, 35.8, 43.5, 21.5], [4, 50.1, 64.5, 28.7], [8, 64.0, 86.8, 35.6], [16, 79.8, 107, 34.1], [32, 93.2, 111, 19.1], [64, 108, 133, 23.1]]);
    expect(seq.every((r) => r.bs === '64K' && r.fsync === 1)).toBe(true);
    expect(seed.table.filter((r) => r.rw === 'randwrite').map((r) => r.jobs)).toEqual([1, 2, 4, 8, 16, 32, 64]);
    for (const r of seed.table) expect(Math.abs(((r.after - r.before) / r.before) * 100 - r.change), `${r.rw} ${r.jobs}`).toBeLessThan(0.06);
  });

  test("seed 001's published table lives in its lesson, as the seed gives it", () => {
    const seed = LESSONS.find((l) => l.id === '02-fsync-log-tree')!.seed!;
    if (seed.id !== '001') throw new Error(`lesson 2's seed is ${seed.id}`);
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
