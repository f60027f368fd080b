// Seed 000's lock workload in the model: fsyncers (each loop: create a new
// file, write 4 KiB, set an xattr, fsync it) against creators (each loop:
// create an empty file) in one directory, as threads of one section, with
// tree locks by block (set tree_locks=path) on a device profile. From the
// trace: every tree lock's wait (lock_acquire's waitNs) and hold (its
// acquire to the same task's release of that block), split by mode and by
// tree, and the fsyncs' and the creators' creates' latencies — the figures
// tests/kernel/seed000-measure.mjs takes from the kernel's tracepoints.
import { execFileSync } from 'node:child_process';
import { statsNs } from '../tests/kernel/seed000-measure.mjs';
import { CLI as BUILT } from './lib.mjs';
const CLI = process.env.BTRFSLAB_CLI || BUILT;

const LOG_TREE = '18446744073709551610';

/** The scenario: F fsyncer threads and C creator threads, N loops each. */
export function lockScript({ fsyncers = 2, creators = 2, iterations = 500, device = 'loop', locks = 'path', seed = 1 } = {}) {
  const l = ['mkfs size=1G', `set device=${device}`, `set tree_locks=${locks}`, `set seed=${seed}`, 'mkdir /d', 'commit'];
  for (let f = 0; f < fsyncers; f++) {
    l.push(`thread F${f}`);
    for (let k = 0; k < iterations; k++) {
      const p = `/d/f${f}.${k}`;
      l.push(`create ${p}`, `write ${p} 0 4096 ${k + 1}`, `setxattr ${p} user.x v${k}`, `fsync ${p}`);
    }
    l.push('end');
  }
  for (let c = 0; c < creators; c++) {
    l.push(`thread C${c}`);
    for (let k = 0; k < iterations; k++) l.push(`create /d/c${c}.${k}`);
    l.push('end');
  }
  return l.join('\n') + '\n';
}

const treeOf = (t) => (t === '5' ? 'fs' : t === LOG_TREE ? 'log' : 'other');

/** The model's figures for the workload (its trace read here). */
export function measureModelLocks(opts = {}) {
  const text = lockScript(opts);
  const out = execFileSync(CLI, ['run', '-', '--trace', '-', '--max-ops', '10000000'], { input: text, encoding: 'utf8', maxBuffer: 1 << 30 });
  const names = new Map();
  const opStart = new Map();
  const lat = { fsync: [], create: [] };
  const wait = { read: { fs: [], log: [], other: [] }, write: { fs: [], log: [], other: [] } };
  const hold = { read: { fs: [], log: [], other: [] }, write: { fs: [], log: [], other: [] } };
  const held = new Map();
  // an fsyncer woken at the end of the other's log commit: the wake to its next CPU span (the kernel's sched_waking to
  // sched_switch, tests/kernel/seed000-measure.mjs's analyseWakes)
  const woken = new Map(), wake = [];
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line);
    if (e.kind === 'task_wake' && e.cause === 'log sync' && names.get(e.task) === 'F') woken.set(e.task, Number(e.atNs));
    else if (e.kind === 'task_cpu' && woken.has(e.task)) {
      wake.push(Number(e.atNs) - woken.get(e.task));
      woken.delete(e.task);
    }
    switch (e.kind) {
      case 'task_new': if (e.taskKind === 'thread') names.set(e.task, e.index < (opts.fsyncers ?? 2) ? 'F' : 'C'); break;
      case 'task_op': opStart.set(e.task, e); break;
      case 'task_op_end': {
        const name = names.get(e.task) ?? '';
        const d = Number(e.durNs);
        if (e.op === 'fsync' && name.startsWith('F')) lat.fsync.push(d);
        if (e.op === 'namespace' && name.startsWith('C')) lat.create.push(d);
        break;
      }
      case 'lock_acquire':
        // level -1: a delayed node's mutex (its inode number in bytenr), not
        // a tree block: the kernel's tree-lock tracepoints do not see it
        if (e.level < 0) break;
        wait[e.mode][treeOf(e.tree)].push(Number(e.waitNs));
        held.set(`${e.task}:${e.tree}:${e.bytenr}:${e.mode}`, Number(e.atNs));
        break;
      case 'lock_release': {
        if (e.level < 0) break;
        const k = `${e.task}:${e.tree}:${e.bytenr}:${e.mode}`;
        if (held.has(k)) {
          hold[e.mode][treeOf(e.tree)].push(Number(e.atNs) - held.get(k));
          held.delete(k);
        }
        break;
      }
      default:
    }
  }
  const per = (o) => Object.fromEntries(Object.entries(o).map(([m, t]) => [m, Object.fromEntries(Object.entries(t).map(([k, v]) => [k, statsNs(v)]))]));
  const us = (xs) => {
    const s = statsNs(xs);
    return { n: s.n, p10Us: s.p10Ns / 1e3, p50Us: s.p50Ns / 1e3, p90Us: s.p90Ns / 1e3, p99Us: s.p99Ns / 1e3 };
  };
  return { ...opts, fsync: us(lat.fsync), create: us(lat.create), locks: { wait: per(wait), hold: per(hold) }, fsyncWake: us(wake) };
}

/** Creators alone, C threads creating N files each, in one directory or one each (dirs 'one' | 'each'): their creates'
 * latencies, microseconds (tests/kernel/seed000-measure.mjs's dirs option, in the kernel). */
export function measureModelCreates({ creators = 2, iterations = 2000, dirs = 'one', device = 'loop', seed = 1 } = {}) {
  const l = ['mkfs size=1G', `set device=${device}`, 'set tree_locks=path', `set seed=${seed}`, 'mkdir /d'];
  for (let c = 0; c < creators; c++) if (dirs === 'each') l.push(`mkdir /d/C${c}`);
  l.push('commit');
  for (let c = 0; c < creators; c++) {
    l.push(`thread C${c}`);
    for (let k = 0; k < iterations; k++) l.push(`create /d${dirs === 'each' ? `/C${c}` : ''}/c${c}_${k}`);
    l.push('end');
  }
  const m = JSON.parse(execFileSync(CLI, ['run', '-', '--metrics', '-', '--max-ops', '10000000'], { input: l.join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 28 }));
  const ns = m.timed.ops.namespace;
  return { n: ns.n, p50Us: ns.p50Ns / 1e3, p99Us: ns.p99Ns / 1e3 };
}
