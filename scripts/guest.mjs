#!/usr/bin/env node
// Runs a workload on a btrfs image under an old kernel in a guest (Debian's
// 5.10, 6.1 or 6.12, in QEMU's software emulation) or under this machine's
// kernel, the same way, and returns the image after, the traced events'
// counts and timings. See docs/guest-kernels.md.
//
//   node scripts/guest.mjs run --kernel 5.10|6.1|6.12|host
//        (--image IN | --scenario FILE | --mkfs SIZE | --run-scenario FILE) [--workload FILE]
//        [--out DIR] [--events btrfs:btrfs_sync_file,...] [--json]
//   node scripts/guest.mjs prepare --kernel 5.10|6.1|6.12   fetch and build only
//   node scripts/guest.mjs list                              the kernels in the cache
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KERNELS } from './guest/apt.mjs';
import { cacheDir, cachedKernel, prepareKernel } from './guest/kernel.mjs';
import { KERNEL_NAMES, runWorkload } from './guest/run.mjs';
import { scenarioWorkload } from './guest/scenario.mjs';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../wasm-core/build/btrfslab', import.meta.url));

/** Without --workload: mount the image (the kernel replays a pending log) and unmount it. */
export const DEFAULT_WORKLOAD = 'mount -t btrfs "$IMG" "$MNT"\nls -la "$MNT"\numount "$MNT"\n';

const USAGE = `usage:
  node scripts/guest.mjs run --kernel ${KERNEL_NAMES.join('|')} (--image IN | --scenario FILE | --mkfs SIZE | --run-scenario FILE)
       [--workload FILE] [--out DIR] [--events SYSTEM:EVENT,...] [--json]
  node scripts/guest.mjs prepare --kernel ${Object.keys(KERNELS).join('|')}
  node scripts/guest.mjs list`;

/** argv after the command -> { name: value }; flags without a value are true. */
export function parseArgs(argv, valued, flags) {
  const o = {};
  const usage = (msg) => Object.assign(new Error(msg), { usage: true });
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const name = a.replace(/^--/, '');
    if (valued.includes(name)) {
      if (i + 1 >= argv.length) throw usage(`${a} needs a value`);
      o[name] = argv[++i];
    } else if (flags.includes(name)) o[name] = true;
    else throw usage(`unknown argument '${a}'`);
  }
  return o;
}

function fail(msg) {
  process.stderr.write(`guest: ${msg}\n`);
  process.exit(2);
}

async function cmdRun(argv) {
  const o = parseArgs(argv, ['kernel', 'image', 'scenario', 'mkfs', 'run-scenario', 'workload', 'out', 'events', 'timeout'], ['json']);
  if (!o.kernel) fail(`--kernel is required\n${USAGE}`);
  if (!KERNEL_NAMES.includes(o.kernel)) fail(`--kernel ${o.kernel}: one of ${KERNEL_NAMES.join(', ')}`);
  const sources = ['image', 'scenario', 'mkfs', 'run-scenario'].filter((k) => o[k]);
  if (sources.length !== 1) fail(`give one of --image, --scenario, --mkfs, --run-scenario\n${USAGE}`);
  if (o['run-scenario'] && o.workload) fail('--run-scenario is the workload: no --workload with it');
  let workload = o.workload ? readFileSync(o.workload, 'utf8') : DEFAULT_WORKLOAD;
  let mkfsLine = null;
  if (o['run-scenario']) {
    // the kernel does the scenario's commands; the core writes the image of its mkfs line
    let sc;
    try {
      sc = scenarioWorkload(readFileSync(o['run-scenario'], 'utf8'));
    } catch (e) {
      fail(`${o['run-scenario']}: ${e.message}`);
    }
    workload = sc.workload;
    mkfsLine = sc.mkfs;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'btrfslab-guest-in-'));
  try {
    let image = o.image;
    if (o.scenario || mkfsLine) {
      image = join(tmp, 'start.img');
      let script = o.scenario;
      if (mkfsLine) writeFileSync((script = join(tmp, 'mkfs.txt')), `${mkfsLine}\n`);
      execFileSync(CLI, ['run', script, '--image', image], { stdio: ['ignore', 'ignore', 'inherit'] });
    } else if (o.mkfs) {
      image = join(tmp, 'start.img');
      execFileSync('truncate', ['-s', o.mkfs, image]);
      execFileSync('mkfs.btrfs', ['-q', '-f', image]);
    }
    if (!existsSync(image)) fail(`no image ${image}`);
    const out = o.out ?? mkdtempSync(join(tmpdir(), `btrfslab-guest-${o.kernel}-`));
    const r = await runWorkload({
      kernel: o.kernel, workload, image, out,
      events: o.events ? o.events.split(',').filter(Boolean) : [],
      timeoutMs: o.timeout ? Number(o.timeout) * 1000 : undefined,
    });
    if (o.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    else {
      const lines = [`kernel      ${r.kernel} (${r.kver})`, `status      ${r.status}`];
      for (const [e, n] of Object.entries(r.counts)) lines.push(`event       ${e} ${n}`);
      if (r.missingEvents.length) lines.push(`not traced  ${r.missingEvents.join(', ')} (this kernel has no such event)`);
      lines.push(`lost        ${r.lost.overrun + r.lost.dropped} events${r.lost.overrun + r.lost.dropped ? ': the counts are NOT exact' : ''}`);
      if (r.times.workloadEmulatorS !== undefined) {
        lines.push(`time        boot ${(r.times.bootMs / 1000).toFixed(1)} s (host wall clock), workload ${r.times.workloadEmulatorS} s (emulator time)`);
      } else lines.push(`time        workload ${r.times.workloadMs} ms (host)`);
      lines.push(`image after ${r.image}`);
      r.captures.forEach((c, i) => lines.push(`capture ${i + 1}   ${c}`));
      lines.push(`stdout      ${r.stdout.trim().split('\n').join('\n            ')}`);
      if (r.stderr.trim()) lines.push(`stderr      ${r.stderr.trim().split('\n').join('\n            ')}`);
      lines.push(`results     ${out}/result.json`);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    process.exitCode = r.status === 0 ? 0 : 1;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  if (cmd === 'run') return cmdRun(rest);
  if (cmd === 'prepare') {
    const o = parseArgs(rest, ['kernel'], []);
    if (!KERNELS[o.kernel]) fail(`--kernel ${o.kernel}: one of ${Object.keys(KERNELS).join(', ')}`);
    const k = prepareKernel(o.kernel, { log: (m) => process.stderr.write(`guest ${o.kernel}: ${m}\n`) });
    process.stdout.write(`${k.kver}\n  vmlinux ${k.vmlinux}\n  initrd  ${k.initrd}\n  modules ${k.modules.join(' ')}\n`);
    return;
  }
  if (cmd === 'list') {
    for (const s of Object.keys(KERNELS)) {
      const k = cachedKernel(s);
      process.stdout.write(`${s.padEnd(5)} ${k ? `${k.kver} (${k.pkg})` : 'not fetched yet (the first run fetches it)'}\n`);
    }
    process.stdout.write(`cache: ${cacheDir()}\n`);
    return;
  }
  fail(USAGE);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // interrupted: exit through process.exit so that run.mjs stops QEMU and undoes its mounts and loop devices
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(130));
  main().catch((e) => {
    process.stderr.write(`guest: ${e.message}\n`);
    process.exit(e.usage ? 2 : 1);
  });
}
