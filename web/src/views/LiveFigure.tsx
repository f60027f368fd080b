import { useEffect, useRef, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { Tree } from '../model/dump';
import { figureScript, sayParts, type Figure } from '../model/figures';
import { createTreeView } from './treeView';

const RUN = { seed: 1n, now: 1700000000n, trace: true };
const FS = 5n;

/** The names in the fs tree's DIR_INDEX items, as dump-tree's summary gives them. */
function names(tree: Tree): string[] {
  const out: string[] = [];
  for (const b of tree.blocks) {
    if (b.level) continue;
    for (const e of b.entries) {
      if (e.kind !== 'item' || e.key.type !== 96) continue;
      const m = /name (\S+)/.exec(e.summary);
      if (m) out.push(m[1]);
    }
  }
  return out;
}

/**
 * A small live figure inside the lesson's prose (model/figures.ts): a
 * sentence holding its control (a number of files, or a crash point), and
 * the fs tree that results, drawn from the core as the control moves.
 */
export function LiveFigure({ core, figure, reducedMotion, id }: { core: CoreClient; figure: Figure; reducedMotion: boolean; id: string }) {
  const [value, setValue] = useState(figure.kind === 'tree' ? figure.n : figure.at);
  const [tree, setTree] = useState<Tree | null>(null);
  const [error, setError] = useState<string | null>(null);
  const el = useRef<HTMLDivElement>(null);
  const view = useRef<ReturnType<typeof createTreeView> | null>(null);
  const lines = figure.script.trimEnd().split('\n');

  useEffect(() => {
    view.current = createTreeView({ el: el.current!, onSelectItem: () => undefined, onToggle: () => undefined });
    return () => view.current?.destroy();
  }, []);

  useEffect(() => {
    let live = true;
    const done = (t: Tree | undefined) => {
      if (!live || !t) return;
      setTree(t);
      setError(null);
    };
    const fail = (e: Error) => live && !(e instanceof CancelledError) && setError(e.message);
    if (figure.kind === 'tree') {
      const script = figureScript(figure, value);
      core.call({ op: 'stateAt', script, opts: RUN, line: script.split('\n').length, tree: FS, maxLeafEntries: 0 })
        .then((d) => done(d.trees.find((t) => t.id === FS)), fail);
    } else {
      core.call({ op: 'crashReplay', script: figure.script, opts: RUN, line: value, maxLeafEntries: 0 })
        .then((r) => done(r.after.trees.find((t) => t.id === FS)), fail);
    }
    return () => {
      live = false;
    };
  }, [core, figure, value]);

  useEffect(() => {
    if (tree) {
      view.current?.update({ tree, marks: new Map(), collapsed: new Set(), reducedMotion });
      view.current?.fit();
    }
  }, [tree, reducedMotion]);

  const [before, after] = sayParts(figure);
  const label = figure.kind === 'tree' ? 'files' : 'crash after line';
  const left = tree ? names(tree) : [];
  return (
    <figure className="live-figure" aria-labelledby={`${id}-say`}>
      <figcaption id={`${id}-say`}>
        {before}
        {figure.kind === 'tree' ? (
          <input type="number" min={figure.min} max={figure.max} value={value} aria-label={label}
            onChange={(e) => {
              const n = Number(e.target.value);
              if (Number.isInteger(n) && n >= figure.min && n <= figure.max) setValue(n);
            }} />
        ) : (
          <>
            <input type="range" min={1} max={lines.length} value={value} aria-label={label} onChange={(e) => setValue(Number(e.target.value))} />
            {' '}<output>{value}</output>
          </>
        )}
        {after}
        {figure.kind === 'crash' && <> <code>{lines[value - 1]}</code></>}
      </figcaption>
      <div className="live-canvas" ref={el} data-testid="live-canvas" data-state={tree ? String(value) : ''} />
      <p className="hint" aria-live="polite">
        {error ?? (!tree ? 'Running…'
          : figure.kind === 'tree' ? `The fs tree: ${tree.blocks.length} block${tree.blocks.length === 1 ? '' : 's'}, ${tree.blocks.filter((b) => b.level === 0).length} leaves.`
          : `After the mount (and its log replay): ${left.length ? left.join(', ') : 'no names'} in the fs tree's directory index.`)}
      </p>
    </figure>
  );
}
