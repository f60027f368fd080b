// Lesson 6's scenario through the WASM core: the snapshot (a copy of the fs
// tree's root, a reference of the new tree queued for each leaf, the qgroups
// inherited, the ROOT_ITEM keyed by the transaction); each later change
// treating its shared leaf as the text says (the owner lets go, another tree
// copies, the last holder frees it, a clone); every commit's extent tree is
// what the queue before it said, block by block; every commit's accounting
// adds up to the qgroups' numbers; and the figures the text quotes are the
// model's.
import { beforeAll, describe, expect, test } from 'vitest';
import { LESSONS } from '../lessons';
import { treeIdOf } from '../model/dump';
import { isSubvolTree, projectRefs, qgroupEffects, queueAt, sharedFrame, type SharedMoment, type SharedPicture } from '../model/shared';
import type { RunSteps } from './runs';
import { sharedPicture } from './sharedPicture';
import { loadCore, RUN, stepsOf } from './testCore';
import type { Core, Handle } from './wasm';

let core: Core;
let runs: RunSteps;
let h: Handle;
const lesson = LESSONS.find((l) => l.id === '06-snapshots')!;

beforeAll(async () => {
  core = await loadCore();
  runs = stepsOf(core, lesson.scenario);
  h = core.session(lesson.scenario, RUN);
});

const stepAt = (line: number) => runs.steps.find((s) => s.line === line && !s.final)!;
const at = (line: number): SharedPicture => sharedPicture(core, h, { line });
const momentsOf = <K extends SharedMoment['kind']>(line: number, kind: K) =>
  runs.shared(stepAt(line).index).moments.filter((m): m is Extract<SharedMoment, { kind: K }> => m.kind === kind);
const leavesOf = (p: SharedPicture, tree: string) => p.blocks.filter((b) => b.level === 0 && b.trees.includes(tree) && b.rootOf === null).map((b) => b.bytenr);

describe("lesson 6's scenario: a snapshot, then changes on both sides, then a reflink", () => {
  test('the snapshot copies the root node only: each of the six leaves gains a reference of the new tree, and both trees point at them', () => {
    const before = at(14);
    const leaves = leavesOf(before, '5');
    expect(leaves).toHaveLength(6); // "the fs tree is a root node over six leaves"
    const [copy] = momentsOf(16, 'copyRoot');
    expect(copy).toMatchObject({ tree: '257', level: 1, source: '5' });
    const refs = momentsOf(16, 'ref');
    expect(refs.map((r) => r.bytenr).sort()).toEqual([...leaves].sort());
    expect(refs.every((r) => r.mod === 1 && r.ref.type === 'tree' && r.ref.root === '257' && r.why === 'snapshot')).toBe(true);
    expect(momentsOf(16, 'cow').map((c) => c.how)).toEqual(['alone', 'alone']); // the fs tree's root, and /snapshots's leaf for the new name
    expect(momentsOf(16, 'flag')).toEqual([]);
    const after = at(16);
    const snap = after.trees.find((t) => t.id === '257')!;
    expect(snap).toMatchObject({ path: 'snapshots/monday', itemOffset: '5', root: copy.bytenr, hasItem: true, otransid: '5' });
    expect(after.trees.find((t) => t.id === '5')!.lastSnapshot).toBe('5');
    expect(after.rootItems.map((i) => i.key)).toEqual(expect.arrayContaining(['257 ROOT_ITEM 5', '257 ROOT_BACKREF 256', '256 ROOT_REF 257']));
    expect(leavesOf(after, '257').sort()).toEqual([...leaves].sort());
    for (const l of leaves) {
      expect(after.extents[l].refs).toBe(2);
      expect(after.extents[l].backrefs.map((b) => (b.type === 'tree' ? b.root : b.type)).sort()).toEqual(['257', '5']);
    }
    // the qgroups inherit: the same referenced, each holding its root node alone
    const q = momentsOf(16, 'qgroup').filter((m) => m.how === 'inherited');
    expect(q.map((m) => [m.qgroup, m.referenced, m.exclusive])).toEqual([['0/5', 110592, 4096], ['0/257', 110592, 4096]]);
  });

  test("inside the snapshot's line, the picture is the core's own state there: no tree 257 until it is registered", () => {
    const sp = runs.shared(stepAt(16).index);
    const copy = sp.moments.find((m) => m.kind === 'copyRoot')!;
    const early = sharedPicture(core, h, { seq: copy.seq });
    expect(early.trees.map((t) => t.id)).toEqual(['5', '256']);
    const f = sharedFrame(sp, sp.moments.indexOf(copy) + 3, early);
    expect(f.queue.filter((c) => c.op === 'ref')).toHaveLength(3);
    const snap = sp.moments.find((m) => m.kind === 'snapshot')!;
    expect(sharedPicture(core, h, { seq: snap.seq }).trees.map((t) => t.id)).toEqual(['5', '256', '257']);
  });

  test("line 18: the fs tree owns note_7's shared leaf and lets go of it: FULL_BACKREF, and its data extents referenced by it", () => {
    const before = at(16);
    const [c] = momentsOf(18, 'cow').filter((m) => m.how !== 'alone');
    expect(c.how).toBe('letGo');
    const leaf = before.blocks.find((b) => b.bytenr === c.from)!;
    expect(leaf.files.map((f) => f.inode).sort()).toEqual(['264', '267']); // note_7 and note_10
    expect(momentsOf(18, 'flag').map((m) => m.bytenr)).toEqual([c.from]);
    const refs = momentsOf(18, 'ref');
    expect(refs.filter((r) => r.ref.type === 'sharedData').map((r) => r.bytenr).sort()).toEqual(leaf.files.map((f) => f.disk).sort());
    // at the commit, note_7's old data is the snapshot's alone
    const note7 = leaf.files.find((f) => f.inode === '264')!.disk;
    const acc = momentsOf(19, 'qextent').find((m) => m.bytenr === note7)!;
    expect([acc.before, acc.after]).toEqual([['5', '257'], ['257']]);
    expect(qgroupEffects(acc.before, acc.after, acc.size)).toEqual([{ qgroup: '0/5', referenced: -4096, exclusive: 0 }, { qgroup: '0/257', referenced: 0, exclusive: 4096 }]);
    expect(at(19).extents[note7].backrefs).toEqual([{ type: 'sharedData', parent: c.from, count: 1 }]);
  });

  test('line 21: the snapshot copies a leaf the fs tree owns: keyed references of tree 257; line 24: the last holder frees the leaf the fs tree let go of', () => {
    const [copy] = momentsOf(21, 'cow').filter((m) => m.how !== 'alone');
    expect(copy).toMatchObject({ tree: '257', how: 'copy' });
    expect(momentsOf(21, 'ref').filter((r) => r.mod > 0).every((r) => r.ref.type === 'data' && r.ref.root === '257')).toBe(true);
    const [last] = momentsOf(24, 'cow').filter((m) => m.how !== 'alone');
    const [letGo] = momentsOf(18, 'cow').filter((m) => m.how !== 'alone');
    expect(last).toMatchObject({ tree: '257', how: 'lastHolder', from: letGo.from });
    const refs = momentsOf(24, 'ref');
    expect(refs.filter((r) => r.mod > 0).map((r) => r.ref.type)).toEqual(['data', 'data']);
    expect(refs.filter((r) => r.mod < 0).map((r) => r.ref.type === 'sharedData' && r.ref.parent)).toEqual([letGo.from, letGo.from]);
    expect(momentsOf(24, 'free').map((m) => m.bytenr)).toEqual([letGo.from]);
  });

  test('line 27: the clone queues one keyed reference of the fs tree; the fs tree lets go of three more leaves; at the commit 0/257 no longer holds the old note_7 alone', () => {
    const clone = momentsOf(27, 'ref').filter((r) => r.why === 'clone');
    expect(clone).toHaveLength(1);
    expect(clone[0].ref).toMatchObject({ type: 'data', root: '5', objectid: '299' });
    expect(momentsOf(27, 'cow').filter((c) => c.how === 'letGo')).toHaveLength(3);
    const acc = momentsOf(28, 'qextent').find((m) => m.bytenr === clone[0].bytenr)!;
    expect([acc.before, acc.after]).toEqual([['257'], ['5', '257']]);
    expect(qgroupEffects(acc.before, acc.after, acc.size)).toEqual([{ qgroup: '0/5', referenced: 4096, exclusive: 0 }, { qgroup: '0/257', referenced: 0, exclusive: -4096 }]);
    const updates = momentsOf(28, 'qgroup');
    const was = runs.shared(stepAt(28).index).qgroupsBefore['0/257'];
    expect(updates.find((u) => u.qgroup === '0/257')!.exclusive).toBeGreaterThan(was.exclusive); // "0/257's exclusive bytes still grow"
  });

  test("every commit's extent tree is what the queue before it said, for every block of a subvolume tree", () => {
    let checked = 0, commits = 0;
    // the extent tree as last committed: after mkfs's step, then after each commit (the core's state right after its event)
    let before = at(0);
    for (const s of runs.steps.slice(1)) {
      const sp = runs.shared(s.index);
      sp.moments.forEach((m, i) => {
        if (m.kind !== 'commit') return;
        const after = sharedPicture(core, h, { seq: m.seq });
        const projected = projectRefs(before.extents, queueAt(sp, i - 1));
        const norm = (bs: { type: string }[]) => bs.map((b) => JSON.stringify(b)).sort();
        for (const [bytenr, p] of Object.entries(projected)) {
          const got = after.extents[bytenr];
          if (p.freed) expect(got, `line ${s.line}: block ${bytenr} freed`).toBeUndefined();
          else {
            expect({ refs: got?.refs, full: got?.fullBackref, backrefs: norm(got?.backrefs ?? []) }, `line ${s.line}: block ${bytenr}`)
              .toEqual({ refs: p.refs, full: p.fullBackref, backrefs: norm(p.backrefs) });
          }
          checked++;
        }
        // every other block of a subvolume tree on disk after the commit is as it was before it
        for (const b of after.blocks) if (!projected[b.bytenr]) expect(after.extents[b.bytenr], `line ${s.line}: block ${b.bytenr} untouched`).toEqual(before.extents[b.bytenr]);
        before = after;
        commits++;
      });
    }
    expect(commits).toBeGreaterThan(10);
    expect(checked).toBeGreaterThan(40);
  });

  test("every commit's accounting adds up to its qgroups' new numbers", () => {
    let batches = 0;
    for (const s of runs.steps) {
      const sp = runs.shared(s.index);
      const numbers = { ...sp.qgroupsBefore };
      const sums: Record<string, { referenced: number; exclusive: number }> = {};
      for (const m of sp.moments) {
        if (m.kind === 'qextent') {
          for (const e of qgroupEffects(m.before, m.after, m.size)) {
            const x = (sums[e.qgroup] ??= { referenced: 0, exclusive: 0 });
            x.referenced += e.referenced;
            x.exclusive += e.exclusive;
          }
        } else if (m.kind === 'qgroup') {
          if (m.how === 'accounted') {
            const was = numbers[m.qgroup] ?? { referenced: 0, exclusive: 0 };
            const sum = sums[m.qgroup] ?? { referenced: 0, exclusive: 0 };
            expect([m.referenced - was.referenced, m.exclusive - was.exclusive], `line ${s.line}: ${m.qgroup}`).toEqual([sum.referenced, sum.exclusive]);
            delete sums[m.qgroup];
            batches++;
          }
          numbers[m.qgroup] = { referenced: m.referenced, exclusive: m.exclusive };
        }
      }
    }
    expect(batches).toBeGreaterThan(8);
  });

  test('each subvolume tree is named apart in a dump, so the tree explorer can show any of them', () => {
    const d = core.dumpTree(core.seek(h, 28), 257n, 0);
    const subvols = d.trees.filter((t) => isSubvolTree(t.id));
    expect(subvols.map((t) => [t.name, treeIdOf(t.name)])).toEqual([['fs', 5n], ['subvolume 256', 256n], ['subvolume 257', 257n]]);
    expect(d.trees.find((t) => t.name === 'subvolume 257')!.blocks.length).toBe(7);
    expect(treeIdOf('quota')).toBe(8n);
  });

  test("after the clone's commit, as btrfs qgroup show prints it, and the quota tree holds it", () => {
    const f = sharedFrame(runs.shared(stepAt(28).index), null, null);
    expect(f.qgroups.map((q) => [q.qgroup, q.referenced, q.exclusive])).toEqual([['0/5', 114688, 36864], ['0/256', 4096, 4096], ['0/257', 110592, 32768]]);
    const quota = core.dumpTree(core.seek(h, 28), 8n, 0).trees.find((t) => t.id === 8n)!;
    const info = quota.blocks.flatMap((b) => b.entries).filter((e) => e.kind === 'item' && e.key.type === 242);
    expect(info.map((e) => e.kind === 'item' && /referenced (\d+)[\s\S]*exclusive (\d+)/.exec(e.body)?.slice(1).map(Number))).toEqual([[114688, 36864], [4096, 4096], [110592, 32768]]);
    expect(runs.steps.every((s) => runs.shared(s.index).changes.every((c) => c.op !== 'new' || c.level >= 0 || isSubvolTree(c.tree)))).toBe(true);
  });

  test('line 30: the snapshot deleted; the cleaner frees what only it held and drops its reference to what it shared; 0/5 holds all it references', () => {
    const sp = runs.shared(stepAt(30).index);
    const drop = sp.moments.find((m) => m.kind === 'drop');
    expect(drop).toMatchObject({ tree: '257' });
    const before = at(28);
    const own = before.blocks.filter((b) => b.trees.join() === '257').map((b) => b.bytenr);
    const shared = before.blocks.filter((b) => b.trees.length > 1 && b.trees.includes('257')).map((b) => b.bytenr);
    expect(shared.length).toBeGreaterThan(0);
    const frees = sp.moments.filter((m): m is Extract<SharedMoment, { kind: 'free' }> => m.kind === 'free' && m.dropped);
    // while the cleaner drops it, its name is gone and its ROOT_ITEM has refs 0
    expect(sharedPicture(core, h, { seq: frees[0].seq }).trees.find((t) => t.id === '257')).toMatchObject({ deleted: true, path: 'subvolume 257' });
    expect(before.trees.find((t) => t.id === '257')!.deleted).toBe(false);
    expect(frees.map((m) => m.bytenr).sort()).toEqual([...own].sort());
    const refs = sp.moments.filter((m): m is Extract<SharedMoment, { kind: 'ref' }> => m.kind === 'ref');
    expect(refs.every((r) => r.mod === -1 && r.why === 'drop' && r.by === '257')).toBe(true);
    expect(refs.filter((r) => r.level >= 0).map((r) => r.bytenr).sort()).toEqual([...shared].sort());
    const after = at(30);
    expect(after.trees.map((t) => t.id)).toEqual(['5', '256']);
    for (const b of shared) expect(after.extents[b]).toMatchObject({ refs: 1, backrefs: [{ type: 'tree', root: '5' }] });
    const q = sp.moments.filter((m): m is Extract<SharedMoment, { kind: 'qgroup' }> => m.kind === 'qgroup' && m.qgroup === '0/5').at(-1)!;
    expect([q.referenced, q.exclusive]).toEqual([114688, 114688]); // "112 KiB"
  });
});
