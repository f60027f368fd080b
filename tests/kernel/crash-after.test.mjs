// `run --crash-after LINE`, checked by the kernel: the image a power cut
// after LINE leaves comes from a checkpoint of one run (a clone of the
// device, opened again), not from running the script to LINE. The kernel
// mounts it (replaying its log); `btrfslab replay` replays a copy; both pass
// `btrfs check` and show the same tree. Crash points are spread over each
// seeded random fsync scenario that logs (the k-th such seed; each names
// its seed), in both directory logging modes: after fsyncs that logged and
// after one that committed. Rerun one with
// BTRFSLAB_SEED=<k> node --test tests/kernel/crash-after.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CLI, scratchDir, skipReason, replayBothWays } from './lib.mjs';
import { randomFsyncScenario } from './model.mjs';

const skip = skipReason();
const dir = scratchDir('crash-after');
const only = process.env.BTRFSLAB_SEED ? [Number(process.env.BTRFSLAB_SEED)] : null;
const SEEDS = Number(process.env.BTRFSLAB_CRASH_AFTER_SEEDS || 2); // per mode; 3 crash points each

/** Whether the image's superblock points at a log (progs' dump-super). */
const hasLog = (img) => /^log_root\s+[1-9]/m.test(execFileSync('btrfs', ['inspect-internal', 'dump-super', img], { encoding: 'utf8' }));

/**
 * The scenario of a seed (without its own crash) and its crash points: right
 * after each fsync and after the last line, each with whether the power cut
 * leaves a log (an fsync may commit instead).
 */
function crashPoints(seed, mode) {
  const { text } = randomFsyncScenario(seed, { mode, ops: 40 });
  const lines = text.replace(/\n*$/, '').split('\n').filter((l) => l.trim() !== 'crash');
  const script = join(dir, `s${seed}-${mode}.txt`);
  writeFileSync(script, lines.join('\n') + '\n');
  const img = join(dir, `s${seed}-${mode}-probe.img`);
  const at = [...new Set([...lines.flatMap((l, i) => (l.startsWith('fsync ') ? [i + 1] : [])), lines.length])];
  const points = at.map((line) => {
    execFileSync(CLI, ['run', script, '--crash-after', String(line), '--image', img, '--seed', String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
    return { line, log: hasLog(img) };
  });
  rmSync(img, { force: true });
  return { script, points };
}

/** The k-th seed (1-based) whose scenario has a crash point with a log, and its points. */
function kthWithLog(k, mode) {
  for (let seed = 1, n = 0; seed < 200; seed++) {
    const c = crashPoints(seed, mode);
    if (c.points.some((p) => p.log) && ++n === k) return { seed, ...c };
    rmSync(c.script, { force: true });
  }
  throw new Error(`no ${k}th scenario with a logged fsync in 200 seeds`);
}

async function checkCrashPoints(k, mode) {
  const { seed, script, points } = kthWithLog(k, mode);
  // the first, a middle and the last point with a log, and one without (the last commit alone)
  const logged = points.filter((p) => p.log);
  const pick = [...new Set([logged[0], logged[logged.length >> 1], logged[logged.length - 1], points.find((p) => !p.log)])].filter(Boolean);
  for (const { line, log } of pick) {
    const tag = `s${seed}-${mode}-at${line}`;
    const where = `seed ${seed} (${mode}), --crash-after ${line} (${log ? 'a log' : 'no log'}; script ${script})`;
    const img = join(dir, `${tag}.img`);
    try {
      execFileSync(CLI, ['run', script, '--crash-after', String(line), '--image', img, '--seed', String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
      await replayBothWays(img, where);
    } finally {
      rmSync(img, { force: true });
    }
  }
  rmSync(script);
}

describe('run --crash-after: the kernel mounts a checkpoint\'s power cut as btrfslab replays it', { skip }, () => {
  for (const mode of ['index-only', 'legacy']) {
    for (let k = 1; k <= SEEDS; k++) {
      if (only && !only.includes(k)) continue;
      test(`scenario ${k} with a logged fsync, ${mode}`, () => checkCrashPoints(k, mode));
    }
  }
});
