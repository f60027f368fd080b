/* block-group.h — block groups: the used count of each chunk and its free
 * space, from which tree blocks and data extents are allocated (the policy
 * that chooses where is extent-tree.c's); their items in the extent tree. */
#ifndef BTRFSLAB_BLOCK_GROUP_H
#define BTRFSLAB_BLOCK_GROUP_H
#include "fs.h"

/* Adds a block group covering [start, start+length), all free; pending
 * means its item is inserted at the next commit. */
int btrfs_add_block_group(struct btrfs_fs_info *fs, u64 start, u64 length, u64 flags, u64 used);
struct btrfs_block_group *btrfs_lookup_block_group(struct btrfs_fs_info *fs, u64 bytenr);
/* Marks [start, start+len), free in bg, used (the allocator chose it:
 * btrfs_reserve_extent in extent-tree.c). */
int btrfs_add_reserved_bytes(struct btrfs_fs_info *fs, struct btrfs_block_group *bg, u64 start, u64 len);
/* Returns a reserved extent that never reached disk to free space at once. */
int btrfs_free_reserved(struct btrfs_fs_info *fs, u64 start, u64 len);
/* An extent freed in this transaction: no longer counted as used, but not
 * free for allocation until btrfs_unpin_range after the commit. */
int btrfs_pin_range(struct btrfs_fs_info *fs, u64 start, u64 len);
void btrfs_unpin_range(struct btrfs_fs_info *fs, u64 start, u64 len);
/* Replay: a free range that must not be allocated until after the commit
 * (log blocks, data the log refers to); it stays free in the free space tree. */
int btrfs_pin_free_range(struct btrfs_fs_info *fs, u64 start, u64 len);
/* Such a range becomes used (replay allocates a logged data extent). */
void btrfs_claim_pinned_range(struct btrfs_fs_info *fs, u64 start, u64 len);
/* Loading an image: [start, start+len) is allocated (used is already known). */
int btrfs_exclude_range(struct btrfs_fs_info *fs, u64 start, u64 len);
/* Like btrfs_exclude_range, for whatever part of the range is still free. */
void btrfs_exclude_range_partial(struct btrfs_fs_info *fs, u64 start, u64 len);
/* The free space of bg as the free space tree must record it after this
 * commit: free ranges and pinned ones, merged. *out is malloc'd. */
int btrfs_bg_free_after_commit(struct btrfs_fs_info *fs, struct btrfs_block_group *bg, struct free_range **out, size_t *n);
/* Inserts the items of new block groups and updates changed ones. */
/* A group's used bytes as its item and the superblock count them: less the
 * space reserved for ordered extents still in flight (their extent items are
 * not in the tree yet). */
u64 btrfs_block_group_used_on_disk(const struct btrfs_fs_info *fs, const struct btrfs_block_group *bg);
int btrfs_write_block_group_items(struct btrfs_fs_info *fs);
/* Loads block groups and their free space from the extent tree of an opened
 * image (needed before changing it). */
int btrfs_load_block_groups(struct btrfs_fs_info *fs);
#endif
