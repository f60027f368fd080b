// Sentences for the events of fsync and the log tree (LogReplayView, the
// compare view's fsync table).
import { keyText, treeName } from '../model/names';
import { replaySaid } from './replay.sentences';
import type { Sentences } from './sentences';

export const logSentences = {
  fsync: (e) => `fsync of inode ${e.ino}: ${e.result}`,
  log_start: (e) => `A log tree for the ${treeName(e.tree)} starts at ${e.logRoot} (log root tree ${e.logRootTree})`,
  log_inode: (e) => `Log inode ${e.ino}${e.existsOnly ? ' (only so that it exists)' : ''}`,
  log_lock: (e) => `Read-lock leaf ${e.bytenr} of the ${treeName(e.tree)} (generation ${e.generation}) to copy from it`,
  log_copy: (e) => `Copy item (${keyText(e.key)}) into log leaf ${e.to}, slot ${e.slot}`,
  log_range: (e) => `The log is authoritative for dir ${e.key[0]}, indexes ${e.key[2]} ${e.last === 0xffffffffffffffffn ? 'and up (to (u64)-1, the last index there can be)' : `to ${e.last}`}`,
  log_sync: (e) => `Write the log and a superblock whose log_root is ${e.logRootTree}`,
  replay: (e) => `Replay (${e.pass}): ${e.action}: ${replaySaid(e)}; log item (${keyText(e.key)})`,
} satisfies Sentences;
