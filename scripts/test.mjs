#!/usr/bin/env node
// Runs every test layer, streams its output, and ends with one line:
//   N passed, N failed[, N skipped]
// summing all layers. Exits non-zero if anything failed or a layer could not
// run. Run some layers only: node scripts/test.mjs core cli kernel ...
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = join(root, 'e2e', '.artifacts');
mkdirSync(tmp, { recursive: true });

function run(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    let out = '';
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' }, ...opts });
    child.stdout.on('data', (d) => { out += d; process.stdout.write(d); });
    child.stderr.on('data', (d) => { out += d; process.stderr.write(d); });
    child.on('error', (e) => resolve({ code: 127, out: `${out}\n${e.message}` }));
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

// "N passed, N failed" printed by the C test runner.
function plainCounts(out) {
  const m = [...out.matchAll(/^(\d+) passed, (\d+) failed$/gm)].pop();
  return m ? { passed: +m[1], failed: +m[2], skipped: 0 } : null;
}

// node --test with the TAP reporter written to a file.
function tapCounts(file) {
  if (!existsSync(file)) return null;
  const t = readFileSync(file, 'utf8');
  const n = (k) => +(t.match(new RegExp(`^# ${k} (\\d+)$`, 'm'))?.[1] ?? 0);
  if (!/^# tests \d+$/m.test(t)) return null;
  return { passed: n('pass'), failed: n('fail') + n('cancelled'), skipped: n('skipped') + n('todo') };
}

// concurrency: test files run at once (the kernel layer's two at a time: each
// makes its own loop devices and scratch directories)
function nodeTest(dirs, concurrency = 1) {
  return async (name) => {
    const tap = join(tmp, `${name}.tap`);
    rmSync(tap, { force: true });
    const r = await run(process.execPath, ['--test', `--test-concurrency=${concurrency}`,
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      '--test-reporter=tap', `--test-reporter-destination=${tap}`, ...dirs]);
    return { ...r, counts: tapCounts(tap) };
  };
}

const npx = join(root, 'node_modules', '.bin');

const LAYERS = [
  ['core', 'C core, native, ASan+UBSan', async () => {
    const r = await run(join(root, 'wasm-core/build/unit-tests'), [], { env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=1', UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' } });
    return { ...r, counts: plainCounts(r.out) };
  }],
  ['core-wasm', 'C core, WebAssembly in Node', async () => {
    const r = await run(process.execPath, [join(root, 'wasm-core/build/wasm/unit-tests.cjs')]);
    return { ...r, counts: plainCounts(r.out) };
  }],
  ['cli', 'btrfslab CLI', nodeTest(['tests/cli/'])],
  ['fuzz', 'libFuzzer targets, briefly (ASan+UBSan)', nodeTest(['tests/fuzz/'])],
  ['web', 'web unit (vitest)', async () => {
    const json = join(tmp, 'vitest.json');
    rmSync(json, { force: true });
    const r = await run(join(npx, 'vitest'), ['run', '--config', 'web/vite.config.ts', '--reporter=default', '--reporter=json', `--outputFile=${json}`]);
    let counts = null;
    if (existsSync(json)) {
      const j = JSON.parse(readFileSync(json, 'utf8'));
      counts = { passed: j.numPassedTests, failed: j.numFailedTests, skipped: j.numPendingTests + j.numTodoTests };
    }
    return { ...r, counts };
  }],
  ['e2e', 'browser (Playwright, Chromium)', async () => {
    const b = await run(join(npx, 'vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']);
    if (b.code !== 0) return { ...b, counts: null };
    const report = join(tmp, 'report.json');
    rmSync(report, { force: true });
    const r = await run(join(npx, 'playwright'), ['test', '-c', 'e2e/playwright.config.ts']);
    let counts = null;
    if (existsSync(report)) {
      const s = JSON.parse(readFileSync(report, 'utf8')).stats;
      counts = { passed: s.expected + s.flaky, failed: s.unexpected, skipped: s.skipped };
    }
    return { ...r, counts };
  }],
  ['kernel', 'kernel oracle (loop mounts, btrfs check)', nodeTest(['tests/kernel/'], 2)],
];

const only = process.argv.slice(2);
const unknown = only.filter((n) => !LAYERS.some(([id]) => id === n));
if (unknown.length) {
  console.error(`test: unknown layer ${unknown.join(', ')}; layers: ${LAYERS.map(([id]) => id).join(', ')}`);
  process.exit(2);
}

const total = { passed: 0, failed: 0, skipped: 0 };
const rows = [];
for (const [id, title, fn] of LAYERS) {
  if (only.length && !only.includes(id)) continue;
  console.log(`\n=== ${title} ===`);
  const t0 = Date.now();
  const { code, counts } = await fn(id);
  const c = counts ?? { passed: 0, failed: 0, skipped: 0 };
  let note = '';
  if (!counts || (code !== 0 && c.failed === 0)) {
    c.failed += 1; // the layer itself failed to run or report
    note = ` (layer exited with ${code}${counts ? '' : ', no results'})`;
  }
  total.passed += c.passed;
  total.failed += c.failed;
  total.skipped += c.skipped;
  rows.push(`${id.padEnd(10)} ${String(c.passed).padStart(4)} passed ${String(c.failed).padStart(3)} failed ${String(c.skipped).padStart(3)} skipped  ${((Date.now() - t0) / 1000).toFixed(1)}s${note}`);
}
console.log('\n=== summary ===');
for (const r of rows) console.log(r);
console.log(`${total.passed} passed, ${total.failed} failed${total.skipped ? `, ${total.skipped} skipped` : ''}`);
process.exit(total.failed ? 1 : 0);
