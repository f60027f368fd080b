// More trees than a 64-bit set holds: 70 snapshots of a filesystem of 300
// files with quotas on, each snapshot then written into (a file empty until
// then gets data of its own) and committed. Our check finds nothing wrong;
// `qgroup show --raw` lists every subvolume, each snapshot holding alone the
// data written into it and the few tree blocks that write copied; a `quota
// rescan` counts what the commits counted. (The kernel's side: the same
// script in tests/kernel/many-snapshots.test.mjs; the script: many-snapshots.mjs.)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { manySnapshots, written } from './many-snapshots.mjs';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-many-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SNAPSHOTS = 70, NODE = 4096;
function run(text, name) {
  const file = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(file, text);
  const t0 = process.hrtime.bigint();
  const r = spawnSync(CLI, ['run', file, '--image', img], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return { img, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}
/** qgroup id -> { rfer, excl, path } from `qgroup show --raw`. */
function show(img) {
  const out = execFileSync(CLI, ['qgroup', 'show', '--raw', img], { encoding: 'utf8' });
  return Object.fromEntries(out.split('\n').filter((l) => /^\d+\/\d+ /.test(l)).map((l) => {
    const [id, rfer, excl, path] = l.trim().split(/\s+/);
    return [id, { rfer: Number(rfer), excl: Number(excl), path }];
  }));
}

describe(`${SNAPSHOTS} snapshots with quotas`, () => {
  test('check is clean; each snapshot holds alone its data and a few blocks; a rescan agrees', () => {
    const { img, ms } = run(manySnapshots(SNAPSHOTS), 'many');
    process.stdout.write(`# ${SNAPSHOTS} snapshots: ${ms.toFixed(0)} ms\n`);
    assert.match(execFileSync(CLI, ['check', img], { encoding: 'utf8' }), /: 0 errors found/);
    const q = show(img);
    assert.equal(Object.keys(q).length, SNAPSHOTS + 1, Object.keys(q).join(' '));
    assert.equal(q['0/5'].path, '<toplevel>');
    // the top level changed only its root directory (a name per snapshot): blocks alone, no data
    assert.ok(q['0/5'].excl > 0 && q['0/5'].excl % NODE === 0 && q['0/5'].excl <= 8 * NODE, JSON.stringify(q['0/5']));
    const data = 200704 + 32768; // f1 and f2, in whole sectors
    for (let i = 1; i <= SNAPSHOTS; i++) {
      const g = q[`0/${255 + i}`];
      assert.equal(g?.path, `s${i}`, `0/${255 + i}`);
      // its own data, and the blocks its write copied: the root and the path down to the file's leaf
      const blocks = (g.excl - written(i)) / NODE;
      assert.ok(Number.isInteger(blocks) && blocks >= 2 && blocks <= 8, `s${i}: exclusive ${g.excl} is ${written(i)} of data and ${blocks} blocks`);
      // it references everything the top level had when it was made, and its own data
      assert.ok(g.rfer >= data + written(i) && g.rfer - g.excl <= q['0/5'].rfer + (i + 1) * NODE, `s${i}: ${JSON.stringify(g)}`);
    }
    // the commits' accounting, as a full count of the trees gives it
    const { img: again } = run(manySnapshots(SNAPSHOTS, ['quota rescan']), 'rescanned');
    assert.deepEqual(show(again), q);
  });
});
