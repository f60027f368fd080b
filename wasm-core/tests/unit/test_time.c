/* test_time.c — the page cache, ordered extents and timed sections:
 * determinism, the counts seed 003 names, schedules, the fsync modes,
 * and scripts that are wrong. */
#include "test.h"
#include "../../src/scenario.h"
#include "../../src/delalloc.h"
#include "../../src/ordered-data.h"
#include "../../src/disk-io.h"
#include "../../src/file.h"
#include "../../src/inode.h"
#include "../../src/trace.h"
#include "../../src/sched.h"
#include "../../src/mkfs.h"
#include <stdlib.h>

/* The run's trace as one string of JSON lines (NULL on failure). */
static char *trace_of(const char *script, u64 seed, struct scenario_result *keep)
{
	struct scenario_options o = {.seed = seed, .now = 1, .trace = 1};
	struct scenario_result res;
	struct blab_err err = {0};
	if (scenario_run(script, strlen(script), "t", &o, &res, &err)) {
		printf("  %s\n", err.msg);
		return NULL;
	}
	struct blab_trace *t = &res.fs->trace;
	size_t cap = t->len * 200 + 1, len = 0;
	char *out = malloc(cap);
	for (size_t i = 0; out && i < t->len; i++) {
		char buf[TRACE_JSON_MAX];
		int n = trace_event_json(&t->ev[i], buf, sizeof(buf));
		if (len + (size_t)n + 2 > cap) {
			char *g = realloc(out, cap *= 2);
			if (!g) {
				free(out);
				out = NULL;
				break;
			}
			out = g;
		}
		memcpy(out + len, buf, (size_t)n);
		len += (size_t)n;
		out[len++] = '\n';
	}
	if (out)
		out[len] = 0;
	if (keep)
		*keep = res;
	else {
		btrfs_fs_free(res.fs);
		scenario_result_free(&res);
	}
	return out;
}

static const char *FIO4 = "mkfs size=512M\nset device=nvme\nfio jobs=4 size=256K bs=64K fsync=1 rw=write\n";

TEST(time_same_seed_same_trace)
{
	char *a = trace_of(FIO4, 7, NULL), *b = trace_of(FIO4, 7, NULL), *c = trace_of(FIO4, 8, NULL);
	CHECK(a && b && c);
	CHECK(strcmp(a, b) == 0);
	CHECK(strcmp(a, c) != 0); /* another seed: another interleaving */
	CHECK_STR_CONTAINS(a, "\"kind\":\"ordered_logged\"");
	free(a);
	free(b);
	free(c);
}

TEST(time_fio_counts_as_the_kernel)
{
	/* seed 003's workload: an ordered extent a write, and every fsync but
	 * each file's first (a full sync of a new inode) finds one in flight */
	struct scenario_result res;
	char *t = trace_of(FIO4, 3, &res);
	CHECK(t);
	free(t);
	const struct btrfs_ordered_stats *st = btrfs_ordered_stats(res.fs);
	CHECK_EQ_U64(st->added, 16);
	CHECK_EQ_U64(st->finished, 16);
	CHECK_EQ_U64(st->logged_in_flight, 16 - 4);
	CHECK(res.timed);
	CHECK_EQ_U64(res.timed->fsyncs, 16);
	CHECK_EQ_U64(res.timed->bytes_written, 4 * 256 * 1024);
	CHECK(res.timed->busy_ns > 0);
	CHECK_EQ_U64(test_check_problems(res.fs), 0);
	btrfs_fs_free(res.fs);
	scenario_result_free(&res);

	/* fsync_wait=ordered: every fsync waits for its ordered extent: none in flight */
	const char *ord = "mkfs size=512M\nset fsync_wait=ordered\nfio jobs=4 size=256K bs=64K fsync=1 rw=write\n";
	t = trace_of(ord, 3, &res);
	CHECK(t);
	free(t);
	CHECK_EQ_U64(btrfs_ordered_stats(res.fs)->logged_in_flight, 0);
	CHECK(res.timed->waited[WAIT_ORDERED] > 0);
	btrfs_fs_free(res.fs);
	scenario_result_free(&res);
}

/* The lines of TASK_OP events, in order, as a string like "3 2 4". */
static void op_lines(const struct btrfs_fs_info *fs, char *out, size_t n)
{
	size_t len = 0;
	out[0] = 0;
	for (size_t i = 0; i < fs->trace.len && len + 8 < n; i++)
		if (fs->trace.ev[i].kind == TRACE_TASK_OP)
			len += (size_t)snprintf(out + len, n - len, "%s%llu", len ? " " : "", (unsigned long long)fs->trace.ev[i].a);
}

TEST(time_schedule_line_orders_threads)
{
	const char *s = "create /a\ncreate /b\n"
			"schedule B B A\n"
			"A: write /a 0 4K\n"  /* line 4 */
			"A: fsync /a\n"       /* 5 */
			"B: write /b 0 4K\n"  /* 6 */
			"B: fsync /b\n";      /* 7 */
	struct scenario_result res;
	char *t = trace_of(s, 1, &res);
	CHECK(t);
	free(t);
	char got[128];
	op_lines(res.fs, got, sizeof(got));
	CHECK(!strncmp(got, "6 7 4", 5));
	btrfs_fs_free(res.fs);
	scenario_result_free(&res);

	/* round robin: same-time ties first come, first served */
	const char *rr = "create /a\ncreate /b\nset sched=rr\nthread A\nwrite /a 0 4K\nend\nthread B\nwrite /b 0 4K\nend\n";
	t = trace_of(rr, 1, &res);
	CHECK(t);
	free(t);
	op_lines(res.fs, got, sizeof(got));
	CHECK(!strcmp(got, "5 8"));
	btrfs_fs_free(res.fs);
	scenario_result_free(&res);
}

TEST(time_page_cache_until_writeback)
{
	/* a write lives in the page cache: read back at once, lost by a crash
	 * unless an fsync or a commit wrote it */
	struct scenario_options o = {.seed = 1, .now = 1, .no_final_commit = 1};
	struct scenario_run *r;
	struct blab_err err = {0};
	const char *s = "create /f\nwrite /f 0 10000 4\n";
	CHECK(scenario_begin(s, strlen(s), "t", &o, 1, &r, &err) == 0);
	CHECK(scenario_step(r) == 1 && scenario_step(r) == 1);
	struct btrfs_fs_info *fs = scenario_fs(r);
	u64 ino, got;
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/f", &ino) == 0);
	CHECK_EQ_U64(btrfs_dirty_bytes(fs, ino), 12288);
	u8 buf[10000];
	CHECK(btrfs_file_read(fs, fs->fs_root, ino, 0, buf, sizeof(buf), &got, 1) == 0);
	CHECK_EQ_U64(got, 10000);
	for (u64 i = 0; i < got; i++)
		if (buf[i] != scenario_data_byte(4, i))
			CHECK(!"the page cache answers reads");
	struct btrfs_inode in;
	CHECK(btrfs_read_inode(fs, fs->fs_root, ino, &in) == 0);
	CHECK_EQ_U64(in.size, 0); /* disk_i_size: nothing completed yet */
	scenario_abort(r);

	struct scenario_result res;
	const char *lost = "create /f\ncommit\nwrite /f 0 10000 4\ncrash\n";
	struct scenario_options o2 = {.seed = 1, .now = 1};
	CHECK(scenario_run(lost, strlen(lost), "t", &o2, &res, &err) == 0);
	CHECK(btrfs_lookup_path(res.fs, res.fs->fs_root, "/f", &ino) == 0);
	CHECK(btrfs_read_inode(res.fs, res.fs->fs_root, ino, &in) == 0);
	CHECK_EQ_U64(in.size, 0);
	btrfs_fs_free(res.fs);
	scenario_result_free(&res);
	const char *kept = "create /f\ncommit\nwrite /f 0 10000 4\nwrite /f 10000 10000 4\ncommit\ncrash\n";
	CHECK(scenario_run(kept, strlen(kept), "t", &o2, &res, &err) == 0);
	CHECK(btrfs_lookup_path(res.fs, res.fs->fs_root, "/f", &ino) == 0);
	CHECK(btrfs_read_inode(res.fs, res.fs->fs_root, ino, &in) == 0);
	CHECK_EQ_U64(in.size, 20000);
	CHECK_EQ_U64(btrfs_ordered_stats(res.fs)->added, 0); /* reopened after the crash: counters anew */
	CHECK_EQ_U64(test_check_problems(res.fs), 0);
	btrfs_fs_free(res.fs);
	scenario_result_free(&res);
}

TEST(time_crash_after_fsync_keeps_in_flight_extents)
{
	/* the threads return with ordered extents still completing; the power
	 * cut comes before they do: the log alone brings the data back */
	const char *s = "mkfs size=512M\nset cost.finish_fs=5ms\nfio jobs=2 size=128K bs=64K fsync=1 rw=write\ncrash\n";
	struct scenario_options o = {.seed = 2, .now = 1};
	struct scenario_result res;
	struct blab_err err = {0};
	CHECK(scenario_run(s, strlen(s), "t", &o, &res, &err) == 0);
	CHECK(res.crashed);
	CHECK(btrfs_replay_log(res.fs, NULL) == 0);
	for (int j = 0; j < 2; j++) {
		char path[32];
		snprintf(path, sizeof(path), "/writers.%d.0", j);
		u64 ino;
		struct btrfs_inode in;
		CHECK(btrfs_lookup_path(res.fs, res.fs->fs_root, path, &ino) == 0);
		CHECK(btrfs_read_inode(res.fs, res.fs->fs_root, ino, &in) == 0);
		CHECK_EQ_U64(in.size, 128 * 1024);
	}
	CHECK_EQ_U64(test_check_problems(res.fs), 0);
	btrfs_fs_free(res.fs);
	scenario_result_free(&res);
}

TEST(time_script_errors)
{
	static const struct {
		const char *script, *msg;
	} cases[] = {
		{"thread A\nwrite /x 0 1\n", "thread A (line 1) has no `end`"},
		{"A:\n", "names a thread but no command follows"},
		{"create /f\nA: crash\n", "'crash' cannot run inside a thread"},
		{"create /f\nthread A\nthread B\nend\n", "has no `end` before this"},
		{"end\n", "`end` without `thread`"},
		{"fio jobs=2 size=1M bs=64K rw=sideways\n", "rw is write or randwrite"},
		{"fio jobs=0 size=1M\n", "jobs is 1 to"},
		{"fio jobs=2 size=100K bs=64K\n", "size is a nonzero multiple of bs"},
		{"fio jobs=2 size=1M colour=red\n", "unknown fio option 'colour'"},
		{"schedule C\ncreate /f\nA: fsync /f\n", "schedule names thread 'C'"},
		{"sleep 5 parsecs\n", "expects sleep DURATION"},
		{"sleep 5y\n", "units are ns, us, ms, s or m"},
		{"set device=floppy\n", "devices are nvme, ssd, hdd and loop"},
		{"set fsync_wait=never\n", "fsync_wait is ordered"},
		{"set cost.teleport=1us\n", "no such cost"},
		{"create /f\nA: write /f 0 1\nA: create /g{1..3}\n", "brace ranges are not allowed inside a thread"},
		{"A: write /missing 0 1\n", "t:1: write: ENOENT"},
		{"set device.cpu=0%\n", "device.cpu is a percentage"},
		{"set tree_locks=leaf\n", "tree_locks is path"},
		{"set log_copy=copy\n", "log_copy is clone"},
		{"set memory_pressure=extreme\n", "memory_pressure is none, moderate or heavy"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct scenario_options o = {.seed = 1, .now = 1};
		struct scenario_result res;
		struct blab_err err = {0};
		int ret = scenario_run(cases[i].script, strlen(cases[i].script), "t", &o, &res, &err);
		if (ret == 0) {
			btrfs_fs_free(res.fs);
			scenario_result_free(&res);
		}
		CHECK(ret != 0);
		CHECK_STR_CONTAINS(err.msg, cases[i].msg);
	}
}

TEST(time_sleep_lets_the_flusher_and_the_kthread_work)
{
	/* dirty pages older than 30 s are written back by the flusher; the
	 * transaction kthread commits every 30 s: after 70 s both have run (at 30 s the commit may come before the writeback) */
	const char *s = "create /f\nwrite /f 0 64K 1\nsleep 70s\ncrash\n";
	struct scenario_options o = {.seed = 1, .now = 1};
	struct scenario_result res;
	struct blab_err err = {0};
	CHECK(scenario_run(s, strlen(s), "t", &o, &res, &err) == 0);
	u64 ino;
	struct btrfs_inode in;
	CHECK(btrfs_lookup_path(res.fs, res.fs->fs_root, "/f", &ino) == 0);
	CHECK(btrfs_read_inode(res.fs, res.fs->fs_root, ino, &in) == 0);
	CHECK_EQ_U64(in.size, 65536);
	CHECK(res.timed && res.timed->commits >= 1);
	btrfs_fs_free(res.fs);
	scenario_result_free(&res);
}

/* the scenario's data, a word at a time, equals it a byte at a time */
TEST(time_scenario_data_fill)
{
	u8 buf[300];
	for (u64 pos = 0; pos < 20; pos++)
		for (u64 len = 0; len < sizeof(buf); len += 7) {
			memset(buf, 0xa5, sizeof(buf));
			scenario_data_fill(9, pos * 4093, buf, len);
			for (u64 i = 0; i < len; i++)
				CHECK(buf[i] == scenario_data_byte(9, pos * 4093 + i));
			CHECK(len == sizeof(buf) || buf[len] == 0xa5);
		}
}

/* Two tasks taking two tree locks in opposite orders: the wait that closes
 * the cycle ends the run with EDEADLK, naming both waits; in one order, no
 * deadlock. */
struct dl_ctx {
	struct sched_lock *first, *second;
	int step;
};

static int dl_step(struct sched *s, struct sched_task *t)
{
	struct dl_ctx *c = t->ctx;
	switch (c->step) {
	case 0:
		c->step = 1;
		if (!sched_lock(s, t, c->first, BTRFS_LOCK_WRITE))
			return 0;
		/* fallthrough */
	case 1:
		c->step = 2;
		sched_cpu(s, t, 1000, WORK_LOG);
		return 0;
	case 2:
		c->step = 3;
		if (!sched_lock(s, t, c->second, BTRFS_LOCK_READ))
			return 0;
		/* fallthrough */
	default:
		sched_unlock(s, t, c->second, BTRFS_LOCK_READ);
		sched_unlock(s, t, c->first, BTRFS_LOCK_WRITE);
		sched_exit(s, t);
		return 0;
	}
}

static int dl_run(int opposite, struct blab_err *err)
{
	struct mkfs_options o;
	struct btrfs_fs_info *fs = NULL;
	btrfs_mkfs_defaults(&o);
	o.size = 64ULL << 20;
	if (btrfs_mkfs(&o, &fs, err))
		return -100;
	struct sched *s = sched_create(fs, 2, SCHED_ROUND_ROBIN, 1);
	struct sched_lock a = {.tree = 5, .bytenr = 30408704, .level = 0}, b = {.tree = -6LL, .bytenr = 30425088, .level = 1};
	struct dl_ctx c1 = {&a, &b, 0}, c2 = {opposite ? &b : &a, opposite ? &a : &b, 0};
	sched_spawn(s, TASK_THREAD, 0, "fsync A", dl_step, &c1);
	sched_spawn(s, TASK_THREAD, 1, "fsync B", dl_step, &c2);
	int ret = sched_run(s, NULL, NULL, 0);
	*err = fs->err;
	sched_destroy(s);
	sched_lock_free(&a);
	sched_lock_free(&b);
	btrfs_fs_free(fs);
	return ret;
}

TEST(time_lock_cycle_is_a_deadlock)
{
	struct blab_err err = {0};
	CHECK(dl_run(0, &err) == 0);
	CHECK(dl_run(1, &err) == BLAB_EDEADLK);
	printf("  %s\n", err.msg);
	CHECK(strstr(err.msg, "deadlock: ") && strstr(err.msg, "fsync A (task 0)") && strstr(err.msg, "fsync B (task 1)"));
	CHECK(strstr(err.msg, "block 30408704 (level 0) of tree 5") && strstr(err.msg, "block 30425088 (level 1) of tree -6"));
}

/* A lock waiter spins while the holder runs (rwsem optimistic spinning):
 * it runs the moment the lock is let go. Once the holder stops running (a
 * stall), the waiter sleeps, and runs a wakeup after its turn; so does
 * every waiter with spinning off. */
struct spin_ctx {
	struct sched_lock *lk;
	int step, stall;
	u64 released, ran;
};

static int spin_holder(struct sched *s, struct sched_task *t)
{
	struct spin_ctx *c = t->ctx;
	switch (c->step++) {
	case 0:
		sched_lock(s, t, c->lk, BTRFS_LOCK_WRITE);
		sched_cpu(s, t, 5000, WORK_META);
		return 0;
	case 1:
		if (c->stall) {
			sched_stall(s, t, 3000, WAIT_ALLOC, 0);
			return 0;
		}
		/* fallthrough */
	default:
		c->released = sched_now(s);
		sched_unlock(s, t, c->lk, BTRFS_LOCK_WRITE);
		sched_exit(s, t);
		return 0;
	}
}

static int spin_waiter(struct sched *s, struct sched_task *t)
{
	struct spin_ctx *c = t->ctx;
	switch (c->step++) {
	case 0:
		sched_cpu(s, t, 1000, WORK_META); /* the holder takes the lock first */
		return 0;
	case 1:
		if (!sched_lock(s, t, c->lk, BTRFS_LOCK_WRITE))
			return 0;
		/* fallthrough */
	default:
		c->ran = sched_now(s);
		sched_unlock(s, t, c->lk, BTRFS_LOCK_WRITE);
		sched_exit(s, t);
		return 0;
	}
}

/* How long after the holder let go the waiter ran (ns), or -1. */
static long long spin_run(int spin, int stall)
{
	struct mkfs_options o;
	struct btrfs_fs_info *fs = NULL;
	struct blab_err err = {0};
	btrfs_mkfs_defaults(&o);
	o.size = 64ULL << 20;
	if (btrfs_mkfs(&o, &fs, &err))
		return -1;
	struct sched *s = sched_create(fs, 2, SCHED_ROUND_ROBIN, 1);
	sched_set_wakeup_ns(s, 10000);
	sched_set_lock_spin(s, spin);
	struct sched_lock lk = {.tree = 5, .bytenr = 30408704, .level = 0};
	struct spin_ctx h = {.lk = &lk, .stall = stall}, w = {.lk = &lk};
	sched_spawn(s, TASK_THREAD, 0, "holder", spin_holder, &h);
	sched_spawn(s, TASK_THREAD, 1, "waiter", spin_waiter, &w);
	int ret = sched_run(s, NULL, NULL, 0);
	sched_destroy(s);
	sched_lock_free(&lk);
	btrfs_fs_free(fs);
	return ret || !w.ran ? -1 : (long long)(w.ran - h.released);
}

TEST(time_lock_waiter_spins_while_the_holder_runs)
{
	CHECK(spin_run(1, 0) == 0);         /* spinning: the lock and the CPU at once */
	CHECK(spin_run(1, 1) == 10000);     /* the holder stalled: the waiter slept, a wakeup */
	CHECK(spin_run(0, 0) == 10000);     /* no spinning: every waiter sleeps */
}
