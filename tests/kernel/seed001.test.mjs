// Seed 001 reproduced: the seed's experiment run by the kernel (measured here,
// live) and by btrfslab in index-only mode logs the same items per key type,
// and the same number of log leaves within 2%. In legacy mode (DIR_ITEM keys
// logged too, new entries walked in name-hash order) btrfslab logs more, and
// its modelled fsync cost falls by what the seed's table shows, within 10
// points, at 10,000 files and more.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { after, describe, test } from 'node:test';

import { scratchDir, skipReason } from './lib.mjs';
import { kernelSeed001, modelSeed001 } from './seed001.mjs';

const skip = skipReason();
const dir = scratchDir('seed001-test');

// The seed's table (lessons/02-fsync-log-tree/lesson.json, where the page
// reads it too): the patch's change of dir fsync time, create and delete, in %.
const LESSON = JSON.parse(readFileSync(new URL('../../lessons/02-fsync-log-tree/lesson.json', import.meta.url), 'utf8'));
const change = ([before, after]) => Math.round(((after - before) / before) * 1000) / 10;
const SEED_TABLE = Object.fromEntries(LESSON.seed.table.map((r) => [r.n, { create: change(r.create), delete: change(r.delete) }]));

const pct = (after, before) => (100 * (after - before)) / before;

describe('seed 001: directory logging, the kernel and btrfslab', { skip }, () => {
  for (const [N, D] of [[1000, 100], [10000, 1000], [100000, 1000]]) {
    test(`N=${N}, D=${D}: index-only logs what the kernel logs; legacy costs what the seed measured`, async () => {
      const k = await kernelSeed001(N, D, { dir });
      const io = modelSeed001(N, D, 'index-only', dir);
      const lg = modelSeed001(N, D, 'legacy', dir);
      // The kernel's log leaves move from run to run: the directory's index items reach the log from fs leaves where
      // the delayed-items worker flushed them before the fsync, and from the delayed node where it had not (since
      // v6.1), packed differently. At N=1000 this kernel gave 18, 19 and 20 leaves over runs. So a count off by more
      // than the tolerance is held against up to two more captures, and must match one of them.
      const near = (ourLeaves, kl) => Math.abs(ourLeaves - kl) / kl <= 0.02 || Math.abs(ourLeaves - kl) <= 1;
      const more = [];
      const leavesSeen = async (phase) => {
        const seen = [k[phase].leaves];
        for (let i = 0; !seen.some((kl) => near(io[phase].leaves, kl)) && i < 2; i++) {
          more[i] ??= await kernelSeed001(N, D, { dir });
          seen.push(more[i][phase].leaves);
        }
        return seen;
      };
      for (const phase of ['create', 'delete']) {
        const kp = k[phase];
        assert.ok(kp.hasLog && kp.commits === 0, `N=${N} ${phase}: the kernel committed instead of logging`);
        assert.deepEqual(io[phase].items, kp.items, `N=${N} ${phase}: items per key type differ from the kernel's`);
        const seen = await leavesSeen(phase);
        assert.ok(seen.some((kl) => near(io[phase].leaves, kl)),
          `N=${N} ${phase}: ${io[phase].leaves} log leaves, the kernel ${seen.join(', ')} over ${seen.length} runs`);
        assert.ok(lg[phase].bytes > io[phase].bytes, `N=${N} ${phase}: legacy logs no more than index-only`);
        const change = pct(io[phase].cost_us, lg[phase].cost_us);
        process.stdout.write(`# N=${N} ${phase}: kernel ${seen.join('/')} leaves ${kp.ms} ms; ours ${io[phase].leaves} leaves; ` +
          `legacy ${lg[phase].leaves} leaves, ${lg[phase].bytes} B vs ${io[phase].bytes} B; modelled cost ${lg[phase].cost_us} -> ` +
          `${io[phase].cost_us} us (${change.toFixed(1)}%, seed ${SEED_TABLE[N][phase]}%)\n`);
        if (N >= 10000) {
          assert.ok(Math.abs(change - SEED_TABLE[N][phase]) <= 10,
            `N=${N} ${phase}: modelled cost changes ${change.toFixed(1)}%, the seed measured ${SEED_TABLE[N][phase]}%`);
        }
      }
    });
  }
});
