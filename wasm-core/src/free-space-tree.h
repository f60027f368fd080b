/* free-space-tree.h — the free space tree: per block group a
 * FREE_SPACE_INFO and one FREE_SPACE_EXTENT per free range (bitmaps are read
 * and replaced by extents). */
#ifndef BTRFSLAB_FREE_SPACE_TREE_H
#define BTRFSLAB_FREE_SPACE_TREE_H
#include "fs.h"

/* Brings the items of every block group whose free space changed in line
 * with it (as it will be after this commit). Returns 0 or an error. */
int btrfs_update_free_space_tree(struct btrfs_fs_info *fs);
#endif
