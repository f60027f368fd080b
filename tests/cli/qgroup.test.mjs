// Quotas in scenarios: `quota enable` (the quota tree, a qgroup per
// subvolume, a rescan), accounting at each commit, a snapshot inheriting its
// source's numbers, `qgroup create` / `assign` (inconsistent until `quota
// rescan`), and `btrfslab qgroup show`, as `btrfs qgroup show --raw`
// prints. (The kernel's and btrfs check's side: tests/kernel/qgroup.test.mjs.)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-qgroup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function run(lines, name) {
  const script = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(script, lines.join('\n') + '\n');
  return { ...spawnSync(CLI, ['run', script, '--image', img], { encoding: 'utf8' }), img };
}
function show(img, ...flags) {
  const r = spawnSync(CLI, ['qgroup', 'show', ...flags, img], { encoding: 'utf8' });
  const rows = Object.fromEntries(r.stdout.split('\n').filter((l) => /^\d+\/\d+ /.test(l)).map((l) => {
    const [id, rfer, excl, ...rest] = l.trim().split(/\s+/);
    return [id, { rfer: Number(rfer), excl: Number(excl), rest: rest.join(' ') }];
  }));
  return { ...r, rows };
}
const BASE = ['mkfs nodesize=4K size=256M', 'mkdir /d', 'create /d/f{1..40}', 'write /d/f1 0 200000 1', 'write /d/f2 0 3000 2'];

describe('qgroups', () => {
  test('enable, snapshot, change: what each subvolume references and holds alone', () => {
    const r = run([...BASE, 'quota enable', 'snapshot / /snap', 'commit'], 'snap');
    assert.equal(r.status, 0, r.stderr);
    const s = show(r.img, '-p', '--raw');
    assert.equal(s.status, 0, s.stderr);
    // each holds alone its root block and the leaf of its root directory: / copied that leaf to
    // name the snapshot in it, the snapshot keeps the old one; the rest they share
    assert.equal(s.rows['0/256'].rfer, s.rows['0/5'].rfer);
    assert.equal(s.rows['0/256'].excl, 8192);
    assert.equal(s.rows['0/5'].excl, 8192);
    assert.ok(s.rows['0/5'].rfer >= 200000 + 3000);
    assert.match(s.stdout, /^Qgroupid {4}Referenced {4}Exclusive Parent {5}Path \n-{8} {4}-{10} {4}-{9} -{6} {5}-{4} \n/);
    assert.equal(s.rows['0/5'].rest, '- <toplevel>');
    assert.equal(s.rows['0/256'].rest, '- snap');
    // / rewrites f1 in place and drops f2: the new extent is its alone; the old ones the snapshot's alone
    const c = run([...BASE, 'quota enable', 'snapshot / /snap', 'write /d/f1 0 200000 9', 'unlink /d/f2', 'commit'], 'changed');
    assert.equal(c.status, 0, c.stderr);
    const t = show(c.img, '--raw').rows;
    assert.ok(t['0/5'].excl >= 200000 + 4096, JSON.stringify(t));
    assert.ok(t['0/256'].excl >= 200000 + 3000, JSON.stringify(t));
    assert.equal(t['0/256'].rfer, s.rows['0/256'].rfer, 'the snapshot references what it did');
    assert.match(execFileSync(CLI, ['check', c.img], { encoding: 'utf8' }), /0 errors found/);
  });

  test('groups: assign leaves the numbers inconsistent; a rescan counts the group', () => {
    const lines = [...BASE, 'quota enable', 'subvol create /sv', 'write /d/f3 0 50000 3', 'clone /d/f1 /sv/c', 'qgroup create 1/7', 'qgroup assign 0/5 1/7',
      'qgroup assign 0/256 1/7'];
    const r = run(lines, 'assign');
    assert.equal(r.status, 0, r.stderr);
    const s = show(r.img, '-p', '--raw');
    assert.match(s.stderr, /WARNING: qgroup data inconsistent, rescan recommended/);
    assert.equal(s.rows['0/5'].rest, '1/7 <toplevel>');
    assert.equal(s.rows['0/256'].rest, '1/7 sv');
    const q = run([...lines, 'quota rescan'], 'rescanned');
    const t = show(q.img, '-p', '--raw');
    assert.doesNotMatch(t.stderr, /inconsistent/);
    // the group references what either does (f1's extent once) and holds all of it alone
    assert.equal(t.rows['1/7'].rfer, t.rows['1/7'].excl);
    assert.ok(t.rows['1/7'].rfer < t.rows['0/5'].rfer + t.rows['0/256'].rfer, 'the shared extent counted once');
    assert.equal(t.rows['1/7'].rfer, t.rows['0/5'].excl + t.rows['0/256'].excl + (t.rows['0/5'].rfer - t.rows['0/5'].excl));
    const dump = execFileSync(CLI, ['dump-tree', '-t', 'quota', q.img], { encoding: 'utf8' });
    assert.match(dump, /key \(0 QGROUP_STATUS 0\)[^]*?version 1 generation \d+ flags ON scan 18446744073709551615/);
    assert.match(dump, /key \(0\/5 QGROUP_RELATION 1\/7\)/);
    assert.match(dump, /key \(1\/7 QGROUP_RELATION 0\/256\)/);
  });

  test('the same script, the same numbers and image', () => {
    const a = run([...BASE, 'quota enable', 'snapshot / /s', 'write /s/d/f1 0 10 4'], 'same-a');
    const b = run([...BASE, 'quota enable', 'snapshot / /s', 'write /s/d/f1 0 10 4'], 'same-b');
    assert.equal(show(a.img, '--raw').stdout, show(b.img, '--raw').stdout);
    assert.equal(execFileSync('sha256sum', [a.img], { encoding: 'utf8' }).split(' ')[0], execFileSync('sha256sum', [b.img], { encoding: 'utf8' }).split(' ')[0]);
  });

  test('bad lines and images: clear errors', () => {
    const cases = [
      [['qgroup create 1/1'], /:6: .*quotas are not enabled \(quota enable\)/],
      [['quota on'], /:6: .*'quota on': quota enable or quota rescan/],
      [['quota enable', 'qgroup create 0/9'], /:7: .*level 0 qgroups are the subvolumes' own/],
      [['quota enable', 'qgroup create 1/x'], /:7: .*'1\/x': a qgroup is LEVEL\/ID/],
      [['quota enable', 'qgroup assign 0/5 1/3'], /:7: .*qgroup 1\/3 does not exist/],
      [['quota enable', 'qgroup create 1/1', 'qgroup create 2/1', 'qgroup assign 2/1 1/1'], /:9: .*qgroup 1\/1 is not above 2\/1/],
      [['quota enable', 'qgroup create 1/1', 'qgroup create 1/1'], /:8: .*qgroup 1\/1 exists/],
      [['quota enable', 'qgroup frob 1/1'], /:7: .*qgroup create LEVEL\/ID, or qgroup assign CHILD PARENT/],
    ];
    for (const [extra, want] of cases) {
      const r = run([...BASE, ...extra], 'bad');
      assert.notEqual(r.status, 0, extra.join('; '));
      assert.match(r.stderr, want, extra.join('; '));
    }
    const plain = run(BASE, 'plain');
    const s = spawnSync(CLI, ['qgroup', 'show', plain.img], { encoding: 'utf8' });
    assert.equal(s.status, 1);
    assert.match(s.stderr, /quotas are not enabled/);
    assert.equal(spawnSync(CLI, ['qgroup', 'list', plain.img]).status, 2);
  });
});
