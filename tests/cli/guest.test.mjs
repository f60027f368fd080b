// The pure parts of the guest-kernel runner (scripts/guest/): the cpio
// writer, the vmlinux extraction, the private apt configuration, the trace
// counting, the module order, the static helper. No QEMU, no network: the
// guest boot itself is tests/kernel/guest.test.mjs.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';

import { aptConf, debianMirror, kernelPackages, sourcesList } from '../../scripts/guest/apt.mjs';
import { cpioNewc, readCpioNewc } from '../../scripts/guest/cpio.mjs';
import { buildHelper, moduleOrder } from '../../scripts/guest/kernel.mjs';
import { countTraceEvents, lostEvents, qemuArgs, unsafeTarEntry } from '../../scripts/guest/run.mjs';
import { scenarioWorkload, scenarioWords } from '../../scripts/guest/scenario.mjs';
import { bzImagePayload, extractVmlinux } from '../../scripts/guest/vmlinux.mjs';
import { modelSeed001 } from '../kernel/seed001.mjs';

const dir = mkdtempSync(join(tmpdir(), 'btrfslab-guest-unit-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('cpio newc', () => {
  test('round trip: files, directories, symlinks, a device; 4-byte alignment; the trailer', () => {
    const entries = [
      { name: 'bin', type: 'dir' },
      { name: 'bin/busybox', type: 'file', mode: 0o755, data: Buffer.from('x'.repeat(13)) },
      { name: 'bin/sh', type: 'symlink', target: 'busybox' },
      { name: 'dev', type: 'dir' },
      { name: 'dev/console', type: 'char', mode: 0o600, major: 5, minor: 1 },
      { name: 'init', type: 'file', mode: 0o755, data: '#!/bin/sh\n' },
    ];
    const buf = cpioNewc(entries);
    assert.equal(buf.length % 4, 0);
    assert.equal(buf.toString('ascii', 0, 6), '070701');
    const back = readCpioNewc(buf);
    assert.deepEqual(back.map((e) => e.name), entries.map((e) => e.name));
    const by = Object.fromEntries(back.map((e) => [e.name, e]));
    assert.equal(by['bin/busybox'].mode, 0o100755);
    assert.equal(by['bin/busybox'].data.toString(), 'x'.repeat(13));
    assert.equal(by['bin/sh'].mode & 0o170000, 0o120000);
    assert.equal(by['bin/sh'].data.toString(), 'busybox');
    assert.equal(by.dev.mode, 0o40755);
    assert.equal(by['dev/console'].mode, 0o20600);
    assert.deepEqual([by['dev/console'].rmajor, by['dev/console'].rminor], [5, 1]);
    assert.ok(buf.subarray(-512).toString('latin1').includes('TRAILER!!!'));
  });

  test('concatenated archives read one after the other; bad names refused', () => {
    assert.throws(() => cpioNewc([{ name: '../x', type: 'file', data: '' }]), /bad entry name/);
    assert.throws(() => cpioNewc([{ name: 'a', type: 'dir' }, { name: 'a', type: 'dir' }]), /twice/);
    assert.throws(() => cpioNewc([{ name: 'a', type: 'fifo' }]), /unknown type/);
    const one = cpioNewc([{ name: 'a', type: 'file', data: '1' }]);
    const two = cpioNewc([{ name: 'b', type: 'file', data: '22' }]);
    assert.deepEqual(readCpioNewc(Buffer.concat([one, two]).subarray(one.length)).map((e) => e.name), ['b']);
    assert.throws(() => readCpioNewc(one.subarray(0, 50)), /truncated/);
  });
});

/** A bzImage-shaped buffer: setup header, protected-mode part holding the payload (size appended). */
function fakeBzImage(payload, uncompressedLen, { setupSects = 3, prefix = 100 } = {}) {
  const pm = ((setupSects || 4) + 1) * 512;
  const buf = Buffer.alloc(pm + prefix + payload.length + 4 + 64);
  buf[0x1f1] = setupSects;
  buf.write('HdrS', 0x202, 'ascii');
  buf.writeUInt16LE(0x20f, 0x206);
  buf.writeUInt32LE(prefix, 0x248);
  buf.writeUInt32LE(payload.length + 4, 0x24c);
  payload.copy(buf, pm + prefix);
  buf.writeUInt32LE(uncompressedLen, pm + prefix + payload.length);
  return buf;
}

describe('vmlinux from a bzImage', () => {
  const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(5000, 7)]);
  test('gzip and xz payloads come out as the ELF file, its recorded size checked', () => {
    const gz = fakeBzImage(gzipSync(elf), elf.length);
    assert.deepEqual(bzImagePayload(gz), { offset: 4 * 512 + 100, length: gzipSync(elf).length + 4, kind: 'gzip', size: elf.length });
    assert.ok(extractVmlinux(gz).equals(elf));
    const xz = execFileSync('xz', ['-c', '--check=crc32'], { input: elf });
    assert.ok(extractVmlinux(fakeBzImage(xz, elf.length, { setupSects: 0 })).equals(elf)); // 0 sectors means 4
    const zst = execFileSync('zstd', ['-c', '-q'], { input: elf });
    assert.ok(extractVmlinux(fakeBzImage(zst, elf.length)).equals(elf));
  });
  test('bad input: no header, payload outside the file, unknown compression, wrong size, not ELF', () => {
    assert.throws(() => bzImagePayload(Buffer.alloc(1024)), /HdrS/);
    const b = fakeBzImage(gzipSync(elf), elf.length);
    const far = Buffer.from(b);
    far.writeUInt32LE(1 << 30, 0x24c);
    assert.throws(() => bzImagePayload(far), /outside the file/);
    assert.throws(() => bzImagePayload(fakeBzImage(Buffer.alloc(64, 0x42), 10)), /unknown compression/);
    assert.throws(() => extractVmlinux(fakeBzImage(gzipSync(elf), elf.length + 1)), /records/);
    assert.throws(() => extractVmlinux(fakeBzImage(gzipSync(Buffer.alloc(100)), 100)), /not an ELF/);
  });
});

describe('private apt configuration', () => {
  test('the mirror comes from the system sources, deb822 or one-line, never a security archive', () => {
    const deb822 = 'Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\n\n' +
      'Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\nComponents: main\n';
    assert.equal(debianMirror([{ name: 'debian.sources', text: deb822 }]), 'http://mirror.example/debian');
    assert.equal(debianMirror([{ name: 'x.sources', text: 'Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n' }]), null);
    const list = '# comment\ndeb [arch=amd64] http://ftp.de.debian.org/debian bookworm main\n';
    assert.equal(debianMirror([{ name: 'sources.list', text: list }]), 'http://ftp.de.debian.org/debian');
    assert.equal(debianMirror([{ name: 'y.sources', text: 'Types: deb\nEnabled: no\nURIs: http://a/debian\nSuites: bookworm\n' }]), null);
  });
  test('sources.list names the three suites; apt.conf keeps state, cache and parts in the cache directory', () => {
    assert.equal(sourcesList('http://m/debian').trim().split('\n').map((l) => l.split(' ').slice(2).join(' ')).join('|'),
      'http://m/debian bullseye main|http://m/debian bookworm main|http://m/debian bookworm-backports main');
    const conf = aptConf('/c');
    for (const want of ['Dir::State "/c/state";', 'Dir::Cache "/c/cache";', 'Dir::Etc::parts "/c/apt.conf.d";',
      'Dir::Etc::sourcelist "/c/sources.list";', 'Dir::State::status "/c/state/status";']) {
      assert.ok(conf.includes(want), `apt.conf lacks ${want}`);
    }
    assert.ok(!/\/etc\/apt/.test(conf), 'apt.conf points at the system configuration');
  });
  test('the kernel packages, one per series, from apt-cache show linux-image-amd64', () => {
    const show = [
      'Package: linux-image-amd64\nVersion: 5.10.223-1\nDepends: linux-image-5.10.0-32-amd64 (= 5.10.223-1)\n',
      'Package: linux-image-amd64\nVersion: 6.1.176-1\nDepends: linux-image-6.1.0-50-amd64 (= 6.1.176-1)\n',
      'Package: linux-image-amd64\nVersion: 6.1.170-1\nDepends: linux-image-6.1.0-49-amd64 (= 6.1.170-1)\n',
      'Package: linux-image-amd64\nVersion: 6.12.95-1~bpo12+1\nDepends: linux-image-6.12.95+deb12-amd64 (= 6.12.95-1~bpo12+1)\n',
    ].join('\n');
    const k = kernelPackages(show);
    assert.equal(k['5.10'].pkg, 'linux-image-5.10.0-32-amd64');
    assert.equal(k['6.1'].pkg, 'linux-image-6.1.0-50-amd64');
    assert.equal(k['6.12'].pkg, 'linux-image-6.12.95+deb12-amd64');
  });
});

describe('what a run reads back', () => {
  test('trace lines counted per event asked for; lost events summed', () => {
    const trace = [
      '# tracer: nop',
      '#           TASK-PID     CPU#  ||||   TIMESTAMP  FUNCTION',
      '            blab-83      [001] ...1    12.345678: btrfs_sync_file: 1a2b-... ino=257 parent=256 datasync=0',
      '            blab-83      [001] ....    12.345999: btrfs_sync_file: 1a2b-... ino=258 parent=256 datasync=0',
      ' btrfs-transacti-70      [000] d..2.   13.000001: btrfs_transaction_commit: 1a2b: gen=9',
      '            blab-83 (      83) [000] .... 14.1: btrfs_sync_file: x',
    ].join('\n');
    assert.deepEqual(countTraceEvents(trace, ['btrfs:btrfs_sync_file', 'btrfs:btrfs_transaction_commit', 'btrfs:btrfs_cow_block']),
      { 'btrfs:btrfs_sync_file': 3, 'btrfs:btrfs_transaction_commit': 1, 'btrfs:btrfs_cow_block': 0 });
    assert.deepEqual(lostEvents('cpu0 overrun: 0 dropped events: 2 \ncpu1 overrun: 5 dropped events: 0 \n'), { overrun: 5, dropped: 2 });
  });
  test('the results archive: plain files and directories by relative names only', () => {
    const ok = ['drwxr-xr-x 0/0 0 2026-11-29 03:54 ./', '-rw-r--r-- 0/0 3 2026-11-29 03:54 ./status', '-rw-r--r-- 0/0 3 2026-11-29 03:54 ./a b.txt'];
    assert.equal(unsafeTarEntry(ok.join('\n')), null);
    for (const bad of ['lrwxrwxrwx 0/0 0 2026-11-29 03:54 ./evil -> /etc', 'hrw-r--r-- 0/0 0 2026-11-29 03:54 ./h link to ./status',
      '-rw-r--r-- 0/0 3 2026-11-29 03:54 ../x', '-rw-r--r-- 0/0 3 2026-11-29 03:54 /etc/x', 'crw------- 0/0 5,1 2026-11-29 03:54 ./console']) {
      assert.equal(unsafeTarEntry([...ok, bad].join('\n')), bad);
    }
  });
  test('the module order keeps the first of each path; builtin lines are skipped', () => {
    assert.deepEqual(moduleOrder('insmod /m/a.ko \ninsmod /m/b.ko.xz \nbuiltin virtio_pci\ninsmod /m/a.ko \ninsmod /m/c.ko\n'),
      ['/m/a.ko', '/m/b.ko.xz', '/m/c.ko']);
  });
  test('QEMU boots the ELF vmlinux under TCG with the disks in order', () => {
    const a = qemuArgs({ vmlinux: '/k/vmlinux', initrd: '/k/i.cpio', disks: ['/d/img', '/d/out'] });
    assert.equal(a[a.indexOf('-accel') + 1], 'tcg,thread=multi');
    assert.equal(a[a.indexOf('-kernel') + 1], '/k/vmlinux');
    assert.deepEqual(a.filter((x, i) => a[i - 1] === '-drive'), ['file=/d/img,if=virtio,format=raw,cache=unsafe', 'file=/d/out,if=virtio,format=raw,cache=unsafe']);
  });
});

describe('the guest helper (static)', () => {
  test('creates, fsyncs, unlinks every STEP-th file and reports its figures', () => {
    const helper = buildHelper(join(dir, 'cache'));
    const d = mkdtempSync(join(dir, 'h-'));
    const run = (...a) => execFileSync(helper, a, { encoding: 'utf8' }).trim();
    assert.match(run('create', d, '10'), /^\d+\.\d{3}$/);
    assert.equal(readdirSync(d).length, 10);
    const [, k] = run('unlink-step', d, '10', '3').split(' ');
    assert.equal(k, '4'); // 1, 4, 7, 10
    assert.deepEqual(readdirSync(d).sort(), ['file_2', 'file_3', 'file_5', 'file_6', 'file_8', 'file_9']);
    assert.match(run('fsync', d), /^\d+\.\d{3}$/);
    const bad = spawnSync(helper, ['create', d, 'x'], { encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /'x' is not a count/);
    assert.equal(spawnSync(helper, ['supergen', join(d, 'file_2')], { encoding: 'utf8' }).status, 1);
  });
});

describe('scripts/guest.mjs: bad input gets a clear error before anything runs', () => {
  const GUEST = new URL('../../scripts/guest.mjs', import.meta.url).pathname;
  const guest = (...a) => spawnSync(process.execPath, [GUEST, ...a], { encoding: 'utf8' });
  test('usage, a missing or unknown kernel, no image or two, unknown arguments, a bad event, a used --out', () => {
    const cases = [
      [[], 2, /usage:/],
      [['run', '--mkfs', '1G'], 2, /--kernel is required/],
      [['run', '--kernel', '4.19', '--mkfs', '1G'], 2, /--kernel 4\.19: one of 5\.10, 6\.1, 6\.12, host/],
      [['run', '--kernel', '5.10'], 2, /give one of --image, --scenario, --mkfs, --run-scenario/],
      [['run', '--kernel', '5.10', '--mkfs', '1G', '--image', '/x'], 2, /give one of/],
      [['run', '--kernel', '5.10', '--image', join(dir, 'nope.img')], 2, /no image .*nope\.img/],
      [['run', '--kernel', '5.10', '--bogus'], 2, /unknown argument '--bogus'/],
      [['run', '--kernel', '5.10', '--image'], 2, /--image needs a value/],
      [['prepare', '--kernel', 'host'], 2, /one of 5\.10, 6\.1, 6\.12/],
    ];
    for (const [args, code, re] of cases) {
      const r = guest(...args);
      assert.equal(r.status, code, `guest ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
      assert.match(r.stderr, re, `guest ${args.join(' ')}`);
    }
    const img = join(dir, 'small.img');
    execFileSync('truncate', ['-s', '1M', img]);
    const ev = guest('run', '--kernel', '5.10', '--image', img, '--events', 'btrfs_sync_file');
    assert.equal(ev.status, 1);
    assert.match(ev.stderr, /event 'btrfs_sync_file': write it as system:event/);
    const used = mkdtempSync(join(dir, 'used-'));
    execFileSync('touch', [join(used, 'x')]);
    const u = guest('run', '--kernel', '5.10', '--image', img, '--out', used);
    assert.equal(u.status, 1);
    assert.match(u.stderr, /is not empty/);
    assert.deepEqual(readdirSync(used), ['x'], 'the used --out was written to');
  });
});

describe('a scenario done by a kernel: the workload it becomes', () => {
  test('each file command becomes one shell or blab call; set lines are the core\'s; crash is last', () => {
    const text = ['mkfs nodesize=4096 size=256M', 'set dir_logging=legacy', 'mkdir /d', 'create /d/f', 'write /d/f 0 100 7',
      'truncate /d/f 50', 'link /d/f /d/g', 'symlink /x/y /d/s', 'rename /d/g "/d/it\'s"', 'setxattr /d/f user.k v1', 'unlink /d/f',
      'fsync /d', 'commit', 'create /d/file_{1..3}', 'rmdir /e', 'crash'].join('\n');
    const w = scenarioWorkload(text);
    assert.equal(w.mkfs, 'mkfs nodesize=4096 size=256M');
    assert.equal(w.crash, true);
    const lines = w.workload.trim().split('\n');
    assert.deepEqual(lines, [
      'set -e',
      'mount -t btrfs -o commit=600 "$IMG" "$MNT"',
      'mkdir "$MNT"\'/d\'',
      ': >"$MNT"\'/d/f\'',
      'blab write "$MNT"\'/d/f\' 0 100 7',
      'blab truncate "$MNT"\'/d/f\' 50',
      'ln "$MNT"\'/d/f\' "$MNT"\'/d/g\'',
      'ln -s \'/x/y\' "$MNT"\'/d/s\'',
      'blab rename "$MNT"\'/d/g\' "$MNT"\'/d/it\'\\\'\'s\'',
      'blab setxattr "$MNT"\'/d/f\' \'user.k\' \'v1\'',
      'rm "$MNT"\'/d/f\'',
      'blab fsync "$MNT"\'/d\' >/dev/null',
      'sync -f "$MNT"',
      'i=1; while [ $i -le 3 ]; do : >"$MNT"\'/d/file_\'"$i"\'\'; i=$((i + 1)); done',
      'rmdir "$MNT"\'/e\'',
      'crash',
    ]);
    assert.deepEqual(scenarioWords('write "/a b" 0 1 2'), ['write', '/a b', '0', '1', '2']);
  });
  test('what a kernel cannot do, or a malformed line, is an error naming the line', () => {
    assert.throws(() => scenarioWorkload('mkfs\nmkdir /a\nsnapshot / /s\n'), /line 3: the kernel side does not do 'snapshot'/);
    assert.throws(() => scenarioWorkload('mkfs\nwrite /f 0 x 1\n'), /line 2: 'x' is not a number/);
    assert.throws(() => scenarioWorkload('mkfs\nmkdir\n'), /line 2: mkdir takes 1 arguments, not 0/);
    assert.throws(() => scenarioWorkload('mkfs\ncrash\nmkdir /a\n'), /line 3: nothing may follow crash/);
    assert.throws(() => scenarioWorkload('mkdir /a\nmkfs\n'), /line 2: mkfs may only be the first command/);
  });
});

describe("the core's 5.10 directory logging mode against 5.10 in a guest", () => {
  // tests/kernel/fixtures/seed001-guest.json: seed 001's experiment on Debian's 5.10.223 in QEMU
  // (node tests/kernel/seed001-guest.mjs --kernels 5.10), each fsync's log counted from the captured image
  const FIXTURE = JSON.parse(readFileSync(new URL('../kernel/fixtures/seed001-guest.json', import.meta.url), 'utf8'));
  const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  test('N=1000 D=100: dir_logging=5.10 logs what 5.10 logged, item for item, in as many leaves give or take 2', () => {
    const k = FIXTURE.rows.find((r) => r.kernel === '5.10' && r.N === 1000);
    const ours = modelSeed001(1000, 100, '5.10', dir);
    for (const p of ['create', 'delete']) {
      assert.deepEqual(sorted(ours[p].items), sorted(k[p].items), `${p}: items per key type`);
      assert.ok(Math.abs(ours[p].leaves - k[p].leaves) <= 2, `${p}: ${ours[p].leaves} leaves, 5.10 ${k[p].leaves}`);
    }
    // 5.17 (the seed's after, from its text): the same without the DIR_ITEM copies and their range
    const after = modelSeed001(1000, 100, '5.17', dir);
    const noDirItem = (o) => sorted(Object.fromEntries(Object.entries(o).filter(([t]) => t !== 'DIR_ITEM' && t !== 'DIR_LOG_ITEM')));
    for (const p of ['create', 'delete']) assert.deepEqual(sorted(after[p].items), noDirItem(k[p].items), `5.17 ${p}`);
  });
});
