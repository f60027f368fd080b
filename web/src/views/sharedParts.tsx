// The shared-blocks panel's parts (lesson 6), each a plain function of the
// picture at a moment and the frame of the step's story (model/shared.ts):
// the subvolume trees drawn as one figure (every root, each block once
// however many trees reach it, the data extents the leaves point at, each
// with its references on disk, what is queued and what it has once the queue
// runs), the same block by block in a table, the qgroups, the extents
// accounted at the commit, and the subvolumes' items in the root tree.
import type { Change, ExtentRefs, Projected, SharedBlock, SharedFrame, SharedPicture } from '../model/shared';
import { pictureRows } from '../model/shared';
import { accountedSentence, changeChip, changeText, onDiskText, projectedText, refChip, short, whatIs, who } from './shared.sentences';
import { formatSize } from './space.sentences';

const W = 118, H = 74, DH = 60, GAP_X = 10, GAP_Y = 44, PAD = 8, LINE = 13;
/** A tree's colour and dash (lines are told apart by their pattern too), by its place among the picture's trees. */
const PALETTE = ['#1d3557', '#2a7f62', '#b5452b', '#6a4c93', '#7a5c00'];
const DASH = ['', '7 3', '2 3', '9 3 2 3', '1 2'];
const MAX_CHARS = 19;
/** A block's width in the figure. */
export const FIGURE_BLOCK = W;

const clip = (s: string) => (s.length > MAX_CHARS ? `${s.slice(0, MAX_CHARS - 1)}…` : s);

/** The tree a picture names by its place (for its colour), -1: none drawn. */
const treeIndex = (p: SharedPicture, id: string) => p.trees.findIndex((t) => t.id === id);

/** A tree as the legend and captions name it: "fs tree (the top level)", "tree 257: snapshots/monday". */
export function treeLabel(p: SharedPicture, id: string): string {
  const t = p.trees.find((x) => x.id === id);
  return id === '5' ? 'fs tree (the top level)' : t?.deleted ? `tree ${id}: deleted, the cleaner drops it` : `tree ${id}${t?.path ? `: ${t.path}` : ''}`;
}

interface BlockWords {
  title: string;
  lines: string[];
  said: string;
}

function queuedFor(frame: SharedFrame, bytenr: string): Change[] {
  return frame.queue.filter((c) => c.bytenr === bytenr);
}

function projectedChip(p: Projected): string {
  return p.freed ? '→ freed' : `→ ${p.refs}${p.fullBackref ? ' F' : ''}: ${p.backrefs.map(refChip).join(' ')}`;
}

function blockWords(b: SharedBlock, x: ExtentRefs | undefined, frame: SharedFrame): BlockWords {
  const queued = queuedFor(frame, b.bytenr);
  const row = frame.rows.find((r) => r.bytenr === b.bytenr);
  const what = `${whatIs(b.level)} ${b.bytenr}`;
  const lines = [b.rootOf !== null ? `root of ${short(b.rootOf)} · gen ${b.generation}` : `owner ${short(b.owner)} · gen ${b.generation}`];
  lines.push(x ? `${x.refs}${x.fullBackref ? ' F' : ''}: ${x.backrefs.map(refChip).join(' ')}` : 'new: not on disk');
  if (queued.length) lines.push(`q ${queued.map(changeChip).join(' ')}`);
  if (queued.length && row?.after) lines.push(projectedChip(row.after));
  const said = `${what}${b.rootOf !== null ? `, the root of ${who(b.rootOf)}` : ''}, owned by ${who(b.owner)} (its header), reached by ${b.trees.map(who).join(' and ')}: ${x ? onDiskText(x) : 'not in the extent tree yet (new in this transaction)'}` +
    `${queued.length ? `; queued: ${queued.map(changeText).join('; ')}` : ''}${queued.length && row?.after ? `; once the queue runs: ${projectedText(row.after)}` : ''}`;
  return { title: what, lines: lines.map(clip), said };
}

function dataWords(bytenr: string, x: ExtentRefs | undefined, frame: SharedFrame): BlockWords {
  const queued = queuedFor(frame, bytenr);
  const lines = [x ? formatSize(x.size) : 'new in this transaction', x ? `${x.refs}: ${x.backrefs.map(refChip).join(' ')}${x.undecoded ? ` +${x.undecoded}` : ''}` : ''];
  if (queued.length) lines.push(`q ${queued.map(changeChip).join(' ')}`);
  const said = `data extent ${bytenr}: ${x ? onDiskText(x) : 'not in the extent tree yet'}${queued.length ? `; queued: ${queued.map(changeText).join('; ')}` : ''}`;
  return { title: `data ${bytenr}`, lines: lines.filter(Boolean).map(clip), said };
}

/** The figure's words, for its label: every tree's root, then each block and data extent. */
export function figureText(p: SharedPicture, frame: SharedFrame): string {
  const roots = p.trees.map((t) => `${who(t.id)}'s root is ${whatIs(t.level)} ${t.root}`).join('; ');
  const blocks = p.blocks.map((b) => blockWords(b, p.extents[b.bytenr], frame).said);
  const data = p.data.map((d) => dataWords(d, p.extents[d], frame).said);
  return `Subvolume trees: ${roots}. ${[...blocks, ...data].join('. ')}.`;
}

/**
 * Places items along a row from their wished x (the middle of what they
 * point at), left to right, none overlapping; those with no wish (NaN) go
 * after the one before them.
 */
export function placeRow(wished: number[], start = PAD): number[] {
  const out: number[] = [];
  let next = start;
  for (const w of wished) {
    const x = Math.max(next, Number.isNaN(w) ? next : w - W / 2);
    out.push(x);
    next = x + W + GAP_X;
  }
  return out;
}

/**
 * Where each block goes: the lowest row of blocks (the leaves) in key order
 * from the left; each row above it, and the roots, centred over their
 * children; the data extents under the leaves that point at them.
 */
function layout(p: SharedPicture, rows: SharedBlock[][]) {
  const pos = new Map<string, { x: number; y: number }>();
  const rowY = (r: number) => PAD + r * (H + GAP_Y);
  const mid = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  for (let r = rows.length - 1; r >= 0; r--) {
    const row = r === rows.length - 1 ? rows[r] : [...rows[r]].sort((a, b) => {
      const ma = mid(a.children.flatMap((c) => (pos.has(c) ? [pos.get(c)!.x] : []))), mb = mid(b.children.flatMap((c) => (pos.has(c) ? [pos.get(c)!.x] : [])));
      return (Number.isNaN(ma) ? Infinity : ma) - (Number.isNaN(mb) ? Infinity : mb);
    });
    const wished = r === rows.length - 1 ? row.map(() => NaN) : row.map((b) => mid(b.children.flatMap((c) => (pos.has(c) ? [pos.get(c)!.x + W / 2] : []))));
    placeRow(wished).forEach((x, i) => pos.set(row[i].bytenr, { x, y: rowY(r) }));
  }
  const dataY = rowY(rows.length);
  const dataPos = new Map<string, { x: number; y: number }>();
  const dataWish = p.data.map((d) => mid(p.blocks.flatMap((b) => (b.files.some((f) => f.disk === d) && pos.has(b.bytenr) ? [pos.get(b.bytenr)!.x + W / 2] : []))));
  const order = p.data.map((d, i) => ({ d, w: dataWish[i] })).sort((a, b) => (Number.isNaN(a.w) ? Infinity : a.w) - (Number.isNaN(b.w) ? Infinity : b.w));
  placeRow(order.map((o) => o.w)).forEach((x, i) => dataPos.set(order[i].d, { x, y: dataY }));
  const right = Math.max(0, ...[...pos.values(), ...dataPos.values()].map((q) => q.x + W));
  return { pos, dataPos, width: right + PAD, height: dataY + (p.data.length ? DH : -GAP_Y) + PAD };
}

export function SharedFigure({ picture: p, frame }: { picture: SharedPicture; frame: SharedFrame }) {
  const rows = pictureRows(p);
  const { pos, dataPos, width, height } = layout(p, rows);
  const current = new Set(frame.current);
  const queued = new Set(frame.queue.map((c) => c.bytenr));
  // each tree's pointers from its root (and its own nodes) to their children, coloured and dashed by tree
  const edges: { key: string; x1: number; y1: number; x2: number; y2: number; tree: number }[] = [];
  for (const b of p.blocks) {
    const from = pos.get(b.bytenr);
    if (!from) continue;
    const tree = b.rootOf !== null ? treeIndex(p, b.rootOf) : b.trees.length === 1 ? treeIndex(p, b.trees[0]) : -1;
    for (const c of new Set(b.children)) {
      const to = pos.get(c);
      if (to) edges.push({ key: `${b.bytenr}>${c}`, x1: from.x + W / 2, y1: from.y + H, x2: to.x + W / 2, y2: to.y, tree });
    }
  }
  const dataEdges: { key: string; x1: number; y1: number; x2: number; y2: number }[] = [];
  for (const b of p.blocks) {
    const from = pos.get(b.bytenr);
    if (!from) continue;
    for (const d of new Set(b.files.map((f) => f.disk))) {
      const to = dataPos.get(d);
      if (to) dataEdges.push({ key: `${b.bytenr}>${d}`, x1: from.x + W / 2, y1: from.y + H, x2: to.x + W / 2, y2: to.y });
    }
  }
  return (
    <svg width={width} height={height} role="img" aria-label={figureText(p, frame)} data-testid="shared-svg">
      {dataEdges.map((e) => <line key={e.key} className="data-edge" x1={e.x1} y1={e.y1} x2={e.x2} y2={e.y2} />)}
      {edges.map((e) => (
        <line key={e.key} className="tree-edge" x1={e.x1} y1={e.y1} x2={e.x2} y2={e.y2}
          style={e.tree >= 0 ? { stroke: PALETTE[e.tree % PALETTE.length], strokeDasharray: DASH[e.tree % DASH.length] } : undefined} />
      ))}
      {p.blocks.map((b) => {
        const at = pos.get(b.bytenr)!;
        const x = p.extents[b.bytenr];
        const w = blockWords(b, x, frame);
        const owner = treeIndex(p, b.owner);
        const row = frame.rows.find((r) => r.bytenr === b.bytenr);
        const cls = ['shared-block', x?.fullBackref ? 'full' : '', current.has(b.bytenr) ? 'current' : '', queued.has(b.bytenr) ? 'queued' : '', row?.after?.freed ? 'freed' : '', b.trees.length > 1 ? 'shared' : ''];
        return (
          <g key={b.bytenr} className={cls.filter(Boolean).join(' ')} transform={`translate(${at.x},${at.y})`} data-bytenr={b.bytenr} data-level={b.level}
            data-refs={x?.refs ?? 0} data-trees={b.trees.join(' ')} data-full={x?.fullBackref ? 'true' : 'false'} data-root={b.rootOf ?? ''}>
            <title>{w.said}</title>
            <rect width={W} height={H} rx={4} style={owner >= 0 ? { stroke: PALETTE[owner % PALETTE.length] } : undefined} />
            <text x={5} y={14} className="b-title">{w.title}</text>
            {w.lines.map((l, i) => <text key={i} x={5} y={14 + (i + 1) * LINE} className={l.startsWith('q ') ? 'b-queued' : l.startsWith('→') ? 'b-after' : ''}>{l}</text>)}
          </g>
        );
      })}
      {p.data.map((d) => {
        const at = dataPos.get(d)!;
        const x = p.extents[d];
        const w = dataWords(d, x, frame);
        const cls = ['shared-data', current.has(d) ? 'current' : '', queued.has(d) ? 'queued' : ''];
        return (
          <g key={d} className={cls.filter(Boolean).join(' ')} transform={`translate(${at.x},${at.y})`} data-bytenr={d} data-refs={x?.refs ?? 0}>
            <title>{w.said}</title>
            <rect width={W} height={DH} rx={10} />
            <text x={5} y={14} className="b-title">{w.title}</text>
            {w.lines.map((l, i) => <text key={i} x={5} y={14 + (i + 1) * LINE} className={l.startsWith('q ') ? 'b-queued' : ''}>{l}</text>)}
          </g>
        );
      })}
    </svg>
  );
}

export function SharedLegend({ picture: p }: { picture: SharedPicture }) {
  return (
    <p className="legend shared-legend" aria-label="Legend of the shared blocks">
      {p.trees.map((t, i) => (
        <span key={t.id}>
          <svg width="28" height="10" aria-hidden="true"><line x1="0" y1="5" x2="28" y2="5" style={{ stroke: PALETTE[i % PALETTE.length], strokeDasharray: DASH[i % DASH.length] }} strokeWidth={2.5} /></svg>
          {treeLabel(p, t.id)}
        </span>
      ))}
      <span><i className="l-full" />FULL_BACKREF (F): its children are referenced by it</span>
      <span><i className="l-current" />the block this moment is about</span>
      <span>fs, 257: keyed by that tree · fs:264: its inode 264 · ↑N: by block N · q: queued · →: once the queue runs</span>
    </p>
  );
}

export function RefTable({ frame, picture }: { frame: SharedFrame; picture: SharedPicture | null }) {
  if (!frame.rows.length) return <p className="hint" data-testid="ref-table">No reference changes in this step.</p>;
  const owner = (bytenr: string, level: number) => {
    if (level < 0) return '— (data)';
    const b = picture?.blocks.find((x) => x.bytenr === bytenr);
    return b ? who(b.owner) : '—'; // the tree its header names
  };
  const current = new Set(frame.current);
  return (
    <div className="table-scroll" role="region" aria-label="References, block by block (scrolls sideways)" tabIndex={0}>
      <table className="ref-table" data-testid="ref-table">
        <caption className="hint">The extent tree holds the references as of the last commit; the trees' changes queue theirs (delayed refs), which the next commit runs.</caption>
        <thead><tr><th scope="col">Block</th><th scope="col">Owner</th><th scope="col">On disk (extent tree)</th><th scope="col">Queued</th><th scope="col">Once the queue runs</th></tr></thead>
        <tbody>
          {frame.rows.map((r) => (
            <tr key={r.bytenr} data-bytenr={r.bytenr} className={current.has(r.bytenr) ? 'current' : undefined}>
              <th scope="row">{whatIs(r.level)} {r.bytenr}</th>
              <td>{owner(r.bytenr, r.level)}</td>
              <td>{r.onDisk ? onDiskText(r.onDisk) : 'not in the extent tree'}</td>
              <td>{r.queued.length ? r.queued.map(changeText).join('; ') : '—'}</td>
              <td>{r.level < 0 ? (r.queued.length ? 'at the commit' : '—') : r.after ? projectedText(r.after) : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const signedSize = (n: number) => (n ? ` (${n > 0 ? '+' : '−'}${formatSize(Math.abs(n))})` : '');

export function QgroupTable({ frame, picture }: { frame: SharedFrame; picture: SharedPicture | null }) {
  if (!frame.qgroups.length) return <p className="hint" data-testid="qgroup-table">Quotas are off: no qgroup so far.</p>;
  const path = (sub: string | null) => {
    if (sub === null) return 'a group';
    if (sub === '5') return '<toplevel>';
    const t = picture?.trees.find((x) => x.id === sub);
    return t?.deleted ? `subvolume ${sub}, deleted` : t?.path ?? `subvolume ${sub}${picture?.rootItems.some((i) => i.objectid === sub) ? '' : ', no tree'}`;
  };
  return (
    <div className="table-scroll" role="region" aria-label="Qgroups (scrolls sideways)" tabIndex={0}>
    <table className="qgroup-table" data-testid="qgroup-table">
      <caption className="hint">Referenced: the bytes its subvolumes reach; exclusive: those no other subvolume reaches. In brackets: the change since the step began.</caption>
      <thead><tr><th scope="col">Qgroup</th><th scope="col">Subvolume</th><th scope="col">Referenced</th><th scope="col">Exclusive</th></tr></thead>
      <tbody>
        {frame.qgroups.map((q) => (
          <tr key={q.qgroup} data-qgroup={q.qgroup} data-referenced={q.referenced} data-exclusive={q.exclusive} className={q.fresh ? 'fresh' : undefined}>
            <th scope="row">{q.qgroup}</th>
            <td>{path(q.subvol)}</td>
            <td title={`${q.referenced} bytes`}>{formatSize(q.referenced)}{signedSize(q.delta.referenced)}</td>
            <td title={`${q.exclusive} bytes`}>{formatSize(q.exclusive)}{signedSize(q.delta.exclusive)}</td>
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  );
}

export function AccountedList({ frame }: { frame: SharedFrame }) {
  if (!frame.accounted.length) return <p className="hint" data-testid="accounted">No extent accounted so far in this step (qgroups are counted at a commit).</p>;
  return (
    <ol className="accounted" data-testid="accounted">
      {frame.accounted.map(({ m, effects }) => (
        <li key={m.seq} data-bytenr={m.bytenr} className={frame.moment === m ? 'current' : undefined}>{accountedSentence(m, effects)}</li>
      ))}
    </ol>
  );
}

export function RootItems({ picture: p }: { picture: SharedPicture }) {
  const links = p.rootItems.filter((i) => i.type !== 'ROOT_ITEM');
  return (
    <ul className="root-items" data-testid="root-items">
      {p.trees.map((t) => (
        <li key={t.id} data-tree={t.id}>
          {!t.hasItem ? <>{treeLabel(p, t.id)}: no ROOT_ITEM yet (the commit writes it), root {whatIs(t.level)} {t.root}</> : <>
          <code>({t.id === '5' ? 'FS_TREE' : t.id} ROOT_ITEM {t.itemOffset})</code>{' '}
          {t.itemOffset !== '0' ? `keyed by transaction ${t.itemOffset}, which made the snapshot; ` : ''}
          root {t.itemRoot} as last committed{t.itemRoot !== t.root ? ` (now ${t.root}: written at the commit)` : ''}, last_snapshot {t.lastSnapshot}
          {t.id !== '5' ? `, otransid ${t.otransid}` : ''}{t.readonly ? ', read-only' : ''}{t.deleted ? ', refs 0: deleted (an ORPHAN item keeps it until the cleaner has dropped its tree)' : ''}</>}
        </li>
      ))}
      {links.map((i) => (
        <li key={i.key}><code>({i.key})</code> {i.body.replace(/^root (?:back)?ref key /, '')}</li>
      ))}
    </ul>
  );
}
