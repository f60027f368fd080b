// `btrfslab write IMAGE DEVICE` on loop devices this test makes (and a
// device-mapper device over one, for "not a loop device"): the written
// device mounts with the image's files and passes btrfs check; every
// refusal leaves the device byte for byte as it was; a read-back mismatch
// names the first bad block; an I/O error or a signal mid-write leaves no
// valid superblock. It refuses the image's own storage (the same file, a
// hard link, a loop device over it), a loop device whose backing file also
// backs a mounted one, a device smaller than the image's chunks reach, and
// every signature libblkid knows (exFAT, f2fs, squashfs, md 1.1, VDO, a
// LUKS2 secondary header...). The test hooks live in btrfslab-testhooks
// only. Every loop and dm device is removed, even on failure.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, linkSync, mkdirSync, openSync, readFileSync, readSync, closeSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { crc32c } from '../cli/crc32c.mjs';
import { btrfsCheck, CLI, scratchDir, skipReason } from './lib.mjs';

// the CLI built with -DBLAB_TEST_HOOKS (the write hooks); the release CLI has none
const CLI_HOOKS = process.env.BTRFSLAB_CLI_HOOKS || fileURLToPath(new URL('../../wasm-core/build/btrfslab-testhooks', import.meta.url));

const skip = skipReason();
const dir = scratchDir('write');
const made = { loops: [], dms: [] };

function loopOver(file, size) {
  if (size !== undefined) execFileSync('truncate', ['-s', String(size), file]);
  const dev = execFileSync('losetup', ['--find', '--show', file], { encoding: 'utf8' }).trim();
  made.loops.push(dev);
  return dev;
}
const hashFile = (f) => createHash('sha256').update(readFileSync(f)).digest('hex');
/** bytes [at, at + n) of a file or device */
function readAt(f, at, n) {
  const fd = openSync(f, 'r');
  try {
    const b = Buffer.alloc(n);
    let got = 0;
    while (got < n) { const r = readSync(fd, b, got, n - got, at + got); if (!r) break; got += r; }
    return b.subarray(0, got);
  } finally { closeSync(fd); }
}
function writeAt(f, at, buf) {
  const fd = openSync(f, 'r+');
  try { writeSync(fd, buf, 0, buf.length, at); } finally { closeSync(fd); }
}
/** An md 1.1 member's superblock (at byte 0), its checksum right (libblkid checks it). */
function mdSuper11() {
  const maxDev = 2, b = Buffer.alloc(4096);
  b.writeUInt32LE(0xa92b4efc, 0); // magic
  b.writeUInt32LE(1, 4); // major version
  Buffer.from('btrfslab-md-set!').copy(b, 16); // set uuid
  b.write('btrfslab:0', 32); // set name
  b.writeUInt32LE(1, 72); // level 1
  b.writeBigUInt64LE(200000n, 80); // size
  b.writeUInt32LE(2, 92); // raid disks
  b.writeBigUInt64LE(2048n, 128); // data offset
  b.writeBigUInt64LE(200000n, 136); // data size
  b.writeBigUInt64LE(0n, 144); // super offset: 0 sectors, version 1.1
  Buffer.from('btrfslab-md-dev!').copy(b, 168); // device uuid
  b.writeBigUInt64LE(1n, 200); // events
  b.writeBigUInt64LE(2n ** 64n - 1n, 208); // resync offset: clean
  b.writeUInt32LE(maxDev, 220);
  b.writeUInt16LE(0, 256); b.writeUInt16LE(1, 258); // dev roles
  let sum = 0n; // 32-bit words over 256 + 2 * max_dev bytes, csum field zero, folded
  const n = 256 + maxDev * 2;
  for (let i = 0; i + 4 <= n; i += 4) sum += BigInt(b.readUInt32LE(i));
  if (n % 4) sum += BigInt(b.readUInt16LE(n - 2));
  sum = (sum & 0xffffffffn) + (sum >> 32n);
  b.writeUInt32LE(Number(sum & 0xffffffffn), 216);
  return b;
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
    assert.match(r.stderr, /refusing .*: it holds btrfs \(at byte 65600\) \(a filesystem, RAID or crypto header, or partition table, as libblkid finds it\); --force overwrites it/);
    execFileSync('mkfs.ext4', ['-q', '-F', dev]);
    const h1 = hashDev(dev);
    r = write(img, dev);
    assert.match(r.stderr, /it holds ext4 \(at byte 1080\)/);
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
    const r = spawnSync(CLI_HOOKS, ['write', img, dev], { encoding: 'utf8', env: { ...process.env, BTRFSLAB_WRITE_CORRUPT_AT: String(at) } });
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`verify failed: the device's block at byte ${at} `));
  });

  test('the release binary has no test hooks: a lying-device hook is ignored, its name is not in the binary', () => {
    const dev = loopOver(join(dir, 'h.dev'), 160 << 20);
    const env = { ...process.env, BTRFSLAB_WRITE_CORRUPT_AT: String(1 << 20), BTRFSLAB_WRITE_FAIL_AFTER: '0', BTRFSLAB_WRITE_PAUSE_AFTER: '0' };
    const r = spawnSync(CLI, ['write', img, dev], { encoding: 'utf8', env, timeout: 120000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /read back and verified/);
    const bin = readFileSync(CLI);
    for (const hook of ['BTRFSLAB_WRITE_CORRUPT_AT', 'BTRFSLAB_WRITE_FAIL_AFTER', 'BTRFSLAB_WRITE_PAUSE_AFTER']) {
      assert.equal(bin.includes(hook), false, `${hook} is in the release binary`);
      assert.equal(readFileSync(CLI_HOOKS).includes(hook), true, `${hook} is not in the test build`);
    }
  });

  test('the image\'s own storage is refused, the image untouched: the same file, a hard link, a loop device over it or over a link', () => {
    const own = join(dir, 'own.img');
    copyFileSync(img, own);
    const link = join(dir, 'own-link.img');
    linkSync(own, link);
    const h0 = hashFile(own);
    const refused = (r, why) => {
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr, why);
      assert.match(r.stderr, /writing it would destroy the image as it is read/);
      assert.doesNotMatch(r.stdout, /verified/);
      assert.equal(hashFile(own), h0, 'the image changed');
    };
    refused(write(own, own, '--force'), /refusing .*own\.img: it is the image itself \(the same file: device \d+:\d+, inode \d+\)/);
    refused(write(own, link, '--force'), /refusing .*own-link\.img: it is the image itself \(the same file/);
    const loopOwn = loopOver(own);
    refused(write(own, loopOwn, '--force'), new RegExp(`refusing ${loopOwn}: it is /dev/loop\\d+, a loop device backed by the image file`));
    refused(write(link, loopOwn, '--force'), /a loop device backed by the image file/);
    refused(write(loopOwn, own, '--force'), /the image is \/dev\/loop\d+, a loop device backed by this file/);
    const loopLink = loopOver(link);
    refused(write(own, loopLink, '--force'), /a loop device backed by the image file/);
    refused(write(loopOwn, loopLink, '--force'), /are loop devices over the same file/);
  });

  test('in use through another name: a hard link to a loop device\'s backing file; a second loop device over a mounted one\'s file', () => {
    const back = join(dir, 'alias.dev');
    const loopA = loopOver(back, 160 << 20);
    const link = join(dir, 'alias-link.dev');
    linkSync(back, link);
    const hl = hashFile(back);
    let r = write(img, link, '--force');
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, new RegExp(`refusing .*alias-link\\.dev: it is in use, it backs /dev/${loopA.slice(5)} \\(detach it first\\)`));
    assert.equal(hashFile(back), hl);
    // one file on two loop devices, one of them mounted: the other is in use
    execFileSync('mkfs.ext4', ['-q', '-F', loopA]);
    const loopB = loopOver(link);
    const mnt = join(dir, 'mnt-alias');
    mkdirSync(mnt, { recursive: true });
    execFileSync('mount', [loopA, mnt]);
    try {
      writeFileSync(join(mnt, 'kept'), 'still here\n');
      const h1 = hashDev(loopB);
      r = write(img, loopB, '--force');
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.match(r.stderr, new RegExp(`refusing ${loopB}: it is in use: its backing file also backs /dev/${loopA.slice(5)}, and ${loopA.slice(5)} is mounted on .*mnt-alias`));
      assert.equal(hashDev(loopB), h1);
      assert.equal(readFileSync(join(mnt, 'kept'), 'utf8'), 'still here\n');
    } finally {
      execFileSync('umount', [mnt]);
    }
    // unmounted, the alias may be written
    r = write(img, loopB, '--force');
    assert.equal(r.status, 0, r.stderr);
    assert.ok(hasBtrfs(loopB));
  });

  test('a superblock that claims 1 MiB while the chunks reach further: sized by the chunks, never written short', () => {
    const claim = join(dir, 'claim.img');
    copyFileSync(img, claim);
    const sb = readAt(claim, 0x10000, 4096);
    sb.writeBigUInt64LE(1n << 20n, 0x70); // total_bytes
    sb.writeBigUInt64LE(1n << 20n, 0xc9 + 8); // the device item's total_bytes
    sb.fill(0, 0, 32);
    sb.writeUInt32LE(crc32c(sb.subarray(32)), 0);
    writeAt(claim, 0x10000, sb);
    const dryDev = join(dir, 'claim-dry.dev');
    execFileSync('truncate', ['-s', String(160 << 20), dryDev]);
    const dry = write(claim, dryDev, '--dry-run');
    // the reach: what the chunks (or dev extents) use, past the claimed 1 MiB
    const m = /a (\d+)-byte filesystem \(its (chunks|dev extents) reach byte \d+; its superblock says 1048576\)/.exec(dry.stdout);
    if (!m) {
      // an open that validates sizes may refuse the image outright: then nothing is written anywhere
      assert.equal(dry.status, 1, dry.stdout + dry.stderr);
      assert.match(dry.stderr, /is not a filesystem to write/);
      return;
    }
    const reach = Number(m[1]);
    assert.ok(reach > 8 << 20, `reach ${reach}`);
    const small = loopOver(join(dir, 'claim-small.dev'), 8 << 20);
    const hs = hashDev(small);
    let r = write(claim, small);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, new RegExp(`refusing .*: it holds 8388608 bytes, the filesystem needs ${reach} \\(its (chunks|dev extents) reach byte ${reach}; its superblock says 1048576\\)`));
    assert.equal(hashDev(small), hs);
    const dev = loopOver(join(dir, 'claim.dev'), 160 << 20);
    r = write(claim, dev);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /read back and verified/);
    assert.ok(readAt(dev, 0, reach).equals(readAt(claim, 0, reach)), 'the device does not hold all the chunks reach');
  });

  test('every signature libblkid knows is refused without --force, the device unchanged: exFAT, f2fs, squashfs, md 1.1, VDO, a LUKS2 secondary header', () => {
    const cases = {
      exfat: { make: (dev) => execFileSync('mkfs.exfat', [dev], { stdio: 'ignore' }), type: /exfat/ },
      f2fs: { make: (dev) => execFileSync('mkfs.f2fs', ['-q', '-f', dev], { stdio: 'ignore' }), type: /f2fs \(at byte 1024\)/ },
      squashfs: {
        make: (dev) => {
          const from = join(dir, 'sq-src');
          mkdirSync(from, { recursive: true });
          writeFileSync(join(from, 'a'), 'squashed\n');
          const sq = join(dir, 'sq.img');
          execFileSync('mksquashfs', [from, sq, '-quiet', '-noappend'], { stdio: 'ignore' });
          writeAt(dev, 0, readFileSync(sq));
        },
        type: /squashfs \(at byte 0\)/,
      },
      // md 1.1 and VDO, crafted at their documented offsets (byte 0 both; mdadm and vdo are not needed)
      md11: { make: (dev) => writeAt(dev, 0, mdSuper11()), type: /linux_raid_member \(at byte 0\)/ },
      vdo: { make: (dev) => writeAt(dev, 0, Buffer.concat([Buffer.from('dmvdo001'), Buffer.alloc(32), randomBytes(16)])), type: /vdo \(at byte 0\)/ },
      // LUKS2 with its primary header wiped: the secondary (16 KiB in) alone
      luks2: {
        make: (dev) => {
          const key = join(dir, 'luks.key');
          writeFileSync(key, randomBytes(32));
          execFileSync('cryptsetup', ['luksFormat', '-q', '--type', 'luks2', '--pbkdf', 'pbkdf2', '--pbkdf-force-iterations', '1000', '--key-file', key, dev], { stdio: 'ignore' });
          writeAt(dev, 0, Buffer.alloc(4096));
        },
        type: /crypto_LUKS \(at byte 16384\)/,
      },
    };
    for (const [name, c] of Object.entries(cases)) {
      const dev = loopOver(join(dir, `sig-${name}.dev`), 160 << 20);
      c.make(dev);
      assert.match(spawnSync('blkid', ['-p', '-o', 'value', '-s', 'TYPE', dev], { encoding: 'utf8' }).stdout, /\S/, `${name}: blkid finds nothing`);
      const h = hashDev(dev);
      const r = write(img, dev);
      assert.equal(r.status, 1, `${name}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /refusing .*: it holds /, name);
      assert.match(r.stderr, c.type, name);
      assert.equal(hashDev(dev), h, `${name}: the device changed`);
      if (name === 'luks2') {
        const f = write(img, dev, '--force');
        assert.equal(f.status, 0, f.stderr);
        assert.deepEqual(execFileSync('wipefs', ['--noheadings', '--output', 'TYPE', dev], { encoding: 'utf8' }).trim().split('\n'), ['btrfs']);
      }
    }
  });

  test('an I/O error, or a signal, mid-write: says how far it got, and no valid superblock is left', async () => {
    const dev = loopOver(join(dir, 'f.dev'), 160 << 20);
    execFileSync('mkfs.btrfs', ['-q', '-f', dev]);
    let r = spawnSync(CLI_HOOKS, ['write', '--force', img, dev], { encoding: 'utf8', env: { ...process.env, BTRFSLAB_WRITE_FAIL_AFTER: String(2 << 20) } });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /I\/O error while writing the image's data \(at byte \d+: Input\/output error\), after \d+ of \d+ bytes; the device holds no valid superblock/);
    assert.equal(hasBtrfs(dev), false);
    assert.match(spawnSync('blkid', ['-p', dev], { encoding: 'utf8' }).stdout, /^$/);
    // a signal: the write waits at a known point (the pause hook), then SIGINT
    execFileSync('mkfs.btrfs', ['-q', '-f', dev]);
    const child = spawn(CLI_HOOKS, ['write', '--force', img, dev], { env: { ...process.env, BTRFSLAB_WRITE_PAUSE_AFTER: String(2 << 20) }, stdio: ['ignore', 'pipe', 'pipe'] });
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
