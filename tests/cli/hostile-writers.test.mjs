// The writers against crafted images (hostile-writers.mjs, issue 39): balance
// and replay refuse, naming what is wrong, an image whose layout every later
// step relies on is broken (a root block named twice, a DATA chunk in the
// sys_chunk_array, overlapping DUP stripes, chunks past total_bytes) or whose
// log would leave a file past 2^63 or data without checksums; they write
// nothing then. check opens the same images and reports each problem. A
// deleted snapshot with no orphan item is never dropped. Whatever exits 0
// leaves an image our check (and btrfs-progs' check, when installed) passes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { CLI, makeWriterCases } from './hostile-writers.mjs';

const dir = mkdtempSync(join(tmpdir(), 'btrfslab-hostile-writers-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const cases = makeWriterCases(join(dir, 'images'));
const byName = Object.fromEntries(cases.map((c) => [c.name, c]));
const progs = spawnSync('btrfs', ['--version']).status === 0;

function cli(...args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', timeout: 60000, maxBuffer: 1 << 26 });
  assert.equal(r.error, undefined, `${args.join(' ')}: ${r.error?.message}`);
  assert.equal(r.signal, null, `${args.join(' ')}: killed by ${r.signal}\n${r.stderr}`);
  return r;
}
let nOut = 0;
/** Runs a writer on img; an exit 0 must leave an image both checks pass, an exit 1 nothing at all. */
function write(cmd, img) {
  const out = join(dir, `out-${nOut++}.img`);
  const r = cli(...cmd, img, '-o', out);
  if (r.status === 0) {
    const ours = cli('check', out);
    assert.equal(ours.status, 0, `${cmd.join(' ')} exited 0 but its image fails check:\n${ours.stdout}`);
    if (progs) {
      const theirs = spawnSync('btrfs', ['check', '--readonly', out], { encoding: 'utf8' });
      assert.equal(theirs.status, 0, `${cmd.join(' ')} exited 0 but btrfs check fails its image:\n${theirs.stdout}${theirs.stderr}`);
    }
  } else {
    assert.equal(r.status, 1, `${cmd.join(' ')}: exit ${r.status}\n${r.stderr}`);
    assert.ok(!existsSync(out), `${cmd.join(' ')} failed but wrote ${out}`);
  }
  return r;
}

describe('writers refuse hostile images', () => {
  test('the uncrafted images balance and replay, check-clean', () => {
    for (const [img, cmd] of [['snap', ['balance', '-m']], ['snap', ['balance', '-d']], ['logged', ['replay']], ['logged', ['balance']]]) {
      const r = write(cmd, join(dir, 'images', `${img}.img`));
      assert.equal(r.status, 0, `${cmd.join(' ')} ${img}: ${r.stderr}`);
    }
  });

  for (const c of cases.filter((x) => x.cmd)) {
    test(`${c.name}: ${c.cmd.join(' ')} refuses, naming it; check reports it`, () => {
      const cmds = c.cmd[0] === 'balance' ? [['balance', '-m'], ['balance', '-d'], ['balance', '-s']] : [c.cmd];
      for (const cmd of cmds) {
        const r = write(cmd, c.img);
        assert.equal(r.status, 1, `${cmd.join(' ')} ${c.name} exited ${r.status}:\n${r.stdout}`);
        assert.match(r.stderr, c.why, `${cmd.join(' ')}: the refusal names the problem`);
        assert.match(r.stderr, /refusing|nothing written/);
      }
      if (c.cmd[0] === 'balance') {
        // check opens it and reports it (its own line), rather than refusing to open it
        const k = cli('check', c.img);
        assert.equal(k.status, 1, k.stdout + k.stderr);
        assert.match(k.stdout, new RegExp(`ERROR: .*(${c.why.source})`, 'i'));
        // and the readers still read it
        assert.equal(cli('ls', c.img, '/d').status, 0);
      }
    });
  }

  test('531: a snapshot with refs 0 but no orphan item is never dropped (the kernel drops only orphans)', () => {
    const c = byName['531-refs0-no-orphan'];
    for (const cmd of [['balance', '-m'], ['balance', '-d'], ['balance']]) {
      const r = write(cmd, c.img);
      if (r.status === 1) assert.match(r.stderr, /refs 0 but no orphan[_ ]item/i);
      else assert.match(cli('dump-tree', '-t', 'root', join(dir, `out-${nOut - 1}.img`)).stdout, /\(256 ROOT_ITEM /, 'the snapshot kept');
    }
    // its files are there to read
    assert.match(cli('ls', c.img, '/s/d').stdout, /f_1\b/);
  });
});
