// A deadlock's cycle drawn (choose mode, lesson 4): each task a node (a pill
// round its name) on a circle, each wait an arrow from the waiting task to
// the one holding what it waits for, labelled with the lock (its mode,
// block, level and tree); the same in words below. Takes the cycle (model/deadlock.ts) and the tasks'
// names, nothing else: any view with a failed run's trace can use it.
import { useId } from 'react';
import { cycleSentence, edgeWhat, type DeadlockCycle as Cycle, type DeadlockEdge } from '../model/deadlock';
import { treeName } from '../model/names';
import './deadlock.css';

const NODE_RY = 18, LABEL_W = 136, LABEL_H = 34, PAD = 8;
/** A node's half width: its name's (about 7.5 px a character at 12 px), at least a circle's. */
const halfWidth = (name: string) => Math.max(NODE_RY + 6, Math.ceil(name.length * 3.8) + 10);

export interface CycleNode {
  task: number;
  x: number;
  y: number;
  /** Half its width (a pill around the task's name). */
  rx: number;
}

export interface CycleArrow {
  edge: DeadlockEdge;
  /** An SVG path from the waiter's node to the holder's, bent away from the circle's centre (two tasks waiting for each other: to either side). */
  d: string;
  /** Where its label goes, outside the arc, and how it is anchored. */
  label: { x: number; y: number; anchor: 'start' | 'middle' | 'end' };
}

/** Where the cycle's tasks and arrows go: the tasks in cycle order on a circle, the first on top, clockwise; each label outside its arrow. */
export function cycleLayout(c: Cycle, name: (task: number) => string = String): { width: number; height: number; nodes: CycleNode[]; arrows: CycleArrow[] } {
  const n = c.tasks.length;
  const wide = Math.max(...c.tasks.map((t) => halfWidth(name(t))));
  const r = (n <= 2 ? 70 : 56 + n * 14) + Math.max(0, wide - 40);
  const cx = LABEL_W + r + wide + PAD, cy = LABEL_H + r + NODE_RY + PAD;
  const nodes = c.tasks.map((task, i): CycleNode => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
    return { task, x: Math.round(cx + r * Math.cos(a)), y: Math.round(cy + r * Math.sin(a)), rx: halfWidth(name(task)) };
  });
  const at = new Map(nodes.map((p) => [p.task, p]));
  const f = (v: number) => Math.round(v * 10) / 10;
  const arrows = c.edges.map((edge): CycleArrow => {
    const p = at.get(edge.task)!, q = at.get(edge.holder)!;
    const len = Math.hypot(q.x - p.x, q.y - p.y) || 1;
    const mx = (p.x + q.x) / 2, my = (p.y + q.y) / 2;
    // away from the centre; a chord through it (two tasks): to the right of the way from waiter to holder
    const off = Math.hypot(mx - cx, my - cy);
    const [ux, uy] = off > 1 ? [(mx - cx) / off, (my - cy) / off] : [-(q.y - p.y) / len, (q.x - p.x) / len];
    const bend = Math.max(24, r * 0.4);
    const kx = mx + ux * bend, ky = my + uy * bend; // the control point
    // start and end on the nodes' rims (an ellipse round the pill), toward the control point
    const rim = (o: CycleNode) => {
      const dx = kx - o.x, dy = ky - o.y;
      const t = 1 / (Math.hypot(dx / (o.rx + 3), dy / (NODE_RY + 3)) || 1);
      return [o.x + dx * t, o.y + dy * t];
    };
    const [sx, sy] = rim(p), [ex, ey] = rim(q);
    // the arc's middle (the curve at t = 1/2), then a little further out
    const lx = mx + (ux * bend) / 2 + ux * 10, ly = my + (uy * bend) / 2 + uy * 10;
    const anchor = ux > 0.35 ? 'start' : ux < -0.35 ? 'end' : 'middle';
    return {
      edge,
      d: `M${f(sx)},${f(sy)} Q${f(kx)},${f(ky)} ${f(ex)},${f(ey)}`,
      label: { x: Math.round(lx), y: Math.round(ly + (anchor === 'middle' ? (uy < 0 ? -10 : 12) : 0)), anchor },
    };
  });
  return { width: 2 * cx, height: 2 * cy, nodes, arrows };
}

/** The lock of an arrow in two short lines: "write lock" / "leaf 5255168, fs tree". */
function shortWhat(e: DeadlockEdge): [string, string] {
  if (e.level < 0) return ['mutex', e.level === -2 ? `lock of inode ${e.bytenr}` : `delayed node of inode ${e.bytenr}`];
  const block = e.bytenr === '0' ? 'whole tree' : `${e.level === 0 ? 'leaf' : `node L${e.level}`} ${e.bytenr}`;
  return [`${e.mode} lock`, `${block}, ${treeName(BigInt(e.tree))}`];
}

export function DeadlockCycle({ cycle, name }: { cycle: Cycle; name: (task: number) => string }) {
  const id = useId().replace(/:/g, '');
  const { width, height, nodes, arrows } = cycleLayout(cycle, name);
  return (
    <figure className="deadlock-cycle" data-testid="deadlock-cycle">
      <figcaption>The cycle: each arrow goes from a task to the task holding what it waits for</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} width="100%" style={{ maxWidth: width }} role="img" aria-label={`Deadlock: ${cycleSentence(cycle, name)}`}>
        <defs>
          <marker id={`arrow-${id}`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" className="cycle-arrowhead" />
          </marker>
        </defs>
        {arrows.map((a, i) => {
          const [l1, l2] = shortWhat(a.edge);
          return (
            <g key={i} className="cycle-edge" data-task={name(a.edge.task)} data-holder={name(a.edge.holder)} data-block={a.edge.bytenr} data-mode={a.edge.mode}>
              <path d={a.d} markerEnd={`url(#arrow-${id})`} />
              <text x={a.label.x} y={a.label.y} textAnchor={a.label.anchor}>
                <tspan x={a.label.x} dy="-0.2em">{l1}</tspan>
                <tspan x={a.label.x} dy="1.15em">{l2}</tspan>
              </text>
            </g>
          );
        })}
        {nodes.map((p) => (
          <g key={p.task} className="cycle-task" data-task={name(p.task)} transform={`translate(${p.x},${p.y})`}>
            <rect x={-p.rx} y={-NODE_RY} width={2 * p.rx} height={2 * NODE_RY} rx={NODE_RY} />
            <text textAnchor="middle" dy="0.35em">{name(p.task)}</text>
          </g>
        ))}
      </svg>
      <ol className="cycle-said" data-testid="cycle-said">
        {cycle.edges.map((e, i) => <li key={i}>{name(e.task)} waits for {edgeWhat(e)}, held by {name(e.holder)}.</li>)}
      </ol>
      {!cycle.closed && <p className="hint">The waits the core reported do not close on themselves.</p>}
    </figure>
  );
}
