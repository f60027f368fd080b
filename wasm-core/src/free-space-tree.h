/* free-space-tree.h — the free space tree: per block group a
 * FREE_SPACE_INFO and one FREE_SPACE_EXTENT per free range. */
#ifndef BTRFSLAB_FREE_SPACE_TREE_H
#define BTRFSLAB_FREE_SPACE_TREE_H
#include "fs.h"

/* Writes the free space items of every block group created in this
 * transaction, from the block group's in-memory free ranges. */
int btrfs_fst_add_new_block_groups(struct btrfs_fs_info *fs);
#endif
