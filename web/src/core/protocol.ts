// The short, typed message list between the page and the core's Worker.
import type { TreeDump } from '../model/dump';
import type { CrashPoint } from '../model/crashPoints';
import type { FileView } from '../model/kernelAnswer';
import type { Lens, StepInfo, StepView } from '../model/steps';
import type { ModeRun, QgroupSwapMode, RelocStep } from '../model/relocation';
import type { SharedPicture, SharedStep } from '../model/shared';
import type { SpaceStep } from '../model/space';
import type { Timeline } from '../model/timeline';
import type { TraceEvent } from '../model/trace';
import type { ScheduleRun } from './scheduleRun';
import type { CostTable, DirEntry, Handle, MkfsOptions, RunOptions, ScenarioMetrics, SessionStats } from './wasm';

export type Request =
  | { op: 'ready' }
  | { op: 'mkfs'; opts: MkfsOptions }
  | { op: 'open'; file: Blob; name: string } // the worker reads the file: the page's thread never holds the bytes
  | { op: 'run'; script: string; opts: RunOptions }
  | { op: 'metrics'; handle: Handle }
  // a script's run is kept in the worker (core/sessions.ts): these reach any of its lines from a checkpoint
  | { op: 'traceRun'; script: string; opts: RunOptions }
  // the run's steps without their events (grouped in the worker), and one step's view in one tree
  | { op: 'runSteps'; script: string; opts: RunOptions }
  | { op: 'stepView'; script: string; opts: RunOptions; index: number; tree: bigint; moment: number | null; lens?: Lens }
  | { op: 'timeline'; script: string; opts: RunOptions; index: number }
  | { op: 'space'; script: string; opts: RunOptions; index: number }
  | { op: 'shared'; script: string; opts: RunOptions; index: number }
  // the shared picture right after the run's event seq inside step index (null, or an event of the final commit: the step's end)
  | { op: 'sharedAt'; script: string; opts: RunOptions; index: number; seq: number | null }
  | { op: 'relocation'; script: string; opts: RunOptions; index: number }
  // the script run once in each qgroup_swap mode (every `set qgroup_swap=` line set to it): each run's qgroup dirty extents and qgroups
  | { op: 'relocModes'; script: string; opts: RunOptions; modes: QgroupSwapMode[] }
  | { op: 'costs' }
  // choose mode: the script with the learner's picks as schedule lines, its section of threads `section` after `picks` turns
  | { op: 'scheduleRun'; script: string; opts: RunOptions; section: number; picks: number }
  | { op: 'stateAt'; script: string; opts: RunOptions; line: number; tree: bigint; maxLeafEntries: number }
  | { op: 'stateAtEvent'; script: string; opts: RunOptions; seq: number; tree: bigint; maxLeafEntries: number }
  | { op: 'crashReplay'; script: string; opts: RunOptions; line: number; seq?: number; maxLeafEntries: number }
  | { op: 'replayStateAt'; script: string; opts: RunOptions; line: number; seq?: number; steps: number; maxLeafEntries: number }
  | { op: 'crashPoints'; script: string; opts: RunOptions }
  | { op: 'imageReplay'; handle: Handle; maxLeafEntries: number }
  | { op: 'imageReplayStateAt'; handle: Handle; steps: number; maxLeafEntries: number }
  | { op: 'crashImage'; script: string; opts: RunOptions; line: number; seq?: number }
  | { op: 'kernelInput'; script: string; opts: RunOptions; line: number; seq?: number }
  | { op: 'sessionStats'; script: string; opts: RunOptions }
  | { op: 'ls'; handle: Handle; path: string }
  | { op: 'cat'; handle: Handle; path: string }
  | { op: 'check'; handle: Handle }
  | { op: 'dump'; handle: Handle }
  | { op: 'trace'; handle: Handle }
  | { op: 'export'; handle: Handle }
  | { op: 'close'; handle: Handle };

export interface Results {
  ready: { pageSize: number };
  mkfs: { handle: Handle; size: bigint };
  open: { handle: Handle; size: bigint };
  run: { handle: Handle; size: bigint };
  metrics: ScenarioMetrics;
  /** The run's trace; events from commandEvents on are its final commit's. */
  traceRun: { events: TraceEvent[]; metrics: ScenarioMetrics; commandEvents: number };
  /** The run's steps (without events) and the event where its final commit starts. */
  runSteps: { steps: StepInfo[]; metrics: ScenarioMetrics; commandEvents: number };
  /** Step `index` told and marked in tree (at its moment `moment` of the lens, the tree's unless said; null: its end). */
  stepView: StepView;
  /** Step `index` as a timeline: lanes, spans, page cache, its moments (model/timeline.ts). */
  timeline: Timeline;
  /** Step `index`'s space story: counters, tickets, flush states, delalloc flushes (model/space.ts). */
  space: SpaceStep;
  /** Step `index`'s story of shared blocks: COWs, references queued, FULL_BACKREF, snapshots, qgroup accounting (model/shared.ts). */
  shared: SharedStep;
  /** The subvolume trees' blocks and the extents' references at a moment of step `index` (model/shared.ts). */
  sharedAt: SharedPicture;
  /** Step `index`'s relocation story: groups, reloc trees, swaps, drops, chunks removed, qgroup dirty extents (model/relocation.ts). */
  relocation: RelocStep;
  /** The script in each qgroup_swap mode: dirty extents, relocated extents, qgroups (model/relocation.ts). */
  relocModes: ModeRun[];
  /** The time model's cost table and device profiles (wasm-core/src/costs.c). */
  costs: CostTable;
  /** The section's turns, its threads at the moment of the next pick, and why the run stopped (a deadlock's cycle), the run kept though it failed. */
  scheduleRun: ScheduleRun;
  /** The trees after the script's line `line` (0: after mkfs), without the final commit; -1: the end, after it. */
  stateAt: TreeDump;
  /** The trees right after the run's event seq, in the middle of a command. */
  stateAtEvent: TreeDump;
  /** A crash after line `line`: the trees before replay (fs and log), the replay's events, the fs tree after. */
  crashReplay: { before: TreeDump; events: TraceEvent[]; after: TreeDump };
  /** The fs tree after `steps` replay actions of a crash after line `line` (or at the write whose event is seq). */
  replayStateAt: TreeDump;
  /** An opened image's pending log, replayed on a copy: as crashReplay gives it. */
  imageReplay: { before: TreeDump; events: TraceEvent[]; after: TreeDump };
  /** The fs tree after `steps` replay actions of an opened image's log (on a copy). */
  imageReplayStateAt: TreeDump;
  /** Every crash point of the run: after each tree block and superblock copy it writes (wasm-core/src/crash.h). */
  crashPoints: CrashPoint[];
  /** What goes to the kernel for a state: the image a power cut there leaves (line -1: the run's end, committed), and the core's own files after its replay of it. */
  kernelInput: { blob: Blob; files: FileView[] };
  /** The image a crash after line `line` (or right after the write whose event is seq) leaves, its log pending. */
  crashImage: { blob: Blob };
  sessionStats: SessionStats;
  ls: DirEntry[];
  cat: Uint8Array;
  check: { errors: number; problems: string[] };
  dump: TreeDump;
  trace: TraceEvent[];
  export: { blob: Blob };
  close: null;
}

export type Envelope = Request & { id: number };

export type Reply =
  | { id: number; ok: true; result: Results[keyof Results] }
  | { id: number; ok: false; error: { code: number; message: string }; fatal?: boolean };
// fatal: the core trapped (a WebAssembly RuntimeError, an abort): its memory
// cannot be trusted any more, so the page replaces the worker.
