// The sentence for each kind of event, gathered from beside the views that
// draw them (NAME.sentences.ts). A kind no view describes yet is told with
// the sentence its C declaration gives (trace-events.h), so a new kind needs
// no entry here: its view adds one.
import { kindDoc, type EventOf, type TraceEvent, type TraceKind } from '../model/trace';
import { logSentences } from './log.sentences';
import { lockSentences } from './lock.sentences';
import { timelineSentences } from './timeline.sentences';
import { treeSentences } from './tree.sentences';

/** Sentences for some kinds, each typed by its event. */
export type Sentences = { [K in TraceKind]?: (e: EventOf<K>) => string };

const ALL: Sentences = { ...treeSentences, ...logSentences, ...lockSentences, ...timelineSentences };

/** Whether a view gives kind a sentence of its own (else the declaration's is used). */
export function hasSentence(kind: TraceKind): boolean {
  return Object.hasOwn(ALL, kind);
}

/** One event in a sentence, e.g. "COW leaf 30867456 → 30883840 in the fs tree, generation 9". */
export function describeEvent(e: TraceEvent): string {
  const f = ALL[e.kind] as ((e: TraceEvent) => string) | undefined;
  return f ? f(e) : kindDoc(e.kind);
}
