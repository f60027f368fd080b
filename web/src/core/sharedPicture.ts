// The shared picture of a moment (model/shared.ts) from the core's own state
// there: the root tree listing every tree (and how many blocks each has), then
// the extent tree and each subvolume tree with their leaves whole. A session's
// state inside a line is the run stopped at an event (blab_session_dump_at_event).
import { isSubvolTree, MAX_PICTURE_BLOCKS, pictureOf, type SharedPicture } from '../model/shared';
import type { TreeDump } from '../model/dump';
import type { Core, Handle } from './wasm';

/** Session h right after its event seq, or after script line `line` (0: after mkfs; -1: the run's end, committed). */
export type PictureAt = { seq: number } | { line: number };

export function sharedPicture(core: Core, h: Handle, at: PictureAt): SharedPicture {
  let dump: (tree: bigint) => TreeDump;
  if ('seq' in at) {
    dump = (tree) => core.dumpAtEvent(h, at.seq, tree, 0);
  } else {
    const s = at.line < 0 ? h : core.seek(h, at.line); // borrowed until h's next seek: read here, at once
    dump = (tree) => core.dumpTree(s, tree, 0);
  }
  const root = dump(1n);
  const subvols = root.trees.filter((t) => isSubvolTree(t.id));
  const blocks = root.trees.filter((t) => isSubvolTree(t.id) || t.id === 2n).reduce((n, t) => n + t.blockCount, 0);
  if (blocks > MAX_PICTURE_BLOCKS) return { nodesize: root.nodesize, trees: [], blocks: [], extents: {}, data: [], rootItems: [], tooBig: blocks };
  return pictureOf(root, dump(2n), subvols.map((t) => dump(t.id)));
}
