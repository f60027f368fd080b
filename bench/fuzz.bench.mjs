// The libFuzzer targets run long: executions per target against the
// 1,000,000 each the hostile-input issue asks for, each on a copy of its
// seed corpus.
//   BTRFSLAB_FUZZ_SECONDS  seconds per target (default 600)
//   BTRFSLAB_FUZZ_RUNS     executions per target instead (e.g. 1000000)
//   BTRFSLAB_FUZZ_PARALLEL targets run at once (default 1; one core each)
//   BTRFSLAB_FUZZ_TARGETS  some targets only (open_ls,cat,...)
//   BTRFSLAB_FUZZ_DIR      keep the growing corpora here (reused next time)
//   BTRFSLAB_FUZZ_B        the build directory in wasm-core (default build)
// Crash inputs are left in bench/results/fuzz/ and fail the run after every
// target has had its turn.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFuzzers, copySeeds, fuzzCommand, runFuzzerAsync, TARGETS } from '../wasm-core/fuzz/run.mjs';

export const name = 'fuzzing: executions per libFuzzer target (ASan+UBSan)';

export async function run({ dir }) {
  const env = process.env;
  const runs = Number(env.BTRFSLAB_FUZZ_RUNS || 0);
  const seconds = Number(env.BTRFSLAB_FUZZ_SECONDS || (runs ? 0 : 600));
  const parallel = Math.max(1, Number(env.BTRFSLAB_FUZZ_PARALLEL || 1));
  const targets = env.BTRFSLAB_FUZZ_TARGETS ? env.BTRFSLAB_FUZZ_TARGETS.split(',') : TARGETS;
  const work = env.BTRFSLAB_FUZZ_DIR || dir;
  const crashes = fileURLToPath(new URL('./results/fuzz/', import.meta.url));
  mkdirSync(crashes, { recursive: true });
  buildFuzzers();
  const rows = [], failed = [];
  const queue = [...targets];
  async function worker() {
    for (let t; (t = queue.shift());) {
      const d = join(work, t);
      if (!existsSync(d)) copySeeds(t, d);
      const opts = { seconds, runs, artifacts: join(crashes, `${t}-`), log: join(work, `${t}.log`) };
      console.log(`${t}: ${fuzzCommand(t, d, opts).join(' ')}`);
      const t0 = Date.now();
      const r = await runFuzzerAsync(t, d, opts);
      const s = ((Date.now() - t0) / 1000).toFixed(0);
      console.log(`${t}: ${r.executions} executions in ${s} s, ${r.perSecond}/s, exit ${r.status}`);
      if (r.status !== 0) failed.push(`${t} (exit ${r.status}):\n${r.tail}`);
      rows.push({ metric: `${t}: executions`, unit: 'runs', ours: r.executions, peer: 1e6, peerName: 'the 1,000,000 asked for' });
      rows.push({ metric: `${t}: executions per second`, unit: '1/s', ours: r.perSecond, peer: 1000, peerName: '1,000/s' });
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker));
  if (failed.length) throw new Error(`fuzz targets found problems (inputs in ${crashes}):\n${failed.join('\n')}`);

  rows.sort((a, b) => targets.indexOf(a.metric.split(':')[0]) - targets.indexOf(b.metric.split(':')[0]));
  return rows;
}
