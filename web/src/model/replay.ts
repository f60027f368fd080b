// Log replay as a learner steps it: crash points along a scenario, the
// script a crash after a line keeps, and a replay's events grouped by action.
import type { Block } from './dump';
import type { TraceEvent } from './trace';
import type { Key } from './trace-schema.gen';

type ReplayEvent = Extract<TraceEvent, { kind: 'replay' }>;

/** One replay action and the fs-tree changes it made. */
export interface ReplayStep {
  action: ReplayEvent;
  events: TraceEvent[];
}

/**
 * Groups a replay's events: each replay action with the changes it made.
 * The core says an action once it is done (tree-log-replay.c emits it after
 * the change), so an action takes the changes since the one before; changes
 * after the last action (the commit that ends replay) go with the last.
 */
export function replaySteps(events: TraceEvent[]): ReplayStep[] {
  const out: ReplayStep[] = [];
  let pending: TraceEvent[] = [];
  for (const e of events) {
    if (e.kind === 'replay') {
      out.push({ action: e, events: [...pending, e] });
      pending = [];
    } else pending.push(e);
  }
  if (out.length) out[out.length - 1].events.push(...pending);
  return out;
}

/** The lines a crash after line `at` (1-based) keeps, with the crash. */
export function crashScript(lines: string[], at: number): string {
  return [...lines.slice(0, at), 'crash'].join('\n') + '\n';
}

/** Lines after which a crash is worth showing: after a fsync up to the end. */
export function crashPoints(lines: string[]): number[] {
  const first = lines.findIndex((l) => /^\s*fsync\s/.test(l));
  if (first < 0) return [];
  const out: number[] = [];
  for (let i = first; i < lines.length; i++) if (lines[i].trim() && !/^\s*(#|crash\b)/.test(lines[i])) out.push(i + 1);
  return out;
}

/** Where each pass starts in a replay's steps (1-based: step n is after n actions) and how many actions it has. */
export function passStarts(steps: ReplayStep[]): { pass: string; first: number; count: number }[] {
  const out: { pass: string; first: number; count: number }[] = [];
  steps.forEach((s, i) => {
    const last = out[out.length - 1];
    if (last && last.pass === s.action.pass) last.count++;
    else out.push({ pass: s.action.pass, first: i + 1, count: 1 });
  });
  return out;
}

export interface ItemChanges {
  added: Key[];
  changed: Key[];
  removed: Key[];
}

const keyId = (k: Key) => `${k[0]} ${k[1]} ${k[2]}`;

/**
 * The items a replay action changed in a tree, from its events: inserted
 * (added), deleted (removed), or deleted and inserted again (changed). An
 * insert over an item that stays (an inode item overwritten) is "changed".
 */
export function itemChanges(step: ReplayStep, tree: bigint): ItemChanges {
  const ins = new Map<string, Key>(), del = new Map<string, Key>();
  for (const e of step.events) {
    if (e.kind === 'item_insert' && e.tree === tree) ins.set(keyId(e.key), e.key);
    else if (e.kind === 'item_delete' && e.tree === tree) {
      const id = keyId(e.key);
      if (ins.has(id)) ins.delete(id); // inserted then deleted in one action: as if never there (rare)
      else del.set(id, e.key);
    }
  }
  const overwrite = step.action.action === 'inode overwrite';
  const changed: Key[] = [], added: Key[] = [];
  for (const [id, k] of ins) {
    if (del.has(id) || overwrite) {
      changed.push(k);
      del.delete(id);
    } else added.push(k);
  }
  return { added, changed, removed: [...del.values()] };
}

/** Key order: objectid, type, offset. */
export function keyCompare(a: Key, b: Key): number {
  return a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] !== b[1] ? a[1] - b[1] : a[2] === b[2] ? 0 : a[2] < b[2] ? -1 : 1;
}

/** The leaf holding key: its first key at or before it, its last at or after (a leaf drawn with its middle folded still holds the keys between). */
export function leafHolding(blocks: Block[], key: Key): Block | undefined {
  const k = (e: Block['entries'][number]): Key => [e.key.objectid, e.key.type, e.key.offset];
  return blocks.find((b) => b.level === 0 && b.entries.length > 0
    && keyCompare(k(b.entries[0]), key) <= 0 && keyCompare(key, k(b.entries[b.entries.length - 1])) <= 0);
}
