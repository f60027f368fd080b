// Lesson 7's scenario through the WASM core: each relocation's group chosen
// (one metadata group of several, by its start), reloc trees built (one per
// subvolume, a copy of its root over the same children), merged (the leaves
// that were in the group swapped, each pair traced in subtree mode, the rest
// shared), dropped and removed; the seed's picture at each phase; and the same scenario in the
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

describe("lesson 7's scenario: one metadata group of several relocated, twice, in a filesystem with two snapshots", () => {
  test('line 21 relocates a metadata group by its start: the one group chosen, relocated and removed, its phases in order', () => {
    const s = reloc(21);
    // 18087936: the scenario's fixed BYTENR, the start of the second 256K metadata group (the first is at 5 MiB)
    expect(s.groups.map((g) => [g.group, g.type, g.length, g.found === g.extents])).toEqual([['18087936', 'metadata', 262144, true]]);
    expect(s.groups[0].trees.sort()).toEqual(['256', '257', '5']);
    expect(of(s, 'removed').map((m) => m.group)).toEqual(['18087936']);
    const phases: string[] = [];
    for (let i = nextPhase(s, -1); i >= 0; i = nextPhase(s, i)) phases.push(`${phaseOf(s.moments[i])}`);
    expect(phases).toEqual(['chosen', 'build', 'merge', 'drop', 'removed']);
    // line 25's BYTENR, 18350080: the metadata group line 21 allocated for its copies
    expect(reloc(25).groups.map((g) => [g.group, g.type, g.length])).toEqual([['18350080', 'metadata', 262144]]);
  });

  test('each reloc tree is a copy of its subvolume root; merge swaps only the leaves that were in the group, the rest stay shared', () => {
    const s = reloc(21);
    const roots = of(s, 'relocRoot');
    expect(roots).toHaveLength(3);
    for (const r of roots) {
      expect(r.level).toBe(1);
      expect(r.children.length).toBe(57);
      const swaps = of(s, 'swap').filter((m) => m.tree === r.tree);
      expect(swaps.length).toBeGreaterThan(0);
      expect(swaps.length).toBeLessThan(r.children.length / 5);
      expect(swaps.every((m) => r.children.includes(m.old))).toBe(true);
      expect(swaps.every((m) => m.traced)).toBe(true);
      expect(of(s, 'mergeRoot').filter((m) => m.tree === r.tree)).toHaveLength(1);
    }
    // the text's figures: 5, 4 and 5 swaps (14), 16 dirty extents at the relocation's commit (subtree), 6 in deferred mode (line 25, 11 swaps)
    expect(roots.map((r) => [r.tree, of(s, 'swap').filter((m) => m.tree === r.tree).length])).toEqual([['5', 5], ['256', 4], ['257', 5]]);
    expect(s.dirty[0]).toBe(16);
    expect(s.groups[0].found).toBe(15);
    expect(reloc(25).dirtyTotal).toBe(6);
    expect(of(reloc(25), 'swap')).toHaveLength(11);
    expect(reloc(25).groups[0].found).toBe(14);
    expect(of(reloc(25), 'swap').some((m) => m.traced)).toBe(false);
  });

  test("the seed's picture, phase by phase: the reloc tree copies the group's leaves and shares the others, merge swaps the copies, the reloc tree is dropped", () => {
    const s = reloc(21);
    const [{ group, tree }] = pictureTrees(s).filter((t) => t.tree === '5');
    const at = (kind: RelocMoment['kind']) => s.moments.findIndex((m) => m.group === group && m.kind === kind && (!('tree' in m) || m.tree === tree));
    const built = relocPicture(s, group, tree, at('relocRoot'))!;
    expect(built.slots.every((x) => x.file === x.old && !x.swapped)).toBe(true);
    const beforeMerge = relocPicture(s, group, tree, at('mergeRoot') - 1)!;
    const copied = beforeMerge.slots.filter((x) => x.copy !== null), shared = beforeMerge.slots.filter((x) => x.copy === null);
    expect([copied.length, shared.length]).toEqual([5, 52]);
    expect(copied.every((x) => x.reloc === x.copy && x.file === x.old)).toBe(true);
    // shared: both trees point at the same old block, outside the group
    expect(shared.every((x) => x.file === x.old && x.reloc === x.old && !x.traced)).toBe(true);
    expect(shared.every((x) => Number(x.old) < 18087936 || Number(x.old) >= 18087936 + 262144)).toBe(true);
    expect(copied.every((x) => Number(x.old) >= 18087936 && Number(x.old) < 18087936 + 262144)).toBe(true);
    const merged = relocPicture(s, group, tree, s.moments.findIndex((m) => m.kind === 'drop') - 1)!;
    expect(merged.fileRootCopy).not.toBeNull();
    expect(merged.slots.filter((x) => x.swapped).every((x) => x.file === x.copy && x.reloc === x.old)).toBe(true);
    expect(merged.slots.filter((x) => x.swapped)).toHaveLength(5);
    expect(merged.slots.filter((x) => !x.swapped).every((x) => x.file === x.old && x.reloc === x.old)).toBe(true);
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
    expect(out.map((r) => r.balanceDirty)).toEqual([161, 30, 12]);
    expect(out.map((r) => r.relocated)).toEqual([29, 29, 29]);
  });

  test('scriptInMode sets every qgroup_swap line, or adds one before the first balance', () => {
    expect(scriptInMode('set qgroup_swap=subtree\nbalance -m\nset qgroup_swap=deferred\nbalance -m', 'full')).toBe('set qgroup_swap=full\nbalance -m\nset qgroup_swap=full\nbalance -m');
    expect(scriptInMode('commit\nbalance -m', 'subtree')).toBe('commit\nset qgroup_swap=subtree\nbalance -m');
  });
});
