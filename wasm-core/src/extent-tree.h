/* extent-tree.h — allocation of tree blocks and their accounting in the
 * extent tree (skinny METADATA_ITEMs with inline TREE_BLOCK_REFs), and the
 * BLOCK_GROUP_ITEMs that carry each block group's used bytes. */
#ifndef BTRFSLAB_EXTENT_TREE_H
#define BTRFSLAB_EXTENT_TREE_H
#include "fs.h"

/* Allocates a new tree block for tree owner at level in the running
 * transaction (allocating a new chunk when the block groups are full) and
 * queues its extent-tree reference. Returns the block or NULL (fs->err). */
struct extent_buffer *btrfs_alloc_tree_block(struct btrfs_fs_info *fs, u64 owner, int level);
/* Applies the queued reference changes to the extent tree. */
int btrfs_run_delayed_refs(struct btrfs_fs_info *fs);
/* Inserts the items of new block groups and updates changed ones. */
int btrfs_write_block_group_items(struct btrfs_fs_info *fs);
/* Default chunk size for a new chunk of type on this device. */
u64 btrfs_chunk_size_for(struct btrfs_fs_info *fs, u64 type);
#endif
