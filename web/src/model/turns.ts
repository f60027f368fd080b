// A section run with picked turns (choose mode, model/schedule.ts), seen
// from its trace: every turn the run made (each command a thread of the
// section started, in order: the picks, then the policy's), and what each
// thread was doing at the moment of a choice: when the last pick's command
// started (the section's start before any pick). A thread is then inside a
// command (running, or waiting: for a tree lock, memory, the log mutex ...,
// with the locks it holds) or between two (waiting for its turn), or done.
// Pure; the worker builds it (core/scheduleRun.ts) from the run's events.
import { blockKey, lockEventsOf, locksAt } from './locks';
import type { ThreadSection } from './schedule';
import { laneName } from './timeline';
import type { TraceEvent } from './trace';
import type { LockMode, WaitCause } from './trace-schema.gen';

/** A command start of one of the section's threads. */
export interface Turn {
  thread: string;
  line: number;
  /** ns since the section began. */
  atNs: number;
}

/** A tree block lock: the tree's objectid and the block, decimal strings; level -1: an inode's delayed node mutex, bytenr the inode (locks.ts's isMutex). */
export interface HeldLock {
  tree: string;
  bytenr: string;
  level: number;
  mode: LockMode;
}

export interface ThreadWait {
  cause: WaitCause;
  /** What it waits on (the trace's object: a tree, an inode, a size). */
  object: string;
  sinceNs: number;
  /** A tree lock (or delayed node mutex) wait: the block, the mode it wants, and who holds the block. */
  lock?: HeldLock & { holders: string[] };
}

export interface ThreadNow {
  name: string;
  /** Commands it had started (its turns so far). */
  started: number;
  /** The command it was inside (null: between two, or done), and when that command returns in this run (null: it never does, the run stopped). */
  op: { line: number; text: string; sinceNs: number; returnsNs: number | null } | null;
  wait: ThreadWait | null;
  holds: HeldLock[];
  /** Every command of it had returned. */
  done: boolean;
}

export interface TurnsView {
  /** Every turn the run made, in order. */
  turns: Turn[];
  /** The moment: right after turn `at` started (0: the section's start). reached: false when the run stopped before that turn. */
  at: number;
  reached: boolean;
  atNs: number;
  threads: ThreadNow[];
  /** Every task's name by number (threads and kernel workers), for the deadlock's cycle. */
  names: [number, string][];
}

interface Live {
  name: string;
  started: number;
  op: ThreadNow['op'];
  wait: ThreadWait | null;
  wants: Omit<HeldLock, 'holders'> | null;
}

/** The section's run (its step's events) at the moment of choice `at`: after `at` turns. */
export function turnsAt(events: TraceEvent[], sec: ThreadSection, at: number): TurnsView {
  const threadNames = sec.threads.map((t) => t.name);
  const commandText = new Map(sec.threads.flatMap((t) => t.commands.map((c) => [c.line, c.text] as const)));
  const names = new Map<number, string>();
  const live = new Map<number, Live>();
  let t0: number | null = null;
  for (const e of events) {
    if (e.kind !== 'task_new') continue;
    t0 ??= Number(e.atNs);
    names.set(e.task, laneName(e.taskKind, e.index, threadNames));
    if (e.taskKind === 'thread') live.set(e.task, { name: names.get(e.task)!, started: 0, op: null, wait: null, wants: null });
  }
  const since = (atNs: bigint) => Number(atNs) - (t0 ?? 0);
  const starts = events.filter((e): e is Extract<TraceEvent, { kind: 'task_op' }> => e.kind === 'task_op' && live.has(e.task));
  const turns = starts.map((e) => ({ thread: live.get(e.task)!.name, line: e.line, atNs: since(e.atNs) }));
  const lastSeq = events.length ? events[events.length - 1].seq : -1;
  const reached = at <= starts.length;
  const cut = !reached ? lastSeq : at === 0 ? (starts.length ? starts[0].seq - 1 : lastSeq) : starts[at - 1].seq;

  for (const e of events) {
    if (e.seq > cut) break;
    const t = 'task' in e ? live.get(e.task) : undefined;
    if (!t) continue;
    switch (e.kind) {
      case 'task_op':
        t.started++;
        t.op = { line: e.line, text: commandText.get(e.line) ?? e.op, sinceNs: since(e.atNs), returnsNs: null };
        break;
      case 'task_op_end':
        t.op = null;
        break;
      case 'task_wait':
        if (e.cause !== 'idle') t.wait = { cause: e.cause, object: e.object.toString(), sinceNs: since(e.atNs) };
        break;
      case 'task_wake':
        t.wait = null;
        break;
      case 'lock_wait':
        t.wants = { tree: e.tree.toString(), bytenr: e.bytenr.toString(), level: e.level, mode: e.mode };
        break;
      case 'lock_acquire':
        t.wants = null;
        break;
    }
  }
  // when each open command returns, later in the run
  for (const e of events) {
    if (e.seq <= cut || e.kind !== 'task_op_end') continue;
    const t = live.get(e.task);
    if (t?.op && t.op.returnsNs === null) t.op.returnsNs = since(e.atNs);
  }
  const locks = locksAt(lockEventsOf(events), cut);
  const name = (task: number) => names.get(task) ?? `task ${task}`;
  const threads = [...live.entries()].map(([task, t]): ThreadNow => {
    const holds: HeldLock[] = [];
    for (const b of locks.values()) {
      const lock = { tree: b.tree, bytenr: b.bytenr, level: b.level };
      if (b.writer === task) holds.push({ ...lock, mode: 'write' });
      else if (b.readers.includes(task)) holds.push({ ...lock, mode: 'read' });
    }
    let wait = t.wait;
    if ((wait?.cause === 'tree lock' || wait?.cause === 'delayed node mutex' || wait?.cause === 'inode lock') && t.wants) {
      const b = locks.get(blockKey(t.wants.tree, t.wants.bytenr, t.wants.level));
      wait = { ...wait, lock: { ...t.wants, holders: b ? [...b.readers, ...(b.writer !== null ? [b.writer] : [])].map(name) : [] } };
    }
    const commands = sec.threads.find((x) => x.name === t.name)?.commands.length ?? 0;
    return { name: t.name, started: t.started, op: t.op, wait, holds, done: !t.op && t.started >= commands };
  });
  threads.sort((a, b) => threadNames.indexOf(a.name) - threadNames.indexOf(b.name));
  return { turns, at, reached, atNs: reached && at > 0 ? turns[at - 1].atNs : reached ? 0 : since(BigInt(lastAt(events))), threads, names: [...names] };
}

/** The latest virtual time the events reach. */
function lastAt(events: TraceEvent[]): number {
  let m = 0;
  for (const e of events) if ('atNs' in e) m = Math.max(m, Number(e.atNs));
  return m;
}
