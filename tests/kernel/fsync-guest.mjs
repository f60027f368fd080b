#!/usr/bin/env node
// Seeded fsync scenarios (randomFsyncScenario, as tests/kernel/fsync.test.mjs
// makes them) done by a kernel and by our core: the log each leaves at the
// crash, counted per key type, the core's in legacy and index-only modes
// beside the kernel's; and the kernel's log replayed by this kernel and by
// `btrfslab replay` to the same tree. One boot per kernel and seed.
//
//   node tests/kernel/fsync-guest.mjs [--kernels 5.10,6.1] [--seeds 1,2,3] [--out FILE.json]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWorkload } from '../../scripts/guest/run.mjs';
import { scenarioWorkload } from '../../scripts/guest/scenario.mjs';
import { CLI, replayBothWays } from './lib.mjs';
import { randomFsyncScenario } from './model.mjs';
import { countImageLog } from './seed001.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const kernels = opt('--kernels', '5.10,6.1').split(',');
const seeds = opt('--seeds', '1,2,3').split(',').map(Number);
const out = opt('--out', null);

const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const fmt = (o) => Object.entries(sorted(o)).map(([k, n]) => `${k} ${n}`).join(', ') || '(no log)';
const logItems = async (img) => {
  const l = await countImageLog(img);
  return l.hasLog ? sorted(l.trees['5']?.items ?? {}) : {};
};

const dir = mkdtempSync(join(tmpdir(), 'btrfslab-fsync-guest-'));
const rows = [];
try {
  for (const seed of seeds) {
    const ops = 30 + (seed % 3) * 15; // fsync.test.mjs's sizes
    // the same commands in both modes (the generator draws nothing from the mode)
    const text = randomFsyncScenario(seed, { mode: 'index-only', ops }).text;
    const ours = {};
    for (const mode of ['legacy', 'index-only']) {
      const script = join(dir, `s${seed}-${mode}.txt`);
      writeFileSync(script, text.replace('set dir_logging=index-only', `set dir_logging=${mode}`));
      const img = join(dir, `s${seed}-${mode}.img`);
      execFileSync(CLI, ['run', script, '--image', img], { stdio: ['ignore', 'pipe', 'pipe'] });
      ours[mode] = await logItems(img);
    }
    const { mkfs, workload } = scenarioWorkload(text);
    const startScript = join(dir, `s${seed}-start.txt`);
    writeFileSync(startScript, `${mkfs}\n`);
    const start = join(dir, `s${seed}-start.img`);
    execFileSync(CLI, ['run', startScript, '--image', start]);
    for (const k of kernels) {
      const r = await runWorkload({ kernel: k, workload, image: start, out: join(dir, `s${seed}-${k}`),
        events: ['btrfs:btrfs_sync_file', 'btrfs:btrfs_transaction_commit'] });
      if (r.status !== 0) throw new Error(`seed ${seed} on ${k}: the workload failed (${r.status}): ${r.stderr}`);
      const theirs = await logItems(r.image);
      let replay = 'alike';
      try {
        await replayBothWays(r.image, `seed ${seed}, ${k}'s log`);
      } catch (e) {
        replay = `DIFFERENT: ${e.message.split('\n')[0]}`;
      }
      const equal = Object.keys(ours).filter((m) => JSON.stringify(ours[m]) === JSON.stringify(theirs));
      rows.push({ seed, ops, kernel: k, kver: r.kver, counts: r.counts, kernelLog: theirs, ours, equal, replay });
      process.stdout.write(`seed ${seed} (${ops} ops) ${k} ${r.kver}: ${r.counts['btrfs:btrfs_sync_file']} fsyncs, ` +
        `${r.counts['btrfs:btrfs_transaction_commit']} commits\n  kernel:     ${fmt(theirs)}\n  legacy:     ${fmt(ours.legacy)}\n` +
        `  index-only: ${fmt(ours['index-only'])}\n  equal to:   ${equal.join(', ') || 'neither mode'}; its log replayed ${replay}\n`);
      rmSync(join(dir, `s${seed}-${k}`), { recursive: true, force: true });
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (out) writeFileSync(out, `${JSON.stringify({ measured: new Date().toISOString().slice(0, 10), rows }, null, 2)}\n`);
