/* file-item.h — data checksums: EXTENT_CSUM items in the csum tree, one
 * crc32c per sector, keyed by the logical address of the first sector. */
#ifndef BTRFSLAB_FILE_ITEM_H
#define BTRFSLAB_FILE_ITEM_H
#include "fs.h"

/* Checksums len bytes (whole sectors) of data written at bytenr. */
int btrfs_csum_file_blocks(struct btrfs_fs_info *fs, u64 bytenr, const u8 *data, u64 len);
/* Removes the checksums of [bytenr, bytenr + len). */
int btrfs_del_csums(struct btrfs_fs_info *fs, u64 bytenr, u64 len);
/* The stored checksum of the sector at bytenr: 0 with *csum, or ENOENT. */
int btrfs_lookup_csum(struct btrfs_fs_info *fs, u64 bytenr, u32 *csum);
#endif
