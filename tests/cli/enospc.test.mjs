// ENOSPC at write time (the kernel's btrfs_check_data_free_space): a write
// that does not fit the data space, after new data chunks took the device's
// unallocated space and a flush and commit freed what they could, stops
// short, naming its line and the bytes written; the run stops there as on
// any failed line, and `run --image` still writes the image, which holds
// what was written and passes check. (Against the kernel's bytes:
// tests/kernel/space.test.mjs.)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'btrfslab-enospc-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function run(lines, name) {
  const script = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(script, lines.join('\n') + '\n');
  return { ...spawnSync(CLI, ['run', script, '--image', img], { encoding: 'utf8', timeout: 120000 }), img };
}
const size = (img, p) => spawnSync(CLI, ['cat', img, p], { maxBuffer: 1 << 28 }).stdout.length;
const FILES = ['mkfs size=128M', 'create /a', 'write /a 0 64M 1', 'create /b', 'write /b 0 64M 2', 'create /c', 'write /c 0 64M 3'];

describe('ENOSPC where the kernel gives it', () => {
  test('the second 64 MiB file on 128 MiB stops short; the image is kept and clean', () => {
    const r = run(FILES, 'full');
    assert.equal(r.status, 1, r.stderr);
    // the kernel on the same filesystem: 49217536 (tests/kernel/space.test.mjs)
    assert.match(r.stderr, /full\.txt:5: write: ENOSPC: \/b: write of 67108864 bytes at 0 finds no room in the data space \(116326400 bytes in its chunks, 116326400 used or reserved, no unallocated device space for another\): 49217536 bytes written\n/);
    assert.doesNotMatch(r.stderr, /no image/);
    assert.match(execFileSync(CLI, ['check', r.img], { encoding: 'utf8' }), /0 errors found/);
    assert.equal(size(r.img, '/a'), 64 << 20);
    assert.equal(size(r.img, '/b'), 49217536);
  });

  test('rewriting dirty pages needs no room; a deleted file\'s space comes back through the commit', () => {
    // /a written twice before a commit: the second write's pages are dirty already
    const again = run(['mkfs size=128M', 'create /a', 'write /a 0 100M 1', 'write /a 0 100M 2', 'commit'], 'again');
    assert.equal(again.status, 0, again.stderr);
    // 100M committed, deleted, 100M more: the freed extents are pinned until a commit (the reclaim's) frees them
    const del = run(['mkfs size=128M', 'create /a', 'write /a 0 100M 1', 'commit', 'unlink /a', 'create /b', 'write /b 0 100M 2', 'commit'], 'del');
    assert.equal(del.status, 0, del.stderr);
    assert.match(execFileSync(CLI, ['check', del.img], { encoding: 'utf8' }), /0 errors found/);
    assert.equal(size(del.img, '/b'), 100 << 20);
  });

  test('with quotas on, the data space is reserved first', () => {
    const r = run([...FILES.slice(0, 1), 'quota enable', ...FILES.slice(1)], 'quota');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /quota\.txt:6: write: ENOSPC: \/b: .*: \d+ bytes written\n/);
    assert.match(execFileSync(CLI, ['check', r.img], { encoding: 'utf8' }), /0 errors found/);
  });
});
