// Which blocks a step touched, for the tree explorer's highlights.
import type { Mark } from '../views/treeView';
import type { TraceEvent } from './trace';

export function marksFor(events: TraceEvent[]): Map<string, Mark> {
  const m = new Map<string, Mark>();
  const set = (b: bigint, k: Mark) => {
    const key = b.toString();
    const rank: Record<Mark, number> = { path: 0, touched: 1, freed: 2, new: 3, split: 4, cow: 5 };
    const cur = m.get(key);
    if (!cur || rank[k] > rank[cur]) m.set(key, k);
  };
  for (const e of events) {
    if (e.kind === 'cow') {
      set(e.to, 'cow');
      set(e.from, 'freed');
    } else if (e.kind === 'block_alloc' && e.level >= 0) set(e.bytenr, 'new');
    else if (e.kind === 'split') set(e.right, 'split');
    else if (e.kind === 'item_insert' || e.kind === 'item_delete') set(e.bytenr, 'touched');
    else if (e.kind === 'push') { set(e.to, 'touched'); set(e.from, 'touched'); }
    else if (e.kind === 'merge') set(e.into, 'touched');
    else if (e.kind === 'log_copy') set(e.to, 'touched'); // the log leaf an item was copied into
  }
  return m;
}
