// The relocation panel's parts (lesson 7), each a plain function of its data:
// the seed's picture (a subvolume beside its reloc tree, three levels: the
// roots, the nodes merge swaps, the leaves below them, each block old, new
// or shared, runs of shared leaves drawn as one labelled group, the swapped
// pointers marked, the blocks a mode traces outlined and counted),
// the three modes' dirty-extent counter with their qgroups, and the seed's
// table beside our measured figures.
import { useId } from 'react';
import type { QgroupBalanceSeed } from '../lessons';
import { percentChange, sharedBelow, SWAP_MODES, tracedBlocks, walkedBelow, type ModeRun, type QgroupSwapMode, type RelocChild, type RelocPicture, type RelocSlot } from '../model/relocation';
import { treeName } from './relocation.sentences';
import { formatSize } from './space.sentences';

const S = 11, G = 2, ROOT_W = 185, ROOT_H = 34, TOP = 26, PAD = 8, GAP = 30;
const NODE_W = 96, NODE_H = 24, RUN_W = 60, RUN_H = 14, SLOT_GAP = 16, ROW1 = 44, ROW2 = 40;

type Kind = 'old' | 'new' | 'shared' | 'gone';
const LETTER: Record<Kind, string> = { old: 'O', new: 'N', shared: 'S', gone: '' };
const SAID: Record<Kind, string> = { old: 'old, in the group or replaced by a copy', new: "new, the reloc tree's copy", shared: 'an old block both trees point at (shared)', gone: '' };

function slotKind(s: RelocSlot, side: 'file' | 'reloc'): Kind {
  const b = side === 'file' ? s.file : s.reloc;
  if (b === null) return 'gone';
  if (b !== s.old) return 'new';
  return s.reloc !== null && s.file === s.reloc ? 'shared' : 'old';
}

/** What a side's node points at below it: each copied or replaced leaf alone, each run of shared ones as one labelled group. */
type Item = { kind: 'one'; child: RelocChild } | { kind: 'run'; children: RelocChild[] };
function itemsOf(children: RelocChild[]): Item[] {
  const out: Item[] = [];
  for (const c of children) {
    const last = out.at(-1);
    if (c.copy === null && last?.kind === 'run') last.children.push(c);
    else out.push(c.copy === null ? { kind: 'run', children: [c] } : { kind: 'one', child: c });
  }
  return out;
}
const itemW = (it: Item) => (it.kind === 'one' ? S + G : RUN_W + G);
const slotW = (s: RelocSlot, nodeLevel: number) =>
  nodeLevel === 0 ? S + G : Math.max(NODE_W, (s.children ? itemsOf(s.children) : []).reduce((w, it) => w + itemW(it), 0)) + SLOT_GAP;

/** The picture in words, for its label. */
export function pictureText(p: RelocPicture, mode: QgroupSwapMode): string {
  const swapped = p.slots.filter((s) => s.swapped), copied = p.slots.filter((s) => s.copy !== null).length;
  const below = swapped.flatMap((s) => s.children ?? []);
  const traced = tracedBlocks(p, mode).size;
  const what = p.level - 1 === 0 ? 'leaves' : `level-${p.level - 1} nodes`;
  return `${treeName(p.tree)} (root ${p.fileRootCopy ?? p.fileRoot}${p.fileRootCopy ? `, merge's copy of ${p.fileRoot}` : ''}) beside its reloc tree (root ${p.relocRoot}${p.dropped ? ', dropped' : ''}): ` +
    `${p.slots.length} ${what} below the roots, ${copied} copied by the reloc tree, ${swapped.length} swapped so far` +
    (below.length ? `; below the swapped ones ${below.length} blocks, ${below.filter((c) => c.copy !== null).length} copied, ${sharedBelow(p)} shared by the old node and the new` : '') +
    `. In ${mode} mode the swaps so far trace ${traced} block${traced === 1 ? '' : 's'}.`;
}

export function RelocFigure({ picture: p, mode }: { picture: RelocPicture; mode: QgroupSwapMode }) {
  const nodeLevel = p.level - 1;
  const widths = p.slots.map((s) => slotW(s, nodeLevel));
  const treeW = Math.max(ROOT_W, widths.reduce((a, b) => a + b, 0));
  const deep = p.slots.some((s) => s.children !== null);
  const y1 = TOP + ROOT_H + ROW1, y2 = y1 + NODE_H + ROW2;
  const width = PAD * 2 + treeW * 2 + GAP, height = (deep ? y2 + RUN_H : y1 + (nodeLevel ? NODE_H : S)) + 22;
  const x0 = [PAD, PAD + treeW + GAP];
  const rootX = (side: number) => x0[side] + treeW / 2 - ROOT_W / 2;
  const slotX = (side: number, i: number) => x0[side] + widths.slice(0, i).reduce((a, b) => a + b, 0);
  const traced = tracedBlocks(p, mode);
  const nw = nodeLevel ? NODE_W : S, nh = nodeLevel ? NODE_H : S;
  return (
    <svg width={width} height={height} role="img" aria-label={pictureText(p, mode)} data-testid="reloc-svg" data-level={p.level}>
      {(['file', 'reloc'] as const).map((side, si) => {
        const rootLabel = side === 'file' ? `${treeName(p.tree)}: ${p.fileRootCopy ?? p.fileRoot}` : p.dropped ? 'reloc tree: dropped' : `reloc tree: ${p.relocRoot}`;
        const rootKind: Kind = side === 'file' ? (p.fileRootCopy ? 'new' : 'old') : p.dropped ? 'gone' : 'new';
        return (
          <g key={side} className={`reloc-side ${side}`}>
            <text x={x0[si]} y={12} className="r-caption">{side === 'file' ? 'file tree (the subvolume)' : 'reloc tree (its copy)'}</text>
            <g className={`r-root ${rootKind}`} transform={`translate(${rootX(si)},${TOP})`} data-kind={rootKind} data-level={p.level}>
              <rect width={ROOT_W} height={ROOT_H} rx={4} />
              <text x={6} y={14}>(a) {rootLabel}</text>
              <text x={6} y={27}>{rootKind === 'new' ? 'NN: new, outside the group' : rootKind === 'old' ? 'OO: old, as balance found it' : ''}</text>
            </g>
            {p.slots.map((s, i) => {
              const k = slotKind(s, side);
              if (k === 'gone') return null;
              const b = side === 'file' ? s.file : s.reloc!;
              const x = slotX(si, i), cx = x + nw / 2;
              const isTraced = traced.has(b);
              const node = b === s.copy ? 'new' : 'old';
              const items = s.children ? itemsOf(s.children) : [];
              let ix = x;
              return (
                <g key={i} className="r-branch">
                  <line className={`r-edge${s.swapped ? ' swapped' : ''}`} x1={rootX(si) + ROOT_W / 2} y1={TOP + ROOT_H} x2={cx} y2={y1} />
                  {s.swapped && <text className="r-swap" x={(rootX(si) + ROOT_W / 2 + cx) / 2 + 4} y={(TOP + ROOT_H + y1) / 2 + 3}>⇅</text>}
                  <g className={`r-slot ${k}${isTraced ? ' traced' : ''}`} transform={`translate(${x},${y1})`} data-kind={k} data-slot={i} data-level={nodeLevel}
                    data-swapped={s.swapped ? 'true' : 'false'} data-traced={isTraced ? 'true' : 'false'}>
                    <title>{`${nodeLevel ? `node (level ${nodeLevel})` : 'leaf'} ${b}, slot ${i + 1}: ${SAID[k]}${s.swapped ? ', swapped by merge' : ''}${isTraced ? `, traced in ${mode} mode` : ''}`}</title>
                    <rect width={nw} height={nh} rx={2} />
                    {nodeLevel ? <text x={5} y={15}>{p.slots.length === 2 ? `(${'bc'[i]}) ` : ''}{LETTER[k]}{LETTER[k]} {b}</text> : <text x={S / 2} y={S - 2.5} textAnchor="middle">{LETTER[k]}</text>}
                  </g>
                  {/* below the node: the side's node points at the copies (new) or the old blocks, and both at the shared ones */}
                  {items.map((it, j) => {
                    const w = itemW(it) - G, x = ix;
                    ix += itemW(it);
                    if (it.kind === 'run') {
                      const n = it.children.length, tr = traced.has(it.children[0].old);
                      return (
                        <g key={j} className="r-below">
                          <line className="r-edge" x1={cx} y1={y1 + nh} x2={x + w / 2} y2={y2} />
                          <g className={`r-leaf r-run shared${tr ? ' traced' : ''}`} transform={`translate(${x},${y2})`} data-kind="shared" data-count={n} data-traced={tr ? 'true' : 'false'}>
                            <title>{`${n} leaves both the old node and the new point at (shared): ${it.children[0].old}${n > 1 ? ` … ${it.children[n - 1].old}` : ''}${tr ? `, traced in ${mode} mode` : ', not traced'}`}</title>
                            <rect width={w} height={RUN_H} rx={2} />
                            <text x={w / 2} y={RUN_H - 4} textAnchor="middle">{n} shared</text>
                          </g>
                        </g>
                      );
                    }
                    const c = it.child, cb = node === 'new' ? c.copy ?? c.old : c.old, ck: Kind = cb === c.copy ? 'new' : 'old', tr = traced.has(cb);
                    return (
                      <g key={j} className="r-below">
                        <line className="r-edge" x1={cx} y1={y1 + nh} x2={x + S / 2} y2={y2} />
                        <g className={`r-leaf ${ck}${tr ? ' traced' : ''}`} transform={`translate(${x},${y2})`} data-kind={ck} data-count={1} data-traced={tr ? 'true' : 'false'}>
                          <title>{`leaf ${cb}: ${SAID[ck]}${tr ? `, traced in ${mode} mode` : ''}`}</title>
                          <rect width={S} height={S} rx={2} />
                          <text x={S / 2} y={S - 2.5} textAnchor="middle">{LETTER[ck]}</text>
                        </g>
                      </g>
                    );
                  })}
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
      <span><i className="l-old">O</i>old block (in the group, or the one a copy replaced): the seed's OO</span>
      <span><i className="l-new">N</i>new block, the reloc tree's copy outside the group: the seed's NN, its (g) among the leaves</span>
      <span><i className="l-shared">S</i>old, and the old node and the new both point at it (shared): the seed's (d), (e), (f)</span>
      <span>⇅ pointer swapped by merge</span>
      <span><i className="l-traced" />traced at the swap in {mode} mode</span>
    </p>
  );
}

/** How many blocks the picture's swaps trace so far in each mode, as bars: full's the core's walks (qgroup_trace_subtree) as the picture knows them, with what the walks recorded in all; subtree's and deferred's the mode's rule applied to the trace's picture. */
export function TracedCounter({ picture }: { picture: RelocPicture }) {
  const counts = SWAP_MODES.map((m) => [m, tracedBlocks(picture, m).size] as const);
  const max = Math.max(1, ...counts.map(([, n]) => n));
  const shared = sharedBelow(picture), walked = walkedBelow(picture);
  return (
    <ul className="reloc-counter" data-testid="reloc-traced" aria-label={`Blocks ${treeName(picture.tree)}'s swaps trace so far, per mode`}>
      {counts.map(([m, n]) => (
        <li key={m} data-mode={m} data-blocks={n} data-shared={m === 'full' ? shared : 0}
          {...(m === 'full' ? { 'data-walks': walked.walks, 'data-walked-blocks': walked.blocks, 'data-walked-extents': walked.extents, 'data-walked-added': walked.added,
            title: `The core's ${walked.walks} subtree walk${walked.walks === 1 ? '' : 's'} at these swaps (qgroup_trace_subtree) recorded ${walked.blocks} tree blocks and the data extents of ${walked.extents} file extent items, ${walked.added} of these records new to the transaction` } : {})}>
          <span className="c-name">{m}</span>
          <span className="c-bar" aria-hidden="true"><span style={{ width: `${(n / max) * 100}%` }} /></span>
          <span className="c-num">{n} block{n === 1 ? '' : 's'}{m === 'full' && shared ? ` (${shared} shared below the swaps)` : ''}</span>
        </li>
      ))}
    </ul>
  );
}

const MODE_SAID: Record<QgroupSwapMode, string> = {
  full: 'full (before 4.20): both subtrees from each swapped pointer down to the leaves, the old node\'s and the new one\'s, the shared leaves below them included, and the data those leaves point at; the reloc trees\' drop traced again',
  subtree: 'subtree (4.20, the seed): the reloc tree\'s new blocks and the blocks they replaced, no data; the shared leaves below a swapped node are skipped',
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
            <span className="hint"> ({r.groups.length > 1 ? `by group ${r.groups.map((g) => g.dirty.toLocaleString('en')).join(' + ')}; ` : ''}{r.relocated} relocated extents; {r.traceSwaps} pairs traced at swaps; the whole run {r.totalDirty.toLocaleString('en')})</span>
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
  const note = useId();
  return (
    <>
    <div className="table-scroll" role="region" aria-label="The seed's table and ours (scrolls sideways)" tabIndex={0}>
      <table className="reloc-seed-table" data-testid="seed004-table" aria-describedby={note}>
        <caption className="hint">The seed's counts, the model's, the kernel's</caption>
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
    <p className="hint reloc-seed-note" id={note} data-testid="seed004-note">The seed: {seed.experiment}. ({seed.source}.) Ours: <code>{seed.measured.command}</code>, {seed.measured.setup}. Ours are the model's counts; this kernel has only the deferred mode, so only those have a kernel figure beside them.</p>
    </>
  );
}
