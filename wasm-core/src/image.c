#define _GNU_SOURCE
#include "image.h"
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/fs.h>
#include <sys/ioctl.h>
#endif

static int write_all(int fd, const u8 *p, size_t n, off_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
		off += w;
	}
	return 0;
}

static int image_write_file_at(const struct blab_device *dev, const char *path, const char *user_path, struct blab_err *err);
static int image_output(const char *user_path, char **path, struct blab_err *err);

int image_resolve_output(const char *path, char **resolved, int *special, struct blab_err *err)
{
	struct stat st, lst;
	*special = 0;
	int exists = stat(path, &st) == 0; /* follows links */
	if (exists && !S_ISREG(st.st_mode)) {
		*special = 1; /* a device, a pipe, /dev/stdout: written where it is */
		*resolved = strdup(path);
	} else if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		*resolved = realpath(path, NULL); /* a link to a regular file: replace the file, keep the link */
	} else if (!exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		return blab_fail(err, BLAB_EINVAL, "%s is a symbolic link to a missing file", path);
	} else {
		*resolved = strdup(path);
	}
	if (!*resolved)
		return blab_fail(err, BLAB_ENOMEM, "path %s", path);
	return 0;
}

/* An image's output path: links followed; refused when it is not a regular file. */
static int image_output(const char *user_path, char **path, struct blab_err *err)
{
	int special, ret = image_resolve_output(user_path, path, &special, err);
	if (!ret && special) {
		free(*path);
		ret = blab_fail(err, BLAB_EINVAL, "%s exists and is not a regular file", user_path);
	}
	return ret;
}

int image_write_file(const struct blab_device *dev, const char *user_path, struct blab_err *err)
{
	char *path;
	int ret = image_output(user_path, &path, err);
	if (ret)
		return ret;
	ret = image_write_file_at(dev, path, user_path, err);
	free(path);
	return ret;
}

/* The temporary files being made: SIGTERM, SIGINT or SIGHUP removes them
 * before the process dies of it (a handler installed with the first, where
 * the signal's action is still the default). */
#define TEMP_SLOTS 8
static char temp_paths[TEMP_SLOTS][4096];
static volatile sig_atomic_t temp_used[TEMP_SLOTS];

static void temp_on_signal(int sig)
{
	for (int i = 0; i < TEMP_SLOTS; i++)
		if (temp_used[i])
			unlink(temp_paths[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void temp_track(const char *t)
{
	static int installed;
	if (!installed) {
		static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
		installed = 1;
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			struct sigaction old, sa;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = temp_on_signal;
			if (!sigaction(sigs[i], NULL, &old) && old.sa_handler == SIG_DFL)
				sigaction(sigs[i], &sa, NULL);
		}
	}
	for (int i = 0; i < TEMP_SLOTS; i++)
		if (!temp_used[i] && strlen(t) < sizeof(temp_paths[i])) {
			strcpy(temp_paths[i], t);
			temp_used[i] = 1;
			return;
		}
}

void image_temp_forget(const char *t)
{
	for (int i = 0; t && i < TEMP_SLOTS; i++)
		if (temp_used[i] && !strcmp(temp_paths[i], t))
			temp_used[i] = 0;
}

int image_temp_file(const char *path, char **tmp, int *fd, struct blab_err *err)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0, n = strlen(path) + 16;
	char *t = malloc(n);
	if (!t)
		return blab_fail(err, BLAB_ENOMEM, "path");
	/* DIR/.NAME.XXXXXX: made with O_EXCL under a name nobody can guess */
	snprintf(t, n, "%.*s.%s.XXXXXX", (int)dlen, path, path + dlen);
	int f = mkostemp(t, O_CLOEXEC);
	if (f < 0) {
		int e = errno;
		free(t);
		return blab_fail(err, BLAB_EIO, "cannot create a temporary file beside %s: %s", path, strerror(e));
	}
	temp_track(t);
	mode_t um = umask(0);
	umask(um);
	if (fchmod(f, 0644 & ~um) < 0) {
		int e = errno;
		close(f);
		unlink(t);
		image_temp_forget(t);
		free(t);
		return blab_fail(err, BLAB_EIO, "chmod of a temporary file beside %s: %s", path, strerror(e));
	}
	*tmp = t;
	*fd = f;
	return 0;
}

static int image_write_file_at(const struct blab_device *dev, const char *path, const char *user_path, struct blab_err *err)
{
	(void)user_path;
	char *tmp;
	int fd, ret = image_temp_file(path, &tmp, &fd, err);
	if (ret)
		return ret;
	if (ftruncate(fd, (off_t)dev->size) < 0) {
		ret = blab_fail(err, BLAB_EIO, "cannot size %s to %llu bytes: %s", path, (unsigned long long)dev->size,
				strerror(errno));
		goto out;
	}
	const u8 *pg; /* the written pages and the source image's data ranges (device.h) */
	for (u64 i = 0; (ret = device_next_page(dev, &i, &pg)) > 0; i++) {
		u64 off = i << DEVICE_PAGE_SHIFT;
		size_t len = (size_t)(dev->size - off < DEVICE_PAGE_SIZE ? dev->size - off : DEVICE_PAGE_SIZE);
		if (write_all(fd, pg, len, (off_t)off) < 0) {
			ret = blab_fail(err, BLAB_EIO, "writing %s at offset %llu: %s", path, (unsigned long long)off,
					strerror(errno));
			goto out;
		}
	}
	if (ret < 0) {
		ret = device_fail(dev, ret, err);
		goto out;
	}
	if (fsync(fd) < 0)
		ret = blab_fail(err, BLAB_EIO, "fsync %s: %s", path, strerror(errno));
out:
	if (close(fd) < 0 && !ret)
		ret = blab_fail(err, BLAB_EIO, "close %s: %s", path, strerror(errno));
	if (!ret && rename(tmp, path) < 0)
		ret = blab_fail(err, BLAB_EIO, "rename to %s: %s", path, strerror(errno));
	if (ret)
		unlink(tmp);
	image_temp_forget(tmp);
	free(tmp);
	return ret;
}

static int file_io(const struct blab_device *d, u64 off, void *buf, size_t len, int write)
{
	u8 *p = buf;
#ifdef SYNC_FILE_RANGE_WRITE
	/* Start writeback every 16 MiB so that the final fsync has little left to wait for. */
	static u64 since_kick;
	if (write && (since_kick += len) >= (16u << 20)) {
		since_kick = 0;
		sync_file_range(d->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	}
#endif
	while (len) {
		ssize_t n = write ? pwrite(d->fd, p, len, (off_t)off) : pread(d->fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return BLAB_EIO;
		p += n;
		off += (u64)n;
		len -= (size_t)n;
	}
	return 0;
}

static void file_close(struct blab_device *d)
{
	close(d->fd);
	d->fd = 0;
	d->io = NULL;
	d->close = NULL;
}

int image_create_file(struct blab_device *dev, const char *user_path, u64 size, struct image_out *out, struct blab_err *err)
{
	memset(out, 0, sizeof(*out));
	int fd, ret = image_output(user_path, &out->path, err);
	if (ret)
		return ret;
	if ((ret = image_temp_file(out->path, &out->tmp, &fd, err))) {
		free(out->path);
		out->path = NULL;
		return ret;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		ret = blab_fail(err, BLAB_EIO, "cannot size %s to %llu bytes: %s", user_path, (unsigned long long)size, strerror(errno));
		close(fd);
		unlink(out->tmp);
		image_temp_forget(out->tmp);
		free(out->tmp);
		free(out->path);
		memset(out, 0, sizeof(*out));
		return ret;
	}
	memset(dev, 0, sizeof(*dev));
	dev->size = size;
	dev->fd = fd;
	dev->io = file_io;
	dev->close = file_close;
	return 0;
}

int image_finish_file(struct blab_device *dev, struct image_out *out, int commit, struct blab_err *err)
{
	int ret = 0;
	if (commit && fsync(dev->fd) < 0)
		ret = blab_fail(err, BLAB_EIO, "fsync %s: %s", out->path, strerror(errno));
	if (close(dev->fd) < 0 && commit && !ret)
		ret = blab_fail(err, BLAB_EIO, "close %s: %s", out->path, strerror(errno));
	dev->fd = 0;
	dev->io = NULL;
	dev->close = NULL;
	if (commit && !ret && rename(out->tmp, out->path) < 0)
		ret = blab_fail(err, BLAB_EIO, "rename to %s: %s", out->path, strerror(errno));
	if (!commit || ret)
		unlink(out->tmp);
	image_temp_forget(out->tmp);
	free(out->tmp);
	free(out->path);
	memset(out, 0, sizeof(*out));
	return ret;
}

/* The source under a lazily opened image (device.h): the file, read-only. */
struct image_source {
	int fd;
	int sparse; /* a regular file: SEEK_DATA knows its holes */
	char path[];
};

static int image_source_read(void *ctx, u64 off, void *buf, size_t len, struct blab_err *err)
{
	struct image_source *s = ctx;
	u8 *p = buf;
	while (len) {
		ssize_t r = pread(s->fd, p, len, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return blab_fail(err, BLAB_EIO, "reading %s at offset %llu: %s", s->path, (unsigned long long)off,
					 r < 0 ? strerror(errno) : "unexpected end of file (did the image shrink?)");
		p += r;
		off += (u64)r;
		len -= (size_t)r;
	}
	return 0;
}

/* Holes known from SEEK_DATA; a file system that cannot tell (or a block
 * device) has data everywhere, and a read error then says what is wrong. */
static int image_source_next_data(void *ctx, u64 off, u64 *data, struct blab_err *err)
{
	struct image_source *s = ctx;
	(void)err;
	*data = off;
	if (s->sparse && off <= (u64)INT64_MAX) {
		off_t r = lseek(s->fd, (off_t)off, SEEK_DATA);
		if (r >= 0)
			*data = (u64)r;
		else if (errno == ENXIO)
			*data = UINT64_MAX; /* only holes from off to the end */
	}
	return 0;
}

static void image_source_close(void *ctx)
{
	struct image_source *s = ctx;
	close(s->fd);
	free(s);
}

/* What a file that is not an image is, for the refusal. */
static const char *image_file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device" : S_ISDIR(m) ? "a directory" : "not a regular file";
}

int image_read_file(struct blab_device *dev, const char *path, struct blab_err *err)
{
	memset(dev, 0, sizeof(*dev));
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		int e = errno;
		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) /* a socket cannot be opened */
			return blab_fail(err, BLAB_EINVAL, "%s: is %s (IMAGE must be a regular file or a block device)", path,
					 image_file_kind(st.st_mode));
		return blab_fail(err, BLAB_ENOENT, "cannot open %s: %s", path, strerror(e));
	}
	u64 size = 0;
	int ret = 0;
	if (fstat(fd, &st) < 0)
		ret = blab_fail(err, BLAB_EIO, "stat %s: %s", path, strerror(errno));
	else if (S_ISREG(st.st_mode))
		size = (u64)st.st_size;
#ifdef __linux__
	else if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &size) < 0)
		ret = blab_fail(err, BLAB_EIO, "%s: cannot get the size of the block device: %s", path, strerror(errno));
#endif
	else if (!S_ISBLK(st.st_mode))
		ret = blab_fail(err, BLAB_EINVAL, "%s: is %s (IMAGE must be a regular file or a block device)", path,
				image_file_kind(st.st_mode));
	if (!ret && !size)
		ret = blab_fail(err, BLAB_EINVAL, "%s: is empty", path);
	int fl = ret ? 0 : fcntl(fd, F_GETFL);
	if (!ret && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
		ret = blab_fail(err, BLAB_EIO, "%s: fcntl: %s", path, strerror(errno));
	size_t n = strlen(path) + 1;
	struct image_source *s = ret ? NULL : malloc(sizeof(*s) + n);
	if (!ret && !s)
		ret = blab_fail(err, BLAB_ENOMEM, "opening %s", path);
	if (ret) {
		close(fd);
		return ret;
	}
	s->fd = fd;
	s->sparse = S_ISREG(st.st_mode);
	memcpy(s->path, path, n);
	struct device_source src = {s, image_source_read, image_source_next_data, image_source_close};
	if (device_init_source(dev, size, &src)) /* closes s on failure */
		return blab_fail(err, BLAB_ENOMEM, "opening %s", path);
	return 0;
}
