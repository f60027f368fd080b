#!/usr/bin/env node
// The benchmark runner. Each bench/*.bench.mjs exports `name` and
// `async run(ctx)` returning rows { metric, unit, ours, peer, peerName };
// the runner prints our figure and the peer's from the same run, and their
// ratio (ours / peer: below 1 means we use less time or memory).
// Run one: node bench/run.mjs mkfs
import { readdirSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { context } from './lib.mjs';
import { record } from './report.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here).filter((f) => f.endsWith('.bench.mjs')).sort()
  .filter((f) => !only.length || only.some((o) => f.startsWith(o)));
if (!files.length) {
  console.error(`bench: no benchmark matches ${only.join(' ')}`);
  process.exit(2);
}
const ctx = context();
const results = [];
const runs = []; // each benchmark's rows, for bench/figures.json and the pages made from it
try {
  for (const f of files) {
    const mod = await import(pathToFileURL(join(here, f)).href);
    console.log(`\n## ${mod.name}`);
    const rows = await mod.run(ctx);
    if (!rows.length) console.log("(no figures)");
    runs.push({ id: f.replace(/\.bench\.mjs$/, ''), name: mod.name, rows: rows.map(({ metric, unit, ours, peer, peerName }) => ({ metric, unit, ours, peer, peerName })) });
    console.log(`${'metric'.padEnd(44)} ${'ours'.padStart(12)} ${'peer'.padStart(12)} ${'ours/peer'.padStart(10)}  peer`);
    for (const r of rows) {
      const ratio = r.peer ? r.ours / r.peer : NaN;
      console.log(`${`${r.metric} (${r.unit})`.padEnd(44)} ${r.ours.toFixed(3).padStart(12)} ${r.peer.toFixed(3).padStart(12)} ${ratio.toFixed(2).padStart(10)}  ${r.peerName}`);
      results.push({ bench: mod.name, ...r, ratio });
    }
  }
} finally {
  ctx.cleanup();
}
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', 'latest.json'), JSON.stringify(results, null, 2));
record(runs.filter((r) => r.rows.length)); // bench/figures.json, docs/benchmarks.md, the README's figures
console.log('\nwrote bench/figures.json, docs/benchmarks.md and the README\'s figures');
