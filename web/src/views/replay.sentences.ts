// Each log replay action in a sentence with its numbers, and what it means
// (LogReplayView). The actions are the core's (tree-log.h enum
// btrfs_replay_action); their fields a, b, c are documented there.
import { inodeWithPath } from '../model/files';
import type { EventOf } from '../model/trace';
import type { ReplayAction } from '../model/trace-schema.gen';

type Replay = EventOf<'replay'>;

/** What happened, with the action's own numbers; inodes as n gives them ("257 (/a)"). */
const SAID: Record<Exclude<ReplayAction, `#${number}`>, (e: Replay, n: (ino: bigint) => string) => string> = {
  'pin block': (e) => `log block ${e.a} (level ${e.b}) is pinned`,
  'pin data': (e) => `data extent ${e.a} (${e.b} bytes) the log refers to is pinned`,
  'inode new': (e, n) => `inode ${n(e.a)} is not in the fs tree: its logged inode item is copied in (size ${e.b})`,
  'inode overwrite': (e, n) => `inode ${n(e.a)}'s inode item is replaced by the logged one (size ${e.b})`,
  'inode keep': (e, n) => `inode ${n(e.a)} was logged only so that it exists: the fs tree's inode item stays`,
  'xattr delete': (e, n) => `inode ${n(e.a)}: xattrs the log does not hold are deleted`,
  'dir delete': (e, n) => `dir ${n(e.a)}: a name of inode ${n(e.b)} inside a logged index range is not in the log, and is deleted`,
  truncate: (e, n) => `inode ${n(e.a)} is cut at ${e.b}: ${e.c} bytes past the logged size go`,
  'unlink conflict': (e, n) => `dir ${n(e.a)}: inode ${n(e.b)} loses a name the log gives to another inode`,
  'link present': (e, n) => `dir ${n(e.a)} already has inode ${n(e.b)} at index ${e.c}: nothing to do`,
  'link later': (e, n) => `dir ${n(e.a)}, index ${e.c}: inode ${n(e.b)}'s name is left for its INODE_REF, replayed in the next pass`,
  'link no inode': (e, n) => `dir ${n(e.a)}: inode ${n(e.b)} is neither logged nor on disk, so its name is skipped`,
  'link add': (e, n) => `dir ${n(e.a)} gains inode ${n(e.b)}'s name at index ${e.c}`,
  'unlink old ref': (e, n) => `dir ${n(e.a)}: a name of inode ${n(e.b)} that the logged INODE_REF no longer has is removed`,
  'xattr set': (e, n) => `inode ${n(e.a)}: a logged xattr is set`,
  'extent present': (e, n) => `inode ${n(e.a)}: the extent at ${e.b} (${e.c} bytes) is already there`,
  hole: (e, n) => `inode ${n(e.a)}: a hole at ${e.b} (${e.c} bytes) is punched`,
  extent: (e, n) => `inode ${n(e.a)}: the logged extent at ${e.b} (${e.c} bytes) replaces what the fs tree had there`,
  csum: (e) => `checksums of data at ${e.a} (${e.b} bytes) are copied into the csum tree`,
  counts: (e, n) => `inode ${n(e.a)}: link count set to ${e.b} from its names; its size (or bytes used) is ${e.c}`,
  evict: (e, n) => `inode ${n(e.a)} is left with no name, and is deleted`,
};

/** Why the action exists: what a learner needs to read a replay. */
export const REPLAY_MEANS: Record<Exclude<ReplayAction, `#${number}`>, string> = {
  'pin block': 'The log\'s own blocks are marked in use first, so nothing replay allocates can overwrite the log it is reading.',
  'pin data': 'Data the log points at was written before the crash but belongs to no commit; it is marked in use so replay cannot hand it out again.',
  'inode new': 'The inode was made after the last commit: the log carries its whole inode item.',
  'inode overwrite': 'The log\'s inode item is newer than the committed one (it was taken at fsync), so it wins.',
  'inode keep': 'A parent directory or another name needed this inode to exist; its items were not logged, so the committed ones stand.',
  'xattr delete': 'A fully logged inode carries all its xattrs: any other xattr on disk was removed before the fsync.',
  'dir delete': 'For index ranges it covers (DIR_LOG_INDEX items), the log is authoritative: a name there that the log lacks was deleted before the fsync.',
  truncate: 'The logged size is the truth: extents past it were dropped before the fsync.',
  'unlink conflict': 'Two inodes cannot hold one name: the name the log gives wins, and the old owner loses it.',
  'link present': 'The name already points at this inode; replay is idempotent and moves on.',
  'link later': 'A directory entry is only added once its inode is known. The inode\'s INODE_REF, replayed in the next pass, adds the name with the inode it belongs to.',
  'link no inode': 'A name of an inode that exists neither in the log nor on disk cannot be restored.',
  'link add': 'The name is added to the directory (DIR_ITEM and DIR_INDEX) from the logged reference.',
  'unlink old ref': 'The logged INODE_REF lists all the inode\'s names in this directory; a name it lacks was unlinked before the fsync.',
  'xattr set': 'The logged xattr is copied over whatever the fs tree had.',
  'extent present': 'The fs tree already points at this very extent; replay is idempotent.',
  hole: 'The file had no data there at fsync time.',
  extent: 'File data written before the fsync: the logged extent item points at data already on disk.',
  csum: 'Data checksums were logged with the extents; without them the data would read as corrupt.',
  counts: 'Link counts and directory sizes are recomputed from the names that now exist, not trusted from the log.',
  evict: 'An inode with no name left is deleted, as the kernel would after an unlink.',
};

/** One replay action told with its numbers, each inode with its path when paths has it (model/files.ts's inodePaths). */
export function replaySaid(e: Replay, paths?: Map<bigint, string>): string {
  const f = SAID[e.action as keyof typeof SAID];
  return f ? f(e, (ino) => inodeWithPath(ino, paths)) : `${e.action}`;
}

/** What the action means, or '' for an action this page does not know. */
export function replayMeans(e: Replay): string {
  return REPLAY_MEANS[e.action as keyof typeof REPLAY_MEANS] ?? '';
}
