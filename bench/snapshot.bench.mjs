// Issue 14 (subvolumes, snapshots, qgroups), beside this machine's kernel
// doing the same work on a loop device:
//  (a) a snapshot writes O(1) tree blocks whatever the subvolume holds: the
//      snapshot of / made by mkfs rootdir= from a directory of 0, 10,000 and
//      100,000 empty files (the kernel's: mkfs.btrfs --rootdir). Ours: the
//      block_write events of the snapshot line's commit (the trace). Both:
//      the tree blocks the image's extent tree says were allocated in or after
//      the snapshot's transaction (its root item's otransid), the blocks
//      still in use that the snapshot wrote.
//  (b) qgroup accounting for 16 snapshots of /usr/include with 3 files of
//      each changed (a commit each): the run with `quota enable` first minus
//      the same run without; ours is the time in the core past the mkfs line
//      (run_ms - mkfs_ms), the kernel's the wall time of the work on the
//      mounted filesystem (btrfs subvolume snapshot, pwrite, sync
//      -f; with quotas, quota enable and rescan -w first). Target: at most
//      1 s natively. Both images with quotas pass btrfs check --qgroup-report.
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kernelUnavailable, withMount } from '../tests/kernel/lib.mjs';
import { runInKernel } from '../tests/kernel/kernel-run.mjs';
import { CLI, median } from './lib.mjs';

export const name = 'snapshots and qgroups: tree blocks a snapshot writes, qgroup accounting time — btrfslab vs the kernel on a loop device';

const RUNS = Number(process.env.BTRFSLAB_SNAPSHOT_RUNS ?? 5);
const SNAPS = 16;
const sh = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30 });

/** Runs a scenario file; its metrics (and trace events when asked). */
function ours(script, { image, trace } = {}) {
  const dir = join(script, '..');
  const m = join(dir, 'metrics.json'), t = join(dir, 'trace.jsonl');
  const r = spawnSync(CLI, ['run', script, '--metrics', m, ...(image ? ['--image', image] : []), ...(trace ? ['--trace', t] : [])],
    { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`btrfslab run ${script}: ${r.stderr}`);
  const out = { m: JSON.parse(readFileSync(m, 'utf8')) };
  if (trace) out.events = readFileSync(t, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return out;
}

/** Tree blocks allocated at or after the transaction that made subvolume id
 * (its otransid), by the image's extent tree; and that generation. */
function blocksSince(img, id) {
  const roots = sh('btrfs', ['inspect-internal', 'dump-tree', '-t', 'root', img]);
  const at = roots.indexOf(`key (${id} ROOT_ITEM `);
  const gen = Number(/otransid (\d+)/.exec(roots.slice(at))?.[1]);
  if (at < 0 || !gen) throw new Error(`${img}: no root item of subvolume ${id}`);
  const ext = sh('btrfs', ['inspect-internal', 'dump-tree', '-t', 'extent', img]);
  let n = 0;
  for (const m of ext.matchAll(/gen (\d+) flags TREE_BLOCK/g)) if (Number(m[1]) >= gen) n++;
  return { n, gen };
}

function qgroupReport(img) {
  const r = spawnSync('btrfs', ['check', '--qgroup-report', img], { encoding: 'utf8' });
  const text = `${r.stdout}${r.stderr}`;
  const bad = r.status !== 0 || /different|mismatch|ERROR/i.test(text.replace(/ERROR: zoned: unable to stat[^\n]*/g, ''));
  return { ok: !bad, text };
}

function emptyFiles(dir, n) {
  mkdirSync(dir);
  for (let i = 0; i < n; i++) closeSync(openSync(join(dir, `f${i}`), 'w'));
}

/** An image file of size bytes made by mkfs.btrfs --rootdir src (single metadata, as ours). */
function kernelMkfs(img, src, size) {
  rmSync(img, { force: true });
  writeFileSync(img, '');
  sh('truncate', ['-s', String(size), img]);
  sh('mkfs.btrfs', ['-q', '-f', '-m', 'single', '--rootdir', src, img]);
}

async function snapshotBlocks(ctx, kernel) {
  const rows = [];
  console.log('\n(a) snapshot of / holding N empty files: tree blocks written (ours: trace of its commit; both: extent items of tree blocks born in or after it)');
  console.log('      N   ours written  ours in extent tree  kernel in extent tree');
  for (const n of [0, 10_000, 100_000]) {
    const src = join(ctx.dir, `files-${n}`);
    emptyFiles(src, n);
    const script = join(ctx.dir, `snap-${n}.txt`), img = join(ctx.dir, `snap-${n}.img`);
    writeFileSync(script, `mkfs size=1G rootdir=${src}\nsnapshot / /snap\n`);
    const { events } = ours(script, { image: img, trace: true });
    const op = events.findIndex((e) => e.kind === 'op');
    const written = events.slice(op).filter((e) => e.kind === 'block_write').length;
    const mine = blocksSince(img, 256);
    let k = { n: NaN };
    if (kernel) {
      const kimg = join(ctx.dir, `snap-${n}-kernel.img`);
      kernelMkfs(kimg, src, 1 << 30);
      await withMount(kimg, (mnt) => {
        sh('sync', ['-f', mnt]); // what the first mount left to do is committed before the snapshot
        sh('btrfs', ['subvolume', 'snapshot', mnt, join(mnt, 'snap')]);
        sh('sync', ['-f', mnt]);
      });
      k = blocksSince(kimg, 256);
      rmSync(kimg, { force: true });
    }
    console.log(`${String(n).padStart(7)} ${String(written).padStart(14)} ${String(mine.n).padStart(20)} ${String(k.n).padStart(22)}`);
    rows.push({ metric: `snapshot of ${n} files: tree blocks`, unit: 'blocks', ours: written, peer: k.n, peerName: 'kernel (extent tree, gen >= otransid)' });
    rmSync(img, { force: true });
    rmSync(src, { recursive: true, force: true });
  }
  return rows;
}

/** The 16-snapshot work as commands (runInKernel's form) and as a scenario. */
function qgroupWork(quota) {
  const cmds = quota ? [['quota', 'enable']] : [];
  for (let i = 1; i <= SNAPS; i++) {
    cmds.push(['snapshot', '/', `/snap${i}`], ['write', `/snap${i}/stdio.h`, 100, 4096, i], ['write', `/snap${i}/stdlib.h`, 8192, 100, i],
      ['write', `/snap${i}/string.h`, 0, 20000, i], ['commit']);
  }
  return cmds;
}

async function qgroupTime(ctx, kernel) {
  const src = '/usr/include';
  if (!['stdio.h', 'stdlib.h', 'string.h'].every((f) => existsSync(join(src, f)))) {
    console.log('\n(b) skipped: no /usr/include/{stdio,stdlib,string}.h');
    return [];
  }
  const mkfs = `mkfs size=2G rootdir=${src}`;
  const text = (cmds) => `${[mkfs, ...cmds.map((c) => c.join(' '))].join('\n')}\n`;
  const nq = join(ctx.dir, 'noquota.txt'), q = join(ctx.dir, 'quota.txt');
  writeFileSync(nq, text(qgroupWork(false)));
  writeFileSync(q, text(qgroupWork(true)));
  const t = { mkfs: [], nq: [], q: [], knq: [], kq: [] };
  const qimg = join(ctx.dir, 'quota.img'), kimg = join(ctx.dir, 'quota-kernel.img');
  let kreport = null;
  for (let i = 0; i < RUNS; i++) {
    const a = ours(nq).m, b = ours(q, { image: i === 0 ? qimg : undefined }).m;
    t.mkfs.push(a.mkfs_ms / 1000, b.mkfs_ms / 1000);
    t.nq.push((a.run_ms - a.mkfs_ms) / 1000);
    t.q.push((b.run_ms - b.mkfs_ms) / 1000);
    if (!kernel) continue;
    for (const quota of [false, true]) {
      kernelMkfs(kimg, src, 2 << 30);
      const s = await withMount(kimg, (mnt) => {
        const t0 = process.hrtime.bigint();
        runInKernel(qgroupWork(quota), mnt);
        return Number(process.hrtime.bigint() - t0) / 1e9;
      });
      (quota ? t.kq : t.knq).push(s);
      if (quota && i === 0) kreport = qgroupReport(kimg);
    }
  }
  rmSync(kimg, { force: true });
  const a = { nq: median(t.nq), q: median(t.q) };
  const k = kernel ? { nq: median(t.knq), q: median(t.kq) } : { nq: NaN, q: NaN };
  console.log(`\n(b) ${SNAPS} snapshots of ${src}, 3 files of each written, a commit each; median of ${RUNS} (s)`);
  console.log(`          no quotas   quotas   quotas - no quotas (target <= 1 s natively)`);
  console.log(`ours   ${a.nq.toFixed(3).padStart(12)} ${a.q.toFixed(3).padStart(8)} ${(a.q - a.nq).toFixed(3).padStart(10)}   (core time past the mkfs line; mkfs rootdir= took ${median(t.mkfs).toFixed(3)})`);
  console.log(`kernel ${k.nq.toFixed(3).padStart(12)} ${k.q.toFixed(3).padStart(8)} ${(k.q - k.nq).toFixed(3).padStart(10)}   (wall time on the mounted loop device)`);
  const report = qgroupReport(qimg);
  console.log(`btrfs check --qgroup-report: ours ${report.ok ? 'clean' : 'MISMATCH'}${kreport ? `, kernel's ${kreport.ok ? 'clean' : 'MISMATCH'}` : ''}`);
  if (!report.ok) console.log(report.text);
  if (kreport && !kreport.ok) console.log(kreport.text);
  rmSync(qimg, { force: true });
  const peerName = 'kernel, loop device, this machine';
  return [
    { metric: `${SNAPS} snapshots, no quotas`, unit: 's', ours: a.nq, peer: k.nq, peerName },
    { metric: `${SNAPS} snapshots, quotas`, unit: 's', ours: a.q, peer: k.q, peerName },
    { metric: `${SNAPS} snapshots, quotas - no quotas`, unit: 's', ours: a.q - a.nq, peer: k.q - k.nq, peerName },
    { metric: 'qgroup report mismatches (0: clean)', unit: 'n', ours: report.ok ? 0 : 1, peer: kreport ? (kreport.ok ? 0 : 1) : NaN, peerName: 'btrfs check --qgroup-report' },
  ];
}

export async function run(ctx) {
  const why = kernelUnavailable();
  if (why) console.log(`(the kernel's figures are skipped: ${why})`);
  return [...(await snapshotBlocks(ctx, !why)), ...(await qgroupTime(ctx, !why))];
}
