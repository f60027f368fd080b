// A model of what a scenario script does to a filesystem, independent of the
// core, and a seeded generator of valid random scripts. Tests compare the
// kernel's view of an image with the model's.
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

const M64 = (1n << 64n) - 1n;
const GOLDEN = 0x9e3779b97f4a7c15n;

/** Byte at file offset pos of `write ... SEED` (scenario_data_byte in the core). */
/** After directory src is renamed to dst: the list of directories follows. */
function renameDirs(dirs, src, dst) {
  for (let j = 0; j < dirs.length; j++) {
    if (dirs[j] === src) dirs[j] = dst;
    else if (dirs[j].startsWith(src + '/')) dirs[j] = dst + dirs[j].slice(src.length);
  }
}

export function dataBytes(seed, off, len) {
  const out = Buffer.alloc(len);
  let word = -1n;
  let z = 0n;
  const s = (BigInt(seed) * GOLDEN) & M64;
  for (let i = 0; i < len; i++) {
    const pos = BigInt(off + i);
    const w = pos >> 3n;
    if (w !== word) {
      word = w;
      z = (s + w + GOLDEN) & M64;
      z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
      z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
      z ^= z >> 31n;
    }
    out[i] = Number((z >> ((pos & 7n) * 8n)) & 0xffn);
  }
  return out;
}

/** A seeded xorshift64* generator; prints nothing, replays exactly. */
export function rng(seed) {
  let x = BigInt(seed) * 0x2545f4914f6cdd1dn + 0x1234567n;
  x &= M64;
  if (x === 0n) x = 1n;
  const next = () => {
    x ^= x >> 12n;
    x ^= (x << 25n) & M64;
    x ^= x >> 27n;
    return Number(((x * 0x2545f4914f6cdd1dn) & M64) >> 11n) / 2 ** 53;
  };
  return {
    float: next,
    int: (n) => Math.floor(next() * n),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
  };
}

// Inodes are shared by hard links; a directory maps names to inodes.
function newInode(type, extra = {}) {
  return { type, data: Buffer.alloc(0), xattrs: new Map(), nlink: 1, ...extra };
}

export class FsModel {
  constructor() {
    this.root = newInode('dir', { entries: new Map() });
  }

  lookup(path) {
    let cur = this.root;
    for (const part of path.split('/').filter(Boolean)) {
      if (cur.type !== 'dir') return null;
      cur = cur.entries.get(part);
      if (!cur) return null;
    }
    return cur;
  }

  parentOf(path) {
    const i = path.lastIndexOf('/');
    return { dir: this.lookup(path.slice(0, i) || '/'), name: path.slice(i + 1) };
  }

  apply(cmd) {
    const [op, ...a] = cmd;
    switch (op) {
      case 'mkdir': { const { dir, name } = this.parentOf(a[0]); dir.entries.set(name, newInode('dir', { entries: new Map() })); break; }
      case 'create': { const { dir, name } = this.parentOf(a[0]); dir.entries.set(name, newInode('file')); break; }
      case 'symlink': { const { dir, name } = this.parentOf(a[1]); dir.entries.set(name, newInode('symlink', { target: a[0] })); break; }
      case 'write': {
        const f = this.lookup(a[0]);
        const [off, len, seed] = [a[1], a[2], a[3]];
        if (off + len > f.data.length) f.data = Buffer.concat([f.data, Buffer.alloc(off + len - f.data.length)]);
        dataBytes(seed, off, len).copy(f.data, off);
        break;
      }
      case 'truncate': {
        const f = this.lookup(a[0]);
        f.data = a[1] <= f.data.length ? f.data.subarray(0, a[1]) : Buffer.concat([f.data, Buffer.alloc(a[1] - f.data.length)]);
        break;
      }
      case 'link': { const f = this.lookup(a[0]); const { dir, name } = this.parentOf(a[1]); dir.entries.set(name, f); f.nlink++; break; }
      case 'unlink': case 'rmdir': { const { dir, name } = this.parentOf(a[0]); dir.entries.get(name).nlink--; dir.entries.delete(name); break; }
      case 'rename': {
        const src = this.parentOf(a[0]);
        const dst = this.parentOf(a[1]);
        const node = src.dir.entries.get(src.name);
        const old = dst.dir.entries.get(dst.name);
        if (old === node) break;
        if (old) old.nlink--;
        src.dir.entries.delete(src.name);
        dst.dir.entries.set(dst.name, node);
        break;
      }
      case 'setxattr': this.lookup(a[0]).xattrs.set(a[1], a[2]); break;
      case 'snapshot': {
        // `snapshot SRC DST [ro]`: a copy of subvolume SRC as it is now, a subvolume of its own;
        // subvolumes inside it are empty directories there, and it does not hold its own name
        const copy = copyTree(this.lookup(a[0]));
        copy.subvol = true;
        const { dir, name } = this.parentOf(a[1]);
        dir.entries.set(name, copy);
        break;
      }
      case 'clone': {
        // FICLONE: DST (made when absent) holds SRC's bytes; its own name, links and xattrs stay
        const src = this.lookup(a[0]);
        let dst = this.lookup(a[1]);
        if (!dst) { const { dir, name } = this.parentOf(a[1]); dst = newInode('file'); dir.entries.set(name, dst); }
        dst.data = Buffer.from(src.data);
        break;
      }
      case 'subvol': {
        if (a[0] === 'sync') break; // the cleaner's work: no file changes
        const { dir, name } = this.parentOf(a[1]);
        if (a[0] === 'delete') dir.entries.delete(name);
        else dir.entries.set(name, newInode('dir', { entries: new Map(), subvol: true }));
        break;
      }
      case 'commit': case 'quota': case 'qgroup': case 'set': case 'balance': case 'relocate': break; // no change to any file
      default: throw new Error(`model: unknown command ${op}`);
    }
  }

  /** Every path with what the kernel should show for it. */
  snapshot() {
    const out = {};
    const walk = (node, path) => {
      for (const [name, n] of [...node.entries].sort()) {
        const p = path === '/' ? `/${name}` : `${path}/${name}`;
        out[p] = describe(n);
        if (n.type === 'dir') walk(n, p);
      }
    };
    walk(this.root, '/');
    return out;
  }
}

/** A snapshot's copy of a tree: hard links stay links within it; a subvolume inside is an empty directory. */
function copyTree(root) {
  const seen = new Map();
  const copy = (n, top) => {
    if (!top && n.subvol) return newInode('dir', { entries: new Map(), placeholder: true });
    if (seen.has(n)) return seen.get(n);
    const c = { ...n, data: Buffer.from(n.data), xattrs: new Map(n.xattrs) };
    delete c.subvol;
    seen.set(n, c);
    if (n.type === 'dir') c.entries = new Map([...n.entries].map(([k, v]) => [k, copy(v, false)]));
    return c;
  };
  return copy(root, true);
}

function describe(n) {
  const d = { type: n.type, nlink: n.type === 'dir' ? 1 : n.nlink };
  if (n.type === 'file') {
    d.size = n.data.length;
    d.sha = createHash('sha256').update(n.data).digest('hex');
  }
  if (n.type === 'symlink') d.target = n.target;
  if (n.type !== 'symlink') d.xattrs = Object.fromEntries([...n.xattrs].sort());
  return d;
}

/** What a mounted filesystem shows, in the same shape as FsModel.snapshot. */
export function snapshotMount(mnt, getXattrs) {
  const out = {};
  const walk = (dir, path) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const p = path === '/' ? `/${name}` : `${path}/${name}`;
      const st = lstatSync(full);
      const d = { type: st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : st.isFile() ? 'file' : 'other', nlink: st.nlink };
      if (d.type === 'file') {
        d.size = st.size;
        d.sha = createHash('sha256').update(readFileSync(full)).digest('hex');
      }
      if (d.type === 'symlink') d.target = readlinkSync(full);
      if (d.type !== 'symlink') d.xattrs = getXattrs(full);
      out[p] = d;
      if (d.type === 'dir') walk(full, p);
    }
  };
  walk(mnt, '/');
  return out;
}

/**
 * A random valid script: returns { text, cmds, model } where model is the
 * expected final state. Every command is valid when it runs.
 */
export function randomScenario(seed, { ops = 60, nodesize = 4096, commitEvery = 15, maxWrite = 200_000, bulk = true, snapshots = 0, subvols = 0, clones = 0, quota = false, aligned = false, drops = false, endDropping = false, balance = 0 } = {}) {
  // aligned also commits before a truncate: the model writes a file back before truncating it, where the
  // kernel drops the dirty pages past the new size (their data never reaches an extent)
  // aligned: writes and truncates on 4 KiB boundaries (no block is partly written, so none is zeroed and rewritten)
  const al = (n) => (aligned ? Math.floor(n / 4096) * 4096 : n);
  const r = rng(seed);
  const model = new FsModel();
  const cmds = [];
  const dirs = ['/'];
  let counter = 0;
  const fresh = () => `n${counter++}${r.chance(0.2) ? '_' + 'x'.repeat(r.int(60)) : ''}`;
  const join2 = (d, n) => (d === '/' ? `/${n}` : `${d}/${n}`);
  // subvolumes: `subvols` is the chance of a new one a step, `snapshots` of a snapshot of one
  // (half of them read-only when there are subvolumes). A read-only snapshot is never changed
  // (no command names a path in it); subvolume roots and the empty directories snapshots hold
  // where a subvolume was are never renamed or removed; links and renames stay within one
  // subvolume (EXDEV).
  const writable = ['/'];
  const frozen = [];
  const special = new Set();
  let nsnaps = 0;
  // quota: enabled at a random step; groups 1/N made and subvolumes (their ids: 256 on, in the
  // order made) assigned to them, which leaves the numbers inconsistent until a rescan
  const quotaAt = quota ? r.int(Math.max(1, ops >> 1)) : -1;
  let quotaOn = false, nextId = 256, groups1 = 0, assigned = false, related = false;
  const ids = [5], idOf = new Map();
  const under = (p, d) => d === '/' || p === d || p.startsWith(d + '/');
  const svOf = (p) => writable.filter((d) => under(p, d)).sort((x, y) => y.length - x.length)[0];
  const inFrozen = (p) => frozen.some((f) => under(p, f));
  const holdsSpecial = (p) => [...special].some((x) => x === p || x.startsWith(p + '/'));
  const allPaths = () => Object.keys(model.snapshot()).filter((p) => !inFrozen(p));
  const files = () => allPaths().filter((p) => model.lookup(p).type === 'file');
  const push = (cmd) => { model.apply(cmd); cmds.push(cmd); };
  // bulk groups: /bulkN/f_1..f_M made and removed with brace ranges; kept out
  // of the other operations so their names stay predictable
  const groups = [];
  const isBulk = (p) => p.startsWith('/bulk');
  // drops: the cleaner lets go of a few blocks a transaction (set drop_batch), some deletes leave the
  // tree to it (nosync: later commits drop a batch each), `subvol sync` finishes them; endDropping:
  // the scenario ends with a subvolume deleted nosync and one batch of it dropped
  if (drops) push(['set', `drop_batch=${1 + r.int(12)}`]);
  const deletable = () => [...writable.slice(1), ...frozen].filter((d) => !writable.concat(frozen).some((x) => x !== d && x.startsWith(d + '/')));
  const deleteSubvol = (d, nosync) => {
    push(['subvol', 'delete', d, ...(nosync ? ['nosync'] : [])]);
    ids.splice(ids.indexOf(idOf.get(d)), 1);
    for (const list of [writable, frozen, dirs]) for (let j = list.length - 1; j >= 0; j--) if (under(list[j], d)) list.splice(j, 1);
    for (const x of [...special]) if (under(x, d)) special.delete(x);
  };
  for (let i = 0; i < ops; i++) {
    if (i === quotaAt) {
      push(['quota', 'enable']);
      quotaOn = true;
    }
    if (quotaOn && r.chance(0.03)) {
      if (!groups1 || r.chance(0.4)) push(['qgroup', 'create', `1/${++groups1}`]);
      else {
        push(['qgroup', 'assign', `0/${r.pick(ids)}`, `1/${1 + r.int(groups1)}`]);
        assigned = related = true;
      }
      continue;
    }
    if (quotaOn && assigned && r.chance(0.05)) {
      push(['quota', 'rescan']);
      assigned = false;
      continue;
    }
    if (drops && r.chance(0.02)) {
      push(['subvol', 'sync']);
      continue;
    }
    if (balance && r.chance(balance)) {
      // btrfs balance start -m: every metadata and system block group moved elsewhere
      push(['balance', '-m']);
      continue;
    }
    if (snapshots && r.chance(snapshots)) {
      const src = r.pick(writable), dst = join2(subvols ? r.pick(dirs) : '/', `snap${nsnaps++}`);
      ids.push(nextId++);
      const ro = !subvols || r.chance(0.5);
      push(['snapshot', src, dst, ...(ro ? ['ro'] : [])]);
      idOf.set(dst, ids.at(-1));
      special.add(dst);
      if (ro) frozen.push(dst);
      else {
        writable.push(dst);
        dirs.push(dst);
        for (const [p, d] of Object.entries(model.snapshot())) {
          if (!p.startsWith(dst + '/') || d.type !== 'dir') continue;
          if (model.lookup(p).placeholder) special.add(p);
          else dirs.push(p);
        }
      }
      continue;
    }
    if (clones && r.chance(clones)) {
      // a reflink, within a subvolume or across: onto another file, or a new one
      const fl = files().filter((p) => !isBulk(p));
      if (fl.length) {
        const src = r.pick(fl), others = fl.filter((p) => model.lookup(p) !== model.lookup(src)); // not onto itself (a hard link: EINVAL)
        push(['clone', src, others.length && r.chance(0.4) ? r.pick(others) : join2(r.pick(dirs), fresh())]);
      }
      continue;
    }
    if (subvols && r.chance(subvols / 2)) {
      // delete a subvolume that holds none (the kernel refuses one that does)
      const roots = deletable();
      if (roots.length) {
        deleteSubvol(r.pick(roots), drops && r.chance(0.4));
        continue;
      }
    }
    if (subvols && r.chance(subvols)) {
      const d = join2(r.pick(dirs), `sv${nsnaps++}`);
      push(['subvol', 'create', d]);
      ids.push(nextId++);
      idOf.set(d, ids.at(-1));
      special.add(d);
      writable.push(d);
      dirs.push(d);
      continue;
    }
    const k = r.int(100);
    const fl = files().filter((p) => !isBulk(p));
    if (bulk && k >= 96 && r.chance(0.5)) {
      if (groups.length === 0 || r.chance(0.5)) {
        const d = `/bulk${groups.length}`;
        const n = r.chance(0.3) ? 800 + r.int(700) : 50 + r.int(300);
        push(['mkdir', d]);
        for (let j = 1; j <= n; j++) model.apply(['create', `${d}/f_${j}`]);
        cmds.push(['create', `${d}/f_{1..${n}}`]);
        groups.push({ d, alive: new Array(n + 1).fill(true) });
      } else {
        const g = r.pick(groups);
        const s = 1 + r.int(g.alive.length - 1);
        let e = s;
        while (e < g.alive.length && g.alive[e] && r.chance(0.995)) e++;
        if (g.alive[s]) {
          for (let j = s; j < e; j++) { model.apply(['unlink', `${g.d}/f_${j}`]); g.alive[j] = false; }
          cmds.push(['unlink', `${g.d}/f_{${s}..${e - 1}}`]);
        }
      }
      continue;
    }
    if (k < 12) {
      const d = join2(r.pick(dirs), fresh());
      push(['mkdir', d]);
      dirs.push(d);
    } else if (k < 30 || fl.length === 0) {
      push(['create', join2(r.pick(dirs), fresh())]);
    } else if (k < 55) {
      const f = r.pick(fl);
      const size = model.lookup(f).data.length;
      const small = r.chance(0.35);
      const len = aligned ? 4096 * (1 + r.int(small ? 1 : maxWrite >> 12)) : small ? 1 + r.int(1500) : 1 + r.int(maxWrite);
      const off = al(r.chance(0.5) ? r.int(size + 1) : r.int(size + 100_000));
      push(['write', f, off, len, 1 + r.int(1000)]);
    } else if (k < 62) {
      const f = r.pick(fl);
      const size = model.lookup(f).data.length;
      if (aligned) push(['commit']);
      push(['truncate', f, al(r.chance(0.6) ? r.int(size + 1) : size + r.int(50_000))]);
    } else if (k < 68) {
      const f = r.pick(fl);
      push(['link', f, join2(r.pick(dirs.filter((d) => svOf(d) === svOf(f))), fresh())]);
    } else if (k < 76) {
      const f = r.pick(fl);
      push(['unlink', f]);
    } else if (k < 84) {
      // rename a file or a directory, sometimes over an existing file
      const paths = allPaths().filter((p) => !isBulk(p) && !holdsSpecial(p));
      if (!paths.length) continue;
      const src = r.pick(paths);
      const node = model.lookup(src);
      const same = fl.filter((f) => svOf(f) === svOf(src));
      let dst;
      if (node.type !== 'dir' && r.chance(0.3) && same.length > 1) {
        dst = r.pick(same);
      } else {
        const candidates = dirs.filter((d) => d !== src && !d.startsWith(src + '/') && svOf(d) === svOf(src));
        dst = join2(r.pick(candidates), fresh());
      }
      push(['rename', src, dst]);
      if (node.type === 'dir') renameDirs(dirs, src, dst);
    } else if (k < 88) {
      const empty = dirs.filter((d) => d !== '/' && !special.has(d) && model.lookup(d).entries.size === 0);
      if (empty.length) {
        const d = r.pick(empty);
        push(['rmdir', d]);
        dirs.splice(dirs.indexOf(d), 1);
      }
    } else if (k < 93) {
      const targets = allPaths().filter((p) => model.lookup(p).type !== 'symlink' && !isBulk(p) && !special.has(p));
      const p = targets.length ? r.pick(targets) : '/';
      push(['setxattr', p, `user.k${r.int(4)}`, `v${r.int(100000)}`]);
    } else if (k < 96) {
      push(['symlink', `/some/where/${fresh()}`, join2(r.pick(dirs), fresh())]);
    } else {
      push(['commit']);
    }
    if (commitEvery && (i + 1) % commitEvery === 0) push(['commit']);
  }
  if (endDropping) {
    // the largest subvolume, a block a batch: its drop stops part way unless its tree is one leaf
    const all = Object.keys(model.snapshot());
    const size = (d) => all.filter((p) => p.startsWith(d + '/')).length;
    const roots = deletable().sort((x, y) => size(y) - size(x) || (x < y ? -1 : 1));
    if (roots.length) {
      push(['set', 'drop_batch=1']);
      deleteSubvol(roots[0], true);
      push(['commit']);
    }
  }
  // the numbers end consistent: a snapshot of a subvolume in a group leaves them inconsistent too
  if (assigned || (related && cmds.findLastIndex((c) => c[0] === 'snapshot') > cmds.findLastIndex((c) => c[0] === 'quota' && c[1] === 'rescan'))) push(['quota', 'rescan']);
  // the root directory's xattrs live on "/" itself: leave them out of paths
  const text = [`mkfs nodesize=${nodesize} size=256M`, ...cmds.map((c) => c.map(String).join(' '))].join('\n') + '\n';
  return { text, cmds, model };
}

/** Whether path p is strictly below directory d. */
const below = (p, d) => (d === '/' ? p !== '/' : p.startsWith(d + '/'));

/** A scenario with fsyncs that ends in a crash. Returns its text, and the
 * fsync promises: paths fsynced and not touched afterwards (no later command
 * names them, a path below them or a directory above them), with what they
 * held at their fsync: a file its contents, a directory its names. */
export function randomFsyncScenario(seed, { ops = 40, mode = 'index-only', nodesize = 4096 } = {}) {
  const r = rng(seed);
  const model = new FsModel();
  const lines = [`mkfs nodesize=${nodesize}`, `set dir_logging=${mode}`];
  const promises = [];
  let renamed = []; // rename targets since the last commit
  const touched = []; // per line: the paths it names
  const dirs = ['/'];
  let counter = 0;
  const fresh = () => `n${counter++}${r.chance(0.15) ? '_' + 'y'.repeat(r.int(40)) : ''}`;
  const join2 = (d, n) => (d === '/' ? `/${n}` : `${d}/${n}`);
  const all = () => Object.keys(model.snapshot());
  const files = () => all().filter((p) => model.lookup(p).type === 'file');
  const fmt = (c) => c.map((x) => (typeof x === 'string' && /[\s"]/.test(x) ? JSON.stringify(x) : String(x))).join(' ');
  const push = (c) => {
    // a path's other names (hard links) are touched along with it
    const node = ['write', 'truncate', 'setxattr', 'unlink', 'link', 'rename'].includes(c[0]) ? model.lookup(c[1]) : null;
    model.apply(c);
    lines.push(fmt(c));
    const names = c.slice(1).filter((x) => typeof x === 'string' && x.startsWith('/'));
    touched[lines.length] = { names, node };
    if (c[0] === 'rename') renamed.push(c[2]);
  };
  // a start state, committed, so that the log has old entries to work against
  const base = 2 + r.int(4);
  for (let i = 0; i < base; i++) { const d = join2('/', fresh()); push(['mkdir', d]); dirs.push(d); }
  for (let i = 0; i < 4 + r.int(20); i++) {
    const f = join2(r.pick(dirs), fresh());
    push(['create', f]);
    if (r.chance(0.6)) push(['write', f, 0, 1 + r.int(r.chance(0.5) ? 3000 : 150_000), 1 + r.int(1000)]);
  }
  lines.push('commit');
  for (let i = 0; i < ops; i++) {
    const k = r.int(100);
    const fl = files();
    if (k < 18) {
      const targets = r.chance(0.55) && fl.length ? fl : dirs;
      const p = r.pick(targets);
      lines.push(fmt(['fsync', p]));
      // fsync keeps a name in its directory; a directory above it renamed since
      // the last commit may come back under its old name
      if (renamed.some((d) => below(p, d))) continue;
      const node = model.lookup(p);
      const snap = model.snapshot();
      const desc = node.type === 'dir'
        ? { names: [...node.entries.keys()].sort() }
        : { size: snap[p].size, sha: snap[p].sha, nlink: node.nlink };
      promises.push({ path: p, at: lines.length, desc });
      continue;
    }
    if (k < 26) { const d = join2(r.pick(dirs), fresh()); push(['mkdir', d]); dirs.push(d); }
    else if (k < 40 || fl.length === 0) push(['create', join2(r.pick(dirs), fresh())]);
    else if (k < 58) {
      const f = r.pick(fl);
      const size = model.lookup(f).data.length;
      const len = 1 + r.int(r.chance(0.4) ? 2000 : 120_000);
      push(['write', f, r.chance(0.6) ? r.int(size + 1) : r.int(size + 50_000), len, 1 + r.int(1000)]);
    } else if (k < 64) {
      const f = r.pick(fl);
      const size = model.lookup(f).data.length;
      push(['truncate', f, r.chance(0.7) ? r.int(size + 1) : size + r.int(30_000)]);
    } else if (k < 70) push(['link', r.pick(fl), join2(r.pick(dirs), fresh())]);
    else if (k < 78) push(['unlink', r.pick(fl)]);
    else if (k < 86) {
      const paths = all();
      const src = r.pick(paths);
      const node = model.lookup(src);
      let dst;
      if (node.type !== 'dir' && r.chance(0.3) && fl.length > 1) dst = r.pick(fl);
      else dst = join2(r.pick(dirs.filter((d) => d !== src && !d.startsWith(src + '/'))), fresh());
      push(['rename', src, dst]);
      if (node.type === 'dir') renameDirs(dirs, src, dst);
    } else if (k < 90) {
      const empty = dirs.filter((d) => d !== '/' && model.lookup(d).entries.size === 0);
      if (empty.length) { const d = r.pick(empty); push(['rmdir', d]); dirs.splice(dirs.indexOf(d), 1); }
    } else if (k < 95) {
      const t = all().filter((p) => model.lookup(p).type !== 'symlink');
      if (t.length) push(['setxattr', r.pick(t), `user.k${r.int(3)}`, `v${r.int(100000)}`]);
    } else if (k < 98) push(['symlink', `/some/where/${fresh()}`, join2(r.pick(dirs), fresh())]);
    else { lines.push('commit'); renamed = []; }
  }
  lines.push('crash');
  // keep the promises nothing later breaks
  const kept = promises.filter((pr) => {
    const node = model.lookup(pr.path);
    for (let i = pr.at + 1; i <= lines.length; i++) {
      const t = touched[i];
      if (!t) continue;
      if (t.node && node && t.node === node) return false;
      for (const n of t.names) {
        if (n === pr.path || below(n, pr.path) || below(pr.path, n)) return false;
      }
    }
    // names in a fsynced directory: none of them touched either (renamed in or out shows as a name below it)
    return true;
  });
  return { text: lines.join('\n') + '\n', promises: kept };
}
