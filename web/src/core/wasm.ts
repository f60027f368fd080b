// The thin, typed WASM boundary: each exported C function wrapped once, every
// negative return turned into a CoreError by check(). 64-bit values cross as
// BigInt (the module is built with WASM_BIGINT). Used by the Worker in the
// browser and directly by tests in Node.
import { parseTreeDump, type TreeDump } from '../model/dump';
import { parseTrace, type TraceEvent } from '../model/trace';
import { CoreError } from './errors';

export interface EmscriptenCore {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  UTF8ToString(ptr: number): string;
  stringToUTF8(s: string, ptr: number, max: number): void;
  lengthBytesUTF8(s: string): number;
  _blab_mkfs(size: bigint, nodesize: number, label: number, seed: bigint, now: bigint): number;
  _blab_open(data: number, len: bigint): number;
  _blab_close(h: number): void;
  _blab_last_error(): number;
  _blab_dump_json(h: number): number;
  _blab_dump_json_tree(h: number, tree: bigint, maxLeafEntries: number): number;
  _blab_session_dump_at_event(h: number, seq: bigint, tree: bigint, maxLeafEntries: number): number;
  _blab_trace_json(h: number): number;
  _blab_trace_schema_json(): number;
  _blab_costs_json(): number;
  _blab_image_size(h: number): bigint;
  _blab_image_page(h: number, index: bigint): number;
  _blab_page_size(): number;
  _blab_run(text: number, len: number, seed: bigint, now: bigint, flags: number): number;
  _blab_metrics_json(h: number): number;
  _blab_ls(h: number, path: number): number;
  _blab_cat(h: number, path: number, lenOut: number): number;
  _blab_check(h: number, errorsOut: number): number;
  _blab_replay_steps(h: number, steps: number): number;
  _blab_session(text: number, len: number, seed: bigint, now: bigint, flags: number, every: number): number;
  _blab_session_seek(h: number, line: number): number;
  _blab_session_crash(h: number, line: number): number;
  _blab_session_crash_event(h: number, seq: bigint): number;
  _blab_reopen(h: number): number;
  _blab_session_stats_json(h: number): number;
  _blab_alloc(n: number): number;
  _blab_free(p: number): void;
}

export interface EmscriptenOptions {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string, prefix: string) => string;
}

export interface MkfsOptions {
  size: bigint;
  nodesize: number;
  label?: string;
  /** UUIDs derive from the seed: the same seed and time give the same bytes. */
  seed: bigint;
  /** Seconds since the epoch, for inode and root times. */
  now: bigint;
}

export interface RunOptions {
  seed: bigint;
  now: bigint;
  /** Keep the event trace (for the player); costs memory on long scripts. */
  trace: boolean;
  /** Leave the last transaction running: the state in memory after the last line. */
  noFinalCommit?: boolean;
  /** A run that fails still gives a handle on the state the error left (its trace up to the error, metrics.failed; not for export). */
  keepFailed?: boolean;
}

/** A session's checkpoints (wasm-core/src/checkpoint.h). */
export interface SessionStats {
  units: number;
  /** Events of the script's commands: the final commit's come after (their seq is at least this). */
  commandEvents: number;
  lines: number;
  checkpoints: number;
  /** Units between checkpoints (doubled each time they outgrew their memory budget). */
  every: number;
  pages: number;
  blocks: number;
  /** What the checkpoints hold in memory. */
  bytes: number;
  run_ms: number;
  /** Units the seeks have run so far. */
  units_run: number;
}

export interface DirEntry {
  name: string;
  ino: bigint;
  type: number;
  mode: number;
  size: bigint;
  nlink: number;
}

export interface ScenarioMetrics {
  run_ms: number;
  lines: number;
  ops: number;
  commits: number;
  generation: number;
  nodesize: number;
  bytes_used: number;
  trees: Record<string, { level: number; blocks: number; items: number }>;
  events: Record<string, number>;
  crashed: boolean;
  dir_logging: 'index-only' | 'legacy' | '5.10' | '5.17';
  fsyncs: FsyncMetrics[];
  /** Ordered extents: made, completed, logged while in flight, and fsyncs that logged one in flight. */
  ordered?: { added: number; finished: number; loggedInFlight: number; fsyncsLoggingInFlight: number };
  /** What a fast fsync waits for (set fsync_wait=): before Linux 5.10 the ordered extents, since then writeback. */
  fsyncWait?: 'ordered' | 'writeback';
  /** When threads ran: the simulated time's figures. */
  timed?: TimedMetrics;
  /** A run kept though it failed (RunOptions.keepFailed): the error that stopped it (code: its name, as errors.ts has them). */
  failed?: { code: string; message: string };
  /** Block groups and tree-block extents a balance or relocate moved ("found N extents", summed). */
  relocated?: { block_groups: number; extents: number };
  /** Qgroup dirty extents over every commit (the kernel's btrfs_qgroup_num_dirty_extents, summed). */
  qgroup_dirty_extents?: number;
  /** Each space_info's counters at the end, the global block reserve and the delalloc metadata reserved (bytes). */
  space?: { globalRsv: number; delallocMeta: number } & Record<'data' | 'metadata' | 'system', SpaceInfoMetrics>;
}

/** A space_info's counters (bytes). */
export interface SpaceInfoMetrics {
  total: number;
  used: number;
  reserved: number;
  pinned: number;
  mayUse: number;
  readonly: number;
}

/** Tickets and the reclaim workers (seed 002): flush states in order of first use, runs by state, the delalloc flushes' budgets (pages, or inodes) and what they wrote. */
export interface ReclaimMetrics {
  tickets: number;
  ticketsFailed: number;
  ticketWaitNs: number;
  order: string[];
  runs: Record<string, number>;
  shrink: { calls: number; budgetP50: number; budgetMax: number; pages: number; inodes: number };
}

/** A timed op's latencies (virtual ns). */
export interface LatencyMetrics {
  n: number;
  meanNs: number;
  p50Ns: number;
  p99Ns: number;
  maxNs: number;
}

/** What threads did in simulated time (scenario metrics, when a section ran). */
export interface TimedMetrics {
  device: string;
  cpus: number;
  sched?: string;
  seed?: number;
  virtualNs: number;
  bytesWritten: number;
  throughputMiBs: number;
  commits: number;
  logSyncs: number;
  fsyncs: number;
  fsyncsLoggingInFlight?: number;
  fsyncFullCommits?: number;
  ops: Partial<Record<'write' | 'fsync' | 'sync' | 'sleep' | 'namespace', LatencyMetrics>>;
  /** Time tasks spent waiting, by cause. */
  waitedNs: Record<string, number>;
  bios: Record<string, { n: number; bytes: number }>;
  /** The dirty limits (set memory=, dirty=, dirty_background=) and the most data dirty or under writeback where a writer throttles. */
  dirty?: { limitBytes: number; backgroundBytes: number; peakBytes: number };
  locks: Record<string, { contended: number; waitNs: number }>;
  /** Over the fsyncs that logged: the fs leaves logging read-locked to copy from, and of those the ones the kernel clones
   * before copying (before seed 000's change; counted in every log_copy mode). */
  logLeaves?: { fsyncs: number; read: number; cloned: number };
  /** Untars (seed 002): files and directories made, bytes written, time writing and in the final syncfs, summed. */
  untar?: { files: number; dirs: number; bytes: number; writeNs: number; syncNs: number };
  reclaim?: ReclaimMetrics;
}

/** One row of the time model's cost table (wasm-core/src/costs.c): what a unit of work costs and where the figure comes from. */
export interface CostRow {
  key: string;
  name: string;
  ns: number;
  unit: string;
  source: string;
}

/** A device profile of the time model (set device=NAME). */
export interface DeviceProfile {
  name: string;
  cpus: number;
  queueDepth: number;
  writeLatencyNs: number;
  /** Bytes a second. */
  bandwidth: number;
  flushNs: number;
  fuaNs: number;
  seekNs: number;
  ssd: boolean;
  jiffyNs: number;
  jitterPct: number;
  flushBarrier: boolean;
  cpuPct: number;
  /** A request that finds the device idle waits this long to start (a loop device's worker woken). */
  idleWakeNs: number;
  /** An fsync woken at the end of another's log commit waits this long more for a CPU. */
  logWakeNs: number;
  /** This many flushes in a million are slow ones, taking flushTailNs instead of flushNs (0: none). */
  flushTailPpm: number;
  flushTailNs: number;
  source: string;
}

export interface CostTable {
  costs: CostRow[];
  devices: DeviceProfile[];
}

/** What one fsync did (scenario metrics). */
export interface FsyncMetrics {
  line: number;
  ms: number;
  ino: number;
  result: string;
  items: Record<string, number>;
  items_total: number;
  bytes: number;
  leaves: number;
  nodes: number;
  level: number;
  blocks_written: number;
  fs_leaves_read: number;
  inodes_logged: number;
  ranges: number;
  bytes_shifted: number;
  log_searches: number;
  cost_us: number;
}

/** blab_run's flags (wasm-core/src/api.h). */
const RUN_TRACE = 1, RUN_NO_FINAL_COMMIT = 2, RUN_KEEP_FAILED = 4;

/** An open filesystem inside the core. */
export type Handle = number & { readonly __handle: unique symbol };

export class Core {
  private constructor(private readonly m: EmscriptenCore) {}

  static fromModule(m: EmscriptenCore): Core {
    return new Core(m);
  }

  private lastError(): string {
    return this.m.UTF8ToString(this.m._blab_last_error());
  }

  private check(ret: number): number {
    if (ret < 0) throw new CoreError(ret, this.lastError());
    return ret;
  }

  private string(ptr: number): string {
    if (!ptr) throw new CoreError(-1, this.lastError());
    return this.m.UTF8ToString(ptr);
  }

  /** Calls fn with s as a NUL-terminated string in core memory. */
  private withString<T>(s: string, fn: (ptr: number, len: number) => T): T {
    const n = this.m.lengthBytesUTF8(s) + 1;
    const p = this.m._blab_alloc(n);
    if (!p) throw new CoreError(-2, `ENOMEM: no room for ${n} bytes`);
    try {
      this.m.stringToUTF8(s, p, n);
      return fn(p, n - 1);
    } finally {
      this.m._blab_free(p);
    }
  }

  /**
   * Runs a scenario script from an empty filesystem. With keepFailed, a run
   * that fails past its mkfs line still gives a handle (metrics(h).failed
   * says why); one that fails before it throws, as any failed run does.
   */
  run(script: string, o: RunOptions): Handle {
    const flags = (o.trace ? RUN_TRACE : 0) | (o.noFinalCommit ? RUN_NO_FINAL_COMMIT : 0) | (o.keepFailed ? RUN_KEEP_FAILED : 0);
    return this.withString(script, (p, len) => this.check(this.m._blab_run(p, len, o.seed, o.now, flags)) as Handle);
  }

  /**
   * Runs a script to its end, keeping checkpoints every `every` units (0: the
   * core's default): the handle shows the end (trace, metrics); seek() and
   * crash() reach any line's state from the nearest checkpoint.
   */
  session(script: string, o: RunOptions, every = 0): Handle {
    return this.withString(script, (p, len) => this.check(this.m._blab_session(p, len, o.seed, o.now, o.trace ? 1 : 0, every)) as Handle);
  }

  /** A handle showing the state after `line` of session h (0: after mkfs), borrowed until h's next seek: read it, do not close it. */
  seek(h: Handle, line: number): Handle {
    return this.check(this.m._blab_session_seek(h, line)) as Handle;
  }

  /** A crash point: a new handle with the state after `line` of session h, then a power cut (its log pending), trace on. */
  crash(h: Handle, line: number): Handle {
    return this.check(this.m._blab_session_crash(h, line)) as Handle;
  }

  /** A copy of image h, opened as the next mount opens it (its log pending), trace on: replay it without changing h. */
  reopen(h: Handle): Handle {
    return this.check(this.m._blab_reopen(h)) as Handle;
  }

  /** A crash point inside a line: a new handle with the device right after the run's event seq (a block or superblock write), its log pending, trace on. */
  crashAtEvent(h: Handle, seq: number): Handle {
    return this.check(this.m._blab_session_crash_event(h, BigInt(seq))) as Handle;
  }

  sessionStats(h: Handle): SessionStats {
    return JSON.parse(this.string(this.m._blab_session_stats_json(h))) as SessionStats;
  }

  /** Replays h's pending log as mount would (all of it, committed), or only its first `steps` actions (uncommitted). */
  replay(h: Handle, steps = 0): void {
    this.check(this.m._blab_replay_steps(h, steps));
  }

  metrics(h: Handle): ScenarioMetrics {
    return JSON.parse(this.string(this.m._blab_metrics_json(h))) as ScenarioMetrics;
  }

  ls(h: Handle, path: string): DirEntry[] {
    const raw = JSON.parse(this.withString(path, (p) => this.string(this.m._blab_ls(h, p)))) as
      { name: string; ino: string; type: number; mode: number; size: string; nlink: number }[];
    return raw.map((e) => ({ ...e, ino: BigInt(e.ino), size: BigInt(e.size) }));
  }

  cat(h: Handle, path: string): Uint8Array {
    const lenPtr = this.m._blab_alloc(4);
    try {
      const ptr = this.withString(path, (p) => this.m._blab_cat(h, p, lenPtr));
      if (!ptr) throw new CoreError(-6, this.lastError());
      const len = this.m.HEAPU32[lenPtr >> 2];
      return this.m.HEAPU8.slice(ptr, ptr + len);
    } finally {
      this.m._blab_free(lenPtr);
    }
  }

  /** The core's consistency check: the problems found, as lines. */
  checkFs(h: Handle): { errors: number; problems: string[] } {
    const errPtr = this.m._blab_alloc(4);
    try {
      const text = this.string(this.m._blab_check(h, errPtr));
      return { errors: this.m.HEAPU32[errPtr >> 2], problems: text.split('\n').filter(Boolean) };
    } finally {
      this.m._blab_free(errPtr);
    }
  }

  mkfs(o: MkfsOptions): Handle {
    const label = o.label ?? '';
    const n = this.m.lengthBytesUTF8(label) + 1;
    const p = this.m._blab_alloc(n);
    try {
      this.m.stringToUTF8(label, p, n);
      return this.check(this.m._blab_mkfs(o.size, o.nodesize, p, o.seed, o.now)) as Handle;
    } finally {
      this.m._blab_free(p);
    }
  }

  /** Opens an image (ours, mkfs.btrfs's or the kernel's); bytes are copied in. */
  open(bytes: Uint8Array): Handle {
    if (bytes.length === 0) throw new CoreError(-1, 'EINVAL: the image is empty');
    const p = this.m._blab_alloc(bytes.length);
    if (!p) throw new CoreError(-2, `ENOMEM: no room for an image of ${bytes.length} bytes`);
    try {
      this.m.HEAPU8.set(bytes, p);
      return this.check(this.m._blab_open(p, BigInt(bytes.length))) as Handle;
    } finally {
      this.m._blab_free(p);
    }
  }

  close(h: Handle): void {
    this.m._blab_close(h);
  }

  dumpTrees(h: Handle): TreeDump {
    return parseTreeDump(this.string(this.m._blab_dump_json(h)));
  }

  /** One tree in full, the others listed; leaves of more than maxLeafEntries items give their first and last only. */
  dumpTree(h: Handle, tree: bigint, maxLeafEntries = 0): TreeDump {
    return parseTreeDump(this.string(this.m._blab_dump_json_tree(h, tree, maxLeafEntries)));
  }

  /** Session h's tree right after its trace's event seq (mid-command), as dumpTree gives it. */
  dumpAtEvent(h: Handle, seq: number, tree: bigint, maxLeafEntries = 0): TreeDump {
    return parseTreeDump(this.string(this.m._blab_session_dump_at_event(h, BigInt(seq), tree, maxLeafEntries)));
  }

  trace(h: Handle): TraceEvent[] {
    return parseTrace(this.traceJson(h));
  }

  /** The trace as the core writes it (a JSON array of events with named fields). */
  traceJson(h: Handle): string {
    return this.string(this.m._blab_trace_json(h));
  }

  /** The trace schema (wasm-core/src/trace-events.h) as the core prints it. */
  traceSchema(): unknown {
    return JSON.parse(this.string(this.m._blab_trace_schema_json()));
  }

  /** The time model's cost table and device profiles, each with its source. */
  costs(): CostTable {
    return JSON.parse(this.string(this.m._blab_costs_json())) as CostTable;
  }

  pageSize(): number {
    return this.m._blab_page_size();
  }

  imageSize(h: Handle): bigint {
    return this.m._blab_image_size(h);
  }

  /**
   * The image as Blob parts: one copied chunk per written page, and a shared
   * zero chunk for each hole, so a mostly empty image costs little.
   */
  imageParts(h: Handle): Uint8Array[] {
    const size = this.imageSize(h);
    const page = this.pageSize();
    const zero = new Uint8Array(page);
    const parts: Uint8Array[] = [];
    const pages = (size + BigInt(page) - 1n) / BigInt(page);
    for (let i = 0n; i < pages; i++) {
      const len = Number(size - i * BigInt(page) < BigInt(page) ? size - i * BigInt(page) : BigInt(page));
      const ptr = this.m._blab_image_page(h, i);
      parts.push(ptr ? this.m.HEAPU8.slice(ptr, ptr + len) : len === page ? zero : new Uint8Array(len));
    }
    return parts;
  }

  /**
   * The image's written ranges only, in the form the companion takes
   * (Content-Type application/x-btrfslab-sparse): "BLSPARS1", the image size
   * (u64 LE), then per run of present pages an offset and a length (u64 LE)
   * and the bytes. The page's device is mostly never written: a few MiB go
   * instead of hundreds (a browser refuses to hold that much as one upload).
   */
  sparseImageParts(h: Handle): Uint8Array[] {
    const size = this.imageSize(h);
    const page = BigInt(this.pageSize());
    const head = new Uint8Array(16);
    head.set(new TextEncoder().encode('BLSPARS1'));
    new DataView(head.buffer).setBigUint64(8, size, true);
    const parts: Uint8Array[] = [head];
    let run: { off: bigint; len: bigint; hdr: DataView } | null = null;
    const pages = (size + page - 1n) / page;
    for (let i = 0n; i < pages; i++) {
      const ptr = this.m._blab_image_page(h, i);
      if (!ptr) {
        run = null;
        continue;
      }
      const len = size - i * page < page ? size - i * page : page;
      if (!run) {
        const rec = new Uint8Array(16);
        run = { off: i * page, len: 0n, hdr: new DataView(rec.buffer) };
        run.hdr.setBigUint64(0, run.off, true);
        parts.push(rec);
      }
      parts.push(this.m.HEAPU8.slice(ptr, ptr + Number(len)));
      run.len += len;
      run.hdr.setBigUint64(8, run.len, true);
    }
    return parts;
  }

  /** The whole image in one buffer (tests; small images). */
  imageBytes(h: Handle): Uint8Array {
    const out = new Uint8Array(Number(this.imageSize(h)));
    let off = 0;
    for (const p of this.imageParts(h)) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }
}
