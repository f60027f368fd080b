// Numbered scenario cases, kept as btrfs-progs keeps its tests: each
// directory tests/scenarios/NNN-name/ holds scenario.txt and what running it
// must give, byte for byte:
//   dump-tree.txt     the image's trees (`btrfslab dump-tree`, which equals
//                     btrfs-progs' output; the kernel layer diffs the two)
//   ls.txt            `btrfslab ls -R -l` of the image
//   ls-replay.txt     when the image keeps a log: `ls --replay -R -l`, what
//                     mounting it would show
// and every image (and its replay) passes `check --check-data-csum`.
// A new case is a new directory. BTRFSLAB_UPDATE_SCENARIOS=1 writes the
// expected files from the current core (review the diff before committing).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const CASES = fileURLToPath(new URL('../scenarios/', import.meta.url));
const UPDATE = process.env.BTRFSLAB_UPDATE_SCENARIOS === '1';
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-scenarios-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.equal(r.status, 0, `btrfslab ${args.join(' ')} exited ${r.status}:\n${r.stderr}`);
  return r.stdout;
}

/** Compares out with the case's expected file (or writes it when updating). */
function expectFile(caseDir, name, out) {
  const file = join(caseDir, name);
  if (UPDATE) {
    writeFileSync(file, out);
    return;
  }
  assert.ok(existsSync(file), `${file} is missing: run with BTRFSLAB_UPDATE_SCENARIOS=1 to write it`);
  const want = readFileSync(file, 'utf8');
  if (out === want) return;
  const a = want.split('\n'), b = out.split('\n');
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  assert.fail(`${file}: differs first at line ${i + 1}\n  expected: ${a[i] ?? '(end)'}\n  got:      ${b[i] ?? '(end)'}`);
}

const cases = readdirSync(CASES).filter((d) => /^\d{3}-[a-z0-9-]+$/.test(d)).sort();

describe('numbered scenario cases (tests/scenarios)', () => {
  test('the cases are numbered once each and each has a scenario', () => {
    assert.ok(cases.length >= 8, `${cases.length} cases`);
    const nums = cases.map((c) => c.slice(0, 3));
    assert.equal(new Set(nums).size, nums.length, `a number used twice: ${nums.join(' ')}`);
    for (const c of cases) assert.ok(existsSync(join(CASES, c, 'scenario.txt')), `${c}/scenario.txt`);
  });

  for (const c of cases) {
    test(c, () => {
      const caseDir = join(CASES, c);
      const img = join(dir, `${c}.img`);
      cli('run', join(caseDir, 'scenario.txt'), '--image', img, '--seed', '1', '--time', '1700000000');
      const dump = cli('dump-tree', img);
      expectFile(caseDir, 'dump-tree.txt', dump);
      expectFile(caseDir, 'ls.txt', cli('ls', '-R', '-l', img));
      cli('check', '--check-data-csum', img);
      const hasLog = /^log root tree$/m.test(dump);
      const replayFile = join(caseDir, 'ls-replay.txt');
      if (!hasLog) {
        assert.ok(UPDATE || !existsSync(replayFile), `${replayFile}: the image keeps no log`);
        return;
      }
      expectFile(caseDir, 'ls-replay.txt', cli('ls', '--replay', '-R', '-l', img));
      const out = join(dir, `${c}.replayed.img`);
      cli('replay', img, '-o', out);
      cli('check', '--check-data-csum', out);
      assert.equal(cli('ls', '-R', '-l', out), readFileSync(replayFile, 'utf8'), `${c}: replay -o gives what ls --replay showed`);
    });
  }
});
