// Crash points inside lines: a power cut can come after any tree block or
// superblock copy the run writes (wasm-core/src/crash.h), not only after a
// whole line. Found from a run's steps (in the worker, where the events are)
// by the block_write and super_write events after mkfs; their seqs are the
// run's, so the core can stop at one (blab_session_crash_event).
import type { Step } from './steps';
import { blockWhat, treeName } from './names';

export interface CrashPoint {
  /** 0, 1, ... in the order the writes happen. */
  index: number;
  seq: number;
  /** The script line running (the final commit: the script's line count + 1). */
  line: number;
  final: boolean;
  kind: 'block_write' | 'super_write';
  /** block: its tree; superblock copy: undefined */
  tree?: bigint;
  /** block: logical address; superblock copy: its offset on the device */
  bytenr: bigint;
  level?: number;
  generation: bigint;
  mirror?: number;
}

/** The crash points of a run's steps (the first step, mkfs's, has none: there is no filesystem before it ends). */
export function crashPointsOf(steps: Step[], lineCount: number): CrashPoint[] {
  const out: CrashPoint[] = [];
  for (const s of steps) {
    if (s.index === 0) continue;
    const line = s.final ? lineCount + 1 : s.line;
    for (const e of s.events) {
      if (e.kind === 'block_write') {
        out.push({ index: out.length, seq: e.seq, line, final: !!s.final, kind: e.kind, tree: e.tree, bytenr: e.bytenr, level: e.level, generation: e.generation });
      } else if (e.kind === 'super_write') {
        out.push({ index: out.length, seq: e.seq, line, final: !!s.final, kind: e.kind, bytenr: e.physical, generation: e.generation, mirror: e.mirror });
      }
    }
  }
  return out;
}

/** "after writing a log tree leaf 30425088 (generation 9)" */
export function describeCrashPoint(p: CrashPoint): string {
  if (p.kind === 'super_write') return `after writing superblock copy ${p.mirror} (generation ${p.generation}${p.mirror === 0 ? ': the one a mount reads' : ''})`;
  return `after writing a ${treeName(p.tree ?? 0n)} ${blockWhat(p.level ?? 0)} ${p.bytenr} (generation ${p.generation})`;
}
