#!/usr/bin/env node
// Writes the fuzzers' seed corpus into wasm-core/fuzz/corpus/: images (as
// BLFZ) for the image targets, scripts for the scenario target. Made from:
// btrfslab's images at 4K/16K/64K nodes and one holding a pending log
// (fixed --seed and --time: the same bytes every time); mkfs.btrfs's at
// three node sizes (fixed UUID and source times); one of ours the kernel
// changed (loop-mounted read-write, when this machine can); the crafted
// hostile images and scripts of tests/cli/make-hostile.mjs and those of
// tests/cli/hostile-writers.mjs (balance's and replay's); the lessons'
// scenarios. Every image is checked to round-trip through BLFZ and open.
//   node wasm-core/fuzz/make-corpus.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pack, unpackToFile } from './blfz.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = process.env.BTRFSLAB_CLI || join(here, '..', 'build', 'btrfslab');
const out = join(here, 'corpus');
const images = join(out, 'images'), scripts = join(out, 'scripts');
const tmp = mkdtempSync(join(tmpdir(), 'btrfslab-corpus-'));
const SEED = ['--seed', '1', '--time', '1700000000'];
const MAX_BLFZ = 2 << 20; // larger seeds make every execution slow

// dirs, files, a hard link, a symlink, xattrs, a sparse file, an inline file, a rename and an unlink
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
setxattr /d/sub user.dir "a longer value for a directory"
rename /d/f_3 /d/sub/moved
unlink /d/f_4
`;

/** Packs img as images/NAME.blfz after checking that it round-trips and opens. */
function add(name, img, { mustOpen = true } = {}) {
  const blfz = pack(readFileSync(img));
  if (blfz.length > MAX_BLFZ) {
    console.error(`make-corpus: ${name} skipped (${blfz.length} bytes packed)`);
    return;
  }
  const back = join(tmp, 'roundtrip.img');
  if (!unpackToFile(blfz, back)) throw new Error(`${name}: does not unpack`);
  if (!pack(readFileSync(back)).equals(blfz)) {
    throw new Error(`${name}: changed by the round trip (a checksum was wrong?)`);
  }
  const r = spawnSync(CLI, ['ls', back], { encoding: 'utf8' });
  if (mustOpen && r.status !== 0) throw new Error(`${name}: does not open after the round trip: ${r.stderr}`);
  writeFileSync(join(images, `${name}.blfz`), blfz);
}

function run(name, script) {
  const s = join(tmp, `${name}.txt`), img = join(tmp, `${name}.img`);
  writeFileSync(s, script);
  execFileSync(CLI, ['run', s, '--image', img, ...SEED]);
  writeFileSync(join(scripts, `${name}.txt`), script);
  return img;
}

rmSync(images, { recursive: true, force: true }); // corpus/min (long runs' minimized inputs) stays
rmSync(scripts, { recursive: true, force: true });
mkdirSync(images, { recursive: true });
mkdirSync(scripts, { recursive: true });
try {
  for (const [ns, size] of [['4K', '24M'], ['16K', '32M'], ['64K', '64M']]) add(`ours-${ns}`, run(`ours-${ns}`, SCRIPT(ns, size)));
  add('ours-pending-log', run('ours-pending-log',
    `${SCRIPT('4K', '24M')}commit\nwrite /d/f_5 0 9000 4\nsetxattr /d/f_5 user.b x\ncreate /d/new\nfsync /d/f_5\nfsync /d\ncrash\n`));

  const src = join(tmp, 'src');
  mkdirSync(join(src, 'dir'), { recursive: true });
  writeFileSync(join(src, 'dir', 'file'), 'hello\n'.repeat(1000));
  writeFileSync(join(src, 'small'), 'x');
  for (const p of [join(src, 'dir', 'file'), join(src, 'small'), join(src, 'dir'), src]) utimesSync(p, 1700000000, 1700000000);
  for (const ns of [4096, 16384, 65536]) {
    const img = join(tmp, `progs-${ns}.img`);
    execFileSync('truncate', ['-s', '128M', img]);
    execFileSync('mkfs.btrfs', ['-q', '-f', '-n', String(ns), '-U', '11111111-2222-3333-4444-555555555555', '--rootdir', src, img]);
    add(`progs-${ns}`, img);
  }

  // the kernel's hand on one of ours: files added and deleted, a directory made
  const { kernelUnavailable, withMount } = await import('../../tests/kernel/lib.mjs');
  const why = kernelUnavailable();
  if (why) {
    console.error(`make-corpus: no kernel-changed image (${why})`);
  } else {
    const k = join(tmp, 'kernel.img');
    copyFileSync(join(tmp, 'ours-16K.img'), k);
    await withMount(k, (mnt) => {
      for (let i = 0; i < 30; i++) writeFileSync(join(mnt, 'd', `k${i}`), `kernel ${i}\n`.repeat(i * 40));
      rmSync(join(mnt, 'd', 'f_10'));
      rmSync(join(mnt, 'd', 'f_1'));
      mkdirSync(join(mnt, 'kdir'));
      spawnSync('setfattr', ['-n', 'user.k', '-v', 'kernel', join(mnt, 'kdir')]);
    });
    add('kernel-changed', k);
  }

  // the crafted hostile images and scripts
  const { makeHostile } = await import('../../tests/cli/make-hostile.mjs');
  for (const c of await makeHostile(join(tmp, 'hostile'), { cli: CLI })) {
    if (c.kind === 'script') copyFileSync(c.file, join(scripts, `hostile-${c.name}.txt`));
    else if (!c.huge && !c.deep && statSync(c.file).size <= 256 * 2 ** 20) add(`hostile-${c.name}`, c.file, { mustOpen: false });
  }

  // the crafted images the writers (balance, replay) must refuse
  const { makeWriterCases } = await import('../../tests/cli/hostile-writers.mjs');
  for (const c of makeWriterCases(join(tmp, 'writers'))) add(`writers-${c.name}`, c.img, { mustOpen: false });

  const lessons = join(here, '..', '..', 'lessons');
  for (const l of readdirSync(lessons)) {
    try { copyFileSync(join(lessons, l, 'scenario.txt'), join(scripts, `lesson-${l}.txt`)); } catch { /* no scenario */ }
  }
  writeFileSync(join(scripts, 'limits.txt'), 'create /f_{18446744073709551613..18446744073709551615}\nwrite /f_18446744073709551615 0 5000 1\n');
  writeFileSync(join(scripts, 'legacy-logging.txt'), 'set dir_logging=legacy\nmkdir /a\ncreate /a/x_{1..30}\ncommit\n' +
    'rename /a/x_1 /a/y\nunlink /a/x_2\nlink /a/x_3 /a/z\nsymlink /a/x_3 /a/s\nfsync /a\nfsync /a/z\ntruncate /a/x_3 0\nrmdir /a\ncrash\n');
  for (const dir of [images, scripts]) {
    const files = readdirSync(dir);
    const bytes = files.reduce((s, f) => s + statSync(join(dir, f)).size, 0);
    console.log(`${dir}: ${files.length} files, ${(bytes / 1024).toFixed(0)} KiB`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
