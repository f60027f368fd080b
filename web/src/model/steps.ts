// The trace grouped into steps a learner moves through: one step per
// scenario command (the core marks each with an `op` event), each with its
// events and one plain sentence saying what happened.
import type { TraceEvent, TraceKind } from './trace';

export interface Step {
  index: number;
  /** 1-based line of the script, 0 for what mkfs did before the first command. */
  line: number;
  command: string;
  events: TraceEvent[];
  /** The kinds of event in this step (for jumps without scanning events). */
  kinds: Set<TraceKind>;
  sentence: string;
}

const TREE_NAMES: Record<string, string> = {
  '1': 'root tree', '2': 'extent tree', '3': 'chunk tree', '4': 'device tree', '5': 'fs tree', '7': 'csum tree',
  '9': 'uuid tree', '10': 'free space tree', '18446744073709551607': 'data reloc tree', '18446744073709551610': 'log tree',
};

export function treeName(id: bigint): string {
  return TREE_NAMES[id.toString()] ?? `tree ${id}`;
}

/** One event in a sentence, e.g. "COW leaf 30867456 → 30883840 in the fs tree, generation 9". */
export function describeEvent(e: TraceEvent): string {
  const what = (level: number) => (level === 0 ? 'leaf' : `node (level ${level})`);
  switch (e.kind) {
    case 'op': return `Line ${e.line} starts`;
    case 'trans_start': return `Transaction ${e.generation} starts`;
    case 'chunk_alloc': return `New chunk at logical ${e.logical}, ${e.length} bytes, on the device at ${e.physical}`;
    case 'block_alloc': return e.level < 0
      ? `Data extent of ${e.generation} bytes allocated at ${e.bytenr} for tree ${e.tree}`
      : `New ${what(e.level)} ${e.bytenr} allocated for the ${treeName(e.tree)}`;
    case 'block_free': return `Block ${e.bytenr} of the ${treeName(e.tree)} freed (reusable after the commit)`;
    case 'cow': return `COW ${what(e.level)} ${e.from} → ${e.to} in the ${treeName(e.tree)}, generation ${e.generation}`;
    case 'search': return `Search the ${treeName(e.tree)}: ${what(e.level)} ${e.bytenr}, slot ${e.slot}${e.level === 0 ? (e.found ? ' (found)' : ' (not found: insert here)') : ''}`;
    case 'item_insert': return `Insert item (${e.key[0]} ${e.key[1]} ${e.key[2]}) into leaf ${e.bytenr} of the ${treeName(e.tree)} at slot ${e.slot}, ${e.size} bytes`;
    case 'item_delete': return `Delete item (${e.key[0]} ${e.key[1]} ${e.key[2]}) from leaf ${e.bytenr} of the ${treeName(e.tree)}`;
    case 'split': return `Split ${what(e.level)} ${e.left} of the ${treeName(e.tree)}: items from slot ${e.slot} move to new ${what(e.level)} ${e.right}`;
    case 'push': return `Push ${e.moved} item${e.moved === 1 ? '' : 's'} from leaf ${e.from} into its neighbour ${e.to} in the ${treeName(e.tree)}`;
    case 'merge': return `Merge ${what(e.level)} ${e.from} into ${e.into} in the ${treeName(e.tree)}`;
    case 'root_grow': return `The ${treeName(e.tree)} grows a level: new root ${e.bytenr} at level ${e.level}`;
    case 'root_shrink': return `The ${treeName(e.tree)} shrinks a level: ${e.bytenr} is the root again`;
    case 'block_write': return `Write ${what(e.level)} ${e.bytenr} of the ${treeName(e.tree)} to the device at ${e.physical}`;
    case 'super_write': return `Write superblock copy ${e.mirror} at ${e.physical}, generation ${e.generation}`;
    case 'commit': return `Commit: generation ${e.generation} is on disk, root tree at ${e.rootBytenr}`;
    case 'fsync': return `fsync of inode ${e.ino}: ${e.result}`;
    case 'log_start': return `A log tree for the ${treeName(e.tree)} starts at ${e.logRoot} (log root tree ${e.logRootTree})`;
    case 'log_inode': return `Log inode ${e.ino}${e.existsOnly ? ' (only so that it exists)' : ''}`;
    case 'log_lock': return `Read-lock leaf ${e.bytenr} of the ${treeName(e.tree)} (generation ${e.generation}) to copy from it`;
    case 'log_copy': return `Copy item (${e.key[0]} ${e.key[1]} ${e.key[2]}) into log leaf ${e.to}, slot ${e.slot}`;
    case 'log_range': return `The log is authoritative for dir ${e.key[0]}, indexes ${e.key[2]} to ${e.last}`;
    case 'log_sync': return `Write the log and a superblock whose log_root is ${e.logRootTree}`;
    case 'replay': return `Replay (${e.pass}): ${e.action} — log item (${e.key[0]} ${e.key[1]} ${e.key[2]})`;
  }
}

/** The sentence for a whole step: the most telling things it did. */
export function summarize(command: string, events: TraceEvent[]): string {
  const n = (k: TraceKind) => events.filter((e) => e.kind === k).length;
  const parts: string[] = [];
  const cows = events.filter((e): e is Extract<TraceEvent, { kind: 'cow' }> => e.kind === 'cow');
  if (cows.length === 1) parts.push(describeEvent(cows[0]));
  else if (cows.length) parts.push(`${cows.length} blocks copied on write`);
  const splits = n('split');
  if (splits) parts.push(`${splits} split${splits > 1 ? 's' : ''}`);
  const pushes = n('push');
  if (pushes) parts.push(`${pushes} push${pushes > 1 ? 'es' : ''} to a neighbour`);
  const merges = n('merge');
  if (merges) parts.push(`${merges} merge${merges > 1 ? 's' : ''}`);
  if (n('root_grow')) parts.push('the tree grew a level');
  if (n('root_shrink')) parts.push('the tree lost a level');
  const ins = n('item_insert');
  const del = n('item_delete');
  if (ins) parts.push(`${ins} item${ins > 1 ? 's' : ''} inserted`);
  if (del) parts.push(`${del} item${del > 1 ? 's' : ''} deleted`);
  const copies = n('log_copy');
  if (copies) parts.push(`${copies} item${copies > 1 ? 's' : ''} copied into the log`);
  const sync = events.find((e) => e.kind === 'log_sync');
  if (sync) parts.push(describeEvent(sync));
  const commit = events.find((e) => e.kind === 'commit');
  if (commit) parts.push(describeEvent(commit));
  const body = parts.length ? parts.join('; ') : 'nothing changed on disk';
  return `${command}: ${body}.`;
}

/** Splits a trace into steps at each `op` event; lines are the script's. */
export function groupSteps(events: TraceEvent[], scriptLines: string[]): Step[] {
  const steps: Step[] = [];
  let cur: Step = { index: 0, line: 0, command: 'mkfs', events: [], kinds: new Set(), sentence: '' };
  for (const e of events) {
    if (e.kind === 'op') {
      cur.sentence = summarize(cur.command, cur.events);
      steps.push(cur);
      const text = (scriptLines[e.line - 1] ?? '').trim();
      cur = { index: steps.length, line: e.line, command: text, events: [], kinds: new Set(), sentence: '' };
    } else {
      cur.events.push(e);
      cur.kinds.add(e.kind);
    }
  }
  cur.sentence = summarize(cur.command, cur.events);
  steps.push(cur);
  return steps;
}

/** The script as it stands after step index: its lines up to that step's
 * (and always its mkfs line, so the filesystem is made the same way). */
export function scriptPrefix(scriptLines: string[], steps: Step[], index: number): string {
  let line = steps[Math.max(0, Math.min(index, steps.length - 1))]?.line ?? 0;
  const mkfs = scriptLines.findIndex((l) => /^\s*mkfs\b/.test(l));
  if (mkfs >= 0 && line < mkfs + 1) line = mkfs + 1;
  return scriptLines.slice(0, line).join('\n') + '\n';
}

/** Index of the next step (after from) with an event of kind, or -1. */
export function nextStepWith(steps: Step[], from: number, kind: TraceKind): number {
  for (let i = from + 1; i < steps.length; i++) if (steps[i].kinds.has(kind)) return i;
  return -1;
}
