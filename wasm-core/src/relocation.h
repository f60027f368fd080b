/* relocation.h — balance: a block group made read-only, every extent in it
 * moved elsewhere, then the block group and its chunk removed (the kernel's
 * btrfs_relocate_chunk / relocate_block_group, and btrfs_balance choosing
 * the block groups). */
#ifndef BTRFSLAB_RELOCATION_H
#define BTRFSLAB_RELOCATION_H
#include "fs.h"

struct btrfs_reloc_stats {
	u64 block_groups; /* relocated and removed */
	u64 extents;      /* found in them: the kernel's "found N extents" */
	u64 tree_blocks;  /* of those, tree blocks copied */
	/* told of each block group as its relocation begins (NULL: not) */
	void (*on_group)(void *ctx, u64 start, u64 flags, u64 extents);
	void *ctx;
};

/* Relocates the block group that starts at start: the running transaction
 * is committed, the group set read-only (what moves out goes to the other
 * groups of its type, or to a chunk the allocator adds), committed; each
 * tree block in it moved by copying the path to it: in its own tree for
 * the trees no other shares, in the subvolumes' reloc trees otherwise
 * (merged, then dropped); each data extent copied with its checksums and
 * the leaves pointing at it moved the same way; committed, so the old
 * copies are freed; then the group's item, free space items, chunk item
 * and device extents removed, committed. Adds to *st. */
int btrfs_relocate_block_group(struct btrfs_fs_info *fs, u64 start, struct btrfs_reloc_stats *st);

/* btrfs balance start with type filters: each block group of the types in
 * mask (BTRFS_BLOCK_GROUP_DATA / METADATA / SYSTEM) whose use is at most
 * usage percent (100: all) relocated in logical order, as the kernel walks
 * the chunk tree; the groups allocated while balancing are not. */
int btrfs_balance(struct btrfs_fs_info *fs, u64 mask, int usage, struct btrfs_reloc_stats *st);

/* 0 when the image holds no reloc tree a kernel balance left (fs->reloc_left);
 * otherwise fails with BLAB_ENOTSUP and a message naming what (the operation
 * refused) and the reloc trees: only the kernel finishes that relocation
 * (at its next read-write mount), and this core writes nothing before it has. */
int btrfs_reloc_trees_left(struct btrfs_fs_info *fs, const char *what);
#endif
