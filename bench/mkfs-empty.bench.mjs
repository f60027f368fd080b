// An empty filesystem: `btrfslab mkfs` against `mkfs.btrfs` on the same
// 1 GiB image file, each result verified by btrfs check; and the WASM
// build's in-memory mkfs against the native CLI's whole run.
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bench, btrfsCheckOk, CLI, median } from './lib.mjs';

export const name = 'mkfs of an empty 1 GiB filesystem (median of 7)';

export async function run({ dir }) {
  const ours = join(dir, 'ours.img');
  const theirs = join(dir, 'theirs.img');
  const n = 7;
  const a = bench(n, null, CLI, ['mkfs', '--size', '1G', ours]);
  btrfsCheckOk(ours);
  const b = bench(n, () => { writeFileSync(theirs, ''); truncateSync(theirs, 1 << 30); }, 'mkfs.btrfs', ['-q', '-f', theirs]);
  btrfsCheckOk(theirs);

  const { default: createBtrfsCore } = await import('../wasm-core/build/wasm/btrfslab-core.mjs');
  const m = await createBtrfsCore({ wasmBinary: readFileSync(fileURLToPath(new URL('../wasm-core/build/wasm/btrfslab-core.wasm', import.meta.url))) });
  const label = m._blab_alloc(1);
  m.HEAPU8[label] = 0;
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const h = m._blab_mkfs(1n << 30n, 16384, label, BigInt(i), 1700000000n);
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
    if (h < 0) throw new Error(m.UTF8ToString(m._blab_last_error()));
    m._blab_close(h);
  }
  return [
    { metric: 'wall time, native CLI vs mkfs.btrfs', unit: 's', ours: a.seconds, peer: b.seconds, peerName: 'mkfs.btrfs' },
    { metric: 'peak memory, native CLI vs mkfs.btrfs', unit: 'MiB', ours: a.rssMiB, peer: b.rssMiB, peerName: 'mkfs.btrfs' },
    { metric: 'WASM mkfs in memory vs native CLI whole run', unit: 's', ours: median(times), peer: a.seconds, peerName: 'btrfslab (native)' },
  ];
}
