#!/usr/bin/env node
// Builds the C core natively (CLI + sanitized unit tests) and to WebAssembly,
// incrementally (make), and places the browser build where Vite imports it.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const jobs = String(Math.max(1, Math.min(4, (await import('node:os')).cpus().length)));
const r = spawnSync('make', ['-s', '-j', jobs, '-C', join(root, 'wasm-core'), 'all'], {
  stdio: ['ignore', 'inherit', 'inherit'],
  env: { ...process.env, NODE_PATH: '/usr/share/nodejs' },
});
if (r.status !== 0) {
  process.stderr.write('build-core: building wasm-core failed\n');
  process.exit(1);
}
const from = join(root, 'wasm-core', 'build', 'wasm');
const to = join(root, 'web', 'src', 'core', 'generated');
mkdirSync(to, { recursive: true });
for (const f of ['btrfslab-core.mjs', 'btrfslab-core.wasm']) {
  const src = join(from, f);
  const dst = join(to, f);
  if (!existsSync(dst) || statSync(dst).mtimeMs < statSync(src).mtimeMs || !readFileSync(dst).equals(readFileSync(src))) {
    copyFileSync(src, dst);
  }
}
