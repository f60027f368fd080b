/* file-item.h — data checksums: EXTENT_CSUM items in the csum tree, one
 * crc32c per sector, keyed by the logical address of the first sector. */
#ifndef BTRFSLAB_FILE_ITEM_H
#define BTRFSLAB_FILE_ITEM_H
#include "fs.h"

/* Checksums len bytes (whole sectors) of data written at bytenr. */
int btrfs_csum_file_blocks(struct btrfs_fs_info *fs, u64 bytenr, const u8 *data, u64 len);
/* Removes the checksums of [bytenr, bytenr + len). */
/* The EXTENT_CSUM item of root (the csum tree, or a log) that covers bytenr,
 * or the first one after it below end: 0 with path at it and its range in
 * [*item_start, *item_end), or ENOENT. */
struct btrfs_path;
struct btrfs_root;
int btrfs_find_csum_item(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 bytenr, u64 end, struct btrfs_path *path,
			 u64 *item_start, u64 *item_end);
int btrfs_del_csums(struct btrfs_fs_info *fs, u64 bytenr, u64 len);
/* The stored checksum of the sector at bytenr: 0 with *csum, or ENOENT. */
int btrfs_lookup_csum(struct btrfs_fs_info *fs, u64 bytenr, u32 *csum);
#endif
