#include "delalloc.h"
#include "extent-tree.h"
#include "splitmix.h"
#include "wallclock.h"
#include "ordered-data.h"
#include "scenario-table.h"
#include "scenario.h"
#include "root-tree.h"
#include "relocation.h"
#include "reflink.h"
#include "qgroup.h"
#include "untar.h"
#include "crc32c.h"
#include "space-info.h"
#include "tree-checker.h"
#include "ctree.h"
#include "xattr.h"
#include "disk-io.h"
#include "file.h"
#include "inode.h"
#include "mkfs.h"
#include "print-tree.h"
#include "transaction.h"
#include "tree-log.h"
#include "tasks.h"
#include "array.h"
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_ARGS 8
#define MAX_TOKEN 4200

/* splitmix64 of the 8-byte word at pos: its bytes, low first */
static u64 data_word(u64 seed, u64 word)
{
	u64 z = seed * 0x9E3779B97F4A7C15ULL + word + 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

u8 scenario_data_byte(u64 seed, u64 pos)
{
	return (u8)(data_word(seed, pos >> 3) >> ((pos & 7) * 8));
}

void scenario_data_fill(u64 seed, u64 pos, u8 *buf, u64 len)
{
	u64 i = 0;
	while (i < len && ((pos + i) & 7))
		buf[i] = scenario_data_byte(seed, pos + i), i++;
	for (; i + 8 <= len; i += 8) {
		u64 z = data_word(seed, (pos + i) >> 3);
		for (int b = 0; b < 8; b++)
			buf[i + b] = (u8)(z >> (b * 8));
	}
	for (; i < len; i++)
		buf[i] = scenario_data_byte(seed, pos + i);
}

struct line {
	int argc;
	char *argv[MAX_ARGS];
	char buf[MAX_ARGS * (MAX_TOKEN + 1)];
};

/* A brace range being run a name at a time: names a + n for n up to span. */
struct brace {
	int active;
	int (*fn)(struct scenario_run *, const char *);
	char *pre, *post; /* malloc'd: the path around the braces */
	unsigned long long a, span, n;
};

struct scenario_run {
	const char *text;  /* the script (the caller's, or owned) */
	size_t len;
	char *owned_text;
	char *name;        /* owned */
	struct scenario_options o;
	size_t pos;        /* offset of the next line not read yet */
	int lineno;        /* line of the command running (or last read) */
	const char *cmd;
	struct blab_err err;
	struct btrfs_fs_info *fs;
	struct scenario_result res; /* fs is moved in by scenario_end */
	int crashed;
	u64 max_ops, max_bytes, bytes; /* limits, and what `write` lines wrote so far */
	u64 units;         /* units run: a command, or one name of a brace range */
	int failed;        /* a read error waiting for the next step */
	/* a line read and tokenized but not run yet: from held_pos, after line held_lineno - 1 */
	int held;
	size_t held_pos;
	int held_lineno;
	struct line *l;
	struct brace br;
	char cmdbuf[16];   /* the command of a brace range (l is reused) */
	struct timespec t0;
	double ms;
	/* time: the settings of timed sections, and what they did (NULL until the first) */
	struct timed_config tcfg;
	struct timed_state *tst;
	char sched_names[SCENARIO_MAX_THREADS][SCENARIO_NAME_MAX]; /* a `schedule` line for the next section */
	int nsched;
};

static int fail(struct scenario_run *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct scenario_run *r, int code, const char *fmt, ...)
{
	char msg[BLAB_ERRMSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* "NAME:LINE: COMMAND: ENAME: what" (the name once, after the command) */
	snprintf(r->err.msg, sizeof(r->err.msg), "%s:%d: %s%s%s: %s", r->name, r->lineno, r->cmd ? r->cmd : "",
		 r->cmd ? ": " : "", blab_errname(code), msg);
	r->err.code = code;
	return code;
}

/* The core's own message (it starts with the error's name) for this line. */
static int fail_core(struct scenario_run *r, int code)
{
	const char *m = r->fs->err.msg[0] ? r->fs->err.msg : blab_errname(code);
	snprintf(r->err.msg, sizeof(r->err.msg), "%s:%d: %s: %s", r->name, r->lineno, r->cmd, m);
	r->err.code = code;
	return code;
}

/* Splits one line into arguments: whitespace separates, "..." quotes (with
 * \" and \\), # starts a comment. */
static int tokenize(struct scenario_run *r, const char *s, size_t n, struct line *l)
{
	size_t i = 0, out = 0;
	l->argc = 0;
	while (i < n) {
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		if (i >= n || s[i] == '#')
			break;
		if (l->argc == MAX_ARGS)
			return fail(r, BLAB_EPARSE, "too many arguments (at most %d)", MAX_ARGS - 1);
		char *t = l->buf + out;
		size_t tl = 0;
		if (s[i] == '"') {
			i++;
			while (i < n && s[i] != '"') {
				if (s[i] == '\\' && i + 1 < n)
					i++;
				if (tl == MAX_TOKEN)
					return fail(r, BLAB_EPARSE, "argument longer than %d bytes", MAX_TOKEN);
				t[tl++] = s[i++];
			}
			if (i >= n)
				return fail(r, BLAB_EPARSE, "unterminated quote");
			i++;
		} else {
			while (i < n && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') {
				if (tl == MAX_TOKEN)
					return fail(r, BLAB_EPARSE, "argument longer than %d bytes", MAX_TOKEN);
				t[tl++] = s[i++];
			}
		}
		t[tl] = 0;
		l->argv[l->argc++] = t;
		out += tl + 1;
	}
	return 0;
}

/* "123", "4K", "16M", "1G". */
static int run_cleaner(struct scenario_run *r, int all);

static int parse_num(struct scenario_run *r, const char *what, const char *s, u64 *out)
{
	char *end;
	if (!*s || *s == '-')
		return fail(r, BLAB_EPARSE, "%s '%s' is not a number", what, s);
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end || end == s || (shift && v > (~0ULL >> shift)))
		return fail(r, BLAB_EPARSE, "%s '%s' is not a number (sizes take K, M or G)", what, s);
	*out = (u64)v << shift;
	return 0;
}

static int want_args(struct scenario_run *r, const struct line *l, int min, int max, const char *usage)
{
	if (l->argc - 1 < min || l->argc - 1 > max)
		return fail(r, BLAB_EPARSE, "expects %s", usage);
	return 0;
}

/* Counts one operation against the run's limit. */
static int count_op(struct scenario_run *r)
{
	if ((u64)++r->res.ops > r->max_ops)
		return fail(r, BLAB_EINVAL, "the script does more than %llu operations, the limit of a run", (unsigned long long)r->max_ops);
	if (!(r->res.ops & 255) && r->tcfg.cpu_deadline_s > 0 && cpuclock_s() > r->tcfg.cpu_deadline_s)
		return fail(r, BLAB_EINVAL, "the run reached its bound of %.0f seconds of CPU time (--max-time)", r->tcfg.max_cpu_s);
	return 0;
}

static void brace_clear(struct brace *br)
{
	free(br->pre);
	free(br->post);
	memset(br, 0, sizeof(*br));
}

/* Runs the next name of the brace range (the last one ends it). */
static int brace_next(struct scenario_run *r)
{
	struct brace *br = &r->br;
	size_t n = strlen(br->pre) + 24 + strlen(br->post);
	char *p = malloc(n);
	if (!p)
		return fail(r, BLAB_ENOMEM, "out of memory");
	/* counted from 0 so that a range ending at 2^64-1 cannot wrap */
	snprintf(p, n, "%s%llu%s", br->pre, br->a + br->n, br->post);
	if (br->n++ == br->span)
		br->active = 0;
	r->cmd = r->cmdbuf;
	int ret = br->fn(r, p);
	free(p);
	if (!br->active)
		brace_clear(br);
	return ret;
}

/* Calls fn for path, or, when its last component holds a brace range, sets
 * the range up and calls fn for its first name (brace_next does the rest,
 * one unit each). */
static int brace_start(struct scenario_run *r, const char *path, int (*fn)(struct scenario_run *, const char *))
{
	const char *slash = strrchr(path, '/');
	const char *open = strchr(slash ? slash : path, '{');
	if (!open)
		return fn(r, path);
	const char *close = strchr(open, '}');
	unsigned long long a, b;
	char *e1, *e2;
	if (!close)
		return fail(r, BLAB_EPARSE, "'%s': unclosed brace range", path);
	errno = 0;
	a = strtoull(open + 1, &e1, 10);
	if (e1 == open + 1 || e1[0] != '.' || e1[1] != '.' || !isdigit((unsigned char)open[1]))
		return fail(r, BLAB_EPARSE, "'%s': a brace range looks like {1..100}", path);
	b = strtoull(e1 + 2, &e2, 10);
	if (errno == ERANGE)
		return fail(r, BLAB_EPARSE, "'%s': a brace range's bounds must be below 2^64", path);
	if (e2 != close || e2 == e1 + 2 || !isdigit((unsigned char)e1[2]) || b < a)
		return fail(r, BLAB_EPARSE, "'%s': a brace range looks like {1..100}, low to high", path);
	if (b - a >= r->max_ops)
		return fail(r, BLAB_EPARSE, "'%s': a brace range may hold at most %llu names", path, (unsigned long long)r->max_ops);
	struct brace *br = &r->br;
	size_t plen = (size_t)(open - path);
	if (!(br->pre = malloc(plen + 1)) || !(br->post = strdup(close + 1))) {
		brace_clear(br);
		return fail(r, BLAB_ENOMEM, "out of memory");
	}
	memcpy(br->pre, path, plen);
	br->pre[plen] = 0;
	br->fn = fn;
	br->a = a;
	br->span = b - a;
	br->n = 0;
	br->active = 1;
	snprintf(r->cmdbuf, sizeof(r->cmdbuf), "%s", r->cmd);
	return brace_next(r);
}

/* A change to root: refused in a read-only subvolume (EROFS in the kernel). */
static int writable(struct scenario_run *r, const struct btrfs_root *root, const char *path)
{
	if (btrfs_root_flags(root->item) & BTRFS_ROOT_SUBVOL_RDONLY)
		return fail(r, BLAB_EINVAL, "%s: in read-only subvolume %llu (EROFS)", path, (unsigned long long)root->objectid);
	return 0;
}

/* The subvolume whose tree holds path's last name (writable), and the path inside it. */
static int sv_path(struct scenario_run *r, const char *path, struct btrfs_root **root, const char **inside)
{
	size_t rel;
	int ret = btrfs_split_subvol_path(r->fs, path, root, &rel);
	if (ret)
		return fail_core(r, ret);
	*inside = rel ? path + rel : path;
	return writable(r, *root, path);
}

/* The inode path names, in a subvolume that may be changed. */
static int sv_inode(struct scenario_run *r, const char *path, struct btrfs_root **root, u64 *ino)
{
	int ret = btrfs_lookup_path_subvol(r->fs, path, root, ino);
	return ret ? fail_core(r, ret) : writable(r, *root, path);
}

/* Two paths for link or rename: in one subvolume (across is EXDEV in the kernel). */
static int sv_pair(struct scenario_run *r, const char *a, const char *b, struct btrfs_root **root, const char **ia, const char **ib)
{
	struct btrfs_root *rb;
	int ret = sv_path(r, a, root, ia);
	if (ret || (ret = sv_path(r, b, &rb, ib)))
		return ret;
	if (rb != *root)
		return fail(r, BLAB_EINVAL, "%s and %s are in different subvolumes (EXDEV)", a, b);
	return 0;
}

static int do_create(struct scenario_run *r, const char *path)
{
	struct inode_attrs a = {.mode = S_IFREG_ | 0644};
	struct btrfs_root *root;
	const char *in;
	u64 ino;
	int ret = count_op(r);
	if (ret || (ret = sv_path(r, path, &root, &in)))
		return ret;
	ret = btrfs_create(r->fs, root, in, &a, &ino);
	return ret ? fail_core(r, ret) : 0;
}

static int do_unlink(struct scenario_run *r, const char *path)
{
	struct btrfs_root *root;
	const char *in;
	int ret = count_op(r);
	if (ret || (ret = sv_path(r, path, &root, &in)))
		return ret;
	ret = btrfs_unlink(r->fs, root, in);
	return ret ? fail_core(r, ret) : 0;
}

/* A buffered write reserving as the kernel's does, a page at a time: data
 * space first (btrfs_check_data_free_space), then, with quotas on, the
 * qgroups' limits (qgroup.h). What fits goes into the page cache. When the
 * data space is full, the kernel's data reclaim makes room in its order
 * (btrfs_async_reclaim_data_space): new data chunks while the device has
 * room for one (ALLOC_CHUNK_FORCE), then delalloc flushed and the
 * transaction committed (FLUSH_DELALLOC_FULL, COMMIT_TRANS: pinned extents
 * free again); on EDQUOT it flushes and commits (try_flush_qgroup). When
 * the rest still does not fit, the write stops there with ENOSPC or EDQUOT,
 * having written the sectors that fit, as the kernel's short write and the
 * write(2) after it that fails; the file keeps them. */
static int reserving_write(struct scenario_run *r, const char *path, struct btrfs_root *root, u64 ino, u64 off, const u8 *buf, u64 len)
{
	struct btrfs_fs_info *fs = r->fs;
	u64 done = 0, flushed_at = (u64)-1, key = btrfs_ikey(fs, root, ino);
	char why[320];
	while (done < len) {
		u64 n = key ? btrfs_data_space_fit(fs, key, off + done, len - done) : len - done, by = 0;
		int ret = 0, code = BLAB_ENOSPC;
		if (!n) {
			if ((ret = btrfs_alloc_data_chunk_force(fs)) < 0)
				return ret;
			if (ret)
				continue;
			struct btrfs_space_info si;
			btrfs_space_info_get(fs, SPACE_DATA, &si);
			snprintf(why, sizeof(why), "the data space (%llu bytes in its chunks, %llu used or reserved, no unallocated device space for another)",
				 (unsigned long long)si.total, (unsigned long long)btrfs_space_used_all(&si));
		} else if (btrfs_qgroup_enabled(fs)) {
			if ((ret = btrfs_qgroup_reserve_write(fs, root, ino, off + done, n, &n, &by, why, sizeof(why))))
				return ret;
			code = BLAB_EDQUOT;
		}
		if (n) {
			if ((ret = btrfs_buffered_write(fs, root, ino, off + done, buf + done, n)))
				return ret;
			done += n;
			continue;
		}
		if (flushed_at == done)
			return fail(r, code, "%s: write of %llu bytes at %llu %s %s: %llu bytes written", path, (unsigned long long)len,
				    (unsigned long long)off, code == BLAB_ENOSPC ? "finds no room in" : "passes", why, (unsigned long long)done);
		/* the reservation failed: flush and commit, then once more */
		if ((ret = btrfs_sync_data(fs)) || (ret = btrfs_commit_transaction(fs)) || (ret = btrfs_start_transaction(fs)))
			return ret;
		r->res.commits++;
		flushed_at = done;
	}
	return 0;
}

static int do_write(struct scenario_run *r, const char *path, u64 off, u64 len, u64 seed)
{
	u64 ino;
	struct btrfs_root *root;
	int ret = sv_inode(r, path, &root, &ino);
	if (ret)
		return ret;
	if (len > r->max_bytes - r->bytes)
		return fail(r, BLAB_EINVAL, "the script writes more than %llu bytes, the limit of a run", (unsigned long long)r->max_bytes);
	r->bytes += len;
	u8 *buf = malloc(len ? len : 1);
	if (!buf)
		return fail(r, BLAB_ENOMEM, "no memory for a %llu-byte write", (unsigned long long)len);
	scenario_data_fill(seed, off, buf, len);
	ret = reserving_write(r, path, root, ino, off, buf, len);
	free(buf);
	return ret ? (r->err.code ? ret : fail_core(r, ret)) : 0;
}

static int power_cut(struct scenario_run *r);

/* ---- time: threads, sections, settings ---- */

static int run_line(struct scenario_run *r, struct line *l);
static int read_line(struct scenario_run *r);

/* The index of v among names (NULL-ended), or -1. */
static int one_of(const char *v, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(v, names[i]))
			return i;
	return -1;
}

/* "5s", "100ms", "20us", "300ns", "2m"; a bare number is seconds. */
static int parse_duration(struct scenario_run *r, const char *s, u64 *ns)
{
	char *end;
	if (!*s || *s == '-')
		return fail(r, BLAB_EPARSE, "duration '%s' is not a number", s);
	unsigned long long v = strtoull(s, &end, 10);
	u64 mul;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		mul = 1000000000ULL;
	else if (!strcmp(end, "ms"))
		mul = 1000000ULL;
	else if (!strcmp(end, "us"))
		mul = 1000ULL;
	else if (!strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "m"))
		mul = 60000000000ULL;
	else
		return fail(r, BLAB_EPARSE, "duration '%s': units are ns, us, ms, s or m", s);
	if (end == s || v > 3600ULL * 1000000000ULL / mul)
		return fail(r, BLAB_EPARSE, "duration '%s' is not a number of at most an hour", s);
	*ns = (u64)v * mul;
	return 0;
}

static int timed_state_get(struct scenario_run *r)
{
	if (!r->tst && !(r->tst = calloc(1, sizeof(*r->tst))))
		return fail(r, BLAB_ENOMEM, "out of memory");
	return 0;
}

struct sec_line {
	size_t pos, len;
	int lineno, skip_first; /* skip_first: the line starts with "NAME:" */
};

struct sec_thread {
	char name[SCENARIO_NAME_MAX];
	struct sec_line *lines;
	size_t n, cap, next;
	struct line *l; /* the command running */
	int lineno;
	u8 *buf;
	u64 bufcap;
	/* a fio job */
	int fio, rand, fsync_due;
	u64 ino, bs, nblocks, i, fsync_every, since, stride, first, rng;
	/* bonnie++ (or one of its concurrent fsyncers) */
	int bonnie, bn_fsyncer, bn_phase, bn_step, bn_started;
	u64 bn_i, bn_n, bn_dirs, bn_size, bn_t0;
	u64 *bn_order;
	char bn_cmd[UNTAR_PATH_MAX + 64];
	/* an untar */
	struct untar_gen *ug;
	int ug_synced;
	u64 ug_t0, ug_write_end;
};

struct section {
	struct scenario_run *r;
	struct sec_thread *t;
	int n;
	int bonnie_done;
};

static void section_free(struct section *sec)
{
	for (int i = 0; sec->t && i < sec->n; i++) {
		free(sec->t[i].lines);
		free(sec->t[i].l);
		free(sec->t[i].buf);
		free(sec->t[i].bn_order);
		free(sec->t[i].ug);
	}
	free(sec->t);
}

static int thread_index(struct scenario_run *r, struct section *sec, const char *name, size_t len)
{
	if (!len || len >= SCENARIO_NAME_MAX)
		return fail(r, BLAB_EPARSE, "thread names are 1 to %d characters", SCENARIO_NAME_MAX - 1);
	for (int i = 0; i < sec->n; i++)
		if (strlen(sec->t[i].name) == len && !memcmp(sec->t[i].name, name, len))
			return i;
	if (sec->n == SCENARIO_MAX_THREADS)
		return fail(r, BLAB_EPARSE, "more than %d threads in one section", SCENARIO_MAX_THREADS);
	struct sec_thread *t = &sec->t[sec->n];
	memcpy(t->name, name, len);
	t->name[len] = 0;
	return sec->n++;
}

static int add_line(struct scenario_run *r, struct sec_thread *t, int skip_first)
{
	if (array_room(&t->lines, t->n, &t->cap, sizeof(*t->lines), 16))
		return fail(r, BLAB_ENOMEM, "out of memory");
	size_t e = r->held_pos;
	while (e < r->len && r->text[e] != '\n')
		e++;
	t->lines[t->n++] = (struct sec_line){r->held_pos, e - r->held_pos, r->held_lineno, skip_first};
	return 0;
}

/* A "NAME:" first word: the name's length, or 0. */
static size_t prefix_name(const char *w)
{
	size_t n = strlen(w);
	if (n < 2 || w[n - 1] != ':')
		return 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (!isalnum((unsigned char)w[i]) && w[i] != '_' && w[i] != '-' && w[i] != '.')
			return 0;
	return n - 1;
}

static int is_section_line(const struct line *l)
{
	return !strcmp(l->argv[0], "thread") || prefix_name(l->argv[0]);
}

/* Reads the section that starts with r->l: thread blocks and NAME: lines,
 * up to the first other command (left held) or the end. */
static int section_collect(struct scenario_run *r, struct section *sec)
{
	int ret;
	for (;;) {
		struct line *l = r->l;
		r->held = 0;
		if (!strcmp(l->argv[0], "thread")) {
			if ((ret = want_args(r, l, 1, 1, "thread NAME (its commands follow, up to `end`)")))
				return ret;
			int ti = thread_index(r, sec, l->argv[1], strlen(l->argv[1]));
			if (ti < 0)
				return ti;
			int open_line = r->lineno;
			for (;;) {
				if ((ret = read_line(r)))
					return ret;
				if (!r->held)
					return fail(r, BLAB_EPARSE, "thread %s (line %d) has no `end`", sec->t[ti].name, open_line);
				const char *c = r->l->argv[0];
				if (!strcmp(c, "end")) {
					r->held = 0;
					if (r->l->argc != 1)
						return fail(r, BLAB_EPARSE, "`end` takes no arguments");
					break;
				}
				if (!strcmp(c, "thread") || prefix_name(c))
					return fail(r, BLAB_EPARSE, "thread %s (line %d) has no `end` before this", sec->t[ti].name, open_line);
				if ((ret = add_line(r, &sec->t[ti], 0)))
					return ret;
				r->held = 0;
			}
		} else {
			size_t nl = prefix_name(l->argv[0]);
			if (l->argc < 2)
				return fail(r, BLAB_EPARSE, "'%s' names a thread but no command follows", l->argv[0]);
			int ti = thread_index(r, sec, l->argv[0], nl);
			if (ti < 0)
				return ti;
			if ((ret = add_line(r, &sec->t[ti], 1)))
				return ret;
		}
		if ((ret = read_line(r)))
			return ret;
		if (!r->held || !is_section_line(r->l))
			return 0;
	}
}

static int ensure_buf(struct scenario_run *r, struct sec_thread *t, u64 len)
{
	if (t->bufcap >= len)
		return 0;
	u8 *b = realloc(t->buf, len ? len : 1);
	if (!b)
		return fail(r, BLAB_ENOMEM, "no memory for a %llu-byte write", (unsigned long long)len);
	t->buf = b;
	t->bufcap = len;
	return 0;
}

static int fio_next(struct scenario_run *r, struct sec_thread *t, struct timed_op *op)
{
	if (t->fsync_due) {
		t->fsync_due = 0;
		op->kind = TOP_FSYNC;
		op->ino = t->ino;
		return 0;
	}
	if (t->i == t->nblocks) {
		op->kind = TOP_END;
		return 0;
	}
	int ret = count_op(r);
	if (ret)
		return ret;
	u64 blk = t->rand ? (t->first + t->i * t->stride) % t->nblocks : t->i;
	t->i++;
	u64 off = blk * t->bs;
	if (t->bs > r->max_bytes - r->bytes)
		return fail(r, BLAB_EINVAL, "the script writes more than %llu bytes, the limit of a run", (unsigned long long)r->max_bytes);
	r->bytes += t->bs;
	/* fio's buffers: random bytes, each 4 KiB stamped with where it goes */
	for (u64 p = 0; p + 8 <= t->bs; p += 4096)
		put_le64(t->buf + p, off + p);
	op->kind = TOP_WRITE;
	op->ino = t->ino;
	op->ilock[op->nilock++] = t->ino; /* btrfs_file_write_iter's btrfs_inode_lock */
	op->off = off;
	op->len = t->bs;
	op->data = t->buf;
	if (t->fsync_every && ++t->since == t->fsync_every) {
		t->since = 0;
		t->fsync_due = 1;
	}
	return 0;
}

static int section_meta(void *ctx, int ti)
{
	struct section *sec = ctx;
	struct scenario_run *r = sec->r;
	struct sec_thread *t = &sec->t[ti];
	r->lineno = t->lineno;
	r->cmd = t->l->argv[0];
	return run_line(r, t->l);
}

static int thread_command(struct scenario_run *r, struct sec_thread *t, struct timed_op *op);
static int bonnie_next(struct scenario_run *r, struct section *sec, struct sec_thread *t, struct timed_op *op);
static int untar_next_op(struct scenario_run *r, struct sec_thread *t, struct timed_op *op);

static int section_next(void *ctx, int ti, struct timed_op *op)
{
	struct section *sec = ctx;
	struct scenario_run *r = sec->r;
	struct sec_thread *t = &sec->t[ti];
	if (t->fio)
		return fio_next(r, t, op);
	if (t->bonnie)
		return bonnie_next(r, sec, t, op);
	if (t->ug)
		return untar_next_op(r, t, op);
	if (t->next == t->n) {
		op->kind = TOP_END;
		return 0;
	}
	const struct sec_line *sl = &t->lines[t->next++];
	r->lineno = t->lineno = op->line = sl->lineno;
	r->cmd = NULL;
	if (!t->l && !(t->l = malloc(sizeof(*t->l))))
		return fail(r, BLAB_ENOMEM, "out of memory");
	int ret = tokenize(r, r->text + sl->pos, sl->len, t->l);
	if (ret)
		return ret;
	struct line *l = t->l;
	if (sl->skip_first) {
		memmove(l->argv, l->argv + 1, (size_t)(l->argc - 1) * sizeof(l->argv[0]));
		l->argc--;
	}
	return thread_command(r, t, op);
}

/* The command in t->l as thread t's next op. */
/* Adds ino to the inode locks op takes, unless it is there already. */
static void ilock_add(struct timed_op *op, u64 ino)
{
	for (int i = 0; i < op->nilock; i++)
		if (op->ilock[i] == ino)
			return;
	if (op->nilock < (int)(sizeof(op->ilock) / sizeof(op->ilock[0])))
		op->ilock[op->nilock++] = ino;
}

static int thread_command(struct scenario_run *r, struct sec_thread *t, struct timed_op *op)
{
	struct btrfs_fs_info *fs = r->fs;
	struct line *l = t->l;
	int ret;
	const char *c = l->argv[0];
	r->cmd = c;
	u64 a, b, seed = 1;
	if (!strcmp(c, "write")) {
		if ((ret = count_op(r)) || (ret = want_args(r, l, 3, 4, "write PATH OFFSET LENGTH [SEED]")) ||
		    (ret = parse_num(r, "offset", l->argv[2], &a)) || (ret = parse_num(r, "length", l->argv[3], &b)) ||
		    (l->argc == 5 && (ret = parse_num(r, "seed", l->argv[4], &seed))))
			return ret;
		if (b > r->max_bytes - r->bytes)
			return fail(r, BLAB_EINVAL, "the script writes more than %llu bytes, the limit of a run", (unsigned long long)r->max_bytes);
		if ((ret = btrfs_lookup_path(fs, fs->fs_root, l->argv[1], &op->ino)))
			return fail_core(r, ret);
		r->bytes += b;
		if ((ret = ensure_buf(r, t, b)))
			return ret;
		scenario_data_fill(seed, a, t->buf, b);
		op->kind = TOP_WRITE;
		op->ilock[op->nilock++] = op->ino; /* btrfs_file_write_iter's btrfs_inode_lock */
		op->off = a;
		op->len = b;
		op->data = t->buf;
	} else if (!strcmp(c, "fsync")) {
		if ((ret = count_op(r)) || (ret = want_args(r, l, 1, 1, "fsync PATH")))
			return ret;
		if ((ret = btrfs_lookup_path(fs, fs->fs_root, l->argv[1], &op->ino)))
			return fail_core(r, ret);
		op->kind = TOP_FSYNC;
	} else if (!strcmp(c, "sync") || !strcmp(c, "commit")) {
		if ((ret = count_op(r)) || (ret = want_args(r, l, 0, 0, "no arguments")))
			return ret;
		op->kind = TOP_SYNC;
	} else if (!strcmp(c, "sleep")) {
		if ((ret = want_args(r, l, 1, 1, "sleep DURATION (5s, 100ms, 20us)")) || (ret = parse_duration(r, l->argv[1], &op->ns)))
			return ret;
		op->kind = TOP_SLEEP;
	} else if (!strcmp(c, "mkdir") || !strcmp(c, "create") || !strcmp(c, "symlink") || !strcmp(c, "link") ||
		   !strcmp(c, "rename") || !strcmp(c, "rmdir") || !strcmp(c, "setxattr") || !strcmp(c, "truncate") ||
		   !strcmp(c, "unlink")) {
		for (int i = 1; i < l->argc; i++)
			if (strchr(l->argv[i], '{'))
				return fail(r, BLAB_EPARSE, "brace ranges are not allowed inside a thread");
		op->kind = TOP_META;
		op->meta = section_meta;
		/* the items its transaction start reserves for (docs/seed002-reclaim.md, section 2) */
		op->items = !strcmp(c, "rename") ? 11 : !strcmp(c, "unlink") || !strcmp(c, "rmdir") ? 6 : !strcmp(c, "setxattr") || !strcmp(c, "truncate") ? 2 : 5;
		/* the fs tree searches the kernel makes (tree_locks=path), measured on this machine's kernel with its
		 * tree-lock tracepoints, one process, a directory of 2,000 files (docs/seed000-locks.md): a create
		 * looks its name up twice (read-locked) and inserts the inode and its ref, then the name (two
		 * write-locked searches); a setxattr one write-locked search; the rest are counted as one, as before */
		int makes = !strcmp(c, "create") || !strcmp(c, "mkdir") || !strcmp(c, "symlink");
		op->reads = makes ? 2 : 0;
		op->writes = makes ? 2 : 1;
		if (l->argc >= 2) {
			/* (a path the command itself will refuse leaves these 0: its error comes when it runs) */
			const char *name;
			u16 len;
			if (btrfs_resolve_parent(fs, fs->fs_root, l->argv[1], &op->dir, &name, &len))
				op->dir = 0;
			else
				op->hash = btrfs_name_hash(name, len);
			if (btrfs_lookup_path(fs, fs->fs_root, l->argv[1], &op->target))
				op->target = 0;
			fs->err.code = 0;
		}
		/* the inode locks (i_rwsem) it takes first: the VFS locks the directory
		 * of the name it makes or removes (lock_rename: both directories of a
		 * rename, by inode number here), then the inode it removes, renames or
		 * links; a setxattr or truncate locks only its inode */
		if (l->argc >= 2) {
			int own = !strcmp(c, "setxattr") || !strcmp(c, "truncate");
			u64 dir2 = 0;
			if ((!strcmp(c, "rename") || !strcmp(c, "link")) && l->argc >= 3) {
				const char *name;
				u16 len;
				if (btrfs_resolve_parent(fs, fs->fs_root, l->argv[2], &dir2, &name, &len))
					dir2 = 0;
				fs->err.code = 0;
			}
			if (!strcmp(c, "link") && dir2)
				ilock_add(op, dir2);
			else if (!own && op->dir) {
				u64 d1 = op->dir, d2 = dir2 && dir2 != op->dir ? dir2 : 0;
				ilock_add(op, d2 && d2 < d1 ? d2 : d1);
				if (d2)
					ilock_add(op, d2 < d1 ? d1 : d2);
			}
			/* (a command naming its own directory, which fails when it runs, takes its lock once) */
			if (op->target && (own || (strcmp(c, "create") && strcmp(c, "mkdir") && strcmp(c, "symlink"))))
				ilock_add(op, op->target);
		}
		if ((!strcmp(c, "truncate") || !strcmp(c, "unlink")) && l->argc >= 2) {
			/* its ordered extents complete first */
			u64 ino;
			struct btrfs_inode in;
			if (!btrfs_lookup_path(fs, fs->fs_root, l->argv[1], &ino) && !btrfs_read_inode(fs, fs->fs_root, ino, &in) &&
			    (in.mode & S_IFMT_) == S_IFREG_)
				op->ino = ino;
			fs->err.code = 0;
		}
	} else {
		return fail(r, BLAB_EPARSE, "'%s' cannot run inside a thread (threads run write, fsync, sync, commit, sleep and "
					    "namespace commands)", c);
	}
	return 0;
}

static int fio_setup(struct scenario_run *r, struct section *sec, struct line *l)
{
	u64 jobs = 1, size = 0, bs = 4096, fsync_every = 0;
	int rand = 0;
	const char *dir = "/";
	int ret;
	for (int i = 1; i < l->argc; i++) {
		const char *w = l->argv[i], *eq = strchr(w, '=');
		if (!eq)
			return fail(r, BLAB_EPARSE, "'%s': fio takes jobs=N size=S bs=B fsync=F rw=write|randwrite [dir=PATH]", w);
		size_t kl = (size_t)(eq - w);
		if (kl == 4 && !strncmp(w, "jobs", 4))
			ret = parse_num(r, "jobs", eq + 1, &jobs);
		else if (kl == 4 && !strncmp(w, "size", 4))
			ret = parse_num(r, "size", eq + 1, &size);
		else if (kl == 2 && !strncmp(w, "bs", 2))
			ret = parse_num(r, "bs", eq + 1, &bs);
		else if (kl == 5 && !strncmp(w, "fsync", 5))
			ret = parse_num(r, "fsync", eq + 1, &fsync_every);
		else if (kl == 2 && !strncmp(w, "rw", 2)) {
			if (!strcmp(eq + 1, "write"))
				rand = 0;
			else if (!strcmp(eq + 1, "randwrite"))
				rand = 1;
			else
				return fail(r, BLAB_EPARSE, "'%s': rw is write or randwrite", w);
			ret = 0;
		} else if (kl == 3 && !strncmp(w, "dir", 3)) {
			dir = eq + 1;
			ret = 0;
		} else {
			return fail(r, BLAB_EPARSE, "unknown fio option '%.*s' (jobs, size, bs, fsync, rw, dir)", (int)kl, w);
		}
		if (ret)
			return ret;
	}
	if (!jobs || jobs > SCENARIO_MAX_THREADS)
		return fail(r, BLAB_EPARSE, "fio: jobs is 1 to %d", SCENARIO_MAX_THREADS);
	if (bs < 512 || bs % 512 || bs > (64ULL << 20))
		return fail(r, BLAB_EPARSE, "fio: bs is a multiple of 512 up to 64M");
	if (!size || size % bs)
		return fail(r, BLAB_EPARSE, "fio: size is a nonzero multiple of bs");
	if (size > r->max_bytes || jobs * size > r->max_bytes - r->bytes)
		return fail(r, BLAB_EINVAL, "fio: %llu jobs of %llu bytes write more than %llu bytes, the limit of a run",
			    (unsigned long long)jobs, (unsigned long long)size, (unsigned long long)r->max_bytes);
	for (u64 j = 0; j < jobs; j++) {
		char path[4400], name[SCENARIO_NAME_MAX];
		snprintf(path, sizeof(path), "%s%swriters.%llu.0", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", (unsigned long long)j);
		snprintf(name, sizeof(name), "job%llu", (unsigned long long)j);
		int ti = thread_index(r, sec, name, strlen(name));
		if (ti < 0)
			return ti;
		struct sec_thread *t = &sec->t[ti];
		u64 ino;
		if (btrfs_lookup_path(r->fs, r->fs->fs_root, path, &ino)) {
			struct inode_attrs at = {.mode = S_IFREG_ | 0644};
			r->fs->err.code = 0;
			if ((ret = btrfs_create(r->fs, r->fs->fs_root, path, &at, &ino)))
				return fail_core(r, ret);
		}
		t->fio = 1;
		t->rand = rand;
		t->ino = ino;
		t->bs = bs;
		t->nblocks = size / bs;
		t->fsync_every = fsync_every;
		t->rng = r->tcfg.seed * 1000003ULL + j;
		/* randwrite: every block once, in an order a stride coprime with the count gives */
		u64 st = (t->rng | 1) % t->nblocks;
		if (!st)
			st = 1;
		for (u64 a = st, b = t->nblocks, g; ; st++, a = st, b = t->nblocks) {
			while (b) {
				g = a % b;
				a = b;
				b = g;
			}
			if (a == 1)
				break;
		}
		t->stride = st;
		t->first = (t->rng >> 17) % t->nblocks;
		if ((ret = ensure_buf(r, t, bs)))
			return ret;
		u64 x = t->rng;
		for (u64 p = 0; p < bs; p += 8)
			put_le64(t->buf + p, splitmix64(&x));
	}
	return 0;
}

/* ---- bonnie++ -n N:S:S:D -b ----
 * One thread runs bonnie++'s file phases over N files of S bytes in D
 * directories under /bonnie, with -b's syncs, as bonnie++ 2.00a's
 * bon_file.cpp does them: a sequential create (create, write, fsync the
 * file, fsync its directory, in index order), a sequential delete (unlink in
 * readdir order, which is index order here; fsync the directory), a random
 * create (the same order, the names' random characters first instead of
 * last) and a random delete (a seeded shuffle of the names; unlink, fsync
 * the directory). Names are the file's number in 7 digits and 0 to 12
 * characters from [a-zA-Z0-9] drawn from the seed (make_names'). Files i go
 * to directory i * D / N. Each file operation's latency goes to its phase,
 * as bonnie++ reports them. The stat and read phases are left out (no lock
 * of the log is involved). fsyncers=K threads meanwhile loop on a new file,
 * 4 KiB, an xattr and an fsync, until the phases are done. */

/* bonnie++'s name of file f in the sequential (number first) or random
 * (random characters first) phase. */
static void bonnie_name(char *out, size_t size, u64 seed, u64 f, int rnd)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char extra[13];
	u64 z = seed * 0x9E3779B97F4A7C15ULL + f * 2 + (u64)rnd + 1;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	int len = (int)(z % 13);
	for (int j = 0; j < len; j++) {
		z = z * 6364136223846793005ULL + 1442695040888963407ULL;
		extra[j] = chars[(z >> 33) % (sizeof(chars) - 1)];
	}
	extra[len] = 0;
	if (rnd)
		snprintf(out, size, "%s%07llu", extra, (unsigned long long)f);
	else
		snprintf(out, size, "%07llu%s", (unsigned long long)f, extra);
}

static void bonnie_shuffle(struct sec_thread *t, u64 seed)
{
	for (u64 i = 0; i < t->bn_n; i++)
		t->bn_order[i] = i;
	u64 x = seed;
	for (u64 i = t->bn_n; i > 1; i--) {
		u64 j = splitmix64(&x) % i, tmp = t->bn_order[i - 1];
		t->bn_order[i - 1] = t->bn_order[j];
		t->bn_order[j] = tmp;
	}
}

static int bonnie_next(struct scenario_run *r, struct section *sec, struct sec_thread *t, struct timed_op *op)
{
	u64 now = r->fs->clock_ns;
	int ret;
	op->line = t->lineno;
	if (t->bn_fsyncer) {
		if (sec->bonnie_done) {
			op->kind = TOP_END;
			return 0;
		}
		static const char *const loop[4] = {"create %s", "write %s 0 4096 %llu", "setxattr %s user.bonnie v", "fsync %s"};
		char path[48];
		snprintf(path, sizeof(path), "/bonnie/%s.%llu", t->name, (unsigned long long)t->bn_i);
		snprintf(t->bn_cmd, sizeof(t->bn_cmd), loop[t->bn_step], path, (unsigned long long)t->bn_i + 1);
		if (++t->bn_step == 4) {
			t->bn_step = 0;
			t->bn_i++;
		}
	} else {
		for (;;) {
			if (t->bn_step == 0 && t->bn_started) {
				timed_latency_add(&r->tst->bonnie[t->bn_phase], now - t->bn_t0);
				t->bn_started = 0;
			}
			if (t->bn_i < t->bn_n)
				break;
			t->bn_i = 0;
			if (++t->bn_phase == TIMED_BONNIE_PHASES) {
				r->tst->bonnie_phase_now = 0;
				sec->bonnie_done = 1;
				op->kind = TOP_END;
				return 0;
			}
			if (t->bn_phase == BONNIE_RAND_DELETE)
				bonnie_shuffle(t, r->tcfg.seed * 31 + (u64)t->bn_phase);
		}
		r->tst->bonnie_phase_now = t->bn_phase + 1; /* the fsyncs to come count toward this phase */
		int rnd = t->bn_phase >= BONNIE_RAND_CREATE, create = t->bn_phase == BONNIE_SEQ_CREATE || t->bn_phase == BONNIE_RAND_CREATE;
		u64 f = t->bn_phase == BONNIE_RAND_DELETE ? t->bn_order[t->bn_i] : t->bn_i, d = f * t->bn_dirs / t->bn_n;
		char path[64], dir[24], name[24];
		snprintf(dir, sizeof(dir), "/bonnie/d%llu", (unsigned long long)d);
		bonnie_name(name, sizeof(name), r->tcfg.seed, f, rnd);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (t->bn_step == 0) {
			t->bn_t0 = now;
			t->bn_started = 1;
		}
		if (create && t->bn_step == 0)
			snprintf(t->bn_cmd, sizeof(t->bn_cmd), "create %s", path);
		else if (create && t->bn_step == 1)
			snprintf(t->bn_cmd, sizeof(t->bn_cmd), "write %s 0 %llu %llu", path, (unsigned long long)t->bn_size,
				 (unsigned long long)f + 1);
		else if (create && t->bn_step == 2)
			snprintf(t->bn_cmd, sizeof(t->bn_cmd), "fsync %s", path);
		else if (t->bn_step == 0)
			snprintf(t->bn_cmd, sizeof(t->bn_cmd), "unlink %s", path);
		else
			snprintf(t->bn_cmd, sizeof(t->bn_cmd), "fsync %s", dir);
		if (++t->bn_step == (create ? 4 : 2)) {
			t->bn_step = 0;
			t->bn_i++;
		}
	}
	if (!t->l && !(t->l = malloc(sizeof(*t->l))))
		return fail(r, BLAB_ENOMEM, "out of memory");
	if ((ret = tokenize(r, t->bn_cmd, strlen(t->bn_cmd), t->l)))
		return ret;
	r->lineno = t->lineno;
	return thread_command(r, t, op);
}

static int bonnie_setup(struct scenario_run *r, struct section *sec, struct line *l)
{
	u64 files = 0, dirs = 1, size = 0, fsyncers = 0;
	int ret = 0;
	for (int i = 1; i < l->argc; i++) {
		const char *w = l->argv[i], *eq = strchr(w, '=');
		size_t kl = eq ? (size_t)(eq - w) : 0;
		if (kl == 5 && !strncmp(w, "files", 5))
			ret = parse_num(r, "files", eq + 1, &files);
		else if (kl == 4 && !strncmp(w, "dirs", 4))
			ret = parse_num(r, "dirs", eq + 1, &dirs);
		else if (kl == 4 && !strncmp(w, "size", 4))
			ret = parse_num(r, "size", eq + 1, &size);
		else if (kl == 8 && !strncmp(w, "fsyncers", 8))
			ret = parse_num(r, "fsyncers", eq + 1, &fsyncers);
		else
			return fail(r, BLAB_EPARSE, "'%s': bonnie takes files=N dirs=D size=S [fsyncers=K]", w);
		if (ret)
			return ret;
	}
	if (!files || files > 1000000)
		return fail(r, BLAB_EPARSE, "bonnie: files is 1 to 1000000");
	if (!dirs || dirs > files || dirs > 1000)
		return fail(r, BLAB_EPARSE, "bonnie: dirs is 1 to 1000, and at most files");
	if (size > (64ULL << 20))
		return fail(r, BLAB_EPARSE, "bonnie: size is at most 64M");
	if (fsyncers >= SCENARIO_MAX_THREADS)
		return fail(r, BLAB_EPARSE, "bonnie: fsyncers is 0 to %d", SCENARIO_MAX_THREADS - 1);
	/* a create and an unlink of each file, in the sequential and the random phases */
	if (files > (r->max_ops - (u64)r->res.ops) / 4)
		return fail(r, BLAB_EINVAL, "bonnie: %llu files make %llu operations (a create and an unlink each, in two phases), more than "
					    "the %llu a run may do (--max-ops)",
			    (unsigned long long)files, (unsigned long long)files * 4, (unsigned long long)(r->max_ops - (u64)r->res.ops));
	if (size && 2 * files > (r->max_bytes - r->bytes) / size)
		return fail(r, BLAB_EINVAL, "bonnie: %llu files of %llu bytes, twice, write more than %llu bytes, the limit of a run",
			    (unsigned long long)files, (unsigned long long)size, (unsigned long long)r->max_bytes);
	struct inode_attrs at = {.mode = S_IFDIR_ | 0755};
	u64 ino;
	char dir[24];
	for (u64 d = 0; d <= dirs; d++) {
		if (d)
			snprintf(dir, sizeof(dir), "/bonnie/d%llu", (unsigned long long)d - 1);
		else
			snprintf(dir, sizeof(dir), "/bonnie");
		if (!btrfs_lookup_path(r->fs, r->fs->fs_root, dir, &ino))
			continue;
		r->fs->err.code = 0;
		if ((ret = btrfs_create(r->fs, r->fs->fs_root, dir, &at, &ino)))
			return fail_core(r, ret);
	}
	int ti = thread_index(r, sec, "bonnie", 6);
	if (ti < 0)
		return ti;
	struct sec_thread *t = &sec->t[ti];
	t->bonnie = 1;
	t->lineno = r->lineno;
	t->bn_n = files;
	t->bn_dirs = dirs;
	t->bn_size = size;
	if (!(t->bn_order = malloc(files * sizeof(*t->bn_order))))
		return fail(r, BLAB_ENOMEM, "out of memory");
	for (u64 k = 0; k < fsyncers; k++) {
		char name[SCENARIO_NAME_MAX];
		snprintf(name, sizeof(name), "fsyncer%llu", (unsigned long long)k);
		if ((ti = thread_index(r, sec, name, strlen(name))) < 0)
			return ti;
		sec->t[ti].bonnie = sec->t[ti].bn_fsyncer = 1;
		sec->t[ti].lineno = r->lineno;
	}
	return 0;
}

/* ---- untar (seed 002): untar.h's tree, in tar order, then syncfs ---- */

static int untar_next_op(struct scenario_run *r, struct sec_thread *t, struct timed_op *op)
{
	struct untar_gen *g = t->ug;
	u64 now = r->fs->clock_ns, len = 0, off = 0;
	op->line = t->lineno;
	r->lineno = t->lineno;
	if (t->ug_synced) {
		struct timed_state *st = r->tst;
		st->untar_files += g->files;
		st->untar_dirs += g->dirs;
		st->untar_bytes += g->bytes;
		st->untar_write_ns += t->ug_write_end - t->ug_t0;
		st->untar_sync_ns += now - t->ug_write_end;
		op->kind = TOP_END;
		return 0;
	}
	if (!g->files && !g->dirs)
		t->ug_t0 = now;
	int k = untar_next(g, &off, &len);
	if (k == UNTAR_END) {
		/* the tar has exited: syncfs, as the kernel measurement does */
		t->ug_synced = 1;
		t->ug_write_end = now;
		snprintf(t->bn_cmd, sizeof(t->bn_cmd), "sync");
	} else if (k == UNTAR_MKDIR) {
		snprintf(t->bn_cmd, sizeof(t->bn_cmd), "mkdir %s", g->path);
	} else if (k == UNTAR_CREATE) {
		snprintf(t->bn_cmd, sizeof(t->bn_cmd), "create %s", g->path);
	} else {
		snprintf(t->bn_cmd, sizeof(t->bn_cmd), "write %s %llu %llu %llu", g->path, (unsigned long long)off, (unsigned long long)len,
			 (unsigned long long)g->files);
	}
	if (!t->l && !(t->l = malloc(sizeof(*t->l))))
		return fail(r, BLAB_ENOMEM, "out of memory");
	int ret = tokenize(r, t->bn_cmd, strlen(t->bn_cmd), t->l);
	return ret ? ret : thread_command(r, t, op);
}

static int untar_setup(struct scenario_run *r, struct section *sec, struct line *l)
{
	u64 files = 1000000, bytes = 0, seed = 1, chunk = 10240;
	const char *dir = "/";
	int ret = 0;
	if (l->argc < 2 || strcmp(l->argv[1], "random"))
		return fail(r, BLAB_EPARSE, "expects untar random files=N [bytes=S] [seed=N] [chunk=S] [dir=PATH]");
	for (int i = 2; i < l->argc; i++) {
		const char *w = l->argv[i], *eq = strchr(w, '=');
		size_t kl = eq ? (size_t)(eq - w) : 0;
		if (kl == 5 && !strncmp(w, "files", 5))
			ret = parse_num(r, "files", eq + 1, &files);
		else if (kl == 5 && !strncmp(w, "bytes", 5))
			ret = parse_num(r, "bytes", eq + 1, &bytes);
		else if (kl == 4 && !strncmp(w, "seed", 4))
			ret = parse_num(r, "seed", eq + 1, &seed);
		else if (kl == 5 && !strncmp(w, "chunk", 5))
			ret = parse_num(r, "chunk", eq + 1, &chunk);
		else if (kl == 3 && !strncmp(w, "dir", 3))
			dir = eq + 1;
		else
			return fail(r, BLAB_EPARSE, "'%s': untar random takes files=N bytes=S seed=N chunk=S dir=PATH", w);
		if (ret)
			return ret;
	}
	if (!files || files > 1000000)
		return fail(r, BLAB_EPARSE, "untar: files is 1 to 1000000");
	if (!bytes || bytes > r->max_bytes - r->bytes)
		bytes = r->max_bytes - r->bytes; /* (each write still counts against the limit) */
	if (dir[0] != '/' || strlen(dir) > UNTAR_PATH_MAX - 64)
		return fail(r, BLAB_EPARSE, "untar: dir is an absolute path of at most %d characters", UNTAR_PATH_MAX - 64);
	int ti = thread_index(r, sec, "tar", 3);
	if (ti < 0)
		return ti;
	struct sec_thread *t = &sec->t[ti];
	if (!(t->ug = malloc(sizeof(*t->ug))))
		return fail(r, BLAB_ENOMEM, "out of memory");
	untar_init(t->ug, dir, seed, files, bytes);
	untar_set_chunk(t->ug, chunk); /* tar writes a record (10240 bytes) at a time; 0: each file in one write */
	t->lineno = r->lineno;
	return 0;
}

/* A timed section: thread blocks and NAME: lines from l on, or a fio line. */
static int run_section(struct scenario_run *r, struct line *l)
{
	struct section sec = {.r = r};
	int ret = timed_state_get(r);
	if (ret)
		return ret;
	if (!(sec.t = calloc(SCENARIO_MAX_THREADS, sizeof(*sec.t))))
		return fail(r, BLAB_ENOMEM, "out of memory");
	int is_fio = !strcmp(l->argv[0], "fio") || !strcmp(l->argv[0], "bonnie") || !strcmp(l->argv[0], "untar");
	ret = !strcmp(l->argv[0], "fio")      ? fio_setup(r, &sec, l)
	      : !strcmp(l->argv[0], "bonnie") ? bonnie_setup(r, &sec, l)
	      : is_fio                        ? untar_setup(r, &sec, l)
					      : section_collect(r, &sec);
	if (is_fio && !ret) {
		/* the next line, to know whether a crash follows */
		ret = read_line(r);
	}
	int saved_lineno = r->lineno;
	const char *saved_cmd = r->cmd;
	int sched[SCENARIO_MAX_THREADS * 4], nsched = 0;
	for (int i = 0; !ret && i < r->nsched; i++) {
		int k = 0;
		while (k < sec.n && strcmp(sec.t[k].name, r->sched_names[i]))
			k++;
		if (k == sec.n)
			ret = fail(r, BLAB_EPARSE, "schedule names thread '%s', which this section does not have", r->sched_names[i]);
		else
			sched[nsched++] = k;
	}
	r->nsched = 0;
	if (ret) {
		section_free(&sec);
		return ret;
	}
	int drain = !(r->held && !strcmp(r->l->argv[0], "crash"));
	const char *names[SCENARIO_MAX_THREADS];
	for (int i = 0; i < sec.n; i++)
		names[i] = sec.t[i].name;
	ret = timed_section(r->fs, &r->tcfg, r->tst, sec.n, names, section_next, &sec, sched, (size_t)nsched, drain);
	section_free(&sec);
	if (ret == BLAB_EDEADLK && r->tst->deadlock_line) {
		/* the line of a thread in the cycle, not the last one started */
		r->lineno = r->tst->deadlock_line;
		r->cmd = timed_op_name(r->tst->deadlock_op);
	}
	if (ret && !r->err.code)
		ret = fail_core(r, ret);
	if (!ret) {
		r->lineno = saved_lineno;
		r->cmd = saved_cmd;
	}
	return ret;
}

/* `set` of a time setting: 1 when name is one, 0 when not, or an error. */
static int set_time(struct scenario_run *r, const char *w)
{
	const char *eq = strchr(w, '=');
	if (!eq)
		return 0;
	size_t kl = (size_t)(eq - w);
	const char *v = eq + 1;
	u64 n;
	int ret;
#define KEY(k) (kl == sizeof(k) - 1 && !strncmp(w, k, kl))
	if (KEY("device")) {
		const struct btrfs_device_profile *p = btrfs_device_profile(v);
		if (!p)
			return fail(r, BLAB_EPARSE, "'%s': devices are nvme, ssd, hdd and loop", v);
		r->tcfg.dev = *p;
	} else if (KEY("fsync_wait")) {
		if (!strcmp(v, "ordered"))
			btrfs_set_fsync_wait_mode(r->fs, BTRFS_FSYNC_WAIT_ORDERED);
		else if (!strcmp(v, "writeback"))
			btrfs_set_fsync_wait_mode(r->fs, BTRFS_FSYNC_WAIT_WRITEBACK);
		else
			return fail(r, BLAB_EPARSE, "'%s': fsync_wait is ordered (before 5.10) or writeback (5.10 on)", v);
	} else if (KEY("cpus")) {
		if ((ret = parse_num(r, "cpus", v, &n)))
			return ret;
		if (!n || n > 256)
			return fail(r, BLAB_EPARSE, "cpus is 1 to 256");
		r->tcfg.cpus = (int)n;
	} else if (KEY("sched")) {
		if (!strcmp(v, "seed"))
			r->tcfg.policy = SCHED_SEED;
		else if (!strcmp(v, "rr") || !strcmp(v, "round-robin"))
			r->tcfg.policy = SCHED_ROUND_ROBIN;
		else
			return fail(r, BLAB_EPARSE, "'%s': sched is seed or rr (round robin)", v);
	} else if (KEY("seed")) {
		if ((ret = parse_num(r, "seed", v, &r->tcfg.seed)))
			return ret;
	} else if (KEY("memory")) {
		if ((ret = parse_num(r, "memory", v, &n)))
			return ret;
		r->tcfg.dirty_bytes = n / 5;
		r->tcfg.dirty_background_bytes = n / 10;
	} else if (KEY("dirty")) {
		if ((ret = parse_num(r, "dirty", v, &r->tcfg.dirty_bytes)))
			return ret;
	} else if (KEY("dirty_background")) {
		if ((ret = parse_num(r, "dirty_background", v, &r->tcfg.dirty_background_bytes)))
			return ret;
	} else if (KEY("shrink_delalloc")) {
		/* in enum btrfs_shrink_delalloc's order */
		static const char *const names[] = {"pages", "inodes", NULL};
		int i = one_of(v, names);
		if (i < 0)
			return fail(r, BLAB_EPARSE, "'%s': shrink_delalloc is pages (since 5.11, the seed's fix) or inodes (5.10)", v);
		r->tcfg.shrink_delalloc = i;
	} else if (KEY("space_rules")) {
		/* in enum btrfs_space_rules's order */
		static const char *const names[] = {"6.18", "5.10", NULL};
		int i = one_of(v, names);
		if (i < 0)
			return fail(r, BLAB_EPARSE, "'%s': space_rules is 6.18 (this kernel's reservation sizes) or 5.10 (the seed's)", v);
		r->fs->space.rules = i;
	} else if (KEY("delayed_background")) {
		if ((ret = parse_num(r, "delayed_background", v, &n)))
			return ret;
		if (n < 2 || n > 1000000)
			return fail(r, BLAB_EPARSE, "'%s': delayed_background is 2 to 1000000 items (the kernel's is 128)", v);
		r->tcfg.delayed_background = n;
	} else if (kl > 5 && !strncmp(w, "cost.", 5)) {
		char key[32];
		snprintf(key, sizeof(key), "%.*s", (int)(kl - 5), w + 5);
		int id = btrfs_cost_by_key(key);
		if (id < 0)
			return fail(r, BLAB_EPARSE, "'%s': no such cost (btrfslab costs lists them)", key);
		if ((ret = parse_duration(r, v, &r->tcfg.cost[id])))
			return ret;
	} else if (kl > 7 && !strncmp(w, "device.", 7)) {
		const char *f = w + 7;
		size_t fl = kl - 7;
		struct btrfs_device_profile *d = &r->tcfg.dev;
#define FIELD(k) (fl == sizeof(k) - 1 && !strncmp(f, k, fl))
		if (FIELD("flush"))
			ret = parse_duration(r, v, &d->flush_ns);
		else if (FIELD("fua"))
			ret = parse_duration(r, v, &d->fua_ns);
		else if (FIELD("latency"))
			ret = parse_duration(r, v, &d->write_latency_ns);
		else if (FIELD("seek"))
			ret = parse_duration(r, v, &d->seek_ns);
		else if (FIELD("jiffy"))
			ret = parse_duration(r, v, &d->jiffy_ns);
		else if (FIELD("idle_wake"))
			ret = parse_duration(r, v, &d->idle_wake_ns);
		else if (FIELD("log_wake"))
			ret = parse_duration(r, v, &d->log_wake_ns);
		else if (FIELD("flush_tail"))
			ret = parse_duration(r, v, &d->flush_tail_ns);
		else if (FIELD("flush_tail_ppm")) {
			if (!(ret = parse_num(r, "flush_tail_ppm", v, &n)) && n > 1000000)
				ret = fail(r, BLAB_EPARSE, "device.flush_tail_ppm is a count in a million, 0 to 1000000");
			d->flush_tail_ppm = (u32)n;
		} else if (FIELD("bandwidth")) {
			if (!(ret = parse_num(r, "bandwidth", v, &n)) && !n)
				ret = fail(r, BLAB_EPARSE, "bandwidth must be above 0");
			d->bandwidth = n;
		} else if (FIELD("qd")) {
			if (!(ret = parse_num(r, "qd", v, &n)) && (!n || n > 4096))
				ret = fail(r, BLAB_EPARSE, "qd is 1 to 4096");
			d->queue_depth = (int)n;
		} else if (FIELD("jitter")) {
			if (!(ret = parse_num(r, "jitter", v, &n)) && n > 90)
				ret = fail(r, BLAB_EPARSE, "device.jitter is a percentage, 0 to 90");
			d->jitter_pct = (u32)n;
		} else if (FIELD("barrier")) {
			if (strcmp(v, "0") && strcmp(v, "1"))
				return fail(r, BLAB_EPARSE, "device.barrier is 0 or 1");
			d->flush_barrier = *v == '1';
			ret = 0;
		} else if (FIELD("cpu")) {
			size_t vl = strlen(v);
			char num[24];
			snprintf(num, sizeof(num), "%.*s", (int)(vl && v[vl - 1] == '%' ? vl - 1 : vl), v);
			if (!(ret = parse_num(r, "cpu", num, &n)) && (!n || n > 1000))
				ret = fail(r, BLAB_EPARSE, "device.cpu is a percentage of the cost table's CPU time, 1 to 1000");
			d->cpu_pct = (u32)n;
		} else if (FIELD("ssd")) {
			if (strcmp(v, "0") && strcmp(v, "1"))
				return fail(r, BLAB_EPARSE, "device.ssd is 0 or 1");
			d->ssd = *v == '1';
			ret = 0;
		} else
			return fail(r, BLAB_EPARSE, "'%.*s': device fields are flush, fua, latency, seek, jiffy, jitter, bandwidth, qd, ssd, barrier, cpu, idle_wake, log_wake, flush_tail, flush_tail_ppm",
				    (int)fl, f);
#undef FIELD
		if (ret)
			return ret;
	} else if (KEY("log_copy")) {
		/* in enum timed_log_copy's order */
		static const char *const names[] = {"prealloc", "clone", "direct", NULL};
		int i = one_of(v, names);
		if (i < 0)
			return fail(r, BLAB_EPARSE, "'%s': log_copy is clone (before seed 000: each fs leaf cloned under its lock), prealloc (since), "
						    "or direct (before v6.1: the log changed while the fs leaf is locked)", v);
		r->tcfg.log_copy = i;
	} else if (KEY("memory_pressure")) {
		static const char *const names[] = {"none", "moderate", "heavy", NULL};
		int i = one_of(v, names);
		if (i < 0)
			return fail(r, BLAB_EPARSE, "'%s': memory_pressure is none, moderate or heavy", v);
		r->tcfg.memory_pressure = i;
	} else if (KEY("tree_locks")) {
		/* in enum timed_tree_locks' order */
		static const char *const names[] = {"path", "tree", NULL};
		int i = one_of(v, names);
		if (i < 0)
			return fail(r, BLAB_EPARSE, "'%s': tree_locks is path (a lock a tree block, as the kernel) or tree (one lock a tree)", v);
		r->tcfg.tree_locks = i;
	} else if (KEY("max_events")) {
		/* a script may lower its bound, never raise it past the run's (--max-events) */
		u64 cap = r->o.max_events ? r->o.max_events : SCENARIO_MAX_EVENTS;
		if ((ret = parse_num(r, "max_events", v, &n)))
			return ret;
		if (!n || n > cap)
			return fail(r, BLAB_EPARSE, "max_events is 1 to %llu, the run's bound (--max-events)", (unsigned long long)cap);
		r->tcfg.max_events = n;
	} else if (KEY("commit")) {
		if ((ret = parse_duration(r, v, &n)))
			return ret;
		if (!n)
			return fail(r, BLAB_EPARSE, "commit interval must be above 0");
		r->tcfg.commit_interval_ns = n;
	} else {
		return 0;
	}
#undef KEY
	return 1;
}

static int run_line(struct scenario_run *r, struct line *l)
{
	struct btrfs_fs_info *fs = r->fs;
	const char *c = l->argv[0];
	u64 a, b, seed;
	int ret = 0;
	if (!strcmp(c, "mkfs"))
		return fail(r, BLAB_EPARSE, "mkfs may only be the first command");
	fs_trace(fs, (struct trace_event){.kind = TRACE_OP, .slot = r->lineno});
	if (!fs->trans_running)
		btrfs_start_transaction(fs);
	if (!strcmp(c, "commit") || !strcmp(c, "sync")) {
		if ((ret = want_args(r, l, 0, 0, "no arguments")))
			return ret;
		/* syncfs: dirty pages written back and their ordered extents complete, then the commit;
		 * with a deleted tree waiting, the cleaner's next batch goes in that commit */
		if ((ret = btrfs_sync_data(fs)))
			return fail_core(r, ret);
		if (btrfs_next_dead_root(fs))
			return (ret = run_cleaner(r, 0)) ? fail_core(r, ret) : 0;
		if ((ret = btrfs_commit_transaction(fs)))
			return fail_core(r, ret);
		r->res.commits++;
		return 0;
	}
	if (!strcmp(c, "crash")) {
		if ((ret = want_args(r, l, 0, 0, "no arguments")))
			return ret;
		r->crashed = 1;
		return power_cut(r);
	}
	if (!strcmp(c, "set")) {
		if ((ret = want_args(r, l, 1, 1, "set NAME=VALUE")))
			return ret;
		if (!strncmp(l->argv[1], "qgroup_swap=", 12)) {
			/* seed 004: how relocation's subtree swaps are traced for qgroups */
			const char *m = l->argv[1] + 12;
			if (!strcmp(m, "full"))
				btrfs_qgroup_set_swap_mode(fs, BTRFS_QGROUP_SWAP_FULL);
			else if (!strcmp(m, "subtree"))
				btrfs_qgroup_set_swap_mode(fs, BTRFS_QGROUP_SWAP_SUBTREE);
			else if (!strcmp(m, "deferred"))
				btrfs_qgroup_set_swap_mode(fs, BTRFS_QGROUP_SWAP_DEFERRED);
			else
				return fail(r, BLAB_EPARSE, "'%s': qgroup_swap=full (before 4.20), subtree (4.20) or deferred (since 5.1)", l->argv[1]);
		} else if (!strncmp(l->argv[1], "drop_batch=", 11)) {
			/* the cleaner's batch: blocks let go of before it ends a transaction */
			u64 n;
			if ((ret = parse_num(r, "drop_batch", l->argv[1] + 11, &n)))
				return ret;
			fs->drop_batch = n;
		} else if (!strcmp(l->argv[1], "dir_logging=index-only"))
			btrfs_set_dir_logging(fs, BTRFS_DIR_LOGGING_INDEX_ONLY);
		else if (!strcmp(l->argv[1], "dir_logging=legacy"))
			btrfs_set_dir_logging(fs, BTRFS_DIR_LOGGING_LEGACY);
		else if (!strcmp(l->argv[1], "dir_logging=5.10"))
			btrfs_set_dir_logging(fs, BTRFS_DIR_LOGGING_LEAVES_5_10);
		else if (!strcmp(l->argv[1], "dir_logging=5.17"))
			btrfs_set_dir_logging(fs, BTRFS_DIR_LOGGING_LEAVES_5_17);
		else if (!strncmp(l->argv[1], "dir_logging=", 12))
			return fail(r, BLAB_EPARSE, "'%s': the setting is dir_logging=index-only or dir_logging=legacy "
						    "(or 5.10, 5.17: every entry of the changed leaves)", l->argv[1]);
		else if ((ret = set_time(r, l->argv[1])) < 0)
			return ret;
		else if (!ret)
			return fail(r, BLAB_EPARSE, "'%s': settings are NAME=VALUE, NAME one of %s (btrfslab help scenario)", l->argv[1],
				    scenario_setting_names());
		return 0;
	}
	if (!strcmp(c, "schedule")) {
		if (l->argc < 2)
			return fail(r, BLAB_EPARSE, "expects schedule NAME... (the order the next section's threads start their commands)");
		if (r->nsched + l->argc - 1 > SCENARIO_MAX_THREADS)
			return fail(r, BLAB_EPARSE, "a schedule of more than %d turns", SCENARIO_MAX_THREADS);
		for (int i = 1; i < l->argc; i++) {
			if (strlen(l->argv[i]) >= SCENARIO_NAME_MAX)
				return fail(r, BLAB_EPARSE, "'%s' is not a thread name", l->argv[i]);
			snprintf(r->sched_names[r->nsched++], SCENARIO_NAME_MAX, "%s", l->argv[i]);
		}
		return 0;
	}
	if (!strcmp(c, "sleep")) {
		u64 ns;
		if ((ret = want_args(r, l, 1, 1, "sleep DURATION (5s, 100ms, 20us)")) || (ret = parse_duration(r, l->argv[1], &ns)) ||
		    (ret = timed_state_get(r)))
			return ret;
		if ((ret = timed_sleep(fs, &r->tcfg, r->tst, ns)))
			return r->err.code ? ret : fail_core(r, ret);
		return 0;
	}
	if (!strcmp(c, "thread") || !strcmp(c, "fio") || !strcmp(c, "bonnie") || !strcmp(c, "untar") || prefix_name(c))
		return run_section(r, l);
	if (!strcmp(c, "end"))
		return fail(r, BLAB_EPARSE, "`end` without `thread`");
	if ((ret = count_op(r)))
		return ret;
	if (!strcmp(c, "fsync")) {
		u64 ino;
		struct btrfs_root *root;
		if ((ret = want_args(r, l, 1, 1, "fsync PATH")))
			return ret;
		if ((ret = btrfs_lookup_path_subvol(fs, l->argv[1], &root, &ino)))
			return fail_core(r, ret);
		struct scenario_result *res = &r->res;
		if (res->nfsyncs == res->capfsyncs) {
			int cap = res->capfsyncs ? res->capfsyncs * 2 : 16;
			struct scenario_fsync *n = realloc(res->fsyncs, (size_t)cap * sizeof(*n));
			if (!n)
				return fail(r, BLAB_ENOMEM, "out of memory");
			res->fsyncs = n;
			res->capfsyncs = cap;
		}
		struct scenario_fsync *f = &res->fsyncs[res->nfsyncs++];
		f->line = r->lineno;
		struct timespec t0 = wallclock_now();
		if ((ret = btrfs_sync_file(fs, root, ino, &f->st)))
			return fail_core(r, ret);
		f->ms = wallclock_ms_since(&t0);
		if (f->st.fallback && f->st.fallback != BTRFS_LOG_NOTHING)
			res->commits++;
		return 0;
	}
	if (!strcmp(c, "mkdir")) {
		struct inode_attrs at = {.mode = S_IFDIR_ | 0755};
		u64 ino;
		struct btrfs_root *root;
		const char *in;
		if ((ret = want_args(r, l, 1, 1, "mkdir PATH")) || (ret = sv_path(r, l->argv[1], &root, &in)))
			return ret;
		if ((ret = btrfs_create(fs, root, in, &at, &ino)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "create")) {
		r->res.ops--;
		if (!(ret = want_args(r, l, 1, 1, "create PATH")))
			ret = brace_start(r, l->argv[1], do_create);
	} else if (!strcmp(c, "unlink")) {
		r->res.ops--;
		if (!(ret = want_args(r, l, 1, 1, "unlink PATH")))
			ret = brace_start(r, l->argv[1], do_unlink);
	} else if (!strcmp(c, "symlink")) {
		struct btrfs_root *root;
		const char *in;
		if ((ret = want_args(r, l, 2, 2, "symlink TARGET PATH")) || (ret = sv_path(r, l->argv[2], &root, &in)))
			return ret;
		if ((ret = btrfs_symlink(fs, root, l->argv[1], in)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "write")) {
		if ((ret = want_args(r, l, 3, 4, "write PATH OFFSET LENGTH [SEED]")) || (ret = parse_num(r, "offset", l->argv[2], &a)) ||
		    (ret = parse_num(r, "length", l->argv[3], &b)))
			return ret;
		seed = 1;
		if (l->argc == 5 && (ret = parse_num(r, "seed", l->argv[4], &seed)))
			return ret;
		ret = do_write(r, l->argv[1], a, b, seed);
	} else if (!strcmp(c, "truncate")) {
		u64 ino;
		struct btrfs_root *root;
		if ((ret = want_args(r, l, 2, 2, "truncate PATH SIZE")) || (ret = parse_num(r, "size", l->argv[2], &a)) ||
		    (ret = sv_inode(r, l->argv[1], &root, &ino)))
			return ret;
		if ((ret = btrfs_file_truncate(fs, root, ino, a)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "link")) {
		struct btrfs_root *root;
		const char *ia, *ib;
		if ((ret = want_args(r, l, 2, 2, "link EXISTING NEW")) || (ret = sv_pair(r, l->argv[1], l->argv[2], &root, &ia, &ib)))
			return ret;
		if ((ret = btrfs_link(fs, root, ia, ib)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "rename")) {
		struct btrfs_root *root;
		const char *ia, *ib;
		if ((ret = want_args(r, l, 2, 2, "rename OLD NEW")) || (ret = sv_pair(r, l->argv[1], l->argv[2], &root, &ia, &ib)))
			return ret;
		if ((ret = btrfs_rename(fs, root, ia, ib)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "rmdir")) {
		struct btrfs_root *root;
		const char *in;
		if ((ret = want_args(r, l, 1, 1, "rmdir PATH")) || (ret = sv_path(r, l->argv[1], &root, &in)))
			return ret;
		if ((ret = btrfs_rmdir(fs, root, in)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "setxattr")) {
		u64 ino;
		if ((ret = want_args(r, l, 3, 3, "setxattr PATH NAME VALUE")))
			return ret;
		size_t vl = strlen(l->argv[3]);
		if (vl > 65535)
			return fail(r, BLAB_EINVAL, "xattr value longer than 65535 bytes");
		struct btrfs_root *root;
		if ((ret = sv_inode(r, l->argv[1], &root, &ino)))
			return ret;
		if ((ret = btrfs_setxattr(fs, root, ino, l->argv[2], (const u8 *)l->argv[3], (u16)vl)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "snapshot")) {
		/* btrfs subvolume snapshot [-r]: the source's delalloc written and its
		 * ordered extents done, the snapshot made in the transaction that
		 * commits it (the kernel's create_pending_snapshot) */
		u64 id, ino;
		struct btrfs_root *src, *dst;
		const char *in;
		if ((ret = want_args(r, l, 2, 3, "snapshot SRC DST [ro]")))
			return ret;
		if (l->argc == 4 && strcmp(l->argv[3], "ro"))
			return fail(r, BLAB_EPARSE, "'%s': the third argument of snapshot is ro (a read-only snapshot), or nothing", l->argv[3]);
		if ((ret = btrfs_lookup_path_subvol(fs, l->argv[1], &src, &ino)))
			return fail_core(r, ret);
		if (ino != btrfs_root_dirid(src->item))
			return fail(r, BLAB_EINVAL, "snapshot %s: not a subvolume (the top level is /)", l->argv[1]);
		if ((ret = sv_path(r, l->argv[2], &dst, &in)))
			return ret;
		if ((ret = btrfs_sync_data(fs)))
			return fail_core(r, ret);
		if (btrfs_qgroup_enabled(fs)) {
			/* qgroups: what came before is accounted first, so the snapshot inherits whole numbers */
			if ((ret = btrfs_commit_transaction(fs)) || (ret = btrfs_start_transaction(fs)))
				return fail_core(r, ret);
			r->res.commits++;
		}
		if ((ret = btrfs_create_snapshot(fs, src, dst, in, l->argc == 4, &id)) || (ret = btrfs_commit_transaction(fs)))
			return fail_core(r, ret);
		r->res.commits++;
	} else if (!strcmp(c, "quota")) {
		/* btrfs quota enable | rescan */
		if ((ret = want_args(r, l, 1, 1, "quota enable|rescan")))
			return ret;
		if (strcmp(l->argv[1], "enable") && strcmp(l->argv[1], "rescan"))
			return fail(r, BLAB_EPARSE, "'quota %s': quota enable or quota rescan", l->argv[1]);
		if ((ret = btrfs_sync_data(fs)) ||
		    (ret = !strcmp(l->argv[1], "enable") ? btrfs_quota_enable(fs) : btrfs_qgroup_rescan(fs)) ||
		    (ret = btrfs_commit_transaction(fs)))
			return fail_core(r, ret);
		r->res.commits++;
	} else if (!strcmp(c, "qgroup")) {
		/* btrfs qgroup create ID | assign CHILD PARENT | limit [-e] SIZE|none ID */
		u64 a1, a2 = 0;
		int create = l->argc == 3 && !strcmp(l->argv[1], "create"), assign = l->argc == 4 && !strcmp(l->argv[1], "assign");
		if (l->argc >= 2 && !strcmp(l->argv[1], "limit")) {
			if (l->argc < 4 || l->argc > 5 || (l->argc == 5 && strcmp(l->argv[4], "excl")))
				return fail(r, BLAB_EPARSE, "expects qgroup limit SIZE|none QGROUP [excl] (as 100M 0/256; excl: the exclusive limit)");
			if (btrfs_qgroup_parse(l->argv[3], &a1))
				return fail(r, BLAB_EPARSE, "'%s': a qgroup is LEVEL/ID (0/257, 1/100) or ID", l->argv[3]);
			if (!strcmp(l->argv[2], "none"))
				a2 = BTRFS_QGROUP_LIMIT_NONE;
			else if ((ret = parse_num(r, "limit", l->argv[2], &a2)))
				return ret;
			else if (a2 == BTRFS_QGROUP_LIMIT_NONE)
				return fail(r, BLAB_EPARSE, "limit '%s' is too large", l->argv[2]);
			if ((ret = btrfs_qgroup_limit(fs, a1, l->argc == 5 ? BTRFS_QGROUP_LIMIT_MAX_EXCL : BTRFS_QGROUP_LIMIT_MAX_RFER, a2)))
				return fail_core(r, ret);
			return 0;
		}
		if (!create && !assign)
			return fail(r, BLAB_EPARSE, "qgroup create LEVEL/ID, qgroup assign CHILD PARENT (as 0/257 1/100), or qgroup limit SIZE|none QGROUP [excl]");
		if (btrfs_qgroup_parse(l->argv[2], &a1) || (assign && btrfs_qgroup_parse(l->argv[3], &a2)))
			return fail(r, BLAB_EPARSE, "'%s': a qgroup is LEVEL/ID (0/257, 1/100) or ID", btrfs_qgroup_parse(l->argv[2], &a1) ? l->argv[2] : l->argv[3]);
		if (create && !(a1 >> BTRFS_QGROUP_LEVEL_SHIFT))
			return fail(r, BLAB_EINVAL, "qgroup create %s: level 0 qgroups are the subvolumes' own", l->argv[2]);
		if ((ret = create ? btrfs_qgroup_create(fs, a1) : btrfs_qgroup_assign(fs, a1, a2)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "clone")) {
		/* FICLONE (cp --reflink): DST, made when absent, shares SRC's extents */
		struct btrfs_root *sroot, *droot;
		u64 sino, dino;
		if ((ret = want_args(r, l, 2, 2, "clone SRC DST")))
			return ret;
		if ((ret = btrfs_lookup_path_subvol(fs, l->argv[1], &sroot, &sino)))
			return fail_core(r, ret);
		ret = btrfs_lookup_path_subvol(fs, l->argv[2], &droot, &dino);
		if (ret == BLAB_ENOENT) {
			struct inode_attrs at = {.mode = S_IFREG_ | 0644};
			const char *in;
			fs->err.code = 0;
			if ((ret = sv_path(r, l->argv[2], &droot, &in)))
				return ret;
			ret = btrfs_create(fs, droot, in, &at, &dino);
		} else if (!ret && (ret = writable(r, droot, l->argv[2]))) {
			return ret;
		}
		if (ret || (ret = btrfs_clone_file(fs, sroot, sino, droot, dino)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "balance") || !strcmp(c, "relocate")) {
		/* btrfs balance start [-d] [-m] [-s] [usage=N]; relocate BYTENR (one block group) */
		struct btrfs_reloc_stats st = {0};
		struct timespec bt0 = wallclock_now();
		if (!strcmp(c, "relocate")) {
			u64 at;
			if ((ret = want_args(r, l, 1, 1, "relocate BYTENR (a block group's start)")) || (ret = parse_num(r, "relocate", l->argv[1], &at)))
				return ret;
			if ((ret = btrfs_sync_data(fs)) || (ret = btrfs_relocate_block_group(fs, at, &st)))
				return fail_core(r, ret);
		} else {
			u64 mask = 0, usage = 100;
			for (int i = 1; i < l->argc; i++) {
				const char *opt = l->argv[i];
				if (!strcmp(opt, "-d"))
					mask |= BTRFS_BLOCK_GROUP_DATA;
				else if (!strcmp(opt, "-m")) /* as btrfs balance does: system chunks with the metadata */
					mask |= BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_SYSTEM;
				else if (!strcmp(opt, "-s"))
					mask |= BTRFS_BLOCK_GROUP_SYSTEM;
				else if (!strncmp(opt, "usage=", 6)) {
					if ((ret = parse_num(r, "usage", opt + 6, &usage)))
						return ret;
					if (usage > 100)
						return fail(r, BLAB_EPARSE, "'%s': usage is a percentage, 0 to 100", opt);
				} else
					return fail(r, BLAB_EPARSE, "'%s': balance [-d] [-m] [-s] [usage=N]", opt);
			}
			if (!mask)
				mask = BTRFS_BLOCK_GROUP_TYPE_MASK;
			if ((ret = btrfs_sync_data(fs)) || (ret = btrfs_balance(fs, mask, (int)usage, &st)))
				return fail_core(r, ret);
		}
		r->res.reloc_groups += st.block_groups;
		r->res.reloc_extents += st.extents;
		r->res.reloc_ms += wallclock_ms_since(&bt0);
	} else if (!strcmp(c, "subvol")) {
		/* btrfs subvolume create | delete | set-default PATH */
		u64 id, ino;
		struct btrfs_root *dst;
		const char *in;
		static const char usage[] = "subvol create PATH, subvol delete PATH [nosync], subvol set-default PATH or subvol sync";
		if (l->argc == 2 && !strcmp(l->argv[1], "sync")) {
			/* btrfs subvolume sync: the cleaner drops every deleted tree, a batch a transaction */
			if (btrfs_next_dead_root(fs) && ((ret = btrfs_sync_data(fs)) || (ret = run_cleaner(r, 1))))
				return fail_core(r, ret);
			return 0;
		}
		int nosync = l->argc == 4 && !strcmp(l->argv[1], "delete") && !strcmp(l->argv[3], "nosync");
		if (l->argc != 3 && !nosync)
			return fail(r, BLAB_EPARSE, "expects %s", usage);
		if (strcmp(l->argv[1], "create") && strcmp(l->argv[1], "delete") && strcmp(l->argv[1], "set-default"))
			return fail(r, BLAB_EPARSE, "'subvol %s': %s", l->argv[1], usage);
		if (!strcmp(l->argv[1], "set-default")) {
			/* the ioctl changes one item in the running transaction (no commit),
			 * and is allowed on a read-only subvolume */
			if ((ret = btrfs_lookup_path_subvol(fs, l->argv[2], &dst, &ino)))
				return fail_core(r, ret);
			if (ino != btrfs_root_dirid(dst->item))
				return fail(r, BLAB_EINVAL, "set-default %s: not a subvolume (the top level is /)", l->argv[2]);
			if ((ret = btrfs_set_default_subvol(fs, dst->objectid)))
				return fail_core(r, ret);
			return 0;
		}
		if ((ret = sv_path(r, l->argv[2], &dst, &in)))
			return ret;
		if (!strcmp(l->argv[1], "create")) {
			if ((ret = btrfs_create_subvol(fs, dst, in, &id)))
				return fail_core(r, ret);
		} else {
			/* btrfs subvolume delete -c: the name goes in one commit; then (unless
			 * nosync: later commits, or subvol sync) the cleaner drops the tree,
			 * drop_batch blocks a transaction, and its qgroup goes after */
			if ((ret = btrfs_sync_data(fs)) || (ret = btrfs_delete_subvol(fs, dst, in, &id)) || (ret = btrfs_commit_transaction(fs)))
				return fail_core(r, ret);
			r->res.commits++;
			if (!nosync && ((ret = btrfs_start_transaction(fs)) || (ret = run_cleaner(r, 1))))
				return fail_core(r, ret);
		}
	} else {
		return fail(r, BLAB_EPARSE, "unknown command (commands: %s)", scenario_command_names());
	}
	return ret;
}

/* The cleaner: one batch, or (all) until no deleted tree is left. */
static int run_cleaner(struct scenario_run *r, int all)
{
	u64 commits = 0;
	int ret = btrfs_clean_deleted_snapshots(r->fs, all, &commits);
	r->res.commits += (int)commits;
	return ret;
}

/* The options of the mkfs line into mo (label into label[lsize]); rootdir=
 * into rootdir[rsize] ("" when absent); *have_size when size= is given. */
static int parse_mkfs_line(struct scenario_run *r, const struct line *l, struct mkfs_options *mo, char *label, size_t lsize,
			   char *rootdir, size_t rsize, int *have_size)
{
	for (int i = 1; i < l->argc; i++) {
		const char *eq = strchr(l->argv[i], '=');
		if (!eq)
			return fail(r, BLAB_EPARSE, "'%s': options look like nodesize=16K", l->argv[i]);
		size_t kl = (size_t)(eq - l->argv[i]);
		u64 v;
		int ret;
		if (kl == 8 && !strncmp(l->argv[i], "nodesize", kl)) {
			if ((ret = parse_num(r, "nodesize", eq + 1, &v)))
				return ret;
			mo->nodesize = (u32)v;
		} else if (kl == 10 && !strncmp(l->argv[i], "sectorsize", kl)) {
			if ((ret = parse_num(r, "sectorsize", eq + 1, &v)))
				return ret;
			mo->sectorsize = (u32)v;
		} else if (kl == 4 && !strncmp(l->argv[i], "size", kl)) {
			if ((ret = parse_num(r, "size", eq + 1, &mo->size)))
				return ret;
			*have_size = 1;
		} else if (kl == 7 && !strncmp(l->argv[i], "rootdir", kl)) {
			if (!r->o.rootdir_copy || !r->o.rootdir_estimate)
				return fail(r, BLAB_EINVAL, "rootdir=%s: copying a host directory needs the native CLI (btrfslab run); "
							    "this build has no host files", eq + 1);
			if (!eq[1])
				return fail(r, BLAB_EPARSE, "rootdir= needs a directory (rootdir=DIR)");
			/* relative to the script's directory */
			const char *base = eq[1] == '/' ? NULL : r->o.base_dir;
			if ((size_t)snprintf(rootdir, rsize, "%s%s%s", base ? base : "", base ? "/" : "", eq + 1) >= rsize)
				return fail(r, BLAB_EINVAL, "rootdir=%s: the path is too long", eq + 1);
		} else if (kl == 10 && !strncmp(l->argv[i], "meta_chunk", kl)) {
			/* smaller metadata chunks: a tree spread over several block groups (a balance of one moves part of it) */
			if ((ret = parse_num(r, "meta_chunk", eq + 1, &mo->meta_chunk)))
				return ret;
			if (mo->meta_chunk < (256 << 10) || mo->meta_chunk > (1ULL << 30) || mo->meta_chunk % (64 << 10))
				return fail(r, BLAB_EINVAL, "meta_chunk=%s: a size from 256K to 1G, a multiple of 64K", eq + 1);
		} else if (kl == 5 && !strncmp(l->argv[i], "label", kl)) {
			snprintf(label, lsize, "%s", eq + 1);
			mo->label = label;
		} else {
			return fail(r, BLAB_EPARSE, "unknown mkfs option '%.*s' (nodesize, sectorsize, size, label, rootdir, meta_chunk)", (int)kl, l->argv[i]);
		}
	}
	return 0;
}

/* Reads lines until one holds a command, which is then held (tokenized in
 * r->l, not run). 0 (nothing held at the end of the script) or an error. */
static int read_line(struct scenario_run *r)
{
	while (!r->held && r->pos < r->len) {
		size_t e = r->pos;
		while (e < r->len && r->text[e] != '\n')
			e++;
		size_t start = r->pos;
		r->lineno++;
		r->cmd = NULL;
		if (memchr(r->text + start, 0, e - start))
			return fail(r, BLAB_EPARSE, "NUL byte in the script");
		r->pos = e + 1;
		int ret = tokenize(r, r->text + start, e - start, r->l);
		if (ret)
			return ret;
		if (r->l->argc) {
			r->held = 1;
			r->held_pos = start;
			r->held_lineno = r->lineno;
			r->cmd = r->l->argv[0];
		}
	}
	return 0;
}

/* The power cut of `crash`: what is left is what the device holds, opened again. */
static int power_cut(struct scenario_run *r)
{
	struct blab_err oe = {0};
	r->fs = btrfs_power_cut(r->fs, &oe);
	if (!r->fs)
		return blab_fail(&r->err, oe.code ? oe.code : BLAB_EIO, "%s: after crash: %s", r->name, oe.msg);
	r->res.crashed = 1;
	return 0;
}

static void run_free(struct scenario_run *r)
{
	if (!r)
		return;
	btrfs_fs_free(r->fs);
	free(r->tst);
	scenario_result_free(&r->res);
	brace_clear(&r->br);
	free(r->l);
	free(r->owned_text);
	free(r->name);
	free(r);
}

/* The error of r in err, r freed: `return run_failed(r, out, err)`. */
/* Hands the run's filesystem and what it did to out (r keeps neither). */
static void take_result(struct scenario_run *r, struct scenario_result *out)
{
	r->res.timed = r->tst;
	r->res.tcfg = r->tcfg;
	r->tst = NULL;
	*out = r->res;
	out->run_ms = r->ms;
	out->fs = r->fs;
	r->fs = NULL;
	memset(&r->res, 0, sizeof(r->res));
}

static int run_failed(struct scenario_run *r, struct scenario_result *out, struct blab_err *err)
{
	int code = r->err.code ? r->err.code : BLAB_EINVAL;
	if (err) {
		*err = r->err;
		err->code = code;
	}
	if (out && r->o.keep_failed && r->fs) {
		r->res.lines = r->lineno;
		take_result(r, out);
		out->failure = r->err;
		out->failure.code = code;
	}
	run_free(r);
	return code;
}

/* The mkfs line's rootdir= failed (me says how): the error names the line. */
static int rootdir_failed(struct scenario_run *r, int code, const char *dir, const struct blab_err *me, struct blab_err *err)
{
	/* rootdir.c names the directory as the CLI's option: "ENAME: --rootdir DIR: why" */
	const char *why = me->msg, *p = strstr(why, "--rootdir ");
	size_t dl = strlen(dir);
	if (p && !strncmp(p + 10, dir, dl) && p[10 + dl] == ':')
		why = p + 10 + dl + 2;
	else if (!strncmp(why, blab_errname(code), strlen(blab_errname(code))) && why[strlen(blab_errname(code))] == ':')
		why += strlen(blab_errname(code)) + 2;
	r->err.code = code;
	snprintf(r->err.msg, sizeof(r->err.msg), "%s:%d: mkfs: %s: rootdir=%s: %s", r->name, r->lineno, blab_errname(code), dir, why);
	return run_failed(r, NULL, err);
}

int scenario_begin(const char *text, size_t len, const char *name, const struct scenario_options *o, int copy_text,
		   struct scenario_run **out, struct blab_err *err)
{
	*out = NULL;
	struct scenario_run *r = calloc(1, sizeof(*r));
	if (!r || !(r->l = malloc(sizeof(*r->l))) || (copy_text && !(r->owned_text = malloc(len ? len : 1)))) {
		if (r)
			free(r->l);
		free(r);
		return blab_fail(err, BLAB_ENOMEM, "scenario");
	}
	r->t0 = wallclock_now();
	if (copy_text)
		memcpy(r->owned_text, text, len);
	r->text = copy_text ? r->owned_text : text;
	r->len = len;
	if (!(r->name = strdup(name))) {
		free(r->l);
		free(r->owned_text);
		free(r);
		return blab_fail(err, BLAB_ENOMEM, "scenario");
	}
	r->o = *o;
	timed_config_default(&r->tcfg);
	r->tcfg.seed = o->seed ? o->seed : 1;
	r->max_ops = o->max_ops ? o->max_ops : SCENARIO_MAX_OPS;
	r->max_bytes = o->max_bytes ? o->max_bytes : SCENARIO_MAX_BYTES;
	r->tcfg.max_events = o->max_events ? o->max_events : SCENARIO_MAX_EVENTS;
	r->tcfg.max_cpu_s = o->max_cpu_s > 0 ? o->max_cpu_s : SCENARIO_MAX_CPU_S;
	r->tcfg.cpu_deadline_s = cpuclock_s() + r->tcfg.max_cpu_s;
	struct mkfs_options mo;
	char label[BTRFS_LABEL_SIZE] = "";
	char rootdir[4096] = "";
	int have_size = 0;
	btrfs_mkfs_defaults(&mo);
	mo.seed = o->seed;
	mo.now = o->now;
	/* the filesystem is made before the first command, by the mkfs line if it is one */
	int ret = read_line(r);
	if (!ret && r->held && !strcmp(r->l->argv[0], "mkfs")) {
		if ((ret = parse_mkfs_line(r, r->l, &mo, label, sizeof(label), rootdir, sizeof(rootdir), &have_size)))
			return run_failed(r, NULL, err);
		r->held = 0;
	}
	if (ret)
		return run_failed(r, NULL, err);
	struct blab_err me = {0};
	struct rootdir_stats rst;
	u64 want = 0;
	/* rootdir= without size=: sized to fit, as mkfs --rootdir (never below the default) */
	if (rootdir[0] && (ret = o->rootdir_estimate(rootdir, mo.nodesize, &want, &rst, &me)))
		return rootdir_failed(r, ret, rootdir, &me, err);
	if (!have_size && want > mo.size)
		mo.size = want;
	if ((ret = btrfs_mkfs(&mo, &r->fs, &me))) {
		if (r->cmd)
			snprintf(r->err.msg, sizeof(r->err.msg), "%s:%d: %s: %s", r->name, r->lineno, r->cmd, me.msg);
		else
			snprintf(r->err.msg, sizeof(r->err.msg), "%s: %s", r->name, me.msg);
		r->err.code = ret;
		return run_failed(r, NULL, err);
	}
	/* the copy is part of mkfs: committed, and not in the trace */
	if (rootdir[0]) {
		r->fs->trace.enabled = 0;
		if ((ret = btrfs_start_transaction(r->fs)) || (ret = o->rootdir_copy(r->fs, rootdir, &rst, &me)) ||
		    (ret = btrfs_commit_transaction(r->fs))) {
			if (r->fs->err.code && !me.code)
				me = r->fs->err;
			if (ret == BLAB_ENOSPC && have_size)
				blab_fail(&me, ret, "%s does not fit in size=%llu: it needs about %llu (leave out size= to size the filesystem to fit)",
					  rootdir, (unsigned long long)mo.size, (unsigned long long)want);
			return rootdir_failed(r, ret, rootdir, &me, err);
		}
	}
	r->fs->trace.enabled = o->trace || o->count_events;
	r->fs->trace.count_only = !o->trace;
	r->ms += wallclock_ms_since(&r->t0);
	r->res.mkfs_ms = r->ms;
	*out = r;
	return 0;
}

int scenario_step(struct scenario_run *r)
{
	if (r->failed)
		return r->failed;
	struct timespec t0 = wallclock_now();
	int ret;
	if (r->br.active) {
		ret = brace_next(r);
	} else if ((ret = read_line(r)) || !r->held) {
		r->ms += wallclock_ms_since(&t0);
		return r->failed = ret;
	} else if (r->crashed) {
		ret = fail(r, BLAB_EPARSE, "nothing can follow crash (the script ends there)");
	} else {
		r->held = 0;
		ret = run_line(r, r->l);
	}
	r->ms += wallclock_ms_since(&t0);
	if (ret)
		return r->failed = ret;
	r->units++;
	return 1;
}

int scenario_next_line(struct scenario_run *r)
{
	if (r->failed)
		return r->lineno;
	if (r->br.active)
		return r->lineno;
	if ((r->failed = read_line(r)))
		return r->lineno;
	return r->held ? r->lineno : 0;
}

u64 scenario_units(const struct scenario_run *r) { return r->units; }

int scenario_next_words(struct scenario_run *r, const char *const **argv)
{
	if (r->failed || r->br.active || !r->held)
		return -1;
	*argv = (const char *const *)r->l->argv;
	return r->l->argc;
}

struct btrfs_fs_info *scenario_fs(const struct scenario_run *r) { return r->fs; }

int scenario_end(struct scenario_run *r, struct scenario_result *out, struct blab_err *err)
{
	memset(out, 0, sizeof(*out));
	struct timespec t0 = wallclock_now();
	int ret = r->failed;
	/* a step may not have read the rest yet (comments, blank lines) */
	while (!ret && (ret = scenario_step(r)) > 0)
		;
	if (ret)
		return run_failed(r, out, err);
	r->res.lines = r->lineno;
	if ((r->fs->trans_running || btrfs_dirty_bytes(r->fs, 0)) && !r->o.no_final_commit) {
		r->lineno++;
		r->cmd = "(final commit)";
		/* as unmount does: every dirty page written back, then the commit */
		if ((ret = btrfs_sync_data(r->fs)) || (ret = btrfs_commit_transaction(r->fs))) {
			fail_core(r, ret);
			return run_failed(r, out, err);
		}
		r->res.commits++;
	}
	r->ms += wallclock_ms_since(&t0);
	take_result(r, out);
	run_free(r);
	return 0;
}

void scenario_abort(struct scenario_run *r)
{
	run_free(r);
}

struct scenario_run *scenario_clone(const struct scenario_run *src, struct blab_err *err)
{
	struct scenario_run *r = calloc(1, sizeof(*r));
	if (!r || !(r->l = malloc(sizeof(*r->l)))) {
		free(r);
		blab_fail(err, BLAB_ENOMEM, "scenario checkpoint");
		return NULL;
	}
	struct line *l = r->l;
	*r = *src;
	r->l = l;
	r->owned_text = NULL; /* src's text stays with src's owner */
	r->fs = NULL;
	r->name = NULL;
	memset(&r->br, 0, sizeof(r->br));
	r->res.fsyncs = NULL;
	r->res.nfsyncs = r->res.capfsyncs = 0;
	r->tst = NULL;
	if (src->tst) {
		if (!(r->tst = malloc(sizeof(*r->tst))))
			goto nomem;
		memcpy(r->tst, src->tst, sizeof(*r->tst));
	}
	if (src->held) {
		/* read the held line again when the copy runs */
		r->held = 0;
		r->pos = src->held_pos;
		r->lineno = src->held_lineno - 1;
	}
	r->cmd = NULL;
	if (src->br.active) {
		r->br = src->br;
		r->br.pre = strdup(src->br.pre);
		r->br.post = strdup(src->br.post);
		if (!r->br.pre || !r->br.post)
			goto nomem;
		r->cmd = r->cmdbuf;
	}
	if (!(r->name = strdup(src->name)))
		goto nomem;
	if (src->res.nfsyncs) {
		if (!(r->res.fsyncs = malloc((size_t)src->res.nfsyncs * sizeof(*r->res.fsyncs))))
			goto nomem;
		memcpy(r->res.fsyncs, src->res.fsyncs, (size_t)src->res.nfsyncs * sizeof(*r->res.fsyncs));
		r->res.nfsyncs = r->res.capfsyncs = src->res.nfsyncs;
	}
	if (!(r->fs = btrfs_fs_clone(src->fs, err))) {
		run_free(r);
		return NULL;
	}
	return r;
nomem:
	run_free(r);
	blab_fail(err, BLAB_ENOMEM, "scenario checkpoint");
	return NULL;
}

int scenario_run(const char *text, size_t len, const char *name, const struct scenario_options *o, struct scenario_result *out,
		 struct blab_err *err)
{
	struct scenario_run *r;
	memset(out, 0, sizeof(*out));
	int ret = scenario_begin(text, len, name, o, 0, &r, err);
	if (ret)
		return ret;
	while ((ret = scenario_step(r)) > 0)
		;
	return scenario_end(r, out, err);
}

void scenario_result_free(struct scenario_result *r)
{
	free(r->fsyncs);
	r->fsyncs = NULL;
	r->nfsyncs = r->capfsyncs = 0;
	free(r->timed);
	r->timed = NULL;
}

struct tree_stats {
	u64 blocks, items;
};

static int count_block(struct btrfs_fs_info *fs, struct extent_buffer *eb, void *arg)
{
	(void)fs;
	struct tree_stats *st = arg;
	st->blocks++;
	if (btrfs_level(eb) == 0)
		st->items += btrfs_nritems(eb);
	return 0;
}

char *scenario_metrics_json(const struct scenario_result *r)
{
	struct btrfs_fs_info *fs = r->fs;
	struct strbuf out = {0};
	const unsigned long long *kinds = fs->trace.counts;
	sb_printf(&out, "{\"run_ms\":%.3f,\"mkfs_ms\":%.3f,\"lines\":%d,\"ops\":%d,\"commits\":%d,\"generation\":%" PRIu64 ",\"nodesize\":%u,\"bytes_used\":%" PRIu64
			",\"trees\":{",
		  r->run_ms, r->mkfs_ms, r->lines, r->ops, r->commits, fs->generation, fs->nodesize, btrfs_super_bytes_used(fs->super));
	for (size_t i = 0, n = 0; i < fs->nroots; i++) {
		const struct btrfs_root *t = fs->roots[i];
		if (!t->node)
			continue;
		struct tree_stats st = {0};
		btrfs_walk_tree(fs, t->node, t->objectid, WALK_PRE_ORDER, count_block, &st);
		sb_printf(&out, "%s\"%lld\":{\"level\":%d,\"blocks\":%" PRIu64 ",\"items\":%" PRIu64 "}", n++ ? "," : "",
			  (long long)t->objectid, btrfs_level(t->node), st.blocks, st.items);
	}
	sb_printf(&out, "},\"relocated\":{\"block_groups\":%" PRIu64 ",\"extents\":%" PRIu64 ",\"ms\":%.3f},\"qgroup_dirty_extents\":%" PRIu64 ",\"events\":{",
		  r->reloc_groups, r->reloc_extents, r->reloc_ms, btrfs_qgroup_dirty_total(fs));
	int firstk = 1;
	for (int k = 0; k < TRACE_KIND_COUNT; k++) {
		if (!kinds[k])
			continue;
		sb_printf(&out, "%s\"%s\":%llu", firstk ? "" : ",", trace_kind_name((enum trace_kind)k), kinds[k]);
		firstk = 0;
	}
	sb_printf(&out, "},\"space\":{\"globalRsv\":%" PRIu64 ",\"delallocMeta\":%" PRIu64, fs->space.global_rsv, fs->space.delalloc_meta);
	for (int k = 0; k < SPACE_KINDS; k++) {
		struct btrfs_space_info si;
		btrfs_space_info_get(fs, k, &si);
		sb_printf(&out, ",\"%s\":{\"total\":%" PRIu64 ",\"used\":%" PRIu64 ",\"reserved\":%" PRIu64 ",\"pinned\":%" PRIu64
				",\"mayUse\":%" PRIu64 ",\"readonly\":%" PRIu64 "}",
			  btrfs_space_kind_names[k], si.total, si.used, si.reserved, si.pinned, si.may_use, si.readonly);
	}
	if (r->failure.code) {
		sb_printf(&out, "},\"failed\":{\"code\":\"%s\",\"message\":", blab_errname(r->failure.code));
		sb_json_string(&out, r->failure.msg, strlen(r->failure.msg));
	}
	sb_printf(&out, "},\"crashed\":%s,\"dir_logging\":\"%s\",\"fsyncs\":[", r->crashed ? "true" : "false",
		  (const char *const[]){"index-only", "legacy", "5.10", "5.17"}[btrfs_dir_logging(fs) & 3]);
	static const char *const why[] = {"logged", "full commit: new chunk", "full commit: directory lost a name to a rename",
					  "full commit: file renamed or unlinked", "nothing to log",
					  "full commit: a new hard link", "full commit: a logged name was removed",
					  "full commit: not the top-level subvolume (the model logs it only)"};
	for (int i = 0; i < r->nfsyncs; i++) {
		const struct btrfs_log_stats *st = &r->fsyncs[i].st;
		sb_printf(&out, "%s{\"line\":%d,\"ms\":%.3f,\"ino\":%" PRIu64 ",\"result\":\"%s\",\"items\":{", i ? "," : "",
			  r->fsyncs[i].line, r->fsyncs[i].ms, st->ino, why[st->fallback]);
		int fi = 1;
		for (int t = 0; t < 256; t++) {
			if (!st->items[t])
				continue;
			char tb[32];
			sb_printf(&out, "%s\"%s\":%" PRIu64, fi ? "" : ",", btrfs_key_type_name((u8)t, tb, sizeof(tb)), st->items[t]);
			fi = 0;
		}
		sb_printf(&out, "},\"items_total\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"leaves\":%" PRIu64 ",\"nodes\":%" PRIu64
				",\"level\":%" PRIu64 ",\"blocks_written\":%" PRIu64 ",\"fs_leaves_read\":%" PRIu64
				",\"fs_leaves_cloned\":%" PRIu64 ",\"inodes_logged\":%" PRIu64 ",\"ranges\":%" PRIu64 ",\"bytes_shifted\":%" PRIu64
				",\"log_searches\":%" PRIu64 ",\"cost_us\":%.1f}",
			  st->items_total, st->bytes, st->leaves, st->nodes, st->level, st->blocks_written, st->fs_leaves_read,
			  st->fs_leaves_cloned, st->inodes_logged, st->ranges, st->shifted, st->log_searches, st->cost);
	}
	sb_printf(&out, "]");
	const struct btrfs_ordered_stats *os = btrfs_ordered_stats(fs);
	sb_printf(&out, ",\"ordered\":{\"added\":%" PRIu64 ",\"finished\":%" PRIu64 ",\"loggedInFlight\":%" PRIu64
			",\"fsyncsLoggingInFlight\":%" PRIu64 "},\"fsyncWait\":\"%s\"",
		  os->added, os->finished, os->logged_in_flight, os->fsyncs_logged_in_flight,
		  btrfs_fsync_wait_mode(fs) == BTRFS_FSYNC_WAIT_ORDERED ? "ordered" : "writeback");
	if (r->timed)
		timed_metrics_json(&out, &r->tcfg, r->timed);
	sb_printf(&out, "}");
	if (out.oom) {
		sb_free(&out);
		return NULL;
	}
	return out.s;
}
