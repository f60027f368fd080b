#include "checkpoint.h"
#include "wallclock.h"
#include "disk-io.h"
#include "u64map.h"
#include "array.h"
#include "print-tree.h"
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

struct checkpoint {
	u64 unit;                /* units run before it */
	u64 events;              /* events emitted before it (the seq of the next) */
	struct scenario_run *run;
};

struct scenario_session {
	char *text;
	size_t len;
	struct checkpoint *cps;  /* ascending by unit; cps[0] is unit 0 */
	size_t ncps, capcps;
	/* each command line, in order, with the units run before its first one
	 * (a table per command, not per line: blank lines cost nothing) */
	struct line_mark {
		int line;
		u64 units;
	} *marks;
	size_t nmarks, capmarks;
	u64 units;               /* of the whole run */
	u64 command_events;      /* events of its commands: the final commit's come after */
	u64 every;
	u64 budget;              /* bytes the checkpoints may hold (about) */
	struct scenario_run *cursor; /* the last seek's run, or NULL */
	u64 units_run;           /* by seeks */
	struct scenario_result result;
	double run_ms;
};

/* Room for one more of n elements of size in *a (capacity *cap). 0 or ENOMEM. */
static int room_for_one(void *a, size_t n, size_t *cap, size_t size, const char *what, struct blab_err *err)
{
	return array_room(a, n, cap, size, 16) ? blab_fail(err, BLAB_ENOMEM, "%s", what) : 0;
}

static int add_checkpoint(struct scenario_session *s, const struct scenario_run *run, struct blab_err *err)
{
	if (room_for_one(&s->cps, s->ncps, &s->capcps, sizeof(*s->cps), "checkpoints", err))
		return err->code;
	struct scenario_run *c = scenario_clone(run, err);
	if (!c)
		return err->code;
	s->cps[s->ncps++] = (struct checkpoint){.unit = scenario_units(run), .events = scenario_fs(run)->trace.next_seq, .run = c};
	return 0;
}

/* Line `line` starts after `units` units. */
static int mark_line(struct scenario_session *s, int line, u64 units, struct blab_err *err)
{
	if (room_for_one(&s->marks, s->nmarks, &s->capmarks, sizeof(*s->marks), "line table", err))
		return err->code;
	s->marks[s->nmarks++] = (struct line_mark){line, units};
	return 0;
}

/* Past the budget, every other checkpoint goes and the spacing doubles:
 * memory stays bounded, and a seek costs at most twice as many units. The
 * cost is measured at every 8th checkpoint. */
static void thin_out(struct scenario_session *s)
{
	if (s->ncps < 16 || s->ncps % 8)
		return;
	struct session_stats st;
	scenario_session_stats(s, &st);
	if (st.bytes <= s->budget)
		return;
	size_t n = 1;
	for (size_t i = 1; i < s->ncps; i++) {
		if (i % 2)
			scenario_abort(s->cps[i].run);
		else
			s->cps[n++] = s->cps[i];
	}
	s->ncps = n;
	s->every *= 2;
}

int scenario_session_new(const char *text, size_t len, const char *name, const struct scenario_options *o, u64 every,
			 struct scenario_session **out, struct blab_err *err)
{
	*out = NULL;
	struct timespec t0 = wallclock_now();
	struct scenario_session *s = calloc(1, sizeof(*s));
	if (!s || !(s->text = malloc(len ? len : 1))) {
		free(s);
		return blab_fail(err, BLAB_ENOMEM, "scenario session");
	}
	memcpy(s->text, text, len);
	s->len = len;
	s->every = every ? every : CHECKPOINT_EVERY;
	s->budget = CHECKPOINT_BUDGET;
	struct scenario_options so = *o;
	so.no_final_commit = 0;
	struct scenario_run *run;
	int ret = scenario_begin(s->text, len, name, &so, 0, &run, err);
	if (ret) {
		scenario_session_free(s);
		return ret;
	}
	int last = 0; /* line of the last unit run */
	ret = add_checkpoint(s, run, err);
	for (int next; !ret && (next = scenario_next_line(run)) > 0;) {
		if (next != last && (ret = mark_line(s, next, scenario_units(run), err)))
			break;
		last = next;
		if (scenario_step(run) < 0)
			break; /* the run's own error: scenario_end reports it */
		if (scenario_units(run) % s->every == 0 && !(ret = add_checkpoint(s, run, err)))
			thin_out(s);
	}
	if (ret) {
		scenario_abort(run);
		scenario_session_free(s);
		return ret;
	}
	s->units = scenario_units(run);
	s->command_events = scenario_fs(run)->trace.next_seq;
	if ((ret = scenario_end(run, &s->result, err))) {
		scenario_session_free(s);
		return ret;
	}
	s->run_ms = wallclock_ms_since(&t0);
	*out = s;
	return 0;
}

void scenario_session_free(struct scenario_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncps; i++)
		scenario_abort(s->cps[i].run);
	free(s->cps);
	free(s->marks);
	if (s->cursor)
		scenario_abort(s->cursor);
	btrfs_fs_free(s->result.fs);
	scenario_result_free(&s->result);
	free(s->text);
	free(s);
}

struct scenario_result *scenario_session_result(struct scenario_session *s)
{
	return &s->result;
}

/* The last checkpoint whose units (by_events: events) are at most at; 0 when none is. */
static size_t last_checkpoint(const struct scenario_session *s, int by_events, u64 at)
{
	size_t lo = 0, hi = s->ncps;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if ((by_events ? s->cps[mid].events : s->cps[mid].unit) <= at)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int scenario_session_seek(struct scenario_session *s, int line, struct btrfs_fs_info **fs, struct blab_err *err)
{
	*fs = NULL;
	/* the units before the first command line after `line` (all of them when none follows) */
	size_t lo = 0, hi = s->nmarks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->marks[mid].line <= line)
			lo = mid + 1;
		else
			hi = mid;
	}
	u64 target = lo < s->nmarks ? s->marks[lo].units : s->units;
	const struct checkpoint *cp = &s->cps[last_checkpoint(s, 0, target)];
	u64 at = s->cursor ? scenario_units(s->cursor) : 0;
	if (!s->cursor || at > target || at < cp->unit) {
		if (s->cursor)
			scenario_abort(s->cursor);
		if (!(s->cursor = scenario_clone(cp->run, err)))
			return err->code;
	}
	while (scenario_units(s->cursor) < target) {
		int ret = scenario_step(s->cursor);
		if (ret <= 0) {
			/* the first run went past here: a difference is the core's bug */
			scenario_abort(s->cursor);
			s->cursor = NULL;
			return blab_fail(err, ret ? ret : BLAB_EINVAL, "seeking to line %d: the run from a checkpoint stopped early (%s)",
					 line, ret ? "an error" : "the script ended");
		}
		s->units_run++;
	}
	*fs = scenario_fs(s->cursor);
	return 0;
}

int scenario_session_copy(struct scenario_session *s, int line, struct btrfs_fs_info **fs, struct blab_err *err)
{
	struct btrfs_fs_info *at;
	int ret = scenario_session_seek(s, line, &at, err);
	if (ret)
		return ret;
	*fs = btrfs_fs_clone(at, err);
	return *fs ? 0 : err->code;
}

int scenario_session_crash(struct scenario_session *s, int line, struct btrfs_fs_info **fs, struct blab_err *err)
{
	struct btrfs_fs_info *at;
	int ret = scenario_session_seek(s, line, &at, err);
	if (ret)
		return ret;
	/* a power cut keeps only what the device holds: a copy of the device
	 * (its pages shared), opened as the next mount opens it; the state in
	 * memory is never copied */
	struct blab_device dev;
	if ((ret = device_clone(&at->dev, &dev)))
		return blab_fail(err, ret, "a copy of the device at line %d", line);
	if (!(*fs = btrfs_open(&dev, err)))
		return err->code ? err->code : BLAB_EIO;
	/* the trace starts at the crash point: the replay's steps are what the player shows */
	trace_free(&(*fs)->trace);
	(*fs)->trace = (struct blab_trace){.enabled = 1};
	return 0;
}

/* A copy of checkpoint lo's run that counts its events from the
 * checkpoint's (keeping none) and calls hook with each: NULL with err. */
static struct scenario_run *hooked_copy(struct scenario_session *s, size_t lo, trace_hook_fn hook, void *ctx, struct blab_err *err)
{
	struct scenario_run *run = scenario_clone(s->cps[lo].run, err);
	if (!run)
		return NULL;
	struct blab_trace *t = &scenario_fs(run)->trace;
	t->enabled = 1;
	t->count_only = 1;
	t->next_seq = s->cps[lo].events;
	t->hook = hook;
	t->hook_ctx = ctx;
	return run;
}

/* What a run stopped at an event captures. */
struct event_capture {
	u64 seq;
	u64 tree_id;
	int max_leaf_entries;
	struct strbuf *out;
	int done;
	int ret;
	struct blab_err err;
};

static void capture_at_event(void *ctx, struct blab_trace *t, const struct trace_event *e)
{
	struct event_capture *c = ctx;
	if (e->seq != c->seq)
		return;
	/* the trace is the filesystem's own (a power cut moves it to the next mount's) */
	struct btrfs_fs_info *fs = (struct btrfs_fs_info *)((char *)t - offsetof(struct btrfs_fs_info, trace));
	t->hook = NULL;
	c->done = 1;
	c->ret = btrfs_dump_tree_json_opts(fs, c->out, c->tree_id, c->max_leaf_entries);
	if (c->ret)
		c->err = fs->err;
}

int scenario_session_dump_at_event(struct scenario_session *s, u64 seq, u64 tree_id, int max_leaf_entries,
				   struct strbuf *out, struct blab_err *err)
{
	size_t lo = last_checkpoint(s, 1, seq); /* the last before the event */
	if (!s->ncps || s->cps[lo].events > seq)
		return blab_fail(err, BLAB_EINVAL, "event %llu: before the first checkpoint", (unsigned long long)seq);
	if (seq >= s->command_events)
		return blab_fail(err, BLAB_EINVAL, "event %llu: not in a command of the script (the final commit, or past the end)",
				 (unsigned long long)seq);
	struct event_capture c = {.seq = seq, .tree_id = tree_id, .max_leaf_entries = max_leaf_entries, .out = out};
	struct scenario_run *run = hooked_copy(s, lo, capture_at_event, &c, err);
	if (!run)
		return err->code;
	int ret = 0;
	while (!c.done && (ret = scenario_step(run)) > 0)
		s->units_run++;
	scenario_abort(run);
	if (c.done) {
		if (c.ret)
			*err = c.err;
		return c.ret;
	}
	return blab_fail(err, ret < 0 ? ret : BLAB_EINVAL, "event %llu: not in a command of the script (%s)",
			 (unsigned long long)seq, ret < 0 ? "the run from a checkpoint failed" : "the final commit, or past the end");
}

/* What a run stopped at a crash point captures: a copy of its device. */
struct device_capture {
	u64 seq;
	int done;
	int ret;
	struct blab_device dev;
};

static void capture_device(void *ctx, struct blab_trace *t, const struct trace_event *e)
{
	struct device_capture *c = ctx;
	if (e->seq != c->seq)
		return;
	struct btrfs_fs_info *fs = (struct btrfs_fs_info *)((char *)t - offsetof(struct btrfs_fs_info, trace));
	t->hook = NULL;
	c->done = 1;
	c->ret = device_clone(&fs->dev, &c->dev);
}

int scenario_session_crash_at_event(struct scenario_session *s, u64 seq, struct btrfs_fs_info **fs, struct blab_err *err)
{
	*fs = NULL;
	size_t lo = last_checkpoint(s, 1, seq);
	if (!s->ncps || s->cps[lo].events > seq)
		return blab_fail(err, BLAB_EINVAL, "event %llu: before the first checkpoint (mkfs)", (unsigned long long)seq);
	struct device_capture c = {.seq = seq};
	struct scenario_run *run = hooked_copy(s, lo, capture_device, &c, err);
	if (!run)
		return err->code;
	int ret = 0;
	while (!c.done && (ret = scenario_step(run)) > 0)
		s->units_run++;
	if (!c.done && ret == 0) {
		/* in the final commit: the rest of the run, then the commit, hooked */
		struct scenario_result res;
		scenario_fs(run)->trace.hook = capture_device;
		scenario_fs(run)->trace.hook_ctx = &c;
		if (!(ret = scenario_end(run, &res, err))) {
			btrfs_fs_free(res.fs);
			scenario_result_free(&res);
		}
		run = NULL;
	}
	if (run)
		scenario_abort(run);
	if (!c.done)
		return ret < 0 ? ret
			       : blab_fail(err, BLAB_EINVAL, "event %llu: past the end of the run", (unsigned long long)seq);
	if (c.ret)
		return blab_fail(err, c.ret, "a copy of the device at event %llu", (unsigned long long)seq);
	if (!(*fs = btrfs_open(&c.dev, err)))
		return err->code ? err->code : BLAB_EIO;
	trace_free(&(*fs)->trace);
	(*fs)->trace = (struct blab_trace){.enabled = 1};
	return 0;
}

u64 scenario_session_units_run(const struct scenario_session *s)
{
	return s->units_run;
}

/* Counts each block's bytes once across checkpoints (clones share them). */
struct count_blocks {
	struct u64map *seen;
	u64 *blocks;
};

static int count_block(void *ctx, const struct extent_buffer *eb)
{
	struct count_blocks *c = ctx;
	u64 key = (u64)(uintptr_t)eb->data;
	if (!u64map_get(c->seen, key) && u64map_put(c->seen, key))
		(*c->blocks)++;
	return 0;
}

void scenario_session_stats(const struct scenario_session *s, struct session_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->units = s->units;
	st->command_events = s->command_events;
	st->lines = s->result.lines;
	st->checkpoints = s->ncps;
	st->every = s->every;
	st->run_ms = s->run_ms;
	struct u64map seen;
	u64map_init(&seen, 1);
	u64 tables = 0;
	for (size_t i = 0; i < s->ncps; i++) {
		const struct btrfs_fs_info *fs = scenario_fs(s->cps[i].run);
		const u8 *pg;
		for (u64 p = 0; device_next_page(&fs->dev, &p, &pg) > 0; p++) {
			if (!u64map_get(&seen, (u64)(uintptr_t)pg) && u64map_put(&seen, (u64)(uintptr_t)pg))
				st->pages++;
		}
		tables += device_table_bytes(&fs->dev);
		struct count_blocks cb = {&seen, &st->blocks};
		btrfs_for_each_cached_eb(fs, count_block, &cb);
	}
	u64map_free(&seen);
	u64 nodesize = s->ncps ? scenario_fs(s->cps[0].run)->nodesize : 0;
	st->bytes = st->pages * DEVICE_PAGE_SIZE + st->blocks * nodesize + tables;
}
