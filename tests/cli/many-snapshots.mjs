// The script of many snapshots with quotas, shared by the CLI test
// (many-snapshots.test.mjs) and the kernel's (tests/kernel/many-snapshots.test.mjs):
// 300 files, quotas on, then per snapshot i: `snapshot / /si`, a write of
// written(i) bytes into /si/d/f(i+2) (a file empty until then), a commit.

/** Bytes written into snapshot i. */
export const written = (i) => 4096 * (1 + (i % 3));

/** The scenario text: n snapshots, then the extra lines. */
export function manySnapshots(n, extra = [], { nodesize = '4K' } = {}) {
  const l = [`mkfs nodesize=${nodesize} size=512M`, 'mkdir /d', 'create /d/f{1..300}', 'write /d/f1 0 200000 1', 'write /d/f2 0 30000 2', 'commit', 'quota enable'];
  for (let i = 1; i <= n; i++) l.push(`snapshot / /s${i}`, `write /s${i}/d/f${i + 2} 0 ${written(i)} ${i + 10}`, 'commit');
  return [...l, ...extra].join('\n') + '\n';
}
