/// <reference lib="webworker" />
// The core in a Web Worker: loads the WASM module once, answers requests.
import createBtrfsCore from './generated/btrfslab-core.mjs';
import wasmUrl from './generated/btrfslab-core.wasm?url';
import { CoreError } from './errors';
import type { Envelope, Reply, Results } from './protocol';
import { Core } from './wasm';

const TREE_LOG = 18446744073709551610n;

const scope = self as unknown as DedicatedWorkerGlobalScope;
const ready: Promise<Core> = createBtrfsCore({ locateFile: () => wasmUrl }).then(Core.fromModule);

function handle(core: Core, req: Envelope): Results[keyof Results] {
  switch (req.op) {
    case 'ready':
      return { pageSize: core.pageSize() };
    case 'mkfs': {
      const handle = core.mkfs(req.opts);
      return { handle, size: core.imageSize(handle) };
    }
    case 'open': {
      const handle = core.open(new Uint8Array(req.bytes));
      return { handle, size: core.imageSize(handle) };
    }
    case 'run': {
      const handle = core.run(req.script, req.opts);
      return { handle, size: core.imageSize(handle) };
    }
    case 'metrics':
      return core.metrics(req.handle);
    case 'traceRun': {
      const h = core.run(req.script, { ...req.opts, trace: true });
      try {
        return { events: core.trace(h), metrics: core.metrics(h) };
      } finally {
        core.close(h);
      }
    }
    case 'stateAt': {
      const h = core.run(req.script, { ...req.opts, trace: false, noFinalCommit: true });
      try {
        return core.dumpTree(h, req.tree, req.maxLeafEntries);
      } finally {
        core.close(h);
      }
    }
    case 'crashReplay': {
      const h = core.run(req.script, { ...req.opts, trace: true });
      try {
        const fs = core.dumpTree(h, 5n, req.maxLeafEntries);
        const logs = core.dumpTree(h, TREE_LOG, req.maxLeafEntries);
        const before = { ...fs, trees: fs.trees.map((t) => (t.id === TREE_LOG ? logs.trees.find((l) => l.name === t.name) ?? t : t)) };
        const metrics = core.metrics(h);
        // events so far: the metrics count every event the trace holds (not the trace again)
        const n0 = Object.values(metrics.events).reduce((a, b) => a + b, 0);
        core.replay(h);
        const events = core.trace(h).slice(n0);
        return { before, events, after: core.dumpTree(h, 5n, req.maxLeafEntries), metrics };
      } finally {
        core.close(h);
      }
    }
    case 'replayStateAt': {
      const h = core.run(req.script, { ...req.opts, trace: false });
      try {
        if (req.steps > 0) core.replay(h, req.steps);
        return core.dumpTree(h, 5n, req.maxLeafEntries);
      } finally {
        core.close(h);
      }
    }
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

scope.onmessage = async (ev: MessageEvent<Envelope>) => {
  const req = ev.data;
  let reply: Reply;
  try {
    reply = { id: req.id, ok: true, result: handle(await ready, req) };
  } catch (e) {
    const err = e instanceof CoreError ? e : new CoreError(-3, `core failed: ${String((e as Error)?.message ?? e)}`);
    reply = { id: req.id, ok: false, error: { code: err.code, message: err.message } };
  }
  scope.postMessage(reply);
};
