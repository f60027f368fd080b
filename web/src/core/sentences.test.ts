// Names, not numbers: every lesson's scenario through the WASM core, and
// every sentence the page would show of it (each step's sentence in each
// tree it touches, each moment's, each event's, the timeline's, the
// relocation story's, each log replay action's at every crash point) holds
// no raw u64 objectid (a number of 2^63 or more: (u64)-8 is the reloc tree)
// and no UNKNOWN key type. A replay action names its files beside their
// inode numbers ("inode 257 (/a)"), and a deadlock's message its trees.
import { beforeAll, describe, expect, test } from 'vitest';
import { LESSONS } from '../lessons';
import { inodePaths } from '../model/files';
import { namedInMessage, treeName } from '../model/names';
import { crashPoints, replaySteps } from '../model/replay';
import { treeOf } from '../model/moments';
import type { TraceEvent } from '../model/trace';
import { relocSentence, relocSummary } from '../views/relocation.sentences';
import { replaySaid } from '../views/replay.sentences';
import { describeEvent } from '../views/sentences';
import { loadCore, RUN, stepsOf } from './testCore';
import type { Core } from './wasm';

let core: Core;
beforeAll(async () => {
  core = await loadCore();
});

const TREE_LOG = 0xfffffffffffffffan;
/** What a sentence must not hold: a number of 2^63 or more (19 digits from 9223372036854775808), or UNKNOWN. */
function rawNumbers(s: string): string[] {
  const bad = [...s.matchAll(/\d{19,}/g)].map((m) => m[0]).filter((n) => BigInt(n) >= 1n << 63n);
  return s.includes('UNKNOWN') ? [...bad, 'UNKNOWN'] : bad;
}

/** The crash after line, replayed as the page's replay view asks the worker (core/worker.ts's replayed). */
function replayAt(script: string, line: number) {
  const s = core.session(script, RUN);
  try {
    const h = core.crash(s, line);
    try {
      const fs = core.dumpTree(h, 5n), logs = core.dumpTree(h, TREE_LOG);
      const before = { ...fs, trees: fs.trees.map((t) => (t.id === TREE_LOG ? logs.trees.find((l) => l.name === t.name) ?? t : t)) };
      core.replay(h);
      return { before, steps: replaySteps(core.trace(h)), after: core.dumpTree(h, 5n) };
    } finally {
      core.close(h);
    }
  } finally {
    core.close(s);
  }
}

describe('every sentence of every lesson names its trees, keys and files', () => {
  for (const lesson of LESSONS) {
    test(`${lesson.id}: no raw u64 objectid, no UNKNOWN key type`, () => {
      const runs = stepsOf(core, lesson.scenario);
      const said = new Map<string, string>(); // offending sentence → where
      const check = (where: string, s: string) => {
        if (rawNumbers(s).length && !said.has(s)) said.set(s, where);
      };
      let count = 0;
      for (const step of runs.steps) {
        const where = `line ${step.line} (${step.command})`;
        const trees = new Set<bigint>([5n]);
        for (const e of step.events as TraceEvent[]) {
          const t = treeOf(e);
          if (t !== null) trees.add(t);
          check(where, describeEvent(e));
          count++;
        }
        for (const t of trees) {
          check(where, runs.view(step.index, t, null).sentence);
          check(where, treeName(t));
          for (const m of runs.momentsAt(step.index, t)) check(where, m.sentence);
        }
        for (const m of runs.timeline(step.index).moments) check(where, m.sentence);
        const reloc = runs.relocation(step.index);
        if (reloc.groups.length) {
          check(where, relocSummary(reloc));
          for (const m of reloc.moments) check(where, relocSentence(m, reloc));
        }
      }
      const lines = lesson.scenario.split('\n');
      for (const at of crashPoints(lines)) {
        const r = replayAt(lesson.scenario, at);
        const paths = inodePaths([r.before, r.after]);
        for (const s of r.steps) check(`replay after line ${at}`, replaySaid(s.action, paths));
      }
      expect(count).toBeGreaterThan(0);
      expect([...said].map(([s, where]) => `${where}: ${s} [${rawNumbers(s).join(', ')}]`)).toEqual([]);
    }, 600_000);
  }

  test("a replay action names the file beside its inode number: lesson 2's crash after its last line", () => {
    const lesson = LESSONS.find((l) => l.id === '02-fsync-log-tree')!;
    const points = crashPoints(lesson.scenario.split('\n'));
    const r = replayAt(lesson.scenario, points[points.length - 1]);
    const paths = inodePaths([r.before, r.after]);
    const said = r.steps.map((s) => replaySaid(s.action, paths));
    const inodes = said.filter((s) => /\binode \d+/.test(s));
    expect(inodes.length).toBeGreaterThan(0);
    // every inode a replay action names has its path beside it
    for (const s of inodes) for (const m of s.matchAll(/\b(?:inode|dir) (\d+)( \(\/[^)]*\))?/g)) expect(m[2], `${s}: inode ${m[1]} without its name`).toBeTruthy();
  });

  test("the core's deadlock message, as the page shows it, names the tree", () => {
    const core = 'deadlock: A (task 3) waits for the delayed node mutex of inode 259, held by delayed-meta; delayed-meta (task 7) waits to write-lock block 5255168 (level 0) of tree 5, held by A';
    expect(namedInMessage(core)).toBe('deadlock: A (task 3) waits for the delayed node mutex of inode 259, held by delayed-meta; delayed-meta (task 7) waits to write-lock leaf 5255168 of the fs tree, held by A');
    expect(namedInMessage('block 30408704 (level 1) of tree 18446744073709551608')).toBe('node (level 1) 30408704 of the reloc tree');
  });
});
