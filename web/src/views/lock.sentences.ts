// Sentences for tree locking and tasks: the events the locking view (seed
// 000's lesson) will draw. The kinds are declared in trace-events.h; the
// core emits them once it models tasks.
import { blockWhat as what, treeName } from '../model/names';
import type { Sentences } from './sentences';

export const lockSentences = {
  lock_wait: (e) => `Task ${e.task} waits to ${e.mode}-lock ${what(e.level)} ${e.bytenr} of the ${treeName(e.tree)}, held by task ${e.holder}`,
  lock_acquire: (e) => `Task ${e.task} ${e.mode}-locks ${what(e.level)} ${e.bytenr} of the ${treeName(e.tree)}${e.waitNs > 0n ? ` after waiting ${e.waitNs} ns` : ''}`,
  lock_release: (e) => `Task ${e.task} releases its ${e.mode} lock on ${what(e.level)} ${e.bytenr} of the ${treeName(e.tree)}`,
  task_switch: (e) => `The CPU switches from task ${e.from} to task ${e.to} at ${e.atNs} ns`,
} satisfies Sentences;
