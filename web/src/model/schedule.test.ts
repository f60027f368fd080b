// Choose mode's script side: the sections of threads as the core reads them,
// the picks as `schedule` lines before a section (the script's own replaced)
// and read back, the picks a section can run, and the threads that can take
// the next turn after some picks.
import { describe, expect, test } from 'vitest';
import { chosenScript, defaultSection, openChoice, pickedCommands, runnableAfter, scriptSchedule, threadSections, validPicks, withSchedule } from './schedule';

const SCRIPT = `mkfs size=256M
mkdir /d
thread A
create /d/a
# a comment inside the block
fsync /d/a
end
schedule B A
commit
B: create /d/b
B: fsync /d/b   # why not
thread A
write /d/a 0 4K
end
commit
thread solo-1.x
sleep 1ms
end
`;

const lines = SCRIPT.split('\n');

describe('sections of threads', () => {
  test('each section with its threads in order of first appearance and their commands by line', () => {
    expect(threadSections(lines)).toEqual([
      { number: 1, first: 3, last: 7, threads: [{ name: 'A', commands: [{ line: 4, text: 'create /d/a' }, { line: 6, text: 'fsync /d/a' }] }] },
      { number: 2, first: 10, last: 14, threads: [
        { name: 'B', commands: [{ line: 10, text: 'create /d/b' }, { line: 11, text: 'fsync /d/b' }] },
        { name: 'A', commands: [{ line: 13, text: 'write /d/a 0 4K' }] },
      ] },
      { number: 3, first: 16, last: 18, threads: [{ name: 'solo-1.x', commands: [{ line: 17, text: 'sleep 1ms' }] }] },
    ]);
    expect(defaultSection(SCRIPT)).toBe(2); // the first with more than one thread
    expect(defaultSection('mkfs\nA: sleep 1ms\n')).toBe(1);
    expect(defaultSection('mkfs\ncreate /a\nfio jobs=2 size=64K bs=64K\n')).toBe(null);
  });

  test("the script's own schedule lines are the section's turns (any since the section before)", () => {
    expect(scriptSchedule(SCRIPT, 2)).toEqual(['B', 'A']);
    expect(scriptSchedule(SCRIPT, 1)).toEqual([]);
    expect(scriptSchedule(SCRIPT, 9)).toEqual([]);
  });
});

describe('picks as schedule lines', () => {
  test("the picks go right before the section, replacing its own schedule lines; other lines stay", () => {
    const r = withSchedule(SCRIPT, { section: 2, picks: ['A', 'B', 'B'] })!;
    const out = r.text.split('\n');
    expect(out.slice(6, 11)).toEqual(['end', 'commit', 'schedule A B B', 'B: create /d/b', 'B: fsync /d/b   # why not']);
    expect(r.first).toBe(10);
    expect(out.length).toBe(lines.length);
    expect(out.filter((l) => l.startsWith('schedule'))).toEqual(['schedule A B B']);
    // no picks: the section's schedule lines go, and the policy decides
    const none = withSchedule(SCRIPT, { section: 2, picks: [] })!;
    expect(none.text.split('\n').length).toBe(lines.length - 1);
    expect(none.first).toBe(9);
    expect(withSchedule(SCRIPT, { section: 4, picks: ['A'] })).toBe(null);
    // only a schedule line parts two sections: without it they would be one
    const joined = 'mkfs\nA: sleep 1ms\n# B next\nschedule B\nB: sleep 1ms\n';
    expect(threadSections(joined.split('\n')).length).toBe(2);
    expect(withSchedule(joined, { section: 2, picks: ['B'] })).toBe(null);
    expect(openChoice(joined, { section: 2, picks: [] })).toBe(null);
    expect(withSchedule(joined, { section: 1, picks: ['A'] })!.text).toBe('mkfs\nschedule A\nA: sleep 1ms\n# B next\nschedule B\nB: sleep 1ms\n');
  });

  test('seven names a line (the core takes seven arguments), in order', () => {
    const picks = ['B', 'A', 'B', 'A', 'A', 'B', 'A', 'A', 'B'];
    const r = withSchedule(SCRIPT, { section: 3, picks })!;
    const out = r.text.split('\n');
    expect(out.slice(r.first - 3, r.first)).toEqual(['schedule B A B A A B A', 'schedule A B', 'thread solo-1.x']);
    expect(scriptSchedule(r.text, 3)).toEqual(picks);
    expect(scriptSchedule(r.text, 2)).toEqual(['B', 'A']); // section 2's own stay
  });

  test('a choice: the base without the schedule lines, the picks it can run; its script reads back the same', () => {
    const c = openChoice(SCRIPT, { section: 2, picks: ['A', 'B', 'Z', 'B'] })!;
    expect(c.picks).toEqual(['A', 'B']);
    expect(c.base).toBe(withSchedule(SCRIPT, { section: 2, picks: [] })!.text);
    const { text, first } = chosenScript(c);
    expect(text.split('\n')[first - 2]).toBe('schedule A B');
    expect(openChoice(text, { section: 2, picks: scriptSchedule(text, 2) })).toEqual(c);
    expect(openChoice(SCRIPT, { section: 7, picks: [] })).toBe(null);
  });
});

describe('turns', () => {
  const sec = threadSections(lines)[1];

  test('the picks a section can run: each a thread of it with a command left', () => {
    expect(validPicks(sec, ['B', 'A', 'B', 'B', 'A'])).toEqual(['B', 'A', 'B']);
    expect(validPicks(sec, ['A', 'A'])).toEqual(['A']);
    expect(validPicks(sec, ['C', 'A'])).toEqual([]);
    expect(validPicks(sec, Array(300).fill('B'))).toEqual(['B', 'B']);
  });

  test('the threads that can take the next turn, each with the command it would start', () => {
    expect(runnableAfter(sec, [])).toEqual([
      { name: 'B', next: { line: 10, text: 'create /d/b' }, index: 0, left: 2 },
      { name: 'A', next: { line: 13, text: 'write /d/a 0 4K' }, index: 0, left: 1 },
    ]);
    expect(runnableAfter(sec, ['B'])).toEqual([
      { name: 'B', next: { line: 11, text: 'fsync /d/b' }, index: 1, left: 1 },
      { name: 'A', next: { line: 13, text: 'write /d/a 0 4K' }, index: 0, left: 1 },
    ]);
    expect(runnableAfter(sec, ['B', 'A']).map((r) => r.name)).toEqual(['B']);
    expect(runnableAfter(sec, ['B', 'A', 'B'])).toEqual([]);
    expect(pickedCommands(sec, ['B', 'A', 'B'])).toEqual([
      { name: 'B', line: 10, text: 'create /d/b' }, { name: 'A', line: 13, text: 'write /d/a 0 4K' }, { name: 'B', line: 11, text: 'fsync /d/b' },
    ]);
  });
});
