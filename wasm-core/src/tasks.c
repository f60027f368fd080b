#include "tasks.h"
#include "inode.h"
#include "space-info.h"
#include "extent-tree.h"
#include "volumes.h"
#include "locking.h"
#include "bio.h"
#include "delalloc.h"
#include "ordered-data.h"
#include "transaction.h"
#include "tree-log.h"
#include "file.h"
#include "array.h"
#include "print-tree.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const timed_op_names[TOP_COUNT] = {
	[TOP_END] = "end", [TOP_WRITE] = "write", [TOP_FSYNC] = "fsync", [TOP_SYNC] = "sync",
	[TOP_SLEEP] = "sleep", [TOP_META] = "namespace",
};
const char *timed_op_name(int kind) { return kind >= 0 && kind < TOP_COUNT ? timed_op_names[kind] : "?"; }

#define DELAYED_BACKGROUND 128 /* BTRFS_DELAYED_BACKGROUND: pending items that start the async worker */
#define DELAYED_BATCH 16       /* BTRFS_DELAYED_BATCH: nodes the worker flushes before it looks again */

void timed_config_default(struct timed_config *c)
{
	memset(c, 0, sizeof(*c));
	c->dev = *btrfs_device_profile("nvme");
	for (int i = 0; i < COST_COUNT; i++)
		c->cost[i] = btrfs_costs[i].ns;
	c->policy = SCHED_SEED;
	c->seed = 1;
	c->dirty_bytes = (4ULL << 30) / 5;            /* vm.dirty_ratio 20% of 4 GiB */
	c->dirty_background_bytes = (4ULL << 30) / 10; /* vm.dirty_background_ratio 10% */
	c->commit_interval_ns = 30ULL * 1000000000ULL;
	c->tree_locks = TREE_LOCKS_TREE; /* the costs were fitted with it (bench/seed003.bench.mjs) */
	c->delayed_background = DELAYED_BACKGROUND;
}

/* ---- latency histograms ---- */

/* 64 buckets an octave from 64 ns: integers only, the same in every build */
static int bucket_of(u64 ns)
{
	if (ns < 64)
		return 0;
	int msb = 63 - __builtin_clzll(ns);
	int frac = (int)((ns << (63 - msb)) >> 57 & 63);
	int b = msb * 64 + frac - 6 * 64;
	return b >= TIMED_BUCKETS ? TIMED_BUCKETS - 1 : b;
}

static u64 bucket_top(int b)
{
	int msb = b / 64 + 6, frac = b % 64;
	return (1ULL << msb) + (((u64)frac + 1) << msb) / 64;
}

const char *const timed_bonnie_names[TIMED_BONNIE_PHASES] = {"seqCreate", "seqDelete", "randCreate", "randDelete"};

void timed_latency_add(struct timed_latency *l, u64 ns)
{
	l->n++;
	l->sum_ns += ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
	l->bucket[bucket_of(ns)]++;
}

u64 timed_percentile(const struct timed_latency *l, double p)
{
	if (!l->n)
		return 0;
	double x = (double)l->n * p / 100.0;
	u64 want = (u64)x, seen = 0;
	if ((double)want < x || !want)
		want++;
	for (int b = 0; b < TIMED_BUCKETS; b++) {
		seen += l->bucket[b];
		if (seen >= want) {
			u64 v = bucket_top(b); /* the bucket's upper edge */
			return v < l->max_ns ? v : l->max_ns;
		}
	}
	return l->max_ns;
}

/* ---- the run ---- */

/* a cost of the table's CPU, on the profile's machine */
#define COST(tm, id, units) ((tm)->cfg->cost[id] * (u64)(units) * (tm)->cfg->dev.cpu_pct / 100)

/* An inode's delayed node (delayed-inode.c): its delayed inode item update
 * and DIR_INDEX insertions and deletions, not yet in the fs tree, and the
 * mutex flushing them holds. In the model the items are in the tree at once
 * (a B-tree change happens at one instant); the node carries what the
 * kernel's flushing costs and the locks it takes. */
struct delayed_node {
	struct sched_lock mutex; /* delayed_node->mutex: .tree 5, .bytenr the inode, .level -1 */
	u64 ino, seq;            /* seq: when it last went from empty to pending (oldest flushed first) */
	int inode_dirty, is_dir;
	u64 index_items;
	u64 rsv; /* metadata reservation its items hold (insert(1) an index item, modify(1) the inode update) */
};

/* One search with tree_locks=path, as btrfs_search_slot makes it: the
 * path locked top-down (locking.c), leaf_ns spent in the leaf, the path
 * let go. */
struct search_m {
	int pc;
	struct btrfs_path_lock pl;
};

/* Flushing one delayed node: its mutex, then its inode item's leaf
 * write-locked (__btrfs_commit_inode_delayed_items), the items' time. */
struct dflush_m {
	int pc;
	struct delayed_node *n;
	struct btrfs_path_lock pl;
	struct search_m sm; /* tree_locks=path: its search under way, and how many are done */
	int nsearch;
};

/* Direct reclaim evicting an inode: __btrfs_release_delayed_node takes its
 * delayed node's mutex. */
struct evict_m {
	int pc;
	struct delayed_node *n;
};

/* A reservation waiting for space (btrfs's reserve_ticket): granted in
 * order, its bytes then held by the operation, or failed with ENOSPC. */
struct space_ticket {
	struct thread_ctx *c;
	struct sched_task *t;
	u64 bytes, start_ns;
	int kind, state; /* 0 waiting, 1 granted, -1 failed */
};

struct timed {
	struct btrfs_fs_info *fs;
	const struct timed_config *cfg;
	struct timed_state *st;
	struct sched *s;
	struct bio_dev *dev;
	int cpus;
	struct btrfs_locks locks;
	struct sched_wq io_wq, ordered_wq, trans_wq, log_wq, writers_wq, work_wq, flusher_wq, throttle_wq, turn_wq, log_mutex_wq;
	u64 *work; /* ordered extents (ids) waiting for a completion worker, FIFO */
	size_t nwork, capwork, whead;
	int finish_busy, flusher_busy, flusher_timer;
	u64 log_transid, log_synced, log_batch, log_committing;
	int log_syncing, log_writers[2], log_start_task, log_multi;
	int log_mutex; /* the task (id + 1) holding the root's log_mutex in btrfs_sync_log */
	u64 log_cowed;  /* the log transaction whose first logger has COWed the log tree's path */
	struct u64map dnodes; /* inode -> struct delayed_node * */
	struct u64map ilocks; /* inode -> struct sched_lock *: its lock (i_rwsem) */
	u64 delayed_items, dseq;
	int delayed_busy;
	struct sched_wq delayed_wq;
	struct thread_ctx *threads;
	struct thread_ctx *cur; /* the thread whose change is being made now: its reservation pays for delayed items */
	/* space reservation tickets, FIFO, by enum btrfs_space_kind (data, metadata) */
	struct space_ticket **tq[2];
	size_t ntq[2], captq[2];
	u64 tickets_id[2];
	int reclaim_busy[2];
	struct sched_wq reclaim_wq[2];
	int committing;   /* a commit has begun: fsyncs and writes wait to join */
	int commit_doing; /* its critical part: ordered extent completion waits too */
	u64 trans_writers;
	/* threads */
	int nthreads, threads_done;
	timed_next_fn next;
	void *ctx;
	const int *schedule;
	size_t nschedule, turn;
	int quit;
};

/* An extent buffer (and its pages) allocated by t: its time, and with
 * memory pressure sometimes a direct reclaim stall, drawn from the seeded
 * stream (half to twice the cost row's). */
static void eb_alloc(struct timed *tm, struct sched_task *t)
{
	u64 ns = COST(tm, COST_EB_ALLOC, 1);
	int mp = tm->cfg->memory_pressure;
	if (mp) {
		u64 r = sched_random(tm->s);
		if (r % (mp == 1 ? 20 : 4) == 0) {
			u64 base = tm->cfg->cost[mp == 1 ? COST_RECLAIM_MODERATE : COST_RECLAIM_HEAVY];
			ns += base / 2 + (r >> 8) % (base * 3 / 2 + 1);
		}
	}
	sched_stall(tm->s, t, ns, WAIT_ALLOC, tm->fs->nodesize);
}

/* With tree_locks=path, the searches the kernel makes besides a namespace
 * command's (scenario.c's), measured on this machine's kernel with its
 * tree-lock tracepoints (docs/seed000-locks.md): an fsync logging a new
 * file makes 5 read-locked fs tree searches and 2 read-locked log tree
 * searches for it (counted here per inode logged; the log inserts are the
 * log's own count, btrfs_log_stats.log_searches); an ordered extent's
 * completion 1 read-locked and 2 write-locked fs tree searches (the file
 * extent item, the inode item) and 1 write-locked csum tree search. */
enum {
	FSYNC_FS_READS = 5,
	FSYNC_LOG_READS = 2,
	FINISH_FS_READS = 1,
	FINISH_FS_WRITES = 2,
};

/* 1 when the search is done, 0 when t waits or computes (m->pc is 1 from
 * the moment its leaf is held), or an error. */
static int search_step(struct timed *tm, struct sched_task *t, struct search_m *m, u64 tree, struct btrfs_key key, int mode,
		       u64 leaf_ns, int work)
{
	int r;
	switch (m->pc) {
	case 0:
		if ((r = btrfs_path_lock(&tm->locks, t, &m->pl, tree, key.objectid, key.type, key.offset, mode)) <= 0)
			return r;
		m->pc = 1;
		if (leaf_ns) {
			sched_cpu(tm->s, t, leaf_ns, work);
			return 0;
		}
		/* fallthrough */
	default:
		btrfs_path_unlock(&tm->locks, t, &m->pl);
		m->pc = 0;
		return 1;
	}
}

/* With tree_locks=path, the part of a cost row's time an operation spends
 * outside its searches: the row less the searches' own (the kernel's holds
 * are short: costs.c). */
static u64 unlocked_part(u64 total, u64 searches)
{
	return total > searches ? total - searches : 0;
}

struct commit_m {
	int pc, io;
	u64 gen, blocks;
};

struct logsync_m {
	int pc, io;
	u64 target, blocks, batch;
	struct btrfs_lock_replay rp; /* the log blocks it COWed and wrote, locked in turn */
};

struct thread_ctx {
	struct timed *tm;
	int index, pc, sub;
	struct timed_op op;
	u64 op_start, my_lt, ino;
	int fallback, in_trans, busy; /* busy: a command is running */
	struct btrfs_log_stats ls;
	struct btrfs_path_lock pl;
	u64 csum_bytenr; /* where this fsync's extents' checksums are (its first ordered extent's) */
	int full, prealloced; /* this fsync copies items from fs leaves; its extent buffer is allocated */
	int is_dir;           /* it fsyncs a directory */
	u64 clones;           /* fs leaves cloned so far (log_copy=clone) */
	int log_allocs;       /* log tree blocks still to allocate for this fsync's inserts */
	struct btrfs_path_lock fs_pl; /* log_copy=direct: the fs leaf held while the log changes */
	struct btrfs_path_lock csum_pl; /* tree_locks=tree: the csum tree read-locked while logging looks checksums up */
	struct dflush_m df;
	struct evict_m ev;
	struct space_ticket tk;
	u64 rsv[2];   /* may_use this command holds (data, metadata): released when it has made its change */
	int rsv_step; /* a write reserves metadata (0), then data (1) */
	u64 meta_bytes; /* what a namespace operation's start_transaction reserves */
	struct commit_m cm;
	struct logsync_m lm;
	struct search_m sm; /* tree_locks=path: the search under way */
	int nsearch;        /* and how many of this step's searches are done */
	struct btrfs_lock_replay rp; /* the blocks its change COWed or split, locked in turn (tree_locks=path) */
	u64 moved[2];       /* bytes its change moved aside in the inode's leaf and in the name's (meta_moved) */
	int nilocked;       /* of op.ilock, the inode locks it holds (or waits for, the last) */
	struct sched_wq own;
	struct btrfs_ordered_extent **oes;
	size_t noes;
	/* the ordered extent an fsync waits on (its id; 0: none), woken when
	 * that one completes: the kernel's wait_event on ordered->wait */
	u64 wait_oe;
	struct sched_wq oe_wq;
};

static int fail(struct timed *tm, int code, const char *msg)
{
	return blab_fail(&tm->fs->err, code, "timed run: %s", msg);
}

/* ---- delayed nodes ---- */

/* The object of ino in map m (a pointer to `size` bytes, made zeroed when
 * first wanted, *made then 1); NULL on ENOMEM. */
static void *inode_obj(struct u64map *m, u64 ino, size_t size, int *made)
{
	void **p = u64map_put(m, ino);
	*made = 0;
	if (!p)
		return NULL;
	if (!*p) {
		if (!(*p = calloc(1, size)))
			return NULL;
		*made = 1;
	}
	return *p;
}

static struct delayed_node *dnode_get(struct timed *tm, u64 ino)
{
	int made;
	struct delayed_node *n = inode_obj(&tm->dnodes, ino, sizeof(*n), &made);
	if (n && made)
		*n = (struct delayed_node){.ino = ino,
					   .mutex = {.tree = BTRFS_FS_TREE_OBJECTID, .bytenr = ino, .level = SCHED_LOCK_DELAYED_NODE}};
	return n;
}

/* An inode's lock (inode->i_rwsem), made when first wanted; NULL on ENOMEM. */
static struct sched_lock *ilock_get(struct timed *tm, u64 ino)
{
	int made;
	struct sched_lock *lk = inode_obj(&tm->ilocks, ino, sizeof(*lk), &made);
	if (lk && made)
		*lk = (struct sched_lock){.tree = BTRFS_FS_TREE_OBJECTID, .bytenr = ino, .level = SCHED_LOCK_INODE};
	return lk;
}

static u64 dnode_items(const struct delayed_node *n) { return (u64)n->inode_dirty + n->index_items; }

/* fs->delayed_hook: a change the kernel queues as a delayed item. */
static void delayed_hook(void *ctx, u64 root, u64 ino, int dir_index)
{
	struct timed *tm = ctx;
	if (root != BTRFS_FS_TREE_OBJECTID)
		return;
	struct delayed_node *n = dnode_get(tm, ino);
	if (!n)
		return; /* no memory for the node: the change goes uncounted, nothing else */
	if (!dnode_items(n))
		n->seq = ++tm->dseq;
	u64 bytes = 0;
	if (dir_index) {
		n->is_dir = 1;
		n->index_items++;
		tm->delayed_items++;
		bytes = btrfs_calc_insert_metadata_size(tm->fs, 1); /* btrfs_delayed_item_reserve_metadata */
	} else if (!n->inode_dirty) {
		n->inode_dirty = 1;
		tm->delayed_items++;
		bytes = btrfs_calc_metadata_size(tm->fs, 1); /* btrfs_delayed_inode_reserve_metadata */
	}
	/* the item's reservation, migrated from the operation's (the transaction's) */
	struct thread_ctx *c = tm->cur;
	if (c && bytes && c->rsv[SPACE_METADATA]) {
		u64 b = bytes < c->rsv[SPACE_METADATA] ? bytes : c->rsv[SPACE_METADATA];
		c->rsv[SPACE_METADATA] -= b;
		btrfs_space_migrate(&tm->fs->space.op_meta, &tm->fs->space.delayed_items_rsv, b);
		n->rsv += b;
	}
	/* btrfs_balance_delayed_items: the async worker past the background mark */
	if (tm->delayed_items >= tm->cfg->delayed_background && !tm->delayed_busy)
		sched_wake_all(tm->s, &tm->delayed_wq);
}

/* The node's items are in the tree: their reservation goes (released, or
 * already by a commit's btrfs_space_commit). */
static void dnode_clear(struct timed *tm, struct delayed_node *n, int release)
{
	tm->delayed_items -= dnode_items(n);
	if (n->index_items)
		btrfs_log_delayed_flushed(tm->fs, n->ino); /* its DIR_INDEX leaves change now */
	n->inode_dirty = 0;
	n->index_items = 0;
	if (release && n->rsv) {
		u64 *part = &tm->fs->space.delayed_items_rsv, b = n->rsv < *part ? n->rsv : *part;
		*part -= b;
		btrfs_space_release_meta(tm->fs, b);
	}
	n->rsv = 0;
}

/* A commit runs every delayed item (btrfs_run_delayed_items). The model
 * takes no locks for it: the commit's work is one instant. */
static void delayed_commit(struct timed *tm)
{
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&tm->dnodes, &i, &k, &v))
		dnode_clear(tm, *(struct delayed_node **)v, 0);
}

/* The oldest node with items (files only: an inode reclaim can evict,
 * not one a thread's command is using), or NULL. */
static struct delayed_node *dnode_oldest(struct timed *tm, int evictable)
{
	struct delayed_node *best = NULL;
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&tm->dnodes, &i, &k, &v)) {
		struct delayed_node *n = *(struct delayed_node **)v;
		if (!dnode_items(n) || (best && best->seq < n->seq))
			continue;
		if (evictable) {
			int used = n->is_dir;
			for (int t = 0; !used && t < tm->nthreads; t++)
				used = tm->threads[t].busy && (tm->threads[t].ino == n->ino || tm->threads[t].op.ino == n->ino);
			if (used)
				continue;
		}
		best = n;
	}
	return best;
}

static u64 space_grant(struct timed *tm);

/* tree_locks=path: the node's write-locked searches, for its inode item
 * and for its index items (__btrfs_update_delayed_inode,
 * btrfs_insert_delayed_items). 1 when done. */
static int dflush_searches(struct timed *tm, struct sched_task *t, struct dflush_m *d)
{
	int r;
	while (d->nsearch < 2) {
		int idx = d->nsearch == 1;
		/* nothing left to write (a commit flushed the node meanwhile): the
		 * search is skipped, unless it is under way, its path partly locked */
		if ((idx ? !d->n->index_items : !d->n->inode_dirty) && d->sm.pc == 0 && !d->sm.pl.active) {
			d->nsearch++;
			continue;
		}
		struct btrfs_key key = {d->n->ino, idx ? BTRFS_DIR_INDEX_KEY : BTRFS_INODE_ITEM_KEY, 0};
		if ((r = search_step(tm, t, &d->sm, BTRFS_FS_TREE_OBJECTID, key, BTRFS_LOCK_WRITE,
				     COST(tm, COST_LEAF_WRITE, 1) + (idx ? COST(tm, COST_DELAYED_ITEM, d->n->index_items) : 0), WORK_META)) <= 0)
			return r;
		d->nsearch++;
	}
	return 1;
}

/* Flushing d->n by t (its mutex, then its inode's leaf write-locked, the
 * items' time; with tree_locks=path the update's time, then its searches):
 * 1 when done, 0 when t waits or computes, or an error. */
static int dflush_step(struct timed *tm, struct sched_task *t, struct dflush_m *d)
{
	int r;
	switch (d->pc) {
	case 0:
		d->pc = 1;
		if (!sched_lock(tm->s, t, &d->n->mutex, BTRFS_LOCK_WRITE))
			return 0;
		/* fallthrough */
	case 1:
		if (tm->locks.granularity == TREE_LOCKS_PATH) {
			/* the inode item's update outside the tree's locks, then the searches */
			d->pc = 3;
			d->nsearch = 0;
			u64 rest = unlocked_part(COST(tm, COST_INODE_UPDATE, d->n->inode_dirty), COST(tm, COST_LEAF_WRITE, d->n->inode_dirty));
			if (rest) {
				sched_cpu(tm->s, t, rest, WORK_META);
				return 0;
			}
			if ((r = dflush_searches(tm, t, d)) <= 0)
				return r;
			break;
		}
		if ((r = btrfs_path_lock(&tm->locks, t, &d->pl, BTRFS_FS_TREE_OBJECTID, d->n->ino, BTRFS_INODE_ITEM_KEY, 0,
					 BTRFS_LOCK_WRITE)) <= 0)
			return r;
		d->pc = 2;
		sched_cpu(tm->s, t, COST(tm, COST_INODE_UPDATE, d->n->inode_dirty) + COST(tm, COST_DELAYED_ITEM, d->n->index_items),
			  WORK_META);
		return 0;
	case 3:
		if ((r = dflush_searches(tm, t, d)) <= 0)
			return r;
		break;
	default:
		break;
	}
	btrfs_path_unlock(&tm->locks, t, &d->pl);
	dnode_clear(tm, d->n, 1);
	sched_unlock(tm->s, t, &d->n->mutex, BTRFS_LOCK_WRITE);
	space_grant(tm); /* its items' reservation is free */
	d->pc = 0;
	return 1;
}

/* A log tree block allocated by t: with memory pressure sometimes a direct
 * reclaim stall (drawn as eb_alloc's), in which reclaim evicts the oldest
 * unused inode with a delayed node, taking that node's mutex. Without
 * pressure the allocation's time is inside the log rows. 1 when done, 0
 * when t waits or computes. */
static int log_alloc_step(struct timed *tm, struct sched_task *t, struct evict_m *e)
{
	int mp = tm->cfg->memory_pressure;
	switch (e->pc) {
	case 0: {
		if (!mp)
			return 1;
		u64 r = sched_random(tm->s);
		if (r % (mp == 1 ? 20 : 4))
			return 1;
		u64 base = tm->cfg->cost[mp == 1 ? COST_RECLAIM_MODERATE : COST_RECLAIM_HEAVY];
		e->pc = 1;
		sched_stall(tm->s, t, COST(tm, COST_EB_ALLOC, 1) + base / 2 + (r >> 8) % (base * 3 / 2 + 1), WAIT_ALLOC,
			    tm->fs->nodesize);
		return 0;
	}
	case 1:
		if (!(e->n = dnode_oldest(tm, 1))) {
			e->pc = 0;
			return 1;
		}
		e->pc = 2;
		if (!sched_lock(tm->s, t, &e->n->mutex, BTRFS_LOCK_WRITE))
			return 0;
		/* fallthrough */
	case 2:
		e->pc = 3;
		sched_cpu(tm->s, t, COST(tm, COST_EB_ALLOC, 1), WORK_LOG);
		return 0;
	default:
		sched_unlock(tm->s, t, &e->n->mutex, BTRFS_LOCK_WRITE);
		e->pc = 0;
		return 1;
	}
}

/* The in-flight ordered extent of inode ikey with the highest file offset
 * (0: none): btrfs_wait_ordered_range waits for them one at a time from the
 * end of the range down (btrfs_lookup_first_ordered_extent, then
 * btrfs_start_ordered_extent with wait), each on that ordered extent's own
 * wait queue, so a completion wakes only who waits on it. */
static u64 last_ordered(struct btrfs_fs_info *fs, u64 ikey)
{
	size_t n;
	struct btrfs_ordered_extent *const *l = btrfs_ordered_list(fs, &n);
	const struct btrfs_ordered_extent *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (l[i]->ikey == ikey && (!best || l[i]->file_offset > best->file_offset))
			best = l[i];
	return best ? best->id : 0;
}

/* An in-flight ordered extent over the pages write op changes (its id; 0:
 * none). A buffered write waits for one there, its bio done or not, and
 * looks again (the kernel's lock_and_cleanup_extent_if_need:
 * btrfs_start_ordered_extent, then -EAGAIN): a range is never in two
 * ordered extents at once. */
static u64 ordered_under_write(struct btrfs_fs_info *fs, const struct timed_op *op)
{
	u64 ss = fs->sectorsize;
	struct btrfs_ordered_extent *oe = NULL;
	return btrfs_ordered_of(fs, op->ino, op->off / ss * ss, (op->off + op->len + ss - 1) / ss * ss, &oe, 1) ? oe->id : 0;
}

/* An ordered extent completed: the tasks waiting on it run again (and any
 * waiting on one that is gone: completed where no worker ran it, as an
 * evicted inode's are). */
static void wake_oe_waiters(struct timed *tm, u64 id)
{
	for (int i = 0; i < tm->nthreads; i++)
		if (tm->threads[i].wait_oe && (tm->threads[i].wait_oe == id || !btrfs_ordered_by_id(tm->fs, tm->threads[i].wait_oe))) {
			tm->threads[i].wait_oe = 0;
			sched_wake_all(tm->s, &tm->threads[i].oe_wq);
		}
}

/* The data bio of an ordered extent completed: its pages leave writeback and
 * a completion worker gets it. */
static int data_bio_done(struct sched *s, void *arg, u64 id)
{
	struct timed *tm = arg;
	struct btrfs_ordered_extent *oe = btrfs_ordered_by_id(tm->fs, id);
	if (!oe)
		return 0;
	int ret = btrfs_ordered_io_done(tm->fs, oe);
	if (ret)
		return ret;
	sched_wake_all(s, &tm->io_wq);
	if (array_room(&tm->work, tm->nwork, &tm->capwork, sizeof(*tm->work), 16))
		return fail(tm, BLAB_ENOMEM, "work queue");
	tm->work[tm->nwork++] = id;
	sched_wake_one(s, &tm->work_wq);
	return 0;
}

static int wake_own(struct sched *s, void *arg, u64 id)
{
	(void)id;
	sched_wake_all(s, arg);
	return 0;
}

/* Bios for ordered extents just made (pages under writeback now). */
static int submit_oes(struct timed *tm, struct sched_task *t, struct btrfs_ordered_extent **oes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!bio_submit(tm->dev, t->id, BIO_DATA, oes[i]->disk_bytenr, oes[i]->num_bytes, data_bio_done, tm, oes[i]->id))
			return fail(tm, BLAB_ENOMEM, "bio");
	return 0;
}

/* CPU time of starting writeback that made n ordered extents of bytes in all. */
static u64 writeback_cost(struct timed *tm, struct btrfs_ordered_extent **oes, size_t n, u32 ss)
{
	u64 pages = 0;
	for (size_t i = 0; i < n; i++)
		pages += oes[i]->num_bytes / ss;
	return COST(tm, COST_WRITEBACK_EXTENT, n) + COST(tm, COST_WRITEBACK_PAGE, pages);
}

static int wb_pending(struct btrfs_fs_info *fs, u64 ino)
{
	return btrfs_ordered_io_pending(fs, ino, 0, (u64)-1);
}

static u64 block_writes(struct btrfs_fs_info *fs)
{
	return fs->blocks_written; /* (not the trace's count: a run must not change with what it is asked to print) */
}

/* Making blocks durable, as a commit and a log sync end: the blocks' bio
 * (op; none when blocks is 0), a cache flush, then the superblock (FUA).
 * *pc counts the phases from 0; 1 when durable, 0 when t waits, or an error. */
static int durable_step(struct timed *tm, struct sched_task *t, int *pc, int op, u64 blocks, struct sched_wq *own)
{
	static const int ops[3] = {-1, BIO_FLUSH, BIO_SUPER};
	struct btrfs_fs_info *fs = tm->fs;
	while (*pc < 3) {
		int phase = (*pc)++;
		int o = phase ? ops[phase] : op;
		if (!phase && !blocks)
			continue;
		u64 at = o == BIO_SUPER ? BTRFS_SUPER_INFO_OFFSET : 0;
		u64 bytes = o == BIO_SUPER ? BTRFS_SUPER_INFO_SIZE : o == BIO_FLUSH ? 0 : blocks * fs->nodesize;
		if (!bio_submit(tm->dev, t->id, o, at, bytes, wake_own, own, 0))
			return fail(tm, BLAB_ENOMEM, "bio");
		sched_wait(tm->s, t, own, WAIT_BIO, 0);
		return 0;
	}
	*pc = 0;
	return 1;
}

/* A commit of the running transaction by task t: 1 when done (or someone
 * else's commit covered it), 0 when t waits or computes, or an error. */
static int commit_step(struct timed *tm, struct sched_task *t, struct commit_m *c, struct sched_wq *own)
{
	struct sched *s = tm->s;
	struct btrfs_fs_info *fs = tm->fs;
	int ret;
	switch (c->pc) {
	case 0:
		c->gen = fs->generation;
		if (!fs->trans_running)
			return 1;
		c->pc = 1;
		/* fallthrough */
	case 1:
		if (fs->generation != c->gen || !fs->trans_running)
			return c->pc = 0, 1; /* committed meanwhile */
		if (tm->committing) {
			sched_wait(s, t, &tm->trans_wq, WAIT_TRANSACTION, c->gen);
			return 0;
		}
		tm->committing = 1;
		c->pc = 2;
		/* fallthrough */
	case 2:
		if (tm->trans_writers) {
			sched_wait(s, t, &tm->writers_wq, WAIT_TRANS_WRITERS, c->gen);
			return 0;
		}
		if (btrfs_ordered_logged_pending(fs)) {
			/* ordered extents a log holds complete before the commit drops the log
			 * (no fsync can log another now: they wait to join) */
			sched_wait(s, t, &tm->ordered_wq, WAIT_ORDERED, 0);
			return 0;
		}
		tm->commit_doing = 1;
		c->blocks = block_writes(fs);
		if ((ret = btrfs_commit_transaction(fs)))
			return ret;
		delayed_commit(tm);
		c->blocks = block_writes(fs) - c->blocks;
		tm->st->commits++;
		c->pc = 3;
		sched_cpu(s, t, COST(tm, COST_COMMIT, 1) + COST(tm, COST_COMMIT_BLOCK, c->blocks), WORK_COMMIT);
		return 0;
	case 3: {
		int r = durable_step(tm, t, &c->io, BIO_META, c->blocks, own);
		if (r <= 0)
			return r;
		c->pc = 4;
	}
		/* fallthrough */
	default:
		tm->committing = tm->commit_doing = 0;
		tm->st->trans_started_ns = sched_now(s);
		space_grant(tm); /* pinned space is free again */
		/* the commit made every logged change durable: log transactions so far are done */
		tm->log_synced = tm->log_transid;
		tm->log_transid++;
		sched_wake_all(s, &tm->trans_wq);
		sched_wake_all(s, &tm->log_wq);
		c->pc = 0;
		return 1;
	}
}

/* btrfs_sync_log holds the root's log_mutex except while it sleeps or waits:
 * an fsync joining the log transaction then waits for it, and joins the
 * next one if the syncer closed this one meanwhile. */
static void log_mutex_release(struct timed *tm)
{
	tm->log_mutex = 0;
	sched_wake_all(tm->s, &tm->log_mutex_wq);
}

/* The log sync of log transaction lt by task t (btrfs_sync_log): 1 when
 * durable, 0 when t waits or computes, or an error. The first fsync of a
 * log transaction to get here writes it; the others wait for that. */
static int logsync_step(struct timed *tm, struct sched_task *t, struct logsync_m *m, u64 lt, struct sched_wq *own)
{
	struct sched *s = tm->s;
	struct btrfs_fs_info *fs = tm->fs;
	switch (m->pc) {
	case 0:
		if (tm->log_synced >= lt)
			return 1;
		if (tm->log_syncing) {
			/* another task syncs this log transaction, or the one before */
			sched_wait(s, t, &tm->log_wq, WAIT_LOG_SYNC, lt);
			return 0;
		}
		tm->log_syncing = 1;
		tm->log_committing = lt;
		m->target = lt;
		m->pc = 1;
		/* fallthrough */
	case 1:
		/* batching: on a rotational device, with several tasks logging,
		 * schedule_timeout(1) lets more fsyncs join this log transaction:
		 * to the tick after next, so 1 to 2 jiffies, and a whole 2 when
		 * it sleeps again right after waking on a tick */
		tm->log_mutex = t->id + 1;
		m->batch = tm->log_batch;
		m->pc = 2;
		if (!tm->cfg->dev.ssd && tm->log_multi) {
			log_mutex_release(tm);
			sched_sleep_jiffies(s, t, 1, tm->cfg->dev.jiffy_ns);
			return 0;
		}
		/* fallthrough */
	case 2: {
		if (tm->log_writers[m->target & 1]) {
			log_mutex_release(tm);
			sched_wait(s, t, &tm->writers_wq, WAIT_LOG_WRITERS, m->target);
			return 0;
		}
		tm->log_mutex = t->id + 1;
		if (m->batch != tm->log_batch) {
			m->pc = 1;
			return logsync_step(tm, t, m, lt, own);
		}
		struct btrfs_log_stats ls = {0};
		btrfs_lock_replay_record(&tm->locks);
		int ret = btrfs_sync_log(fs, fs->fs_root, &ls);
		btrfs_lock_replay_take(&tm->locks, &m->rp);
		if (ret)
			return ret;
		m->blocks = ls.blocks_written;
		m->pc = 6;
		/* writing the log's blocks out, under the log mutex: with
		 * tree_locks=path each block write-locked in turn as it is
		 * written, the log root tree's COWed first */
		u64 locked = btrfs_lock_replay_ns(&tm->locks, &m->rp, BTRFS_TREE_LOG_OBJECTID);
		sched_cpu(s, t, unlocked_part(COST(tm, COST_LOG_BLOCK, m->blocks), locked), WORK_LOG_SYNC);
		return 0;
	}
	case 6: {
		int r = btrfs_lock_replay(&tm->locks, t, &m->rp, BTRFS_TREE_LOG_OBJECTID, NULL);
		if (r <= 0)
			return r;
		m->pc = 3;
	}
		/* fallthrough */
	case 3:
		/* the log transaction closes: later fsyncs log into the next one */
		tm->log_transid = m->target + 1;
		tm->log_start_task = 0;
		tm->log_multi = 0;
		log_mutex_release(tm);
		m->pc = 4;
		/* fallthrough */
	case 4: {
		int r = durable_step(tm, t, &m->io, BIO_LOG, m->blocks, own);
		if (r <= 0)
			return r;
		m->pc = 5;
	}
		/* fallthrough */
	default:
		if (m->target > tm->log_synced)
			tm->log_synced = m->target;
		tm->log_syncing = 0;
		tm->st->log_syncs++;
		/* the fsyncs waiting on this log commit: woken onto the committer's
		 * CPU, they run once it lets go of it (the profile's log_wake) */
		sched_wake_all_later(s, &tm->log_wq, tm->cfg->dev.log_wake_ns);
		m->pc = 0;
		return 1;
	}
}

/* ---- space reservation: tickets (space-info.c's rules) ---- */

static void space_event(struct timed *tm, int kind)
{
	struct btrfs_space_info si;
	btrfs_space_info_get(tm->fs, kind, &si);
	fs_trace(tm->fs, (struct trace_event){.kind = TRACE_SPACE_INFO, .level = kind, .a = si.total, .b = si.used,
					      .bytenr = si.reserved, .tree = si.pinned, .c = si.may_use});
}

static void op_hold(struct timed *tm, struct thread_ctx *c, int kind, u64 bytes)
{
	btrfs_space_reserve(tm->fs, kind, bytes);
	c->rsv[kind] += bytes;
	if (kind == SPACE_DATA)
		tm->fs->space.op_data += bytes;
	else
		tm->fs->space.op_meta += bytes;
}

/* btrfs_try_granting_tickets: in order, each ticket that fits now (with
 * the overcommit of a reservation that may flush everything), stopping at
 * the first that does not. The number granted. */
static u64 space_grant(struct timed *tm)
{
	u64 granted = 0;
	for (int kind = 0; kind < 2; kind++) {
		while (tm->ntq[kind]) {
			struct space_ticket *tk = tm->tq[kind][0];
			if (!btrfs_space_fits(tm->fs, kind, tk->bytes, RESERVE_FLUSH_ALL))
				break;
			op_hold(tm, tk->c, kind, tk->bytes);
			tk->state = 1;
			memmove(tm->tq[kind], tm->tq[kind] + 1, --tm->ntq[kind] * sizeof(*tm->tq[kind]));
			tm->tickets_id[kind]++;
			granted++;
			u64 waited = sched_now(tm->s) - tk->start_ns;
			tm->st->ticket_wait_ns += waited;
			fs_trace(tm->fs, (struct trace_event){.kind = TRACE_RESERVE_TICKET, .slot = tk->t->id, .level = kind, .a = tk->bytes,
							      .b = waited});
			sched_wake_all(tm->s, &tk->c->own);
		}
		if (granted)
			space_event(tm, kind);
	}
	return granted;
}

/* The reservations c's command holds go (its change is made): then tickets
 * may fit. What metadata is left (btrfs_end_transaction's release of the
 * transaction's reserve, and of what start_transaction took for delayed
 * refs) first fills the delayed refs reserve up to what the refs waiting to
 * run need; the rest leaves may_use. */
static void op_release(struct timed *tm, struct thread_ctx *c)
{
	for (int kind = 0; kind < 2; kind++) {
		if (!c->rsv[kind])
			continue;
		if (kind == SPACE_METADATA)
			btrfs_space_release_meta(tm->fs, c->rsv[kind]);
		else
			btrfs_space_release(tm->fs, kind, c->rsv[kind]);
		u64 *part = kind == SPACE_DATA ? &tm->fs->space.op_data : &tm->fs->space.op_meta;
		*part -= c->rsv[kind] < *part ? c->rsv[kind] : *part;
		c->rsv[kind] = 0;
	}
	space_grant(tm);
}

/* A reservation of bytes of kind by c's command (__reserve_bytes with
 * FLUSH_ALL): 1 when held, 0 when t waits on a ticket (call again when it
 * runs), or ENOSPC when its ticket failed. */
static int space_reserve_step(struct timed *tm, struct sched_task *t, struct thread_ctx *c, int kind, u64 bytes)
{
	if (c->tk.t == t && c->tk.kind == kind && c->tk.state) {
		int st = c->tk.state;
		memset(&c->tk, 0, sizeof(c->tk));
		if (st > 0)
			return 1;
		return blab_fail(&tm->fs->err, BLAB_ENOSPC, "no %s space for a reservation of %llu bytes: the reclaim worker ran every flush state "
							    "through three commits without making room",
				 btrfs_space_kind_names[kind], (unsigned long long)bytes);
	}
	if (!bytes)
		return 1;
	if (!tm->ntq[kind] && btrfs_space_fits(tm->fs, kind, bytes, RESERVE_FLUSH_ALL)) {
		op_hold(tm, c, kind, bytes);
		return 1;
	}
	if (array_room(&tm->tq[kind], tm->ntq[kind], &tm->captq[kind], sizeof(*tm->tq[kind]), 16))
		return fail(tm, BLAB_ENOMEM, "tickets");
	c->tk = (struct space_ticket){.c = c, .t = t, .bytes = bytes, .start_ns = sched_now(tm->s), .kind = kind};
	tm->tq[kind][tm->ntq[kind]++] = &c->tk;
	tm->st->tickets++;
	space_event(tm, kind);
	if (!tm->reclaim_busy[kind]) {
		tm->reclaim_busy[kind] = 1;
		fs_trace(tm->fs, (struct trace_event){.kind = TRACE_TRIGGER_FLUSH, .slot = t->id, .level = kind, .a = bytes});
		/* queue_work on an unbound workqueue: its worker runs later than a woken task (reclaim_wake) */
		sched_wake_all_later(tm->s, &tm->reclaim_wq[kind], COST(tm, COST_RECLAIM_WAKE, 1));
	}
	sched_wait(tm->s, t, &c->own, WAIT_TICKET, bytes);
	return 0;
}

/* What a write of len at off of ino needs reserved: its pages (data), and
 * what its inode's metadata reservation grows by. */
static void write_needs(struct timed *tm, u64 ino, u64 off, u64 len, u64 *data, u64 *meta)
{
	struct btrfs_fs_info *fs = tm->fs;
	u64 ss = fs->sectorsize;
	*data = (off + len + ss - 1) / ss * ss - off / ss * ss;
	u64 on, ob = btrfs_ordered_bytes(fs, ino, &on);
	u64 held = btrfs_delalloc_meta_rsv(fs, ino), want = btrfs_space_inode_rsv_size(fs, btrfs_dirty_bytes(fs, ino) + *data, ob, on);
	*meta = want > held ? want - held : 0;
}

enum thread_pc {
	T_NEXT = 0,
	T_BEGIN,
	T_WRITE_RESERVE,
	T_META_RESERVE,
	T_WRITE_CHECK,
	T_WRITE_DONE,
	T_WRITE_UPDATE,
	T_THROTTLE,
	T_F_START,
	T_F_SUBMIT,
	T_F_WRITEBACK,
	T_F_ORDERED,
	T_F_JOIN,
	T_F_DELAYED,
	T_F_LOGGED,
	T_F_LOG_LOCK,
	T_F_LOG_CPU,
	T_F_CSUM_LOCK,
	T_F_CSUM_CPU,
	T_F_LOG_END,
	T_F_SYNC,
	T_COMMIT,
	T_SYNC_SUBMIT,
	T_SYNC_WAIT,
	T_META_FLUSH,
	T_META_SUBMIT,
	T_META_WAIT,
	T_META_JOIN,
	T_META_DONE,
	T_SLEEP_DONE,
	T_END,
};

/* A namespace command's change, made now (its transaction joined). */
static int meta_apply(struct timed *tm, struct thread_ctx *c)
{
	int ret;
	tm->cur = c;
	ret = btrfs_start_transaction(tm->fs);
	if (!ret)
		ret = c->op.meta(tm->ctx, c->index);
	tm->cur = NULL;
	c->op.meta = NULL;
	return ret;
}

/* What a namespace command's change moved aside in fs tree leaves
 * (fs->moverec): into moved[1] the name's DIR_ITEM (its directory's leaf,
 * the second write-locked search), into moved[0] the rest (the inode's
 * leaf). DIR_INDEX items are left out: the kernel inserts them later, from
 * the directory's delayed node. */
static void meta_moved(struct timed *tm, struct thread_ctx *c, u64 dir)
{
	const struct btrfs_fs_info *fs = tm->fs;
	c->moved[0] = c->moved[1] = 0;
	for (int i = 0; i < fs->nmoverec; i++) {
		const struct btrfs_move_rec *m = &fs->moverec[i];
		if (m->tree != BTRFS_FS_TREE_OBJECTID || m->type == BTRFS_DIR_INDEX_KEY)
			continue;
		c->moved[c->op.writes > 1 && m->objectid == dir && m->type == BTRFS_DIR_ITEM_KEY] += m->bytes;
	}
}

/* A namespace command with tree_locks=path: the fs tree searches the
 * kernel makes for it (op.reads read-locked, looking the name up in its
 * directory; then op.writes write-locked: the inode's item first, where
 * the change is made, then the name), each holding its leaf for the search
 * rows' time and what its inserts and deletions moved aside in the leaf
 * (leaf_shift_kib); then the rest of the command's time, outside them. 1
 * when done. */
static int meta_searches(struct timed *tm, struct sched_task *t, struct thread_ctx *c)
{
	int r;
	u64 dir = c->op.dir ? c->op.dir : BTRFS_FIRST_FREE_OBJECTID;
	struct btrfs_key name = {dir, BTRFS_DIR_ITEM_KEY, c->op.hash};
	while (c->nsearch < c->op.reads) {
		if ((r = search_step(tm, t, &c->sm, BTRFS_FS_TREE_OBJECTID, name, BTRFS_LOCK_READ, COST(tm, COST_LEAF_READ, 1), WORK_META)) <= 0)
			return r;
		c->nsearch++;
	}
	while (c->nsearch < c->op.reads + c->op.writes) {
		int w = c->nsearch - c->op.reads;
		struct btrfs_root *root = tm->fs->fs_root;
		u64 ino = c->op.target ? c->op.target : c->op.ino ? c->op.ino : root->highest_objectid + 1;
		struct btrfs_key key = w == 0 ? (struct btrfs_key){ino, BTRFS_INODE_ITEM_KEY, 0} : name;
		/* the blocks the change COWed or split, their locks taken while its leaf is held */
		if (c->sm.pc == 1 && c->rp.i < c->rp.n && (r = btrfs_lock_replay(&tm->locks, t, &c->rp, BTRFS_FS_TREE_OBJECTID, &c->sm.pl)) <= 0)
			return r;
		if (c->sm.pc == 0) {
			if ((r = btrfs_path_lock(&tm->locks, t, &c->sm.pl, BTRFS_FS_TREE_OBJECTID, key.objectid, key.type, key.offset,
						 BTRFS_LOCK_WRITE)) <= 0)
				return r;
			/* the change, once the inode's leaf is held */
			if (w == 0 && c->op.meta) {
				btrfs_lock_replay_record(&tm->locks);
				int ret = meta_apply(tm, c);
				meta_moved(tm, c, dir);
				btrfs_lock_replay_take(&tm->locks, &c->rp);
				if (ret)
					return ret;
			}
		}
		if ((r = search_step(tm, t, &c->sm, BTRFS_FS_TREE_OBJECTID, key, BTRFS_LOCK_WRITE,
				     COST(tm, COST_LEAF_WRITE, 1) + COST(tm, COST_LEAF_SHIFT_KIB, c->moved[w > 0]) / 1024, WORK_META)) <= 0)
			return r;
		c->nsearch++;
	}
	if (c->nsearch == c->op.reads + c->op.writes) {
		c->nsearch++;
		u64 rest = unlocked_part(COST(tm, COST_META_OP, 1),
					 COST(tm, COST_LEAF_READ, c->op.reads) + COST(tm, COST_LEAF_WRITE, c->op.writes));
		if (rest) {
			sched_cpu(tm->s, t, rest, WORK_META);
			return 0;
		}
	}
	c->nsearch = 0;
	return 1;
}

/* An fsync's time for what it copies into the log (costs.c's log rows: its
 * items and their bytes, the bytes moved aside, and log_extent for each file
 * extent past its first, log_tree holding one extent's logging). */
static u64 log_items_ns(struct timed *tm, const struct thread_ctx *c)
{
	u64 extents = c->ls.items[BTRFS_EXTENT_DATA_KEY];
	return COST(tm, COST_LOG_ITEM, c->ls.items_total) + COST(tm, COST_LOG_KIB, c->ls.bytes) / 1024 +
	       COST(tm, COST_LOG_SHIFT_KIB, c->ls.shifted) / 1024 + COST(tm, COST_LOG_EXTENT, extents > 1 ? extents - 1 : 0);
}

/* An fsync's work in the log tree with tree_locks=path: its read-locked
 * searches, its time outside the locks (the log's fixed cost and its
 * descents), then its inserts, one write-locked search each, holding the
 * leaf for the search row and a share of the items' copying; the log blocks
 * this fsync COWs first are allocated under the first insert's lock. 1 when
 * done. */
static int log_searches(struct timed *tm, struct sched_task *t, struct thread_ctx *c)
{
	int r;
	u64 reads = FSYNC_LOG_READS * (c->ls.inodes_logged ? c->ls.inodes_logged : 1), n = c->ls.log_searches;
	u64 items = log_items_ns(tm, c);
	struct btrfs_key key = {c->ino, BTRFS_INODE_ITEM_KEY, 0};
	while ((u64)c->nsearch < reads) {
		if ((r = search_step(tm, t, &c->sm, BTRFS_TREE_LOG_OBJECTID, key, BTRFS_LOCK_READ,
				     COST(tm, COST_LEAF_READ, 1), WORK_LOG)) <= 0)
			return r;
		c->nsearch++;
	}
	if ((u64)c->nsearch == reads) {
		c->nsearch++;
		u64 all = COST(tm, COST_LOG_TREE, 1) + COST(tm, COST_LOG_SEARCH, n) + items;
		u64 rest = unlocked_part(all, COST(tm, COST_LEAF_READ, reads) + COST(tm, COST_LEAF_WRITE, n) + items +
						      btrfs_lock_replay_ns(&tm->locks, &c->rp, BTRFS_TREE_LOG_OBJECTID));
		if (rest) {
			sched_cpu(tm->s, t, rest, WORK_LOG);
			return 0;
		}
	}
	while ((u64)c->nsearch <= reads + n) {
		/* the log blocks this fsync COWed (the first of its log
		 * transaction: they were written by the last log sync) or split,
		 * locked before its inserts */
		if (c->sm.pc == 0 && !c->sm.pl.active && c->rp.i < c->rp.n &&
		    (r = btrfs_lock_replay(&tm->locks, t, &c->rp, BTRFS_TREE_LOG_OBJECTID, NULL)) <= 0)
			return r;
		if (c->sm.pc == 0) {
			if ((r = btrfs_path_lock(&tm->locks, t, &c->sm.pl, BTRFS_TREE_LOG_OBJECTID, key.objectid, key.type, key.offset,
						 BTRFS_LOCK_WRITE)) <= 0)
				return r;
			for (; c->log_allocs > 0; c->log_allocs--)
				if ((r = log_alloc_step(tm, t, &c->ev)) <= 0)
					return r;
		}
		if ((r = search_step(tm, t, &c->sm, BTRFS_TREE_LOG_OBJECTID, key, BTRFS_LOCK_WRITE,
				     COST(tm, COST_LEAF_WRITE, 1) + items / n, WORK_LOG)) <= 0)
			return r;
		c->nsearch++;
	}
	c->nsearch = 0;
	return 1;
}

/* Leaves the transaction (an fsync's handle, held through its log sync). */
static void trans_leave(struct timed *tm, struct thread_ctx *c)
{
	if (c->in_trans) {
		c->in_trans = 0;
		tm->trans_writers--;
		sched_wake_all(tm->s, &tm->writers_wq);
	}
}

static int pages_under_writeback(struct btrfs_fs_info *fs, u64 ino, u64 off, u64 len)
{
	return btrfs_ordered_io_pending(fs, ino, off, off + len);
}

static int start_writeback(struct timed *tm, struct thread_ctx *c, u64 ino)
{
	c->noes = 0;
	if (ino)
		return btrfs_start_delalloc(tm->fs, tm->fs->fs_root, ino, 0, (u64)-1, &c->oes, &c->noes);
	u64 *inos;
	size_t n;
	int ret = btrfs_dirty_inodes_all(tm->fs, &inos, &n);
	for (size_t i = 0; !ret && i < n; i++)
		ret = btrfs_start_delalloc(tm->fs, btrfs_ikey_root(tm->fs, inos[i]), btrfs_ikey_ino(inos[i]), 0, (u64)-1, &c->oes, &c->noes);
	free(inos);
	return ret;
}

/* One logged fsync's fs leaves, added to a count (timed.logLeaves, a bonnie phase's). */
static void log_leaves_add(struct timed_log_leaves *l, const struct btrfs_log_stats *ls)
{
	l->fsyncs++;
	l->read += ls->fs_leaves_read;
	l->cloned += ls->fs_leaves_cloned;
}

static int thread_step(struct sched *s, struct sched_task *t)
{
	struct thread_ctx *c = t->ctx;
	struct timed *tm = c->tm;
	struct btrfs_fs_info *fs = tm->fs;
	u32 ss = fs->sectorsize;
	int ret, r;
	for (;;) {
		switch (c->pc) {
		case T_NEXT:
			if (tm->turn < tm->nschedule && tm->schedule[tm->turn] != c->index) {
				sched_wait(s, t, &tm->turn_wq, WAIT_SCHEDULE, (u64)tm->schedule[tm->turn]);
				return 0;
			}
			memset(&c->op, 0, sizeof(c->op));
			c->moved[0] = c->moved[1] = 0;
			if ((ret = tm->next(tm->ctx, c->index, &c->op)))
				return ret;
			if (c->op.kind == TOP_END) {
				tm->threads_done++;
				sched_exit(s, t);
				if (tm->turn < tm->nschedule) {
					tm->turn = tm->nschedule; /* a thread the schedule names has ended: the policy decides from here */
					sched_wake_all(s, &tm->turn_wq);
				}
				return 0;
			}
			if (tm->turn < tm->nschedule) {
				tm->turn++;
				sched_wake_all(s, &tm->turn_wq);
			}
			c->op_start = sched_now(s);
			fs_trace(fs, (struct trace_event){.kind = TRACE_TASK_OP, .slot = t->id, .a = (u64)c->op.line,
							  .level = c->op.kind, .bytenr = c->op.ino, .c = c->op.off, .b = c->op.len});
			c->pc = T_BEGIN;
			c->busy = 1;
			sched_cpu(s, t, c->op.kind == TOP_SLEEP ? 0 : COST(tm, COST_SYSCALL, 1), WORK_SYSCALL);
			return 0;
		case T_BEGIN:
			/* the inode locks the VFS (a namespace command) or btrfs (a write)
			 * takes first, held to the command's end */
			while (c->nilocked < c->op.nilock) {
				struct sched_lock *lk = ilock_get(tm, c->op.ilock[c->nilocked]);
				if (!lk)
					return fail(tm, BLAB_ENOMEM, "out of memory");
				c->nilocked++;
				if (!sched_lock(s, t, lk, BTRFS_LOCK_WRITE))
					return 0;
			}
			switch (c->op.kind) {
			case TOP_WRITE:
				c->pc = T_WRITE_RESERVE;
				c->rsv_step = 0;
				break;
			case TOP_FSYNC:
				c->pc = T_F_START;
				break;
			case TOP_SYNC:
				c->pc = T_SYNC_SUBMIT;
				break;
			case TOP_META:
				c->pc = T_META_RESERVE;
				break;
			case TOP_SLEEP:
				c->pc = T_SLEEP_DONE;
				sched_sleep(s, t, c->op.ns);
				return 0;
			default:
				return fail(tm, BLAB_EINVAL, "unknown command kind");
			}
			continue;
		case T_WRITE_RESERVE: {
			/* btrfs_buffered_write: the metadata for its extents, then its data */
			u64 data, meta;
			write_needs(tm, c->op.ino, c->op.off, c->op.len, &data, &meta);
			if (c->rsv_step == 0) {
				if ((r = space_reserve_step(tm, t, c, SPACE_METADATA, meta)) <= 0)
					return r;
				c->rsv_step = 1;
			}
			if ((r = space_reserve_step(tm, t, c, SPACE_DATA, data)) <= 0)
				return r;
			c->pc = T_WRITE_CHECK;
			continue;
		}
		case T_META_RESERVE:
			/* start_transaction(items): insert(items) and the delayed refs' part
			 * (btrfs_space_trans_bytes; sized at the first try: a ticket keeps it) */
			if (!c->meta_bytes)
				c->meta_bytes = btrfs_space_trans_bytes(fs, (u64)c->op.items);
			if ((r = space_reserve_step(tm, t, c, SPACE_METADATA, c->meta_bytes)) <= 0)
				return r;
			c->meta_bytes = 0;
			c->pc = c->op.ino ? T_META_FLUSH : T_META_JOIN;
			continue;
		case T_WRITE_CHECK: {
			/* stable pages: a page under writeback is not changed until its bio completes */
			if (pages_under_writeback(fs, c->op.ino, c->op.off, c->op.len)) {
				sched_wait(s, t, &tm->io_wq, WAIT_WRITEBACK, c->op.ino);
				return 0;
			}
			/* nor a page an ordered extent still covers, until that completes */
			if ((c->wait_oe = ordered_under_write(fs, &c->op))) {
				sched_wait(s, t, &c->oe_wq, WAIT_ORDERED, c->op.ino);
				return 0;
			}
			u64 pages = (c->op.off + c->op.len + ss - 1) / ss - c->op.off / ss;
			c->pc = T_WRITE_DONE;
			sched_cpu(s, t, COST(tm, COST_PAGE_COPY, pages), WORK_PAGE_COPY);
			return 0;
		}
		case T_WRITE_DONE:
			/* the kernel holds the pages locked from the check through the copy, so
			 * no writeback starts on them meanwhile; here, one that did sends the
			 * write back to wait (and copy) again */
			if (ordered_under_write(fs, &c->op)) {
				c->pc = T_WRITE_CHECK;
				continue;
			}
			if (tm->committing) { /* the inode update joins the transaction */
				sched_wait(s, t, &tm->trans_wq, WAIT_TRANSACTION, fs->generation);
				return 0;
			}
			if ((ret = btrfs_start_transaction(fs)) ||
			    (ret = btrfs_buffered_write(fs, fs->fs_root, c->op.ino, c->op.off, c->op.data, c->op.len)))
				return ret;
			op_release(tm, c); /* the write holds its own reservations now */
			tm->st->bytes_written += c->op.len;
			/* the inode item's update (btrfs_dirty_inode) */
			c->pc = T_WRITE_UPDATE;
			continue;
		case T_WRITE_UPDATE: {
			/* btrfs_update_inode goes to the inode's delayed node, under its
			 * mutex, not into its leaf (the kernel's trace: a write takes no
			 * tree lock); the delayed-items worker, a commit or a full fsync
			 * writes it into the leaf later */
			struct delayed_node *n = dnode_get(tm, c->op.ino);
			if (!n)
				return fail(tm, BLAB_ENOMEM, "out of memory");
			if (!c->sub) {
				c->sub = 1;
				if (!sched_lock(s, t, &n->mutex, BTRFS_LOCK_WRITE))
					return 0;
			}
			if (c->sub == 1) {
				c->sub = 2;
				sched_cpu(s, t, COST(tm, COST_INODE_UPDATE, 1), WORK_META);
				return 0;
			}
			c->sub = 0;
			sched_unlock(s, t, &n->mutex, BTRFS_LOCK_WRITE);
			c->pc = T_THROTTLE;
			continue;
		}
		case T_THROTTLE: {
			u64 dirty = btrfs_dirty_bytes(fs, 0), held = dirty + btrfs_ordered_bytes(fs, 0, NULL);
			if (held > tm->st->dirty_peak)
				tm->st->dirty_peak = held;
			if (dirty > tm->cfg->dirty_background_bytes || dirty > tm->cfg->dirty_bytes)
				sched_wake_all(s, &tm->flusher_wq);
			if (dirty > tm->cfg->dirty_bytes) {
				sched_wait(s, t, &tm->throttle_wq, WAIT_DIRTY_THROTTLE, dirty);
				return 0;
			}
			c->pc = T_END;
			continue;
		}
		case T_F_START:
			c->ino = c->op.ino;
			c->prealloced = 0;
			c->clones = 0;
			tm->log_batch++; /* btrfs_sync_file's atomic_inc(&root->log_batch): a log sync batching now waits a round more */
			if ((ret = start_writeback(tm, c, c->ino)))
				return ret;
			if (c->noes)
				c->csum_bytenr = c->oes[0]->disk_bytenr;
			c->pc = T_F_SUBMIT;
			sched_cpu(s, t, writeback_cost(tm, c->oes, c->noes, ss), WORK_WRITEBACK);
			return 0;
		case T_F_SUBMIT:
			if ((ret = submit_oes(tm, t, c->oes, c->noes)))
				return ret;
			c->pc = T_F_WRITEBACK;
			continue;
		case T_F_WRITEBACK:
			if (wb_pending(fs, c->ino)) {
				sched_wait(s, t, &tm->io_wq, WAIT_WRITEBACK, c->ino);
				return 0;
			}
			c->pc = T_F_ORDERED;
			continue;
		case T_F_ORDERED:
			if ((btrfs_fsync_wait_mode(fs) == BTRFS_FSYNC_WAIT_ORDERED ||
			     btrfs_log_needs_full_sync(fs, fs->fs_root, c->ino)) &&
			    (c->wait_oe = last_ordered(fs, c->ino))) {
				sched_wait(s, t, &c->oe_wq, WAIT_ORDERED, c->ino);
				return 0;
			}
			c->pc = T_F_JOIN;
			continue;
		case T_F_JOIN:
			if (!c->prealloced) {
				/* copying from fs leaves (a full sync): seed 000's fix allocates the
				 * extent buffer now, before locking a leaf or joining the log */
				c->prealloced = 1;
				/* a full sync, or a directory (its index items are copied
				 * from fs leaves whenever it is logged) */
				struct btrfs_inode in;
				c->is_dir = !btrfs_read_inode(fs, fs->fs_root, c->ino, &in) && (in.mode & S_IFMT_) == S_IFDIR_;
				c->full = btrfs_log_needs_full_sync(fs, fs->fs_root, c->ino) || c->is_dir;
				fs->err.code = 0;
				if (c->full && tm->cfg->log_copy == LOG_COPY_PREALLOC) {
					eb_alloc(tm, t);
					return 0;
				}
			}
			if (tm->committing) {
				sched_wait(s, t, &tm->trans_wq, WAIT_TRANSACTION, fs->generation);
				return 0;
			}
			if (tm->log_mutex && tm->log_mutex != t->id + 1) {
				/* start_log_trans: the log mutex a log sync holds */
				sched_wait(s, t, &tm->log_mutex_wq, WAIT_LOG_MUTEX, tm->log_transid);
				return 0;
			}
			if ((ret = btrfs_start_transaction(fs)))
				return ret;
			c->in_trans = 1;
			tm->trans_writers++;
			c->my_lt = tm->log_transid;
			tm->log_writers[c->my_lt & 1]++;
			tm->log_batch++;
			if (!tm->log_start_task)
				tm->log_start_task = t->id + 1;
			else if (tm->log_start_task != t->id + 1)
				tm->log_multi = 1; /* the kernel's BTRFS_ROOT_MULTI_LOG_TASKS */
			memset(&c->ls, 0, sizeof(c->ls));
			c->ls.ino = c->ino;
			btrfs_lock_replay_record(&tm->locks);
			ret = btrfs_log_dentry_nosync(fs, fs->fs_root, c->ino, &c->ls);
			btrfs_lock_replay_take(&tm->locks, &c->rp);
			if (ret)
				return ret;
			c->fallback = c->ls.fallback;
			tm->st->fsyncs++;
			if (!c->fallback) {
				struct timed_state *ts = tm->st;
				log_leaves_add(&ts->log_leaves, &c->ls);
				if (ts->bonnie_phase_now > 0 && ts->bonnie_phase_now <= TIMED_BONNIE_PHASES)
					log_leaves_add(&ts->bonnie_leaves[ts->bonnie_phase_now - 1], &c->ls);
			}
			if (c->ls.ordered_logged)
				tm->st->fsyncs_logged++;
			c->pc = T_F_DELAYED;
			c->df.pc = 0;
			continue;
		case T_F_DELAYED: {
			/* btrfs_log_inode: a full sync's delayed inode goes into the fs
			 * tree before its items are read. A directory's delayed items
			 * stay queued: its logging copies them from the delayed node
			 * (since v6.1, "btrfs: use delayed items when logging a
			 * directory"; before, it flushed them first) */
			struct delayed_node **dn = u64map_get(&tm->dnodes, c->ino);
			if (dn && (c->df.pc || (dnode_items(*dn) && c->full && !c->is_dir))) {
				c->df.n = *dn;
				if ((r = dflush_step(tm, t, &c->df)) <= 0)
					return r;
			}
			c->pc = T_F_LOGGED;
			continue;
		}
		case T_F_LOGGED:
			if (tm->cfg->tree_locks == TREE_LOCKS_PATH && !(c->full && tm->cfg->log_copy == LOG_COPY_DIRECT)) {
				/* the fs tree searches of logging, read-locked: the first copies
				 * the inode's leaf (into the clone, or its extent buffer), with
				 * log_copy=clone allocating that clone under the lock; the time
				 * of logging the inodes outside them */
				u64 reads = FSYNC_FS_READS * (c->ls.inodes_logged ? c->ls.inodes_logged : 1);
				while ((u64)c->nsearch < reads) {
					struct btrfs_key key = {c->ino, BTRFS_INODE_ITEM_KEY, 0};
					if (c->nsearch == 0 && c->sm.pc == 0 && c->full && tm->cfg->log_copy == LOG_COPY_CLONE &&
					    c->clones < c->ls.fs_leaves_cloned) {
						/* before seed 000's fix: each subvolume leaf copied from is
						 * cloned under its read lock (copy_items, process_dir_items_leaf);
						 * search_step then finds the path held */
						if ((r = btrfs_path_lock(&tm->locks, t, &c->sm.pl, BTRFS_FS_TREE_OBJECTID, key.objectid, key.type,
									 key.offset, BTRFS_LOCK_READ)) <= 0)
							return r;
						c->clones++;
						eb_alloc(tm, t);
						return 0;
					}
					/* a leaf cloned by each search, from the first (any more than
					 * searches, by the first) */
					u64 cloned = c->ls.fs_leaves_cloned, more = cloned > reads ? cloned - reads : 0;
					u64 leaf = COST(tm, COST_LEAF_READ, 1) + COST(tm, COST_LEAF_CLONE, (u64)c->nsearch < cloned) +
						   (c->nsearch == 0 ? COST(tm, COST_LOG_FS_LEAF, c->ls.fs_leaves_read) + COST(tm, COST_LEAF_CLONE, more) : 0);
					if ((r = search_step(tm, t, &c->sm, BTRFS_FS_TREE_OBJECTID, key, BTRFS_LOCK_READ, leaf, WORK_LOG)) <= 0)
						return r;
					c->nsearch++;
				}
				if ((u64)c->nsearch == reads) {
					c->nsearch++;
					u64 rest = unlocked_part(COST(tm, COST_LOG_INODE, c->ls.inodes_logged), COST(tm, COST_LEAF_READ, reads));
					if (rest) {
						sched_cpu(s, t, rest, WORK_LOG);
						return 0;
					}
				}
				c->nsearch = 0;
				c->pc = T_F_LOG_LOCK;
				continue;
			}
			/* reading the inode's items from the fs tree */
			if ((r = btrfs_path_lock(&tm->locks, t, &c->pl, BTRFS_FS_TREE_OBJECTID, c->ino, BTRFS_INODE_ITEM_KEY, 0,
						BTRFS_LOCK_READ)) <= 0)
				return r;
			if (c->full && tm->cfg->log_copy == LOG_COPY_CLONE && c->clones < c->ls.fs_leaves_cloned) {
				/* before seed 000's fix: each subvolume leaf copied from is
				 * cloned under its read lock (copy_items, process_dir_items_leaf) */
				c->clones++;
				eb_alloc(tm, t);
				return 0;
			}
			c->pc = T_F_LOG_LOCK;
			sched_cpu(s, t, COST(tm, COST_LOG_INODE, c->ls.inodes_logged) + COST(tm, COST_LOG_FS_LEAF, c->ls.fs_leaves_read),
				  WORK_LOG);
			return 0;
		case T_F_LOG_LOCK:
			if (c->full && tm->cfg->log_copy == LOG_COPY_DIRECT) {
				/* before 796787c978ef: the fs leaf stays read-locked while its items go into the log */
				c->fs_pl = c->pl;
				memset(&c->pl, 0, sizeof(c->pl));
			} else {
				btrfs_path_unlock(&tm->locks, t, &c->pl);
			}
			/* the first fsync of a log transaction COWs the log tree's path
			 * (its blocks were written by the last log sync): new blocks */
			c->log_allocs = tm->log_cowed != c->my_lt ? (int)c->ls.level + 1 : 0;
			tm->log_cowed = c->my_lt;
			c->ev.pc = 0;
			c->pc = T_F_LOG_CPU;
			c->sub = 0;
			continue;
		case T_F_LOG_CPU: {
			const int tree = tm->cfg->tree_locks == TREE_LOCKS_TREE;
			if (!tree && btrfs_log_tree_root(fs) && c->ls.log_searches) {
				if ((r = log_searches(tm, t, c)) <= 0)
					return r;
				if (c->fs_pl.active)
					btrfs_path_unlock(&tm->locks, t, &c->fs_pl);
				c->pc = T_F_CSUM_LOCK;
				continue;
			}
			/* inserting into the log tree, once under its write lock (with
			 * tree_locks=path, a tree with none: no log tree to walk yet);
			 * with tree_locks=tree, the checksums of completed extents are
			 * then looked up in the same section, under the csum tree's read
			 * lock too: log_one_extent logs each extent's checksums as it
			 * logs the extent */
			if (!c->sub) {
				if ((r = btrfs_path_lock(&tm->locks, t, &c->pl, BTRFS_TREE_LOG_OBJECTID, c->ino, BTRFS_INODE_ITEM_KEY, 0,
							BTRFS_LOCK_WRITE)) <= 0)
					return r;
				for (; c->log_allocs > 0; c->log_allocs--)
					if ((r = log_alloc_step(tm, t, &c->ev)) <= 0)
						return r;
				c->sub = 1;
			}
			if (c->sub == 1) {
				c->sub = 2;
				sched_cpu(s, t,
					  COST(tm, COST_LOG_TREE, 1) + COST(tm, COST_LOG_SEARCH, c->ls.log_searches) + log_items_ns(tm, c),
					  WORK_LOG);
				return 0;
			}
			if (c->sub == 2 && tree && c->ls.csum_items) {
				if ((r = btrfs_path_lock(&tm->locks, t, &c->csum_pl, BTRFS_CSUM_TREE_OBJECTID, BTRFS_EXTENT_CSUM_OBJECTID,
							 BTRFS_EXTENT_CSUM_KEY, c->csum_bytenr, BTRFS_LOCK_READ)) <= 0)
					return r;
				c->sub = 3;
				sched_cpu(s, t, COST(tm, COST_LOG_CSUM_LOOKUP, c->ls.csum_items), WORK_LOG_CSUM);
				return 0;
			}
			if (c->csum_pl.active)
				btrfs_path_unlock(&tm->locks, t, &c->csum_pl);
			btrfs_path_unlock(&tm->locks, t, &c->pl);
			c->sub = 0;
			if (c->fs_pl.active)
				btrfs_path_unlock(&tm->locks, t, &c->fs_pl);
			c->pc = tree ? T_F_LOG_END : T_F_CSUM_LOCK;
			continue;
		}
		case T_F_CSUM_LOCK:
			if (!c->ls.csum_items) {
				c->pc = T_F_LOG_END;
				continue;
			}
			/* checksums of completed extents come from the csum tree, under its read lock */
			c->pc = T_F_CSUM_CPU;
			continue;
		case T_F_CSUM_CPU: {
			/* (tree_locks=path) the lookups' time, then one read-locked search of the csum tree */
			if (!c->nsearch) {
				c->nsearch = 1;
				u64 rest = unlocked_part(COST(tm, COST_LOG_CSUM_LOOKUP, c->ls.csum_items), COST(tm, COST_LEAF_READ, 1));
				if (rest) {
					sched_cpu(s, t, rest, WORK_LOG_CSUM);
					return 0;
				}
			}
			struct btrfs_key key = {BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, c->csum_bytenr};
			if ((r = search_step(tm, t, &c->sm, BTRFS_CSUM_TREE_OBJECTID, key, BTRFS_LOCK_READ, COST(tm, COST_LEAF_READ, 1),
					     WORK_LOG_CSUM)) <= 0)
				return r;
			c->nsearch = 0;
			c->pc = T_F_LOG_END;
			continue;
		}
		case T_F_LOG_END:
			tm->log_writers[c->my_lt & 1]--;
			sched_wake_all(s, &tm->writers_wq);
			if (c->fallback == BTRFS_LOG_NOTHING) {
				trans_leave(tm, c);
				c->pc = T_END;
			} else if (c->fallback != BTRFS_LOG_LOGGED) {
				trans_leave(tm, c);
				tm->st->fsync_fallbacks++;
				c->pc = T_COMMIT;
			} else {
				c->pc = T_F_SYNC;
			}
			continue;
		case T_F_SYNC:
			if ((r = logsync_step(tm, t, &c->lm, c->my_lt, &c->own)) < 0)
				return r;
			if (!r)
				return 0;
			trans_leave(tm, c);
			c->pc = T_END;
			continue;
		case T_COMMIT:
			if ((r = commit_step(tm, t, &c->cm, &c->own)) < 0)
				return r;
			if (!r)
				return 0;
			c->pc = T_END;
			continue;
		case T_SYNC_SUBMIT:
			if ((ret = start_writeback(tm, c, 0)))
				return ret;
			c->pc = T_SYNC_WAIT;
			{
				u64 cost = writeback_cost(tm, c->oes, c->noes, ss);
				if ((ret = submit_oes(tm, t, c->oes, c->noes)))
					return ret;
				sched_cpu(s, t, cost, WORK_WRITEBACK);
			}
			return 0;
		case T_SYNC_WAIT: {
			size_t n;
			btrfs_ordered_list(fs, &n);
			if (n) {
				sched_wait(s, t, &tm->ordered_wq, WAIT_ORDERED, 0);
				return 0;
			}
			c->pc = T_COMMIT;
			continue;
		}
		case T_META_FLUSH:
			if ((ret = start_writeback(tm, c, c->op.ino)))
				return ret;
			c->pc = T_META_SUBMIT;
			sched_cpu(s, t, writeback_cost(tm, c->oes, c->noes, ss), WORK_WRITEBACK);
			return 0;
		case T_META_SUBMIT:
			if ((ret = submit_oes(tm, t, c->oes, c->noes)))
				return ret;
			c->pc = T_META_WAIT;
			continue;
		case T_META_WAIT:
			if (btrfs_ordered_count(fs, c->op.ino)) {
				sched_wait(s, t, &tm->ordered_wq, WAIT_ORDERED, c->op.ino);
				return 0;
			}
			c->pc = T_META_JOIN;
			continue;
		case T_META_JOIN:
			if (tm->committing) {
				sched_wait(s, t, &tm->trans_wq, WAIT_TRANSACTION, fs->generation);
				return 0;
			}
			c->pc = T_META_DONE;
			continue;
		case T_META_DONE:
			if (tm->cfg->tree_locks == TREE_LOCKS_PATH) {
				if ((r = meta_searches(tm, t, c)) <= 0)
					return r;
				op_release(tm, c);
				c->pc = T_END;
				continue;
			}
			/* the leaf of the inode it names (a new name: of the top directory) */
			if ((r = btrfs_path_lock(&tm->locks, t, &c->pl, BTRFS_FS_TREE_OBJECTID, c->op.ino ? c->op.ino : BTRFS_FIRST_FREE_OBJECTID,
						BTRFS_INODE_ITEM_KEY, 0, BTRFS_LOCK_WRITE)) <= 0)
				return r;
			if (c->op.meta) {
				/* the change, at the start of its time under the lock */
				if ((ret = meta_apply(tm, c)))
					return ret;
				sched_cpu(s, t, COST(tm, COST_META_OP, 1), WORK_META);
				return 0;
			}
			btrfs_path_unlock(&tm->locks, t, &c->pl);
			op_release(tm, c);
			c->pc = T_END;
			continue;
		case T_SLEEP_DONE:
			c->pc = T_END;
			continue;
		case T_END: {
			for (; c->nilocked > 0; c->nilocked--)
				sched_unlock(s, t, ilock_get(tm, c->op.ilock[c->nilocked - 1]), BTRFS_LOCK_WRITE);
			u64 d = sched_now(s) - c->op_start;
			timed_latency_add(&tm->st->lat[c->op.kind], d);
			c->busy = 0;
			fs_trace(fs, (struct trace_event){.kind = TRACE_TASK_OP_END, .slot = t->id, .a = (u64)c->op.line,
							  .level = c->op.kind, .bytenr = c->op.ino, .c = d});
			c->pc = T_NEXT;
			continue;
		}
		default:
			return fail(tm, BLAB_EINVAL, "thread state");
		}
	}
}

/* ---- kernel workers ---- */

struct worker_ctx {
	struct timed *tm;
	int pc, done;
	struct dflush_m df;
	/* a reclaim worker: its space, flush state, commit cycles; shrink_delalloc's pass */
	int kind, state, commit_cycles, sub, loops, wait_ordered, chunk_added;
	u64 to_reclaim, tid, granted, budget, nodes;
	u64 oe;
	struct btrfs_path_lock pl;
	struct search_m sm; /* tree_locks=path: the search under way, and how many are done */
	int nsearch;
	struct commit_m cm;
	struct sched_wq own;
	struct btrfs_ordered_extent **oes;
	size_t noes;
};

static int finish_step(struct sched *s, struct sched_task *t)
{
	struct worker_ctx *w = t->ctx;
	struct timed *tm = w->tm;
	struct btrfs_fs_info *fs = tm->fs;
	int ret;
	for (;;) {
		switch (w->pc) {
		case 0:
			if (tm->whead == tm->nwork) {
				tm->whead = tm->nwork = 0;
				sched_wait(s, t, &tm->work_wq, WAIT_WORK, 0);
				return 0;
			}
			w->oe = tm->work[tm->whead++];
			tm->finish_busy++;
			w->pc = 1;
			continue;
		case 1:
			if (tm->commit_doing) {
				sched_wait(s, t, &tm->trans_wq, WAIT_TRANSACTION, fs->generation);
				return 0;
			}
			tm->trans_writers++;
			w->pc = 2;
			continue;
		case 2:
			if (tm->cfg->tree_locks == TREE_LOCKS_PATH) {
				/* the completion's time outside its searches, then the searches */
				struct btrfs_ordered_extent *oe = btrfs_ordered_by_id(fs, w->oe);
				u64 pages = oe ? oe->num_bytes / fs->sectorsize : 1;
				u64 all = COST(tm, COST_FINISH_FS, 1) + COST(tm, COST_FINISH_FS_PAGE, pages) + COST(tm, COST_FINISH_CSUM, 1);
				u64 rest = unlocked_part(all, COST(tm, COST_LEAF_READ, FINISH_FS_READS) + COST(tm, COST_LEAF_WRITE, FINISH_FS_WRITES + 1));
				w->pc = 7;
				w->nsearch = 0;
				if (rest) {
					sched_cpu(s, t, rest, WORK_FINISH_FS);
					return 0;
				}
				continue;
			}
			{
				/* the file extent item goes in, under its leaf's write lock */
				struct btrfs_ordered_extent *oe = btrfs_ordered_by_id(fs, w->oe);
				if ((ret = btrfs_path_lock(&tm->locks, t, &w->pl, BTRFS_FS_TREE_OBJECTID, oe ? oe->ino : 0, BTRFS_EXTENT_DATA_KEY,
							  oe ? oe->file_offset : 0, BTRFS_LOCK_WRITE)) <= 0)
					return ret;
				w->pc = 3;
				u64 pages = oe ? oe->num_bytes / fs->sectorsize : 1;
				sched_cpu(s, t, COST(tm, COST_FINISH_FS, 1) + COST(tm, COST_FINISH_FS_PAGE, pages), WORK_FINISH_FS);
			}
			return 0;
		case 3:
			btrfs_path_unlock(&tm->locks, t, &w->pl);
			w->pc = 4;
			continue;
		case 4: {
			/* its checksums, under the csum leaf's write lock */
			struct btrfs_ordered_extent *oe = btrfs_ordered_by_id(fs, w->oe);
			if ((ret = btrfs_path_lock(&tm->locks, t, &w->pl, BTRFS_CSUM_TREE_OBJECTID, BTRFS_EXTENT_CSUM_OBJECTID,
						  BTRFS_EXTENT_CSUM_KEY, oe ? oe->disk_bytenr : 0, BTRFS_LOCK_WRITE)) <= 0)
				return ret;
			w->pc = 5;
			sched_cpu(s, t, COST(tm, COST_FINISH_CSUM, 1), WORK_FINISH_CSUM);
			return 0;
		}
		case 5:
			btrfs_path_unlock(&tm->locks, t, &w->pl);
			w->pc = 6;
			sched_cpu(s, t, COST(tm, COST_FINISH_REST, 1), WORK_FINISH_REST);
			return 0;
		case 6: {
			struct btrfs_ordered_extent *oe = btrfs_ordered_by_id(fs, w->oe);
			if (oe && ((ret = btrfs_start_transaction(fs)) || (ret = btrfs_finish_ordered_io(fs, oe))))
				return ret;
			tm->trans_writers--;
			tm->finish_busy--;
			sched_wake_all(s, &tm->writers_wq);
			sched_wake_all(s, &tm->ordered_wq);
			wake_oe_waiters(tm, w->oe);
			space_grant(tm); /* its extent's metadata reservation is released */
			w->pc = 0;
			continue;
		}
		case 7: {
			/* tree_locks=path: its searches, as the kernel's trace shows them: the
			 * fs tree read-locked, then write-locked for the file extent item and
			 * for the inode item, then the csum tree write-locked */
			struct btrfs_ordered_extent *oe = btrfs_ordered_by_id(fs, w->oe);
			struct btrfs_key fe = {oe ? oe->ino : 0, BTRFS_EXTENT_DATA_KEY, oe ? oe->file_offset : 0};
			struct btrfs_key ii = {oe ? oe->ino : 0, BTRFS_INODE_ITEM_KEY, 0};
			struct btrfs_key cs = {BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, oe ? oe->disk_bytenr : 0};
			while (w->nsearch < FINISH_FS_READS + FINISH_FS_WRITES + 1) {
				int k = w->nsearch, csum = k == FINISH_FS_READS + FINISH_FS_WRITES, read = k < FINISH_FS_READS;
				if ((ret = search_step(tm, t, &w->sm, csum ? BTRFS_CSUM_TREE_OBJECTID : BTRFS_FS_TREE_OBJECTID,
						       csum ? cs : k == FINISH_FS_READS + 1 ? ii : fe, read ? BTRFS_LOCK_READ : BTRFS_LOCK_WRITE,
						       COST(tm, read ? COST_LEAF_READ : COST_LEAF_WRITE, 1), csum ? WORK_FINISH_CSUM : WORK_FINISH_FS)) <= 0)
					return ret;
				w->nsearch++;
			}
			w->pc = 5;
			continue;
		}
		default:
			return fail(tm, BLAB_EINVAL, "worker state");
		}
	}
}

static int flusher_tick(struct sched *s, void *arg, u64 id)
{
	struct timed *tm = arg;
	(void)id;
	sched_wake_all(s, &tm->flusher_wq);
	return sched_at(s, 5ULL * 1000000000ULL, flusher_tick, tm, 0); /* dirty_writeback_centisecs = 500 */
}

static int flusher_step(struct sched *s, struct sched_task *t)
{
	struct worker_ctx *w = t->ctx;
	struct timed *tm = w->tm;
	struct btrfs_fs_info *fs = tm->fs;
	int ret;
	for (;;) {
		switch (w->pc) {
		case 0: {
			u64 ino;
			if (!btrfs_dirty_inodes(fs, &ino, 1)) {
				tm->flusher_busy = 0;
				sched_wake_all(s, &tm->throttle_wq);
				sched_wait(s, t, &tm->flusher_wq, WAIT_WORK, 0);
				return 0;
			}
			u64 bg = tm->cfg->dirty_background_bytes < tm->cfg->dirty_bytes ? tm->cfg->dirty_background_bytes : tm->cfg->dirty_bytes;
			int over = btrfs_dirty_bytes(fs, 0) > bg;
			int expired = btrfs_inode_dirtied_at(fs, ino) + 30ULL * 1000000000ULL <= sched_now(s);
			if (!over && !expired) {
				tm->flusher_busy = 0;
				sched_wake_all(s, &tm->throttle_wq);
				sched_wait(s, t, &tm->flusher_wq, WAIT_WORK, 0);
				return 0;
			}
			tm->flusher_busy = 1;
			w->noes = 0;
			if ((ret = btrfs_start_delalloc(fs, btrfs_ikey_root(fs, ino), btrfs_ikey_ino(ino), 0, (u64)-1, &w->oes, &w->noes)))
				return ret;
			w->pc = 1;
			sched_cpu(s, t, writeback_cost(tm, w->oes, w->noes, fs->sectorsize), WORK_WRITEBACK);
			return 0;
		}
		default:
			if ((ret = submit_oes(tm, t, w->oes, w->noes)))
				return ret;
			sched_wake_all(s, &tm->throttle_wq);
			w->pc = 0;
			continue;
		}
	}
}

/* btrfs-delayed-meta (btrfs_async_run_delayed_root): woken when the pending
 * delayed items pass the background mark, it flushes the oldest nodes, a
 * batch at a time, while at least half the mark is pending, inside the
 * running transaction. */
static int delayed_step(struct sched *s, struct sched_task *t)
{
	struct worker_ctx *w = t->ctx;
	struct timed *tm = w->tm;
	for (;;) {
		switch (w->pc) {
		case 0:
			w->df.n = w->done < DELAYED_BATCH && tm->delayed_items >= tm->cfg->delayed_background / 2 ? dnode_oldest(tm, 0) : NULL;
			if (!w->df.n || !tm->fs->trans_running) {
				w->done = 0;
				tm->delayed_busy = 0;
				sched_wait(s, t, &tm->delayed_wq, WAIT_WORK, 0);
				return 0;
			}
			tm->delayed_busy = 1;
			if (tm->committing) {
				sched_wait(s, t, &tm->trans_wq, WAIT_TRANSACTION, tm->fs->generation);
				return 0;
			}
			tm->trans_writers++;
			w->df.pc = 0;
			w->pc = 1;
			/* fallthrough */
		default: {
			int r = dflush_step(tm, t, &w->df);
			if (r <= 0)
				return r;
			tm->trans_writers--;
			sched_wake_all(s, &tm->writers_wq);
			w->done++;
			w->pc = 0;
			continue;
		}
		}
	}
}

/* ---- the reclaim workers (btrfs_async_reclaim_metadata_space and
 * btrfs_async_reclaim_data_space): flush states in the kernel's order
 * until the tickets are granted, or they fail ---- */

/* The metadata states in order (5.15+): the full delalloc flush and the
 * forced chunk only once a commit cycle has passed. 0 after the last. */
static int next_meta_state(int state, int commit_cycles)
{
	for (int s = state + 1; s < FLUSH_STATES; s++)
		if ((s != FLUSH_DELALLOC_FULL && s != ALLOC_CHUNK_FORCE) || commit_cycles)
			return s;
	return 0;
}

/* data_flush_states (5.15+) after the forced chunks */
static const int data_states[] = {FLUSH_DELALLOC_FULL, RUN_DELAYED_IPUTS, COMMIT_TRANS};

static int next_state(const struct worker_ctx *w)
{
	if (w->kind == SPACE_METADATA)
		return next_meta_state(w->state, w->commit_cycles);
	for (size_t i = 0; i + 1 < sizeof(data_states) / sizeof(data_states[0]); i++)
		if (data_states[i] == w->state)
			return data_states[i + 1];
	return w->state == ALLOC_CHUNK_FORCE ? data_states[0] : 0;
}

/* A chunk for kind if the device has room for one (force), or also only
 * when the space is nearly full (80%, should_alloc_chunk): 1 when one was
 * added, 0 when not, or an error. */
static int reclaim_alloc_chunk(struct timed *tm, int kind, int force)
{
	struct btrfs_fs_info *fs = tm->fs;
	struct btrfs_space_info si;
	btrfs_space_info_get(fs, kind, &si);
	u64 type = kind == SPACE_DATA ? BTRFS_BLOCK_GROUP_DATA : BTRFS_BLOCK_GROUP_METADATA;
	u64 size = btrfs_chunk_size_for(fs, type), logical;
	type |= si.flags & BTRFS_BLOCK_GROUP_DUP;
	if (si.unallocated < size * ((type & BTRFS_BLOCK_GROUP_DUP) ? 2 : 1))
		return 0;
	if (!force && si.used + si.reserved + si.pinned + si.readonly + (2ULL << 20) < si.total / 10 * 8)
		return 0;
	int ret = btrfs_start_transaction(fs);
	if (!ret && !(ret = btrfs_alloc_chunk(fs, type, size, &logical))) {
		space_event(tm, kind);
		return 1;
	}
	if (ret == BLAB_ENOSPC) {
		fs->err.code = 0;
		ret = 0;
	}
	return ret;
}

/* shrink_delalloc: write back delalloc (a page budget, or whole inodes
 * before the fix), then wait for its ordered extents or sleep a tick; up
 * to three passes while tickets wait. 1 when done, 0 when t waits or
 * computes, or an error. */
static int shrink_delalloc_step(struct timed *tm, struct sched_task *t, struct worker_ctx *w)
{
	struct sched *s = tm->s;
	struct btrfs_fs_info *fs = tm->fs;
	int full = w->state == FLUSH_DELALLOC_FULL, ret;
	for (;;) {
		switch (w->sub) {
		case 0: {
			u64 delalloc = btrfs_dirty_bytes(fs, 0), ordered = btrfs_ordered_bytes(fs, 0, NULL);
			if ((!delalloc && !ordered) || w->loops >= 3 || (w->loops && !tm->ntq[w->kind]))
				return w->sub = 0, w->loops = 0, 1;
			if (!w->loops)
				w->wait_ordered = w->state != FLUSH_DELALLOC || ordered > delalloc;
			u64 *inos;
			size_t n;
			if ((ret = btrfs_dirty_inodes_all(fs, &inos, &n)))
				return ret;
			/* the budget: pages (5.15+: min(delalloc, max(to_reclaim, delalloc / 8))), or
			 * 2 x to_reclaim / insert(1) whole inodes (5.10) */
			int by_inodes = tm->cfg->shrink_delalloc == SHRINK_INODES;
			u64 items = w->to_reclaim / btrfs_calc_insert_metadata_size(fs, 1);
			u64 want = w->to_reclaim > delalloc / 8 ? w->to_reclaim : delalloc / 8;
			w->budget = full ? (u64)-1 : by_inodes ? 2 * (items ? items : 1) : (delalloc < want ? delalloc : want) / fs->sectorsize;
			u64 pages = 0, inodes = 0;
			w->noes = 0;
			for (size_t i = 0; i < n && (full || (by_inodes ? inodes < w->budget : pages < w->budget)); i++) {
				u64 before = btrfs_dirty_bytes(fs, inos[i]);
				/* a range started is written to its end (writepage_delalloc raises
				 * nr_to_write): 8192 pages at most, or the whole range under 16384 */
				u64 end = by_inodes || full || before < 16384ULL * fs->sectorsize ? (u64)-1 : 8192ULL * fs->sectorsize;
				if ((ret = btrfs_start_delalloc(fs, btrfs_ikey_root(fs, inos[i]), btrfs_ikey_ino(inos[i]), 0, end, &w->oes, &w->noes))) {
					free(inos);
					return ret;
				}
				pages += (before - btrfs_dirty_bytes(fs, inos[i])) / fs->sectorsize;
				inodes++;
			}
			free(inos);
			if (!full) {
				timed_latency_add(&tm->st->shrink_budget, w->budget);
				tm->st->shrink_calls++;
			}
			tm->st->shrink_pages += pages;
			tm->st->shrink_inodes += inodes;
			fs_trace(fs, (struct trace_event){.kind = TRACE_SHRINK_DELALLOC, .level = by_inodes, .a = w->budget, .b = pages, .c = inodes});
			w->loops++;
			w->sub = 1;
			sched_cpu(s, t, writeback_cost(tm, w->oes, w->noes, fs->sectorsize), WORK_WRITEBACK);
			return 0;
		}
		case 1:
			if ((ret = submit_oes(tm, t, w->oes, w->noes)))
				return ret;
			w->sub = 2;
			if (!w->wait_ordered) {
				/* schedule_timeout(1) */
				sched_sleep_jiffies(s, t, 1, tm->cfg->dev.jiffy_ns);
				return 0;
			}
			/* fallthrough */
		case 2:
			if (w->wait_ordered)
				for (size_t i = 0; i < w->noes; i++)
					if (btrfs_ordered_by_id(fs, w->oes[i]->id) == w->oes[i]) {
						sched_wait(s, t, &tm->ordered_wq, WAIT_ORDERED, 0);
						return 0;
					}
			w->noes = 0;
			w->sub = 0;
			continue;
		default:
			return fail(tm, BLAB_EINVAL, "shrink_delalloc state");
		}
	}
}

/* One flush state of w: 1 when done, 0 when t waits or computes, or an error. */
static int flush_state_step(struct timed *tm, struct sched_task *t, struct worker_ctx *w)
{
	struct btrfs_fs_info *fs = tm->fs;
	switch (w->state) {
	case FLUSH_DELAYED_ITEMS_NR:
	case FLUSH_DELAYED_ITEMS: {
		/* delayed nodes flushed: 2 x to_reclaim / insert(1) of them, or all */
		u64 items = w->to_reclaim / btrfs_calc_insert_metadata_size(fs, 1);
		u64 max = w->state == FLUSH_DELAYED_ITEMS ? (u64)-1 : 2 * (items ? items : 1);
		for (;;) {
			if (!w->df.pc) {
				if (w->nodes >= max || !(w->df.n = dnode_oldest(tm, 0)))
					return w->nodes = 0, 1;
				w->nodes++;
			}
			int r = dflush_step(tm, t, &w->df);
			if (r <= 0)
				return r;
		}
	}
	case FLUSH_DELAYED_REFS_NR:
	case FLUSH_DELAYED_REFS: {
		/* running delayed ref heads, calc_reclaim_items_nr(to_reclaim) of them
		 * (6.18: to_reclaim / delayed_ref_bytes(1)) or all:
		 * the reserve shrinks to what the rest need, the excess leaves may_use
		 * (the model's refs go into the extent tree at the commit; here the
		 * heads count as run, their reservation and their time) */
		if (!w->sub) {
			u64 items = w->to_reclaim / btrfs_calc_delayed_ref_bytes(fs, 1);
			u64 pending = btrfs_space_delayed_refs_pending(fs);
			u64 n = w->state == FLUSH_DELAYED_REFS ? pending : (items ? items : 1);
			if (n > pending)
				n = pending;
			fs->space.delayed_refs_ran += n;
			u64 size = btrfs_space_delayed_refs_size(fs), *part = &fs->space.delayed_refs_rsv;
			u64 b = *part > size ? *part - size : 0;
			*part -= b;
			btrfs_space_release(fs, SPACE_METADATA, b);
			if (!n)
				return 1;
			w->sub = 1;
			sched_cpu(tm->s, t, COST(tm, COST_META_OP, n), WORK_COMMIT);
			return 0;
		}
		w->sub = 0;
		return 1;
	}
	case RUN_DELAYED_IPUTS:
		/* the model has no delayed iputs */
		return 1;
	case FLUSH_DELALLOC:
	case FLUSH_DELALLOC_WAIT:
	case FLUSH_DELALLOC_FULL:
		return shrink_delalloc_step(tm, t, w);
	case ALLOC_CHUNK:
	case ALLOC_CHUNK_FORCE: {
		int ret = reclaim_alloc_chunk(tm, w->kind, w->state == ALLOC_CHUNK_FORCE);
		if (ret < 0)
			return ret;
		w->chunk_added = ret;
		return 1;
	}
	case COMMIT_TRANS:
		return commit_step(tm, t, &w->cm, &w->own);
	default:
		return fail(tm, BLAB_EINVAL, "flush state");
	}
}

/* The tickets of kind fail with ENOSPC (maybe_fail_all_tickets, less the steal). */
static void fail_tickets(struct timed *tm, int kind)
{
	while (tm->ntq[kind]) {
		struct space_ticket *tk = tm->tq[kind][0];
		memmove(tm->tq[kind], tm->tq[kind] + 1, --tm->ntq[kind] * sizeof(*tm->tq[kind]));
		tk->state = -1;
		tm->st->tickets_failed++;
		fs_trace(tm->fs, (struct trace_event){.kind = TRACE_RESERVE_TICKET, .slot = tk->t->id, .level = kind, .a = tk->bytes,
						      .b = sched_now(tm->s) - tk->start_ns, .c = 28});
		sched_wake_all(tm->s, &tk->c->own);
	}
}

static int reclaim_step(struct sched *s, struct sched_task *t)
{
	struct worker_ctx *w = t->ctx;
	struct timed *tm = w->tm;
	for (;;) {
		switch (w->pc) {
		case 0:
			if (!tm->ntq[w->kind]) {
				tm->reclaim_busy[w->kind] = 0;
				w->state = 0;
				w->commit_cycles = 0;
				sched_wait(s, t, &tm->reclaim_wq[w->kind], WAIT_WORK, 0);
				return 0;
			}
			tm->reclaim_busy[w->kind] = 1;
			if (!w->state) {
				if (w->kind == SPACE_METADATA)
					w->state = FLUSH_DELAYED_ITEMS_NR;
				else
					w->state = ALLOC_CHUNK_FORCE;
			}
			/* to_reclaim (btrfs_calc_reclaim_metadata_size): what the tickets
			 * ask, and what metadata is overcommitted past the limit now */
			w->to_reclaim = btrfs_space_overage(tm->fs, w->kind);
			for (size_t i = 0; i < tm->ntq[w->kind]; i++)
				w->to_reclaim += tm->tq[w->kind][i]->bytes;
			w->tid = tm->tickets_id[w->kind];
			w->sub = w->loops = 0;
			w->nodes = 0;
			w->df.pc = 0;
			w->pc = 1;
			/* fallthrough */
		default: {
			int r = flush_state_step(tm, t, w);
			if (r <= 0)
				return r;
			space_grant(tm);
			u64 granted = tm->tickets_id[w->kind] - w->tid;
			int st = w->state;
			int sk = w->kind == SPACE_METADATA;
			if (!tm->st->flush_runs[sk][st]++ && tm->st->nflush_order[sk] < 12)
				tm->st->flush_order[sk][tm->st->nflush_order[sk]++] = (u64)st;
			fs_trace(tm->fs, (struct trace_event){.kind = TRACE_FLUSH_SPACE, .level = w->kind, .slot = st,
							      .a = st == FLUSH_DELALLOC_FULL || w->kind == SPACE_DATA ? (u64)-1 : w->to_reclaim,
							      .b = granted});
			w->pc = 0;
			if (!tm->ntq[w->kind])
				continue;
			if (granted) {
				/* progress: from the first state again */
				w->state = 0;
				if (w->commit_cycles)
					w->commit_cycles--;
				continue;
			}
			if (w->kind == SPACE_DATA && st == ALLOC_CHUNK_FORCE && w->chunk_added)
				continue; /* forced chunks while the device has room for them */
			w->state = next_state(w);
			if (!w->state) {
				/* past the last state: another commit cycle, and after the third the tickets fail */
				if (++w->commit_cycles > 2) {
					fail_tickets(tm, w->kind);
					w->commit_cycles = 0;
				}
			}
			continue;
		}
		}
	}
}

static int transaction_step(struct sched *s, struct sched_task *t)
{
	struct worker_ctx *w = t->ctx;
	struct timed *tm = w->tm;
	struct btrfs_fs_info *fs = tm->fs;
	u64 interval = tm->cfg->commit_interval_ns;
	for (;;) {
		if (w->pc == 0) {
			u64 due = tm->st->trans_started_ns + interval, now = sched_now(s);
			if (!fs->trans_running || due > now) {
				w->pc = 0;
				sched_sleep(s, t, due > now ? due - now : interval);
				if (due <= now)
					tm->st->trans_started_ns = now;
				return 0;
			}
			w->pc = 1;
		}
		int r = commit_step(tm, t, &w->cm, &w->own);
		if (r <= 0)
			return r;
		w->pc = 0;
	}
}

/* ---- sections ---- */

static void timed_free(struct timed *tm, struct thread_ctx *threads, struct worker_ctx *workers, int nworkers)
{
	for (int i = 0; threads && i < tm->nthreads; i++) {
		sched_wq_free(&threads[i].own);
		sched_wq_free(&threads[i].oe_wq);
		free(threads[i].oes);
	}
	for (int i = 0; workers && i < nworkers; i++) {
		sched_wq_free(&workers[i].own);
		free(workers[i].oes);
	}
	free(threads);
	free(workers);
	struct sched_wq *wqs[] = {&tm->io_wq, &tm->ordered_wq, &tm->trans_wq, &tm->log_wq, &tm->writers_wq,
				  &tm->work_wq, &tm->flusher_wq, &tm->throttle_wq, &tm->turn_wq, &tm->log_mutex_wq, &tm->delayed_wq,
				  &tm->reclaim_wq[0], &tm->reclaim_wq[1]};
	for (size_t i = 0; i < sizeof(wqs) / sizeof(wqs[0]); i++)
		sched_wq_free(wqs[i]);
	btrfs_locks_free(&tm->locks);
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&tm->dnodes, &i, &k, &v)) {
		sched_lock_free(&(*(struct delayed_node **)v)->mutex);
		free(*(struct delayed_node **)v);
	}
	u64map_free(&tm->dnodes);
	i = 0;
	while (u64map_next(&tm->ilocks, &i, &k, &v)) {
		sched_lock_free(*(struct sched_lock **)v);
		free(*(struct sched_lock **)v);
	}
	u64map_free(&tm->ilocks);
	free(tm->tq[0]);
	free(tm->tq[1]);
	if (tm->fs->delayed_ctx == tm) {
		tm->fs->delayed_hook = NULL;
		tm->fs->delayed_ctx = NULL;
	}
	free(tm->work);
	bio_dev_destroy(tm->dev);
	sched_destroy(tm->s);
}

static int quiet(struct timed *tm)
{
	size_t n;
	btrfs_ordered_list(tm->fs, &n);
	return !n && !bio_busy(tm->dev) && tm->whead == tm->nwork && !tm->finish_busy && !tm->committing &&
	       !tm->log_syncing && !tm->flusher_busy;
}

struct stop_arg {
	int drain;
	u64 until;
};

static int section_done(struct sched *s, void *arg)
{
	struct timed *tm = arg;
	(void)s;
	if (tm->threads_done < tm->nthreads)
		return 0;
	return !tm->quit || quiet(tm);
}

static int run(struct btrfs_fs_info *fs, const struct timed_config *cfg, struct timed_state *st, int nthreads,
	       const char *const *names, timed_next_fn next, void *ctx, const int *schedule, size_t nschedule, int drain,
	       u64 sleep_ns)
{
	struct timed tm = {.fs = fs, .cfg = cfg, .st = st, .next = next, .ctx = ctx, .schedule = schedule,
			   .nschedule = nschedule, .nthreads = nthreads, .quit = drain, .log_transid = 1};
	tm.cpus = cfg->cpus ? cfg->cpus : cfg->dev.cpus;
	u64 start = fs->clock_ns;
	tm.s = sched_create(fs, tm.cpus, cfg->policy, cfg->seed ^ (st->sections * 0x9E3779B97F4A7C15ULL));
	tm.dev = tm.s ? bio_dev_create(tm.s, &cfg->dev) : NULL;
	if (tm.s) {
		sched_set_wakeup_ns(tm.s, COST(&tm, COST_WAKEUP, 1));
		sched_set_lock_spin(tm.s, 1); /* the kernel's rwsem: a waiter spins while the holder runs */
		sched_set_jitter(tm.s, cfg->dev.jitter_pct);
	}
	int nfinish = tm.cpus + 2 < 8 ? tm.cpus + 2 : 8, nworkers = nfinish + 5;
	struct thread_ctx *threads = calloc((size_t)(nthreads ? nthreads : 1), sizeof(*threads));
	struct worker_ctx *workers = calloc((size_t)nworkers, sizeof(*workers));
	btrfs_locks_init(&tm.locks, tm.s, fs, cfg->tree_locks);
	if (cfg->tree_locks == TREE_LOCKS_PATH) {
		tm.locks.acquire_ns = COST(&tm, COST_LOCK_ACQUIRE, 1);
		tm.locks.rng = cfg->seed * 0x2545F4914F6CDD1DULL + 7;
		tm.locks.level_ns = COST(&tm, COST_SEARCH_LEVEL, 1);
		tm.locks.probe_ns = COST(&tm, COST_LOCK_PROBE, 1);
		tm.locks.cow_ns = COST(&tm, COST_COW, 1);
		tm.locks.writeback_ns = COST(&tm, COST_WRITEBACK_LOCK, 1);
		tm.locks.shift_kib_ns = COST(&tm, COST_LEAF_SHIFT_KIB, 1);
		tm.locks.work = WORK_SEARCH;
	}
	u64map_init(&tm.dnodes, sizeof(struct delayed_node *));
	u64map_init(&tm.ilocks, sizeof(struct sched_lock *));
	tm.threads = threads;
	if (!tm.s || !tm.dev || !threads || !workers) {
		timed_free(&tm, threads, workers, nworkers);
		return blab_fail(&fs->err, BLAB_ENOMEM, "timed run");
	}
	if (!st->trans_started_ns && fs->trans_running)
		st->trans_started_ns = start;
	int ret = 0;
	char name[24];
	for (int i = 0; i < nfinish && !ret; i++) {
		workers[i].tm = &tm;
		snprintf(name, sizeof(name), "endio-write %d", i);
		if (!sched_spawn(tm.s, TASK_FINISH, i, name, finish_step, &workers[i]))
			ret = BLAB_ENOMEM;
	}
	workers[nfinish].tm = workers[nfinish + 1].tm = workers[nfinish + 2].tm = &tm;
	if (!ret && (!sched_spawn(tm.s, TASK_FLUSHER, 0, "flusher", flusher_step, &workers[nfinish]) ||
		     !sched_spawn(tm.s, TASK_TRANSACTION, 0, "transaction", transaction_step, &workers[nfinish + 1]) ||
		     sched_at(tm.s, 5ULL * 1000000000ULL - start % (5ULL * 1000000000ULL), flusher_tick, &tm, 0)))
		ret = BLAB_ENOMEM;
	for (int i = 0; i < nthreads && !ret; i++) {
		threads[i].tm = &tm;
		threads[i].index = i;
		if (!sched_spawn(tm.s, TASK_THREAD, i, names && names[i] ? names[i] : "thread", thread_step, &threads[i]))
			ret = BLAB_ENOMEM;
	}
	/* spawned after the threads: their task ids stay 0.. after the other workers */
	if (!ret && !sched_spawn(tm.s, TASK_DELAYED, 0, "delayed-meta", delayed_step, &workers[nfinish + 2]))
		ret = BLAB_ENOMEM;
	for (int k = 0; k < 2 && !ret; k++) {
		struct worker_ctx *w = &workers[nfinish + 3 + k];
		w->tm = &tm;
		w->kind = k == 0 ? SPACE_METADATA : SPACE_DATA;
		if (!sched_spawn(tm.s, TASK_RECLAIM, k, k == 0 ? "async reclaim metadata" : "async reclaim data", reclaim_step, w))
			ret = BLAB_ENOMEM;
	}
	if (!ret) {
		fs->delayed_hook = delayed_hook;
		fs->delayed_ctx = &tm;
	}
	if (ret) {
		timed_free(&tm, threads, workers, nworkers);
		return blab_fail(&fs->err, ret, "timed run: out of memory");
	}
	sched_set_budget(tm.s, st->events, cfg->max_events, cfg->cpu_deadline_s, cfg->max_cpu_s);
	if (sleep_ns) {
		tm.quit = 0;
		ret = sched_run(tm.s, NULL, NULL, start + sleep_ns);
		tm.quit = 1;
	}
	if (!ret)
		ret = sched_run(tm.s, section_done, &tm, fs->clock_ns + TIMED_LIMIT_NS);
	st->events = sched_events(tm.s);
	if (ret == BLAB_EDEADLK)
		for (size_t i = 0; i < sched_ntasks(tm.s); i++) {
			struct sched_task *t = sched_task(tm.s, (int)i);
			if (t->kind == TASK_THREAD && t->wants) {
				const struct thread_ctx *c = t->ctx;
				st->deadlock_line = c->op.line;
				st->deadlock_op = c->op.kind;
				break;
			}
		}
	if (!ret && (tm.threads_done < nthreads || (tm.quit && !quiet(&tm)))) {
		/* nothing moved for an hour of virtual time: say who waits for what */
		char who[512] = "";
		size_t len = 0;
		for (size_t i = 0; i < sched_ntasks(tm.s) && len + 80 < sizeof(who); i++) {
			struct sched_task *t = sched_task(tm.s, (int)i);
			if (t->blocked && t->cause != WAIT_WORK && (t->kind == TASK_THREAD || t->cause != WAIT_SLEEP))
				len += (size_t)snprintf(who + len, sizeof(who) - len, "%s%s waits for %s", len ? "; " : "", t->name,
							sched_wait_cause_name(t->cause));
		}
		ret = blab_fail(&fs->err, BLAB_EINVAL, "timed run: the section has not ended after an hour of virtual time (%s)",
				len ? who : "a deadlock");
	}
	if (!ret) {
		u64 w[WAIT_CAUSE_COUNT];
		sched_wait_totals(tm.s, w);
		for (int c = 0; c < WAIT_CAUSE_COUNT; c++)
			if (c != WAIT_WORK)
				st->waited[c] += w[c];
		const struct bio_stats *bs = bio_dev_stats(tm.dev);
		for (int o = 0; o < BIO_OP_COUNT; o++) {
			st->bios[o] += bs->bios[o];
			st->bio_bytes[o] += bs->bytes[o];
		}
		st->device_busy_ns += bs->busy_ns;
		u64 contended[2], wait_ns[2];
		btrfs_locks_stats(&tm.locks, contended, wait_ns);
		for (int i = 0; i < 2; i++) {
			st->lock_contended[i] += contended[i];
			st->lock_wait_ns[i] += wait_ns[i];
		}
		st->busy_ns += fs->clock_ns - start;
		st->sections++;
	}
	timed_free(&tm, threads, workers, nworkers);
	return ret;
}

int timed_section(struct btrfs_fs_info *fs, const struct timed_config *cfg, struct timed_state *st, int nthreads,
		  const char *const *names, timed_next_fn next, void *ctx, const int *schedule, size_t nschedule, int drain)
{
	return run(fs, cfg, st, nthreads, names, next, ctx, schedule, nschedule, drain, 0);
}

int timed_sleep(struct btrfs_fs_info *fs, const struct timed_config *cfg, struct timed_state *st, u64 ns)
{
	return run(fs, cfg, st, 0, NULL, NULL, NULL, NULL, 0, 1, ns ? ns : 1);
}

void timed_metrics_json(struct strbuf *b, const struct timed_config *cfg, const struct timed_state *st)
{
	double secs = (double)st->busy_ns / 1e9;
	sb_printf(b, ",\"timed\":{\"device\":\"%s\",\"cpus\":%d,\"sched\":\"%s\",\"seed\":%llu,\"virtualNs\":%llu,"
		     "\"bytesWritten\":%llu,\"throughputMiBs\":%.3f,\"commits\":%llu,\"logSyncs\":%llu,\"fsyncs\":%llu,"
		     "\"fsyncsLoggingInFlight\":%llu,\"fsyncFullCommits\":%llu,\"ops\":{",
		  cfg->dev.name, cfg->cpus ? cfg->cpus : cfg->dev.cpus, cfg->policy == SCHED_SEED ? "seed" : "rr",
		  (unsigned long long)cfg->seed, (unsigned long long)st->busy_ns, (unsigned long long)st->bytes_written,
		  secs > 0 ? (double)st->bytes_written / 1048576.0 / secs : 0.0, (unsigned long long)st->commits,
		  (unsigned long long)st->log_syncs, (unsigned long long)st->fsyncs, (unsigned long long)st->fsyncs_logged,
		  (unsigned long long)st->fsync_fallbacks);
	int first = 1;
	for (int k = 1; k < TOP_COUNT; k++) {
		const struct timed_latency *l = &st->lat[k];
		if (!l->n)
			continue;
		sb_printf(b, "%s\"%s\":{\"n\":%llu,\"meanNs\":%llu,\"p50Ns\":%llu,\"p99Ns\":%llu,\"maxNs\":%llu}",
			  first ? "" : ",", timed_op_names[k], (unsigned long long)l->n, (unsigned long long)(l->sum_ns / l->n),
			  (unsigned long long)timed_percentile(l, 50), (unsigned long long)timed_percentile(l, 99),
			  (unsigned long long)l->max_ns);
		first = 0;
	}
	sb_printf(b, "},\"waitedNs\":{");
	first = 1;
	for (int c = 0; c < WAIT_CAUSE_COUNT; c++) {
		if (!st->waited[c])
			continue;
		sb_printf(b, "%s\"%s\":%llu", first ? "" : ",", sched_wait_cause_name(c), (unsigned long long)st->waited[c]);
		first = 0;
	}
	sb_printf(b, "},\"bios\":{");
	first = 1;
	for (int o = 0; o < BIO_OP_COUNT; o++) {
		if (!st->bios[o])
			continue;
		sb_printf(b, "%s\"%s\":{\"n\":%llu,\"bytes\":%llu}", first ? "" : ",", sched_bio_op_name(o),
			  (unsigned long long)st->bios[o], (unsigned long long)st->bio_bytes[o]);
		first = 0;
	}
	sb_printf(b, "},\"deviceBusyNs\":%llu", (unsigned long long)st->device_busy_ns);
	sb_printf(b, ",\"logLeaves\":{\"fsyncs\":%llu,\"read\":%llu,\"cloned\":%llu}", (unsigned long long)st->log_leaves.fsyncs,
		  (unsigned long long)st->log_leaves.read, (unsigned long long)st->log_leaves.cloned);
	sb_printf(b, ",\"dirty\":{\"limitBytes\":%llu,\"backgroundBytes\":%llu,\"peakBytes\":%llu}",
		  (unsigned long long)cfg->dirty_bytes, (unsigned long long)cfg->dirty_background_bytes,
		  (unsigned long long)st->dirty_peak);
	const char *sep = ",\"bonnie\":{";
	for (int k = 0; k < TIMED_BONNIE_PHASES; k++) {
		const struct timed_latency *l = &st->bonnie[k];
		if (!l->n)
			continue;
		sb_printf(b,
			  "%s\"%s\":{\"n\":%llu,\"meanNs\":%llu,\"p50Ns\":%llu,\"p99Ns\":%llu,\"maxNs\":%llu,\"fsyncs\":%llu,"
			  "\"leavesRead\":%llu,\"leavesCloned\":%llu}",
			  sep, timed_bonnie_names[k], (unsigned long long)l->n, (unsigned long long)(l->sum_ns / l->n),
			  (unsigned long long)timed_percentile(l, 50), (unsigned long long)timed_percentile(l, 99),
			  (unsigned long long)l->max_ns, (unsigned long long)st->bonnie_leaves[k].fsyncs,
			  (unsigned long long)st->bonnie_leaves[k].read, (unsigned long long)st->bonnie_leaves[k].cloned);
		sep = ",";
	}
	if (sep[0] == ',' && sep[1] == 0)
		sb_printf(b, "}");
	if (st->tickets || st->shrink_calls || st->nflush_order[0] || st->nflush_order[1]) {
		sb_printf(b, ",\"reclaim\":{\"tickets\":%llu,\"ticketsFailed\":%llu,\"ticketWaitNs\":%llu",
			  (unsigned long long)st->tickets, (unsigned long long)st->tickets_failed, (unsigned long long)st->ticket_wait_ns);
		/* the metadata worker's states (order, runs), then the data worker's */
		for (int sk = 1; sk >= 0; sk--) {
			sb_printf(b, ",\"%s\":[", sk ? "order" : "dataOrder");
			for (u64 i = 0; i < st->nflush_order[sk]; i++)
				sb_printf(b, "%s\"%s\"", i ? "," : "", btrfs_flush_state_names[st->flush_order[sk][i]]);
			sb_printf(b, "],\"%s\":{", sk ? "runs" : "dataRuns");
			for (int k = 1, firstk = 1; k < FLUSH_STATES; k++)
				if (st->flush_runs[sk][k]) {
					sb_printf(b, "%s\"%s\":%llu", firstk ? "" : ",", btrfs_flush_state_names[k], (unsigned long long)st->flush_runs[sk][k]);
					firstk = 0;
				}
			sb_printf(b, "}");
		}
		sb_printf(b, ",");
		const struct timed_latency *l = &st->shrink_budget;
		sb_printf(b, "\"shrink\":{\"calls\":%llu,\"budgetP50\":%llu,\"budgetMax\":%llu,\"pages\":%llu,\"inodes\":%llu}}",
			  (unsigned long long)st->shrink_calls, (unsigned long long)timed_percentile(l, 50), (unsigned long long)l->max_ns,
			  (unsigned long long)st->shrink_pages, (unsigned long long)st->shrink_inodes);
	}
	if (st->untar_files || st->untar_dirs)
		sb_printf(b, ",\"untar\":{\"files\":%llu,\"dirs\":%llu,\"bytes\":%llu,\"writeNs\":%llu,\"syncNs\":%llu}",
			  (unsigned long long)st->untar_files, (unsigned long long)st->untar_dirs, (unsigned long long)st->untar_bytes,
			  (unsigned long long)st->untar_write_ns, (unsigned long long)st->untar_sync_ns);
	sb_printf(b, ",\"locks\":{\"fsTree\":{\"contended\":%llu,\"waitNs\":%llu},\"csumTree\":{\"contended\":%llu,"
		     "\"waitNs\":%llu}}}",
		  (unsigned long long)st->lock_contended[0], (unsigned long long)st->lock_wait_ns[0],
		  (unsigned long long)st->lock_contended[1], (unsigned long long)st->lock_wait_ns[1]);
}
