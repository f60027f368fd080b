// Helpers for benchmarks: timing and peak memory of a command, median of runs.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../wasm-core/build/btrfslab', import.meta.url));

export function context() {
  const dir = mkdtempSync(join(tmpdir(), 'btrfslab-bench-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs cmd once: wall seconds and peak RSS in MiB (GNU time). Throws on failure. */
export function measure(cmd, args) {
  const useTime = existsSync('/usr/bin/time');
  const t0 = process.hrtime.bigint();
  const r = useTime
    ? spawnSync('/usr/bin/time', ['-f', 'MAXRSS %M', cmd, ...args], { encoding: 'utf8' })
    : spawnSync(cmd, args, { encoding: 'utf8' });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  const m = /MAXRSS (\d+)/.exec(r.stderr ?? '');
  return { seconds, rssMiB: m ? Number(m[1]) / 1024 : NaN };
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Median time and peak memory over n runs of setup() then cmd. */
export function bench(n, setup, cmd, args) {
  const runs = [];
  for (let i = 0; i < n; i++) {
    setup?.();
    runs.push(measure(cmd, args));
  }
  return { seconds: median(runs.map((r) => r.seconds)), rssMiB: median(runs.map((r) => r.rssMiB)) };
}

export function btrfsCheckOk(img) {
  const r = spawnSync('btrfs', ['check', img], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`btrfs check ${img} failed:\n${r.stdout}${r.stderr}`);
}

/** A scenario script that builds the same tree as dir (names, sizes, links;
 * data from a seed rather than the files' bytes). */
export async function dirToScript(dir) {
  const { lstatSync, readdirSync, readlinkSync } = await import('node:fs');
  const { join } = await import('node:path');
  const q = (p) => (/[\s"\\#]/.test(p) ? `"${p.replace(/["\\]/g, (c) => `\\${c}`)}"` : p);
  const lines = ['mkfs nodesize=16K size=2G'];
  const seen = new Map();
  const walk = (abs, rel) => {
    for (const e of readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const a = join(abs, e.name);
      const r = `${rel}/${e.name}`;
      const st = lstatSync(a);
      if (st.isDirectory()) {
        lines.push(`mkdir ${q(r)}`);
        walk(a, r);
      } else if (st.isSymbolicLink()) {
        const t = readlinkSync(a);
        if (t.length < 4000 && !t.includes('\n')) lines.push(`symlink ${q(t)} ${q(r)}`);
      } else if (st.isFile()) {
        const key = `${st.dev}:${st.ino}`;
        if (st.nlink > 1 && seen.has(key)) {
          lines.push(`link ${q(seen.get(key))} ${q(r)}`);
          continue;
        }
        seen.set(key, r);
        lines.push(`create ${q(r)}`);
        if (st.size) lines.push(`write ${q(r)} 0 ${st.size} ${st.ino % 1000}`);
      }
    }
  };
  walk(dir, '');
  return `${lines.join('\n')}\n`;
}

/** The WASM core, loaded in Node (the Emscripten glue given the binary). */
export async function wasmCore() {
  const { default: create } = await import('../wasm-core/build/wasm/btrfslab-core.mjs');
  return create({ wasmBinary: readFileSync(fileURLToPath(new URL('../wasm-core/build/wasm/btrfslab-core.wasm', import.meta.url))) });
}

/** A script run n times in the native CLI (each a process: its metrics, `run --metrics`, and its wall milliseconds)
 * and n times in one WASM instance (each its metrics; the first while V8 still tiers the core up), alternately:
 * the speed figures the seed benches compare, each as the core times the run (run_ms, relocated.ms). */
export async function nativeAndWasm(text, { n = 3, cli = CLI } = {}) {
  const core = await wasmCore();
  const native = [], wasm = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const m = JSON.parse(execFileSync(cli, ['run', '-', '--metrics', '-'], { input: text, encoding: 'utf8', maxBuffer: 1 << 28 }));
    native.push({ m, ms: performance.now() - t0 });
    wasm.push(runWasm(core, text).m);
  }
  return { native, wasm };
}

/** A scenario run in the WASM core: its metrics and the run's milliseconds. Throws on failure. */
export function runWasm(core, text) {
  const enc = new TextEncoder().encode(text);
  const p = core._blab_alloc(enc.length);
  core.HEAPU8.set(enc, p);
  const t0 = performance.now();
  const h = core._blab_run(p, enc.length, 1n, 1n, 0);
  const ms = performance.now() - t0;
  core._blab_free(p);
  if (h <= 0) throw new Error(`WASM run: ${core.UTF8ToString(core._blab_last_error())}`);
  const m = JSON.parse(core.UTF8ToString(core._blab_metrics_json(h)));
  core._blab_close(h);
  return { m, ms };
}
