// The core's event trace (wasm-core/src/trace.h) as a discriminated union.

export type TraceKind =
  | 'op'
  | 'trans_start'
  | 'chunk_alloc'
  | 'block_alloc'
  | 'block_free'
  | 'cow'
  | 'search'
  | 'item_insert'
  | 'item_delete'
  | 'split'
  | 'merge'
  | 'push'
  | 'root_grow'
  | 'root_shrink'
  | 'block_write'
  | 'super_write'
  | 'commit'
  | 'fsync'
  | 'log_start'
  | 'log_inode'
  | 'log_lock'
  | 'log_copy'
  | 'log_range'
  | 'log_sync'
  | 'replay';

/** Why an fsync committed instead of logging (tree-log.h, enum btrfs_log_fallback). */
export const FSYNC_RESULTS = ['logged', 'full commit: new chunk', 'full commit: directory lost a name to a rename',
  'full commit: file renamed or unlinked', 'nothing to log'] as const;
/** Replay passes (tree-log.h, enum btrfs_replay_pass). */
export const REPLAY_PASSES = ['pin', 'inodes', 'dir index', 'all', 'fixup'] as const;
/** Replay actions (tree-log.h, enum btrfs_replay_action). */
export const REPLAY_ACTIONS = ['pin block', 'pin data', 'inode new', 'inode overwrite', 'inode keep', 'xattr delete',
  'dir delete', 'truncate', 'unlink conflict', 'link present', 'link later', 'link no inode', 'link add',
  'unlink old ref', 'xattr set', 'extent present', 'hole', 'extent', 'csum', 'counts', 'evict'] as const;

interface Base {
  seq: number;
  tree: bigint;
}
export type TraceEvent =
  | (Base & { kind: 'op'; line: number })
  | (Base & { kind: 'trans_start'; generation: bigint })
  | (Base & { kind: 'chunk_alloc'; logical: bigint; length: bigint; type: bigint; physical: bigint })
  | (Base & { kind: 'block_alloc'; bytenr: bigint; level: number; generation: bigint })
  | (Base & { kind: 'block_free'; bytenr: bigint })
  | (Base & { kind: 'cow'; from: bigint; to: bigint; level: number; generation: bigint })
  | (Base & { kind: 'search'; bytenr: bigint; level: number; slot: number; key: [bigint, number, bigint]; found: boolean })
  | (Base & { kind: 'item_insert'; bytenr: bigint; slot: number; key: [bigint, number, bigint]; size: number })
  | (Base & { kind: 'item_delete'; bytenr: bigint; slot: number; key: [bigint, number, bigint] })
  | (Base & { kind: 'split'; left: bigint; right: bigint; level: number; slot: number })
  | (Base & { kind: 'merge'; into: bigint; from: bigint; level: number })
  | (Base & { kind: 'push'; to: bigint; from: bigint; level: number; moved: number })
  | (Base & { kind: 'root_grow'; bytenr: bigint; level: number })
  | (Base & { kind: 'root_shrink'; bytenr: bigint; level: number })
  | (Base & { kind: 'block_write'; bytenr: bigint; physical: bigint; level: number; generation: bigint })
  | (Base & { kind: 'super_write'; physical: bigint; generation: bigint; mirror: number })
  | (Base & { kind: 'commit'; generation: bigint; rootBytenr: bigint })
  | (Base & { kind: 'fsync'; ino: bigint; result: string })
  | (Base & { kind: 'log_start'; logRoot: bigint; logRootTree: bigint; generation: bigint })
  | (Base & { kind: 'log_inode'; ino: bigint; existsOnly: boolean })
  | (Base & { kind: 'log_lock'; bytenr: bigint; generation: bigint })
  | (Base & { kind: 'log_copy'; from: bigint; to: bigint; slot: number; key: [bigint, number, bigint]; size: number })
  | (Base & { kind: 'log_range'; key: [bigint, number, bigint]; last: bigint })
  | (Base & { kind: 'log_sync'; logRootTree: bigint; logRoot: bigint; generation: bigint })
  | (Base & { kind: 'replay'; pass: string; action: string; key: [bigint, number, bigint]; a: bigint; b: bigint; c: bigint });

interface RawEvent {
  seq: number;
  kind: string;
  tree: string;
  bytenr: string;
  level: number;
  slot: number;
  key: [string, number, string];
  a: string;
  b: string;
  c: string;
}

export class TraceParseError extends Error {}

/** Converts the core's JSON events to typed events; unknown kinds are an error. */
export function parseTrace(json: string): TraceEvent[] {
  const raw = JSON.parse(json) as RawEvent[];
  return raw.map((r) => {
    const base = { seq: r.seq, tree: BigInt(r.tree) };
    const bytenr = BigInt(r.bytenr);
    const a = BigInt(r.a);
    const b = BigInt(r.b);
    const key: [bigint, number, bigint] = [BigInt(r.key[0]), r.key[1], BigInt(r.key[2])];
    switch (r.kind) {
      case 'op': return { ...base, kind: r.kind, line: r.slot };
      case 'trans_start': return { ...base, kind: r.kind, generation: a };
      case 'chunk_alloc': return { ...base, kind: r.kind, logical: bytenr, length: a, type: b, physical: BigInt(r.c) };
      case 'block_alloc': return { ...base, kind: r.kind, bytenr, level: r.level, generation: a };
      case 'block_free': return { ...base, kind: r.kind, bytenr };
      case 'cow': return { ...base, kind: r.kind, from: bytenr, to: a, level: r.level, generation: b };
      case 'search': return { ...base, kind: r.kind, bytenr, level: r.level, slot: r.slot, key, found: a === 1n };
      case 'item_insert': return { ...base, kind: r.kind, bytenr, slot: r.slot, key, size: Number(a) };
      case 'item_delete': return { ...base, kind: r.kind, bytenr, slot: r.slot, key };
      case 'split': return { ...base, kind: r.kind, left: bytenr, right: a, level: r.level, slot: r.slot };
      case 'merge': return { ...base, kind: r.kind, into: bytenr, from: a, level: r.level };
      case 'push': return { ...base, kind: r.kind, to: bytenr, from: a, level: r.level, moved: r.slot };
      case 'root_grow': return { ...base, kind: r.kind, bytenr, level: r.level };
      case 'root_shrink': return { ...base, kind: r.kind, bytenr, level: r.level };
      case 'block_write': return { ...base, kind: r.kind, bytenr, physical: a, level: r.level, generation: b };
      case 'super_write': return { ...base, kind: r.kind, physical: bytenr, generation: a, mirror: Number(b) };
      case 'commit': return { ...base, kind: r.kind, generation: a, rootBytenr: b };
      case 'fsync': return { ...base, kind: r.kind, ino: a, result: FSYNC_RESULTS[Number(b)] ?? `result ${b}` };
      case 'log_start': return { ...base, kind: r.kind, logRoot: bytenr, logRootTree: a, generation: b };
      case 'log_inode': return { ...base, kind: r.kind, ino: a, existsOnly: b === 1n };
      case 'log_lock': return { ...base, kind: r.kind, bytenr, generation: a };
      case 'log_copy': return { ...base, kind: r.kind, from: bytenr, to: a, slot: r.slot, key, size: Number(b) };
      case 'log_range': return { ...base, kind: r.kind, key, last: a };
      case 'log_sync': return { ...base, kind: r.kind, logRootTree: bytenr, logRoot: a, generation: b };
      case 'replay':
        return { ...base, kind: r.kind, pass: REPLAY_PASSES[r.slot] ?? `pass ${r.slot}`,
          action: REPLAY_ACTIONS[r.level] ?? `action ${r.level}`, key, a, b, c: BigInt(r.c) };
      default: throw new TraceParseError(`unknown trace event kind "${r.kind}" at seq ${r.seq}`);
    }
  });
}

/** Counts events by kind. */
export function countByKind(events: TraceEvent[]): Partial<Record<TraceKind, number>> {
  const out: Partial<Record<TraceKind, number>> = {};
  for (const e of events) out[e.kind] = (out[e.kind] ?? 0) + 1;
  return out;
}
