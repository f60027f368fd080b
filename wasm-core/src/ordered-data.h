/* ordered-data.h — ordered extents, as the kernel's ordered-data.c keeps
 * them: one for each extent writeback reserves, from the moment its bio is
 * built until the file extent item and the checksums are in the trees.
 *
 * Life of one: created by btrfs_start_delalloc (delalloc.h) with its bytes
 * and their checksums (computed when the bio is built, as
 * btrfs_csum_one_bio does); btrfs_ordered_io_done when its bio completes
 * (the bytes are on the device, the pages leave writeback); then
 * btrfs_finish_ordered_io, the completion worker's job (the kernel's
 * btrfs_finish_one_ordered): drop what the range held, insert the file
 * extent item, add the data reference, insert the checksums, move
 * disk_i_size, and remove the ordered extent.
 *
 * Between io_done and finish, a fast fsync in fsync_wait=writeback mode
 * logs the extent from the ordered extent itself, checksums included
 * (btrfs_ordered_for_logging), and marks it logged: a transaction commit
 * then waits for it (btrfs_ordered_logged_pending). */
#ifndef BTRFSLAB_ORDERED_DATA_H
#define BTRFSLAB_ORDERED_DATA_H
#include "fs.h"

/* What fast fsync waits for before logging (seed 003). */
enum btrfs_fsync_wait {
	BTRFS_FSYNC_WAIT_ORDERED = 0,   /* ordered extents complete (before 5.10) */
	BTRFS_FSYNC_WAIT_WRITEBACK = 1, /* writeback only; checksums from in-flight ordered extents (5.10 on) */
};

enum btrfs_ordered_flags {
	BTRFS_ORDERED_IO_DONE = 1 << 0,  /* its bio completed */
	BTRFS_ORDERED_LOGGED = 1 << 1,   /* a log holds it while it is in flight */
	BTRFS_ORDERED_FINISHING = 1 << 2 /* a completion worker has it */
};

struct btrfs_ordered_extent {
	u64 id;                  /* creation order, from 1 */
	u64 root, ino;
	u64 ikey;                /* the page cache's key of the inode (btrfs_ikey) */
	u64 file_offset, num_bytes;
	u64 disk_bytenr;         /* num_bytes on disk too: no compression */
	u64 trans;               /* the transaction that created it */
	u64 logged_trans;        /* the transaction whose log holds it (0: none) */
	u32 flags;
	u32 *sums;               /* one crc32c a sector */
};

/* The in-flight ordered extents (oldest first): *n of them. */
struct btrfs_ordered_extent *const *btrfs_ordered_list(const struct btrfs_fs_info *fs, size_t *n);
/* Those of ino overlapping [start, end), oldest first: up to max into out; their count. */
size_t btrfs_ordered_of(const struct btrfs_fs_info *fs, u64 ino, u64 start, u64 end, struct btrfs_ordered_extent **out,
			size_t max);
/* Whether an ordered extent of ino overlapping [start, end) still has its bio in flight. */
int btrfs_ordered_io_pending(const struct btrfs_fs_info *fs, u64 ino, u64 start, u64 end);
/* Count of ino's in-flight ordered extents (any range). */
size_t btrfs_ordered_count(const struct btrfs_fs_info *fs, u64 ino);
/* The bytes of ino's in-flight ordered extents (0: every inode's), and their number in *count (may be NULL). */
u64 btrfs_ordered_bytes(const struct btrfs_fs_info *fs, u64 ino, u64 *count);
struct btrfs_ordered_extent *btrfs_ordered_by_id(const struct btrfs_fs_info *fs, u64 id);

/* The bio completed: its bytes go to the device, the pages leave writeback. */
int btrfs_ordered_io_done(struct btrfs_fs_info *fs, struct btrfs_ordered_extent *oe);
/* Completion: the trees get the extent; oe is freed. The transaction must
 * be running (btrfs_start_transaction). */
int btrfs_finish_ordered_io(struct btrfs_fs_info *fs, struct btrfs_ordered_extent *oe);
/* io_done (if not yet) and finish, for each in-flight ordered extent of ino
 * (ino 0: all), oldest first. */
int btrfs_wait_ordered(struct btrfs_fs_info *fs, u64 ino);
/* Whether a transaction commit must wait: an ordered extent logged in the
 * running transaction is still in flight. */
int btrfs_ordered_logged_pending(const struct btrfs_fs_info *fs);
/* fs tree extents that a logger must not copy: the in-flight ordered
 * extents of ino replace them. */
int btrfs_ordered_covers(const struct btrfs_fs_info *fs, u64 ino, u64 start, u64 end);

/* The in-flight extents' disk ranges inside [start, start + len): reserved
 * but not yet in the extent tree, so a commit counts them free (the free
 * space tree) and not used (the block group item). */
u64 btrfs_ordered_reserved_in(const struct btrfs_fs_info *fs, u64 start, u64 len);
size_t btrfs_ordered_reserved_ranges(const struct btrfs_fs_info *fs, u64 start, u64 len, struct free_range *out, size_t max);

/* Counters since the filesystem was made or opened. */
struct btrfs_ordered_stats {
	u64 added, finished;
	u64 logged_in_flight; /* ordered extents a fast fsync found in flight (btrfs_ordered_extent_lookup_for_logging) */
	u64 fsyncs_logged_in_flight;
};
const struct btrfs_ordered_stats *btrfs_ordered_stats(const struct btrfs_fs_info *fs);
/* A fast fsync logged n in-flight ordered extents (counted when n > 0). */
void btrfs_ordered_count_logged(struct btrfs_fs_info *fs, u64 n);
/* fsync_wait (enum btrfs_fsync_wait): a scenario's `set fsync_wait=`. */
int btrfs_fsync_wait_mode(const struct btrfs_fs_info *fs);
void btrfs_set_fsync_wait_mode(struct btrfs_fs_info *fs, int mode);
#endif
