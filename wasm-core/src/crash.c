/* crash.c — every crash point of a scenario, tried (crash.h). */
#include "crash.h"
#include "wallclock.h"
#include "check.h"
#include "crc32c.h"
#include "disk-io.h"
#include "file.h"
#include "inode.h"
#include "print-tree.h"
#include "tree-log.h"
#include "tasks.h"
#include "delalloc.h"
#include "array.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What an fsync that returned promised. */
struct promise {
	int line;
	char *path;
	u64 ino;
	int is_dir;
	u64 size; /* file: its size */
	u32 crc;  /* file: crc32c of its contents */
	char *names; /* directory: its names, sorted, each followed by '\n' */
	size_t names_len;
	int by_ino;  /* a thread's fsync: checked by inode number; later appends may have grown it */
	int task;    /* by_ino: the thread whose fsync made it */
};

struct walk {
	const struct crash_walk_options *wo;
	struct crash_report *rep;
	int line;                /* the line running */
	struct promise *ps;      /* in force now */
	size_t nps, cap;
	char **renamed;          /* rename targets since the last commit */
	size_t nrenamed, caprenamed;
	u64 points;              /* crash points seen so far */
	const u8 *chosen;        /* sampled: 1 for each point to try (NULL: all) */
	u64 nchosen;
	int counting;            /* the first pass of a sample: count only */
	int failed;              /* an error stopped the walk (err holds it) */
	struct blab_err err;
	/* threads: what each fsync running saw when it started (promised when it returns) */
	struct promise *pending;
	size_t npending, cappending;
};

static void promise_free(struct promise *p)
{
	free(p->path);
	free(p->names);
}

static int below(const char *n, const char *p)
{
	size_t lp = strlen(p);
	if (lp == 1 && p[0] == '/')
		return !(n[0] == '/' && n[1] == 0);
	return !strncmp(n, p, lp) && n[lp] == '/';
}

/* Whether a line naming n (which may hold a brace range) touches path p. */
static int touches(const char *n, const char *p)
{
	const char *brace = strchr(n, '{');
	if (brace) {
		size_t pre = (size_t)(brace - n);
		/* any name of the range: p starts with the part before the braces, or lies above it */
		if (!strncmp(p, n, pre))
			return 1;
		size_t lp = strlen(p);
		return (lp == 1 && p[0] == '/') || (lp < pre && !strncmp(n, p, lp) && n[lp] == '/');
	}
	return !strcmp(n, p) || below(n, p) || below(p, n);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct names {
	char **v;
	size_t n, cap;
	int oom;
};

static int collect_name(void *ctx, const char *name, u16 len, u64 ino, u8 type)
{
	(void)ino;
	(void)type;
	struct names *ns = ctx;
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 16;
		char **v = realloc(ns->v, cap * sizeof(*v));
		if (!v)
			return ns->oom = 1;
		ns->v = v;
		ns->cap = cap;
	}
	char *s = malloc((size_t)len + 1);
	if (!s)
		return ns->oom = 1;
	memcpy(s, name, len);
	s[len] = 0;
	ns->v[ns->n++] = s;
	return 0;
}

/* A directory's names, sorted, each followed by '\n', in *out (malloc'd). */
static int dir_names(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, char **out, size_t *len)
{
	struct names ns = {0};
	int ret = btrfs_readdir(fs, root, dir, collect_name, &ns);
	if (ns.oom)
		ret = BLAB_ENOMEM;
	size_t total = 0;
	if (!ret) {
		qsort(ns.v, ns.n, sizeof(*ns.v), cmp_str);
		for (size_t i = 0; i < ns.n; i++)
			total += strlen(ns.v[i]) + 1;
		if (!(*out = malloc(total + 1)))
			ret = BLAB_ENOMEM;
	}
	if (!ret) {
		size_t at = 0;
		for (size_t i = 0; i < ns.n; i++) {
			size_t l = strlen(ns.v[i]);
			memcpy(*out + at, ns.v[i], l);
			(*out)[at + l] = '\n';
			at += l + 1;
		}
		(*out)[at] = 0;
		*len = total;
	}
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(ns.v);
	return ret;
}

/* crc32c of a file's contents (symlinks: their target), checksums verified for regular files. */
static int file_crc(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 size, int verify, u32 *crc)
{
	static u8 buf[1 << 16];
	u32 c = ~0u;
	for (u64 off = 0; off < size;) {
		u64 want = size - off < sizeof(buf) ? size - off : sizeof(buf), got = 0;
		int ret = verify ? btrfs_file_read(fs, root, ino, off, buf, want, &got, 1)
				 : btrfs_file_read_any(fs, root, ino, off, buf, want, &got);
		if (ret)
			return ret;
		if (got != want) /* clipped: the inode's size and its extents disagree */
			return BLAB_ECORRUPT;
		c = crc32c_raw(c, buf, (size_t)got);
		off += got;
	}
	*crc = ~c;
	return 0;
}

/* What path holds in fs now, as a promise (made at line). 1: nothing to promise (no such path, or a special file). */
static int promise_of(struct btrfs_fs_info *fs, const char *path, int line, struct promise *p)
{
	memset(p, 0, sizeof(*p));
	struct btrfs_inode in;
	struct btrfs_root *root;
	int ret = btrfs_lookup_path_subvol(fs, path, &root, &p->ino);
	if (ret == BLAB_ENOENT || ret == BLAB_ENOTDIR || ret == BLAB_EISDIR)
		return 1;
	if (ret || (ret = btrfs_read_inode(fs, root, p->ino, &in)))
		return ret;
	p->line = line;
	u32 type = in.mode & S_IFMT_;
	if (type == S_IFDIR_) {
		p->is_dir = 1;
		ret = dir_names(fs, root, p->ino, &p->names, &p->names_len);
	} else if (type == S_IFREG_ || type == S_IFLNK_) {
		p->size = in.size;
		ret = file_crc(fs, root, p->ino, in.size, type == S_IFREG_, &p->crc);
	} else {
		return 1;
	}
	if (!ret && !(p->path = strdup(path)))
		ret = BLAB_ENOMEM;
	if (ret)
		promise_free(p);
	return ret;
}

static int add_promise(struct walk *w, struct promise *p)
{
	if (w->nps == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;
		struct promise *n = realloc(w->ps, cap * sizeof(*n));
		if (!n)
			return BLAB_ENOMEM;
		w->ps = n;
		w->cap = cap;
	}
	w->ps[w->nps++] = *p;
	w->rep->promises++;
	return 0;
}

static int add_renamed(struct walk *w, const char *to)
{
	if (w->nrenamed == w->caprenamed) {
		size_t cap = w->caprenamed ? w->caprenamed * 2 : 8;
		char **n = realloc(w->renamed, cap * sizeof(*n));
		if (!n)
			return BLAB_ENOMEM;
		w->renamed = n;
		w->caprenamed = cap;
	}
	if (!(w->renamed[w->nrenamed] = strdup(to)))
		return BLAB_ENOMEM;
	w->nrenamed++;
	return 0;
}

static void clear_renamed(struct walk *w)
{
	for (size_t i = 0; i < w->nrenamed; i++)
		free(w->renamed[i]);
	w->nrenamed = 0;
}

/* The walk's own reads of the live filesystem emit no events: the run's
 * seqs stay those of the same run traced (a session's). */
static int quiet(struct btrfs_fs_info *fs)
{
	int was = fs->trace.enabled;
	fs->trace.enabled = 0;
	return was;
}

static const char *const CHANGES_NODE[] = {"write", "truncate", "setxattr", "unlink", "link", "rename"};

/* Before a line runs: the promises it may break are dropped (from now on, a
 * crash may show either state), and a commit forgets the renames. */
static int before_line(struct walk *w, struct btrfs_fs_info *fs, const char *const *argv, int argc)
{
	const char *cmd = argv[0];
	if (!strcmp(cmd, "commit")) {
		clear_renamed(w);
		return 0;
	}
	u64 node = 0;
	int was = quiet(fs);
	for (size_t i = 0; i < sizeof(CHANGES_NODE) / sizeof(*CHANGES_NODE); i++) {
		if (!strcmp(cmd, CHANGES_NODE[i]) && argc > 1 && btrfs_lookup_path(fs, fs->fs_root, argv[1], &node))
			node = 0;
	}
	fs->trace.enabled = was;
	if (strcmp(cmd, "fsync")) {
		size_t keep = 0;
		for (size_t i = 0; i < w->nps; i++) {
			struct promise *p = &w->ps[i];
			int hit = node && node == p->ino;
			for (int a = 1; a < argc && !hit && p->path; a++)
				hit = argv[a][0] == '/' && touches(argv[a], p->path);
			if (hit)
				promise_free(p);
			else
				w->ps[keep++] = *p;
		}
		w->nps = keep;
	}
	if (!strcmp(cmd, "rename") && argc > 2)
		return add_renamed(w, argv[2]);
	return 0;
}

/* After an fsync of path returned (the line done). */
static int after_fsync(struct walk *w, struct btrfs_fs_info *fs, const char *path, int line)
{
	for (size_t i = 0; i < w->nrenamed; i++) {
		if (below(path, w->renamed[i]))
			return 0; /* a directory above it may come back under its old name */
	}
	struct promise p;
	int was = quiet(fs);
	int ret = promise_of(fs, path, line, &p);
	fs->trace.enabled = was;
	if (ret == 1)
		return 0;
	return ret ? ret : add_promise(w, &p);
}

static int add_broken(struct walk *w, const struct crash_point *at, const struct promise *p, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int add_broken(struct walk *w, const struct crash_point *at, const struct promise *p, const char *fmt, ...)
{
	struct crash_report *r = w->rep;
	struct crash_broken *n = realloc(r->broken, (r->nbroken + 1) * sizeof(*n));
	if (!n)
		return BLAB_ENOMEM;
	r->broken = n;
	struct crash_broken *b = &n[r->nbroken++];
	memset(b, 0, sizeof(*b));
	b->at = *at;
	if (p) {
		b->promise_line = p->line;
		snprintf(b->path, sizeof(b->path), "%s", p->path);
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->what, sizeof(b->what), fmt, ap);
	va_end(ap);
	return 1;
}

/* The first name in a but not in b (newline-separated, both sorted as
 * strcmp sorts), into out: one merge walk over both, linear in their length
 * (a search of b for every name of a made each crash point's check of a
 * directory of n names cost n^2). */
static int first_missing(const char *a, const char *b, char *out, size_t n)
{
	while (*a) {
		const char *e = strchr(a, '\n');
		size_t l = (size_t)(e - a);
		int c = 1;
		while (*b) {
			const char *se = strchr(b, '\n');
			size_t bl = (size_t)(se - b), m = l < bl ? l : bl;
			if (!(c = memcmp(b, a, m)))
				c = (bl > l) - (bl < l);
			if (c >= 0)
				break; /* b's name is a's, or sorts after it */
			b = se + 1;
		}
		if (c) {
			snprintf(out, n, "%.*s", (int)(l < 200 ? l : 200), a);
			return 1;
		}
		a = e + 1;
	}
	return 0;
}

/* Checks promise p on the replayed state fs; 0 kept, 1 broken (recorded), or an error. add_broken returns 1 or BLAB_ENOMEM. */
static int check_by_ino(struct walk *w, const struct crash_point *at, struct btrfs_fs_info *fs, const struct promise *p)
{
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, fs->fs_root, p->ino, &in);
	if (ret)
		return add_broken(w, at, p, "inode %llu, fsynced by a thread at line %d, is gone", (unsigned long long)p->ino, p->line);
	if (in.size < p->size)
		return add_broken(w, at, p, "inode %llu, fsynced by a thread at line %d with %llu bytes, has %llu",
				  (unsigned long long)p->ino, p->line, (unsigned long long)p->size, (unsigned long long)in.size);
	u32 crc;
	if ((ret = file_crc(fs, fs->fs_root, p->ino, p->size, 1, &crc)))
		return add_broken(w, at, p, "inode %llu, fsynced by a thread at line %d: its data cannot be read: %s",
				  (unsigned long long)p->ino, p->line, fs->err.msg);
	if (crc != p->crc)
		return add_broken(w, at, p, "inode %llu, fsynced by a thread at line %d: its first %llu bytes differ", (unsigned long long)p->ino,
				  p->line, (unsigned long long)p->size);
	return 0;
}

static int check_promise(struct walk *w, const struct crash_point *at, struct btrfs_fs_info *fs, const struct promise *p)
{
	if (p->by_ino)
		return check_by_ino(w, at, fs, p);
	u64 ino;
	struct btrfs_root *root;
	int ret = btrfs_lookup_path_subvol(fs, p->path, &root, &ino);
	if (ret == BLAB_ENOENT || ret == BLAB_ENOTDIR)
		return add_broken(w, at, p, "%s, fsynced at line %d and left alone since, is gone", p->path, p->line);
	if (ret)
		return add_broken(w, at, p, "%s: cannot be looked up: %s", p->path, fs->err.msg);
	struct btrfs_inode in;
	if ((ret = btrfs_read_inode(fs, root, ino, &in)))
		return add_broken(w, at, p, "%s: its inode cannot be read: %s", p->path, fs->err.msg);
	int is_dir = (in.mode & S_IFMT_) == S_IFDIR_;
	if (is_dir != p->is_dir)
		return add_broken(w, at, p, "%s was a %s at its fsync (line %d), is a %s", p->path, p->is_dir ? "directory" : "file",
				  p->line, is_dir ? "directory" : "file");
	if (is_dir) {
		char *names = NULL, miss[256];
		size_t len;
		if ((ret = dir_names(fs, root, ino, &names, &len)))
			return add_broken(w, at, p, "%s: its names cannot be read: %s", p->path, fs->err.msg);
		int bad = 0;
		if (first_missing(p->names, names, miss, sizeof(miss)))
			bad = add_broken(w, at, p, "directory %s, fsynced at line %d, lost the name '%s'", p->path, p->line, miss);
		else if (first_missing(names, p->names, miss, sizeof(miss)))
			bad = add_broken(w, at, p, "directory %s, fsynced at line %d, holds the name '%s' it did not hold then",
					 p->path, p->line, miss);
		free(names);
		return bad;
	}
	if (in.size != p->size)
		return add_broken(w, at, p, "%s, fsynced at line %d with %llu bytes, has %llu", p->path, p->line,
				  (unsigned long long)p->size, (unsigned long long)in.size);
	u32 crc;
	if ((ret = file_crc(fs, root, ino, in.size, (in.mode & S_IFMT_) == S_IFREG_, &crc)))
		return add_broken(w, at, p, "%s, fsynced at line %d: its data cannot be read: %s", p->path, p->line, fs->err.msg);
	if (crc != p->crc)
		return add_broken(w, at, p, "%s, fsynced at line %d: its contents differ (crc32c %08x, was %08x)", p->path, p->line,
				  crc, p->crc);
	return 0;
}

static void promises_json(const struct walk *w, struct strbuf *out)
{
	sb_printf(out, "[");
	for (size_t i = 0; i < w->nps; i++) {
		const struct promise *p = &w->ps[i];
		sb_printf(out, "%s{\"line\":%d,\"path\":", i ? "," : "", p->line);
		sb_json_string(out, p->path, strlen(p->path));
		if (p->is_dir) {
			sb_printf(out, ",\"type\":\"dir\",\"names\":[");
			int first = 1;
			for (const char *a = p->names; *a;) {
				const char *e = strchr(a, '\n');
				sb_printf(out, "%s", first ? "" : ",");
				sb_json_string(out, a, (size_t)(e - a));
				first = 0;
				a = e + 1;
			}
			sb_printf(out, "]}");
		} else {
			sb_printf(out, ",\"type\":\"file\",\"size\":%llu,\"crc32c\":%u%s}", (unsigned long long)p->size, p->crc,
				  p->by_ino ? ",\"prefix\":true" : "");
		}
	}
	sb_printf(out, "]");
}

/* A crash here: the device as it is, opened, replayed, its promises checked. */
static int try_point(struct walk *w, struct btrfs_fs_info *fs, const struct crash_point *at)
{
	struct blab_device dev;
	int ret = device_clone(&fs->dev, &dev);
	if (ret)
		return blab_fail(&w->err, ret, "a copy of the device at crash point %llu", (unsigned long long)at->index);
	if (w->wo && w->wo->on_point) {
		struct blab_device mine;
		struct strbuf js = {0};
		if ((ret = device_clone(&dev, &mine))) {
			device_free(&dev);
			return blab_fail(&w->err, ret, "a copy of the device at crash point %llu", (unsigned long long)at->index);
		}
		promises_json(w, &js);
		struct blab_err pe = {0};
		ret = js.oom ? blab_fail(&w->err, BLAB_ENOMEM, "crash points") : w->wo->on_point(w->wo->ctx, at, &mine, js.s, &pe);
		sb_free(&js);
		if (ret > 0)
			ret = add_broken(w, at, NULL, "%s", pe.msg) < 0 ? BLAB_ENOMEM : 0;
		else if (ret < 0)
			w->err = pe;
		if (ret) {
			device_free(&dev);
			return ret;
		}
	}
	if (w->wo && w->wo->tamper && (ret = w->wo->tamper(w->wo->ctx, at, &dev))) {
		device_free(&dev);
		return blab_fail(&w->err, ret, "crash point %llu: tampering failed", (unsigned long long)at->index);
	}
	struct blab_err oe = {0};
	struct btrfs_fs_info *after = btrfs_open(&dev, &oe);
	if (!after)
		return add_broken(w, at, NULL, "the image does not open: %s", oe.msg) < 0 ? BLAB_ENOMEM : 0;
	ret = btrfs_replay_log(after, NULL);
	if (ret) {
		ret = add_broken(w, at, NULL, "its log does not replay: %s", after->err.msg);
		btrfs_fs_free(after);
		return ret < 0 ? ret : 0;
	}
	for (size_t i = 0; i < w->nps && ret >= 0; i++)
		ret = check_promise(w, at, after, &w->ps[i]);
	if (ret >= 0 && !(w->wo && w->wo->no_check)) {
		struct strbuf out = {0};
		int n = btrfs_check_fs(after, &out, 0);
		if (n > 0) {
			const char *s = out.s ? out.s : "";
			const char *e = strchr(s, '\n');
			ret = add_broken(w, at, NULL, "check finds %d problem%s after replay, first: %.*s", n, n == 1 ? "" : "s",
					 (int)(e ? e - s : (ptrdiff_t)strlen(s)), s);
		}
		sb_free(&out);
	}
	btrfs_fs_free(after);
	return ret < 0 ? ret : 0;
}

/* Drops the promises (and pending ones) of ino a thread's command may break:
 * from byte off on (a write), or all of it (off 0: a namespace command, or ino 0: any). */
static void drop_ino(struct walk *w, u64 ino, u64 off)
{
	struct promise *lists[2] = {w->ps, w->pending};
	size_t *ns[2] = {&w->nps, &w->npending};
	for (int l = 0; l < 2; l++) {
		size_t keep = 0;
		for (size_t i = 0; i < *ns[l]; i++) {
			struct promise *p = &lists[l][i];
			int hit = !ino || (p->by_ino ? p->ino == ino && off < p->size : p->ino == ino);
			if (!ino && !p->by_ino && l == 0)
				hit = 1;
			if (hit)
				promise_free(p);
			else
				lists[l][keep++] = *p;
		}
		*ns[l] = keep;
	}
}

/* A path of inode ino (its first name, up to the top directory), malloc'd, or NULL. */
static char *path_of_ino(struct btrfs_fs_info *fs, u64 ino)
{
	char buf[4096];
	size_t at = sizeof(buf) - 1;
	buf[at] = 0;
	for (int depth = 0; ino != BTRFS_FIRST_FREE_OBJECTID && depth < 256; depth++) {
		struct btrfs_item_cursor cur;
		struct btrfs_key from = {ino, BTRFS_INODE_REF_KEY, 0};
		if (btrfs_cursor_first(fs, fs->fs_root, &from, &cur) || cur.key.objectid != ino ||
		    cur.key.type != BTRFS_INODE_REF_KEY || cur.size < BTRFS_INODE_REF_SIZE)
			return NULL;
		u16 nl = get_le16(cur.data + 8);
		if ((u32)nl + BTRFS_INODE_REF_SIZE > cur.size || (size_t)nl + 1 > at)
			return NULL;
		at -= nl;
		memcpy(buf + at, cur.data + BTRFS_INODE_REF_SIZE, nl);
		buf[--at] = '/';
		ino = cur.key.offset;
	}
	return ino == BTRFS_FIRST_FREE_OBJECTID ? strdup(buf + at) : NULL;
}

/* A thread's command starts or returns: promises of timed sections. */
static int thread_event(struct walk *w, struct btrfs_fs_info *fs, const struct trace_event *e)
{
	int op = e->level;
	u64 ino = e->bytenr;
	if (e->kind == TRACE_TASK_OP) {
		if (op == TOP_WRITE)
			drop_ino(w, ino, e->c);
		else if (op == TOP_META)
			drop_ino(w, 0, 0); /* a namespace command: which names it moves is not in the event */
		if (op != TOP_FSYNC)
			return 0;
		/* what the file holds as its fsync starts is what it promises when it returns */
		struct promise p = {.line = (int)e->a, .ino = ino, .by_ino = 1, .task = e->slot};
		struct btrfs_inode in;
		int was = quiet(fs);
		int ret = btrfs_read_inode(fs, fs->fs_root, ino, &in);
		if (!ret && (in.mode & S_IFMT_) == S_IFREG_) {
			p.size = btrfs_inode_isize(fs, ino, in.size);
			ret = file_crc(fs, fs->fs_root, ino, p.size, 0, &p.crc);
			if (!ret && !(p.path = path_of_ino(fs, ino)))
				ret = 1; /* a file with no name left: nothing to promise */
		} else if (!ret) {
			ret = 1;
		}
		fs->trace.enabled = was;
		if (ret)
			return ret == 1 ? 0 : ret;
		if (array_room(&w->pending, w->npending, &w->cappending, sizeof(*w->pending), 8))
			return BLAB_ENOMEM;
		w->pending[w->npending++] = p;
		return 0;
	}
	if (op != TOP_FSYNC)
		return 0;
	for (size_t i = 0; i < w->npending; i++) {
		if (w->pending[i].task != e->slot)
			continue;
		struct promise p = w->pending[i];
		memmove(&w->pending[i], &w->pending[i + 1], (w->npending - i - 1) * sizeof(p));
		w->npending--;
		/* it replaces what an earlier fsync of the file promised */
		size_t keep = 0;
		for (size_t j = 0; j < w->nps; j++) {
			if (w->ps[j].by_ino && w->ps[j].ino == p.ino)
				promise_free(&w->ps[j]);
			else
				w->ps[keep++] = w->ps[j];
		}
		w->nps = keep;
		return add_promise(w, &p);
	}
	return 0;
}

static void on_event(void *ctx, struct blab_trace *t, const struct trace_event *e)
{
	struct walk *w = ctx;
	if (!w->failed && !w->counting && (e->kind == TRACE_TASK_OP || e->kind == TRACE_TASK_OP_END)) {
		struct btrfs_fs_info *tfs = (struct btrfs_fs_info *)((char *)t - offsetof(struct btrfs_fs_info, trace));
		int ret = thread_event(w, tfs, e);
		if (ret) {
			w->failed = ret;
			if (!w->err.code)
				blab_fail(&w->err, ret, "line %d: a thread's fsync: what it promised cannot be read back", w->line);
		}
		return;
	}
	if (w->failed || (e->kind != TRACE_BLOCK_WRITE && e->kind != TRACE_SUPER_WRITE))
		return;
	u64 index = w->points++;
	if (w->counting)
		return;
	if (e->kind == TRACE_BLOCK_WRITE)
		w->rep->blocks++;
	else
		w->rep->supers++;
	if (w->chosen && (index >= w->nchosen || !w->chosen[index]))
		return;
	struct btrfs_fs_info *fs = (struct btrfs_fs_info *)((char *)t - offsetof(struct btrfs_fs_info, trace));
	struct crash_point p = {.index = index, .seq = e->seq, .line = w->line, .kind = e->kind, .promises = (int)w->nps};
	if (e->kind == TRACE_BLOCK_WRITE) {
		p.tree = e->tree;
		p.bytenr = e->bytenr;
		p.level = e->level;
		p.generation = e->b;
	} else {
		p.bytenr = e->bytenr;
		p.generation = e->a;
		p.mirror = (int)e->b;
	}
	w->rep->tried++;
	int ret = try_point(w, fs, &p);
	if (ret) {
		w->failed = ret;
		if (!w->err.code)
			blab_fail(&w->err, ret, "crash point %llu: out of memory", (unsigned long long)index);
	}
}

/* One run of the script with the walk's hook: 0 or an error in err. */
static int walk_run(struct walk *w, const char *text, size_t len, const char *name, const struct scenario_options *o,
		    struct blab_err *err)
{
	struct scenario_options ro = *o;
	ro.trace = 0;
	ro.count_events = 1; /* events get their seqs (as a traced run's) and reach the hook; none are kept */
	ro.no_final_commit = 0;
	struct scenario_run *r;
	int ret = scenario_begin(text, len, name, &ro, 0, &r, err);
	if (ret)
		return ret;
	for (;;) {
		int line = scenario_next_line(r);
		if (!line)
			break;
		const char *const *argv;
		int argc = scenario_next_words(r, &argv);
		struct btrfs_fs_info *fs = scenario_fs(r);
		fs->trace.hook = on_event;
		fs->trace.hook_ctx = w;
		char fsync_path[4096] = "";
		if (argc > 0) {
			w->line = line;
			if (!w->counting && (ret = before_line(w, fs, argv, argc))) {
				scenario_abort(r);
				return blab_fail(err, ret, "%s:%d: crash points: out of memory", name, line);
			}
			if (!strcmp(argv[0], "fsync") && argc == 2)
				snprintf(fsync_path, sizeof(fsync_path), "%s", argv[1]);
		}
		ret = scenario_step(r);
		if (w->failed) {
			scenario_abort(r);
			*err = w->err;
			return w->failed;
		}
		if (ret <= 0)
			break; /* the end, or the script's error (scenario_end reports it) */
		if (fsync_path[0] && !w->counting && (ret = after_fsync(w, scenario_fs(r), fsync_path, line))) {
			scenario_abort(r);
			return blab_fail(err, ret, "%s:%d: fsync %s: what it promised cannot be read back: %s", name, line, fsync_path,
					 scenario_fs(r)->err.msg);
		}
	}
	w->line = w->rep->lines + 1; /* the final commit's writes */
	struct btrfs_fs_info *fs = scenario_fs(r);
	fs->trace.hook = on_event;
	fs->trace.hook_ctx = w;
	struct scenario_result res;
	ret = scenario_end(r, &res, err);
	if (w->failed) {
		if (!ret) {
			btrfs_fs_free(res.fs);
			scenario_result_free(&res);
		}
		*err = w->err;
		return w->failed;
	}
	if (ret)
		return ret;
	w->rep->lines = res.lines;
	btrfs_fs_free(res.fs);
	scenario_result_free(&res);
	return 0;
}

/* Lines of a script (for the final commit's line number before the run ends). */
static int count_lines(const char *text, size_t len)
{
	int n = 0;
	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n + (len && text[len - 1] != '\n');
}

int crash_walk(const char *text, size_t len, const char *name, const struct scenario_options *o,
	       const struct crash_walk_options *wo, struct crash_report *out, struct blab_err *err)
{
	memset(out, 0, sizeof(*out));
	struct timespec t0 = wallclock_now();
	struct walk w = {.wo = wo, .rep = out};
	out->lines = count_lines(text, len);
	u8 *chosen = NULL;
	int ret = 0;
	if (wo && wo->sample) {
		/* a first run counts the crash points; the sample is chosen among them by seed */
		w.counting = 1;
		if ((ret = walk_run(&w, text, len, name, o, err)))
			goto out;
		u64 n = w.points;
		if (wo->sample < n) {
			if (!(chosen = calloc(n ? n : 1, 1))) {
				ret = blab_fail(err, BLAB_ENOMEM, "crash points");
				goto out;
			}
			/* Floyd's: sample distinct indices, xorshift64* seeded */
			u64 x = wo->sample_seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
			for (u64 j = n - wo->sample; j < n; j++) {
				x ^= x >> 12;
				x ^= x << 25;
				x ^= x >> 27;
				u64 t = (x * 0x2545f4914f6cdd1dULL) % (j + 1);
				if (chosen[t])
					chosen[j] = 1;
				else
					chosen[t] = 1;
			}
			w.chosen = chosen;
			w.nchosen = n;
		}
		w.counting = 0;
		w.points = 0;
	}
	ret = walk_run(&w, text, len, name, o, err);
out:
	out->points = w.points;
	for (size_t i = 0; i < w.nps; i++)
		promise_free(&w.ps[i]);
	free(w.ps);
	for (size_t i = 0; i < w.npending; i++)
		promise_free(&w.pending[i]);
	free(w.pending);
	clear_renamed(&w);
	free(w.renamed);
	free(chosen);
	out->ms = wallclock_ms_since(&t0);
	if (ret)
		crash_report_free(out);
	return ret;
}

void crash_report_free(struct crash_report *r)
{
	free(r->broken);
	r->broken = NULL;
	r->nbroken = 0;
}

static const char *tree_name(u64 id)
{
	switch (id) {
	case BTRFS_ROOT_TREE_OBJECTID: return "root tree";
	case BTRFS_EXTENT_TREE_OBJECTID: return "extent tree";
	case BTRFS_CHUNK_TREE_OBJECTID: return "chunk tree";
	case BTRFS_DEV_TREE_OBJECTID: return "dev tree";
	case BTRFS_FS_TREE_OBJECTID: return "fs tree";
	case BTRFS_CSUM_TREE_OBJECTID: return "csum tree";
	case BTRFS_UUID_TREE_OBJECTID: return "uuid tree";
	case BTRFS_FREE_SPACE_TREE_OBJECTID: return "free space tree";
	case BTRFS_BLOCK_GROUP_TREE_OBJECTID: return "block group tree";
	case BTRFS_DATA_RELOC_TREE_OBJECTID: return "data reloc tree";
	case BTRFS_TREE_LOG_OBJECTID: return "log tree";
	default: return NULL;
	}
}

void crash_point_describe(const struct crash_point *p, struct strbuf *out)
{
	if (p->kind == TRACE_SUPER_WRITE) {
		sb_printf(out, "after writing superblock copy %d (generation %llu)", p->mirror, (unsigned long long)p->generation);
		return;
	}
	const char *t = tree_name(p->tree);
	if (t)
		sb_printf(out, "after writing a %s %s %llu (generation %llu)", t, p->level ? "node" : "leaf",
			  (unsigned long long)p->bytenr, (unsigned long long)p->generation);
	else
		sb_printf(out, "after writing a block of tree %llu, %s %llu (generation %llu)", (unsigned long long)p->tree,
			  p->level ? "node" : "leaf", (unsigned long long)p->bytenr, (unsigned long long)p->generation);
}

void crash_report_json(const struct crash_report *r, struct strbuf *out)
{
	sb_printf(out,
		  "{\"points\":%llu,\"tried\":%llu,\"blocks\":%llu,\"supers\":%llu,\"promises\":%llu,\"lines\":%d,\"ms\":%.1f,\"broken\":[",
		  (unsigned long long)r->points, (unsigned long long)r->tried, (unsigned long long)r->blocks,
		  (unsigned long long)r->supers, (unsigned long long)r->promises, r->lines, r->ms);
	for (size_t i = 0; i < r->nbroken; i++) {
		const struct crash_broken *b = &r->broken[i];
		struct strbuf d = {0};
		crash_point_describe(&b->at, &d);
		sb_printf(out, "%s{\"point\":%llu,\"seq\":%llu,\"line\":%d,\"at\":", i ? "," : "", (unsigned long long)b->at.index,
			  (unsigned long long)b->at.seq, b->at.line);
		sb_json_string(out, d.s ? d.s : "", d.len);
		sb_printf(out, ",\"promiseLine\":%d,\"path\":", b->promise_line);
		sb_json_string(out, b->path, strlen(b->path));
		sb_printf(out, ",\"what\":");
		sb_json_string(out, b->what, strlen(b->what));
		sb_printf(out, "}");
		sb_free(&d);
	}
	sb_printf(out, "]}");
}
