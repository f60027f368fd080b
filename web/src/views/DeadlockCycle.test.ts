// The cycle view (choose mode's deadlock): its layout, and the view rendered
// to markup from the fixture: a node a task, an arrow a wait with its lock.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, test } from 'vitest';
import { deadlockCycle, type DeadlockCycle as Cycle } from '../model/deadlock';
import { edge, FIXTURE, name } from '../model/deadlock.fixture';
import { cycleLayout, DeadlockCycle } from './DeadlockCycle';

describe('the cycle view', () => {
  test('tasks on a circle, the first on top; labels outside the arrows; two tasks waiting for each other: two arcs, a side each', () => {
    const c = deadlockCycle(FIXTURE)!;
    const l = cycleLayout(c);
    expect(l.nodes.map((n) => n.task)).toEqual([6, 7, 8]);
    expect(l.nodes[0].y).toBeLessThan(l.nodes[1].y);
    expect(new Set(l.nodes.map((n) => `${n.x},${n.y}`)).size).toBe(3);
    for (const n of l.nodes) {
      expect(n.x).toBeGreaterThan(0);
      expect(n.x).toBeLessThan(l.width);
      expect(n.y).toBeGreaterThan(0);
      expect(n.y).toBeLessThan(l.height);
    }
    const two: Cycle = deadlockCycle([edge(1, 1, 2, 5n, 100n, 0, 'write'), edge(2, 2, 1, 5n, 200n, 0, 'write')])!;
    const [ab, ba] = cycleLayout(two).arrows;
    expect(ab.d).not.toBe(ba.d);
    expect(Math.abs(ab.label.y - ba.label.y) + Math.abs(ab.label.x - ba.label.x)).toBeGreaterThan(40);
    expect([ab.label.anchor, ba.label.anchor].sort()).toEqual(['end', 'start']); // one each side
    // each label outside its arrow: further from the centre than the two nodes' middle
    const mid = (t: number) => l.nodes.find((n) => n.task === t)!;
    const centre = { x: l.width / 2, y: l.height / 2 };
    for (const a of l.arrows) {
      const p = mid(a.edge.task), q = mid(a.edge.holder);
      const far = (x: number, y: number) => Math.hypot(x - centre.x, y - centre.y);
      expect(far(a.label.x, a.label.y)).toBeGreaterThan(far((p.x + q.x) / 2, (p.y + q.y) / 2));
    }
  });

  test('rendered: a node a task, an arrow a wait with its lock, the waits in words, the whole in the label', () => {
    const html = renderToStaticMarkup(createElement(DeadlockCycle, { cycle: deadlockCycle(FIXTURE)!, name }));
    expect(html.match(/class="cycle-task"/g)).toHaveLength(3);
    expect(html.match(/class="cycle-edge"/g)).toHaveLength(3);
    expect(html).toContain('data-task="A" data-holder="B" data-block="30408704" data-mode="write"');
    expect(html).toContain('data-task="reclaim" data-holder="A" data-block="30539776"');
    expect(html).toContain('<tspan x="');
    expect(html).toContain('leaf 30539776, fs tree');
    expect(html).toContain('delayed node of inode 259');
    expect(html).toContain('<li>B waits for the delayed node mutex of inode 259, held by reclaim.</li>');
    expect(html).toContain('aria-label="Deadlock: A waits for a write lock on leaf 30408704 of the log tree, held by B;');
    expect(html).not.toContain('do not close');
  });
});
