/* tasks.h — the tasks of a timed run: the scenario's threads and the
 * kernel's workers that matter to the data path, as state machines over
 * sched.h's clock.
 *
 *   thread         a scenario thread (or fio job): write copies into the page
 *                  cache; fsync (btrfs_sync_file) starts writeback of the whole
 *                  file (ranged fsyncs are full-range, as since 5.10), waits
 *                  for its bios, then (full sync, or fsync_wait=ordered) for
 *                  its ordered extents, logs the inode under the fs tree's
 *                  lock, then into the log under the log tree's (the
 *                  checksums the csum tree holds looked up at its end, under
 *                  the csum tree's read lock too), and syncs the log;
 *                  sync writes everything back, waits, and commits.
 *   flusher        writes back inodes dirty for more than 30 s, every 5 s, and
 *                  oldest first while dirty bytes are over the background limit.
 *   endio-write    min(cpus + 2, 8) workers (the kernel's thread_pool_size)
 *                  completing ordered extents: the fs tree under its lock, the
 *                  csum tree under its lock, the rest (btrfs_finish_ordered_io).
 *   A write's inode update goes to the inode's delayed node (its mutex, no
 *   tree lock); a lock's waiters spin while its holder runs, as the kernel's
 *   rwsem lets them, and sleep when it does not.
 *   transaction    commits when the running transaction is commit_interval old.
 *
 * Log syncs batch as the kernel's log transactions do: an fsync logs into the
 * open log transaction; the first to sync closes it, waits for the others
 * still logging into it, writes the log blocks, a flush and the superblock;
 * fsyncs of that log transaction then return without writing. A commit waits
 * for ordered extents a log holds (fsync_wait=writeback), then for tasks in
 * the transaction to leave it, and blocks new ones until its superblock is
 * written.
 *
 * Where this simplifies the kernel: with tree_locks=tree (the default, which
 * seed 003's table is fitted with) tree locks are one read/write lock per
 * tree (the root node's, which every search takes first), and an fsync's
 * logging holds the log tree's for all its extents; a B-tree change happens
 * at one instant, at the end of the work that models it; endio's own CPU
 * time is not modelled (the kernel here ends a page's writeback in a worker,
 * about 8 us an extent on the loop device, so 16 random 4 KiB extents stay
 * under writeback some 130 us after their bio completes); the kernel merges
 * those extents' pages into one bio, the model submits a bio an ordered
 * extent; clean pages are dropped once their ordered extent completes. */
#ifndef BTRFSLAB_TASKS_H
#define BTRFSLAB_TASKS_H
#include "sched.h"
#include "costs.h"
#include "locking.h"

enum timed_op_kind {
	TOP_END = 0,   /* the thread has no more commands */
	TOP_WRITE,     /* pwrite: ino, off, len, data */
	TOP_FSYNC,     /* fsync: ino */
	TOP_SYNC,      /* sync(2) (and `commit`): everything written back, then a commit */
	TOP_SLEEP,     /* ns */
	TOP_META,      /* a namespace command: meta() makes the change; ino: a file whose
			* ordered extents must complete first (truncate, unlink), or 0 */
	TOP_COUNT
};

struct timed_op {
	int kind;
	int line;      /* script line (0: generated, e.g. fio) */
	u64 ino, off, len, ns;
	const u8 *data; /* TOP_WRITE: len bytes, valid until the thread's next command */
	int (*meta)(void *ctx, int thread);
	int items;      /* TOP_META: the items its transaction reserves for (create 5, unlink 6, ...) */
	/* TOP_META, with tree_locks=path: the searches of the fs tree the kernel
	 * makes for it (measured: costs.c's search rows), read-locked and
	 * write-locked, and where: the directory of the name it changes, that
	 * name's hash (DIR_ITEM key offset), and the inode it names (0: new) */
	int reads, writes;
	u64 dir, hash, target;
	/* the inodes whose lock (inode->i_rwsem) it takes before anything else,
	 * in this order, and holds to its end: a namespace command its
	 * directory (or directories) and the inode it changes, a write its file */
	u64 ilock[4];
	int nilock;
};

/* The next command of thread `thread` into *op: 0, or an error (the run stops). */
typedef int (*timed_next_fn)(void *ctx, int thread, struct timed_op *op);

struct timed_config {
	struct btrfs_device_profile dev; /* a copy: `set device.X=` changes it */
	u64 cost[COST_COUNT];            /* costs.c's table, copied: `set cost.KEY=` changes it */
	int cpus;                      /* 0: the profile's */
	int policy;                    /* enum sched_policy */
	u64 seed;
	u64 dirty_bytes;               /* writers throttle above this */
	u64 dirty_background_bytes;    /* the flusher starts above this */
	u64 commit_interval_ns;
	int tree_locks;                /* enum timed_tree_locks */
	int log_copy;                  /* enum timed_log_copy */
	int memory_pressure;           /* 0 none, 1 moderate, 2 heavy */
	u64 delayed_background;        /* pending delayed items that wake the async worker (BTRFS_DELAYED_BACKGROUND, 128) */
	int shrink_delalloc;           /* enum btrfs_shrink_delalloc: pages (5.11+) or inodes (5.10) */
	u64 max_events;                /* simulated events all sections of a run may take (0: none) */
	double cpu_deadline_s, max_cpu_s; /* the run's CPU-time bound (cpuclock_s; 0: none), and its length */
};
enum timed_log_copy {
	LOG_COPY_PREALLOC = 0, /* seed 000's fix (this kernel has it): one extent buffer allocated before locking or joining the log */
	LOG_COPY_CLONE,        /* before it: each fs leaf cloned while its read lock is held, inside the log transaction */
	LOG_COPY_DIRECT,       /* before 796787c978ef (v6.1): items copied straight from the read-locked fs leaf into the
				* log tree, whose block allocations may reclaim memory by evicting inodes: a deadlock can form */
};
/* The defaults: nvme, seeded schedule, 20%/10% of 4 GiB, commit=30. */
void timed_config_default(struct timed_config *c);

enum timed_bonnie_phase { BONNIE_SEQ_CREATE = 0, BONNIE_SEQ_DELETE, BONNIE_RAND_CREATE, BONNIE_RAND_DELETE, TIMED_BONNIE_PHASES };
extern const char *const timed_bonnie_names[TIMED_BONNIE_PHASES];
/* Latency of one kind of command, as a histogram of 1/64-octave buckets. */
#define TIMED_BUCKETS 2560
struct timed_latency {
	u64 n, sum_ns, max_ns;
	u32 bucket[TIMED_BUCKETS];
};

/* What persists between sections of a run (plain data: a clone copies it). */
struct timed_state {
	u64 trans_started_ns;          /* when the running transaction began (commit interval) */
	u64 events;                    /* simulated events run so far (against cfg->max_events) */
	u64 sections;
	u64 busy_ns;                   /* virtual time inside sections and sleeps */
	u64 bytes_written;             /* by TOP_WRITE commands */
	u64 waited[WAIT_CAUSE_COUNT];  /* all tasks (idle workers not counted) */
	u64 commits, log_syncs, fsyncs, fsyncs_logged, fsync_fallbacks;
	u64 bios[BIO_OP_COUNT], bio_bytes[BIO_OP_COUNT];
	u64 device_busy_ns; /* virtual time with at least one bio in flight */
	u64 dirty_peak;     /* the most data dirty or under writeback (delalloc and ordered extents, as
			     * balance_dirty_pages counts dirty and writeback pages) where a writer throttles */
	u64 lock_contended[2], lock_wait_ns[2]; /* fs tree, csum tree */
	struct timed_latency lat[TOP_COUNT];
	int deadlock_line, deadlock_op; /* a deadlock: the script line and command of a thread in its cycle */
	/* a `bonnie` section's file operations, by phase (bonnie++ -n with -b:
	 * a create is create + write + fsync, a delete is unlink + fsync of the
	 * directory), as bonnie++ reports each phase's latency */
	struct timed_latency bonnie[TIMED_BONNIE_PHASES];
	/* the fs leaves logging read-locked to copy from, and of those the ones
	 * the kernel clones before copying (log_copy=clone allocates an extent
	 * buffer for each; counted in every mode), over the fsyncs that logged;
	 * during each bonnie phase too (bonnie_phase_now: the phase + 1, 0 when
	 * no bonnie section runs) */
	struct timed_log_leaves {
		u64 fsyncs, read, cloned;
	} log_leaves, bonnie_leaves[TIMED_BONNIE_PHASES];
	int bonnie_phase_now;
	/* space reservation: tickets, the reclaim workers' flush states (runs by
	 * state, the order of their first runs), shrink_delalloc's budgets
	 * (pages, or inodes) and what it wrote */
	u64 tickets, tickets_failed, ticket_wait_ns;
	u64 flush_runs[2][12], flush_order[2][12], nflush_order[2]; /* by space: data, metadata */
	struct timed_latency shrink_budget;
	u64 shrink_calls, shrink_pages, shrink_inodes;
	/* `untar` sections: the tree made, the time until the tar exits, and its syncfs */
	u64 untar_files, untar_dirs, untar_bytes, untar_write_ns, untar_sync_ns;
};

/* A section that has not ended after this much virtual time is stuck. */
#define TIMED_LIMIT_NS (3600ULL * 1000000000ULL)

/* Runs nthreads threads from the same instant until all have returned
 * from their last command, then (drain) until the kernel's work they
 * started is done: bios, ordered extents, commits. Without drain the run
 * stops as the last thread returns (a power cut comes next). schedule, when
 * nschedule > 0: the order in which threads start their commands (thread
 * indexes), the policy's after it. */
int timed_section(struct btrfs_fs_info *fs, const struct timed_config *cfg, struct timed_state *st, int nthreads,
		  const char *const *names, timed_next_fn next, void *ctx, const int *schedule, size_t nschedule, int drain);
/* Lets virtual time pass with no thread running (the flusher and the
 * transaction kthread do their work), then drains. */
int timed_sleep(struct btrfs_fs_info *fs, const struct timed_config *cfg, struct timed_state *st, u64 ns);
/* One more sample of ns in l. */
void timed_latency_add(struct timed_latency *l, u64 ns);
/* Percentile p (0..100) of a latency histogram, in ns. */
u64 timed_percentile(const struct timed_latency *l, double p);
const char *timed_op_name(int kind);
extern const char *const timed_op_names[TOP_COUNT];
/* ,"timed":{...}: the settings and what the sections did, appended to b. */
struct strbuf;
void timed_metrics_json(struct strbuf *b, const struct timed_config *cfg, const struct timed_state *st);
#endif
