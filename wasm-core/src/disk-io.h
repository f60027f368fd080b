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
/* Frees an extent buffer that is in no cache (its bytes when no clone holds them). */
void btrfs_free_eb(struct extent_buffer *eb);
/* Makes eb's bytes its own before they change, when a clone shares them.
 * Every change to a block goes through btrfs_cow_block, which calls it (as
 * do btrfs_new_eb and the writer). 0 or BLAB_ENOMEM. */
int btrfs_eb_unshare(struct btrfs_fs_info *fs, struct extent_buffer *eb);
/* Adds to fs's cache a buffer sharing src's bytes (and dirty state). NULL on ENOMEM. */
struct extent_buffer *btrfs_share_eb(struct btrfs_fs_info *fs, const struct extent_buffer *src);
/* Calls fn(ctx, eb) for every cached block until fn returns nonzero (that
 * value is returned); 0 at the end. The cache must not change meanwhile. */
int btrfs_for_each_cached_eb(const struct btrfs_fs_info *fs, int (*fn)(void *ctx, const struct extent_buffer *eb),
			     void *ctx);
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
/* What every command that writes an image (balance, replay, write) relies on,
 * checked once at open: each tree's root block named once (superblock, root
 * items, reloc trees), the sys_chunk_array holding SYSTEM chunks only and
 * agreeing with the chunk tree, one known type per chunk, no two stripes
 * overlapping (a DUP chunk's two copies either), every stripe within the
 * superblock's total_bytes, and, when the block groups are loaded, each
 * block group of its chunk's type. The readers open what they can read and
 * leave these to check. With out, every problem is an "ERROR: " line there
 * (check's form) and the count is returned; without, the first one is
 * fs->err (ECORRUPT, naming what and where) and 1 is returned. 0: none. */
struct strbuf;
int btrfs_verify_layout(struct btrfs_fs_info *fs, struct strbuf *out);
/* What a writer asks of an open image: the block groups loaded and
 * btrfs_verify_layout passed. 0, or the error (fs->err names it). */
int btrfs_verify_writable(struct btrfs_fs_info *fs);
/* btrfs_open for a writer: btrfs_verify_writable passed, or NULL with *err
 * naming the first problem. */
struct btrfs_fs_info *btrfs_open_rw(struct blab_device *dev, struct blab_err *err);
/* A copy of src's root (its dir index too) whose node is fs's cached
 * block of the same bytenr. NULL on ENOMEM (fs->err set). */
struct btrfs_root *btrfs_clone_root(struct btrfs_fs_info *fs, const struct btrfs_root *src);
/* An independent copy of an in-memory filesystem as it stands, even in the
 * middle of a transaction: a checkpoint. The device's pages and the changed
 * blocks are shared copy-on-write (device_clone, btrfs_eb_unshare); blocks
 * unchanged since the last commit are not copied but read again from the
 * device when the copy needs them. The copy's trace is empty and off.
 * NULL with err filled on ENOMEM, or EINVAL for a device that is not in
 * memory. Running the same operations on src and on the copy gives the
 * same images. */
struct btrfs_fs_info *btrfs_fs_clone(const struct btrfs_fs_info *src, struct blab_err *err);
/* A power cut: fs is freed, what its device holds is opened again as the
 * next mount finds it (the last commit, and a log if one was synced), and
 * the trace goes along. NULL with err when that cannot be opened. */
struct btrfs_fs_info *btrfs_power_cut(struct btrfs_fs_info *fs, struct blab_err *err);
#endif
