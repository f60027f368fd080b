// Sentences for the events the tree explorer draws (TreeExplorer, treeView).
import { blockWhat as what, keyText, treeName } from '../model/names';
import type { Sentences } from './sentences';

export const treeSentences = {
  op: (e) => `Line ${e.line} starts`,
  trans_start: (e) => `Transaction ${e.generation} starts`,
  chunk_remove: (e) => `Chunk at logical ${e.logical} (${e.length} bytes) removed: relocation emptied its block group, and its device space at ${e.physical} is free again`,
  reloc_group: (e) => `Relocating the block group at ${e.logical} (${e.length} bytes): read-only now, ${e.extents} extent${e.extents === 1n ? '' : 's'} in it`,
  reloc_found: (e) => `The block group at ${e.logical} is empty: found ${e.extents} extent${e.extents === 1n ? '' : 's'} to move (the others moved with a path copied for one of these)`,
  reloc_root: (e) => `The ${treeName(e.tree)} gets a reloc tree: ${what(e.level)} ${e.root}, a copy of its root sharing every block below it`,
  reloc_swap: (e) => `Merge: the ${treeName(e.tree)} now points at the reloc tree's ${what(e.level)} ${e.new}, and the reloc tree at its old ${e.old}, to be dropped`,
  reloc_extent: (e) => `${what(e.level)} ${e.from} of the ${treeName(e.tree)} leaves the read-only block group: the path to it is copied, the copy at ${e.to}`,
  chunk_alloc: (e) => `New chunk at logical ${e.logical}, ${e.length} bytes, on the device at ${e.physical}`,
  block_alloc: (e) => e.level < 0
    ? `Data extent of ${e.generation} bytes allocated at ${e.bytenr} for the ${treeName(e.tree)}`
    : `New ${what(e.level)} ${e.bytenr} allocated for the ${treeName(e.tree)}`,
  block_free: (e) => `Block ${e.bytenr} of the ${treeName(e.tree)} freed (reusable after the commit)`,
  cow: (e) => `COW ${what(e.level)} ${e.from} → ${e.to} in the ${treeName(e.tree)}, generation ${e.generation}`,
  backref: (e) => `${e.mod > 0 ? 'Add' : 'Drop'} a reference to ${e.level < 0 ? 'data extent' : what(e.level)} ${e.bytenr}: ${e.parent !== 0n ? `shared, by block ${e.parent}` : `keyed, by the ${treeName(e.root)}${e.level < 0 ? ` (inode ${e.objectid}, offset ${e.offset})` : ''}`}`,
  full_backref: (e) => `${what(e.level)} ${e.bytenr} is shared and the ${treeName(e.tree)} lets it go: from now on its children are referenced by the block itself (FULL_BACKREF)`,
  drop_progress: (e) => `The cleaner ends this transaction's batch of deleted subvolume ${e.tree} after ${e.blocks} block${e.blocks === 1n ? '' : 's'}: its root item keeps drop_progress (${keyText(e.key)}) at level ${e.level}, where the next batch goes on`,
  qgroup_dirty: (e) => `Qgroups: transaction ${e.generation} recorded ${e.extents} dirty extent${e.extents === 1n ? '' : 's'} to account at its commit`,
  qgroup_trace_subtree: (e) => `Qgroups trace the whole subtree under ${what(e.level)} ${e.bytenr}: ${e.blocks} tree block${e.blocks === 1 ? '' : 's'} and the data extents of ${e.extents} file extent item${e.extents === 1 ? '' : 's'} recorded dirty, ${e.added} of these records new to this transaction`,
  qgroup_trace_swap: (e) => `Qgroups trace the swap of ${what(e.level)} ${e.old} for the reloc tree's ${e.new}: both recorded dirty`,
  subvol_drop: (e) => `The cleaner dropped deleted subvolume ${e.tree}: what only it held is freed, what others share lost its reference`,
  qgroup_extent: (e) => `Qgroups: extent ${e.bytenr} (${e.size} bytes) was reached by ${e.before} subvolume tree${e.before === 1 ? '' : 's'}, now by ${e.after}`,
  qgroup_root: (e) => `Extent ${e.bytenr} is reached by the ${treeName(e.root)} ${e.after ? 'after' : 'before'} this transaction`,
  qgroup_update: (e) => `Qgroup ${e.qgroup >> 48n}/${e.qgroup & ((1n << 48n) - 1n)}: references ${e.referenced} bytes, ${e.exclusive} of them alone`,
  snapshot: (e) => `Snapshot of the ${treeName(e.source)}: the ${treeName(e.tree)}'s root ${what(e.level)} ${e.root} is a copy of its root, pointing at the same blocks (each gains a reference of the new tree)`,
  search: (e) => `Search the ${treeName(e.tree)}: ${what(e.level)} ${e.bytenr}, slot ${e.slot}${e.level === 0 ? (e.found ? ' (found)' : ' (not found: insert here)') : ''}`,
  item_insert: (e) => `Insert item (${keyText(e.key)}) into leaf ${e.bytenr} of the ${treeName(e.tree)} at slot ${e.slot}, ${e.size} bytes`,
  item_delete: (e) => `Delete item (${keyText(e.key)}) from leaf ${e.bytenr} of the ${treeName(e.tree)}`,
  split: (e) => `Split ${what(e.level)} ${e.left} of the ${treeName(e.tree)}: items from slot ${e.slot} move to new ${what(e.level)} ${e.right}`,
  push: (e) => `Push ${e.moved} item${e.moved === 1 ? '' : 's'} from leaf ${e.from} into its neighbour ${e.to} in the ${treeName(e.tree)}`,
  merge: (e) => `Merge ${what(e.level)} ${e.from} into ${e.into} in the ${treeName(e.tree)}`,
  root_grow: (e) => `The ${treeName(e.tree)} grows a level: new root ${e.bytenr} at level ${e.level}`,
  root_shrink: (e) => `The ${treeName(e.tree)} shrinks a level: ${e.bytenr} is the root again`,
  block_write: (e) => `Write ${what(e.level)} ${e.bytenr} of the ${treeName(e.tree)} to the device at ${e.physical}`,
  super_write: (e) => `Write superblock copy ${e.mirror} at ${e.physical}, generation ${e.generation}`,
  commit: (e) => `Commit: generation ${e.generation} is on disk, root tree at ${e.rootBytenr}`,
} satisfies Sentences;
