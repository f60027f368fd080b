/* fs.h — the in-memory filesystem: what the kernel keeps in btrfs_fs_info,
 * btrfs_root, btrfs_block_group and the chunk map. Every module works on a
 * struct btrfs_fs_info; none of them knows the UI exists. */
#ifndef BTRFSLAB_FS_H
#define BTRFSLAB_FS_H
#include "device.h"
#include "errors.h"
#include "ondisk.h"
#include "trace.h"
#include "u64map.h"

struct extent_buffer {
	u64 start;            /* logical address */
	u32 len;              /* nodesize */
	int dirty;            /* changed in the running transaction */
	u8 *data;             /* len bytes */
	struct extent_buffer *hnext;
};

struct btrfs_stripe_map {
	u64 devid;
	u64 physical;
};

struct btrfs_chunk_map {
	u64 logical;
	u64 length;
	u64 type;
	u64 stripe_len;
	u32 io_align, io_width, sector_size;
	u16 num_stripes, sub_stripes;
	struct btrfs_stripe_map stripes[2];
	int pending; /* CHUNK and DEV_EXTENT items not yet in their trees */
};

struct free_range {
	u64 start, len;
};

struct btrfs_block_group {
	u64 start, length, flags, used;
	struct free_range *free; /* sorted, non-overlapping, coalesced */
	size_t nfree, capfree;
	int pending;   /* BLOCK_GROUP_ITEM not yet in the extent tree */
	int ro;        /* being relocated: nothing new is allocated in it */
	int dirty;     /* used changed since the last commit */
	int fst_dirty; /* free space changed since the last commit */
	u64 pinned;    /* bytes freed in this transaction, free after commit */
	struct free_range sb[BTRFS_SUPER_MIRROR_MAX * 2]; /* superblock copies inside (never allocated) */
	int nsb;
};

struct btrfs_root {
	u64 objectid;
	struct extent_buffer *node;
	u8 item[BTRFS_ROOT_ITEM_SIZE]; /* the ROOT_ITEM as it is in the root tree */
	int in_root_tree;              /* has a ROOT_ITEM (root and chunk trees do not) */
	u64 item_offset;               /* its ROOT_ITEM's key offset (a snapshot's: the transid that made it) */
	int item_dirty;                /* the item changed beyond the node (last_snapshot): written at commit */
	u64 commit_bytenr;             /* its root block as last committed (0: none yet), for qgroups' "before" */
	int commit_level;
	struct btrfs_key commit_drop_progress; /* the cleaner's drop_progress as last committed (zero: none) */
	int commit_drop_level;
	int force_cow;                 /* snapshotted in the running transaction: even its blocks of this
					* transaction are shared now, so they are copied, not changed in place
					* (the kernel's BTRFS_ROOT_FORCE_COW); cleared at commit */
	u64 bytes_used;                /* tree blocks owned, for the root item */
	u64 highest_objectid;          /* subvolumes: highest inode number in use (0: not read yet) */
	u64 dead_seq;                  /* deleted, waiting for the cleaner: its place in the queue (from 1) */
	struct u64map dir_index;       /* directory inode -> next DIR_INDEX offset */
};

/* The most trees one filesystem may hold (fs->roots grows up to it): an
 * image with more is refused, and so is a subvolume or snapshot past it.
 * Page cache keys (delalloc.h) keep a tree's slot in 16 bits. */
#define BLAB_MAX_ROOTS 4096
#define EB_HASH_SIZE 4096
#define BTRFS_BLOCK_REC_MAX 64
#define BTRFS_MOVE_REC_MAX 32

/* A reloc tree a kernel balance left on disk: a TREE_RELOC root item whose
 * key offset names the subvolume it copies. The kernel merges it into that
 * subvolume and drops it at its next read-write mount (btrfs_recover_relocation).
 * Kept out of fs->roots (every reloc tree has the same objectid): read by
 * check and dump-tree, and while one is left nothing is written (relocation.h's
 * btrfs_reloc_trees_left). */
struct btrfs_reloc_left {
	struct btrfs_root *root; /* objectid TREE_RELOC, item_offset the subvolume; node NULL when unreadable */
	char why[BLAB_ERRMSG_MAX]; /* why its root block cannot be read ("" when it can) */
};

struct btrfs_qgroup_state;
struct btrfs_fs_info {
	struct blab_device dev;
	u8 super[BTRFS_SUPER_INFO_SIZE];
	u32 nodesize, sectorsize;
	u8 fsid[BTRFS_FSID_SIZE];
	u8 chunk_tree_uuid[BTRFS_UUID_SIZE];
	u8 dev_uuid[BTRFS_UUID_SIZE];
	u64 generation;      /* of the running (or last committed) transaction */
	u64 drop_batch;      /* blocks the cleaner lets go of in one transaction (0: a whole tree) */
	int qgroup_skip;     /* reference changes made now are not qgroup records (a reloc tree's, since 4.20) */
	u64 meta_chunk;      /* metadata chunks of this size (mkfs meta_chunk=; 0: the kernel's for the device) */
	u64 dead_seq;        /* the last dead tree queued for the cleaner */
	int trans_running;

	struct btrfs_chunk_map *chunks; /* sorted by logical */
	size_t nchunks, capchunks;
	struct btrfs_block_group *bgs;  /* sorted by start */
	size_t nbgs, capbgs;

	struct btrfs_qgroup_state *qgroup; /* qgroup.c: quotas, their numbers, the transaction's dirty extents */
	struct btrfs_root **roots; /* every tree, in the order added (never removed: an index stays its tree's) */
	size_t nroots, caproots;
	struct btrfs_root *tree_root, *chunk_root, *extent_root, *dev_root, *fs_root, *csum_root,
		*fst_root, *uuid_root, *data_reloc_root;
	struct btrfs_reloc_left *reloc_left; /* reloc trees on disk, in root tree key order */
	size_t nreloc_left, capreloc_left;

	struct u64map delayed_refs; /* bytenr -> struct delayed_ref_head (delayed-ref.h) */
	struct btrfs_pinned_extents *pinned; /* freed until commit: extent-tree.c's (extent-tree-int.h) */
	int bg_loaded;              /* block groups and their free space are known */

	struct btrfs_log_state *log; /* the log's trees and logged inodes: tree-log.c's (tree-log-int.h) */
	u8 committed_super[BTRFS_SUPER_INFO_SIZE]; /* the superblock on disk */

	struct extent_buffer *eb_hash[EB_HASH_SIZE]; /* disk-io.c's block cache (btrfs_find_eb, btrfs_for_each_cached_eb) */
	struct u64map eb_index; /* bytenr -> struct extent_buffer *: btrfs_find_eb's lookup of eb_hash (whose chains keep the write order) */
	struct blab_trace trace;
	struct blab_err err;
	u64 now; /* seconds, for inode times */
	u64 clock_ns; /* virtual time of a timed run (sched.h), 0 otherwise */
	u64 blocks_written; /* tree blocks written so far (disk-io.c), traced or not */
	struct btrfs_data_state *data; /* the page cache and ordered extents: delalloc.c's (delalloc-int.h) */
	/* Told of every change the kernel would queue as a delayed item
	 * (delayed-inode.c): an inode item update (dir_index 0), a DIR_INDEX
	 * added (+1) or removed (-1) in directory ino. Set by a timed run while
	 * its section runs (tasks.c's delayed nodes), NULL otherwise. */
	void (*delayed_hook)(void *ctx, u64 root, u64 ino, int dir_index);
	/* While on, the tree blocks a change COWs, splits or writes, in order
	 * (fs_trace keeps them): a timed run's tree locks follow them
	 * (locking.c: a COW locks the new copy before letting the old go). */
	struct btrfs_block_rec {
		u64 tree, from, to; /* a write: from == to; a push: from the block, to its neighbour */
		int level, kind;    /* enum trace_kind: TRACE_COW, TRACE_SPLIT, TRACE_PUSH or TRACE_BLOCK_WRITE */
		u32 bytes;          /* a push: the bytes it moved or copied (fs_trace's event.b) */
	} blkrec[BTRFS_BLOCK_REC_MAX];
	int nblkrec, blkrec_on;
	/* While blkrec_on too: what each leaf insert or deletion moved aside
	 * (the item headers after its slot and their data), by tree and key, in
	 * order: a timed run holds the leaf's write lock for it (costs.c
	 * leaf_shift_kib). */
	struct btrfs_move_rec {
		u64 tree, objectid;
		u32 bytes;
		u8 type;
	} moverec[BTRFS_MOVE_REC_MAX];
	int nmoverec;
	/* space-info.c's reservations (plain data, copied by a clone) */
	struct btrfs_space_state {
		u64 may_use[3];     /* by enum btrfs_space_kind */
		u64 reserved[3];
		u64 global_rsv;     /* part of metadata may_use */
		u64 delalloc_meta;  /* part held by inodes for their delalloc and ordered extents */
		u64 op_meta;        /* part held by operations running now */
		u64 op_data;        /* data may_use held by writes about to happen (granted tickets) */
		u64 delayed_items_rsv; /* part held by delayed items until they are flushed (or the commit) */
		u64 delayed_refs_rsv;  /* part held for delayed refs until they run (or the commit) */
		u64 delayed_refs_ran;  /* delayed ref heads a reclaim flush state has run since the commit
					* (the model applies them all at the commit; their reserve goes now) */
		int rules;             /* enum btrfs_space_rules: which kernel's reservation sizes */
	} space;
	void *delayed_ctx;
};

/* Returns the root with this objectid, or NULL. */
struct btrfs_root *btrfs_get_root(struct btrfs_fs_info *fs, u64 objectid);
/* Frees everything the fs owns, including fs itself. NULL is allowed. */
void btrfs_fs_free(struct btrfs_fs_info *fs);
/* A new, empty fs_info (no device yet). Returns NULL on ENOMEM. */
struct btrfs_fs_info *btrfs_fs_alloc(void);
/* Adds a root object (not yet in any tree). Returns NULL on ENOMEM/too many. */
struct btrfs_root *btrfs_add_root(struct btrfs_fs_info *fs, u64 objectid);

/* Notes bytes moved aside by a leaf insert or deletion of key in tree
 * (while blkrec_on). */
static inline void fs_note_moved(struct btrfs_fs_info *fs, u64 tree, const struct btrfs_key *key, u32 bytes)
{
	if (fs->blkrec_on && bytes && fs->nmoverec < BTRFS_MOVE_REC_MAX)
		fs->moverec[fs->nmoverec++] = (struct btrfs_move_rec){tree, key->objectid, bytes, key->type};
}

static inline void fs_trace(struct btrfs_fs_info *fs, struct trace_event e)
{
	e.t = fs->clock_ns;
	if (fs->blkrec_on && fs->nblkrec < BTRFS_BLOCK_REC_MAX &&
	    (e.kind == TRACE_COW || e.kind == TRACE_SPLIT || e.kind == TRACE_PUSH || e.kind == TRACE_BLOCK_WRITE))
		fs->blkrec[fs->nblkrec++] = (struct btrfs_block_rec){e.tree, e.kind == TRACE_PUSH ? e.a : e.bytenr,
								     e.kind == TRACE_BLOCK_WRITE ? e.bytenr : e.kind == TRACE_PUSH ? e.bytenr : e.a,
								     e.level, e.kind, (u32)e.b};
	trace_emit(&fs->trace, &e);
}
#endif
