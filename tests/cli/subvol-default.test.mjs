// `subvol set-default PATH` in scenarios, as `btrfs subvolume set-default`:
// the root tree directory's "default" entry names the subvolume's ROOT_ITEM
// key (a snapshot's with its generation as offset), and the superblock gains
// DEFAULT_SUBVOL, as the kernel writes them (checked against the kernel in
// tests/kernel/subvol-default.test.mjs). ls, cat and extract still show the
// whole filesystem from the top level; the default subvolume cannot be
// deleted (EPERM, as the kernel refuses); bad lines are clear errors.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-default-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function run(lines, name) {
  const script = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(script, lines.join('\n') + '\n');
  return { ...spawnSync(CLI, ['run', script, '--image', img], { encoding: 'utf8' }), img };
}
const BASE = ['mkfs nodesize=4K size=256M', 'mkdir /d', 'subvol create /sv', 'create /sv/hello', 'write /sv/hello 0 5000 3', 'create /top'];
/** The "default" DIR_ITEM of a dump-tree listing: its location line. */
const defaultEntry = (img) => {
  const dump = execFileSync(CLI, ['dump-tree', '-t', 'root', img], { encoding: 'utf8' });
  const m = dump.match(/key \(ROOT_TREE_DIR DIR_ITEM 2378154706\) itemoff \d+ itemsize 37\n\t\tlocation key \(([^)]*)\) type DIR\n\t\ttransid 0 data_len 0 name_len 7\n\t\tname: default\n/);
  assert.ok(m, dump);
  return m[1];
};
/** The superblock's incompat flags (bytes 0xbc..0xc4 of the primary copy at 64 KiB). */
const incompat = (img) => readFileSync(img).readBigUInt64LE(0x10000 + 0xbc);
const DEFAULT_SUBVOL = 2n;

describe('subvol set-default', () => {
  test('the default entry names the subvolume, the superblock says DEFAULT_SUBVOL; ls and cat still start at the top', () => {
    const plain = run(BASE, 'plain');
    assert.equal(plain.status, 0, plain.stderr);
    assert.equal(defaultEntry(plain.img), 'FS_TREE ROOT_ITEM 18446744073709551615', 'mkfs names the top level');
    assert.equal(incompat(plain.img) & DEFAULT_SUBVOL, 0n);

    const r = run([...BASE, 'subvol set-default /sv'], 'sv');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(defaultEntry(r.img), '256 ROOT_ITEM 0');
    assert.equal(incompat(r.img) & DEFAULT_SUBVOL, DEFAULT_SUBVOL);
    assert.deepEqual(execFileSync(CLI, ['ls', '-R', r.img, '/'], { encoding: 'utf8' }).trim().split('\n').sort(), ['/d', '/sv', '/sv/hello', '/top']);
    assert.equal(execFileSync(CLI, ['cat', r.img, '/sv/hello']).length, 5000);
    const out = join(dir, 'extracted');
    execFileSync(CLI, ['extract', r.img, out]);
    assert.equal(readFileSync(join(out, 'sv/hello')).length, 5000);
    assert.match(execFileSync(CLI, ['check', r.img], { encoding: 'utf8' }), /0 errors found/);
  });

  test('a snapshot is named by its ROOT_ITEM key (offset: its generation); / sets the top level back, the flag stays', () => {
    const r = run([...BASE, 'commit', 'snapshot /sv /snap ro', 'subvol set-default /snap'], 'snap');
    assert.equal(r.status, 0, r.stderr);
    const dump = execFileSync(CLI, ['dump-tree', '-t', 'root', r.img], { encoding: 'utf8' });
    const key = dump.match(/key \((257 ROOT_ITEM \d+)\)/)[1];
    assert.notEqual(key, '257 ROOT_ITEM 0');
    assert.equal(defaultEntry(r.img), key, 'a read-only snapshot may be the default');
    const back = run([...BASE, 'subvol set-default /sv', 'subvol set-default /'], 'back');
    assert.equal(back.status, 0, back.stderr);
    assert.equal(defaultEntry(back.img), 'FS_TREE ROOT_ITEM 0');
    assert.equal(incompat(back.img) & DEFAULT_SUBVOL, DEFAULT_SUBVOL, 'the kernel leaves the flag set');
  });

  test('the default subvolume cannot be deleted (EPERM); another can, and so can it once the default moves', () => {
    const r = run([...BASE, 'subvol create /other', 'subvol set-default /sv', 'subvol delete /other', 'subvol delete /sv'], 'del');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /del\.txt:10: subvol: EPERM: \/sv: deleting default subvolume 256 is not allowed/);
    const ok = run([...BASE, 'subvol set-default /sv', 'subvol set-default /', 'subvol delete /sv'], 'del-ok');
    assert.equal(ok.status, 0, ok.stderr);
  });

  test('bad lines: clear errors with their line', () => {
    const cases = [
      ['subvol set-default /nope', /bad\.txt:7: subvol: ENOENT: \/nope: no such file or directory/],
      ['subvol set-default /d', /bad\.txt:7: subvol: EINVAL: set-default \/d: not a subvolume \(the top level is \/\)/],
      ['subvol set-default /sv/hello', /bad\.txt:7: subvol: EINVAL: set-default \/sv\/hello: not a subvolume/],
      ['subvol set-default', /bad\.txt:7: subvol: EPARSE: expects subvol create PATH, subvol delete PATH \[nosync\], subvol set-default PATH or subvol sync/],
      ['subvol set-default /sv /d', /bad\.txt:7: subvol: EPARSE: expects subvol create PATH, subvol delete PATH \[nosync\], subvol set-default PATH or subvol sync/],
      ['subvol default /sv', /bad\.txt:7: subvol: EPARSE: 'subvol default': subvol create PATH, subvol delete PATH \[nosync\], subvol set-default PATH or subvol sync/],
    ];
    for (const [line, want] of cases) {
      const r = run([...BASE, line], 'bad');
      assert.notEqual(r.status, 0, line);
      assert.match(r.stderr, want, line);
    }
  });
});
