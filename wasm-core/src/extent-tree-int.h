/* extent-tree-int.h — what extent-tree.c keeps between a free and the
 * commit that makes the space free again (the kernel's pinned extents), and
 * the tree blocks to drop from the cache then. Private to extent-tree.c;
 * other modules see the pointer in struct btrfs_fs_info and the functions
 * of extent-tree.h. */
#ifndef BTRFSLAB_EXTENT_TREE_INT_H
#define BTRFSLAB_EXTENT_TREE_INT_H
#include "extent-tree.h"

struct btrfs_pinned_extents {
	struct free_range *ranges; /* freed extents: free again after commit */
	size_t n, cap;
	u64 *evict; /* freed tree blocks to drop from the cache after commit */
	size_t nevict, capevict;
};
#endif
