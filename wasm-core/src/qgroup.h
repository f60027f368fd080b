/* qgroup.h — quota groups: how many bytes each subvolume (and each group of
 * subvolumes) references, and how many it alone references, as the kernel's
 * qgroup.c keeps them.
 *
 * Every subvolume has a level-0 qgroup, 0/ID; higher ones (L/N) group
 * others (QGROUP_RELATION). For each, the quota tree holds a QGROUP_INFO
 * (generation, referenced, exclusive, and their compressed twins, equal
 * here) and a QGROUP_LIMIT; a QGROUP_STATUS says whether quotas are on and
 * the numbers consistent.
 *
 * Accounting, at each commit: every extent whose references changed in the
 * transaction (the dirty extents: the delayed ref heads run) is looked at
 * twice, with the trees reaching it before (the roots as last committed)
 * and after (the roots now). A qgroup references an extent when one of its
 * subvolumes reaches it, and holds it exclusively when all that reach it
 * are its own; the difference between before and after moves its numbers.
 * Which trees reach an extent is found by walking the subvolume trees from
 * their roots once per commit (a block's roots are its parents' roots), not
 * by the kernel's per-extent backref walk: the same sets, found another way.
 *
 * A snapshot inherits: its qgroup references what its source did and holds
 * only its root block exclusively, and so does the source (everything else
 * is shared now); the transaction before it is committed first, so the
 * inherited numbers are whole. Assigning a qgroup to a parent marks the
 * numbers inconsistent until a rescan, as the kernel does; a rescan counts
 * everything again. */
#ifndef BTRFSLAB_QGROUP_H
#define BTRFSLAB_QGROUP_H
#include "fs.h"

#define BTRFS_QGROUP_STATUS_FLAG_ON (1ULL << 0)
#define BTRFS_QGROUP_STATUS_FLAG_RESCAN (1ULL << 1)
#define BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT (1ULL << 2)
#define BTRFS_QGROUP_LIMIT_MAX_RFER (1ULL << 0)
#define BTRFS_QGROUP_LIMIT_MAX_EXCL (1ULL << 1)
#define BTRFS_QGROUP_LEVEL_SHIFT 48

struct btrfs_qgroup {
	u64 id;   /* level << 48 | number */
	u64 rfer, excl;
	/* the LIMIT item: which limits are set, the limits, and the rsv_*
	 * fields, which the kernel writes as the limit ioctl gave them (0) */
	u64 lim_flags, max_rfer, max_excl, rsv_rfer, rsv_excl;
	u64 reserved; /* in memory: data bytes buffered writes reserved since the last commit */
	u64 generation;
	u64 *parents;
	size_t nparents, capparents;
	int dirty; /* its items are to be written at commit */
};

/* fs->qgroup: made with the fs, read from an image's quota tree, cloned and
 * freed with it. 0 or an error. */
int btrfs_qgroup_init(struct btrfs_fs_info *fs);
void btrfs_qgroup_free(struct btrfs_fs_info *fs);
int btrfs_qgroup_clone(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src);
int btrfs_qgroup_load(struct btrfs_fs_info *fs);

/* Whether quotas are on; the status flags; the qgroups (n of them, by id). */
int btrfs_qgroup_enabled(const struct btrfs_fs_info *fs);
u64 btrfs_qgroup_status(const struct btrfs_fs_info *fs);
const struct btrfs_qgroup *btrfs_qgroups(const struct btrfs_fs_info *fs, size_t *n);
/* The extents the last commit accounted (its dirty extents). */
u64 btrfs_qgroup_last_dirty(const struct btrfs_fs_info *fs);

/* btrfs quota enable: the quota tree, a qgroup for every subvolume, a rescan.
 * In the running transaction (which is committed first). */
int btrfs_quota_enable(struct btrfs_fs_info *fs);
/* btrfs quota rescan: every qgroup counted again from the trees as they are
 * now (committed first); the inconsistent flag cleared. */
int btrfs_qgroup_rescan(struct btrfs_fs_info *fs);
/* btrfs qgroup create / assign. ids are level << 48 | number. */
int btrfs_qgroup_create(struct btrfs_fs_info *fs, u64 id);
int btrfs_qgroup_assign(struct btrfs_fs_info *fs, u64 child, u64 parent);
/* btrfs qgroup limit [-e] SIZE|none: which is BTRFS_QGROUP_LIMIT_MAX_RFER or
 * _MAX_EXCL; value the limit, or BTRFS_QGROUP_LIMIT_NONE to clear it (its
 * flag off, the value 0), as the kernel's limit ioctl sets one limit and
 * leaves the other. The LIMIT item is written in the running transaction.
 * EINVAL when quotas are off, ENOENT when the qgroup does not exist. */
#define BTRFS_QGROUP_LIMIT_NONE ((u64)-1)
int btrfs_qgroup_limit(struct btrfs_fs_info *fs, u64 id, u64 which, u64 value);

/* Limits at buffered-write time, as the kernel's qgroup data and metadata
 * reservations enforce them. How many bytes of a write of len bytes at off
 * to inode ino of root may go into the page cache now (*allowed, up to len;
 * whole sectors, the first of which may start before off), those bytes'
 * sectors reserved in every qgroup above root. When fewer than len fit,
 * *by names the qgroup whose limit stops the next sector (0 when none
 * does) and *why says how (a message). The caller flushes and commits and
 * asks again, as the kernel does on EDQUOT; what does not fit then fails.
 * With quotas on, every buffered write reserves through here. */
int btrfs_qgroup_reserve_write(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, u64 len, u64 *allowed, u64 *by,
			       char *why, size_t nwhy);
/* Whether any qgroup above root has a limit. */
int btrfs_qgroup_limited(struct btrfs_fs_info *fs, const struct btrfs_root *root);
/* A new subvolume (its empty qgroup), or a snapshot of src (inheriting). */
int btrfs_qgroup_subvol_created(struct btrfs_fs_info *fs, u64 id);
int btrfs_qgroup_inherit(struct btrfs_fs_info *fs, u64 src, u64 id);

/* Every block and data extent below bytenr (level) is dirty: a tree that
 * shared them is letting them go without reading them (a dropped
 * subvolume's shared subtree, as btrfs_qgroup_trace_subtree; and full
 * mode's swaps). One qgroup_trace_subtree event tells what the walk recorded. */
int btrfs_qgroup_trace_subtree(struct btrfs_fs_info *fs, u64 bytenr, int level);
/* A dropped subvolume's qgroup goes, items and relations (as this kernel does). */
int btrfs_qgroup_remove(struct btrfs_fs_info *fs, u64 id);
/* The heads of delayed refs about to run: their extents are dirty. */
int btrfs_qgroup_record_extent(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes);
/* An extent whose references changed, for accounting at the commit (a
 * qgroup record of the kernel's, counted, when recorded). */
int btrfs_qgroup_changed(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes, int recorded);
/* A qgroup record of the kernel's for bytenr, counted (deduplicated) for
 * this transaction's btrfs_qgroup_num_dirty_extents (and in the total). */
int btrfs_qgroup_note(struct btrfs_fs_info *fs, u64 bytenr);

/* How relocation's subtree swaps are traced (seed 004): full, as before
 * 4.20 (both subtrees, down to the leaves' data); subtree, as 4.20 (the
 * reloc tree's new blocks and the blocks they replaced); deferred, as since
 * 5.1 and this kernel (remembered, traced only if the subvolume copies the
 * swapped-in block before the commit). The numbers are the same in every
 * mode: only the records (the work) differ. */
enum btrfs_qgroup_swap_mode { BTRFS_QGROUP_SWAP_DEFERRED, BTRFS_QGROUP_SWAP_SUBTREE, BTRFS_QGROUP_SWAP_FULL };
void btrfs_qgroup_set_swap_mode(struct btrfs_fs_info *fs, int mode);
int btrfs_qgroup_swap_mode(const struct btrfs_fs_info *fs);
/* Merge swapped oldb (the subvolume's, at level) for newb (the reloc tree's). */
int btrfs_qgroup_trace_swap(struct btrfs_fs_info *fs, u64 oldb, u64 newb, int level, u64 last_snapshot);
/* The subvolume copies block bytenr: a deferred swap of it is traced now. */
int btrfs_qgroup_cow_swapped(struct btrfs_fs_info *fs, u64 bytenr);
/* Qgroup records (dirty extents) summed over every commit so far. */
u64 btrfs_qgroup_dirty_total(const struct btrfs_fs_info *fs);
/* At commit, before the delayed refs run: the dirty extents accounted and
 * the quota tree's items written. */
int btrfs_qgroup_account(struct btrfs_fs_info *fs);
/* After the commit: the trees as committed are the next "before". */
void btrfs_qgroup_committed(struct btrfs_fs_info *fs);

/* What `btrfs qgroup show --raw` prints: BTRFS_QGROUP_SHOW_* columns too. */
#define BTRFS_QGROUP_SHOW_PARENTS 1  /* -p */
#define BTRFS_QGROUP_SHOW_MAX_RFER 2 /* -r */
#define BTRFS_QGROUP_SHOW_MAX_EXCL 4 /* -e */
struct strbuf;
void btrfs_qgroup_show(struct btrfs_fs_info *fs, struct strbuf *out, int columns);
/* "L/N" of a qgroup id into buf. */
const char *btrfs_qgroup_name(u64 id, char *buf, size_t n);
/* Parses "L/N" or "N" (level 0): 0 or EINVAL. */
int btrfs_qgroup_parse(const char *s, u64 *id);
#endif
