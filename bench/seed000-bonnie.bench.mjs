// Seed 000's published bonnie++ rows, before (log_copy=clone) and after
// (log_copy=prealloc) the change, in the model under heavy memory pressure.
// The seed: bonnie++ -n 20:384100:384100/20 -b on an 8 GiB VM (20480 files
// of 384100 bytes in 20 directories, an fsync after every write, a data set
// twice the memory), -o ssd. Here: `bonnie files=2000 dirs=2 size=16K` on the
// ssd profile, about 1000 files a directory as the seed's 1024 (files scaled
// down 10x, bytes 240x). bonnie++ reports each phase's largest latency; a
// largest value is noisy, so each mode runs thirty seeds and their mean is
// compared (the change a row shows moved by up to 7 points between means of
// ten seeds, 1-10, 11-20 and 21-30; by up to 3 between means of thirty,
// 1-30 and 31-60). BTRFSLAB_SEED000_BONNIE_SEEDS sets the count. A second
// table gives, by phase, the fs leaves a logged fsync copies from (each one a
// clone in clone mode; tests/kernel/seed000.test.mjs holds them against this
// kernel's read-locked leaves for the same unlinks), the change one seed's
// pair of runs shows (the seed's figures are one bonnie++ run each), and how
// many of those single runs fall within 10 points of the seed's change.
import { execFileSync } from 'node:child_process';
import { CLI as BUILT } from './lib.mjs';
const CLI = process.env.BTRFSLAB_CLI || BUILT;

export const name = 'seed 000: bonnie++ latencies, log_copy=clone vs prealloc under heavy memory pressure — the model vs the seed';

const SEEDS = Number(process.env.BTRFSLAB_SEED000_BONNIE_SEEDS ?? 30);
// the seed's latencies (before -> after): Latency line of its bonnie++ tables
const SEED = {
  seqCreate: { label: 'sequential create', before: 411, after: 320 },
  seqDelete: { label: 'sequential delete', before: 119, after: 77.779 },
  randCreate: { label: 'random create', before: 617, after: 518 },
  randDelete: { label: 'random delete', before: 110, after: 86.389 },
};

export function bonnieScript(mode, seed, { files = 2000, dirs = 2, size = '16K', device = 'ssd' } = {}) {
  return ['mkfs size=2G', `set device=${device}`, 'set tree_locks=path', 'set memory_pressure=heavy', `set log_copy=${mode}`,
    `set seed=${seed}`, `bonnie files=${files} dirs=${dirs} size=${size}`].join('\n') + '\n';
}

/** Each phase's largest latency, averaged over the seeds (mean), seed by seed (runs), and the fs leaves the phase's
 * logged fsyncs copied from (leaves: fsyncs, cloned), summed. */
export function modelBonnie(mode, seeds = SEEDS, opts = {}) {
  const mean = {}, runs = {}, leaves = {};
  for (let seed = 1; seed <= seeds; seed++) {
    const m = JSON.parse(execFileSync(CLI, ['run', '-', '--metrics', '-'], { input: bonnieScript(mode, seed, opts), encoding: 'utf8', maxBuffer: 1 << 26 }));
    for (const [k, v] of Object.entries(m.timed.bonnie)) {
      mean[k] = (mean[k] ?? 0) + Number(v.maxNs) / seeds;
      (runs[k] ??= []).push(Number(v.maxNs));
      leaves[k] ??= { fsyncs: 0, cloned: 0 };
      leaves[k].fsyncs += v.fsyncs;
      leaves[k].cloned += v.leavesCloned;
    }
  }
  return { mean, runs, leaves };
}

export async function run() {
  const t0 = Date.now();
  const before = modelBonnie('clone');
  const after = modelBonnie('prealloc');
  console.log(`\n${SEEDS} seeds a mode, ${((Date.now() - t0) / 1000).toFixed(1)} s; largest latency a phase (ms), mean over the seeds`);
  console.log(' phase               model clone  model prealloc  model change   seed before  seed after  seed change  points apart');
  const rows = [], spread = [];
  for (const [k, s] of Object.entries(SEED)) {
    const mc = (after.mean[k] / before.mean[k] - 1) * 100, sc = (s.after / s.before - 1) * 100;
    console.log(` ${s.label.padEnd(18)} ${(before.mean[k] / 1e6).toFixed(1).padStart(11)} ${(after.mean[k] / 1e6).toFixed(1).padStart(15)} ${`${mc.toFixed(1)}%`.padStart(13)} ${String(s.before).padStart(13)} ${String(s.after).padStart(11)} ${`${sc.toFixed(1)}%`.padStart(12)} ${Math.abs(mc - sc).toFixed(1).padStart(13)}`);
    rows.push({ metric: `${s.label}: latency change`, unit: '%', ours: mc, peer: sc, peerName: 'seed 000 (bonnie++, 8 GiB VM)' });
    // the seed's figures are one bonnie++ run each: the change one seed's pair of runs shows, seed by seed
    const one = before.runs[k].map((b, i) => (after.runs[k][i] / b - 1) * 100).sort((a, b) => a - b);
    const q = (f) => one[Math.min(one.length - 1, Math.floor(f * one.length))];
    const lc = before.leaves[k];
    spread.push(` ${s.label.padEnd(18)} ${(lc.cloned / lc.fsyncs).toFixed(2).padStart(14)} ${`${q(0.1).toFixed(1)}% .. ${q(0.9).toFixed(1)}%`.padStart(28)} ${`${one.filter((c) => Math.abs(c - sc) <= 10).length} of ${one.length}`.padStart(23)}`);
  }
  console.log('\n phase              leaves a fsync   one run\'s change (p10..p90)   runs within 10 points');
  for (const l of spread) console.log(l);
  return rows;
}
