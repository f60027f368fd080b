// How a delalloc flush counts its budget (seed 002, "btrfs: shrink delalloc
// pages instead of full inodes"): Linux 5.10 (363990706e20, the regression)
// writes back 2 × to_reclaim / insert(1) whole inodes; 5.11+ and this kernel
// (e076ab2a2ca7, backported to 5.10.y) a budget of pages. The compare view
// runs one scenario in each mode (and on each device) and reads its figures
// from the run's metrics; the seed's untar times pair each kernel with its
// fix.
import type { ScenarioMetrics } from '../core/wasm';
import type { UntarTimeRow } from '../lessons';
import { withSetting } from './scriptSettings';

/** Before the fix first, as the compare view shows them. */
export const SHRINK_MODES = ['inodes', 'pages'] as const;
export type ShrinkModeName = (typeof SHRINK_MODES)[number];

export const SHRINK_LABEL: Record<ShrinkModeName, string> = {
  inodes: '5.10: whole inodes (363990706e20)',
  pages: '5.11+: a budget of pages (e076ab2a2ca7)',
};

/** The devices the compare view runs on: the seed's two machines' kinds, and a disk (where the seed saw no slowdown). */
export const DEVICES = ['nvme', 'ssd', 'hdd'] as const;
export type Device = (typeof DEVICES)[number];

/** The script with every `set shrink_delalloc=` line in one mode (one added after mkfs if it has none), and on one device if asked. */
export function withShrink(script: string, mode: ShrinkModeName, device?: string): string {
  const text = withSetting(script, 'shrink_delalloc', mode).text;
  return device ? withSetting(text, 'device', device).text : text;
}

/** The device the script sets last (the core's default, nvme, when it sets none). */
export function scriptDevice(script: string): string {
  let device = 'nvme';
  for (const l of script.split('\n')) {
    const m = /^\s*set\s+device=(\S+)/.exec(l);
    if (m) device = m[1];
  }
  return device;
}

/** The devices the compare view runs on: the script's first, then the others. */
export function compareDevices(script: string): string[] {
  const own = scriptDevice(script);
  return [own, ...DEVICES.filter((d) => d !== own)];
}

/** A run's figures in one mode. */
export interface ReclaimFigures {
  /** The untars' time (writing, then their syncfs), or the whole run's simulated time when it has no untar (ns). */
  untarNs: number;
  files: number;
  tickets: number;
  ticketsFailed: number;
  ticketWaitNs: number;
  /** Delalloc flushes (shrink_delalloc passes), their median budget (pages or inodes), and what they wrote. */
  passes: number;
  budgetP50: number;
  pages: number;
  inodes: number;
}

export function reclaimFigures(m: ScenarioMetrics): ReclaimFigures {
  const t = m.timed;
  const r = t?.reclaim;
  const u = t?.untar;
  return {
    untarNs: u ? u.writeNs + u.syncNs : t?.virtualNs ?? 0,
    files: u?.files ?? 0,
    tickets: r?.tickets ?? 0,
    ticketsFailed: r?.ticketsFailed ?? 0,
    ticketWaitNs: r?.ticketWaitNs ?? 0,
    passes: r?.shrink.calls ?? 0,
    budgetP50: r?.shrink.budgetP50 ?? 0,
    pages: r?.shrink.pages ?? 0,
    inodes: r?.shrink.inodes ?? 0,
  };
}

/** Pages a delalloc flush wrote, on average. */
export const pagesPerPass = (f: ReclaimFigures) => (f.passes ? f.pages / f.passes : 0);

/** How many times longer before the fix than after (0 when either is unknown). */
export const slowdown = (before: number, after: number) => (before > 0 && after > 0 ? before / after : 0);

/** The seed's kernels paired with their fix: each row without it whose shrink is by inodes, and the same machine and kernel with it. */
export function seedPairs(table: readonly UntarTimeRow[]): { machine: string; kernel: string; before: number; after: number }[] {
  return table.filter((r) => !r.fix && r.shrink === 'inodes').flatMap((r) => {
    const fixed = table.find((f) => f.fix && f.machine === r.machine && f.kernel === r.kernel);
    return fixed ? [{ machine: r.machine, kernel: r.kernel, before: r.seconds, after: fixed.seconds }] : [];
  });
}
