// What the address bar holds: the lesson and its step, the learner's own
// scenario when it is not the lesson's, and the crash point; or the image
// playground. Pure: App.tsx reads and writes window.location with these.

export interface Address {
  /** null: the image playground. */
  lesson: string | null;
  step: number;
  /** The learner's own scenario (null: the lesson's). */
  script: string | null;
  /** The replay view's crash point, a script line (null: its default). */
  crash: number | null;
  /** Inside that line, after its write number `write` (null: after the whole line); `crash=12.3` in the address. */
  write?: number | null;
}

/** Scenarios longer than this stay out of the address (links stay shareable). */
export const MAX_SCRIPT_IN_ADDRESS = 4000;

/** The address in search (?lesson=…&step=…&script=…&crash=…); unknown lessons fall back to the first. */
export function readAddress(search: string, lessonIds: string[]): Address {
  const q = new URLSearchParams(search);
  const want = q.get('lesson');
  const lesson = q.get('view') === 'playground' ? null : want && lessonIds.includes(want) ? want : lessonIds[0] ?? null;
  const whole = (v: string | null) => (v !== null && /^\d+$/.test(v) ? Number(v) : null);
  const script = q.get('script');
  const write = whole(q.get('crash')?.split('.')[1] ?? null);
  return {
    lesson,
    step: whole(q.get('step')) ?? 0,
    script: lesson && script !== null && script.length <= MAX_SCRIPT_IN_ADDRESS ? script : null,
    crash: lesson ? whole(q.get('crash')?.split('.')[0] ?? null) : null,
    ...(lesson && write ? { write } : {}),
  };
}

/** The query string for an address (without the "?"). */
export function writeAddress(a: Address): string {
  const q = new URLSearchParams();
  if (!a.lesson) {
    q.set('view', 'playground');
    return q.toString();
  }
  q.set('lesson', a.lesson);
  if (a.step) q.set('step', String(a.step));
  if (a.script !== null && a.script.length <= MAX_SCRIPT_IN_ADDRESS) q.set('script', a.script);
  if (a.crash !== null) q.set('crash', a.write ? `${a.crash}.${a.write}` : String(a.crash));
  return q.toString();
}
