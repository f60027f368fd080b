import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import { saveBlob } from './views/saveBlob';
import { CancelledError, CoreClient, type Restart } from './core/client';
import type { Handle } from './core/wasm';
import { countByKind } from './model/trace';
import { initialState, reduce, type Source } from './model/store';
import { LESSONS } from './lessons';
import { readAddress, writeAddress, type Address } from './model/address';
import type { Schedule } from './model/schedule';
import { BusyBar } from './views/BusyBar';
import { FilesPanel } from './views/FilesPanel';
import { FormatPanel, type FormatRequest } from './views/FormatPanel';
import { ImageLogReplay } from './views/ImageLogReplay';
import { ImagePanel } from './views/ImagePanel';
import { LessonView, type LessonScripts } from './views/LessonView';
import { TreeExplorer } from './views/TreeExplorer';
import { TreeList } from './views/TreeList';

/** The address bar holds the view (model/address.ts): ?lesson=ID&step=N with the learner's own script and crash point, or ?view=playground. */
function readUrl(): Address {
  return readAddress(window.location.search, LESSONS.map((l) => l.id));
}

function writeUrl(a: Address) {
  window.history.replaceState(null, '', `${window.location.pathname}?${writeAddress(a)}`);
}

const URL_DELAY_MS = 250;

const sameSchedule = (a: Schedule | null, b: Schedule | null) => a === b || (!!a && !!b && a.section === b.section && a.picks.join(',') === b.picks.join(','));

const reducedMotion = typeof window !== 'undefined' && !!window.matchMedia?.('(prefers-reduced-motion: reduce)').matches;

const noMarks = new Map();

function restartMessage(why: Restart): string {
  return why.kind === 'cancelled'
    ? 'Cancelled: the core stopped what it was doing and started afresh.'
    : `The core failed and was restarted: ${why.message}`;
}

export function App() {
  const [state, dispatch] = useReducer(reduce, initialState);
  const core = useRef<CoreClient | null>(null);
  const [where, setWhere] = useState(readUrl);
  const [explorerTree, setExplorerTree] = useState('fs');
  const [ready, setReady] = useState(false);
  const [generation, setGeneration] = useState(0); // bumped when the core is restarted (a cancel, a failure)
  // each lesson's scenario text and last good run, kept across a restart: the lesson comes back as it was
  const lessonScripts = useRef(new Map<string, LessonScripts>());
  // the address follows the step once stepping pauses: history.replaceState
  // costs tens of milliseconds in Chromium, too much for every step of a scrub
  useEffect(() => {
    const t = setTimeout(() => writeUrl(where), URL_DELAY_MS);
    return () => clearTimeout(t);
  }, [where]);

  useEffect(() => {
    const c = new CoreClient();
    core.current = c;
    c.onRestart((why) => {
      setGeneration((g) => g + 1);
      dispatch({ type: 'restarted', message: restartMessage(why) });
    });
    c.call({ op: 'ready' }).then(
      () => {
        dispatch({ type: 'idle' });
        setReady(true);
      },
      (e: Error) => dispatch({ type: 'failed', message: `The core did not load: ${e.message}` }),
    );
    return () => c.terminate();
  }, []);

  const show = useCallback(async (handle: Handle, size: bigint, source: Source) => {
    const c = core.current!;
    let dump, events;
    try {
      [dump, events] = await Promise.all([c.call({ op: 'dump', handle }), c.call({ op: 'trace', handle })]);
    } catch (e) {
      // opened, but a block read later is refused (the tree checker): let the handle go
      if (!(e instanceof CancelledError)) void c.call({ op: 'close', handle }).catch(() => undefined);
      throw e;
    }
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
      if (!(e instanceof CancelledError)) dispatch({ type: 'failed', message: (e as Error).message });
    }
  }, [show]);

  const open = useCallback(async (file: File) => {
    dispatch({ type: 'busy', what: `Reading ${file.name}…` });
    try {
      // the worker reads the file: the page's thread never holds or decodes the bytes
      const r = await core.current!.call({ op: 'open', file, name: file.name });
      await show(r.handle, r.size, { kind: 'file', name: file.name });
    } catch (e) {
      if (!(e instanceof CancelledError)) dispatch({ type: 'failed', message: `${file.name}: ${(e as Error).message}` });
    }
  }, [show]);

  const download = useCallback(async () => {
    if (!state.image) return;
    let blob: Blob;
    try {
      ({ blob } = await core.current!.call({ op: 'export', handle: state.image.handle as Handle }));
    } catch (e) {
      if (!(e instanceof CancelledError)) dispatch({ type: 'failed', message: (e as Error).message });
      return;
    }
    saveBlob('btrfs-lab.img', blob);
  }, [state.image]);

  const lesson = useMemo(() => LESSONS.find((l) => l.id === where.lesson) ?? null, [where.lesson]);

  return (
    <div className="app">
      <header className="masthead">
        <h1>btrfs-lab</h1>
        <p>Run btrfs, watch it, then hand the result to the Linux kernel.</p>
      </header>
      <nav className="tabs" aria-label="Sections">
        {LESSONS.map((l, i) => (
          <a key={l.id} href={`?lesson=${l.id}`} aria-current={where.lesson === l.id ? 'page' : undefined}
            onClick={(e) => { e.preventDefault(); setWhere({ lesson: l.id, step: 0, script: null, crash: null }); }}>Lesson {i + 1}: {l.title}</a>
        ))}
        <a href="?view=playground" aria-current={where.lesson === null ? 'page' : undefined}
          onClick={(e) => { e.preventDefault(); setWhere({ lesson: null, step: 0, script: null, crash: null }); }}>Images: make, open, export</a>
      </nav>
      <main>
        <p className="status" role="status" aria-live="polite">{state.busy ?? (state.image ? 'Ready.' : '')}</p>
        {ready && core.current && <BusyBar core={core.current} />}
        {state.error && <p className="error" role="alert">{state.error}</p>}
        {where.lesson && ready && lesson && (
          <LessonView key={`${lesson.id}-${generation}`} core={core.current!} lesson={lesson} step={where.step} reducedMotion={reducedMotion}
            onStep={(i) => setWhere((w) => ({ ...w, step: i }))}
            scripts={lessonScripts.current.get(lesson.id) ?? (where.script !== null ? { draft: where.script, ran: where.script } : undefined)}
            crash={where.crash ?? undefined} write={where.write ?? undefined} sched={where.sched ?? undefined}
            onScripts={(s) => lessonScripts.current.set(lesson.id, s)}
            onPlace={(p) => setWhere((w) => (w.script === p.script && w.crash === p.crash && (w.write ?? null) === p.write && sameSchedule(w.sched ?? null, p.sched) ? w : { ...w, ...p }))} />
        )}
        {!where.lesson && (
          <>
            <FormatPanel disabled={state.busy !== null} onFormat={format} onOpen={open} />
            {state.image && (
              <>
                <ImagePanel image={state.image} onDownload={download} />
                <FilesPanel key={state.image.handle} core={core.current!} handle={state.image.handle as Handle} />
                {state.image.dump.trees.some((t) => t.name === 'log') && (
                  <ImageLogReplay key={`replay-${state.image.handle}`} core={core.current!} handle={state.image.handle as Handle} reducedMotion={reducedMotion}
                    name={state.image.source.kind === 'file' ? state.image.source.name : 'this image'} />
                )}
                <TreeExplorer dump={state.image.dump} marks={noMarks} treeName={explorerTree} onTreeName={setExplorerTree} reducedMotion={reducedMotion} />
                <details className="panel">
                  <summary>Every block and item as a list</summary>
                  <TreeList dump={state.image.dump} />
                </details>
              </>
            )}
          </>
        )}
      </main>
    </div>
  );
}
