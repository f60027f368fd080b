// `snapshot / DST [ro]` in scenarios: a new subvolume whose root is a copy
// of /'s, sharing every block; then / changes, copying shared blocks as the
// kernel does (full backrefs when the owner lets go, keyed ones for the
// other tree). Our check counts every backref of every block against the
// blocks and trees that point at it; ls, cat and extract cross into
// snapshots; dump-tree prints the root items, root refs and backrefs; bad
// lines are clear errors. (The kernel's side: tests/kernel/snapshot.test.mjs.)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-snapshot-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const BEFORE = ['mkfs nodesize=4K size=256M', 'mkdir /d', 'create /d/f{1..150}', 'write /d/f1 0 5000', 'write /d/f2 0 5000 2',
  'write /d/f3 0 70000 3', 'setxattr /d/f3 user.k v', 'link /d/f1 /d/f1-link', 'commit'];
const AFTER = ['write /d/f1 5000 10', 'unlink /d/f2', 'truncate /d/f3 100', 'create /d/late', 'write /d/late 0 3000 9',
  'rename /d/f4 /f4-moved', 'commit'];

function run(lines, name) {
  const script = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(script, lines.join('\n') + '\n');
  const r = spawnSync(CLI, ['run', script, '--image', img], { encoding: 'utf8' });
  return { ...r, img, script };
}
const ls = (img, path = '/') => execFileSync(CLI, ['ls', '-R', img, path], { encoding: 'utf8' }).trim().split('\n');
const cat = (img, path) => execFileSync(CLI, ['cat', img, path]);

describe('snapshot', () => {
  test('the snapshot holds / as it was; / changes after; our check counts every backref; ls and cat cross into it', () => {
    const before = run(BEFORE, 'before');
    assert.equal(before.status, 0, before.stderr);
    const r = run([...BEFORE, 'snapshot / /snap ro', ...AFTER], 'snap');
    assert.equal(r.status, 0, r.stderr);
    assert.match(execFileSync(CLI, ['check', '--check-data-csum', r.img], { encoding: 'utf8' }), /0 errors found/);
    // the snapshot: every path and file of / before it, nothing of after
    const want = ls(before.img).map((p) => `/snap${p}`);
    const got = ls(r.img).filter((p) => p.startsWith('/snap/'));
    assert.deepEqual(got, want);
    for (const f of ['/d/f1', '/d/f2', '/d/f3', '/d/f1-link', '/d/f4'])
      assert.ok(cat(r.img, `/snap${f}`).equals(cat(before.img, f)), f);
    // / after: the changes, and the snapshot's name
    const top = ls(r.img).filter((p) => !p.startsWith('/snap/'));
    assert.ok(top.includes('/snap') && top.includes('/d/late') && top.includes('/f4-moved'));
    assert.ok(!top.includes('/d/f2') && !top.includes('/d/f4'));
    assert.equal(cat(r.img, '/d/f1').length, 5010);
    assert.equal(cat(r.img, '/d/f3').length, 100);
    // extract too: the snapshot is a directory of its own with the old contents
    const out = join(dir, 'extracted');
    execFileSync(CLI, ['extract', r.img, out]);
    assert.equal(readFileSync(join(out, 'snap/d/f3')).length, 70000);
    assert.ok(!readdirSync(join(out, 'd')).includes('f2'));
  });

  test('dump-tree: the snapshot\'s root item and refs, shared blocks and their backrefs', () => {
    const r = run([...BEFORE, 'snapshot / /snap ro', ...AFTER], 'dump');
    const root = execFileSync(CLI, ['dump-tree', '-t', 'root', r.img], { encoding: 'utf8' });
    const gen = root.match(/key \(256 ROOT_ITEM (\d+)\)/);
    assert.ok(gen, 'the snapshot\'s root item, its key offset the transaction that made it');
    assert.match(root, new RegExp(`key \\(256 ROOT_ITEM ${gen[1]}\\)[^]*?last_snapshot ${gen[1]} flags 0x1\\(RDONLY\\) refs 1`));
    assert.match(root, /key \(FS_TREE ROOT_REF 256\)[^]*?root ref key dirid 256 sequence \d+ name snap/);
    assert.match(root, /key \(256 ROOT_BACKREF 5\)[^]*?root backref key dirid 256 sequence \d+ name snap/);
    assert.match(root, new RegExp(`key \\(FS_TREE ROOT_ITEM 0\\)[^]*?last_snapshot ${gen[1]}`));
    const extent = execFileSync(CLI, ['dump-tree', '-t', 'extent', r.img], { encoding: 'utf8' });
    // blocks / let go of: FULL_BACKREF, their data referenced by the leaf; blocks both still use: two keyed refs
    assert.match(extent, /flags TREE_BLOCK\|FULL_BACKREF/);
    assert.match(extent, /shared data backref parent \d+ count 1/);
    assert.match(extent, /refs 2 gen \d+ flags TREE_BLOCK\n\t\ttree block skinny level 0\n\t\ttree block backref root 256\n\t\ttree block backref root FS_TREE/);
    const uuid = execFileSync(CLI, ['dump-tree', '-t', 'uuid', r.img], { encoding: 'utf8' });
    assert.match(uuid, /subvol_id 256/);
  });

  test('the same script gives the same image; the trace names the snapshot', () => {
    const a = run([...BEFORE, 'snapshot / /s1', ...AFTER], 'same-a');
    const b = run([...BEFORE, 'snapshot / /s1', ...AFTER], 'same-b');
    assert.ok(readFileSync(a.img).equals(readFileSync(b.img)));
    const trace = execFileSync(CLI, ['run', a.script, '--trace', '-'], { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    const s = trace.find((e) => e.kind === 'snapshot');
    assert.equal(s.tree, '256');
    assert.equal(s.source, '5');
  });

  test('two snapshots: the later one holds the earlier as an empty directory, as the kernel shows it', () => {
    const r = run(['mkfs nodesize=4K size=256M', 'mkdir /d', 'create /d/a', 'snapshot / /s0 ro', 'write /d/a 0 10', 'snapshot / /s1',
      'create /d/b'], 'two');
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(ls(r.img), ['/d', '/d/a', '/d/b', '/s0', '/s0/d', '/s0/d/a', '/s1', '/s1/d', '/s1/d/a', '/s1/s0']);
    assert.match(execFileSync(CLI, ['ls', '-l', r.img, '/s1'], { encoding: 'utf8' }), /^drwxr-xr-x 1 0 0 0 s0$/m);
    assert.match(execFileSync(CLI, ['check', r.img], { encoding: 'utf8' }), /0 errors found/);
  });

  test('subvolumes, writable snapshots and snapshots of subvolumes: each changes on its own; clones share extents', () => {
    const r = run(['mkfs nodesize=4K size=256M', 'mkdir /d', 'create /d/f{1..120}', 'write /d/f1 0 90000 1', 'commit',
      'subvol create /sv', 'mkdir /sv/x', 'create /sv/x/a', 'write /sv/x/a 0 20000 5',
      'snapshot / /rw', 'snapshot /sv /d/sv-ro ro',
      'write /rw/d/f1 0 100 9', 'unlink /rw/d/f3', 'rename /rw/d/f4 /rw/f4', 'write /sv/x/a 0 10 11', 'fsync /sv/x/a',
      'clone /d/f1 /d/f1-clone', 'clone /d/f1 /sv/x/from-top', 'write /d/f1-clone 0 5 2', 'commit'], 'subvols');
    assert.equal(r.status, 0, r.stderr);
    assert.match(execFileSync(CLI, ['check', '--check-data-csum', r.img], { encoding: 'utf8' }), /0 errors found/);
    const all = ls(r.img);
    for (const p of ['/sv/x/a', '/rw/d/f1', '/rw/f4', '/rw/sv', '/d/sv-ro/x/a', '/d/f1-clone', '/sv/x/from-top']) assert.ok(all.includes(p), p);
    assert.ok(!all.includes('/rw/d/f3') && all.includes('/d/f3'));
    assert.ok(!all.some((p) => p.startsWith('/rw/sv/')), 'a snapshot holds a subvolume of its source as an empty directory');
    const f1 = cat(r.img, '/d/f1');
    assert.equal(f1.length, 90000);
    assert.ok(cat(r.img, '/sv/x/from-top').equals(f1));
    assert.ok(cat(r.img, '/d/f1-clone').subarray(5).equals(f1.subarray(5)));
    assert.ok(!cat(r.img, '/rw/d/f1').subarray(0, 100).equals(f1.subarray(0, 100)));
    assert.ok(cat(r.img, '/d/sv-ro/x/a').subarray(10).equals(cat(r.img, '/sv/x/a').subarray(10)));
    // the clone and the snapshot share f1's extent: its references, keyed by tree, inode and offset
    const extent = execFileSync(CLI, ['dump-tree', '-t', 'extent', r.img], { encoding: 'utf8' });
    assert.match(extent, /extent data backref root 25\d objectid 25\d offset 0 count 1/);
    const root = execFileSync(CLI, ['dump-tree', '-t', 'root', r.img], { encoding: 'utf8' });
    assert.match(root, /key \(256 ROOT_ITEM 0\)/, 'a new subvolume\'s root item is keyed 0');
    assert.match(root, /root ref key dirid 2\d\d sequence \d+ name sv-ro/, 'named in the directory of its parent subvolume');
    // the fsync in a subvolume committed (the model logs only the top level)
    const m = JSON.parse(execFileSync(CLI, ['run', r.script, '--metrics', '-'], { encoding: 'utf8' }));
    assert.equal(m.fsyncs[0].result, 'full commit: not the top-level subvolume (the model logs it only)');
  });

  test('subvol delete: the name goes, then the tree; what others share stays theirs', () => {
    const r = run(['mkfs nodesize=4K size=256M', 'mkdir /d', 'create /d/f{1..150}', 'write /d/f1 0 90000 1', 'commit',
      'snapshot / /snap', 'write /snap/d/f2 0 7000 5', 'subvol create /sv', 'create /sv/x', 'write /sv/x 0 60000 4', 'clone /d/f1 /sv/c',
      'write /d/f1 0 100 6', 'subvol delete /snap', 'subvol delete /sv', 'commit'], 'delete');
    assert.equal(r.status, 0, r.stderr);
    assert.match(execFileSync(CLI, ['check', '--check-data-csum', r.img], { encoding: 'utf8' }), /0 errors found/);
    assert.deepEqual(ls(r.img).filter((p) => !p.startsWith('/d/')), ['/d']);
    assert.equal(cat(r.img, '/d/f1').length, 90000);
    const root = execFileSync(CLI, ['dump-tree', '-t', 'root', r.img], { encoding: 'utf8' });
    assert.doesNotMatch(root, /\((256|257) ROOT_ITEM|ORPHAN|ROOT_REF|ROOT_BACKREF/, 'the trees, their items and orphan items are gone');
    // f1's old extent is / and the clone's no more: only /'s new one and the rest of / stay referenced
    const extent = execFileSync(CLI, ['dump-tree', '-t', 'extent', r.img], { encoding: 'utf8' });
    assert.doesNotMatch(extent, /backref root 25[67]|shared (data|block) backref/);
    const trace = execFileSync(CLI, ['run', join(dir, 'delete.txt'), '--trace', '-'], { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(trace.filter((e) => e.kind === 'subvol_drop').map((e) => e.tree), ['256', '257']);
  });

  test('the cleaner a batch a transaction: drop_progress in the root item, from where the next batch goes on; a snapshot\'s source dropped', () => {
    // a deep tree (4K nodes, 1500 files: three levels), snapshotted, then the source deleted: the blocks it
    // owns that the snapshot shares turn to full backrefs before it lets go of them (no backref may name it after)
    const lines = ['mkfs nodesize=4K size=256M', 'quota enable', 'subvol create /a', 'mkdir /a/d', 'create /a/d/f_{1..1500}',
      'write /a/d/f_3 0 8K 1', 'write /a/d/f_900 0 8K 2', 'commit', 'snapshot /a /b', 'write /b/d/f_1000 0 4K 3', 'commit',
      'set drop_batch=4', 'subvol delete /a nosync', 'commit', 'commit'];
    const part = run(lines, 'dropping');
    assert.equal(part.status, 0, part.stderr);
    const trace = join(dir, 'dropping.jsonl');
    const again = spawnSync(CLI, ['run', part.script, '--image', part.img, '--trace', trace], { encoding: 'utf8' });
    assert.equal(again.status, 0, again.stderr);
    const events = readFileSync(trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const progress = events.filter((e) => e.kind === 'drop_progress');
    assert.equal(progress.length, 2, 'two commits: a batch each');
    assert.ok(progress.every((e) => e.tree === '256' && e.level >= 1 && Number(e.blocks) >= 4), JSON.stringify(progress));
    assert.ok(events.some((e) => e.kind === 'full_backref' && e.tree === '256'), 'the source\'s shared blocks turned to full backrefs');
    assert.ok(!events.some((e) => e.kind === 'subvol_drop'));
    const root = execFileSync(CLI, ['dump-tree', '-t', 'root', part.img], { encoding: 'utf8' });
    const [, key, level] = root.match(/\(256 ROOT_ITEM 0\)[^]*?drop_progress key \((\d+ \S+ \d+)\) drop_level (\d+)/);
    assert.equal(`${key} ${level}`, `${progress[1].key[0]} INODE_ITEM ${progress[1].key[2]} ${progress[1].level}`);
    assert.match(root, /\(ORPHAN ORPHAN_ITEM 256\)[^]*?orphan item/);
    assert.match(execFileSync(CLI, ['check', '--check-data-csum', part.img], { encoding: 'utf8' }), /0 errors found/);
    // subvol sync: the rest, batch by batch; nothing names tree 256 after, its qgroup gone, the snapshot's all its own
    const whole = run([...lines, 'subvol sync'], 'dropped');
    assert.equal(whole.status, 0, whole.stderr);
    assert.match(execFileSync(CLI, ['check', '--check-data-csum', whole.img], { encoding: 'utf8' }), /0 errors found/);
    const extents = execFileSync(CLI, ['dump-tree', '-t', 'extent', whole.img], { encoding: 'utf8' });
    assert.doesNotMatch(extents, /root 256\b/);
    assert.doesNotMatch(execFileSync(CLI, ['dump-tree', '-t', 'root', whole.img], { encoding: 'utf8' }), /\(256 ROOT_ITEM/);
    const shown = execFileSync(CLI, ['qgroup', 'show', '--raw', whole.img], { encoding: 'utf8' });
    assert.doesNotMatch(shown, /^0\/256 /m);
    const [, rfer, excl] = shown.match(/^0\/257\s+(\d+)\s+(\d+)/m);
    assert.equal(excl, rfer, shown);
    assert.deepEqual(ls(whole.img, '/b/d').length, 1500);
    assert.ok(cat(whole.img, '/b/d/f_900').equals(cat(part.img, '/b/d/f_900')));
  });

  test('bad lines: clear errors naming the line', () => {
    const cases = [
      [['snapshot /d /x'], /:4: .*snapshot \/d: not a subvolume/],
      [['snapshot / /d'], /:4: .*\/?d: file exists/],
      [['snapshot / /x rw'], /:4: .*'rw': the third argument of snapshot is ro/],
      [['snapshot /'], /:4: .*snapshot SRC DST \[ro\]/],
      [['snapshot / /nodir/x'], /:4: .*\/nodir: no such file or directory/],
      [['snapshot / /s ro', 'write /s/d/x 0 10'], /:5: .*\/s\/d\/x: in read-only subvolume 256 \(EROFS\)/],
      [['snapshot / /s ro', 'create /s/d/y'], /:5: .*\/s\/d\/y: in read-only subvolume 256 \(EROFS\)/],
      [['subvol create /v', 'rename /d/x /v/x'], /:5: .*\/d\/x and \/v\/x are in different subvolumes \(EXDEV\)/],
      [['subvol delete /d'], /:4: .*\/d: not a subvolume/],
      [['subvol create /v', 'subvol create /v/w', 'subvol delete /v'], /:6: .*\/v: subvolume 256 holds subvolume 257: delete that first/],
      [['subvol remove /v'], /:4: .*subvol create PATH, subvol delete PATH \[nosync\], subvol set-default PATH or subvol sync/],
      [['subvol create /v', 'subvol delete /v later'], /:5: .*expects subvol create PATH, subvol delete PATH \[nosync\], subvol set-default PATH or subvol sync/],
      [['set drop_batch=lots'], /:4: .*drop_batch/],
      [['clone /d /y'], /:4: .*inode 257 is not a regular file/],
      [['link /d/x /d/x2', 'clone /d/x /d/x2'], /:5: .*a file cannot be cloned onto itself/],
      [['snapshot / /s ro', 'clone /d/x /s/d/x'], /:5: .*\/s\/d\/x: in read-only subvolume 256 \(EROFS\)/],
      [['clone /d/missing /d/y'], /:4: .*\/d\/missing: no such file or directory/],
      [['thread A', 'snapshot / /s', 'end'], /:5: .*'snapshot' cannot run inside a thread/],
    ];
    for (const [extra, want] of cases) {
      const r = run(['mkfs nodesize=4K size=256M', 'mkdir /d', 'create /d/x', ...extra], 'bad');
      assert.notEqual(r.status, 0, extra.join('; '));
      assert.match(r.stderr, want, extra.join('; '));
      assert.doesNotMatch(r.stderr, /Assertion|Sanitizer|core dumped/);
    }
  });
});
