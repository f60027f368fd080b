// A guest kernel ready to boot: Debian's image package fetched (apt.mjs),
// its vmlinuz turned into an ELF vmlinux (vmlinux.mjs), and a base initramfs
// (cpio.mjs): busybox (Debian's busybox-static), our helper (helper.c, built
// static), /init (init.sh), the btrfs and virtio module chains in the order
// `modprobe --show-depends` gives over the package's modules (after depmod
// there), decompressed. Built once per kernel into the cache directory.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchDebs, KERNELS, unpackDeb } from './apt.mjs';
import { cpioNewc } from './cpio.mjs';
import { extractVmlinux } from './vmlinux.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
/** The modules the guest loads (with what they depend on); built-in ones are skipped. */
export const MODULES = ['crc32c_intel', 'crc32c_generic', 'btrfs', 'virtio_pci', 'virtio_blk'];
// bump when the base initramfs's layout changes, so that cached ones are rebuilt
const LAYOUT = 1;

/** The cache directory: $BTRFSLAB_GUEST_CACHE, else /var/cache/btrfs-lab/guest for root, else ~/.cache/btrfs-lab/guest. */
export function cacheDir() {
  if (process.env.BTRFSLAB_GUEST_CACHE) return process.env.BTRFSLAB_GUEST_CACHE;
  return process.getuid?.() === 0 ? '/var/cache/btrfs-lab/guest' : join(homedir(), '.cache', 'btrfs-lab', 'guest');
}

function sh(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26, ...opts });
}

/** Our helper, built static from helper.c, cached by the source's hash. Returns its path. */
export function buildHelper(dir = cacheDir()) {
  const src = readFileSync(join(HERE, 'helper.c'));
  const out = join(dir, `blab-${createHash('sha256').update(src).digest('hex').slice(0, 16)}`);
  if (existsSync(out)) return out;
  mkdirSync(dir, { recursive: true });
  const tmp = `${out}.tmp-${process.pid}`;
  sh('gcc', ['-static', '-O2', '-Wall', '-o', tmp, join(HERE, 'helper.c')]);
  renameSync(tmp, out);
  // the builds of older sources
  for (const f of readdirSync(dir)) if (/^blab-[0-9a-f]{16}$/.test(f) && join(dir, f) !== out) rmSync(join(dir, f), { force: true });
  return out;
}

/**
 * The module files to load, in order, from `modprobe --show-depends` lines
 * ("insmod PATH" or "builtin NAME"): each once, at its first place.
 */
export function moduleOrder(showDependsText) {
  const seen = new Set();
  const out = [];
  for (const line of showDependsText.split('\n')) {
    const m = /^insmod (\S+)/.exec(line.trim());
    if (m && !seen.has(m[1])) {
      seen.add(m[1]);
      out.push(m[1]);
    }
  }
  return out;
}

function moduleData(path) {
  if (path.endsWith('.ko')) return readFileSync(path);
  const tool = path.endsWith('.xz') ? 'xz' : path.endsWith('.zst') ? 'zstd' : null;
  if (!tool) throw new Error(`${path}: unknown module compression`);
  const r = spawnSync(tool, ['-dc', path], { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${tool} -dc ${path}: ${r.stderr}`);
  return r.stdout;
}

/** The base initramfs for kernel root (unpacked package) of version kver. */
function baseInitramfs(root, kver, busyboxRoot, helper) {
  const modDir = [join(root, 'lib', 'modules', kver), join(root, 'usr', 'lib', 'modules', kver)].find(existsSync);
  if (!modDir) throw new Error(`no lib/modules/${kver} in ${root}`);
  const base = join(modDir, '..', '..', '..');
  sh('depmod', ['-b', base, kver]);
  const show = MODULES.map((m) => sh('modprobe', ['--show-depends', '-d', base, '-S', kver, m])).join('\n');
  const mods = moduleOrder(show);
  if (!mods.some((p) => /\/btrfs\.ko/.test(p))) throw new Error(`${kver}: btrfs is not a module of this package`);
  const entries = ['bin', 'sbin', 'dev', 'etc', 'proc', 'sys', 'tmp', 'mnt', 'out', 'lib', 'lib/modules'].map((name) => ({ name, type: 'dir' }));
  entries.push({ name: 'dev/console', type: 'char', mode: 0o600, major: 5, minor: 1 });
  entries.push({ name: 'bin/busybox', type: 'file', mode: 0o755, data: readFileSync(join(busyboxRoot, 'bin', 'busybox')) });
  entries.push({ name: 'bin/sh', type: 'symlink', target: 'busybox' });
  entries.push({ name: 'bin/blab', type: 'file', mode: 0o755, data: readFileSync(helper) });
  entries.push({ name: 'init', type: 'file', mode: 0o755, data: readFileSync(join(HERE, 'init.sh')) });
  const names = [];
  for (const p of mods) {
    const name = basename(p).replace(/\.(xz|zst)$/, '');
    names.push(name);
    entries.push({ name: `lib/modules/${name}`, type: 'file', data: moduleData(p) });
  }
  entries.push({ name: 'etc/modules', type: 'file', data: `${names.join('\n')}\n` });
  return { cpio: cpioNewc(entries), modules: names };
}

/**
 * fn() with the cache directory to itself: another process preparing a kernel
 * (apt's lists, an unpacked package) waits. A lock whose process is gone is
 * taken over.
 */
function withCacheLock(dir, log, fn) {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, 'lock');
  const sleep = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; ; waited++) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      let owner = NaN;
      try { owner = Number(readFileSync(join(lock, 'pid'), 'utf8')); } catch { /* being written */ }
      let alive = true;
      if (owner > 0) {
        try { process.kill(owner, 0); } catch (k) { alive = k.code === 'EPERM'; }
      }
      if (!alive) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (waited === 0) log(`waiting for process ${owner} preparing a kernel in ${dir}`);
      Atomics.wait(sleep, 0, 0, 200);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Fetches (first use only) and prepares kernel series (5.10, 6.1, 6.12).
 * Returns { series, kver, vmlinux, initrd, modules, pkg }. log(msg) hears of
 * each slow step.
 */
export function prepareKernel(series, opts = {}) {
  if (!KERNELS[series]) throw new Error(`no guest kernel '${series}': the kernels are ${Object.keys(KERNELS).join(', ')} (and host)`);
  const { dir = cacheDir(), log = () => {} } = opts;
  return withCacheLock(dir, log, () => prepareLocked(series, dir, log));
}

function prepareLocked(series, dir, log) {
  const debs = fetchDebs(dir, series, log);
  const pkg = basename(debs.image, '.deb');
  const helper = buildHelper(dir);
  const kdir = join(dir, 'kernels', pkg);
  const infoFile = join(kdir, 'info.json');
  const stamp = `${LAYOUT}:${basename(helper)}:${createHash('sha256').update(readFileSync(join(HERE, 'init.sh'))).digest('hex').slice(0, 16)}`;
  if (existsSync(infoFile)) {
    const info = JSON.parse(readFileSync(infoFile, 'utf8'));
    if (info.stamp === stamp && existsSync(info.vmlinux) && existsSync(info.initrd)) return info;
  }
  mkdirSync(kdir, { recursive: true });
  const unpacked = join(dir, 'unpacked');
  mkdirSync(unpacked, { recursive: true });
  log(`unpacking ${basename(debs.image)}`);
  const root = unpackDeb(debs.image, join(unpacked, pkg));
  const bbRoot = unpackDeb(debs.busybox, join(unpacked, basename(debs.busybox, '.deb')));
  const boot = join(root, 'boot');
  const vmlinuz = readdirSync(boot).find((f) => f.startsWith('vmlinuz-'));
  if (!vmlinuz) throw new Error(`${pkg}: no boot/vmlinuz-*`);
  const kver = vmlinuz.slice('vmlinuz-'.length);
  log(`extracting vmlinux from ${vmlinuz}`);
  const vmlinux = join(kdir, 'vmlinux');
  writeFileSync(`${vmlinux}.tmp`, extractVmlinux(readFileSync(join(boot, vmlinuz))));
  renameSync(`${vmlinux}.tmp`, vmlinux);
  log(`building the initramfs (busybox, helper, ${MODULES.join(', ')} and their dependencies)`);
  const { cpio, modules } = baseInitramfs(root, kver, bbRoot, helper);
  const initrd = join(kdir, 'base.cpio');
  writeFileSync(`${initrd}.tmp`, cpio);
  renameSync(`${initrd}.tmp`, initrd);
  const info = { series, kver, pkg, vmlinux, initrd, modules, stamp };
  writeFileSync(infoFile, `${JSON.stringify(info, null, 2)}\n`);
  rmSync(root, { recursive: true, force: true }); // 300-400 MB of modules; the .deb stays
  return info;
}

/** The prepared kernel of series if it is already in the cache (no download, no build), else null. */
export function cachedKernel(series, dir = cacheDir()) {
  const kroot = join(dir, 'kernels');
  if (!existsSync(kroot)) return null;
  for (const pkg of readdirSync(kroot)) {
    const f = join(kroot, pkg, 'info.json');
    if (!existsSync(f)) continue;
    const info = JSON.parse(readFileSync(f, 'utf8'));
    if (info.series === series && existsSync(info.vmlinux) && existsSync(info.initrd)) return info;
  }
  return null;
}
