// Relocation and the subtree swap (lesson 7), as the core's trace tells it.
// A balance relocates block groups one at a time, the highest first; for
// each (relocation.c's relocate_block_group):
// - chosen: the group is made read-only and its extents listed (reloc_group);
// - reloc trees built: each subvolume that reaches the group gets a reloc
//   tree, a copy of its root sharing every block below (reloc_root); the
//   path to each tree block in the group is copied there, the copy outside
//   the group (reloc_extent, and a COW in the reloc tree, TREE_RELOC);
// - merged: the subvolume's root is copied and each pointer its reloc tree
//   changed is swapped (reloc_swap): the subvolume takes the reloc tree's new
//   block, the reloc tree the old one. How qgroups trace a swap is the seed's
//   change: qgroup_swap=full traces both subtrees down to the leaves' data,
//   subtree (4.20) the new blocks and the blocks they replaced
//   (qgroup_trace_swap), deferred (5.1, this kernel) only what the subvolume
//   copies before the commit; each commit counts its dirty extents
//   (qgroup_dirty, the kernel's btrfs_qgroup_num_dirty_extents);
// - dropped: the reloc trees go, freeing the old blocks (block_free in
//   TREE_RELOC); "found N extents" (reloc_found);
// - removed: the empty group's chunk goes (chunk_remove).
// The picture (relocPicture) folds the moments and the reloc trees' copies:
// the roots, their children (the nodes merge swaps in a taller tree), and
// below each copied node the leaves it points at, copied or shared by the
// old node and the new; tracedBlocks says which of them each mode traces:
// full the subtrees the core walked at each swap (qgroup_trace_subtree, its
// old subtree's and its new one's, as the picture knows them; from the same
// step run in full mode when this run is in another, fullWalks), subtree the
// new blocks and the blocks they replaced, deferred none at the swap.
// Plain data: read once in the worker (readRelocation), crossing to the page.
import type { TraceEvent } from './trace';

/** The reloc trees' owner in a block's header: BTRFS_TREE_RELOC_OBJECTID (-8). */
export const TREE_RELOC = 18446744073709551608n;

export type QgroupSwapMode = 'full' | 'subtree' | 'deferred';
export const SWAP_MODES: QgroupSwapMode[] = ['full', 'subtree', 'deferred'];

/** The phases of one group's relocation, in order. */
export type RelocPhase = 'chosen' | 'build' | 'merge' | 'drop' | 'removed';
export const RELOC_PHASES: RelocPhase[] = ['chosen', 'build', 'merge', 'drop', 'removed'];

const BG_DATA = 1n, BG_SYSTEM = 2n;
export type GroupType = 'data' | 'metadata' | 'system';
export const groupType = (t: bigint): GroupType => ((t & BG_SYSTEM) !== 0n ? 'system' : (t & BG_DATA) !== 0n ? 'data' : 'metadata');

export type RelocMoment =
  /** A block group made read-only, its extents listed. */
  | { seq: number; kind: 'group'; group: string; length: number; type: GroupType; extents: number }
  /** A subvolume's reloc tree: a copy of its root (level), sharing every block below. */
  | { seq: number; kind: 'relocRoot'; group: string; tree: string; root: string; level: number; children: string[] }
  /** A tree block leaves the group: the path to it copied, the copy (to) elsewhere; to "0": a subvolume's root, moved by merge's copy. */
  | { seq: number; kind: 'extent'; group: string; tree: string; from: string; to: string; level: number }
  /** Merge copies the subvolume's root before it swaps its pointers. */
  | { seq: number; kind: 'mergeRoot'; group: string; tree: string; from: string; to: string; level: number }
  /** Merge swaps a pointer: the subvolume takes new, the reloc tree old; traced: qgroups traced the pair there (qgroup_trace_swap). */
  | { seq: number; kind: 'swap'; group: string; tree: string; old: string; new: string; level: number; traced: boolean }
  /** The reloc trees dropped: a block freed with them. */
  | { seq: number; kind: 'drop'; group: string; bytenr: string; root: boolean }
  /** "found N extents". */
  | { seq: number; kind: 'found'; group: string; extents: number }
  /** A commit's qgroup dirty extents. */
  | { seq: number; kind: 'dirty'; group: string | null; generation: string; extents: number }
  /** The group's chunk removed. */
  | { seq: number; kind: 'removed'; group: string; length: number; type: GroupType };

export type RelocMomentKind = RelocMoment['kind'];

/** The phase a moment belongs to. */
export function phaseOf(m: RelocMoment): RelocPhase | null {
  switch (m.kind) {
    case 'group': return 'chosen';
    case 'relocRoot': case 'extent': return 'build';
    case 'mergeRoot': case 'swap': return 'merge';
    case 'drop': case 'found': return 'drop';
    case 'removed': return 'removed';
    default: return null;
  }
}

/** A block the reloc trees copied (a COW in TREE_RELOC), with the children the copy points at (the old blocks, in slot order) when it is a node. */
export interface RelocCopy {
  seq: number;
  group: string;
  from: string;
  to: string;
  level: number;
  children: string[];
}

/** A pair qgroups traced (qgroup_trace_swap): at merge in subtree mode, or when the subvolume copies a swapped block (deferred). */
export interface TracedPair {
  seq: number;
  old: string;
  new: string;
  level: number;
}

/** A subtree qgroups walked (qgroup_trace_subtree): its top block and level, the tree blocks and file extent items the walk recorded, and how many of those records were new to the transaction. */
export interface SubtreeWalk {
  bytenr: string;
  level: number;
  blocks: number;
  extents: number;
  added: number;
}

/** A swap merge made, with the subtrees full mode walks at it (the old one's, then the new one's: the qgroup_trace_subtree events just before its reloc_swap; none in the other modes). */
export interface SwapWalks {
  tree: string;
  old: string;
  new: string;
  level: number;
  walks: SubtreeWalk[];
}

/** Each swap in events with the subtree walks made for it (full mode's; a drop's walks, of other blocks, are left out). */
export function readSwapWalks(events: readonly TraceEvent[]): SwapWalks[] {
  const out: SwapWalks[] = [];
  let pending: SubtreeWalk[] = [];
  for (const e of events) {
    if (e.kind === 'qgroup_trace_subtree') pending.push({ bytenr: e.bytenr.toString(), level: e.level, blocks: e.blocks, extents: e.extents, added: e.added });
    else if (e.kind === 'reloc_swap') {
      const old = e.old.toString(), nw = e.new.toString();
      out.push({ tree: e.tree.toString(), old, new: nw, level: e.level, walks: pending.filter((w) => w.bytenr === old || w.bytenr === nw) });
      pending = [];
    } else if (e.kind === 'reloc_group' || e.kind === 'commit') pending = [];
  }
  return out;
}

/** A run's swaps with their walks, by the script line whose step made them. */
export function swapWalksByLine(events: readonly TraceEvent[]): Map<number, SwapWalks[]> {
  const out = new Map<number, SwapWalks[]>();
  let line = 0, from = 0;
  const close = (to: number) => {
    const w = readSwapWalks(events.slice(from, to));
    if (w.length) out.set(line, [...(out.get(line) ?? []), ...w]);
  };
  events.forEach((e, i) => {
    if (e.kind !== 'op' || e.line === line) return;
    close(i);
    line = e.line;
    from = i;
  });
  close(events.length);
  return out;
}

/** A balance step's story: its moments, its groups in the order relocated, and its qgroup dirty extents. */
export interface RelocStep {
  moments: RelocMoment[];
  /** The reloc trees' copies, in the order made: the blocks on the paths too, not only the group's. */
  copies: RelocCopy[];
  tracedPairs: TracedPair[];
  /** The step's swaps as full mode traces them (the subtrees walked at each): this run's walks, or, when the script runs in another mode, the same step's in the script run in full mode (withFullWalks; the blocks are the same in every mode). */
  fullWalks: SwapWalks[];
  groups: { group: string; type: GroupType; length: number; extents: number; found: number | null; trees: string[] }[];
  /** The dirty extents of each commit in the step, and their sum. */
  dirty: number[];
  dirtyTotal: number;
}

/**
 * A step's relocation story from its events. The reloc tree's children are
 * the shared references its root gives the blocks below it (in slot order),
 * queued as the copy is made: the backref events just before reloc_root.
 */
export function readRelocation(events: readonly TraceEvent[]): RelocStep {
  const moments: RelocMoment[] = [];
  const groups: RelocStep['groups'] = [];
  const dirty: number[] = [];
  const copies: RelocCopy[] = [];
  const tracedPairs: TracedPair[] = [];
  let group: string | null = null;
  // the reloc trees' roots (their drop is told as such), and the backrefs by each new root or copied node
  const relocRoots = new Set<string>();
  const byParent = new Map<string, string[]>();
  // a group's copied nodes get their children when the group is done: the
  // backrefs their copy queued for each child, less the copies made under them later
  let groupCopies: RelocCopy[] = [];
  const settle = () => {
    const made = new Set(groupCopies.map((c) => c.to));
    for (const c of groupCopies) if (c.level > 0) c.children = [...new Set(byParent.get(c.to) ?? [])].filter((b) => !made.has(b));
    groupCopies = [];
    byParent.clear();
  };
  // the pairs traced since the last swap: merge traces a swap's pairs right before it
  let traced: TracedPair[] = [];
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    switch (e.kind) {
      case 'reloc_group':
        settle();
        group = e.logical.toString();
        groups.push({ group, type: groupType(e.type), length: Number(e.length), extents: Number(e.extents), found: null, trees: [] });
        moments.push({ seq: e.seq, kind: 'group', group, length: Number(e.length), type: groupType(e.type), extents: Number(e.extents) });
        break;
      case 'backref':
        if (group !== null && e.parent !== 0n && e.mod > 0 && e.level >= 0) {
          const p = e.parent.toString();
          const kids = byParent.get(p) ?? [];
          kids.push(e.bytenr.toString());
          byParent.set(p, kids);
        }
        break;
      case 'reloc_root': {
        if (group === null) break;
        const root = e.root.toString();
        relocRoots.add(root);
        groups.at(-1)!.trees.push(e.tree.toString());
        moments.push({ seq: e.seq, kind: 'relocRoot', group, tree: e.tree.toString(), root, level: e.level, children: [...new Set(byParent.get(root) ?? [])] });
        break;
      }
      case 'reloc_extent':
        if (group !== null) moments.push({ seq: e.seq, kind: 'extent', group, tree: e.tree.toString(), from: e.from.toString(), to: e.to.toString(), level: e.level });
        break;
      case 'cow': {
        if (group === null) break;
        if (e.tree === TREE_RELOC) {
          const c: RelocCopy = { seq: e.seq, group, from: e.from.toString(), to: e.to.toString(), level: e.level, children: [] };
          copies.push(c);
          groupCopies.push(c);
          break;
        }
        // merge's copy of a subvolume's root: a COW in a subvolume tree whose next events swap its pointers
        let j = i + 1;
        while (j < events.length && j < i + 16 && events[j].kind !== 'cow' && events[j].kind !== 'reloc_swap' && events[j].kind !== 'qgroup_trace_swap') j++;
        const next = events[j];
        if (next && (next.kind === 'reloc_swap' || next.kind === 'qgroup_trace_swap')) {
          moments.push({ seq: e.seq, kind: 'mergeRoot', group, tree: e.tree.toString(), from: e.from.toString(), to: e.to.toString(), level: e.level });
        }
        break;
      }
      case 'qgroup_trace_swap': {
        const t = { seq: e.seq, old: e.old.toString(), new: e.new.toString(), level: e.level };
        tracedPairs.push(t);
        traced.push(t);
        break;
      }
      case 'reloc_swap': {
        if (group === null) break;
        const old = e.old.toString(), nw = e.new.toString();
        moments.push({ seq: e.seq, kind: 'swap', group, tree: e.tree.toString(), old, new: nw, level: e.level, traced: traced.some((t) => t.old === old && t.new === nw) });
        traced = [];
        break;
      }
      case 'block_free':
        if (group !== null && e.tree === TREE_RELOC) moments.push({ seq: e.seq, kind: 'drop', group, bytenr: e.bytenr.toString(), root: relocRoots.has(e.bytenr.toString()) });
        break;
      case 'reloc_found':
        if (group === null) break;
        groups.find((g) => g.group === e.logical.toString())!.found = Number(e.extents);
        moments.push({ seq: e.seq, kind: 'found', group: e.logical.toString(), extents: Number(e.extents) });
        break;
      case 'qgroup_dirty':
        dirty.push(Number(e.extents));
        moments.push({ seq: e.seq, kind: 'dirty', group, generation: e.generation.toString(), extents: Number(e.extents) });
        break;
      case 'chunk_remove':
        moments.push({ seq: e.seq, kind: 'removed', group: e.logical.toString(), length: Number(e.length), type: groupType(e.type) });
        break;
    }
  }
  settle();
  return { moments, copies, tracedPairs, fullWalks: readSwapWalks(events), groups, dirty, dirtyTotal: dirty.reduce((a, b) => a + b, 0) };
}

/** The step with full mode's walks taken from the same step of the script run in full mode (its walks by line, swapWalksByLine; line: the step's line there). */
export function withFullWalks(step: RelocStep, byLine: ReadonlyMap<number, SwapWalks[]>, line: number): RelocStep {
  return { ...step, fullWalks: byLine.get(line) ?? [] };
}

/** A child of a copied node: the old block the old node points at, and the reloc tree's copy of it (null: never copied, shared by the old node and the new). */
export interface RelocChild {
  old: string;
  copy: string | null;
  /** Whether qgroups traced the pair in this run (a qgroup_trace_swap of old and copy). */
  traced: boolean;
}

/** What a slot of the picture holds: the block the subvolume's root points at and the one the reloc tree's does. */
export interface RelocSlot {
  /** The block the subvolume points at now. */
  file: string;
  /** The block the reloc tree points at now (null: the reloc tree is gone). */
  reloc: string | null;
  /** The old block and its copy (null: the reloc tree never copied it: shared by both trees). */
  old: string;
  copy: string | null;
  /** Whether merge has swapped this slot yet. */
  swapped: boolean;
  /** Whether qgroups traced the pair at the swap in this run (a qgroup_trace_swap). */
  traced: boolean;
  /** The subtrees full mode walks at this slot's swap (qgroup_trace_subtree), once it is swapped: the old block's and the new one's. */
  walks: SubtreeWalk[];
  /** A copied node's children, below the swap (null: a leaf, or not copied): the old node points at each old one, the copy at each copy or, where none was made, at the same old block. */
  children: RelocChild[] | null;
}

/** The seed's picture at a moment: one subvolume and its reloc tree, side by side. */
export interface RelocPicture {
  tree: string;
  group: string;
  /** The subvolume's root: as the balance found it, and merge's copy (null: not copied yet). */
  fileRoot: string;
  fileRootCopy: string | null;
  /** The reloc tree's root (its copy of the subvolume's root), and whether it has been dropped. */
  relocRoot: string;
  /** The roots' level: the slots are at level - 1, their children at level - 2. */
  level: number;
  dropped: boolean;
  slots: RelocSlot[];
  phase: RelocPhase;
}

/** The subvolumes with a reloc tree in the step, per group: the trees a picture can show. */
export function pictureTrees(step: RelocStep): { group: string; tree: string }[] {
  return step.moments.flatMap((m) => (m.kind === 'relocRoot' ? [{ group: m.group, tree: m.tree }] : []));
}

/**
 * The picture of tree's relocation in group after moment upTo (null: the
 * step's end): the reloc tree's root points at the subvolume root's
 * children, a copy where one was made (the swap's new block), the subvolume
 * at the old ones until merge swaps each. Below a copied node, its children:
 * the copy points at the copies made under it and shares the rest with the
 * old node (the seed's (d), (e), (f)).
 */
export function relocPicture(step: RelocStep, group: string, tree: string, upTo: number | null): RelocPicture | null {
  const rr = step.moments.find((m): m is Extract<RelocMoment, { kind: 'relocRoot' }> => m.kind === 'relocRoot' && m.group === group && m.tree === tree);
  if (!rr) return null;
  const last = upTo === null ? step.moments.length - 1 : upTo;
  const cut = last >= 0 ? step.moments[last].seq : -1;
  const mine = step.moments.filter((m) => m.group === group);
  const swaps = mine.filter((m): m is Extract<RelocMoment, { kind: 'swap' }> => m.kind === 'swap' && m.tree === tree);
  // the group's copies made by the moment (any reloc tree's: the others point at a copy one made)
  const made = new Map(step.copies.filter((c) => c.group === group && c.seq <= cut).map((c) => [c.from, c] as const));
  const copyAt = new Map(step.copies.filter((c) => c.group === group).map((c) => [c.to, c] as const));
  const pairs = new Set(step.tracedPairs.map((t) => `${t.old}>${t.new}`));
  const merge = mine.find((m): m is Extract<RelocMoment, { kind: 'mergeRoot' }> => m.kind === 'mergeRoot' && m.tree === tree);
  const rootMove = mine.find((m): m is Extract<RelocMoment, { kind: 'extent' }> => m.kind === 'extent' && m.tree === tree && m.to === '0');
  const dropped = mine.some((m) => m.kind === 'drop' && m.root && m.bytenr === rr.root && m.seq <= cut);
  const slots = rr.children.map((old): RelocSlot => {
    const s = swaps.find((x) => x.old === old);
    const swapped = !!s && s.seq <= cut;
    const copy = swapped ? s!.new : made.get(old)?.to ?? null;
    const node = copy !== null ? copyAt.get(copy) : undefined;
    const children = node && node.level > 0
      ? node.children.map((c): RelocChild => {
        const cc = made.get(c)?.to ?? null;
        return { old: c, copy: cc, traced: cc !== null && pairs.has(`${c}>${cc}`) };
      })
      : null;
    const walks = swapped ? step.fullWalks.find((w) => w.tree === tree && w.old === old && w.new === s!.new)?.walks ?? [] : [];
    return { old, copy, file: swapped ? copy! : old, reloc: dropped ? null : swapped ? old : copy ?? old, swapped, traced: !!s?.traced, walks, children };
  });
  const phaseAt = [...mine].reverse().find((m) => m.seq <= cut && phaseOf(m) !== null);
  return {
    tree, group, fileRoot: merge?.from ?? rootMove?.from ?? '', fileRootCopy: merge && merge.seq <= cut ? merge.to : null,
    relocRoot: rr.root, level: rr.level, dropped, slots, phase: phaseAt ? phaseOf(phaseAt)! : 'chosen',
  };
}

/**
 * Which blocks of the picture a mode traces at the swaps made so far:
 * full (before 4.20) the subtrees the core walked at each swap
 * (qgroup_trace_subtree: the old node's and the new one's, the shared
 * blocks below them included, and the data the leaves point at, not drawn),
 * each as the picture knows it: the walked node and the leaves drawn below
 * it on its side; subtree (4.20) the new blocks and the blocks they
 * replaced; deferred (5.1) none at the swap.
 */
export function tracedBlocks(p: RelocPicture, mode: QgroupSwapMode): Set<string> {
  const out = new Set<string>();
  if (mode === 'deferred') return out;
  for (const s of p.slots) {
    if (mode === 'full') {
      for (const w of s.walks) {
        if (w.bytenr !== s.old && w.bytenr !== s.copy) continue;
        out.add(w.bytenr);
        for (const c of s.children ?? []) out.add(w.bytenr === s.old ? c.old : c.copy ?? c.old);
      }
      continue;
    }
    if (!s.swapped || s.copy === null) continue;
    out.add(s.old).add(s.copy);
    for (const c of s.children ?? []) if (c.copy !== null) out.add(c.old).add(c.copy);
  }
  return out;
}

/** What full mode's walks at the swaps made so far recorded (qgroup_trace_subtree): tree blocks and file extent items, each walk's own (a block two walks record counts twice), and the records new to the transaction. */
export function walkedBelow(p: RelocPicture): { walks: number; blocks: number; extents: number; added: number } {
  const ws = p.slots.flatMap((s) => s.walks);
  return { walks: ws.length, blocks: ws.reduce((a, w) => a + w.blocks, 0), extents: ws.reduce((a, w) => a + w.extents, 0), added: ws.reduce((a, w) => a + w.added, 0) };
}

/** The shared blocks below the swaps made so far (full traces them, subtree skips them). */
export function sharedBelow(p: RelocPicture): number {
  const out = new Set<string>();
  for (const s of p.slots) if (s.swapped) for (const c of s.children ?? []) if (c.copy === null) out.add(c.old);
  return out.size;
}

/** The index of the next moment after from of one of kinds (-1: none). */
export function nextReloc(step: RelocStep, from: number, kinds: readonly RelocMomentKind[]): number {
  for (let i = Math.max(-1, from) + 1; i < step.moments.length; i++) if (kinds.includes(step.moments[i].kind)) return i;
  return -1;
}

/** The index of the first moment of the next phase after from (-1: none). */
export function nextPhase(step: RelocStep, from: number): number {
  const here = from >= 0 ? phaseOf(step.moments[from]) : null;
  const group = from >= 0 ? step.moments[from].group : null;
  for (let i = Math.max(-1, from) + 1; i < step.moments.length; i++) {
    const p = phaseOf(step.moments[i]);
    if (p !== null && (p !== here || step.moments[i].group !== group)) return i;
  }
  return -1;
}

// ---------------------------------------------------------------------------
// The same scenario in the three modes

/** The line of scriptInMode(script, mode) that is script's line (1-based): the lines after a set line it adds are one further down. */
export function lineInMode(script: string, line: number): number {
  const lines = script.split('\n');
  if (lines.some((l) => /^\s*set\s+qgroup_swap=\S+\s*$/.test(l))) return line;
  const at = lines.findIndex((l) => /^\s*(balance|relocate)\b/.test(l));
  return at >= 0 && line > at ? line + 1 : line;
}

/** The script with every `set qgroup_swap=` line set to mode (and one added before the first balance when it has none). */
export function scriptInMode(script: string, mode: QgroupSwapMode): string {
  const lines = script.split('\n');
  let found = false;
  const out = lines.map((l) => (/^\s*set\s+qgroup_swap=\S+\s*$/.test(l) ? ((found = true), `set qgroup_swap=${mode}`) : l));
  if (!found) {
    const at = out.findIndex((l) => /^\s*(balance|relocate)\b/.test(l));
    if (at >= 0) out.splice(at, 0, `set qgroup_swap=${mode}`);
  }
  return out.join('\n');
}

/** One mode's run: its qgroup dirty extents (the balances' and the whole run's), relocated extents, the pairs it traced, and the qgroups it ends with. */
export interface ModeRun {
  mode: QgroupSwapMode;
  /** The dirty extents of the commits from the first balance on (the relocation's). */
  balanceDirty: number;
  totalDirty: number;
  relocated: number;
  traceSwaps: number;
  /** Each relocated group's dirty extents: the commits from its choice to its removal. */
  groups: { group: string; dirty: number }[];
  /** Each qgroup's last numbers, "0/5" → [referenced, exclusive] in bytes. */
  qgroups: Record<string, [number, number]>;
}

/** A mode's run read from its trace (and the metrics' relocated extents). */
export function readModeRun(mode: QgroupSwapMode, events: readonly TraceEvent[], relocated: number): ModeRun {
  let balancing = false, balanceDirty = 0, totalDirty = 0, traceSwaps = 0;
  const qgroups: Record<string, [number, number]> = {};
  const groups: ModeRun['groups'] = [];
  // the group being relocated, and whether its chunk is gone (its next commit is its last)
  let current: ModeRun['groups'][number] | null = null, removed = false;
  for (const e of events) {
    if (e.kind === 'reloc_group') {
      balancing = true;
      groups.push((current = { group: e.logical.toString(), dirty: 0 }));
      removed = false;
    } else if (e.kind === 'chunk_remove') removed = current !== null && e.logical.toString() === current.group;
    else if (e.kind === 'qgroup_dirty') {
      totalDirty += Number(e.extents);
      if (balancing) balanceDirty += Number(e.extents);
      if (current) current.dirty += Number(e.extents);
      if (removed) current = null;
    } else if (e.kind === 'qgroup_trace_swap') traceSwaps++;
    else if (e.kind === 'qgroup_update') qgroups[qgroupName(e.qgroup)] = [Number(e.referenced), Number(e.exclusive)];
  }
  return { mode, balanceDirty, totalDirty, relocated, traceSwaps, groups, qgroups };
}

/** A qgroup id as btrfs names it: level in the top 16 bits ("0/257", "1/100"). */
export function qgroupName(id: bigint): string {
  return `${id >> 48n}/${id & 0xffffffffffffn}`;
}

/** Whether the runs' qgroups are the same, as btrfs qgroup show would print them. */
export function sameQgroups(runs: readonly ModeRun[]): boolean {
  const key = (r: ModeRun) => JSON.stringify(Object.entries(r.qgroups).sort());
  return runs.every((r) => key(r) === key(runs[0]));
}

/** The change from a to b in percent, as the seed prints it ((b - a) / a, one decimal). */
export function percentChange(a: number, b: number): string {
  const p = ((b - a) / a) * 100;
  return `${p > 0 ? '+' : p < 0 ? '−' : ''}${Math.abs(p).toFixed(1)}%`;
}
