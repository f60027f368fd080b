// The fuzz seed corpus and regression corpus through the WASM build: every
// image opens or is refused with a CoreError, and whatever opens can be
// dumped, listed, checked and replayed without a trap (a RuntimeError would
// kill the page's worker).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import createBtrfsCore from './generated/btrfslab-core.mjs';
import { CoreError } from './errors';
import { Core } from './wasm';
// @ts-expect-error: a plain ES module shared with the Node tests
import { unpack } from '../../../wasm-core/fuzz/blfz.mjs';

const fuzz = fileURLToPath(new URL('../../../wasm-core/fuzz/', import.meta.url));
const wasmPath = fileURLToPath(new URL('./generated/btrfslab-core.wasm', import.meta.url));
const inputs = ['regressions', 'corpus/images']
  .map((d) => join(fuzz, d))
  .filter((d) => existsSync(d))
  .flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.blfz')).sort().map((f) => join(d, f)));
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

describe('fuzz corpus through the WASM core', () => {
  test('the corpus is there', () => expect(inputs.length).toBeGreaterThanOrEqual(20));
  test.each(inputs.map((p) => [p.slice(fuzz.length), p]))('%s', (_name, path) => {
    const u = unpack(readFileSync(path));
    if (!u) return;
    const h = refusedOrDone(() => core.open(new Uint8Array(u.img)));
    if (h === null) return;
    refusedOrDone(() => core.dumpTrees(h));
    refusedOrDone(() => core.ls(h, '/'));
    refusedOrDone(() => core.checkFs(h));
    refusedOrDone(() => core.replay(h));
    core.close(h);
  }, 60000);
});
