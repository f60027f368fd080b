// Choose mode through the WASM core (lesson 4's scenario): the picks as
// schedule lines give the turns in that order, then the policy's; the same
// picks give the same run; the threads at the moment of a choice come from
// the run; a pick timed while A holds the fs leaf for read and waits for
// memory makes B's create queue for the leaf with log_copy=clone, and not
// with prealloc; a failed run is kept and says why; with log_copy=direct, an
// interleaving picked by schedule deadlocks and its cycle comes back; the
// delayed-meta worker of that scenario on the timeline and in the lock view.
import { beforeAll, describe, expect, test } from 'vitest';
import { LESSONS } from '../lessons';
import { blockKey, isMutex, lockFrame, locksAt } from '../model/locks';
import { withLogCopy } from '../model/logCopyModes';
import { blockSentence } from '../views/LockPanel';
import { chosenScript, openChoice, threadSections } from '../model/schedule';
import { CORE_ERRNO, CoreError } from './errors';
import { scheduleRun } from './scheduleRun';
import { loadCore, RUN, stepsOf } from './testCore';
import type { Core } from './wasm';

let core: Core;

beforeAll(async () => {
  core = await loadCore();
});

const lesson = LESSONS.find((l) => l.id === '04-leaf-locks')!;
const chosen = (script: string, picks: string[]) => chosenScript(openChoice(script, { section: 2, picks })!);
// C and D create, A creates, writes, sets an xattr and starts its fsync, C sleeps 500 µs and creates again (its turn waits for
// the sleep), then B creates: A is inside its fsync by then, the fs leaf read-locked while its clone's allocation stalls
const TIMED = ['C', 'D', 'A', 'A', 'A', 'A', 'C', 'C'];

describe("choose mode on lesson 4's scenario", () => {
  test('the turns: the picks in order, then the policy\'s, every command of the section once', () => {
    const picks = ['B', 'B', 'D', 'A', 'C', 'B', 'A', 'D', 'D'];
    const { text } = chosen(lesson.scenario, picks);
    expect(text).toContain('schedule B B D A C B A\nschedule D D\nthread A');
    const r = scheduleRun(core, text, RUN, 2, picks.length);
    expect(r.failed).toBe(null);
    expect(r.turns.slice(0, picks.length).map((t) => t.thread)).toEqual(picks);
    const sec = threadSections(text.split('\n'))[1];
    expect(r.turns.length).toBe(sec.threads.reduce((n, t) => n + t.commands.length, 0));
    for (const t of sec.threads) expect(r.turns.filter((x) => x.thread === t.name).map((x) => x.line)).toEqual(t.commands.map((c) => c.line));
    // the same picks, the same run
    expect(scheduleRun(core, text, RUN, 2, picks.length)).toEqual(r);
  });

  test('letting the policy finish: its turns as picks give the same interleaving', () => {
    const { text } = chosen(lesson.scenario, ['D', 'A']);
    const r = scheduleRun(core, text, RUN, 2, 2);
    const all = r.turns.map((t) => t.thread);
    const whole = chosen(lesson.scenario, all);
    const again = scheduleRun(core, whole.text, RUN, 2, all.length);
    expect(again.turns.map((t) => t.thread)).toEqual(all);
  });

  test('the threads at the moment: A inside its fsync, waiting for memory with the fs leaf read-locked; B not started', () => {
    const r = scheduleRun(core, chosen(lesson.scenario, TIMED).text, RUN, 2, TIMED.length);
    expect(r).toMatchObject({ at: 8, reached: true, failed: null, cycle: null });
    expect(r.atNs).toBeGreaterThan(500_000); // C's second create waited for its sleep
    const [a, b, c, d] = r.threads;
    expect(a.op?.text).toBe('fsync /d/a1');
    expect(a.wait?.cause).toBe('memory allocation');
    expect(a.holds).toContainEqual(expect.objectContaining({ tree: '5', level: 0, mode: 'read' }));
    expect(b).toMatchObject({ started: 0, op: null });
    expect(c.op?.text).toBe('create /d/c2');
    expect(d.started).toBe(1);
  });

  test("then B: its create queues for the directory's lock, held by C, whose create queues for the leaf A holds for read while A waits for memory (clone); not with prealloc", () => {
    const picks = [...TIMED, 'B'];
    const queued = (script: string) => {
      const { text } = chosen(script, picks);
      const runs = stepsOf(core, text);
      const first = threadSections(text.split('\n'))[1].first;
      const tl = runs.timeline(runs.steps.findIndex((s) => s.line === first));
      const name = new Map(tl.lanes.map((l) => [l.task, l.name]));
      const task = (n: string) => tl.lanes.find((l) => l.name === n)!.task;
      const create = tl.ops.find((o) => o.task === task('B') && o.text === 'create /d/b1')!;
      const memory = tl.waits.filter((w) => w.task === task('A') && w.cause === 'memory allocation');
      const locks = tl.locks!;
      const lockAt = (e: (typeof locks)[number], seq: number) => locksAt(locks, seq).get(blockKey(e.tree, e.bytenr, e.level))!;
      // a wait for a block A holds for read while it waits for memory
      const onStalledLeaf = (e: (typeof locks)[number]) =>
        lockAt(e, e.seq).readers.some((r) => name.get(r) === 'A' && memory.some((w) => w.start.seq < e.seq && (!w.end || w.end.seq > e.seq)));
      // the wait a task is in at seq (its last one before, not yet ended by taking that lock)
      const waitingAt = (t: number, seq: number) => {
        const w = locks.filter((x) => x.kind === 'wait' && x.task === t && x.seq < seq).at(-1);
        return w && !locks.some((x) => x.kind === 'acquire' && x.task === t && x.seq > w.seq && x.seq < seq && blockKey(x.tree, x.bytenr, x.level) === blockKey(w.tree, w.bytenr, w.level)) ? w : undefined;
      };
      return locks.filter((e) => e.kind === 'wait' && e.task === task('B') && e.seq > create.start.seq && (!create.end || e.seq < create.end.seq))
        .flatMap((e) => {
          if (onStalledLeaf(e)) return [{ lock: e, via: null as string | null, leaf: e }];
          const holder = lockAt(e, e.seq).writer;
          const w = holder === null ? undefined : waitingAt(holder, e.seq);
          return w && onStalledLeaf(w) ? [{ lock: e, via: name.get(holder!) ?? null, leaf: w }] : [];
        });
    };
    const clone = queued(lesson.scenario);
    expect(clone.length).toBe(1);
    // B waits for the inode lock of the directory (the VFS holds it through a create), which C holds while its own
    // create queues to insert (write), or to look its name up (read), at the leaf A holds
    expect(clone[0].lock).toMatchObject({ level: -2, tree: '5' });
    expect(clone[0].via).toBe('C');
    expect(clone[0].leaf).toMatchObject({ tree: '5', level: 0 });
    expect(['read', 'write']).toContain(clone[0].leaf.mode);
    expect(queued(withLogCopy(lesson.scenario, 'prealloc').text)).toEqual([]);
  });
});

describe('a run that fails is kept', () => {
  const SCRIPT = 'mkfs size=256M\nmkdir /d\ncommit\nthread A\ncreate /d/a\ncreate /nope/x\nend\nB: create /d/b\nB: sleep 1ms\n';

  test('its turns up to the error, and the error', () => {
    const { text } = chosenScript(openChoice(SCRIPT, { section: 1, picks: ['A', 'B', 'A'] })!);
    const r = scheduleRun(core, text, RUN, 1, 3);
    expect(r.failed).toMatchObject({ code: CORE_ERRNO.ENOENT, name: 'ENOENT' });
    expect(r.failed!.message).toMatch(/create: ENOENT/);
    expect(r.turns.slice(0, 3).map((t) => t.thread)).toEqual(['A', 'B', 'A']);
    expect(r.threads[0].op).toMatchObject({ text: 'create /nope/x', returnsNs: null }); // A never returns from it
    expect(r.cycle).toBe(null);
  });

  test('a run that fails before its filesystem is made: the error only; a section the script lacks: an error', () => {
    const r = scheduleRun(core, 'mkfs size=1K\nA: sleep 1ms\n', RUN, 1, 0);
    expect(r.failed?.code).toBeLessThan(0);
    expect(r.turns).toEqual([]);
    expect(() => scheduleRun(core, SCRIPT, RUN, 2, 0)).toThrow(CoreError);
  });
});

// tests/cli/time.test.mjs's direct-mode scenario: fsyncer A logs new files whole, B makes dirty files, C creates; the
// delayed-items worker flushes delayed nodes under their mutex with the inode's leaf write-locked
function directScript(mode: string): string {
  const l = ['mkfs nodesize=4K size=256M', 'set device=loop', 'set tree_locks=path', 'set memory_pressure=heavy', `set log_copy=${mode}`,
    'set seed=1', 'set delayed_background=4', 'mkdir /d', 'commit', 'thread A'];
  for (let k = 0; k < 6; k++) l.push(`create /d/a${k}`, `write /d/a${k} 0 4096 ${k + 1}`, `fsync /d/a${k}`);
  l.push('end', 'thread B');
  for (let k = 0; k < 10; k++) l.push(`create /d/b${k}`, `write /d/b${k} 0 4096 ${k + 1}`);
  l.push('end', 'thread C');
  for (let k = 0; k < 10; k++) l.push(`create /d/c${k}`);
  l.push('end');
  return l.join('\n') + '\n';
}
const DEADLOCK_ORDER = 'B C A C A A B C B C C C A A C A A A B A B B C A C C B B A B A A A B A A B B B'.split(' ');

describe('log_copy=direct: a picked interleaving deadlocks', () => {
  test("the run stops with EDEADLK, and the cycle: A waits for an inode's delayed node mutex the worker holds, the worker for the fs leaf A holds", () => {
    const { text } = chosenScript(openChoice(directScript('direct'), { section: 1, picks: DEADLOCK_ORDER })!);
    const r = scheduleRun(core, text, RUN, 1, DEADLOCK_ORDER.length);
    expect(r.failed).toMatchObject({ code: CORE_ERRNO.EDEADLK, name: 'EDEADLK' });
    expect(r.failed!.message).toMatch(/deadlock: A \(task \d+\) waits for the delayed node mutex of inode \d+, held by delayed-meta/);
    // the page's message names the tree: "leaf N of the fs tree", never the core's "tree 5"
    expect(r.failed!.message).toMatch(/delayed-meta \(task \d+\) waits to write-lock leaf \d+ of the fs tree, held by A/);
    expect(r.failed!.message).not.toMatch(/\btree \d/);
    const name = new Map(r.names);
    const c = r.cycle!;
    expect(c.closed).toBe(true);
    expect(c.tasks.map((t) => name.get(t))).toEqual(['A', 'delayed-meta']);
    expect(c.edges.map((e) => [name.get(e.task), e.level < 0 ? 'mutex' : `${e.mode} ${e.level}`, e.tree, name.get(e.holder)])).toEqual([
      ['A', 'mutex', expect.any(String), 'delayed-meta'], ['delayed-meta', 'write 0', '5', 'A'],
    ]);
    // A holds the leaf the worker waits for, as the run left it
    expect(r.reached).toBe(false);
    const a = r.threads.find((t) => t.name === 'A')!;
    expect(a.holds).toContainEqual(expect.objectContaining({ tree: '5', bytenr: c.edges[1].bytenr, mode: 'read' }));
    expect(a.op?.text).toMatch(/^fsync \/d\/a\d$/);
    expect(a.op?.returnsNs).toBe(null);
    // the same picks with the clone: no deadlock
    const clone = chosenScript(openChoice(directScript('clone'), { section: 1, picks: DEADLOCK_ORDER })!);
    expect(scheduleRun(core, clone.text, RUN, 1, DEADLOCK_ORDER.length)).toMatchObject({ failed: null, cycle: null, reached: true });
  });
});

describe('the delayed-meta worker in a timeline (the same scenario, log_copy=clone, the policy deciding)', () => {
  test('its lane among the kernel workers; the delayed node mutexes it takes drawn apart from the fs tree, told as mutexes', () => {
    const runs = stepsOf(core, directScript('clone'));
    const step = runs.steps.find((s) => s.kinds.has('task_new'))!;
    const tl = runs.timeline(step.index);
    const names = tl.lanes.map((l) => l.name);
    expect(names.slice(0, 6)).toEqual(['A', 'B', 'C', 'flusher', 'transaction kthread', 'delayed-meta']);
    for (const n of names.slice(6)) expect(n).toMatch(/^endio-write \d+$/);
    const worker = tl.lanes.find((l) => l.kind === 'delayed-meta')!.task;
    expect(tl.cpu.some((c) => c.task === worker)).toBe(true);
    const mutexes = tl.locks!.filter(isMutex);
    expect(mutexes.some((e) => e.task === worker && e.kind === 'acquire')).toBe(true);
    expect(mutexes.some((e) => e.level === -2 && e.kind === 'acquire')).toBe(true);
    for (const e of mutexes) {
      const f = lockFrame(tl.locks!, e.seq);
      expect(f.trees.flatMap((t) => t.levels).every((l) => l >= 0), 'no tree block at level -1').toBe(true);
      // (an inode's delayed node mutex, level -1, or its inode lock, level -2: the threads' creates take their directory's)
      const m = f.mutexes.find((n) => n.key === blockKey(e.tree, e.bytenr, e.level))!;
      expect([m.level, m.parent, m.current]).toEqual([e.level, null, true]);
      const what = e.level === -1 ? 'the delayed node mutex' : 'the inode lock';
      expect(blockSentence(m, String)).toMatch(new RegExp(`^${what} of inode ${e.bytenr}: (free|held by \\d+)`));
    }
    // the worker, holding an inode's mutex, write-locks that inode's leaf (__btrfs_commit_inode_delayed_items)
    const taken = mutexes.find((e) => e.task === worker && e.kind === 'acquire')!;
    expect(taken.level).toBe(-1);
    const next = tl.locks!.find((e) => e.seq > taken.seq && e.task === worker && !isMutex(e) && e.kind !== 'release')!;
    expect([next.tree, next.level, next.mode]).toEqual(['5', 0, 'write']);
    expect(locksAt(tl.locks!, next.seq).get(blockKey('5', taken.bytenr, -1))!.writer).toBe(worker);
  });
});
