#include "sched.h"
#include "wallclock.h"
#include "splitmix.h"
#include "array.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sched_wait_names[WAIT_CAUSE_COUNT] = {
	[WAIT_CPU] = "cpu",
	[WAIT_LOCK] = "tree lock",
	[WAIT_WRITEBACK] = "writeback",
	[WAIT_ORDERED] = "ordered extent",
	[WAIT_TRANSACTION] = "transaction commit",
	[WAIT_LOG_SYNC] = "log sync",
	[WAIT_LOG_WRITERS] = "log writers",
	[WAIT_BIO] = "bio",
	[WAIT_DIRTY_THROTTLE] = "dirty throttle",
	[WAIT_SLEEP] = "sleep",
	[WAIT_WORK] = "idle",
	[WAIT_SCHEDULE] = "schedule",
	[WAIT_TRANS_WRITERS] = "transaction writers",
	[WAIT_TICKET] = "ticket",
	[WAIT_LOG_MUTEX] = "log mutex",
	[WAIT_ALLOC] = "memory allocation",
	[WAIT_DELAYED_NODE] = "delayed node mutex",
	[WAIT_INODE_LOCK] = "inode lock",
};
const char *const sched_work_names[WORK_COUNT] = {
	[WORK_SYSCALL] = "syscall",
	[WORK_PAGE_COPY] = "page copy",
	[WORK_WRITEBACK] = "writeback",
	[WORK_LOG] = "log inode",
	[WORK_LOG_CSUM] = "log csum lookup",
	[WORK_LOG_SYNC] = "log sync",
	[WORK_FINISH_FS] = "finish: fs tree",
	[WORK_FINISH_CSUM] = "finish: csum tree",
	[WORK_FINISH_REST] = "finish: rest",
	[WORK_META] = "namespace op",
	[WORK_COMMIT] = "commit",
	[WORK_ENDIO] = "endio",
	[WORK_SEARCH] = "tree search",
};
const char *const sched_bio_op_names[BIO_OP_COUNT] = {
	[BIO_DATA] = "data", [BIO_LOG] = "log", [BIO_META] = "metadata", [BIO_FLUSH] = "flush", [BIO_SUPER] = "superblock",
};
const char *const sched_task_kind_names[TASK_KIND_COUNT] = {
	[TASK_THREAD] = "thread",
	[TASK_FLUSHER] = "flusher",
	[TASK_FINISH] = "endio-write",
	[TASK_TRANSACTION] = "transaction",
	[TASK_DELAYED] = "delayed-meta",
	[TASK_RECLAIM] = "reclaim",
};

#define NAME_OF(tab, i, n) ((i) >= 0 && (i) < (n) && tab[i] ? tab[i] : "?")
const char *sched_wait_cause_name(int c) { return NAME_OF(sched_wait_names, c, WAIT_CAUSE_COUNT); }
const char *sched_work_name(int w) { return NAME_OF(sched_work_names, w, WORK_COUNT); }
const char *sched_bio_op_name(int op) { return NAME_OF(sched_bio_op_names, op, BIO_OP_COUNT); }
const char *sched_task_kind_name(int k) { return NAME_OF(sched_task_kind_names, k, TASK_KIND_COUNT); }

enum ev_type { EV_RESUME, EV_CPU_DONE, EV_SLEEP_DONE, EV_TIMER };

struct sched_ev {
	u64 time, key;
	int type, task;
	sched_timer_fn fn;
	void *arg;
	u64 id;
};

struct sched {
	struct btrfs_fs_info *fs;
	u64 now;
	int policy;
	u64 rng, seq;
	int ncpus, free_cpus;
	u64 wakeup_ns; /* a woken task runs this long after its wakeup (scheduler latency) */
	int lock_spin;  /* lock waiters spin while the holder runs (sched_set_lock_spin) */
	u32 jitter_pct; /* CPU spans and wakeups vary by up to this much */
	int *cpuq; /* tasks waiting for a CPU, FIFO */
	size_t ncpuq, capcpuq, cpuq_head;
	struct sched_task **tasks;
	size_t ntasks, captasks;
	struct sched_ev *heap;
	size_t nheap, capheap;
	int deadlock; /* a lock wait closed a cycle: fs->err says which */
	u64 events, max_events; /* events run, and the bound on them (0: none) */
	double cpu_deadline_s, max_cpu_s; /* the run's CPU-time bound (0: none) */
};

u64 sched_random(struct sched *s) { return splitmix64(&s->rng); }
void sched_set_wakeup_ns(struct sched *s, u64 ns) { s->wakeup_ns = ns; }
void sched_set_budget(struct sched *s, u64 used, u64 max, double cpu_deadline_s, double max_cpu_s)
{
	s->events = used;
	s->max_events = max;
	s->cpu_deadline_s = cpu_deadline_s;
	s->max_cpu_s = max_cpu_s;
}
u64 sched_events(const struct sched *s) { return s->events; }
void sched_set_lock_spin(struct sched *s, int on) { s->lock_spin = on; }
void sched_set_jitter(struct sched *s, u32 pct) { s->jitter_pct = pct > 90 ? 90 : pct; }

/* ns varied by up to jitter_pct either way, from the seeded stream */
static u64 jitter(struct sched *s, u64 ns)
{
	if (!s->jitter_pct || !ns)
		return ns;
	u64 j = splitmix64(&s->rng) % (2 * (u64)s->jitter_pct + 1);
	return ns * (100 - s->jitter_pct + j) / 100;
}

struct sched *sched_create(struct btrfs_fs_info *fs, int ncpus, int policy, u64 seed)
{
	struct sched *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fs = fs;
	s->now = fs->clock_ns;
	s->policy = policy;
	s->rng = seed ^ 0x5EED5EEDULL;
	s->ncpus = s->free_cpus = ncpus < 1 ? 1 : ncpus;
	return s;
}

void sched_destroy(struct sched *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ntasks; i++) {
		free(s->tasks[i]->held);
		free(s->tasks[i]);
	}
	free(s->tasks);
	free(s->heap);
	free(s->cpuq);
	free(s);
}

struct btrfs_fs_info *sched_fs(struct sched *s) { return s->fs; }
u64 sched_now(const struct sched *s) { return s->now; }
size_t sched_ntasks(const struct sched *s) { return s->ntasks; }
struct sched_task *sched_task(struct sched *s, int id)
{
	return id >= 0 && (size_t)id < s->ntasks ? s->tasks[id] : NULL;
}

static int ev_less(const struct sched_ev *a, const struct sched_ev *b)
{
	return a->time != b->time ? a->time < b->time : a->key < b->key;
}

static int push(struct sched *s, struct sched_ev e)
{
	if (array_room(&s->heap, s->nheap, &s->capheap, sizeof(*s->heap), 64))
		return BLAB_ENOMEM;
	e.key = s->policy == SCHED_SEED ? (splitmix64(&s->rng) & ~0xFFFFFULL) | (s->seq++ & 0xFFFFF) : s->seq++;
	size_t i = s->nheap++;
	while (i) {
		size_t p = (i - 1) / 2;
		if (!ev_less(&e, &s->heap[p]))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = e;
	return 0;
}

static struct sched_ev pop(struct sched *s)
{
	struct sched_ev top = s->heap[0], last = s->heap[--s->nheap];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct sched_ev *best = &last;
		if (l < s->nheap && ev_less(&s->heap[l], best))
			m = l, best = &s->heap[l];
		if (r < s->nheap && ev_less(&s->heap[r], best))
			m = r;
		if (m == i)
			break;
		s->heap[i] = s->heap[m];
		i = m;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

static void emit(struct sched *s, struct trace_event e)
{
	s->fs->clock_ns = s->now;
	fs_trace(s->fs, e);
}

struct sched_task *sched_spawn(struct sched *s, int kind, int index, const char *name, sched_step_fn step, void *ctx)
{
	struct sched_task *t = calloc(1, sizeof(*t));
	if (!t || array_room(&s->tasks, s->ntasks, &s->captasks, sizeof(*s->tasks), 16)) {
		free(t);
		return NULL;
	}
	t->id = (int)s->ntasks;
	t->kind = kind;
	t->index = index;
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->step = step;
	t->ctx = ctx;
	s->tasks[s->ntasks++] = t;
	emit(s, (struct trace_event){.kind = TRACE_TASK_NEW, .slot = t->id, .level = kind, .a = (u64)index});
	if (push(s, (struct sched_ev){.time = s->now, .type = EV_RESUME, .task = t->id})) {
		s->ntasks--;
		free(t);
		return NULL;
	}
	return t;
}

static void start_span(struct sched *s, struct sched_task *t, u64 ns, int work)
{
	ns = jitter(s, ns);
	s->free_cpus--;
	t->busy_ns += ns;
	emit(s, (struct trace_event){.kind = TRACE_TASK_CPU, .slot = t->id, .level = work, .a = ns});
	push(s, (struct sched_ev){.time = s->now + ns, .type = EV_CPU_DONE, .task = t->id});
}

/* t stopped running: the waiters spinning on its locks sleep, and so, in
 * turn, do the waiters spinning on theirs. */
static void stop_running(struct sched *s, const struct sched_task *t, int depth)
{
	for (size_t i = 0; i < t->nheld; i++)
		for (size_t k = 0; k < t->held[i]->nw; k++) {
			struct sched_lock_waiter *w = &t->held[i]->w[k];
			if (w->sleeping)
				continue;
			w->sleeping = 1;
			if (depth < 16)
				stop_running(s, s->tasks[w->task], depth + 1);
		}
}

/* A lock waiter still spinning (it runs, as far as its own waiters see). */
static int spinning(const struct sched_task *t)
{
	if (!t->wants)
		return 0;
	for (size_t k = 0; k < t->wants->nw; k++)
		if (t->wants->w[k].task == t->id)
			return !t->wants->w[k].sleeping;
	return 0;
}

static void block(struct sched *s, struct sched_task *t, int cause, u64 object)
{
	if (s->lock_spin && !spinning(t))
		stop_running(s, t, 0); /* (without spinning every waiter sleeps already) */
	t->blocked = 1;
	t->cause = cause;
	t->object = object;
	t->wait_start = s->now;
	emit(s, (struct trace_event){.kind = TRACE_TASK_WAIT, .slot = t->id, .level = cause, .a = object});
}

static void unblock(struct sched *s, struct sched_task *t)
{
	u64 w = s->now - t->wait_start;
	t->blocked = 0;
	t->waited[t->cause] += w;
	emit(s, (struct trace_event){.kind = TRACE_TASK_WAKE, .slot = t->id, .level = t->cause, .a = t->object, .b = w});
}

void sched_cpu(struct sched *s, struct sched_task *t, u64 ns, int work)
{
	if (!ns) {
		sched_yield_now(s, t);
		return;
	}
	if (s->free_cpus > 0) {
		start_span(s, t, ns, work);
		return;
	}
	t->cpu_want = ns;
	t->cpu_work = work;
	if (array_room(&s->cpuq, s->ncpuq, &s->capcpuq, sizeof(*s->cpuq), 16) == 0)
		s->cpuq[s->ncpuq++] = t->id;
	block(s, t, WAIT_CPU, 0);
}

void sched_stall(struct sched *s, struct sched_task *t, u64 ns, int cause, u64 object)
{
	block(s, t, cause, object);
	push(s, (struct sched_ev){.time = s->now + ns, .type = EV_SLEEP_DONE, .task = t->id});
}

void sched_sleep(struct sched *s, struct sched_task *t, u64 ns)
{
	sched_stall(s, t, ns, WAIT_SLEEP, ns);
}

/* schedule_timeout(n) on a tick grid of jiffy_ns: the timer expires at
 * jiffies + n, and the timer wheel files it in the bucket after that so it
 * never fires early (seen here: timer_start's bucket_expiry is expires + 1),
 * so the task wakes at tick jiffies + n + 1: between n and n + 1 jiffies. */
void sched_sleep_jiffies(struct sched *s, struct sched_task *t, u64 n, u64 jiffy_ns)
{
	if (!jiffy_ns) {
		sched_sleep(s, t, 0);
		return;
	}
	u64 wake = (s->now / jiffy_ns + n + 1) * jiffy_ns;
	sched_sleep(s, t, wake - s->now);
}

void sched_wait(struct sched *s, struct sched_task *t, struct sched_wq *wq, int cause, u64 object)
{
	if (array_room(&wq->ids, wq->n, &wq->cap, sizeof(*wq->ids), 8) == 0)
		wq->ids[wq->n++] = t->id;
	block(s, t, cause, object);
}

void sched_exit(struct sched *s, struct sched_task *t)
{
	(void)s;
	t->done = 1;
}

void sched_yield_now(struct sched *s, struct sched_task *t)
{
	push(s, (struct sched_ev){.time = s->now, .type = EV_RESUME, .task = t->id});
}

void sched_wake_all(struct sched *s, struct sched_wq *wq)
{
	sched_wake_all_later(s, wq, 0);
}

void sched_wake_all_later(struct sched *s, struct sched_wq *wq, u64 extra_ns)
{
	size_t n = wq->n;
	if (!n)
		return;
	int *ids = wq->ids;
	wq->ids = NULL;
	wq->n = wq->cap = 0;
	for (size_t i = 0; i < n; i++) {
		struct sched_task *t = s->tasks[ids[i]];
		if (!t->blocked)
			continue;
		unblock(s, t);
		push(s, (struct sched_ev){.time = s->now + jitter(s, s->wakeup_ns + extra_ns), .type = EV_RESUME, .task = t->id});
	}
	free(ids);
}

void sched_wake_one(struct sched *s, struct sched_wq *wq)
{
	while (wq->n) {
		struct sched_task *t = s->tasks[wq->ids[0]];
		memmove(wq->ids, wq->ids + 1, (wq->n - 1) * sizeof(*wq->ids));
		wq->n--;
		if (!t->blocked)
			continue;
		unblock(s, t);
		push(s, (struct sched_ev){.time = s->now + jitter(s, s->wakeup_ns), .type = EV_RESUME, .task = t->id});
		return;
	}
}

void sched_wq_free(struct sched_wq *wq)
{
	free(wq->ids);
	memset(wq, 0, sizeof(*wq));
}

static int lock_free_for(const struct sched_lock *lk, int mode)
{
	return mode == BTRFS_LOCK_READ ? lk->writer == 0 : lk->writer == 0 && lk->readers == 0;
}

static void lock_take(struct sched *s, struct sched_task *t, struct sched_lock *lk, int mode, u64 waited)
{
	t->wants = NULL;
	if (!array_room(&t->held, t->nheld, &t->capheld, sizeof(*t->held), 8))
		t->held[t->nheld++] = lk; /* (no room: the deadlock check misses it, nothing else) */
	if (mode == BTRFS_LOCK_READ)
		lk->readers++;
	else
		lk->writer = t->id + 1;
	lk->acquired++;
	waited += t->lock_pre_ns;
	t->lock_pre_ns = 0;
	emit(s, (struct trace_event){.kind = TRACE_LOCK_ACQUIRE, .tree = lk->tree, .bytenr = lk->bytenr, .level = lk->level,
				     .slot = t->id, .a = (u64)mode, .b = waited});
}

static int holds(const struct sched_task *t, const struct sched_lock *lk)
{
	for (size_t i = 0; i < t->nheld; i++)
		if (t->held[i] == lk)
			return 1;
	return 0;
}

static const char *lock_mode_name(int mode) { return mode == BTRFS_LOCK_WRITE ? "write" : "read"; }

/* Whether waiting for lk closes a cycle back to t: a holder of lk waits for
 * a lock whose holder waits ... for a lock t holds. depth bounds the walk. */
static int cycle_to(struct sched *s, const struct sched_task *t, const struct sched_lock *lk, struct sched_task **path, int depth)
{
	if (depth >= 16)
		return 0;
	for (size_t i = 0; i < s->ntasks; i++) {
		struct sched_task *h = s->tasks[i];
		if (!holds(h, lk))
			continue;
		path[depth] = h;
		if (h == t)
			return depth + 1;
		if (h->wants) {
			int n = cycle_to(s, t, h->wants, path, depth + 1);
			if (n)
				return n;
		}
	}
	return 0;
}

static void report_deadlock(struct sched *s, struct sched_task *t, struct sched_task **path, int n)
{
	char msg[BLAB_ERRMSG_MAX];
	size_t off = 0;
	const struct sched_task *w = t;
	for (int i = 0; i < n; i++) {
		const struct sched_lock *l = w->wants;
		emit(s, (struct trace_event){.kind = TRACE_DEADLOCK_EDGE, .tree = l->tree, .bytenr = l->bytenr, .level = l->level,
					     .slot = w->id, .a = (u64)w->wants_mode, .b = (u64)path[i]->id});
		if (off < sizeof(msg)) {
			int r = l->level < 0 ? snprintf(msg + off, sizeof(msg) - off, "%s%s (task %d) waits for the %s of inode %llu, held by %s",
							i ? "; " : "", w->name, w->id, l->level == SCHED_LOCK_INODE ? "inode lock" : "delayed node mutex",
							(unsigned long long)l->bytenr, path[i]->name)
					     : snprintf(msg + off, sizeof(msg) - off, "%s%s (task %d) waits to %s-lock block %llu (level %d) of tree %lld, held by %s",
							i ? "; " : "", w->name, w->id, lock_mode_name(w->wants_mode), (unsigned long long)l->bytenr, l->level,
							(long long)l->tree, path[i]->name);
			off = r < 0 ? sizeof(msg) : off + (size_t)r;
		}
		w = path[i];
	}
	s->deadlock = 1;
	blab_fail(&s->fs->err, BLAB_EDEADLK, "deadlock: %s", msg);
}

/* Whether a task holding lk is not running now (blocked or waiting for a CPU). */
static int holder_stopped(const struct sched *s, const struct sched_lock *lk)
{
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i]->blocked && !spinning(s->tasks[i]) && holds(s->tasks[i], lk))
			return 1;
	return 0;
}

int sched_lock(struct sched *s, struct sched_task *t, struct sched_lock *lk, int mode)
{
	if (!lk->nw && lock_free_for(lk, mode)) {
		lock_take(s, t, lk, mode, 0);
		return 1;
	}
	if (array_room(&lk->w, lk->nw, &lk->capw, sizeof(*lk->w), 8)) {
		/* no memory for a waiter: the task spins instead (it retries at once) */
		sched_yield_now(s, t);
		return 0;
	}
	lk->w[lk->nw++] = (struct sched_lock_waiter){t->id, mode, s->now, !s->lock_spin || holder_stopped(s, lk)};
	lk->contended++;
	t->wants = lk;
	t->wants_mode = mode;
	u64 holder = lk->writer ? (u64)(lk->writer - 1) : (u64)-1;
	emit(s, (struct trace_event){.kind = TRACE_LOCK_WAIT, .tree = lk->tree, .bytenr = lk->bytenr, .level = lk->level,
				     .slot = t->id, .a = (u64)mode, .b = holder});
	/* level < 0: not a tree block but an inode's delayed node mutex or its lock (bytenr: the inode) */
	if (lk->level < 0)
		block(s, t, lk->level == SCHED_LOCK_INODE ? WAIT_INODE_LOCK : WAIT_DELAYED_NODE, lk->bytenr);
	else
		block(s, t, WAIT_LOCK, lk->tree);
	/* the wait closes a cycle: the run stops, the trace ending with its edges */
	{
		struct sched_task *path[16];
		int n = cycle_to(s, t, lk, path, 0);
		if (n)
			report_deadlock(s, t, path, n);
	}
	return 0;
}

void sched_unlock(struct sched *s, struct sched_task *t, struct sched_lock *lk, int mode)
{
	for (size_t i = 0; i < t->nheld; i++)
		if (t->held[i] == lk) {
			t->held[i] = t->held[--t->nheld];
			break;
		}
	if (mode == BTRFS_LOCK_READ) {
		if (lk->readers > 0)
			lk->readers--;
	} else {
		lk->writer = 0;
	}
	emit(s, (struct trace_event){.kind = TRACE_LOCK_RELEASE, .tree = lk->tree, .bytenr = lk->bytenr, .level = lk->level,
				     .slot = t->id, .a = (u64)mode});
	/* grant from the head: one writer, or every reader up to the next writer */
	size_t k = 0;
	while (k < lk->nw && lock_free_for(lk, lk->w[k].mode)) {
		struct sched_lock_waiter w = lk->w[k++];
		struct sched_task *wt = s->tasks[w.task];
		u64 waited = s->now - w.since;
		lk->wait_ns += waited;
		lock_take(s, wt, lk, w.mode, waited);
		unblock(s, wt);
		/* the lock is the waiter's from now; a sleeping waiter runs only after its
		 * wakeup (a convoy's cost), a spinning one at once */
		push(s, (struct sched_ev){.time = s->now + (w.sleeping ? jitter(s, s->wakeup_ns) : 0), .type = EV_RESUME, .task = wt->id});
		if (w.mode == BTRFS_LOCK_WRITE)
			break;
	}
	if (k) {
		memmove(lk->w, lk->w + k, (lk->nw - k) * sizeof(*lk->w));
		lk->nw -= k;
	}
}

void sched_lock_free(struct sched_lock *lk)
{
	free(lk->w);
	lk->w = NULL;
	lk->nw = lk->capw = 0;
}

int sched_at(struct sched *s, u64 ns, sched_timer_fn fn, void *arg, u64 id)
{
	return push(s, (struct sched_ev){.time = s->now + ns, .type = EV_TIMER, .task = -1, .fn = fn, .arg = arg, .id = id});
}

int sched_pending(const struct sched *s) { return s->nheap != 0; }

static int resume(struct sched *s, struct sched_task *t)
{
	if (t->done)
		return 0;
	s->fs->clock_ns = s->now;
	return t->step(s, t);
}

int sched_run(struct sched *s, int (*stop)(struct sched *s, void *arg), void *arg, u64 until)
{
	while (s->nheap) {
		if (stop && stop(s, arg))
			return 0;
		if (until && s->heap[0].time > until) {
			s->now = until;
			s->fs->clock_ns = until;
			return 0;
		}
		if (s->max_events && s->events >= s->max_events)
			return blab_fail(&s->fs->err, BLAB_EINVAL,
					 "the run reached its bound of %llu simulated events at %llu ns of virtual time (--max-events, "
					 "or a lower `set max_events=`)",
					 (unsigned long long)s->max_events, (unsigned long long)s->now);
		if (!(++s->events & 4095) && s->cpu_deadline_s > 0 && cpuclock_s() > s->cpu_deadline_s)
			return blab_fail(&s->fs->err, BLAB_EINVAL,
					 "the run reached its bound of %.0f seconds of CPU time at %llu ns of virtual time (--max-time)",
					 s->max_cpu_s, (unsigned long long)s->now);
		struct sched_ev e = pop(s);
		s->now = e.time;
		s->fs->clock_ns = e.time;
		int ret = 0;
		switch (e.type) {
		case EV_TIMER:
			ret = e.fn(s, e.arg, e.id);
			break;
		case EV_CPU_DONE: {
			s->free_cpus++;
			/* the CPU goes to the first task waiting for one */
			if (s->cpuq_head < s->ncpuq) {
				struct sched_task *w = s->tasks[s->cpuq[s->cpuq_head++]];
				if (s->cpuq_head == s->ncpuq)
					s->cpuq_head = s->ncpuq = 0;
				unblock(s, w);
				start_span(s, w, w->cpu_want, w->cpu_work);
			}
			ret = resume(s, s->tasks[e.task]);
			break;
		}
		case EV_SLEEP_DONE:
			unblock(s, s->tasks[e.task]);
			ret = resume(s, s->tasks[e.task]);
			break;
		default:
			ret = resume(s, s->tasks[e.task]);
		}
		if (!ret && s->deadlock)
			ret = BLAB_EDEADLK;
		if (ret)
			return ret;
	}
	if (stop)
		stop(s, arg);
	return 0;
}

void sched_wait_totals(const struct sched *s, u64 out[WAIT_CAUSE_COUNT])
{
	memset(out, 0, sizeof(u64) * WAIT_CAUSE_COUNT);
	for (size_t i = 0; i < s->ntasks; i++)
		for (int c = 0; c < WAIT_CAUSE_COUNT; c++)
			out[c] += s->tasks[i]->waited[c];
}
