// The libFuzzer targets run long: executions per target against the
// 1,000,000 each the hostile-input issue asks for, on a copy of the seed
// corpus. BTRFSLAB_FUZZ_SECONDS per target (default 600) or
// BTRFSLAB_FUZZ_RUNS (executions per target, e.g. 1000000). Crash inputs are
// left in bench/results/fuzz/ and fail the run.
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFuzzers, runFuzzer, TARGETS } from '../wasm-core/fuzz/run.mjs';

export const name = 'fuzzing: executions per libFuzzer target (ASan+UBSan)';

export async function run({ dir }) {
  const seconds = Number(process.env.BTRFSLAB_FUZZ_SECONDS || (process.env.BTRFSLAB_FUZZ_RUNS ? 0 : 600));
  const runs = Number(process.env.BTRFSLAB_FUZZ_RUNS || 0);
  const corpus = fileURLToPath(new URL('../wasm-core/fuzz/corpus/', import.meta.url));
  const crashes = fileURLToPath(new URL('./results/fuzz/', import.meta.url));
  mkdirSync(crashes, { recursive: true });
  buildFuzzers();
  const rows = [];
  for (const t of TARGETS) {
    const d = join(dir, t);
    cpSync(join(corpus, t === 'scenario' ? 'scripts' : 'images'), d, { recursive: true });
    const r = runFuzzer(t, d, { seconds, runs, artifacts: join(crashes, `${t}-`) });
    console.log(`${t}: ${r.executions} executions, ${r.perSecond}/s, exit ${r.status}`);
    if (r.status !== 0) throw new Error(`fuzz target ${t} found a problem (inputs in ${crashes}):\n${r.tail}`);
    rows.push({ metric: `${t}: executions`, unit: 'runs', ours: r.executions, peer: 1e6, peerName: 'the 1,000,000 asked for' });
  }
  if (readdirSync(crashes).length) throw new Error(`crash inputs in ${crashes}`);
  return rows;
}
