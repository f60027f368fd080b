// `subvol set-default`, against the kernel. The same work done by the core
// and by the kernel (its VFS, `btrfs subvolume set-default`, on a mkfs.btrfs
// image): the root tree's "default" DIR_ITEM and the superblock's incompat
// flags are the same in both (dump-tree, dump-super). Our image passes
// `btrfs check`; the kernel, mounting it without subvol=, shows the default
// subvolume's files at the mount point, and `btrfs subvolume get-default`
// prints its id. The kernel refuses to delete the default subvolume (EPERM,
// through rmdir, which progs does not stop first), as the core does.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { runInKernel } from './kernel-run.mjs';
import { btrfsCheck, CLI, scratchDir, skipReason, withMount } from './lib.mjs';

const skip = skipReason();
const dir = scratchDir('default');

/** The commands both sides run, and the script that says them to the core. */
function work(target, extra = []) {
  const cmds = [['mkdir', '/d'], ['subvol', 'create', '/sv'], ['create', '/sv/hello'], ['write', '/sv/hello', 0, 5000, 3], ['create', '/top'],
    ['commit'], ['snapshot', '/sv', '/snap', 'ro'], ['subvol', 'set-default', target], ...extra];
  const text = ['mkfs nodesize=4K size=256M', ...cmds.map((c) => c.join(' '))].join('\n') + '\n';
  return { cmds, text };
}
const progs = (...args) => execFileSync('btrfs', args, { encoding: 'utf8', maxBuffer: 1 << 26 });
/** The default DIR_ITEM (its four lines) of a root tree listing. */
/** A snapshot's ROOT_ITEM key offset is the generation that made it, which
 * differs between the two (mkfs.btrfs commits more often than ours): the
 * entry must name that key, and is compared with it written as SNAPGEN. */
const defaultItem = (img) => {
  const dump = progs('inspect-internal', 'dump-tree', '-t', 'root', img);
  const snap = dump.match(/item \d+ key \(257 ROOT_ITEM (\d+)\)/);
  const m = dump.match(/key \(ROOT_TREE_DIR DIR_ITEM 2378154706\) itemoff \d+ itemsize \d+\n(\t\t.*\n){3}/);
  assert.ok(m, `${img}: no default DIR_ITEM`);
  return m[0].replace(/itemoff \d+ /, '').replace(snap ? `(257 ROOT_ITEM ${snap[1]})` : /^$/, '(257 ROOT_ITEM SNAPGEN)');
};
const incompat = (img) => progs('inspect-internal', 'dump-super', img).match(/^incompat_flags\t+(\S+)/m)[1];

function ours(name, text) {
  const script = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(script, text);
  execFileSync(CLI, ['run', script, '--image', img], { stdio: ['ignore', 'pipe', 'pipe'] });
  return img;
}
async function theirs(name, cmds) {
  const img = join(dir, `${name}-kernel.img`);
  execFileSync('truncate', ['-s', '256M', img]);
  execFileSync('mkfs.btrfs', ['-q', '-f', '-n', '4096', img]);
  await withMount(img, (mnt) => runInKernel(cmds, mnt));
  return img;
}

describe('subvol set-default: the kernel writes the same, and mounts our default', { skip }, () => {
  for (const target of ['/sv', '/snap', '/']) {
    test(`set-default ${target}: the default entry and the incompat flags as the kernel's`, async () => {
      const { cmds, text } = work(target);
      const o = ours(`o${target.length}`, text), t = await theirs(`t${target.length}`, cmds);
      assert.equal(defaultItem(o), defaultItem(t));
      assert.match(defaultItem(o), { '/sv': /\(256 ROOT_ITEM 0\)/, '/snap': /\(257 ROOT_ITEM SNAPGEN\)/, '/': /\(FS_TREE ROOT_ITEM 0\)/ }[target]);
      assert.equal(incompat(o), incompat(t));
      const c = btrfsCheck(o);
      assert.ok(c.ok, c.output);
    });
  }

  test('the kernel mounts our image at the default subvolume; get-default prints its id', async () => {
    const img = ours('mount', work('/sv').text);
    const seen = await withMount(img, (mnt) => ({
      names: readdirSync(mnt).sort(),
      hello: execFileSync('stat', ['-c', '%s', join(mnt, 'hello')], { encoding: 'utf8' }).trim(),
      def: progs('subvolume', 'get-default', mnt),
    }));
    assert.deepEqual(seen.names, ['hello']);
    assert.equal(seen.hello, '5000');
    assert.match(seen.def, /^ID 256 gen \d+ top level 5 path sv\n$/);
    const c = btrfsCheck(img);
    assert.ok(c.ok, c.output);
    // the whole filesystem is still there from the top level, for the kernel and for `btrfslab ls`
    const top = await withMount(img, (mnt) => readdirSync(mnt).sort(), { options: ['subvolid=5'] });
    assert.deepEqual(top, ['d', 'snap', 'sv', 'top']);
    assert.deepEqual(execFileSync(CLI, ['ls', img, '/'], { encoding: 'utf8' }).trim().split('\n').sort(), ['d', 'snap', 'sv', 'top']);
  });

  test('deleting the default subvolume: EPERM from the kernel and from the core', async () => {
    const { cmds, text } = work('/e', [['subvol', 'delete', '/e']]);
    cmds.splice(cmds.length - 2, 0, ['subvol', 'create', '/e']);
    const lines = text.trim().split('\n');
    lines.splice(lines.length - 2, 0, 'subvol create /e');
    const script = join(dir, 'del.txt');
    writeFileSync(script, lines.join('\n') + '\n');
    const r = spawnSync(CLI, ['run', script, '--image', join(dir, 'del.img')], { encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /del\.txt:11: subvol: EPERM: \/e: deleting default subvolume 258 is not allowed/);
    const img = join(dir, 'del-kernel.img');
    execFileSync('truncate', ['-s', '256M', img]);
    execFileSync('mkfs.btrfs', ['-q', '-f', '-n', '4096', img]);
    const err = await withMount(img, (mnt) => {
      runInKernel(cmds.slice(0, -1), mnt);
      try {
        rmdirSync(join(mnt, 'e')); // an empty subvolume: rmdir deletes it, unless it is the default
        return null;
      } catch (e) {
        return e.code;
      }
    });
    assert.equal(err, 'EPERM');
  });
});
