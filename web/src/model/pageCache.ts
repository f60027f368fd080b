// A file's pages in the page cache as the trace tells them (lesson 3): a
// write makes its pages dirty (page_dirty: delalloc, no extent yet);
// writeback makes an ordered extent over them and puts them under writeback
// (ordered_add); when the extent's bio completes the pages leave writeback
// but the ordered extent is still in flight (ordered_io_done) until its
// completion puts the file extent item and checksums in the trees
// (ordered_finish); then they are clean. Plain data: it crosses from the
// worker to the page.
import type { EventOf } from './trace';

export const PAGE = 4096;

/** A page's state; a page the file has but no range names is clean. */
export type PageState = 'dirty' | 'writeback' | 'ordered';

/** Pages [start, end) in one state (bytes, page aligned). */
export interface PageRange {
  start: number;
  end: number;
  state: PageState;
}

export interface FilePages {
  ino: number;
  /** The largest end of a write seen: the strip's length. */
  size: number;
  ranges: PageRange[];
}

/** A moment of the trace: the event's seq and the virtual time then. */
export interface TimeMark {
  seq: number;
  at: number;
}

/** An ordered extent: made by writeback, its bio done, logged in flight by fast fsyncs, completed. */
export interface OrderedExtent {
  id: number;
  ino: number;
  offset: number;
  length: number;
  diskBytenr: string;
  added: TimeMark;
  ioDone?: TimeMark;
  /** Each fast fsync that logged it while it was in flight. */
  logged: TimeMark[];
  finished?: TimeMark;
}

/** The page events, without their bigints. */
export type PageEventKind = 'page_dirty' | 'write_inline' | 'ordered_add' | 'ordered_io_done' | 'ordered_logged' | 'ordered_finish';
export interface PageEvent {
  kind: PageEventKind;
  seq: number;
  at: number;
  ino: number;
  offset: number;
  length: number;
  /** The ordered extent (its kinds only). */
  id?: number;
  diskBytenr?: string;
}

export type PageTraceEvent = EventOf<PageEventKind>;

export const PAGE_KINDS: ReadonlySet<string> = new Set<PageEventKind>(['page_dirty', 'write_inline', 'ordered_add', 'ordered_io_done', 'ordered_logged', 'ordered_finish']);

export function isPageEvent(e: { kind: string }): e is PageTraceEvent {
  return PAGE_KINDS.has(e.kind);
}

/** A page event as plain numbers. */
export function pageEvent(e: PageTraceEvent): PageEvent {
  const base = { kind: e.kind, seq: e.seq, at: Number(e.atNs), ino: Number(e.ino) };
  if (e.kind === 'page_dirty') return { ...base, offset: Number(e.offset), length: Number(e.length) };
  if (e.kind === 'write_inline') return { ...base, offset: 0, length: Number(e.size) };
  return { ...base, offset: Number(e.offset), length: Number(e.length), id: e.id, diskBytenr: e.diskBytenr.toString() };
}

/** The page cache at one point: each file's pages, and the ordered extents still in flight. */
export interface PageCacheState {
  files: FilePages[];
  ordered: OrderedExtent[];
}

export const EMPTY_PAGES: PageCacheState = { files: [], ordered: [] };

const down = (n: number) => Math.floor(n / PAGE) * PAGE;
const up = (n: number) => Math.ceil(n / PAGE) * PAGE;

/**
 * ranges with [start, end) repainted: to `to` (null: clean) where the page's
 * state is one of `from` (all: any state, clean pages included). Sorted,
 * neighbours of one state merged.
 */
export function paint(ranges: PageRange[], start: number, end: number, to: PageState | null, from: 'all' | PageState[] = 'all'): PageRange[] {
  const s = down(start), e = up(end);
  if (e <= s) return ranges;
  const out: PageRange[] = [];
  const touches = (st: PageState | null) => from === 'all' || (st !== null && from.includes(st));
  for (const r of ranges) {
    if (r.end <= s || r.start >= e || !touches(r.state)) {
      out.push(r);
      continue;
    }
    if (r.start < s) out.push({ start: r.start, end: s, state: r.state });
    if (r.end > e) out.push({ start: e, end: r.end, state: r.state });
    if (to !== null) out.push({ start: Math.max(r.start, s), end: Math.min(r.end, e), state: to });
  }
  // clean pages inside [s, e) take `to` only when every state may be repainted
  if (to !== null && from === 'all') {
    const covered = out.filter((r) => r.end > s && r.start < e).sort((a, b) => a.start - b.start);
    let at = s;
    for (const r of covered) {
      if (r.start > at) out.push({ start: at, end: r.start, state: to });
      at = Math.max(at, r.end);
    }
    if (at < e) out.push({ start: at, end: e, state: to });
  }
  out.sort((a, b) => a.start - b.start);
  const merged: PageRange[] = [];
  for (const r of out) {
    const last = merged[merged.length - 1];
    if (last && last.state === r.state && last.end >= r.start) last.end = Math.max(last.end, r.end);
    else merged.push({ ...r });
  }
  return merged;
}

/** The state after one page event (a new object; the one given is unchanged). */
export function applyPageEvent(st: PageCacheState, e: PageEvent): PageCacheState {
  let files = st.files;
  let ordered = st.ordered;
  const file = (ino: number) => st.files.find((f) => f.ino === ino) ?? { ino, size: 0, ranges: [] };
  const setFile = (f: FilePages) => {
    files = [...files.filter((x) => x.ino !== f.ino), f].sort((a, b) => a.ino - b.ino);
  };
  const f = file(e.ino);
  const end = e.offset + e.length;
  switch (e.kind) {
    case 'page_dirty':
      setFile({ ...f, size: Math.max(f.size, end), ranges: paint(f.ranges, e.offset, end, 'dirty') });
      break;
    case 'write_inline':
      setFile({ ...f, size: Math.max(f.size, end), ranges: paint(f.ranges, 0, end, null) });
      break;
    case 'ordered_add':
      setFile({ ...f, size: Math.max(f.size, end), ranges: paint(f.ranges, e.offset, end, 'writeback') });
      ordered = [...ordered, { id: e.id!, ino: e.ino, offset: e.offset, length: e.length, diskBytenr: e.diskBytenr ?? '0', added: { seq: e.seq, at: e.at }, logged: [] }];
      break;
    case 'ordered_io_done':
      setFile({ ...f, ranges: paint(f.ranges, e.offset, end, 'ordered', ['writeback']) });
      ordered = ordered.map((o) => (o.id === e.id ? { ...o, ioDone: { seq: e.seq, at: e.at } } : o));
      break;
    case 'ordered_logged':
      ordered = ordered.map((o) => (o.id === e.id ? { ...o, logged: [...o.logged, { seq: e.seq, at: e.at }] } : o));
      break;
    case 'ordered_finish':
      setFile({ ...f, ranges: paint(f.ranges, e.offset, end, null, ['ordered', 'writeback']) });
      ordered = ordered.filter((o) => o.id !== e.id);
      break;
  }
  return { files, ordered };
}

/** The state after a run of page events (any other events are skipped). */
export function foldPages(st: PageCacheState, events: { kind: string }[]): PageCacheState {
  for (const e of events) if (isPageEvent(e)) st = applyPageEvent(st, pageEvent(e));
  return st;
}
