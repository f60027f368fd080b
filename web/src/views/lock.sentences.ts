// Sentences for tree locking and tasks: the events the locks view (lesson 4)
// replays. A delayed node mutex comes through the same events at level -1
// (model/locks.ts's isMutex): it is taken and let go, never read- or
// write-locked.
import { isMutex } from '../model/locks';
import { lockWhat } from '../model/names';
import type { Sentences } from './sentences';

const holderOf = (holder: number) => (holder < 0 ? 'readers' : `task ${holder}`);
const after = (waitNs: bigint) => (waitNs > 0n ? ` after waiting ${waitNs} ns` : '');

export const lockSentences = {
  lock_wait: (e) => isMutex(e)
    ? `Task ${e.task} waits for ${lockWhat(e)}, held by ${holderOf(e.holder)}`
    : `Task ${e.task} waits to ${e.mode}-lock ${lockWhat(e)}, held by ${holderOf(e.holder)}`,
  lock_acquire: (e) => (isMutex(e) ? `Task ${e.task} takes ${lockWhat(e)}${after(e.waitNs)}` : `Task ${e.task} ${e.mode}-locks ${lockWhat(e)}${after(e.waitNs)}`),
  lock_release: (e) => (isMutex(e) ? `Task ${e.task} lets go of ${lockWhat(e)}` : `Task ${e.task} releases its ${e.mode} lock on ${lockWhat(e)}`),
  task_switch: (e) => `The CPU switches from task ${e.from} to task ${e.to} at ${e.atNs} ns`,
} satisfies Sentences;
