// Quotas in scenarios: `quota enable` (the quota tree, a qgroup per
// subvolume, a rescan), accounting at each commit, a snapshot inheriting its
// source's numbers, `qgroup create` / `assign` (inconsistent until `quota
// rescan`), and `btrfslab qgroup show`, as `btrfs qgroup show --raw`
// prints; `qgroup limit SIZE|none QGROUP [excl]` (the LIMIT item, `qgroup
// show -r -e`, and a write that would pass a limit failing with EDQUOT).
// (The kernel's and btrfs check's side: tests/kernel/qgroup.test.mjs and
// tests/kernel/qgroup-limit.test.mjs.)
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
      [['quota enable', 'qgroup frob 1/1'], /:7: .*qgroup create LEVEL\/ID, qgroup assign CHILD PARENT \(as 0\/257 1\/100\), or qgroup limit SIZE\|none QGROUP \[excl\]/],
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

/** The LIMIT item of qgroup id in a dump-tree -t quota listing: [flags, max_rfer, max_excl, rsv_rfer, rsv_excl]. */
function limitItem(img, id) {
  const dump = execFileSync(CLI, ['dump-tree', '-t', 'quota', img], { encoding: 'utf8' });
  const m = dump.match(new RegExp(`key \\(0 QGROUP_LIMIT ${id}\\) itemoff \\d+ itemsize 40\n\t\tflags (\\d+)\n\t\tmax_referenced (\\d+) max_exclusive (\\d+)\n\t\trsv_referenced (\\d+) rsv_exclusive (\\d+)\n`));
  assert.ok(m, dump);
  return m.slice(1).map(Number);
}
const LIMITED = ['mkfs nodesize=4K size=256M', 'quota enable', 'subvol create /sv', 'commit', 'create /sv/f'];
/** 64 KiB writes to /sv/f, n of them. */
const writes = (n, path = '/sv/f') => Array.from({ length: n }, (_, i) => `write ${path} ${i * 65536} 64K ${i + 1}`);

describe('qgroup limits', () => {
  test('the LIMIT item: one limit set leaves the other; none clears one (its flag, its value 0)', () => {
    const r = run([...LIMITED, 'qgroup create 1/7', 'qgroup limit 10M 0/5', 'qgroup limit 5M 0/256 excl', 'qgroup limit 3M 1/7',
      'qgroup limit 2M 1/7 excl', 'qgroup limit 1G 0/256'], 'limits');
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(limitItem(r.img, '0/5'), [1, 10485760, 0, 0, 0]);
    assert.deepEqual(limitItem(r.img, '0/256'), [3, 1073741824, 5242880, 0, 0]);
    assert.deepEqual(limitItem(r.img, '1/7'), [3, 3145728, 2097152, 0, 0]);
    const n = run([...LIMITED, 'qgroup limit 10M 0/256', 'qgroup limit 5M 0/256 excl', 'qgroup limit none 0/256'], 'none');
    assert.equal(n.status, 0, n.stderr);
    assert.deepEqual(limitItem(n.img, '0/256'), [2, 0, 5242880, 0, 0]);
    const both = run([...LIMITED, 'qgroup limit 10M 0/256', 'qgroup limit none 0/256', 'qgroup limit none 0/256 excl'], 'both');
    assert.deepEqual(limitItem(both.img, '0/256'), [0, 0, 0, 0, 0]);
    assert.match(execFileSync(CLI, ['check', both.img], { encoding: 'utf8' }), /0 errors found/);
  });

  test('qgroup show -r -e: the limits, none when unset, as btrfs qgroup show -pre --raw', () => {
    const r = run([...LIMITED, 'qgroup create 1/7', 'qgroup assign 0/256 1/7', 'quota rescan', 'qgroup limit 10M 0/5', 'qgroup limit 5M 0/256 excl',
      'qgroup limit 3M 1/7', 'qgroup limit 2M 1/7 excl'], 'show');
    assert.equal(r.status, 0, r.stderr);
    const pre = spawnSync(CLI, ['qgroup', 'show', '-pre', '--raw', r.img], { encoding: 'utf8' });
    assert.equal(pre.status, 0, pre.stderr);
    const lines = pre.stdout.split('\n');
    assert.equal(lines[0], 'Qgroupid    Referenced    Exclusive  Max referenced  Max exclusive Parent     Path ');
    assert.equal(lines[1], '--------    ----------    ---------  --------------  ------------- ------     ---- ');
    assert.match(lines[2], /^0\/5 {10,}\d+ +\d+ +10485760 +none -          <toplevel>$/);
    assert.match(lines[3], /^0\/256 {8,}\d+ +\d+ +none +5242880 1\/7        sv$/);
    assert.match(lines[4], /^1\/7 {10,}\d+ +\d+ +3145728 +2097152 -          <0 member qgroups>$/);
    // the same as separate flags; -r alone, -e alone
    assert.equal(spawnSync(CLI, ['qgroup', 'show', '-p', '-r', '-e', '--raw', r.img], { encoding: 'utf8' }).stdout, pre.stdout);
    const re = spawnSync(CLI, ['qgroup', 'show', '-re', '--raw', r.img], { encoding: 'utf8' }).stdout.split('\n');
    assert.equal(re[0], 'Qgroupid    Referenced    Exclusive  Max referenced  Max exclusive   Path ');
    assert.match(spawnSync(CLI, ['qgroup', 'show', '-r', '--raw', r.img], { encoding: 'utf8' }).stdout, /^Qgroupid {4}Referenced {4}Exclusive  Max referenced   Path \n/);
    assert.match(spawnSync(CLI, ['qgroup', 'show', '-e', '--raw', r.img], { encoding: 'utf8' }).stdout, /^Qgroupid {4}Referenced {4}Exclusive  Max exclusive   Path \n/);
    assert.equal(spawnSync(CLI, ['qgroup', 'show', '-x', r.img]).status, 2);
  });

  test('a write past a limit fails with EDQUOT, naming the qgroup, its limit and the bytes written; none lifts it', () => {
    // 1M: the subvolume's leaf (4096) + a node of metadata for the file's extent leave 1040384 bytes of data
    const r = run([...LIMITED, 'qgroup limit 1M 0/256', ...writes(20)], 'edquot');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /edquot\.txt:22: write: EDQUOT: \/sv\/f: write of 65536 bytes at 983040 passes qgroup 0\/256's limit of 1048576 referenced bytes \(it has 1044480, 0 reserved; this sector needs 4096 and 4096 of metadata\): 57344 bytes written/);
    const e = run([...LIMITED, 'qgroup limit 1M 0/256 excl', ...writes(20)], 'edquot-excl');
    assert.match(e.stderr, /edquot-excl\.txt:22: write: EDQUOT: .*qgroup 0\/256's limit of 1048576 exclusive bytes/);
    // a group above: its limit counts both subvolumes' writes
    const p = run([...LIMITED, 'subvol create /b', 'create /b/f', 'qgroup create 1/1', 'qgroup assign 0/256 1/1', 'qgroup assign 0/257 1/1', 'quota rescan',
      'qgroup limit 1M 1/1', ...writes(6), ...writes(6, '/b/f'), ...writes(20).slice(6)], 'parent');
    assert.match(p.stderr, /parent\.txt:\d+: write: EDQUOT: .*qgroup 1\/1's limit of 1048576 referenced bytes/);
    const line = Number(p.stderr.match(/parent\.txt:(\d+):/)[1]);
    assert.ok(line > 12 + 12, `stopped at line ${line}: the writes of both subvolumes count`);
    // no limit, or the limit cleared: the same writes go through; a limit that holds them changes nothing
    for (const [name, lim] of [['lifted', ['qgroup limit 1M 0/256', 'qgroup limit none 0/256']], ['roomy', ['qgroup limit 2M 0/256']]]) {
      const ok = run([...LIMITED, ...lim, ...writes(20)], name);
      assert.equal(ok.status, 0, ok.stderr);
      assert.match(execFileSync(CLI, ['check', ok.img], { encoding: 'utf8' }), /0 errors found/);
    }
    const free = run([...LIMITED, ...writes(20)], 'free');
    assert.equal(execFileSync('sha256sum', [free.img], { encoding: 'utf8' }).split(' ')[0],
      execFileSync('sha256sum', [run([...LIMITED, ...writes(20)], 'free2').img], { encoding: 'utf8' }).split(' ')[0]);
  });

  test('a subvolume in 100 groups: every one counted after a rescan, a limit on the 70th enforced', () => {
    // the groups above a subvolume had a fixed bound of 64: 1/65..1/100 showed 0 and their limits passed
    const groups = Array.from({ length: 100 }, (_, i) => [`qgroup create 1/${i + 1}`, `qgroup assign 0/256 1/${i + 1}`]).flat();
    const head = ['mkfs nodesize=4K size=256M', 'quota enable', 'subvol create /sv', ...groups, 'create /sv/f'];
    const r = run([...head, 'write /sv/f 0 65536 1', 'commit', 'quota rescan'], 'wide');
    assert.equal(r.status, 0, r.stderr);
    const s = show(r.img, '-p', '--raw');
    assert.equal(s.rows['0/256'].rfer, 69632); // the kernel's rescan: 64 KiB of data and the subvolume's leaf
    for (let i = 1; i <= 100; i++) assert.deepEqual([s.rows[`1/${i}`].rfer, s.rows[`1/${i}`].excl], [69632, 69632], `1/${i}`);
    assert.equal(s.rows['0/256'].rest.split(' ')[0].split(',').length, 100, 'qgroup show -p lists all 100 parents');
    assert.match(execFileSync(CLI, ['check', r.img], { encoding: 'utf8' }), /0 errors found/);
    // an 8 KiB limit on the 70th parent stops a 1 MiB write
    const l = run([...head, 'commit', 'quota rescan', 'qgroup limit 8K 1/70', 'write /sv/f 0 1M 1'], 'wide-limit');
    assert.notEqual(l.status, 0);
    assert.match(l.stderr, /wide-limit\.txt:\d+: write: EDQUOT: \/sv\/f: write of 1048576 bytes at 0 passes qgroup 1\/70's limit of 8192 referenced bytes/);
  });

  test('a lattice of groups: a group reached twice above a subvolume counts it once', () => {
    // relations read from an image always go up in id (the child's id is below its parent's), so the walk
    // above a subvolume cannot cycle; diamonds it can meet, and counts each group once
    const r = run(['mkfs nodesize=4K size=256M', 'quota enable', 'subvol create /sv', 'qgroup create 1/1', 'qgroup create 1/2', 'qgroup create 2/1',
      'qgroup assign 0/256 1/1', 'qgroup assign 0/256 1/2', 'qgroup assign 1/1 2/1', 'qgroup assign 1/2 2/1', 'create /sv/f', 'write /sv/f 0 8192 1',
      'commit', 'quota rescan', 'write /sv/f 8192 8192 2', 'commit'], 'diamond');
    assert.equal(r.status, 0, r.stderr);
    const rows = show(r.img, '--raw').rows;
    for (const id of ['0/256', '1/1', '1/2', '2/1']) assert.deepEqual([rows[id].rfer, rows[id].excl], [20480, 20480], id);
  });

  test('bad limit lines: clear errors with their line', () => {
    const cases = [
      [['qgroup limit 1M 0/5'], /bad\.txt:5: qgroup: EINVAL: quotas are not enabled \(quota enable\)/],
      [['quota enable', 'qgroup limit 1M 0/300'], /bad\.txt:6: qgroup: ENOENT: qgroup 0\/300 does not exist/],
      [['quota enable', 'qgroup limit 1X 0/5'], /bad\.txt:6: qgroup: EPARSE: limit '1X' is not a number \(sizes take K, M or G\)/],
      [['quota enable', 'qgroup limit -1 0/5'], /bad\.txt:6: qgroup: EPARSE: limit '-1' is not a number/],
      [['quota enable', 'qgroup limit 1M 0/x'], /bad\.txt:6: qgroup: EPARSE: '0\/x': a qgroup is LEVEL\/ID/],
      [['quota enable', 'qgroup limit 1M'], /bad\.txt:6: qgroup: EPARSE: expects qgroup limit SIZE\|none QGROUP \[excl\]/],
      [['quota enable', 'qgroup limit 1M 0/5 rfer'], /bad\.txt:6: qgroup: EPARSE: expects qgroup limit SIZE\|none QGROUP \[excl\]/],
    ];
    for (const [extra, want] of cases) {
      const r = run(['mkfs nodesize=4K size=256M', 'subvol create /sv', 'commit', 'create /sv/f', ...extra], 'bad');
      assert.notEqual(r.status, 0, extra.join('; '));
      assert.match(r.stderr, want, extra.join('; '));
    }
  });
});
