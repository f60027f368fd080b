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

  test("choose mode's picks: sched=SECTION:NAMES, readable in the bar, there and back", () => {
    const a: Address = { lesson: '02-fsync-log-tree', step: 10, script: null, crash: null, sched: { section: 2, picks: ['A', 'B', 'A', 'C'] } };
    const q = writeAddress(a);
    expect(q).toBe('lesson=02-fsync-log-tree&step=10&sched=2:A,B,A,C');
    expect(readAddress(`?${q}`, ids)).toEqual(a);
    // names with digits, dots, dashes and underscores; encoded by another tool, the same
    const odd: Address = { lesson: '01-cow-btree', step: 0, script: 'mkfs\n', crash: 4, sched: { section: 12, picks: ['w_1', 'job-2.x', 'w_1'] } };
    expect(readAddress(`?${writeAddress(odd)}`, ids)).toEqual(odd);
    expect(readAddress('?lesson=01-cow-btree&sched=12%3Aw_1%2Cjob-2.x', ids).sched).toEqual({ section: 12, picks: ['w_1', 'job-2.x'] });
    // choose mode with no pick yet
    expect(readAddress('?lesson=01-cow-btree&sched=3:', ids).sched).toEqual({ section: 3, picks: [] });
    expect(writeAddress({ lesson: '01-cow-btree', step: 0, script: null, crash: null, sched: { section: 3, picks: [] } })).toBe('lesson=01-cow-btree&sched=3:');
  });

  test('bad picks in the address are left out, the rest stands', () => {
    const bad = ['0:A', '-1:A', 'x:A', '2', '2:A,,B', '2:A;B', '2:A B', '2:<script>', `2:${'A'.repeat(16)}`, `2:${Array(257).fill('A').join(',')}`, '99999:A', ''];
    for (const v of bad) {
      const a = readAddress(`?lesson=02-fsync-log-tree&step=3&sched=${encodeURIComponent(v)}`, ids);
      expect(a, v).toEqual({ lesson: '02-fsync-log-tree', step: 3, script: null, crash: null });
    }
    expect(readAddress('?view=playground&sched=2:A', ids).sched).toBeUndefined();
    expect(readAddress(`?lesson=01-cow-btree&sched=2:${Array(256).fill('A').join(',')}`, ids).sched?.picks.length).toBe(256);
    // a schedule the page holds that the address cannot: left out
    expect(writeAddress({ lesson: '01-cow-btree', step: 0, script: null, crash: null, sched: { section: 1, picks: ['a b'] } })).toBe('lesson=01-cow-btree');
  });
});
