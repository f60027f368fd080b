// What the address bar holds: the lesson and its step, the learner's own
// scenario when it is not the lesson's, the crash point, and choose mode's
// picks; or the image playground. Pure: App.tsx reads and writes
// window.location with these.
import { MAX_TURNS, THREAD_NAME, type Schedule } from './schedule';

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
  /** Choose mode: the section of threads and the thread of each turn picked, `sched=2:A,B,A,C` (`sched=2:`: none picked yet). */
  sched?: Schedule | null;
}

/** `2:A,B,A,C` as a schedule; null when it is not one (a bad section, a bad name, too many turns). */
export function readSchedule(v: string | null): Schedule | null {
  const m = v === null ? null : /^(\d{1,4}):(.*)$/.exec(v);
  if (!m || Number(m[1]) < 1) return null;
  const picks = m[2] === '' ? [] : m[2].split(',');
  if (picks.length > MAX_TURNS || !picks.every((p) => THREAD_NAME.test(p))) return null;
  return { section: Number(m[1]), picks };
}

/** A schedule as the address writes it: its names need no escaping, so the address stays readable. */
export function scheduleParam(s: Schedule): string {
  return `${s.section}:${s.picks.join(',')}`;
}

/** Scenarios longer than this stay out of the address (links stay shareable). */
export const MAX_SCRIPT_IN_ADDRESS = 4000;

/** The address in search (?lesson=…&step=…&script=…&crash=…&sched=…); unknown lessons fall back to the first, bad values are left out. */
export function readAddress(search: string, lessonIds: string[]): Address {
  const q = new URLSearchParams(search);
  const want = q.get('lesson');
  const lesson = q.get('view') === 'playground' ? null : want && lessonIds.includes(want) ? want : lessonIds[0] ?? null;
  const whole = (v: string | null) => (v !== null && /^\d+$/.test(v) ? Number(v) : null);
  const script = q.get('script');
  const write = whole(q.get('crash')?.split('.')[1] ?? null);
  const sched = lesson ? readSchedule(q.get('sched')) : null;
  return {
    lesson,
    step: whole(q.get('step')) ?? 0,
    script: lesson && script !== null && script.length <= MAX_SCRIPT_IN_ADDRESS ? script : null,
    crash: lesson ? whole(q.get('crash')?.split('.')[0] ?? null) : null,
    ...(lesson && write ? { write } : {}),
    ...(sched ? { sched } : {}),
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
  const sched = a.sched && a.sched.section >= 1 && a.sched.picks.length <= MAX_TURNS && a.sched.picks.every((p) => THREAD_NAME.test(p)) ? `sched=${scheduleParam(a.sched)}` : '';
  return [q.toString(), sched].filter(Boolean).join('&');
}
