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

struct runner {
	const char *name;
	int lineno;
	const char *cmd;
	struct blab_err *err;
	struct btrfs_fs_info *fs;
	struct scenario_result *res;
	int crashed;
	u64 max_ops, max_bytes, bytes; /* limits, and what `write` lines wrote so far */
};

static int fail(struct runner *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct runner *r, int code, const char *fmt, ...)
{
	char msg[BLAB_ERRMSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* "NAME:LINE: COMMAND: ENAME: what" (the name once, after the command) */
	snprintf(r->err->msg, sizeof(r->err->msg), "%s:%d: %s%s%s: %s", r->name, r->lineno, r->cmd ? r->cmd : "",
		 r->cmd ? ": " : "", blab_errname(code), msg);
	r->err->code = code;
	return code;
}

/* The core's own message (it starts with the error's name) for this line. */
static int fail_core(struct runner *r, int code)
{
	const char *m = r->fs->err.msg[0] ? r->fs->err.msg : blab_errname(code);
	snprintf(r->err->msg, sizeof(r->err->msg), "%s:%d: %s: %s", r->name, r->lineno, r->cmd, m);
	r->err->code = code;
	return code;
}

/* Splits one line into arguments: whitespace separates, "..." quotes (with
 * \" and \\), # starts a comment. */
static int tokenize(struct runner *r, const char *s, size_t n, struct line *l)
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
static int parse_num(struct runner *r, const char *what, const char *s, u64 *out)
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

static int want_args(struct runner *r, const struct line *l, int min, int max, const char *usage)
{
	if (l->argc - 1 < min || l->argc - 1 > max)
		return fail(r, BLAB_EPARSE, "expects %s", usage);
	return 0;
}

/* Counts one operation against the run's limit. */
static int count_op(struct runner *r)
{
	if ((u64)++r->res->ops > r->max_ops)
		return fail(r, BLAB_EINVAL, "the script does more than %llu operations, the limit of a run", (unsigned long long)r->max_ops);
	return 0;
}

/* Calls fn for each path of a brace range in the last component, or once. */
static int for_each_expansion(struct runner *r, const char *path, int (*fn)(struct runner *, const char *))
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
	size_t plen = (size_t)(open - path), slen = strlen(close + 1);
	char *p = malloc(plen + 24 + slen);
	if (!p)
		return fail(r, BLAB_ENOMEM, "out of memory");
	int ret = 0;
	/* counted from 0 so that a range ending at 2^64-1 cannot wrap */
	for (unsigned long long n = 0; n <= b - a && !ret; n++) {
		snprintf(p, plen + 24 + slen, "%.*s%llu%s", (int)plen, path, a + n, close + 1);
		ret = fn(r, p);
	}
	free(p);
	return ret;
}

static int do_create(struct runner *r, const char *path)
{
	struct inode_attrs a = {.mode = S_IFREG_ | 0644};
	u64 ino;
	int ret = count_op(r);
	if (ret)
		return ret;
	ret = btrfs_create(r->fs, r->fs->fs_root, path, &a, &ino);
	return ret ? fail_core(r, ret) : 0;
}

static int do_unlink(struct runner *r, const char *path)
{
	int ret = count_op(r);
	if (ret)
		return ret;
	ret = btrfs_unlink(r->fs, r->fs->fs_root, path);
	return ret ? fail_core(r, ret) : 0;
}

static int do_write(struct runner *r, const char *path, u64 off, u64 len, u64 seed)
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

static int run_line(struct runner *r, struct line *l, int first)
{
	struct btrfs_fs_info *fs = r->fs;
	const char *c = l->argv[0];
	u64 a, b, seed;
	int ret = 0;
	if (!strcmp(c, "mkfs"))
		return first ? 0 : fail(r, BLAB_EPARSE, "mkfs may only be the first command");
	fs_trace(fs, (struct trace_event){.kind = TRACE_OP, .slot = r->lineno});
	if (!fs->trans_running)
		btrfs_start_transaction(fs);
	if (!strcmp(c, "commit")) {
		if ((ret = want_args(r, l, 0, 0, "no arguments")))
			return ret;
		if ((ret = btrfs_commit_transaction(fs)))
			return fail_core(r, ret);
		r->res->commits++;
		return 0;
	}
	if (!strcmp(c, "crash")) {
		if ((ret = want_args(r, l, 0, 0, "no arguments")))
			return ret;
		r->crashed = 1;
		return 0;
	}
	if (!strcmp(c, "set")) {
		if ((ret = want_args(r, l, 1, 1, "set dir_logging=index-only|legacy")))
			return ret;
		if (!strcmp(l->argv[1], "dir_logging=index-only"))
			fs->dir_logging = BTRFS_DIR_LOGGING_INDEX_ONLY;
		else if (!strcmp(l->argv[1], "dir_logging=legacy"))
			fs->dir_logging = BTRFS_DIR_LOGGING_LEGACY;
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
		struct scenario_result *res = r->res;
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
		r->res->ops--;
		if (!(ret = want_args(r, l, 1, 1, "create PATH")))
			ret = for_each_expansion(r, l->argv[1], do_create);
	} else if (!strcmp(c, "unlink")) {
		r->res->ops--;
		if (!(ret = want_args(r, l, 1, 1, "unlink PATH")))
			ret = for_each_expansion(r, l->argv[1], do_unlink);
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

static int parse_mkfs_line(struct runner *r, const struct line *l, struct mkfs_options *mo, char *label, size_t lsize)
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

int scenario_run(const char *text, size_t len, const char *name, const struct scenario_options *o, struct scenario_result *out,
		 struct blab_err *err)
{
	struct runner r = {.name = name, .err = err, .res = out, .max_ops = o->max_ops ? o->max_ops : SCENARIO_MAX_OPS,
			   .max_bytes = o->max_bytes ? o->max_bytes : SCENARIO_MAX_BYTES};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct line *l = malloc(sizeof(*l));
	if (!l)
		return blab_fail(err, BLAB_ENOMEM, "scenario");
	memset(out, 0, sizeof(*out));
	struct mkfs_options mo;
	char label[BTRFS_LABEL_SIZE] = "";
	btrfs_mkfs_defaults(&mo);
	mo.seed = o->seed;
	mo.now = o->now;
	int ret = 0, first = 1;
	size_t pos = 0;
	while (pos < len && !ret) {
		size_t e = pos;
		while (e < len && text[e] != '\n')
			e++;
		r.lineno++;
		r.cmd = NULL;
		if (memchr(text + pos, 0, e - pos)) {
			ret = fail(&r, BLAB_EPARSE, "NUL byte in the script");
			break;
		}
		ret = tokenize(&r, text + pos, e - pos, l);
		pos = e + 1;
		if (ret || l->argc == 0)
			continue;
		r.cmd = l->argv[0];
		if (r.crashed) {
			ret = fail(&r, BLAB_EPARSE, "nothing can follow crash (the script ends there)");
			break;
		}
		if (!r.fs) {
			/* the filesystem is made before the first command (or by the mkfs line) */
			if (first && !strcmp(l->argv[0], "mkfs") && (ret = parse_mkfs_line(&r, l, &mo, label, sizeof(label))))
				break;
			struct blab_err me = {0};
			if ((ret = btrfs_mkfs(&mo, &r.fs, &me))) {
				snprintf(err->msg, sizeof(err->msg), "%s:%d: %s: %s", name, r.lineno, r.cmd, me.msg);
				err->code = ret;
				break;
			}
			r.fs->trace.enabled = o->trace || o->count_events;
			r.fs->trace.count_only = !o->trace;
		}
		ret = run_line(&r, l, first);
		first = 0;
	}
	out->lines = r.lineno;
	if (!ret && !r.fs) {
		struct blab_err me = {0};
		if ((ret = btrfs_mkfs(&mo, &r.fs, &me)))
			ret = blab_fail(err, ret, "%s: %s", name, me.msg);
		else {
			r.fs->trace.enabled = o->trace || o->count_events;
			r.fs->trace.count_only = !o->trace;
		}
	}
	if (!ret && r.crashed) {
		/* what is left is what the device holds: open it again */
		struct blab_device dev = r.fs->dev;
		struct blab_trace trace = r.fs->trace;
		memset(&r.fs->dev, 0, sizeof(r.fs->dev));
		memset(&r.fs->trace, 0, sizeof(r.fs->trace));
		btrfs_fs_free(r.fs);
		struct blab_err oe = {0};
		r.fs = btrfs_open(&dev, &oe);
		if (!r.fs) {
			trace_free(&trace);
			ret = blab_fail(err, oe.code ? oe.code : BLAB_EIO, "%s: after crash: %s", name, oe.msg);
		} else {
			trace_free(&r.fs->trace);
			r.fs->trace = trace;
			out->crashed = 1;
		}
	}
	if (!ret && r.fs->trans_running && !o->no_final_commit) {
		r.lineno++;
		r.cmd = "(final commit)";
		if ((ret = btrfs_commit_transaction(r.fs)))
			ret = fail_core(&r, ret);
		else
			out->commits++;
	}
	free(l);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->run_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (ret) {
		btrfs_fs_free(r.fs);
		out->fs = NULL;
		scenario_result_free(out);
		return ret;
	}
	out->fs = r.fs;
	return 0;
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
		  fs->dir_logging == BTRFS_DIR_LOGGING_LEGACY ? "legacy" : "index-only");
	static const char *const why[] = {"logged", "full commit: new chunk", "full commit: directory lost a name to a rename",
					  "full commit: file renamed or unlinked", "nothing to log"};
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
