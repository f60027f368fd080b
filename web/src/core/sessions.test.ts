// Stepping by checkpoint through WASM: a session's state at any step equals
// a run of the script up to that step (the reference the player used to
// run for every seek), a crash point equals the script cut there with
// `crash`, and a replay from it ends as that script's replay does: same
// trees, same image bytes, same replay events.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import createBtrfsCore from './generated/btrfslab-core.mjs';
import { Sessions } from './sessions';
import { Core } from './wasm';
import { groupSteps, scriptPrefix, treeSentence } from '../model/steps';
import { ghostsAt } from '../model/ghosts';
import { marksFor } from '../model/marks';
import { momentsOf, treeOf } from '../model/moments';
import { crashPoints, crashScript } from '../model/replay';

const wasmPath = fileURLToPath(new URL('./generated/btrfslab-core.wasm', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));
const RUN = { seed: 1n, now: 1700000000n, trace: true };
let core: Core;

beforeAll(async () => {
  core = Core.fromModule(await createBtrfsCore({ wasmBinary: readFileSync(wasmPath) }));
});

const scripts: [string, string][] = [
  ...readdirSync(`${root}lessons`).filter((d) => /^\d/.test(d)).map((d) => [`lessons/${d}`, readFileSync(`${root}lessons/${d}/scenario.txt`, 'utf8')] as [string, string]),
  ...readdirSync(`${root}tests/scenarios`).map((d) => [`tests/scenarios/${d}`, readFileSync(`${root}tests/scenarios/${d}/scenario.txt`, 'utf8')] as [string, string]),
];

describe('a timed section resumed from a checkpoint', () => {
  test('goes on from the checkpoint\'s instant: the jiffy grid and the commit interval as in a straight run', () => {
    // a checkpoint cloned the filesystem without its virtual clock: a section
    // after it started at 0, off the tick grid the straight run was on
    const fsyncer = (t: string) => [`thread ${t}`, ...[1, 2, 3].flatMap((k) => [`create /d/${t.toLowerCase()}${k}`, `write /d/${t.toLowerCase()}${k} 0 4096 ${k}`,
      `setxattr /d/${t.toLowerCase()}${k} user.x v`, `fsync /d/${t.toLowerCase()}${k}`]), 'end'];
    const creator = (t: string) => [`thread ${t}`, ...Array.from({ length: 12 }, (_, k) => [`create /d/${t.toLowerCase()}${k + 1}`, 'sleep 500us']).flat(), 'end'];
    const lines = ['mkfs nodesize=4K size=256M', 'set device=loop', 'set tree_locks=path', 'set memory_pressure=heavy', 'set log_copy=clone', 'mkdir /d', 'commit',
      'thread A', 'create /d/a0', 'write /d/a0 0 4096 1', 'setxattr /d/a0 user.x v', 'fsync /d/a0', 'end', 'commit',
      ...fsyncer('A'), ...fsyncer('B'), ...creator('C'), ...creator('D')];
    const script = lines.join('\n') + '\n';
    const ref = core.run(script, { ...RUN, trace: false, noFinalCommit: true });
    const want = JSON.stringify(core.dumpTrees(ref), (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    core.close(ref);
    for (const every of [1, 2, 3, 5]) {
      const h = core.session(script, RUN, every);
      try {
        const got = JSON.stringify(core.dumpTrees(core.seek(h, lines.length)), (_k, v) => (typeof v === 'bigint' ? String(v) : v));
        expect(got, `a checkpoint every ${every} units`).toBe(want);
      } finally {
        core.close(h);
      }
    }
  });
});

describe('a session steps as the script prefix runs', () => {
  test.each(scripts)('%s: every step, in a shuffled order', (_name, script) => {
    const h = core.session(script, RUN, 2); // a checkpoint every 2 units: seeks start from many of them
    try {
      const lines = script.split('\n');
      const steps = groupSteps(core.trace(h), lines);
      const order = steps.map((_, i) => i).sort((a, b) => ((a * 7919) % 13) - ((b * 7919) % 13) || a - b);
      for (const i of order) {
        const ref = core.run(scriptPrefix(lines, steps, i), { ...RUN, trace: false, noFinalCommit: true });
        try {
          const at = core.seek(h, steps[i].line);
          // threads followed by a crash return without their in-flight work drained (the power cut takes it):
          // no prefix of the script ends that way (it drains), but the device holds the same
          const cut = /^\s*crash\b/.test(lines[(steps[i + 1]?.line ?? 0) - 1] ?? '') && steps[i].kinds.has('task_new');
          if (!cut) expect(core.dumpTrees(at), `step ${i} (line ${steps[i].line})`).toEqual(core.dumpTrees(ref));
          if (cut || i % 4 === 0 || i === steps.length - 1) // whole images are slow to compare: every fourth step and the last
            expect(Buffer.from(core.imageBytes(at)).equals(Buffer.from(core.imageBytes(ref))), `image at step ${i}`).toBe(true);
        } finally {
          core.close(ref);
        }
      }
      const st = core.sessionStats(h);
      expect(st.checkpoints).toBeGreaterThan(0);
      expect(st.units).toBeGreaterThanOrEqual(steps.length - 1); // a unit per command at least (a brace range has one per name)
      expect(st.lines).toBe(core.metrics(h).lines);
    } finally {
      core.close(h);
    }
  }, 120_000);

  test('the session\'s end is the plain run: same trace, same image', () => {
    const script = readFileSync(`${root}lessons/01-cow-btree/scenario.txt`, 'utf8');
    const h = core.session(script, RUN);
    const r = core.run(script, RUN);
    try {
      expect(core.traceJson(h)).toBe(core.traceJson(r));
      expect(Buffer.from(core.imageBytes(h)).equals(Buffer.from(core.imageBytes(r)))).toBe(true);
      expect(core.metrics(h).events).toEqual(core.metrics(r).events);
    } finally {
      core.close(h);
      core.close(r);
    }
  });
});

describe('event by event: the state right after an event', () => {
  test("lesson 1: at each line's op event, the state after the line before; after the last command, the final commit's events refuse", () => {
    // lesson 1 ends with its own commit: a change after it gives the final commit work
    const script = `${readFileSync(`${root}lessons/01-cow-btree/scenario.txt`, 'utf8')}create /docs/late\n`;
    const h = core.session(script, RUN, 4);
    try {
      const events = core.trace(h);
      const { commandEvents } = core.sessionStats(h);
      expect(commandEvents).toBeGreaterThan(0);
      expect(commandEvents).toBeLessThan(events.length);
      let prevLine = 0;
      for (const e of events) {
        if (e.kind !== 'op') continue;
        expect(core.dumpAtEvent(h, e.seq, 5n, 24), `line ${e.line}`).toEqual(core.dumpTree(core.seek(h, prevLine), 5n, 24));
        prevLine = e.line;
      }
      expect(() => core.dumpAtEvent(h, events.length - 1, 5n)).toThrow(/not in a command of the script/);
    } finally {
      core.close(h);
    }
  });
});

describe('a crash point is a checkpoint plus a power cut', () => {
  const script = readFileSync(`${root}lessons/02-fsync-log-tree/scenario.txt`, 'utf8');
  const lines = script.replace(/\n*$/, '').split('\n').filter((l) => !/^\s*crash\s*$/.test(l));
  const base = lines.join('\n') + '\n';

  test('every crash point: the trees at the crash, the replay events and the image after replay', () => {
    const h = core.session(base, RUN, 3);
    try {
      const points = crashPoints(lines);
      expect(points.length).toBeGreaterThan(2);
      for (const at of points) {
        const ref = core.run(crashScript(lines, at), RUN);
        const n0 = Object.values(core.metrics(ref).events).reduce((a, b) => a + b, 0);
        const c = core.crash(h, at);
        try {
          expect(core.dumpTrees(c), `crash after line ${at}`).toEqual(core.dumpTrees(ref));
          core.replay(c);
          core.replay(ref);
          // the same replay steps (numbered from the crash point's own trace, which starts there)
          const noSeq = (j: string) => (JSON.parse(j) as { seq: number }[]).map(({ seq: _, ...e }) => e);
          expect(noSeq(core.traceJson(c))).toEqual(noSeq(core.traceJson(ref)).slice(n0));
          expect(Buffer.from(core.imageBytes(c)).equals(Buffer.from(core.imageBytes(ref))), `replayed image, crash after line ${at}`).toBe(true);
        } finally {
          core.close(c);
          core.close(ref);
        }
      }
    } finally {
      core.close(h);
    }
  }, 120_000);

  test('a replay stopped after some steps matches the script\'s', () => {
    const h = core.session(base, RUN);
    const at = crashPoints(lines).at(-1)!;
    try {
      for (const steps of [1, 3, 7]) {
        const c = core.crash(h, at);
        const ref = core.run(crashScript(lines, at), { ...RUN, trace: false });
        try {
          core.replay(c, steps);
          core.replay(ref, steps);
          expect(core.dumpTree(c, 5n, 24)).toEqual(core.dumpTree(ref, 5n, 24));
        } finally {
          core.close(c);
          core.close(ref);
        }
      }
    } finally {
      core.close(h);
    }
  });
});

describe('the worker\'s sessions', () => {
  test('one per script, the oldest closed past the limit, a seek handle borrowed', () => {
    const s = new Sessions(core, 2);
    const a = s.get('create /a\n', RUN);
    expect(s.get('create /a\n', RUN)).toBe(a);
    const b = s.get('create /b\n', RUN);
    const view = core.seek(b, 1);
    expect(core.dumpTrees(view).trees.length).toBeGreaterThan(3);
    s.get('create /a\n', RUN); // a is now the newest
    s.get('create /c\n', RUN); // b goes, and its seek handle with it
    expect(s.size).toBe(2);
    expect(() => core.metrics(b)).toThrow(/no open filesystem/);
    expect(() => core.dumpTrees(view)).toThrow(/no open filesystem/);
    expect(core.metrics(a).lines).toBe(1);
  });

  test('a seek past the end is the end before the final commit; a bad handle is an error', () => {
    const h = core.session('mkdir /d\ncreate /d/f{1..40}\n', RUN);
    try {
      const end = core.dumpTrees(core.seek(h, 99));
      const ref = core.run('mkdir /d\ncreate /d/f{1..40}\n', { ...RUN, noFinalCommit: true });
      expect(end).toEqual(core.dumpTrees(ref));
      core.close(ref);
      expect(() => core.seek(ref, 1)).toThrow(/no open filesystem/);
      const plain = core.run('mkdir /d\n', RUN);
      expect(() => core.seek(plain, 1)).toThrow(/not a scenario session/);
      core.close(plain);
    } finally {
      core.close(h);
    }
  });
});

describe("the worker's steps (runs.ts): the page gets steps without events, and each step's view", () => {
  const script = readFileSync(`${root}lessons/01-cow-btree/scenario.txt`, 'utf8');

  test('the steps are the trace grouped, without their events; each view is the model on the events', () => {
    const s = new Sessions(core, 2);
    const rs = s.steps(script, RUN);
    expect(s.steps(script, RUN)).toBe(rs); // grouped once per session
    const h = s.get(script, RUN);
    const all = groupSteps(core.trace(h), script.split('\n'), core.sessionStats(h).commandEvents);
    const sent = structuredClone(rs.infos); // what crosses to the page
    expect(sent.map((i) => Object.keys(i).includes('events'))).toEqual(all.map(() => false));
    expect(sent).toEqual(all.map(({ events, ...info }) => ({ ...info, eventCount: events.length })));
    for (const tree of [5n, 2n, 1n]) {
      for (const st of all) {
        const v = structuredClone(rs.view(st.index, tree, null));
        const moments = st.index > 0 ? momentsOf(st.events, tree, rs.commandEvents) : [];
        expect(v.sentence).toBe(treeSentence(st, tree));
        expect(v.moments).toBe(moments.length);
        expect(v.moment).toBeNull();
        expect(v.marks).toEqual(marksFor(st.events));
        expect(v.ghosts).toEqual(ghostsAt(all, st.index, tree));
        expect(Object.values(v.counts).reduce((a, b) => a + b, 0)).toBe(st.events.filter((e) => treeOf(e) === tree).length);
        for (const m of moments.length ? [0, moments.length - 1] : []) {
          const at = structuredClone(rs.view(st.index, tree, m));
          expect(at.moment).toEqual(moments[m]);
          expect(at.marks).toEqual(moments[m].marks);
          expect(at.ghosts).toEqual(ghostsAt(all, st.index, tree, moments[m].seq));
        }
        expect(rs.view(st.index, tree, moments.length).moment).toBeNull(); // past the last: the step's end
      }
    }
  });

  test('a step that is not in the run is an EINVAL error, not a crash', () => {
    const rs = new Sessions(core, 1).steps('create /a\n', RUN);
    expect(() => rs.view(rs.infos.length, 5n, null)).toThrow(/EINVAL: step \d+: the run has \d+ steps/);
    expect(() => rs.view(-1, 5n, null)).toThrow(/EINVAL/);
  });

  test('a step of thousands of inserts: what crosses to the page is small, its moments are counted there', () => {
    const big = 'mkfs nodesize=4K\nmkdir /d\ncreate /d/f_{1..3000}\n';
    const rs = new Sessions(core, 1).steps(big, RUN);
    const st = rs.infos.find((i) => i.line === 3)!;
    expect(st.eventCount).toBeGreaterThan(50_000);
    const v = rs.view(st.index, 5n, null);
    expect(v.moments).toBeGreaterThan(12_000); // 4 items a file, each after its search
    expect(JSON.stringify(rs.infos, (_k, x) => (typeof x === 'bigint' ? String(x) : x instanceof Set ? [...x] : x)).length).toBeLessThan(5_000);
    expect(v.ghosts.length).toBeLessThan(2_000);
  });
});
