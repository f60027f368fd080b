// The relocation model's pure parts: a trace read into a balance's moments
// and phases, the picture folded from them, each mode's run read from its
// trace, and the seed's percentages.
import { describe, expect, test } from 'vitest';
import { lineInMode, nextPhase, percentChange, phaseOf, qgroupName, readModeRun, readRelocation, readSwapWalks, relocPicture, sameQgroups, scriptInMode, sharedBelow, swapWalksByLine, tracedBlocks, TREE_RELOC, walkedBelow, withFullWalks } from './relocation';
import type { TraceEvent } from './trace';

let seq = 0;
const ev = (e: Record<string, unknown>) => ({ seq: seq++, ...e }) as unknown as TraceEvent;

/** A group holding a root (100) over two leaves (200, 300), of which only 300 is copied: the seed's picture, one level down. */
function balance(traced: boolean): TraceEvent[] {
  seq = 0;
  return [
    ev({ kind: 'reloc_group', logical: 1000n, length: 4096n, type: 4n, extents: 2n }),
    ev({ kind: 'backref', bytenr: 200n, level: 0, root: 0n, parent: 900n, mod: 1, objectid: 0n, offset: 0n }),
    ev({ kind: 'backref', bytenr: 300n, level: 0, root: 0n, parent: 900n, mod: 1, objectid: 0n, offset: 0n }),
    ev({ kind: 'reloc_root', tree: 5n, root: 900n, level: 1 }),
    ev({ kind: 'cow', tree: TREE_RELOC, from: 300n, to: 301n, level: 0, generation: 8n, fromGeneration: 5n }),
    ev({ kind: 'reloc_extent', tree: 5n, from: 300n, to: 301n, level: 0 }),
    ev({ kind: 'cow', tree: 5n, from: 100n, to: 101n, level: 1, generation: 8n, fromGeneration: 5n }),
    ev({ kind: 'block_free', tree: 5n, bytenr: 100n }),
    ...(traced ? [ev({ kind: 'qgroup_trace_swap', old: 300n, new: 301n, level: 0 })] : []),
    ev({ kind: 'reloc_swap', tree: 5n, old: 300n, new: 301n, level: 0 }),
    ev({ kind: 'block_free', tree: TREE_RELOC, bytenr: 900n }),
    ev({ kind: 'reloc_found', logical: 1000n, extents: 2n }),
    ev({ kind: 'qgroup_dirty', generation: 8n, extents: traced ? 4n : 2n }),
    ev({ kind: 'qgroup_update', qgroup: 5n, referenced: 8192n, exclusive: 8192n }),
    ev({ kind: 'chunk_remove', logical: 1000n, length: 4096n, type: 4n, physical: 1000n }),
  ];
}

describe('a balance read from its trace', () => {
  test('its moments, in phases, and the reloc tree over the root\'s children', () => {
    const s = readRelocation(balance(true));
    expect(s.moments.map((m) => m.kind)).toEqual(['group', 'relocRoot', 'extent', 'mergeRoot', 'swap', 'drop', 'found', 'dirty', 'removed']);
    expect(s.moments.map(phaseOf)).toEqual(['chosen', 'build', 'build', 'merge', 'merge', 'drop', 'drop', null, 'removed']);
    expect(s.moments[1]).toMatchObject({ tree: '5', root: '900', children: ['200', '300'] });
    expect(s.moments[4]).toMatchObject({ old: '300', new: '301', traced: true });
    expect(s.groups).toEqual([{ group: '1000', type: 'metadata', length: 4096, extents: 2, found: 2, trees: ['5'] }]);
    expect([s.dirty, s.dirtyTotal]).toEqual([[4], 4]);
    expect(nextPhase(s, -1)).toBe(0);
    expect(nextPhase(s, 0)).toBe(1);
    expect(nextPhase(s, 1)).toBe(3);
    expect(readRelocation(balance(false)).moments.find((m) => m.kind === 'swap')).toMatchObject({ traced: false });
  });

  test("the picture: both slots shared at first, the copied one new in the reloc tree, swapped by merge, the reloc tree dropped", () => {
    const s = readRelocation(balance(true));
    const at = (i: number | null) => relocPicture(s, '1000', '5', i)!;
    expect(at(1).slots.map((x) => [x.file, x.reloc])).toEqual([['200', '200'], ['300', '300']]);
    expect(at(2).slots.map((x) => [x.file, x.reloc, x.copy])).toEqual([['200', '200', null], ['300', '301', '301']]);
    expect(at(3).fileRootCopy).toBe('101');
    expect(at(4).slots.map((x) => [x.file, x.reloc, x.swapped])).toEqual([['200', '200', false], ['301', '300', true]]);
    expect(at(null)).toMatchObject({ dropped: true, fileRoot: '100', relocRoot: '900', phase: 'removed' });
    expect(at(null).slots.map((x) => x.reloc)).toEqual([null, null]);
  });

  test("a mode's run: dirty extents from the first balance on, its qgroups; the same qgroups compared", () => {
    const pre = [ev({ kind: 'qgroup_dirty', generation: 7n, extents: 10n })];
    const r = readModeRun('subtree', [...pre, ...balance(true)], 2);
    expect(r).toMatchObject({ mode: 'subtree', balanceDirty: 4, totalDirty: 14, relocated: 2, traceSwaps: 1, qgroups: { '0/5': [8192, 8192] } });
    const d = readModeRun('deferred', balance(false), 2);
    expect(sameQgroups([r, d])).toBe(true);
    expect(sameQgroups([r, { ...d, qgroups: { '0/5': [8192, 4096] } }])).toBe(false);
  });

  test('names and percentages as btrfs and the seed print them', () => {
    expect(qgroupName(257n)).toBe('0/257');
    expect(qgroupName((1n << 48n) | 100n)).toBe('1/100');
    expect(percentChange(225251, 140431)).toBe('−37.7%');
    expect(percentChange(314380, 140826)).toBe('−55.2%');
    expect(percentChange(83038, 42324)).toBe('−49.0%');
    expect(percentChange(85942, 45000)).toBe('−47.6%');
    expect(percentChange(22874, 22856)).toBe('−0.1%');
  });
});

/** The seed's picture: a level-2 root (100) over a node (200) over three leaves (210, 220, 230), of which only 230 is in the group; line 21's, in mode subtree (traced), deferred, or full (the core's walks of both subtrees, 200's and 201's: each the node, its three leaves and one data extent). */
function threeLevels(traced: boolean | 'full'): TraceEvent[] {
  seq = 0;
  return [
    ev({ kind: 'op', line: 21 }),
    ev({ kind: 'reloc_group', logical: 1000n, length: 4096n, type: 4n, extents: 1n }),
    ev({ kind: 'backref', bytenr: 200n, level: 1, root: 0n, parent: 900n, mod: 1, objectid: 0n, offset: 0n }),
    ev({ kind: 'reloc_root', tree: 5n, root: 900n, level: 2 }),
    // the path to 230 copied: the node first (its children now referenced by the copy too), then the leaf
    ev({ kind: 'backref', bytenr: 201n, level: 1, root: 0n, parent: 900n, mod: 1, objectid: 0n, offset: 0n }),
    ev({ kind: 'cow', tree: TREE_RELOC, from: 200n, to: 201n, level: 1, generation: 8n, fromGeneration: 5n }),
    ...[210n, 220n, 230n].map((b) => ev({ kind: 'backref', bytenr: b, level: 0, root: 0n, parent: 201n, mod: 1, objectid: 0n, offset: 0n })),
    ev({ kind: 'backref', bytenr: 231n, level: 0, root: 0n, parent: 201n, mod: 1, objectid: 0n, offset: 0n }),
    ev({ kind: 'cow', tree: TREE_RELOC, from: 230n, to: 231n, level: 0, generation: 8n, fromGeneration: 5n }),
    ev({ kind: 'reloc_extent', tree: 5n, from: 230n, to: 231n, level: 0 }),
    ev({ kind: 'cow', tree: 5n, from: 100n, to: 101n, level: 2, generation: 8n, fromGeneration: 5n }),
    ...(traced === true ? [ev({ kind: 'qgroup_trace_swap', old: 200n, new: 201n, level: 1 }), ev({ kind: 'qgroup_trace_swap', old: 230n, new: 231n, level: 0 })] : []),
    ...(traced === 'full' ? [ev({ kind: 'qgroup_trace_subtree', bytenr: 200n, level: 1, blocks: 4, extents: 1, added: 5 }), ev({ kind: 'qgroup_trace_subtree', bytenr: 201n, level: 1, blocks: 4, extents: 1, added: 2 })] : []),
    ev({ kind: 'reloc_swap', tree: 5n, old: 200n, new: 201n, level: 1 }),
    ev({ kind: 'block_free', tree: TREE_RELOC, bytenr: 900n }),
    // the reloc tree's drop in full mode walks the blocks it lets go: not a swap's
    ...(traced === 'full' ? [ev({ kind: 'qgroup_trace_subtree', bytenr: 200n, level: 1, blocks: 4, extents: 1, added: 0 })] : []),
    ev({ kind: 'reloc_found', logical: 1000n, extents: 1n }),
    ev({ kind: 'qgroup_dirty', generation: 8n, extents: traced ? 6n : 2n }),
    ev({ kind: 'chunk_remove', logical: 1000n, length: 4096n, type: 4n, physical: 1000n }),
  ];
}

describe("the seed's three levels: a swap at a node, the leaves below it shared", () => {
  test('the copied node\'s children: the copy of 230, and 210, 220 shared by the old node and the new', () => {
    const s = readRelocation(threeLevels(true));
    expect(s.copies.map((c) => [c.from, c.to, c.level, c.children])).toEqual([['200', '201', 1, ['210', '220', '230']], ['230', '231', 0, []]]);
    expect(s.tracedPairs.map((t) => [t.old, t.new])).toEqual([['200', '201'], ['230', '231']]);
    expect(s.moments.find((m) => m.kind === 'swap')).toMatchObject({ old: '200', new: '201', level: 1, traced: true });
    // full mode's walks come from the same step run in full mode (this run, in subtree mode, walks none)
    expect(s.fullWalks).toEqual([{ tree: '5', old: '200', new: '201', level: 1, walks: [] }]);
    const mine = relocPicture(s, '1000', '5', 4)!;
    expect(tracedBlocks(mine, 'full').size).toBe(0);
    const s2 = withFullWalks(s, swapWalksByLine(threeLevels('full')), 21);
    const at = (i: number | null) => relocPicture(s2, '1000', '5', i)!;
    // built: the root's one child, not copied yet
    expect(at(1).slots.map((x) => [x.old, x.copy, x.children])).toEqual([['200', null, null]]);
    // the path copied: the reloc tree at the new node, whose children are the new leaf and the two shared
    const copied = at(3).slots[0];
    expect([copied.file, copied.reloc, copied.swapped]).toEqual(['200', '201', false]);
    expect(copied.children!.map((c) => [c.old, c.copy, c.traced])).toEqual([['210', null, false], ['220', null, false], ['230', '231', true]]);
    expect(tracedBlocks(at(3), 'full').size).toBe(0);
    expect(at(3).slots[0].walks).toEqual([]);
    // swapped: full traces both subtrees the core walked (the shared leaves once), subtree the pairs, deferred nothing
    const swapped = at(4);
    expect(swapped.slots[0].walks.map((w) => [w.bytenr, w.blocks, w.extents, w.added])).toEqual([['200', 4, 1, 5], ['201', 4, 1, 2]]);
    expect(walkedBelow(swapped)).toEqual({ walks: 2, blocks: 8, extents: 2, added: 7 });
    expect([swapped.slots[0].file, swapped.slots[0].reloc]).toEqual(['201', '200']);
    expect([...tracedBlocks(swapped, 'full')].sort()).toEqual(['200', '201', '210', '220', '230', '231']);
    expect([...tracedBlocks(swapped, 'subtree')].sort()).toEqual(['200', '201', '230', '231']);
    expect(tracedBlocks(swapped, 'deferred').size).toBe(0);
    expect(sharedBelow(swapped)).toBe(2);
    // a run in full mode has its own walks; one walk (the old subtree's) outlines that side only
    const full = readRelocation(threeLevels('full'));
    expect([...tracedBlocks(relocPicture(full, '1000', '5', 4)!, 'full')].sort()).toEqual(['200', '201', '210', '220', '230', '231']);
    const oldOnly = { ...full, fullWalks: full.fullWalks.map((w) => ({ ...w, walks: w.walks.slice(0, 1) })) };
    expect([...tracedBlocks(relocPicture(oldOnly, '1000', '5', 4)!, 'full')].sort()).toEqual(['200', '210', '220', '230']);
    // the drop's walk after the swap belongs to no swap
    expect(readSwapWalks(threeLevels('full')).map((w) => w.walks.length)).toEqual([2]);
  });

  test('the line of a script in a mode: the same, or one further down after a set line added before the first balance', () => {
    const script = 'mkfs\ncommit\nbalance -m\nrelocate 1';
    expect(scriptInMode(script, 'full').split('\n')[lineInMode(script, 4) - 1]).toBe('relocate 1');
    expect([lineInMode(script, 2), lineInMode(script, 3), lineInMode('set qgroup_swap=subtree\nbalance -m', 2)]).toEqual([2, 4, 2]);
  });

  test("a mode's run: each group's dirty extents, its commits from its choice to its removal", () => {
    const r = readModeRun('subtree', [...threeLevels(true), ev({ kind: 'qgroup_dirty', generation: 9n, extents: 1n }), ev({ kind: 'qgroup_dirty', generation: 10n, extents: 7n })], 1);
    expect(r.groups).toEqual([{ group: '1000', dirty: 7 }]);
    expect([r.balanceDirty, r.totalDirty]).toEqual([14, 14]);
  });
});
