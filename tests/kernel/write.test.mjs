// `btrfslab write IMAGE DEVICE` on loop devices this test makes (and a
// device-mapper device over one, for "not a loop device"): the written
// device mounts with the image's files and passes btrfs check; every
// refusal leaves the device byte for byte as it was; a read-back mismatch
// names the first bad block; an I/O error or a signal mid-write leaves no
// valid superblock. Every loop and dm device is removed, even on failure.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { btrfsCheck, CLI, scratchDir, skipReason } from './lib.mjs';

const skip = skipReason();
const dir = scratchDir('write');
const made = { loops: [], dms: [] };

function loopOver(file, size) {
  execFileSync('truncate', ['-s', String(size), file]);
  const dev = execFileSync('losetup', ['--find', '--show', file], { encoding: 'utf8' }).trim();
  made.loops.push(dev);
  return dev;
}
const hashDev = (dev) => createHash('sha256').update(execFileSync('head', ['-c', String(80 << 20), dev], { maxBuffer: 1 << 28 })).digest('hex');
const write = (...args) => spawnSync(CLI, ['write', ...args], { encoding: 'utf8' });
const hasBtrfs = (dev) => spawnSync('btrfs', ['inspect-internal', 'dump-super', dev], { encoding: 'utf8' }).stdout.includes('_BHRfS_M');

let img, src;
before(() => {
  if (skip) return;
  src = join(dir, 'src');
  mkdirSync(join(src, 'sub'), { recursive: true });
  writeFileSync(join(src, 'big'), randomBytes(5 << 20));
  writeFileSync(join(src, 'sub', 'small'), 'written by btrfslab write\n');
  img = join(dir, 'fs.img');
  execFileSync(CLI, ['mkfs', '--rootdir', src, '--size', '128M', img]);
});
after(() => {
  for (const d of made.dms) spawnSync('dmsetup', ['remove', d]);
  for (const l of made.loops) { spawnSync('umount', [l]); spawnSync('losetup', ['-d', l]); }
});

describe('btrfslab write', { skip }, () => {
  test('to a loop device: it mounts with the image\'s files, check passes; a dry run first writes nothing', () => {
    const dev = loopOver(join(dir, 'a.dev'), 160 << 20);
    const h0 = hashDev(dev);
    const dry = write(img, dev, '--dry-run');
    assert.equal(dry.status, 0, dry.stderr);
    assert.match(dry.stdout, /dry run\): nothing written/);
    assert.match(dry.stdout, /a 134217728-byte filesystem, \d+ bytes of data in \d+ ranges, 2 superblock copies/);
    assert.equal(hashDev(dev), h0);
    const r = write(img, dev);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /bytes in \d+ ranges to .* read back and verified/);
    assert.equal(r.stderr, '', 'quiet when stderr is not a terminal');
    const mnt = join(dir, 'mnt');
    mkdirSync(mnt, { recursive: true });
    execFileSync('mount', ['-o', 'ro', dev, mnt]);
    try {
      execFileSync('diff', ['-r', src, mnt]);
    } finally {
      execFileSync('umount', [mnt]);
    }
    const ck = btrfsCheck(dev, ['--check-data-csum']);
    assert.ok(ck.ok, ck.output);
  });

  test('refusals leave the device as it was: mounted, in use, too small, a filesystem on it (then --force), not a loop device', async () => {
    // mounted
    const dev = loopOver(join(dir, 'b.dev'), 160 << 20);
    execFileSync('mkfs.btrfs', ['-q', '-f', dev]);
    const mnt = join(dir, 'mnt-b');
    mkdirSync(mnt, { recursive: true });
    execFileSync('mount', [dev, mnt]);
    let r;
    try {
      r = write(img, dev, '--force');
    } finally {
      execFileSync('umount', [mnt]);
    }
    assert.equal(r.status, 1);
    assert.match(r.stderr, /refusing .*: loop\d+ is mounted on .*mnt-b \(unmount it first\)/);
    // a filesystem signature
    const h0 = hashDev(dev);
    r = write(img, dev);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /refusing .*: it holds btrfs \(a filesystem or partition table\); --force overwrites it/);
    execFileSync('mkfs.ext4', ['-q', '-F', dev]);
    const h1 = hashDev(dev);
    r = write(img, dev);
    assert.match(r.stderr, /it holds ext2\/3\/4/);
    assert.equal(hashDev(dev), h1);
    // in use: another process holds it open exclusively
    const holder = spawn('python3', ['-c', `import os,sys,time\nfd=os.open(${JSON.stringify(dev)}, os.O_RDONLY|os.O_EXCL)\nprint('held', flush=True)\ntime.sleep(60)`], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve, reject) => { holder.stdout.on('data', resolve); holder.on('exit', (c) => reject(new Error(`the holder exited (${c})`))); });
      {
        r = write(img, dev, '--force');
        assert.equal(r.status, 1);
        assert.match(r.stderr, /refusing .*: it is in use/);
        assert.equal(hashDev(dev), h1);
        holder.kill();
        // too small
        const small = loopOver(join(dir, 'c.dev'), 64 << 20);
        const hs = hashDev(small);
        r = write(img, small);
        assert.equal(r.status, 1);
        assert.match(r.stderr, /refusing .*: it holds 67108864 bytes, the filesystem needs 134217728/);
        assert.equal(hashDev(small), hs);
        // --force over the ext4 signature: written
        r = write(img, dev, '--force');
        assert.equal(r.status, 0, r.stderr);
        assert.ok(hasBtrfs(dev));
        // no trace of the old filesystem for other tools: btrfs alone
        assert.deepEqual(execFileSync('wipefs', ['--noheadings', '--output', 'TYPE', dev], { encoding: 'utf8' }).trim().split('\n'), ['btrfs']);
        // a regular file that backs a loop device is in use too
        const backing = join(dir, 'a.dev');
        const rb = write(img, backing, '--force');
        assert.equal(rb.status, 1);
        assert.match(rb.stderr, /refusing .*a\.dev: it is in use, it backs \/dev\/loop\d+ \(detach it first\)/);
        // not a loop device: a dm linear device over one where device-mapper is there,
        // else a block device node of our own with a major no driver has (nothing behind it to touch)
        const under = loopOver(join(dir, 'd.dev'), 160 << 20);
        const sectors = (160 << 20) / 512;
        const name = `btrfslab-write-test-${process.pid}`;
        if (spawnSync('dmsetup', ['create', name, '--table', `0 ${sectors} linear ${under} 0`]).status === 0) {
          made.dms.push(name);
          const dm = `/dev/mapper/${name}`;
          const hd = hashDev(dm);
          r = write(img, dm);
          assert.equal(r.status, 1);
          assert.match(r.stderr, /is not a loop device: to write to it, name it again with --device-ok/);
          assert.equal(hashDev(dm), hd);
          // the loop device under it is held by the dm device
          r = write(img, under);
          assert.equal(r.status, 1);
          assert.match(r.stderr, /it is in use, held by dm-\d+/);
          r = write(img, dm, '--device-ok', dm);
          assert.equal(r.status, 0, r.stderr);
          assert.ok(hasBtrfs(dm));
        } else {
          process.stdout.write('# no device-mapper in this kernel: "not a loop device" checked on a device node of our own\n');
          const node = join(dir, 'not-a-loop');
          execFileSync('mknod', [node, 'b', '240', '77']); // 240-254: local/experimental majors, no driver here
          r = write(img, node);
          assert.equal(r.status, 1);
          assert.match(r.stderr, /not-a-loop \(.*\) is not a loop device: to write to it, name it again with --device-ok/);
          r = write(img, node, '--device-ok', node);
          assert.equal(r.status, 1, 'named again, it is opened: no driver answers');
          assert.match(r.stderr, /not-a-loop: No such device/);
        }
      }
    } finally {
      holder.kill();
    }
  });

  test('a device that lies: the read-back names the first bad block', () => {
    const dev = loopOver(join(dir, 'e.dev'), 160 << 20);
    // a byte inside the image's data (the first data range after the superblock)
    const plan = write(img, dev, '--dry-run');
    assert.equal(plan.status, 0);
    const at = 1 << 20; // the first chunk's first byte: data in every image mkfs writes
    const r = spawnSync(CLI, ['write', img, dev], { encoding: 'utf8', env: { ...process.env, BTRFSLAB_WRITE_CORRUPT_AT: String(at) } });
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`verify failed: the device's block at byte ${at} `));
  });

  test('an I/O error, or a signal, mid-write: says how far it got, and no valid superblock is left', async () => {
    const dev = loopOver(join(dir, 'f.dev'), 160 << 20);
    execFileSync('mkfs.btrfs', ['-q', '-f', dev]);
    let r = spawnSync(CLI, ['write', '--force', img, dev], { encoding: 'utf8', env: { ...process.env, BTRFSLAB_WRITE_FAIL_AFTER: String(2 << 20) } });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /I\/O error while writing the image's data \(at byte \d+: Input\/output error\), after \d+ of \d+ bytes; the device holds no valid superblock/);
    assert.equal(hasBtrfs(dev), false);
    assert.match(spawnSync('blkid', ['-p', dev], { encoding: 'utf8' }).stdout, /^$/);
    // a signal: the write waits at a known point (the pause hook), then SIGINT
    execFileSync('mkfs.btrfs', ['-q', '-f', dev]);
    const child = spawn(CLI, ['write', '--force', img, dev], { env: { ...process.env, BTRFSLAB_WRITE_PAUSE_AFTER: String(2 << 20) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    await new Promise((resolve) => child.stderr.on('data', (d) => { err += d; if (err.includes('paused')) resolve(); }));
    child.kill('SIGINT');
    const code = await new Promise((resolve) => child.on('close', resolve));
    assert.equal(code, 130, err);
    assert.match(err, /interrupted by signal 2 while writing the image's data, after \d+ of \d+ bytes; the device holds no valid superblock/);
    assert.equal(hasBtrfs(dev), false);
    r = write(img, dev);
    assert.equal(r.status, 0, 'with no signature left, no --force is needed: ' + r.stderr);
  });

  test('on a terminal: a progress line with bytes, rate and time left', () => {
    const dev = loopOver(join(dir, 'g.dev'), 160 << 20);
    // script(1) gives it a pseudo-terminal for stderr
    const r = spawnSync('script', ['-qec', `${CLI} write ${img} ${dev}`, '/dev/null'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\r {2}[\d.]+ of [\d.]+ MiB, [\d.]+ MiB\/s, \d+ s left/);
  });

  test('usage and bad input', () => {
    let r = write(img);
    assert.equal(r.status, 2);
    r = write(join(dir, 'src', 'big'), '/dev/null');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /big is not a filesystem to write/);
    r = write(img, '/dev/null');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /neither a block device nor a regular file/);
  });
});
