// A snapshot whose ROOT_ITEM has refs 0 but no ORPHAN item while a directory
// still names it (tests/cli/hostile-writers.mjs, case 531; issue 39): the
// kernel's cleaner drops only roots with an orphan item (btrfs_find_orphan_roots),
// so a kernel balance relocates and keeps it. btrfs-lab's balance must not drop
// it either: it refuses (naming the missing orphan item) or keeps the root item.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { CLI, run, scratchDir, skipReason, withMount } from './lib.mjs';
import { makeWriterCases } from '../cli/hostile-writers.mjs';

const skip = skipReason();

describe('refs 0 without an orphan item', { skip }, () => {
  test('the kernel keeps the root through a balance; ours keeps it too', async () => {
    const dir = scratchDir('refs0');
    const c = makeWriterCases(join(dir, 'images')).find((x) => x.name === '531-refs0-no-orphan');
    const kimg = join(dir, 'kernel.img');
    run('cp', ['--sparse=always', c.img, kimg]);
    await withMount(kimg, (mnt) => {
      run('btrfs', ['balance', 'start', '-m', '-d', mnt]);
      run('sync', []);
    });
    const rootItems = (img) => run(CLI, ['dump-tree', '-t', 'root', img]);
    assert.match(rootItems(kimg), /\(256 ROOT_ITEM /, 'the kernel kept subvolume 256');
    const out = join(dir, 'ours.img');
    const r = run('sh', ['-c', `"${CLI}" balance -m "${c.img}" -o "${out}" 2>&1; echo "exit $?"`]);
    if (/exit 0/.test(r)) assert.match(rootItems(out), /\(256 ROOT_ITEM /, 'ours kept subvolume 256');
    else {
      assert.match(r, /refs 0 but no orphan item|check finds/);
      assert.ok(!existsSync(out), 'nothing written');
    }
  });
});
