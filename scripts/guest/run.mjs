// One run of a workload (a POSIX shell script) against a btrfs image, on a
// guest kernel in QEMU (5.10, 6.1, 6.12: Debian's, see kernel.mjs) or on this
// machine's kernel ('host', through a loop device), the same way on both:
//
//   the script runs with IMG (the image's block device), MNT (an empty
//   directory to mount it on), OUT (a directory whose files come back)
//   and these shell functions:
//     capture N      the image as it is now (mounted or not: what a power cut
//                    would leave) copied to captureN.img (N a number): the
//                    host copies the image file, as seed001.mjs does on a
//                    loop device; a guest waits for it
//     crash          leave the image as a power cut would: it is not unmounted
//                    after the script (in a guest: powered off while mounted;
//                    on the host: the image file copied while mounted)
//   and `blab` (helper.c) on its PATH, plus busybox's tools in a guest.
//   After the script the image is unmounted (unless crash).
//
// Results: the image after (a copy; the input is never written), each
// capture, the script's status/stdout/stderr, the count of every traced event
// (tracefs: in a guest the whole kernel's, on the host the script's own
// processes'), the events lost (must be 0 for counts to be exact), and
// timings: on a guest the workload's time is the emulator's (compare only
// two kernels in the same emulator, with care).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmdirSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpioNewc } from './cpio.mjs';
import { buildHelper, prepareKernel } from './kernel.mjs';

export const KERNEL_NAMES = ['5.10', '6.1', '6.12', 'host'];

// what a run has started and must not outlive this process (an interrupted
// test or command): QEMU processes, and on the host mounts and loop devices
const live = { qemu: new Set(), mounts: new Set(), loops: new Set() };
process.on('exit', () => {
  for (const q of live.qemu) q.kill('SIGKILL');
  for (const m of live.mounts) if (spawnSync('umount', [m]).status !== 0) spawnSync('umount', ['-l', m]);
  for (const l of live.loops) spawnSync('losetup', ['-d', l]);
});

/** The shell functions every workload gets (prepended to the script), in a guest or on the host. */
export function workloadPreamble(where) {
  const copy = where === 'guest'
    ? 'echo "BLAB: capture $1" >/dev/console; blab waitmark /dev/vdb "$1" >/dev/null'
    : 'cp --sparse=always "$BLAB_IMGFILE" "$BLAB_CAPDIR/capture$1.img"';
  return [
    'crash() { : >"$BLAB_CRASH"; }',
    `capture() { case "$1" in ''|*[!0-9]*) echo "capture: '$1' is not a number" >&2; return 2;; esac; ${copy}; }`,
    '',
  ].join('\n');
}

/** The mark a guest waits for after asking for capture n: written in the output disk's last 4 KiB. */
export function captureMark(n) {
  const b = Buffer.alloc(4096);
  b.write(`BLABMARK ${n}\n`, 'ascii');
  return b;
}

/**
 * Counts of each event in tracefs `trace` text, keyed as asked
 * ("system:event"); events holds the names asked for. A line is
 * "TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: ..." (FLAGS absent in some
 * formats); comment lines start with '#'.
 */
export function countTraceEvents(text, events) {
  const byName = new Map(events.map((e) => [e.includes(':') ? e.split(':')[1] : e, e]));
  const counts = Object.fromEntries(events.map((e) => [e, 0]));
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const m = /\[\d+\][^:]*?\s\d+\.\d+: (\w+):/.exec(line);
    const key = m && byName.get(m[1]);
    if (key) counts[key]++;
  }
  return counts;
}

/** Events lost in tracefs per_cpu stats text ("cpuN overrun: A dropped events: B" lines, or the stats files). */
export function lostEvents(statsText) {
  let overrun = 0, dropped = 0;
  for (const m of statsText.matchAll(/overrun: (\d+)/g)) overrun += Number(m[1]);
  for (const m of statsText.matchAll(/dropped events: (\d+)/g)) dropped += Number(m[1]);
  return { overrun, dropped };
}

/** The first line of `tar -tv` output that is not a plain file or directory with a relative name free of '..', or null. */
export function unsafeTarEntry(listing) {
  for (const l of listing.split('\n')) {
    if (!l) continue;
    const name = l.split(/\s+/).slice(5).join(' ');
    if (!/^[-d]/.test(l) || name.startsWith('/') || name.split('/').includes('..')) return l;
  }
  return null;
}

/** The QEMU command line for a prepared kernel, run initrd and disks (paths, raw). */
export function qemuArgs({ vmlinux, initrd, disks, memory = '2G', cpus = 2 }) {
  return [
    '-accel', 'tcg,thread=multi', '-cpu', 'max', '-m', memory, '-smp', String(cpus),
    '-nodefaults', '-display', 'none', '-serial', 'stdio', '-no-reboot',
    '-kernel', vmlinux, '-initrd', initrd,
    '-append', `console=ttyS0 ${process.env.BTRFSLAB_GUEST_APPEND ?? 'quiet'} panic=-1 rdinit=/init`,
    ...disks.flatMap((d) => ['-drive', `file=${d},if=virtio,format=raw,cache=unsafe`]),
  ];
}

function sparseCopy(from, to) {
  execFileSync('cp', ['--sparse=always', from, to]);
}

function makeZeroFile(path, size) {
  rmSync(path, { force: true });
  execFileSync('truncate', ['-s', String(size), path]);
}

function progressTo(stream) {
  const tty = stream.isTTY;
  let last = '';
  return {
    line(msg) {
      if (tty) stream.write(`\r\x1b[K${msg}`);
      else if (msg !== last) stream.write(`${msg}\n`);
      last = msg;
    },
    end() { if (tty && last) stream.write('\n'); },
  };
}

/**
 * Runs workload (the script's text) on kernel ('5.10', '6.1', '6.12' or
 * 'host') against a copy of image, in the new or empty directory out. opts:
 * events (['btrfs:btrfs_sync_file', ...]),
 * timeoutMs, progress (a writable stream, or null), cacheDir.
 * Returns the result (also written to out/result.json).
 */
export async function runWorkload({ kernel, workload, image, out, events = [], timeoutMs = 15 * 60_000, progress = process.stderr, dir } = {}) {
  if (!KERNEL_NAMES.includes(kernel)) throw new Error(`unknown kernel '${kernel}': one of ${KERNEL_NAMES.join(', ')}`);
  if (!existsSync(image)) throw new Error(`no image ${image}`);
  for (const e of events) if (!/^\w+:\w+$/.test(e)) throw new Error(`event '${e}': write it as system:event (btrfs:btrfs_sync_file)`);
  mkdirSync(out, { recursive: true });
  if (readdirSync(out).length) throw new Error(`${out} is not empty: the results go to a new or empty directory`);
  const imgAfter = join(out, 'image.img');
  sparseCopy(image, imgAfter);
  const p = progress ? progressTo(progress) : { line() {}, end() {} };
  const t0 = Date.now();
  let r;
  try {
    r = kernel === 'host'
      ? await runOnHost({ workload, imgAfter, out, events, dir, p })
      : await runInGuest({ kernel, workload, imgAfter, out, events, timeoutMs, dir, p });
  } finally {
    p.end();
  }
  const caps = readdirSync(out).map((f) => /^capture(\d+)\.img$/.exec(f)).filter(Boolean)
    .sort((a, b) => a[1] - b[1]).map((m) => join(out, m[0]));
  const result = { kernel, ...r, image: imgAfter, captures: caps, wallMs: Date.now() - t0 };
  writeFileSync(join(out, 'result.json'), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

function readOut(dir, name) {
  const f = join(dir, name);
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
}

function summarize(files, events) {
  const trace = readOut(files, 'trace');
  return {
    status: Number(readOut(files, 'status').trim() || NaN),
    stdout: readOut(files, 'stdout'),
    stderr: readOut(files, 'stderr'),
    counts: countTraceEvents(trace, events),
    lost: lostEvents(readOut(files, 'trace-stats')),
    missingEvents: readOut(files, 'missing-events').split('\n').filter(Boolean),
  };
}

async function runInGuest({ kernel, workload, imgAfter, out, events, timeoutMs, dir, p }) {
  p.line(`guest ${kernel}: preparing the kernel`);
  const k = prepareKernel(kernel, { dir, log: (m) => p.line(`guest ${kernel}: ${m}`) });
  const work = mkdtempSync(join(tmpdir(), 'btrfslab-guest-'));
  try {
    const outDisk = join(work, 'out.disk');
    const outSize = 512 << 20;
    makeZeroFile(outDisk, outSize);
    const script = `export BLAB_CRASH=/tmp/crash\n${workloadPreamble('guest')}${workload}`;
    const runCpio = cpioNewc([
      { name: 'workload.sh', type: 'file', mode: 0o755, data: script },
      { name: 'etc/events', type: 'file', data: events.map((e) => `${e}\n`).join('') },
    ]);
    const initrd = join(work, 'initrd.cpio');
    writeFileSync(initrd, Buffer.concat([readFileSync(k.initrd), runCpio]));
    const args = qemuArgs({ vmlinux: k.vmlinux, initrd, disks: [imgAfter, outDisk] });
    const console = [];
    const t0 = Date.now();
    let tStart = null, tDone = null;
    p.line(`guest ${kernel}: booting ${k.kver} (QEMU TCG)`);
    const code = await new Promise((resolve, reject) => {
      const q = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      live.qemu.add(q);
      const timer = setTimeout(() => {
        console.push(`\n[btrfslab: no power-off after ${timeoutMs / 1000} s: QEMU killed]`);
        q.kill('SIGKILL');
      }, timeoutMs);
      let buf = '';
      const onData = (d) => {
        buf += d;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i).replace(/\r$/, '');
          buf = buf.slice(i + 1);
          console.push(line);
          const cap = /^BLAB: capture (\d{1,6})$/.exec(line);
          if (cap) {
            // the image file as the guest has written it so far, then the mark the guest waits for
            sparseCopy(imgAfter, join(out, `capture${Number(cap[1])}.img`));
            const fd = openSync(outDisk, 'r+');
            try { writeSync(fd, captureMark(Number(cap[1])), 0, 4096, outSize - 4096); } finally { closeSync(fd); }
            p.line(`guest ${kernel}: captured the image (${cap[1]})`);
          } else if (line.includes('BLAB: workload start')) {
            tStart = Date.now();
            p.line(`guest ${kernel}: booted in ${((tStart - t0) / 1000).toFixed(1)} s, running the workload`);
          } else if (line.includes('BLAB: workload done')) {
            tDone = Date.now();
            p.line(`guest ${kernel}: workload done in ${((tDone - tStart) / 1000).toFixed(1)} s, writing results`);
          }
        }
      };
      q.stdout.on('data', onData);
      q.stderr.on('data', onData);
      q.on('error', (e) => { clearTimeout(timer); reject(new Error(`qemu-system-x86_64: ${e.message} (install qemu-system-x86)`)); });
      q.on('close', (c) => { clearTimeout(timer); live.qemu.delete(q); resolve(c); });
    });
    writeFileSync(join(out, 'console.log'), `${console.join('\n')}\n`);
    const files = join(out, 'files');
    mkdirSync(files, { recursive: true });
    // the archive comes from the guest, where the workload may have written anything into OUT: only
    // plain files and directories, by relative names without '..', are taken
    const list = spawnSync('tar', ['-tvf', outDisk], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const bad = unsafeTarEntry(list.stdout ?? '');
    if (bad) throw new Error(`the results hold an entry other than a plain file or directory: ${bad}`);
    const x = spawnSync('tar', ['-xf', outDisk, '-C', files, '--no-same-owner', '--no-same-permissions'], { encoding: 'utf8' });
    if (list.status !== 0 || x.status !== 0 || !existsSync(join(files, 'status'))) {
      throw new Error(`guest ${kernel}: no results came back (QEMU exited ${code}); the console's end:\n${console.slice(-30).join('\n')}`);
    }
    const times = readOut(files, 'times').trim().split('\n').map(Number);
    return {
      kver: readOut(files, 'kernel').trim(),
      ...summarize(files, events),
      times: {
        bootMs: tStart ? tStart - t0 : null, // host wall clock, boot to the workload's start
        workloadEmulatorS: times.length === 2 ? Math.round((times[1] - times[0]) * 100) / 100 : null,
        qemuMs: Date.now() - t0,
      },
      log: readOut(files, 'log'),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const TRACEFS = '/sys/kernel/tracing';

async function runOnHost({ workload, imgAfter, out, events, dir, p }) {
  if (process.getuid?.() !== 0) throw new Error('the host kernel runs a workload as root only (loop device, mount)');
  const helper = buildHelper(dir);
  const work = mkdtempSync(join(tmpdir(), 'btrfslab-host-'));
  const files = join(out, 'files');
  mkdirSync(files, { recursive: true });
  const bin = join(work, 'bin');
  mkdirSync(bin);
  symlinkSync(helper, join(bin, 'blab'));
  const mnt = join(work, 'mnt');
  mkdirSync(mnt);
  const crashFlag = join(work, 'crash');
  const inst = events.length ? join(TRACEFS, 'instances', `btrfslab-guest-${process.pid}`) : null;
  let loop = null;
  const w = (f, v) => writeFileSync(join(inst, f), v);
  try {
    loop = execFileSync('losetup', ['--find', '--show', imgAfter], { encoding: 'utf8' }).trim();
    live.loops.add(loop);
    live.mounts.add(mnt); // the script may mount it
    const missing = [];
    if (inst) {
      if (!existsSync(join(TRACEFS, 'events'))) execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACEFS]);
      mkdirSync(inst);
      w('buffer_size_kb', '65536');
      w('options/event-fork', '1');
      for (const e of events) {
        const [sys, name] = e.split(':');
        if (existsSync(join(inst, 'events', sys, name))) w(join('events', sys, name, 'enable'), '1');
        else missing.push(e);
      }
    }
    const script = join(work, 'workload.sh');
    writeFileSync(script, `${workloadPreamble('host')}${workload}`);
    p.line(`host ${execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim()}: running the workload`);
    const t0 = process.hrtime.bigint();
    // the shell writes its own pid to the instance before running the script: only its processes are traced
    const pre = inst ? `echo $$ > '${join(inst, 'set_event_pid')}'; echo 1 > '${join(inst, 'tracing_on')}'; ` : '';
    const r = spawnSync('sh', ['-c', `${pre}exec sh '${script}'`], {
      encoding: 'utf8', maxBuffer: 1 << 28,
      env: { ...process.env, IMG: loop, MNT: mnt, OUT: files, BLAB_CRASH: crashFlag, BLAB_IMGFILE: imgAfter, BLAB_CAPDIR: out, PATH: `${bin}:${process.env.PATH}` },
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (inst) w('tracing_on', '0');
    writeFileSync(join(files, 'status'), `${r.status ?? 128}\n`);
    writeFileSync(join(files, 'stdout'), r.stdout ?? '');
    writeFileSync(join(files, 'stderr'), r.stderr ?? '');
    writeFileSync(join(files, 'missing-events'), missing.map((e) => `${e}\n`).join(''));
    if (inst) {
      writeFileSync(join(files, 'trace'), readFileSync(join(inst, 'trace'), 'utf8'));
      writeFileSync(join(files, 'trace-stats'), readdirSync(join(inst, 'per_cpu')).map((c) => readFileSync(join(inst, 'per_cpu', c, 'stats'), 'utf8')).join(''));
    }
    const mounted = spawnSync('mountpoint', ['-q', mnt]).status === 0;
    if (mounted && existsSync(crashFlag)) {
      // a power cut here: the image file as the kernel has written it so far
      const cut = `${imgAfter}.cut`;
      sparseCopy(imgAfter, cut);
      spawnSync('umount', [mnt]);
      execFileSync('mv', [cut, imgAfter]);
    } else if (mounted) {
      execFileSync('umount', [mnt]);
    }
    return {
      kver: execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim(),
      ...summarize(files, events),
      times: { workloadMs: Math.round(ms * 1000) / 1000 },
    };
  } finally {
    if (spawnSync('mountpoint', ['-q', mnt]).status === 0) {
      if (spawnSync('umount', [mnt]).status !== 0) spawnSync('umount', ['-l', mnt]);
    }
    live.mounts.delete(mnt);
    if (loop) {
      spawnSync('btrfs', ['device', 'scan', '--forget', loop]);
      spawnSync('losetup', ['-d', loop]);
      live.loops.delete(loop);
    }
    if (inst && existsSync(inst)) {
      try { w('tracing_on', '0'); } catch { /* gone */ }
      for (const e of events) {
        const [sys, name] = e.split(':');
        try { w(join('events', sys, name, 'enable'), '0'); } catch { /* not there */ }
      }
      try { rmdirSync(inst); } catch { /* still busy: the kernel frees it when it can */ }
    }
    rmSync(work, { recursive: true, force: true });
  }
}
