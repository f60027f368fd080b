// The shared blocks of the step on show (lesson 6), at a moment: the
// subvolume trees as one figure (every root; each block once, with the trees
// that reach it, who made it, its references on disk, what is queued for it
// and what it has once the queue runs; the data extents below), the same
// block by block, the qgroups' numbers and each extent the commit accounted
// (its trees before and after), and the subvolumes' items in the root tree.
// The step's story is read once in the worker (model/shared.ts); the picture
// of a moment is the core's own trees right after its event, asked of the
// worker when the panel stops there, so stepping back is exact. The panel
// steps through its moments on its own, and follows the player when it stops
// at an event.
import { useEffect, useMemo, useRef, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { RunOptions } from '../core/wasm';
import { momentBlocks, nextShared, sharedAtSeq, sharedFrame, type SharedMoment, type SharedMomentKind, type SharedPicture, type SharedStep } from '../model/shared';
import type { PlayerContext } from './registry';
import { saveStateImage } from './saveBlob';
import { momentSentence, sharedSummary } from './shared.sentences';
import { AccountedList, FIGURE_BLOCK, QgroupTable, RefTable, RootItems, SharedFigure, SharedLegend } from './sharedParts';
import { useMomentCursor, useStepStory } from './useStepStory';
import './shared.css';

export interface SharedPanelProps {
  core: CoreClient;
  script: string;
  opts: RunOptions;
  player: PlayerContext;
}

/** What the panel shows: a picture and the moment it is of (the frame is folded from both, so they always agree). */
interface Shown {
  key: string;
  index: number;
  step: SharedStep;
  at: number | null;
  picture: SharedPicture;
}

const KEEP = 48;

export function SharedPanel({ core, script, opts, player }: SharedPanelProps) {
  const { steps, index, momentSeq } = player;
  const step = steps[index];
  const { story: sp, error: storyError } = useStepStory(core, { op: 'shared', script, opts, index });
  const [otherError, setError] = useState<string | null>(null); /* a picture or an export that failed */
  const error = storyError ?? otherError;
  // the panel's own place among the step's moments (null: the step's end); the player's event moves it
  const [at, setAt] = useMomentCursor<SharedStep>(sp, momentSeq, sharedAtSeq);
  const n = sp?.moments.length ?? 0;

  // the picture there: the trees right after the moment's event (before the first: after the event before it; the step's end: after its line)
  const seq = !sp || at === null ? null : at < 0 ? Math.max(0, (sp.moments[0]?.seq ?? 1) - 1) : sp.moments[at].seq;
  const key = `${script}\n${index}:${seq}`;
  const pictures = useRef(new Map<string, Promise<SharedPicture>>());
  const [shown, setShown] = useState<Shown | null>(null);
  useEffect(() => {
    if (!sp) return;
    let live = true;
    const cache = pictures.current;
    let p = cache.get(key);
    if (!p) {
      p = core.call({ op: 'sharedAt', script, opts, index, seq });
      cache.set(key, p);
      p.catch(() => cache.delete(key));
      for (const k of cache.keys()) {
        if (cache.size <= KEEP) break;
        cache.delete(k);
      }
    }
    p.then((picture) => live && setShown({ key, index, step: sp, at, picture }), (e: Error) => live && !(e instanceof CancelledError) && setError(e.message));
    return () => {
      live = false;
    };
  }, [core, script, opts, index, seq, key, sp, at]);
  const fresh = shown?.key === key && shown.step === sp;
  // the figure scrolls sideways: bring the block the moment is about into view
  const box = useRef<HTMLDivElement>(null);
  const focus = shown ? momentBlocks(shown.at === null ? null : shown.step.moments[shown.at] ?? null) : [];
  const focusKey = focus.join(' ');
  useEffect(() => {
    const el = box.current;
    if (!el || !focusKey) return;
    const xs = focusKey.split(' ').flatMap((b) => {
      const g = el.querySelector<SVGGElement>(`g[data-bytenr="${b}"]`);
      return g ? [g.transform.baseVal.consolidate()?.matrix.e ?? 0] : [];
    });
    if (!xs.length) return;
    const lo = Math.min(...xs), hi = Math.max(...xs) + FIGURE_BLOCK;
    if (lo < el.scrollLeft || hi > el.scrollLeft + el.clientWidth) el.scrollLeft = Math.max(0, (lo + hi - el.clientWidth) / 2);
  }, [focusKey, shown]);
  const frame = useMemo(() => (shown ? sharedFrame(shown.step, shown.at, shown.picture) : null), [shown]);
  const picture = shown?.picture ?? null;
  const paths = (tree: string) => picture?.trees.find((t) => t.id === tree)?.path ?? '';

  const here = at ?? n - 1;
  const go = (i: number | null) => setAt(i === null || i >= n - 1 ? null : Math.max(-1, i));
  const jump = (kinds: SharedMomentKind[], also?: (m: SharedMoment) => boolean) => {
    if (!sp) return;
    const to = nextShared(sp, at ?? -1, kinds, also);
    if (to >= 0) go(to);
  };
  const canJump = (kinds: SharedMomentKind[], also?: (m: SharedMoment) => boolean) => !!sp && nextShared(sp, at ?? -1, kinds, also) >= 0;
  const sharedCow = (m: SharedMoment) => m.kind === 'cow' && m.how !== 'alone';

  const download = async () => {
    try {
      await saveStateImage(core, script, opts, step?.line ?? 0);
    } catch (e) {
      if (!(e instanceof CancelledError)) setError((e as Error).message);
    }
  };


  const said: string[] = [];
  if (frame && shown) {
    said.push(frame.moment ? momentSentence(frame.moment, paths) : shown.step.moments.length ? (shown.at === null ? 'At the step\'s end.' : 'Before the step\'s first reference event.') : 'Nothing in this step copied a block of a subvolume tree or queued a reference.');
    if (frame.queue.length) said.push(`Queued since the last commit: ${frame.queue.length} reference change${frame.queue.length === 1 ? '' : 's'}, which the next commit runs into the extent tree.`);
  }

  return (
    <section className="panel shared-panel" aria-labelledby="shared-h" data-at={shown ? `${shown.index}:${shown.at ?? 'end'}` : ''} data-ready={fresh ? 'true' : 'false'}>
      <h3 id="shared-h">Shared blocks: references and qgroups</h3>
      {error && <p className="error" role="alert">{error}</p>}
      {!sp && !error && <p className="hint" role="status">Reading the step's references…</p>}
      {sp && (
        <>
          <p className="shared-summary" data-testid="shared-summary">Line {step?.line ?? 0}{step?.final ? ' (the final commit)' : ''}: {sharedSummary(sp)}</p>
          {n > 0 && (
            <div className="shared-nav" role="group" aria-label="Reference events">
              <button type="button" onClick={() => go(here - 1)} disabled={here < 0}>Previous reference event</button>
              <button type="button" onClick={() => go(here + 1)} disabled={here >= n - 1}>Next reference event</button>
              <button type="button" className="jump" onClick={() => jump(['cow'], sharedCow)} disabled={!canJump(['cow'], sharedCow)}>Next COW of a shared block</button>
              <button type="button" className="jump" onClick={() => jump(['ref', 'flag'])} disabled={!canJump(['ref', 'flag'])}>Next reference</button>
              <button type="button" className="jump" onClick={() => jump(['qextent'])} disabled={!canJump(['qextent'])}>Next qgroup extent</button>
              <button type="button" className="jump" onClick={() => go(null)} disabled={at === null}>The step's end</button>
              <label className="shared-scrub">
                <span>Reference event {here + 1} of {n}{at === null ? ' (the step\'s end)' : ''}</span>
                <input type="range" min={0} max={n} value={here + 1} aria-label="Reference event" onChange={(e) => go(Number(e.target.value) - 1)} />
              </label>
            </div>
          )}
          <ul className="shared-said" aria-live="polite" data-testid="shared-said">
            {said.map((t) => <li key={t}>{t}</li>)}
          </ul>
        </>
      )}
      {sp && picture && frame && (
        <div className={fresh ? undefined : 'stale'} aria-busy={!fresh}>
          <h4>The subvolume trees, each block once</h4>
          {picture.tooBig !== null ? (
            <p className="hint">The subvolume trees and the extent tree hold {picture.tooBig.toLocaleString('en')} blocks here: too many to draw (the lesson's scenario is a few dozen). The tree explorer above shows each tree.</p>
          ) : (
            <>
              <div className="shared-figure-box" ref={box} role="region" aria-label="The subvolume trees (scrolls sideways)" tabIndex={0}>
                <SharedFigure picture={picture} frame={frame} />
              </div>
              <SharedLegend picture={picture} />
            </>
          )}
          <h4>References, block by block</h4>
          <RefTable frame={frame} picture={picture} />
          {frame.rows.some((r) => r.level < 0 && r.queued.length) && (
            <p className="hint">A data extent's references once the queue runs are not worked out here: the trace tells of those COWs, snapshots and clones queue, not of those a write's own file extent items add or drop. The extent tree shows them after the commit.</p>
          )}
          <h4>Qgroups</h4>
          <QgroupTable frame={frame} picture={picture} />
          <h4>Accounted at the commit: old roots → new roots</h4>
          <AccountedList frame={frame} />
          {picture.tooBig === null && (
            <>
              <h4>The subvolumes in the root tree</h4>
              <RootItems picture={picture} />
            </>
          )}
        </div>
      )}
      <p className="export-state">
        <button type="button" onClick={() => void download()} disabled={!step || step.final || step.line === 0}>Export this state</button>{' '}
        <span className="hint">The image right after this step's line (what a power cut then leaves: the last commit): mount it with <code>sudo mount -o loop FILE /mnt</code>, then <code>btrfs subvolume list /mnt</code>, <code>btrfs qgroup show -p /mnt</code>, <code>btrfs inspect-internal dump-tree -t extent FILE</code>.</span>
      </p>
    </section>
  );
}
