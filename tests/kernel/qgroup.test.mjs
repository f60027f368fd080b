// Qgroups, as the kernel counts them. Seeded random scenarios with quotas
// enabled at a random step, between subvolume creates, snapshots (read-only
// and writable, of any subvolume), reflinks, writes, overwrites, truncates,
// renames, links and deletes; qgroups 1/N made and subvolumes assigned to
// them (which leaves the numbers inconsistent until the rescan that follows).
// For every image: `btrfs check --qgroup-report` finds no qgroup whose
// numbers differ from its own count, the kernel's mount holds the model's
// files, `btrfs qgroup show -p --raw` on it prints what `btrfslab qgroup show
// -p --raw` prints from the image, and after the kernel's own `btrfs quota
// rescan -w` the numbers are still ours. Rerun one seed with
//   BTRFSLAB_SEED=<seed> node --test tests/kernel/qgroup.test.mjs
// and more with BTRFSLAB_QGROUP_SEEDS=<n> (default 60 a node size).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { CLI, scratchDir, skipReason, SNAP, withMount } from './lib.mjs';
import { randomScenario } from './model.mjs';

const skip = skipReason();
const dir = scratchDir('qgroup');
const only = process.env.BTRFSLAB_SEED ? [Number(process.env.BTRFSLAB_SEED)] : null;
const SEEDS = Number(process.env.BTRFSLAB_QGROUP_SEEDS ?? 60);
const PLAN = [
  { nodesize: 4096, ops: 80 },
  { nodesize: 16384, ops: 80 },
];
/** qgroup id -> [referenced, exclusive] from `qgroup show --raw` text. */
const numbers = (text) => Object.fromEntries(text.split('\n').filter((l) => /^\d+\/\d+ /.test(l)).map((l) => {
  const [id, rfer, excl] = l.trim().split(/\s+/);
  return [id, [Number(rfer), Number(excl)]];
}));

async function checkScenario(seed, nodesize, ops) {
  const { text, model } = randomScenario(seed, { ops, nodesize, snapshots: 0.05, subvols: 0.03, clones: 0.05, quota: true, commitEvery: 10 });
  const script = join(dir, `q${seed}-${nodesize}.txt`);
  const img = join(dir, `q${seed}-${nodesize}.img`);
  writeFileSync(script, text);
  try {
    execFileSync(CLI, ['run', script, '--image', img, '--seed', String(seed * 100000 + nodesize + 11)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const c = spawnSync('btrfs', ['check', '--qgroup-report', img], { encoding: 'utf8' });
    const report = c.stdout + c.stderr;
    assert.equal(c.status, 0, `seed ${seed} nodesize ${nodesize}: btrfs check failed (script ${script}):\n${report}`);
    assert.doesNotMatch(report, /are different|Rescan hasn't been/, `seed ${seed} nodesize ${nodesize}: qgroup numbers differ from btrfs check's count (script ${script}):\n${report}`);
    assert.match(report, /Counts for qgroup id: 0\/5/);
    const ours = execFileSync(CLI, ['qgroup', 'show', '-p', '--raw', img], { encoding: 'utf8' });
    const seen = await withMount(img, (mnt) => {
      const files = JSON.parse(execFileSync('python3', [SNAP, mnt], { encoding: 'utf8', maxBuffer: 1 << 28 }));
      const shown = execFileSync('btrfs', ['qgroup', 'show', '-p', '--raw', mnt], { encoding: 'utf8' });
      execFileSync('btrfs', ['quota', 'rescan', '-w', mnt], { stdio: 'ignore' });
      const rescanned = execFileSync('btrfs', ['qgroup', 'show', '-p', '--raw', mnt], { encoding: 'utf8' });
      return { files, shown, rescanned };
    }, { options: ['noatime'] }); // reading the files must not change them: atime updates would COW shared blocks
    // the kernel's view: the model's files; qgroup show as ours prints it; its own rescan agrees
    delete model.snapshot()['/'];
    assert.deepEqual(seen.files, model.snapshot(), `seed ${seed} nodesize ${nodesize}: the kernel's view differs from the model`);
    assert.equal(seen.shown, ours, `seed ${seed} nodesize ${nodesize}: btrfs qgroup show differs from ours`);
    assert.deepEqual(numbers(seen.rescanned), numbers(ours), `seed ${seed} nodesize ${nodesize}: the kernel's rescan counts otherwise`);
    rmSync(script);
    return Object.keys(numbers(ours)).length;
  } finally {
    rmSync(img, { force: true });
  }
}

describe('qgroups: btrfs check, the kernel\'s qgroup show and its own rescan agree with ours', { skip }, () => {
  let groups = 0;
  for (const { nodesize, ops } of PLAN) {
    for (let seed = 1; seed <= SEEDS; seed++) {
      if (only && !only.includes(seed)) continue;
      test(`seed ${seed}, nodesize ${nodesize}, ${ops} ops`, async () => { groups += await checkScenario(seed, nodesize, ops); });
    }
  }
  test('the seeds made qgroups beyond the top level', { skip: !!only }, () => {
    assert.ok(groups > SEEDS * PLAN.length * 2, `${groups} qgroups in ${SEEDS * PLAN.length} scenarios`);
  });
});
