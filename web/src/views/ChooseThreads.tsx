// "Choose the next thread" (lesson 4, issue 16): the learner picks, turn by
// turn, which thread of a section starts its next command, as a model checker
// does. At each turn: the threads with commands left, each with the command
// it would start and what it is doing at that moment in the run with the
// picks so far (inside a command, waiting for a tree lock or memory, the
// locks it holds). A pick runs the scenario again with the picks as
// `schedule` lines (the lesson's player, timeline and locks show that run);
// undo, start over, let the policy finish. A run that stops on an error
// says so, and a deadlock's cycle is drawn.
import { Fragment, useEffect, useMemo, useState } from 'react';
import { CancelledError, type CoreClient } from '../core/client';
import type { ScheduleRun } from '../core/scheduleRun';
import { isMutex } from '../model/locks';
import { lockWhat } from '../model/names';
import { chosenScript, defaultSection, openChoice, pickedCommands, runnableAfter, scheduleText, scriptSchedule, threadSections } from '../model/schedule';
import type { HeldLock, ThreadNow } from '../model/turns';
import { formatNs } from '../model/units';
import { DeadlockCycle } from './DeadlockCycle';
import type { ChooseContext } from './registry';
import { waitWhat } from './timeline.sentences';
import './choose.css';

const RUN = { seed: 1n, now: 1700000000n, trace: true };
/** Turns of the policy's shown after the picks. */
const POLICY_SHOWN = 8;

/** A lock held, in words: "a read lock on leaf 5255168 of the fs tree", "the delayed node mutex of inode 259". */
const heldText = (l: HeldLock) => (isMutex(l) ? lockWhat(l) : `a ${l.mode} lock on ${lockWhat(l)}`);

/** What a thread is doing at the moment, in words (two parts: what it is in and waits for; what it holds and when it is free). */
export function nowText(t: ThreadNow, atNs: number): { doing: string; then: string } {
  if (t.done) return { doing: 'done: every command of it returned', then: '' };
  const holds = t.holds.length ? `holds ${t.holds.map(heldText).join(', ')}` : '';
  if (!t.op) {
    const turn = t.wait?.cause === 'schedule' ? ', waiting for its turn' : '';
    return { doing: t.started ? `between two commands${turn}` : `has not started${turn}`, then: holds };
  }
  let doing = `inside ${t.op.text}`;
  const w = t.wait;
  if (w?.lock) {
    const holders = w.lock.holders.length ? `, held by ${w.lock.holders.join(', ')}` : '';
    doing += isMutex(w.lock) ? `, waiting for ${lockWhat(w.lock)}${holders}` : `, waiting to ${w.lock.mode}-lock ${lockWhat(w.lock)}${holders}`;
  } else if (w) {
    doing += `, waiting for ${waitWhat(w.cause, BigInt(w.object))}`;
  } else {
    doing += ', running';
  }
  if (w) doing += ` (for ${formatNs(Math.max(0, atNs - w.sinceNs))} so far)`;
  const returns = t.op.returnsNs === null ? 'the run stops before it returns' : `it returns ${formatNs(Math.max(0, t.op.returnsNs - atNs))} later`;
  return { doing, then: [holds, returns].filter(Boolean).join('; ') };
}

export function ChooseThreads({ core, script, choose }: { core: CoreClient; script: string; choose: ChooseContext }) {
  const { choice, running, onChoose } = choose;
  const chosen = useMemo(() => (choice ? chosenScript(choice) : null), [choice]);
  const sections = useMemo(() => threadSections((chosen?.text ?? script).split('\n')), [chosen, script]);
  const sec = choice ? sections.find((s) => s.number === choice.section) ?? null : null;
  const picks = choice?.picks ?? [];
  const key = chosen && choice ? `${choice.section}:${picks.length}:${chosen.text}` : '';
  const [view, setView] = useState<{ key: string; run: ScheduleRun } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!choice || !chosen) return;
    let live = true;
    setError(null);
    core.call({ op: 'scheduleRun', script: chosen.text, opts: RUN, section: choice.section, picks: choice.picks.length }).then(
      (run) => live && setView({ key, run }),
      (e: Error) => live && !(e instanceof CancelledError) && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [core, key, choice, chosen]);

  const open = (section: number, from: string) => onChoose(openChoice(from, { section, picks: scriptSchedule(from, section) }));

  if (!choice || !sec) {
    const first = defaultSection(script);
    return (
      <section className="panel choose-panel" aria-labelledby="choose-h">
        <h3 id="choose-h">Choose the next thread</h3>
        <p className="hint">
          In a section of threads, the scheduler decides which thread starts its next command (<code>set sched=seed</code> or <code>rr</code>).
          Decide it yourself, turn by turn, as a model checker does: at each turn you see the threads that can start a command and what each is
          doing then, and you pick one. The picks go into the address, so a link gives the same interleaving.
        </p>
        <button type="button" onClick={() => first !== null && open(first, script)} disabled={first === null || running}>Choose the threads' turns</button>
        {first === null && <span className="hint"> The scenario has no section of threads.</span>}
      </section>
    );
  }

  const shown = view?.run ?? null; // the last answer, greyed while the next one comes
  const stale = !view || view.key !== key;
  const runnable = runnableAfter(sec, picks);
  const total = sec.threads.reduce((n, t) => n + t.commands.length, 0);
  const done = pickedCommands(sec, picks);
  const names = new Map(shown?.names ?? []);
  const name = (task: number) => names.get(task) ?? `task ${task}`;
  const nowOf = (n: string) => (!stale && shown ? shown.threads.find((t) => t.name === n) : undefined);
  const lastPick = done[done.length - 1];
  const stoppedBefore = !stale && shown && !shown.reached;
  const policyTurns = !stale && shown ? shown.turns.slice(picks.length) : [];
  const pick = (n: string) => onChoose({ ...choice, picks: [...picks, n] });
  const setPicks = (p: string[]) => onChoose({ ...choice, picks: p });

  return (
    <section className="panel choose-panel" aria-labelledby="choose-h">
      <h3 id="choose-h">Choose the next thread</h3>
      <div className="choose-bar">
        {sections.length > 1 && (
          <label>
            Section{' '}
            <select value={choice.section} onChange={(e) => open(Number(e.target.value), choice.base)} disabled={running}>
              {sections.map((s) => <option key={s.number} value={s.number}>{`${s.number}: line ${s.first}, thread${s.threads.length > 1 ? 's' : ''} ${s.threads.map((t) => t.name).join(', ')}`}</option>)}
            </select>
          </label>
        )}
        <span className="hint" data-testid="choose-schedule">
          {picks.length
            ? <>The scenario runs with {scheduleText(picks).map((l, i) => <Fragment key={i}>{i ? ' ' : ''}<code>{l}</code></Fragment>)} before line {chosen!.first}; after these turns the policy decides.</>
            : <>No turn picked yet: the policy decides them all.</>}
        </span>
      </div>
      {done.length > 0 && (
        <ol className="choose-picks" aria-label="Your picks" data-testid="choose-picks">
          {done.map((c, i) => (
            <li key={i} data-thread={c.name}><strong>{c.name}</strong>: <code>{c.text}</code>{!stale && shown?.turns[i] ? <span className="hint"> at {formatNs(shown.turns[i].atNs)}</span> : null}</li>
          ))}
        </ol>
      )}
      <div className={stale ? 'stale' : undefined} aria-busy={stale}>
        {runnable.length > 0 && !stoppedBefore && (
          <>
            <p className="choose-moment" data-testid="choose-moment">
              <strong>Turn {picks.length + 1} of {total}: which thread starts its next command?</strong>{' '}
              <span className="hint">
                {lastPick ? `Where each thread is as ${lastPick.name} starts ${lastPick.text}` : 'Where each thread is at the section\'s start'}
                {!stale && shown && lastPick ? ` (${formatNs(shown.atNs)} into the section)` : ''}, in the run with your picks:
              </span>
            </p>
            <ul className="choose-next" aria-label="Threads that can start a command next" data-testid="choose-next">
              {runnable.map((r) => {
                const now = nowOf(r.name);
                const t = now && shown ? nowText(now, shown.atNs) : null;
                return (
                  <li key={r.name} data-thread={r.name}>
                    <button type="button" onClick={() => pick(r.name)} disabled={running}>Pick {r.name}</button>
                    <div>
                      <div>next: <code>{r.next.text}</code> <span className="hint">(line {r.next.line}; {r.left} command{r.left === 1 ? '' : 's'} left)</span></div>
                      <div className="choose-now" data-testid="choose-now">now: {t ? t.doing : '…'}{t?.then ? <span className="hint">; {t.then}</span> : null}</div>
                    </div>
                  </li>
                );
              })}
            </ul>
          </>
        )}
        {runnable.length === 0 && <p className="hint">Every command of the section has started: the interleaving is complete.</p>}
        {stoppedBefore && <p className="hint">The run stopped before turn {picks.length}: undo picks to go back to a turn it reached.</p>}
        {!stale && shown && policyTurns.length > 0 && (
          <p className="hint choose-policy" data-testid="choose-policy">
            Then the policy: {policyTurns.slice(0, POLICY_SHOWN).map((t) => t.thread).join(', ')}{policyTurns.length > POLICY_SHOWN ? ` and ${policyTurns.length - POLICY_SHOWN} more turns` : ''}.
          </p>
        )}
        {!stale && shown?.failed && (
          <div className="choose-failed" role="alert" data-testid="choose-failed">
            <p className="error">With these picks the run stops{shown.failed.name === 'EDEADLK' ? ' in a deadlock' : ''}: {shown.failed.message}</p>
            {shown.cycle && <DeadlockCycle cycle={shown.cycle} name={name} />}
          </div>
        )}
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      <div className="choose-controls" role="group" aria-label="Picks">
        <button type="button" onClick={() => setPicks(picks.slice(0, -1))} disabled={running || !picks.length}>Undo last pick</button>
        <button type="button" onClick={() => setPicks([])} disabled={running || !picks.length}>Start over</button>
        <button type="button" onClick={() => shown && setPicks(shown.turns.map((t) => t.thread))} disabled={running || stale || !policyTurns.length}>Let the policy finish</button>
        <button type="button" onClick={() => onChoose(null)} disabled={running}>Stop choosing</button>
      </div>
    </section>
  );
}
