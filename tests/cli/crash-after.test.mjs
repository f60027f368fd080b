// `run --crash-after LINE`: the image a power cut after LINE leaves, made
// from a checkpoint of one run of the whole script. It must be the image of
// the script cut after LINE with `crash` (byte for byte), for every line of
// every numbered scenario, and its replay must pass check.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const CASES = fileURLToPath(new URL('../scenarios/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-crash-after-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function run(...args) {
  return spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
}
function ok(...args) {
  const r = run(...args);
  assert.equal(r.status, 0, `btrfslab ${args.join(' ')} exited ${r.status}:\n${r.stderr}`);
  return r.stdout;
}

describe('run --crash-after', () => {
  for (const name of readdirSync(CASES).sort()) {
    const text = readFileSync(join(CASES, name, 'scenario.txt'), 'utf8');
    const lines = text.replace(/\n$/, '').split('\n');
    if (lines.some((l) => /^\s*crash\s*$/.test(l))) continue; // a crash ends the script: cut points are the lines before it
    test(`${name}: every line equals the script cut there with crash`, () => {
      const script = join(dir, `${name}.txt`);
      writeFileSync(script, text);
      // the filesystem is made by the mkfs line (or before the first command): cuts start after it
      const mkfs = lines.findIndex((l) => /^\s*mkfs\b/.test(l));
      for (let at = mkfs + 2; at <= lines.length; at++) {
        const cut = join(dir, `${name}-cut.txt`);
        writeFileSync(cut, [...lines.slice(0, at), 'crash'].join('\n') + '\n');
        const want = join(dir, 'want.img');
        const got = join(dir, 'got.img');
        ok('run', cut, '--image', want);
        ok('run', script, '--crash-after', String(at), '--image', got);
        assert.ok(readFileSync(want).equals(readFileSync(got)), `${name}: crash after line ${at}: the images differ`);
      }
      if (mkfs + 2 > lines.length) return; // mkfs only: no line to cut after
      const replayed = join(dir, 'replayed.img');
      ok('replay', join(dir, 'got.img'), '-o', replayed);
      ok('check', '--check-data-csum', replayed);
    });
  }

  test('it needs --image, and a line number', () => {
    const script = join(dir, 's.txt');
    writeFileSync(script, 'create /a\n');
    let r = run('run', script, '--crash-after', '1');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--crash-after needs --image/);
    r = run('run', script, '--crash-after', 'x', '--image', join(dir, 'x.img'));
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--crash-after: 'x' is not a line number/);
  });

  test('past the end it is the end before the final commit, as a crash there', () => {
    const script = join(dir, 'e.txt');
    writeFileSync(script, 'mkdir /d\ncreate /d/f{1..50}\nfsync /d/f7\n');
    const cut = join(dir, 'e-cut.txt');
    writeFileSync(cut, 'mkdir /d\ncreate /d/f{1..50}\nfsync /d/f7\ncrash\n');
    ok('run', cut, '--image', join(dir, 'e-want.img'));
    ok('run', script, '--crash-after', '99', '--image', join(dir, 'e-got.img'));
    assert.ok(readFileSync(join(dir, 'e-want.img')).equals(readFileSync(join(dir, 'e-got.img'))));
    // the log is there: listing with --replay shows the fsynced file
    assert.match(ok('ls', '--replay', join(dir, 'e-got.img'), '/d'), /\bf7\b/);
  });

  test('a script that fails says so, as run does', () => {
    const script = join(dir, 'f.txt');
    writeFileSync(script, 'mkdir /d\nrmdir /nope\n');
    const r = run('run', script, '--crash-after', '1', '--image', join(dir, 'f.img'));
    assert.equal(r.status, 1);
    assert.match(r.stderr, /f\.txt:2: rmdir: ENOENT/);
  });
});
