// The numbered scenario cases (tests/scenarios/NNN-name) against the kernel
// and btrfs-progs: the expected dump-tree.txt equals what
// `btrfs inspect-internal dump-tree` prints for the image, `btrfs check
// --check-data-csum` passes, and the kernel's mount (which replays a pending
// log) shows what ls.txt / ls-replay.txt say: the same paths, types, modes,
// link counts and sizes.
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';

import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { btrfsCheck, CLI, dumpTreeAll, progsDumpTree, run, scratchDir, skipReason, withMount } from './lib.mjs';

const CASES = fileURLToPath(new URL('../scenarios/', import.meta.url));
const skip = skipReason();
const dir = scratchDir('kernel-scenarios');

/** "mode nlink size path" per entry of an `ls -R -l` listing (owners and link targets aside). */
function fromLs(text) {
  return text.split('\n').filter(Boolean).map((l) => {
    const m = /^(\S+) (\d+) \d+ \d+ (\d+) (.*?)(?: -> .*)?$/.exec(l);
    assert.ok(m, `an ls -l line: ${l}`);
    return `${m[1]} ${m[2]} ${m[1][0] === 'd' ? '-' : m[3]} ${m[4]}`;
  }).sort();
}

const TYPE = { 0o040000: 'd', 0o100000: '-', 0o120000: 'l' };
function perms(mode) {
  const r = 'rwxrwxrwx';
  let s = TYPE[mode & 0o170000] ?? '?';
  for (let i = 0; i < 9; i++) s += mode & (1 << (8 - i)) ? r[i] : '-';
  return s;
}

/** The same for the kernel's view of a mounted tree. */
function fromMount(mnt) {
  const out = [];
  const walk = (rel) => {
    for (const name of readdirSync(join(mnt, rel)).sort()) {
      const p = `${rel}/${name}`;
      const st = lstatSync(join(mnt, p));
      out.push(`${perms(st.mode)} ${st.nlink} ${st.isDirectory() ? '-' : st.size} ${p}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk('');
  return out.sort();
}

const cases = readdirSync(CASES).filter((d) => /^\d{3}-[a-z0-9-]+$/.test(d)).sort();

describe('numbered scenario cases: btrfs-progs and the kernel agree', { skip }, () => {
  for (const c of cases) {
    test(c, async () => {
      const caseDir = join(CASES, c);
      const img = join(dir, `${c}.img`);
      run(CLI, ['run', join(caseDir, 'scenario.txt'), '--image', img, '--seed', '1', '--time', '1700000000']);
      assert.deepEqual(dumpTreeAll(readFileSync(join(caseDir, 'dump-tree.txt'), 'utf8')), dumpTreeAll(progsDumpTree(img)));
      const chk = btrfsCheck(img, ['--check-data-csum']);
      assert.ok(chk.ok, chk.output);
      const want = existsSync(join(caseDir, 'ls-replay.txt')) ? 'ls-replay.txt' : 'ls.txt';
      const expected = fromLs(readFileSync(join(caseDir, want), 'utf8'));
      await withMount(img, (mnt) => assert.deepEqual(fromMount(mnt), expected, `${c}: the kernel's view vs ${want}`));
      const after = btrfsCheck(img, ['--check-data-csum']);
      assert.ok(after.ok, `after the kernel's mount:\n${after.output}`);
    });
  }
});
