// bench/report.mjs: what `npm run bench` writes from the results it has just
// measured (bench/figures.json, docs/benchmarks.md, the README's figures).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { record } from '../../bench/report.mjs';

const dir = mkdtempSync(join(tmpdir(), 'btrfslab-bench-report-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a run replaces its own benchmarks\' figures and rewrites the pages from them', () => {
  const paths = { figuresPath: join(dir, 'figures.json'), docsPath: join(dir, 'benchmarks.md'), readmePath: join(dir, 'README.md') };
  writeFileSync(paths.readmePath, 'before\n<!-- bench:readme (generated) -->\nold figures\n<!-- /bench:readme -->\nafter\n');
  record([{ id: 'mkfs-empty', name: 'mkfs of an empty 1 GiB filesystem', rows: [
    { metric: 'wall time, native CLI vs mkfs.btrfs', unit: 's', ours: 0.038, peer: 0.192, peerName: 'mkfs.btrfs' },
    { metric: 'peak memory', unit: 'MiB', ours: 2.449, peer: NaN, peerName: 'mkfs.btrfs' }] }], paths);
  record([{ id: 'web-perf', name: 'web app in Chromium', rows: [
    { metric: 'first load, JS + WASM gzipped', unit: 'KB', ours: 397.2, peer: 500, peerName: 'target' }] }], paths);
  const figs = JSON.parse(readFileSync(paths.figuresPath, 'utf8'));
  assert.deepEqual(Object.keys(figs.benches).sort(), ['mkfs-empty', 'web-perf'], 'the second run kept the first run\'s benchmark');
  assert.match(figs.benches['web-perf'].date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.match(figs.benches['web-perf'].machine, /cores, \d+ GiB, Linux /);
  const page = readFileSync(paths.docsPath, 'utf8');
  assert.match(page, /## mkfs of an empty 1 GiB filesystem\n\n`node bench\/run.mjs mkfs-empty`, finished \d{4}-/);
  assert.match(page, /\| wall time, native CLI vs mkfs.btrfs \| s \| 0.038 \| 0.192 \| 0.20 \| mkfs.btrfs \|/);
  assert.match(page, /\| peak memory \| MiB \| 2.45 \| — \| — \|/, 'a missing peer figure is a dash');
  const readme = readFileSync(paths.readmePath, 'utf8');
  assert.doesNotMatch(readme, /old figures/);
  assert.match(readme, /^before\n<!-- bench:readme \(generated\) -->\n\| figure \| ours \| peer \| measured \|/);
  assert.match(readme, /\| web app: first load, JS \+ WASM gzipped \(target in peer\) \| 397 KB \| 500 KB \| \d{4}-\d\d-\d\d, load [\d.]+ on \d+ cores \|/);
  assert.match(readme, /\| mkfs of an empty 1 GiB filesystem vs mkfs.btrfs \| 0.038 s \| 0.192 s \|/);
  assert.match(readme, /<!-- \/bench:readme -->\nafter\n$/);
});
