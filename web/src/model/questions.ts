// A lesson's questions: asked before the step they are about, each choice
// with its own feedback. Choices are authored in any order and shown in a
// shuffled one that is the same on every visit (seeded by the lesson and the
// question), so the right answer is not always where the author put it.
import type { TraceKind } from './trace';

export interface Choice {
  text: string;
  /** Why this choice is right or wrong: shown once it is chosen. */
  why: string;
}

/** An entry of lessons/NN-name/questions.json. */
export interface Question {
  /** The script line the question comes before: asked when the player moves onto it. */
  beforeLine: number;
  /** What the question asks the learner to predict, as event kinds: none of
   * them may happen in an earlier step, and the step of beforeLine has them
   * all (checked against the core in lessons.test.ts). */
  shows?: TraceKind[];
  prompt: string;
  choices: Choice[];
  /** The right choice, as an index into choices as authored. */
  answer: number;
  /** Said after any answer: the mechanism in a sentence or two. */
  explain: string;
}

/** A 32-bit FNV-1a hash of a string: the shuffle's seed. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The order choices are shown in: a permutation of 0..n-1 (indexes into the
 * authored choices), the same for the same key (lesson id and question).
 */
export function choiceOrder(key: string, n: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  let x = hash(key) || 1;
  for (let i = n - 1; i > 0; i--) {
    // xorshift32
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    const j = x % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The key a question's shuffle is seeded with. */
export function questionKey(lessonId: string, index: number): string {
  return `${lessonId}#${index}`;
}

/** What a question file gets wrong (empty when none): checked by the tests and at load. */
export function questionProblems(qs: Question[], where: string): string[] {
  const out: string[] = [];
  qs.forEach((q, i) => {
    const at = `${where}: question ${i + 1}`;
    if (!Number.isInteger(q.beforeLine) || q.beforeLine < 1) out.push(`${at}: beforeLine must be a script line (1 or more)`);
    if (!q.prompt) out.push(`${at}: no prompt`);
    if (!Array.isArray(q.choices) || q.choices.length < 2) out.push(`${at}: needs at least two choices`);
    else q.choices.forEach((c, n) => {
      if (typeof c !== 'object' || !c.text || !c.why) out.push(`${at}: choice ${n + 1} needs text and why`);
    });
    if (!Number.isInteger(q.answer) || q.answer < 0 || q.answer >= (q.choices?.length ?? 0)) out.push(`${at}: answer is not one of the choices`);
    if (!q.explain) out.push(`${at}: no explain`);
  });
  return out;
}
