// What the kernel saw of a state's image (`btrfslab kernel --json`, through
// the companion) beside what the core's own replay of the same image holds:
// the same shape on both sides, and every difference found.

/** One path as `btrfslab kernel --json` lists it (mode: the permission bits). */
export interface FileView {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'fifo' | 'chr' | 'blk' | 'sock';
  mode?: number;
  nlink?: number;
  size?: number;
  sha256?: string;
  target?: string;
}

export interface KernelAnswer {
  image: string;
  kernel: string;
  log_pending: boolean;
  mount: { ok: boolean; error: string | null };
  files: FileView[];
  check: { ok: boolean; output: string };
  ok: boolean;
}

export interface FileDifference {
  path: string;
  /** 'only in the kernel', 'only in the core', or the fields that differ */
  what: string;
  kernel?: FileView;
  core?: FileView;
}

const FIELDS = ['type', 'mode', 'nlink', 'size', 'sha256', 'target'] as const;

/** The paths both sides agree on, and every difference (a field one side does not know, as "/"'s attributes in the core's listing, is not compared). */
export function compareFiles(kernel: FileView[], core: FileView[]): { agree: number; differences: FileDifference[] } {
  const theirs = new Map(kernel.map((f) => [f.path, f]));
  const ours = new Map(core.map((f) => [f.path, f]));
  const differences: FileDifference[] = [];
  let agree = 0;
  for (const path of [...new Set([...theirs.keys(), ...ours.keys()])].sort()) {
    const k = theirs.get(path), c = ours.get(path);
    if (!c) { differences.push({ path, what: 'only in the kernel', kernel: k }); continue; }
    if (!k) { differences.push({ path, what: 'only in the core', core: c }); continue; }
    const bad = FIELDS.filter((f) => k[f] !== undefined && c[f] !== undefined && k[f] !== c[f]);
    if ((k.sha256 === undefined) !== (c.sha256 === undefined) && k.type === 'file' && c.type === 'file') bad.push('sha256');
    if (bad.length) differences.push({ path, what: bad.join(', '), kernel: k, core: c });
    else agree++;
  }
  return { agree, differences };
}

/** A directory entry type (BTRFS_FT_*) as the kernel command names it. */
export function typeOfFt(ft: number): FileView['type'] {
  return (['file', 'file', 'dir', 'chr', 'blk', 'fifo', 'sock', 'symlink'] as const)[ft] ?? 'file';
}
