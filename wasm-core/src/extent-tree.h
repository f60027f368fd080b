/* extent-tree.h — allocation of tree blocks and data extents, and their
 * accounting in the extent tree: skinny METADATA_ITEMs with an inline
 * TREE_BLOCK_REF per tree block, EXTENT_ITEMs with inline EXTENT_DATA_REFs
 * per data extent, and BLOCK_GROUP_ITEMs carrying each block group's used
 * bytes. Changes are queued as delayed refs and applied at commit; freed
 * extents stay pinned (unusable) until the commit that frees them is on disk. */
#ifndef BTRFSLAB_EXTENT_TREE_H
#define BTRFSLAB_EXTENT_TREE_H
#include "delayed-ref.h"

/* A new tree block for root objectid owner at level, in the running
 * transaction (allocating a chunk when block groups are full). NULL with
 * fs->err on failure. */
struct extent_buffer *btrfs_alloc_tree_block(struct btrfs_fs_info *fs, u64 owner, int level);
/* Frees a tree block of root: at once if it was allocated in this
 * transaction, else pinned until commit. */
struct btrfs_root;
int btrfs_free_tree_block(struct btrfs_fs_info *fs, struct btrfs_root *root, struct extent_buffer *eb);
/* Root stops using a tree block other trees still use (a snapshot's): its
 * keyed backref is dropped; the block stays. */
int btrfs_drop_tree_block_ref(struct btrfs_fs_info *fs, struct btrfs_root *root, struct extent_buffer *eb);
/* The references to a tree block (extent item and queued changes) and its
 * extent flags (BTRFS_BLOCK_FLAG_FULL_BACKREF): btrfs_lookup_extent_info. */
int btrfs_lookup_extent_info(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 *refs, u64 *flags);
/* The same, where the block may have lost its last reference in this
 * transaction (*refs 0) or have none (ECORRUPT: no extent item). */
int btrfs_tree_block_refs(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 *refs, u64 *flags);
/* Every reference eb holds (children, or file extents' data) gains (mod +1)
 * or loses (-1) a backref: keyed by root, or with full by eb itself
 * (btrfs_inc_ref / btrfs_dec_ref). */
int btrfs_mod_refs_of(struct btrfs_fs_info *fs, u64 root, struct extent_buffer *eb, int full, int mod);
/* Reserves len bytes (sector aligned) of data space; with may_alloc_chunk a
 * new data chunk is made when no block group has room. ENOSPC otherwise. */
int btrfs_reserve_data(struct btrfs_fs_info *fs, u64 len, u64 *bytenr, int may_alloc_chunk);
/* Records the first reference (root, ino, offset) of a data extent just
 * reserved at bytenr. */
int btrfs_add_new_data_ref(struct btrfs_fs_info *fs, u64 bytenr, u64 len, u64 root, u64 ino, u64 offset);
/* Replay: keeps a free extent the log uses (a log block, logged data) from
 * allocation until after the commit. */
int btrfs_pin_log_extent(struct btrfs_fs_info *fs, u64 start, u64 len);
/* A log tree block freed when its log is dropped (at a commit): pinned, not
 * free, until that commit is on disk, since the superblock on disk may
 * still name the log it belongs to (a power cut before the new superblock
 * is written replays that log: its blocks must not have been reused). */
int btrfs_pin_log_block(struct btrfs_fs_info *fs, u64 start, u64 len);
/* Replay allocates a logged data extent pinned so: 1 when it was, else 0. */
int btrfs_claim_log_extent(struct btrfs_fs_info *fs, u64 start, u64 len);
/* Applies the queued reference changes to the extent tree (may queue more;
 * call until fs->delayed_refs is empty). */
int btrfs_run_delayed_refs(struct btrfs_fs_info *fs);
/* After the commit is on disk: pinned extents become free, freed blocks
 * leave the cache. */
void btrfs_unpin_extents(struct btrfs_fs_info *fs);
/* Allocation policy: finds len bytes aligned to align in a block group whose
 * type matches type (DATA/METADATA/SYSTEM) and reserves them. ENOSPC when
 * none has room. */
int btrfs_reserve_extent(struct btrfs_fs_info *fs, u64 type, u64 len, u64 align, u64 *out);
/* Default chunk size for a new chunk of type on this device. */
u64 btrfs_chunk_size_for(struct btrfs_fs_info *fs, u64 type);
/* flush_space(ALLOC_CHUNK_FORCE) for data, as a data reservation that does
 * not fit asks first: a new data chunk of the default size, or, when the
 * device has no hole that large, of the largest hole rounded down to 64 KiB
 * (the kernel's decide_stripe_size: a chunk shrinks to max_avail, down to
 * BTRFS_STRIPE_LEN a stripe). 1 when one was added, 0 when the device has
 * no room (the space_info full), or an error. */
int btrfs_alloc_data_chunk_force(struct btrfs_fs_info *fs);
/* The extents freed in the running transaction, free again after commit
 * (and the tree blocks the cache drops then): made with the fs, cloned and
 * freed with it. init/clone: 0 or BLAB_ENOMEM. */
int btrfs_pinned_init(struct btrfs_fs_info *fs);
void btrfs_pinned_free(struct btrfs_fs_info *fs);
int btrfs_pinned_clone(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src);
/* The pinned ranges (n of them), read-only. */
const struct free_range *btrfs_pinned_ranges(const struct btrfs_fs_info *fs, size_t *n);
#endif
