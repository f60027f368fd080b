// Seed 001's experiment at N = 1,000,000 new files: create them after a
// commit, fsync the directory, crash (copy the image while it is mounted),
// replay. btrfslab native and WASM beside the kernel on a loop device, in the
// same run. N is BTRFSLAB_SEED001_N (default 1,000,000).
//
// Both first make and delete 2N files and commit: a filesystem in use has its
// metadata space already, while one that must allocate a block group during
// the fsync's transaction commits instead of logging (the kernel and
// btrfslab alike), and there would be no log to replay.
import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, wasmCore } from './lib.mjs';

export const name = 'seed 001: directory fsync of N new files, crash, replay: btrfslab (native, WASM) vs the kernel';

const N = Number(process.env.BTRFSLAB_SEED001_N ?? 1_000_000);

function warmup(mode) {
  return [`mkfs size=8G`, `set dir_logging=${mode}`, 'mkdir /warm', `create /warm/f_{1..${2 * N}}`, 'commit',
    `unlink /warm/f_{1..${2 * N}}`, 'rmdir /warm', 'commit', 'mkdir /testdir', 'commit'];
}

function script(mode) {
  return [...warmup(mode), `create /testdir/file_{1..${N}}`, 'fsync /testdir', 'crash'].join('\n') + '\n';
}

function wasmPhases(m, text) {
  const enc = new TextEncoder().encode(text);
  const p = m._blab_alloc(enc.length);
  m.HEAPU8.set(enc, p);
  const h = m._blab_run(p, enc.length, 1n, 1n, 0);
  m._blab_free(p);
  if (h <= 0) throw new Error(`WASM run: ${m.UTF8ToString(m._blab_last_error())}`);
  const metrics = JSON.parse(m.UTF8ToString(m._blab_metrics_json(h)));
  const t0 = performance.now();
  const r = m._blab_replay(h);
  const replayMs = performance.now() - t0;
  m._blab_close(h);
  if (r) throw new Error(`WASM replay: ${m.UTF8ToString(m._blab_last_error())}`);
  return { total: metrics.run_ms, fsync: metrics.fsyncs[0].ms, replay: replayMs };
}

function kernelPhases(dir) {
  const img = join(dir, 'k.img'), copy = join(dir, 'k-crash.img'), mnt = join(dir, 'km');
  const py = `
import os, sys, time, subprocess, shutil
mnt, img, copy, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
d = os.path.join(mnt, 'testdir')
w = os.path.join(mnt, 'warm')
os.mkdir(w)
for i in range(1, 2 * n + 1):
    os.close(os.open(os.path.join(w, 'f_%d' % i), os.O_CREAT | os.O_WRONLY, 0o644))
os.sync()
for i in range(1, 2 * n + 1):
    os.unlink(os.path.join(w, 'f_%d' % i))
os.rmdir(w)
os.sync()
t0 = time.perf_counter()
for i in range(1, n + 1):
    os.close(os.open(os.path.join(d, 'file_%d' % i), os.O_CREAT | os.O_WRONLY, 0o644))
t1 = time.perf_counter()
fd = os.open(d, os.O_RDONLY); os.fsync(fd); os.close(fd)
t2 = time.perf_counter()
subprocess.run(['cp', '--sparse=always', img, copy], check=True)
print('%f %f' % ((t1 - t0) * 1e3, (t2 - t1) * 1e3))
`;
  execFileSync('truncate', ['-s', '8G', img]);
  execFileSync('mkfs.btrfs', ['-q', '-f', img]);
  execFileSync('mkdir', ['-p', mnt]);
  const loop = execFileSync('losetup', ['--find', '--show', img], { encoding: 'utf8' }).trim();
  let create, fsync, replay;
  try {
    execFileSync('mount', ['-o', 'commit=600', loop, mnt]);
    try {
      execFileSync('mkdir', [join(mnt, 'testdir')]);
      execFileSync('sync', ['-f', mnt]);
      [create, fsync] = execFileSync('python3', ['-c', py, mnt, img, copy, String(N)], { encoding: 'utf8' }).trim().split(' ').map(Number);
    } finally {
      spawnSync('umount', [mnt]);
    }
  } finally {
    spawnSync('btrfs', ['device', 'scan', '--forget', loop]);
    spawnSync('losetup', ['-d', loop]);
  }
  // the replay: a mount of the crashed copy (the fsid is the same: the original is detached by now)
  const loop2 = execFileSync('losetup', ['--find', '--show', copy], { encoding: 'utf8' }).trim();
  try {
    const t0 = process.hrtime.bigint();
    execFileSync('mount', [loop2, mnt]);
    replay = Number(process.hrtime.bigint() - t0) / 1e6;
    spawnSync('umount', [mnt]);
  } finally {
    spawnSync('btrfs', ['device', 'scan', '--forget', loop2]);
    spawnSync('losetup', ['-d', loop2]);
    rmSync(img, { force: true });
    rmSync(copy, { force: true });
  }
  return { create, fsync, replay };
}

export async function run(ctx) {
  const rows = [];
  const k = kernelPhases(ctx.dir);
  const s = join(ctx.dir, 'seed001.txt'), img = join(ctx.dir, 'ours.img'), out = join(ctx.dir, 'ours-replayed.img');
  writeFileSync(s, script('index-only'));
  const m = JSON.parse(execFileSync(CLI, ['run', s, '--image', img, '--metrics', '-'], { encoding: 'utf8', maxBuffer: 1 << 26 }));
  const fsyncMs = m.fsyncs[0].ms;
  if (m.fsyncs[0].result !== 'logged') throw new Error(`btrfslab's fsync did not log: ${m.fsyncs[0].result}`);
  writeFileSync(s, warmup('index-only').join('\n') + '\n');
  const warmMs = JSON.parse(execFileSync(CLI, ['run', s, '--metrics', '-'], { encoding: 'utf8', maxBuffer: 1 << 26 })).run_ms;
  const createMs = m.run_ms - warmMs - fsyncMs;
  const rep = execFileSync(CLI, ['replay', img, '-o', out], { encoding: 'utf8' });
  const replayMs = Number(/([\d.]+) ms\)/.exec(rep)[1]);
  rmSync(img, { force: true });
  rmSync(out, { force: true });
  const w = wasmPhases(await wasmCore(), script('index-only'));
  const secs = (ms) => ms / 1000;
  rows.push({ metric: `N=${N} create (native core vs kernel)`, unit: 's', ours: secs(createMs), peer: secs(k.create), peerName: 'kernel (python3 open/close)' });
  rows.push({ metric: `N=${N} dir fsync (native vs kernel)`, unit: 's', ours: secs(fsyncMs), peer: secs(k.fsync), peerName: 'kernel fsync(2)' });
  rows.push({ metric: `N=${N} replay (native vs kernel)`, unit: 's', ours: secs(replayMs), peer: secs(k.replay), peerName: 'kernel mount (replay)' });
  rows.push({ metric: `N=${N} warm-up+create (WASM vs native)`, unit: 's', ours: secs(w.total - w.fsync), peer: secs(m.run_ms - fsyncMs), peerName: 'btrfslab native' });
  rows.push({ metric: `N=${N} dir fsync (WASM vs native)`, unit: 's', ours: secs(w.fsync), peer: secs(fsyncMs), peerName: 'btrfslab native' });
  rows.push({ metric: `N=${N} replay (WASM vs native)`, unit: 's', ours: secs(w.replay), peer: secs(replayMs), peerName: 'btrfslab native' });
  return rows;
}
