// `btrfslab write` against `dd conv=sparse,fsync` (the peer): the same 1 GiB
// image holding about 130 MB of data (mkfs --rootdir of random files),
// written to the same loop device (over a file in the scratch directory),
// median of 3 each, alternating. Ours includes its checks, the superblocks
// written last and flushed, and its read-back of everything written; dd
// reads the whole image and skips zero blocks. Root only (a loop device).
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, median } from './lib.mjs';

export const name = 'write a 1 GiB image with 130 MB of data to a loop device (median of 3)';

function timed(cmd, args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

export async function run({ dir }) {
  if (process.getuid?.() !== 0) return [];
  const src = join(dir, 'write-src');
  mkdirSync(src, { recursive: true });
  for (let i = 0; i < 26; i++) writeFileSync(join(src, `f${i}`), randomBytes(5 << 20));
  const img = join(dir, 'write.img');
  execFileSync(CLI, ['mkfs', '--rootdir', src, '--size', '1G', img]);
  const back = join(dir, 'write.dev');
  execFileSync('truncate', ['-s', '1G', back]);
  const dev = execFileSync('losetup', ['--find', '--show', back], { encoding: 'utf8' }).trim();
  const ours = [], dd = [];
  try {
    for (let i = 0; i < 3; i++) {
      ours.push(timed(CLI, ['write', '--force', img, dev]));
      dd.push(timed('dd', [`if=${img}`, `of=${dev}`, 'bs=1M', 'conv=sparse,fsync', 'status=none']));
    }
  } finally {
    spawnSync('losetup', ['-d', dev]);
  }
  return [
    { metric: 'write, with checks and read-back, vs dd', unit: 's', ours: median(ours), peer: median(dd), peerName: 'dd conv=sparse,fsync' },
  ];
}
