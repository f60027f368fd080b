/* locking.h — tree locks in simulated time (the kernel's fs/btrfs/locking.c,
 * and the order btrfs_search_slot takes them in): read/write locks on tree
 * blocks, with waiters, taken by the tasks of tasks.c. Two granularities:
 * one lock a tree (TREE_LOCKS_TREE), or a lock on each block taken
 * top-down along the path to a key (TREE_LOCKS_PATH). The locks themselves
 * and their waiter queues, events and deadlock check are sched.c's. */
#ifndef BTRFSLAB_LOCKING_H
#define BTRFSLAB_LOCKING_H

#include "fs.h"
#include "sched.h"
#include "u64map.h"

enum timed_tree_locks {
	TREE_LOCKS_PATH = 0, /* a lock on each tree block, taken top-down as btrfs_search_slot takes them */
	TREE_LOCKS_TREE,     /* one lock a tree (coarser: every leaf of a tree contends) */
};

struct btrfs_locks {
	struct sched *s;
	struct btrfs_fs_info *fs;
	int granularity;                       /* enum timed_tree_locks */
	struct sched_lock fs_tree, csum, log;  /* one lock a tree */
	struct u64map blocks;                  /* tree block bytenr -> struct sched_lock * */
	/* with TREE_LOCKS_PATH, the CPU time of a path's steps (costs.c):
	 * taking a block's lock (reported in its wait, as the kernel's diff_ns
	 * includes it), and a node's binary search and the step to its child,
	 * the node's lock held */
	u64 acquire_ns, level_ns;
	u64 rng;                               /* the acquisitions' spread: a seeded stream of its own (locking.c acquire_draw) */
	u64 probe_ns;                          /* a write search's read lock of the root, held to read its level */
	u64 cow_ns;                            /* a block COWed or split, under the locks (btrfs_lock_replay) */
	u64 writeback_ns;                      /* a block write-locked to be written out (btrfs_lock_replay) */
	u64 shift_kib_ns;                      /* a KiB a push moves, its neighbour write-locked (btrfs_lock_replay) */
	int work;                              /* the sched work kind they are charged as */
};

void btrfs_locks_init(struct btrfs_locks *l, struct sched *s, struct btrfs_fs_info *fs, int granularity);
void btrfs_locks_free(struct btrfs_locks *l);
/* Waits for locks of the fs tree ([0]) and of the csum tree ([1]): how many
 * acquisitions waited, and for how long in all. */
void btrfs_locks_stats(const struct btrfs_locks *l, u64 contended[2], u64 wait_ns[2]);

/* A tree lock being taken: with TREE_LOCKS_PATH, the path from the root to
 * the leaf of key, top-down with lock coupling (a block's lock is taken
 * while its parent's is held), as btrfs_search_slot does: readers read-lock
 * every level and drop the parent once the child is theirs; a writer
 * write-locks the leaf and its parent (write_lock_level 1), and a block
 * that still needs its COW in this transaction and the block above it
 * (should_cow_block raising write_lock_level), and read-locks the levels
 * above; once the leaf is locked the upper locks go (unlock_up: a leaf
 * with room needs no split). A writer first read-locks the root and lets
 * it go again (the kernel's trace shows this probe before every
 * write-locked search: a read lock held about 0.1 us, then the root
 * write-locked). With TREE_LOCKS_TREE, the tree's one lock. */
struct btrfs_path_lock {
	int active, level, wl, mode;
	u64 tree;
	struct btrfs_key key;
	struct sched_lock *held[BTRFS_MAX_LEVEL];
	int held_mode[BTRFS_MAX_LEVEL];
	struct sched_lock *pending;
	int pending_level, pending_mode;
	int step; /* at pl->level: 0 nothing spent yet, 1 its lock's acquisition spent, 2 held, its node's search spent */
	int probe; /* a write search's first read lock of the root: 1 still to take, 2 held (see btrfs_path_lock) */
	struct sched_lock *probe_lk;
};

/* Takes the lock on key's leaf of tree (or the tree's lock), for mode:
 * 1 when held, 0 when the task waits or spends the path's CPU time (call
 * again when it runs: it goes on down the path), or an error. Called again
 * while held, 1. */
int btrfs_path_lock(struct btrfs_locks *l, struct sched_task *t, struct btrfs_path_lock *pl, u64 tree, u64 objectid, u8 type,
		    u64 offset, int mode);
/* Releases what pl holds; pl is then free for the next lock. */
void btrfs_path_unlock(struct btrfs_locks *l, struct sched_task *t, struct btrfs_path_lock *pl);

/* The tree blocks a change COWed, split or wrote out (fs->blkrec, taken
 * with btrfs_lock_replay_take), locked as the kernel locks them, with
 * TREE_LOCKS_PATH: a COW write-locks the old block, spends half of cow_ns
 * (the new block allocated), locks the new copy, spends the rest (the copy,
 * the parent's pointer) and lets the old one go (btrfs_cow_block locks the
 * copy before it releases the original), then the copy; a split locks its
 * new block for cow_ns; a block written out is write-locked for
 * writeback_ns. A COW of a block pl holds (the change was made under pl's
 * locks) hands pl's lock over to the copy, which pl then holds. Only locks
 * free at that moment are taken: the replay waits for no one (see
 * replay_acquire). Records of other trees than `tree` are skipped. 1 when
 * done, 0 when the task computes (call again when it runs), or an error. */
struct btrfs_lock_replay {
	struct btrfs_block_rec rec[BTRFS_BLOCK_REC_MAX];
	int n, i, phase, sub;
	struct sched_lock *old, *cur;
	/* a COWed block's copy, held while the next record COWs or splits its
	 * child (btrfs_search_slot COWs top-down, holding the path) */
	struct sched_lock *up;
};
/* Starts recording the blocks a change COWs, splits or writes (with
 * TREE_LOCKS_PATH: nothing else replays them). */
void btrfs_lock_replay_record(struct btrfs_locks *l);
/* Moves what was recorded into rp (and empties it); recording goes off. */
void btrfs_lock_replay_take(struct btrfs_locks *l, struct btrfs_lock_replay *rp);
int btrfs_lock_replay(struct btrfs_locks *l, struct sched_task *t, struct btrfs_lock_replay *rp, u64 tree, struct btrfs_path_lock *pl);
/* The CPU time btrfs_lock_replay will spend on rp's records of tree. */
u64 btrfs_lock_replay_ns(const struct btrfs_locks *l, const struct btrfs_lock_replay *rp, u64 tree);

#endif
