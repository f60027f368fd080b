// The trace grouped into steps a learner moves through: one step per
// scenario command (the core marks each with an `op` event), each with its
// events and one plain sentence saying what happened.
import { describeEvent } from '../views/sentences';
import { treeName } from './names';
import { sectionEnd } from './sections';
import type { Mark } from '../views/treeView';
import type { Ghost } from './ghosts';
import type { Moment } from './moments';
import type { TraceEvent, TraceKind } from './trace';

/** A step as the page holds it: no events (a step can hold a million; they stay in the core's worker, core/runs.ts). */
export interface StepInfo {
  index: number;
  /** 1-based line of the script, 0 for what mkfs did before the first command. */
  line: number;
  /** The commit that ends the script (after its last line): its own step. */
  final?: boolean;
  command: string;
  /** How many events the step holds. */
  eventCount: number;
  /** The kinds of event in this step (for jumps without scanning events). */
  kinds: Set<TraceKind>;
  sentence: string;
}

/** A step with its events (the worker's). */
export interface Step extends StepInfo {
  events: TraceEvent[];
}

/** What the player steps through inside a step: the tree's moments, or the timeline's (lesson 3). */
export type Lens = 'tree' | 'timeline';

/** What the page draws of one step in one tree (at one moment, or the step's end). */
export interface StepView {
  /** The step told for the tree (treeSentence). */
  sentence: string;
  /** The step's moments in the tree (event-level stepping). */
  moments: number;
  /** The moment asked for (null: the step's end, or past its last moment). */
  moment: Moment | null;
  /** The blocks to mark: the moment's, or the whole step's. */
  marks: Map<string, Mark>;
  /** The committed blocks COW replaced, on disk still (model/ghosts.ts). */
  ghosts: Ghost[];
  /** How many events of each kind the step has in the tree. */
  counts: Partial<Record<TraceKind, number>>;
}

/** The step without its events, as it crosses to the page. */
export function stepInfo({ events, ...info }: Step): StepInfo {
  return { ...info, eventCount: events.length };
}

/** The sentence for a whole step: the most telling things it did. */
export function summarize(command: string, events: TraceEvent[]): string {
  const parts = summaryParts(events);
  return `${command}: ${parts.length ? parts.join('; ') : 'nothing changed on disk'}.`;
}

/** The tree an event is of, if it is of one. */
function eventTree(e: TraceEvent): bigint | null {
  return 'tree' in e && typeof e.tree === 'bigint' ? e.tree : null;
}

/**
 * A step's sentence for the tree on screen: what it did there (and what is
 * of no one tree: a commit, a log write), then the blocks copied on write in
 * every tree, the one on screen first ("fs tree 2, extent tree 1, root tree 1").
 */
export function treeSentence(step: Step, tree: bigint): string {
  const parts = summaryParts(step.events.filter((e) => eventTree(e) === tree));
  const global = summaryParts(step.events.filter((e) => eventTree(e) === null)); // a commit, the log's copies and its write
  const cows = new Map<bigint, number>([[tree, 0]]);
  for (const e of step.events) if (e.kind === 'cow') cows.set(e.tree, (cows.get(e.tree) ?? 0) + 1);
  const here = parts.length ? `in the ${treeName(tree)}, ${parts.join('; ')}` : `nothing changed in the ${treeName(tree)}`;
  const copied = [...cows].filter(([, n], i) => i === 0 || n > 0);
  const list = copied.length > 1 || copied[0][1] > 0 ? ` Copied on write: ${copied.map(([t, n]) => `${treeName(t)} ${n}`).join(', ')}.` : '';
  return `${step.command}: ${[here, ...global].join('; ')}.${list}`;
}

function summaryParts(events: TraceEvent[]): string[] {
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
  return parts;
}

/**
 * Splits a trace into steps at each `op` event; lines are the script's.
 * Events from commandEvents on are the commit that ends the script: a step of
 * their own (final), not blamed on the last line.
 */
export function groupSteps(events: TraceEvent[], scriptLines: string[], commandEvents = Infinity): Step[] {
  const steps: Step[] = [];
  let cur: Step = { index: 0, line: 0, command: 'mkfs', eventCount: 0, events: [], kinds: new Set(), sentence: '' };
  const close = () => {
    cur.sentence = summarize(cur.command, cur.events);
    cur.eventCount = cur.events.length;
    steps.push(cur);
  };
  // the last line of the timed section the current step starts (0: none): a
  // thread's create or setxattr marks its line with an op event too, inside
  // the section, which stays one step; so does an untar's each mkdir and
  // create, at its own line (a line runs once)
  let sectionLast = 0;
  for (const e of events) {
    if (e.kind === 'op' && !cur.final && ((e.line > (cur.line || -1) && e.line <= sectionLast) || (cur.line > 0 && e.line === cur.line))) {
      cur.events.push(e);
      cur.kinds.add(e.kind);
    } else if (e.kind === 'op') {
      close();
      const text = (scriptLines[e.line - 1] ?? '').trim();
      cur = { index: steps.length, line: e.line, command: text, eventCount: 0, events: [], kinds: new Set(), sentence: '' };
      sectionLast = startsSection(text) ? sectionEnd(scriptLines, e.line) : 0;
    } else if (e.seq >= commandEvents && !cur.final) {
      close();
      cur = { index: steps.length, line: cur.line, final: true, command: 'the commit at the end of the script', eventCount: 0, events: [e], kinds: new Set([e.kind]), sentence: '' };
    } else {
      cur.events.push(e);
      cur.kinds.add(e.kind);
    }
  }
  close();
  return steps;
}

/** Whether a script line starts a timed section: a thread block or a `NAME:` line (fio is one line). */
function startsSection(text: string): boolean {
  const w = text.replace(/(^|\s)#.*$/, '').trim().split(/\s+/);
  return (w[0] === 'thread' && !!w[1]) || (/^[A-Za-z0-9_.-]+:$/.test(w[0]) && w.length > 1);
}

/** The script as it stands after step index: its lines up to that step's
 * (a timed section's all: its thread blocks and NAME: lines), and always its
 * mkfs line, so the filesystem is made the same way. */
export function scriptPrefix(scriptLines: string[], steps: StepInfo[], index: number): string {
  const step = steps[Math.max(0, Math.min(index, steps.length - 1))];
  let line = step ? (step.final ? step.line : sectionEnd(scriptLines, step.line)) : 0;
  const mkfs = scriptLines.findIndex((l) => /^\s*mkfs\b/.test(l));
  if (mkfs >= 0 && line < mkfs + 1) line = mkfs + 1;
  return scriptLines.slice(0, line).join('\n') + '\n';
}

/** Index of the next step (after from) with an event of kind, or -1. */
export function nextStepWith(steps: StepInfo[], from: number, kind: TraceKind): number {
  for (let i = from + 1; i < steps.length; i++) if (steps[i].kinds.has(kind)) return i;
  return -1;
}
