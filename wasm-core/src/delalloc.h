/* delalloc.h — the page cache and delayed allocation, as the kernel's
 * buffered write path keeps them (filemap, extent_io's EXTENT_DELALLOC
 * bits, btrfs_inode's i_size).
 *
 * A buffered write copies into cached pages of the file, marks them dirty
 * and their range delalloc, and moves the in-memory i_size; no extent is
 * reserved and no item changes but the inode's times. Writeback (fsync,
 * sync, the flusher, a commit that must see the data) runs over dirty
 * ranges: each becomes an extent reserved on disk and an ordered extent
 * (ordered-data.h) whose bio carries the pages' bytes and checksums; the
 * pages are then under writeback until the bio completes, and kept cached
 * until the ordered extent completes (the file extent item is in the fs
 * tree from then on, and reads go to disk). A file that stays within
 * max_inline is written back as an inline extent at once, as the kernel's
 * cow_file_range_inline does.
 *
 * The inode item in the fs tree holds disk_i_size: the size covered by
 * completed ordered extents. Readers of a file's size ask
 * btrfs_inode_isize. A power cut loses the cache: it lives only in memory.
 *
 * Pages are sectors (sectorsize bytes): the core has no larger page. */
#ifndef BTRFSLAB_DELALLOC_H
#define BTRFSLAB_DELALLOC_H
#include "fs.h"

enum btrfs_page_state {
	BTRFS_PAGE_DIRTY = 1,     /* written, delalloc: no extent yet */
	BTRFS_PAGE_WRITEBACK = 2, /* in a bio being written */
	BTRFS_PAGE_UPTODATE = 3,  /* on disk, its ordered extent not complete: the cache still answers reads */
};

/* Makes and frees fs->data (btrfs_fs_alloc, btrfs_fs_free). */
int btrfs_delalloc_init(struct btrfs_fs_info *fs);
void btrfs_delalloc_free(struct btrfs_fs_info *fs);
/* dst's page cache and ordered extents become a copy of src's (btrfs_fs_clone). */
int btrfs_delalloc_clone(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src);

/* The page cache's key of inode ino of root: for the top-level subvolume
 * the inode number itself, for another subvolume its tree's slot in
 * fs->roots (plus one) above bit 48 and the number below. The functions
 * here and in ordered-data.h that take a bare "ino" take this key
 * (btrfs_ikey(fs, fs->fs_root, ino) == ino), and btrfs_dirty_inodes gives
 * keys. Inode numbers from 2^48 up have no key (0): 16 bits hold the slot
 * of any of BLAB_MAX_ROOTS trees, and the kernel hands out inode numbers
 * one by one from 256, so no filesystem it made gets near 2^48. */
#define BTRFS_IKEY_SHIFT 48
_Static_assert(BLAB_MAX_ROOTS < (1 << (64 - BTRFS_IKEY_SHIFT)), "a tree's slot must fit above BTRFS_IKEY_SHIFT");
u64 btrfs_ikey(const struct btrfs_fs_info *fs, const struct btrfs_root *root, u64 ino);
/* The tree and inode number of a key. */
struct btrfs_root *btrfs_ikey_root(const struct btrfs_fs_info *fs, u64 key);
static inline u64 btrfs_ikey_ino(u64 key) { return key & ((1ULL << BTRFS_IKEY_SHIFT) - 1); }

/* An expanding truncate of ino to new_size (its item's size item_size): the
 * block that held the end is zeroed past it and dirty again, when it holds
 * data; the cached i_size is new_size. */
int btrfs_grow_eof(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 item_size, u64 new_size);
/* write(2) of a regular file: into the page cache. */
int btrfs_buffered_write(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, const u8 *data, u64 len);
/* The file's size as a reader sees it (the in-memory i_size), given the
 * size its inode item holds. */
u64 btrfs_inode_isize(const struct btrfs_fs_info *fs, u64 ino, u64 item_size);
/* Lays the cached pages of ino over buf, which holds [off, off + len) as
 * the trees give it. */
void btrfs_read_cached(const struct btrfs_fs_info *fs, u64 ino, u64 off, u8 *buf, u64 len);
/* Dirty bytes of ino (all inodes: ino 0). */
u64 btrfs_dirty_bytes(const struct btrfs_fs_info *fs, u64 ino);
/* Bytes of [start, end) (whole sectors) of ino that are not dirty: what a
 * write there reserves anew (the kernel's EXTENT_QGROUP_RESERVED bits are
 * set on dirty ranges until writeback). */
u64 btrfs_delalloc_clean_bytes(const struct btrfs_fs_info *fs, u64 ino, u64 start, u64 end);
/* btrfs_check_data_free_space for a buffered write of len bytes at off to
 * ino (an inode key): how many of them fit the data space_info now (used +
 * reserved + pinned + may_use + the new bytes within its chunks: data never
 * overcommits). Whole sectors, the first of which may start before off, as
 * the kernel reserves a page at a time; a sector already dirty needs no
 * room. len when all fit. */
u64 btrfs_data_space_fit(const struct btrfs_fs_info *fs, u64 ino, u64 off, u64 len);

struct btrfs_ordered_extent;
/* Starts writeback of ino's dirty pages in [start, end): inline data is
 * written at once; every other dirty range gets an extent and an ordered
 * extent, appended to *oes (malloc'd array, *n entries) with its bio ready
 * (btrfs_ordered_submit). 0 or an error (ENOSPC names the file). */
int btrfs_start_delalloc(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 start, u64 end,
			 struct btrfs_ordered_extent ***oes, size_t *n);
/* Writeback of [start, end) of ino with every ordered extent it makes (and
 * any of ino's already in flight) completed before returning: what a task
 * that waits for all of it sees, without time. */
int btrfs_writeback_and_wait(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 start, u64 end);
/* The same for every inode with dirty pages (sync(2) without time). */
int btrfs_sync_data(struct btrfs_fs_info *fs);
/* The inodes that have dirty pages, oldest dirtied first: up to max into out; their count. */
size_t btrfs_dirty_inodes(const struct btrfs_fs_info *fs, u64 *out, size_t max);
/* All of them, oldest dirtied first, in *out (malloc'd; the caller frees). */
int btrfs_dirty_inodes_all(const struct btrfs_fs_info *fs, u64 **out, size_t *n);
/* When ino's first dirty page of the current batch was dirtied (virtual ns),
 * for the flusher's expiry; set by btrfs_buffered_write from fs->clock_ns. */
u64 btrfs_inode_dirtied_at(const struct btrfs_fs_info *fs, u64 ino);
/* Ranges of ino written back since btrfs_inode_modified_clear (the
 * kernel's list of modified extent maps, which a fast fsync logs): up to
 * max into starts/ends; their count (more than max: too many to list). */
size_t btrfs_inode_modified(const struct btrfs_fs_info *fs, u64 ino, u64 *starts, u64 *ends, size_t max);
void btrfs_inode_modified_clear(struct btrfs_fs_info *fs, u64 ino);
/* The inode lost its last name: its cache goes (its ordered extents must
 * be complete). */
void btrfs_delalloc_evict(struct btrfs_fs_info *fs, u64 ino);
/* Every cached inode of root goes (a subvolume dropped; written back before). */
void btrfs_delalloc_evict_root(struct btrfs_fs_info *fs, const struct btrfs_root *root);
/* Sets ino's metadata reservation to what its delalloc and ordered extents need (space-info.h). */
void btrfs_delalloc_space_sync(struct btrfs_fs_info *fs, u64 ino);
/* The metadata reservation ino holds now (0: none). */
u64 btrfs_delalloc_meta_rsv(const struct btrfs_fs_info *fs, u64 ino);
/* Calls fn for each cached page of ino in order (state, file offset). */
typedef void (*btrfs_page_fn)(void *arg, u64 off, int state);
void btrfs_for_each_page(const struct btrfs_fs_info *fs, u64 ino, btrfs_page_fn fn, void *arg);
#endif
