// `btrfslab kernel IMAGE`: the kernel mounts a private copy (replaying a
// pending log), lists what it sees, runs btrfs check, and leaves nothing
// behind: no mount, no loop device, the user's image unchanged. Its file
// list equals what the core's own replay of the same image holds.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { CLI, scratchDir, skipReason } from './lib.mjs';

const skip = skipReason();
const dir = scratchDir('kernel-cmd');
const sha = (f) => createHash('sha256').update(readFileSync(f)).digest('hex');
const loops = () => execFileSync('losetup', ['-a'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes('btrfslab-kernel-')).length;
const mounts = () => readFileSync('/proc/self/mounts', 'utf8').split('\n').filter((l) => l.includes('btrfslab-kernel-')).length;

/** The core's view of img after its own replay, in the kernel command's shape. */
function coreFiles(img) {
  const out = join(dir, 'core-replayed.img');
  execFileSync(CLI, ['replay', img, '-o', out]);
  const paths = ['/', ...execFileSync(CLI, ['ls', '-R', out], { encoding: 'utf8' }).split('\n').filter(Boolean)];
  return paths.map((p) => {
    const r = spawnSync(CLI, ['cat', out, p], { maxBuffer: 1 << 28 });
    return { path: p, sha256: r.status === 0 ? createHash('sha256').update(r.stdout).digest('hex') : undefined };
  }).sort((a, b) => (a.path < b.path ? -1 : 1));
}

describe('btrfslab kernel', { skip }, () => {
  test('a crash point with a pending log: the kernel replays it, lists what the core\'s replay holds, check passes', () => {
    const script = join(dir, 'crash.txt');
    writeFileSync(script, 'mkdir /d\ncreate /d/old{1..3}\ncommit\ncreate /d/new\nwrite /d/new 0 5000 3\nsymlink /some/where /d/link\nfsync /d/new\nunlink /d/old2\nfsync /d\ncrash\n');
    const img = join(dir, 'crash.img');
    execFileSync(CLI, ['run', script, '--image', img]);
    const before = sha(img);
    const [l0, m0] = [loops(), mounts()];
    const r = spawnSync(CLI, ['kernel', '--json', img], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr + r.stdout);
    const k = JSON.parse(r.stdout);
    assert.equal(k.log_pending, true);
    assert.deepEqual(k.mount, { ok: true, error: null });
    assert.equal(k.check.ok, true, k.check.output);
    assert.equal(k.ok, true);
    assert.match(k.kernel, /^\d+\.\d+/);
    // what the kernel's replay shows is what the core's replay holds
    const kernelFiles = k.files.filter((f) => f.type !== 'symlink').map((f) => ({ path: f.path, sha256: f.sha256 }));
    const core = coreFiles(img).filter((f) => f.path !== '/d/link');
    assert.deepEqual(kernelFiles, core);
    const link = k.files.find((f) => f.path === '/d/link');
    // a new symlink named by the fsynced /d is logged whole: its target survives (an empty one was a core bug this test found)
    assert.equal(link?.target, '/some/where');
    assert.equal(link.size, 11);
    assert.ok(k.files.some((f) => f.path === '/d/new' && f.size === 5000 && f.mode === 0o644 && f.nlink === 1));
    assert.ok(!k.files.some((f) => f.path === '/d/old2'), 'unlinked and fsynced: gone');
    // nothing left behind, and the user's image untouched
    assert.equal(sha(img), before);
    assert.deepEqual([loops(), mounts()], [l0, m0]);
  });

  test('the companion takes the image in its sparse form (as the page sends it) and answers what `kernel --json` does', async () => {
    const img = join(dir, 'crash.img');
    const whole = readFileSync(img);
    // the written 4 KiB pages, runs joined: "BLSPARS1", the size, then offset, length, bytes
    const parts = [Buffer.from('BLSPARS1'), Buffer.alloc(8)];
    parts[1].writeBigUInt64LE(BigInt(whole.length));
    for (let p = 0; p < whole.length; p += 4096) {
      if (!whole.subarray(p, p + 4096).some((b) => b)) continue;
      let e = p + 4096;
      while (e < whole.length && whole.subarray(e, e + 4096).some((b) => b)) e += 4096;
      const h = Buffer.alloc(16);
      h.writeBigUInt64LE(BigInt(p));
      h.writeBigUInt64LE(BigInt(e - p), 8);
      parts.push(h, whole.subarray(p, e));
      p = e - 4096;
    }
    const body = Buffer.concat(parts);
    assert.ok(body.length < whole.length / 10, `${body.length} bytes for ${whole.length}`);
    const app = 'http://127.0.0.1:4174';
    const server = spawn(CLI, ['serve', '--port', '0', '--app', app, '--timeout', '60'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const [url, token] = await new Promise((resolve, reject) => {
        let out = '';
        server.stdout.on('data', (d) => {
          out += d;
          const m = out.match(/#companion=(http:\/\/127\.0\.0\.1:\d+)&token=([0-9a-f]{64})\n/);
          if (m) resolve([m[1], m[2]]);
        });
        server.on('exit', (c) => reject(new Error(`serve exited ${c}: ${out}`)));
      });
      const r = await fetch(`${url}/v1/kernel`, { method: 'POST', body, headers: { Origin: app, Authorization: `Bearer ${token}`, 'Content-Type': 'application/x-btrfslab-sparse' } });
      const k = await r.json();
      assert.equal(r.status, 200, JSON.stringify(k));
      const direct = JSON.parse(execFileSync(CLI, ['kernel', '--json', img], { encoding: 'utf8' }));
      assert.equal(k.log_pending, true);
      assert.equal(k.check.ok, true, k.check.output);
      assert.deepEqual(k.files, direct.files);
    } finally {
      server.kill('SIGTERM');
    }
  });

  test('human output; --in-place replays into the image itself', () => {
    const img = join(dir, 'inplace.img');
    execFileSync(CLI, ['run', 'tests/scenarios/007-fsync-crash/scenario.txt', '--image', img]);
    const h = execFileSync(CLI, ['kernel', img], { encoding: 'utf8' });
    assert.match(h, /log: pending: the mount replayed it/);
    assert.match(h, /btrfs check: ok/);
    assert.match(h, /file +0644 +1 +5000 +"\/d\/new"/);
    execFileSync(CLI, ['kernel', '--in-place', img]);
    const again = JSON.parse(execFileSync(CLI, ['kernel', '--json', img], { encoding: 'utf8' }));
    assert.equal(again.log_pending, false, 'the mount replayed the log into the image and the unmount committed it');
  });

  test('a corrupt image: the mount fails with a clear error, check fails, nothing left behind', () => {
    const img = join(dir, 'junk.img');
    writeFileSync(img, Buffer.alloc(64 << 20, 0x41));
    const [l0, m0] = [loops(), mounts()];
    const r = spawnSync(CLI, ['kernel', '--json', img], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    const k = JSON.parse(r.stdout);
    assert.equal(k.mount.ok, false);
    assert.match(k.mount.error, /^mount: /);
    assert.deepEqual(k.files, []);
    assert.equal(k.check.ok, false);
    assert.equal(k.ok, false);
    assert.deepEqual([loops(), mounts()], [l0, m0]);
  });

  test('crashes --kernel: every crash point of lesson 2 mounted by the kernel lists what the core\'s replay holds', () => {
    const [l0, m0] = [loops(), mounts()];
    const r = spawnSync(CLI, ['crashes', 'lessons/02-fsync-log-tree/scenario.txt', '--kernel'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const m = r.stdout.match(/(\d+) crash points after mkfs.*, (\d+) tried/);
    assert.ok(m && Number(m[1]) > 20 && m[1] === m[2], r.stdout);
    assert.match(r.stdout, new RegExp(`the kernel mounted ${m[1]} of the crash images: its replay listed what the core's did\n`));
    assert.deepEqual([loops(), mounts()], [l0, m0]);
    const nonroot = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', CLI, 'crashes', 'lessons/02-fsync-log-tree/scenario.txt', '--kernel'], { encoding: 'utf8' });
    assert.equal(nonroot.status, 1);
    assert.match(nonroot.stderr, /--kernel needs root/);
  });

  test('refusals: not root, no image, not a regular file', () => {
    const img = join(dir, 'crash.img');
    let r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', CLI, 'kernel', img], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /needs root \(to attach a loop device and mount .*\); run it with sudo/);
    r = spawnSync(CLI, ['kernel', join(dir, 'absent.img')], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /absent\.img: No such file or directory/);
    r = spawnSync(CLI, ['kernel', dir], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /not a regular file/);
    r = spawnSync(CLI, ['kernel'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
  });

  test('SIGTERM while it works: it says so and cleans up its mount and loop device', async () => {
    // a tree big enough that the listing is still going when the signal comes
    const img = join(dir, 'many.img');
    writeFileSync(join(dir, 'many.txt'), 'mkfs nodesize=4K size=256M\nmkdir /d\ncreate /d/f_{1..20000}\n');
    execFileSync(CLI, ['run', join(dir, 'many.txt'), '--image', img]);
    const [l0, m0] = [loops(), mounts()];
    const child = spawn(CLI, ['kernel', img], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    // wait for the state: our mount is there (not a fixed time)
    for (let i = 0; i < 400 && mounts() === m0; i++) await new Promise((r) => setTimeout(r, 25));
    child.kill('SIGTERM');
    const code = await new Promise((resolve) => child.on('close', (c) => resolve(c)));
    if (code === 0) return; // the machine was fast enough to finish first: nothing to clean up either way
    assert.equal(code, 128 + 15, err);
    assert.match(err, /interrupted by signal 15; the loop device and mount are cleaned up/);
    assert.deepEqual([loops(), mounts()], [l0, m0]);
    rmSync(img, { force: true });
  });
});
