// Every crash point tried: the 200 seeded fsync scenarios of fsync.test.mjs
// (100 seeds, both directory logging modes), each walked by `btrfslab
// crashes`: a power cut after every tree block and superblock copy the run
// writes, each image replayed by the core, checked, and every fsync promise
// in force there verified. No promise may break. Then a seeded sample of
// those crash images (BTRFSLAB_CRASH_SAMPLE per scenario when set; unless
// set, one of every other scenario's, every fourth thread scenario's) goes
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
    } else if (p.prefix) {
      // a thread's fsync: later appends may have been made durable too
      assert.ok(got.size >= p.size, `${where}: ${p.path}, fsynced by a thread at line ${p.line} with ${p.size} bytes, has ${got.size} in the kernel's replay`);
    } else {
      assert.equal(got.size, p.size, `${where}: ${p.path}, fsynced at line ${p.line}: size in the kernel's replay`);
    }
  }
}

/** A seeded scenario of threads on the data path: files written through the
 * page cache by two to four threads at once, fsynced, sometimes synced or
 * renamed, in one or two sections, then a power cut as the threads return
 * (ordered extents may still be completing); tree locks by tree or by block,
 * log copies by clone or prealloc, memory pressure and how long ordered
 * extents take to complete vary with the seed.
 * fsyncWait: ordered|writeback. */
export function randomThreadScenario(seed, fsyncWait) {
  let x = BigInt(seed) * 0x9e3779b97f4a7c15n + 0x1234567n;
  const rnd = (n) => {
    x ^= x << 13n; x &= (1n << 64n) - 1n; x ^= x >> 7n; x ^= x << 17n; x &= (1n << 64n) - 1n;
    return Number(x % BigInt(n));
  };
  const l = [`mkfs size=128M nodesize=${rnd(2) ? '16K' : '4K'}`, `set fsync_wait=${fsyncWait}`, `set device=${['nvme', 'ssd', 'loop'][rnd(3)]}`,
    `set seed=${seed}`, `set tree_locks=${rnd(2) ? 'path' : 'tree'}`, `set log_copy=${rnd(2) ? 'clone' : 'prealloc'}`,
    `set memory_pressure=${['none', 'moderate', 'heavy'][rnd(3)]}`];
  // completions slowed in two of three (checksums inserted in 1 or 3 ms): more fsyncs log ordered extents still in
  // flight, and more writes land on pages one still covers
  const slow = rnd(3);
  if (slow) l.push(`set cost.finish_csum=${slow === 1 ? '1ms' : '3ms'}`);
  l.push('mkdir /d');
  const nthreads = 2 + rnd(3);
  for (let t = 0; t < nthreads; t++) for (let f = 0; f < 2; f++) l.push(`create /d/t${t}f${f}`);
  if (rnd(2)) l.push('commit');
  const sections = 1 + rnd(2);
  for (let s = 0; s < sections; s++) {
    for (let t = 0; t < nthreads; t++) {
      l.push(`thread T${t}`);
      const n = 3 + rnd(6);
      for (let i = 0; i < n; i++) {
        const f = `/d/t${t}f${rnd(2)}`;
        const r = rnd(10);
        if (r < 5) l.push(`write ${f} ${rnd(64) * 4096 + (rnd(4) ? 0 : rnd(4096))} ${1 + rnd(96 * 1024)} ${1 + rnd(1000)}`);
        else if (r < 9) l.push(`fsync ${f}`);
        else if (r < 10 && s === 0 && rnd(3) === 0) l.push('sync');
        else l.push(`fsync ${f}`);
      }
      l.push('end');
    }
    if (s + 1 < sections && rnd(2)) l.push(`fsync /d/t0f0`);
  }
  l.push('crash');
  return l.join('\n') + '\n';
}

async function walk(seed, mode, threads = false) {
  const text = threads ? randomThreadScenario(seed, mode) : randomFsyncScenario(seed, { mode, ops: 30 + (seed % 3) * 15 }).text;
  const tag = `s${seed}-${mode}`;
  const script = join(dir, `${tag}.txt`);
  writeFileSync(script, text);
  const where = `seed ${seed} (${mode}; script ${script})`;
  const seedArg = String(seed * 1000 + (mode === 'legacy' ? 7 : 3));
  // every crash point, in the core
  const r = spawnSync(CLI, ['crashes', script, '--all', '--json', '--seed', seedArg], { encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.ok(r.stdout, `${where}: btrfslab crashes printed nothing:\n${r.stderr}`);
  const rep = JSON.parse(r.stdout);
  const broken = rep.broken.map((b) => `crash point ${b.point} (line ${b.line}, ${b.at}): ${b.what}`);
  assert.deepEqual(broken, [], `${where}: broken promises`);
  assert.equal(r.status, 0, `${where}: btrfslab crashes exited ${r.status}:\n${r.stderr}`);
  assert.ok(rep.points > 0 && rep.tried === rep.points, `${where}: ${rep.tried} of ${rep.points} crash points tried`);
  totals.scenarios++;
  totals.points += rep.tried;
  totals.promises += rep.promises;
  // a sample of them, in the kernel (every other seed, for thread scenarios
  // every fourth, unless BTRFSLAB_CRASH_SAMPLE is set: the suite's time;
  // fsync.test.mjs gives every seed's final log to the kernel already)
  if (!SAMPLE || (!process.env.BTRFSLAB_CRASH_SAMPLE && seed % (threads ? 4 : 2))) return;
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

describe('every crash point of the seeded thread scenarios (page cache, ordered extents, both fsync_wait modes) keeps what fsync promised',
  { skip, concurrency: 2 }, () => {
    for (const mode of ['writeback', 'ordered']) {
      for (let seed = 1; seed <= SEEDS; seed++) {
        if (only && !only.includes(seed)) continue;
        test(`threads, seed ${seed}, fsync_wait=${mode}`, () => walk(seed, mode, true));
      }
    }
  });
