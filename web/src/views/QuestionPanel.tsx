import { useEffect, useRef, type KeyboardEvent } from 'react';
import { choiceOrder, type Question } from '../model/questions';

export interface QuestionPanelProps {
  question: Question;
  /** Seeds the choices' order (model/questions.ts questionKey). */
  shuffleKey: string;
  /** The choice made, as an index into the authored choices. */
  answered: number | undefined;
  onAnswer: (choice: number) => void;
  /** "See it happen": the question closes and the player moves on. */
  onDone: () => void;
}

/**
 * A question before the step it asks about. The choices are a radio group
 * with one tab stop: the arrow keys (and Home, End) move between them, Enter
 * or Space answers. Focus comes here when the question opens, and goes to
 * "See it happen" once it is answered. After an answer every choice says
 * why it is right or wrong; the right one is marked ✓, a wrong one chosen ✗,
 * and the one chosen stays at full strength with "your answer".
 */
export function QuestionPanel({ question: q, shuffleKey, answered, onAnswer, onDone }: QuestionPanelProps) {
  const order = choiceOrder(shuffleKey, q.choices.length);
  const group = useRef<HTMLDivElement>(null);
  const done = useRef<HTMLButtonElement>(null);
  const radios = () => [...(group.current?.querySelectorAll<HTMLButtonElement>('[role="radio"]') ?? [])];

  useEffect(() => {
    if (answered === undefined) radios()[0]?.focus();
  }, [shuffleKey]); // eslint-disable-line react-hooks/exhaustive-deps
  useEffect(() => {
    if (answered !== undefined) done.current?.focus();
  }, [answered]);

  const onKey = (ev: KeyboardEvent<HTMLDivElement>) => {
    const all = radios();
    const at = all.indexOf(document.activeElement as HTMLButtonElement);
    const to = ev.key === 'ArrowDown' || ev.key === 'ArrowRight' ? at + 1
      : ev.key === 'ArrowUp' || ev.key === 'ArrowLeft' ? at - 1
      : ev.key === 'Home' ? 0 : ev.key === 'End' ? all.length - 1 : null;
    if (to === null) return;
    ev.preventDefault();
    ev.stopPropagation();
    all[(to + all.length) % all.length]?.focus();
  };

  return (
    <section className="question panel" role="dialog" aria-labelledby="q-h" aria-describedby="q-how">
      <h3 id="q-h">Predict: {q.prompt}</h3>
      <p id="q-how" className="hint">Arrow keys move between the answers; Enter or Space chooses one.</p>
      <div role="radiogroup" aria-labelledby="q-h" ref={group} onKeyDown={onKey}>
        {order.map((i, pos) => {
          const c = q.choices[i];
          const chosen = answered === i;
          const right = i === q.answer;
          const verdict = answered === undefined ? null : right ? (chosen ? 'Right: ' : 'The answer: ') : chosen ? 'Not this: ' : 'Wrong: ';
          return (
            <button key={i} type="button" role="radio" aria-checked={chosen} tabIndex={pos === 0 ? 0 : -1}
              aria-disabled={answered !== undefined}
              className={['choice', answered === undefined ? '' : right ? 'right' : chosen ? 'wrong' : 'other', chosen ? 'chosen' : ''].join(' ').trim()}
              onClick={() => answered === undefined && onAnswer(i)}>
              {answered !== undefined && (right || chosen) && <span className="mark" aria-hidden="true">{right ? '✓' : '✗'}</span>}
              <span className="choice-text">{c.text}</span>
              {chosen && <span className="badge">your answer</span>}
              {verdict && <span className="why">{verdict}{c.why}</span>}
            </button>
          );
        })}
      </div>
      {answered !== undefined && (
        <>
          <p className="reveal" role="status">{answered === q.answer ? 'Right. ' : 'Not quite. '}{q.explain}</p>
          <button type="button" ref={done} onClick={onDone}>See it happen</button>
        </>
      )}
    </section>
  );
}
