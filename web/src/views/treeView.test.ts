// The tree as drawn: runs of unchanged siblings fold, what a step touched stays.
import { describe, expect, test } from 'vitest';
import type { Block, Tree } from '../model/dump';
import { buildHierarchy, foldKey, fullness } from './treeView';

const leaf = (n: number): Block => ({ bytenr: BigInt(n), level: 0, generation: 1n, owner: 5n, nritems: 1, free: 1000, entries: [] });
const root: Block = { bytenr: 1n, level: 1, generation: 1n, owner: 5n, nritems: 12, free: 0,
  entries: Array.from({ length: 12 }, (_, i) => ({ kind: 'ptr' as const, slot: i, key: { objectid: 0n, type: 0, offset: 0n, text: '' }, blockptr: BigInt(100 + i), generation: 1n })) };
const tree = { id: 5n, name: 'fs', blocks: [root, ...Array.from({ length: 12 }, (_, i) => leaf(100 + i))] } as unknown as Tree;
const shown = (d: ReturnType<typeof buildHierarchy>) => d!.children!.map((c) => (c.fold ? `…${c.fold.count}` : String(c.block.bytenr)));

describe('the tree as drawn', () => {
  test('runs of three or more untouched siblings fold; the ends, the touched and their neighbours stay', () => {
    expect(shown(buildHierarchy(tree, new Set(), (b) => b === '105'))).toEqual(['100', '…3', '104', '105', '106', '…4', '111']);
    expect(shown(buildHierarchy(tree, new Set(), () => false))).toEqual(['100', '…10', '111']);
    expect(shown(buildHierarchy(tree, new Set(), () => false, new Set([foldKey(1n)]))).length).toBe(12); // opened
    expect(shown(buildHierarchy(tree, new Set()))).toHaveLength(12); // everything touched: nothing folds
    const folds = buildHierarchy(tree, new Set(), () => false)!.children!.filter((c) => c.fold);
    expect(folds.every((f) => f.block.bytenr < 0n)).toBe(true); // stand-ins never take a real block's bytenr
  });

  test("a block's fullness from its free bytes", () => {
    expect(fullness({ ...leaf(1), free: 3995 }, 4096)).toBe(0);
    expect(fullness({ ...leaf(1), free: 0 }, 4096)).toBe(1);
  });
});
