// Reloc trees on disk (TREE_RELOC root items: what a kernel balance cut
// short leaves; tests/kernel/reloc-left.test.mjs makes real ones) crafted
// hostile: pointing at no chunk, at data, at a block of another level, with a
// level past the most a tree has, copying a subvolume that does not exist.
// Every command ends with a message, never a signal: the files stay readable
// (they are the subvolumes'), check names the reloc tree, dump-tree names it
// when it cannot print it, and balance refuses before writing anything.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { Image, KEY_TYPE } from './craft.mjs';
import { CLI } from './hostile-images.mjs';

const dir = mkdtempSync(join(tmpdir(), 'btrfslab-reloc-left-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const TREE_RELOC = 0xfffffffffffffff8n; // -8
const BYTENR = 176, LEVEL = 238; // of a root item

function cli(args, encoding = 'utf8') {
  const r = spawnSync(CLI, args, { encoding, timeout: 20000, maxBuffer: 64 << 20 });
  assert.equal(r.error?.code, undefined, `${args.join(' ')}: ${r.error?.message}`);
  assert.equal(r.signal, null, `${args.join(' ')}: killed by ${r.signal}\n${r.stderr}`);
  return r;
}

const script = join(dir, 'base.txt'), base = join(dir, 'base.img');
writeFileSync(script, 'mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f\nwrite /d/f 0 5000 1\nsnapshot / /snap\n');
const made = cli(['run', script, '--image', base, '--seed', '1', '--time', '1700000000']);
assert.equal(made.status, 0, made.stderr);

/** base with one TREE_RELOC root item: a copy of the fs tree's root item, its key offset and fields as given. */
function craft(name, { offset = 5n, bytenr, level }) {
  const im = new Image(readFileSync(base));
  const fsItem = im.get('root', { objectid: 5n, type: KEY_TYPE.ROOT_ITEM, offset: 0n });
  const data = Buffer.from(fsItem.data);
  if (bytenr !== undefined) data.writeBigUInt64LE(bytenr, BYTENR);
  if (level !== undefined) data[LEVEL] = level;
  const last = im.findAll('root', () => true).at(-1).key; // the TREE_RELOC key sorts after it, in its leaf
  im.insertNear('root', last, [{ key: { objectid: TREE_RELOC, type: KEY_TYPE.ROOT_ITEM, offset }, data }]);
  const img = join(dir, `${name}.img`);
  im.save(img);
  return { img, fsRoot: fsItem.data.readBigUInt64LE(BYTENR), data: im };
}

const fileData = (() => {
  const im = new Image(readFileSync(base));
  const ino = im.lookup('/d/f');
  return im.find('fs', (k) => k.objectid === ino && k.type === KEY_TYPE.EXTENT_DATA).data.readBigUInt64LE(21);
})();

const fsRootOf = () => new Image(readFileSync(base)).rootItem('fs').bytenr;
const cases = [
  { name: 'no-chunk', item: { bytenr: 1n << 40n }, why: /no chunk|not mapped|outside|logical/i },
  { name: 'data-block', item: { bytenr: fileData }, why: /checksum|tree block|bytenr|start/i },
  { name: 'wrong-level', item: { bytenr: fsRootOf(), level: 1 }, why: /level 0, expect 1/ },
  // the tree checker refuses the root tree's leaf itself: no command gets further
  { name: 'level-200', item: { level: 200 }, why: /invalid root level 200, expect < 8/, refused: true },
  { name: 'no-subvolume', item: { offset: 999n }, why: /no subvolume 999/, id: 999 },
];

describe('crafted reloc trees', () => {
  for (const c of cases) {
    test(c.name, () => {
      const { img } = craft(c.name, c.item);
      const id = c.id ?? 'FS_TREE|5';
      if (c.refused) {
        for (const args of [['ls', img], ['check', img], ['dump-tree', img], ['balance', '-m', img, '-o', join(dir, 'never.img')]]) {
          const r = cli(args);
          assert.equal(r.status, 1, args.join(' '));
          assert.match(r.stderr, c.why);
        }
        assert.ok(!existsSync(join(dir, 'never.img')));
        return;
      }
      // the files are the subvolumes': readable
      const ls = cli(['ls', '-R', img]);
      assert.equal(ls.status, 0, ls.stderr);
      assert.match(ls.stdout, /^\/?d\/f$|^d\/f$|\bf$/m);
      assert.equal(cli(['cat', img, '/d/f'], 'buffer').stdout.length, 5000);
      const x = join(dir, `x-${c.name}`);
      assert.equal(cli(['extract', img, x]).status, 0);
      assert.ok(existsSync(join(x, 'd', 'f')));
      // check names the reloc tree and what is wrong
      const ck = cli(['check', img]);
      assert.equal(ck.status, 1, `${ck.stdout}${ck.stderr}`);
      assert.match(ck.stdout, new RegExp(`reloc tree \\(TREE_RELOC ROOT_ITEM (${c.id ?? 5})\\)`));
      assert.match(ck.stdout, c.why);
      assert.doesNotMatch(ck.stdout, /outside the range its parent gives/, 'the crafted item is where its key belongs');
      // dump-tree prints it, or says why it cannot
      const dt = cli(['dump-tree', img]);
      assert.ok(dt.status === 0 || dt.status === 1, dt.stderr);
      if (dt.status === 1) assert.match(dt.stderr, new RegExp(`reloc tree \\(TREE_RELOC ROOT_ITEM (${id})\\)`));
      // balance refuses, naming the reloc tree, and writes nothing
      const out = join(dir, `${c.name}-out.img`);
      const b = cli(['balance', '-m', img, '-o', out]);
      assert.equal(b.status, 1);
      assert.match(b.stderr, new RegExp(`balance: the image holds 1 reloc tree \\(TREE_RELOC ROOT_ITEM ${c.id ?? 5}\\)`));
      assert.ok(!existsSync(out));
    });
  }
});
