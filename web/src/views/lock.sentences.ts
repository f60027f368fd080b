// Sentences for tree locking and tasks: the events the locking view (seed
// 000's lesson) will draw. The kinds are declared in trace-events.h; the
// core emits them once it models tasks.
import { blockWhat as what, treeName } from '../model/names';
import type { Sentences } from './sentences';

// bytenr 0: the timed model's one lock for a whole tree (its leaves' locks taken together)
const lockOf = (e: { level: number; bytenr: bigint; tree: bigint }) => (e.bytenr === 0n ? `the ${treeName(e.tree)}` : `${what(e.level)} ${e.bytenr} of the ${treeName(e.tree)}`);

export const lockSentences = {
  lock_wait: (e) => `Task ${e.task} waits to ${e.mode}-lock ${lockOf(e)}, held by ${e.holder < 0 ? 'readers' : `task ${e.holder}`}`,
  lock_acquire: (e) => `Task ${e.task} ${e.mode}-locks ${lockOf(e)}${e.waitNs > 0n ? ` after waiting ${e.waitNs} ns` : ''}`,
  lock_release: (e) => `Task ${e.task} releases its ${e.mode} lock on ${lockOf(e)}`,
  task_switch: (e) => `The CPU switches from task ${e.from} to task ${e.to} at ${e.atNs} ns`,
} satisfies Sentences;
