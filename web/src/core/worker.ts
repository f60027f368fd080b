/// <reference lib="webworker" />
// The core in a Web Worker: loads the WASM module once, answers requests.
import createBtrfsCore from './generated/btrfslab-core.mjs';
import wasmUrl from './generated/btrfslab-core.wasm?url';
import { typeOfFt, type FileView } from '../model/kernelAnswer';
import { sha256Hex } from '../model/sha256';
import { CORE_ERRNO, CoreError } from './errors';
import type { Envelope, Reply, Results } from './protocol';
import { readModeRun, scriptInMode } from '../model/relocation';
import { keepFullWalks, relocationStory } from './relocFull';
import { scheduleRun } from './scheduleRun';
import { sharedPicture } from './sharedPicture';
import { Sessions } from './sessions';
import { Core, type Handle, type RunOptions } from './wasm';

const TREE_LOG = 18446744073709551610n;

const scope = self as unknown as DedicatedWorkerGlobalScope;
let live: Sessions | null = null;
const sessions = (core: Core) => (live ??= new Sessions(core));
const ready: Promise<Core> = createBtrfsCore({ locateFile: () => wasmUrl }).then(Core.fromModule);

/** The crash point of a request: after its line, or right after the write whose event is seq. */
function crashAt(core: Core, req: { script: string; opts: RunOptions; line: number; seq?: number }): Handle {
  const h = sessions(core).get(req.script, req.opts);
  return req.seq !== undefined ? core.crashAtEvent(h, req.seq) : core.crash(h, req.line);
}

/** Every path of h, as `btrfslab kernel --json` lists the kernel's (at most 100,000: a view, not a copy). */
function filesOf(core: Core, h: Handle): FileView[] {
  const out: FileView[] = [{ path: '/', type: 'dir' }];
  const walk = (dir: string) => {
    for (const e of core.ls(h, dir)) {
      if (out.length >= 100000) throw new CoreError(CORE_ERRNO.EINVAL, 'EINVAL: more than 100,000 paths: too many to set beside the kernel\'s');
      const path = dir === '/' ? `/${e.name}` : `${dir}/${e.name}`;
      const f: FileView = { path, type: typeOfFt(e.type), mode: e.mode & 0o7777, nlink: e.nlink, size: Number(e.size) };
      if (f.type === 'file') f.sha256 = sha256Hex(core.cat(h, path));
      if (f.type === 'symlink') f.target = new TextDecoder().decode(core.cat(h, path));
      out.push(f);
      if (f.type === 'dir') walk(path);
    }
  };
  walk('/');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A crashed image (handle h, closed here) before its replay (fs and log trees), the replay's events, and the fs tree after. */
function replayed(core: Core, h: Handle, maxLeafEntries: number): Results['crashReplay'] {
  try {
    const fs = core.dumpTree(h, 5n, maxLeafEntries);
    const logs = core.dumpTree(h, TREE_LOG, maxLeafEntries);
    const before = { ...fs, trees: fs.trees.map((t) => (t.id === TREE_LOG ? logs.trees.find((l) => l.name === t.name) ?? t : t)) };
    core.replay(h);
    return { before, events: core.trace(h), after: core.dumpTree(h, 5n, maxLeafEntries) };
  } finally {
    core.close(h);
  }
}

function handle(core: Core, req: Exclude<Envelope, { op: 'open' }>): Results[keyof Results] {
  switch (req.op) {
    case 'ready':
      return { pageSize: core.pageSize() };
    case 'mkfs': {
      const handle = core.mkfs(req.opts);
      return { handle, size: core.imageSize(handle) };
    }
    case 'run': {
      const handle = core.run(req.script, req.opts);
      return { handle, size: core.imageSize(handle) };
    }
    case 'metrics':
      return core.metrics(req.handle);
    case 'traceRun': {
      const h = sessions(core).get(req.script, req.opts);
      return { events: core.trace(h), metrics: core.metrics(h), commandEvents: core.sessionStats(h).commandEvents };
    }
    case 'runSteps': {
      const s = sessions(core).steps(req.script, req.opts);
      return { steps: s.infos, metrics: core.metrics(sessions(core).get(req.script, req.opts)), commandEvents: s.commandEvents };
    }
    case 'stepView':
      return sessions(core).steps(req.script, req.opts).view(req.index, req.tree, req.moment, req.lens);
    case 'timeline':
      return sessions(core).steps(req.script, req.opts).timeline(req.index);
    case 'space':
      return sessions(core).steps(req.script, req.opts).space(req.index);
    case 'shared':
      return sessions(core).steps(req.script, req.opts).shared(req.index);
    case 'sharedAt': {
      const runs = sessions(core).steps(req.script, req.opts);
      const s = runs.infos[req.index];
      if (!s) throw new CoreError(CORE_ERRNO.EINVAL, `EINVAL: step ${req.index}: the run has ${runs.infos.length} steps`);
      const h = sessions(core).get(req.script, req.opts);
      // the core stops inside the script's commands, not in the commit that ends it
      return req.seq !== null && req.seq >= 0 && req.seq < runs.commandEvents ? sharedPicture(core, h, { seq: req.seq }) : sharedPicture(core, h, { line: s.final ? -1 : s.line });
    }
    case 'relocation':
      return relocationStory(core, sessions(core).steps(req.script, req.opts), req.script, req.opts, req.index);
    case 'relocModes':
      return req.modes.map((mode) => {
        const h = core.run(scriptInMode(req.script, mode), { ...req.opts, trace: true });
        try {
          const trace = core.trace(h);
          if (mode === 'full') keepFullWalks(req.script, req.opts, trace);
          return readModeRun(mode, trace, core.metrics(h).relocated?.extents ?? 0);
        } finally {
          core.close(h);
        }
      });
    case 'costs':
      return core.costs();
    case 'scheduleRun':
      return scheduleRun(core, req.script, req.opts, req.section, req.picks);
    case 'stateAt': {
      // line -1: the run's end, after the commit that ends the script (the session's own state)
      const h = sessions(core).get(req.script, req.opts);
      return core.dumpTree(req.line < 0 ? h : core.seek(h, req.line), req.tree, req.maxLeafEntries);
    }
    case 'stateAtEvent':
      return core.dumpAtEvent(sessions(core).get(req.script, req.opts), req.seq, req.tree, req.maxLeafEntries);
    case 'crashReplay':
      return replayed(core, crashAt(core, req), req.maxLeafEntries);
    case 'imageReplay':
      return replayed(core, core.reopen(req.handle), req.maxLeafEntries);
    case 'imageReplayStateAt': {
      const h = core.reopen(req.handle);
      try {
        if (req.steps > 0) core.replay(h, req.steps);
        return core.dumpTree(h, 5n, req.maxLeafEntries);
      } finally {
        core.close(h);
      }
    }
    case 'replayStateAt': {
      const h = crashAt(core, req);
      try {
        if (req.steps > 0) core.replay(h, req.steps);
        return core.dumpTree(h, 5n, req.maxLeafEntries);
      } finally {
        core.close(h);
      }
    }
    case 'crashPoints':
      return sessions(core).steps(req.script, req.opts).crashPoints();
    case 'kernelInput': {
      const h = req.line < 0 ? core.reopen(sessions(core).get(req.script, req.opts)) : crashAt(core, req);
      try {
        const blob = new Blob(core.sparseImageParts(h) as BlobPart[], { type: 'application/x-btrfslab-sparse' });
        core.replay(h);
        return { blob, files: filesOf(core, h) };
      } finally {
        core.close(h);
      }
    }
    case 'crashImage': {
      const h = crashAt(core, req);
      try {
        return { blob: new Blob(core.imageParts(h) as BlobPart[], { type: 'application/octet-stream' }) };
      } finally {
        core.close(h);
      }
    }
    case 'sessionStats':
      return core.sessionStats(sessions(core).get(req.script, req.opts));
    case 'ls':
      return core.ls(req.handle, req.path);
    case 'cat':
      return core.cat(req.handle, req.path);
    case 'check':
      return core.checkFs(req.handle);
    case 'dump':
      return core.dumpTrees(req.handle);
    case 'trace':
      return core.trace(req.handle);
    case 'export':
      return { blob: new Blob(core.imageParts(req.handle) as BlobPart[], { type: 'application/octet-stream' }) };
    case 'close':
      core.close(req.handle);
      return null;
  }
}

/** Reads the file here, not in the page: a huge or unreadable file costs this thread, which the page can end. */
async function openFile(core: Core, file: Blob, name: string): Promise<Results['open']> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await file.arrayBuffer());
  } catch (e) {
    throw new CoreError(-2, `ENOMEM: ${name}: ${file.size} bytes could not be read into the page (${String((e as Error)?.message ?? e)})`);
  }
  const handle = core.open(bytes);
  return { handle, size: core.imageSize(handle) };
}

scope.onmessage = async (ev: MessageEvent<Envelope>) => {
  const req = ev.data;
  let reply: Reply;
  try {
    const core = await ready;
    reply = { id: req.id, ok: true, result: req.op === 'open' ? await openFile(core, req.file, req.name) : handle(core, req) };
  } catch (e) {
    const err = e instanceof CoreError ? e : new CoreError(-3, `core failed: ${String((e as Error)?.message ?? e)}`);
    // a trap (emscripten's abort is one too) leaves the core's memory in any state: the page restarts this worker
    reply = { id: req.id, ok: false, error: { code: err.code, message: err.message }, fatal: e instanceof WebAssembly.RuntimeError };
  }
  scope.postMessage(reply);
};
