#include "scenario.h"
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
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_ARGS 8
#define MAX_TOKEN 4200

u8 scenario_data_byte(u64 seed, u64 pos)
{
	u64 z = seed * 0x9E3779B97F4A7C15ULL + (pos >> 3) + 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	return (u8)(z >> ((pos & 7) * 8));
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

static int do_create(struct scenario_run *r, const char *path)
{
	struct inode_attrs a = {.mode = S_IFREG_ | 0644};
	u64 ino;
	int ret = count_op(r);
	if (ret)
		return ret;
	ret = btrfs_create(r->fs, r->fs->fs_root, path, &a, &ino);
	return ret ? fail_core(r, ret) : 0;
}

static int do_unlink(struct scenario_run *r, const char *path)
{
	int ret = count_op(r);
	if (ret)
		return ret;
	ret = btrfs_unlink(r->fs, r->fs->fs_root, path);
	return ret ? fail_core(r, ret) : 0;
}

static int do_write(struct scenario_run *r, const char *path, u64 off, u64 len, u64 seed)
{
	u64 ino;
	int ret = btrfs_lookup_path(r->fs, r->fs->fs_root, path, &ino);
	if (ret)
		return fail_core(r, ret);
	if (len > r->max_bytes - r->bytes)
		return fail(r, BLAB_EINVAL, "the script writes more than %llu bytes, the limit of a run", (unsigned long long)r->max_bytes);
	r->bytes += len;
	u8 *buf = malloc(len ? len : 1);
	if (!buf)
		return fail(r, BLAB_ENOMEM, "no memory for a %llu-byte write", (unsigned long long)len);
	for (u64 i = 0; i < len; i++)
		buf[i] = scenario_data_byte(seed, off + i);
	ret = btrfs_file_write(r->fs, r->fs->fs_root, ino, off, buf, len);
	free(buf);
	return ret ? fail_core(r, ret) : 0;
}

static int power_cut(struct scenario_run *r);

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
	if (!strcmp(c, "commit")) {
		if ((ret = want_args(r, l, 0, 0, "no arguments")))
			return ret;
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
		if ((ret = want_args(r, l, 1, 1, "set dir_logging=index-only|legacy")))
			return ret;
		if (!strcmp(l->argv[1], "dir_logging=index-only"))
			btrfs_set_dir_logging(fs, BTRFS_DIR_LOGGING_INDEX_ONLY);
		else if (!strcmp(l->argv[1], "dir_logging=legacy"))
			btrfs_set_dir_logging(fs, BTRFS_DIR_LOGGING_LEGACY);
		else
			return fail(r, BLAB_EPARSE, "'%s': settings are dir_logging=index-only or dir_logging=legacy", l->argv[1]);
		return 0;
	}
	if ((ret = count_op(r)))
		return ret;
	if (!strcmp(c, "fsync")) {
		u64 ino;
		if ((ret = want_args(r, l, 1, 1, "fsync PATH")))
			return ret;
		if ((ret = btrfs_lookup_path(fs, fs->fs_root, l->argv[1], &ino)))
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
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if ((ret = btrfs_sync_file(fs, fs->fs_root, ino, &f->st)))
			return fail_core(r, ret);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		f->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (f->st.fallback && f->st.fallback != BTRFS_LOG_NOTHING)
			res->commits++;
		return 0;
	}
	if (!strcmp(c, "mkdir")) {
		struct inode_attrs at = {.mode = S_IFDIR_ | 0755};
		u64 ino;
		if (!(ret = want_args(r, l, 1, 1, "mkdir PATH")) && (ret = btrfs_create(fs, fs->fs_root, l->argv[1], &at, &ino)))
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
		if (!(ret = want_args(r, l, 2, 2, "symlink TARGET PATH")) && (ret = btrfs_symlink(fs, fs->fs_root, l->argv[1], l->argv[2])))
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
		if ((ret = want_args(r, l, 2, 2, "truncate PATH SIZE")) || (ret = parse_num(r, "size", l->argv[2], &a)))
			return ret;
		if ((ret = btrfs_lookup_path(fs, fs->fs_root, l->argv[1], &ino)) || (ret = btrfs_file_truncate(fs, fs->fs_root, ino, a)))
			return fail_core(r, ret);
	} else if (!strcmp(c, "link")) {
		if (!(ret = want_args(r, l, 2, 2, "link EXISTING NEW")) && (ret = btrfs_link(fs, fs->fs_root, l->argv[1], l->argv[2])))
			return fail_core(r, ret);
	} else if (!strcmp(c, "rename")) {
		if (!(ret = want_args(r, l, 2, 2, "rename OLD NEW")) && (ret = btrfs_rename(fs, fs->fs_root, l->argv[1], l->argv[2])))
			return fail_core(r, ret);
	} else if (!strcmp(c, "rmdir")) {
		if (!(ret = want_args(r, l, 1, 1, "rmdir PATH")) && (ret = btrfs_rmdir(fs, fs->fs_root, l->argv[1])))
			return fail_core(r, ret);
	} else if (!strcmp(c, "setxattr")) {
		u64 ino;
		if ((ret = want_args(r, l, 3, 3, "setxattr PATH NAME VALUE")))
			return ret;
		size_t vl = strlen(l->argv[3]);
		if (vl > 65535)
			return fail(r, BLAB_EINVAL, "xattr value longer than 65535 bytes");
		if ((ret = btrfs_lookup_path(fs, fs->fs_root, l->argv[1], &ino)) ||
		    (ret = btrfs_setxattr(fs, fs->fs_root, ino, l->argv[2], (const u8 *)l->argv[3], (u16)vl)))
			return fail_core(r, ret);
	} else {
		return fail(r, BLAB_EPARSE, "unknown command (commands: mkfs mkdir create symlink write truncate link rename "
					    "unlink rmdir setxattr fsync commit crash set)");
	}
	return ret;
}

static int parse_mkfs_line(struct scenario_run *r, const struct line *l, struct mkfs_options *mo, char *label, size_t lsize)
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
		} else if (kl == 5 && !strncmp(l->argv[i], "label", kl)) {
			snprintf(label, lsize, "%s", eq + 1);
			mo->label = label;
		} else {
			return fail(r, BLAB_EPARSE, "unknown mkfs option '%.*s' (nodesize, sectorsize, size, label)", (int)kl, l->argv[i]);
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

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void run_free(struct scenario_run *r)
{
	if (!r)
		return;
	btrfs_fs_free(r->fs);
	scenario_result_free(&r->res);
	brace_clear(&r->br);
	free(r->l);
	free(r->owned_text);
	free(r->name);
	free(r);
}

/* The error of r in err, r freed: `return run_failed(r, err)`. */
static int run_failed(struct scenario_run *r, struct blab_err *err)
{
	int code = r->err.code ? r->err.code : BLAB_EINVAL;
	if (err) {
		*err = r->err;
		err->code = code;
	}
	run_free(r);
	return code;
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
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
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
	r->max_ops = o->max_ops ? o->max_ops : SCENARIO_MAX_OPS;
	r->max_bytes = o->max_bytes ? o->max_bytes : SCENARIO_MAX_BYTES;
	struct mkfs_options mo;
	char label[BTRFS_LABEL_SIZE] = "";
	btrfs_mkfs_defaults(&mo);
	mo.seed = o->seed;
	mo.now = o->now;
	/* the filesystem is made before the first command, by the mkfs line if it is one */
	int ret = read_line(r);
	if (!ret && r->held && !strcmp(r->l->argv[0], "mkfs")) {
		if ((ret = parse_mkfs_line(r, r->l, &mo, label, sizeof(label))))
			return run_failed(r, err);
		r->held = 0;
	}
	if (ret)
		return run_failed(r, err);
	struct blab_err me = {0};
	if ((ret = btrfs_mkfs(&mo, &r->fs, &me))) {
		if (r->cmd)
			snprintf(r->err.msg, sizeof(r->err.msg), "%s:%d: %s: %s", r->name, r->lineno, r->cmd, me.msg);
		else
			snprintf(r->err.msg, sizeof(r->err.msg), "%s: %s", r->name, me.msg);
		r->err.code = ret;
		return run_failed(r, err);
	}
	r->fs->trace.enabled = o->trace || o->count_events;
	r->fs->trace.count_only = !o->trace;
	r->ms += ms_since(&r->t0);
	*out = r;
	return 0;
}

int scenario_step(struct scenario_run *r)
{
	if (r->failed)
		return r->failed;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int ret;
	if (r->br.active) {
		ret = brace_next(r);
	} else if ((ret = read_line(r)) || !r->held) {
		r->ms += ms_since(&t0);
		return r->failed = ret;
	} else if (r->crashed) {
		ret = fail(r, BLAB_EPARSE, "nothing can follow crash (the script ends there)");
	} else {
		r->held = 0;
		ret = run_line(r, r->l);
	}
	r->ms += ms_since(&t0);
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
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int ret = r->failed;
	/* a step may not have read the rest yet (comments, blank lines) */
	while (!ret && (ret = scenario_step(r)) > 0)
		;
	if (ret)
		return run_failed(r, err);
	r->res.lines = r->lineno;
	if (r->fs->trans_running && !r->o.no_final_commit) {
		r->lineno++;
		r->cmd = "(final commit)";
		if ((ret = btrfs_commit_transaction(r->fs))) {
			fail_core(r, ret);
			return run_failed(r, err);
		}
		r->res.commits++;
	}
	r->ms += ms_since(&t0);
	*out = r->res;
	out->run_ms = r->ms;
	out->fs = r->fs;
	r->fs = NULL;
	memset(&r->res, 0, sizeof(r->res));
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
	sb_printf(&out, "{\"run_ms\":%.3f,\"lines\":%d,\"ops\":%d,\"commits\":%d,\"generation\":%" PRIu64 ",\"nodesize\":%u,\"bytes_used\":%" PRIu64
			",\"trees\":{",
		  r->run_ms, r->lines, r->ops, r->commits, fs->generation, fs->nodesize, btrfs_super_bytes_used(fs->super));
	struct btrfs_root *list[BLAB_MAX_ROOTS];
	size_t n = 0;
	for (size_t i = 0; i < fs->nroots; i++)
		if (fs->roots[i]->node)
			list[n++] = fs->roots[i];
	for (size_t i = 0; i < n; i++) {
		struct tree_stats st = {0};
		btrfs_walk_tree(fs, list[i]->node, list[i]->objectid, WALK_PRE_ORDER, count_block, &st);
		sb_printf(&out, "%s\"%lld\":{\"level\":%d,\"blocks\":%" PRIu64 ",\"items\":%" PRIu64 "}", i ? "," : "",
			  (long long)list[i]->objectid, btrfs_level(list[i]->node), st.blocks, st.items);
	}
	sb_printf(&out, "},\"events\":{");
	int firstk = 1;
	for (int k = 0; k < TRACE_KIND_COUNT; k++) {
		if (!kinds[k])
			continue;
		sb_printf(&out, "%s\"%s\":%llu", firstk ? "" : ",", trace_kind_name((enum trace_kind)k), kinds[k]);
		firstk = 0;
	}
	sb_printf(&out, "},\"crashed\":%s,\"dir_logging\":\"%s\",\"fsyncs\":[", r->crashed ? "true" : "false",
		  btrfs_dir_logging(fs) == BTRFS_DIR_LOGGING_LEGACY ? "legacy" : "index-only");
	static const char *const why[] = {"logged", "full commit: new chunk", "full commit: directory lost a name to a rename",
					  "full commit: file renamed or unlinked", "nothing to log",
					  "full commit: a new hard link", "full commit: a logged name was removed"};
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
				",\"inodes_logged\":%" PRIu64 ",\"ranges\":%" PRIu64 ",\"bytes_shifted\":%" PRIu64
				",\"log_searches\":%" PRIu64 ",\"cost_us\":%.1f}",
			  st->items_total, st->bytes, st->leaves, st->nodes, st->level, st->blocks_written, st->fs_leaves_read,
			  st->inodes_logged, st->ranges, st->shifted, st->log_searches, st->cost);
	}
	sb_printf(&out, "]}");
	if (out.oom) {
		sb_free(&out);
		return NULL;
	}
	return out.s;
}
