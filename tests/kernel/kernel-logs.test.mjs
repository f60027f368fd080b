// The kernel writes a log; the kernel and `btrfslab replay` must replay it to
// the same filesystem. Each scenario: a fresh mkfs.btrfs image mounted with
// commit=600, setup + sync, then operations and fsyncs; the image is copied
// while mounted (the copy holds the pending log). The kernel side, always
// asserted: the copy has a log_root, the kernel replays it at a read-write
// mount, what fsync promised is there, and btrfs check passes. Then, once
// `btrfslab replay` exists: our replay passes btrfs check, has no log left,
// and mounts to exactly what the kernel's replay shows.
//   BTRFSLAB_SCENARIO=<substring of a name> runs the matching scenarios only;
//   BTRFSLAB_KEEP=1 keeps the images (the messages say where they are).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { SCENARIOS, captureWithRetry, kernelReplay, ourReplay, replayUnavailable } from './kernel-logs.mjs';
import { skipReason } from './lib.mjs';

const skip = skipReason();
const keep = Boolean(process.env.BTRFSLAB_KEEP);
const only = process.env.BTRFSLAB_SCENARIO;
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-logs-'));
after(() => {
  if (keep) process.stderr.write(`kernel-logs: images kept in ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
});
const where = keep ? '' : ' (rerun with BTRFSLAB_KEEP=1 to keep them)';
const noReplay = skip ? null : replayUnavailable();

const short = (items) => Object.entries(items).map(([k, v]) => `${k}=${v}`).join(' ');

describe('kernel fsync logs: captured, replayed by the kernel, replayed by btrfslab', { skip }, () => {
  test('at least 34 distinct scenarios', () => {
    assert.ok(SCENARIOS.length >= 34, `${SCENARIOS.length} scenarios`);
    assert.equal(new Set(SCENARIOS.map((s) => s.name)).size, SCENARIOS.length, 'scenario names are distinct');
  });

  SCENARIOS.forEach((s, n) => {
    if (only && !s.name.includes(only)) return;
    test(s.name, async (t) => {
      const cap = await captureWithRetry(s, dir, n, { onRetry: (m) => t.diagnostic(m) });
      const at = `scenario "${s.name}" (files in ${cap.work}${where})`;
      t.diagnostic(`log: ${short(cap.log.items)}; ${cap.log.leaves} leaves, ${cap.log.nodes} nodes, level ${cap.log.level}; fsync kept: ${cap.durable.join(' ')}`);
      assert.ok(cap.log.hasLog && cap.log.leaves > 0, `${at}: dump-tree shows no log tree in ${cap.captured}`);
      if (s.minLeaves) {
        assert.ok(cap.log.leaves >= s.minLeaves, `${at}: the kernel's log has ${cap.log.leaves} leaves, the scenario wants at least ${s.minLeaves}`);
      }

      // the kernel's replay
      const k = await kernelReplay(cap);
      assert.ok(k.check.ok, `${at}: btrfs check fails on the kernel-replayed copy ${k.image}:\n${k.check.output}`);
      assert.equal(k.logRootAfter, 0, `${at}: the kernel-replayed copy ${k.image} still has a log_root`);
      assert.ok(cap.durable.length > 0, `${at}: every fsynced path changed after its fsync; nothing to check`);
      for (const p of cap.durable) {
        assert.deepEqual(k.durableState[p], cap.fsynced[p], `${at}: ${p} after the kernel's replay is not what it was when fsynced`);
      }

      // ours
      if (noReplay) {
        t.skip(noReplay);
        return;
      }
      const o = await ourReplay(cap);
      assert.ok(o.check.ok, `${at}: btrfs check fails on btrfslab's replay ${o.image}:\n${o.check.output}`);
      assert.equal(o.logRoot, 0, `${at}: btrfslab's replay ${o.image} still has a log_root`);
      assert.deepEqual(o.snapshot, k.snapshot, `${at}: btrfslab's replay ${o.image} mounts to a different tree than the kernel's replay ${k.image}`);
      assert.ok(o.ls.ok, `${at}: btrfslab ls --replay -R -l ${cap.captured} failed:\n${o.ls.output}`);
    });
  });
});
