// Seeded random scenarios of mixed file operations with commits between, at
// 4K nodes (deep trees, many splits and merges) and 16K: every image passes
// `btrfs check --check-data-csum`, and the kernel's read-only mount equals
// the model of what the script did. Each test names its seed; rerun one with
//   BTRFSLAB_SEED=<seed> node --test tests/kernel/random.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';
import { describe, test } from 'node:test';

import { btrfsCheck, CLI, scratchDir, skipReason, SNAP, withMount } from './lib.mjs';
import { randomScenario } from './model.mjs';

const skip = skipReason();
const dir = scratchDir('random');

const only = process.env.BTRFSLAB_SEED ? [Number(process.env.BTRFSLAB_SEED)] : null;
const PLAN = [
  { nodesize: 4096, seeds: 130, ops: 70 },
  { nodesize: 16384, seeds: 80, ops: 70 },
];

export async function checkScenario(seed, nodesize, ops) {
  const { text, model } = randomScenario(seed, { ops, nodesize });
  const script = join(dir, `s${seed}-${nodesize}.txt`);
  const img = join(dir, `s${seed}-${nodesize}.img`);
  writeFileSync(script, text);
  try {
    // a fsid of its own per image: the kernel remembers devices by fsid
    execFileSync(CLI, ['run', script, '--image', img, '--seed', String(seed * 100000 + nodesize)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const c = btrfsCheck(img, ['--check-data-csum']);
    assert.ok(c.ok, `seed ${seed} nodesize ${nodesize}: btrfs check failed (script ${script}):\n${c.output}`);
    execFileSync(CLI, ['check', '--check-data-csum', img], { encoding: 'utf8' }); // our check agrees: nothing wrong
    const seen = await withMount(img, (mnt) => JSON.parse(execFileSync('python3', [SNAP, mnt], { encoding: 'utf8', maxBuffer: 1 << 28 })), { readOnly: true });
    assert.deepEqual(seen, model.snapshot(), `seed ${seed} nodesize ${nodesize}: the kernel's view differs from the model`);
    rmSync(script);
  } finally {
    rmSync(img, { force: true });
  }
}

describe('random scenarios: btrfs check and the kernel agree with the model', { skip }, () => {
  for (const { nodesize, seeds, ops } of PLAN) {
    for (let seed = 1; seed <= seeds; seed++) {
      if (only && !only.includes(seed)) continue;
      test(`seed ${seed}, nodesize ${nodesize}, ${ops} ops`, () => checkScenario(seed, nodesize, ops));
    }
  }
});
