/* locking.c — tree locks in simulated time: see locking.h. */
#include "locking.h"
#include "splitmix.h"
#include "ctree.h"
#include "tree-checker.h"
#include "tree-log.h"
#include <stdlib.h>
#include <string.h>

void btrfs_locks_init(struct btrfs_locks *l, struct sched *s, struct btrfs_fs_info *fs, int granularity)
{
	memset(l, 0, sizeof(*l));
	l->s = s;
	l->fs = fs;
	l->granularity = granularity;
	l->fs_tree = (struct sched_lock){.tree = BTRFS_FS_TREE_OBJECTID};
	l->csum = (struct sched_lock){.tree = BTRFS_CSUM_TREE_OBJECTID};
	l->log = (struct sched_lock){.tree = BTRFS_TREE_LOG_OBJECTID};
	u64map_init(&l->blocks, sizeof(struct sched_lock *));
}

void btrfs_locks_free(struct btrfs_locks *l)
{
	sched_lock_free(&l->fs_tree);
	sched_lock_free(&l->csum);
	sched_lock_free(&l->log);
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&l->blocks, &i, &k, &v)) {
		sched_lock_free(*(struct sched_lock **)v);
		free(*(struct sched_lock **)v);
	}
	u64map_free(&l->blocks);
}

void btrfs_locks_stats(const struct btrfs_locks *l, u64 contended[2], u64 wait_ns[2])
{
	contended[0] = l->fs_tree.contended;
	wait_ns[0] = l->fs_tree.wait_ns;
	contended[1] = l->csum.contended;
	wait_ns[1] = l->csum.wait_ns;
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&l->blocks, &i, &k, &v)) {
		const struct sched_lock *lk = *(struct sched_lock **)v;
		int which = lk->tree == BTRFS_CSUM_TREE_OBJECTID;
		contended[which] += lk->contended;
		wait_ns[which] += lk->wait_ns;
	}
}

static struct btrfs_root *lock_root(struct btrfs_locks *locks, u64 tree)
{
	return tree == BTRFS_CSUM_TREE_OBJECTID	 ? locks->fs->csum_root
	       : tree == BTRFS_TREE_LOG_OBJECTID ? btrfs_log_tree_root(locks->fs)
						 : locks->fs->fs_root;
}

static struct sched_lock *tree_lock_of(struct btrfs_locks *locks, u64 tree)
{
	return tree == BTRFS_CSUM_TREE_OBJECTID ? &locks->csum : tree == BTRFS_TREE_LOG_OBJECTID ? &locks->log : &locks->fs_tree;
}

/* The block at level of the path to key as the tree is now, or NULL (the
 * tree is lower, or a block cannot be read); *root_level: the root's. */
static struct extent_buffer *path_block(struct btrfs_locks *locks, struct btrfs_root *root, const struct btrfs_key *key, int level,
					int *root_level)
{
	struct extent_buffer *b = root ? root->node : NULL;
	if (!b)
		return NULL;
	int l = btrfs_level(b);
	if (root_level)
		*root_level = l;
	while (b && l > level) {
		int slot;
		if (btrfs_bin_search(b, key, &slot) && slot > 0)
			slot--;
		b = btrfs_read_node_slot(locks->fs, b, slot, root->objectid);
		l--;
	}
	return l == level ? b : NULL;
}

/* Whether no task holds lk or waits for it. */
static int lock_free(const struct sched_lock *lk)
{
	return !lk->readers && !lk->writer && !lk->nw;
}

static struct sched_lock *block_lock_at(struct btrfs_locks *locks, u64 tree, u64 bytenr, int level)
{
	struct sched_lock **p = u64map_put(&locks->blocks, bytenr);
	if (!p)
		return NULL;
	if (!*p && !(*p = calloc(1, sizeof(**p))))
		return NULL;
	struct sched_lock *lk = *p;
	if (lock_free(lk)) {
		/* a block freed and its place reused: the lock is the new block's */
		lk->tree = tree;
		lk->bytenr = bytenr;
		lk->level = level;
	}
	return lk;
}

static struct sched_lock *block_lock(struct btrfs_locks *locks, u64 tree, const struct extent_buffer *b)
{
	return block_lock_at(locks, tree, b->start, btrfs_level(b));
}

/* Locks pl->held above level that may go now that level's block is held. */
static void path_release_above(struct btrfs_locks *locks, struct sched_task *t, struct btrfs_path_lock *pl, int level)
{
	for (int l = level + 1; l < BTRFS_MAX_LEVEL; l++)
		if (pl->held[l] && (level == 0 || pl->held_mode[l] == BTRFS_LOCK_READ)) {
			sched_unlock(locks->s, t, pl->held[l], pl->held_mode[l]);
			pl->held[l] = NULL;
		}
}

/* lk, at level of pl's path, is the task's now: the locks above that may go
 * go, and the descent goes on below it. */
static void took(struct btrfs_locks *locks, struct sched_task *t, struct btrfs_path_lock *pl, int level, struct sched_lock *lk, int mode)
{
	pl->held[level] = lk;
	pl->held_mode[level] = mode;
	path_release_above(locks, t, pl, level);
	pl->level = level - 1;
}

/* An acquisition's own time: acquire_ns (the median) spread as this
 * machine's uncontended acquisitions are (btrfs_tree_lock and
 * btrfs_tree_read_lock's diff_ns, one process: one fsyncer, 20,105 locks,
 * and one creator, 21,300; tests/kernel/seed000-measure.mjs 1 0 300 and
 * 0 1 2000): p25 73 ns, p50 76, p75 86-93, p90 121-230, p95 140-353, p98
 * 324-653, p99 524-873, p99.5 671-1154, p99.9 2.8-3.0 us. Drawn from the
 * locks' own stream, so that the scheduler's draws stay as they are. */
static u64 acquire_draw(struct btrfs_locks *l)
{
	/* quantiles (per million) of the acquisition time, in hundredths of the median */
	static const struct {
		u32 q, x;
	} spread[] = {{0, 92}, {250000, 96}, {500000, 100}, {750000, 118}, {900000, 230}, {950000, 325},
		      {980000, 640}, {990000, 920}, {995000, 1200}, {999000, 3800}, {1000000, 6600}};
	if (!l->acquire_ns)
		return 0;
	u64 u = splitmix64(&l->rng) % 1000000;
	size_t i = 1;
	while (i < sizeof(spread) / sizeof(spread[0]) - 1 && u >= spread[i].q)
		i++;
	u64 x = spread[i - 1].x + (spread[i].x - spread[i - 1].x) * (u - spread[i - 1].q) / (spread[i].q - spread[i - 1].q);
	return l->acquire_ns * x / 100;
}

/* Takes b's lock for mode, the acquisition's own time spent first
 * (pl->step is 1 once it is): 1 when held (*lkp), 0 when the task computes
 * or waits (then pl->pending is the lock), or an error. */
static int acquire(struct btrfs_locks *locks, struct sched_task *t, struct btrfs_path_lock *pl, struct extent_buffer *b, int mode,
		   struct sched_lock **lkp)
{
	if (pl->step == 0 && locks->acquire_ns) {
		pl->step = 1;
		t->lock_pre_ns = acquire_draw(locks);
		sched_cpu(locks->s, t, t->lock_pre_ns, locks->work);
		return 0;
	}
	pl->step = 0;
	struct sched_lock *lk = block_lock(locks, pl->tree, b);
	if (!lk)
		return BLAB_ENOMEM;
	if (!sched_lock(locks->s, t, lk, mode)) {
		pl->pending = lk;
		pl->pending_mode = mode;
		return 0;
	}
	*lkp = lk;
	return 1;
}

int btrfs_path_lock(struct btrfs_locks *locks, struct sched_task *t, struct btrfs_path_lock *pl, u64 tree, u64 objectid, u8 type,
			  u64 offset, int mode)
{
	struct sched *s = locks->s;
	struct btrfs_root *root = lock_root(locks, tree);
	if (!pl->active) {
		memset(pl, 0, sizeof(*pl));
		pl->active = 1;
		pl->tree = tree;
		pl->mode = mode;
		pl->key = (struct btrfs_key){objectid, type, offset};
		int root_level = 0;
		if (locks->granularity == TREE_LOCKS_TREE || !path_block(locks, root, &pl->key, 0, &root_level)) {
			pl->level = -1;
			pl->held[0] = tree_lock_of(locks, tree);
			pl->held_mode[0] = mode;
			return sched_lock(s, t, pl->held[0], mode);
		}
		pl->wl = 1;
		if (mode == BTRFS_LOCK_WRITE)
			for (int l = root_level; l > 0; l--) {
				struct extent_buffer *b = path_block(locks, root, &pl->key, l, NULL);
				if (b && !b->dirty) {
					pl->wl = l + 1; /* a COW here changes the block above too */
					break;
				}
			}
		pl->level = root_level;
		pl->probe = mode == BTRFS_LOCK_WRITE && root_level > 0;
	} else if (pl->pending && pl->probe) {
		/* the probe's read lock, granted while the task waited */
		pl->probe_lk = pl->pending;
		pl->pending = NULL;
		pl->probe = 2;
		if (locks->probe_ns) {
			sched_cpu(s, t, locks->probe_ns, locks->work);
			return 0;
		}
	} else if (pl->pending) {
		/* granted while the task waited */
		took(locks, t, pl, pl->pending_level, pl->pending, pl->pending_mode);
		pl->pending = NULL;
		pl->step = 2;
	}
	while (pl->probe) {
		if (pl->probe == 2) {
			/* the root's level read: let go, then write-lock the path */
			sched_unlock(s, t, pl->probe_lk, BTRFS_LOCK_READ);
			pl->probe_lk = NULL;
			pl->probe = 0;
			break;
		}
		int r = acquire(locks, t, pl, root->node, BTRFS_LOCK_READ, &pl->probe_lk);
		if (r <= 0)
			return r;
		pl->probe = 2;
		if (locks->probe_ns) {
			sched_cpu(s, t, locks->probe_ns, locks->work);
			return 0;
		}
	}
	while (pl->level >= 0 || pl->step == 2) {
		if (pl->step == 2) {
			/* the block just taken, above the leaf: its search, its lock held */
			pl->step = 0;
			if (pl->level >= 0 && locks->level_ns) {
				sched_cpu(s, t, locks->level_ns, locks->work);
				return 0;
			}
			continue;
		}
		int l = pl->level;
		struct extent_buffer *b = path_block(locks, root, &pl->key, l, NULL);
		if (!b) {
			pl->level--;
			pl->step = 0;
			continue;
		}
		int m = pl->mode == BTRFS_LOCK_WRITE && l <= pl->wl ? BTRFS_LOCK_WRITE : BTRFS_LOCK_READ;
		struct sched_lock *lk;
		int r = acquire(locks, t, pl, b, m, &lk);
		if (r <= 0) {
			pl->pending_level = l;
			return r;
		}
		took(locks, t, pl, l, lk, m);
		pl->step = 2;
	}
	return 1;
}

void btrfs_path_unlock(struct btrfs_locks *locks, struct sched_task *t, struct btrfs_path_lock *pl)
{
	for (int l = 0; l < BTRFS_MAX_LEVEL; l++)
		if (pl->held[l])
			sched_unlock(locks->s, t, pl->held[l], pl->held_mode[l]);
	memset(pl, 0, sizeof(*pl));
}

void btrfs_lock_replay_record(struct btrfs_locks *l)
{
	l->fs->nblkrec = l->fs->nmoverec = 0;
	l->fs->blkrec_on = l->granularity == TREE_LOCKS_PATH;
}

void btrfs_lock_replay_take(struct btrfs_locks *l, struct btrfs_lock_replay *rp)
{
	struct btrfs_fs_info *fs = l->fs;
	memcpy(rp->rec, fs->blkrec, sizeof(rp->rec[0]) * (size_t)fs->nblkrec);
	rp->n = fs->nblkrec;
	rp->i = rp->phase = rp->sub = 0;
	rp->old = rp->cur = rp->up = NULL;
	fs->nblkrec = fs->nmoverec = 0;
	fs->blkrec_on = 0;
}

/* The CPU time of one record: a COW's or a split's, a write-out's, or a
 * push's bytes moved. */
static u64 record_ns(const struct btrfs_locks *l, const struct btrfs_block_rec *rc)
{
	return rc->kind == TRACE_BLOCK_WRITE ? l->writeback_ns : rc->kind == TRACE_PUSH ? l->shift_kib_ns * rc->bytes / 1024 : l->cow_ns;
}

u64 btrfs_lock_replay_ns(const struct btrfs_locks *l, const struct btrfs_lock_replay *rp, u64 tree)
{
	u64 ns = 0;
	if (l->granularity != TREE_LOCKS_PATH)
		return 0;
	for (int i = 0; i < rp->n; i++)
		if (rp->rec[i].tree == tree)
			ns += record_ns(l, &rp->rec[i]);
	return ns;
}

/* Takes lk for write if no one has it, its acquisition's time spent
 * first: 1 when held, 2 when it is not free (taken by t itself, or by
 * another task: a block freed by the change and its place taken again, or
 * an old block a reader still holds), 0 while the task computes (*sub keeps
 * where it is). The replay waits for no one: its blocks' locks are taken
 * after the change, in an order the kernel's search never takes them in,
 * so waiting could close a cycle the kernel cannot. */
static int replay_acquire(struct btrfs_locks *l, struct sched_task *t, int *sub, struct sched_lock *lk)
{
	if (!lock_free(lk)) {
		*sub = 0;
		return 2;
	}
	if (*sub == 0) {
		t->lock_pre_ns = acquire_draw(l);
		if (t->lock_pre_ns) {
			*sub = 1;
			sched_cpu(l->s, t, t->lock_pre_ns, l->work);
			return 0;
		}
	}
	*sub = 0;
	sched_lock(l->s, t, lk, BTRFS_LOCK_WRITE); /* free: taken at once */
	return 1;
}

/* The level of pl's path holding the block at bytenr, or -1. */
static int held_level(const struct btrfs_path_lock *pl, u64 bytenr)
{
	if (!pl)
		return -1;
	for (int l = 0; l < BTRFS_MAX_LEVEL; l++)
		if (pl->held[l] && pl->held[l]->bytenr == bytenr && pl->held_mode[l] == BTRFS_LOCK_WRITE)
			return l;
	return -1;
}

/* Whether the record after rp->i of tree COWs or splits a child of the
 * block rp->i COWed (one level below: the path goes on down). */
static int child_next(const struct btrfs_lock_replay *rp, u64 tree)
{
	const struct btrfs_block_rec *rc = &rp->rec[rp->i];
	for (int j = rp->i + 1; j < rp->n; j++)
		if (rp->rec[j].tree == tree)
			return (rp->rec[j].kind == TRACE_COW || rp->rec[j].kind == TRACE_SPLIT) && rp->rec[j].level == rc->level - 1;
	return 0;
}

/* The end of record rp->i: its block let go, or its copy kept while the
 * next record works on its child; the copy kept for this one let go. */
static void record_done(struct btrfs_locks *l, struct sched_task *t, struct btrfs_lock_replay *rp, u64 tree)
{
	struct sched_lock *keep = NULL;
	if (rp->cur && rp->rec[rp->i].kind == TRACE_COW && child_next(rp, tree))
		keep = rp->cur;
	else if (rp->cur)
		sched_unlock(l->s, t, rp->cur, BTRFS_LOCK_WRITE);
	rp->cur = NULL;
	if (rp->up)
		sched_unlock(l->s, t, rp->up, BTRFS_LOCK_WRITE);
	rp->up = keep;
}

int btrfs_lock_replay(struct btrfs_locks *l, struct sched_task *t, struct btrfs_lock_replay *rp, u64 tree, struct btrfs_path_lock *pl)
{
	if (l->granularity != TREE_LOCKS_PATH)
		return 1;
	for (; rp->i < rp->n; rp->i++, rp->phase = 0) {
		const struct btrfs_block_rec *rc = &rp->rec[rp->i];
		if (rc->tree != tree)
			continue;
		int r, hl = rc->kind == TRACE_COW ? held_level(pl, rc->from) : -1;
		switch (rp->phase) {
		case 0:
			/* the block to take first: the old one of a COW, else the new (or written) one */
			if (hl < 0) {
				struct sched_lock *lk = block_lock_at(l, tree, rc->kind == TRACE_COW ? rc->from : rc->to, rc->level);
				if (!lk)
					return BLAB_ENOMEM;
				if ((r = replay_acquire(l, t, &rp->sub, lk)) <= 0)
					return r;
				if (r == 2)
					lk = NULL;
				if (rc->kind == TRACE_COW)
					rp->old = lk;
				else
					rp->cur = lk;
			}
			rp->phase = 1;
			if (rc->kind != TRACE_COW) {
				u64 ns = record_ns(l, rc);
				rp->phase = 4;
				if (ns) {
					sched_cpu(l->s, t, ns, l->work);
					return 0;
				}
				record_done(l, t, rp, tree);
				break;
			}
			if (l->cow_ns / 2) {
				sched_cpu(l->s, t, l->cow_ns / 2, l->work);
				return 0;
			}
			/* fallthrough */
		case 1: {
			/* the COW's copy */
			struct sched_lock *lk = block_lock_at(l, tree, rc->to, rc->level);
			if (!lk)
				return BLAB_ENOMEM;
			if ((r = replay_acquire(l, t, &rp->sub, lk)) <= 0)
				return r;
			rp->cur = r == 2 ? NULL : lk;
			rp->phase = 2;
			if (l->cow_ns - l->cow_ns / 2) {
				sched_cpu(l->s, t, l->cow_ns - l->cow_ns / 2, l->work);
				return 0;
			}
		}
			/* fallthrough */
		case 2:
			if (hl >= 0 && rp->cur) {
				/* the path's lock goes over to the copy */
				sched_unlock(l->s, t, pl->held[hl], BTRFS_LOCK_WRITE);
				pl->held[hl] = rp->cur;
				rp->cur = NULL;
				record_done(l, t, rp, tree);
				break;
			}
			if (rp->old)
				sched_unlock(l->s, t, rp->old, BTRFS_LOCK_WRITE);
			rp->old = NULL;
			/* fallthrough */
		default:
			record_done(l, t, rp, tree);
			break;
		}
	}
	if (rp->up)
		sched_unlock(l->s, t, rp->up, BTRFS_LOCK_WRITE);
	rp->up = NULL;
	return 1;
}
