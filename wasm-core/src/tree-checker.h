/* tree-checker.h — the one place a tree block read from an image is judged
 * before any code uses it, as the kernel's tree-checker does.
 *
 * A block passes when its layout is sound (levels, item counts, keys in
 * order, item data inside the leaf and not overlapping) and every item of a
 * type the core reads has the size its type demands, with every
 * variable-length field inside the item: names of DIR_ITEM, DIR_INDEX,
 * XATTR_ITEM, INODE_REF, INODE_EXTREF and ROOT_REF are 1..BTRFS_NAME_LEN
 * bytes, xattr values fit the item, the entries of an item end exactly at
 * its end, and generations are not in the future. Code that reads items of
 * a checked block may rely on all of this and never re-derives a length.
 *
 * Walks from a node to a child go through btrfs_read_node_slot, which also
 * checks the child against its parent's key pointer (level one below, the
 * pointer's generation, the child's first key equal to the pointer's key). */
#ifndef BTRFSLAB_TREE_CHECKER_H
#define BTRFSLAB_TREE_CHECKER_H
#include "fs.h"

/* 0, or ECORRUPT with a message "corrupt leaf: root=R block=B slot=S, ..."
 * naming the tree, block, slot and what is wrong. */
int btrfs_check_block(struct btrfs_fs_info *fs, const struct extent_buffer *eb, u64 owner);
/* The same rules for one item (key, data of size bytes) of a leaf of tree
 * owner; used by btrfs_check_block for each slot. */
int btrfs_check_item(struct btrfs_fs_info *fs, const struct extent_buffer *eb, u32 slot, u64 owner);
/* Reads the child at slot of node parent (of tree owner) and checks it
 * against the key pointer. NULL with fs->err set on any failure. */
struct extent_buffer *btrfs_read_node_slot(struct btrfs_fs_info *fs, const struct extent_buffer *parent, int slot,
					   u64 owner);
/* The highest generation a block or item of this filesystem may carry:
 * the running transaction's. */
u64 btrfs_max_generation(const struct btrfs_fs_info *fs);

/* Every block of the tree under root, each exactly once: a block reached a
 * second time (two parents, or two slots) is ECORRUPT. fn is called on each
 * block in the given order; a non-zero return stops the walk and is
 * returned. Depth is bounded by BTRFS_MAX_LEVEL; no recursion. */
enum btrfs_walk_order { WALK_BREADTH_FIRST, WALK_PRE_ORDER, WALK_POST_ORDER };
typedef int (*btrfs_walk_fn)(struct btrfs_fs_info *fs, struct extent_buffer *eb, void *arg);
int btrfs_walk_tree(struct btrfs_fs_info *fs, struct extent_buffer *root, u64 owner, enum btrfs_walk_order order,
		    btrfs_walk_fn fn, void *arg);
#endif
