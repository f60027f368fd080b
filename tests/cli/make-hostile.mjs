// make-hostile.mjs — writes every crafted hostile image (and hostile script)
// of issue 9 into a directory, named NNN-class-what.img (.txt for scripts).
// Images start from scenarios run by the CLI and are then edited with
// craft.mjs, so every checksum is valid and only what the case names is
// wrong. Used by hostile.test.mjs, by hand, and as a fuzz seed corpus:
//
//   node tests/cli/make-hostile.mjs OUTDIR [--sentinel DIR]
//
// --sentinel: the absolute directory the escape cases' symlinks point at
// (default OUTDIR/sentinel, which is not created). Cases whose symlinks are
// relative point at relSentinel (default ../../../../s2: the link is T/e/x,
// so from a target T = R/a/b/c/t it reaches R/a/s2).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  FT, Image, KEY_TYPE, ROOT_DIR, SUPER_OFFSET, cmpKey, decodeDirEntries, decodeInodeRefs, encodeDev, encodeDirEntry, encodeInodeExtref, encodeInodeRefs,
  extrefHash, nameHash,
} from './craft.mjs';

export const CLI = process.env.BTRFSLAB_CLI || fileURLToPath(new URL('../../wasm-core/build/btrfslab', import.meta.url));

const SEED = ['--seed', '1', '--time', '1700000000'];

/** Runs a scenario into an image with the CLI; returns the image's path. */
export function runScenario(cli, dir, name, script) {
  const s = join(dir, `${name}.txt`), img = join(dir, `${name}.img`);
  writeFileSync(s, script);
  const r = spawnSync(cli, ['run', s, '--image', img, ...SEED], { encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0) throw new Error(`btrfslab run ${name}: exit ${r.status} ${r.signal ?? ''}\n${r.stderr}`);
  return img;
}

const base = (nodesize, size) => `mkfs nodesize=${nodesize} size=${size}
mkdir /d
create /d/f
write /d/f 0 5000 1
setxattr /d/f user.a v
mkdir /a
mkdir /a/b
create /a/b/g
write /a/b/g 0 100 2
`;
const FILES = ['/d/f', '/a/b/g']; // what the readers' cat reads in the base images

// --- edits ----------------------------------------------------------------------

/** A decoded entry with some fields changed: its lengths are the true ones unless changes lie about them. */
const changed = (entry, changes) => ({ ...entry, nameLen: undefined, dataLen: undefined, ...changes });

/** Rewrites the one entry of dir's DIR_INDEX naming name (the other items untouched). */
function setDirIndex(im, dir, name, entry) {
  const hit = im.dirIndex(dir, name);
  im.edit('fs', (k) => cmpKey(k, hit.key) === 0, (items, i) => { items[i].data = encodeDirEntry(changed(decodeDirEntries(items[i].data)[0], entry)); });
}
/** Rewrites dir's DIR_ITEM for name; rekey: move it to the hash of the new name (kept valid). */
function setDirItem(im, dir, name, entry, { rekey = true, rekeyTo } = {}) {
  const key = { objectid: dir, type: KEY_TYPE.DIR_ITEM, offset: nameHash(name) };
  im.edit('fs', (k) => cmpKey(k, key) === 0, (items, i) => {
    items[i].data = encodeDirEntry(changed(decodeDirEntries(items[i].data)[0], entry));
    if (rekeyTo !== undefined) items[i].key = { ...key, offset: rekeyTo };
    else if (rekey && entry.name !== undefined) items[i].key = { ...key, offset: nameHash(entry.name) };
  });
}
/** Rewrites the INODE_REF of ino in parent. */
function setInodeRef(im, ino, parent, ref, tree = 'fs') {
  const key = { objectid: ino, type: KEY_TYPE.INODE_REF, offset: parent };
  im.edit(tree, (k) => cmpKey(k, key) === 0, (items, i) => { items[i].data = encodeInodeRefs([changed(decodeInodeRefs(items[i].data)[0], ref)]); });
}
/** Rewrites ino's XATTR_ITEM holding name, re-keyed to the new name's hash unless told. */
function setXattr(im, ino, name, entry, { tree = 'fs', rekey = true } = {}) {
  const key = { objectid: ino, type: KEY_TYPE.XATTR_ITEM, offset: nameHash(name) };
  im.edit(tree, (k) => cmpKey(k, key) === 0, (items, i) => {
    items[i].data = encodeDirEntry(changed(decodeDirEntries(items[i].data)[0], entry));
    if (rekey && entry.name !== undefined) items[i].key = { ...key, offset: nameHash(entry.name) };
  }, `xattr ${name} of ${ino}`);
}
/** Sets the file type byte of dir/name in both DIR_ITEM and DIR_INDEX. */
function setEntryType(im, dir, name, type) {
  setDirIndex(im, dir, name, { type });
  setDirItem(im, dir, name, { type });
}
/** Points every key pointer of every node of tree at the node's first child (generations as the child's). */
function allPointersToFirstChild(im, tree) {
  for (const b of im.walk(im.rootOf(tree)).filter((x) => x.level > 0)) {
    const ptrs = im.ptrs(b.logical);
    im.writeNode(b.logical, ptrs.map((p) => ({ ...p, blockptr: ptrs[0].blockptr, generation: ptrs[0].generation })));
  }
}

// --- the cases ---------------------------------------------------------------------

/**
 * Writes every case into outdir. Returns [{name, file, cls, kind, cat}]:
 * kind says what a reader must make of it (see hostile.test.mjs): 'corrupt' (the fs tree holds an
 * item the tree checker must refuse), 'corrupt-log' (the log tree does), 'unsafe-name', 'escape',
 * 'escape-root' (an entry back to the root: extract only in a sandbox), 'privileged', 'cycle',
 * 'shared-child', 'corrupt-meta' (the superblock, the chunk map or a tree's level lies: every reader
 * refuses), 'size', 'odd' (a reader need only end), 'valid', 'script'; cat lists files worth reading.
 */
export async function makeHostile(outdir, { cli = CLI, sentinel, relSentinel = '../../../../s2' } = {}) {
  outdir = resolve(outdir);
  mkdirSync(outdir, { recursive: true });
  sentinel = resolve(sentinel ?? join(outdir, 'sentinel'));
  const work = mkdtempSync(join(tmpdir(), 'btrfslab-make-hostile-'));
  const cases = [];
  const bases = new Map();
  const from = (name, script) => {
    if (!bases.has(name)) bases.set(name, Image.open(runScenario(cli, work, name, script)));
    return bases.get(name).copy();
  };
  const add = (name, kind, im, extra = {}) => {
    const file = join(outdir, `${name}.img`);
    im.save(file);
    cases.push({ name, file, cls: name.split('-')[1], kind, cat: FILES, ...extra });
  };
  const b4 = () => from('base4k', base('4K', '24M'));
  const b16 = () => from('base16k', base('16K', '24M'));
  const b64 = () => from('base64k', base('64K', '64M'));
  const D = (im) => im.lookup('/d'), F = (im) => im.lookup('/d/f');
  const long = (n, c = 'n') => c.repeat(n);

  try {
    // 1. names: lengths over 255 inside grown items, lengths past the item's end, and names no entry may have
    let im = b4(); setDirIndex(im, D(im), 'f', { name: long(256) }); add('101-names-dir-index-name-256', 'corrupt', im);
    im = b4(); setDirItem(im, D(im), 'f', { name: long(300) }); add('102-names-dir-item-name-300', 'corrupt', im);
    im = b4(); setInodeRef(im, F(im), D(im), { name: long(1000) }); add('103-names-inode-ref-name-1000', 'corrupt', im);
    im = b4(); setXattr(im, F(im), 'user.a', { name: `user.${long(251, 'x')}` }); add('104-names-xattr-name-256', 'corrupt', im);
    im = b16(); setDirIndex(im, D(im), 'f', { name: long(4000) }); add('105-names-dir-index-name-4000', 'corrupt', im);
    im = b16(); setXattr(im, F(im), 'user.a', { name: `user.${long(9995, 'x')}` }); add('106-names-xattr-name-10000', 'corrupt', im);
    im = b64(); setDirIndex(im, D(im), 'f', { name: long(60000) }); add('107-names-dir-index-name-60000', 'corrupt', im);
    im = b4(); setDirIndex(im, D(im), 'f', { nameLen: 65535 }); add('108-names-dir-index-name-len-65535-past-item', 'corrupt', im);
    im = b4(); setDirItem(im, D(im), 'f', { nameLen: 200 }); add('109-names-dir-item-name-len-200-past-item', 'corrupt', im);
    im = b4(); setInodeRef(im, F(im), D(im), { nameLen: 65535 }); add('110-names-inode-ref-name-len-65535-past-item', 'corrupt', im);
    im = b4(); setXattr(im, F(im), 'user.a', { nameLen: 65535 }); add('111-names-xattr-name-len-65535-past-item', 'corrupt', im);
    im = b4(); setXattr(im, F(im), 'user.a', { dataLen: 4000 }); add('112-names-xattr-data-len-past-item', 'corrupt', im);
    im = b4(); setXattr(im, F(im), 'user.a', { dataLen: 65535 }); add('113-names-xattr-data-len-65535', 'corrupt', im);
    im = b4(); im.renameEntry(D(im), 'f', ''); add('114-names-empty', 'corrupt', im);
    // a DIR_ITEM keyed by another name's hash (the name itself is fine)
    im = b4(); setDirItem(im, D(im), 'f', { name: 'f' }, { rekeyTo: nameHash('g') }); add('115-names-dir-item-hash-mismatch', 'corrupt', im);
    // an INODE_EXTREF (what a name gets when its INODE_REF is full) with a 300-byte name, and one past its item
    const extref = (im, name, nameLen) => {
      const key = { objectid: F(im), type: KEY_TYPE.INODE_EXTREF, offset: extrefHash(D(im), name) };
      im.insertNear('fs', { objectid: F(im), type: KEY_TYPE.INODE_REF, offset: D(im) }, [{ key, data: encodeInodeExtref({ parent: D(im), index: 99n, name, nameLen }) }]);
    };
    im = b4(); extref(im, long(300, 'e')); add('116-names-inode-extref-name-300', 'corrupt', im);
    im = b4(); extref(im, 'e', 4000); add('117-names-inode-extref-name-len-past-item', 'corrupt', im);
    // names the tree checker may pass (the kernel's does) but no extract may use; hashes valid, in all three items
    im = b4(); im.renameEntry(D(im), 'f', 'x/y'); add('120-names-slash', 'unsafe-name', im, { cat: ['/a/b/g'] });
    im = b4(); im.renameEntry(D(im), 'f', '..\0'); add('121-names-dotdot-nul', 'unsafe-name', im, { cat: ['/a/b/g'] });
    im = b4(); im.renameEntry(D(im), 'f', '.'); add('122-names-dot', 'unsafe-name', im, { cat: ['/a/b/g'] });
    im = b4(); im.renameEntry(D(im), 'f', '..'); add('123-names-dotdot', 'unsafe-name', im, { cat: ['/a/b/g'] });
    // a directory named "..\0" holding a directory and a file: a C-string test climbs one level per such name
    im = b4(); im.renameEntry(im.lookup('/a'), 'b', '..\0'); im.renameEntry(ROOT_DIR, 'a', '..\0'); add('124-names-dir-dotdot-nul', 'unsafe-name', im, { cat: ['/d/f'] });
    im = b4(); im.renameEntry(D(im), 'f', 'a\0b'); add('125-names-nul-inside', 'unsafe-name', im, { cat: ['/a/b/g'] });
    // a valid name that is a terminal's escape sequence (clear screen, set the window title): readers must cope, any may print it
    im = b4(); im.renameEntry(D(im), 'f', '\x1b[2J\x1b]0;owned\x07\r'); add('126-names-terminal-escape', 'valid', im, { cat: ['/a/b/g'] });

    // names in a log tree (replay must refuse the log and write nothing)
    const logXattr = 'mkfs nodesize=4K size=24M\ncreate /f\nwrite /f 0 100 1\ncommit\nsetxattr /f user.a v\nfsync /f\ncrash\n';
    const logDir = 'mkfs nodesize=4K size=24M\nmkdir /d\ncommit\ncreate /d/g\nwrite /d/g 0 100 1\nfsync /d\ncrash\n';
    const logFile = 'mkfs nodesize=4K size=24M\nmkdir /d\ncommit\ncreate /d/g\nwrite /d/g 0 100 1\nfsync /d/g\ncrash\n';
    const logItem = (im, type) => im.find('log:5', (k) => k.type === type, `log item of type ${type}`);
    im = from('log-xattr', logXattr);
    setXattr(im, logItem(im, KEY_TYPE.XATTR_ITEM).key.objectid, 'user.a', { name: `user.${long(295, 'y')}` }, { tree: 'log:5' });
    add('150-names-log-xattr-name-300', 'corrupt-log', im, { cat: ['/f'] });
    im = from('log-xattr', logXattr);
    setXattr(im, logItem(im, KEY_TYPE.XATTR_ITEM).key.objectid, 'user.a', { nameLen: 65535 }, { tree: 'log:5' });
    add('151-names-log-xattr-name-len-past-item', 'corrupt-log', im, { cat: ['/f'] });
    im = from('log-dir', logDir);
    {
      const hit = logItem(im, KEY_TYPE.DIR_INDEX);
      im.edit('log:5', (k) => cmpKey(k, hit.key) === 0, (items, i) => { items[i].data = encodeDirEntry(changed(decodeDirEntries(items[i].data)[0], { name: long(300, 'z') })); });
    }
    add('152-names-log-dir-index-name-300', 'corrupt-log', im, { cat: [] });
    im = from('log-file', logFile);
    {
      const hit = logItem(im, KEY_TYPE.INODE_REF);
      setInodeRef(im, hit.key.objectid, hit.key.offset, { name: long(300, 'r') }, 'log:5');
    }
    add('153-names-log-inode-ref-name-300', 'corrupt-log', im, { cat: [] });

    // 2. extract's escapes: a symlink, then a directory of the same name holding files
    const symThenDir = (target) => `mkfs nodesize=4K size=24M
mkdir /e
symlink "${target}" /e/x
mkdir /e/y
create /e/y/evil
write /e/y/evil 0 100 1
mkdir /e/y/sub
create /e/y/sub/g
write /e/y/sub/g 0 10 2
`;
    for (const [name, target] of [['201-escape-symlink-abs-then-dir', sentinel], ['202-escape-symlink-rel-then-dir', relSentinel]]) {
      im = from(name, symThenDir(target));
      im.editInode(im.lookup('/e/y/evil'), { mode: 0o104755, uid: 0, gid: 0 });
      im.renameEntry(im.lookup('/e'), 'y', 'x'); // the DIR_ITEM of "x" now holds two entries: the link, then the directory
      add(name, 'escape', im, { cat: [] });
    }
    // a hard link whose second name is inside a "directory" that is a symlink of the same name
    im = from('hardlink', `mkfs nodesize=4K size=24M\ncreate /f\nwrite /f 0 100 1\nmkdir /e\nsymlink "${sentinel}" /e/x\nmkdir /e/y\nlink /f /e/y/h\n`);
    im.renameEntry(im.lookup('/e'), 'y', 'x');
    add('203-escape-hardlink-in-symlinked-dir', 'escape', im, { cat: ['/f'] });
    // entries whose directory is a symlink inode: /s -> sentinel, and /s/h names /f
    im = from('under-symlink', `mkfs nodesize=4K size=24M\ncreate /f\nwrite /f 0 100 1\nsymlink "${sentinel}" /s\n`);
    im.addEntry(im.lookup('/s'), 'h', im.lookup('/f'), { ref: true });
    add('204-escape-entries-under-symlink', 'escape', im, { cat: ['/f'] });
    // a symlink "x" to a sentinel file, then a regular (setuid root) file also named "x": an open(O_CREAT|O_TRUNC)
    // that follows links rewrites the sentinel
    im = from('symlink-then-file', `mkfs nodesize=4K size=24M\nmkdir /e\nsymlink "${sentinel}/keep" /e/x\ncreate /e/y\nwrite /e/y 0 100 1\n`);
    im.editInode(im.lookup('/e/y'), { mode: 0o104777, uid: 0, gid: 0 });
    im.renameEntry(im.lookup('/e'), 'y', 'x');
    add('207-escape-symlink-then-file', 'escape', im, { cat: [] });
    // a symlink to a sentinel whose own owner, times and xattrs an extract must set on the link, never on its target
    im = from('symlink-attrs', `mkfs nodesize=4K size=24M\nsymlink "${sentinel}" /l\ncreate /f\nsetxattr /f user.evil v\n`);
    {
      const l = im.lookup('/l'), f = im.lookup('/f'), key = { objectid: f, type: KEY_TYPE.XATTR_ITEM, offset: nameHash('user.evil') };
      im.editInode(l, { uid: 4321, gid: 4321 });
      const x = im.get('fs', key);
      im.insertNear('fs', im.nearKey('fs', { ...key, objectid: l }), [{ key: { ...key, objectid: l }, data: x.data }]);
    }
    add('208-escape-symlink-attrs', 'escape', im, { cat: ['/f'] });

    // entries that lead back to the root directory: the attacks as found, where only the root's "already exists"
    // was tolerated. UNBOUNDED: an extract that follows "..\0" here climbs to / (hostile.test.mjs extracts these only
    // in a private mount namespace with / read-only); the symlinked "x" writes the root's files into its target.
    im = b4(); im.editInode(F(im), { mode: 0o104755, uid: 0, gid: 0 }); im.addEntry(ROOT_DIR, '..\0', ROOT_DIR, { type: FT.DIR });
    add('205-escape-dotdot-nul-to-root', 'escape-root', im, { cat: ['/d/f'] });
    im = from('symlink-root', `mkfs nodesize=4K size=24M\ncreate /suid\nwrite /suid 0 100 1\nmkdir /e\nsymlink "${sentinel}" /e/x\n`);
    im.editInode(im.lookup('/suid'), { mode: 0o104755, uid: 0, gid: 0 });
    im.addEntry(im.lookup('/e'), 'x', ROOT_DIR, { type: FT.DIR }); // a second "x", the root directory
    add('206-escape-symlink-then-root', 'escape-root', im, { cat: ['/suid'] });

    // what extract must not recreate unless asked: setuid/setgid root files, device nodes, trusted.* and security.* xattrs
    im = from('privileged', `mkfs nodesize=4K size=24M
create /suid
write /suid 0 100 1
create /sgid
write /sgid 0 100 2
mkdir /sgid-dir
create /sgid-dir/f
create /null
create /x
setxattr /x trusted.evil v
setxattr /x security.evil v
setxattr /x user.ok v
`);
    im.editInode(im.lookup('/suid'), { mode: 0o104755, uid: 0, gid: 0 });
    im.editInode(im.lookup('/sgid'), { mode: 0o102755, uid: 0, gid: 0 });
    im.editInode(im.lookup('/sgid-dir'), { mode: 0o042777, uid: 0, gid: 0 });
    im.editInode(im.lookup('/null'), { mode: 0o020666, rdev: encodeDev(1, 3) });
    setEntryType(im, ROOT_DIR, 'null', FT.CHRDEV);
    add('210-escape-privileged', 'privileged', im, { cat: ['/suid', '/sgid'] });

    // 3. walks the image shapes
    cases.push({ name: '301-walks-deep-2090', file: runScenario(cli, outdir, '301-walks-deep-2090', deepScript(2090)), cls: 'walks', kind: 'valid', cat: [], deep: 2090 });
    const cycle = (name, edit) => { im = b4(); edit(im); add(name, 'cycle', im); };
    cycle('302-walks-entry-to-root', (im) => im.addEntry(im.lookup('/a'), 'up', ROOT_DIR, { type: FT.DIR }));
    cycle('303-walks-two-entries-to-root', (im) => { im.addEntry(im.lookup('/a'), 'up1', ROOT_DIR, { type: FT.DIR }); im.addEntry(im.lookup('/a'), 'up2', ROOT_DIR, { type: FT.DIR }); });
    cycle('304-walks-entry-to-parent', (im) => im.addEntry(im.lookup('/a/b'), 'up', im.lookup('/a'), { type: FT.DIR }));
    cycle('305-walks-entry-to-self', (im) => im.addEntry(im.lookup('/a'), 'self', im.lookup('/a'), { type: FT.DIR }));
    // not a cycle but a lattice: each of 40 directories names the next twice, 2^40 paths to the bottom
    im = from('chain', `mkfs nodesize=64K size=64M\n${Array.from({ length: 40 }, (_, i) => `mkdir /g${'/d'.repeat(i + 1)}`).join('\n').replace(/^/, 'mkdir /g\n')}\ncreate /g${'/d'.repeat(40)}/bottom\n`);
    for (let i = 0, p = '/g'; i < 40; i++, p += '/d') im.addEntry(im.lookup(p), 'e', im.lookup(`${p}/d`), { type: FT.DIR });
    add('308-walks-lattice-2e40-paths', 'cycle', im, { cat: [`/g${'/e'.repeat(40)}/bottom`] });
    const wide = () => from('wide', 'mkfs nodesize=4K size=24M\nmkdir /d\ncreate /d/file_with_a_long_name_{1..2000}\n');
    im = wide();
    if (im.levelOf('fs') < 2) throw new Error('the wide base has no level 2 fs tree');
    allPointersToFirstChild(im, 'fs');
    add('306-walks-all-pointers-one-child', 'shared-child', im, { cat: [] });
    im = wide();
    {
      const root = im.rootOf('fs'), ptrs = im.ptrs(root), gen = im.header(root).generation;
      ptrs[1] = { ...ptrs[1], blockptr: root, generation: gen };
      im.writeNode(root, ptrs);
    }
    add('307-walks-node-points-at-itself', 'shared-child', im, { cat: [] });

    // levels past BTRFS_MAX_LEVEL (8): a reader indexing a path array by level must refuse them first
    im = b4(); {
      const root = im.super.root;
      im.block(root)[100] = 200; im.seal(root);
      im.buf[SUPER_OFFSET + 198] = 200; im.sealSuper();
    }
    add('309-walks-root-tree-level-200', 'corrupt-meta', im, { cat: [] });
    im = wide(); {
      const fs = im.rootItem('fs'), ri = im.find('root', (k) => k.objectid === 5n && k.type === KEY_TYPE.ROOT_ITEM, 'fs ROOT_ITEM');
      im.block(fs.bytenr)[100] = 200; im.seal(fs.bytenr);
      im.edit('root', (k) => cmpKey(k, ri.key) === 0, (items, i) => { items[i].data[238] = 200; });
    }
    add('310-walks-fs-tree-level-200', 'corrupt-meta', im, { cat: [] });

    // 5. the chunk map lies (superblock edits, checksum resealed): no stripes, an array past its room, stripes of 0 bytes
    const chunk0 = SUPER_OFFSET + 811 + 17; // the first CHUNK_ITEM of sys_chunk_array
    const sup = (name, edit) => { im = b4(); edit(im.buf); im.sealSuper(); add(name, 'corrupt-meta', im, { cat: [] }); };
    sup('501-chunks-sys-chunk-no-stripes', (b) => b.writeUInt16LE(0, chunk0 + 44));
    sup('502-chunks-sys-chunk-array-size-4000', (b) => b.writeUInt32LE(4000, SUPER_OFFSET + 160));
    sup('503-chunks-stripe-len-0', (b) => b.writeBigUInt64LE(0n, chunk0 + 16)); // the kernel refuses it; a reader need only not divide by it
    cases.at(-1).kind = 'odd';
    sup('504-chunks-sys-chunk-length-2e64', (b) => b.writeBigUInt64LE((1n << 64n) - 4096n, chunk0));
    sup('505-chunks-num-stripes-65535', (b) => b.writeUInt16LE(65535, chunk0 + 44));

    // 4. sizes: a 1 TiB sparse file, a file whose i_size says 2^62, an image file of 15 TB apparent size
    im = from('sparse', 'mkfs nodesize=4K size=24M\ncreate /big\ntruncate /big 1024G\nwrite /big 4096000 5000 2\nwrite /big 1099511619584 4096 3\n');
    add('401-size-sparse-file-1t', 'valid', im, { cat: [], sparse: { path: '/big', size: 2 ** 40 } });
    im = b4(); im.editInode(F(im), { size: 1n << 62n }); add('402-size-isize-2e62', 'size', im, { cat: [] });
    // one 64 KiB data extent referenced 400 times by /g: 25 MiB of file from 64 KiB of data (what --max-size bounds)
    im = from('shared-extent', 'mkfs nodesize=64K size=64M\ncreate /f\nwrite /f 0 64K 1\ncreate /g\nwrite /g 0 4K 2\n');
    {
      const f = im.lookup('/f'), g = im.lookup('/g'), N = 400, X = 65536n;
      const src = im.get('fs', { objectid: f, type: KEY_TYPE.EXTENT_DATA, offset: 0n });
      const clones = Array.from({ length: N }, (_, i) => ({ key: { objectid: g, type: KEY_TYPE.EXTENT_DATA, offset: BigInt(i) * X }, data: Buffer.from(src.data) }));
      im.replace('fs', { objectid: g, type: KEY_TYPE.EXTENT_DATA, offset: 0n }, clones);
      im.editInode(g, { size: BigInt(N) * X, nbytes: BigInt(N) * X });
    }
    add('403-size-one-extent-400-times', 'size', im, { cat: ['/g'], shared: { path: 'g', size: 400 * 65536, source: 'f' } });
    im = b4(); add('404-size-image-15t', 'valid', im, { huge: 15 * 2 ** 40 });
    truncateSync(cases.at(-1).file, 15 * 2 ** 40);

    // 6. scenarios a run must refuse quickly
    const script = (name, text, extra = {}) => {
      const file = join(outdir, `${name}.txt`);
      writeFileSync(file, text);
      cases.push({ name, file, cls: 'scenario', kind: 'script', ...extra });
    };
    script('601-scenario-brace-to-2e64', 'mkdir /d\ncreate /d/f_{0..18446744073709551615}\n');
    script('602-scenario-brace-over-2e64', 'mkdir /d\ncreate /d/f_{0..99999999999999999999}\n');
    script('603-scenario-brace-edge-2e64', 'mkdir /d\ncreate /d/f_{18446744073709551610..18446744073709551615}\n', { ok: true, ops: 7 });
    // one more name than a run may make (2,000,000 operations): refused before the first create
    script('604-scenario-op-limit', 'mkdir /d\ncreate /d/f_{1..2000001}\n');
    script('605-scenario-ops-over-max', `mkdir /d\n${Array.from({ length: 3 }, (_, i) => `create /d/f${i}_{1..500}`).join('\n')}\n`, { maxOps: 1000 });
    script('606-scenario-write-4g', 'create /f\nwrite /f 0 4G 1\n');
    script('607-scenario-unlink-range-2e64', 'mkdir /d\ncreate /d/f_1\nunlink /d/f_{1..18446744073709551615}\n');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return cases;
}

/** A scenario making a valid tree depth directories deep, /d/d/.../d/bottom. */
export function deepScript(depth) {
  let p = '', s = 'mkfs nodesize=4K size=24M\n';
  for (let i = 0; i < depth; i++) s += `mkdir ${(p += '/d')}\n`;
  return `${s}create ${p}/bottom\nwrite ${p}/bottom 0 10 1\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--sentinel');
  const sentinel = at >= 0 ? args.splice(at, 2)[1] : undefined;
  const out = args.find((a) => !a.startsWith('--'));
  if (!out) {
    console.error('usage: node tests/cli/make-hostile.mjs OUTDIR [--sentinel DIR]');
    process.exit(2);
  }
  for (const c of await makeHostile(out, { sentinel })) console.log(`${c.kind.padEnd(12)} ${c.file}`);
}
