// check-strict.mjs — crafted images (valid checksums, tests/cli/craft.mjs)
// that `btrfs check` (btrfs-progs) rejects, one or more per class of issue 39
// item 4: the root tree's references between subvolumes, root items, data
// backrefs, the chunk / block group / device accounting, the quota tree, the
// log root, and inode shapes a log replay could leave. Each case names the
// message our `btrfslab check` must give. Used by check-strict.test.mjs, and
// by hand: node tests/cli/check-strict.mjs OUTDIR
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Image, KEY_TYPE, ROOT_DIR, SUPER_OFFSET, nameHash, toBytes } from './craft.mjs';
import { CLI, runScenario } from './make-hostile.mjs';

export { CLI };

const T = {
  ORPHAN_ITEM: 48, EXTENT_ITEM: 168, EXTENT_DATA_REF: 178, BLOCK_GROUP_ITEM: 192, DEV_EXTENT: 204, DEV_ITEM: 216,
  QGROUP_STATUS: 240, ROOT_BACKREF: 144, ROOT_REF: 156,
};
const ORPHAN_OBJECTID = (1n << 64n) - 5n;
// ROOT_ITEM offsets (after its 160-byte inode item)
const RI = { generation: 160, refs: 216, level: 238, generationV2: 239 };
// superblock field offsets
const SB = { logRoot: 96, totalBytes: 112, bytesUsed: 120, logRootLevel: 200, devItem: 201 };

/** A ROOT_REF / ROOT_BACKREF payload: dirid, sequence, name. */
function rootRef(dirid, sequence, name) {
  const n = toBytes(name), b = Buffer.alloc(18 + n.length);
  b.writeBigUInt64LE(BigInt(dirid), 0);
  b.writeBigUInt64LE(BigInt(sequence), 8);
  b.writeUInt16LE(n.length, 16);
  n.copy(b, 18);
  return b;
}
const is = (objectid, type, offset) => (k) => k.objectid === BigInt(objectid) && k.type === type && (offset === undefined || k.offset === BigInt(offset));

/** Replaces the one root tree item of key by items (each put in the leaf where its key belongs). */
function replaceRoot(im, key, items) {
  im.replace('root', key, []);
  for (const it of items) im.insertNear('root', im.nearKey('root', it.key), [it]);
}
function editRootItem(im, id, fn) {
  im.edit('root', is(id, KEY_TYPE.ROOT_ITEM), (items, i) => fn(items[i].data), `ROOT_ITEM ${id}`);
}
function setSuper(im, fn) {
  fn(im.buf, SUPER_OFFSET);
  im.sealSuper();
}

// subvolume 256 at /sv (dir 256 of tree 5), its snapshot 257 at /d/snap (dir 257 of tree 5)
const SUBVOLS = `mkfs nodesize=4K size=64M
mkdir /d
create /d/f
write /d/f 0 5000 1
subvol create /sv
create /sv/g
write /sv/g 0 8000 2
snapshot /sv /d/snap
`;
const QUOTA = 'mkfs nodesize=4K size=64M\nquota enable\ncreate /f\nwrite /f 0 5000 1\nsubvol create /sv\n';
const LOGGED = 'mkfs nodesize=4K size=64M\ncreate /f\nwrite /f 0 100 1\ncommit\nwrite /f 0 200 2\nfsync /f\ncrash\n';
// a snapshot holding a copy of its source's entry for a nested subvolume, deleted since (no ROOT_REF from the
// snapshot: an empty directory, not an error), and a deleted subvolume
const NESTED = 'mkfs nodesize=4K size=64M\nsubvol create /a\nsubvol create /a/inner\ncreate /a/inner/f\nwrite /a/inner/f 0 3000 1\nsnapshot /a /snap\nsubvol create /b\nsubvol delete /b nosync\nsubvol delete /a/inner nosync\n';
const FILES = 'mkfs nodesize=16K size=64M\nmkdir /d\ncreate /d/e\ncreate /f\nwrite /f 0 5000 1\ncreate /g\nwrite /g 0 100 2\n';

// Cases btrfs check (btrfs-progs 6.2) lets through with exit status 0, where ours is stricter, and why.
const PROGS_PASSES = {
  '02-root-backref-self-only': 'a second, self-naming ROOT_BACKREF beside the right one: progs matches refs pairwise and finds the right pair',
  '07-fs-root-item-generation-0': 'progs does not compare the top level\'s root item generation with its block',
  '13-chunk-type-system-bg-data': 'progs prints the chunk / block group type mismatch but exits 0',
  '22-quota-no-status': 'progs reads no status and skips the quota check',
  '04c-second-backref': 'progs does not look for the directory entry a second ROOT_BACKREF names',
  '23b-log-tree-is-fs-root': 'progs does not compare a subvolume\'s log tree with the committed trees',
  '26b-symlink-with-nul': 'progs does not look inside a symlink\'s target',
};

/**
 * Writes every case into outdir. Returns [{name, cls, file, ours}]: cls the class of issue 39 it stands
 * for, ours a RegExp our check's output must match (an ERROR line naming the object).
 */
export function makeStrictCases(outdir, { cli = CLI } = {}) {
  outdir = resolve(outdir);
  mkdirSync(outdir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'btrfslab-check-strict-'));
  const bases = new Map();
  const from = (name, script) => {
    if (!bases.has(name)) bases.set(name, Image.open(runScenario(cli, work, name, script)));
    return bases.get(name).copy();
  };
  const cases = [];
  const add = (name, cls, ours, base, edit) => {
    const im = base();
    edit(im);
    const file = join(outdir, `${name}.img`);
    im.save(file);
    cases.push({ name, cls, file, ours, progs: PROGS_PASSES[name] ? 'passes' : 'fails', why: PROGS_PASSES[name] });
  };
  const subvols = () => from('subvols', SUBVOLS);
  const quota = () => from('quota', QUOTA);
  const logged = () => from('logged', LOGGED);
  const files = () => from('files', FILES);
  const d = (im) => im.lookup('/d');

  try {
    // --- references between subvolumes (ROOT_REF in the parent's id, ROOT_BACKREF in the child's) ---
    add('01-root-ref-self', 'root-ref-self', /ERROR: root 256 ROOT_REF names itself as its own parent/, subvols, (im) => {
      replaceRoot(im, { objectid: 256n, type: T.ROOT_BACKREF, offset: 5n }, [{ key: { objectid: 256n, type: T.ROOT_BACKREF, offset: 256n }, data: rootRef(256, 3, 'sv') }]);
      replaceRoot(im, { objectid: 5n, type: T.ROOT_REF, offset: 256n }, [{ key: { objectid: 256n, type: T.ROOT_REF, offset: 256n }, data: rootRef(256, 3, 'sv') }]);
    });
    add('02-root-backref-self-only', 'root-ref-self', /ERROR: root 257 ROOT_BACKREF names itself as its own parent/, subvols, (im) => {
      im.insertNear('root', { objectid: 257n, type: T.ROOT_BACKREF, offset: 5n }, [{ key: { objectid: 257n, type: T.ROOT_BACKREF, offset: 257n }, data: rootRef(256, 9, 'me') }]);
    });
    add('03-root-ref-loop', 'root-ref-loop', /ERROR: root 256 ROOT_BACKREF loop: 256 -> 257 -> 256/, subvols, (im) => {
      // 256 in 257 and 257 in 256, neither in the top level any more
      replaceRoot(im, { objectid: 256n, type: T.ROOT_BACKREF, offset: 5n }, [{ key: { objectid: 256n, type: T.ROOT_BACKREF, offset: 257n }, data: rootRef(256, 3, 'sv') }]);
      replaceRoot(im, { objectid: 257n, type: T.ROOT_BACKREF, offset: 5n }, [{ key: { objectid: 257n, type: T.ROOT_BACKREF, offset: 256n }, data: rootRef(256, 4, 'snap') }]);
      replaceRoot(im, { objectid: 5n, type: T.ROOT_REF, offset: 256n }, [{ key: { objectid: 257n, type: T.ROOT_REF, offset: 256n }, data: rootRef(256, 3, 'sv') }]);
      replaceRoot(im, { objectid: 5n, type: T.ROOT_REF, offset: 257n }, [{ key: { objectid: 256n, type: T.ROOT_REF, offset: 257n }, data: rootRef(256, 4, 'snap') }]);
    });
    add('04-root-ref-no-backref', 'root-ref-loop', /ERROR: root 5 ROOT_REF to 257 .*has no matching ROOT_BACKREF/, subvols, (im) => {
      replaceRoot(im, { objectid: 257n, type: T.ROOT_BACKREF, offset: 5n }, []);
    });
    add('05-refs-0-no-orphan', 'refs-0-no-orphan', /ERROR: root 257 has refs 0 but no ORPHAN_ITEM/, subvols, (im) => editRootItem(im, 257n, (b) => b.writeUInt32LE(0, RI.refs)));
    add('06-root-item-generation-0', 'root-generation-0', /ERROR: root 256 ROOT_ITEM generation 0/, subvols, (im) => editRootItem(im, 256n, (b) => {
      b.writeBigUInt64LE(0n, RI.generation);
      b.writeBigUInt64LE(0n, RI.generationV2);
    }));
    add('07-fs-root-item-generation-0', 'root-generation-0', /ERROR: root 5 ROOT_ITEM generation 0/, subvols, (im) => editRootItem(im, 5n, (b) => {
      b.writeBigUInt64LE(0n, RI.generation);
      b.writeBigUInt64LE(0n, RI.generationV2);
    }));
    add('08-backref-wrong-dir', 'backref-wrong-dir', /ERROR: root 257 ROOT_BACKREF from 5 names 'snap' in directory 256, which has no such entry/, subvols, (im) => {
      replaceRoot(im, { objectid: 257n, type: T.ROOT_BACKREF, offset: 5n }, [{ key: { objectid: 257n, type: T.ROOT_BACKREF, offset: 5n }, data: rootRef(256, 4, 'snap') }]);
      replaceRoot(im, { objectid: 5n, type: T.ROOT_REF, offset: 257n }, [{ key: { objectid: 5n, type: T.ROOT_REF, offset: 257n }, data: rootRef(256, 4, 'snap') }]);
    });
    add('09-backref-wrong-name', 'backref-wrong-dir', /ERROR: root 256 ROOT_BACKREF from 5 names 'sw' in directory 256, which has no such entry/, subvols, (im) => {
      replaceRoot(im, { objectid: 256n, type: T.ROOT_BACKREF, offset: 5n }, [{ key: { objectid: 256n, type: T.ROOT_BACKREF, offset: 5n }, data: rootRef(256, 3, 'sw') }]);
      replaceRoot(im, { objectid: 5n, type: T.ROOT_REF, offset: 256n }, [{ key: { objectid: 5n, type: T.ROOT_REF, offset: 256n }, data: rootRef(256, 3, 'sw') }]);
    });

    add('04b-root-ref-backref-disagree', 'root-ref-loop', /ERROR: root 5 ROOT_REF to 256 says dir 256 index 3 name 'sv', its ROOT_BACKREF dir 256 index 7 name 'sv'/, subvols, (im) => {
      replaceRoot(im, { objectid: 256n, type: T.ROOT_BACKREF, offset: 5n }, [{ key: { objectid: 256n, type: T.ROOT_BACKREF, offset: 5n }, data: rootRef(256, 7, 'sv') }]);
    });
    add('04c-second-backref', 'root-ref-loop', /ERROR: root 257 has a second ROOT_BACKREF, from 256 \(the first is from 5\)/, subvols, (im) => {
      im.insertNear('root', im.nearKey('root', { objectid: 257n, type: T.ROOT_BACKREF, offset: 256n }), [{ key: { objectid: 257n, type: T.ROOT_BACKREF, offset: 256n }, data: rootRef(256, 5, 'again') }]);
      im.insertNear('root', im.nearKey('root', { objectid: 256n, type: T.ROOT_REF, offset: 257n }), [{ key: { objectid: 256n, type: T.ROOT_REF, offset: 257n }, data: rootRef(256, 5, 'again') }]);
    });

    // --- data backrefs ---
    const dataRef = (im, edit) => im.edit(2n, (k, data) => k.type === T.EXTENT_ITEM && (data.readBigUInt64LE(16) & 1n) === 1n && data[24] === T.EXTENT_DATA_REF,
      (items, i) => edit(items[i].data), 'a data extent with an inline EXTENT_DATA_REF');
    add('10-data-ref-root-999', 'data-ref-root', /ERROR: data extent \d+ len \d+: backref of root 999 inode \d+ offset \d+, but there is no root 999/, files, (im) => dataRef(im, (b) => b.writeBigUInt64LE(999n, 25)));
    add('11-data-ref-wrong-inode', 'data-ref-root', /ERROR: data extent \d+ len \d+: backref of root 5 inode 9999 offset 0, but root 5 has no such file extent/, files, (im) => dataRef(im, (b) => b.writeBigUInt64LE(9999n, 33)));

    add('11b-shared-data-ref-to-nowhere', 'data-ref-root', /ERROR: data extent \d+ len \d+: shared backref of block 5242880, which is no leaf of file extents referring to it/, files, (im) => {
      const hit = im.find(2n, (k, data) => k.type === T.EXTENT_ITEM && (data.readBigUInt64LE(16) & 1n) === 1n && data[24] === T.EXTENT_DATA_REF, 'a data extent');
      const key = { objectid: hit.key.objectid, type: 184, offset: 5242880n }, count = Buffer.alloc(4);
      count.writeUInt32LE(1);
      im.edit(2n, (k) => k.objectid === hit.key.objectid && k.type === T.EXTENT_ITEM, (items, i) => {
        items[i].data.writeBigUInt64LE(items[i].data.readBigUInt64LE(0) + 1n, 0); // refs + 1
        items.splice(i + 1, 0, { key, data: count });
      });
    });

    // --- chunks, block groups and devices ---
    const bgItem = (im, type, edit) => im.edit(2n, (k, data) => k.type === T.BLOCK_GROUP_ITEM && (data.readBigUInt64LE(16) & 7n) === BigInt(type),
      (items, i) => edit(items[i].data), `a block group of type ${type}`);
    add('12-bg-type-data-chunk-metadata', 'bg-chunk-type', /ERROR: block group \d+ is typed DATA but its chunk is METADATA/, files, (im) => {
      bgItem(im, 4, (b) => b.writeBigUInt64LE((b.readBigUInt64LE(16) & ~7n) | 1n, 16));
    });
    add('13-chunk-type-system-bg-data', 'bg-chunk-type', /ERROR: block group \d+ is typed DATA but its chunk is DATA\|METADATA/, files, (im) => {
      im.edit('chunk', (k, data) => k.type === KEY_TYPE.CHUNK_ITEM && (data.readBigUInt64LE(24) & 7n) === 1n, (items, i) => {
        items[i].data.writeBigUInt64LE(items[i].data.readBigUInt64LE(24) | 4n, 24);
      });
    });
    const devItem = (im, field, value) => {
      // the superblock's copy and the chunk tree's
      setSuper(im, (b, s) => b.writeBigUInt64LE(value, s + SB.devItem + field));
      im.edit('chunk', is(1, T.DEV_ITEM, 1), (items, i) => items[i].data.writeBigUInt64LE(value, field), 'DEV_ITEM 1');
    };
    add('14-super-total-bytes-below-chunks', 'total-bytes', /ERROR: superblock total_bytes 16777216 is below what device 1 holds \(67108864\)|ERROR: device 1: dev extent \d+ len \d+ ends past the device's total_bytes 16777216/, files, (im) => {
      setSuper(im, (b, s) => b.writeBigUInt64LE(16n << 20n, s + SB.totalBytes));
      devItem(im, 8, 16n << 20n);
    });
    add('14b-super-total-bytes-below-device', 'total-bytes', /ERROR: superblock total_bytes 16777216 is below what its devices hold \(67108864\)/, files, (im) => {
      setSuper(im, (b, s) => b.writeBigUInt64LE(16n << 20n, s + SB.totalBytes));
    });
    add('15-dev-total-bytes-below-chunks', 'total-bytes', /ERROR: device 1: dev extent \d+ len \d+ ends past the device's total_bytes 8388608/, files, (im) => devItem(im, 8, 8n << 20n));
    add('16-generation-near-2e64', 'generation', /corrupt leaf: root=5 block=\d+ slot=\d+, invalid inode generation, have 18446744073709551610 expect <= \d+/, files, (im) => {
      im.editInode(im.lookup('/f'), { generation: (1n << 64n) - 6n });
    });
    add('17-root-generation-near-2e64', 'generation', /corrupt leaf: root=1 block=\d+ slot=\d+, invalid root generation, have 18446744073709551614 expect <= \d+/, files, (im) => editRootItem(im, 5n, (b) => {
      b.writeBigUInt64LE((1n << 64n) - 2n, RI.generation);
      b.writeBigUInt64LE((1n << 64n) - 2n, RI.generationV2);
    }));
    add('17b-super-generation-near-2e64', 'generation', /ERROR: tree 1: block \d+ has generation \d+, the superblock says 18446744073709551614/, files, (im) => {
      setSuper(im, (b, s) => b.writeBigUInt64LE((1n << 64n) - 2n, s + 72));
    });
    add('18-dev-bytes-used-beyond-device', 'bytes-used', /ERROR: device 1: bytes_used \d+ is beyond its total_bytes \d+/, files, (im) => devItem(im, 16, 1n << 40n));
    add('19-dev-bytes-used-wrong', 'bytes-used', /ERROR: device 1: bytes_used 4194304 but its dev extents add up to \d+/, files, (im) => devItem(im, 16, 4n << 20n));
    add('20-super-bytes-used-beyond-device', 'bytes-used', /ERROR: superblock bytes_used \d+ but the block groups use \d+/, files, (im) => setSuper(im, (b, s) => b.writeBigUInt64LE(1n << 40n, s + SB.bytesUsed)));
    add('21b-dev-extent-no-chunk', 'dev-extent', /ERROR: device 1: dev extent 60817408 len 1048576 names chunk 60817408, which has no such stripe/, files, (im) => {
      const hit = im.find(4n, (k) => k.type === T.DEV_EXTENT, 'a DEV_EXTENT');
      const data = Buffer.from(hit.data);
      data.writeBigUInt64LE(60817408n, 16);
      data.writeBigUInt64LE(1n << 20n, 24);
      im.insertNear(4n, hit.key, [{ key: { objectid: 1n, type: T.DEV_EXTENT, offset: 60817408n }, data }]);
    });
    add('21c-chunk-without-block-group', 'bg-chunk-type', /ERROR: chunk \d+ len \d+ has no block group/, files, (im) => {
      im.edit(2n, (k, data) => k.type === T.BLOCK_GROUP_ITEM && (data.readBigUInt64LE(16) & 7n) === 1n, (items, i) => items.splice(i, 1), 'the data block group');
    });
    add('21-missing-dev-extent', 'dev-extent', /ERROR: chunk \d+ stripe 0 \(device 1 offset \d+\) has no DEV_EXTENT/, files, (im) => {
      im.edit(4n, (k) => k.type === T.DEV_EXTENT && k.offset > 1048576n, (items, i) => items.splice(i, 1), 'a DEV_EXTENT');
    });

    // --- the quota tree ---
    add('22-quota-no-status', 'quota-status', /ERROR: quota tree has no QGROUP_STATUS item/, quota, (im) => {
      im.edit(8n, (k) => k.type === T.QGROUP_STATUS, (items, i) => items.splice(i, 1), 'QGROUP_STATUS');
    });

    // --- the log root ---
    add('23-log-root-is-fs-root', 'log-root', /ERROR: log root tree: block \d+ is also a block of tree 5/, logged, (im) => {
      const fs = im.rootItem('fs');
      setSuper(im, (b, s) => { b.writeBigUInt64LE(fs.bytenr, s + SB.logRoot); b[s + SB.logRootLevel] = fs.level; });
    });
    add('23b-log-tree-is-fs-root', 'log-root', /ERROR: log tree of root 5: block \d+ is also a block of tree 5/, logged, (im) => {
      const fs = im.rootItem('fs');
      im.edit('log', (k) => k.type === KEY_TYPE.ROOT_ITEM && k.offset === 5n, (items, i) => {
        items[i].data.writeBigUInt64LE(fs.bytenr, 176);
        items[i].data[238] = fs.level;
      }, 'the log ROOT_ITEM of subvolume 5');
    });
    add('24-log-root-level-wrong', 'log-root', /ERROR: log root tree: superblock says level 1, block \d+ is at level 0/, logged, (im) => setSuper(im, (b, s) => { b[s + SB.logRootLevel] = 1; }));

    // --- what a replay of a hostile log could leave (crafted directly in the fs tree) ---
    // --- names from the image are printed escaped, as ls prints them (a terminal's escape sequences) ---
    add('28-escape-in-error-name', 'escaped-name', /ERROR: root 5 inode \d+: name '\\x1b\[2J\\x1b\]0;owned\\x07\\x0d' in directory \d+ has no DIR_ITEM/, files, (im) => {
      const bad = '\x1b[2J\x1b]0;owned\x07\r';
      im.renameEntry(d(im), 'e', bad);
      im.replace('fs', { objectid: d(im), type: KEY_TYPE.DIR_ITEM, offset: nameHash(bad) }, []);
    });

    add('25-dir-with-file-extents', 'dir-extents', /ERROR: root 5 inode \d+: a directory holds file extent \(\d+ EXTENT_DATA 0\)/, files, (im) => {
      const ext = im.get('fs', { objectid: im.lookup('/g'), type: KEY_TYPE.EXTENT_DATA, offset: 0n });
      im.insertNear('fs', im.nearKey('fs', { objectid: d(im), type: KEY_TYPE.EXTENT_DATA, offset: 0n }), [{ key: { objectid: d(im), type: KEY_TYPE.EXTENT_DATA, offset: 0n }, data: Buffer.from(ext.data) }]);
    });
    add('26-file-to-binary-symlink-6000', 'symlink', /ERROR: root 5 inode \d+: symlink target of 6000 bytes(, over| is over)/, files, (im) => {
      const f = im.lookup('/f');
      const target = Buffer.alloc(6000, 0);
      for (let i = 0; i < 6000; i++) target[i] = (i * 7) & 0xff;
      const inline = Buffer.alloc(21 + 6000);
      inline.writeBigUInt64LE(1n, 0); // generation
      inline.writeBigUInt64LE(6000n, 8); // ram_bytes
      inline[20] = 0; // type inline
      target.copy(inline, 21);
      im.replace('fs', { objectid: f, type: KEY_TYPE.EXTENT_DATA, offset: 0n }, [{ key: { objectid: f, type: KEY_TYPE.EXTENT_DATA, offset: 0n }, data: inline }]);
      im.editInode(f, { mode: 0o120777, size: 6000n, nbytes: 6000n });
    });
    add('26b-symlink-with-nul', 'symlink', /ERROR: root 5 inode \d+: symlink target holds a NUL byte at offset 3 of its 100/, files, (im) => {
      const g = im.lookup('/g');
      im.edit('fs', (k) => k.objectid === g && k.type === KEY_TYPE.EXTENT_DATA, (items, i) => { items[i].data[21 + 3] = 0; }, 'the inline extent of /g');
      im.editInode(g, { mode: 0o120777 });
      im.edit('fs', (k) => k.objectid === ROOT_DIR && k.type === KEY_TYPE.DIR_INDEX, (items) => {
        for (const it of items) if (it.key.objectid === ROOT_DIR && (it.key.type === KEY_TYPE.DIR_INDEX || it.key.type === KEY_TYPE.DIR_ITEM) && it.data.subarray(30).toString() === 'g') it.data[29] = 7;
      });
    });
    add('25b-fifo-with-file-extents', 'dir-extents', /ERROR: root 5 inode \d+: a FIFO holds file extent \(\d+ EXTENT_DATA 0\)/, files, (im) => {
      im.editInode(im.lookup('/g'), { mode: 0o010644 });
    });
    add('27-dir-to-file-with-entries', 'dir-entries', /ERROR: root 5 inode \d+: a regular file holds directory entries \(\d+ DIR_ITEM \d+\)/, files, (im) => {
      im.editInode(d(im), { mode: 0o100644, nlink: 1 });
    });
    from('nested', NESTED);
    for (const [name, im] of bases) {
      const file = join(outdir, `00-clean-${name}.img`);
      im.save(file);
      cases.push({ name: `00-clean-${name}`, cls: 'clean', file, ours: /: 0 errors found/, progs: 'passes' });
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return cases;
}

// A log (16 KiB nodes: room for a 6,000-byte inline item) holding directory 257 (/d, with /d/a and /d/b)
// and file 259 (/f, an inline extent), fsynced after a commit: what replay reads.
const LOG = 'mkfs nodesize=16K size=64M\nmkdir /d\ncreate /d/a\ncreate /f\nwrite /f 0 100 1\ncommit\ncreate /d/b\nwrite /f 0 200 2\nfsync /f\nfsync /d\ncrash\n';

/** An inline file extent item holding data. */
function inlineExtent(data) {
  const b = Buffer.alloc(21 + data.length);
  b.writeBigUInt64LE(1n, 0);
  b.writeBigUInt64LE(BigInt(data.length), 8);
  data.copy(b, 21);
  return b;
}

/**
 * Logs that would leave, replayed, the shapes of cases 25-27 (issue 39: "after replay"): the log gives a
 * directory a file extent, turns a file into a 6,000-byte binary symlink, turns a directory into a file
 * that has entries. Returns [{name, file, replay}]: replay a RegExp replay's refusal must match.
 */
export function makeReplayCases(outdir, { cli = CLI } = {}) {
  outdir = resolve(outdir);
  mkdirSync(outdir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'btrfslab-check-strict-log-'));
  const cases = [];
  try {
    const base = Image.open(runScenario(cli, work, 'log', LOG));
    const add = (name, replay, edit) => {
      const im = base.copy();
      edit(im);
      const file = join(outdir, `${name}.img`);
      im.save(file);
      cases.push({ name, file, replay });
    };
    const logInode = (im, mode) => im.find('log:5', (k, data) => k.type === KEY_TYPE.INODE_ITEM && (data.readUInt32LE(52) & 0o170000) === mode, `a logged inode of mode 0${mode.toString(8)}`).key.objectid;
    add('31-log-dir-extent', /log item \(257 EXTENT_DATA 0\): inode 257 is not a file \(mode 040755\)/, (im) => {
      const dir = logInode(im, 0o040000);
      const key = { objectid: dir, type: KEY_TYPE.EXTENT_DATA, offset: 0n };
      im.insertNear('log:5', im.nearKey('log:5', key), [{ key, data: inlineExtent(Buffer.from('not a directory\'s')) }]);
    });
    add('32-log-file-to-binary-symlink', /log item \(259 INODE_ITEM 0\) gives inode 259 mode 0120777, it has 0100644: an inode never changes type/, (im) => {
      const f = logInode(im, 0o100000);
      const target = Buffer.from(Array.from({ length: 6000 }, (_, i) => (i * 7) & 0xff));
      im.replace('log:5', { objectid: f, type: KEY_TYPE.EXTENT_DATA, offset: 0n }, [{ key: { objectid: f, type: KEY_TYPE.EXTENT_DATA, offset: 0n }, data: inlineExtent(target) }]);
      im.editInode(f, { mode: 0o120777, size: 6000n, nbytes: 6000n }, 'log:5');
    });
    add('33-log-dir-to-file', /log item \(257 INODE_ITEM 0\) gives inode 257 mode 0100644, it has 040755: an inode never changes type/, (im) => {
      im.editInode(logInode(im, 0o040000), { mode: 0o100644 }, 'log:5');
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return cases;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: node tests/cli/check-strict.mjs OUTDIR');
    process.exit(2);
  }
  for (const c of makeStrictCases(out)) console.log(`${c.cls.padEnd(18)} ${c.file}`);
}
