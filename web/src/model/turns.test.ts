// A section's run seen at the moment of a choice (choose mode), from a
// synthetic trace: the turns it made, and each thread then: inside which
// command, waiting for what (a tree lock: which block, who holds it), the
// locks it holds, when its command returns; the section's start; a turn the
// run never reached.
import { describe, expect, test } from 'vitest';
import { threadSections } from './schedule';
import type { TraceEvent } from './trace';
import { turnsAt } from './turns';

const SCRIPT = `mkfs size=256M
mkdir /d
thread A
create /d/a
fsync /d/a
end
B: create /d/b
C: sleep 1ms
`;
const sec = threadSections(SCRIPT.split('\n'))[0];

const T0 = 1_000_000n;
const at = (ns: number) => T0 + BigInt(ns);
let seq = 100;
const ev = (e: Record<string, unknown>) => ({ seq: seq++, ...e }) as TraceEvent;
const op = (task: number, line: number, o: string, ns: number) => ev({ kind: 'task_op', task, line, op: o, ino: 0n, offset: 0n, length: 0n, atNs: at(ns) });
const end = (task: number, line: number, o: string, ns: number) => ev({ kind: 'task_op_end', task, line, op: o, ino: 0n, durNs: 0n, atNs: at(ns) });
const lock = (kind: string, task: number, mode: string, ns: number) => ev({ kind, tree: 5n, bytenr: 30539776n, level: 0, task, mode, ...(kind === 'lock_wait' ? { holder: 0 } : kind === 'lock_acquire' ? { waitNs: 0n } : {}), atNs: at(ns) });
const wait = (kind: string, task: number, cause: string, object: bigint, ns: number) => ev({ kind, task, cause, object, ...(kind === 'task_wake' ? { waitNs: 0n } : {}), atNs: at(ns) });

// A creates (write-locks the leaf, then stalls for memory); B's create queues for the leaf; C sleeps; A's fsync comes after
const EVENTS: TraceEvent[] = [
  ev({ kind: 'op', line: 3 }),
  ev({ kind: 'task_new', task: 0, taskKind: 'thread', index: 0, atNs: T0 }),
  ev({ kind: 'task_new', task: 1, taskKind: 'thread', index: 1, atNs: T0 }),
  ev({ kind: 'task_new', task: 2, taskKind: 'thread', index: 2, atNs: T0 }),
  ev({ kind: 'task_new', task: 3, taskKind: 'transaction', index: 0, atNs: T0 }),
  op(0, 4, 'namespace', 0), //                        turn 1: A's create
  wait('task_wait', 1, 'schedule', 0n, 0),
  wait('task_wait', 2, 'schedule', 0n, 0),
  lock('lock_acquire', 0, 'write', 100),
  wait('task_wake', 1, 'schedule', 0n, 150),
  op(1, 7, 'namespace', 200), //                      turn 2: B's create
  lock('lock_wait', 1, 'write', 300),
  wait('task_wait', 1, 'tree lock', 5n, 300),
  wait('task_wait', 0, 'memory allocation', 4096n, 400),
  wait('task_wake', 2, 'schedule', 0n, 450),
  op(2, 8, 'sleep', 500), //                          turn 3: C's sleep
  wait('task_wait', 2, 'sleep', 1_000_000n, 500),
  wait('task_wake', 0, 'memory allocation', 4096n, 2400),
  lock('lock_release', 0, 'write', 2500),
  lock('lock_acquire', 1, 'write', 2500),
  wait('task_wake', 1, 'tree lock', 5n, 2500),
  end(0, 4, 'namespace', 2600),
  op(0, 5, 'fsync', 2600), //                         turn 4: A's fsync
  end(1, 7, 'namespace', 3000),
  end(0, 5, 'fsync', 9000),
  wait('task_wake', 2, 'sleep', 1_000_000n, 1_000_500),
  end(2, 8, 'sleep', 1_000_500),
];

describe('a section at the moment of a choice', () => {
  test('every turn the run made, in order, with its time from the section\'s start', () => {
    const v = turnsAt(EVENTS, sec, 0);
    expect(v.turns).toEqual([
      { thread: 'A', line: 4, atNs: 0 }, { thread: 'B', line: 7, atNs: 200 }, { thread: 'C', line: 8, atNs: 500 }, { thread: 'A', line: 5, atNs: 2600 },
    ]);
    expect(new Map(v.names).get(3)).toBe('transaction kthread');
  });

  test("the section's start: nobody has started", () => {
    const v = turnsAt(EVENTS, sec, 0);
    expect(v).toMatchObject({ at: 0, reached: true, atNs: 0 });
    expect(v.threads.map((t) => [t.name, t.started, t.op, t.done])).toEqual([['A', 0, null, false], ['B', 0, null, false], ['C', 0, null, false]]);
  });

  test('after three turns: A inside its create waiting for memory, holding the leaf; B queued for it; C just started', () => {
    const v = turnsAt(EVENTS, sec, 3);
    expect(v).toMatchObject({ at: 3, reached: true, atNs: 500 });
    const [a, b, c] = v.threads;
    expect(a).toEqual({
      name: 'A', started: 1, done: false,
      op: { line: 4, text: 'create /d/a', sinceNs: 0, returnsNs: 2600 },
      wait: { cause: 'memory allocation', object: '4096', sinceNs: 400 },
      holds: [{ tree: '5', bytenr: '30539776', level: 0, mode: 'write' }],
    });
    expect(b.op).toEqual({ line: 7, text: 'create /d/b', sinceNs: 200, returnsNs: 3000 });
    expect(b.wait).toEqual({ cause: 'tree lock', object: '5', sinceNs: 300, lock: { tree: '5', bytenr: '30539776', level: 0, mode: 'write', holders: ['A'] } });
    expect(b.holds).toEqual([]);
    expect(c).toMatchObject({ started: 1, op: { text: 'sleep 1ms', returnsNs: 1_000_500 }, wait: null });
  });

  test("after four turns: A inside its fsync, B holding the leaf; a turn never reached: the run's end, every thread done", () => {
    const v = turnsAt(EVENTS, sec, 4);
    expect(v.threads[0]).toMatchObject({ started: 2, op: { text: 'fsync /d/a', returnsNs: 9000 }, holds: [] });
    expect(v.threads[1]).toMatchObject({ wait: null, holds: [{ bytenr: '30539776', mode: 'write' }] });
    const past = turnsAt(EVENTS, sec, 5);
    expect(past).toMatchObject({ at: 5, reached: false, atNs: 1_000_500 });
    expect(past.threads.map((t) => t.done)).toEqual([true, true, true]);
  });

  test('a run that stops inside a command: it never returns', () => {
    const cut = EVENTS.slice(0, EVENTS.findIndex((e) => e.kind === 'task_op_end'));
    const v = turnsAt(cut, sec, 3);
    expect(v.threads.map((t) => t.op?.returnsNs)).toEqual([null, null, null]);
  });
});

describe('a delayed node mutex (level -1, the inode as its bytenr)', () => {
  // A takes inode 300's delayed node mutex (flushing its delayed items) and stalls for memory; B waits for the mutex; C starts its sleep
  const mutex = (kind: string, task: number, ns: number) => ev({ kind, tree: 5n, bytenr: 300n, level: -1, task, mode: 'write', ...(kind === 'lock_wait' ? { holder: 0 } : kind === 'lock_acquire' ? { waitNs: 0n } : {}), atNs: at(ns) });
  const events: TraceEvent[] = [
    ev({ kind: 'op', line: 3 }),
    ev({ kind: 'task_new', task: 0, taskKind: 'thread', index: 0, atNs: T0 }),
    ev({ kind: 'task_new', task: 1, taskKind: 'thread', index: 1, atNs: T0 }),
    ev({ kind: 'task_new', task: 2, taskKind: 'thread', index: 2, atNs: T0 }),
    ev({ kind: 'task_new', task: 4, taskKind: 'delayed-meta', index: 0, atNs: T0 }),
    op(0, 4, 'namespace', 0),
    mutex('lock_acquire', 0, 100),
    wait('task_wait', 0, 'memory allocation', 4096n, 150),
    op(1, 7, 'namespace', 200),
    mutex('lock_wait', 1, 300),
    wait('task_wait', 1, 'delayed node mutex', 300n, 300),
    op(2, 8, 'sleep', 400),
    wait('task_wake', 0, 'memory allocation', 4096n, 900),
    mutex('lock_release', 0, 1000),
    mutex('lock_acquire', 1, 1000),
    wait('task_wake', 1, 'delayed node mutex', 300n, 1000),
    end(0, 4, 'namespace', 1100),
    mutex('lock_release', 1, 1200),
    end(1, 7, 'namespace', 1300),
    end(2, 8, 'sleep', 1400),
  ];

  test('held and waited for as a lock, with who holds it; the worker named as the core names it', () => {
    const v = turnsAt(events, sec, 3);
    const [a, b] = v.threads;
    expect(a.holds).toEqual([{ tree: '5', bytenr: '300', level: -1, mode: 'write' }]);
    expect(b.wait).toEqual({ cause: 'delayed node mutex', object: '300', sinceNs: 300, lock: { tree: '5', bytenr: '300', level: -1, mode: 'write', holders: ['A'] } });
    expect(new Map(v.names).get(4)).toBe('delayed-meta');
  });
});
