// Seed 002's two delalloc budgets as the compare view runs them: the script
// in each mode and on each device, a run's figures from its metrics, and the
// seed's untar times paired with their fix.
import { describe, expect, test } from 'vitest';
import type { ScenarioMetrics } from '../core/wasm';
import { LESSONS } from '../lessons';
import { compareDevices, pagesPerPass, reclaimFigures, scriptDevice, seedPairs, slowdown, withShrink } from './shrinkModes';

const SCRIPT = 'mkfs size=256M\nset device=ssd\nset shrink_delalloc=pages\nuntar random files=5\nset shrink_delalloc=pages\nuntar random files=5 dir=/b\n';

describe('the budgets', () => {
  test('every set line in one mode, on one device; lines stay where they were', () => {
    expect(withShrink(SCRIPT, 'inodes')).toBe(SCRIPT.replaceAll('shrink_delalloc=pages', 'shrink_delalloc=inodes'));
    expect(withShrink(SCRIPT, 'inodes', 'hdd').split('\n').slice(0, 3)).toEqual(['mkfs size=256M', 'set device=hdd', 'set shrink_delalloc=inodes']);
    expect(withShrink('mkfs\nuntar random files=5\n', 'inodes', 'nvme')).toBe('mkfs\nset device=nvme\nset shrink_delalloc=inodes\nuntar random files=5\n');
  });

  test("the script's device first (the core's default nvme when it sets none), then the others", () => {
    expect(scriptDevice(SCRIPT)).toBe('ssd');
    expect(scriptDevice('mkfs\nset device=loop\nset device=hdd\n')).toBe('hdd');
    expect(scriptDevice('mkfs\n')).toBe('nvme');
    expect(compareDevices(SCRIPT)).toEqual(['ssd', 'nvme', 'hdd']);
    expect(compareDevices('mkfs\nset device=loop\n')).toEqual(['loop', 'nvme', 'ssd', 'hdd']);
  });

  test("a run's figures: the untars' time, the tickets, the delalloc flushes", () => {
    const timed = { virtualNs: 900, untar: { files: 10, dirs: 2, bytes: 5000, writeNs: 600, syncNs: 50 },
      reclaim: { tickets: 7, ticketsFailed: 1, ticketWaitNs: 300, order: [], runs: {}, shrink: { calls: 4, budgetP50: 20, budgetMax: 20, pages: 30, inodes: 12 } } };
    const f = reclaimFigures({ timed } as unknown as ScenarioMetrics);
    expect(f).toEqual({ untarNs: 650, files: 10, tickets: 7, ticketsFailed: 1, ticketWaitNs: 300, passes: 4, budgetP50: 20, pages: 30, inodes: 12 });
    expect(pagesPerPass(f)).toBe(7.5);
    expect(reclaimFigures({ timed: { virtualNs: 900 } } as unknown as ScenarioMetrics)).toMatchObject({ untarNs: 900, tickets: 0, passes: 0 });
    expect(pagesPerPass(reclaimFigures({} as ScenarioMetrics))).toBe(0);
  });

  test("the seed's kernels, each with its fix: lesson 5's table", () => {
    const seed = LESSONS.find((l) => l.id === '05-space-reclaim')!.seed!;
    if (seed.id !== '002') throw new Error(`lesson 5's seed is ${seed.id}`);
    expect(seedPairs(seed.table)).toEqual([
      { machine: 'nvme', kernel: '5.10', before: 86.212, after: 38.8 },
      { machine: 'ssd', kernel: '5.10.5', before: 240, after: 68 },
      { machine: 'ssd', kernel: '5.11-rc2', before: 314, after: 90 },
    ]);
    expect(slowdown(86.212, 38.8)).toBeCloseTo(2.22, 2);
    expect(slowdown(0, 5)).toBe(0);
  });
});
