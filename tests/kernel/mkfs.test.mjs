// The kernel decides: images from `btrfslab mkfs` mount read-write, keep what
// is written through the mount, and pass btrfs check before and after; our
// dump-tree header and item lines equal btrfs-progs' on ours and on theirs.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { btrfsCheck, CLI, dumpTreeAll, progsDumpTree, run, scratchDir, skipReason, withMount } from './lib.mjs';

const skip = skipReason();
const dir = scratchDir('kernel');

function mkfs(name, args) {
  const img = join(dir, name);
  run(CLI, ['mkfs', ...args, img]);
  return img;
}

describe('btrfslab mkfs images in the kernel', { skip }, () => {
  for (const [nodesize, size] of [['4K', '64M'], ['16K', '256M'], ['64K', '128M']]) {
    test(`nodesize ${nodesize}, ${size}: check, mount rw, write, remount, read, check`, async () => {
      const img = mkfs(`n${nodesize}.img`, ['--nodesize', nodesize, '--size', size, '--label', `lab-${nodesize}`]);
      let c = btrfsCheck(img);
      assert.ok(c.ok, c.output);
      const data = Buffer.alloc(3 * 1024 * 1024 + 123);
      for (let i = 0; i < data.length; i++) data[i] = (i * 131 + 7) & 0xff;
      const digest = createHash('sha256').update(data).digest('hex');
      await withMount(img, (mnt) => {
        writeFileSync(join(mnt, 'hello.txt'), 'hello from the kernel\n');
        writeFileSync(join(mnt, 'data.bin'), data);
        run('mkdir', ['-p', join(mnt, 'dir/sub')]);
        writeFileSync(join(mnt, 'dir/sub/small'), 'x');
      });
      await withMount(img, (mnt) => {
        assert.equal(readFileSync(join(mnt, 'hello.txt'), 'utf8'), 'hello from the kernel\n');
        assert.equal(createHash('sha256').update(readFileSync(join(mnt, 'data.bin'))).digest('hex'), digest);
        assert.equal(readFileSync(join(mnt, 'dir/sub/small'), 'utf8'), 'x');
      }, { readOnly: true });
      c = btrfsCheck(img, ['--check-data-csum']);
      assert.ok(c.ok, c.output);
      assert.equal(run('btrfs', ['filesystem', 'label', img]).trim(), `lab-${nodesize}`);
    });
  }

  test('the smallest size mkfs accepts is usable', async () => {
    const img = mkfs('min.img', ['--size', '24M']);
    await withMount(img, (mnt) => {
      for (let i = 0; i < 50; i++) writeFileSync(join(mnt, `f${i}`), `${i}\n`);
    });
    const c = btrfsCheck(img);
    assert.ok(c.ok, c.output);
  });
});

describe('dump-tree output equals btrfs-progs, line for line', { skip }, () => {
  test('on our image, before and after the kernel wrote to it, and with a pending kernel log', async () => {
    const img = mkfs('dump.img', ['--size', '256M', '--seed', '5', '--time', '1700000000']);
    const ours = () => dumpTreeAll(run(CLI, ['dump-tree', img], { maxBuffer: 1 << 28 }));
    assert.deepEqual(ours(), dumpTreeAll(progsDumpTree(img)));
    await withMount(img, (mnt) => {
      for (let i = 0; i < 300; i++) writeFileSync(join(mnt, `file_${i}`), 'y'.repeat(i * 10));
    });
    const afterKernel = ours();
    assert.deepEqual(afterKernel, dumpTreeAll(progsDumpTree(img)));
    assert.ok(afterKernel.some((l) => l.startsWith('node ')), 'the kernel grew a tree past one leaf');
    // a pending log: copy the image while the kernel has it mounted after an fsync
    const withLog = join(dir, 'withlog.img');
    await withMount(img, (mnt) => {
      writeFileSync(join(mnt, 'logged'), 'x'.repeat(9000));
      run('sync', []);
      writeFileSync(join(mnt, 'logged2'), 'y'.repeat(5000));
      run('xfs_io', ['-c', 'fsync', join(mnt, 'logged2')]);
      run('cp', ['--sparse=always', img, withLog]);
    }, { options: ['commit=600'] });
    const logged = dumpTreeAll(run(CLI, ['dump-tree', withLog], { maxBuffer: 1 << 28 }));
    assert.ok(logged.includes('log root tree'), 'the copy holds a pending log');
    assert.deepEqual(logged, dumpTreeAll(progsDumpTree(withLog)));
    // one tree with -t, each as progs prints it: its title, its blocks, the totals after (not the root tree's, nor
    // the chunk tree's); by name and by number
    for (const t of ['root', 'chunk', 'extent', 'dev', 'fs', 'csum', 'uuid', 'free_space', '2', '7', '10']) {
      assert.deepEqual(dumpTreeAll(run(CLI, ['dump-tree', '-t', t, withLog], { maxBuffer: 1 << 28 })),
        dumpTreeAll(run('btrfs', ['inspect-internal', 'dump-tree', '-t', t, withLog], { maxBuffer: 1 << 28 })), `-t ${t}`);
    }
  });

  for (const ns of ['4096', '16384', '65536']) {
    test(`on a mkfs.btrfs image, nodesize ${ns}`, () => {
      const img = join(dir, `progs-${ns}.img`);
      writeFileSync(img, '');
      run('truncate', ['-s', '256M', img]);
      run('mkfs.btrfs', ['-q', '-f', '-n', ns, img]);
      assert.deepEqual(dumpTreeAll(run(CLI, ['dump-tree', img])), dumpTreeAll(progsDumpTree(img)));
    });
  }
});
