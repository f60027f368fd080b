#!/usr/bin/env node
// Writes the fuzzers' seed corpus into wasm-core/fuzz/corpus/: images (as
// BLFZ) for the image targets, scripts for the scenario target. Made from:
// btrfslab's images at 4K/16K/64K nodes and one holding a pending log;
// mkfs.btrfs's at three node sizes; one the kernel changed (when loop
// devices can be used); the crafted hostile images of tests/cli.
//   node wasm-core/fuzz/make-corpus.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pack } from './blfz.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = process.env.BTRFSLAB_CLI || join(here, '..', 'build', 'btrfslab');
const out = join(here, 'corpus');
const images = join(out, 'images'), scripts = join(out, 'scripts');
const tmp = mkdtempSync(join(tmpdir(), 'btrfslab-corpus-'));
rmSync(out, { recursive: true, force: true });
mkdirSync(images, { recursive: true });
mkdirSync(scripts, { recursive: true });

const SCRIPT = (ns, size) => `mkfs nodesize=${ns} size=${size}
mkdir /d
mkdir /d/sub
create /d/f_{1..40}
write /d/f_1 0 20000 1
write /d/f_2 0 100 2
create /sparse
truncate /sparse 10M
write /sparse 5000000 5000 3
symlink /d/f_1 /d/link
link /d/f_1 /d/sub/hard
setxattr /d/f_2 user.a value
rename /d/f_3 /d/sub/moved
unlink /d/f_4
`;

function add(name, img) {
  writeFileSync(join(images, `${name}.blfz`), pack(readFileSync(img)));
}
function run(name, script) {
  const s = join(tmp, `${name}.txt`), img = join(tmp, `${name}.img`);
  writeFileSync(s, script);
  execFileSync(CLI, ['run', s, '--image', img, '--seed', '1', '--time', '1700000000']);
  writeFileSync(join(scripts, `${name}.txt`), script);
  return img;
}

try {
  for (const [ns, size] of [['4K', '24M'], ['16K', '32M'], ['64K', '64M']]) add(`ours-${ns}`, run(`ours-${ns}`, SCRIPT(ns, size)));
  add('ours-pending-log', run('ours-pending-log', `${SCRIPT('4K', '24M')}commit\nwrite /d/f_5 0 9000 4\nsetxattr /d/f_5 user.b x\nfsync /d/f_5\nfsync /d\ncrash\n`));
  const src = join(tmp, 'src');
  mkdirSync(join(src, 'dir'), { recursive: true });
  writeFileSync(join(src, 'dir', 'file'), 'hello\n'.repeat(1000));
  writeFileSync(join(src, 'small'), 'x');
  for (const ns of [4096, 16384, 65536]) {
    const img = join(tmp, `progs-${ns}.img`);
    execFileSync('truncate', ['-s', '128M', img]);
    execFileSync('mkfs.btrfs', ['-q', '-f', '-n', String(ns), '-U', '11111111-2222-3333-4444-555555555555', '--rootdir', src, img]);
    add(`progs-${ns}`, img);
  }
  // the kernel's hand on one of them
  const k = join(tmp, 'kernel.img');
  copyFileSync(join(tmp, 'progs-16384.img'), k);
  const mnt = join(tmp, 'mnt');
  mkdirSync(mnt);
  if (spawnSync('mount', ['-o', 'loop', k, mnt]).status === 0) {
    try {
      for (let i = 0; i < 50; i++) writeFileSync(join(mnt, `k${i}`), `kernel ${i}\n`.repeat(i * 50));
      rmSync(join(mnt, 'small'));
      mkdirSync(join(mnt, 'kdir'));
    } finally {
      execFileSync('umount', [mnt]);
    }
    add('kernel-changed', k);
  } else {
    console.error('make-corpus: cannot loop-mount here; no kernel-changed image');
  }
  // the crafted hostile images (the 15 TB one is the base image padded)
  const { makeHostileImages } = await import('../../tests/cli/hostile-images.mjs');
  for (const c of makeHostileImages(join(tmp, 'hostile'), '/nonexistent-sentinel')) {
    if (statSync(c.img).size <= 256 * 2 ** 20 && !/deep/.test(c.name)) add(`hostile-${c.name}`, c.img);
  }
  const lessons = join(here, '..', '..', 'lessons');
  for (const l of readdirSync(lessons)) {
    try { copyFileSync(join(lessons, l, 'scenario.txt'), join(scripts, `lesson-${basename(l)}.txt`)); } catch { /* no scenario */ }
  }
  writeFileSync(join(scripts, 'limits.txt'), 'create /f_{18446744073709551613..18446744073709551615}\nwrite /f_18446744073709551615 0 5000 1\n');
  for (const dir of [images, scripts]) {
    const files = readdirSync(dir);
    const bytes = files.reduce((s, f) => s + statSync(join(dir, f)).size, 0);
    console.log(`${dir}: ${files.length} files, ${(bytes / 1024).toFixed(0)} KiB`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
