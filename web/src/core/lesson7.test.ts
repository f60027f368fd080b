// Lesson 7's scenario through the WASM core: each relocation's group chosen
// (one metadata group of several, by its start), reloc trees built (one per
// subvolume, a copy of its level-2 root over the same level-1 nodes), merged
// (the level-1 nodes swapped, below each the copied leaves and the leaves
// the old node and the new share, each pair traced in subtree mode), dropped
// and removed; the seed's three-level picture at each phase; and the same
// scenario in the three qgroup_swap modes: dirty extents full > subtree >
// deferred, full tracing the shared leaves below the swaps that subtree skips,
// the same relocated extents and the same qgroups.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { LESSONS } from '../lessons';
import { nextPhase, phaseOf, pictureTrees, readModeRun, relocPicture, sameQgroups, scriptInMode, sharedBelow, SWAP_MODES, tracedBlocks, walkedBelow, type RelocMoment, type RelocStep } from '../model/relocation';
import { fullWalksByLine, keepFullWalks, relocationStory } from './relocFull';
import type { RunSteps } from './runs';
import { loadCore, RUN, stepsOf } from './testCore';
import type { Core } from './wasm';

let core: Core;
let runs: RunSteps;
const lesson = LESSONS.find((l) => l.id === '07-relocation')!;
const stepAt = (line: number) => runs.steps.find((s) => s.line === line && !s.final)!;
// as the worker answers: full mode's walks from the scenario run in full mode
const reloc = (line: number): RelocStep => relocationStory(core, runs, lesson.scenario, RUN, stepAt(line).index);
const of = <K extends RelocMoment['kind']>(s: RelocStep, kind: K) => s.moments.filter((m): m is Extract<RelocMoment, { kind: K }> => m.kind === kind);
// the group line 21 relocates: 256K at 18612224, the fourth metadata group
const G = 18612224, GLEN = 262144;
const inGroup = (b: string) => Number(b) >= G && Number(b) < G + GLEN;

beforeAll(async () => {
  core = await loadCore();
  runs = stepsOf(core, lesson.scenario);
});

describe("lesson 7's scenario: one metadata group of several relocated, twice, in a filesystem with two snapshots", () => {
  test('line 21 relocates a metadata group by its start: the one group chosen, relocated and removed, its phases in order', () => {
    const s = reloc(21);
    expect(s.groups.map((g) => [g.group, g.type, g.length, g.found === g.extents - 1])).toEqual([[String(G), 'metadata', GLEN, true]]);
    expect(s.groups[0].trees.sort()).toEqual(['256', '257', '5']);
    expect(of(s, 'removed').map((m) => m.group)).toEqual([String(G)]);
    const phases: string[] = [];
    for (let i = nextPhase(s, -1); i >= 0; i = nextPhase(s, i)) phases.push(`${phaseOf(s.moments[i])}`);
    expect(phases).toEqual(['chosen', 'build', 'merge', 'drop', 'removed']);
    // line 25's BYTENR, 18874368: the metadata group line 21 allocated for its copies
    expect(reloc(25).groups.map((g) => [g.group, g.type, g.length])).toEqual([['18874368', 'metadata', GLEN]]);
  });

  test('three levels: each reloc tree is a copy of a level-2 root; merge swaps level-1 nodes, each pair traced with the new leaves below it', () => {
    const s = reloc(21);
    const roots = of(s, 'relocRoot');
    expect(roots).toHaveLength(3);
    for (const r of roots) {
      expect(r.level).toBe(2);
      expect(r.children).toHaveLength(2);
      const swaps = of(s, 'swap').filter((m) => m.tree === r.tree);
      expect(swaps.length).toBeGreaterThan(0);
      expect(swaps.every((m) => m.level === 1 && r.children.includes(m.old) && m.traced)).toBe(true);
      expect(of(s, 'mergeRoot').filter((m) => m.tree === r.tree)).toHaveLength(1);
    }
    // subtree mode traces, per swap, the new node and the old, and below them each copied leaf and the leaf it replaced
    for (const sw of of(s, 'swap')) {
      const node = s.copies.find((c) => c.to === sw.new)!;
      const copiedBelow = node.children.filter((c) => s.copies.some((x) => x.from === c));
      const pairs = s.tracedPairs.filter((t) => t.level === 0 && node.children.includes(t.old));
      expect(new Set(pairs.map((t) => t.old))).toEqual(new Set(copiedBelow));
    }
    // the commit counts each traced block once, and each subvolume's root and merge's copy of it: 2 × pairs + 2 × subvolumes
    const pairs = new Set(s.tracedPairs.map((t) => `${t.old}>${t.new}`));
    expect(s.dirty[0]).toBe(2 * pairs.size + 2 * roots.length);
    // the text's figures: 2 swaps in each subvolume, 10 pairs, 26 dirty extents (subtree), 20 extents found; line 25 (deferred): 6 swaps, none traced, 6
    expect(roots.map((r) => [r.tree, of(s, 'swap').filter((m) => m.tree === r.tree).length])).toEqual([['5', 2], ['256', 2], ['257', 2]]);
    expect([pairs.size, s.dirty[0], s.groups[0].found]).toEqual([10, 26, 20]);
    expect(reloc(25).dirtyTotal).toBe(6);
    expect(of(reloc(25), 'swap')).toHaveLength(6);
    expect(reloc(25).groups[0].found).toBe(15);
    expect(of(reloc(25), 'swap').some((m) => m.traced)).toBe(false);
  });

  test("the seed's picture, phase by phase: the reloc tree copies the level-1 nodes and the group's leaves, shares the other leaves below them, merge swaps the nodes", () => {
    const s = reloc(21);
    const [{ group, tree }] = pictureTrees(s).filter((t) => t.tree === '5');
    const at = (kind: RelocMoment['kind']) => s.moments.findIndex((m) => m.group === group && m.kind === kind && (!('tree' in m) || m.tree === tree));
    const built = relocPicture(s, group, tree, at('relocRoot'))!;
    expect(built.level).toBe(2);
    expect(built.slots.every((x) => x.file === x.old && !x.swapped)).toBe(true);
    const beforeMerge = relocPicture(s, group, tree, at('mergeRoot') - 1)!;
    // both level-1 nodes copied (the first one is in the group; the second on the path to the group's leaves below it)
    expect(beforeMerge.slots.map((x) => [x.copy !== null, x.file === x.old, x.reloc === x.copy])).toEqual([[true, true, true], [true, true, true]]);
    expect(beforeMerge.slots.map((x) => inGroup(x.old))).toEqual([true, false]);
    const below = beforeMerge.slots.flatMap((x) => x.children!);
    // 181 leaves: 4 in the group, copied (the seed's (g)); 177 shared by the old node and the new ((d), (e), (f))
    expect(beforeMerge.slots.map((x) => x.children!.length)).toEqual([84, 97]);
    expect(below.filter((c) => c.copy !== null).map((c) => inGroup(c.old))).toEqual([true, true, true, true]);
    expect(below.filter((c) => c.copy === null).every((c) => !inGroup(c.old))).toBe(true);
    expect(below.filter((c) => c.copy === null)).toHaveLength(177);
    const merged = relocPicture(s, group, tree, s.moments.findIndex((m) => m.kind === 'drop') - 1)!;
    expect(merged.fileRootCopy).not.toBeNull();
    expect(merged.slots.every((x) => x.swapped && x.file === x.copy && x.reloc === x.old && x.traced)).toBe(true);
    expect(merged.slots.flatMap((x) => x.children!).every((c) => c.traced === (c.copy !== null))).toBe(true);
    // full traces both subtrees the core walked at each swap (qgroup_trace_subtree, from the run in full mode: the old node's, then the new one's,
    // each the node and every leaf below it), the shared leaves once; subtree only the pairs
    expect(s.fullWalks.map((w) => w.walks.map((x) => x.bytenr))).toEqual(of(s, 'swap').map((m) => [m.old, m.new]));
    expect(merged.slots.map((x) => x.walks.map((w) => w.blocks))).toEqual(merged.slots.map((x) => [1 + x.children!.length, 1 + x.children!.length]));
    expect(walkedBelow(merged)).toEqual({ walks: 4, blocks: 2 * (85 + 98), extents: 2 * (2 + 1), added: 87 + 99 });
    expect(sharedBelow(merged)).toBe(177);
    expect(tracedBlocks(merged, 'subtree').size).toBe(2 * 2 + 2 * 4);
    expect(tracedBlocks(merged, 'full').size).toBe(tracedBlocks(merged, 'subtree').size + 177);
    expect(tracedBlocks(merged, 'deferred').size).toBe(0);
    const end = relocPicture(s, group, tree, null)!;
    expect(end.dropped).toBe(true);
    expect(end.slots.every((x) => x.reloc === null)).toBe(true);
  });

  test('the same scenario in the three modes: dirty extents full > subtree > deferred, full counting the shared leaves subtree skips; the same relocated extents and qgroups', () => {
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
    // line 21's group: full traces at least the shared leaves below the swapped nodes more than subtree
    const s = reloc(21);
    const shared = new Set(pictureTrees(s).flatMap((t) => relocPicture(s, t.group, t.tree, null)!.slots.flatMap((x) => (x.children ?? []).filter((c) => c.copy === null).map((c) => c.old))));
    expect(shared.size).toBe(181);
    expect(full.groups[0].group).toBe(String(G));
    expect(full.groups[0].dirty - subtree.groups[0].dirty).toBeGreaterThanOrEqual(shared.size);
    expect(subtree.groups[0].dirty).toBe(s.dirtyTotal);
    // the figures the text quotes
    expect(out.map((r) => r.groups.map((g) => g.dirty))).toEqual([[215, 214], [26, 24], [6, 6]]);
    expect(out.map((r) => r.balanceDirty)).toEqual([429, 50, 12]);
    expect(out.map((r) => r.relocated)).toEqual([35, 35, 35]);
  });

  test("full mode's walks through WASM are the native CLI's (qgroup_trace_subtree, each field), and so is the image", () => {
    const dir = mkdtempSync(join(tmpdir(), 'btrfslab-l7-'));
    try {
      const script = scriptInMode(lesson.scenario, 'full');
      const h = core.run(script, RUN);
      const ours = core.trace(h).flatMap((e) => (e.kind === 'qgroup_trace_subtree' ? [[String(e.bytenr), e.level, e.blocks, e.extents, e.added].join(' ')] : []));
      const image = core.imageBytes(h);
      core.close(h);
      writeFileSync(join(dir, 's.txt'), script);
      execFileSync(fileURLToPath(new URL('../../../wasm-core/build/btrfslab', import.meta.url)),
        ['run', join(dir, 's.txt'), '--image', join(dir, 's.img'), '--trace', join(dir, 's.jsonl'), '--seed', String(RUN.seed), '--time', String(RUN.now)]);
      const theirs = readFileSync(join(dir, 's.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.kind === 'qgroup_trace_subtree')
        .map((e) => [e.bytenr, e.level, e.blocks, e.extents, e.added].join(' '));
      expect(ours.length).toBe(357 + 358);
      expect(ours).toEqual(theirs);
      expect(Buffer.from(image).equals(readFileSync(join(dir, 's.img')))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the three modes' full run serves the steps' full-mode walks: kept, not run again", () => {
    const h = core.run(scriptInMode(lesson.scenario, 'full'), { ...RUN, trace: true });
    const trace = core.trace(h);
    core.close(h);
    keepFullWalks(lesson.scenario, RUN, trace);
    const noRun = { run: () => { throw new Error("ran again"); } } as unknown as Core;
    const byLine = fullWalksByLine(noRun, lesson.scenario, RUN);
    expect([...byLine.values()].flat().length).toBeGreaterThan(0);
    expect(() => fullWalksByLine(noRun, `${lesson.scenario}\n`, RUN)).toThrow('ran again'); // another script: its own run
  });

  test('scriptInMode sets every qgroup_swap line, or adds one before the first balance', () => {
    expect(scriptInMode('set qgroup_swap=subtree\nbalance -m\nset qgroup_swap=deferred\nbalance -m', 'full')).toBe('set qgroup_swap=full\nbalance -m\nset qgroup_swap=full\nbalance -m');
    expect(scriptInMode('commit\nbalance -m', 'subtree')).toBe('commit\nset qgroup_swap=subtree\nbalance -m');
  });
});
