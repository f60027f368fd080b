/* delayed-ref.h — reference changes to extents, queued in the running
 * transaction and applied to the extent tree at commit (the kernel's
 * delayed refs): for a tree block, its allocation (+1) or freeing (-1), and
 * once trees share blocks (snapshots) the net change of each backref, keyed
 * by the tree (TREE_BLOCK_REF) or by the parent block (SHARED_BLOCK_REF),
 * and flags to set (FULL_BACKREF); for a data extent, the net change of each
 * backref: keyed (root, inode, offset: EXTENT_DATA_REF) or by the leaf that
 * holds the file extent (SHARED_DATA_REF). */
#ifndef BTRFSLAB_DELAYED_REF_H
#define BTRFSLAB_DELAYED_REF_H
#include "fs.h"

/* One backref: of a data extent, (root, inode, file offset - extent
 * offset), or parent (the leaf's bytenr) when shared; of a tree block, root,
 * or parent (the node's bytenr) when shared. */
struct data_ref {
	u64 root, objectid, offset;
	int count_mod; /* net change in this transaction */
	u64 parent;    /* nonzero: a shared backref (the others are 0) */
};

/* Reference changes to one extent waiting for commit (the kernel's delayed
 * ref head): a tree block allocated (+1) or freed (-1), or data refs added
 * and dropped. Keyed by bytenr in fs->delayed_refs. */
struct delayed_ref_head {
	u64 bytenr;
	u64 num_bytes;
	int is_data;
	int ref_mod;      /* tree blocks: +1 allocated, -1 freed, 0 cancelled */
	int level;        /* tree blocks */
	u64 owner;        /* tree blocks: the tree */
	u64 generation;
	int new_extent;   /* allocated in this transaction: no item on disk yet */
	struct data_ref *drefs; /* changes per backref (data; tree blocks that trees share) */
	int ndrefs, capdrefs;
	u64 set_flags;          /* tree blocks: extent flags to set (FULL_BACKREF) */
	int qgroup;             /* a change the kernel records for qgroups (a dirty extent): by a subvolume tree */
};

/* The head for bytenr, made (zeroed but for bytenr) when absent. NULL with
 * fs->err on ENOMEM. Valid until the next head is made or dropped. */
struct delayed_ref_head *btrfs_delayed_ref_head(struct btrfs_fs_info *fs, u64 bytenr);
/* Forgets a head (its changes cancel out, or were applied). */
void btrfs_drop_delayed_ref_head(struct btrfs_fs_info *fs, struct delayed_ref_head *h);
/* Adds (+1) or drops (-1) a reference to the data extent at bytenr. */
int btrfs_mod_data_ref(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes, u64 root, u64 ino, u64 offset, int mod);
/* The same by the leaf holding the file extent: a SHARED_DATA_REF. */
int btrfs_mod_shared_data_ref(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes, u64 parent, int mod);
/* Adds (+1) or drops (-1) a reference to the tree block at bytenr (level):
 * by root (parent 0: TREE_BLOCK_REF) or by its parent block (SHARED_BLOCK_REF). */
int btrfs_mod_tree_ref(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 root, u64 parent, int mod);
/* Sets extent flags (BTRFS_BLOCK_FLAG_FULL_BACKREF) on the tree block at bytenr. */
int btrfs_set_tree_block_flags(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 flags);
/* dst's queued refs become a copy of src's (btrfs_fs_clone). 0 or BLAB_ENOMEM. */
int btrfs_clone_delayed_refs(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src);
/* Drops all queued refs (on teardown). */
void btrfs_free_delayed_refs(struct btrfs_fs_info *fs);
#endif
