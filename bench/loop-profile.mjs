// Profile of this machine's loop device as a block-device model, and a few
// btrfs timings on it (calibration for the timing model). Root only.
//
//   node bench/loop-profile.mjs [--jobs 1,4,8,16] [--job-mib 16] [--quick]
//
// It makes a 2 GiB sparse file under /tmp, attaches it with `losetup --find
// --show` (default, buffered loop: the backing file's page cache sits below
// the device, like the tests' loop devices) and measures, on the raw device
// with O_DIRECT (page-aligned mmap buffers in a small Python helper, and dd
// oflag=direct for whole-run means):
//   a. QD1 per-request write latency, 4 KiB and 64 KiB (sequential);
//   b. sequential bandwidth with 1 MiB and 4 MiB direct writes (dd);
//   c. cost of a cache flush (fdatasync on the device → REQ_OP_FLUSH → fsync
//      of the backing file): after a 4 KiB write, with nothing written, and
//      by difference of write+flush loops and write-only loops;
//   d. aggregate MiB/s of 64 KiB direct writes with 1, 2, 4, 8 writers.
// Then for each job count a fresh btrfs (mkfs.btrfs -f -U <uuid>) on the same
// device, with a tracefs instance of its own (lines kept only if they carry
// our fsid, as tests/kernel/seed003-measure.mjs does), jobs doing sequential
// 64 KiB pwrite + fsync on a file each:
//   e. throughput and fsync latency (user side);
//   f. ordered extent lifetimes: add → finish_ordered_extent (I/O done) and
//      add → remove, matched by (ino, file_offset);
//   g. transaction commits (during the workload, and including the final sync).
// Prints a human table and a JSON object (last line of stdout).
// Always detaches its loop device, unmounts, removes the file and the tracefs
// instance, even on error or SIGINT/SIGTERM; touches no other loop device.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

const TRACING = '/sys/kernel/tracing';
const EVENTS = ['btrfs_ordered_extent_add', 'btrfs_finish_ordered_extent', 'btrfs_ordered_extent_remove', 'btrfs_transaction_commit', 'btrfs_sync_file'];
const KiB = 1024;
const MiB = 1 << 20;
const GiB = 1 << 30;

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const QUICK = args.includes('--quick');
const JOBS = opt('--jobs', '1,4,8,16').split(',').map(Number);
const JOB_BYTES = Number(opt('--job-mib', '16')) * MiB;

// ---------------------------------------------------------------- helper
// One Python helper for everything that needs per-request timing or O_DIRECT
// with aligned buffers (mmap is page-aligned). Modes print one JSON object.
const HELPER = String.raw`
import os, sys, time, json, mmap
def stats(ns):
    s = sorted(ns); n = len(s)
    if n == 0: return {"n": 0}
    pick = lambda q: s[min(n - 1, int(q * n))] / 1000
    return {"n": n, "mean_us": sum(s) / n / 1000, "p50_us": pick(0.5), "p90_us": pick(0.9), "p99_us": pick(0.99), "max_us": s[-1] / 1000, "min_us": s[0] / 1000}
def abuf(bs):
    m = mmap.mmap(-1, bs); m.write(os.urandom(bs)); return m
mode = sys.argv[1]
if mode == "lat":          # dev bs count base: QD1 sequential O_DIRECT writes, each timed
    dev, bs, count, base = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT); b = abuf(bs); ns = []
    for i in range(count):
        t = time.perf_counter_ns(); os.pwrite(fd, b, base + i * bs); ns.append(time.perf_counter_ns() - t)
    os.close(fd); r = stats(ns); r["MiBps"] = bs * count / 1048576 / (sum(ns) / 1e9); print(json.dumps(r))
elif mode == "flush":      # dev count base: (write 4K; fdatasync) x count, then fdatasync x count, then write-only x count
    dev, count, base = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT); b = abuf(4096)
    t = time.perf_counter_ns(); os.fdatasync(fd); first = time.perf_counter_ns() - t   # drains earlier dirty data
    wf_w, wf_f = [], []
    t_wf = time.perf_counter_ns()
    for i in range(count):
        t = time.perf_counter_ns(); os.pwrite(fd, b, base + i * 4096); t2 = time.perf_counter_ns(); os.fdatasync(fd); t3 = time.perf_counter_ns()
        wf_w.append(t2 - t); wf_f.append(t3 - t2)
    t_wf = time.perf_counter_ns() - t_wf
    empty = []
    for i in range(count):
        t = time.perf_counter_ns(); os.fdatasync(fd); empty.append(time.perf_counter_ns() - t)
    wo = []
    t_wo = time.perf_counter_ns()
    for i in range(count):
        t = time.perf_counter_ns(); os.pwrite(fd, b, base + (count + i) * 4096); wo.append(time.perf_counter_ns() - t)
    t_wo = time.perf_counter_ns() - t_wo
    os.fdatasync(fd); os.close(fd)
    print(json.dumps({"first_flush_us": first / 1000, "after_4k_write": stats(wf_f), "write_in_flush_loop": stats(wf_w),
        "empty": stats(empty), "write_only": stats(wo),
        "diff_mean_us": (t_wf - t_wo) / count / 1000}))
elif mode == "par":        # dev writers bs bytes_per_writer base: parallel O_DIRECT writers on disjoint regions
    dev, n, bs, per, base = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    go_r, go_w = os.pipe(); pids = []
    for j in range(n):
        pid = os.fork()
        if pid == 0:
            os.close(go_w); fd = os.open(dev, os.O_WRONLY | os.O_DIRECT); b = abuf(bs); os.read(go_r, 1)
            off = base + j * per
            for o in range(off, off + per, bs): os.pwrite(fd, b, o)
            os._exit(0)
        pids.append(pid)
    os.close(go_r); time.sleep(0.2)
    t0 = time.perf_counter_ns(); os.write(go_w, b"x" * n)
    bad = 0
    for p in pids: bad += os.waitpid(p, 0)[1] != 0
    dt = time.perf_counter_ns() - t0
    if bad: sys.exit("writer failed")
    print(json.dumps({"writers": n, "seconds": dt / 1e9, "MiBps": n * per / 1048576 / (dt / 1e9)}))
elif mode == "flushonce":  # dev: one fdatasync (settle dirty backing-file pages between steps)
    fd = os.open(sys.argv[2], os.O_WRONLY); t = time.perf_counter_ns(); os.fdatasync(fd); os.close(fd)
    print(json.dumps({"us": (time.perf_counter_ns() - t) / 1000}))
elif mode == "fsync":      # dir jobs size bs latdir: seed 003's workload, fsync latencies per call
    d, jobs, size, bs, latdir = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    go_r, go_w = os.pipe(); pids = []
    for j in range(jobs):
        pid = os.fork()
        if pid == 0:
            os.close(go_w); buf = os.urandom(bs)
            fd = os.open(os.path.join(d, "job%d" % j), os.O_CREAT | os.O_WRONLY, 0o644); os.fsync(fd)
            os.read(go_r, 1); ns = []
            for off in range(0, size, bs):
                os.pwrite(fd, buf, off); t = time.perf_counter_ns(); os.fsync(fd); ns.append(time.perf_counter_ns() - t)
            os.close(fd)
            with open(os.path.join(latdir, "lat%d" % j), "w") as f: f.write(" ".join(map(str, ns)))
            os._exit(0)
        pids.append(pid)
    os.close(go_r); time.sleep(0.2)
    t0 = time.monotonic_ns(); os.write(go_w, b"x" * jobs)
    bad = 0
    for p in pids: bad += os.waitpid(p, 0)[1] != 0
    t1 = time.monotonic_ns()
    if bad: sys.exit("job failed")
    ns = []
    for j in range(jobs):
        with open(os.path.join(latdir, "lat%d" % j)) as f: ns += [int(x) for x in f.read().split()]
    print(json.dumps({"t0_us": t0 / 1000, "t1_us": t1 / 1000, "seconds": (t1 - t0) / 1e9, "MiBps": jobs * size / 1048576 / ((t1 - t0) / 1e9), "fsync": stats(ns)}))
`;

// ---------------------------------------------------------------- state + cleanup
const st = { dir: null, img: null, loop: null, mnt: null, mounted: false, inst: null, mountedTracefs: false };
let interrupted = null;
const sh = (cmd, a, o = {}) => execFileSync(cmd, a, { encoding: 'utf8', timeout: 150_000, stdio: ['ignore', 'pipe', 'pipe'], ...o });
const quiet = (cmd, a) => spawnSync(cmd, a, { encoding: 'utf8', timeout: 60_000 });

/** The backing file of `loop` according to the kernel, or null. */
function backingOf(loop) {
  const r = quiet('losetup', ['--list', '--noheadings', '-O', 'BACK-FILE', loop]);
  return r.status === 0 ? r.stdout.trim().replace(/ \(deleted\)$/, '') : null;
}

function stopInstance() {
  if (!st.inst) return;
  if (existsSync(st.inst)) {
    try { writeFileSync(join(st.inst, 'tracing_on'), '0'); } catch {}
    for (const e of EVENTS) try { writeFileSync(join(st.inst, 'events', 'btrfs', e, 'enable'), '0'); } catch {}
    quiet('rmdir', [st.inst]);
  }
  st.inst = null;
}

function unmount() {
  if (!st.mounted) return;
  for (let i = 0; i < 5; i++) {
    if (quiet('umount', [st.mnt]).status === 0) { st.mounted = false; return; }
    spawnSync('sleep', ['0.5']);
  }
  quiet('umount', ['-l', st.mnt]);
  st.mounted = false;
}

let cleaned = false;
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  stopInstance();
  unmount();
  if (st.loop) {
    // Only ours: the device must still be backed by our file.
    if (backingOf(st.loop) === st.img) quiet('losetup', ['-d', st.loop]);
    st.loop = null;
  }
  if (st.dir) rmSync(st.dir, { recursive: true, force: true });
  if (st.mountedTracefs && existsSync(join(TRACING, 'instances')) && readdirSync(join(TRACING, 'instances')).length === 0) quiet('umount', [TRACING]);
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { interrupted = sig; });
process.on('exit', cleanup);
const checkpoint = async () => {
  await new Promise((r) => setImmediate(r)); // let signal handlers run
  if (interrupted) throw new Error(`interrupted by ${interrupted}`);
};

// ---------------------------------------------------------------- measurements
const PY = (() => {
  try { return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim(); } catch { return 'python3'; }
})();
const commands = {};
function py(label, a) {
  commands[label] = `python3 <helper> ${a.join(' ')}`;
  return JSON.parse(sh(PY, ['-c', HELPER, ...a.map(String)]));
}
function settle() { return py('settle', ['flushonce', st.loop]).us; }

function ddTime(label, bs, count, seekBytes) {
  const a = ['if=/dev/zero', `of=${st.loop}`, `bs=${bs}`, `count=${count}`, `seek=${seekBytes}`, 'oflag=direct,seek_bytes', 'status=none'];
  commands[label] = `dd ${a.join(' ')}`;
  const t0 = process.hrtime.bigint();
  sh('dd', a);
  return Number(process.hrtime.bigint() - t0) / 1e3; // µs
}

function pct(xs, q) { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : null; }
const r1 = (x) => (x == null ? null : Math.round(x * 10) / 10);

function rawDevice() {
  const out = {};
  const dev = st.loop.replace('/dev/', '');
  const rd = (p) => { try { return readFileSync(`/sys/block/${dev}/${p}`, 'utf8').trim(); } catch { return null; } };
  out.device = { dio: rd('loop/dio'), logical_block_size: rd('queue/logical_block_size'), max_sectors_kb: rd('queue/max_sectors_kb'), nr_requests: rd('queue/nr_requests'), scheduler: rd('queue/scheduler'), rotational: rd('queue/rotational'), write_cache: rd('queue/write_cache') };
  // Each measurement runs twice on the same region: "fresh" is the first write
  // to a hole of the sparse backing file (the host fs allocates; btrfs after
  // mkfs's discard sees this), "overwrite" rewrites it (page-cache copy only).
  // settle() (one untimed fdatasync on the device) drains dirty backing-file
  // pages before each timed run so host writeback does not overlap it.
  const N = QUICK ? 500 : 4000;
  const sum = (r) => ({ mean_us: r1(r.mean_us), p50_us: r1(r.p50_us), p90_us: r1(r.p90_us), p99_us: r1(r.p99_us), max_us: r1(r.max_us) });
  // a. QD1 latency: per-request (helper), and a whole dd run divided by N.
  out.qd1 = {};
  let base = 0;
  for (const bs of [4 * KiB, 64 * KiB]) {
    const k = `${bs / KiB}k`;
    const row = { requests: N };
    for (const pass of ['fresh', 'overwrite']) {
      settle();
      row[pass] = sum(py(`a_qd1_${k}_per_request_${pass}`, ['lat', st.loop, bs, N, base]));
    }
    const ddBase = base + bs * N;
    for (const pass of ['fresh', 'overwrite']) {
      settle();
      row[`dd_${pass}_mean_us`] = r1(ddTime(`a_qd1_${k}_dd_${pass}`, bs, N, ddBase) / N);
    }
    out.qd1[k] = row;
    base = ddBase + bs * N;
  }
  base = Math.ceil(base / (64 * MiB)) * 64 * MiB; // 4k+64k used ~530 MiB
  // b. sequential bandwidth, large direct writes (dd).
  out.seq = {};
  const total = QUICK ? 128 * MiB : 512 * MiB;
  const seqBase = {};
  for (const bs of [1 * MiB, 4 * MiB]) {
    const k = `${bs / MiB}M`;
    seqBase[k] = base;
    out.seq[k] = { MiB: total / MiB };
    for (const pass of ['fresh', 'overwrite']) {
      settle();
      const us = ddTime(`b_seq_${k}_dd_${pass}`, bs, total / bs, base);
      out.seq[k][pass] = { MiBps: r1(total / MiB / (us / 1e6)), per_request_us: r1(us / (total / bs)) };
    }
    base += total;
  }
  // d. concurrency: 64 KiB direct writes, n writers on disjoint slices of an
  // already written region (overwrite), same total for every n.
  out.parallel = {};
  const ptotal = QUICK ? 64 * MiB : 256 * MiB;
  for (const n of [1, 2, 4, 8]) {
    settle();
    const r = py(`d_parallel_${n}`, ['par', st.loop, n, 64 * KiB, ptotal / n, seqBase['1M']]);
    out.parallel[n] = { MiBps: r1(r.MiBps), seconds: Number(r.seconds.toFixed(4)) };
  }
  // c. flush cost: fdatasync on the device after each 4 KiB direct write, with
  // nothing written, and (write+flush loop − write-only loop)/count.
  const F = QUICK ? 100 : 300;
  out.flush = { count: F };
  for (const pass of ['fresh', 'overwrite']) {
    const f = py(`c_flush_${pass}`, ['flush', st.loop, F, base]);
    out.flush[pass] = {
      drain_first_flush_us: r1(f.first_flush_us),
      after_4k_write: sum(f.after_4k_write),
      empty: sum(f.empty),
      write_4k_in_flush_loop_mean_us: r1(f.write_in_flush_loop.mean_us),
      write_4k_only_mean_us: r1(f.write_only.mean_us),
      by_difference_mean_us: r1(f.diff_mean_us),
    };
  }
  return out;
}

function tracefs() {
  if (!existsSync(join(TRACING, 'events'))) {
    execFileSync('mount', ['-t', 'tracefs', 'nodev', TRACING]);
    st.mountedTracefs = true;
  }
}

function parseTrace(text, fsid) {
  const ev = [];
  const re = /\s(\d+)\.(\d{6}): (btrfs_\w+): ([0-9a-f-]{36}): (.*)$/;
  for (const line of text.split('\n')) {
    if (!line.includes(fsid)) continue;
    const m = re.exec(line);
    if (!m || m[4] !== fsid) continue;
    const f = {};
    for (const kv of m[5].matchAll(/(\w+)=(\S+)/g)) f[kv[1]] = kv[2];
    ev.push({ t: Number(m[1]) * 1e6 + Number(m[2]), name: m[3], f });
  }
  return ev;
}

function orderedLifetimes(ev, t0, t1) {
  const open = new Map(); // ino -> [oe]
  const oes = [];
  for (const e of ev) {
    const ino = e.f.ino;
    if (e.name === 'btrfs_ordered_extent_add') {
      const oe = { ino, off: Number(e.f.file_offset), len: Number(e.f.len), add: e.t, finish: null, finishLast: null, remove: null };
      oes.push(oe);
      if (!open.has(ino)) open.set(ino, []);
      open.get(ino).push(oe);
    } else if (e.name === 'btrfs_finish_ordered_extent') {
      const s = Number(e.f.start);
      const oe = (open.get(ino) ?? []).find((o) => o.off <= s && s < o.off + o.len);
      if (oe) { oe.finish ??= e.t; oe.finishLast = e.t; }
    } else if (e.name === 'btrfs_ordered_extent_remove') {
      const off = Number(e.f.file_offset);
      const list = open.get(ino) ?? [];
      const i = list.findIndex((o) => o.off === off);
      if (i >= 0) { list[i].remove = e.t; list.splice(i, 1); }
    }
  }
  const inWin = oes.filter((o) => o.add >= t0 && o.add <= t1);
  const sum = (xs) => (xs.length ? { n: xs.length, mean_us: r1(xs.reduce((a, b) => a + b, 0) / xs.length), p50_us: pct(xs, 0.5), p90_us: pct(xs, 0.9), max_us: Math.max(...xs) } : { n: 0 });
  return {
    added: inWin.length,
    unmatched_remove: inWin.filter((o) => o.remove == null).length,
    len_p50: pct(inWin.map((o) => o.len), 0.5),
    add_to_finish: sum(inWin.filter((o) => o.finish != null).map((o) => o.finish - o.add)),
    add_to_remove: sum(inWin.filter((o) => o.remove != null).map((o) => o.remove - o.add)),
    finish_to_remove: sum(inWin.filter((o) => o.remove != null && o.finishLast != null).map((o) => o.remove - o.finishLast)),
  };
}

function btrfsRun(jobs) {
  const fsid = randomUUID();
  commands[`mkfs`] = `mkfs.btrfs -q -f -U <uuid> ${st.loop}; mount -t btrfs ${st.loop} <mnt>`;
  sh('mkfs.btrfs', ['-q', '-f', '-U', fsid, st.loop]);
  sh('mount', ['-t', 'btrfs', st.loop, st.mnt]);
  st.mounted = true;
  const latdir = join(st.dir, `lat-${jobs}`);
  mkdirSync(latdir);
  st.inst = join(TRACING, 'instances', `loopprof-${process.pid}`);
  mkdirSync(st.inst);
  writeFileSync(join(st.inst, 'buffer_size_kb'), '32768');
  writeFileSync(join(st.inst, 'trace_clock'), 'mono'); // same clock as Python's time.monotonic_ns
  for (const e of EVENTS) writeFileSync(join(st.inst, 'events', 'btrfs', e, 'enable'), '1');
  writeFileSync(join(st.inst, 'tracing_on'), '1');
  const w = py(`e_fsync_${jobs}jobs`, ['fsync', st.mnt, jobs, JOB_BYTES, 64 * KiB, latdir]);
  commands[`e_sync_${jobs}jobs`] = `sync -f <mnt>   (traced: ordered extents still in flight, final commit)`;
  sh('sync', ['-f', st.mnt]);
  writeFileSync(join(st.inst, 'tracing_on'), '0');
  const text = readFileSync(join(st.inst, 'trace'), 'utf8');
  let overrun = 0;
  for (const cpu of readdirSync(join(st.inst, 'per_cpu'))) {
    const s = readFileSync(join(st.inst, 'per_cpu', cpu, 'stats'), 'utf8');
    overrun += Number(s.match(/overrun: (\d+)/)?.[1] ?? 0) + Number(s.match(/dropped events: (\d+)/)?.[1] ?? 0);
  }
  stopInstance();
  unmount();
  const ev = parseTrace(text, fsid);
  const commits = ev.filter((e) => e.name === 'btrfs_transaction_commit');
  const within = (e) => e.t >= w.t0_us && e.t <= w.t1_us;
  return {
    jobs, MiB_per_job: JOB_BYTES / MiB, fsyncs: w.fsync.n, seconds: Number(w.seconds.toFixed(4)), MiBps: r1(w.MiBps),
    fsync_us: { mean: r1(w.fsync.mean_us), p50: r1(w.fsync.p50_us), p90: r1(w.fsync.p90_us), p99: r1(w.fsync.p99_us), max: r1(w.fsync.max_us) },
    sync_file_events: ev.filter((e) => e.name === 'btrfs_sync_file' && within(e)).length,
    commits_during_workload: commits.filter(within).length,
    commits_incl_final_sync: commits.length,
    commit_times_ms_from_start: commits.map((e) => r1((e.t - w.t0_us) / 1000)),
    ordered: orderedLifetimes(ev, w.t0_us, w.t1_us),
    trace_overrun: overrun,
  };
}

// ---------------------------------------------------------------- main
async function main() {
  const T0 = Date.now();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  st.dir = mkdtempSync('/tmp/loopprof-');
  st.img = join(st.dir, 'backing.img');
  st.mnt = join(st.dir, 'mnt');
  mkdirSync(st.mnt);
  sh('truncate', ['-s', '2G', st.img]);
  st.loop = sh('losetup', ['--find', '--show', st.img]).trim();
  commands.setup = `truncate -s 2G ${st.img}; losetup --find --show ${st.img}`;
  if (backingOf(st.loop) !== st.img) throw new Error(`losetup gave ${st.loop}, not backed by ${st.img}`);
  await checkpoint();
  const raw = rawDevice();
  await checkpoint();
  tracefs();
  const btrfs = [];
  for (const j of JOBS) {
    btrfs.push(btrfsRun(j));
    await checkpoint();
  }
  const result = {
    host: { kernel: execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim(), cpus: (await import('node:os')).cpus().length, loadavg_at_start: load, backing_fs: sh('df', ['--output=fstype,source', '/tmp']).split('\n')[1].trim(), loop: st.loop },
    raw,
    btrfs,
    commands,
    runtime_s: (Date.now() - T0) / 1000,
  };
  printTable(result);
  console.log(JSON.stringify(result));
}

function printTable(r) {
  const p = (...a) => console.log(...a);
  p(`loop device ${r.host.loop} (dio=${r.raw.device.dio}, lbs=${r.raw.device.logical_block_size}, sched=${r.raw.device.scheduler}) on ${r.host.backing_fs}, kernel ${r.host.kernel}, load ${r.host.loadavg_at_start}`);
  p('\nraw device, O_DIRECT writes');
  p('  QD1 (per-request helper)  fresh mean/p50/p99      overwrite mean/p50/p99   dd fresh/overwrite mean');
  for (const [k, v] of Object.entries(r.raw.qd1)) p(`  ${k.padEnd(26)} ${`${v.fresh.mean_us}/${v.fresh.p50_us}/${v.fresh.p99_us}`.padEnd(23)} ${`${v.overwrite.mean_us}/${v.overwrite.p50_us}/${v.overwrite.p99_us}`.padEnd(24)} ${v.dd_fresh_mean_us}/${v.dd_overwrite_mean_us} us`);
  for (const [k, v] of Object.entries(r.raw.seq)) p(`  seq ${k.padEnd(3)} fresh ${v.fresh.MiBps} MiB/s (${v.fresh.per_request_us} us/req), overwrite ${v.overwrite.MiBps} MiB/s (${v.overwrite.per_request_us} us/req)`);
  p('  64K writers (overwrite): ' + Object.entries(r.raw.parallel).map(([n, v]) => `${n}→${v.MiBps} MiB/s`).join('  '));
  for (const pass of ['fresh', 'overwrite']) {
    const f = r.raw.flush[pass];
    p(`  flush (${pass}): after 4K write mean ${f.after_4k_write.mean_us} us (p50 ${f.after_4k_write.p50_us}), empty mean ${f.empty.mean_us} us (p50 ${f.empty.p50_us}), by difference ${f.by_difference_mean_us} us, drain ${f.drain_first_flush_us} us`);
  }
  p('\nbtrfs, 64 KiB pwrite+fsync per job');
  p('  jobs  MiB/s  fsync_mean  fsync_p50  OEs  add→finish p50/p90/max   add→remove p50/p90/max   commits(work/total)  overrun');
  for (const b of r.btrfs) {
    const o = b.ordered;
    p(`  ${String(b.jobs).padStart(4)} ${String(b.MiBps).padStart(6)} ${String(b.fsync_us.mean).padStart(11)} ${String(b.fsync_us.p50).padStart(10)} ${String(o.added).padStart(4)}  ${`${o.add_to_finish.p50_us}/${o.add_to_finish.p90_us}/${o.add_to_finish.max_us}`.padEnd(23)}  ${`${o.add_to_remove.p50_us}/${o.add_to_remove.p90_us}/${o.add_to_remove.max_us}`.padEnd(23)}  ${`${b.commits_during_workload}/${b.commits_incl_final_sync}`.padEnd(19)}  ${b.trace_overrun}`);
  }
  p(`\nruntime ${r.runtime_s} s\n`);
}

try {
  await main();
} catch (e) {
  console.error(`loop-profile: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  cleanup();
}
