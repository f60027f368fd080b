// A scenario script with one `set KEY=` setting forced to a value throughout:
// the compare views run one script in each mode of a seed's change.

/**
 * Each `set KEY=` line is set to value in place (line numbers stay), else one
 * goes after the mkfs line (at: its 1-based line, later lines one further
 * down; null when no line was added).
 */
export function withSetting(script: string, key: string, value: string): { text: string; at: number | null } {
  const lines = script.replace(/\n*$/, '').split('\n');
  const set = `set ${key}=${value}`;
  const line = new RegExp(`^\\s*set\\s+${key}=`);
  let have = false;
  const out = lines.map((l) => {
    if (!line.test(l)) return l;
    have = true;
    return set;
  });
  if (have) return { text: out.join('\n') + '\n', at: null };
  const at = /^\s*mkfs\b/.test(lines[0] ?? '') ? 1 : 0;
  out.splice(at, 0, set);
  return { text: out.join('\n') + '\n', at: at + 1 };
}
