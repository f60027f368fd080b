// The core's event trace (wasm-core/src/trace-events.h). The kinds, their
// fields and the enum tables are generated from the C declaration into
// trace-schema.gen.ts; this file parses the core's JSON by that schema, so a
// new kind needs no code here.
import { TRACE_SCHEMA, type FieldType, type Key, type TraceEvent, type TraceKind } from './trace-schema.gen';

export { TRACE_ENUMS, TRACE_SCHEMA } from './trace-schema.gen';
export type { FsyncResult, Key, LockMode, ReplayAction, ReplayPass, TraceEvent, TraceKind } from './trace-schema.gen';

/** The event of one kind. */
export type EventOf<K extends TraceKind> = Extract<TraceEvent, { kind: K }>;

export class TraceParseError extends Error {}

type Spec = { doc: string; fields: readonly (readonly [string, FieldType])[] };
const SCHEMA: Record<string, Spec> = TRACE_SCHEMA;

function u64(v: unknown, where: string): bigint {
  if (typeof v !== 'string' || !/^\d{1,20}$/.test(v)) throw new TraceParseError(`${where}: not a u64 string: ${JSON.stringify(v)}`);
  return BigInt(v);
}

/** (u64)-1 as JSON parses it: the core writes it for "none" in a u32 field (lock_wait's holder when readers hold the lock). */
const U64_MAX_AS_NUMBER = 2 ** 64; // (u64)-1 rounds to it

function num(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new TraceParseError(`${where}: not an integer: ${JSON.stringify(v)}`);
  return v;
}

function field(type: FieldType, v: unknown, where: string): unknown {
  switch (type) {
    case 'u64': return u64(v, where);
    case 'u32': return v === U64_MAX_AS_NUMBER ? -1 : num(v, where); // -1: none
    case 'int': return num(v, where);
    case 'bool':
      if (typeof v !== 'boolean') throw new TraceParseError(`${where}: not a boolean: ${JSON.stringify(v)}`);
      return v;
    case 'key': {
      if (!Array.isArray(v) || v.length !== 3) throw new TraceParseError(`${where}: not a key: ${JSON.stringify(v)}`);
      const key: Key = [u64(v[0], where), num(v[1], where), u64(v[2], where)];
      return key;
    }
    default:
      if (typeof v !== 'string') throw new TraceParseError(`${where}: not an enum name: ${JSON.stringify(v)}`);
      return v;
  }
}

/** One event from its JSON object: seq, kind and the kind's named fields. */
export function parseEvent(r: Record<string, unknown>): TraceEvent {
  const kind = String(r.kind);
  const spec = Object.hasOwn(SCHEMA, kind) ? SCHEMA[kind] : undefined;
  if (!spec) throw new TraceParseError(`unknown trace event kind "${kind}" at seq ${String(r.seq)}`);
  const out: Record<string, unknown> = { seq: num(r.seq, `seq of a ${kind} event`), kind };
  for (const [name, type] of spec.fields) {
    if (!(name in r)) throw new TraceParseError(`${kind} event at seq ${out.seq}: field "${name}" missing`);
    out[name] = field(type, r[name], `${kind} event at seq ${out.seq}, field "${name}"`);
  }
  return out as TraceEvent;
}

/** Converts the core's JSON events (an array) to typed events; unknown kinds are an error. */
export function parseTrace(json: string): TraceEvent[] {
  const raw = JSON.parse(json) as unknown;
  if (!Array.isArray(raw)) throw new TraceParseError('a trace is a JSON array of events');
  return raw.map((r) => parseEvent(r as Record<string, unknown>));
}

/** The sentence the core declares for a kind. */
export function kindDoc(kind: TraceKind): string {
  return TRACE_SCHEMA[kind].doc;
}

/** Counts events by kind. */
export function countByKind(events: TraceEvent[]): Partial<Record<TraceKind, number>> {
  const out: Partial<Record<TraceKind, number>> = {};
  for (const e of events) out[e.kind] = (out[e.kind] ?? 0) + 1;
  return out;
}
