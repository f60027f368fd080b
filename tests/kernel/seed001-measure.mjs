#!/usr/bin/env node
// Runs seed 001's experiment in the kernel (see seed001.mjs) for the seed's
// sizes and writes tests/kernel/fixtures/seed001-kernel.json.
//   node tests/kernel/seed001-measure.mjs [--runs R] [--out FILE]
// Each size runs R times (default 3): the logged items must be the same every
// time (the run stops if not); the fsync times and leaf counts are kept per
// run, ms in create/delete is the median, leaves/nodes/level the first run's.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { run, skipReason } from './lib.mjs';
import { kernelSeed001 } from './seed001.mjs';

const SIZES = [[1000, 100], [10000, 1000], [100000, 1000]];

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const runs = Number(opt('--runs', 3));
const out = opt('--out', fileURLToPath(new URL('./fixtures/seed001-kernel.json', import.meta.url)));

if (skipReason()) process.exit(1);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
// what must not change from run to run (the leaf count may: how full the
// kernel's leaves end up depends on the order its log items arrive in)
const shape = (p) => ({ items: p.items, hasLog: p.hasLog, commits: p.commits });

const results = [];
for (const [N, D] of SIZES) {
  const all = [];
  for (let r = 0; r < runs; r++) {
    const t0 = Date.now();
    all.push(await kernelSeed001(N, D));
    const x = all.at(-1);
    for (const p of ['create', 'delete']) {
      if (!x[p].hasLog || x[p].commits !== 0) {
        throw new Error(`N=${N} D=${D}: the ${p} fsync left ${x[p].hasLog ? 'a log after' : 'no log:'} ${x[p].commits} commit(s) since the sync; nothing to compare`);
      }
    }
    process.stderr.write(`N=${N} D=${D} run ${r + 1}/${runs}: create fsync ${x.create.ms} ms, delete fsync ${x.delete.ms} ms (${Date.now() - t0} ms in all)\n`);
  }
  for (const x of all.slice(1)) {
    for (const phase of ['create', 'delete']) {
      if (!isDeepStrictEqual(shape(x[phase]), shape(all[0][phase]))) {
        throw new Error(`N=${N} D=${D}: the ${phase} log differs between runs:\n${JSON.stringify(shape(all[0][phase]))}\n${JSON.stringify(shape(x[phase]))}`);
      }
    }
  }
  const first = all[0];
  const phase = (p) => ({
    ...first[p],
    ms: median(all.map((x) => x[p].ms)),
    msRuns: all.map((x) => x[p].ms),
    leavesRuns: all.map((x) => x[p].leaves),
    nodesRuns: all.map((x) => x[p].nodes),
    wallMs: median(all.map((x) => x[p].wallMs)),
    [p === 'create' ? 'createFilesMs' : 'deleteFilesMs']: median(all.map((x) => x[p][p === 'create' ? 'createFilesMs' : 'deleteFilesMs'])),
  });
  results.push({ N, D, nodesize: first.nodesize, create: phase('create'), delete: phase('delete') });
}

const fixture = {
  seed: '001-only-copy-dir-index-keys-when-logging',
  kernel: run('uname', ['-r']).trim(),
  btrfsProgs: run('btrfs', ['--version']).trim(),
  measured: new Date().toISOString().slice(0, 10),
  method: 'mkfs.btrfs (defaults) on a 4 GiB sparse file (a 256 MiB metadata block group: at 1 GiB the ' +
    'N=100000 fsync allocates a metadata block group and commits instead of logging), mount -o commit=600, mkdir testdir, sync; ' +
    'create testdir/file_1..file_N empty (one python3 process), fsync testdir, copy the image (create); ' +
    'sync; unlink file_i for i = 1, 1+N/D, ... (D files), fsync testdir, copy the image (delete). ' +
    'items/leaves/nodes/level: the subvolume log tree (TREE_LOG ROOT_ITEM 5) in each copy, counted by ' +
    'countLogItems over btrfs inspect-internal dump-tree. ms: fsync(2) alone on an O_RDONLY fd of testdir ' +
    '(what xfs_io -c fsync does), median of the runs; wallMs: the process that calls it, start-up included; ' +
    'commits: transaction commits between the sync and the copy (0: the log holds everything since the sync).',
  runs,
  results,
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(fixture, null, 2)}\n`);
process.stderr.write(`wrote ${out}\n`);
