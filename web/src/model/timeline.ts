// One step of a timed run as a timeline (lesson 3), built from its events:
// a lane per task (the section's threads, the flusher, the transaction
// kthread, the delayed-meta worker and the endio-write workers when they
// worked) and the device's queue;
// CPU spans labelled by their work, waits labelled by their cause, each
// thread command from its start to its return (an fsync marked where what it
// waited for happened: "I/O done" or "ordered extent complete"), bios from
// submit to done; the page cache of each file and the ordered extents over
// it. Everything carries the seq of the events that bound it, so the view
// can cut it at any event (model/timelineFrame.ts): stepping back and forth
// is exact. Built in the worker (core/runs.ts); plain data.
import { timedSentences } from '../views/timeline.sentences';
import { describeEvent } from '../views/sentences';
import { lockEventsOf, type LockEvent } from './locks';
import { applyPageEvent, isPageEvent, pageEvent, type OrderedExtent, type PageCacheState, type PageEvent, type TimeMark } from './pageCache';
import { commandWords, opPath, sectionAt } from './sections';
import type { EventOf, TraceEvent, TraceKind } from './trace';
import type { BioOp, TaskKind, TimedOp, WaitCause, Work } from './trace-schema.gen';
import { formatBytes } from './units';

export type { TimeMark };

export interface Lane {
  task: number;
  kind: TaskKind;
  index: number;
  /** "A", "job3", "endio-write 2", "flusher", "transaction kthread", "delayed-meta". */
  name: string;
}

export interface CpuSpan {
  task: number;
  work: Work;
  start: TimeMark;
  /** Its end time (a CPU span is known whole when it starts). */
  end: number;
}

export interface WaitSpan {
  task: number;
  cause: WaitCause;
  object: string;
  start: TimeMark;
  /** The wake; null: still waiting when the step ends. */
  end: TimeMark | null;
}

/** What an fsync waited for before it logged: its data's I/O (writeback) or its ordered extents' completion. */
export type FsyncWaited = 'I/O done' | 'ordered extent complete';

export interface OpSpan {
  task: number;
  line: number;
  op: TimedOp;
  ino: number;
  offset: number;
  length: number;
  /** The command as the script says it ("fsync /a"), or made from the event. */
  text: string;
  start: TimeMark;
  end: TimeMark | null;
  /** An fsync: the last wake from what it waited for before logging, and what that was. */
  waited?: { what: FsyncWaited; at: TimeMark };
  /** Ordered extents this fsync logged while they were in flight. */
  logged: number[];
}

export interface BioSpan {
  id: number;
  task: number;
  op: BioOp;
  logical: string;
  bytes: number;
  submit: TimeMark;
  done: TimeMark | null;
  /** How long the device served it (from bio_done): its service began at done - serviceNs. */
  serviceNs: number;
  /** A row of the device lane, so bios in flight together do not overlap. */
  row: number;
}

/** An event a learner stops at on the timeline. */
export interface TimelineMoment {
  seq: number;
  /** The virtual time then (the latest atNs so far). */
  at: number;
  kind: TraceKind;
  sentence: string;
  task?: number;
  /** The transaction kthread going to sleep until its next periodic commit: a wait "Next wait" passes over. */
  timer?: boolean;
}

export interface FileInfo {
  ino: number;
  path: string;
}

export interface Timeline {
  /** Whether time passed in the step (threads ran). */
  timed: boolean;
  t0: number;
  t1: number;
  lanes: Lane[];
  /** endio-write workers that did nothing in the step (not drawn). */
  idleWorkers: number;
  cpu: CpuSpan[];
  waits: WaitSpan[];
  ops: OpSpan[];
  bios: BioSpan[];
  bioRows: number;
  /** The page cache as the step found it, and the step's page events (a frame folds them up to its event). */
  pagesBefore: PageCacheState;
  pageEvents: PageEvent[];
  /** Every ordered extent the step shows: in flight before it, or made in it. */
  ordered: OrderedExtent[];
  files: FileInfo[];
  moments: TimelineMoment[];
  /** Timed events left out past the limit (a step of a big fio run). */
  truncated: number;
  /** The step's tree lock events (model/locks.ts replays them at a cut), as many as the timed events drawn reach. */
  locks?: LockEvent[];
}

export interface TimelineContext {
  /** The script's lines; the step's first line. */
  lines: string[];
  line: number;
  pagesBefore: PageCacheState;
  /** Paths known from earlier steps, by inode. */
  paths?: Map<number, string>;
  /** Timed events at most (the rest are counted in truncated). */
  limit?: number;
}

const TIMED = new Set<TraceKind>(['task_new', 'task_op', 'task_op_end', 'task_cpu', 'task_wait', 'task_wake', 'bio_submit', 'bio_done',
  'page_dirty', 'write_inline', 'ordered_add', 'ordered_io_done', 'ordered_logged', 'ordered_finish']);
/** Kinds of no time of their own a learner stops at on the timeline too. */
const ALSO_STOPS = new Set<TraceKind>(['log_sync', 'commit', 'fsync']);
const QUIET: ReadonlySet<string> = new Set(['idle']);

/** A task's name: a thread's from the section (names by index), a kernel worker's by its kind. */
export function laneName(kind: TaskKind, index: number, names: string[]): string {
  switch (kind) {
    case 'thread': return names[index] ?? `thread ${index}`;
    case 'endio-write': return `endio-write ${index}`;
    case 'transaction': return 'transaction kthread';
    case 'flusher': return 'flusher';
    case 'delayed-meta': return 'delayed-meta'; // the btrfs-delayed-meta workqueue (btrfs_async_run_delayed_root), as the core names it
    case 'reclaim': return index === 0 ? 'async reclaim metadata' : 'async reclaim data'; // the core's names: index 0 metadata, 1 data
    default: return `${kind} ${index}`; // a kind this view does not know yet: named apart by index
  }
}

/**
 * Lane order: threads, then the kernel's workers: the flusher, the transaction
 * kthread, the delayed-meta worker, a kind not named here, the endio-write
 * workers last (there are many).
 */
const ORDER: Record<string, number> = { thread: 0, flusher: 1, transaction: 2, 'delayed-meta': 3, 'endio-write': 5 };
const laneOrder = (kind: string) => ORDER[kind] ?? 4;

/** The timeline of one step's events. */
export function buildTimeline(events: TraceEvent[], ctx: TimelineContext): Timeline {
  const limit = ctx.limit ?? 20000;
  const section = sectionAt(ctx.lines, ctx.line);
  const tasks = new Map<number, Lane>();
  const cpu: CpuSpan[] = [];
  const waits: WaitSpan[] = [];
  const openWait = new Map<number, WaitSpan>();
  const ops: OpSpan[] = [];
  const openOp = new Map<number, OpSpan>();
  const bios: BioSpan[] = [];
  const openBio = new Map<number, BioSpan>();
  const pageEvents: PageEvent[] = [];
  // copies: the step's events add to them, and pagesBefore stays as the step found it
  const ordered = new Map<number, OrderedExtent>(ctx.pagesBefore.ordered.map((o) => [o.id, { ...o, logged: [...o.logged] }]));
  const paths = new Map(ctx.paths ?? []);
  const moments: TimelineMoment[] = [];
  const busy = new Set<number>();
  let now = -1, t0 = Infinity, used = 0, truncated = 0, timed = false;
  const who = (t: number) => tasks.get(t)?.name ?? `task ${t}`;
  const say = timedSentences(who) as Record<string, ((e: TraceEvent) => string) | undefined>;
  const sentence = (e: TraceEvent) => say[e.kind]?.(e) ?? describeEvent(e);
  const mark = (e: TraceEvent & { atNs: bigint }): TimeMark => ({ seq: e.seq, at: Number(e.atNs) });
  const stop = (e: TraceEvent, task?: number) => moments.push({ seq: e.seq, at: Math.max(now, 0), kind: e.kind, sentence: sentence(e), task });

  for (const e of events) {
    if (!TIMED.has(e.kind)) {
      if (ALSO_STOPS.has(e.kind) && used < limit) stop(e);
      continue;
    }
    if (used >= limit) {
      truncated++;
      continue;
    }
    used++;
    const ev = e as EventOf<'task_op'>; // every timed kind has atNs
    const at = Number(ev.atNs);
    now = Math.max(now, at);
    if (e.kind.startsWith('task_') || e.kind.startsWith('bio_')) {
      timed = true;
      t0 = Math.min(t0, at);
    }
    switch (e.kind) {
      case 'task_new':
        tasks.set(e.task, { task: e.task, kind: e.taskKind, index: e.index, name: laneName(e.taskKind, e.index, section.names) });
        if (e.taskKind === 'thread') busy.add(e.task);
        continue; // not a moment: every task begins at the section's start
      case 'task_op': {
        const words = commandWords(ctx.lines[e.line - 1]);
        const path = opPath(ctx.lines, e.line, tasks.get(e.task)?.index ?? 0);
        if (path && e.ino > 0n) paths.set(Number(e.ino), path);
        const text = words[0] !== 'fio' && words.length ? words.join(' ')
          : e.op === 'write' ? `write ${path ?? `inode ${e.ino}`} ${formatBytes(e.offset)} ${formatBytes(e.length)}` : `${e.op} ${path ?? ''}`.trim();
        const op: OpSpan = { task: e.task, line: e.line, op: e.op, ino: Number(e.ino), offset: Number(e.offset), length: Number(e.length), text, start: mark(e), end: null, logged: [] };
        ops.push(op);
        openOp.set(e.task, op);
        stop(e, e.task);
        break;
      }
      case 'task_op_end': {
        const op = openOp.get(e.task);
        if (op) {
          op.end = mark(e);
          openOp.delete(e.task);
        }
        stop(e, e.task);
        break;
      }
      case 'task_cpu':
        cpu.push({ task: e.task, work: e.work, start: mark(e), end: at + Number(e.durNs) });
        busy.add(e.task);
        stop(e, e.task);
        break;
      case 'task_wait': {
        if (QUIET.has(e.cause)) continue;
        const w: WaitSpan = { task: e.task, cause: e.cause, object: e.object.toString(), start: mark(e), end: null };
        waits.push(w);
        openWait.set(e.task, w);
        busy.add(e.task);
        stop(e, e.task);
        if (e.cause === 'sleep' && tasks.get(e.task)?.kind === 'transaction') moments[moments.length - 1].timer = true;
        break;
      }
      case 'task_wake': {
        if (QUIET.has(e.cause)) continue;
        const w = openWait.get(e.task);
        if (w) {
          w.end = mark(e);
          openWait.delete(e.task);
        }
        stop(e, e.task);
        break;
      }
      case 'bio_submit': {
        const b: BioSpan = { id: e.id, task: e.task, op: e.op, logical: e.logical.toString(), bytes: Number(e.bytes), submit: mark(e), done: null, serviceNs: 0, row: 0 };
        bios.push(b);
        openBio.set(e.id, b);
        stop(e, e.task);
        break;
      }
      case 'bio_done': {
        const b = openBio.get(e.id);
        if (b) {
          b.done = mark(e);
          b.serviceNs = Number(e.serviceNs);
          openBio.delete(e.id);
        }
        stop(e);
        break;
      }
      default:
        if (isPageEvent(e)) {
          const p = pageEvent(e);
          pageEvents.push(p);
          trackOrdered(ordered, p);
          if (p.kind === 'ordered_logged') {
            const op = [...openOp.values()].find((o) => o.op === 'fsync' && o.ino === p.ino);
            if (op && p.id !== undefined) op.logged.push(p.id);
          }
          stop(e);
        }
    }
  }
  // the step ends with its last event: a CPU span still running then (threads that return into a power cut) is cut there
  const t1 = Math.max(now, 0);
  for (const op of ops) if (op.op === 'fsync') op.waited = fsyncWaited(op, waits);
  layoutBios(bios);
  const lanes = [...tasks.values()].filter((l) => busy.has(l.task) || l.kind === 'flusher' || l.kind === 'transaction')
    .sort((a, b) => laneOrder(a.kind) - laneOrder(b.kind) || a.index - b.index);
  const idleWorkers = [...tasks.values()].filter((l) => l.kind === 'endio-write' && !busy.has(l.task)).length;
  // the files: those the step's pages touch, and those the page cache held before it
  const inos = new Set<number>([...ctx.pagesBefore.files.filter((f) => f.ranges.length).map((f) => f.ino), ...pageEvents.map((p) => p.ino), ...[...ordered.values()].map((o) => o.ino)]);
  const files = [...inos].sort((a, b) => a - b).map((ino) => ({ ino, path: paths.get(ino) ?? `inode ${ino}` }));
  return {
    timed, t0: timed ? t0 : Math.max(now, 0), t1: timed ? t1 : Math.max(now, 0), lanes, idleWorkers, cpu, waits, ops, bios,
    bioRows: bios.reduce((m, b) => Math.max(m, b.row + 1), 0), pagesBefore: ctx.pagesBefore, pageEvents,
    ordered: [...ordered.values()].sort((a, b) => a.id - b.id), files, moments, truncated,
    // the locks up to the last moment drawn (a truncated step: no lock past what the lanes show)
    locks: lockEventsOf(truncated && moments.length ? events.filter((e) => e.seq <= moments[moments.length - 1].seq) : events),
  };
}

function trackOrdered(ordered: Map<number, OrderedExtent>, p: PageEvent) {
  if (p.id === undefined) return;
  const m: TimeMark = { seq: p.seq, at: p.at };
  if (p.kind === 'ordered_add') {
    ordered.set(p.id, { id: p.id, ino: p.ino, offset: p.offset, length: p.length, diskBytenr: p.diskBytenr ?? '0', added: m, logged: [] });
    return;
  }
  const o = ordered.get(p.id);
  if (!o) return;
  if (p.kind === 'ordered_io_done') o.ioDone = m;
  else if (p.kind === 'ordered_logged') o.logged.push(m);
  else if (p.kind === 'ordered_finish') o.finished = m;
}

/**
 * What an fsync waited for before it logged, from its task's waits inside
 * it: the last wait for its ordered extents to complete (before 5.10 always;
 * since, when it must log the whole inode, as for a new file), else the last
 * wait for writeback (the I/O of its pages).
 */
export function fsyncWaited(op: OpSpan, waits: WaitSpan[]): OpSpan['waited'] {
  const inside = waits.filter((w) => w.task === op.task && w.start.seq > op.start.seq && (!op.end || w.start.seq < op.end.seq) && w.end);
  const last = (cause: string) => inside.filter((w) => w.cause === cause).pop();
  const ordered = last('ordered extent');
  if (ordered) return { what: 'ordered extent complete', at: ordered.end! };
  const wb = last('writeback');
  return wb ? { what: 'I/O done', at: wb.end! } : undefined;
}

/** Rows for the device lane: each bio in the first row free at its submit. */
export function layoutBios(bios: BioSpan[]): void {
  const free: number[] = []; // per row, the time it is free from
  for (const b of bios) {
    const end = b.done?.at ?? Infinity;
    let row = free.findIndex((t) => t <= b.submit.at);
    if (row < 0) row = free.length;
    free[row] = end;
    b.row = row;
  }
}

/** The page cache after the step's events (the next step's pagesBefore). */
export function pagesAfter(tl: Pick<Timeline, 'pagesBefore' | 'pageEvents'>): PageCacheState {
  return tl.pageEvents.reduce(applyPageEvent, tl.pagesBefore);
}
