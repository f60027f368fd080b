// The libFuzzer targets of wasm-core/fuzz, each run briefly on a copy of its
// seed corpus: a crash, a leak, a sanitizer report or a slow input fails it.
// BTRFSLAB_FUZZ_SECONDS sets the time per target (7 s by default, about a
// minute and a quarter in all); node bench/run.mjs fuzz runs them for long.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildFuzzers, copySeeds, runFuzzer, TARGETS } from '../../wasm-core/fuzz/run.mjs';

const seconds = Number(process.env.BTRFSLAB_FUZZ_SECONDS || 7);
const tmp = mkdtempSync(join(tmpdir(), 'btrfslab-fuzz-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe(`libFuzzer targets, ${seconds} s each`, () => {
  before(() => buildFuzzers());
  for (const t of TARGETS) {
    test(t, () => {
      const dir = join(tmp, t);
      copySeeds(t, dir);
      const r = runFuzzer(t, dir, { seconds, artifacts: join(tmp, `crash-${t}-`) });
      assert.equal(r.status, 0, `${t}: libFuzzer exited ${r.status}\n${r.tail}`);
      assert.ok(r.executions > 0, `${t} ran no input`);
      assert.deepEqual(readdirSync(tmp).filter((f) => f.startsWith(`crash-${t}-`)), [], `${t} left a crash input`);
    });
  }
});
