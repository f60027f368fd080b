// Our logs, the kernel's replay: seeded random scenarios of file and
// directory operations with fsyncs, ending in a crash, in both directory
// logging modes. The kernel mounts one copy of each crashed image (and so
// replays its log); `btrfslab replay` replays another. Both results pass
// `btrfs check` and show the same tree: names, types, sizes, link counts,
// contents, xattrs. Files fsynced and not touched afterwards must hold what
// they held at their fsync. Rerun one seed with
//   BTRFSLAB_SEED=<seed> node --test tests/kernel/fsync.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';

import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { CLI, scratchDir, skipReason, replayBothWays } from './lib.mjs';
import { randomFsyncScenario } from './model.mjs';

const skip = skipReason();
const dir = scratchDir('fsync');

const only = process.env.BTRFSLAB_SEED ? [Number(process.env.BTRFSLAB_SEED)] : null;
const SEEDS = 100; // per mode

export async function checkFsyncScenario(seed, mode) {
  const { text, promises } = randomFsyncScenario(seed, { mode, ops: 30 + (seed % 3) * 15 });
  const tag = `s${seed}-${mode}`;
  const script = join(dir, `${tag}.txt`);
  const img = join(dir, `${tag}.img`);
  writeFileSync(script, text);
  const where = `seed ${seed} (${mode}; script ${script})`;
  try {
    execFileSync(CLI, ['run', script, '--image', img, '--seed', String(seed * 1000 + (mode === 'legacy' ? 7 : 3))],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    const theirs = await replayBothWays(img, where);
    // what fsync promised is there
    for (const { path, at, desc } of promises) {
      const got = theirs[path];
      if (path !== '/') assert.ok(got, `${where}: ${path}, fsynced at line ${at} and left alone, is gone after replay`);
      if (desc.names) {
        const prefix = path === '/' ? '/' : `${path}/`;
        const names = Object.keys(theirs).filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/'))
          .map((p) => p.slice(prefix.length)).sort();
        assert.deepEqual(names, desc.names, `${where}: directory ${path}, fsynced at line ${at}, holds other names after replay`);
      } else {
        assert.equal(got.size, desc.size, `${where}: ${path}, fsynced at line ${at}: size`);
        assert.equal(got.sha, desc.sha, `${where}: ${path}, fsynced at line ${at}: contents`);
      }
    }
    rmSync(script);
  } finally {
    rmSync(img, { force: true });
  }
}

describe('fsync, crash, replay: the kernel and btrfslab replay our logs alike', { skip }, () => {
  for (const mode of ['index-only', 'legacy']) {
    for (let seed = 1; seed <= SEEDS; seed++) {
      if (only && !only.includes(seed)) continue;
      test(`seed ${seed}, ${mode}`, () => checkFsyncScenario(seed, mode));
    }
  }
});
