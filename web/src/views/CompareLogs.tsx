import { useEffect, useMemo, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import { TREE_IDS, type TreeDump } from '../model/dump';
import { MODES, withMode, type Mode } from '../model/modes';
import type { Mark } from './treeView';
import { TreeExplorer } from './TreeExplorer';

const RUN = { seed: 1n, now: 1700000000n, trace: true };

interface Side {
  dump: TreeDump;
  marks: Map<string, Mark>;
  /** Log leaves the fsync wrote into, and the splits it made there. */
  touched: number;
  splits: number;
}

/** The log tree right after one fsync, in one mode: the state, and the blocks that fsync's log copies touched. */
async function logAfter(core: CoreClient, script: string, mode: Mode, line: number): Promise<Side> {
  const { text, at } = withMode(script, mode);
  const modeLine = at !== null && line >= at ? line + 1 : line; // the inserted set line moves the ones after it
  // the worker runs and groups it; the step's marks and counts in the log tree are its too
  const { steps } = await core.call({ op: 'runSteps', script: text, opts: RUN });
  const step = steps.find((s) => !s.final && s.line === modeLine);
  const [view, dump] = await Promise.all([
    step ? core.call({ op: 'stepView', script: text, opts: RUN, index: step.index, tree: TREE_IDS.log, moment: null }) : null,
    core.call({ op: 'stateAt', script: text, opts: RUN, line: modeLine, tree: TREE_IDS.log, maxLeafEntries: 24 }),
  ]);
  const log = dump.trees.find((t) => t.name === 'log');
  const own = new Set(log?.blocks.map((b) => b.bytenr.toString()) ?? []);
  const marks = new Map([...view?.marks ?? []].filter(([b]) => own.has(b)));
  return { dump, marks, touched: marks.size, splits: view?.counts.split ?? 0 };
}

/**
 * The two modes' log trees side by side, right after the same fsync: legacy
 * inserts the new names' inodes in hash order (DIR_ITEM walk), scattering
 * them across the log's leaves and splitting them; index-only appends in
 * index order.
 */
export function CompareLogs({ core, script, lines, reducedMotion }: { core: CoreClient; script: string; lines: number[]; reducedMotion: boolean }) {
  const [line, setLine] = useState(lines[lines.length - 1]);
  const [sides, setSides] = useState<Record<Mode, Side> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [names, setNames] = useState<Record<Mode, string>>({ legacy: 'log', 'index-only': 'log' });
  const at = lines.includes(line) ? line : lines[lines.length - 1];

  useEffect(() => {
    let live = true;
    setError(null);
    Promise.all(MODES.map((m) => logAfter(core, script, m, at))).then(
      ([legacy, indexOnly]) => live && setSides({ legacy, 'index-only': indexOnly }),
      (e: Error) => live && !(e instanceof CancelledError) && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [core, script, at]);

  const said = useMemo(() => (sides ? MODES.map((m) => {
    const leaves = sides[m].dump.trees.find((t) => t.name === 'log')?.blocks.filter((b) => b.level === 0) ?? [];
    const items = leaves.reduce((n, b) => n + b.nritems, 0);
    return `${m}: ${items} items in ${leaves.length} leaves; ${sides[m].touched} log block${sides[m].touched === 1 ? '' : 's'} written into by this fsync, ${sides[m].splits} split${sides[m].splits === 1 ? '' : 's'}`;
  }).join('; ') : ''), [sides]);
  return (
    <div className="compare-logs">
      <h4>The log trees, side by side</h4>
      <label>
        Right after the fsync at{' '}
        <select value={at} onChange={(e) => setLine(Number(e.target.value))}>
          {lines.map((l) => <option key={l} value={l}>line {l}</option>)}
        </select>
      </label>
      {error && <p className="error" role="alert">{error}</p>}
      {sides && <p className="hint" data-testid="compare-logs-said">{said}.</p>}
      {sides && (
        <div className="side-by-side">
          {MODES.map((m) => (
            <div key={m} className="side" role="region" aria-label={`The log tree, ${m}`}>
              <h5>{m === 'legacy' ? 'Before the change (DIR_ITEM + DIR_INDEX)' : 'After the change (DIR_INDEX only)'}</h5>
              <TreeExplorer dump={sides[m].dump} marks={sides[m].marks} treeName={names[m]} onTreeName={(n) => setNames((x) => ({ ...x, [m]: n }))}
                reducedMotion={reducedMotion} label={`Tree explorer: the log tree, ${m}`} />
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
