// The shared blocks' story in words (lesson 6): each reference as the extent
// tree names it, each moment as a sentence, each accounted extent's trees
// before and after in one sentence, so that nothing on the panel is told by
// colour or position alone.
import type { Backref, Change, CowHow, ExtentRefs, Projected, QgroupEffect, SharedMoment, SharedStep } from '../model/shared';
import { qgroupEffects, sharedFrame } from '../model/shared';
import { formatSize } from './space.sentences';

/** A tree as a sentence names it: "the fs tree", "tree 257". */
export const who = (id: string) => (id === '5' ? 'the fs tree' : `tree ${id}`);
/** A tree as a short label (in blocks and chips): "fs", "257". */
export const short = (id: string) => (id === '5' ? 'fs' : id);

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** "leaf", "node", "data extent"; a root node is still a node. */
export const whatIs = (level: number | null) => (level === null ? 'extent' : level < 0 ? 'data extent' : level === 0 ? 'leaf' : 'node');

const signed = (n: number) => `${n > 0 ? '+' : n < 0 ? '−' : '±'}${formatSize(Math.abs(n))}`;

/** A reference in words: "keyed by tree 257 (TREE_BLOCK_REF)", "shared, by leaf 5324800 (SHARED_DATA_REF)". */
export function refText(r: Backref): string {
  switch (r.type) {
    case 'tree': return `keyed by ${who(r.root)} (TREE_BLOCK_REF)`;
    case 'shared': return `shared, by block ${r.parent} (SHARED_BLOCK_REF)`;
    case 'data': return `keyed by ${who(r.root)}, inode ${r.objectid}, offset ${r.offset}${r.count > 1 ? `, count ${r.count}` : ''} (EXTENT_DATA_REF)`;
    case 'sharedData': return `shared, by leaf ${r.parent}${r.count > 1 ? `, count ${r.count}` : ''} (SHARED_DATA_REF)`;
  }
}

/** A reference as a chip in a block: "257" (keyed by tree 257), "fs:264" (keyed by the fs tree's inode 264), "↑5324800" (by that block). */
export function refChip(r: Backref): string {
  switch (r.type) {
    case 'tree': return short(r.root);
    case 'shared': return `↑${r.parent}`;
    case 'data': return `${short(r.root)}:${r.objectid}${r.offset !== '0' ? `@${r.offset}` : ''}${r.count > 1 ? `×${r.count}` : ''}`;
    case 'sharedData': return `↑${r.parent}${r.count > 1 ? `×${r.count}` : ''}`;
  }
}

/** An extent's references on disk: "2: keyed by the fs tree (TREE_BLOCK_REF); keyed by tree 257 (TREE_BLOCK_REF)", FULL_BACKREF said. */
export function onDiskText(x: ExtentRefs): string {
  const more = x.undecoded ? `; ${x.undecoded} more in items of their own` : '';
  return `refs ${x.refs}${x.fullBackref ? ', FULL_BACKREF' : ''}: ${x.backrefs.map(refText).join('; ') || 'none decoded'}${more}`;
}

/** A queued change in words. */
export function changeText(c: Change): string {
  switch (c.op) {
    case 'new': return c.level < 0 ? `new data extent of ${who(c.tree)} (${formatSize(c.size)})` : `new ${whatIs(c.level)}, keyed by ${who(c.tree)}`;
    case 'free': return 'freed: its last reference dropped';
    case 'flag': return 'gets FULL_BACKREF';
    case 'ref': return `${c.mod > 0 ? '+1' : '−1'} ${refText(c.ref)}`;
  }
}

/** A queued change as a chip: "+257", "−fs", "+↑5324800", "FULL", "new", "freed". */
export function changeChip(c: Change): string {
  switch (c.op) {
    case 'new': return 'new';
    case 'free': return 'freed';
    case 'flag': return 'FULL';
    case 'ref': return `${c.mod > 0 ? '+' : '−'}${refChip(c.ref)}`;
  }
}

/** A tree block's references once the queue runs. */
export function projectedText(p: Projected): string {
  if (p.freed) return 'freed';
  return `refs ${p.refs}${p.fullBackref ? ', FULL_BACKREF' : ''}: ${p.backrefs.map(refText).join('; ')}`;
}

const HOW: Record<CowHow, (tree: string, from: string) => string> = {
  alone: (t, from) => `only ${who(t)} referred to ${from}, which is freed (at the commit: pinned until then)`,
  letGo: (t, from) => `${from} is shared and ${who(t)} owns it, so it lets go: ${from}'s children get references by ${from} itself, ${from} is marked FULL_BACKREF, and ${who(t)}'s keyed references now reach them through the copy`,
  copy: (t, from) => `${from} is shared and ${who(t)} does not own it (or it is FULL_BACKREF already): the copy's children gain keyed references of ${who(t)}, and ${who(t)}'s reference to ${from} is dropped`,
  lastHolder: (t, from) => `${who(t)} was the last to hold ${from}, which is FULL_BACKREF: the references by ${from} become keyed references of ${who(t)}, and ${from} is freed`,
};

/** The COW's treatment of the block it copied, in a few words (the block's tag in the figure). */
export const HOW_SHORT: Record<CowHow, string> = { alone: 'not shared: freed', letGo: 'shared, owner lets go', copy: 'shared: copy keyed', lastHolder: 'last holder: freed' };

/** Why a reference was queued, as a clause. */
function whyText(m: Extract<SharedMoment, { kind: 'ref' }>): string {
  if (m.why === 'snapshot') return `: ${who(m.by!)}'s new root points at it`;
  if (m.why === 'cow') return `: ${who(m.by!)}'s COW of ${m.cow}`;
  if (m.why === 'clone') return ': the clone (a reflink) points a new file extent item at it';
  if (m.why === 'drop') return `: the cleaner drops deleted ${who(m.by!)}, which let go of it`;
  return '';
}

/** One moment told. */
export function momentSentence(m: SharedMoment, path: (tree: string) => string): string {
  switch (m.kind) {
    case 'cow':
      return `${cap(who(m.tree))} copies ${whatIs(m.level)} ${m.from} → ${m.to} (COW): ${HOW[m.how](m.tree, m.from)}.`;
    case 'copyRoot':
      return `Snapshot: ${who(m.tree)}'s root ${whatIs(m.level)} ${m.bytenr} is a copy of ${who(m.source)}'s root node (btrfs_copy_root): the same pointers, so both trees point at the same blocks, each of which gains a reference of ${who(m.tree)}.`;
    case 'snapshot':
      return `The snapshot is in place: ${who(m.tree)} (${path(m.tree) || 'the top level'}) has a ROOT_ITEM keyed by the transaction, (${m.tree} ROOT_ITEM ${m.generation}), pointing at ${whatIs(m.level)} ${m.root}; ROOT_REF and ROOT_BACKREF name it in its parent, and ${who(m.source)}'s last_snapshot is ${m.generation}.`;
    case 'alloc':
      return `New ${whatIs(m.level)} ${m.bytenr} in ${who(m.tree)}: one reference, keyed by its tree.`;
    case 'free':
      return m.dropped ? `${cap(whatIs(m.level))} ${m.bytenr} of ${who(m.tree)} is freed with the references it held: only the deleted tree held it.`
        : `${cap(whatIs(m.level))} ${m.bytenr} of ${who(m.tree)} is freed: its last reference is dropped.`;
    case 'drop':
      return `The cleaner has dropped deleted ${who(m.tree)} (btrfs_drop_snapshot): each block only it held is freed with the references it held, each block others share has lost its reference, and its ROOT_ITEM is gone.`;
    case 'data':
      return `New data extent ${m.bytenr} (${formatSize(m.size)}) written for ${who(m.tree)}${m.inode !== null ? `'s inode ${m.inode} at offset ${m.offset}: keyed by the tree, the inode and the offset (EXTENT_DATA_REF)` : ''}.`;
    case 'ref':
      return `${m.mod > 0 ? 'Queued: +1' : 'Queued: −1'} reference to ${whatIs(m.level)} ${m.bytenr}, ${refText(m.ref)}${whyText(m)}.`;
    case 'flag':
      return `${cap(whatIs(m.level))} ${m.bytenr} gets FULL_BACKREF (queued with the references): from now on its children are referenced by the block itself, and whoever copies it next moves those references.`;
    case 'qextent':
      return accountedSentence(m);
    case 'qgroup':
      return qgroupSentence(m, path);
    case 'commit':
      return `Commit, generation ${m.generation}: the queued references run into the extent tree, and the accounting above is written to the quota tree.`;
  }
}

/** A set of trees: "the fs tree and tree 257", "no tree". */
const trees = (ids: readonly string[]) => (ids.length ? ids.map(who).join(' and ') : 'no tree');

/** An accounted extent's old roots → new roots, and what that does to the qgroups, in one sentence. */
export function accountedSentence(m: Extract<SharedMoment, { kind: 'qextent' }>, effects?: QgroupEffect[]): string {
  const { before, after } = m;
  const same = before.length === after.length && before.every((t) => after.includes(t));
  const why = !before.length ? 'a new extent'
    : !after.length ? 'no tree reaches it any more'
      : same ? 'the same trees reach it'
        : after.length === 1 && before.length > 1 ? `only ${who(after[0])} reaches it now`
          : before.length === 1 && after.length > 1 ? 'it is shared now'
            : 'other trees reach it';
  const fx = effects ?? qgroupEffectsOf(m);
  const said = fx.length ? fx.map(effectText).join('; ') : 'no qgroup changes';
  return `${cap(whatIs(m.level))} ${m.bytenr} (${formatSize(m.size)}): old roots ${trees(before)} → new roots ${trees(after)}; ${why}: ${said}.`;
}

/** "0/257 exclusive +4.0 KiB", "0/5 referenced −4.0 KiB, exclusive −4.0 KiB". */
export function effectText(e: QgroupEffect): string {
  const parts = [e.referenced ? `referenced ${signed(e.referenced)}` : '', e.exclusive ? `exclusive ${signed(e.exclusive)}` : ''].filter(Boolean);
  return `${e.qgroup} ${parts.join(', ')}`;
}

const qgroupEffectsOf = (m: Extract<SharedMoment, { kind: 'qextent' }>) => qgroupEffects(m.before, m.after, m.size);

function qgroupSentence(m: Extract<SharedMoment, { kind: 'qgroup' }>, path: (tree: string) => string): string {
  const sub = m.qgroup.startsWith('0/') ? m.qgroup.slice(2) : null;
  const name = sub ? ` (${path(sub) || 'the top level'})` : '';
  const nums = `referenced ${formatSize(m.referenced)}, exclusive ${formatSize(m.exclusive)}`;
  if (m.how === 'accounted') return `Qgroup ${m.qgroup}${name} after this commit's accounting: ${nums}.`;
  if (m.how === 'inherited') return `Qgroup ${m.qgroup}${name} as the snapshot sets it (btrfs_qgroup_inherit): ${nums}; the source and the snapshot share everything but their root nodes, so each holds only its root node exclusively.`;
  return `Qgroup ${m.qgroup}${name} is set: ${nums}.`;
}

/** The step in one sentence: its COWs and how they treated shared blocks, the references queued, the commit's accounting. */
export function sharedSummary(step: SharedStep): string {
  const f = sharedFrame(step, null, null);
  const cows = step.moments.filter((m): m is Extract<SharedMoment, { kind: 'cow' }> => m.kind === 'cow');
  const refs = step.moments.filter((m): m is Extract<SharedMoment, { kind: 'ref' }> => m.kind === 'ref');
  const parts: string[] = [];
  const snap = step.moments.find((m) => m.kind === 'snapshot');
  if (snap && snap.kind === 'snapshot') parts.push(`a snapshot: ${who(snap.tree)}, a copy of ${who(snap.source)}'s root`);
  for (const d of step.moments) if (d.kind === 'drop') parts.push(`deleted ${who(d.tree)} dropped by the cleaner`);
  if (cows.length) {
    const shared = cows.filter((c) => c.how !== 'alone');
    parts.push(`${cows.length} block${cows.length === 1 ? '' : 's'} copied on write${shared.length ? ` (${shared.map((c) => `${c.from}: ${HOW_SHORT[c.how]}`).join(', ')})` : ', none of them shared'}`);
  }
  if (refs.length) {
    const up = refs.filter((r) => r.mod > 0).length;
    parts.push(`${refs.length} reference${refs.length === 1 ? '' : 's'} queued (${up} added, ${refs.length - up} dropped)`);
  }
  const commits = step.moments.filter((m) => m.kind === 'commit').length;
  const the = commits > 1 ? `the ${commits} commits` : 'the commit';
  if (f.accounted.length) parts.push(`${f.accounted.length} extent${f.accounted.length === 1 ? '' : 's'} accounted at ${the}`);
  if (!commits && f.queue.length) parts.push('no commit: the queue waits for the next one');
  else if (commits) parts.push(`${the} ran the queue`);
  return parts.length ? `${cap(parts.join('; '))}.` : 'No block of a subvolume tree changed, and no reference was queued.';
}
