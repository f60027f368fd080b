// The space story read from a step's events (lesson 5): the gauges from the
// space_info events, the ticket queue over time, the reclaim worker's ladder
// at each moment, and each delalloc flush's inodes with their dirty pages.
import { describe, expect, test } from 'vitest';
import { EMPTY_CARRY, gaugeOf, momentAtSeq, nextMoment, readSpace, spaceFrame, threadNames, type SpaceStep } from './space';
import { parseTrace, type TraceEvent } from './trace';

/** Events as the core writes them (JSON), parsed; seq from 100. */
function trace(rows: string[]): TraceEvent[] {
  return parseTrace(`[${rows.map((r, i) => `{"seq":${100 + i},${r}}`).join(',')}]`);
}

const MiB = 1 << 20;
const task = (t: number, kind: string, index: number) => `"kind":"task_new","task":${t},"taskKind":"${kind}","index":${index},"atNs":"0"`;
const dirty = (ino: number, off: number, len: number, at = 10) => `"kind":"page_dirty","tree":"5","ino":"${ino}","offset":"${off}","length":"${len}","atNs":"${at}"`;
const info = (space: string, mayUse: number, at: number, used = 131072) =>
  `"kind":"space_info","space":"${space}","total":"${25 * MiB}","used":"${used}","reserved":"0","pinned":"16384","mayUse":"${mayUse}","atNs":"${at}"`;
const trigger = (t: number, space: string, bytes: number, at: number) => `"kind":"trigger_flush","task":${t},"space":"${space}","bytes":"${bytes}","atNs":"${at}"`;
const wait = (t: number, bytes: number, at: number) => `"kind":"task_wait","task":${t},"cause":"ticket","object":"${bytes}","atNs":"${at}"`;
const wake = (t: number, bytes: number, waited: number, at: number) => `"kind":"task_wake","task":${t},"cause":"ticket","object":"${bytes}","waitNs":"${waited}","atNs":"${at}"`;
const ticket = (t: number, space: string, bytes: number, waited: number, error: number, at: number) =>
  `"kind":"reserve_ticket","task":${t},"space":"${space}","bytes":"${bytes}","waitNs":"${waited}","error":"${error}","atNs":"${at}"`;
const flush = (state: string, granted: number, at: number, space = 'metadata') =>
  `"kind":"flush_space","space":"${space}","state":"${state}","numBytes":"${2.5 * MiB}","granted":"${granted}","atNs":"${at}"`;
const oe = (id: number, ino: number, off: number, len: number, at: number) =>
  `"kind":"ordered_add","id":${id},"tree":"5","ino":"${ino}","offset":"${off}","length":"${len}","diskBytenr":"${31457280 + id * 65536}","atNs":"${at}"`;
const inline = (ino: number, size: number, at: number) => `"kind":"write_inline","tree":"5","ino":"${ino}","size":"${size}","atNs":"${at}"`;
const search = '"kind":"search","tree":"5","bytenr":"30408704","level":0,"slot":3,"key":["261",108,"0"],"found":false';
const shrink = (mode: number, budget: number, pages: number, inodes: number, at: number) =>
  `"kind":"shrink_delalloc","mode":${mode},"budget":"${budget}","pages":"${pages}","inodes":"${inodes}","atNs":"${at}"`;
const cpu = (t: number, at: number) => `"kind":"task_cpu","task":${t},"work":"writeback","durNs":"100","atNs":"${at}"`;

// tar (task 8) dirties three files, its create does not fit: a ticket; the
// metadata worker (task 10) walks two states, a delalloc flush writes two of
// the files, FLUSH_DELALLOC's run grants the ticket; a second ticket fails.
const EVENTS = trace([
  task(8, 'thread', 0), task(10, 'reclaim', 0), task(11, 'reclaim', 1),
  dirty(260, 0, 8333), dirty(261, 0, 4000), dirty(262, 0, 20000), dirty(262, 16384, 100),
  info('metadata', 46 * MiB, 1000), trigger(8, 'metadata', 2.5 * MiB, 1000), wait(8, 2.5 * MiB, 1000), // moments 0-2
  flush('FLUSH_DELAYED_ITEMS_NR', 0, 1100), flush('FLUSH_DELAYED_ITEMS', 0, 1200), // 3, 4
  oe(1, 260, 0, 12288, 1300), search, inline(261, 4000, 1300), shrink(0, 4, 4, 2, 1300), cpu(10, 1300), // 5
  ticket(8, 'metadata', 2.5 * MiB, 450, 0, 1450), wake(8, 2.5 * MiB, 450, 1450), info('metadata', 45 * MiB, 1450), // 6, 7
  flush('FLUSH_DELALLOC', 1, 1500), // 8
  info('metadata', 47 * MiB, 2000), wait(8, MiB, 2000), // 9, 10
  flush('FLUSH_DELAYED_ITEMS_NR', 0, 2100), // 11
  ticket(8, 'metadata', MiB, 1000, 28, 3000), // 12
]);

const read = (events = EVENTS, carry = EMPTY_CARRY) => readSpace(events, carry, ['tar']);

describe('reading a step', () => {
  test('the moments, in order, and the tasks named', () => {
    const { step } = read();
    expect(step.moments.map((m) => m.kind)).toEqual(['counters', 'trigger', 'ticket', 'flush', 'flush', 'shrink', 'granted', 'counters', 'flush', 'counters', 'ticket', 'flush', 'failed']);
    expect(step.names).toEqual({ 8: 'tar', 10: 'async reclaim metadata', 11: 'async reclaim data' });
    expect([step.t0, step.t1]).toEqual([0, 3000]);
    expect(step.dirtyBefore).toEqual({ inodes: 0, pages: 0 });
  });

  test("a delalloc flush: the inodes its own writes name, each inode's dirty pages before and written, what is left", () => {
    const { step, carry } = read();
    const m = step.moments[5];
    if (m.kind !== 'shrink') throw new Error(m.kind);
    expect(m.pass).toMatchObject({ mode: 'pages', budget: 4, pages: 4, inodes: 2, state: 'FLUSH_DELALLOC', space: 'metadata' });
    expect(m.pass.files).toEqual([{ ino: 260, dirtyBefore: 3, written: 3, inline: false }, { ino: 261, dirtyBefore: 1, written: 1, inline: true }]);
    // 262: pages 0-4 and 4 again (one page counted once)
    expect(m.pass.before).toEqual({ inodes: 3, pages: 9 });
    expect(m.pass.left).toEqual({ inodes: 1, pages: 5 });
    expect([...carry.dirty]).toEqual([[262, new Set([0, 1, 2, 3, 4])]]);
    expect(carry.counters.metadata?.mayUse).toBe(47 * MiB);
  });

  test("writes before another task's event are not the flush's", () => {
    const events = trace([dirty(300, 0, 4096), oe(1, 300, 0, 4096, 5), cpu(6, 5), dirty(301, 0, 4096), oe(2, 301, 0, 4096, 7), shrink(1, 20, 1, 1, 7)]);
    const m = read(events).step.moments[0];
    if (m.kind !== 'shrink') throw new Error(m.kind);
    expect(m.pass).toMatchObject({ mode: 'inodes', budget: 20, state: null, space: null });
    expect(m.pass.files.map((f) => f.ino)).toEqual([301]);
  });

  test("a flush's state is the delalloc state whose flush_space follows, another worker's state between", () => {
    const events = trace([dirty(300, 0, 4096), oe(1, 300, 0, 4096, 5), shrink(0, 1, 1, 1, 5), flush('ALLOC_CHUNK_FORCE', 0, 6, 'data'), flush('FLUSH_DELALLOC_WAIT', 0, 7)]);
    const m = read(events).step.moments[0];
    expect(m.kind === 'shrink' && [m.pass.state, m.pass.space]).toEqual(['FLUSH_DELALLOC_WAIT', 'metadata']);
  });

  test('what a step leaves is the next one\'s start, and is not changed by it', () => {
    const first = read();
    const second = readSpace(trace([oe(5, 262, 0, 20480, 4000), shrink(0, 5, 5, 1, 4000)]), first.carry, []);
    expect(second.step.before.metadata?.mayUse).toBe(47 * MiB);
    expect(second.step.dirtyBefore).toEqual({ inodes: 1, pages: 5 });
    expect(second.carry.dirty.size).toBe(0);
    expect(first.carry.dirty.get(262)?.size).toBe(5);
    const m = second.step.moments[0];
    expect(m.kind === 'shrink' && m.pass.files).toEqual([{ ino: 262, dirtyBefore: 5, written: 5, inline: false }]);
  });

  test("a ticket's space is its reserve_ticket's", () => {
    const { step } = read(trace([info('metadata', MiB, 1), wait(8, 4096, 1), ticket(8, 'data', 4096, 5, 0, 6)]));
    expect(step.moments[1]).toMatchObject({ kind: 'ticket', space: 'data', bytes: 4096 });
  });

  test("an untar's one thread is tar; a section's threads by their order", () => {
    expect(threadNames('untar random files=500 seed=3 dir=/pages', [])).toEqual(['tar']);
    expect(threadNames('thread A', ['A', 'B'])).toEqual(['A', 'B']);
  });
});

describe('the story at a moment', () => {
  const step: SpaceStep = read().step;

  test('the gauges: the counters last reported, what is free, how far reservations go past the chunks', () => {
    expect(spaceFrame(step, -1).gauges).toEqual([]);
    const [g] = spaceFrame(step, 0).gauges;
    expect(g).toEqual({ space: 'metadata', total: 25 * MiB, used: 131072, reserved: 0, pinned: 16384, mayUse: 46 * MiB, free: 0, over: 21 * MiB + 131072 + 16384 });
    expect(spaceFrame(step, 7).gauges[0].mayUse).toBe(45 * MiB);
    expect(gaugeOf('data', { total: 100, used: 20, reserved: 10, pinned: 5, mayUse: 15 })).toMatchObject({ free: 50, over: 0 });
    // a step where nothing is reported shows what was
    const next = readSpace([], read().carry, []).step;
    expect(spaceFrame(next, null).gauges[0].mayUse).toBe(47 * MiB);
  });

  test('the ticket queue over time: queued, waiting, granted, and the totals', () => {
    expect(spaceFrame(step, 1).queues).toEqual([]);
    expect(spaceFrame(step, 2).queues).toEqual([{ space: 'metadata', tickets: [{ task: 8, bytes: 2.5 * MiB, since: 1000, waited: 0 }] }]);
    expect(spaceFrame(step, 5).queues[0].tickets[0].waited).toBe(300);
    expect(spaceFrame(step, 6).queues).toEqual([]);
    expect(spaceFrame(step, 6).totals).toMatchObject({ tickets: 1, granted: 1, failed: 0, waitNs: 450 });
    expect(spaceFrame(step, null).totals).toEqual({ tickets: 2, granted: 1, failed: 1, waitNs: 1450, passes: 1, pagesWritten: 4, inodesWritten: 2 });
    expect(spaceFrame(step, null).queues).toEqual([]);
  });

  const rungs = (at: number | null) => {
    const [l] = spaceFrame(step, at).ladders;
    const pick = (f: (r: (typeof l.rungs)[number]) => boolean) => l.rungs.filter(f).map((r) => r.state);
    return { walking: l.walking, lit: pick((r) => r.lit), current: pick((r) => r.current), running: pick((r) => r.running), l };
  };

  test('the ladder, state by state: lit as the worker walks it, the delalloc state running during its flush, a grant, a new round', () => {
    // the worker runs in this step: its ladder is there from the start, unlit
    expect(spaceFrame(step, -1).ladders.map((l) => l.space)).toEqual(['metadata']);
    expect(rungs(2)).toMatchObject({ walking: true, lit: [], current: [] });
    expect(rungs(3)).toMatchObject({ lit: ['FLUSH_DELAYED_ITEMS_NR'], current: ['FLUSH_DELAYED_ITEMS_NR'] });
    expect(rungs(4)).toMatchObject({ lit: ['FLUSH_DELAYED_ITEMS_NR', 'FLUSH_DELAYED_ITEMS'], current: ['FLUSH_DELAYED_ITEMS'] });
    expect(rungs(5)).toMatchObject({ lit: ['FLUSH_DELAYED_ITEMS_NR', 'FLUSH_DELAYED_ITEMS', 'FLUSH_DELALLOC'], current: ['FLUSH_DELALLOC'], running: ['FLUSH_DELALLOC'] });
    const granted = rungs(8);
    expect(granted).toMatchObject({ walking: false, lit: ['FLUSH_DELAYED_ITEMS_NR', 'FLUSH_DELAYED_ITEMS', 'FLUSH_DELALLOC'], current: ['FLUSH_DELALLOC'], running: [] });
    const delalloc = granted.l.rungs.find((r) => r.state === 'FLUSH_DELALLOC')!;
    expect([delalloc.granted, delalloc.runs]).toEqual([1, 1]);
    // after a grant the next ticket's walk starts a new round
    expect(rungs(11)).toMatchObject({ walking: true, lit: ['FLUSH_DELAYED_ITEMS_NR'], current: ['FLUSH_DELAYED_ITEMS_NR'] });
    expect(rungs(11).l.rungs.find((r) => r.state === 'FLUSH_DELAYED_ITEMS_NR')!.runs).toBe(2);
    expect(rungs(11).l.rungs.map((r) => r.state)).toEqual(['FLUSH_DELAYED_ITEMS_NR', 'FLUSH_DELAYED_ITEMS', 'FLUSH_DELAYED_REFS_NR', 'FLUSH_DELAYED_REFS',
      'FLUSH_DELALLOC', 'FLUSH_DELALLOC_WAIT', 'FLUSH_DELALLOC_FULL', 'ALLOC_CHUNK', 'ALLOC_CHUNK_FORCE', 'RUN_DELAYED_IPUTS', 'COMMIT_TRANS']);
  });

  test('the last delalloc flush, fresh at its own moment', () => {
    expect(spaceFrame(step, 4).pass).toBeNull();
    expect(spaceFrame(step, 5).pass).toMatchObject({ seq: step.moments[5].seq, fresh: true });
    expect(spaceFrame(step, 6).pass).toMatchObject({ fresh: false });
  });

  test('jumps: the next moment of a kind, and the moment at an event', () => {
    expect(nextMoment(step, -1, ['ticket'])).toBe(2);
    expect(nextMoment(step, 2, ['ticket'])).toBe(10);
    expect(nextMoment(step, 10, ['ticket'])).toBe(-1);
    expect(nextMoment(step, -1, ['shrink'])).toBe(5);
    expect(momentAtSeq(step, 0)).toBe(-1);
    expect(momentAtSeq(step, step.moments[5].seq)).toBe(5);
    expect(momentAtSeq(step, step.moments[5].seq + 1)).toBe(5);
    expect(momentAtSeq(step, 1e9)).toBe(step.moments.length - 1);
  });
});
