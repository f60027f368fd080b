// A timeline cut at one event: what the view draws when the player stops at
// a moment of the step (or at its end). Spans started after the event are
// not there yet; spans still running end at the moment's time ("now"), open;
// the page cache is the step's first state with the page events up to the
// event applied; an ordered extent is drawn from its creation, and vanishes
// after the event that completed it. Pure: the same cut gives the same frame,
// so stepping back is as exact as stepping forward.
import { applyPageEvent, type FilePages, type OrderedExtent, type PageCacheState } from './pageCache';
import type { BioSpan, CpuSpan, FileInfo, OpSpan, Timeline, TimelineMoment, WaitSpan } from './timeline';

export type OrderedPhase = 'writeback' | 'io-done' | 'complete';

export interface OrderedInFrame {
  oe: OrderedExtent;
  /** Its bio in flight; its data on the device but not yet in the trees; completed at this very event. */
  phase: OrderedPhase;
  /** A fast fsync logged it while in flight (by this event). */
  logged: boolean;
}

export interface TimelineFrame {
  /** The event cut at; null: the step's end. */
  cut: number | null;
  /** The virtual time at the cut. */
  now: number;
  /** The moment shown (null: the step's end). */
  moment: TimelineMoment | null;
  /** open: still running at the cut (or when the step ended: a power cut took it). */
  cpu: { span: CpuSpan; end: number; open: boolean }[];
  waits: { span: WaitSpan; end: number; open: boolean }[];
  ops: { span: OpSpan; end: number; open: boolean; waited: boolean; logged: number[] }[];
  bios: { span: BioSpan; end: number; open: boolean; serviceStart: number | null }[];
  files: { info: FileInfo; pages: FilePages; size: number }[];
  ordered: OrderedInFrame[];
}

/** The last moment at or before seq, by binary search (moments are in seq order). */
export function momentAt(moments: TimelineMoment[], seq: number): TimelineMoment | null {
  let lo = 0, hi = moments.length - 1, best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (moments[mid].seq <= seq) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best >= 0 ? moments[best] : null;
}

/** The page cache after the step's page events up to seq (all: Infinity). */
export function pagesAt(tl: Pick<Timeline, 'pagesBefore' | 'pageEvents'>, seq: number): PageCacheState {
  let st = tl.pagesBefore;
  for (const p of tl.pageEvents) {
    if (p.seq > seq) break;
    st = applyPageEvent(st, p);
  }
  return st;
}

/** The timeline cut right after event `cut` (null: the whole step). */
export function frameAt(tl: Timeline, cut: number | null): TimelineFrame {
  const c = cut ?? Infinity;
  const moment = cut === null ? null : momentAt(tl.moments, cut);
  const now = cut === null ? tl.t1 : Math.max(tl.t0, moment?.at ?? tl.t0);
  const upTo = (at: number) => Math.min(at, now);
  const cpu = tl.cpu.filter((s) => s.start.seq <= c).map((span) => ({ span, end: upTo(span.end), open: span.end > now }));
  const waits = tl.waits.filter((s) => s.start.seq <= c).map((span) => {
    const open = !span.end || span.end.seq > c;
    return { span, open, end: open ? now : span.end!.at };
  });
  const ops = tl.ops.filter((s) => s.start.seq <= c).map((span) => {
    const open = !span.end || span.end.seq > c;
    const logged = tl.ordered.filter((o) => span.logged.includes(o.id) && o.logged.some((l) => l.seq <= c)).map((o) => o.id);
    return { span, open, end: open ? now : span.end!.at, waited: !!span.waited && span.waited.at.seq <= c, logged };
  });
  const bios = tl.bios.filter((s) => s.submit.seq <= c).map((span) => {
    const open = !span.done || span.done.seq > c;
    return { span, open, end: open ? now : span.done!.at, serviceStart: open ? null : span.done!.at - span.serviceNs };
  });
  const pages = pagesAt(tl, c);
  const final = pagesAt(tl, Infinity);
  const files = tl.files.map((info) => {
    const p = pages.files.find((f) => f.ino === info.ino) ?? { ino: info.ino, size: 0, ranges: [] };
    const size = Math.max(p.size, final.files.find((f) => f.ino === info.ino)?.size ?? 0);
    return { info, pages: p, size };
  });
  const ordered: OrderedInFrame[] = [];
  for (const oe of tl.ordered) {
    if (oe.added.seq > c) continue;
    if (oe.finished && oe.finished.seq < c) continue; // completed: gone
    const phase: OrderedPhase = oe.finished && oe.finished.seq <= c ? 'complete' : oe.ioDone && oe.ioDone.seq <= c ? 'io-done' : 'writeback';
    ordered.push({ oe, phase, logged: oe.logged.some((l) => l.seq <= c) });
  }
  return { cut, now, moment, cpu, waits, ops, bios, files, ordered };
}

/** Index of the next moment after `from` (-1: from the start) whose event is a wait (not the kthread's periodic sleep), or -1. */
export function nextWait(moments: TimelineMoment[], from: number): number {
  for (let i = from + 1; i < moments.length; i++) if (moments[i].kind === 'task_wait' && !moments[i].timer) return i;
  return -1;
}
