// The two directory logging modes (seed 001) and the scripts the compare
// view runs in each.
export const MODES = ['legacy', 'index-only'] as const;
export type Mode = (typeof MODES)[number];

/** The script with its directory logging mode set: a set line it has is
 * replaced in place, else one goes after the mkfs line (at is its line). */
export function withMode(script: string, mode: Mode): { text: string; at: number | null } {
  const lines = script.replace(/\n*$/, '').split('\n');
  const set = `set dir_logging=${mode}`;
  const have = lines.findIndex((l) => /^\s*set\s+dir_logging=/.test(l));
  if (have >= 0) {
    lines[have] = set;
    return { text: lines.join('\n') + '\n', at: null };
  }
  const at = /^\s*mkfs\b/.test(lines[0] ?? '') ? 1 : 0;
  lines.splice(at, 0, set);
  return { text: lines.join('\n') + '\n', at: at + 1 };
}

/** The seed's experiment as a scenario: N files, fsync, commit, every (N/D)-th deleted, fsync. */
export function seedScript(n: number, d: number): string {
  const l = ['mkfs size=4G', 'mkdir /testdir', 'commit', `create /testdir/file_{1..${n}}`, 'fsync /testdir', 'commit'];
  for (let i = 1; i <= n; i += n / d) l.push(`unlink /testdir/file_${i}`);
  l.push('fsync /testdir');
  return l.join('\n') + '\n';
}

export const pct = (after: number, before: number) => (100 * (after - before)) / before;
