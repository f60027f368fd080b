// Lesson 7's scenario through the WASM core: each balance's groups chosen,
// reloc trees built (one per subvolume, a copy of its root over the same
// children), merged (every swapped pair the subtree mode traced), dropped and
// removed; the seed's picture at each phase; and the same scenario in the
// three qgroup_swap modes: dirty extents full > subtree > deferred, the same
// relocated extents and the same qgroups.
import { beforeAll, describe, expect, test } from 'vitest';
import { LESSONS } from '../lessons';
import { nextPhase, phaseOf, pictureTrees, readModeRun, relocPicture, sameQgroups, scriptInMode, SWAP_MODES, type RelocMoment, type RelocStep } from '../model/relocation';
import type { RunSteps } from './runs';
import { loadCore, RUN, stepsOf } from './testCore';
import type { Core } from './wasm';

let core: Core;
let runs: RunSteps;
const lesson = LESSONS.find((l) => l.id === '07-relocation')!;
const stepAt = (line: number) => runs.steps.find((s) => s.line === line && !s.final)!;
const reloc = (line: number): RelocStep => runs.relocation(stepAt(line).index);
const of = <K extends RelocMoment['kind']>(s: RelocStep, kind: K) => s.moments.filter((m): m is Extract<RelocMoment, { kind: K }> => m.kind === kind);

beforeAll(async () => {
  core = await loadCore();
  runs = stepsOf(core, lesson.scenario);
});

describe("lesson 7's scenario: two metadata balances of a filesystem with two snapshots", () => {
  test('line 18: the metadata group then the system group, each chosen, relocated and removed', () => {
    const s = reloc(18);
    expect(s.groups.map((g) => [g.type, g.found === g.extents])).toEqual([['metadata', true], ['system', true]]);
    expect(s.groups[0].trees.sort()).toEqual(['256', '257', '5']);
    expect(of(s, 'removed').map((m) => m.group)).toEqual(s.groups.map((g) => g.group));
    // the phases come in order for each group
    const phases: string[] = [];
    for (let i = nextPhase(s, -1); i >= 0; i = nextPhase(s, i)) phases.push(`${s.moments[i].group}:${phaseOf(s.moments[i])}`);
    const [m, sys] = s.groups.map((g) => g.group);
    expect(phases).toEqual([`${m}:chosen`, `${m}:build`, `${m}:merge`, `${m}:drop`, `${m}:removed`, `${sys}:chosen`, `${sys}:build`, `${sys}:drop`, `${sys}:removed`]);
  });

  test('each reloc tree is a copy of its subvolume root over the same children; merge swaps every one of them, each pair traced in subtree mode', () => {
    const s = reloc(18);
    const roots = of(s, 'relocRoot');
    expect(roots).toHaveLength(3);
    for (const r of roots) {
      expect(r.level).toBe(1);
      expect(r.children.length).toBeGreaterThan(20);
      const swaps = of(s, 'swap').filter((m) => m.tree === r.tree);
      expect(swaps.map((m) => m.old).sort()).toEqual([...r.children].sort());
      expect(swaps.every((m) => m.traced)).toBe(true);
      expect(of(s, 'mergeRoot').filter((m) => m.tree === r.tree)).toHaveLength(1);
    }
    // the text's figures: 30 swaps a subvolume, 76 dirty extents at the balance's commit (subtree), 6 in deferred mode
    expect(roots.map((r) => of(s, 'swap').filter((m) => m.tree === r.tree).length)).toEqual([30, 30, 30]);
    expect(s.dirty[0]).toBe(76);
    expect(reloc(21).dirtyTotal).toBe(6);
    // deferred (line 21): nothing traced at the swap
    expect(of(reloc(21), 'swap').length).toBeGreaterThan(0);
    expect(of(reloc(21), 'swap').some((m) => m.traced)).toBe(false);
  });

  test("the seed's picture, phase by phase: old blocks, then the reloc tree's copies, then the swap, then the reloc tree dropped", () => {
    const s = reloc(18);
    const [{ group, tree }] = pictureTrees(s).filter((t) => t.tree === '5');
    const at = (kind: RelocMoment['kind']) => s.moments.findIndex((m) => m.group === group && m.kind === kind && (!('tree' in m) || m.tree === tree));
    const built = relocPicture(s, group, tree, at('relocRoot'))!;
    expect(built.slots.every((x) => x.file === x.old && !x.swapped)).toBe(true);
    const beforeMerge = relocPicture(s, group, tree, at('mergeRoot') - 1)!;
    expect(beforeMerge.slots.every((x) => x.copy !== null && x.reloc === x.copy && x.file === x.old)).toBe(true);
    const merged = relocPicture(s, group, tree, s.moments.findIndex((m) => m.kind === 'drop') - 1)!;
    expect(merged.fileRootCopy).not.toBeNull();
    expect(merged.slots.every((x) => x.swapped && x.file === x.copy && x.reloc === x.old)).toBe(true);
    const end = relocPicture(s, group, tree, null)!;
    expect(end.dropped).toBe(true);
    expect(end.slots.every((x) => x.reloc === null)).toBe(true);
  });

  test('the same scenario in the three modes: dirty extents full > subtree > deferred, the same relocated extents and qgroups', () => {
    const out = SWAP_MODES.map((mode) => {
      const h = core.run(scriptInMode(lesson.scenario, mode), RUN);
      try {
        return readModeRun(mode, core.trace(h), core.metrics(h).relocated!.extents);
      } finally {
        core.close(h);
      }
    });
    const [full, subtree, deferred] = out;
    expect(full.balanceDirty).toBeGreaterThan(subtree.balanceDirty);
    expect(subtree.balanceDirty).toBeGreaterThan(deferred.balanceDirty);
    expect(new Set(out.map((r) => r.relocated)).size).toBe(1);
    expect(sameQgroups(out)).toBe(true);
    expect(Object.keys(full.qgroups).sort()).toEqual(['0/256', '0/257', '0/5']);
    expect(subtree.traceSwaps).toBeGreaterThan(0);
    expect(full.traceSwaps).toBe(0);
    // the figures the text quotes
    expect(out.map((r) => r.balanceDirty)).toEqual([168, 152, 12]);
  });

  test('scriptInMode sets every qgroup_swap line, or adds one before the first balance', () => {
    expect(scriptInMode('set qgroup_swap=subtree\nbalance -m\nset qgroup_swap=deferred\nbalance -m', 'full')).toBe('set qgroup_swap=full\nbalance -m\nset qgroup_swap=full\nbalance -m');
    expect(scriptInMode('commit\nbalance -m', 'subtree')).toBe('commit\nset qgroup_swap=subtree\nbalance -m');
  });
});
