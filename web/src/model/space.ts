// Space reservation and its reclaim as the trace tells them (lesson 5, seed
// 002). The core reports a space_info's counters when a ticket is made or
// granted and when a chunk is added (space_info); a reservation that does not
// fit queues a ticket and waits (task_wait of cause ticket, ended by
// reserve_ticket); the reclaim worker of that space walks its flush states
// (flush_space after each), and its delalloc states write back dirty pages
// (shrink_delalloc: the pass's budget and what it wrote, the pass's own
// ordered_add / write_inline events just before it). A step is read once, in
// the worker, into a short list of moments (readSpace); the page folds them up
// to a cursor (spaceFrame): the gauges, the ticket queue, the ladder of flush
// states, the last delalloc flush with each inode's dirty pages. Plain data:
// it crosses from the worker to the page.
import { laneName } from './timeline';
import type { TraceEvent } from './trace';
import type { FlushState } from './trace-schema.gen';

export const SPACES = ['data', 'metadata', 'system'] as const;
export type SpaceName = (typeof SPACES)[number];

export const PAGE = 4096;

/** A space_info's counters (bytes), as the kernel's struct btrfs_space_info keeps them. */
export interface Counters {
  /** Bytes of its chunks. */
  total: number;
  used: number;
  /** Extents allocated, not yet referenced (writeback's data extents, new tree blocks). */
  reserved: number;
  /** Freed in this transaction: free again after the commit. */
  pinned: number;
  /** Reservations: promised, not yet allocated. */
  mayUse: number;
}

/** The metadata worker's flush states in the kernel's order (enum btrfs_flush_state, 5.15+). */
export const METADATA_LADDER: readonly FlushState[] = ['FLUSH_DELAYED_ITEMS_NR', 'FLUSH_DELAYED_ITEMS', 'FLUSH_DELAYED_REFS_NR', 'FLUSH_DELAYED_REFS',
  'FLUSH_DELALLOC', 'FLUSH_DELALLOC_WAIT', 'FLUSH_DELALLOC_FULL', 'ALLOC_CHUNK', 'ALLOC_CHUNK_FORCE', 'RUN_DELAYED_IPUTS', 'COMMIT_TRANS'];
/** The data worker's: forced chunks while the device has room, then data_flush_states (5.15+). */
export const DATA_LADDER: readonly FlushState[] = ['ALLOC_CHUNK_FORCE', 'FLUSH_DELALLOC_FULL', 'RUN_DELAYED_IPUTS', 'COMMIT_TRANS'];

/** What each flush state does, in a few words (space-info.c's flush_space; the model's simplifications said). */
export const FLUSH_STATE_DOES: Readonly<Record<string, string>> = {
  FLUSH_DELAYED_ITEMS_NR: 'run some delayed items (2 × to_reclaim ÷ insert(1) inodes\' nodes)',
  FLUSH_DELAYED_ITEMS: 'run every delayed item',
  FLUSH_DELAYED_REFS_NR: 'run some delayed refs (the model runs them at the commit: nothing here)',
  FLUSH_DELAYED_REFS: 'run every delayed ref (the model: nothing here)',
  FLUSH_DELALLOC: 'shrink_delalloc: write back delalloc, then sleep a tick',
  FLUSH_DELALLOC_WAIT: 'shrink_delalloc, then wait for its ordered extents',
  FLUSH_DELALLOC_FULL: 'write back all delalloc (after a commit cycle)',
  ALLOC_CHUNK: 'allocate a chunk, if the space is nearly full',
  ALLOC_CHUNK_FORCE: 'allocate a chunk while the device has room',
  RUN_DELAYED_IPUTS: 'run the delayed iputs (the model has none)',
  COMMIT_TRANS: 'commit the transaction: pinned space is free again',
};

export type ShrinkMode = 'pages' | 'inodes';

/** An inode a delalloc flush wrote: its dirty pages before the pass, and how many the pass wrote (all of them when inline). */
export interface ShrinkFile {
  ino: number;
  dirtyBefore: number;
  written: number;
  /** Stored whole as an inline extent (a small file). */
  inline: boolean;
}

/** One pass of shrink_delalloc. */
export interface ShrinkPass {
  mode: ShrinkMode;
  /** Pages (5.11+), inodes (5.10), or null: everything (FLUSH_DELALLOC_FULL). */
  budget: number | null;
  /** What the core counted it wrote. */
  pages: number;
  inodes: number;
  /** The inodes it wrote, in the order it wrote them. */
  files: ShrinkFile[];
  /** Dirty inodes and pages before the pass, and left after it. */
  before: { inodes: number; pages: number };
  left: { inodes: number; pages: number };
  /** The flush state that ran it and its space (from the flush_space after it; null if the step ended first). */
  state: FlushState | null;
  space: SpaceName | null;
}

interface At {
  /** The event's seq, and the virtual time then (ns). */
  seq: number;
  at: number;
}

export type SpaceMoment =
  | (At & { kind: 'counters'; space: SpaceName; counters: Counters })
  | (At & { kind: 'ticket'; task: number; space: SpaceName; bytes: number })
  | (At & { kind: 'trigger'; task: number; space: SpaceName; bytes: number })
  | (At & { kind: 'granted' | 'failed'; task: number; space: SpaceName; bytes: number; waitNs: number; error: number })
  | (At & { kind: 'flush'; space: SpaceName; state: FlushState; numBytes: number | null; granted: number })
  | (At & { kind: 'shrink'; pass: ShrinkPass });

export type SpaceMomentKind = SpaceMoment['kind'];

/** One step's space story. */
export interface SpaceStep {
  /** Each space's counters as the step found them (those reported before it). */
  before: Partial<Record<SpaceName, Counters>>;
  moments: SpaceMoment[];
  /** Task names by task id (the step's threads and the reclaim workers). */
  names: Record<number, string>;
  /** Dirty inodes and pages when the step began. */
  dirtyBefore: { inodes: number; pages: number };
  /** Its time span (ns; null: no time passed). */
  t0: number | null;
  t1: number | null;
}

/** What a step leaves to the next: the counters last reported, and each inode's dirty pages. */
export interface SpaceCarry {
  counters: Partial<Record<SpaceName, Counters>>;
  dirty: Map<number, Set<number>>;
}

export const EMPTY_CARRY: SpaceCarry = { counters: {}, dirty: new Map() };

const num = (v: bigint) => Number(v);
const spaceOf = (s: string): SpaceName => ((SPACES as readonly string[]).includes(s) ? (s as SpaceName) : 'metadata');
const U64_MAX = (1n << 64n) - 1n;
const DELALLOC_STATES: readonly FlushState[] = ['FLUSH_DELALLOC', 'FLUSH_DELALLOC_WAIT', 'FLUSH_DELALLOC_FULL'];

/** The thread names of the step whose command is line (an untar's one thread is tar; a section's by the order they appear in it). */
export function threadNames(command: string, sectionNames: readonly string[]): string[] {
  const word = command.trim().split(/\s+/)[0];
  if (word === 'untar') return ['tar'];
  return [...sectionNames];
}

/** Kinds that close a shrink pass's run of writes: a pass's own ordered_add and write_inline come right before its shrink_delalloc, with only tree changes between. */
const closesPass = (k: string) => k.startsWith('task_') || k.startsWith('bio_') || k.startsWith('lock_') ||
  ['page_dirty', 'ordered_io_done', 'ordered_finish', 'ordered_logged', 'space_info', 'trigger_flush', 'reserve_ticket', 'flush_space', 'op', 'commit', 'log_sync', 'fsync'].includes(k);

/**
 * One step's events read into its space story, from what the steps before it
 * left (not changed); and what it leaves. threads names the step's threads by
 * index (an untar's one thread is tar).
 */
export function readSpace(events: readonly TraceEvent[], carry: SpaceCarry, threads: readonly string[]): { step: SpaceStep; carry: SpaceCarry } {
  const counters = { ...carry.counters };
  const dirty = new Map([...carry.dirty].map(([ino, pages]) => [ino, new Set(pages)]));
  let dirtyPages = 0;
  for (const p of dirty.values()) dirtyPages += p.size;
  const dirtyBefore = { inodes: dirty.size, pages: dirtyPages };
  const names: Record<number, string> = {};
  const moments: SpaceMoment[] = [];
  let t0: number | null = null, t1: number | null = null;
  // the writes since the last event that closes a pass, by inode (a pass's files)
  let run = new Map<number, ShrinkFile>();
  let runBefore = { inodes: 0, pages: 0 };
  // the tickets waiting for their reserve_ticket, which names their space
  const open: { task: number; m: Extract<SpaceMoment, { kind: 'ticket' }> }[] = [];
  const passes: Extract<SpaceMoment, { kind: 'shrink' }>[] = [];
  let lastSpace: SpaceName = 'metadata';

  const clean = (ino: number, from: number, to: number | null, inline: boolean) => {
    const pages = dirty.get(ino);
    if (!run.size) runBefore = { inodes: dirty.size, pages: dirtyPages };
    let f = run.get(ino);
    if (!f) run.set(ino, (f = { ino, dirtyBefore: pages?.size ?? 0, written: 0, inline }));
    f.inline ||= inline;
    if (!pages) return;
    for (const p of [...pages]) {
      if (p < from || (to !== null && p >= to)) continue;
      pages.delete(p);
      f.written++;
      dirtyPages--;
    }
    if (!pages.size) dirty.delete(ino);
  };

  for (const e of events) {
    if ('atNs' in e && typeof e.atNs === 'bigint') {
      const at = num(e.atNs);
      t0 ??= at;
      t1 = Math.max(t1 ?? at, at);
    }
    if (e.kind !== 'ordered_add' && e.kind !== 'write_inline' && e.kind !== 'shrink_delalloc' && run.size && closesPass(e.kind)) run = new Map();
    switch (e.kind) {
      case 'task_new':
        names[e.task] = laneName(e.taskKind, e.index, [...threads]);
        break;
      case 'page_dirty': {
        const ino = num(e.ino), off = num(e.offset), len = num(e.length);
        let pages = dirty.get(ino);
        if (!pages) dirty.set(ino, (pages = new Set()));
        for (let p = Math.floor(off / PAGE); p < Math.ceil((off + len) / PAGE); p++) {
          if (pages.has(p)) continue;
          pages.add(p);
          dirtyPages++;
        }
        break;
      }
      case 'ordered_add': {
        const off = num(e.offset), len = num(e.length);
        clean(num(e.ino), Math.floor(off / PAGE), Math.ceil((off + len) / PAGE), false);
        break;
      }
      case 'write_inline':
        clean(num(e.ino), 0, null, true);
        break;
      case 'space_info': {
        const c: Counters = { total: num(e.total), used: num(e.used), reserved: num(e.reserved), pinned: num(e.pinned), mayUse: num(e.mayUse) };
        counters[spaceOf(e.space)] = c;
        lastSpace = spaceOf(e.space);
        moments.push({ kind: 'counters', seq: e.seq, at: num(e.atNs), space: spaceOf(e.space), counters: c });
        break;
      }
      case 'trigger_flush':
        moments.push({ kind: 'trigger', seq: e.seq, at: num(e.atNs), task: e.task, space: spaceOf(e.space), bytes: num(e.bytes) });
        break;
      case 'task_wait':
        if (e.cause === 'ticket') {
          // the space is the one its reserve_ticket names (the last counters reported until then)
          const m = { kind: 'ticket' as const, seq: e.seq, at: num(e.atNs), task: e.task, space: lastSpace, bytes: num(e.object) };
          open.push({ task: e.task, m });
          moments.push(m);
        }
        break;
      case 'reserve_ticket': {
        const space = spaceOf(e.space);
        const k = open.findIndex((o) => o.task === e.task);
        if (k >= 0) open.splice(k, 1)[0].m.space = space;
        moments.push({ kind: e.error === 0n ? 'granted' : 'failed', seq: e.seq, at: num(e.atNs), task: e.task, space, bytes: num(e.bytes), waitNs: num(e.waitNs), error: num(e.error) });
        break;
      }
      case 'flush_space': {
        const space = spaceOf(e.space);
        // the delalloc flushes waiting for the state that ran them
        if (DELALLOC_STATES.includes(e.state)) {
          for (const p of passes) Object.assign(p.pass, { state: e.state, space });
          passes.length = 0;
        }
        moments.push({ kind: 'flush', seq: e.seq, at: num(e.atNs), space, state: e.state, numBytes: e.numBytes >= U64_MAX ? null : num(e.numBytes), granted: num(e.granted) });
        break;
      }
      case 'shrink_delalloc': {
        const files = [...run.values()];
        const pass: ShrinkPass = {
          mode: e.mode === 1 ? 'inodes' : 'pages', budget: e.budget >= U64_MAX ? null : num(e.budget), pages: num(e.pages), inodes: num(e.inodes),
          files, before: files.length ? runBefore : { inodes: dirty.size, pages: dirtyPages }, left: { inodes: dirty.size, pages: dirtyPages }, state: null, space: null,
        };
        const m = { kind: 'shrink' as const, seq: e.seq, at: num(e.atNs), pass };
        passes.push(m);
        moments.push(m);
        run = new Map();
        break;
      }
    }
  }
  return { step: { before: carry.counters, moments, names, dirtyBefore, t0, t1 }, carry: { counters, dirty } };
}

/** A space_info's gauge: its counters, what is free of its chunks, and how far reservations go past them (metadata overcommits). */
export interface Gauge extends Counters {
  space: SpaceName;
  free: number;
  over: number;
}

export function gaugeOf(space: SpaceName, c: Counters): Gauge {
  const sum = c.used + c.reserved + c.pinned + c.mayUse;
  return { space, ...c, free: Math.max(0, c.total - sum), over: Math.max(0, sum - c.total) };
}

/** A ticket in a queue: whose, how much it asks, since when, how long it has waited. */
export interface QueuedTicket {
  task: number;
  bytes: number;
  since: number;
  waited: number;
}

/**
 * A flush state on the ladder: walked in the worker's last round (lit: from
 * its first state, or the last restart), the one it runs or ran last
 * (current; running: a delalloc flush of it is under way, its flush_space
 * not yet come; granted: the tickets granted while it ran), and how many
 * times it ran in the step so far.
 */
export interface Rung {
  state: FlushState;
  lit: boolean;
  current: boolean;
  running: boolean;
  granted: number;
  runs: number;
}

export interface Ladder {
  space: SpaceName;
  rungs: Rung[];
  /** The worker is still walking: tickets wait. */
  walking: boolean;
  /** What its last state was asked to reclaim (bytes; null: everything). */
  toReclaim: number | null;
}

export interface SpaceTotals {
  tickets: number;
  granted: number;
  failed: number;
  /** Time tickets waited, in all (ns; granted or failed ones). */
  waitNs: number;
  passes: number;
  pagesWritten: number;
  inodesWritten: number;
}

/** The space story at a moment. */
export interface SpaceFrame {
  /** The moment's index (-1: before the step's first; moments.length - 1: its last), the moment, and the time then (null: none passed yet). */
  index: number;
  moment: SpaceMoment | null;
  at: number | null;
  gauges: Gauge[];
  queues: { space: SpaceName; tickets: QueuedTicket[] }[];
  ladders: Ladder[];
  /** The last delalloc flush at or before the moment; fresh: it is the moment. */
  pass: { seq: number; at: number; pass: ShrinkPass; fresh: boolean } | null;
  totals: SpaceTotals;
}

const ladderOf = (space: SpaceName) => (space === 'data' ? DATA_LADDER : METADATA_LADDER);

/** The step's story up to and including moment upTo (null: the step's end; -1: before its first moment). */
export function spaceFrame(step: SpaceStep, upTo: number | null): SpaceFrame {
  const last = upTo === null ? step.moments.length - 1 : Math.min(upTo, step.moments.length - 1);
  const counters = { ...step.before };
  const queues = new Map<SpaceName, QueuedTicket[]>();
  // each worker's round: the states walked since its last restart, its last state (running: a delalloc flush of it under way)
  type Round = { states: FlushState[]; runs: Map<FlushState, number>; last: { state: FlushState; granted: number; numBytes: number | null } | null; running: boolean };
  const rounds = new Map<SpaceName, Round>();
  // a ladder for each worker that runs in the step, unlit until it does
  for (const m of step.moments) if (m.kind === 'flush' && !rounds.has(m.space)) rounds.set(m.space, { states: [], runs: new Map(), last: null, running: false });
  const walk = (r: Round, space: SpaceName, state: FlushState) => {
    const ladder = ladderOf(space);
    // a new round: after a grant, or back at an earlier state (a restart, a commit cycle, a new ticket after idling)
    if (r.last && !r.running && (r.last.granted > 0 || ladder.indexOf(state) <= ladder.indexOf(r.last.state))) r.states = [];
    if (!r.running || r.last?.state !== state) r.states.push(state);
  };
  const totals: SpaceTotals = { tickets: 0, granted: 0, failed: 0, waitNs: 0, passes: 0, pagesWritten: 0, inodesWritten: 0 };
  let pass: SpaceFrame['pass'] = null;
  for (let i = 0; i <= last; i++) {
    const m = step.moments[i];
    switch (m.kind) {
      case 'counters':
        counters[m.space] = m.counters;
        break;
      case 'ticket': {
        totals.tickets++;
        const q = queues.get(m.space) ?? [];
        q.push({ task: m.task, bytes: m.bytes, since: m.at, waited: 0 });
        queues.set(m.space, q);
        break;
      }
      case 'granted':
      case 'failed': {
        totals[m.kind]++;
        totals.waitNs += m.waitNs;
        const q = queues.get(m.space) ?? [];
        const k = q.findIndex((t) => t.task === m.task);
        if (k >= 0) q.splice(k, 1);
        break;
      }
      case 'flush': {
        const r = rounds.get(m.space)!;
        walk(r, m.space, m.state);
        r.runs.set(m.state, (r.runs.get(m.state) ?? 0) + 1);
        r.last = { state: m.state, granted: m.granted, numBytes: m.numBytes };
        r.running = false;
        break;
      }
      case 'shrink': {
        totals.passes++;
        totals.pagesWritten += m.pass.pages;
        totals.inodesWritten += m.pass.inodes;
        pass = { seq: m.seq, at: m.at, pass: m.pass, fresh: i === last };
        // its state runs now: the flush_space that tells of it comes after its last pass
        const r = m.pass.space && m.pass.state ? rounds.get(m.pass.space) : undefined;
        if (r && m.pass.state) {
          walk(r, m.pass.space!, m.pass.state);
          r.last = { state: m.pass.state, granted: 0, numBytes: r.last?.numBytes ?? null };
          r.running = true;
        }
        break;
      }
    }
  }
  const moment = last >= 0 ? step.moments[last] : null;
  const at = moment?.at ?? null;
  const ladders: Ladder[] = [...rounds].sort(([a], [b]) => SPACES.indexOf(a) - SPACES.indexOf(b)).map(([space, r]) => {
    const known = ladderOf(space);
    const states = [...known, ...[...r.runs.keys()].filter((s) => !known.includes(s))]; // a state this ladder does not list goes last
    const walking = (queues.get(space)?.length ?? 0) > 0;
    return {
      space, walking, toReclaim: r.last?.numBytes ?? null,
      rungs: states.map((state) => ({
        state, lit: r.states.includes(state), current: r.last?.state === state, running: r.running && r.last?.state === state,
        granted: r.last?.state === state ? r.last.granted : 0, runs: r.runs.get(state) ?? 0,
      })),
    };
  });
  return {
    index: last, moment, at,
    gauges: SPACES.filter((s) => counters[s]).map((s) => gaugeOf(s, counters[s]!)),
    queues: SPACES.filter((s) => queues.get(s)?.length).map((s) => ({ space: s, tickets: queues.get(s)!.map((t) => ({ ...t, waited: (at ?? t.since) - t.since })) })),
    ladders, pass, totals,
  };
}

/** The index of the next moment after from whose kind is one of kinds (-1: none). */
export function nextMoment(step: SpaceStep, from: number, kinds: readonly SpaceMomentKind[]): number {
  for (let i = Math.max(-1, from) + 1; i < step.moments.length; i++) if (kinds.includes(step.moments[i].kind)) return i;
  return -1;
}

/** The index of the last moment at or before event seq (-1: none). */
export function momentAtSeq(step: SpaceStep, seq: number): number {
  let lo = 0, hi = step.moments.length - 1, found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (step.moments[mid].seq <= seq) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
