// Every crash point tried: the 200 seeded fsync scenarios of fsync.test.mjs
// (100 seeds, both directory logging modes), each walked by `btrfslab
// crashes`: a power cut after every tree block and superblock copy the run
// writes, each image replayed by the core, checked, and every fsync promise
// in force there verified. No promise may break. Then a seeded sample of
// those crash images (BTRFSLAB_CRASH_SAMPLE per scenario, 1 unless set) goes
// to the kernel: it mounts one copy (its replay), `btrfslab replay` writes
// another, both pass `btrfs check` and show the same tree, and the promises
// hold in the kernel's. Rerun one seed with
//   BTRFSLAB_SEED=<seed> node --test tests/kernel/crashes.test.mjs
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { CLI, replayBothWays, scratchDir, skipReason } from './lib.mjs';
import { randomFsyncScenario } from './model.mjs';

const skip = skipReason();
const dir = scratchDir('crashes');
const only = process.env.BTRFSLAB_SEED ? [Number(process.env.BTRFSLAB_SEED)] : null;
const SEEDS = 100; // per mode
const SAMPLE = Number(process.env.BTRFSLAB_CRASH_SAMPLE ?? 1);
const totals = { scenarios: 0, points: 0, promises: 0, kernel: 0 };

/** A crash image's promises checked on the kernel's view of it (snapshot.py's map of paths). */
function checkPromises(theirs, promises, where) {
  for (const p of promises) {
    const got = theirs[p.path];
    if (p.path !== '/') assert.ok(got, `${where}: ${p.path}, fsynced at line ${p.line}, is gone in the kernel's replay`);
    if (p.type === 'dir') {
      const prefix = p.path === '/' ? '/' : `${p.path}/`;
      const names = Object.keys(theirs).filter((k) => k.startsWith(prefix) && k.length > prefix.length && !k.slice(prefix.length).includes('/'))
        .map((k) => k.slice(prefix.length)).sort();
      assert.deepEqual(names, [...p.names].sort(), `${where}: directory ${p.path}, fsynced at line ${p.line}, holds other names in the kernel's replay`);
    } else {
      assert.equal(got.size, p.size, `${where}: ${p.path}, fsynced at line ${p.line}: size in the kernel's replay`);
    }
  }
}

async function walk(seed, mode) {
  const { text } = randomFsyncScenario(seed, { mode, ops: 30 + (seed % 3) * 15 });
  const tag = `s${seed}-${mode}`;
  const script = join(dir, `${tag}.txt`);
  writeFileSync(script, text);
  const where = `seed ${seed} (${mode}; script ${script})`;
  const seedArg = String(seed * 1000 + (mode === 'legacy' ? 7 : 3));
  // every crash point, in the core
  const r = spawnSync(CLI, ['crashes', script, '--json', '--seed', seedArg], { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.ok(r.stdout, `${where}: btrfslab crashes printed nothing:\n${r.stderr}`);
  const rep = JSON.parse(r.stdout);
  const broken = rep.broken.map((b) => `crash point ${b.point} (line ${b.line}, ${b.at}): ${b.what}`);
  assert.deepEqual(broken, [], `${where}: broken promises`);
  assert.equal(r.status, 0, `${where}: btrfslab crashes exited ${r.status}:\n${r.stderr}`);
  assert.ok(rep.points > 0 && rep.tried === rep.points, `${where}: ${rep.tried} of ${rep.points} crash points tried`);
  totals.scenarios++;
  totals.points += rep.tried;
  totals.promises += rep.promises;
  // a sample of them, in the kernel
  if (!SAMPLE) return;
  const out = join(dir, `${tag}-points`);
  rmSync(out, { recursive: true, force: true });
  try {
    execFileSync(CLI, ['crashes', script, '--sample', String(SAMPLE), '--sample-seed', String(seed), '--export', out, '--seed', seedArg],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    const points = JSON.parse(readFileSync(join(out, 'points.json'), 'utf8'));
    assert.equal(points.length, Math.min(SAMPLE, rep.points));
    for (const p of points) {
      const at = `${where}, crash point ${p.point} (line ${p.line}, ${p.at})`;
      const theirs = await replayBothWays(join(out, p.image), at);
      checkPromises(theirs, p.promises, at);
      totals.kernel++;
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  rmSync(script);
}

describe('every crash point of the seeded fsync scenarios keeps what fsync promised', { skip, concurrency: 2 }, () => {
  for (const mode of ['index-only', 'legacy']) {
    for (let seed = 1; seed <= SEEDS; seed++) {
      if (only && !only.includes(seed)) continue;
      test(`seed ${seed}, ${mode}`, () => walk(seed, mode));
    }
  }
  after(() => {
    process.stdout.write(`# crash points: ${totals.points} tried in the core over ${totals.scenarios} scenarios (${totals.promises} fsync promises); ${totals.kernel} sampled crash images replayed by the kernel too\n`);
  });
});
