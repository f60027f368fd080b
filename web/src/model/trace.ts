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
  | 'commit';

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
  | (Base & { kind: 'commit'; generation: bigint; rootBytenr: bigint });

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
