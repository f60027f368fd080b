// The shared blocks' fold on synthetic traces and dumps: the extent tree's
// references read from its items, how a COW treated the block it copied (the
// four cases of update_ref_for_cow), the queue since the last commit, each
// tree block's references once it runs, the qgroups' changes from an
// extent's trees before and after, and the frame at a moment.
import { describe, expect, test } from 'vitest';
import type { Block, LeafItem, Tree, TreeDump } from './dump';
import {
  EMPTY_SHARED, extentRefsOf, nextShared, pictureOf, pictureRows, projectRefs, qgroupEffects, queueAt, readShared, sharedAtSeq, sharedFrame, subvolPath,
  type ExtentRefs, type RootTreeItem, type SharedMoment,
} from './shared';
import type { TraceEvent } from './trace';

let seq = 0;
/** An event of the trace, numbered in order. */
function ev<K extends TraceEvent['kind']>(kind: K, fields: Omit<Extract<TraceEvent, { kind: K }>, 'seq' | 'kind'>): TraceEvent {
  return { seq: ++seq, kind, ...fields } as unknown as TraceEvent;
}
const cow = (tree: bigint, from: bigint, to: bigint, level = 0) => [
  ev('block_alloc', { tree, bytenr: to, level, generation: 6n }),
  ev('cow', { tree, from, to, level, generation: 6n, fromGeneration: 4n }),
];
const backref = (bytenr: bigint, level: number, mod: number, by: { root?: bigint; parent?: bigint; objectid?: bigint }) =>
  ev('backref', { bytenr, level, root: by.root ?? 0n, parent: by.parent ?? 0n, mod, objectid: by.objectid ?? 0n, offset: 0n });

function item(slot: number, key: [bigint, number, bigint], body: string, text = `${key[0]} ${key[1]} ${key[2]}`): LeafItem {
  return { kind: 'item', slot, key: { objectid: key[0], type: key[1], offset: key[2], text }, offset: 0, size: 0, summary: '', body };
}
const leaf = (bytenr: bigint, owner: bigint, entries: Block['entries']): Block => ({ bytenr, level: 0, generation: 4n, owner, nritems: entries.length, free: 0, entries });
const tree = (id: bigint, blocks: Block[]): Tree => ({ id, name: String(id), owner: String(id), blockCount: blocks.length, blocks });
const dump = (trees: Tree[]): TreeDump => ({ nodesize: 4096, generation: 9n, totalBytes: 0n, bytesUsed: 0n, trees });

describe('the extent tree read', () => {
  test('inline backrefs of each kind, FULL_BACKREF, and keyed items of their own', () => {
    const t = tree(2n, [leaf(1n, 2n, [
      item(0, [5324800n, 169, 0n], '\t\trefs 2 gen 4 flags TREE_BLOCK|FULL_BACKREF\n\t\ttree block skinny level 0\n\t\ttree block backref root 257\n\t\tshared block backref parent 5242880\n'),
      item(1, [5242880n, 169, 1n], '\t\trefs 1 gen 6 flags TREE_BLOCK\n\t\ttree block skinny level 1\n\t\ttree block backref root FS_TREE\n'),
      item(2, [5242880n, 176, 257n], ''),
      item(3, [17825792n, 168, 4096n], '\t\trefs 3 gen 4 flags DATA\n\t\textent data backref root FS_TREE objectid 264 offset 0 count 1\n\t\tshared data backref parent 5324800 count 2\n'),
      item(4, [17825792n, 178, 99n], ''),
    ])]);
    const x = extentRefsOf(t, 4096);
    expect(x['5324800']).toEqual({ bytenr: '5324800', level: 0, size: 4096, refs: 2, generation: '4', fullBackref: true, undecoded: 0,
      backrefs: [{ type: 'tree', root: '257' }, { type: 'shared', parent: '5242880' }] });
    expect(x['5242880'].backrefs).toEqual([{ type: 'tree', root: '5' }, { type: 'tree', root: '257' }]);
    expect(x['5242880'].level).toBe(1);
    expect(x['17825792']).toMatchObject({ level: -1, size: 4096, refs: 3, fullBackref: false, undecoded: 1,
      backrefs: [{ type: 'data', root: '5', objectid: '264', offset: '0', count: 1 }, { type: 'sharedData', parent: '5324800', count: 2 }] });
  });

  test("a subvolume's path follows its ROOT_BACKREFs up to the top level", () => {
    const items: RootTreeItem[] = [
      { key: '256 ROOT_BACKREF 5', type: 'ROOT_BACKREF', objectid: '256', offset: '5', body: 'root backref key dirid 256 sequence 2 name snapshots' },
      { key: '257 ROOT_BACKREF 256', type: 'ROOT_BACKREF', objectid: '257', offset: '256', body: 'root backref key dirid 256 sequence 2 name monday' },
      { key: '258 ROOT_BACKREF 5', type: 'ROOT_BACKREF', objectid: '258', offset: '5', body: 'root backref key dirid 260 sequence 4 name deep' },
    ];
    expect(subvolPath('257', items)).toBe('snapshots/monday');
    expect(subvolPath('258', items)).toBe('…/deep');
    expect(subvolPath('5', items)).toBe('');
    expect(subvolPath('300', items)).toBe('subvolume 300');
  });

  test('the picture: each block once with the trees that reach it, roots on top, the leaves in key order, the data they point at', () => {
    const ptr = (slot: number, key: string, blockptr: bigint) => ({ kind: 'ptr' as const, slot, key: { objectid: 0n, type: 0, offset: 0n, text: key }, blockptr, generation: 4n });
    const node = (bytenr: bigint, owner: bigint, kids: [string, bigint][]): Block => ({ bytenr, level: 1, generation: 5n, owner, nritems: kids.length, free: 0, entries: kids.map(([k, b], i) => ptr(i, k, b)) });
    const a = leaf(100n, 5n, [item(0, [256n, 1, 0n], '', '256 INODE_ITEM 0')]);
    const b = leaf(200n, 5n, [item(0, [264n, 1, 0n], '', '264 INODE_ITEM 0'), item(1, [264n, 108, 0n], '\t\tgeneration 4 type 1 (regular)\n\t\textent data disk byte 9000 nr 4096\n', '264 EXTENT_DATA 0')]);
    const b2 = { ...leaf(300n, 257n, b.entries), generation: 7n };
    const fs = tree(5n, [node(10n, 5n, [['256 INODE_ITEM 0', 100n], ['264 INODE_ITEM 0', 200n]]), a, b]);
    const snap = tree(257n, [node(20n, 257n, [['256 INODE_ITEM 0', 100n], ['264 INODE_ITEM 0', 300n]]), a, b2]);
    const root = tree(1n, [leaf(1n, 1n, [item(0, [257n, 132, 5n], 'generation 7 root_dirid 256 bytenr 20 byte_limit 0 bytes_used 12288\n\t\tlast_snapshot 5 flags 0x1(RDONLY) refs 1', '257 ROOT_ITEM 5')])]);
    const p = pictureOf(dump([root]), dump([tree(2n, [])]), [dump([fs]), dump([snap])]);
    expect(p.trees.map((t) => [t.id, t.root, t.readonly, t.itemOffset, t.hasItem])).toEqual([['5', '10', false, '0', false], ['257', '20', true, '5', true]]);
    expect(pictureRows(p).map((r) => r.map((x) => x.bytenr))).toEqual([['10', '20'], ['100', '200', '300']]);
    expect(p.blocks.find((x) => x.bytenr === '100')!.trees).toEqual(['5', '257']);
    expect(p.blocks.find((x) => x.bytenr === '300')!.files).toEqual([{ inode: '264', offset: '0', disk: '9000', diskLen: 4096 }]);
    expect(p.data).toEqual(['9000']);
  });
});

describe("a step's events read", () => {
  test("the four ways a COW treats the block it copies, each reference's cause, and the frees a COW's own", () => {
    seq = 0;
    const events = [
      ev('op', { line: 3 }),
      ...cow(5n, 10n, 11n, 1), ev('block_free', { tree: 5n, bytenr: 10n }), // alone: the root
      ...cow(5n, 100n, 101n), backref(9000n, -1, 1, { parent: 100n }), ev('full_backref', { bytenr: 100n, level: 0, tree: 5n }), backref(100n, 0, -1, { root: 5n }), // the owner lets go
      ...cow(257n, 200n, 201n), backref(9100n, -1, 1, { root: 257n, objectid: 270n }), backref(200n, 0, -1, { root: 257n }), // another tree's block: keyed refs of the copier
      ...cow(257n, 100n, 102n), backref(9000n, -1, 1, { root: 257n, objectid: 264n }), backref(9000n, -1, -1, { parent: 100n }), ev('block_free', { tree: 257n, bytenr: 100n }), // the last holder
      ev('item_insert', { tree: 5n, bytenr: 101n, slot: 3, key: [299n, 108, 0n], size: 53 }),
      backref(9000n, -1, 1, { root: 5n, objectid: 299n }), // a clone's, after the COWs
    ];
    const { step, carry } = readShared(events, EMPTY_SHARED, 'clone /a /b');
    const cows = step.moments.filter((m): m is Extract<SharedMoment, { kind: 'cow' }> => m.kind === 'cow');
    expect(cows.map((c) => [c.from, c.how])).toEqual([['10', 'alone'], ['100', 'letGo'], ['200', 'copy'], ['100', 'lastHolder']]);
    // a plain COW's free is the COW's; the last holder's free comes after the references move: a moment of its own
    expect(step.moments.filter((m) => m.kind === 'free').map((m) => m.kind === 'free' && m.bytenr)).toEqual(['100']);
    const refs = step.moments.filter((m): m is Extract<SharedMoment, { kind: 'ref' }> => m.kind === 'ref');
    expect(refs.map((r) => [r.bytenr, r.mod, r.ref.type, r.why, r.by, r.cow])).toEqual([
      ['9000', 1, 'sharedData', 'cow', '5', '100'], ['100', -1, 'tree', 'cow', '5', '100'],
      ['9100', 1, 'data', 'cow', '257', '200'], ['200', -1, 'tree', 'cow', '257', '200'],
      ['9000', 1, 'data', 'cow', '257', '100'], ['9000', -1, 'sharedData', 'cow', '257', '100'],
      ['9000', 1, 'data', 'clone', '5', null],
    ]);
    expect(step.moments.filter((m) => m.kind === 'flag')).toHaveLength(1);
    // no commit: everything stays queued for the next step
    expect(carry.queue).toHaveLength(step.changes.length);
    expect(carry.levels['10']).toBeUndefined(); // allocated before this step: its level unknown here
    expect(carry.levels['11']).toBe(1);
  });

  test("a snapshot: its root's copy with the references it queues, the qgroups it sets, its accounting, and the commit that empties the queue", () => {
    seq = 100;
    const events = [
      ev('op', { line: 16 }),
      ...cow(5n, 10n, 11n, 1), ev('block_free', { tree: 5n, bytenr: 10n }),
      ev('block_alloc', { tree: 257n, bytenr: 20n, level: 1, generation: 5n }),
      backref(100n, 0, 1, { root: 257n }), backref(200n, 0, 1, { root: 257n }),
      ev('qgroup_update', { qgroup: 5n, referenced: 12288n, exclusive: 4096n }),
      ev('qgroup_update', { qgroup: 257n, referenced: 12288n, exclusive: 4096n }),
      ev('snapshot', { tree: 257n, root: 20n, level: 1, source: 5n, generation: 5n }),
      ev('qgroup_extent', { bytenr: 11n, size: 4096n, before: 0, after: 1 }), ev('qgroup_root', { bytenr: 11n, root: 5n, after: true }),
      ev('qgroup_extent', { bytenr: 10n, size: 4096n, before: 1, after: 0 }), ev('qgroup_root', { bytenr: 10n, root: 5n, after: false }),
      ev('qgroup_update', { qgroup: 5n, referenced: 12288n, exclusive: 4096n }),
      ev('commit', { generation: 5n, rootBytenr: 1n }),
    ];
    const before = { queue: [], qgroups: { '0/5': { referenced: 12288, exclusive: 12288 } }, levels: { '10': 1 } };
    const { step, carry } = readShared(events, before, 'snapshot / /snap');
    expect(step.moments.map((m) => m.kind)).toEqual(['cow', 'copyRoot', 'ref', 'ref', 'qgroup', 'qgroup', 'snapshot', 'qextent', 'qextent', 'qgroup', 'commit']);
    expect(step.moments.filter((m) => m.kind === 'ref').every((m) => m.kind === 'ref' && m.why === 'snapshot' && m.by === '257')).toBe(true);
    expect(step.moments.filter((m) => m.kind === 'qgroup').map((m) => m.kind === 'qgroup' && [m.qgroup, m.how])).toEqual([['0/5', 'inherited'], ['0/257', 'inherited'], ['0/5', 'accounted']]);
    const q = step.moments.filter((m): m is Extract<SharedMoment, { kind: 'qextent' }> => m.kind === 'qextent');
    expect(q.map((m) => [m.bytenr, m.level, m.before, m.after])).toEqual([['11', 1, [], ['5']], ['10', 1, ['5'], []]]);
    // the queue: the step's changes until the commit, empty after it
    const commit = step.moments.findIndex((m) => m.kind === 'commit');
    expect(queueAt(step, commit - 1).map((c) => c.op)).toEqual(['new', 'free', 'new', 'ref', 'ref']);
    expect(queueAt(step, commit)).toEqual([]);
    expect(queueAt(step, -1)).toEqual([]);
    expect(carry.queue).toEqual([]);
    expect(carry.qgroups['0/257']).toEqual({ referenced: 12288, exclusive: 4096 });
    // stepping: jumps, and the player's event found among the moments
    expect(nextShared(step, -1, ['qextent'])).toBe(7);
    expect(nextShared(step, 8, ['qextent'])).toBe(-1);
    expect(sharedAtSeq(step, step.moments[0].seq + 1)).toBe(0); // the COW's own free: no moment of its own
    expect(sharedAtSeq(step, 0)).toBe(-1);
  });

  test("a deleted subvolume's drop: after the commit that removed its name, its blocks freed and its references dropped, by the cleaner", () => {
    seq = 400;
    const events = [
      ev('commit', { generation: 10n, rootBytenr: 1n }),
      ev('block_free', { tree: 257n, bytenr: 300n }), backref(200n, 0, -1, { root: 257n }), backref(9000n, -1, -1, { root: 257n, objectid: 264n }),
      ev('block_free', { tree: 257n, bytenr: 20n }), ev('subvol_drop', { tree: 257n }),
      ev('commit', { generation: 11n, rootBytenr: 1n }),
      ev('block_free', { tree: 5n, bytenr: 100n }), // after the drop: not the cleaner's
    ];
    const { step } = readShared(events, { queue: [], qgroups: {}, levels: { '20': 1 } }, 'subvol delete /snap');
    expect(step.moments.map((m) => [m.kind, m.kind === 'free' ? m.dropped : m.kind === 'ref' ? m.why : null])).toEqual([
      ['commit', null], ['free', true], ['ref', 'drop'], ['ref', 'drop'], ['free', true], ['drop', null], ['commit', null], ['free', false]]);
    expect(step.moments.filter((m) => m.kind === 'ref').every((m) => m.kind === 'ref' && m.by === '257')).toBe(true);
    expect(step.moments.find((m) => m.kind === 'free' && m.bytenr === '20')).toMatchObject({ level: 1 });
  });

  test("a data extent's file comes from the ordered extent that wrote it", () => {
    seq = 200;
    const events = [ev('block_alloc', { tree: 5n, bytenr: 9000n, level: -1, generation: 4096n }),
      ev('ordered_finish', { id: 1, tree: 5n, ino: 264n, offset: 8192n, length: 4096n, diskBytenr: 9000n, atNs: 0n })];
    const { step } = readShared(events, EMPTY_SHARED);
    expect(step.moments).toEqual([{ seq: 201, kind: 'data', tree: '5', bytenr: '9000', size: 4096, inode: '264', offset: '8192' }]);
  });
});

describe('the queue run', () => {
  const onDisk: Record<string, ExtentRefs> = {
    '100': { bytenr: '100', level: 0, size: 4096, refs: 2, generation: '4', fullBackref: false, backrefs: [{ type: 'tree', root: '5' }, { type: 'tree', root: '257' }], undecoded: 0 },
    '10': { bytenr: '10', level: 1, size: 4096, refs: 1, generation: '4', fullBackref: false, backrefs: [{ type: 'tree', root: '5' }], undecoded: 0 },
    '9000': { bytenr: '9000', level: -1, size: 4096, refs: 1, generation: '4', fullBackref: false, backrefs: [{ type: 'data', root: '5', objectid: '264', offset: '0', count: 1 }], undecoded: 0 },
  };

  test("each tree block's references once the queue runs: a new block keyed by its tree, a freed one gone, a reference moved, FULL_BACKREF", () => {
    const p = projectRefs(onDisk, [
      { seq: 1, op: 'new', bytenr: '11', level: 1, tree: '5', size: 0 },
      { seq: 2, op: 'free', bytenr: '10', level: 1, tree: '5' },
      { seq: 3, op: 'ref', bytenr: '9000', level: -1, ref: { type: 'sharedData', parent: '100', count: 1 }, mod: 1 },
      { seq: 4, op: 'flag', bytenr: '100', level: 0, tree: '5' },
      { seq: 5, op: 'ref', bytenr: '100', level: 0, ref: { type: 'tree', root: '5' }, mod: -1 },
    ]);
    expect(p['11']).toEqual({ refs: 1, fullBackref: false, backrefs: [{ type: 'tree', root: '5' }], freed: false });
    expect(p['10'].freed).toBe(true);
    expect(p['100']).toEqual({ refs: 1, fullBackref: true, backrefs: [{ type: 'tree', root: '257' }], freed: false });
    expect(p['9000']).toBeUndefined(); // a data extent's are not worked out: a write's own references are not in the trace
    expect(onDisk['100'].refs).toBe(2); // not changed
  });

  test('the frame: every block the queue names, its references on disk and once it runs; the qgroups moved since the step began', () => {
    seq = 300;
    const events = [ev('full_backref', { bytenr: 100n, level: 0, tree: 5n }), backref(100n, 0, -1, { root: 5n }),
      ev('qgroup_extent', { bytenr: 100n, size: 4096n, before: 2, after: 1 }), ev('qgroup_root', { bytenr: 100n, root: 5n, after: false }),
      ev('qgroup_root', { bytenr: 100n, root: 257n, after: false }), ev('qgroup_root', { bytenr: 100n, root: 257n, after: true }),
      ev('qgroup_update', { qgroup: 257n, referenced: 8192n, exclusive: 8192n })];
    const carried = { seq: 1, op: 'ref' as const, bytenr: '9000', level: -1, ref: { type: 'sharedData' as const, parent: '100', count: 1 }, mod: 1 as const };
    const { step } = readShared(events, { queue: [carried], qgroups: { '0/257': { referenced: 8192, exclusive: 4096 }, '0/5': { referenced: 8192, exclusive: 4096 } }, levels: {} });
    const pic = { nodesize: 4096, trees: [], blocks: [], extents: onDisk, data: [], rootItems: [], tooBig: null };
    const f = sharedFrame(step, 1, pic);
    expect(f.rows.map((r) => [r.bytenr, r.queued.length, r.after?.refs ?? null])).toEqual([['9000', 1, null], ['100', 2, 1]]);
    expect(f.current).toEqual(['100']);
    expect(f.accounted).toEqual([]);
    const end = sharedFrame(step, null, pic);
    expect(end.accounted[0].effects).toEqual([{ qgroup: '0/5', referenced: -4096, exclusive: 0 }, { qgroup: '0/257', referenced: 0, exclusive: 4096 }]);
    expect(end.qgroups.map((q) => [q.qgroup, q.exclusive, q.delta.exclusive, q.fresh])).toEqual([['0/5', 4096, 0, false], ['0/257', 8192, 4096, true]]);
  });
});

describe("qgroups: an extent's trees before and after", () => {
  test.each([
    ['a new extent of one tree', [], ['5'], [{ qgroup: '0/5', referenced: 4096, exclusive: 4096 }]],
    ['freed', ['5'], [], [{ qgroup: '0/5', referenced: -4096, exclusive: -4096 }]],
    ['a snapshot lets go: the other holds it alone', ['5', '257'], ['257'], [{ qgroup: '0/5', referenced: -4096, exclusive: 0 }, { qgroup: '0/257', referenced: 0, exclusive: 4096 }]],
    ['a reflink from the snapshot: shared again', ['257'], ['5', '257'], [{ qgroup: '0/5', referenced: 4096, exclusive: 0 }, { qgroup: '0/257', referenced: 0, exclusive: -4096 }]],
    ['the same trees', ['5', '257'], ['257', '5'], []],
  ])('%s', (_name, before, after, effects) => {
    expect(qgroupEffects(before, after, 4096)).toEqual(effects);
  });
});
