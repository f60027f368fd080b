import { describe, expect, test } from 'vitest';
import { blockHeadline, parseTreeDump } from './dump';
import { formatBytes, initialState, parseSize, reduce } from './store';
import { countByKind, parseTrace, TraceParseError } from './trace';

const DUMP = JSON.stringify({
  nodesize: 16384,
  generation: '7',
  total_bytes: '18446744073709551615',
  bytes_used: '147456',
  trees: [
    {
      id: '18446744073709551607', name: 'data reloc', owner: 'DATA_RELOC_TREE',
      blocks: [
        { bytenr: '30867456', level: 1, generation: '7', owner: '5', nritems: 1, free: 492,
          items: [{ key: ['256', 1, '0'], text: '256 INODE_ITEM 0', blockptr: '9007199254740993', gen: '6' }] },
        { bytenr: '9007199254740993', level: 0, generation: '6', owner: '5', nritems: 1, free: 16000,
          items: [{ key: ['256', 1, '0'], text: '256 INODE_ITEM 0', offset: 16123, size: 160, summary: 'mode 40755', body: '\t\tgeneration 1\n' }] },
      ],
    },
  ],
});

describe('tree dump', () => {
  test('keeps every 64-bit value exact', () => {
    const d = parseTreeDump(DUMP);
    expect(d.totalBytes).toBe(18446744073709551615n);
    expect(d.trees[0].id).toBe(18446744073709551607n);
    const ptr = d.trees[0].blocks[0].entries[0];
    expect(ptr.kind).toBe('ptr');
    if (ptr.kind === 'ptr') expect(ptr.blockptr).toBe(9007199254740993n);
    const item = d.trees[0].blocks[1].entries[0];
    expect(item).toMatchObject({ kind: 'item', offset: 16123, size: 160, summary: 'mode 40755', body: '\t\tgeneration 1\n' });
  });

  test('block headlines read like dump-tree', () => {
    const d = parseTreeDump(DUMP);
    expect(blockHeadline(d.trees[0].blocks[1])).toBe('leaf 9007199254740993 items 1 free space 16000 generation 6');
    expect(blockHeadline(d.trees[0].blocks[0])).toBe('node level 1 30867456 items 1 free space 492 generation 7');
  });
});

describe('trace', () => {
  test('becomes typed events by the schema: u64 as bigint, keys, booleans, enum names', () => {
    const ev = parseTrace(JSON.stringify([
      { seq: 0, kind: 'cow', tree: '5', from: '100', to: '200', level: 0, generation: '9', fromGeneration: '8' },
      { seq: 1, kind: 'search', tree: '5', bytenr: '100', level: 0, slot: 2, key: ['256', 1, '0'], found: true },
      { seq: 2, kind: 'commit', generation: '9', rootBytenr: '18446744073709551615' },
      { seq: 3, kind: 'replay', tree: '5', pass: 'dir index', action: 'link add', key: ['257', 96, '2'], a: '256', b: '257', c: '2' },
    ]));
    expect(ev[0]).toEqual({ seq: 0, kind: 'cow', tree: 5n, from: 100n, to: 200n, level: 0, generation: 9n, fromGeneration: 8n });
    expect(ev[1]).toMatchObject({ kind: 'search', found: true, key: [256n, 1, 0n] });
    expect(ev[2]).toMatchObject({ kind: 'commit', rootBytenr: 18446744073709551615n });
    expect(ev[3]).toMatchObject({ kind: 'replay', pass: 'dir index', action: 'link add', c: 2n });
    expect(countByKind(ev)).toEqual({ cow: 1, search: 1, commit: 1, replay: 1 });
  });
  test('an unknown kind, a missing field or a field of the wrong type is an error naming it', () => {
    expect(() => parseTrace(JSON.stringify([{ seq: 0, kind: 'teleport' }]))).toThrow(/unknown trace event kind "teleport"/);
    expect(() => parseTrace(JSON.stringify([{ seq: 4, kind: 'block_free', tree: '5' }]))).toThrow(/block_free event at seq 4: field "bytenr" missing/);
    expect(() => parseTrace(JSON.stringify([{ seq: 5, kind: 'block_free', tree: '5', bytenr: 7 }]))).toThrow(/field "bytenr": not a u64 string/);
    expect(() => parseTrace(JSON.stringify([{ seq: 6, kind: 'toString' }]))).toThrow(TraceParseError);
    expect(() => parseTrace('{}')).toThrow(TraceParseError);
  });
});

describe('store', () => {
  test('sizes people type', () => {
    expect(parseSize('128M')).toBe(134217728n);
    expect(parseSize(' 1 GiB ')).toBe(1073741824n);
    expect(parseSize('65536')).toBe(65536n);
    expect(parseSize('12Q')).toBeNull();
    expect(parseSize('')).toBeNull();
    expect(formatBytes(134217728n)).toBe('128 MiB');
    expect(formatBytes(1000n)).toBe('1000 B');
  });
  test('reducer: busy, failed, loaded', () => {
    let s = reduce(initialState, { type: 'idle' });
    expect(s.busy).toBeNull();
    s = reduce(s, { type: 'busy', what: 'x' });
    s = reduce(s, { type: 'failed', message: 'ECORRUPT: bad' });
    expect(s).toMatchObject({ busy: null, error: 'ECORRUPT: bad' });
    s = reduce(s, { type: 'busy', what: 'y' });
    expect(s.error).toBeNull();
  });
});
