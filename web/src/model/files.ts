// Walking an image's directories one level at a time, as a person clicks:
// the path is the list of (name, inode) taken from the root. An image is
// hostile until shown otherwise, so a name that cannot be a path component
// and a directory already on the path (a cycle) are refused here, before
// the core is asked to resolve anything.
import type { TreeDump } from './dump';

export const ROOT_INO = 256n;

export interface PathStep {
  name: string;
  ino: bigint;
}

/** The absolute path of the steps: "/" for none. */
export function pathOf(steps: PathStep[]): string {
  return '/' + steps.map((s) => s.name).join('/');
}

/** Why name cannot be one component of a path, or null when it can. */
export function badName(name: string): string | null {
  if (name === '' || name === '.' || name === '..') return `a directory entry named "${visibleName(name)}"`;
  if (name.includes('/')) return `a name with "/" in it ("${visibleName(name)}")`;
  if (name.includes('\0')) return `a name with a NUL byte in it ("${visibleName(name)}")`;
  return null;
}

/**
 * Where entering directory (name, ino) from the steps leads, or the problem
 * that stops it: a bad name, or an inode already on the path (a directory
 * has one name, so reaching it again is a cycle).
 */
export function enter(steps: PathStep[], name: string, ino: bigint): { steps: PathStep[] } | { problem: string } {
  const where = `${pathOf(steps).replace(/\/$/, '')}/${visibleName(name)}`;
  const bad = badName(name);
  if (bad) return { problem: `${pathOf(steps)}: corrupt: ${bad}` };
  if (ino === ROOT_INO || steps.some((s) => s.ino === ino)) {
    return { problem: `${where}: corrupt: directory inode ${ino} is reached a second time (a directory has one name): a cycle` };
  }
  return { steps: [...steps, { name, ino }] };
}

/** A name as text that cannot act on the page or a terminal: control characters as \xNN. */
export function visibleName(name: string): string {
  // eslint-disable-next-line no-control-regex
  return name.replace(/[\x00-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** ls -l's mode string: drwxr-xr-x. */
export function modeString(mode: number): string {
  const kind = { 0o01: 'p', 0o02: 'c', 0o04: 'd', 0o06: 'b', 0o10: '-', 0o12: 'l', 0o14: 's' }[(mode >> 12) & 0o17] ?? '?';
  let s = kind;
  for (let shift = 6; shift >= 0; shift -= 3) {
    const b = (mode >> shift) & 7;
    s += (b & 4 ? 'r' : '-') + (b & 2 ? 'w' : '-') + (b & 1 ? 'x' : '-');
  }
  const special = (i: number, bit: number, on: string, off: string) => {
    if (mode & bit) s = s.slice(0, i) + (s[i] === 'x' ? on : off) + s.slice(i + 1);
  };
  special(3, 0o4000, 's', 'S');
  special(6, 0o2000, 's', 'S');
  special(9, 0o1000, 't', 'T');
  return s;
}

const INODE_REF = 12; // BTRFS_INODE_REF_KEY

/**
 * Each inode's path, from the INODE_REF items (key: inode, INODE_REF, parent
 * directory; summary "index N name X") of the dumps' fs and log trees, the
 * later dumps' names winning: "/a" for 257 when /a is inode 257. Inodes whose
 * chain of parents does not reach the root (a leaf folded out of the dump, a
 * hostile cycle) have no path. Bounded: each chain at most 256 names deep.
 */
export function inodePaths(dumps: TreeDump[]): Map<bigint, string> {
  const ref = new Map<bigint, { parent: bigint; name: string }>();
  for (const d of dumps) for (const t of d.trees) {
    if (t.id !== 5n && t.id !== 0xfffffffffffffffan) continue; // the fs tree and the log tree
    for (const b of t.blocks) for (const e of b.entries) {
      if (e.kind !== 'item' || e.key.type !== INODE_REF) continue;
      const m = /^index \d+ name (.*)$/s.exec(e.summary);
      if (m) ref.set(e.key.objectid, { parent: e.key.offset, name: visibleName(m[1]) });
    }
  }
  const out = new Map<bigint, string>([[ROOT_INO, '/']]);
  for (const ino of ref.keys()) {
    const names: string[] = [];
    let at: bigint | undefined = ino;
    while (at !== undefined && at !== ROOT_INO && names.length < 256) {
      const r = ref.get(at);
      if (!r || r.parent === at) at = undefined;
      else {
        names.unshift(r.name);
        at = r.parent;
      }
    }
    if (at === ROOT_INO) out.set(ino, '/' + names.join('/'));
  }
  return out;
}

/** An inode as a sentence names it: "257 (/a)" when its path is known, else "257". */
export function inodeWithPath(ino: bigint, paths?: Map<bigint, string>): string {
  const p = paths?.get(ino);
  return p ? `${ino} (${p})` : `${ino}`;
}
