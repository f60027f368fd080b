#include "costs.h"
#include "api.h"
#include "tree-log.h"
#include "disk-io.h"
#include "mkfs.h"
#include "print-tree.h"
#include "check.h"
#include "file.h"
#include "inode.h"
#include "scenario.h"
#include "checkpoint.h"
#include <stdlib.h>

#define MAX_HANDLES 64

static struct btrfs_fs_info *handles[MAX_HANDLES];
static struct blab_err last_err;
static struct strbuf out;
static struct scenario_result results[MAX_HANDLES];
static u8 *cat_buf;
/* A session's handle shows its run's end (results[h] is the session's
 * result, not owned); seek_of[h] is the handle that shows its last seek,
 * borrowed from the session (closing it frees nothing). */
static struct scenario_session *sessions[MAX_HANDLES];
static int seek_of[MAX_HANDLES];
static int borrowed[MAX_HANDLES];

/* A free handle, or BLAB_ENOSPC. */
static int free_handle(void)
{
	for (int i = 1; i < MAX_HANDLES; i++)
		if (!handles[i])
			return i;
	return blab_fail(&last_err, BLAB_ENOSPC, "too many open filesystems (%d)", MAX_HANDLES - 1);
}

static int put_handle(struct btrfs_fs_info *fs)
{
	int h = free_handle();
	if (h < 0)
		btrfs_fs_free(fs);
	else
		handles[h] = fs;
	return h;
}

static struct btrfs_fs_info *get(int h)
{
	if (h <= 0 || h >= MAX_HANDLES || !handles[h]) {
		blab_fail(&last_err, BLAB_EINVAL, "no open filesystem with handle %d", h);
		return NULL;
	}
	return handles[h];
}

int blab_mkfs(u64 size, u32 nodesize, const char *label, u64 seed, u64 now)
{
	struct mkfs_options o;
	struct btrfs_fs_info *fs;
	btrfs_mkfs_defaults(&o);
	o.size = size;
	o.nodesize = nodesize;
	o.label = label && *label ? label : NULL;
	o.seed = seed;
	o.now = now;
	int ret = btrfs_mkfs(&o, &fs, &last_err);
	return ret ? ret : put_handle(fs);
}

int blab_open(const u8 *data, u64 len)
{
	struct blab_device dev;
	if (!data || !len)
		return blab_fail(&last_err, BLAB_EINVAL, "empty image");
	if (device_load(&dev, data, len))
		return blab_fail(&last_err, BLAB_ENOMEM, "image of %llu bytes", (unsigned long long)len);
	struct btrfs_fs_info *fs = btrfs_open(&dev, &last_err);
	return fs ? put_handle(fs) : last_err.code;
}

int blab_reopen(int h)
{
	struct btrfs_fs_info *src = get(h);
	if (!src)
		return last_err.code;
	struct blab_device dev;
	int ret = device_clone(&src->dev, &dev);
	if (ret)
		return blab_fail(&last_err, ret, "a copy of the image of handle %d (only images held in memory can be copied)", h);
	struct btrfs_fs_info *fs = btrfs_open(&dev, &last_err);
	if (!fs)
		return last_err.code ? last_err.code : BLAB_EIO;
	trace_free(&fs->trace);
	fs->trace = (struct blab_trace){.enabled = 1};
	return put_handle(fs);
}

void blab_close(int h)
{
	if (!get(h))
		return;
	if (borrowed[h]) {
		for (int i = 1; i < MAX_HANDLES; i++)
			if (seek_of[i] == h)
				seek_of[i] = 0;
	} else if (sessions[h]) {
		if (seek_of[h])
			blab_close(seek_of[h]);
		scenario_session_free(sessions[h]); /* its result too */
		sessions[h] = NULL;
	} else {
		btrfs_fs_free(handles[h]);
		scenario_result_free(&results[h]);
	}
	handles[h] = NULL;
	borrowed[h] = 0;
	memset(&results[h], 0, sizeof(results[h]));
}

int blab_session(const char *text, u32 len, u64 seed, u64 now, int flags, u32 every)
{
	struct scenario_options o = {.seed = seed, .now = now, .trace = (flags & BLAB_RUN_TRACE) != 0, .count_events = 1};
	struct scenario_session *s;
	int ret = scenario_session_new(text, len, "scenario", &o, every, &s, &last_err);
	if (ret)
		return ret;
	struct scenario_result *res = scenario_session_result(s);
	int h = free_handle();
	if (h < 0) {
		scenario_session_free(s);
		return h;
	}
	handles[h] = res->fs;
	results[h] = *res;
	sessions[h] = s;
	return h;
}

static struct scenario_session *session_of(int h)
{
	if (!get(h))
		return NULL;
	if (!sessions[h])
		blab_fail(&last_err, BLAB_EINVAL, "handle %d is not a scenario session", h);
	return sessions[h];
}

typedef int (*session_op)(struct scenario_session *s, int line, struct btrfs_fs_info **fs, struct blab_err *err);

/* Runs op on h's session at line. A crash point, or a failed seek, moves the
 * session away from what its seek handle showed: that handle is closed. */
static int on_session(int h, int line, session_op op, struct btrfs_fs_info **fs)
{
	struct scenario_session *s = session_of(h);
	if (!s)
		return last_err.code;
	int ret = op(s, line, fs, &last_err);
	if ((ret || op != scenario_session_seek) && seek_of[h])
		blab_close(seek_of[h]);
	return ret;
}

int blab_session_seek(int h, int line)
{
	struct btrfs_fs_info *fs;
	int ret = on_session(h, line, scenario_session_seek, &fs);
	if (ret)
		return ret;
	if (!seek_of[h]) {
		int a = free_handle();
		if (a < 0)
			return a;
		borrowed[a] = 1;
		seek_of[h] = a;
	}
	handles[seek_of[h]] = fs; /* the seek may have moved to another copy */
	return seek_of[h];
}

int blab_session_crash(int h, int line)
{
	struct btrfs_fs_info *fs;
	int ret = on_session(h, line, scenario_session_crash, &fs);
	return ret ? ret : put_handle(fs);
}

int blab_session_crash_event(int h, u64 seq)
{
	struct scenario_session *s = session_of(h);
	if (!s)
		return last_err.code ? last_err.code : BLAB_EINVAL;
	struct btrfs_fs_info *fs;
	int ret = scenario_session_crash_at_event(s, seq, &fs, &last_err);
	return ret ? ret : put_handle(fs);
}

/* out emptied for a new answer, and the filesystem of handle h (NULL when
 * there is none) */
static struct btrfs_fs_info *fs_for_out(int h)
{
	out.len = 0;
	out.oom = 0;
	return get(h);
}

/* out, ended with a NUL, as the answer (NULL when it ran out of memory) */
static const char *out_done(void)
{
	sb_printf(&out, "%c", 0);
	return out.oom ? NULL : out.s;
}

const char *blab_session_dump_at_event(int h, u64 seq, u64 tree_id, int max_leaf_entries)
{
	struct scenario_session *s = session_of(h);
	if (!s)
		return NULL;
	out.len = 0;
	out.oom = 0;
	if (scenario_session_dump_at_event(s, seq, tree_id, max_leaf_entries, &out, &last_err))
		return NULL;
	return out_done();
}

const char *blab_session_stats_json(int h)
{
	struct scenario_session *s = session_of(h);
	if (!s)
		return NULL;
	struct session_stats st;
	scenario_session_stats(s, &st);
	out.len = 0;
	out.oom = 0;
	sb_printf(&out,
		  "{\"units\":%llu,\"commandEvents\":%llu,\"lines\":%d,\"checkpoints\":%llu,\"every\":%llu,\"pages\":%llu,\"blocks\":%llu,"
		  "\"bytes\":%llu,\"run_ms\":%.3f,\"units_run\":%llu}%c",
		  (unsigned long long)st.units, (unsigned long long)st.command_events, st.lines, (unsigned long long)st.checkpoints, (unsigned long long)st.every,
		  (unsigned long long)st.pages, (unsigned long long)st.blocks, (unsigned long long)st.bytes, st.run_ms,
		  (unsigned long long)scenario_session_units_run(s), 0);
	return out.oom ? NULL : out.s;
}

int blab_run(const char *text, u32 len, u64 seed, u64 now, int flags)
{
	struct scenario_options o = {.seed = seed, .now = now, .trace = (flags & BLAB_RUN_TRACE) != 0, .count_events = 1,
				     .no_final_commit = (flags & BLAB_RUN_NO_FINAL_COMMIT) != 0,
				     .keep_failed = (flags & BLAB_RUN_KEEP_FAILED) != 0};
	struct scenario_result res = {0};
	int ret = scenario_run(text, len, "scenario", &o, &res, &last_err);
	if (ret && !res.fs)
		return ret;
	int h = put_handle(res.fs);
	if (h > 0)
		results[h] = res;
	else
		scenario_result_free(&res);
	return h;
}

int blab_replay_steps(int h, u32 steps)
{
	struct btrfs_fs_info *fs = get(h);
	if (!fs)
		return blab_fail(&last_err, BLAB_EINVAL, "no open filesystem %d", h);
	struct btrfs_replay_stats st = {.stop_after = steps};
	/* a replay writes: the layout it relies on first */
	int ret = btrfs_verify_writable(fs);
	if (!ret)
		ret = btrfs_replay_log(fs, &st);
	if (ret)
		last_err = fs->err;
	return ret;
}

int blab_replay(int h)
{
	return blab_replay_steps(h, 0);
}

const char *blab_metrics_json(int h)
{
	if (!get(h))
		return NULL;
	if (!results[h].fs) {
		blab_fail(&last_err, BLAB_EINVAL, "handle %d was not made by a scenario run", h);
		return NULL;
	}
	char *m = scenario_metrics_json(&results[h]);
	if (!m) {
		blab_fail(&last_err, BLAB_ENOMEM, "metrics");
		return NULL;
	}
	out.len = 0;
	out.oom = 0;
	sb_printf(&out, "%s%c", m, 0);
	free(m);
	return out.s;
}

struct ls_json {
	struct btrfs_fs_info *fs;
	struct btrfs_root *root;
	int first;
};

static int ls_one(void *ctx, const char *name, u16 len, u64 ino, u8 type)
{
	struct ls_json *l = ctx;
	struct btrfs_inode in = {0};
	struct btrfs_root *r = l->root;
	if (type & BTRFS_FT_EMPTY_SUBVOL) { /* an empty directory in a snapshot, where a subvolume was */
		type &= (u8)~BTRFS_FT_EMPTY_SUBVOL;
		in = (struct btrfs_inode){.mode = S_IFDIR_ | 0755, .nlink = 1};
		r = NULL;
	} else if (type & BTRFS_FT_SUBVOL) { /* a subvolume: its root directory */
		type &= (u8)~BTRFS_FT_SUBVOL;
		r = btrfs_subvol_root(l->fs, ino, &ino);
		l->fs->err.code = 0;
	}
	if (r)
		btrfs_read_inode(l->fs, r, ino, &in);
	sb_printf(&out, "%s{\"name\":", l->first ? "" : ",");
	sb_json_string(&out, name, len);
	sb_printf(&out, ",\"ino\":\"%llu\",\"type\":%u,\"mode\":%u,\"size\":\"%llu\",\"nlink\":%u}", (unsigned long long)ino,
		  type, in.mode, (unsigned long long)in.size, in.nlink);
	l->first = 0;
	return 0;
}

const char *blab_ls(int h, const char *path)
{
	struct btrfs_fs_info *fs = get(h);
	struct btrfs_root *root;
	u64 ino;
	if (!fs)
		return NULL;
	if (btrfs_lookup_path_subvol(fs, path, &root, &ino)) {
		last_err = fs->err;
		return NULL;
	}
	out.len = 0;
	out.oom = 0;
	struct ls_json l = {fs, root, 1};
	sb_printf(&out, "[");
	if (btrfs_readdir(fs, root, ino, ls_one, &l) < 0) {
		last_err = fs->err;
		return NULL;
	}
	sb_printf(&out, "]%c", 0);
	return out.oom ? NULL : out.s;
}

const u8 *blab_cat(int h, const char *path, u32 *len)
{
	struct btrfs_fs_info *fs = get(h);
	struct btrfs_root *root;
	u64 ino, got;
	struct btrfs_inode in;
	if (!fs)
		return NULL;
	if (btrfs_lookup_path_subvol(fs, path, &root, &ino) || btrfs_read_inode(fs, root, ino, &in)) {
		last_err = fs->err;
		return NULL;
	}
	int link = (in.mode & S_IFMT_) == S_IFLNK_; /* its target */
	if ((in.mode & S_IFMT_) != S_IFREG_ && !link) {
		blab_fail(&last_err, BLAB_EISDIR, "%s: not a regular file", path);
		return NULL;
	}
	if (in.size > (256u << 20)) {
		blab_fail(&last_err, BLAB_EOVERFLOW, "%s: %llu bytes is more than this view reads", path, (unsigned long long)in.size);
		return NULL;
	}
	free(cat_buf);
	cat_buf = malloc(in.size ? in.size : 1);
	if (!cat_buf) {
		blab_fail(&last_err, BLAB_ENOMEM, "%s", path);
		return NULL;
	}
	if (link ? btrfs_file_read_any(fs, root, ino, 0, cat_buf, in.size, &got)
		 : btrfs_file_read(fs, root, ino, 0, cat_buf, in.size, &got, 1)) {
		last_err = fs->err;
		return NULL;
	}
	*len = (u32)got;
	return cat_buf;
}

const char *blab_check(int h, int *errors)
{
	struct btrfs_fs_info *fs = fs_for_out(h);
	if (!fs)
		return NULL;
	*errors = btrfs_check_fs(fs, &out, CHECK_DATA_CSUM);
	return out_done();
}

const char *blab_last_error(void) { return last_err.msg; }

const char *blab_dump_json(int h)
{
	return blab_dump_json_tree(h, 0, 0);
}

const char *blab_dump_json_tree(int h, u64 tree_id, int max_leaf_entries)
{
	struct btrfs_fs_info *fs = fs_for_out(h);
	if (!fs)
		return NULL;
	if (btrfs_dump_tree_json_opts(fs, &out, tree_id, max_leaf_entries)) {
		last_err = fs->err;
		return NULL;
	}
	return out_done();
}

const char *blab_trace_schema_json(void)
{
	const char *s = trace_schema_json();
	if (!s)
		blab_fail(&last_err, BLAB_ENOMEM, "trace schema");
	return s;
}

const char *blab_costs_json(void)
{
	static char *s;
	if (!s && !(s = btrfs_costs_json()))
		blab_fail(&last_err, BLAB_ENOMEM, "cost table");
	return s;
}

const char *blab_trace_json(int h)
{
	struct btrfs_fs_info *fs = fs_for_out(h);
	if (!fs)
		return NULL;
	sb_printf(&out, "[");
	for (size_t i = 0; i < fs->trace.len; i++) {
		char buf[TRACE_JSON_MAX];
		trace_event_json(&fs->trace.ev[i], buf, sizeof(buf));
		sb_printf(&out, "%s%s", i ? "," : "", buf);
	}
	sb_printf(&out, "]%c", 0);
	if (out.oom) {
		blab_fail(&last_err, BLAB_ENOMEM, "trace");
		return NULL;
	}
	return out.s;
}

u64 blab_image_size(int h)
{
	struct btrfs_fs_info *fs = get(h);
	return fs ? fs->dev.size : 0;
}

u32 blab_page_size(void) { return DEVICE_PAGE_SIZE; }

const u8 *blab_image_page(int h, u64 page_index)
{
	struct btrfs_fs_info *fs = get(h);
	return fs ? device_page(&fs->dev, page_index) : NULL;
}

void *blab_alloc(u32 n) { return malloc(n ? n : 1); }
void blab_free(void *p) { free(p); }
