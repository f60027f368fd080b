// The relocation panel's parts (lesson 7), each a plain function of its data:
// the seed's picture (a subvolume beside its reloc tree, each block old, new
// or shared, the swapped slots marked, the blocks a mode traces outlined),
// the three modes' dirty-extent counter with their qgroups, and the seed's
// table beside our measured figures.
import type { QgroupBalanceSeed } from '../lessons';
import { percentChange, type ModeRun, type QgroupSwapMode, type RelocPicture, type RelocSlot } from '../model/relocation';
import { treeName } from './relocation.sentences';
import { formatSize } from './space.sentences';

const S = 10, G = 2, ROOT_W = 185, ROOT_H = 34, TOP = 26, ROW = 80, PAD = 8, GAP = 30;

type Kind = 'old' | 'new' | 'shared' | 'gone';
const LETTER: Record<Kind, string> = { old: 'O', new: 'N', shared: 'S', gone: '' };

/**
 * Whether a mode traces a slot's block at the swap. full: both subtrees
 * below each swapped pointer (here a swapped leaf, old and new, and the data
 * its items point at); subtree: the new block and the one it replaced;
 * deferred: none. A shared slot (never copied, never swapped) is below no
 * swapped pointer in this one-level picture: no mode traces it.
 */
export function tracedBy(mode: QgroupSwapMode, slot: RelocSlot): boolean {
  if (mode === 'deferred') return false;
  return slot.copy !== null;
}

function slotKind(s: RelocSlot, side: 'file' | 'reloc'): Kind {
  const b = side === 'file' ? s.file : s.reloc;
  if (b === null) return 'gone';
  if (b !== s.old) return 'new';
  return s.reloc !== null && s.file === s.reloc ? 'shared' : 'old';
}

/** The picture in words, for its label. */
export function pictureText(p: RelocPicture, mode: QgroupSwapMode): string {
  const swapped = p.slots.filter((s) => s.swapped).length, copied = p.slots.filter((s) => s.copy !== null).length;
  const traced = p.slots.filter((s) => tracedBy(mode, s)).length;
  return `${treeName(p.tree)} (root ${p.fileRootCopy ?? p.fileRoot}${p.fileRootCopy ? `, merge's copy of ${p.fileRoot}` : ''}) beside its reloc tree (root ${p.relocRoot}${p.dropped ? ', dropped' : ''}): ` +
    `${p.slots.length} blocks below the roots, ${copied} copied by the reloc tree, ${p.slots.filter((s) => s.reloc !== null && s.file === s.reloc).length} shared by both, ${swapped} swapped so far. ` +
    `In ${mode} mode ${traced} of the pairs are traced at the swap.`;
}

export function RelocFigure({ picture: p, mode }: { picture: RelocPicture; mode: QgroupSwapMode }) {
  const n = p.slots.length;
  const treeW = Math.max(ROOT_W, n * (S + G));
  const width = PAD * 2 + treeW * 2 + GAP, height = TOP + ROW + S + 40;
  const x0 = [PAD, PAD + treeW + GAP];
  const rootX = (side: number) => x0[side] + treeW / 2 - ROOT_W / 2;
  const childX = (side: number, i: number) => x0[side] + i * (S + G);
  const cy = TOP + ROW;
  return (
    <svg width={width} height={height} role="img" aria-label={pictureText(p, mode)} data-testid="reloc-svg">
      {(['file', 'reloc'] as const).map((side, si) => {
        const rootLabel = side === 'file' ? `${treeName(p.tree)}: ${p.fileRootCopy ?? p.fileRoot}` : p.dropped ? 'reloc tree: dropped' : `reloc tree: ${p.relocRoot}`;
        const rootKind: Kind = side === 'file' ? (p.fileRootCopy ? 'new' : 'old') : p.dropped ? 'gone' : 'new';
        return (
          <g key={side} className={`reloc-side ${side}`}>
            <text x={x0[si]} y={12} className="r-caption">{side === 'file' ? 'file tree (the subvolume)' : 'reloc tree (its copy)'}</text>
            <g className={`r-root ${rootKind}`} transform={`translate(${rootX(si)},${TOP})`} data-kind={rootKind}>
              <rect width={ROOT_W} height={ROOT_H} rx={4} />
              <text x={6} y={14}>{rootLabel}</text>
              <text x={6} y={27}>{rootKind === 'new' ? 'NN: new, outside the group' : rootKind === 'old' ? 'OO: old, in the group' : ''}</text>
            </g>
            {p.slots.map((s, i) => {
              const k = slotKind(s, side);
              if (k === 'gone') return null;
              const x = childX(si, i);
              return <line key={`e${i}`} className={`r-edge${s.swapped ? ' swapped' : ''}`} x1={rootX(si) + ROOT_W / 2} y1={TOP + ROOT_H} x2={x + S / 2} y2={cy} />;
            })}
            {p.slots.map((s, i) => {
              const k = slotKind(s, side);
              const b = side === 'file' ? s.file : s.reloc;
              const traced = tracedBy(mode, s) && k !== 'gone';
              const x = childX(si, i);
              return (
                <g key={i} className={`r-slot ${k}${traced ? ' traced' : ''}`} transform={`translate(${x},${cy})`} data-kind={k} data-slot={i} data-swapped={s.swapped ? 'true' : 'false'} data-traced={traced ? 'true' : 'false'}>
                  <title>{k === 'gone' ? `slot ${i + 1}: the reloc tree is gone` : `slot ${i + 1}: block ${b}, ${k === 'old' ? 'old, in the group' : k === 'new' ? "new, the reloc tree's copy" : 'an old block both trees point at (shared)'}${s.swapped ? ', swapped' : ''}${traced ? `, traced in ${mode} mode` : ''}`}</title>
                  {k !== 'gone' && <rect width={S} height={S} rx={2} />}
                  <text x={S / 2} y={S - 2.5} textAnchor="middle">{LETTER[k]}</text>
                  {s.swapped && <text x={S / 2} y={S + 10} textAnchor="middle" className="r-swap">⇅</text>}
                </g>
              );
            })}
          </g>
        );
      })}
    </svg>
  );
}

export function RelocLegend({ mode }: { mode: QgroupSwapMode }) {
  return (
    <p className="legend reloc-legend" aria-label="Legend of the picture">
      <span><i className="l-old">O</i>old block, in the group</span>
      <span><i className="l-new">N</i>new block: the reloc tree's copy, outside it</span>
      <span><i className="l-shared">S</i>old, and both trees point at it (shared)</span>
      <span>⇅ swapped by merge</span>
      <span><i className="l-traced" />traced at the swap in {mode} mode</span>
    </p>
  );
}

const MODE_SAID: Record<QgroupSwapMode, string> = {
  full: 'full (before 4.20): both subtrees from each swapped pointer down to the leaves (here the swapped leaves themselves), and the data those leaves point at; the reloc trees\' drop traced again. Shared leaves are not below a swapped pointer',
  subtree: 'subtree (4.20, the seed): the reloc tree\'s new blocks and the blocks they replaced, no data; shared blocks are not traced',
  deferred: 'deferred (5.1, this kernel): nothing at the swap; a pair is traced only if the subvolume copies the block before the commit',
};
export const modeSaid = (m: QgroupSwapMode) => MODE_SAID[m];

/** The three runs' counter: each mode's dirty extents from its first balance on, as bars, and its qgroups. */
export function ModesCounter({ runs }: { runs: ModeRun[] }) {
  const max = Math.max(1, ...runs.map((r) => r.balanceDirty));
  const qgroups = Object.keys(runs[0]?.qgroups ?? {}).sort((a, b) => {
    const [al, ai] = a.split('/').map(BigInt), [bl, bi] = b.split('/').map(BigInt);
    return al !== bl ? (al < bl ? -1 : 1) : ai === bi ? 0 : ai < bi ? -1 : 1;
  });
  return (
    <>
      <ul className="reloc-counter" data-testid="reloc-counter">
        {runs.map((r) => (
          <li key={r.mode} data-mode={r.mode} data-dirty={r.balanceDirty} data-relocated={r.relocated}>
            <span className="c-name">{r.mode}</span>
            <span className="c-bar" aria-hidden="true"><span style={{ width: `${(r.balanceDirty / max) * 100}%` }} /></span>
            <span className="c-num">{r.balanceDirty.toLocaleString('en')} dirty extents</span>
            <span className="hint"> ({r.relocated} relocated extents; {r.traceSwaps} pairs traced at swaps; the whole run {r.totalDirty.toLocaleString('en')})</span>
          </li>
        ))}
      </ul>
      <div className="table-scroll" role="region" aria-label="Qgroups in each mode (scrolls sideways)" tabIndex={0}>
        <table className="qgroup-table" data-testid="reloc-qgroups">
          <caption className="hint">Each run's qgroups at its end, as btrfs qgroup show prints them (referenced / exclusive).</caption>
          <thead><tr><th scope="col">Qgroup</th>{runs.map((r) => <th scope="col" key={r.mode}>{r.mode}</th>)}</tr></thead>
          <tbody>
            {qgroups.map((q) => (
              <tr key={q} data-qgroup={q}>
                <th scope="row">{q}</th>
                {runs.map((r) => <td key={r.mode} data-mode={r.mode}>{formatSize(r.qgroups[q]?.[0] ?? 0)} / {formatSize(r.qgroups[q]?.[1] ?? 0)}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** The seed's published table, and our benchmark's figures beside it. */
export function SeedFigures({ seed }: { seed: QgroupBalanceSeed }) {
  const snaps = [...new Set(seed.table.map((r) => r.snapshots))];
  const row = (n: number, metric: string) => seed.table.find((r) => r.snapshots === n && r.metric === metric);
  const fmt = (n: number) => n.toLocaleString('en');
  return (
    <div className="table-scroll" role="region" aria-label="The seed's table and ours (scrolls sideways)" tabIndex={0}>
      <table className="reloc-seed-table" data-testid="seed004-table">
        <caption className="hint">The seed: {seed.experiment}. ({seed.source}.) Ours: <code>{seed.measured.command}</code>, {seed.measured.setup}. Ours are the model's counts; this kernel has only the deferred mode, so only those have a kernel figure beside them.</caption>
        <thead>
          <tr><th scope="col">Snapshots</th><th scope="col">Count</th><th scope="col">Seed: v4.19-rc1</th><th scope="col">Seed: with the change</th><th scope="col">Seed: change</th>
            <th scope="col">Model: full</th><th scope="col">Model: subtree</th><th scope="col">Model: change</th><th scope="col">Model: deferred</th><th scope="col">Kernel 6.18</th></tr>
        </thead>
        <tbody>
          {snaps.flatMap((n) => {
            const m = seed.measured.rows.find((r) => r.snapshots === n)!;
            const rel = row(n, 'relocated extents')!, dirty = row(n, 'qgroup dirty extents')!;
            return [
              <tr key={`${n}r`} data-snapshots={n} data-metric="relocated">
                <th scope="row">{n}</th><td>relocated extents</td><td>{fmt(rel.before)}</td><td>{fmt(rel.after)}</td><td>{percentChange(rel.before, rel.after)}</td>
                <td colSpan={3}>{fmt(m.relocatedOurs)} (every mode)</td><td>—</td><td>{fmt(m.relocatedKernel)}</td>
              </tr>,
              <tr key={`${n}d`} data-snapshots={n} data-metric="dirty">
                <th scope="row">{n}</th><td>qgroup dirty extents</td><td>{fmt(dirty.before)}</td><td>{fmt(dirty.after)}</td><td>{percentChange(dirty.before, dirty.after)}</td>
                <td>{fmt(m.full)}</td><td>{fmt(m.subtree)}</td><td>{percentChange(m.full, m.subtree)}</td><td>{fmt(m.deferred)}</td><td>{fmt(m.deferredKernel)} (deferred)</td>
              </tr>,
            ];
          })}
        </tbody>
      </table>
    </div>
  );
}
