/* block-group.h — block groups: the used count of each chunk and its free
 * space, from which tree blocks and data extents are allocated. */
#ifndef BTRFSLAB_BLOCK_GROUP_H
#define BTRFSLAB_BLOCK_GROUP_H
#include "fs.h"

/* Adds a block group covering [start, start+length), all free; pending
 * means its item is inserted at the next commit. */
int btrfs_add_block_group(struct btrfs_fs_info *fs, u64 start, u64 length, u64 flags, u64 used);
struct btrfs_block_group *btrfs_lookup_block_group(struct btrfs_fs_info *fs, u64 bytenr);
/* Finds len bytes aligned to align in a block group whose type matches
 * type (DATA/METADATA/SYSTEM); marks them used. ENOSPC when none has room. */
int btrfs_reserve_extent(struct btrfs_fs_info *fs, u64 type, u64 len, u64 align, u64 *out);
/* Marks [start, start+len) used (it must be free) or free (it must be used). */
int btrfs_mark_used(struct btrfs_fs_info *fs, u64 start, u64 len);
int btrfs_mark_free(struct btrfs_fs_info *fs, u64 start, u64 len);
#endif
