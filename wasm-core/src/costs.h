/* costs.h — every cost of the time model, in one table (costs.c), each row
 * with where its number comes from; and the device profiles.
 *
 * A timed run charges CPU time and device time only through this table:
 * no cost is written anywhere else. The numbers are a model: compare runs
 * of the model with each other, or with the kernel as ratios. */
#ifndef BTRFSLAB_COSTS_H
#define BTRFSLAB_COSTS_H
#include "ondisk.h"

enum btrfs_cost_id {
	COST_SYSCALL = 0,       /* entering and leaving pwrite/fsync */
	COST_PAGE_COPY,         /* a page copied into the page cache (a write) */
	COST_WRITEBACK_EXTENT,  /* reserving an extent and making its ordered extent */
	COST_WRITEBACK_PAGE,    /* a page's checksum and its place in a bio */
	COST_LOG_INODE,         /* logging: per inode logged */
	COST_LOG_SEARCH,        /* logging: per descent of the log tree */
	COST_LOG_ITEM,          /* logging: per item copied */
	COST_LOG_KIB,           /* logging: per KiB of item bytes copied */
	COST_LOG_SHIFT_KIB,     /* logging: per KiB moved aside inside log leaves by inserts */
	COST_LOG_FS_LEAF,       /* logging: per fs tree leaf read-locked and copied from */
	COST_LOG_CSUM_LOOKUP,   /* logging: per checksum item looked up in the csum tree */
	COST_LOG_BLOCK,         /* log sync: per log block checksummed and submitted */
	COST_FINISH_FS,         /* completion: the file extent item, under the fs tree's lock */
	COST_FINISH_FS_PAGE,    /* completion: per 4 KiB page of the extent, under the fs tree's lock */
	COST_FINISH_CSUM,       /* completion: the checksums, under the csum tree's lock */
	COST_FINISH_REST,       /* completion: data reference, inode item, removal */
	COST_META_OP,           /* a namespace operation (create, link, rename, ...) */
	COST_COMMIT,            /* a commit's CPU work besides its blocks */
	COST_COMMIT_BLOCK,      /* a commit: per tree block written */
	COST_INODE_UPDATE,      /* a write's inode item update (into its delayed node) */
	COST_WAKEUP,            /* from a wakeup to the woken task running (scheduler latency) */
	COST_LOG_TREE,          /* a timed fsync's time under the log tree's write lock (COW of written log blocks, inserts) */
	COST_EB_ALLOC,          /* an extent buffer and its pages allocated (the log's clone of a leaf) */
	COST_RECLAIM_MODERATE,  /* a direct reclaim stall of an allocation, set memory_pressure=moderate */
	COST_RECLAIM_HEAVY,     /* the same, memory_pressure=heavy */
	COST_DELAYED_ITEM,      /* a delayed item (DIR_INDEX insertion or deletion) flushed into its leaf */
	COST_LOCK_ACQUIRE,      /* taking a tree block's lock, uncontended (tree_locks=path) */
	COST_SEARCH_LEVEL,      /* a search's step through a node: binary search and reading the child, its lock held */
	COST_LEAF_READ,         /* a read-locked search's time in its leaf (tree_locks=path) */
	COST_LEAF_WRITE,        /* a write-locked search's time in its leaf: the item inserted or changed (tree_locks=path) */
	COST_LOCK_PROBE,        /* a write-locked search's first read lock of the root, held to read its level (tree_locks=path) */
	COST_COW,               /* a tree block COWed or split: the new block allocated and filled, under the locks (tree_locks=path) */
	COST_WRITEBACK_LOCK,    /* a tree block's write lock taken to write it out (tree_locks=path) */
	COST_LOG_EXTENT,        /* logging: per file extent item logged past the first (log_one_extent: the range dropped, the item, its checksums) */
	COST_LEAF_SHIFT_KIB,    /* a leaf insert or deletion: per KiB of items moved aside, under the leaf's write lock (tree_locks=path) */
	COST_LEAF_CLONE,        /* logging: an fs leaf copied whole before its items go into the log, under its read lock (tree_locks=path) */
	COST_RECLAIM_WAKE,      /* the async reclaim worker woken for a new ticket: how much later than a wakeup it runs */
	COST_COUNT
};

struct btrfs_cost {
	const char *key;    /* as `set cost.KEY=DURATION` names it */
	const char *name;
	u64 ns;             /* nanoseconds per unit */
	const char *unit;
	const char *source; /* where the number comes from */
};

/* The table (indexed by enum btrfs_cost_id). */
extern const struct btrfs_cost btrfs_costs[COST_COUNT];
static inline u64 btrfs_cost(int id, u64 units) { return btrfs_costs[id].ns * units; }

/* A device, and the machine around it (its CPUs). */
struct btrfs_device_profile {
	const char *name;
	int cpus;
	int queue_depth;
	u64 write_latency_ns;  /* per request, after its transfer */
	u64 bandwidth;         /* bytes per second, shared by requests */
	u64 flush_ns;          /* a cache flush, after the writes before it */
	u64 fua_ns;            /* extra for a forced-unit-access write (the superblock) */
	u64 seek_ns;           /* a request not where the last one ended (hdd) */
	int ssd;               /* mounted with -o ssd (the kernel decides by the rotational flag):
				* without it a log sync with several fsyncs logging waits a jiffy per batch round */
	u64 jiffy_ns;          /* 1/HZ */
	u32 jitter_pct;        /* latency and flush times vary by up to this much, from the seeded stream */
	int flush_barrier;     /* a flush or FUA write holds back every request after it until done */
	u32 cpu_pct;           /* the machine's CPU time for the table's work, in percent of the table
				* (the table's CPU costs are the seed 003 machine's: 100) */
	u64 idle_wake_ns;      /* a request that finds the device idle waits this long to start (a loop device's worker woken) */
	u64 log_wake_ns;       /* an fsync woken at the end of another's log commit waits this long more for a CPU: the
				* scheduler puts it on the committer's CPU, which goes on running (0: none) */
	u32 flush_tail_ppm;    /* this many flushes in a million are slow ones (0: none)... */
	u64 flush_tail_ns;     /* ...taking this long instead of flush_ns (a loop device's backing file now and then) */
	const char *source;
};
extern const struct btrfs_device_profile btrfs_device_profiles[];
/* The cost row of that key, or -1. */
int btrfs_cost_by_key(const char *key);
/* The profile of that name (nvme, ssd, hdd, loop), or NULL. */
const struct btrfs_device_profile *btrfs_device_profile(const char *name);
/* The table as JSON (costs and profiles), for the CLI and the lesson. */
char *btrfs_costs_json(void);
#endif
