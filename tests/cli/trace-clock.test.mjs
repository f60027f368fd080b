// The kernel lock measurement's trace reading (tests/kernel/seed000-measure.mjs
// analyseTrace), without a kernel: lines as tracefs prints them with the mono
// clock (seconds.microseconds) and with x86-tsc (raw cycle counts, turned into
// nanoseconds by the rate fitted from the lock events' end_ns), other
// filesystems' lines ignored, holds paired by pid, block and kind.
import test from 'node:test';
import assert from 'node:assert/strict';
import { analyseTrace } from '../kernel/seed000-measure.mjs';

const FSID = '82210f79-75d7-43a4-8a5a-36a900f28dea';
const OTHER = '11111111-2222-3333-4444-555555555555';

/** A tracefs line: ts is "123.456789" (mono) or a cycle count (x86-tsc). */
function line(pid, ts, event, fields, fsid = FSID) {
  return `         python3-${pid}   [001] ..... ${ts}: ${event}: ${fsid}: ${fields}`;
}
const lock = (kind, block, endNs, diff, owner = 5, log = 0) =>
  [kind === 'write' ? 'btrfs_tree_lock' : 'btrfs_tree_read_lock',
    `block=${block} generation=7 start_ns=${endNs - diff} end_ns=${endNs} diff_ns=${diff} owner=${owner} is_log_tree=${log}`];
const unlock = (kind, block, owner = 5, log = 0) =>
  [kind === 'write' ? 'btrfs_tree_unlock' : 'btrfs_tree_read_unlock', `block=${block} generation=7 owner=${owner} is_log_tree=${log}`];

test('x86-tsc: holds to the nanosecond, from cycles at the rate the lock events fit', () => {
  // 2.6 cycles a ns; the lock events' end_ns and their lines' cycles agree
  const t0 = 1_000_000_000_000, n0 = 40_000_000_000_000;
  const at = (ns) => String(t0 + Math.round(ns * 2.6));
  const text = [
    line(10, at(0), ...lock('read', 100, n0, 90)),
    line(10, at(300), ...unlock('read', 100)), // held 300 ns
    line(11, at(1000), ...lock('write', 200, n0 + 1000, 80)),
    line(12, at(1500), ...lock('write', 300, n0 + 1500, 5000, 0, 1), OTHER), // another filesystem: not ours
    line(11, at(1750), ...unlock('write', 200)), // held 750 ns
    line(13, at(2000_000), ...lock('write', 400, n0 + 2000_000, 70, 18446744073709551610n, 1)),
    line(13, at(2002_500), ...unlock('write', 400, 18446744073709551610n, 1)), // a log block, held 2.5 us
  ].join('\n');
  const a = analyseTrace(text, FSID);
  assert.equal(a.clock, 'x86-tsc');
  assert.ok(Math.abs(a.ticksPerNs - 2.6) < 1e-6, `${a.ticksPerNs}`);
  assert.deepEqual([a.locks.hold.read.fs.n, a.locks.hold.read.fs.p50Ns], [1, 300]);
  assert.deepEqual([a.locks.hold.write.fs.n, a.locks.hold.write.fs.p50Ns], [1, 750]);
  assert.deepEqual([a.locks.hold.write.log.n, a.locks.hold.write.log.p50Ns], [1, 2500]);
  assert.deepEqual([a.locks.wait.read.fs.p50Ns, a.locks.wait.write.fs.p50Ns, a.locks.wait.write.log.p50Ns], [90, 80, 70]);
  assert.equal(a.unmatchedUnlocks, 0);
  assert.equal(a.unmatchedLocks, 0);
});

test('mono: line timestamps in microseconds, holds to the microsecond', () => {
  const text = [
    line(10, '40865.429766', ...lock('read', 100, 40865429766312, 2533)),
    line(10, '40865.429768', ...unlock('read', 100)),
    line(11, '40865.429900', ...lock('write', 200, 40865429900100, 100)),
    line(11, '40865.429901', ...unlock('write', 200)),
  ].join('\n');
  const a = analyseTrace(text, FSID);
  assert.equal(a.clock, 'mono');
  assert.equal(a.ticksPerNs, null);
  assert.equal(a.locks.hold.read.fs.p50Ns, 2000);
  assert.equal(a.locks.hold.write.fs.p50Ns, 1000);
  assert.ok(Math.abs(a.lockEventLagUs) < 1, `lag ${a.lockEventLagUs} us`); // the lock event fires once the lock is had
});

test('x86-tsc with too few lock events to fit the rate: an error that says so', () => {
  const text = line(10, '123456', ...unlock('read', 100));
  assert.throws(() => analyseTrace(text, FSID), /too few lock events to fit the TSC rate/);
});
