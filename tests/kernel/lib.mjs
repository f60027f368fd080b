// Kernel oracle helpers: loop devices and mounts that this process creates,
// always torn down (also on a crash or a signal), and btrfs-progs calls.
// Nothing here touches a device it did not create.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

/** The native CLI the kernel tests drive, and the Python helpers beside them. */
export const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
export const SNAP = fileURLToPath(new URL('./snapshot.py', import.meta.url));
export const COMPARE = fileURLToPath(new URL('./compare_trees.py', import.meta.url));

/** A new temporary directory btrfslab-NAME-*, removed when the test file ends. */
export function scratchDir(name) {
  const dir = mkdtempSync(join(tmpdir(), `btrfslab-${name}-`));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const owned = { loops: new Set(), mounts: new Set() };

function teardownAll() {
  for (const m of owned.mounts) {
    spawnSync('umount', [m]);
    if (spawnSync('mountpoint', ['-q', m]).status === 0) spawnSync('umount', ['-l', m]);
    owned.mounts.delete(m);
    try { rmSync(m, { recursive: true, force: true }); } catch { /* still busy: leave it */ }
  }
  for (const l of owned.loops) {
    spawnSync('losetup', ['-d', l]);
    owned.loops.delete(l);
  }
}
process.on('exit', teardownAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    teardownAll();
    process.exit(130);
  });
}

/** Why kernel tests cannot run here, or null when they can. */
export function kernelUnavailable() {
  if (process.getuid?.() !== 0) return 'not running as root';
  if (!existsSync('/dev/loop-control')) return 'no /dev/loop-control';
  let fsl = '';
  try { fsl = readFileSync('/proc/filesystems', 'utf8'); } catch { /* fall through */ }
  if (!/\bbtrfs\b/.test(fsl)) {
    spawnSync('modprobe', ['btrfs']);
    try { fsl = readFileSync('/proc/filesystems', 'utf8'); } catch { /* fall through */ }
    if (!/\bbtrfs\b/.test(fsl)) return 'the kernel has no btrfs support';
  }
  for (const tool of ['/usr/bin/btrfs', '/usr/sbin/losetup', '/usr/bin/mount']) {
    if (!existsSync(tool) && !existsSync(tool.replace('/usr/sbin/', '/sbin/').replace('/usr/bin/', '/bin/'))) return `${tool} is missing`;
  }
  return null;
}

/** Prints the loud skip notice and returns the reason, or false when the kernel tests can run. */
export function skipReason() {
  const why = kernelUnavailable();
  if (why) process.stderr.write(`\n*** KERNEL TESTS SKIPPED: ${why} ***\n\n`);
  return why ?? false;
}

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

/**
 * Attaches img to a new loop device, mounts it at a fresh directory, calls
 * fn(mountpoint), and always unmounts and detaches, whatever fn does.
 */
export async function withMount(img, fn, { readOnly = false, options = [] } = {}) {
  const loop = run('losetup', ['--find', '--show', ...(readOnly ? ['--read-only'] : []), img]).trim();
  owned.loops.add(loop);
  const mnt = mkdtempSync(join(tmpdir(), 'btrfslab-mnt-'));
  try {
    const o = [...(readOnly ? ['ro'] : []), ...options];
    run('mount', ['-t', 'btrfs', ...(o.length ? ['-o', o.join(',')] : []), loop, mnt]);
    owned.mounts.add(mnt);
    return await fn(mnt);
  } finally {
    if (owned.mounts.has(mnt)) {
      const r = spawnSync('umount', [mnt], { encoding: 'utf8' });
      if (r.status !== 0) spawnSync('umount', ['-l', mnt]);
      owned.mounts.delete(mnt);
    }
    rmSync(mnt, { recursive: true, force: true });
    spawnSync('btrfs', ['device', 'scan', '--forget', loop]); // the kernel drops its record of our device
    spawnSync('losetup', ['-d', loop]);
    owned.loops.delete(loop);
  }
}

/** `btrfs check` (read-only). Returns { ok, output }. */
export function btrfsCheck(img, extra = []) {
  const r = spawnSync('btrfs', ['check', ...extra, img], { encoding: 'utf8' });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

/** What snapshot.py sees of a mounted tree: every path with its type, size, links, contents' hash, xattrs. */
export const snapshotOf = (mnt) => JSON.parse(execFileSync('python3', [SNAP, mnt], { encoding: 'utf8', maxBuffer: 1 << 28 }));

/**
 * A crashed image replayed both ways: the kernel mounts one copy (replaying
 * its log), `btrfslab replay` writes another. Both must pass `btrfs check`
 * and show the same tree; returns the kernel's. where names the case in
 * failures. The copies are removed, img is left.
 */
export async function replayBothWays(img, where) {
  const kimg = `${img}-kernel.img`, oimg = `${img}-ours.img`;
  try {
    copyFileSync(img, kimg);
    execFileSync(CLI, ['replay', img, '-o', oimg], { stdio: ['ignore', 'pipe', 'pipe'] });
    const theirs = await withMount(kimg, snapshotOf);
    const ours = await withMount(oimg, snapshotOf, { readOnly: true });
    const ck = btrfsCheck(kimg, ['--check-data-csum']);
    assert.ok(ck.ok, `${where}: btrfs check of the kernel's replay failed:\n${ck.output}`);
    const co = btrfsCheck(oimg, ['--check-data-csum']);
    assert.ok(co.ok, `${where}: btrfs check of btrfslab's replay failed:\n${co.output}`);
    assert.deepEqual(ours, theirs, `${where}: btrfslab's replay differs from the kernel's`);
    return theirs;
  } finally {
    for (const f of [kimg, oimg]) rmSync(f, { force: true });
  }
}

/** The header and item lines of a dump-tree listing, for diffing. */
export function dumpTreeKeyLines(text) {
  return text
    .split('\n')
    .filter((l) => /^(leaf|node) \d+ /.test(l) || /^\t(item \d+ key|key \()/.test(l) ||
      /^(root tree|chunk tree|.* tree key \(|fs uuid|chunk uuid|total bytes|bytes used|uuid )/.test(l))
    .map((l) => l.replace(/\s+$/, ''));
}

/** All of a dump-tree listing but btrfs-progs' version banner. */
export function dumpTreeAll(text) {
  return text.split('\n').filter((l) => !/^btrfs-progs v/.test(l)).map((l) => l.replace(/\s+$/, ''));
}

export function progsDumpTree(img) {
  return run('btrfs', ['inspect-internal', 'dump-tree', img], { maxBuffer: 1 << 28 });
}

/** A tracefs instance's per_cpu/cpuN/stats summed over its CPUs: events lost (overrun, dropped) and left unread. */
export function tracefsCpuStats(inst) {
  const t = { overrun: 0, dropped: 0, entries: 0 };
  for (const cpu of readdirSync(join(inst, 'per_cpu'))) {
    const st = readFileSync(join(inst, 'per_cpu', cpu, 'stats'), 'utf8');
    t.overrun += Number(st.match(/^overrun: (\d+)/m)?.[1] ?? 0);
    t.dropped += Number(st.match(/^dropped events: (\d+)/m)?.[1] ?? 0);
    t.entries += Number(st.match(/^entries: (\d+)/m)?.[1] ?? 0);
  }
  return t;
}

export { run };
