// What a fast fsync waits for (seed 003, "btrfs: make fast fsyncs wait only
// for writeback", Linux 5.10): before the change its ordered extents'
// completion, since then the writeback of its pages. The compare view runs
// one scenario in each mode, and the seed's fio experiment at small sizes.
import { withSetting } from './scriptSettings';

export const FSYNC_WAITS = ['ordered', 'writeback'] as const;
export type FsyncWait = (typeof FSYNC_WAITS)[number];

export const FSYNC_WAIT_LABEL: Record<FsyncWait, string> = {
  ordered: 'Before 5.10: fsync waits for its ordered extents to complete',
  writeback: 'Since 5.10: fsync waits for writeback only',
};

/** The script in one mode throughout (scriptSettings.ts). */
export function withFsyncWait(script: string, mode: FsyncWait): { text: string; at: number | null } {
  return withSetting(script, 'fsync_wait', mode);
}

/** A row of seed 003's published fio table: MiB/s before and after the change. */
export interface FioRow {
  jobs: number;
  rw: 'write' | 'randwrite';
  /** Block size as fio writes it ("64K"). */
  bs: string;
  /** fsync after this many writes. */
  fsync: number;
  before: number;
  after: number;
  /** The change the seed prints, in percent. */
  change: number;
}

const BYTES: Record<string, number> = { K: 1 << 10, M: 1 << 20, G: 1 << 30 };

/** "64K" → 65536. */
export function parseSize(s: string): number {
  const m = /^(\d+)([KMG]?)$/i.exec(s.trim());
  if (!m) throw new Error(`not a size: ${s}`);
  return Number(m[1]) * (m[2] ? BYTES[m[2].toUpperCase()] : 1);
}

/**
 * The seed's fio job as a scenario, at a small size: `total` bytes in all
 * (each job a share, whole blocks), on the seed's NVMe device, in one mode,
 * with the space reservations of the seed's kernel (5.10).
 */
export function fioScript(row: Pick<FioRow, 'jobs' | 'rw' | 'bs' | 'fsync'>, mode: FsyncWait, total: number): string {
  const bs = parseSize(row.bs);
  const per = Math.max(bs, Math.floor(total / row.jobs / bs) * bs);
  return ['mkfs size=1G', 'set device=nvme', `set fsync_wait=${mode}`, 'set space_rules=5.10',
    `fio jobs=${row.jobs} size=${per / 1024}K bs=${row.bs} fsync=${row.fsync} rw=${row.rw}`].join('\n') + '\n';
}

/** Percent change from before to after. */
export const change = (before: number, after: number) => (100 * (after - before)) / before;
