// `mkfs rootdir=DIR` in scenarios: / starts as a copy of a host directory,
// as `btrfslab mkfs --rootdir DIR` makes it (the same rootdir.c), relative
// paths taken from the script's directory; then the script's commands run on
// it. A directory that is missing or not a directory is an error naming the
// line; the WASM core, which has no host files, refuses the option.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const WASM = fileURLToPath(new URL('../../wasm-core/build/wasm/btrfslab-core.wasm', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-scenario-rootdir-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// a host tree: files with data, an empty one, a subdirectory, a symlink, a hard link
const src = join(dir, 'scripts', 'src');
mkdirSync(join(src, 'sub', 'deeper'), { recursive: true });
writeFileSync(join(src, 'a.txt'), 'hello\n');
writeFileSync(join(src, 'big'), Buffer.alloc(70000, 7));
writeFileSync(join(src, 'empty'), '');
writeFileSync(join(src, 'sub', 'deeper', 'c'), 'c'.repeat(5000));
symlinkSync('a.txt', join(src, 'link'));
linkSync(join(src, 'big'), join(src, 'sub', 'big-link'));

function run(name, lines, cwd = '/') {
  const script = join(dir, 'scripts', `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(script, lines.join('\n') + '\n');
  const r = spawnSync(CLI, ['run', script, '--image', img], { encoding: 'utf8', cwd });
  return { ...r, img, script };
}
const ls = (img) => execFileSync(CLI, ['ls', '-R', '-l', img], { encoding: 'utf8' });
const cat = (img, p) => execFileSync(CLI, ['cat', img, p]);

describe('scenario mkfs rootdir=', () => {
  test('a relative rootdir= is taken from the script\'s directory; / is what mkfs --rootdir makes; the script runs on it', () => {
    const r = run('rel', ['mkfs rootdir=src', 'snapshot / /snap', 'write /snap/a.txt 0 3 5', 'commit'], dir);
    assert.equal(r.status, 0, r.stderr);
    const made = join(dir, 'made.img');
    execFileSync(CLI, ['mkfs', '--rootdir', src, '--seed', '1', '--time', '1700000000', made]);
    // / as mkfs --rootdir makes it (modes, sizes, links, times), the snapshot beside it
    const top = ls(r.img).split('\n').filter((l) => !/ \/snap(\/|$)/.test(l));
    assert.deepEqual(top, ls(made).split('\n'));
    for (const p of ['/a.txt', '/big', '/sub/deeper/c', '/sub/big-link'])
      assert.ok(cat(r.img, p).equals(readFileSync(join(src, p))), p);
    assert.ok(cat(r.img, '/snap/big').equals(readFileSync(join(src, 'big'))));
    assert.equal(cat(r.img, '/snap/a.txt').length, 6);
    assert.notEqual(cat(r.img, '/snap/a.txt').toString(), 'hello\n');
    assert.match(execFileSync(CLI, ['check', '--check-data-csum', r.img], { encoding: 'utf8' }), /0 errors found/);
    const progs = spawnSync('btrfs', ['check', r.img], { encoding: 'utf8' });
    if (!progs.error) assert.equal(progs.status, 0, progs.stdout + progs.stderr);
  });

  test('an absolute rootdir= and size= (the image keeps the size given)', () => {
    const r = run('abs', [`mkfs size=300M nodesize=4K rootdir=${src}`, 'create /new']);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(ls(r.img).includes(' /sub/deeper/c'));
    assert.ok(ls(r.img).includes(' /new'));
    assert.equal(statSync(r.img).size, 300 * 2 ** 20);
  });

  test('a missing directory, a file, an empty rootdir= are errors naming the line', () => {
    let r = run('missing', ['# a comment first', 'mkfs rootdir=nope', 'create /x']);
    assert.equal(r.status, 1);
    assert.equal(r.stderr.trim(), `${r.script}:2: mkfs: ENOENT: rootdir=${join(dir, 'scripts', 'nope')}: No such file or directory`);
    assert.ok(!existsSync(r.img));
    r = run('file', ['mkfs rootdir=src/a.txt']);
    assert.equal(r.status, 1);
    assert.equal(r.stderr.trim(), `${r.script}:1: mkfs: ENOTDIR: rootdir=${join(src, 'a.txt')}: not a directory`);
    r = run('empty', ['mkfs rootdir=']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /:1: mkfs: EPARSE: rootdir= needs a directory/);
  });

  test('the WASM core refuses rootdir= with a clear error, and runs on', { skip: !existsSync(WASM) && 'no WASM build' }, async () => {
    const { wasmCore, runWasm } = await import('../../bench/lib.mjs');
    const core = await wasmCore();
    assert.throws(() => runWasm(core, `mkfs rootdir=${src}\ncreate /x\n`),
      /scenario:1: mkfs: EINVAL: rootdir=.*needs the native CLI/);
    assert.equal(runWasm(core, 'mkfs\ncreate /x\n').m.lines, 2);
  });
});
