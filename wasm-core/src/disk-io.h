/* disk-io.h — tree blocks and the superblock: reading with checksum and
 * tree-checker verification, writing with checksums, opening an image. */
#ifndef BTRFSLAB_DISK_IO_H
#define BTRFSLAB_DISK_IO_H
#include "fs.h"

/* The cached block at bytenr, or NULL. */
struct extent_buffer *btrfs_find_eb(struct btrfs_fs_info *fs, u64 bytenr);
/* A zeroed, dirty block at bytenr added to the cache; the caller fills the
 * header. NULL on ENOMEM (fs->err set). Owned by fs. */
struct extent_buffer *btrfs_new_eb(struct btrfs_fs_info *fs, u64 bytenr);
/* Drops a freed block from the cache. */
void btrfs_evict_eb(struct btrfs_fs_info *fs, u64 bytenr);
/* Reads and verifies the tree block at bytenr: checksum, bytenr, fsid,
 * level (when level >= 0) and the tree checker (tree-checker.h). Owned by fs; valid until
 * fs is freed. On error returns NULL with fs->err set. */
struct extent_buffer *btrfs_read_tree_block(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 owner);
/* Fills the csum field of a tree block. */
void btrfs_csum_tree_block(struct btrfs_fs_info *fs, u8 *data);
/* Writes every dirty block (checksummed) to the device. */
int btrfs_write_dirty_blocks(struct btrfs_fs_info *fs);
/* Writes the in-memory superblock to every mirror that fits on the device;
 * it is then the committed one (fs->committed_super). */
int btrfs_write_super(struct btrfs_fs_info *fs);
/* Writes super (a whole superblock) to every mirror, checksummed. */
int btrfs_write_super_buf(struct btrfs_fs_info *fs, const u8 *super);
/* Writes eb (checksummed) when it is dirty. */
int btrfs_write_tree_block(struct btrfs_fs_info *fs, struct extent_buffer *eb);
/* Opens the image held by dev (taken over by the new fs, even on error):
 * superblock, chunk tree, root tree and every root in it. Returns NULL with
 * *err filled on failure. */
struct btrfs_fs_info *btrfs_open(struct blab_device *dev, struct blab_err *err);
#endif
