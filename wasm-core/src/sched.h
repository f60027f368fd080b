/* sched.h — deterministic simulated time: a virtual clock, tasks, CPUs,
 * wait queues and read/write locks, in one OS thread.
 *
 * Every task is a small state machine: its step function runs when the
 * task is resumed and ends by asking for what comes next (CPU time, a wait,
 * a sleep, or the end). Nothing runs concurrently: the scheduler pops the
 * earliest pending event from one queue, sets the clock to its time and
 * resumes its task. Events at the same time are ordered by the policy:
 * a seeded random key (SCHED_SEED), or first come first served
 * (SCHED_ROUND_ROBIN). Same script, same seed: the same trace, byte for
 * byte, native or WASM (only integers: nanoseconds, a splitmix64 stream).
 *
 * CPUs are a resource: a task that asks for CPU time when all of them are
 * busy waits for one (WAIT_CPU), first come first served, and its span
 * runs unpreempted. Every wait is recorded with its cause and object, and
 * emitted as a TASK_WAIT / TASK_WAKE pair. */
#ifndef BTRFSLAB_SCHED_H
#define BTRFSLAB_SCHED_H
#include "fs.h"

/* What a task waits for. */
enum sched_wait_cause {
	WAIT_CPU = 0,          /* a CPU (all busy) */
	WAIT_LOCK,             /* a tree lock another task holds (object: the tree) */
	WAIT_WRITEBACK,        /* bios of the pages it needs (object: inode) */
	WAIT_ORDERED,          /* ordered extents to complete (object: inode, 0: those the commit waits for) */
	WAIT_TRANSACTION,      /* a transaction commit to end (object: its generation) */
	WAIT_LOG_SYNC,         /* another task's log sync that covers this fsync (object: log transid) */
	WAIT_LOG_WRITERS,      /* fsyncs still logging into the log transaction this task syncs */
	WAIT_BIO,              /* this task's own bio (log blocks, commit blocks, superblock, flush) */
	WAIT_DIRTY_THROTTLE,   /* dirty pages over the limit (balance_dirty_pages) */
	WAIT_SLEEP,            /* a sleep or a timer */
	WAIT_WORK,             /* an idle worker waiting for work */
	WAIT_SCHEDULE,         /* an explicit schedule line: not this thread's turn yet */
	WAIT_TRANS_WRITERS,    /* a commit waiting for tasks inside the transaction to leave it */
	WAIT_TICKET,           /* a space reservation ticket (issue 15) */
	WAIT_LOG_MUTEX,        /* the root's log_mutex, held by a task syncing the log (object: log transid) */
	WAIT_ALLOC,            /* a memory allocation in direct reclaim (object: bytes) */
	WAIT_DELAYED_NODE,     /* an inode's delayed node mutex (object: inode number) */
	WAIT_INODE_LOCK,       /* an inode's lock, inode->i_rwsem, the VFS's or btrfs's (object: inode number) */
	WAIT_CAUSE_COUNT
};

/* What a CPU span does (the cost table's rows group by it). */
enum sched_work {
	WORK_SYSCALL = 0,  /* entering and leaving a system call */
	WORK_PAGE_COPY,    /* copying written bytes into the page cache */
	WORK_WRITEBACK,    /* building bios: extent reservation, ordered extents, checksums */
	WORK_LOG,          /* logging an inode into the log tree */
	WORK_LOG_CSUM,     /* looking checksums up in the csum tree for the log */
	WORK_LOG_SYNC,     /* writing the log's blocks out */
	WORK_FINISH_FS,    /* ordered extent completion: the file extent item (fs tree) */
	WORK_FINISH_CSUM,  /* ordered extent completion: the checksums (csum tree) */
	WORK_FINISH_REST,  /* ordered extent completion: the data reference, inode, removal */
	WORK_META,         /* a namespace operation (create, rename, ...) */
	WORK_COMMIT,       /* a transaction commit's CPU work */
	WORK_ENDIO,        /* a bio's completion */
	WORK_SEARCH,       /* a tree search: taking a block's lock, and a binary search of it on the way down */
	WORK_COUNT
};

enum sched_bio_op {
	BIO_DATA = 0,   /* file data of an ordered extent */
	BIO_LOG,        /* log tree blocks */
	BIO_META,       /* a commit's tree blocks */
	BIO_FLUSH,      /* a cache flush */
	BIO_SUPER,      /* a superblock (FUA) */
	BIO_OP_COUNT
};

enum sched_task_kind {
	TASK_THREAD = 0,    /* a scenario thread (or fio job) */
	TASK_FLUSHER,       /* writeback of dirty pages: every 5 s, expired after 30 s; or over the background limit */
	TASK_FINISH,        /* btrfs-endio-write: ordered extent completion */
	TASK_TRANSACTION,   /* btrfs-transaction: commits every commit interval */
	TASK_DELAYED,       /* btrfs-delayed-meta: flushes delayed items (btrfs_async_run_delayed_root) */
	TASK_RECLAIM,       /* the async reclaim workers of metadata and data space (flush states for tickets) */
	TASK_KIND_COUNT
};

extern const char *const sched_wait_names[WAIT_CAUSE_COUNT];
extern const char *const sched_work_names[WORK_COUNT];
extern const char *const sched_bio_op_names[BIO_OP_COUNT];
extern const char *const sched_task_kind_names[TASK_KIND_COUNT];
const char *sched_wait_cause_name(int cause);
const char *sched_work_name(int work);
const char *sched_bio_op_name(int op);
const char *sched_task_kind_name(int kind);

enum sched_policy {
	SCHED_SEED = 0,        /* ties broken by a seeded random key */
	SCHED_ROUND_ROBIN = 1, /* ties broken first come, first served */
};

struct sched;
struct sched_task;
/* A task's step: resumes it. Returns 0 (the task has asked for what comes
 * next with sched_cpu, sched_wait, sched_sleep or sched_exit) or an error,
 * which stops the run. */
typedef int (*sched_step_fn)(struct sched *s, struct sched_task *t);

struct sched_task {
	int id;
	int kind;          /* enum sched_task_kind */
	int index;         /* its number among tasks of its kind (thread: its index in the section) */
	char name[24];
	int pc;            /* where its state machine resumes */
	int done;
	sched_step_fn step;
	void *ctx;
	/* while blocked */
	int blocked, cause;
	u64 object, wait_start;
	/* while waiting for a CPU */
	u64 cpu_want;
	int cpu_work;
	/* tree locks held, and the one waited for */
	struct sched_lock **held;
	size_t nheld, capheld;
	struct sched_lock *wants;
	int wants_mode;
	u64 lock_pre_ns; /* the CPU time of taking the lock it asks for next, spent before asking:
			  * counted in the wait its lock_acquire reports, as the kernel's diff_ns counts it */
	/* totals */
	u64 waited[WAIT_CAUSE_COUNT];
	u64 busy_ns;
};

/* A wait queue: the tasks blocked on one condition, woken all at once. */
struct sched_wq {
	int *ids;
	size_t n, cap;
};

struct sched_lock_waiter {
	int task, mode;
	u64 since;
	int sleeping; /* it went to sleep (the holder was not running): its turn comes after a wakeup */
};

/* A read/write lock with a FIFO of waiters (the kernel's extent buffer
 * locks; a writer waiting blocks readers that come after it). */
/* A sched_lock's level below 0: not a tree block's lock, bytenr the inode. */
enum {
	SCHED_LOCK_DELAYED_NODE = -1, /* its delayed node's mutex (delayed_node->mutex) */
	SCHED_LOCK_INODE = -2,        /* its lock, inode->i_rwsem (taken exclusive) */
};

struct sched_lock {
	u64 tree, bytenr;
	int level;
	int readers, writer; /* writer: task id + 1, 0 when none */
	struct sched_lock_waiter *w;
	size_t nw, capw;
	u64 acquired, contended, wait_ns;
};

/* Starts a simulation over fs (its clock is fs->clock_ns). ncpus >= 1. */
struct sched *sched_create(struct btrfs_fs_info *fs, int ncpus, int policy, u64 seed);
void sched_destroy(struct sched *s);
struct btrfs_fs_info *sched_fs(struct sched *s);
u64 sched_now(const struct sched *s);
/* A new task, ready to run now (its first step at the current time). */
struct sched_task *sched_spawn(struct sched *s, int kind, int index, const char *name, sched_step_fn step, void *ctx);
struct sched_task *sched_task(struct sched *s, int id);
size_t sched_ntasks(const struct sched *s);

/* What a step asks for (call exactly one, then return 0). */
void sched_cpu(struct sched *s, struct sched_task *t, u64 ns, int work);
void sched_sleep(struct sched *s, struct sched_task *t, u64 ns);
/* Blocked ns for cause (a stall that is not a sleep: direct reclaim). */
void sched_stall(struct sched *s, struct sched_task *t, u64 ns, int cause, u64 object);
/* schedule_timeout(n): wakes at the tick after jiffies + n (n to n + 1 jiffies) */
void sched_sleep_jiffies(struct sched *s, struct sched_task *t, u64 n, u64 jiffy_ns);
void sched_wait(struct sched *s, struct sched_task *t, struct sched_wq *wq, int cause, u64 object);
void sched_exit(struct sched *s, struct sched_task *t);
/* Resumes t at once (no time passes): a step that has nothing to wait for. */
void sched_yield_now(struct sched *s, struct sched_task *t);

/* Wakes every task on wq (they resume now, in the order they blocked). */
void sched_wake_all(struct sched *s, struct sched_wq *wq);
/* The same, each woken task running extra_ns later than a wakeup's latency
 * (it waits for a CPU the scheduler gave it: the waker's). */
void sched_wake_all_later(struct sched *s, struct sched_wq *wq, u64 extra_ns);
/* Wakes the first task on wq (a workqueue handing one item to one idle worker). */
void sched_wake_one(struct sched *s, struct sched_wq *wq);
void sched_wq_free(struct sched_wq *wq);

/* Takes lk for t: 1 when held at once, 0 when t now waits for it (it
 * resumes holding it). mode: BTRFS_LOCK_READ or BTRFS_LOCK_WRITE. */
int sched_lock(struct sched *s, struct sched_task *t, struct sched_lock *lk, int mode);
void sched_unlock(struct sched *s, struct sched_task *t, struct sched_lock *lk, int mode);
void sched_lock_free(struct sched_lock *lk);

/* A callback at a time (the device's completions): fn(arg, id) at now + ns. */
typedef int (*sched_timer_fn)(struct sched *s, void *arg, u64 id);
int sched_at(struct sched *s, u64 ns, sched_timer_fn fn, void *arg, u64 id);

/* Runs events until stop(arg) is true before the next one, no event is
 * left, or the clock would pass until (0: no limit). 0, or a step's error. */
int sched_run(struct sched *s, int (*stop)(struct sched *s, void *arg), void *arg, u64 until);
/* A bound on the events sched_run may run (the run's cost: `--max-events`):
 * used of max spent already (0: no bound). Past it sched_run fails with
 * EINVAL, naming the bound; so it does past cpu_deadline_s (cpuclock_s,
 * checked every 4096 events; 0: none), the run's CPU-time bound. */
void sched_set_budget(struct sched *s, u64 used, u64 max, double cpu_deadline_s, double max_cpu_s);
u64 sched_events(const struct sched *s);
/* Whether an event is pending (besides the tasks blocked). */
int sched_pending(const struct sched *s);
/* A task woken from a wait (a wait queue, a lock handed to it) runs this
 * long after the wakeup: the scheduler's latency. 0 at first. */
void sched_set_wakeup_ns(struct sched *s, u64 ns);
/* Lock waiters spin while the holder runs (the kernel's rwsem and mutex
 * optimistic spinning): one whose holder never stopped running gets the lock
 * as it is released, with no wakeup; one that saw it stop (blocked, or
 * waiting for a CPU) sleeps and runs a wakeup after its turn. Off: every
 * waiter sleeps. The spinning itself takes no CPU in the model. */
void sched_set_lock_spin(struct sched *s, int on);
/* CPU spans and wakeup latencies vary by up to pct percent either way,
 * drawn from the seeded stream (0: exact). */
void sched_set_jitter(struct sched *s, u32 pct);
/* The seeded random stream (for choices a model makes, e.g. randwrite offsets). */
u64 sched_random(struct sched *s);
/* A task waited for this long by cause, all tasks together. */
void sched_wait_totals(const struct sched *s, u64 out[WAIT_CAUSE_COUNT]);
#endif
