// The timeline built from a step's events (lesson 3): lanes named from the
// script, CPU spans, waits with their causes, commands from start to return
// (an fsync marked with what it waited for), bios in rows, the page cache
// and ordered extents, and frames cut at any event.
import { describe, expect, it, test } from 'vitest';
import { EMPTY_PAGES, paint, applyPageEvent, type PageCacheState } from './pageCache';
import { notePaths, sectionAt } from './sections';
import { buildTimeline, laneName } from './timeline';
import { frameAt, momentAt, nextWait, pagesAt } from './timelineFrame';
import { parseTrace, type TraceEvent } from './trace';
import { formatBytes, formatNs } from './units';

const SCRIPT = `mkfs size=512M
set fsync_wait=writeback
thread A
write /a 0 64K
fsync /a
end
B: write /b 0 8K # B's one line
`.split('\n');

/** Events as the core writes them (JSON), parsed. */
function trace(rows: string[], first = 100): TraceEvent[] {
  return parseTrace(`[${rows.map((r, i) => `{"seq":${first + i},${r}}`).join(',')}]`);
}

const task = (t: number, kind: string, index: number) => `"kind":"task_new","task":${t},"taskKind":"${kind}","index":${index},"atNs":"0"`;
const op = (t: number, line: number, o: string, ino: number, off: number, len: number, at: number) =>
  `"kind":"task_op","task":${t},"line":${line},"op":"${o}","ino":"${ino}","offset":"${off}","length":"${len}","atNs":"${at}"`;
const opEnd = (t: number, line: number, o: string, ino: number, dur: number, at: number) =>
  `"kind":"task_op_end","task":${t},"line":${line},"op":"${o}","ino":"${ino}","durNs":"${dur}","atNs":"${at}"`;
const cpu = (t: number, work: string, dur: number, at: number) => `"kind":"task_cpu","task":${t},"work":"${work}","durNs":"${dur}","atNs":"${at}"`;
const wait = (t: number, cause: string, obj: number, at: number) => `"kind":"task_wait","task":${t},"cause":"${cause}","object":"${obj}","atNs":"${at}"`;
const wake = (t: number, cause: string, obj: number, waited: number, at: number) => `"kind":"task_wake","task":${t},"cause":"${cause}","object":"${obj}","waitNs":"${waited}","atNs":"${at}"`;
const oe = (kind: string, id: number, ino: number, off: number, len: number, at: number) =>
  `"kind":"${kind}","id":${id},"tree":"5","ino":"${ino}","offset":"${off}","length":"${len}","diskBytenr":"${58720256 + id * 65536}","atNs":"${at}"`;
const dirty = (ino: number, off: number, len: number, at: number) => `"kind":"page_dirty","tree":"5","ino":"${ino}","offset":"${off}","length":"${len}","atNs":"${at}"`;
const bio = (id: number, t: number, o: string, bytes: number, at: number) => `"kind":"bio_submit","id":${id},"task":${t},"op":"${o}","logical":"0","bytes":"${bytes}","atNs":"${at}"`;
const bioDone = (id: number, o: string, bytes: number, service: number, at: number) => `"kind":"bio_done","id":${id},"op":"${o}","logical":"0","bytes":"${bytes}","serviceNs":"${service}","atNs":"${at}"`;

// A writes /a and fsyncs it (writeback mode: it waits for writeback, logs the ordered extent in flight); B writes /b; an endio-write worker completes the extent
const EVENTS = trace([
  task(0, 'endio-write', 0), task(1, 'endio-write', 1), task(2, 'flusher', 0), task(3, 'transaction', 0), task(4, 'thread', 0), task(5, 'thread', 1),
  wait(0, 'idle', 0, 0), wait(3, 'sleep', 30000000000, 0),
  op(4, 4, 'write', 257, 0, 65536, 0), cpu(4, 'page copy', 16000, 0), op(5, 7, 'write', 258, 0, 8192, 0),
  dirty(257, 0, 65536, 16000), opEnd(4, 4, 'write', 257, 20000, 20000), dirty(258, 0, 8192, 21000), opEnd(5, 7, 'write', 258, 21000, 21000),
  op(4, 5, 'fsync', 257, 0, 0, 20000), oe('ordered_add', 1, 257, 0, 65536, 21000), cpu(4, 'writeback', 29000, 21000),
  bio(1, 4, 'data', 65536, 50000), wait(4, 'writeback', 257, 50000), bio(2, 4, 'flush', 0, 55000),
  bioDone(1, 'data', 65536, 60000, 110000), oe('ordered_io_done', 1, 257, 0, 65536, 110000), wake(4, 'writeback', 257, 60000, 110000),
  wake(0, 'idle', 0, 110000, 110000), cpu(0, 'finish: fs tree', 50000, 110000),
  oe('ordered_logged', 1, 257, 0, 65536, 120000), cpu(4, 'log inode', 3000, 120000),
  wait(4, 'bio', 0, 123000), oe('ordered_finish', 1, 257, 0, 65536, 200000), bioDone(2, 'flush', 0, 600000, 700000), wake(4, 'bio', 0, 577000, 700000),
  opEnd(4, 5, 'fsync', 257, 680000, 700000),
]);

const seqOf = (pred: (e: TraceEvent) => boolean) => EVENTS.find(pred)!.seq;

describe('the timeline of a step', () => {
  const tl = buildTimeline(EVENTS, { lines: SCRIPT, line: 3, pagesBefore: EMPTY_PAGES });

  test('task_new parses with its task kind', () => {
    expect(EVENTS[0]).toMatchObject({ kind: 'task_new', task: 0, taskKind: 'endio-write', index: 0 });
    expect(EVENTS[4]).toMatchObject({ kind: 'task_new', taskKind: 'thread', index: 0 });
  });

  test('lanes: the threads by their script names, the flusher and kthread, the endio-write workers that worked', () => {
    expect(sectionAt(SCRIPT, 3).names).toEqual(['A', 'B']);
    expect(tl.lanes.map((l) => l.name)).toEqual(['A', 'B', 'flusher', 'transaction kthread', 'endio-write 0']);
    expect(tl.idleWorkers).toBe(1);
    expect(tl.timed).toBe(true);
    expect([tl.t0, tl.t1]).toEqual([0, 700000]);
  });

  test('CPU spans by work; waits by cause, idle ones left out', () => {
    expect(tl.cpu.filter((c) => c.task === 4).map((c) => [c.work, c.start.at, c.end])).toEqual([['page copy', 0, 16000], ['writeback', 21000, 50000], ['log inode', 120000, 123000]]);
    expect(tl.waits.map((w) => [w.task, w.cause, w.start.at, w.end?.at ?? null])).toEqual([
      [3, 'sleep', 0, null], [4, 'writeback', 50000, 110000], [4, 'bio', 123000, 700000],
    ]);
  });

  test('commands from start to return, named as the script says; an fsync marked with what it waited for and what it logged in flight', () => {
    expect(tl.ops.map((o) => [o.text, o.start.at, o.end?.at])).toEqual([
      ['write /a 0 64K', 0, 20000], ['write /b 0 8K', 0, 21000], ['fsync /a', 20000, 700000],
    ]);
    const fsync = tl.ops[2];
    expect(fsync.waited).toEqual({ what: 'I/O done', at: { seq: seqOf((e) => e.kind === 'task_wake' && e.cause === 'writeback'), at: 110000 } });
    expect(fsync.logged).toEqual([1]);
    expect(tl.files).toEqual([{ ino: 257, path: '/a' }, { ino: 258, path: '/b' }]);
  });

  test('bios from submit to done, in rows when in flight together', () => {
    expect(tl.bios.map((b) => [b.id, b.op, b.submit.at, b.done?.at, b.serviceNs, b.row])).toEqual([
      [1, 'data', 50000, 110000, 60000, 0], [2, 'flush', 55000, 700000, 600000, 1],
    ]);
    expect(tl.bioRows).toBe(2);
  });

  test('moments: the events a learner stops at, told with lane names; the next wait', () => {
    expect(tl.moments.some((m) => m.kind === 'task_new')).toBe(false);
    expect(tl.moments.filter((m) => m.sentence.includes('idle') || m.sentence.includes('waits for work'))).toEqual([]);
    const first = tl.moments.findIndex((m) => m.kind === 'task_wait');
    expect(tl.moments[first]).toMatchObject({ sentence: 'transaction kthread waits for 30.0 s of sleep', timer: true });
    // Next wait passes over the kthread's periodic sleep
    const next = nextWait(tl.moments, -1);
    expect(tl.moments[next].sentence).toBe('A waits for writeback of inode 257 (its pages\' bios)');
    expect(nextWait(tl.moments, next)).toBe(tl.moments.findIndex((m) => m.kind === 'task_wait' && m.sentence.startsWith('A waits for its bio')));
    expect(tl.moments.find((m) => m.kind === 'task_op_end' && m.task === 4 && m.sentence.includes('fsync'))!.sentence).toBe("A's fsync (line 5) returns after 680 µs");
    expect(tl.moments.find((m) => m.kind === 'ordered_logged')!.sentence).toContain('logs ordered extent 1 (inode 257) while it is in flight');
  });

  test('a frame cut at an event: spans after it absent, running ones open to now, pages and ordered extents as they were', () => {
    const atWait = seqOf((e) => e.kind === 'task_wait' && e.cause === 'writeback');
    const f = frameAt(tl, atWait);
    expect(f.now).toBe(50000);
    expect(f.waits.find((w) => w.span.cause === 'writeback')).toMatchObject({ open: true, end: 50000 });
    expect(f.bios).toHaveLength(1);
    expect(f.bios[0]).toMatchObject({ open: true, serviceStart: null });
    expect(f.ops.find((o) => o.span.op === 'fsync')).toMatchObject({ open: true, waited: false, logged: [] });
    expect(f.files.map((x) => [x.info.path, x.size, x.pages.ranges])).toEqual([
      ['/a', 65536, [{ start: 0, end: 65536, state: 'writeback' }]],
      ['/b', 8192, [{ start: 0, end: 8192, state: 'dirty' }]],
    ]);
    expect(f.ordered.map((o) => [o.oe.id, o.phase, o.logged])).toEqual([[1, 'writeback', false]]);
    // after the bio: the pages leave writeback, the extent is in flight still, then logged, then complete and gone
    const io = frameAt(tl, seqOf((e) => e.kind === 'ordered_io_done'));
    expect(io.files[0].pages.ranges).toEqual([{ start: 0, end: 65536, state: 'ordered' }]);
    expect(io.ordered.map((o) => o.phase)).toEqual(['io-done']);
    const logged = frameAt(tl, seqOf((e) => e.kind === 'ordered_logged'));
    expect(logged.ordered.map((o) => [o.phase, o.logged])).toEqual([['io-done', true]]);
    expect(logged.ops.find((o) => o.span.op === 'fsync')).toMatchObject({ waited: true, logged: [1] });
    const fin = seqOf((e) => e.kind === 'ordered_finish');
    expect(frameAt(tl, fin).ordered.map((o) => o.phase)).toEqual(['complete']);
    expect(frameAt(tl, fin).files[0].pages.ranges).toEqual([]);
    expect(frameAt(tl, fin + 1).ordered).toEqual([]);
    // the whole step: everything closed, the extent gone
    const end = frameAt(tl, null);
    expect(end.now).toBe(700000);
    expect(end.ops.every((o) => !o.open)).toBe(true);
    expect(end.ordered).toEqual([]);
  });

  test('frames are exact both ways: the same cut gives the same frame whatever came before', () => {
    const cuts = tl.moments.map((m) => m.seq);
    const forward = cuts.map((c) => JSON.stringify(frameAt(tl, c)));
    const back = [...cuts].reverse().map((c) => JSON.stringify(frameAt(tl, c))).reverse();
    expect(back).toEqual(forward);
    expect(momentAt(tl.moments, cuts[3])!.seq).toBe(cuts[3]);
    expect(momentAt(tl.moments, cuts[0] - 1)).toBeNull();
  });

  test('the page cache carries over from earlier steps: a step starts with the extents still in flight', () => {
    const before: PageCacheState = pagesAt({ pagesBefore: EMPTY_PAGES, pageEvents: tl.pageEvents.filter((p) => p.kind !== 'ordered_finish') }, Infinity);
    expect(before.ordered.map((o) => o.id)).toEqual([1]);
    const later = buildTimeline(trace([oe('ordered_finish', 1, 257, 0, 65536, 800000)], 1000), { lines: SCRIPT, line: 2, pagesBefore: before });
    expect(later.timed).toBe(false);
    expect(frameAt(later, null).ordered).toEqual([]);
    expect(frameAt(later, later.moments[0].seq).ordered.map((o) => o.phase)).toEqual(['complete']);
    expect(later.pagesBefore.ordered[0].finished).toBeUndefined(); // the step's state before it is left as it was
  });

  test('paths of inodes from the steps that name them', () => {
    const paths = new Map<number, string>();
    notePaths(paths, EVENTS, SCRIPT, 'thread A');
    expect([...paths]).toEqual([[257, '/a'], [258, '/b']]);
    const untimed = new Map<number, string>();
    notePaths(untimed, trace([dirty(259, 0, 100, 0)]), SCRIPT, 'write /c 0 100');
    expect([...untimed]).toEqual([[259, '/c']]);
  });
});

describe('the delayed-meta worker', () => {
  // the worker (task 9, spawned after the threads, as the core does) flushes inode 258's delayed items: it takes the
  // inode's delayed node mutex, then waits for the fs tree's lock; A waits for that mutex
  const rows = [
    task(0, 'endio-write', 0), task(1, 'endio-write', 1), task(2, 'flusher', 0), task(3, 'transaction', 0), task(4, 'thread', 0), task(5, 'thread', 1),
    task(9, 'delayed-meta', 0), wait(9, 'idle', 0, 0), wake(9, 'idle', 0, 5000, 5000),
    op(4, 4, 'write', 257, 0, 65536, 0), cpu(9, 'namespace op', 1000, 5000), wait(9, 'tree lock', 5, 6000), wait(4, 'delayed node mutex', 258, 6500),
    wake(9, 'tree lock', 5, 1000, 7000), wake(4, 'delayed node mutex', 258, 1500, 8000), opEnd(4, 4, 'write', 257, 9000, 9000),
  ];
  const ctx = { lines: SCRIPT, line: 3, pagesBefore: EMPTY_PAGES };
  const tl = buildTimeline(trace(rows), ctx);

  test('a lane among the kernel workers, after the transaction kthread, before the endio-write workers; named as the core names it', () => {
    expect(tl.lanes.map((l) => [l.name, l.kind])).toEqual([['A', 'thread'], ['B', 'thread'], ['flusher', 'flusher'], ['transaction kthread', 'transaction'], ['delayed-meta', 'delayed-meta']]);
    // an endio-write worker that worked goes after it; a kind this view does not know (a newer core's) between them, named by its index
    const more = buildTimeline(trace([...rows, cpu(1, 'finish: fs tree', 1000, 9000), task(10, 'some-new-kind', 1), cpu(10, 'commit', 1000, 9000)]), ctx);
    expect(more.lanes.map((l) => l.name)).toEqual(['A', 'B', 'flusher', 'transaction kthread', 'delayed-meta', 'some-new-kind 1', 'endio-write 1']);
  });

  test('its waits, and a wait for a delayed node mutex, told', () => {
    expect(tl.waits.map((w) => [w.task, w.cause, w.object])).toEqual([[9, 'tree lock', '5'], [4, 'delayed node mutex', '258']]);
    expect(tl.moments.filter((m) => m.kind === 'task_wait').map((m) => m.sentence)).toEqual([
      'delayed-meta waits for a lock on the fs tree',
      'A waits for the delayed node mutex of inode 258 (its delayed items being flushed, or the inode evicted)',
    ]);
  });
});

describe('page ranges', () => {
  test('painting splits and merges page-aligned ranges', () => {
    let r = paint([], 0, 100, 'dirty');
    expect(r).toEqual([{ start: 0, end: 4096, state: 'dirty' }]);
    r = paint(r, 8192, 16384, 'dirty');
    r = paint(r, 4096, 8192, 'dirty');
    expect(r).toEqual([{ start: 0, end: 16384, state: 'dirty' }]);
    r = paint(r, 4096, 8192, 'writeback');
    expect(r.map((x) => x.state)).toEqual(['dirty', 'writeback', 'dirty']);
    // only pages under writeback leave it; the others stay
    r = paint(r, 0, 16384, 'ordered', ['writeback']);
    expect(r.map((x) => [x.start, x.end, x.state])).toEqual([[0, 4096, 'dirty'], [4096, 8192, 'ordered'], [8192, 16384, 'dirty']]);
    r = paint(r, 0, 16384, null, ['ordered']);
    expect(r.map((x) => [x.start, x.end, x.state])).toEqual([[0, 4096, 'dirty'], [8192, 16384, 'dirty']]);
  });

  test('a page dirtied again while its extent is in flight stays dirty when the extent completes', () => {
    let st = applyPageEvent(EMPTY_PAGES, { kind: 'ordered_add', seq: 1, at: 0, ino: 257, offset: 0, length: 8192, id: 1 });
    st = applyPageEvent(st, { kind: 'ordered_io_done', seq: 2, at: 1, ino: 257, offset: 0, length: 8192, id: 1 });
    st = applyPageEvent(st, { kind: 'page_dirty', seq: 3, at: 2, ino: 257, offset: 0, length: 4096 });
    st = applyPageEvent(st, { kind: 'ordered_finish', seq: 4, at: 3, ino: 257, offset: 0, length: 8192, id: 1 });
    expect(st.files[0].ranges).toEqual([{ start: 0, end: 4096, state: 'dirty' }]);
    expect(st.ordered).toEqual([]);
  });
});

describe('units', () => {
  test('durations and sizes', () => {
    expect([950, 60768, 1695803, 2.5e9].map(formatNs)).toEqual(['950 ns', '60.8 µs', '1.70 ms', '2.50 s']);
    expect([65536, 4096, 100, 1572864, 1].map(formatBytes)).toEqual(['64 KiB', '4 KiB', '100 bytes', '1.5 MiB', '1 byte']);
  });
});

describe('lane names of the kernel workers', () => {
  it('names the reclaim workers by the space they serve, as the core does', () => {
    expect(laneName('reclaim', 0, [])).toBe('async reclaim metadata');
    expect(laneName('reclaim', 1, [])).toBe('async reclaim data');
    expect(laneName('delayed-meta', 0, [])).toBe('delayed-meta');
    expect(laneName('thread', 1, ['A', 'B'])).toBe('B');
  });
});
