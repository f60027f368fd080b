// Event-level stepping inside a step: the moments of one script line a
// learner can stop at, for the tree on show. A moment is the state right
// after one event (the core stops its run there: blab_session_dump_at_event),
// with what that event touched marked: a search's path from the root to the
// slot it chose, the item landing in its slot, a COW's copy, a split's two
// halves and the parent that gained a pointer, a push, a merge.
import { describeEvent } from '../views/sentences';
import type { Mark } from '../views/treeView';
import { TREE_IDS, type Block, type TreeDump } from './dump';
import { keyText } from './names';
import type { EventOf, TraceEvent, TraceKind } from './trace';

export interface Moment {
  /** The state is the one right after this event of the run's trace. */
  seq: number;
  kind: TraceKind;
  sentence: string;
  /** Blocks to mark (bytenr → mark). */
  marks: Map<string, Mark>;
  /** The item the event is about: its leaf and slot (inserts, deletes, a search's last step). */
  item?: { bytenr: bigint; slot: number };
  /** A search's path, root first. */
  path?: bigint[];
  /** A split's right half: its parent gains a pointer (found in the dump once it is drawn). */
  newChild?: bigint;
}

/** Kinds a learner stops at, besides searches (grouped into one moment per path). */
const STOPS = new Set<TraceKind>(['cow', 'item_insert', 'item_delete', 'split', 'push', 'merge', 'root_grow', 'root_shrink', 'log_copy']);

/** The tree an event is of (a log copy: the log tree's), or null. */
export function treeOf(e: TraceEvent): bigint | null {
  return 'tree' in e && typeof e.tree === 'bigint' ? e.tree : e.kind === 'log_copy' ? TREE_IDS.log : null;
}

function marksOf(e: TraceEvent): Map<string, Mark> {
  const m = new Map<string, Mark>();
  const set = (b: bigint, k: Mark) => m.set(b.toString(), k);
  switch (e.kind) {
    case 'cow': set(e.to, 'cow'); break;
    case 'item_insert': case 'item_delete': set(e.bytenr, 'touched'); break;
    case 'split': set(e.left, 'split'); set(e.right, 'new'); break;
    case 'push': set(e.from, 'touched'); set(e.to, 'touched'); break;
    case 'merge': set(e.into, 'touched'); break;
    case 'root_grow': set(e.bytenr, 'new'); break;
    case 'root_shrink': set(e.bytenr, 'touched'); break;
    case 'log_copy': set(e.to, 'touched'); break;
    default: break;
  }
  return m;
}

function searchSentence(path: EventOf<'search'>[]): string {
  const last = path[path.length - 1];
  const via = path.length > 1 ? `${path.length - 1} node${path.length > 2 ? 's' : ''} down to ` : '';
  // (LAST_FREE 0 0) sorts after every inode and subvolume number: the item before it holds the highest one in use
  const why = last.key[0] === 0xffffffffffffff00n ? ', past every inode and subvolume number (the highest in use is just before it)' : '';
  return `${describeEvent(last).replace(/^Search the ([^:]+): /, `Search the $1 for (${keyText(last.key)})${why}: ${via}`)}`;
}

/**
 * The moments of a step's events in one tree: each event a learner stops at,
 * each preceded by the search that led to it (the last search path that
 * reached a leaf before it: lookups that change nothing are left out). Events
 * at or past commandEvents belong to the script's final commit and are left
 * out (the core cannot stop in it).
 */
export function momentsOf(events: TraceEvent[], tree: bigint, commandEvents = Infinity): Moment[] {
  const out: Moment[] = [];
  let path: EventOf<'search'>[] = [];
  let lastSearch: Moment | null = null;
  for (const e of events) {
    if (e.seq >= commandEvents) break;
    if (treeOf(e) !== tree) continue;
    if (e.kind === 'search') {
      if (path.length && e.level >= path[path.length - 1].level) path = []; // a new search from the root
      path.push(e);
      if (e.level === 0) {
        const marks = new Map<string, Mark>(path.map((p) => [p.bytenr.toString(), 'path' as Mark]));
        lastSearch = { seq: e.seq, kind: 'search', sentence: searchSentence(path), marks, path: path.map((p) => p.bytenr), item: { bytenr: e.bytenr, slot: e.slot } };
        path = [];
      }
      continue;
    }
    path = [];
    if (!STOPS.has(e.kind)) continue;
    if (lastSearch) out.push(lastSearch);
    lastSearch = null;
    const m: Moment = { seq: e.seq, kind: e.kind, sentence: describeEvent(e), marks: marksOf(e) };
    if (e.kind === 'item_insert' || e.kind === 'item_delete') m.item = { bytenr: e.bytenr, slot: e.slot };
    if (e.kind === 'log_copy') m.item = { bytenr: e.to, slot: e.slot };
    if (e.kind === 'split') m.newChild = e.right;
    out.push(m);
  }
  return out;
}

/** The node holding a pointer to child in a tree's blocks, if drawn. */
export function parentOf(blocks: Block[], child: bigint): Block | undefined {
  return blocks.find((b) => b.level > 0 && b.entries.some((e) => e.kind === 'ptr' && e.blockptr === child));
}

/** A moment's marks as drawn in dump's tree: a split's parent gets "+1 pointer". */
export function momentLabels(m: Moment, dump: TreeDump | null, treeName: string): { marks: Map<string, Mark>; labels: Map<string, string> } {
  const marks = new Map(m.marks);
  const labels = new Map<string, string>();
  if (m.newChild !== undefined) {
    const t = dump?.trees.find((x) => x.name === treeName);
    const parent = t && parentOf(t.blocks, m.newChild);
    if (parent) {
      marks.set(parent.bytenr.toString(), 'touched');
      labels.set(parent.bytenr.toString(), '+1 pointer');
    }
  }
  return { marks, labels };
}
