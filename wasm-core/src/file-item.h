/* file-item.h — the items under file data, as the kernel's file-item.c
 * keeps them: data checksums (EXTENT_CSUM items in the csum tree, one
 * crc32c per sector, keyed by the logical address of the first sector) and
 * file extent items (EXTENT_DATA: inline, regular, prealloc), with the drop
 * of a range that write, truncate, evict and replay share. */
#ifndef BTRFSLAB_FILE_ITEM_H
#define BTRFSLAB_FILE_ITEM_H
#include "fs.h"

/* Checksums len bytes (whole sectors) of data written at bytenr. */
int btrfs_csum_file_blocks(struct btrfs_fs_info *fs, u64 bytenr, const u8 *data, u64 len);
/* The same from checksums computed before (an ordered extent's). */
int btrfs_insert_csums(struct btrfs_fs_info *fs, u64 bytenr, const u32 *sums, u64 sectors);
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

/* Largest file kept inline (the kernel's default max_inline, 2048). */
u32 btrfs_max_inline(const struct btrfs_fs_info *fs);
/* Largest symlink target (inline, up to PATH_MAX - 1). */
u32 btrfs_max_symlink(const struct btrfs_fs_info *fs);
int btrfs_insert_inline_extent(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, const u8 *data, u32 len);

/* One file extent item, decoded. */
struct file_extent {
	struct btrfs_key key;
	u8 type, compression;
	u64 generation, ram_bytes;
	u64 disk_bytenr, disk_num_bytes, offset, num_bytes;
	u32 inline_len;
};
static inline u64 file_extent_end(const struct file_extent *fe) { return fe->key.offset + fe->num_bytes; }
/* Decodes the file extent item at slot of leaf (ECORRUPT when it is short or of no known type). */
int btrfs_parse_file_extent(struct btrfs_fs_info *fs, const struct extent_buffer *leaf, int slot, struct file_extent *fe);
/* The first extent of ino that covers or follows cur and starts before end:
 * 0 with *fe, or ENOENT. */
int btrfs_find_file_extent(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 cur, u64 end, struct file_extent *fe);
/* Inserts at file_off of ino a regular extent item like src's, with its own offset and length. */
int btrfs_insert_file_extent(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 file_off, const struct file_extent *src,
			     u64 offset, u64 num_bytes);
/* Removes file extent items' coverage of [start, end) of ino (splitting and
 * trimming items that straddle it, dropping data references); *dropped gets
 * the bytes removed from the inode's nbytes (may be NULL). */
int btrfs_drop_file_extents(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 start, u64 end, u64 *dropped);
#endif
