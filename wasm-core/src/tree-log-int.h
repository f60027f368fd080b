/* tree-log-int.h — the log's state in memory, private to tree-log.c and
 * tree-log-replay.c (the kernel keeps these in btrfs_fs_info, btrfs_root
 * and the in-memory inode). Every other module sees only the pointer in
 * struct btrfs_fs_info and the functions of tree-log.h. */
#ifndef BTRFSLAB_TREE_LOG_INT_H
#define BTRFSLAB_TREE_LOG_INT_H
#include "tree-log.h"

/* Per-inode logging state. */
struct btrfs_log_inode_state {
	u64 logged_trans;      /* transaction in which the inode was last logged */
	u64 last_unlink_trans; /* files: renamed or lost a link; dirs: lost a name to a rename */
	u64 full_sync_trans;   /* truncated (needs all its extents and holes logged) */
	int needs_full;        /* truncated since its last full log (the kernel's BTRFS_INODE_NEEDS_FULL_SYNC) */
	u64 full_logged_trans; /* logged in full in this transaction: later fsyncs in it log what changed */
	u64 last_link_trans;   /* files: a hard link was added */
	u64 logged_name_gone_trans; /* dirs: lost a name whose inode was logged in this transaction */
	u64 dir_logged_trans;  /* dirs: their DIR_INDEX entries logged in this transaction (index-only mode) */
	u64 last_dir_index;    /* dirs: the highest DIR_INDEX offset logged then (the kernel's last_dir_index_offset) */
};

/* A DIR_INDEX change a timed run queues as a delayed item (the kernel's
 * delayed-inode.c): in the kernel the leaf changes only when its delayed node
 * is flushed (the async worker, a commit), not when the name is added or
 * removed. The model's leaf changes at once; this says when the kernel's
 * would have. */
struct btrfs_delayed_index {
	u64 dir, offset, gen;
	int flushed;
};

struct btrfs_log_state {
	struct btrfs_root *root_tree, *tree; /* trees of the running transaction, not in fs->roots */
	struct u64map inodes;                /* ino -> struct btrfs_log_inode_state */
	struct u64map csums;                 /* disk extents whose checksums are logged */
	int dir_logging;                     /* enum btrfs_dir_logging */
	struct btrfs_key *deleted;           /* (dir, 0, name hash) of names removed in this transaction */
	size_t ndeleted, capdeleted;
	struct btrfs_delayed_index *didx;    /* DIR_INDEX changes of this transaction queued as delayed items */
	size_t ndidx, capdidx;
};
#endif
