#define _GNU_SOURCE
#include "extract.h"
#include "dirwalk.h"
#include "../src/file.h"
#include "../src/xattr.h"
#include "../src/inode.h"
#include "../src/array.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#define BUF_SIZE (1u << 20)
#define BLOCK 4096u

/* One directory being filled: its fd below the target, its entries, the
 * next one to make, and where its name ends in the paths. */
struct frame {
	int fd;
	u64 ino;
	struct dir_list list;
	size_t next, path_len, rel_len;
};

struct xctx {
	struct btrfs_fs_info *fs;
	const struct extract_opts *o;
	FILE *err;
	int rootfd, failed, stop;
	struct path_buf path; /* for messages: target/a/b, names escaped */
	struct path_buf rel;  /* below the target, raw names (all checked safe): a/b */
	size_t root_len;      /* the target's part of path */
	struct dir_seen dirs; /* directory inodes entered, and their names */
	struct u64map links;  /* inode -> char *: the relative path of its first copy */
	struct frame *stack;
	size_t depth, cap;
	u8 *buf;
	u64 written;
};

__attribute__((format(printf, 2, 3))) static void say(struct xctx *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(x->err, "btrfslab extract: %s: ", x->path.s ? x->path.s : "");
	vfprintf(x->err, fmt, ap);
	fputc('\n', x->err);
	va_end(ap);
}
#define FAIL(x, ...) (say((x), __VA_ARGS__), (x)->failed = 1)

/* ---- metadata ---------------------------------------------------------- */

struct xattr_ctx {
	struct xctx *x;
	int fd;
	const char *kind; /* what a node without fd is, for the message */
};

static int put_xattr(void *ctx, const char *name, u16 len, const u8 *value, u16 vlen)
{
	struct xattr_ctx *c = ctx;
	struct xctx *x = c->x;
	char n[BTRFS_NAME_LEN + 1], shown[4 * BTRFS_NAME_LEN + 1];
	if (len == 0 || len > BTRFS_NAME_LEN) /* the tree checker allows no such name; never trust it here */
		return FAIL(x, "xattr name of %u bytes refused (expect 1..%d)", len, BTRFS_NAME_LEN), 0;
	memcpy(n, name, len);
	n[len] = 0;
	dir_name_escape(name, len, shown);
	if (memchr(name, 0, len))
		return FAIL(x, "xattr '%s': a name holding a NUL byte is refused", shown), 0;
	if (!x->o->all_xattrs && (!strncmp(n, "trusted.", 8) || !strncmp(n, "security.", 9))) {
		say(x, "xattr %s not restored (use --all-xattrs)", shown);
		return 0;
	}
	if (c->fd < 0) { /* never opened: setting it by name could follow a link */
		say(x, "xattr %s of a %s not restored", shown, c->kind);
		return 0;
	}
	if (fsetxattr(c->fd, n, value, vlen, 0) < 0)
		FAIL(x, "xattr %s: %s", shown, strerror(errno));
	return 0;
}

/* Owner, xattrs, mode and times of what fd (or, when fd < 0, name in dirfd,
 * a node never opened) is. */
static void set_meta(struct xctx *x, int fd, int dirfd, const char *name, const struct btrfs_inode *in)
{
	int is_link = (in->mode & S_IFMT_) == S_IFLNK_;
	struct xattr_ctx xc = {x, fd, is_link ? "symbolic link" : "special file"};
	if (btrfs_listxattr(x->fs, xino_root(x->fs, in->ino), xino_ino(in->ino), put_xattr, &xc) < 0)
		FAIL(x, "%s", x->fs->err.msg);
	if (geteuid() == 0) {
		int r = fd >= 0 ? fchown(fd, in->uid, in->gid) : fchownat(dirfd, name, in->uid, in->gid, AT_SYMLINK_NOFOLLOW);
		if (r < 0)
			FAIL(x, "owner %u:%u: %s", in->uid, in->gid, strerror(errno));
	}
	mode_t m = in->mode & 07777;
	if (!x->o->same_permissions) {
		if (m & 06000)
			say(x, "setuid/setgid bits not restored (use --same-permissions)");
		if (m & 01000)
			say(x, "sticky bit not restored (use --same-permissions)");
		m &= 0777;
	}
	if (!is_link && (fd >= 0 ? fchmod(fd, m) : fchmodat(dirfd, name, m, AT_SYMLINK_NOFOLLOW)) < 0)
		FAIL(x, "mode %o: %s", (unsigned)m, strerror(errno));
	struct timespec ts[2] = {{(time_t)in->atime.sec, (long)in->atime.nsec}, {(time_t)in->mtime.sec, (long)in->mtime.nsec}};
	if ((fd >= 0 ? futimens(fd, ts) : utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW)) < 0)
		FAIL(x, "times: %s", strerror(errno));
}

/* ---- files ------------------------------------------------------------- */

static int all_zero(const u8 *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Writes the data ranges of ino to fd; holes and zero blocks stay holes. */
static int copy_data(struct xctx *x, int fd, const struct btrfs_inode *in)
{
	struct btrfs_fs_info *fs = x->fs;
	u64 off = 0, s, e;
	int r;
	while (off < in->size && (r = btrfs_file_next_data(fs, xino_root(fs, in->ino), xino_ino(in->ino), off, in->size, &s, &e)) == 0) {
		for (u64 p = s; p < e;) {
			u64 got, n = e - p < BUF_SIZE ? e - p : BUF_SIZE;
			if (btrfs_file_read(fs, xino_root(fs, in->ino), xino_ino(in->ino), p, x->buf, n, &got, 1))
				return FAIL(x, "%s", fs->err.msg), -1;
			if (!got)
				break;
			for (u64 b = 0; b < got; b += BLOCK) {
				size_t len = got - b < BLOCK ? (size_t)(got - b) : BLOCK;
				if (all_zero(x->buf + b, len))
					continue;
				if (x->o->max_size && x->written + len > x->o->max_size) {
					x->stop = 1;
					return FAIL(x, "stopped: the files hold more than %llu bytes of data (--max-size)",
						    (unsigned long long)x->o->max_size), -1;
				}
				if (pwrite(fd, x->buf + b, len, (off_t)(p + b)) != (ssize_t)len)
					return FAIL(x, "write: %s", strerror(errno)), -1;
				x->written += len;
			}
			p += got;
		}
		off = e;
	}
	if (r < 0)
		return FAIL(x, "%s", fs->err.msg), -1;
	if (ftruncate(fd, (off_t)in->size) < 0)
		return FAIL(x, "size %llu: %s", (unsigned long long)in->size, strerror(errno)), -1;
	return 0;
}

/* The directory holding rel (a path of safe names below the target) and, in
 * *last, rel's last name: opened with openat2 beneath the target without
 * following any link, or one component at a time (O_NOFOLLOW) where the
 * kernel has no openat2. -1 with errno if it is gone. */
static int open_parent(struct xctx *x, const char *rel, const char **last)
{
	const char *slash = strrchr(rel, '/');
	*last = slash ? slash + 1 : rel;
	if (!slash)
		return dup(x->rootfd);
	char *dir = strndup(rel, (size_t)(slash - rel));
	if (!dir)
		return -1;
	int fd = -1;
#ifdef SYS_openat2
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	fd = (int)syscall(SYS_openat2, x->rootfd, dir, &how, sizeof(how));
	if (fd >= 0 || errno != ENOSYS) {
		free(dir);
		return fd;
	}
#endif
	fd = dup(x->rootfd);
	for (char *p = dir, *next; fd >= 0 && p; p = next) {
		if ((next = strchr(p, '/')))
			*next++ = 0;
		int sub = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = sub;
	}
	free(dir);
	return fd;
}

/* A second name of an inode already extracted (nlink > 1): a hard link to
 * its first copy. 1 when there was one (linked, or the failure said). */
static int link_first(struct xctx *x, int dirfd, const char *name, const struct btrfs_inode *in)
{
	char **first = in->nlink > 1 ? u64map_get(&x->links, in->ino) : NULL;
	if (!first)
		return 0;
	const char *last;
	int pfd = open_parent(x, *first, &last);
	if (pfd < 0 || linkat(pfd, last, dirfd, name, 0) < 0)
		FAIL(x, "hard link: %s", strerror(errno));
	if (pfd >= 0)
		close(pfd);
	return 1;
}

/* The first copy of an inode of several names, for link_first. */
static void remember_link(struct xctx *x, const struct btrfs_inode *in)
{
	char **p = u64map_put(&x->links, in->ino);
	if (p && !*p && !(*p = strdup(x->rel.s)))
		u64map_del(&x->links, in->ino);
}

static int make_file(struct xctx *x, int dirfd, const char *name, const struct btrfs_inode *in)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return FAIL(x, "%s", strerror(errno)), -1;
	int ret = copy_data(x, fd, in);
	if (!ret)
		set_meta(x, fd, dirfd, name, in);
	close(fd);
	return ret;
}

static int make_symlink(struct xctx *x, int dirfd, const char *name, const struct btrfs_inode *in)
{
	char target[4096];
	u64 got;
	if (in->size == 0 || in->size >= sizeof(target))
		return FAIL(x, "symbolic link target of %llu bytes (expect 1..4095)", (unsigned long long)in->size), -1;
	if (btrfs_file_read_any(x->fs, xino_root(x->fs, in->ino), xino_ino(in->ino), 0, (u8 *)target, in->size, &got))
		return FAIL(x, "%s", x->fs->err.msg), -1;
	target[got] = 0;
	if (memchr(target, 0, got))
		return FAIL(x, "symbolic link target holds a NUL byte"), -1;
	if (symlinkat(target, dirfd, name) < 0)
		return FAIL(x, "%s", strerror(errno)), -1;
	set_meta(x, -1, dirfd, name, in);
	return 0;
}

static int make_node(struct xctx *x, int dirfd, const char *name, const struct btrfs_inode *in)
{
	u32 fmt = in->mode & S_IFMT_;
	dev_t dev = 0;
	if (fmt == S_IFCHR_ || fmt == S_IFBLK_) {
		if (!x->o->devices)
			return say(x, "device node not created (use --devices)"), 1;
		dev = makedev((unsigned)(in->rdev >> 20), (unsigned)(in->rdev & 0xfffff));
	} else if (fmt != S_IFIFO_ && fmt != S_IFSOCK_) {
		return FAIL(x, "inode %llu has an unknown file type (mode %o)", (unsigned long long)xino_ino(in->ino), (unsigned)in->mode), -1;
	}
	if (mknodat(dirfd, name, (mode_t)(fmt | 0600), dev) < 0)
		return FAIL(x, "%s", strerror(errno)), -1;
	set_meta(x, -1, dirfd, name, in);
	return 0;
}

/* ---- directories ------------------------------------------------------- */

static int push_dir(struct xctx *x, int fd, u64 ino, size_t path_len, size_t rel_len)
{
	if (array_room(&x->stack, x->depth, &x->cap, sizeof(*x->stack), 32))
		return -1;
	struct frame *f = &x->stack[x->depth];
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->ino = ino;
	f->path_len = path_len;
	f->rel_len = rel_len;
	if (dir_list_read(x->fs, ino, &f->list)) {
		FAIL(x, "%s", x->fs->err.msg);
		dir_list_free(&f->list); /* what was read is still made: f->list.n = 0 */
	}
	x->depth++;
	return 0;
}

/* Directory e of the directory at the top of the stack (parent): made,
 * opened and pushed (1), unless it was entered before (corruption, said)
 * or cannot be (0). */
static int enter_dir(struct xctx *x, int dirfd, u64 parent, const struct dir_ent *e, size_t path_len, size_t rel_len)
{
	int seen = dir_seen_add(&x->dirs, e->ino, parent, e->name, e->len);
	if (seen > 0) {
		struct path_buf first = {0};
		int oom = path_append(&first, x->path.s, (u16)x->root_len, 0) || dir_seen_path(&x->dirs, e->ino, &first, 1);
		FAIL(x, "corrupt: directory inode %llu is reached a second time, first as %s (a directory has one name)",
		     (unsigned long long)xino_ino(e->ino), oom ? "?" : first.s);
		path_free(&first);
		return 0;
	}
	if (seen < 0 || mkdirat(dirfd, e->name, 0700) < 0) {
		FAIL(x, "%s", seen < 0 ? "out of memory" : strerror(errno));
		return 0;
	}
	int fd = openat(dirfd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		x->stop = 1;
		FAIL(x, "directory tree too deep to extract (no file descriptors left at depth %zu); stopped", x->depth);
	} else if (fd < 0) {
		FAIL(x, "%s", strerror(errno));
	} else if (push_dir(x, fd, e->ino, path_len, rel_len) < 0) {
		close(fd);
		x->stop = 1;
		FAIL(x, "out of memory");
	} else {
		return 1;
	}
	return 0;
}

/* Makes entry e of the directory at stack slot level. */
static void make_entry(struct xctx *x, size_t level, const struct dir_ent *e)
{
	size_t path_len = x->path.len, rel_len = x->rel.len;
	int dirfd = x->stack[level].fd;
	if (path_append(&x->path, e->name, e->len, 1) || path_append(&x->rel, e->name, e->len, 0)) {
		x->stop = 1;
		FAIL(x, "out of memory");
		return;
	}
	struct btrfs_inode in;
	if (!dir_name_safe(e->name, e->len))
		FAIL(x, "refusing an unsafe name (inode %llu)", (unsigned long long)xino_ino(e->ino));
	else if (e->empty) {
		/* where another subvolume was when this one was snapshotted: empty */
		if (mkdirat(dirfd, e->name, 0755) < 0)
			FAIL(x, "%s", strerror(errno));
	} else if (e->subvol && !e->ino)
		FAIL(x, "subvolume %llu: its root item is missing", (unsigned long long)e->subvol);
	else if (xino_read_inode(x->fs, e->ino, &in))
		FAIL(x, "%s", x->fs->err.msg);
	else if ((in.mode & S_IFMT_) == S_IFDIR_) {
		if (enter_dir(x, dirfd, x->stack[level].ino, e, path_len, rel_len))
			return; /* entered: the paths are cut when it is done */
	} else if (!link_first(x, dirfd, e->name, &in)) {
		u32 fmt = in.mode & S_IFMT_;
		int r = fmt == S_IFREG_ ? make_file(x, dirfd, e->name, &in)
			: fmt == S_IFLNK_ ? make_symlink(x, dirfd, e->name, &in) : make_node(x, dirfd, e->name, &in);
		if (r == 0 && in.nlink > 1)
			remember_link(x, &in);
	}
	path_cut(&x->path, path_len);
	path_cut(&x->rel, rel_len);
}

/* A directory's entries are all made: its own metadata, then it is closed. */
static void finish_dir(struct xctx *x)
{
	struct frame *f = &x->stack[--x->depth];
	struct btrfs_inode in;
	if (!x->stop) {
		if (xino_read_inode(x->fs, f->ino, &in))
			FAIL(x, "%s", x->fs->err.msg);
		else
			set_meta(x, f->fd, -1, NULL, &in);
	}
	close(f->fd);
	dir_list_free(&f->list);
	path_cut(&x->path, f->path_len);
	path_cut(&x->rel, f->rel_len);
}

/* 1 when fd is a directory as mkdirat(0700) just made it: ours, private. */
static int made_here(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077);
}

/* Makes target (absent) below its parent, exclusively: its fd, or -1. */
static int make_target(const char *target, FILE *err)
{
	char *copy = strdup(target);
	if (!copy)
		return fprintf(err, "btrfslab extract: out of memory\n"), -1;
	size_t n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = 0;
	char *slash = strrchr(copy, '/');
	const char *base = slash ? slash + 1 : copy, *parent = slash ? (slash == copy ? "/" : copy) : ".";
	if (slash)
		*slash = 0;
	int fd = -1;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		fprintf(err, "btrfslab extract: %s: give a new directory to create\n", target);
	} else {
		int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0 || mkdirat(pfd, base, 0700) < 0)
			fprintf(err, "btrfslab extract: %s: %s\n", target,
				errno == EEXIST ? "exists: give a directory to create" : strerror(errno));
		else if ((fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			fprintf(err, "btrfslab extract: %s: %s\n", target, strerror(errno));
		else if (!made_here(fd)) {
			fprintf(err, "btrfslab extract: %s: replaced while being made; nothing extracted\n", target);
			close(fd);
			fd = -1;
		}
		if (pfd >= 0)
			close(pfd);
	}
	free(copy);
	return fd;
}

int extract_tree(struct btrfs_fs_info *fs, const char *target, const struct extract_opts *o, FILE *err)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl); /* deep trees hold one fd a level */
	}
	struct xctx x = {.fs = fs, .o = o, .err = err, .buf = malloc(BUF_SIZE)};
	dir_seen_init(&x.dirs);
	u64map_init(&x.links, sizeof(char *));
	int ret = 2;
	if (!x.buf || path_append(&x.path, target, (u16)strnlen(target, 4096), 1))
		fprintf(err, "btrfslab extract: out of memory\n");
	else if ((x.rootfd = make_target(target, err)) >= 0) {
		x.root_len = x.path.len;
		u64 top = 0;
		xino_make(fs, fs->fs_root, BTRFS_FIRST_FREE_OBJECTID, &top);
		if (dir_seen_add(&x.dirs, top, 0, "", 0) == 0 && push_dir(&x, dup(x.rootfd), top, x.path.len, 0) == 0) {
			while (x.depth) {
				struct frame *f = &x.stack[x.depth - 1];
				if (x.stop || f->next >= f->list.n)
					finish_dir(&x);
				else
					make_entry(&x, x.depth - 1, &f->list.e[f->next++]);
			}
			ret = x.failed;
		}
		close(x.rootfd);
	}
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&x.links, &i, &k, &v))
		free(*(char **)v);
	u64map_free(&x.links);
	dir_seen_free(&x.dirs);
	path_free(&x.path);
	path_free(&x.rel);
	free(x.stack);
	free(x.buf);
	return ret;
}
