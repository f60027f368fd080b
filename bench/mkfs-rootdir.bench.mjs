// mkfs --rootdir against mkfs.btrfs --rootdir from the same run, on
// /usr/include and on a directory of 100,000 empty files: wall time and peak
// memory (each image checked by btrfs check); and the WASM build's time for
// the same work in memory as a ratio to the native build's.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bench, btrfsCheckOk, CLI, dirToScript, measure, median, wasmCore } from './lib.mjs';

export const name = 'mkfs --rootdir: native CLI vs mkfs.btrfs 6.2, and WASM vs native in memory';

function wasmRunMs(m, script) {
  const bytes = Buffer.from(script);
  const p = m._blab_alloc(bytes.length);
  m.HEAPU8.set(bytes, p);
  const h = m._blab_run(p, bytes.length, 1n, 1n, 0);
  m._blab_free(p);
  if (h < 0) throw new Error(m.UTF8ToString(m._blab_last_error()));
  const metrics = JSON.parse(m.UTF8ToString(m._blab_metrics_json(h)));
  m._blab_close(h);
  return metrics.run_ms;
}

export async function run({ dir }) {
  const sources = [];
  if (existsSync('/usr/include')) sources.push(['/usr/include', '/usr/include', 5]);
  const many = join(dir, 'empty-files');
  mkdirSync(many);
  for (let i = 0; i < 100_000; i++) writeFileSync(join(many, `f${i}`), '');
  sources.push(['100,000 empty files', many, 3]);
  const m = await wasmCore();
  const rows = [];
  for (const [label, src, n] of sources) {
    const ours = join(dir, 'ours.img');
    const theirs = join(dir, 'theirs.img');
    const a = bench(n, () => rmSync(ours, { force: true }), CLI, ['mkfs', '--rootdir', src, ours]);
    btrfsCheckOk(ours);
    const b = bench(n, () => rmSync(theirs, { force: true }), 'mkfs.btrfs', ['-q', '-f', '--rootdir', src, theirs]);
    btrfsCheckOk(theirs);
    rmSync(ours, { force: true });
    rmSync(theirs, { force: true });
    rows.push({ metric: `${label}: wall time`, unit: 's', ours: a.seconds, peer: b.seconds, peerName: 'mkfs.btrfs --rootdir' });
    rows.push({ metric: `${label}: peak memory`, unit: 'MiB', ours: a.rssMiB, peer: b.rssMiB, peerName: 'mkfs.btrfs --rootdir' });
    // the same tree as a scenario, in memory, natively and in WASM
    const script = join(dir, 'tree.txt');
    writeFileSync(script, await dirToScript(src));
    const nat = [];
    const was = [];
    for (let i = 0; i < n; i++) {
      measure(CLI, ['run', script, '--metrics', join(dir, 'm.json')]);
      nat.push(JSON.parse(readFileSync(join(dir, 'm.json'), 'utf8')).run_ms / 1000);
      was.push(wasmRunMs(m, readFileSync(script, 'utf8')) / 1000);
    }
    rows.push({ metric: `${label}: in-memory build, WASM vs native`, unit: 's', ours: median(was), peer: median(nat), peerName: 'btrfslab native' });
  }
  return rows;
}
