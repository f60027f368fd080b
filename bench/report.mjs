// What `npm run bench` leaves behind: each benchmark's latest results, with the
// date and the machine, in bench/figures.json (committed), and the pages made
// from it: docs/benchmarks.md (every benchmark's table) and the README's few
// figures (between its <!-- bench:readme --> markers). A run of some
// benchmarks (node bench/run.mjs seed003) replaces only theirs.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const FIGURES = `${root}bench/figures.json`;

/** The README's figures: which benchmark's row, and what to call it there. */
const HEADLINES = [
  { bench: 'mkfs-rootdir', metric: /^\/usr\/include.*wall time/, label: 'mkfs --rootdir /usr/include, native CLI vs mkfs.btrfs' },
  { bench: 'mkfs-empty', metric: /^wall time/, label: 'mkfs of an empty 1 GiB filesystem vs mkfs.btrfs' },
  { bench: 'web-perf', metric: /^first load/, label: 'web app: first load, JS + WASM gzipped (target in peer)' },
  { bench: 'web-perf', metric: /^seek, p95/, label: 'web app: seek to a step of a long trace, p95 (target in peer)' },
  { bench: 'web-perf', metric: /^run 20,000 files/, label: 'web app: 20,000 files run to the first tree drawn (target in peer)' },
  { bench: 'seed001-fsync', metric: /^directory fsync.*native vs kernel/, label: 'seed 001: directory fsync of 1M files vs the kernel' },
];

export function machine() {
  const c = cpus();
  return `${c[0]?.model.trim() ?? 'unknown CPU'}, ${c.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Linux ${release()}, Node ${process.versions.node}; load average ${loadavg()[0].toFixed(2)} at the start`;
}

export function loadFigures() {
  return existsSync(FIGURES) ? JSON.parse(readFileSync(FIGURES, 'utf8')) : { benches: {} };
}

const num = (x) => (!Number.isFinite(x) ? '—' : Math.abs(x) >= 1000 ? Math.round(x).toLocaleString('en-US') : String(Number(x.toPrecision(3))));
const cell = (s) => String(s).replace(/\|/g, '\\|');

function table(rows) {
  return ['| metric | unit | ours | peer | ours/peer | peer is |', '|---|---|---:|---:|---:|---|',
    ...rows.map((r) => `| ${cell(r.metric.trim())} | ${cell(r.unit)} | ${num(r.ours)} | ${num(r.peer)} | ${r.peer ? (r.ours / r.peer).toFixed(2) : '—'} | ${cell(r.peerName)} |`)].join('\n');
}

export function benchmarksPage(figs) {
  const out = ['# Benchmarks', '',
    'Written by `npm run bench` (`node bench/run.mjs [NAME...]`, bench/report.mjs) from the results it has just',
    'measured; do not edit by hand. Each benchmark prints our figure and the peer\'s from the same run (the kernel,',
    'mkfs.btrfs, or a target), and ours/peer: below 1 means less time or memory. A benchmark run on its own replaces',
    'only its own section, so sections can come from different runs: each says when and where it ran. What the',
    'figures mean for each seed, and where the model and the kernel differ: [fidelity.md](fidelity.md).', ''];
  for (const [id, b] of Object.entries(figs.benches).sort(([a], [z]) => (a < z ? -1 : 1))) {
    out.push(`## ${b.name}`, '', `\`node bench/run.mjs ${id}\`, finished ${b.date}, on ${b.machine}.`, '', table(b.rows), '');
  }
  return out.join('\n');
}

export function readmeFigures(figs) {
  const rows = [];
  for (const h of HEADLINES) {
    const b = figs.benches[h.bench];
    const r = b?.rows.find((x) => h.metric.test(x.metric));
    // the machine's load beside the date: on a shared machine, timings move with it
    const load = /(\d+) cores.*load average ([\d.]+)/.exec(b?.machine ?? '');
    if (r) rows.push(`| ${h.label} | ${num(r.ours)} ${r.unit} | ${num(r.peer)} ${r.unit} | ${b.date.slice(0, 10)}${load ? `, load ${load[2]} on ${load[1]} cores` : ''} |`);
  }
  if (!rows.length) return 'No benchmark has been run yet: `npm run bench`.';
  return ['| figure | ours | peer | measured |', '|---|---:|---:|---|', ...rows].join('\n');
}

/** Records a run's results and rewrites the pages made from them. */
export function record(runs, { figuresPath = FIGURES, docsPath = `${root}docs/benchmarks.md`, readmePath = `${root}README.md` } = {}) {
  const figs = existsSync(figuresPath) ? JSON.parse(readFileSync(figuresPath, 'utf8')) : { benches: {} };
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const where = machine();
  for (const { id, name, rows } of runs) figs.benches[id] = { name, date, machine: where, rows };
  writeFileSync(figuresPath, `${JSON.stringify(figs, null, 1)}\n`);
  writeFileSync(docsPath, benchmarksPage(figs));
  if (existsSync(readmePath)) {
    const text = readFileSync(readmePath, 'utf8');
    const re = /(<!-- bench:readme [^>]*-->)[\s\S]*?(<!-- \/bench:readme -->)/;
    if (re.test(text)) writeFileSync(readmePath, text.replace(re, (_, a, z) => `${a}\n${readmeFigures(figs)}\n${z}`));
  }
}
