// Small live figures inside a lesson's prose, written in lesson.md as a line
// of their own:
//
//   {{live tree n=12 min=1 max=60 script="mkfs nodesize=4K size=64M|mkdir /d|create /d/f{1..$n}" say="Insert {n} files:"}}
//   {{live crash at=6 script="mkfs nodesize=4K|...|fsync /docs/b|create /docs/c" say="Cut the power after line {at}:"}}
//
// A tree figure runs its script with $n replaced by the number the learner
// sets in the sentence ({n} is where the control goes) and draws the fs
// tree; a crash figure runs its script to line {at} (a slider in the
// sentence), cuts the power, mounts (replaying the log) and draws what is
// left. "|" separates the script's lines. Pure: LiveFigure.tsx draws them.

export interface TreeFigure {
  kind: 'tree';
  script: string;
  n: number;
  min: number;
  max: number;
  say: string;
}

export interface CrashFigure {
  kind: 'crash';
  script: string;
  at: number;
  say: string;
}

export type Figure = TreeFigure | CrashFigure;

/** A lesson text cut into its prose and its figures, in order. */
export type LessonPart = { kind: 'text'; text: string } | { kind: 'figure'; figure: Figure; line: number };

const DIRECTIVE = /^\{\{live\s+(tree|crash)((?:\s+[a-z]+=(?:"[^"]*"|\S+))*)\s*\}\}\s*$/;

function attrs(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(/([a-z]+)=(?:"([^"]*)"|(\S+))/g)) out[m[1]] = m[2] ?? m[3];
  return out;
}

/** The figure a directive line describes; an error naming the line and what is wrong for a bad one. */
export function parseFigure(line: string, lineNo: number): Figure {
  const m = DIRECTIVE.exec(line.trim());
  if (!m) throw new Error(`lesson.md:${lineNo}: a live figure is {{live tree|crash key=value ...}}`);
  const a = attrs(m[2]);
  const int = (k: string, dflt?: number) => {
    const v = a[k];
    if (v === undefined && dflt !== undefined) return dflt;
    if (v === undefined || !/^\d+$/.test(v)) throw new Error(`lesson.md:${lineNo}: ${k} must be a whole number`);
    return Number(v);
  };
  if (!a.script) throw new Error(`lesson.md:${lineNo}: a live figure needs script="..."`);
  const script = a.script.split('|').join('\n') + '\n';
  const say = a.say ?? '';
  if (m[1] === 'tree') {
    const f: TreeFigure = { kind: 'tree', script, n: int('n'), min: int('min', 1), max: int('max', 100), say };
    if (!script.includes('$n')) throw new Error(`lesson.md:${lineNo}: a tree figure's script needs $n`);
    if (!(f.min <= f.n && f.n <= f.max)) throw new Error(`lesson.md:${lineNo}: n must be within min..max`);
    if (!say.includes('{n}')) throw new Error(`lesson.md:${lineNo}: say needs {n}, where the control goes`);
    return f;
  }
  const lines = script.trimEnd().split('\n').length;
  const f: CrashFigure = { kind: 'crash', script, at: int('at'), say };
  if (f.at < 1 || f.at > lines) throw new Error(`lesson.md:${lineNo}: at must be a line of the script (1..${lines})`);
  if (!say.includes('{at}')) throw new Error(`lesson.md:${lineNo}: say needs {at}, where the slider goes`);
  return f;
}

/** The lesson's text, cut at its figure lines (firstLine: md's first line in lesson.md, for errors). */
export function lessonParts(md: string, firstLine = 1): LessonPart[] {
  const out: LessonPart[] = [];
  let text: string[] = [];
  md.split('\n').forEach((l, i) => {
    if (l.trim().startsWith('{{live')) {
      if (text.length) out.push({ kind: 'text', text: text.join('\n') });
      text = [];
      out.push({ kind: 'figure', figure: parseFigure(l, i + firstLine), line: i + firstLine });
    } else text.push(l);
  });
  if (text.length) out.push({ kind: 'text', text: text.join('\n') });
  return out;
}

/** A tree figure's script for n. */
export function figureScript(f: TreeFigure, n: number): string {
  return f.script.replaceAll('$n', String(n));
}

/** The sentence around the control: the text before and after its placeholder. */
export function sayParts(f: Figure): [string, string] {
  const mark = f.kind === 'tree' ? '{n}' : '{at}';
  const i = f.say.indexOf(mark);
  return [f.say.slice(0, i), f.say.slice(i + mark.length)];
}
