// The one trace schema: the kinds declared in wasm-core/src/trace-events.h,
// as the WASM core and the native CLI print them, are what the checked-in
// trace-schema.gen.ts says (the test fails when the generated file is stale),
// and every event the core writes carries exactly its kind's named fields.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
// @ts-expect-error: a plain ES module script without types
import { GENERATED, renderTraceTypes } from '../../../scripts/gen-trace-types.mjs';
import { TRACE_SCHEMA, parseTrace, type TraceKind } from '../model/trace';
import { describeEvent, hasSentence } from '../views/sentences';
import createBtrfsCore from './generated/btrfslab-core.mjs';
import { Core } from './wasm';

const wasmPath = fileURLToPath(new URL('./generated/btrfslab-core.wasm', import.meta.url));
const cliPath = fileURLToPath(new URL('../../../wasm-core/build/btrfslab', import.meta.url));
let core: Core;

beforeAll(async () => {
  core = Core.fromModule(await createBtrfsCore({ wasmBinary: readFileSync(wasmPath) }));
});

const RUN = { seed: 7n, now: 1700000000n, trace: true };
// touches every kind the core emits today: chunks, COW, splits, pushes,
// merges, root grow and shrink, the log tree, fsync fallbacks, a crash
const SCRIPT = `mkfs nodesize=4K
mkdir /d
create /d/f_{1..120}
write /d/f_7 0 9000
fsync /d/f_7
unlink /d/f_{1..110}
rename /d/f_120 /d/g
fsync /d/g
commit
fsync /d/f_115
create /d/h
fsync /d/h
crash
`;

describe('trace schema', () => {
  test('the generated TypeScript is current (run node scripts/gen-trace-types.mjs if not)', () => {
    const schema = core.traceSchema();
    expect(readFileSync(GENERATED, 'utf8')).toBe(renderTraceTypes(schema));
    const native = JSON.parse(execFileSync(cliPath, ['trace-schema'], { encoding: 'utf8' }));
    expect(native).toEqual(schema);
  });

  test('every event carries exactly its kind\'s fields, and each kind has a sentence', () => {
    const h = core.run(SCRIPT, RUN);
    const raw = JSON.parse(core.traceJson(h)) as Record<string, unknown>[];
    const events = core.trace(h);
    const img = core.imageBytes(h);
    core.close(h);
    const seen = new Set<string>();
    for (const r of raw) {
      const spec = TRACE_SCHEMA[r.kind as TraceKind];
      expect(spec, `kind ${String(r.kind)}`).toBeDefined();
      expect(Object.keys(r)).toEqual(['seq', 'kind', ...spec.fields.map(([n]) => n)]);
      seen.add(String(r.kind));
    }
    // a replay of the crashed image's log: replay events
    const r = core.open(img);
    core.replay(r);
    const replay = core.trace(r);
    core.close(r);
    for (const e of replay) seen.add(e.kind);
    const emitted = ['op', 'trans_start', 'chunk_alloc', 'block_alloc', 'block_free', 'cow', 'search', 'item_insert',
      'item_delete', 'split', 'push', 'root_grow', 'block_write', 'super_write', 'commit', 'fsync', 'log_start',
      'log_inode', 'log_lock', 'log_copy', 'log_sync', 'replay'];
    for (const k of emitted) expect(seen, k).toContain(k);
    for (const e of [...events, ...replay]) {
      const s = describeEvent(e);
      expect(s.length).toBeGreaterThan(0);
      expect(s).not.toMatch(/undefined|NaN|\[object/);
    }
    expect(events.filter((e) => e.kind === 'fsync').map((e) => e.kind === 'fsync' && e.result))
      .toContain('full commit: file renamed or unlinked');
  });

  test('a timed run: every kind it emits carries exactly its fields, each with a sentence of its view', () => {
    const h = core.run(`mkfs size=256M
create /a
create /b
commit
thread A
write /a 0 64K
fsync /a
end
B: write /b 0 10
B: fsync /b
fio jobs=2 size=128K bs=64K fsync=1 rw=write
crash
`, RUN);
    const json = core.traceJson(h);
    core.close(h);
    const raw = JSON.parse(json) as Record<string, unknown>[];
    const seen = new Set<string>();
    for (const r of raw) {
      const spec = TRACE_SCHEMA[r.kind as TraceKind];
      expect(Object.keys(r)).toEqual(['seq', 'kind', ...spec.fields.map(([n]) => n)]); // one key each: none is named seq or kind
      seen.add(String(r.kind));
    }
    const timed: TraceKind[] = ['task_new', 'task_op', 'task_op_end', 'task_cpu', 'task_wait', 'task_wake', 'bio_submit', 'bio_done',
      'page_dirty', 'ordered_add', 'ordered_io_done', 'ordered_logged', 'ordered_finish', 'lock_wait', 'lock_acquire', 'lock_release'];
    for (const k of timed) {
      expect(seen, k).toContain(k);
      expect(hasSentence(k), `${k} has a sentence beside its view`).toBe(true);
    }
    expect(hasSentence('write_inline')).toBe(true);
    for (const e of parseTrace(json)) expect(describeEvent(e)).not.toMatch(/undefined|NaN|\[object|#\d/);
    // a lock readers hold: its holder crosses as (u64)-1 in a u32 field, read as -1
    expect(parseTrace(JSON.stringify([{ seq: 0, kind: 'lock_wait', tree: '5', bytenr: '0', level: 0, task: 3, mode: 'write', holder: 18446744073709551615, atNs: '0' }])).map(describeEvent))
      .toEqual(['Task 3 waits to write-lock the fs tree, held by readers']);
  });

  test('the lock and task kinds parse and read as sentences (the locking lesson emits them)', () => {
    const ev = parseTrace(JSON.stringify([
      { seq: 0, kind: 'lock_wait', tree: '5', bytenr: '30408704', level: 1, task: 2, mode: 'write', holder: 1, atNs: '0' },
      { seq: 1, kind: 'task_switch', from: 2, to: 1, atNs: '1000' },
      { seq: 2, kind: 'lock_release', tree: '5', bytenr: '30408704', level: 1, task: 1, mode: 'read', atNs: '1000' },
      { seq: 3, kind: 'lock_acquire', tree: '5', bytenr: '30408704', level: 1, task: 2, mode: 'write', waitNs: '4000', atNs: '4000' },
    ]));
    expect(ev.map(describeEvent)).toEqual([
      'Task 2 waits to write-lock node (level 1) 30408704 of the fs tree, held by task 1',
      'The CPU switches from task 2 to task 1 at 1000 ns',
      'Task 1 releases its read lock on node (level 1) 30408704 of the fs tree',
      'Task 2 write-locks node (level 1) 30408704 of the fs tree after waiting 4000 ns',
    ]);
  });
});
