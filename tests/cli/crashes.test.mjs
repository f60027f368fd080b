// `btrfslab crashes SCRIPT`: every crash point of every numbered scenario
// tried, no promise broken; its JSON, its sample, its exported images (each
// one the image the walk checked: it opens, and its replay passes check);
// and its errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const CASES = fileURLToPath(new URL('../scenarios/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-crashes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const run = (...args) => spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 26 });

describe('btrfslab crashes', () => {
  for (const name of readdirSync(CASES).sort()) {
    test(`${name}: every crash point keeps every fsync promise`, () => {
      const r = run('crashes', join(CASES, name, 'scenario.txt'), '--all', '--json');
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const rep = JSON.parse(r.stdout);
      assert.deepEqual(rep.broken, []);
      if (name !== '001-mkfs') assert.ok(rep.points > 0, 'a scenario writes something after mkfs');
      assert.equal(rep.tried, rep.points);
      assert.equal(rep.blocks + rep.supers, rep.points);
    });
  }

  test('a seeded sample, exported: the same points each time, each image opens and replays clean', () => {
    const script = join(CASES, '007-fsync-crash', 'scenario.txt');
    const a = join(dir, 'a'), b = join(dir, 'b');
    for (const d of [a, b]) {
      const r = run('crashes', script, '--sample', '4', '--sample-seed', '9', '--export', d);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /, 4 tried \(a seeded sample\)/);
    }
    const pa = JSON.parse(readFileSync(join(a, 'points.json'), 'utf8'));
    const pb = JSON.parse(readFileSync(join(b, 'points.json'), 'utf8'));
    assert.deepEqual(pa, pb);
    assert.equal(pa.length, 4);
    for (const p of pa) {
      const img = join(a, p.image);
      assert.ok(existsSync(img));
      const out = join(dir, `${p.point}.replayed`);
      let r = run('replay', img, '-o', out);
      assert.equal(r.status, 0, `${p.image} (${p.at}): ${r.stderr}`);
      r = run('check', '--check-data-csum', out);
      assert.equal(r.status, 0, `${p.image}: ${r.stdout}${r.stderr}`);
      for (const pr of p.promises) assert.ok(pr.path.startsWith('/') && pr.line > 0 && ['file', 'dir'].includes(pr.type));
    }
  });

  test('errors: the script\'s own (file and line), an export directory that exists, bad options', () => {
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, 'mkdir /d\nfsync /missing\n');
    let r = run('crashes', bad);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /bad\.txt:2: fsync.*ENOENT/);
    const there = join(dir, 'there');
    mkdirSync(there);
    r = run('crashes', join(CASES, '007-fsync-crash', 'scenario.txt'), '--export', there);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /--export .*there: File exists \(give a directory that does not exist yet\)/);
    assert.deepEqual(readdirSync(there), []);
    r = run('crashes', join(CASES, '007-fsync-crash', 'scenario.txt'), '--sample', 'lots');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--sample: 'lots' is not a number/);
    r = run('crashes');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /missing SCRIPT/);
  });
});
