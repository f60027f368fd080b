#define _GNU_SOURCE
#include "rootdir.h"
#include "file.h"
#include "inode.h"
#include "xattr.h"
#include "u64map.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define CHUNK (8u << 20)

struct walk {
	struct btrfs_fs_info *fs;
	struct blab_err *err;
	struct rootdir_stats *st;
	struct u64map links; /* source (dev, ino) hash -> our inode, for hard links */
	u8 *buf;
	char *xbuf;
	size_t xcap;
	int estimate_only;
	u32 nodesize;
	u64 meta;
};

static int names_sorted(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

/* Inode rdev on disk is the kernel's own dev_t: major << 20 | minor. */
static u64 encode_dev(dev_t d)
{
	return ((u64)major(d) << 20) | (u64)minor(d);
}

static int copy_xattrs(struct walk *w, const char *path, u64 ino)
{
	ssize_t n = llistxattr(path, NULL, 0);
	if (n <= 0)
		return 0;
	char *names = malloc((size_t)n);
	if (!names)
		return blab_fail(w->err, BLAB_ENOMEM, "xattrs of %s", path);
	n = llistxattr(path, names, (size_t)n);
	int ret = 0;
	for (ssize_t o = 0; n > 0 && o < n && !ret; o += (ssize_t)strlen(names + o) + 1) {
		const char *name = names + o;
		ssize_t vl = lgetxattr(path, name, NULL, 0);
		if (vl < 0)
			continue;
		if ((size_t)vl + 1 > w->xcap) {
			char *nb = realloc(w->xbuf, (size_t)vl + 1);
			if (!nb) {
				ret = blab_fail(w->err, BLAB_ENOMEM, "xattr %s of %s", name, path);
				break;
			}
			w->xbuf = nb;
			w->xcap = (size_t)vl + 1;
		}
		vl = lgetxattr(path, name, w->xbuf, w->xcap);
		if (vl < 0)
			continue;
		w->st->xattrs++;
		if (w->estimate_only) {
			w->meta += 64 + strlen(name) + (u64)vl;
			continue;
		}
		if (btrfs_setxattr(w->fs, w->fs->fs_root, ino, name, (const u8 *)w->xbuf, (u16)vl))
			ret = blab_fail(w->err, w->fs->err.code, "%s: xattr %s: %s", path, name, w->fs->err.msg);
	}
	free(names);
	return ret;
}

static void attrs_of(const struct stat *sb, struct inode_attrs *a)
{
	memset(a, 0, sizeof(*a));
	a->mode = sb->st_mode;
	a->uid = sb->st_uid;
	a->gid = sb->st_gid;
	a->rdev = (S_ISCHR(sb->st_mode) || S_ISBLK(sb->st_mode)) ? encode_dev(sb->st_rdev) : 0;
	a->have_times = 1;
	a->atime = (struct btrfs_timespec){(u64)sb->st_atim.tv_sec, (u32)sb->st_atim.tv_nsec};
	a->mtime = (struct btrfs_timespec){(u64)sb->st_mtim.tv_sec, (u32)sb->st_mtim.tv_nsec};
	a->ctime = (struct btrfs_timespec){(u64)sb->st_ctim.tv_sec, (u32)sb->st_ctim.tv_nsec};
}

/* Sets times and mode exactly as the source has them (after children changed them). */
static int finish_inode(struct walk *w, u64 ino, const struct inode_attrs *a)
{
	struct btrfs_inode in;
	int ret = btrfs_read_inode(w->fs, w->fs->fs_root, ino, &in);
	if (ret)
		return blab_fail(w->err, ret, "%s", w->fs->err.msg);
	in.atime = a->atime;
	in.mtime = a->mtime;
	in.ctime = a->ctime;
	in.mode = a->mode;
	in.uid = a->uid;
	in.gid = a->gid;
	if ((ret = btrfs_update_inode(w->fs, w->fs->fs_root, &in)))
		return blab_fail(w->err, ret, "%s", w->fs->err.msg);
	return 0;
}

/* The next data range of fd at or after off, before size ([*start, *end)),
 * as SEEK_DATA and SEEK_HOLE find it: 0, or 1 when the rest is a hole. A
 * filesystem without them has one data range, the whole file. */
static int next_data(int fd, u64 off, u64 size, u64 *start, u64 *end)
{
	off_t d = lseek(fd, (off_t)off, SEEK_DATA);
	if (d < 0) {
		if (errno == ENXIO)
			return 1;
		*start = off;
		*end = size;
		return 0;
	}
	off_t h = lseek(fd, d, SEEK_HOLE);
	*start = (u64)d < size ? (u64)d : size;
	*end = h < 0 || (u64)h > size ? size : (u64)h;
	return *start >= size;
}

/* The file's data, its holes left holes: with NO_HOLES a hole has no
 * extent item at all (file.h), as mkfs.btrfs --rootdir makes since
 * btrfs-progs found holes with SEEK_HOLE; the size is set at the end. */
static int copy_data(struct walk *w, const char *path, u64 ino, u64 size)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return blab_fail(w->err, BLAB_EIO, "cannot read %s: %s", path, strerror(errno));
	int ret = 0;
	u64 dend = 0;
	for (u64 off = 0; off < size && !ret;) {
		if (off >= dend) {
			u64 ds;
			if (next_data(fd, off, size, &ds, &dend))
				break;
			/* data ranges start on the source's block boundaries; ours on sectors (what is
			 * read before ds is the hole's zeros, or data written already, the same again) */
			off = ds / w->fs->sectorsize * w->fs->sectorsize;
		}
		ssize_t n = pread(fd, w->buf, dend - off < CHUNK ? (size_t)(dend - off) : CHUNK, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = blab_fail(w->err, BLAB_EIO, "reading %s at %llu: %s", path, (unsigned long long)off,
					n < 0 ? strerror(errno) : "the file shrank while it was copied");
			break;
		}
		if (btrfs_file_write(w->fs, w->fs->fs_root, ino, off, w->buf, (u64)n))
			ret = blab_fail(w->err, w->fs->err.code, "%s: %s", path, w->fs->err.msg);
		off += (u64)n;
	}
	close(fd);
	if (!ret && btrfs_file_truncate(w->fs, w->fs->fs_root, ino, size)) /* a file that ends in a hole */
		ret = blab_fail(w->err, w->fs->err.code, "%s: %s", path, w->fs->err.msg);
	return ret;
}

static int walk_dir(struct walk *w, const char *path, u64 dir_ino, int depth);

static int copy_entry(struct walk *w, const char *path, const char *name, u64 dir_ino, int depth)
{
	struct stat sb;
	if (lstat(path, &sb) < 0)
		return blab_fail(w->err, BLAB_EIO, "cannot stat %s: %s", path, strerror(errno));
	struct inode_attrs a;
	attrs_of(&sb, &a);
	u16 nl = (u16)strlen(name);
	u64 ino = 0;
	struct rootdir_stats *st = w->st;
	w->meta += 3 * (50 + 2u * nl) + 200;
	if (!S_ISDIR(sb.st_mode) && sb.st_nlink > 1) {
		u64 key = ((u64)sb.st_dev << 40) ^ (u64)sb.st_ino;
		u64 *known = u64map_get(&w->links, key);
		if (known) {
			st->hardlinks++;
			if (w->estimate_only)
				return 0;
			if (btrfs_link_at(w->fs, w->fs->fs_root, *known, dir_ino, name, nl))
				return blab_fail(w->err, w->fs->err.code, "%s: %s", path, w->fs->err.msg);
			return 0;
		}
		u64 *slot = u64map_put(&w->links, key);
		if (!slot)
			return blab_fail(w->err, BLAB_ENOMEM, "hard links");
		*slot = 1; /* filled in below */
		known = slot;
	}
	st->inodes++;
	if (S_ISREG(sb.st_mode)) {
		st->files++;
		u64 ss = 4096;
		/* what the file holds: its allocated blocks (a sparse file's holes take no space here, nor in the copy) */
		u64 held = (u64)sb.st_blocks * 512 < (u64)sb.st_size ? (u64)sb.st_blocks * 512 : (u64)sb.st_size;
		st->data_bytes += held;
		w->meta += (held + ss - 1) / ss * 4 + (held > 2048 ? 60 : held + 30);
	} else if (S_ISLNK(sb.st_mode)) {
		st->symlinks++;
		w->meta += 4096;
	} else if (S_ISDIR(sb.st_mode)) {
		st->dirs++;
	} else {
		st->specials++;
	}
	if (!w->estimate_only) {
		struct btrfs_root *root = w->fs->fs_root;
		int ret;
		if (S_ISLNK(sb.st_mode)) {
			char target[4097];
			ssize_t tl = readlink(path, target, sizeof(target) - 1);
			if (tl < 0)
				return blab_fail(w->err, BLAB_EIO, "cannot read link %s: %s", path, strerror(errno));
			target[tl] = 0;
			ret = btrfs_symlink_at(w->fs, root, dir_ino, name, nl, target, &a, &ino);
		} else {
			ret = btrfs_create_at(w->fs, root, dir_ino, name, nl, &a, &ino);
		}
		if (ret)
			return blab_fail(w->err, ret, "%s: %s", path, w->fs->err.msg);
		if (sb.st_nlink > 1 && !S_ISDIR(sb.st_mode))
			*(u64 *)u64map_get(&w->links, ((u64)sb.st_dev << 40) ^ (u64)sb.st_ino) = ino;
		if (S_ISREG(sb.st_mode) && sb.st_size && (ret = copy_data(w, path, ino, (u64)sb.st_size)))
			return ret;
	}
	int ret = copy_xattrs(w, path, ino);
	if (!ret && S_ISDIR(sb.st_mode))
		ret = walk_dir(w, path, ino, depth + 1);
	if (!ret && !w->estimate_only)
		ret = finish_inode(w, ino, &a);
	return ret;
}

static int walk_dir(struct walk *w, const char *path, u64 dir_ino, int depth)
{
	if (depth > 1000)
		return blab_fail(w->err, BLAB_EINVAL, "%s: directories nested more than 1000 deep", path);
	struct dirent **list;
	int n = scandir(path, &list, NULL, names_sorted);
	if (n < 0)
		return blab_fail(w->err, BLAB_EIO, "cannot list %s: %s", path, strerror(errno));
	int ret = 0;
	size_t pl = strlen(path);
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		if (!ret && strcmp(name, ".") && strcmp(name, "..")) {
			size_t nl = strlen(name);
			char *child = malloc(pl + nl + 2);
			if (!child) {
				ret = blab_fail(w->err, BLAB_ENOMEM, "path");
			} else {
				snprintf(child, pl + nl + 2, "%s%s%s", path, pl && path[pl - 1] == '/' ? "" : "/", name);
				ret = copy_entry(w, child, name, dir_ino, depth);
				free(child);
			}
		}
		free(list[i]);
	}
	free(list);
	return ret;
}

static int start(struct walk *w, const char *src, struct stat *sb)
{
	if (stat(src, sb) < 0)
		return blab_fail(w->err, BLAB_ENOENT, "--rootdir %s: %s", src, strerror(errno));
	if (!S_ISDIR(sb->st_mode))
		return blab_fail(w->err, BLAB_ENOTDIR, "--rootdir %s: not a directory", src);
	u64map_init(&w->links, sizeof(u64));
	return 0;
}

int rootdir_estimate(const char *src, u32 nodesize, u64 *size, struct rootdir_stats *st, struct blab_err *err)
{
	struct walk w = {.err = err, .st = st, .estimate_only = 1, .nodesize = nodesize};
	struct stat sb;
	memset(st, 0, sizeof(*st));
	int ret = start(&w, src, &sb);
	if (!ret)
		ret = walk_dir(&w, src, 0, 0);
	u64map_free(&w.links);
	free(w.xbuf);
	if (ret)
		return ret;
	/* Data rounded to sectors, metadata twice over (copy-on-write while the
	 * kernel works), and 64 MiB for the kernel's own chunks and reserves. */
	const u64 MiB = 1 << 20;
	u64 data = st->data_bytes + st->files * 4096;
	u64 need = data + data / 16 + 2 * w.meta + 64 * MiB;
	*size = (need + MiB - 1) / MiB * MiB;
	return 0;
}

int rootdir_copy(struct btrfs_fs_info *fs, const char *src, struct rootdir_stats *st, struct blab_err *err)
{
	struct walk w = {.fs = fs, .err = err, .st = st, .nodesize = fs->nodesize};
	struct stat sb;
	memset(st, 0, sizeof(*st));
	int ret = start(&w, src, &sb);
	if (ret)
		return ret;
	if (!(w.buf = malloc(CHUNK))) {
		u64map_free(&w.links);
		return blab_fail(err, BLAB_ENOMEM, "copy buffer");
	}
	ret = copy_xattrs(&w, src, BTRFS_FIRST_FREE_OBJECTID);
	if (!ret)
		ret = walk_dir(&w, src, BTRFS_FIRST_FREE_OBJECTID, 0);
	if (!ret) {
		struct inode_attrs a;
		attrs_of(&sb, &a);
		ret = finish_inode(&w, BTRFS_FIRST_FREE_OBJECTID, &a);
	}
	u64map_free(&w.links);
	free(w.buf);
	free(w.xbuf);
	return ret;
}
