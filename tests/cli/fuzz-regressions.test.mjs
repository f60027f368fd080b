// The fuzz regression corpus (wasm-core/fuzz/regressions) and the seed
// corpus, through every reader of the native CLI (ls -R -l, cat of the files
// it lists, check --check-data-csum, dump-tree, dump-json, replay -o,
// balance -o, extract into a fresh directory): each ends with exit 0 or 1 and a
// message, never a signal or a hang. Also: the CLI is built
// hardened (PIE, stack protector, full RELRO).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { unpackToFile } from '../../wasm-core/fuzz/blfz.mjs';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const fuzz = fileURLToPath(new URL('../../wasm-core/fuzz/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-regress-'));
after(() => spawnSync('rm', ['-rf', dir]));

const inputs = [];
for (const sub of ['regressions', 'corpus/images', 'corpus/scripts']) {
  const d = join(fuzz, sub);
  if (existsSync(d)) for (const f of readdirSync(d).sort()) if (/\.(blfz|txt)$/.test(f) && f !== 'README.md') inputs.push(join(d, f));
}

function ends(args, what) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', timeout: 20000, maxBuffer: 64 << 20 });
  assert.equal(r.error?.code, undefined, `${what}: ${r.error?.message}`);
  assert.equal(r.signal, null, `${what}: killed by ${r.signal}\n${r.stderr}`);
  assert.ok(r.status === 0 || r.status === 1, `${what}: exit ${r.status}\n${r.stderr}`);
  if (r.status === 1) assert.ok(r.stderr.trim().length > 0 || /error/.test(r.stdout), `${what}: exit 1 without a message`);
  return r;
}

/** The regular files `ls -R -l` printed that cat can be asked for (no NUL in
 * the path) and finishes quickly (up to 64 MiB: a 1 TiB sparse file is
 * really that long): at most 8, those with data first. */
function regularFiles(lsOut) {
  const files = [];
  for (const line of lsOut.split('\n')) {
    const m = /^-\S* +\d+ +\d+ +\d+ +(\d+) (\/.*)$/.exec(line);
    if (m && !m[2].includes('\0') && Number(m[1]) <= 64 * 2 ** 20) files.push({ size: Number(m[1]), path: m[2] });
  }
  return files.sort((a, b) => (b.size > 0) - (a.size > 0)).slice(0, 8).map((f) => f.path);
}

test('the corpus is there', () => assert.ok(inputs.length >= 20, `${inputs.length} inputs`));

for (const input of inputs) {
  const name = input.slice(fuzz.length);
  test(name, () => {
    if (input.endsWith('.txt')) {
      ends(['run', input, '--image', join(dir, 'script.img')], `run ${name}`);
      return;
    }
    const img = join(dir, 'in.img');
    if (!unpackToFile(readFileSync(input), img)) return; // not an image: the targets skip it too
    const ls = ends(['ls', '-R', '-l', img], `ls ${name}`);
    for (const path of regularFiles(ls.stdout)) ends(['cat', img, path], `cat ${path} of ${name}`);
    for (const args of [['check', '--check-data-csum', img], ['dump-tree', img], ['dump-json', img],
      ['replay', img, '-o', join(dir, 'out.img')], ['balance', img, '-o', join(dir, 'out.img')], ['extract', img, join(dir, `x-${inputs.indexOf(input)}`)]]) {
      rmSync(join(dir, 'out.img'), { force: true });
      const r = ends(args, `${args[0]} ${name}`);
      // a writer that exits 0 leaves an image check passes (issue 39)
      if (r.status === 0 && (args[0] === 'replay' || args[0] === 'balance')) {
        const k = ends(['check', join(dir, 'out.img')], `check after ${args[0]} ${name}`);
        assert.equal(k.status, 0, `${args[0]} ${name} exited 0 with an image check fails:\n${k.stdout}`);
      }
    }
    spawnSync('rm', ['-rf', join(dir, `x-${inputs.indexOf(input)}`)]);
  });
}

test('the CLI is built hardened: PIE, stack protector, full RELRO', () => {
  const h = spawnSync('readelf', ['-h', '-d', '-s', CLI], { encoding: 'utf8' }).stdout;
  assert.match(h, /Type:\s+DYN/);
  assert.match(h, /__stack_chk_fail/);
  assert.match(h, /BIND_NOW|FLAGS_1.*NOW/);
});
