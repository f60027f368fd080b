#!/usr/bin/env node
// Installs what btrfs-lab needs and is missing, and nothing else:
//   Debian packages (apt-get) for the toolchain, the browser and the kernel
//   oracle, and the npm dependencies from package-lock.json.
// Quick when everything is there: it only looks for files and compares a
// stamp of package-lock.json.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// Debian package -> a file that exists once it is installed.
const DEBIAN = [
  ['make', '/usr/bin/make'],
  ['gcc', '/usr/bin/gcc'],
  ['emscripten', '/usr/bin/emcc'],
  ['node-acorn', '/usr/share/nodejs/acorn/package.json'],
  ['chromium', '/usr/bin/chromium'],
  // the fonts the page renders with: browser screenshots are compared against them
  ['fonts-dejavu-core', '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'],
  ['fonts-liberation', '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf'],
  ['btrfs-progs', '/usr/sbin/mkfs.btrfs'],
  ['xfsprogs', '/usr/sbin/xfs_io'],
  ['util-linux', '/usr/sbin/losetup'],
  // write's signature probe links util-linux's libblkid (the native CLI only)
  ['libblkid-dev', '/usr/include/blkid/blkid.h'],
  // the write kernel test makes real signatures of these (md 1.1 and VDO it crafts)
  ['exfatprogs', '/usr/sbin/mkfs.exfat'],
  ['f2fs-tools', '/usr/sbin/mkfs.f2fs'],
  ['squashfs-tools', '/usr/bin/mksquashfs'],
  ['cryptsetup-bin', '/usr/sbin/cryptsetup'],
  ['time', '/usr/bin/time'],
  // coverage-guided fuzzing of the core (libFuzzer): the fuzz test layer and bench/fuzz
  ['clang-14', '/usr/bin/clang-14'],
  ['libclang-rt-14-dev', '/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a'],
  // old kernels in a guest (scripts/guest.mjs): QEMU without its GUI (no recommends), depmod/modprobe
  // for the kernel package's module chain, xz and zstd for its vmlinuz and modules
  ['qemu-system-x86', '/usr/bin/qemu-system-x86_64', 'no-recommends'],
  ['kmod', '/usr/sbin/depmod'],
  ['xz-utils', '/usr/bin/xz'],
  ['zstd', '/usr/bin/zstd'],
];

function log(msg) {
  process.stderr.write(`setup: ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}`);
}

function installDebian() {
  // Debian moves tools between /usr/bin, /usr/sbin, /bin and /sbin: any will do.
  const present = (file) => [file, file.replace('/usr/sbin/', '/usr/bin/'), file.replace('/usr/bin/', '/usr/sbin/'),
    file.replace('/usr/', '/')].some((f) => existsSync(f));
  const absent = DEBIAN.filter(([, file]) => !present(file));
  const missing = absent.map(([pkg]) => pkg);
  if (missing.length === 0) return;
  log(`installing Debian packages: ${missing.join(' ')}`);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = isRoot ? [] : ['sudo', '-n'];
  if (!isRoot && spawnSync('sudo', ['-n', 'true']).status !== 0) {
    throw new Error(`these Debian packages are missing and this user cannot install them: ${missing.join(' ')}\n` +
      `install them as root: apt-get install -y ${missing.join(' ')}`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => run(sudo[0] ?? 'apt-get', sudo.length ? [...sudo.slice(1), 'apt-get', ...args] : args, { env });
  apt(['update', '-qq']);
  // with recommended packages: the browser's fonts come with them, and screenshots compare against them
  const plain = absent.filter(([, , how]) => how !== 'no-recommends').map(([pkg]) => pkg);
  const bare = absent.filter(([, , how]) => how === 'no-recommends').map(([pkg]) => pkg);
  if (plain.length) apt(['install', '-y', '-qq', ...plain]);
  if (bare.length) apt(['install', '-y', '-qq', '--no-install-recommends', ...bare]);
}

function installNpm() {
  const lock = join(root, 'package-lock.json');
  if (!existsSync(lock)) throw new Error('package-lock.json is missing');
  const want = createHash('sha256').update(readFileSync(lock)).digest('hex');
  const stamp = join(root, 'node_modules', '.btrfslab-setup-stamp');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return;
  // `npm install --no-save` installs exactly the lock's versions and leaves
  // the lock alone; `npm ci` would be the usual choice, but it rejects locks
  // written with omit-lockfile-registry-resolved (set on these machines).
  log('installing npm dependencies (npm install from package-lock.json)');
  run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error'], { cwd: root });
  writeFileSync(stamp, want);
}

try {
  installDebian();
  installNpm();
} catch (e) {
  log(`FAILED: ${e.message}`);
  process.exit(1);
}
