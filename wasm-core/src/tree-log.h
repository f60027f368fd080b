/* tree-log.h — fsync and the log tree.
 *
 * fsync of an inode copies what replay needs to bring that inode back
 * (inode item, refs, xattrs, file extents with their checksums, directory
 * entries and the index ranges the log is authoritative for) from the fs
 * tree into a log tree, writes the log's blocks and a superblock whose
 * log_root points at the log root tree, and leaves the transaction running.
 * The log root tree holds one ROOT_ITEM (TREE_LOG ROOT_ITEM <subvolume>) per
 * logged subvolume. Log blocks are owned by TREE_LOG, carry the running
 * transaction's generation and get no extent-tree items; a commit drops the
 * log. When logging cannot express a change safely (a directory that lost a
 * name to a rename, a file renamed or unlinked from another directory, a new
 * chunk), fsync commits the transaction instead, as the kernel does.
 *
 * Replay (tree-log-replay.c) reads such a log back into the fs tree. */
#ifndef BTRFSLAB_TREE_LOG_H
#define BTRFSLAB_TREE_LOG_H
#include "fs.h"

enum btrfs_dir_logging {
	BTRFS_DIR_LOGGING_INDEX_ONLY = 0, /* DIR_INDEX keys only (the kernel since 5.17) */
	BTRFS_DIR_LOGGING_LEGACY = 1,     /* DIR_ITEM and DIR_INDEX keys (before) */
	/* every entry of the directory's leaves changed in the transaction, new
	 * or not, one range per run of changed leaves (5.10 as measured in a
	 * guest, docs/guest-kernels.md): DIR_ITEM and DIR_INDEX keys */
	BTRFS_DIR_LOGGING_LEAVES_5_10 = 2,
	/* the same with DIR_INDEX keys only: the seed's "after" (5.17), from its
	 * text; no packaged kernel to measure */
	BTRFS_DIR_LOGGING_LEAVES_5_17 = 3,
};

/* How much an inode is logged (the kernel's LOG_INODE_ALL / LOG_INODE_EXISTS). */
enum btrfs_log_mode { BTRFS_LOG_INODE_ALL = 0, BTRFS_LOG_INODE_EXISTS = 1 };

/* Why an fsync committed the transaction instead of logging. */
enum btrfs_log_fallback {
	BTRFS_LOG_LOGGED = 0,
	BTRFS_LOG_FULL_COMMIT_NEW_CHUNK = 1,     /* a chunk was allocated in this transaction */
	BTRFS_LOG_FULL_COMMIT_RENAMED_FROM = 2,  /* a directory lost a name to a rename or rmdir */
	BTRFS_LOG_FULL_COMMIT_UNLINKED = 3,      /* the file was renamed or lost a link */
	BTRFS_LOG_NOTHING = 4,                   /* nothing changed since the last commit */
	BTRFS_LOG_FULL_COMMIT_NEW_LINK = 5,      /* a file of several links got a new one in this transaction */
	BTRFS_LOG_FULL_COMMIT_LOGGED_NAME_GONE = 6, /* a directory lost a name whose inode the log holds */
	BTRFS_LOG_FULL_COMMIT_SUBVOL = 7,        /* in a subvolume other than the top level: the model logs only the top level */
};

/* What one fsync did, for --metrics and the lessons. */
struct btrfs_log_stats {
	u64 ino;
	int fallback;              /* enum btrfs_log_fallback */
	u64 items[256];            /* items copied into the log, by key type */
	u64 items_total;
	u64 bytes;                 /* item data + item headers copied */
	u64 leaves, nodes, level;  /* the log tree after this fsync */
	u64 blocks_written;        /* log blocks written by this fsync */
	u64 fs_leaves_read;        /* fs tree leaves read-locked and copied from */
	u64 fs_leaves_cloned;      /* of those, the leaves the kernel clones before copying (before seed 000's fix):
				    * not a directory's DIR_INDEX leaves that only its queued delayed items changed */
	u64 inodes_logged;
	u64 ranges;                /* DIR_LOG_INDEX / DIR_LOG_ITEM ranges written */
	u64 shifted;               /* bytes moved inside log leaves by inserts */
	u64 log_searches;          /* descents of the log tree for an insert */
	u64 csum_items;            /* checksum items looked up in the csum tree */
	u64 ordered_logged;        /* in-flight ordered extents logged, checksums and all */
	double cost;               /* modelled cost in microseconds (see tree-log.c) */
};

/* Logs inode ino of root (and the new inodes and ancestors it needs) in the
 * running transaction and writes the log with a superblock pointing at it.
 * Returns 0 with st->fallback BTRFS_LOG_LOGGED, or with the reason only a
 * commit makes the change durable (BTRFS_LOG_NOTHING: nothing to do), or an
 * error. st is filled from zero by the caller (btrfs_sync_file, file.c). */
int btrfs_log_dentry_safe(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_log_stats *st);

/* The same without writing the log: a timed fsync logs, then syncs the log
 * with btrfs_sync_log, which may cover other fsyncs' logging too (the
 * kernel's log transactions). */
int btrfs_log_dentry_nosync(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_log_stats *st);
/* Writes the log's dirty blocks and a superblock pointing at it (st may be
 * NULL; st->blocks_written counts the blocks). 0 when there is no log. */
int btrfs_sync_log(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_log_stats *st);
/* Whether the next fsync of ino is a full one (new in this transaction, or
 * truncated): it waits for ordered extents in either fsync_wait mode. */
int btrfs_log_needs_full_sync(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino);

/* The modelled CPU cost of what st counts (costs.h's log rows), in ns. */
u64 btrfs_log_cost_ns(const struct btrfs_log_stats *st);

/* Hooks from the namespace and file code. */
void btrfs_log_note_unlink(struct btrfs_fs_info *fs, u64 dir, u64 ino, int for_rename, int is_dir);
/* A timed run queued DIR_INDEX offset of dir as a delayed item (added or
 * removed): until btrfs_log_delayed_flushed, the kernel's leaf has not
 * changed for it, and a directory's logging reads the change from the
 * delayed node, not from the leaf (since v6.1, "btrfs: use delayed items
 * when logging a directory"). Only fs_leaves_cloned follows this; what is
 * logged does not. */
int btrfs_log_note_delayed_index(struct btrfs_fs_info *fs, u64 dir, u64 offset);
/* dir's delayed DIR_INDEX items went into its leaves (dir 0: every dir's). */
void btrfs_log_delayed_flushed(struct btrfs_fs_info *fs, u64 dir);
void btrfs_log_note_truncate(struct btrfs_fs_info *fs, u64 ino);
/* A new hard link to file ino: its fsync commits while it has more than one
 * name, as the kernel's does (a log from one name's path cannot reach every
 * new parent directory of the others). */
void btrfs_log_note_link(struct btrfs_fs_info *fs, u64 ino);
/* A name left directory dir (legacy logging marks its DIR_ITEM hash). */
int btrfs_log_note_name_removed(struct btrfs_fs_info *fs, u64 dir, u64 name_hash);

/* ---- replay (tree-log-replay.c) ---- */
enum btrfs_replay_pass {
	BTRFS_REPLAY_PASS_PIN = 0,
	BTRFS_REPLAY_PASS_INODES = 1,
	BTRFS_REPLAY_PASS_DIR_INDEX = 2,
	BTRFS_REPLAY_PASS_ALL = 3,
	BTRFS_REPLAY_PASS_FIXUP = 4,
};

/* What a replay step did (the level of a TRACE_REPLAY event). */
enum btrfs_replay_action {
	BTRFS_REPLAY_PIN_BLOCK,       /* a: log block, b: level */
	BTRFS_REPLAY_PIN_DATA,        /* a: data extent the log refers to, b: length */
	BTRFS_REPLAY_INODE_NEW,       /* a: inode, b: size */
	BTRFS_REPLAY_INODE_OVERWRITE, /* a: inode, b: size */
	BTRFS_REPLAY_INODE_KEEP,      /* a: inode (logged only to exist) */
	BTRFS_REPLAY_XATTR_DELETE,    /* a: inode */
	BTRFS_REPLAY_DIR_DELETE,      /* a: dir, b: inode whose name went */
	BTRFS_REPLAY_TRUNCATE,        /* a: inode, b: from, c: bytes dropped */
	BTRFS_REPLAY_UNLINK_CONFLICT, /* a: dir, b: inode whose name the log gives to another */
	BTRFS_REPLAY_LINK_PRESENT,    /* a: dir, b: inode, c: index */
	BTRFS_REPLAY_LINK_LATER,      /* a: dir, b: inode, c: index (its INODE_REF adds it) */
	BTRFS_REPLAY_LINK_NO_INODE,   /* a: dir, b: inode (neither logged nor on disk: skipped) */
	BTRFS_REPLAY_LINK_ADD,        /* a: dir, b: inode, c: index */
	BTRFS_REPLAY_UNLINK_OLD_REF,  /* a: dir, b: inode (a name the log's ref no longer has) */
	BTRFS_REPLAY_XATTR_SET,       /* a: inode */
	BTRFS_REPLAY_EXTENT_PRESENT,  /* a: inode, b: offset, c: length */
	BTRFS_REPLAY_HOLE,            /* a: inode, b: offset, c: length */
	BTRFS_REPLAY_EXTENT,          /* a: inode, b: offset, c: length */
	BTRFS_REPLAY_CSUM,            /* a: disk bytenr, b: length */
	BTRFS_REPLAY_COUNTS,          /* a: inode, b: link count, c: size (dirs) or bytes (files) */
	BTRFS_REPLAY_EVICT,           /* a: inode left without names, deleted */
	BTRFS_REPLAY_ACTION_COUNT
};

struct btrfs_replay_stats {
	u64 actions[BTRFS_REPLAY_ACTION_COUNT];
	u64 leaves;
	u64 stop_after; /* in: stop after this many actions, uncommitted (0: replay all) */
	int stopped;    /* out: stopped early; the transaction is left running */
};

/* The running log's tree of the fs tree, or NULL when none is open. */
struct btrfs_root *btrfs_log_tree_root(const struct btrfs_fs_info *fs);

/* Replays the pending log of an opened image (superblock log_root) and
 * commits; 0 when there is none. Corrupt or inconsistent logs give
 * ECORRUPT with a message naming the log item. st may be NULL. */
int btrfs_replay_log(struct btrfs_fs_info *fs, struct btrfs_replay_stats *st);

/* Frees the log trees' blocks (at commit: the committed state no longer
 * needs them) and clears log_root in the in-memory superblock. */
int btrfs_drop_log(struct btrfs_fs_info *fs);
/* The log's state: made with the fs (btrfs_fs_alloc; 0 or BLAB_ENOMEM),
 * freed with it. */
int btrfs_log_init(struct btrfs_fs_info *fs);
void btrfs_log_free(struct btrfs_fs_info *fs);
/* Whether the running transaction has a log. */
int btrfs_log_running(const struct btrfs_fs_info *fs);
/* Whether eb is the top block of a log tree. */
int btrfs_log_is_root_node(const struct btrfs_fs_info *fs, const struct extent_buffer *eb);
/* The log's two top blocks (log root tree, subvolume log): 1, or 0 with no log. */
int btrfs_log_roots(const struct btrfs_fs_info *fs, struct extent_buffer **root_tree, struct extent_buffer **tree);
/* How fsync logs directories (enum btrfs_dir_logging; a scenario's `set dir_logging=`). */
int btrfs_dir_logging(const struct btrfs_fs_info *fs);
void btrfs_set_dir_logging(struct btrfs_fs_info *fs, int mode);
/* dst's log state (trees, logged inodes, deleted names) becomes a copy of
 * src's, for btrfs_fs_clone: the trees' blocks must be in dst's cache. 0 or
 * BLAB_ENOMEM. */
int btrfs_log_clone(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src);
#endif
