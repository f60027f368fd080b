import { describe, expect, test } from 'vitest';
import { LESSONS } from '../lessons';
import { figureScript, lessonParts, parseFigure, sayParts } from './figures';

describe('live figures in a lesson text', () => {
  test('a tree figure and a crash figure, between the prose', () => {
    const parts = lessonParts('Intro.\n{{live tree n=3 min=1 max=9 script="mkfs|create /f{1..$n}" say="Make {n} files:"}}\nMore.\n'
      + '{{live crash at=2 script="mkfs|fsync /|create /x" say="Crash after {at}:"}}', 2);
    expect(parts.map((p) => p.kind)).toEqual(['text', 'figure', 'text', 'figure']);
    const [, t, , c] = parts;
    if (t.kind !== 'figure' || t.figure.kind !== 'tree' || c.kind !== 'figure' || c.figure.kind !== 'crash') throw new Error('kinds');
    expect(t.line).toBe(3);
    expect(figureScript(t.figure, 7)).toBe('mkfs\ncreate /f{1..7}\n');
    expect(sayParts(t.figure)).toEqual(['Make ', ' files:']);
    expect([c.figure.at, c.figure.script]).toEqual([2, 'mkfs\nfsync /\ncreate /x\n']);
  });

  test('a bad figure line says where and what', () => {
    expect(() => parseFigure('{{live pie}}', 4)).toThrow('lesson.md:4: a live figure is {{live tree|crash key=value ...}}');
    expect(() => parseFigure('{{live tree n=x script="a $n" say="{n}"}}', 5)).toThrow('lesson.md:5: n must be a whole number');
    expect(() => parseFigure('{{live tree n=3 script="mkfs" say="{n}"}}', 6)).toThrow("lesson.md:6: a tree figure's script needs $n");
    expect(() => parseFigure('{{live tree n=30 max=9 script="$n" say="{n}"}}', 7)).toThrow('lesson.md:7: n must be within min..max');
    expect(() => parseFigure('{{live crash at=9 script="a|b" say="{at}"}}', 8)).toThrow('lesson.md:8: at must be a line of the script (1..2)');
    expect(() => parseFigure('{{live crash at=1 script="a|b" say="no slot"}}', 9)).toThrow('lesson.md:9: say needs {at}, where the slider goes');
  });

  test('lessons 1 and 2 each hold at least one live figure', () => {
    for (const id of ['01-cow-btree', '02-fsync-log-tree']) {
      const l = LESSONS.find((x) => x.id === id)!;
      expect(l.parts.filter((p) => p.kind === 'figure').length, id).toBeGreaterThanOrEqual(1);
    }
  });
});
