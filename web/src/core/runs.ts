// A run's steps, kept in the worker beside its session (sessions.ts): a run
// of 20,000 files is a million events in one step, which the page must never
// hold (copying them to it, grouping them and scanning them froze it for
// seconds). The page gets the steps without their events (StepInfo), and
// asks for what it draws of one step in one tree: its sentence, its marks,
// the blocks its COWs replaced, how many moments it has and the one on show.
import { crashPointsOf, type CrashPoint } from '../model/crashPoints';
import { ghostsAt } from '../model/ghosts';
import { marksFor } from '../model/marks';
import { momentsOf, treeOf, type Moment } from '../model/moments';
import { EMPTY_PAGES, foldPages, type PageCacheState } from '../model/pageCache';
import { groupSteps, stepInfo, treeSentence, type Lens, type Step, type StepInfo, type StepView } from '../model/steps';
import { notePaths, sectionAt } from '../model/sections';
import { readRelocation, type RelocStep } from '../model/relocation';
import { EMPTY_SHARED, readShared, type SharedCarry, type SharedStep } from '../model/shared';
import { EMPTY_CARRY, readSpace, threadNames, type SpaceCarry, type SpaceStep } from '../model/space';
import { buildTimeline, type Timeline } from '../model/timeline';
import type { TraceEvent, TraceKind } from '../model/trace';
import { CORE_ERRNO, CoreError } from './errors';

function kindCounts(events: TraceEvent[], tree: bigint): Partial<Record<TraceKind, number>> {
  const n: Partial<Record<TraceKind, number>> = {};
  for (const e of events) if (treeOf(e) === tree) n[e.kind] = (n[e.kind] ?? 0) + 1;
  return n;
}

export class RunSteps {
  readonly steps: Step[];
  readonly infos: StepInfo[];
  // the last few steps' moments and views, by step and tree: a big step's cost a scan of its events
  private readonly moments = new Map<string, Moment[]>();
  private readonly views = new Map<string, Omit<StepView, 'moment'>>();

  // the steps with only their COWs and commits: what ghosts are found from (a walk back to the last commit can cross a million events)
  private readonly cows: Step[];

  private readonly lines: number;
  // the page cache and the paths known before each step, folded in step order as far as asked
  private readonly before: { pages: PageCacheState; paths: Map<number, string> }[] = [{ pages: EMPTY_PAGES, paths: new Map() }];
  private readonly timelines = new Map<string, Timeline>();
  // what each step found of the space story (the counters last reported, each inode's dirty pages), folded in step order as far as asked
  private readonly spaceBefore: SpaceCarry[] = [EMPTY_CARRY];
  private readonly spaces = new Map<string, SpaceStep>();
  // what each step found of the shared blocks' story (the references queued since the last commit, the qgroups' numbers), folded the same way
  private readonly sharedBefore: SharedCarry[] = [EMPTY_SHARED];
  private readonly shareds = new Map<string, SharedStep>();

  constructor(events: TraceEvent[], private readonly scriptLines: string[], readonly commandEvents: number, private readonly keep = 8) {
    this.steps = groupSteps(events, scriptLines, commandEvents);
    this.lines = this.steps.filter((s) => !s.final).reduce((m, s) => Math.max(m, s.line), 0);
    this.infos = this.steps.map(stepInfo);
    this.cows = this.steps.map((s) => ({ ...s, events: s.events.filter((e) => e.kind === 'cow' || e.kind === 'commit') }));
  }

  private remember<T>(m: Map<string, T>, key: string, make: () => T): T {
    let v = m.get(key);
    if (v === undefined) {
      v = make();
      m.set(key, v);
      for (const k of m.keys()) {
        if (m.size <= this.keep) break;
        m.delete(k);
      }
    } else { // most recently used last
      m.delete(key);
      m.set(key, v);
    }
    return v;
  }

  private step(index: number): Step {
    const s = this.steps[index];
    if (!s) throw new CoreError(CORE_ERRNO.EINVAL, `EINVAL: step ${index}: the run has ${this.steps.length} steps (0 to ${this.steps.length - 1})`);
    return s;
  }

  /** Every crash point of the run (after each tree block and superblock copy written), found once. */
  crashPoints(): CrashPoint[] {
    return (this.points ??= crashPointsOf(this.steps, this.lines));
  }
  private points?: CrashPoint[];

  /** The moments of step index in tree (none before the first command: mkfs runs before the session's first checkpoint). */
  momentsAt(index: number, tree: bigint): Moment[] {
    const s = this.step(index);
    return index > 0 ? this.remember(this.moments, `${index}:${tree}`, () => momentsOf(s.events, tree, this.commandEvents)) : [];
  }

  /** What the page cache held and which paths were known before step index. */
  private stateBefore(index: number): { pages: PageCacheState; paths: Map<number, string> } {
    for (let i = this.before.length; i <= index; i++) {
      const prev = this.before[i - 1];
      const s = this.steps[i - 1];
      const paths = new Map(prev.paths);
      notePaths(paths, s.events, this.scriptLines, s.command);
      this.before.push({ pages: foldPages(prev.pages, s.events), paths });
    }
    return this.before[index];
  }

  /**
   * Step index as a timeline (model/timeline.ts): its lanes, spans and page
   * cache, and the moments a learner stops at on it (none in mkfs's step or
   * the final commit's: the core stops only inside the script's commands).
   */
  timeline(index: number): Timeline {
    const s = this.step(index);
    return this.remember(this.timelines, String(index), () => {
      const before = this.stateBefore(index);
      const tl = buildTimeline(s.events, { lines: this.scriptLines, line: s.line, pagesBefore: before.pages, paths: before.paths });
      return { ...tl, moments: index > 0 ? tl.moments.filter((m) => m.seq < this.commandEvents) : [] };
    });
  }

  private threadsOf(index: number): string[] {
    const s = this.steps[index];
    return threadNames(s.command, s.line > 0 && !s.final ? sectionAt(this.scriptLines, s.line).names : []);
  }

  /** Step index's space story (model/space.ts): the counters, tickets, flush states and delalloc flushes, as short moments. */
  space(index: number): SpaceStep {
    const s = this.step(index);
    return this.remember(this.spaces, String(index), () => {
      for (let i = this.spaceBefore.length; i <= index; i++) this.spaceBefore.push(readSpace(this.steps[i - 1].events, this.spaceBefore[i - 1], this.threadsOf(i - 1)).carry);
      return readSpace(s.events, this.spaceBefore[index], this.threadsOf(index)).step;
    });
  }

  /** Step index's story of shared blocks (model/shared.ts): its COWs, the references they queue, FULL_BACKREF, snapshots, qgroup accounting. */
  shared(index: number): SharedStep {
    const s = this.step(index);
    return this.remember(this.shareds, String(index), () => {
      for (let i = this.sharedBefore.length; i <= index; i++) this.sharedBefore.push(readShared(this.steps[i - 1].events, this.sharedBefore[i - 1], this.steps[i - 1].command).carry);
      return readShared(s.events, this.sharedBefore[index], s.command).step;
    });
  }

  /** Step index's relocation story (model/relocation.ts): groups chosen, reloc trees built, merged, dropped, removed; its qgroup dirty extents. */
  relocation(index: number): RelocStep {
    const s = this.step(index);
    return this.remember(this.relocs, String(index), () => readRelocation(s.events));
  }
  private readonly relocs = new Map<string, RelocStep>();

  /** The moments of step index through a lens: the tree's (its COWs, inserts, splits), or the timeline's (tasks, bios, pages). */
  private lensMoments(index: number, tree: bigint, lens: Lens): Moment[] {
    if (lens === 'tree') return this.momentsAt(index, tree);
    return this.remember(this.moments, `${index}:timeline`, () =>
      this.timeline(index).moments.map((m) => ({ seq: m.seq, kind: m.kind, sentence: m.sentence, marks: new Map() })));
  }

  /** Step index in tree, at its moment `moment` (null or past the last: the step's end) of the lens. */
  view(index: number, tree: bigint, moment: number | null, lens: Lens = 'tree'): StepView {
    const s = this.step(index);
    const moments = this.lensMoments(index, tree, lens);
    const whole = this.remember(this.views, `${index}:${tree}:${lens}`, () => ({
      sentence: treeSentence(s, tree),
      moments: moments.length,
      marks: marksFor(s.events),
      ghosts: ghostsAt(this.cows, index, tree),
      counts: kindCounts(s.events, tree),
    }));
    const m = moment !== null && moment >= 0 && moment < moments.length ? moments[moment] : null;
    if (!m) return { ...whole, moment: null };
    return { ...whole, moment: m, marks: m.marks, ghosts: ghostsAt(this.cows, index, tree, m.seq) };
  }
}
