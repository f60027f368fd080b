// A lesson's questions, checked against what the core does and against how
// they are shown: each asks before the thing it asks about is first seen
// (no earlier step of the lesson's scenario has the event kinds it names, its
// own step has them all), every choice says why, and the shuffled order does
// not give the answer away (the right choice is not always in one place, nor
// always the longest).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import createBtrfsCore from './generated/btrfslab-core.mjs';
import { Core } from './wasm';
import { LESSONS } from '../lessons';
import { groupSteps } from '../model/steps';
import { choiceOrder, questionKey, questionProblems } from '../model/questions';

const wasmPath = fileURLToPath(new URL('./generated/btrfslab-core.wasm', import.meta.url));
const RUN = { seed: 1n, now: 1700000000n, trace: true };
let core: Core;

beforeAll(async () => {
  core = Core.fromModule(await createBtrfsCore({ wasmBinary: readFileSync(wasmPath) }));
});

const withQuestions = LESSONS.filter((l) => l.questions.length);

describe('lesson questions', () => {
  test('every lesson has questions, and each is well formed', () => {
    expect(withQuestions.map((l) => l.id)).toEqual(LESSONS.map((l) => l.id));
    for (const l of LESSONS) expect(questionProblems(l.questions, `lessons/${l.id}/questions.json`)).toEqual([]);
  });

  test.each(withQuestions.map((l) => [l.id, l] as const))('%s: each question comes before what it asks about', (_id, lesson) => {
    const h = core.run(lesson.scenario, RUN);
    try {
      const steps = groupSteps(core.trace(h), lesson.scenario.split('\n'));
      lesson.questions.forEach((q, i) => {
        const at = steps.findIndex((s) => s.line === q.beforeLine);
        expect(at, `question ${i + 1}: line ${q.beforeLine} is a step of the scenario`).toBeGreaterThan(0);
        for (const kind of q.shows ?? []) {
          expect(steps[at].kinds.has(kind), `question ${i + 1}: line ${q.beforeLine} has ${kind}`).toBe(true);
          const seen = steps.slice(0, at).find((s) => s.kinds.has(kind));
          expect(seen?.line, `question ${i + 1}: ${kind} is seen before the question asks about it`).toBeUndefined();
        }
      });
    } finally {
      core.close(h);
    }
  });

  test('the shown order is a fixed shuffle that does not give the answer away', () => {
    const all = LESSONS.flatMap((l) => l.questions.map((q, i) => ({ q, key: questionKey(l.id, i) })));
    expect(all.length).toBeGreaterThanOrEqual(6);
    const where = new Map<number, number>();
    let longest = 0;
    for (const { q, key } of all) {
      const order = choiceOrder(key, q.choices.length);
      expect([...order].sort()).toEqual(q.choices.map((_, i) => i));
      expect(choiceOrder(key, q.choices.length)).toEqual(order); // the same on every visit
      const pos = order.indexOf(q.answer);
      where.set(pos, (where.get(pos) ?? 0) + 1);
      const lens = q.choices.map((c) => c.text.length);
      if (lens[q.answer] === Math.max(...lens)) longest++;
    }
    // no one place holds more than half the right answers, and the right answer is the longest at most a third of the time
    for (const n of where.values()) expect(n).toBeLessThanOrEqual(Math.ceil(all.length / 2));
    expect(where.size).toBeGreaterThan(1);
    expect(longest).toBeLessThanOrEqual(Math.floor(all.length / 3));
  });
});
