import { describe, expect, test } from 'vitest';
import { choiceOrder, questionProblems, type Question } from './questions';

describe('question helpers', () => {
  test('choiceOrder is a permutation, fixed per key, and differs between keys', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const o = choiceOrder(`lesson#${i}`, 4);
      expect([...o].sort()).toEqual([0, 1, 2, 3]);
      expect(choiceOrder(`lesson#${i}`, 4)).toEqual(o);
      seen.add(o.join());
    }
    expect(seen.size).toBeGreaterThan(10);
    expect(choiceOrder('x', 1)).toEqual([0]);
  });

  test('questionProblems names what is wrong and where', () => {
    const good: Question = { beforeLine: 3, prompt: 'p', choices: [{ text: 'a', why: 'w' }, { text: 'b', why: 'w' }], answer: 1, explain: 'e' };
    expect(questionProblems([good], 'q.json')).toEqual([]);
    const bad = { ...good, beforeLine: 0, answer: 2, choices: [{ text: 'a', why: '' }, { text: 'b', why: 'w' }] };
    expect(questionProblems([good, bad], 'q.json')).toEqual([
      'q.json: question 2: beforeLine must be a script line (1 or more)',
      'q.json: question 2: choice 1 needs text and why',
      'q.json: question 2: answer is not one of the choices',
    ]);
  });
});
