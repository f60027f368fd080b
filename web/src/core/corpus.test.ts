// The fuzz seed corpus and regression corpus through the WASM build: every
// image opens or is refused with a CoreError, and whatever opens can be
// dumped, listed, read (cat), checked and replayed without a trap (a
// RuntimeError would kill the page's worker) or a hang.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import createBtrfsCore from './generated/btrfslab-core.mjs';
import { CoreError } from './errors';
import { Core, type Handle } from './wasm';
// @ts-expect-error: a plain ES module shared with the Node tests
import { unpack } from '../../../wasm-core/fuzz/blfz.mjs';

const FT_REG_FILE = 1, FT_DIR = 2; // btrfs directory entry types
const fuzz = fileURLToPath(new URL('../../../wasm-core/fuzz/', import.meta.url));
const wasmPath = fileURLToPath(new URL('./generated/btrfslab-core.wasm', import.meta.url));
const inputs = ['regressions', 'corpus/images']
  .map((d) => join(fuzz, d))
  .filter((d) => existsSync(d))
  .flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.blfz')).sort().map((f) => join(d, f)));
const scripts = ['regressions', 'corpus/scripts']
  .map((d) => join(fuzz, d))
  .filter((d) => existsSync(d))
  .flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.txt')).sort().map((f) => join(d, f)));
let core: Core;

beforeAll(async () => {
  core = Core.fromModule(await createBtrfsCore({ wasmBinary: readFileSync(wasmPath) }));
});

/** Runs fn; a CoreError (the core refusing) is fine, anything else is not. */
function refusedOrDone<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch (e) {
    if (e instanceof CoreError) return null;
    throw e;
  }
}

/** Lists directories from the root (each inode once, at most 200) and cats
 * the regular files found (at most 32): no trap, whatever the image holds. */
function walkAndCat(h: Handle) {
  const seen = new Set<bigint>();
  const dirs = ['/'];
  let files = 0;
  for (let n = 0; dirs.length && n < 200; n++) {
    const dir = dirs.pop() as string;
    for (const e of refusedOrDone(() => core.ls(h, dir)) ?? []) {
      if (seen.has(e.ino)) continue;
      seen.add(e.ino);
      const path = `${dir === '/' ? '' : dir}/${e.name}`;
      if (e.type === FT_DIR) dirs.push(path);
      else if (e.type === FT_REG_FILE && files++ < 32) refusedOrDone(() => core.cat(h, path));
    }
  }
}

describe('fuzz corpus through the WASM core', () => {
  test('the corpus is there', () => expect(inputs.length).toBeGreaterThanOrEqual(20));
  test.each(inputs.map((p) => [p.slice(fuzz.length), p]))('%s', (_name, path) => {
    const u = unpack(readFileSync(path));
    if (!u) return;
    const h = refusedOrDone(() => core.open(u.img));
    if (h === null) return;
    refusedOrDone(() => core.dumpTrees(h));
    walkAndCat(h);
    refusedOrDone(() => core.checkFs(h));
    refusedOrDone(() => core.replay(h));
    core.close(h);
  }, 60000);
});

describe('fuzz scenario corpus through the WASM core', () => {
  test.each(scripts.map((p) => [p.slice(fuzz.length), p]))('%s', (_name, path) => {
    const h = refusedOrDone(() => core.run(readFileSync(path, 'utf8'), { seed: 1n, now: 1n, trace: false }));
    if (h !== null) core.close(h);
  }, 60000);
});
