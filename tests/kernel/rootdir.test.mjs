// mkfs --rootdir: the kernel's view of the image equals the source tree
// (contents, modes, owners, link counts, symlink targets, device numbers,
// xattrs, times); then the kernel changes it and our reader agrees.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, utimesSync, writeFileSync, chmodSync, chownSync } from 'node:fs';

import { join } from 'node:path';
import { describe, test } from 'node:test';

import { btrfsCheck, CLI, COMPARE, run, scratchDir, skipReason, withMount } from './lib.mjs';
import { dataBytes } from './model.mjs';

const skip = skipReason();
const dir = scratchDir('rootdir');

/** A source tree with every kind of file the copy must keep. */
function craftedSource() {
  const src = join(dir, 'src');
  mkdirSync(join(src, 'deep/er/still/deeper'), { recursive: true });
  writeFileSync(join(src, 'empty'), '');
  writeFileSync(join(src, 'tiny'), 'x');
  writeFileSync(join(src, 'inline-max'), Buffer.alloc(2048, 7));
  writeFileSync(join(src, 'just-past-inline'), Buffer.alloc(2049, 8));
  writeFileSync(join(src, 'deep/er/big.bin'), dataBytes(5, 0, 3 * 1024 * 1024 + 17));
  writeFileSync(join(src, 'deep/er/still/deeper/file'), 'deep\n');
  linkSync(join(src, 'tiny'), join(src, 'deep/tiny-link'));
  linkSync(join(src, 'tiny'), join(src, 'deep/er/tiny-link2'));
  symlinkSync('tiny', join(src, 'rel-link'));
  symlinkSync('/absolute/target/that/does/not/exist', join(src, 'dangling'));
  symlinkSync('x'.repeat(1000), join(src, 'long-target'));
  run('mknod', [join(src, 'char'), 'c', '1', '3']);
  run('mknod', [join(src, 'block'), 'b', '7', '300']);
  run('mkfifo', [join(src, 'fifo')]);
  chmodSync(join(src, 'tiny'), 0o4751);
  chmodSync(join(src, 'deep'), 0o1777);
  chownSync(join(src, 'empty'), 1234, 5678);
  execFileSync('python3', ['-c', `import os; os.setxattr(${JSON.stringify(join(src, 'empty'))}, 'user.note', b'hello'); os.setxattr(${JSON.stringify(join(src, 'deep'))}, 'user.dir', b'\\x00\\x01binary'); os.setxattr(${JSON.stringify(join(src, 'tiny'))}, 'trusted.t', b'v' * 300)`]);
  for (let i = 0; i < 600; i++) writeFileSync(join(src, 'deep/er', `n${i}`), i % 3 ? '' : `${i}`.repeat(i % 50));
  utimesSync(join(src, 'deep/er/big.bin'), 1_000_000_000.123, 1_234_567_890.5);
  return src;
}

function compare(a, b) {
  return JSON.parse(execFileSync('python3', [COMPARE, a, b], { encoding: 'utf8', maxBuffer: 1 << 26 }));
}

function lsR(img) {
  return execFileSync(CLI, ['ls', '-R', '-l', img], { encoding: 'utf8', maxBuffer: 1 << 28 }).trim().split('\n').sort();
}

/** What the kernel shows, in the format of `btrfslab ls -R -l`. */
function kernelLsR(mnt) {
  const out = execFileSync('find', ['.', '-mindepth', '1', '-printf', '%M\t%n\t%U\t%G\t%s\t/%P\t%l\n'], { cwd: mnt, encoding: 'utf8', maxBuffer: 1 << 28 });
  return out.split('\n').filter(Boolean).map((l) => {
    const [mode, nlink, uid, gid, size, path, target] = l.split('\t');
    return `${mode} ${nlink} ${uid} ${gid} ${size} ${path}${mode[0] === 'l' ? ` -> ${target}` : ''}`;
  }).sort();
}

describe('mkfs --rootdir, as the kernel sees it', { skip }, () => {
  const sources = [['crafted tree', craftedSource]];
  if (existsSync('/usr/include')) sources.push(['/usr/include', () => '/usr/include']);
  for (const [name, make] of sources) {
    test(`${name}: check, read-only mount equals the source, then the kernel writes and our reader agrees`, async () => {
      const src = make();
      const img = join(dir, `${name.replace(/\W/g, '_')}.img`);
      execFileSync(CLI, ['mkfs', '--rootdir', src, img]);
      let c = btrfsCheck(img, ['--check-data-csum']);
      assert.ok(c.ok, c.output);
      await withMount(img, (mnt) => assert.deepEqual(compare(src, mnt), []), { readOnly: true });
      // the kernel adds 1,000 files and deletes 100 of them
      await withMount(img, (mnt) => {
        mkdirSync(join(mnt, 'added'));
        for (let i = 0; i < 1000; i++) writeFileSync(join(mnt, 'added', `f${i}`), i % 10 ? '' : dataBytes(i, 0, 5000 + i));
        for (let i = 0; i < 1000; i += 10) unlinkSync(join(mnt, 'added', `f${i}`));
      });
      c = btrfsCheck(img, ['--check-data-csum']);
      assert.ok(c.ok, c.output);
      const ours = lsR(img);
      assert.ok(ours.length > 1000, 'ls -R lists the tree');
      await withMount(img, (mnt) => {
        assert.deepEqual(ours, kernelLsR(mnt));
        for (const f of ['added/f11', 'added/f999']) {
          const cat = execFileSync(CLI, ['cat', img, `/${f}`]);
          assert.ok(cat.equals(readFileSync(join(mnt, f))), `cat /${f}`);
        }
      }, { readOnly: true });
    });
  }

  test('--size too small for the source says how much it needs', () => {
    const src = join(dir, 'big-src');
    mkdirSync(src);
    writeFileSync(join(src, 'big'), dataBytes(1, 0, 40 << 20));
    const r = execFileSync('sh', ['-c', `${CLI} mkfs --rootdir ${src} --size 24M ${join(dir, 'small.img')} 2>&1; echo rc=$?`], { encoding: 'utf8' });
    assert.match(r, /does not fit in 25165824 bytes: it needs about \d+/);
    assert.match(r, /rc=1/);
    assert.ok(!existsSync(join(dir, 'small.img')), 'no image left behind');
  });
});
