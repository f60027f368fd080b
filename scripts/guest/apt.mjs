// Debian's kernel packages, fetched with a private apt configuration: its
// own sources.list (bullseye, bookworm and bookworm-backports on the mirror
// the system's sources name), its own state and cache directories, and none
// of the system's apt.conf.d (their hooks and extra index targets are not
// ours to run). The system's apt sources and caches are never touched.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The suites the guest kernels come from, and the kernel each gives. */
export const SUITES = ['bullseye', 'bookworm', 'bookworm-backports'];
export const KERNELS = {
  '5.10': { suite: 'bullseye', series: /^5\.10\./ },
  '6.1': { suite: 'bookworm', series: /^6\.1\./ },
  '6.12': { suite: 'bookworm-backports', series: /^6\.12\./ },
};
const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';

/**
 * The Debian mirror the system's sources use for its own suites: the first
 * URI of a `deb` source whose suites include a Debian release and that is not
 * a security or third-party archive. files: [{ name, text }] of
 * /etc/apt/sources.list and sources.list.d/* (one-line .list and deb822
 * .sources formats). Returns the URI without a trailing slash, or null.
 */
export function debianMirror(files) {
  const releases = /^(buster|bullseye|bookworm|trixie|forky|sid|stable|testing|unstable|oldstable)(-updates|-backports)?$/;
  const good = (uri, suites) => /^(https?|ftp):\/\//.test(uri) && !/security/.test(uri) && suites.some((s) => releases.test(s));
  for (const { name, text } of files) {
    if (name.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (f) => new RegExp(`^${f}:\\s*(.*)$`, 'mi').exec(stanza)?.[1].trim();
        if (!(field('Types') ?? '').split(/\s+/).includes('deb')) continue;
        if (/^(no|false)$/i.test(field('Enabled') ?? 'yes')) continue;
        const uris = (field('URIs') ?? '').split(/\s+/).filter(Boolean);
        const suites = (field('Suites') ?? '').split(/\s+/).filter(Boolean);
        const uri = uris.find((u) => good(u, suites));
        if (uri) return uri.replace(/\/+$/, '');
      }
    } else if (name.endsWith('.list')) {
      for (const raw of text.split('\n')) {
        const line = raw.replace(/#.*/, '').trim();
        const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line);
        if (m && good(m[1], [m[2]])) return m[1].replace(/\/+$/, '');
      }
    }
  }
  return null;
}

/** The system's apt source files, as debianMirror takes them. */
export function systemSources(etc = '/etc/apt') {
  const files = [];
  if (existsSync(join(etc, 'sources.list'))) files.push({ name: 'sources.list', text: readFileSync(join(etc, 'sources.list'), 'utf8') });
  const d = join(etc, 'sources.list.d');
  if (existsSync(d)) {
    for (const n of readdirSync(d).sort()) {
      if (n.endsWith('.list') || n.endsWith('.sources')) files.push({ name: n, text: readFileSync(join(d, n), 'utf8') });
    }
  }
  return files;
}

/** The private sources.list: the three suites' main component on mirror. */
export function sourcesList(mirror) {
  return SUITES.map((s) => `deb [signed-by=${KEYRING}] ${mirror} ${s} main\n`).join('');
}

/**
 * The private apt.conf for the cache directory dir (read through
 * APT_CONFIG, which apt reads before anything else: it points the
 * configuration parts at an empty directory, so the system's apt.conf.d is
 * not read). Check-Valid-Until is off as on the system (its clock may be
 * far from the archive's); signatures are checked.
 */
export function aptConf(dir) {
  const q = (s) => `"${s.replace(/["\\]/g, '')}"`;
  return [
    `Dir::Etc::main ${q(join(dir, 'apt.conf'))};`,
    `Dir::Etc::parts ${q(join(dir, 'apt.conf.d'))};`,
    `Dir::Etc::sourcelist ${q(join(dir, 'sources.list'))};`,
    `Dir::Etc::sourceparts ${q(join(dir, 'sources.list.d'))};`,
    `Dir::Etc::preferences ${q(join(dir, 'preferences'))};`,
    `Dir::Etc::preferencesparts ${q(join(dir, 'preferences.d'))};`,
    `Dir::State ${q(join(dir, 'state'))};`,
    `Dir::State::status ${q(join(dir, 'state', 'status'))};`,
    `Dir::Cache ${q(join(dir, 'cache'))};`,
    'APT::Architecture "amd64";',
    'APT::Sandbox::User "root";',
    'Acquire::Languages "none";',
    'Acquire::Check-Valid-Until "false";',
    'Acquire::Check-Date "false";',
    '',
  ].join('\n');
}

/**
 * From `apt-cache show linux-image-amd64` over the three suites: the image
 * package (and its version) each kernel series' metapackage depends on.
 * Returns { '5.10': { pkg, version }, ... } for the series found.
 */
export function kernelPackages(showText) {
  const found = {};
  for (const stanza of showText.split(/\n\s*\n/)) {
    const version = /^Version:\s*(\S+)/m.exec(stanza)?.[1];
    const depends = /^Depends:\s*(.*)$/m.exec(stanza)?.[1] ?? '';
    const pkg = /\b(linux-image-[0-9][^\s,(]*-amd64)\b/.exec(depends)?.[1];
    if (!version || !pkg) continue;
    for (const [series, k] of Object.entries(KERNELS)) {
      const upstream = version.replace(/^\d+:/, '');
      if (!k.series.test(upstream)) continue;
      // the newest of a series, if a suite lists more than one
      if (!found[series] || cmpVersion(upstream, found[series].metaVersion) > 0) found[series] = { pkg, metaVersion: upstream };
    }
  }
  return found;
}

/** A rough dpkg version order, enough to pick the newest of one kernel series. */
export function cmpVersion(a, b) {
  const pa = a.split(/[^0-9]+/).filter(Boolean).map(Number), pb = b.split(/[^0-9]+/).filter(Boolean).map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? -1) - (pb[i] ?? -1);
    if (d) return d;
  }
  return 0;
}

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, ...opts });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}:\n${(r.stderr || r.stdout).slice(-2000)}`);
  return r.stdout;
}

/** An apt tool run with the private configuration of cache directory dir. */
export function privateApt(dir) {
  const env = { ...process.env, APT_CONFIG: join(dir, 'apt.conf'), DEBIAN_FRONTEND: 'noninteractive', LC_ALL: 'C' };
  return (tool, args, opts = {}) => sh(tool, args, { env, ...opts });
}

/** Writes the private configuration into dir (idempotent). */
export function writeAptConfig(dir, mirror) {
  for (const d of ['apt.conf.d', 'sources.list.d', 'preferences.d', 'state/lists/partial', 'cache/archives/partial', 'debs']) {
    mkdirSync(join(dir, d), { recursive: true });
  }
  writeFileSync(join(dir, 'apt.conf'), aptConf(dir));
  writeFileSync(join(dir, 'sources.list'), sourcesList(mirror));
  if (!existsSync(join(dir, 'state', 'status'))) writeFileSync(join(dir, 'state', 'status'), '');
}

/**
 * The .deb files for kernel series (one of KERNELS' keys) and busybox-static,
 * downloaded into dir/debs unless there already. Returns { image, busybox }
 * (paths) and the image package's name.
 */
export function fetchDebs(dir, series, log = () => {}) {
  if (!KERNELS[series]) throw new Error(`no guest kernel ${series}: the kernels are ${Object.keys(KERNELS).join(', ')}`);
  const debs = join(dir, 'debs');
  const have = (re) => (existsSync(debs) ? readdirSync(debs).find((f) => re.test(f)) : undefined);
  const imgRe = new RegExp(`^linux-image-${series.replace('.', '\\.')}(\\.[0-9]+)*[-+][^_]*-amd64_.*\\.deb$`);
  let image = have(imgRe), busybox = have(/^busybox-static_.*\.deb$/);
  if (image && busybox) return { image: join(debs, image), busybox: join(debs, busybox) };

  const mirror = debianMirror(systemSources());
  if (!mirror) throw new Error('no Debian mirror in /etc/apt/sources.list(.d): the guest kernels come from it');
  writeAptConfig(dir, mirror);
  const apt = privateApt(dir);
  log(`apt-get update (private configuration in ${dir}, mirror ${mirror})`);
  apt('apt-get', ['update', '-qq']);
  if (!image) {
    const found = kernelPackages(apt('apt-cache', ['show', 'linux-image-amd64']));
    if (!found[series]) throw new Error(`${KERNELS[series].suite} on ${mirror} offers no ${series} kernel (linux-image-amd64)`);
    log(`apt-get download ${found[series].pkg}`);
    apt('apt-get', ['download', '-qq', found[series].pkg], { cwd: debs });
    image = have(imgRe);
    if (!image) throw new Error(`apt-get download ${found[series].pkg} left no ${imgRe} in ${debs}`);
  }
  if (!busybox) {
    log('apt-get download busybox-static');
    apt('apt-get', ['download', '-qq', 'busybox-static/bookworm'], { cwd: debs });
    busybox = have(/^busybox-static_.*\.deb$/);
  }
  // the index lists and apt's binary caches (about 200 MB) serve only this download: the next one updates again
  for (const d of ['cache', join('state', 'lists')]) rmSync(join(dir, d), { recursive: true, force: true });
  return { image: join(debs, image), busybox: join(debs, busybox) };
}

/** dpkg-deb -x deb into dest, through a temporary directory so that a half unpacked tree is never used. */
export function unpackDeb(deb, dest) {
  if (existsSync(dest)) return dest;
  const tmp = `${dest}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  sh('dpkg-deb', ['-x', deb, tmp]);
  renameSync(tmp, dest);
  return dest;
}
