/* space-info.h — the space_infos (space-info.c in the kernel): for data,
 * metadata and system, the bytes of their chunks and how they are spoken
 * for, and the reservation rules that decide whether a reservation fits
 * (docs/seed002-reclaim.md has each rule's source).
 *
 * total, used and pinned come from the block groups; reserved (data extents
 * allocated for ordered extents not yet completed) and may_use
 * (reservations) are kept here as the kernel moves them:
 *   write()            data may_use += the new delalloc bytes; the inode's
 *                      metadata reservation recomputed (insert(extents +
 *                      csum leaves) + modify(1)), may_use += the difference
 *   writeback          data may_use -> reserved (the extent allocated)
 *   ordered completion data reserved -> used; the inode's metadata
 *                      reservation recomputed, the excess released
 *   an operation       metadata may_use += insert(items), twice (the
 *                      transaction and the delayed refs), released when it
 *                      ends (the tree blocks it COWed are then used)
 *   always             metadata may_use holds the global block reserve
 * Where this simplifies the kernel: tree blocks are used from their COW
 * (the kernel's are reserved until their delayed ref runs); an inode's
 * outstanding extents are its delalloc bytes in 128 MiB pieces plus its
 * ordered extents in flight (the kernel counts each delalloc range). */
#ifndef BTRFSLAB_SPACE_INFO_H
#define BTRFSLAB_SPACE_INFO_H
#include "fs.h"

enum btrfs_space_kind { SPACE_DATA = 0, SPACE_METADATA, SPACE_SYSTEM, SPACE_KINDS };
extern const char *const btrfs_space_kind_names[SPACE_KINDS];

/* The reclaim worker's flush states, in the kernel's order (5.15+; the
 * numbers are enum btrfs_flush_state's, which its tracepoint prints). */
enum btrfs_flush_state {
	FLUSH_NONE = 0,
	FLUSH_DELAYED_ITEMS_NR,
	FLUSH_DELAYED_ITEMS,
	FLUSH_DELAYED_REFS_NR,
	FLUSH_DELAYED_REFS,
	FLUSH_DELALLOC,
	FLUSH_DELALLOC_WAIT,
	FLUSH_DELALLOC_FULL,
	ALLOC_CHUNK,
	ALLOC_CHUNK_FORCE,
	RUN_DELAYED_IPUTS,
	COMMIT_TRANS,
	FLUSH_STATES
};
extern const char *const btrfs_flush_state_names[FLUSH_STATES];

/* shrink_delalloc's budget: before the seed's fix (5.10) a number of whole
 * inodes, after it (5.11+, this kernel) a number of pages. */
enum btrfs_shrink_delalloc { SHRINK_PAGES = 0, SHRINK_INODES };

struct btrfs_space_info {
	u64 flags;
	u64 total, used, reserved, pinned, may_use, readonly;
	u64 unallocated; /* device space no chunk holds (for overcommit) */
};


/* The counters of one space_info as they stand. */
void btrfs_space_info_get(const struct btrfs_fs_info *fs, int kind, struct btrfs_space_info *out);
/* used + reserved + pinned + may_use + readonly */
u64 btrfs_space_used_all(const struct btrfs_space_info *si);

/* The kernel's worst-case sizes: an item inserted (a split on every level
 * of the COW path) and an item changed, at this nodesize. */
u64 btrfs_calc_insert_metadata_size(const struct btrfs_fs_info *fs, u64 items);
u64 btrfs_calc_metadata_size(const struct btrfs_fs_info *fs, u64 items);

enum btrfs_reserve_flush { RESERVE_NO_FLUSH = 0, RESERVE_FLUSH_ALL };
/* Whether bytes more of kind fit now: within total, or for metadata within
 * what overcommit allows (calc_available_free_space). */
int btrfs_space_fits(const struct btrfs_fs_info *fs, int kind, u64 bytes, int flush);
/* What metadata is overcommitted past what a FLUSH_ALL reservation may use
 * now (used + reserved + pinned + may_use - total - avail, or 0): as data
 * chunks take the unallocated space, avail shrinks under reservations made
 * before. The reclaim worker adds it to the tickets' bytes
 * (btrfs_calc_reclaim_metadata_size). 0 for data. */
u64 btrfs_space_overage(const struct btrfs_fs_info *fs, int kind);
/* Whose reservation sizes (`set space_rules=`): this kernel's (6.18, the
 * default) or 5.10's, the seed's.
 *   6.18: start_transaction(n) reserves insert(n) + delayed_ref_bytes(n),
 *         and a delayed ref head needs delayed_ref_bytes(1), where
 *         delayed_ref_bytes(n) is insert(n), twice that with the free space
 *         tree (btrfs_calc_delayed_ref_bytes; measured here: every create's
 *         reservation 3.75 MiB at 16 KiB nodes).
 *   5.10: start_transaction(n) reserves insert(n), and insert(n) more while
 *         the delayed refs reserve is not full; a head needs insert(1). */
enum btrfs_space_rules { SPACE_RULES_6_18 = 0, SPACE_RULES_5_10 };
/* What a delayed ref head needs reserved, times n, under fs's rules. */
u64 btrfs_calc_delayed_ref_bytes(const struct btrfs_fs_info *fs, u64 n);
/* What start_transaction(items) with FLUSH_ALL reserves now. */
u64 btrfs_space_trans_bytes(const struct btrfs_fs_info *fs, u64 items);
/* Delayed ref heads of this transaction not yet counted as run (by the
 * FLUSH_DELAYED_REFS states; the model applies them at the commit). */
u64 btrfs_space_delayed_refs_pending(const struct btrfs_fs_info *fs);
/* The delayed refs reserve's size (btrfs_update_delayed_refs_rsv): what
 * each delayed ref head waiting to run needs. */
u64 btrfs_space_delayed_refs_size(const struct btrfs_fs_info *fs);
/* Whether the delayed refs reserve holds its size (block_rsv->full). */
int btrfs_space_delayed_refs_full(const struct btrfs_fs_info *fs);
/* Metadata a block reserve gives back (btrfs_block_rsv_release): first into
 * the delayed refs reserve while it is not full, up to its size, the rest
 * leaves may_use. */
void btrfs_space_release_meta(struct btrfs_fs_info *fs, u64 bytes);
/* may_use += bytes (the caller checked it fits, or it is forced). */
void btrfs_space_reserve(struct btrfs_fs_info *fs, int kind, u64 bytes);
/* may_use -= bytes. */
void btrfs_space_release(struct btrfs_fs_info *fs, int kind, u64 bytes);

/* The data path's moves (delalloc.c and ordered-data.c call them). */
void btrfs_space_data_alloc(struct btrfs_fs_info *fs, u64 bytes);   /* may_use -> reserved */
void btrfs_space_data_done(struct btrfs_fs_info *fs, u64 bytes);    /* reserved -> used */
/* The metadata reservation an inode needs for delalloc_bytes of delalloc
 * and nordered ordered extents of ordered_bytes in flight:
 * insert(extents + csum leaves) + modify(1), 0 with no extents. */
u64 btrfs_space_inode_rsv_size(const struct btrfs_fs_info *fs, u64 delalloc_bytes, u64 ordered_bytes, u64 nordered);
/* An inode's reservation goes from *held to want: may_use moves by the
 * difference (a reservation forced, or a release). */
void btrfs_space_inode_rsv_set(struct btrfs_fs_info *fs, u64 *held, u64 want);
/* The global block reserve, recomputed from the trees' sizes. */
void btrfs_space_update_global_rsv(struct btrfs_fs_info *fs);
/* A commit ran every delayed item and delayed ref: their reservations go;
 * the global reserve is recomputed. */
void btrfs_space_commit(struct btrfs_fs_info *fs);
/* Moves bytes of metadata reservation from one part of may_use to another
 * (an operation's to its delayed items or delayed refs): may_use unchanged. */
void btrfs_space_migrate(u64 *from, u64 *to, u64 bytes);

/* Checks the counters against what they must equal (data may_use is the
 * delalloc bytes; reserved is what ordered extents in flight hold; each
 * inode's metadata reservation is what its extents need; no counter
 * negative): 0, or the number of problems, with the first in msg. */
int btrfs_space_check(const struct btrfs_fs_info *fs, char *msg, size_t n);
#endif
