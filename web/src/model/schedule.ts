// Choose mode (lesson 4, issue 16): the learner picks, turn by turn, which
// thread of a section starts its next command, as a model checker enumerates
// interleavings. The picks become the script's own `schedule` lines right
// before the section (the core runs the listed turns in order, then its
// policy decides), so a run with the same picks is the same run. Pure: the
// script's sections of threads as the core reads them, the picks as
// `schedule` lines and back, and which threads can still take a turn.
import { lineText } from './sections';

/** A command of a thread: its 1-based script line and its text ("create /d/a1"). */
export interface ThreadCommand {
  line: number;
  text: string;
}

export interface SectionThread {
  name: string;
  commands: ThreadCommand[];
}

/** A section of threads (`thread NAME` ... `end` blocks and `NAME: command` lines) as the core collects it. */
export interface ThreadSection {
  /** 1-based: its place among the script's sections of threads. */
  number: number;
  /** Its first and last 1-based lines. */
  first: number;
  last: number;
  /** Threads in the order they first appear (the trace's thread index), each with its commands in order. */
  threads: SectionThread[];
}

/** The learner's picks in one section: the thread of each turn, in order. */
export interface Schedule {
  section: number;
  picks: string[];
}

/** The core reads at most this many turns for a section (SCENARIO_MAX_THREADS). */
export const MAX_TURNS = 256;
/** Names a `schedule` line holds at most (the core's lines take 7 arguments). */
const NAMES_PER_LINE = 7;
/** A thread name: letters, digits, `_ - .` (the core's prefix_name), shorter than 16 (SCENARIO_NAME_MAX). */
export const THREAD_NAME = /^[A-Za-z0-9_.-]{1,15}$/;

const words = (line: string | undefined) => lineText(line).split(/\s+/).filter(Boolean);
const prefixName = (w: string | undefined) => (w && w.length > 1 && w.endsWith(':') && /^[A-Za-z0-9_.-]+$/.test(w.slice(0, -1)) ? w.slice(0, -1) : null);
const opensSection = (w: string[]) => (w[0] === 'thread' && w.length > 1) || (prefixName(w[0]) !== null && w.length > 1);

/** Every section of threads in the script, in order (fio lines are sections of the core's, not of threads: left out). */
export function threadSections(lines: string[]): ThreadSection[] {
  const out: ThreadSection[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!opensSection(words(lines[i]))) continue;
    const s = readSection(lines, i);
    out.push({ ...s, number: out.length + 1 });
    i = s.last - 1;
  }
  return out;
}

/** The section of threads starting at 0-based line i: its blocks and NAME: lines up to the first other command. */
function readSection(lines: string[], i: number): Omit<ThreadSection, 'number'> {
  const threads: SectionThread[] = [];
  const thread = (name: string) => {
    let t = threads.find((x) => x.name === name);
    if (!t) threads.push((t = { name, commands: [] }));
    return t;
  };
  let last = i + 1;
  for (let k = i; k < lines.length; k++) {
    const w = words(lines[k]);
    if (!w.length) continue;
    if (w[0] === 'thread' && w.length > 1) {
      const t = thread(w[1]);
      for (k++; k < lines.length; k++) {
        const c = words(lines[k]);
        if (!c.length) continue;
        if (c[0] === 'end') break;
        t.commands.push({ line: k + 1, text: c.join(' ') });
      }
      last = Math.min(k + 1, lines.length);
      continue;
    }
    const name = prefixName(w[0]);
    if (name === null || w.length < 2) break;
    thread(name).commands.push({ line: k + 1, text: w.slice(1).join(' ') });
    last = k + 1;
  }
  return { first: i + 1, last, threads };
}

/** The 1-based lines of the `schedule` lines that apply to a section: those since the section before it (or the script's start). */
function scheduleLines(lines: string[], sections: ThreadSection[], s: ThreadSection): number[] {
  const before = sections.filter((x) => x.last < s.first).pop();
  const out: number[] = [];
  for (let k = before ? before.last : 0; k < s.first - 1; k++) if (words(lines[k])[0] === 'schedule') out.push(k + 1);
  return out;
}

/** The turns the script's own `schedule` lines give section `number` (none: the policy decides). */
export function scriptSchedule(script: string, number: number): string[] {
  const lines = script.split('\n');
  const sections = threadSections(lines);
  const s = sections.find((x) => x.number === number);
  return s ? scheduleLines(lines, sections, s).flatMap((l) => words(lines[l - 1]).slice(1)) : [];
}

/** The picks as `schedule` lines (a few names a line). */
export function scheduleText(picks: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < picks.length; i += NAMES_PER_LINE) out.push(`schedule ${picks.slice(i, i + NAMES_PER_LINE).join(' ')}`);
  return out;
}

/**
 * The script with the section's turns fixed to picks: its own `schedule`
 * lines for the section dropped, the picks' lines put right before the
 * section. first: the section's first line in the new text. Null when the
 * script has no such section, or when only schedule lines part it from the
 * section before (without them the two would be one section).
 */
export function withSchedule(script: string, s: Schedule): { text: string; first: number } | null {
  const lines = script.split('\n');
  const sections = threadSections(lines);
  const sec = sections.find((x) => x.number === s.section);
  if (!sec) return null;
  const own = scheduleLines(lines, sections, sec);
  const before = sections.find((x) => x.number === s.section - 1);
  if (own.length && before && lines.slice(before.last, sec.first - 1).every((l) => !words(l).length || words(l)[0] === 'schedule')) return null;
  const drop = new Set(own);
  const out: string[] = [];
  let first = 0;
  lines.forEach((l, k) => {
    if (k === sec.first - 1) {
      out.push(...scheduleText(s.picks));
      first = out.length + 1;
    }
    if (!drop.has(k + 1)) out.push(l);
  });
  return { text: out.join('\n'), first };
}

/** The longest start of picks the section can run: each names one of its threads with a command left, at most MAX_TURNS. */
export function validPicks(sec: ThreadSection, picks: string[]): string[] {
  const left = new Map(sec.threads.map((t) => [t.name, t.commands.length]));
  const out: string[] = [];
  for (const p of picks.slice(0, MAX_TURNS)) {
    const n = left.get(p) ?? 0;
    if (n <= 0) break;
    left.set(p, n - 1);
    out.push(p);
  }
  return out;
}

/** A thread that can take the next turn: the command it would start (its index among its commands), and how many it has left. */
export interface Runnable {
  name: string;
  next: ThreadCommand;
  index: number;
  left: number;
}

/** The threads with commands left after the picks, in the section's order, each with the command its turn would start. */
export function runnableAfter(sec: ThreadSection, picks: string[]): Runnable[] {
  if (picks.length >= MAX_TURNS) return [];
  return sec.threads.flatMap((t) => {
    const done = picks.filter((p) => p === t.name).length;
    return done < t.commands.length ? [{ name: t.name, next: t.commands[done], index: done, left: t.commands.length - done }] : [];
  });
}

/** The command each pick starts, in order. */
export function pickedCommands(sec: ThreadSection, picks: string[]): (ThreadCommand & { name: string })[] {
  const seen = new Map<string, number>();
  return picks.flatMap((p) => {
    const n = seen.get(p) ?? 0;
    seen.set(p, n + 1);
    const c = sec.threads.find((t) => t.name === p)?.commands[n];
    return c ? [{ ...c, name: p }] : [];
  });
}

/** Choose mode's state: the script the picks are made on (without them) and the picks. */
export interface Choice extends Schedule {
  base: string;
}

/**
 * Choose mode on section s.section of script: the script without that
 * section's `schedule` lines as the base, and the picks it can run of
 * s.picks (null: the script has no such section).
 */
export function openChoice(script: string, s: Schedule): Choice | null {
  const base = withSchedule(script, { section: s.section, picks: [] });
  if (!base) return null;
  const sec = threadSections(base.text.split('\n')).find((x) => x.number === s.section)!;
  return { base: base.text, section: s.section, picks: validPicks(sec, s.picks) };
}

/** The script a choice runs: its base with the picks as `schedule` lines. */
export function chosenScript(c: Choice): { text: string; first: number } {
  return withSchedule(c.base, c) ?? { text: c.base, first: 0 };
}

/** The section choose mode opens on: the first with more than one thread, else the first (null: none). */
export function defaultSection(script: string): number | null {
  const all = threadSections(script.split('\n'));
  return (all.find((s) => s.threads.length > 1) ?? all[0])?.number ?? null;
}
