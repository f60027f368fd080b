// A timed section of a scenario as the script writes it (lesson 3): thread
// blocks (`thread A` ... `end`) and `NAME:` lines, or one `fio` line. The
// trace's task_new gives a thread its index only: the index is the order in
// which the section's threads first appear in the script (fio's jobs are
// job0 .. jobN-1), so their names come from here. The files their commands
// name give inode numbers their paths.
import { isPageEvent } from './pageCache';
import type { TraceEvent } from './trace';

export interface SectionInfo {
  /** Thread names by index. */
  names: string[];
  /** A fio line: its job count and the directory its files /writers.J.0 are in. */
  fio?: { jobs: number; dir: string };
}

/** A script line without its comment and surrounding blanks. */
export function lineText(line: string | undefined): string {
  return (line ?? '').replace(/(^|\s)#.*$/, '').trim();
}

const PREFIX = /^([A-Za-z0-9_.-]+):$/;

/** The section that starts at 1-based line `first` of the script. */
export function sectionAt(lines: string[], first: number): SectionInfo {
  const head = lineText(lines[first - 1]).split(/\s+/);
  if (head[0] === 'fio') {
    const opt = (k: string) => head.find((w) => w.startsWith(`${k}=`))?.slice(k.length + 1);
    const jobs = Math.max(1, Number(opt('jobs') ?? 1) || 1);
    return { names: Array.from({ length: jobs }, (_, j) => `job${j}`), fio: { jobs, dir: opt('dir') ?? '/' } };
  }
  return { names: scanSection(lines, first).names };
}

/** The 1-based last line of the section starting at line `first` (first itself when it starts none: a plain command, a fio line). */
export function sectionEnd(lines: string[], first: number): number {
  return scanSection(lines, first).last;
}

function scanSection(lines: string[], first: number): { names: string[]; last: number } {
  const names: string[] = [];
  let last = first, inBlock = false;
  for (let i = first - 1; i < lines.length; i++) {
    const words = lineText(lines[i]).split(/\s+/).filter(Boolean);
    if (!words.length) continue;
    if (inBlock) {
      if (words[0] === 'end') inBlock = false;
    } else if (words[0] === 'thread' && words[1]) {
      if (!names.includes(words[1])) names.push(words[1]);
      inBlock = true;
    } else if (PREFIX.test(words[0]) && words.length > 1) {
      const n = words[0].slice(0, -1);
      if (!names.includes(n)) names.push(n);
    } else {
      break;
    }
    last = i + 1;
  }
  return { names, last };
}

/** The command of a thread's script line ("B: write /b 0 64K" → ["write", "/b", "0", "64K"]). */
export function commandWords(line: string | undefined): string[] {
  const words = lineText(line).split(/\s+/).filter(Boolean);
  return words.length > 1 && PREFIX.test(words[0]) ? words.slice(1) : words;
}

/** The path a command line names first (write, fsync, truncate, create ...), if any. */
export function commandPath(line: string | undefined): string | null {
  const w = commandWords(line);
  return w.length > 1 && w[1].startsWith('/') ? w[1].replace(/^"|"$/g, '') : null;
}

/** fio's file for job j: DIR/writers.J.0. */
export function fioPath(dir: string, job: number): string {
  return `${dir}${dir.endsWith('/') ? '' : '/'}writers.${job}.0`;
}

/** The path a thread's command at 1-based `line` names: its own, or for a fio job (thread `index`) its file. */
export function opPath(lines: string[], line: number, index: number): string | null {
  const words = commandWords(lines[line - 1]);
  if (words[0] !== 'fio') return commandPath(lines[line - 1]);
  const fio = sectionAt(lines, line).fio;
  return fio ? fioPath(fio.dir, index) : null;
}

/**
 * Paths a step names for inodes (added to paths): each thread command's
 * file and the inode its op is on; for a command of no threads (a write, a
 * truncate), its path and the inode its page events are of.
 */
export function notePaths(paths: Map<number, string>, events: TraceEvent[], lines: string[], command: string): void {
  const index = new Map<number, number>();
  let untimed = commandPath(command);
  for (const e of events) {
    if (e.kind === 'task_new') index.set(e.task, e.index);
    else if (e.kind === 'task_op' && e.ino > 0n) {
      const p = opPath(lines, e.line, index.get(e.task) ?? 0);
      if (p) paths.set(Number(e.ino), p);
      untimed = null;
    } else if (untimed && isPageEvent(e)) {
      paths.set(Number(e.ino), untimed);
      untimed = null;
    }
  }
}
