// Seed 002 ("btrfs: shrink delalloc pages instead of full inodes"): untar
// onto a small btrfs, shrink_delalloc by whole inodes (5.10) and by pages
// (5.11+, this kernel), in the model on the ssd, nvme and hdd profiles,
// beside the seed's table; then the same tree unpacked by this machine's
// kernel (it has the fix: pages) on a loop device, traced
// (tests/kernel/seed002-measure.mjs), beside the model on the loop profile:
// the flush states in order of first use, the tickets, shrink_delalloc's
// page budgets (median, max).
//
// Scale: the seed untarred the Firefox source, 1.5 GiB in about 250,000
// files, onto machines of 8-256 GiB of RAM; here `untar random files=N`
// (BTRFSLAB_SEED002_FILES, default 6000: about 84 MiB, 18x fewer bytes)
// onto a 512 MiB filesystem (mkfs single profiles in the kernel, as the
// model's), small enough that metadata reservations run short.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measureKernelReclaim } from '../tests/kernel/seed002-measure.mjs';
import { CLI as BUILT, runWasm, wasmCore } from './lib.mjs';
const CLI = process.env.BTRFSLAB_CLI || BUILT;

export const name = 'seed 002: untar with shrink_delalloc by inodes (5.10) and by pages (5.11+) — the model vs the seed, and vs this kernel';

const FILES = Number(process.env.BTRFSLAB_SEED002_FILES ?? 6000);
const SEED = 3;
// the seed's untar times (seconds): before (5.10) and after (its fix)
const SEED_TABLE = [
  { device: 'nvme', label: 'NVMe, 5.10 vs 5.10+fix', before: 86.212, after: 38.8 },
  { device: 'ssd', label: 'consumer SSD, 5.10.5 vs +fix', before: 240, after: 68 },
  { device: 'hdd', label: 'HDD ("not on HDD")', before: null, after: null },
];

export function untarScript({ device, mode, files = FILES, seed = SEED }) {
  return ['mkfs size=512M', `set device=${device}`, 'set tree_locks=path', `set shrink_delalloc=${mode}`, `untar random files=${files} seed=${seed}`].join('\n') + '\n';
}

export function runModel(opts) {
  const t0 = performance.now();
  const m = JSON.parse(execFileSync(CLI, ['run', '-', '--metrics', '-'], { input: untarScript(opts), encoding: 'utf8', maxBuffer: 1 << 26 }));
  return { m, ms: performance.now() - t0, s: (m.timed.untar.writeNs + m.timed.untar.syncNs) / 1e9 };
}

export async function run(ctx) {
  const rows = [];
  console.log(`\nuntar random files=${FILES} seed=${SEED} on 512 MiB (virtual seconds; tar and syncfs)`);
  console.log(' device  model inodes  model pages  ratio | seed before  seed after  ratio   (target: ssd >= 3, nvme >= 2, hdd < 1.3)');
  for (const s of SEED_TABLE) {
    const a = runModel({ device: s.device, mode: 'inodes' }), b = runModel({ device: s.device, mode: 'pages' });
    const ratio = a.s / b.s, seedRatio = s.before ? s.before / s.after : null;
    console.log(` ${s.device.padEnd(6)} ${a.s.toFixed(2).padStart(12)} ${b.s.toFixed(2).padStart(12)} ${ratio.toFixed(2).padStart(6)} | ${String(s.before ?? '-').padStart(11)} ${String(s.after ?? '-').padStart(11)} ${(seedRatio ? seedRatio.toFixed(2) : '1 (no regression)').padStart(6)}`);
    rows.push({ metric: `untar inodes/pages, ${s.device}`, unit: 'ratio', ours: ratio, peer: seedRatio ?? 1, peerName: `seed 002 (${s.label})` });
  }
  const native = runModel({ device: 'ssd', mode: 'pages' });
  const wasmMs = runWasm(await wasmCore(), untarScript({ device: 'ssd', mode: 'pages' })).ms;
  console.log(`\nspeed: ${FILES} files natively ${(native.ms / 1000).toFixed(2)} s, WASM ${(wasmMs / 1000).toFixed(2)} s (${(wasmMs / native.ms).toFixed(2)}x; target 1.5x)`);
  rows.push({ metric: `untar ${FILES} files, WASM vs native`, unit: 'ms', ours: wasmMs, peer: native.ms, peerName: 'btrfslab native (target 1.5x)' });

  // the kernel (pages) on a loop device, the same tree, single profiles
  const list = join(ctx.dir, 'tree.lst');
  writeFileSync(list, execFileSync(CLI, ['untar-list', '--files', String(FILES), '--seed', String(SEED)], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  const k = measureKernelReclaim({ fsMiB: 512, files: FILES, totalMiB: 1024, seed: SEED, treeList: list, profile: 'single', spaceReservation: false });
  const m = runModel({ device: 'loop', mode: 'pages' }).m;
  const rc = m.timed.reclaim;
  const kOrder = k.flush.order.filter((x) => !/DATA/.test(x));
  console.log(`\nthis kernel (pages) vs the model (pages, loop profile), ${FILES} files, the same tree:`);
  console.log(`  flush states, first use: kernel ${kOrder.join(' ')}`);
  console.log(`                           model  ${rc.order.join(' ')}`);
  console.log(`  tickets: kernel ${k.tickets.n}, model ${rc.tickets} (${(rc.tickets / k.tickets.n).toFixed(3)})`);
  const kb = k.delalloc.budgets;
  console.log(`  shrink_delalloc budgets (pages): kernel median ${kb.median} max ${kb.max} of ${kb.n} calls; model median ${rc.shrink.budgetP50} max ${rc.shrink.budgetMax} of ${rc.shrink.calls}`);
  console.log(`  untar: kernel ${k.workload.seconds.toFixed(2)} s wall, model ${((m.timed.untar.writeNs + m.timed.untar.syncNs) / 1e9).toFixed(2)} s virtual`);
  const prefix = kOrder.findIndex((x, i) => rc.order[i] !== x);
  console.log(`  the model's order matches the kernel's first ${prefix < 0 ? kOrder.length : prefix} states`);
  rows.push({ metric: 'tickets (model/kernel)', unit: 'n', ours: rc.tickets, peer: k.tickets.n, peerName: 'kernel, loop device, this machine' });
  rows.push({ metric: 'shrink_delalloc budget median', unit: 'pages', ours: rc.shrink.budgetP50, peer: kb.median, peerName: 'kernel, loop device, this machine' });
  rows.push({ metric: 'shrink_delalloc budget max', unit: 'pages', ours: rc.shrink.budgetMax, peer: kb.max, peerName: 'kernel, loop device, this machine' });
  rows.push({ metric: 'untar time', unit: 's', ours: (m.timed.untar.writeNs + m.timed.untar.syncNs) / 1e9, peer: k.workload.seconds, peerName: 'kernel, loop device, this machine' });
  return rows;
}
