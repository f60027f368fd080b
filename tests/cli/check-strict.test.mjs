// `btrfslab check` finds at least what `btrfs check` finds (issue 39 item 4):
// for every crafted image of check-strict.mjs, btrfs check (btrfs-progs, run on
// the image file: no root, no device needed) exits non-zero, and ours exits 1
// with an ERROR line naming the object; where btrfs check lets an image
// through, ours is stricter and the case says why. The clean images the cases
// are made from pass both. Names from an image are printed escaped, as ls
// prints them (item 8).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { CLI, makeReplayCases, makeStrictCases } from './check-strict.mjs';

const dir = mkdtempSync(join(tmpdir(), 'btrfslab-check-strict-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const cases = makeStrictCases(dir);
const progsInstalled = !spawnSync('btrfs', ['--version']).error;

const ours = (file) => {
  const r = spawnSync(CLI, ['check', file], { encoding: 'utf8', timeout: 30000 });
  return { ...r, out: `${r.stdout}${r.stderr}` };
};

describe('check against btrfs check, class by class', () => {
  for (const c of cases) {
    test(`${c.name} (${c.cls})`, (t) => {
      const r = ours(c.file);
      assert.equal(r.signal, null, `${c.name}: killed by ${r.signal}`);
      assert.equal(r.status, c.cls === 'clean' ? 0 : 1, `${c.name}: exit ${r.status}\n${r.out}`);
      assert.match(r.out, c.ours, `${c.name} names the problem:\n${r.out}`);
      if (!progsInstalled) return t.skip('btrfs-progs is not installed');
      const p = spawnSync('btrfs', ['check', '--readonly', c.file], { encoding: 'utf8', timeout: 60000 });
      if (c.progs === 'fails') assert.notEqual(p.status, 0, `btrfs check passes ${c.name}:\n${p.stdout}${p.stderr}`);
      else assert.equal(p.status, 0, `${c.name}: btrfs check now fails it (${c.why ?? 'clean'}); make it a 'fails' case:\n${p.stdout}${p.stderr}`);
    });
  }
});

describe('what each class gives', () => {
  test('every class of issue 39 item 4 has a case that btrfs check rejects', () => {
    const classes = ['root-ref-self', 'root-ref-loop', 'refs-0-no-orphan', 'root-generation-0', 'backref-wrong-dir', 'data-ref-root', 'bg-chunk-type',
      'total-bytes', 'generation', 'bytes-used', 'dev-extent', 'quota-status', 'log-root', 'dir-extents', 'symlink', 'dir-entries'];
    for (const cls of classes) assert.ok(cases.some((c) => c.cls === cls), `a case of ${cls}`);
    for (const cls of classes.filter((x) => x !== 'quota-status')) {
      assert.ok(cases.some((c) => c.cls === cls && c.progs === 'fails'), `${cls}: a case btrfs check rejects too`);
    }
  });

  test('a name from the image is printed escaped, as ls escapes names in its messages (one function: btrfs_name_escape)', () => {
    const c = cases.find((x) => x.cls === 'escaped-name');
    const r = ours(c.file);
    assert.doesNotMatch(r.out, /[\x00-\x08\x0b-\x1f\x7f-\xff]/, 'no raw control byte in check\'s output');
    assert.ok(r.out.includes("name '\\x1b[2J\\x1b]0;owned\\x07\\x0d' in directory"), `check says:\n${r.out}`);
  });

  test('a loop of subvolumes is named once, with its members', () => {
    const r = ours(cases.find((x) => x.name === '03-root-ref-loop').file);
    assert.equal(r.out.match(/ROOT_BACKREF loop/g).length, 1, r.out);
  });
});

describe('after replay: a log that would leave those shapes is refused', () => {
  for (const c of makeReplayCases(join(dir, 'logs'))) {
    test(c.name, () => {
      const out = `${c.file}.replayed`;
      const r = spawnSync(CLI, ['replay', c.file, '-o', out], { encoding: 'utf8', timeout: 30000 });
      assert.equal(r.status, 1, `replay ${c.name}: exit ${r.status}\n${r.stderr}`);
      assert.match(r.stderr, c.replay);
      assert.ok(!existsSync(out), 'no image written');
      // the committed state under the log is clean
      assert.equal(ours(c.file).status, 0, ours(c.file).out);
    });
  }
});
