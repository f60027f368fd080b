// More trees than a 64-bit set holds, as the kernel and btrfs-progs see
// them: the image of 70 snapshots with quotas (tests/cli/many-snapshots.mjs)
// (at node sizes 4K and 16K) passes `btrfs check --qgroup-report` with no
// qgroup counted otherwise,
// dump-tree prints it as btrfs-progs does, and the kernel's mount shows our
// qgroup numbers in `btrfs qgroup show --raw`, before and after its own
// `btrfs quota rescan -w`.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { manySnapshots } from '../cli/many-snapshots.mjs';
import { CLI, dumpTreeAll, progsDumpTree, scratchDir, skipReason, withMount } from './lib.mjs';

const skip = skipReason();
const dir = scratchDir('many');
const SNAPSHOTS = 70;
/** qgroup id -> [referenced, exclusive] from `qgroup show --raw` text. */
const numbers = (text) => Object.fromEntries(text.split('\n').filter((l) => /^\d+\/\d+ /.test(l)).map((l) => {
  const [id, rfer, excl] = l.trim().split(/\s+/);
  return [id, [Number(rfer), Number(excl)]];
}));

describe(`${SNAPSHOTS} snapshots with quotas: btrfs check, btrfs-progs and the kernel agree with our numbers`, { skip }, () => {
  for (const nodesize of ['4K', '16K']) {
    test(`nodesize ${nodesize}: check --qgroup-report, dump-tree, qgroup show and the kernel's rescan`, async () => {
      const script = join(dir, `many-${nodesize}.txt`), img = join(dir, `many-${nodesize}.img`);
      writeFileSync(script, manySnapshots(SNAPSHOTS, [], { nodesize }));
      const t0 = process.hrtime.bigint();
      execFileSync(CLI, ['run', script, '--image', img], { stdio: ['ignore', 'pipe', 'pipe'] });
      process.stdout.write(`# nodesize ${nodesize}: our run ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0)} ms\n`);
      const ours = numbers(execFileSync(CLI, ['qgroup', 'show', '--raw', img], { encoding: 'utf8' }));
      assert.equal(Object.keys(ours).length, SNAPSHOTS + 1);

      const c = spawnSync('btrfs', ['check', '--qgroup-report', img], { encoding: 'utf8' });
      const report = c.stdout + c.stderr;
      assert.equal(c.status, 0, `btrfs check failed:\n${report}`);
      assert.doesNotMatch(report, /are different|Rescan hasn't been|ERROR/, report);
      // btrfs-progs (6.2) counts only the qgroups whose INFO items are in the quota tree's last leaf: at
      // 4K that tree has three leaves (a kernel-made one alike), at 16K one, and every qgroup is counted
      const counted = [...report.matchAll(/Counts for qgroup id: (\d+\/\d+) /g)].map((m) => m[1]);
      for (const id of counted) assert.ok(id in ours, `btrfs check counted ${id}, which we do not have`);
      if (nodesize === '16K') assert.deepEqual(counted.sort(), Object.keys(ours).sort(), 'btrfs check counted every qgroup');
      assert.deepEqual(dumpTreeAll(execFileSync(CLI, ['dump-tree', img], { encoding: 'utf8', maxBuffer: 1 << 28 })), dumpTreeAll(progsDumpTree(img)),
        'dump-tree differs from btrfs-progs\'');

      const seen = await withMount(img, (mnt) => {
        const shown = execFileSync('btrfs', ['qgroup', 'show', '--raw', mnt], { encoding: 'utf8' });
        execFileSync('btrfs', ['quota', 'rescan', '-w', mnt], { stdio: 'ignore' });
        const rescanned = execFileSync('btrfs', ['qgroup', 'show', '--raw', mnt], { encoding: 'utf8' });
        return { shown: numbers(shown), rescanned: numbers(rescanned) };
      }, { options: ['noatime'] }); // reading must not change the trees
      assert.deepEqual(seen.shown, ours, 'the kernel reads other numbers');
      assert.deepEqual(seen.rescanned, ours, 'the kernel\'s rescan counts otherwise');
    });
  }
});
