#!/usr/bin/env node
// Seed 001 on the kernels before and after the change, in a guest
// (scripts/guest/): the seed's experiment (seed001.mjs does it on this
// machine's kernel) run as a workload, the log tree of each fsync of the
// directory counted from an image captured while mounted, beside what our
// core logs for the same script in legacy and index-only modes.
//
//   node tests/kernel/seed001-guest.mjs [--kernels 5.10,6.1,6.12,host] [--sizes 1000:100,10000:1000]
//        [--out FILE.json]
//
// The change ("btrfs: only copy dir index keys when logging a directory")
// went into 5.17: 5.10 logs DIR_ITEM and DIR_INDEX keys of the new entries,
// 6.1 and later DIR_INDEX keys only. One boot per kernel and size (about
// 30 s of both cores each, plus two reads of the 4 GiB image in the guest).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runWorkload } from '../../scripts/guest/run.mjs';
import { countImageLog, modelSeed001 } from './seed001.mjs';

/** The seed's script as a guest workload: N empty files created, the directory fsynced; sync; D deleted, fsynced. */
export function seedWorkload(N, D) {
  return [
    'mount -t btrfs -o commit=600 "$IMG" "$MNT"',
    'mkdir "$MNT/testdir"',
    'sync -f "$MNT"',
    'echo "genA $(blab supergen "$IMG")"',
    `echo "createFiles $(blab create "$MNT/testdir" ${N})"`,
    'echo "createFsync $(blab fsync "$MNT/testdir")"',
    'capture 1',
    'sync -f "$MNT"',
    'echo "genB $(blab supergen "$IMG")"',
    `echo "deleteFiles $(blab unlink-step "$MNT/testdir" ${N} ${N / D})"`,
    'echo "deleteFsync $(blab fsync "$MNT/testdir")"',
    'capture 2',
    '',
  ].join('\n');
}

function superGen(img) {
  return Number(/^generation\s+(\d+)/m.exec(execFileSync('btrfs', ['inspect-internal', 'dump-super', img], { encoding: 'utf8' }))[1]);
}

/** The seed's experiment on kernel (5.10, 6.1, 6.12, host): per phase the log tree's items, leaves and whether it logged. */
export async function guestSeed001(kernel, N, D, { dir, size = '4G', progress = process.stderr } = {}) {
  const work = mkdtempSync(join(dir ?? tmpdir(), `btrfslab-seed001-${kernel}-`));
  try {
    const start = join(work, 'start.img');
    execFileSync('truncate', ['-s', size, start]);
    execFileSync('mkfs.btrfs', ['-q', '-f', start]);
    const r = await runWorkload({
      kernel, workload: seedWorkload(N, D), image: start, out: join(work, 'out'), progress,
      events: ['btrfs:btrfs_sync_file', 'btrfs:btrfs_transaction_commit'],
    });
    if (r.status !== 0) throw new Error(`${kernel} N=${N}: the workload failed (${r.status}):\n${r.stderr}`);
    const v = Object.fromEntries(r.stdout.trim().split('\n').map((l) => [l.split(' ')[0], l.split(' ').slice(1).map(Number)]));
    const phase = async (cap, gen, ms) => {
      const log = await countImageLog(cap);
      const t = log.trees['5'] ?? { items: {}, leaves: 0, nodes: 0, level: 0 };
      return { ms, items: t.items, leaves: t.leaves, nodes: t.nodes, level: t.level, hasLog: log.hasLog, commits: superGen(cap) - gen };
    };
    return {
      kernel, kver: r.kver, N, D, size,
      create: await phase(r.captures[0], v.genA[0], v.createFsync[0]),
      delete: await phase(r.captures[1], v.genB[0], v.deleteFsync[0]),
      counts: r.counts, lost: r.lost,
      times: { ...r.times, createFilesMs: v.createFiles[0], deleteFilesMs: v.deleteFiles[0], clock: kernel === 'host' ? 'host' : 'emulator' },
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// the core's directory logging modes (tree-log.h)
const MODES = ['legacy', 'index-only', '5.10', '5.17'];
const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const sameItems = (a, b) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
const fmt = (items) => Object.entries(sorted(items)).map(([k, n]) => `${k} ${n}`).join(', ');

async function main() {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
  const kernels = opt('--kernels', '5.10,6.1').split(',');
  const sizes = opt('--sizes', '1000:100').split(',').map((s) => s.split(':').map(Number));
  const out = opt('--out', null);
  const dir = mkdtempSync(join(tmpdir(), 'btrfslab-seed001-guest-'));
  const rows = [];
  try {
    for (const [N, D] of sizes) {
      const ours = Object.fromEntries(MODES.map((m) => [m, modelSeed001(N, D, m, dir)]));
      for (const k of kernels) {
        const g = await guestSeed001(k, N, D, { dir });
        rows.push({ ...g, ours: Object.fromEntries(MODES.map((m) => [m, { create: ours[m].create.items, delete: ours[m].delete.items }])) });
        for (const p of ['create', 'delete']) {
          const gp = g[p];
          const match = Object.entries(ours).filter(([, o]) => sameItems(o[p].items, gp.items)).map(([m]) => m);
          process.stdout.write(`${k.padEnd(4)} ${g.kver} N=${N} D=${D} ${p}: ${gp.hasLog && gp.commits === 0 ? 'logged' : `NOT LOGGED (${gp.commits} commits)`}, ` +
            `${gp.leaves} leaves, fsync ${gp.ms} ms (${g.times.clock})\n  kernel:     ${fmt(gp.items)}\n` +
            MODES.map((m) => `  ${`${m}:`.padEnd(12)}${fmt(ours[m][p].items)} (${ours[m][p].leaves} leaves)\n`).join('') +
            `  equal to:   ${match.length ? match.join(', ') : 'no mode'}\n`);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (out) writeFileSync(out, `${JSON.stringify({ seed: '001-only-copy-dir-index-keys-when-logging', measured: new Date().toISOString().slice(0, 10), rows }, null, 2)}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    process.stderr.write(`seed001-guest: ${e.stack}\n`);
    process.exit(1);
  });
}
