// Balance and relocation in scenarios and the CLI: `balance -m` moves every
// tree block out of the metadata and system block groups and removes them
// (their BLOCK_GROUP_ITEM, CHUNK item, DEV_EXTENT and free space items), the
// files stay as they were, our check is clean, and the metrics and the
// trace say what moved; `relocate BYTENR` does one group; `btrfslab balance
// IMAGE -o OUT` prints what the kernel logs. Blocks snapshots share move
// through reloc trees and stay shared; data moves with its checksums and
// the leaves pointing at it move through reloc trees too. Deleted
// subvolumes the cleaner has not dropped are dropped first. (The kernel's
// side: tests/kernel/balance.test.mjs.)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-balance-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const BASE = ['mkfs nodesize=4K size=256M', 'mkdir /d', 'create /d/f_{1..1200}', 'write /d/f_5 0 200K 1', 'setxattr /d/f_6 user.k v',
  'commit', 'unlink /d/f_{300..500}'];

function run(lines, name, extra = []) {
  const script = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(script, lines.join('\n') + '\n');
  const r = spawnSync(CLI, ['run', script, '--image', img, ...extra], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { ...r, img, script };
}
const cli = (...args) => execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
const chunks = (img) => [...cli('dump-tree', '-t', 'chunk', img).matchAll(/CHUNK_ITEM (\d+)\)[^\n]*\n[^\n]*type (\S+)/g)].map((m) => [Number(m[1]), m[2]]);

describe('balance', () => {
  test('balance -m: every metadata and system group relocated and removed; the files as they were', () => {
    const before = run(BASE, 'before');
    assert.equal(before.status, 0, before.stderr);
    const r = run([...BASE, 'balance -m'], 'after', ['--metrics', '-', '--trace', join(dir, 'after.jsonl')]);
    assert.equal(r.status, 0, r.stderr);
    const metrics = JSON.parse(r.stdout);
    assert.equal(metrics.relocated.block_groups, 2);
    const events = readFileSync(join(dir, 'after.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const found = events.filter((e) => e.kind === 'reloc_found');
    assert.equal(found.reduce((s, e) => s + Number(e.extents), 0), metrics.relocated.extents);
    assert.ok(metrics.relocated.extents > 50, JSON.stringify(metrics.relocated));
    const moved = events.filter((e) => e.kind === 'reloc_extent');
    assert.equal(moved.length, metrics.relocated.extents, 'each extent found moved once');
    // the old groups are gone: no chunk, block group item, or tree block left in them
    const old = chunks(before.img).filter(([, t]) => !t.startsWith('DATA'));
    const now = chunks(r.img);
    for (const [logical, type] of old) {
      assert.ok(!now.some(([l]) => l === logical), `the ${type} chunk at ${logical} is gone`);
      assert.ok(events.some((e) => e.kind === 'chunk_remove' && Number(e.logical) === logical));
    }
    assert.ok(now.some(([, t]) => t.startsWith('METADATA')) && now.some(([, t]) => t.startsWith('SYSTEM')));
    const extents = cli('dump-tree', '-t', 'extent', r.img);
    for (const [logical] of old) assert.doesNotMatch(extents, new RegExp(`\\(${logical} BLOCK_GROUP_ITEM`));
    for (const e of moved) assert.ok(old.some(([l]) => Number(e.from) >= l && Number(e.from) < l + 64 * 1024 * 1024));
    assert.match(cli('check', '--check-data-csum', r.img), /0 errors found/);
    assert.equal(cli('ls', '-R', '-l', r.img), cli('ls', '-R', '-l', before.img));
    assert.ok(execFileSync(CLI, ['cat', r.img, '/d/f_5']).equals(execFileSync(CLI, ['cat', before.img, '/d/f_5'])));
  });

  test('relocate BYTENR: one group; balance usage=0 takes only empty ones; quotas keep their numbers', () => {
    const plain = run(BASE, 'plain');
    const meta = chunks(plain.img).find(([, t]) => t.startsWith('METADATA'))[0];
    const one = run([...BASE, `relocate ${meta}`], 'one', ['--metrics', '-']);
    assert.equal(one.status, 0, one.stderr);
    assert.equal(JSON.parse(one.stdout).relocated.block_groups, 1);
    assert.ok(!chunks(one.img).some(([l]) => l === meta));
    assert.ok(chunks(one.img).some(([, t]) => t.startsWith('SYSTEM')) && chunks(one.img).some(([l]) => l === chunks(plain.img).find(([, t]) => t.startsWith('SYSTEM'))[0]));
    const none = run([...BASE, 'balance -m usage=0'], 'usage0', ['--metrics', '-']);
    assert.equal(none.status, 0, none.stderr);
    assert.equal(JSON.parse(none.stdout).relocated.block_groups, 0);
    const q = run(['mkfs nodesize=4K size=256M', 'quota enable', 'subvol create /v', 'create /v/g_{1..900}', 'write /v/g_1 0 64K 2', 'commit'], 'q');
    const qb = run(['mkfs nodesize=4K size=256M', 'quota enable', 'subvol create /v', 'create /v/g_{1..900}', 'write /v/g_1 0 64K 2', 'commit', 'balance -m'], 'qb');
    assert.equal(qb.status, 0, qb.stderr);
    assert.equal(cli('qgroup', 'show', '--raw', qb.img), cli('qgroup', 'show', '--raw', q.img));
  });

  test('snapshots: reloc trees, merged and dropped; every block still shared as before, the qgroups unchanged', () => {
    const lines = ['mkfs nodesize=4K size=256M', 'quota enable', 'mkdir /d', 'create /d/f_{1..1500}', 'write /d/f_3 0 64K 1', 'commit',
      'snapshot / /s1', 'write /s1/d/f_1000 0 4K 2', 'snapshot / /s2 ro', 'write /d/f_50 0 4K 3', 'clone /d/f_3 /s1/d/c', 'commit'];
    const a = run(lines, 'snaps');
    const b = run([...lines, 'balance -m'], 'snaps-balanced', ['--trace', join(dir, 'snaps.jsonl')]);
    assert.equal(b.status, 0, b.stderr);
    const events = readFileSync(join(dir, 'snaps.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const roots = new Set(events.filter((e) => e.kind === 'reloc_root').map((e) => e.tree));
    assert.deepEqual([...roots].sort(), ['256', '257', '5'], 'a reloc tree for each subvolume');
    assert.ok(events.some((e) => e.kind === 'reloc_swap'), 'merge swapped pointers');
    assert.match(cli('check', '--check-data-csum', b.img), /0 errors found/);
    assert.equal(cli('qgroup', 'show', '--raw', b.img), cli('qgroup', 'show', '--raw', a.img));
    const blocks = (img) => (cli('dump-tree', img).match(/^(leaf|node) \d+ /gm) ?? []).length;
    assert.equal(blocks(b.img), blocks(a.img), 'as many tree blocks: shared blocks stayed shared');
    assert.equal(cli('ls', '-R', '-l', b.img), cli('ls', '-R', '-l', a.img));
    // the moved blocks keep their subvolume as owner, with the RELOC header flag
    assert.doesNotMatch(cli('dump-tree', b.img), /owner TREE_RELOC/);
  });

  test('qgroup_swap=full|subtree|deferred: the same numbers, the same images; only the qgroup records differ', () => {
    const lines = ['mkfs nodesize=4K size=256M', 'quota enable', 'mkdir /d', 'create /d/f_{1..1500}', 'write /d/f_3 0 64K 1', 'commit',
      'snapshot / /s1', 'write /s1/d/f_1000 0 4K 2', 'snapshot / /s2 ro', 'write /d/f_50 0 4K 3', 'commit'];
    const base = JSON.parse(run(lines, 'qs-base', ['--metrics', '-']).stdout).qgroup_dirty_extents;
    const got = {};
    for (const mode of ['full', 'subtree', 'deferred']) {
      const r = run([lines[0], `set qgroup_swap=${mode}`, ...lines.slice(1), 'balance -m'], `qs-${mode}`, ['--metrics', '-', '--trace', join(dir, `qs-${mode}.jsonl`)]);
      assert.equal(r.status, 0, r.stderr);
      const m = JSON.parse(r.stdout);
      const events = readFileSync(join(dir, `qs-${mode}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      assert.equal(events.filter((e) => e.kind === 'qgroup_dirty').reduce((s, e) => s + Number(e.extents), 0), m.qgroup_dirty_extents);
      got[mode] = { dirty: m.qgroup_dirty_extents - base, extents: m.relocated.extents, qgroups: cli('qgroup', 'show', '--raw', r.img), check: cli('check', r.img) };
      if (mode === 'subtree') assert.ok(events.some((e) => e.kind === 'qgroup_trace_swap'));
    }
    assert.equal(got.full.qgroups, got.deferred.qgroups);
    assert.equal(got.subtree.qgroups, got.deferred.qgroups);
    assert.equal(got.full.extents, got.deferred.extents);
    for (const g of Object.values(got)) assert.match(g.check, /0 errors found/);
    // deferred, as this kernel: each subvolume's root copied by merge, the old and the new (3 subvolumes, one metadata group)
    assert.equal(got.deferred.dirty, 6, JSON.stringify(got));
    assert.ok(got.full.dirty > got.subtree.dirty && got.subtree.dirty > got.deferred.dirty, JSON.stringify({ full: got.full.dirty, subtree: got.subtree.dirty }));
    assert.match(run([lines[0], 'set qgroup_swap=lazy'], 'qs-bad').stderr, /qgroup_swap=full \(before 4\.20\), subtree \(4\.20\) or deferred \(since 5\.1\)/);
  });

  test('balance -d: data moved with its checksums, every file extent pointing at it (snapshots, reflinks) moved too; balance (all types)', () => {
    const lines = ['mkfs nodesize=4K size=256M', 'quota enable', 'mkdir /d', 'create /d/f_{1..600}', 'write /d/f_3 0 64K 1', 'write /d/f_9 0 300K 2',
      'write /d/f_500 0 12K 3', 'commit', 'snapshot / /s1', 'write /s1/d/f_9 4096 8K 4', 'clone /d/f_3 /s1/d/c3', 'snapshot / /s2 ro',
      'write /d/f_500 0 4K 5', 'subvol create /v', 'create /v/x', 'write /v/x 0 40K 6', 'commit'];
    const a = run(lines, 'data');
    const datachunks = chunks(a.img).filter(([, t]) => t.startsWith('DATA')).map(([l]) => l);
    for (const [cmd, groups] of [['balance -d', 1], ['balance', 3]]) {
      const b = run([...lines, cmd], `data-${groups}`, ['--metrics', '-']);
      assert.equal(b.status, 0, b.stderr);
      const m = JSON.parse(b.stdout);
      assert.equal(m.relocated.block_groups, groups, cmd);
      assert.ok(!chunks(b.img).some(([l]) => datachunks.includes(l)), `${cmd}: the old data chunk is gone`);
      assert.match(cli('check', '--check-data-csum', b.img), /0 errors found/);
      assert.equal(cli('qgroup', 'show', '--raw', b.img), cli('qgroup', 'show', '--raw', a.img));
      assert.equal(cli('ls', '-R', '-l', b.img), cli('ls', '-R', '-l', a.img));
      for (const f of ['/d/f_3', '/d/f_9', '/s1/d/f_9', '/s1/d/c3', '/s2/d/f_500', '/v/x'])
        assert.ok(execFileSync(CLI, ['cat', b.img, f]).equals(execFileSync(CLI, ['cat', a.img, f])), `${cmd}: ${f}`);
    }
  });

  test('mkfs meta_chunk=: a tree over several metadata groups; relocating one moves part of it, and subtree mode traces less than full', () => {
    const lines = ['mkfs nodesize=4K size=256M meta_chunk=1M', 'quota enable', 'mkdir /d', 'create /d/f_{1..5000}', 'write /d/f_3 0 64K 1', 'commit',
      'snapshot / /s1', 'write /s1/d/f_1000 0 4K 2', 'snapshot / /s2 ro', 'write /d/f_50 0 4K 3', 'commit'];
    const a = run(lines, 'mc');
    const meta = chunks(a.img).filter(([, t]) => t.startsWith('METADATA'));
    assert.ok(meta.length >= 3, JSON.stringify(meta));
    assert.match(cli('dump-tree', '-t', 'chunk', a.img), /length 1048576 owner 2 stripe_len 65536 type METADATA/);
    const base = JSON.parse(run(lines, 'mc-base', ['--metrics', '-']).stdout).qgroup_dirty_extents;
    const dirty = {};
    for (const mode of ['full', 'subtree', 'deferred']) {
      const r = run([lines[0], `set qgroup_swap=${mode}`, ...lines.slice(1), `relocate ${meta[1][0]}`], `mc-${mode}`, ['--metrics', '-']);
      assert.equal(r.status, 0, r.stderr);
      const m = JSON.parse(r.stdout);
      assert.equal(m.relocated.block_groups, 1);
      dirty[mode] = m.qgroup_dirty_extents - base;
      assert.match(cli('check', '--check-data-csum', r.img), /0 errors found/);
      assert.equal(cli('qgroup', 'show', '--raw', r.img), cli('qgroup', 'show', '--raw', a.img));
    }
    // part of the tree moved: subtree mode traces the new blocks and their counterparts, full whole subtrees
    assert.ok(dirty.subtree < 0.8 * dirty.full && dirty.deferred === 6, JSON.stringify(dirty));
    assert.match(run(['mkfs nodesize=4K meta_chunk=100K'], 'mc-bad').stderr, /meta_chunk=100K: a size from 256K to 1G, a multiple of 64K/);
    // a run resumed from a checkpoint (crash-after, the page's sessions) keeps the setting: its chunks are the same
    const small = ['mkfs nodesize=4K size=128M meta_chunk=256K', 'set drop_batch=3', 'mkdir /d', 'create /d/f_{1..600}', 'commit', 'balance -m', 'commit'];
    const whole = run(small, 'mc-whole'), cut = run(small, 'mc-cut', ['--crash-after', '7']);
    assert.equal(cut.status, 0, cut.stderr);
    const lengths = (img) => [...cli('dump-tree', '-t', 'chunk', img).matchAll(/length (\d+) owner 2 stripe_len \d+ type METADATA/g)].map((m) => m[1]);
    assert.deepEqual(lengths(cut.img), lengths(whole.img));
    assert.ok(lengths(whole.img).every((l) => l === '262144'), lengths(whole.img).join());
  });

  test("lesson 7's scenario: a three-level fs tree, swapped at level 1 over shared leaves; each mode's dirty extents as its trace accounts them", () => {
    const scenario = readFileSync(fileURLToPath(new URL('../../lessons/07-relocation/scenario.txt', import.meta.url)), 'utf8').trimEnd().split('\n');
    const RELOC = '18446744073709551608';
    const out = {};
    for (const mode of ['full', 'subtree', 'deferred']) {
      const lines = scenario.map((l) => (/^set qgroup_swap=/.test(l) ? `set qgroup_swap=${mode}` : l));
      const trace = join(dir, `l7-${mode}.jsonl`);
      const r = run(lines, `l7-${mode}`, ['--metrics', '-', '--trace', trace]);
      assert.equal(r.status, 0, r.stderr);
      const events = readFileSync(trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      // the first relocation's events, to the second's choice
      const from = events.findIndex((e) => e.kind === 'reloc_group'), to = events.findIndex((e, i) => i > from && e.kind === 'reloc_group');
      const g = events.slice(from, to);
      const commits = g.filter((e) => e.kind === 'qgroup_dirty').map((e) => Number(e.extents));
      out[mode] = { g, dirty: commits.reduce((a, b) => a + b, 0), relocated: JSON.parse(r.stdout).relocated.extents, qgroups: cli('qgroup', 'show', '--raw', r.img) };
    }
    const { g } = out.subtree;
    // three levels: each reloc tree is a copy of a level-2 root; every swap is at level 1
    const roots = g.filter((e) => e.kind === 'reloc_root');
    assert.deepEqual(roots.map((e) => [e.tree, e.level]).sort(), [['256', 2], ['257', 2], ['5', 2]]);
    const swaps = g.filter((e) => e.kind === 'reloc_swap');
    assert.ok(swaps.some((e) => e.tree === '5') && swaps.every((e) => e.level === 1), JSON.stringify(swaps));
    // below each new level-1 node: the children its copy references (backrefs by it), less the copies made under it later
    const copies = g.filter((e) => e.kind === 'cow' && e.tree === RELOC);
    const made = new Set(copies.map((e) => e.to)), copied = new Map(copies.map((e) => [e.from, e.to]));
    const below = (node) => [...new Set(g.filter((e) => e.kind === 'backref' && e.parent === node && e.mod > 0 && e.level === 0).map((e) => e.bytenr))].filter((b) => !made.has(b));
    const leafPairs = new Set(), shared = new Set();
    for (const s of swaps) for (const leaf of below(s.new)) (copied.has(leaf) ? leafPairs.add(`${leaf}>${copied.get(leaf)}`) : shared.add(leaf));
    assert.ok(shared.size > 100 && leafPairs.size > 0, `${shared.size} shared leaves, ${leafPairs.size} copied`);
    // subtree traces each swapped pair and, below it, each copied leaf with the leaf it replaced: nothing else
    const nodePairs = new Set(swaps.map((s) => `${s.old}>${s.new}`));
    const tracedPairs = new Set(g.filter((e) => e.kind === 'qgroup_trace_swap').map((e) => `${e.old}>${e.new}`));
    assert.deepEqual([...tracedPairs].sort(), [...nodePairs, ...leafPairs].sort());
    // the commit counts each pair's two blocks, and each subvolume's root with merge's copy of it
    assert.equal(out.subtree.dirty, 2 * tracedPairs.size + 2 * roots.length);
    // deferred: nothing touches the swapped blocks before the commit, so only the roots
    assert.equal(out.deferred.g.filter((e) => e.kind === 'qgroup_trace_swap').length, 0);
    assert.equal(out.deferred.dirty, 2 * roots.length);
    // full walks both subtrees below each swap: at least the shared leaves more than subtree
    assert.ok(out.full.dirty - out.subtree.dirty >= shared.size, `full ${out.full.dirty}, subtree ${out.subtree.dirty}, shared below ${shared.size}`);
    // full's walks, as the core tells them (qgroup_trace_subtree): right before each swap, the old subtree's then the new one's, at the
    // swap's level, each the node and every leaf below it (the old leaves its copy's backrefs name: the same count on both sides)
    const fg = out.full.g;
    const fswaps = fg.flatMap((e, i) => (e.kind === 'reloc_swap' ? [i] : []));
    assert.deepEqual(fswaps.map((i) => `${fg[i].old}>${fg[i].new}`), swaps.map((s) => `${s.old}>${s.new}`));
    const fcopies = new Set(fg.filter((e) => e.kind === 'cow' && e.tree === RELOC).map((e) => e.to));
    const leavesBelow = (node) => new Set(fg.filter((e) => e.kind === 'backref' && e.parent === node && e.mod > 0 && e.level === 0 && !fcopies.has(e.bytenr)).map((e) => e.bytenr)).size;
    const swapWalks = [];
    for (const i of fswaps) {
      const [o, n] = [fg[i - 2], fg[i - 1]], sw = fg[i];
      assert.deepEqual([o.kind, o.bytenr, o.level, n.kind, n.bytenr, n.level], ['qgroup_trace_subtree', sw.old, sw.level, 'qgroup_trace_subtree', sw.new, sw.level], JSON.stringify([o, n, sw]));
      assert.equal(o.blocks, 1 + leavesBelow(sw.new), JSON.stringify(o));
      assert.deepEqual([n.blocks, n.extents], [o.blocks, o.extents]);
      swapWalks.push(o, n);
    }
    // what the walks added to the transaction's records is part of what its commit counts: every shared leaf, recorded by no one else
    const walks = fg.filter((e) => e.kind === 'qgroup_trace_subtree');
    const added = walks.reduce((a, e) => a + e.added, 0);
    assert.ok(added <= out.full.dirty && added >= shared.size, `walks added ${added}, the commit counted ${out.full.dirty}, ${shared.size} shared leaves`);
    // the other modes walk no subtree (the reloc trees' drop is traced only in full mode, a walk per block it lets go)
    for (const mode of ['subtree', 'deferred']) assert.equal(out[mode].g.filter((e) => e.kind === 'qgroup_trace_subtree').length, 0, mode);
    assert.deepEqual([swapWalks.length, swapWalks.reduce((a, e) => a + e.blocks, 0), swapWalks.reduce((a, e) => a + e.extents, 0), walks.length, added], [12, 1098, 22, 357, 196]);
    // the lesson's figures (181 leaves shared below the three subvolumes' swaps, 177 of them below the fs tree's), and the same result in every mode
    assert.deepEqual([out.full.dirty, out.subtree.dirty, out.deferred.dirty, shared.size, tracedPairs.size], [215, 26, 6, 181, 10]);
    assert.equal(new Set(Object.values(out).map((o) => o.relocated)).size, 1);
    assert.equal(new Set(Object.values(out).map((o) => o.qgroups)).size, 1);
  });

  test('btrfslab balance IMAGE -o OUT prints what the kernel logs; the image itself untouched', () => {
    const src = run(BASE, 'src');
    const out = join(dir, 'balanced.img');
    const bytes = readFileSync(src.img);
    const printed = cli('balance', '-m', src.img, '-o', out);
    assert.match(printed, /^relocating block group \d+ flags metadata\nfound \d+ extents\n/m);
    assert.match(printed, /relocating block group \d+ flags system\nfound 1 extents\n/);
    assert.match(printed, /relocated 2 block groups \(\d+ extents, \d+ tree blocks copied\) in [\d.]+ ms; written to \S+ in [\d.]+ ms$/m);
    assert.ok(readFileSync(src.img).equals(bytes), 'IMAGE is not changed');
    assert.match(cli('check', '--check-data-csum', out), /0 errors found/);
    assert.equal(cli('ls', '-R', '-l', out), cli('ls', '-R', '-l', src.img));
  });

  test('deleted subvolumes: dropped (their blocks a snapshot shares), or not yet by the cleaner (not started, half done: dropped first), then the groups relocated', () => {
    const base = ['mkfs nodesize=4K size=256M', 'quota enable', 'mkdir /d', 'create /d/f_{1..400}', 'subvol create /v', 'create /v/g_{1..600}',
      'write /v/g_7 0 40K 3', 'snapshot /v /s', 'write /s/g_9 0 8K 4', 'subvol create /w', 'create /w/h_{1..300}', 'commit'];
    // dropped: before the balance; its blocks the snapshot shares still name /v (256) as their owner
    for (const [name, del] of [['dropped', ['subvol delete /v', 'subvol delete /w']], ['not-started', ['subvol delete /v nosync', 'subvol delete /w nosync']],
      ['half-dropped', ['set drop_batch=3', 'subvol delete /v nosync', 'subvol delete /w nosync', 'commit', 'commit']]]) {
      const r = run([...base, ...del, 'balance -m'], `dead-${name}`, ['--trace', join(dir, `dead-${name}.jsonl`)]);
      assert.equal(r.status, 0, `${name}: ${r.stderr}`);
      const events = readFileSync(join(dir, `dead-${name}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const drops = events.map((e, i) => [e, i]).filter(([e]) => e.kind === 'subvol_drop');
      const firstGroup = events.findIndex((e) => e.kind === 'reloc_group');
      assert.deepEqual(drops.map(([e]) => Number(e.tree)).sort(), [256, 258], `${name}: both deleted trees dropped`);
      assert.ok(firstGroup > 0 && drops.every(([, i]) => i < firstGroup), `${name}: the cleaner drops them before the first group is relocated`);
      // gone from the root tree; the snapshot keeps what it shared with /v; checked clean, qgroups included
      const roots = cli('dump-tree', '-t', 'root', r.img);
      assert.doesNotMatch(roots, /\((256|258) ROOT_ITEM/, name);
      assert.match(roots, /\(257 ROOT_ITEM/, name);
      assert.match(cli('check', '--check-data-csum', r.img), /0 errors found/, name);
      assert.match(cli('ls', r.img, '/s'), /g_600/, name);
      assert.doesNotMatch(cli('qgroup', 'show', '--raw', r.img), /^0\/25[68]\s/m, `${name}: the dropped subvolumes' qgroups removed`);
    }
  });

  test('bad lines: clear errors naming the line or the block; no image written', () => {
    const cases = [
      [['relocate 12345'], /:\d+: relocate: ENOENT: no block group starts at 12345/],
      [['relocate x'], /:\d+: relocate: EPARSE: .*relocate/],
      [['relocate'], /:\d+: relocate: EPARSE: expects relocate BYTENR/],
      [['balance -q'], /:\d+: balance: EPARSE: '-q': balance \[-d\] \[-m\] \[-s\] \[usage=N\]/],
      [['balance usage=101'], /:\d+: balance: EPARSE: 'usage=101': usage is a percentage, 0 to 100/],
    ];
    for (const [extra, want] of cases) {
      const r = run(['mkfs nodesize=4K size=256M', 'mkdir /d', 'create /d/x', ...extra], 'bad');
      assert.notEqual(r.status, 0, extra.join('; '));
      assert.match(r.stderr, want, extra.join('; '));
      assert.ok(!existsSync(r.img), 'no image written');
      assert.doesNotMatch(r.stderr, /Assertion|Sanitizer|core dumped/);
    }
    const u = spawnSync(CLI, ['balance', '-m', join(dir, 'missing.img')], { encoding: 'utf8' });
    assert.equal(u.status, 2);
    assert.match(u.stderr, /usage: balance .*IMAGE -o OUT/);
    const m = spawnSync(CLI, ['balance', '-m', join(dir, 'missing.img'), '-o', join(dir, 'x.img')], { encoding: 'utf8' });
    assert.equal(m.status, 1);
    assert.match(m.stderr, /missing\.img/);
    assert.ok(!existsSync(join(dir, 'x.img')));
  });
});
