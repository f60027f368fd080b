/* file.h — file data: inline extents for small files, regular extents with
 * checksums for the rest, holes left implicit (NO_HOLES), overwrite that
 * splits extent items, truncate, and reading back. */
#ifndef BTRFSLAB_FILE_H
#define BTRFSLAB_FILE_H
#include "ctree.h"
#include "file-item.h" /* the items under a file's data */

/* Writes len bytes at off of regular file ino straight into extents (mkfs
 * --rootdir; a scenario's write goes through the page cache: delalloc.h). */
int btrfs_file_write(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, const u8 *data, u64 len);
/* Sets the size of regular file ino. */
int btrfs_file_truncate(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 size);
/* Reads [off, off + len) of ino (clipped to its size) into buf; *got gets
 * the bytes read. verify checks data checksums. */
int btrfs_file_read(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, u8 *buf, u64 len, u64 *got,
		    int verify);
/* The first range [*start, *stop) at or after from and before end where ino
 * has data (inline or regular extents); what lies between is a hole
 * (no extent, a hole extent, or preallocated). 0, 1 when there is none,
 * or an error. */
int btrfs_file_next_data(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 from, u64 end, u64 *start,
			 u64 *stop);
/* [off, off + len) of ino as its extents hold it (item_size: the inode
 * item's size; zeros past it), no checksum checks, no page cache. */
int btrfs_read_tree_range(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 item_size, u64 off, u8 *buf,
			  u64 len);
/* Whether ino's data is an inline extent (*yes): 0 or an error. */
int btrfs_file_has_inline(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, int *yes);
/* The file's whole content becomes an inline extent of size bytes (size
 * and nbytes of its inode item follow). */
int btrfs_write_inline(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, const u8 *data, u64 size);
/* Like btrfs_file_read for any inode with data (symlinks too), no checksum checks. */
int btrfs_file_read_any(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, u8 *buf, u64 len, u64 *got);
/* fsync of inode ino of root: logs it (tree-log.c) or, when only a commit
 * makes the change durable, commits the transaction. Returns 0 (st->fallback
 * says which) or an error. st may be NULL. */
struct btrfs_log_stats;
int btrfs_sync_file(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_log_stats *st);
#endif
