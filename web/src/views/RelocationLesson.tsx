// The "relocation" view a lesson declares (lesson 7): the balance of the step
// under the player, stepped event by event through its phases (group chosen,
// reloc trees built, merged, dropped, removed), the seed's picture of a
// subvolume beside its reloc tree at the panel's moment, which blocks each
// qgroup_swap mode traces; then the scenario run in the three modes (three
// runs of the core: each one's dirty extents, the same qgroups), and the
// seed's table beside our measured figures. The step's story is read once in
// the worker (model/relocation.ts); the picture is folded from it.
import { useMemo, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { QgroupBalanceSeed } from '../lessons';
import { nextPhase, nextReloc, pictureTrees, relocPicture, RELOC_PHASES, sameQgroups, SWAP_MODES, phaseOf, type ModeRun, type QgroupSwapMode, type RelocStep } from '../model/relocation';
import type { PlayerContext } from './registry';
import { saveStateImage } from './saveBlob';
import { groupName, PHASE_NAMES, relocSentence, relocSummary, treeName } from './relocation.sentences';
import { modeSaid, ModesCounter, RelocFigure, RelocLegend, SeedFigures, TracedCounter } from './relocationParts';
import { useMomentCursor, useStepStory } from './useStepStory';
import './shared.css';
import './relocation.css';

const RUN = { seed: 1n, now: 1700000000n, trace: true };

export interface RelocationLessonProps {
  core: CoreClient;
  script: string;
  player: PlayerContext;
  seed?: QgroupBalanceSeed;
}

/** The moment at or before event seq (-1: none). */
const atSeq = (s: RelocStep, seq: number) => {
  let found = -1;
  for (let i = 0; i < s.moments.length && s.moments[i].seq <= seq; i++) found = i;
  return found;
};

/** The three modes' runs of a script (null: not run yet). */
type Runs = { script: string; runs: ModeRun[] } | null;

export function RelocationLesson({ core, script, player, seed }: RelocationLessonProps) {
  const [runs, setRuns] = useState<Runs>(null);
  const fresh = runs?.script === script ? runs.runs : null;
  return (
    <>
      {player.steps.length > 0 && <RelocPanel core={core} script={script} player={player} runs={fresh} />}
      <ModesCompare core={core} script={script} runs={fresh} setRuns={setRuns} />
      {seed && (
        <section className="panel" aria-labelledby="seed004-h">
          <h3 id="seed004-h">The seed's table and ours</h3>
          <SeedFigures seed={seed} />
        </section>
      )}
    </>
  );
}

function RelocPanel({ core, script, player, runs }: { core: CoreClient; script: string; player: PlayerContext; runs: ModeRun[] | null }) {
  const { steps, index, momentSeq } = player;
  const step = steps[index];
  const { story: sp, error: storyError } = useStepStory(core, { op: 'relocation', script, opts: RUN, index });
  const [exportError, setExportError] = useState<string | null>(null);
  const error = storyError ?? exportError;
  const [at, setAt] = useMomentCursor<RelocStep>(sp, momentSeq, atSeq);
  const [mode, setMode] = useState<QgroupSwapMode>('subtree');
  const [chosenTree, setTree] = useState<string>('5');
  const n = sp?.moments.length ?? 0;
  const here = at ?? n - 1;
  const go = (i: number | null) => setAt(i === null || i >= n - 1 ? null : Math.max(-1, i));
  const moment = sp && here >= 0 ? sp.moments[here] : null;
  // the picture: the group of the moment (or the step's first with reloc trees), the chosen subvolume
  const trees = sp ? pictureTrees(sp) : [];
  const group = (moment && trees.find((t) => t.group === moment.group)?.group) ?? trees[0]?.group ?? null;
  const inGroup = trees.filter((t) => t.group === group).map((t) => t.tree);
  const tree = inGroup.includes(chosenTree) ? chosenTree : inGroup[0] ?? null;
  const picture = useMemo(() => (sp && group && tree ? relocPicture(sp, group, tree, at) : null), [sp, group, tree, at]);
  // a commit's count belongs to the phase before it
  const phaseNow = sp && moment ? [...sp.moments.slice(0, here + 1)].reverse().map(phaseOf).find((p) => p !== null) ?? null : null;
  const currentGroup = moment ? sp?.groups.find((g) => g.group === moment.group) : null;

  const download = async () => {
    try {
      await saveStateImage(core, script, RUN, step?.line ?? 0);
    } catch (e) {
      if (!(e instanceof CancelledError)) setExportError((e as Error).message);
    }
  };
  const jump = (to: number) => to >= 0 && go(to);

  return (
    <section className="panel reloc-panel" aria-labelledby="reloc-h" data-at={sp ? `${index}:${at ?? 'end'}` : ''} data-ready={sp ? 'true' : 'false'}>
      <h3 id="reloc-h">Relocation: reloc trees and the subtree swap</h3>
      {error && <p className="error" role="alert">{error}</p>}
      {!sp && !error && <p className="hint" role="status">Reading the step's relocation…</p>}
      {sp && (
        <>
          <p className="shared-summary" data-testid="reloc-summary">Line {step?.line ?? 0}{step?.final ? ' (the final commit)' : ''}: {relocSummary(sp)}</p>
          {sp.groups.length > 0 && (
            <ol className="reloc-phases" aria-label="Phases of the group's relocation">
              {RELOC_PHASES.map((p) => (
                <li key={p} data-phase={p} aria-current={phaseNow === p ? 'step' : undefined} className={phaseNow === p ? 'current' : undefined}>{PHASE_NAMES[p]}</li>
              ))}
            </ol>
          )}
          {currentGroup && <p className="hint" data-testid="reloc-group">Now: {groupName(currentGroup.group, currentGroup.type, currentGroup.length)}.</p>}
          {n > 0 && (
            <div className="shared-nav" role="group" aria-label="Relocation events">
              <button type="button" onClick={() => go(here - 1)} disabled={here < 0}>Previous relocation event</button>
              <button type="button" onClick={() => go(here + 1)} disabled={here >= n - 1}>Next relocation event</button>
              <button type="button" className="jump" onClick={() => jump(nextPhase(sp, at ?? -1))} disabled={nextPhase(sp, at ?? -1) < 0}>Next phase</button>
              <button type="button" className="jump" onClick={() => jump(nextReloc(sp, at ?? -1, ['swap']))} disabled={nextReloc(sp, at ?? -1, ['swap']) < 0}>Next swap</button>
              <button type="button" className="jump" onClick={() => jump(nextReloc(sp, at ?? -1, ['dirty']))} disabled={nextReloc(sp, at ?? -1, ['dirty']) < 0}>Next commit</button>
              <button type="button" className="jump" onClick={() => go(null)} disabled={at === null}>The step's end</button>
              <label className="shared-scrub">
                <span>Relocation event {here + 1} of {n}{at === null ? ' (the step\'s end)' : ''}</span>
                <input type="range" min={0} max={n} value={here + 1} aria-label="Relocation event" onChange={(e) => go(Number(e.target.value) - 1)} />
              </label>
            </div>
          )}
          <p className="shared-said" aria-live="polite" data-testid="reloc-said">
            {moment ? relocSentence(moment, sp) : n ? 'Before the step\'s first relocation event.' : 'Nothing in this step relocated a block group.'}
          </p>
          {picture && (
            <>
              <h4>The seed's picture: {treeName(picture.tree)} beside its reloc tree</h4>
              <div className="reloc-controls">
                {inGroup.length > 1 && (
                  <label>Subvolume{' '}
                    <select value={tree ?? ''} onChange={(e) => setTree(e.target.value)}>
                      {inGroup.map((t) => <option key={t} value={t}>{treeName(t)}</option>)}
                    </select>
                  </label>
                )}
                <fieldset className="reloc-modes">
                  <legend>Traced at the swap in mode</legend>
                  {SWAP_MODES.map((m) => (
                    <label key={m}><input type="radio" name="reloc-mode" value={m} checked={mode === m} onChange={() => setMode(m)} /> {m}</label>
                  ))}
                </fieldset>
              </div>
              <p className="hint" data-testid="reloc-mode-said">{modeSaid(mode)}.</p>
              <div className="shared-figure-box" role="region" aria-label="A subvolume and its reloc tree (scrolls sideways)" tabIndex={0}>
                <RelocFigure picture={picture} mode={mode} />
              </div>
              <RelocLegend mode={mode} />
              <h4>Traced at {treeName(picture.tree)}'s swaps so far, per mode</h4>
              <TracedCounter picture={picture} />
              <p className="hint" data-testid="reloc-group-dirty">
                {runs
                  ? <>The commit after this group's merge, in the core's run in each mode (its <code>qgroup_dirty</code>, every subvolume's swaps and root copies counted once): {runs.map((r, i) => <span key={r.mode} data-mode={r.mode} data-dirty={r.groups.find((g) => g.group === picture.group)?.dirty ?? 0}>{i ? ', ' : ''}{r.mode} {r.groups.find((g) => g.group === picture.group)?.dirty ?? 0}</span>)} dirty extents.</>
                  : <>Blocks this picture's swaps trace: in full mode the subtrees the core walks at each swap (its <code>qgroup_trace_subtree</code>), in subtree mode the new blocks and those they replaced. The dirty extents the commit counts in each mode come from the core: <em>Run in the three modes</em> below.</>}
              </p>
            </>
          )}
          {sp.dirty.length > 0 && (
            <p data-testid="reloc-dirty">Qgroup dirty extents at this step's commits: {sp.dirty.join(' + ')} = <strong>{sp.dirtyTotal}</strong>.</p>
          )}
        </>
      )}
      <p className="export-state">
        <button type="button" onClick={() => void download()} disabled={!step || step.final || step.line === 0}>Export this state</button>{' '}
        <span className="hint">The image right after this step's line: mount it with <code>sudo mount -o loop FILE /mnt</code>, then <code>btrfs qgroup show -p /mnt</code>, <code>btrfs inspect-internal dump-tree -t chunk FILE</code>.</span>
      </p>
    </section>
  );
}

function ModesCompare({ core, script, runs: fresh, setRuns }: { core: CoreClient; script: string; runs: ModeRun[] | null; setRuns: (r: Runs) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      setRuns({ script, runs: await core.call({ op: 'relocModes', script, opts: RUN, modes: SWAP_MODES }) });
    } catch (e) {
      if (!(e instanceof CancelledError)) setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="panel reloc-compare" aria-labelledby="reloc-modes-h" data-ready={fresh ? 'true' : 'false'}>
      <h3 id="reloc-modes-h">The same scenario in the three modes</h3>
      <p className="hint">Three runs of the core, each with every <code>set qgroup_swap=</code> line set to one mode: the qgroup dirty extents of the commits from the first balance on.</p>
      <button type="button" onClick={() => void run()} disabled={busy}>{busy ? 'Running…' : 'Run in the three modes'}</button>
      {error && <p className="error" role="alert">{error}</p>}
      {fresh && (
        <>
          <ModesCounter runs={fresh} />
          <p data-testid="reloc-same" role="status">{sameQgroups(fresh) ? 'The qgroups are the same in all three modes: only the work to count them differs.' : 'The qgroups differ between the modes: a bug in the model.'}</p>
        </>
      )}
    </section>
  );
}
