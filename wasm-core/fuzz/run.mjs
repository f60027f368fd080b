// Building and running the libFuzzer targets, for the fuzz test layer and
// bench/fuzz.bench.mjs. BTRFSLAB_FUZZ_B names the build directory inside
// wasm-core (default build; the binaries go to $B/fuzz/).
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const core = join(dirname(fileURLToPath(import.meta.url)), '..');
const B = process.env.BTRFSLAB_FUZZ_B || 'build';
export const TARGETS = ['open_ls', 'cat', 'check', 'dump_tree', 'dump_json', 'replay', 'extract', 'scenario', 'serve_request', 'write_plan', 'qgroup', 'balance', 'replay_check'];
// the seed corpus of the targets that do not take images
const SEEDS = { scenario: 'scripts', serve_request: 'requests', write_plan: 'plans' };

/** The seed corpus directory of a target. */
export function seedDir(target) {
  return join(core, 'fuzz', 'corpus', SEEDS[target] || 'images');
}

/** Copies a target's seeds into dir: seedDir's, and the small inputs a long
 * run of the target kept (corpus/min/TARGET, minimized, when there is one). */
export function copySeeds(target, dir) {
  cpSync(seedDir(target), dir, { recursive: true });
  const min = join(core, 'fuzz', 'corpus', 'min', target);
  if (existsSync(min)) cpSync(min, dir, { recursive: true });
}

/** make fuzz (incremental); throws with make's output on failure. */
export function buildFuzzers() {
  const jobs = String(Math.max(1, Math.min(4, (process.env.JOBS | 0) || 2)));
  const r = spawnSync('make', ['-s', '-j', jobs, '-C', core, `B=${B}`, 'fuzz'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`make fuzz failed:\n${r.stdout}${r.stderr}`);
}

function fuzzArgs(target, dir, { seconds, runs, artifacts, timeout = 20 }) {
  const args = [`-timeout=${timeout}`, '-rss_limit_mb=2048', '-print_final_stats=1', `-artifact_prefix=${artifacts}`];
  const dict = join(core, 'fuzz', `${target}.dict`);
  if (existsSync(dict)) args.push(`-dict=${dict}`);
  if (seconds) args.push(`-max_total_time=${seconds}`);
  if (runs) args.push(`-runs=${runs}`);
  return [...args, dir];
}

function result(status, out) {
  const stat = (k) => Number(new RegExp(`stat::${k}:\\s+(\\d+)`).exec(out)?.[1] ?? 0);
  return { status, executions: stat('number_of_executed_units'), perSecond: stat('average_exec_per_sec'),
    tail: out.split('\n').slice(-40).join('\n') };
}

/** The command line runFuzzer runs, for reports. */
export function fuzzCommand(target, dir, opts) {
  return [join(core, B, 'fuzz', target), ...fuzzArgs(target, dir, opts)];
}

/**
 * Runs target over corpus dir (which grows) for seconds, or for runs inputs;
 * a crash, leak or slow input (timeout seconds) leaves its input at the
 * artifacts prefix. Returns {status, executions, perSecond, tail}.
 */
export function runFuzzer(target, dir, opts) {
  const [bin, ...args] = fuzzCommand(target, dir, opts);
  const r = spawnSync(bin, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return result(r.error ? 127 : r.status, `${r.stdout}${r.stderr}${r.error ? r.error.message : ''}`);
}

/** runFuzzer without blocking (its output kept to the last MB, and all of
 * it appended to opts.log when given). */
export function runFuzzerAsync(target, dir, opts) {
  const [bin, ...args] = fuzzCommand(target, dir, opts);
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d) => {
      out = (out + d).slice(-(1 << 20));
      if (opts.log) appendFileSync(opts.log, d);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (e) => resolve(result(127, `${out}\n${e.message}`)));
    child.on('close', (code) => resolve(result(code ?? 1, out)));
  });
}
