// Building and running the libFuzzer targets, for the fuzz test layer and
// bench/fuzz.bench.mjs.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const core = join(dirname(fileURLToPath(import.meta.url)), '..');
export const TARGETS = ['open_ls', 'cat', 'check', 'dump_tree', 'dump_json', 'replay', 'extract', 'scenario'];

/** make fuzz (incremental); throws with make's output on failure. */
export function buildFuzzers() {
  const jobs = String(Math.max(1, Math.min(4, (process.env.JOBS | 0) || 2)));
  const r = spawnSync('make', ['-s', '-j', jobs, '-C', core, 'fuzz'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`make fuzz failed:\n${r.stdout}${r.stderr}`);
}

/**
 * Runs target over corpus dir (which grows) for seconds, or for runs inputs.
 * Returns {status, executions, perSecond, tail}.
 */
export function runFuzzer(target, dir, { seconds, runs, artifacts }) {
  const args = ['-timeout=20', '-rss_limit_mb=2048', '-print_final_stats=1', `-artifact_prefix=${artifacts}`];
  if (seconds) args.push(`-max_total_time=${seconds}`);
  if (runs) args.push(`-runs=${runs}`);
  const r = spawnSync(join(core, 'build', 'fuzz', target), [...args, dir], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const out = `${r.stdout}${r.stderr}`;
  const stat = (k) => Number(new RegExp(`stat::${k}:\\s+(\\d+)`).exec(out)?.[1] ?? 0);
  return { status: r.status, executions: stat('number_of_executed_units'), perSecond: stat('average_exec_per_sec'),
    tail: out.split('\n').slice(-30).join('\n') };
}
