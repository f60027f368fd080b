import { useCallback, useEffect, useReducer, useRef } from 'react';
import { CoreClient } from './core/client';
import type { Handle } from './core/wasm';
import { countByKind } from './model/trace';
import { initialState, reduce, type Source } from './model/store';
import { FormatPanel, type FormatRequest } from './views/FormatPanel';
import { ImagePanel } from './views/ImagePanel';
import { TreeList } from './views/TreeList';

export function App() {
  const [state, dispatch] = useReducer(reduce, initialState);
  const core = useRef<CoreClient | null>(null);

  useEffect(() => {
    const c = new CoreClient();
    core.current = c;
    c.call({ op: 'ready' }).then(
      () => dispatch({ type: 'idle' }),
      (e: Error) => dispatch({ type: 'failed', message: `The core did not load: ${e.message}` }),
    );
    return () => c.terminate();
  }, []);

  const show = useCallback(async (handle: Handle, size: bigint, source: Source) => {
    const c = core.current!;
    const [dump, events] = await Promise.all([c.call({ op: 'dump', handle }), c.call({ op: 'trace', handle })]);
    const old = state.image?.handle;
    if (old) void c.call({ op: 'close', handle: old as Handle });
    dispatch({ type: 'loaded', image: { handle, size, source, dump, events: countByKind(events) } });
  }, [state.image?.handle]);

  const format = useCallback(async (req: FormatRequest) => {
    dispatch({ type: 'busy', what: 'Formatting…' });
    try {
      const seed = BigInt.asUintN(64, BigInt(crypto.getRandomValues(new Uint32Array(2)).reduce((a, v) => a * 4294967296 + v, 0)));
      const r = await core.current!.call({
        op: 'mkfs',
        opts: { size: req.size, nodesize: req.nodesize, label: req.label, seed, now: BigInt(Math.floor(Date.now() / 1000)) },
      });
      await show(r.handle, r.size, { kind: 'mkfs', label: req.label });
    } catch (e) {
      dispatch({ type: 'failed', message: (e as Error).message });
    }
  }, [show]);

  const open = useCallback(async (file: File) => {
    dispatch({ type: 'busy', what: `Reading ${file.name}…` });
    try {
      const bytes = await file.arrayBuffer();
      const r = await core.current!.call({ op: 'open', bytes, name: file.name }, [bytes]);
      await show(r.handle, r.size, { kind: 'file', name: file.name });
    } catch (e) {
      dispatch({ type: 'failed', message: `${file.name}: ${(e as Error).message}` });
    }
  }, [show]);

  const download = useCallback(async () => {
    if (!state.image) return;
    const { blob } = await core.current!.call({ op: 'export', handle: state.image.handle as Handle });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'btrfs-lab.img';
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
  }, [state.image]);

  return (
    <div className="app">
      <header className="masthead">
        <h1>btrfs-lab</h1>
        <p>Run btrfs, watch it, then hand the result to the Linux kernel.</p>
      </header>
      <main>
        <FormatPanel disabled={state.busy !== null} onFormat={format} onOpen={open} />
        <p className="status" role="status" aria-live="polite">{state.busy ?? (state.image ? 'Ready.' : '')}</p>
        {state.error && <p className="error" role="alert">{state.error}</p>}
        {state.image && (
          <>
            <ImagePanel image={state.image} onDownload={download} />
            <TreeList dump={state.image.dump} />
          </>
        )}
      </main>
    </div>
  );
}
