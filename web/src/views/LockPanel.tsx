// The tree locks of the step on show (lesson 4), at the player's moment:
// every block the step locks, drawn per tree by level (the root on top,
// lines from parent to child as lock coupling went down them), each with its
// state (free, read-held by which tasks, write-held by which task) and the
// tasks queued for it; the same in words below. The delayed node mutexes
// the step takes (an inode's delayed items flushed, or the inode evicted)
// are drawn apart, one box an inode: they are no tree block. Replayed from
// the step's lock events up to the moment (model/locks.ts), so stepping back
// is exact.
import { useMemo } from 'react';
import { isInodeLock, isMutex, lockFrame, stateOf, type LockNode, type LockTree } from '../model/locks';
import { lockWhat, treeName } from '../model/names';
import type { PlayerContext } from './registry';
import { useStepTimeline } from './useStepTimeline';
import './locks.css';

const W = 128, H = 58, GAP_X = 10, GAP_Y = 26, PAD = 6;

type NameOf = (task: number) => string;

function heldBy(n: LockNode, name: NameOf): string {
  const s = stateOf(n);
  if (s === 'write') return `${isMutex(n) ? 'held' : 'write-held'} by ${name(n.writer!)}`;
  if (s === 'read') return `read-held by ${n.readers.map(name).join(', ')}`;
  return 'free';
}

/** The tasks queued, with the mode each wants (a mutex has none). */
const waiting = (n: LockNode, name: NameOf) => n.waiters.map((w) => (isMutex(n) ? name(w.task) : `${name(w.task)} (${w.mode})`)).join(', ');

/** The block in words: "leaf 5255168 of the fs tree: read-held by A; waiting: C (write)", "the delayed node mutex of inode 259: held by B". */
export function blockSentence(n: LockNode, name: NameOf): string {
  const what = `${lockWhat(n)}${n.bytenr === '0' && !isMutex(n) ? ' (one lock for the whole tree)' : ''}`;
  return `${what}: ${heldBy(n, name)}${n.waiters.length ? `; waiting: ${waiting(n, name)}` : ''}`;
}

/** The step's inode mutexes (inode locks, delayed node mutexes), a box each: who holds it, who waits. */
function MutexLocks({ mutexes, name }: { mutexes: LockNode[]; name: NameOf }) {
  const width = PAD * 2 + mutexes.length * W + (mutexes.length - 1) * GAP_X, height = PAD * 2 + H;
  const label = `Inode mutexes: ${mutexes.map((n) => blockSentence(n, name)).join('; ')}`;
  return (
    <figure className="lock-tree lock-mutexes" data-tree="delayed nodes">
      <figcaption>inode locks and delayed node mutexes</figcaption>
      <div className="lock-tree-box" role="region" aria-label="Inode mutexes (scrolls sideways)" tabIndex={0}>
        <svg width={width} height={height} role="img" aria-label={label}>
          {mutexes.map((n, i) => {
            const held = n.writer !== null;
            return (
              <g key={n.key} className={`lock-mutex state-${held ? 'write' : 'free'}${n.waiters.length ? ' contended' : ''}${n.current ? ' current' : ''}`}
                transform={`translate(${PAD + i * (W + GAP_X)},${PAD})`} data-inode={n.bytenr} data-kind={isInodeLock(n) ? 'inode lock' : 'delayed node'} data-state={held ? 'held' : 'free'} data-waiters={n.waiters.length}>
                <rect width={W} height={H} rx={4} />
                <text x={6} y={14} className="lock-what">{isInodeLock(n) ? `lock, inode ${n.bytenr}` : `delayed, inode ${n.bytenr}`}</text>
                <text x={6} y={30} className="lock-held">{held ? `held: ${name(n.writer!)}` : 'free'}</text>
                {n.waiters.length > 0 && <text x={6} y={46} className="lock-waiters">{`waits: ${n.waiters.map((w) => name(w.task)).join(' ')}`}</text>}
              </g>
            );
          })}
        </svg>
      </div>
    </figure>
  );
}

function TreeLocks({ t, name }: { t: LockTree; name: NameOf }) {
  const widest = Math.max(...t.rows.map((r) => r.length));
  const width = PAD * 2 + widest * W + (widest - 1) * GAP_X;
  const height = PAD * 2 + t.rows.length * H + (t.rows.length - 1) * GAP_Y;
  const pos = new Map<string, { x: number; y: number }>();
  t.rows.forEach((row, r) => {
    const rowW = row.length * W + (row.length - 1) * GAP_X;
    const x0 = (width - rowW) / 2;
    row.forEach((n, i) => pos.set(n.key, { x: x0 + i * (W + GAP_X), y: PAD + r * (H + GAP_Y) }));
  });
  const label = `Locks in the ${treeName(BigInt(t.tree))}: ${t.rows.flat().map((n) => blockSentence(n, name)).join('; ')}`;
  return (
    <figure className="lock-tree" data-tree={treeName(BigInt(t.tree))}>
      <figcaption>{treeName(BigInt(t.tree))}</figcaption>
      <div className="lock-tree-box" role="region" aria-label={`Locks in the ${treeName(BigInt(t.tree))} (scrolls sideways)`} tabIndex={0}>
        <svg width={width} height={height} role="img" aria-label={label}>
          {t.rows.flat().filter((n) => n.parent && pos.has(n.parent)).map((n) => {
            const p = pos.get(n.parent!)!, c = pos.get(n.key)!;
            return <line key={`e${n.key}`} className="lock-edge" x1={p.x + W / 2} y1={p.y + H} x2={c.x + W / 2} y2={c.y} />;
          })}
          {t.rows.flat().map((n) => {
            const { x, y } = pos.get(n.key)!;
            const s = stateOf(n);
            return (
              <g key={n.key} className={`lock-block state-${s}${n.waiters.length ? ' contended' : ''}${n.current ? ' current' : ''}`} transform={`translate(${x},${y})`}
                data-block={n.bytenr} data-level={n.level} data-state={s} data-waiters={n.waiters.length}>
                <rect width={W} height={H} rx={4} />
                <text x={6} y={14} className="lock-what">{n.bytenr === '0' ? 'whole tree' : `${n.level === 0 ? 'leaf' : `node L${n.level}`} ${n.bytenr}`}</text>
                <text x={6} y={30} className="lock-held">{s === 'free' ? 'free' : s === 'write' ? `W: ${name(n.writer!)}` : `R: ${n.readers.map(name).join(', ')}`}</text>
                {n.waiters.length > 0 && <text x={6} y={46} className="lock-waiters">{`waits: ${n.waiters.map((w) => `${name(w.task)}(${w.mode[0]})`).join(' ')}`}</text>}
              </g>
            );
          })}
        </svg>
      </div>
    </figure>
  );
}

export function LockPanel({ player }: { player: PlayerContext }) {
  const { index, momentSeq } = player;
  const { tl, timeline, error } = useStepTimeline(player);
  const frame = useMemo(() => (timeline ? lockFrame(timeline.locks ?? [], tl!.index === index ? momentSeq : null) : null), [timeline, tl, index, momentSeq]);
  const names = useMemo(() => new Map((timeline?.lanes ?? []).map((l) => [l.task, l.name])), [timeline]);
  const name: NameOf = (task) => names.get(task) ?? `task ${task}`;

  return (
    <section className="panel lock-panel" aria-labelledby="lock-h">
      <h3 id="lock-h">Tree locks: who holds each block, who waits</h3>
      {error && <p className="error" role="alert">{error}</p>}
      {frame && frame.trees.length === 0 && frame.mutexes.length === 0 && <p className="hint">No tree block was locked in this step.</p>}
      {frame && (frame.trees.length > 0 || frame.mutexes.length > 0) && (
        <>
          <p className="hint">
            {momentSeq === null || tl?.index !== index ? `At the step's end${frame.busy.length ? '' : ': every lock is let go'}.` : 'At the event on show.'} Each block this step locks, by level, the root on top; a line joins a
            parent to the child a task locked while still holding it (lock coupling).
            {frame.mutexes.length > 0 && ' Apart, one holder at a time each: the lock of each directory a namespace command changes and of each file written (inode->i_rwsem), and the delayed node mutex of each inode whose delayed items the step flushes (or which it evicts).'}
          </p>
          <div className="lock-trees">
            {frame.trees.map((t) => <TreeLocks key={t.tree} t={t} name={name} />)}
            {frame.mutexes.length > 0 && <MutexLocks mutexes={frame.mutexes} name={name} />}
          </div>
          <ul className="lock-said" aria-live="polite" data-testid="lock-said">
            {frame.busy.length ? frame.busy.map((n) => <li key={n.key}>{blockSentence(n, name)}.</li>) : <li>No block is locked at this moment.</li>}
          </ul>
          <p className="legend lock-legend" aria-label="Lock legend">
            <span><i className="l-free" />free</span>
            <span><i className="l-read" />R: read-held (shared)</span>
            <span><i className="l-write" />W: write-held (exclusive)</span>
            <span><i className="l-wait" />tasks queued: (r) read, (w) write</span>
            {frame.mutexes.length > 0 && <span><i className="l-write" />held: an inode mutex's one holder</span>}
          </p>
        </>
      )}
    </section>
  );
}
