import { describe, expect, test } from 'vitest';
import { MAX_SCRIPT_IN_ADDRESS, readAddress, writeAddress, type Address } from './address';

const ids = ['01-cow-btree', '02-fsync-log-tree'];

describe('the address bar', () => {
  test('a lesson, its step, the learner\'s scenario and the crash point go there and back', () => {
    const a: Address = { lesson: '02-fsync-log-tree', step: 7, script: 'mkfs nodesize=4K\ncreate /a&b=c #x\n', crash: 5 };
    const q = writeAddress(a);
    expect(q).toMatch(/^lesson=02-fsync-log-tree&step=7&script=mkfs/);
    expect(readAddress(`?${q}`, ids)).toEqual(a);
    expect(writeAddress({ lesson: '01-cow-btree', step: 0, script: null, crash: null })).toBe('lesson=01-cow-btree');
    // a crash point inside a line: after its third write
    const w: Address = { lesson: '02-fsync-log-tree', step: 0, script: null, crash: 9, write: 3 };
    expect(writeAddress(w)).toBe('lesson=02-fsync-log-tree&crash=9.3');
    expect(readAddress('?lesson=02-fsync-log-tree&crash=9.3', ids)).toEqual(w);
    expect(readAddress('?lesson=02-fsync-log-tree&crash=9.x', ids)).toEqual({ lesson: '02-fsync-log-tree', step: 0, script: null, crash: 9 });
  });

  test('the playground; unknown lessons, bad numbers and over-long scripts fall back', () => {
    expect(readAddress('?view=playground&script=x', ids)).toEqual({ lesson: null, step: 0, script: null, crash: null });
    expect(writeAddress({ lesson: null, step: 3, script: 'x', crash: 1 })).toBe('view=playground');
    expect(readAddress('?lesson=nope&step=-2&crash=1e3', ids)).toEqual({ lesson: '01-cow-btree', step: 0, script: null, crash: null });
    const long = 'x'.repeat(MAX_SCRIPT_IN_ADDRESS + 1);
    expect(writeAddress({ lesson: '01-cow-btree', step: 0, script: long, crash: null })).toBe('lesson=01-cow-btree');
    expect(readAddress(`?lesson=01-cow-btree&script=${long}`, ids).script).toBe(null);
  });
});
