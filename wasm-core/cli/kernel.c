/* kernel.c — `btrfslab kernel IMAGE [--json] [--in-place]`: hands an image to
 * the running kernel and reports what it sees.
 *
 * A private sparse copy of IMAGE (the user's file is not changed, unless
 * --in-place) is attached to a loop device this command makes itself, and
 * mounted read-write (its top level, subvolid=5, whatever the default
 * subvolume), so the kernel replays a pending log as a mount after a power
 * cut does. Every path is listed (type, permission bits, links, size,
 * a regular file's SHA-256, a symlink's target), the filesystem unmounted,
 * `btrfs check --readonly` run on the device, the kernel told to forget it,
 * the loop device detached, and the private directory removed: on every
 * path out, errors and SIGINT/SIGTERM/SIGHUP included. Only the loop device
 * it attached is ever touched.
 *
 * The filesystem is treated as hostile: the walk is bounded (depth, entries,
 * path length), never follows a symlink (openat O_NOFOLLOW, fstatat
 * AT_SYMLINK_NOFOLLOW), and names are escaped on output. In JSON, bytes that
 * are not valid UTF-8 are written as \u00XX of the byte (so a name's bytes
 * can be told apart; such a string is not the name's UTF-8).
 *
 * --json prints exactly:
 *   {"image", "kernel", "log_pending", "mount": {"ok", "error"}, "files":
 *    [{"path", "type", "mode", "nlink", "size", "sha256"?, "target"?}],
 *    "check": {"ok", "output"}, "ok"}
 * files sorted by path bytewise, "/" first; mode is st_mode & 07777; type
 * file, dir, symlink, fifo, chr, blk or sock. Exit status 0 when the mount
 * worked and check passed, else 1 (2 for usage). */
#define _GNU_SOURCE
#include "kernel.h"
#include "sha256.h"
#include "../src/array.h"
#include "../src/crc32c.h"
#include "../src/ondisk.h"
#include "../src/print-tree.h"
#include "../src/file.h"
#include "../src/inode.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ENTRIES 1000000
#define MAX_DEPTH 256
#define MAX_PATH 4096
#define MAX_CHECK_OUTPUT (64 * 1024)

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

struct run {
	char tmp[64];    /* the private directory */
	char copy[128];  /* the image copy in it */
	char mnt[128];   /* the mount point in it */
	char loop[32];   /* /dev/loopN */
	int loopfd;
	int mounted;
	int in_place;
};

static int lfail(struct listing *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int lfail(struct listing *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->error, sizeof(l->error), fmt, ap);
	va_end(ap);
	return -1;
}

static int add_file(struct listing *l, const char *path, const struct stat *st)
{
	if (array_room(&l->v, l->n, &l->cap, sizeof(*l->v), 256))
		return -1;
	struct kfile *f = &l->v[l->n];
	memset(f, 0, sizeof(*f));
	if (!(f->path = strdup(path)))
		return -1;
	l->n++;
	switch (st->st_mode & S_IFMT) {
	case S_IFREG: f->type = "file"; break;
	case S_IFDIR: f->type = "dir"; break;
	case S_IFLNK: f->type = "symlink"; break;
	case S_IFIFO: f->type = "fifo"; break;
	case S_IFCHR: f->type = "chr"; break;
	case S_IFBLK: f->type = "blk"; break;
	default: f->type = "sock"; break;
	}
	f->mode = st->st_mode & 07777;
	f->nlink = (unsigned long long)st->st_nlink;
	f->size = (unsigned long long)st->st_size;
	return 0;
}

static int hash_file(int dirfd, const char *name, char out[65], char *err, size_t errn)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return snprintf(err, errn, "opening %s: %s", name, strerror(errno)), -1;
	struct sha256 s;
	sha256_init(&s);
	static char buf[1 << 16];
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0 && !stop_signal)
		sha256_update(&s, buf, (size_t)r);
	int e = errno;
	close(fd);
	if (r < 0)
		return snprintf(err, errn, "reading %s: %s", name, strerror(e)), -1;
	sha256_hex(&s, out);
	return 0;
}

/* Lists directory dirfd (at path) into l, depth first. -1 with l->error set. */
static int walk(struct listing *l, int dirfd, char *path, size_t plen, int depth)
{
	if (depth > MAX_DEPTH)
		return lfail(l, "%s: deeper than %d directories", path, MAX_DEPTH);
	int dup_fd = dup(dirfd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return lfail(l, "%s: %s", path, strerror(errno));
	}
	int ret = 0;
	struct dirent *de;
	while (!ret && (errno = 0, de = readdir(d))) {
		if (stop_signal) {
			ret = lfail(l, "interrupted by signal %d", (int)stop_signal);
			break;
		}
		const char *name = de->d_name;
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		size_t nl = strlen(name);
		if (plen + 1 + nl >= MAX_PATH) {
			ret = lfail(l, "%s: a path longer than %d bytes", path, MAX_PATH);
			break;
		}
		if (l->n >= MAX_ENTRIES) {
			ret = lfail(l, "more than %d paths", MAX_ENTRIES);
			break;
		}
		size_t at = plen;
		if (plen > 1)
			path[at++] = '/';
		memcpy(path + at, name, nl + 1);
		struct stat st;
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
			ret = lfail(l, "%s: %s", path, strerror(errno));
		} else if (add_file(l, path, &st)) {
			ret = lfail(l, "out of memory");
		} else if (S_ISREG(st.st_mode)) {
			ret = hash_file(dirfd, name, l->v[l->n - 1].sha, l->error, sizeof(l->error));
		} else if (S_ISLNK(st.st_mode)) {
			char t[MAX_PATH];
			ssize_t n = readlinkat(dirfd, name, t, sizeof(t) - 1);
			if (n < 0)
				ret = lfail(l, "%s: %s", path, strerror(errno));
			else if (!(l->v[l->n - 1].target = strndup(t, (size_t)n)))
				ret = lfail(l, "out of memory");
		} else if (S_ISDIR(st.st_mode)) {
			int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				ret = lfail(l, "%s: %s", path, strerror(errno));
			else {
				ret = walk(l, fd, path, at + nl, depth + 1);
				close(fd);
			}
		}
		path[plen] = 0;
	}
	if (!ret && errno)
		ret = lfail(l, "%s: %s", path, strerror(errno));
	closedir(d);
	return ret;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct kfile *)a)->path, ((const struct kfile *)b)->path);
}

/* A sparse copy of src (its data ranges only) at dst, made exclusively. */
static int sparse_copy(const char *src, const char *dst, char *err, size_t errn)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return snprintf(err, errn, "%s: %s", src, strerror(errno)), -1;
	struct stat st;
	if (fstat(in, &st) || !S_ISREG(st.st_mode)) {
		close(in);
		return snprintf(err, errn, "%s: not a regular file", src), -1;
	}
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return snprintf(err, errn, "%s: %s", dst, strerror(errno)), -1;
	}
	int ret = ftruncate(out, st.st_size) ? -1 : 0;
	static char buf[1 << 20];
	off_t pos = 0;
	while (!ret && pos < st.st_size) {
		off_t data = lseek(in, pos, SEEK_DATA);
		if (data < 0)
			break; /* only a hole is left */
		off_t hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			hole = st.st_size;
		for (off_t o = data; !ret && o < hole;) {
			size_t want = (size_t)(hole - o < (off_t)sizeof(buf) ? hole - o : (off_t)sizeof(buf));
			ssize_t r = pread(in, buf, want, o);
			if (r <= 0 || pwrite(out, buf, (size_t)r, o) != r)
				ret = -1;
			o += r > 0 ? r : 0;
		}
		pos = hole;
	}
	if (ret || fsync(out))
		snprintf(err, errn, "copying %s: %s", src, strerror(errno)), ret = -1;
	close(in);
	close(out);
	return ret;
}

static int attach_loop(struct run *r, const char *file, char *err, size_t errn)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return snprintf(err, errn, "/dev/loop-control: %s", strerror(errno)), -1;
	int bfd = open(file, O_RDWR | O_CLOEXEC);
	if (bfd < 0) {
		close(ctl);
		return snprintf(err, errn, "%s: %s", file, strerror(errno)), -1;
	}
	int ret = -1;
	for (int tries = 0; tries < 32 && ret; tries++) {
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0) {
			snprintf(err, errn, "no free loop device: %s", strerror(errno));
			break;
		}
		snprintf(r->loop, sizeof(r->loop), "/dev/loop%d", n);
		int lfd = open(r->loop, O_RDWR | O_CLOEXEC);
		if (lfd < 0)
			continue; /* its node not there yet, or taken: ask again */
		struct loop_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned)bfd;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR; /* detached on the last close, whatever happens to us */
		snprintf((char *)cfg.info.lo_file_name, sizeof(cfg.info.lo_file_name), "%s", file);
		int ok = ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0;
		if (!ok && (errno == EINVAL || errno == ENOTTY)) {
			/* before Linux 5.8: the fd, then the flags */
			ok = ioctl(lfd, LOOP_SET_FD, bfd) == 0;
			if (ok && ioctl(lfd, LOOP_SET_STATUS64, &cfg.info)) {
				ioctl(lfd, LOOP_CLR_FD, 0);
				ok = 0;
			}
		}
		if (ok) {
			r->loopfd = lfd;
			ret = 0;
		} else {
			int e = errno;
			close(lfd);
			if (e != EBUSY)
				snprintf(err, errn, "%s: attaching %s: %s", r->loop, file, strerror(e));
			if (e != EBUSY)
				break;
		}
	}
	close(bfd);
	close(ctl);
	if (ret)
		r->loop[0] = 0;
	return ret;
}

/* Runs argv (a program under /usr/bin, /bin, /usr/sbin or /sbin), its output
 * (both streams, at most MAX_CHECK_OUTPUT bytes kept) into out. Exit status, or -1. */
static int run_tool(char *const argv[], struct strbuf *out)
{
	static const char *const dirs[] = {"/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"};
	char prog[256] = "";
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs) && !prog[0]; i++) {
		snprintf(prog, sizeof(prog), "%s%s", dirs[i], argv[0]);
		if (access(prog, X_OK))
			prog[0] = 0;
	}
	if (!prog[0])
		return sb_printf(out, "%s: not installed", argv[0]), -1;
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return sb_printf(out, "pipe: %s", strerror(errno)), -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return sb_printf(out, "fork: %s", strerror(errno)), -1;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		execv(prog, argv);
		_exit(127);
	}
	close(p[1]);
	char buf[4096];
	ssize_t n;
	for (;;) {
		struct pollfd pf = {p[0], POLLIN, 0};
		int pr = poll(&pf, 1, 500);
		if (stop_signal) {
			kill(pid, SIGKILL);
			break;
		}
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		if ((n = read(p[0], buf, sizeof(buf))) <= 0)
			break;
		if (out->len < MAX_CHECK_OUTPUT)
			sb_printf(out, "%.*s", (int)n, buf);
	}
	close(p[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void cleanup(struct run *r)
{
	if (r->mounted) {
		for (int i = 0; i < 20 && umount2(r->mnt, 0) && errno == EBUSY; i++)
			usleep(100000);
		if (umount2(r->mnt, 0) && errno != EINVAL && errno != ENOENT)
			umount2(r->mnt, MNT_DETACH);
		r->mounted = 0;
	}
	if (r->loop[0]) {
		char *forget[] = {"btrfs", "device", "scan", "--forget", r->loop, NULL};
		struct strbuf o = {0};
		run_tool(forget, &o); /* the kernel drops its record of our device */
		sb_free(&o);
	}
	if (r->loopfd > 0) {
		ioctl(r->loopfd, LOOP_CLR_FD, 0);
		close(r->loopfd);
		r->loopfd = 0;
	}
	if (r->mnt[0])
		rmdir(r->mnt);
	if (r->copy[0] && !r->in_place)
		unlink(r->copy);
	if (r->tmp[0])
		rmdir(r->tmp);
}

/* s as a JSON string: escapes, and \u00XX for each byte that is not valid UTF-8. */
static void json_str(struct strbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	sb_printf(b, "\"");
	while (*p) {
		unsigned c = *p;
		int len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		int ok = len > 0;
		for (int i = 1; ok && i < len; i++)
			ok = (p[i] & 0xc0) == 0x80;
		/* overlong forms, surrogates, past U+10FFFF (RFC 3629) */
		if (ok && len == 2 && c < 0xc2)
			ok = 0;
		if (ok && len == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0)))
			ok = 0;
		if (ok && len == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90) || c > 0xf4))
			ok = 0;
		if (!ok) {
			sb_printf(b, "\\u%04x", c);
			p++;
		} else if (len > 1) {
			sb_printf(b, "%.*s", len, (const char *)p);
			p += len;
		} else if (c == '"' || c == '\\') {
			sb_printf(b, "\\%c", c);
			p++;
		} else if (c < 0x20 || c == 0x7f) {
			sb_printf(b, "\\u%04x", c);
			p++;
		} else {
			sb_printf(b, "%c", c);
			p++;
		}
	}
	sb_printf(b, "\"");
}

/* The log_root of IMAGE's primary superblock (0: none, or not btrfs). */
static u64 pending_log(const char *image)
{
	u8 sb[BTRFS_SUPER_INFO_SIZE];
	int fd = open(image, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = pread(fd, sb, sizeof(sb), BTRFS_SUPER_INFO_OFFSET);
	close(fd);
	/* a superblock whose checksum fails is not the kernel's to read: no log either */
	if (n != (ssize_t)sizeof(sb) || memcmp(sb + 0x40, "_BHRfS_M", 8) ||
	    get_le32(sb) != crc32c(sb + BTRFS_CSUM_SIZE, BTRFS_SUPER_INFO_SIZE - BTRFS_CSUM_SIZE))
		return 0;
	return btrfs_super_log_root(sb);
}

void kernel_catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int kernel_inspect(const char *image, int in_place, struct kernel_view *v)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	r.in_place = in_place;
	memset(v, 0, sizeof(*v));
	struct listing *lp = &v->files;
	v->log_root = pending_log(image);
	struct utsname u;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	snprintf(v->release, sizeof(v->release), "%s", u.release);
	char *err = v->err;
	size_t errn = sizeof(v->err);

	snprintf(r.tmp, sizeof(r.tmp), "/tmp/btrfslab-kernel-XXXXXX");
	if (!mkdtemp(r.tmp))
		return snprintf(err, errn, "a private directory: %s", strerror(errno)), -1;
	snprintf(r.mnt, sizeof(r.mnt), "%s/mnt", r.tmp);
	if (in_place)
		snprintf(r.copy, sizeof(r.copy), "%s", image);
	else
		snprintf(r.copy, sizeof(r.copy), "%s/image", r.tmp);
	if (mkdir(r.mnt, 0700) || (!in_place && sparse_copy(image, r.copy, err, errn)) ||
	    attach_loop(&r, in_place ? image : r.copy, err, errn)) {
		if (!err[0])
			snprintf(err, errn, "%s", strerror(errno));
		cleanup(&r);
		return -1;
	}
	/* subvolid=5: the top level whatever subvolume set-default chose, so the
	 * whole filesystem is listed, as `btrfslab ls` lists it */
	if (!stop_signal && mount(r.loop, r.mnt, "btrfs", 0, "subvolid=5")) {
		snprintf(v->mount_err, sizeof(v->mount_err), "mount: %s (the kernel's log says why: dmesg)", strerror(errno));
	} else if (!stop_signal) {
		r.mounted = 1;
		char path[MAX_PATH] = "/";
		struct stat st;
		int root = open(r.mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (root < 0 || fstat(root, &st) || add_file(lp, "/", &st) || walk(lp, root, path, 1, 0)) {
			if (!lp->error[0])
				snprintf(lp->error, sizeof(lp->error), "%s", strerror(errno));
		}
		if (root >= 0)
			close(root);
		qsort(lp->v, lp->n, sizeof(*lp->v), cmp_path);
		if (umount2(r.mnt, 0) == 0)
			r.mounted = 0;
	}
	if (!stop_signal) {
		if (r.mounted)
			cleanup(&r); /* could not unmount: no check of a mounted device */
		else {
			char *argv_check[] = {"btrfs", "check", "--readonly", r.loop, NULL};
			v->check_ok = run_tool(argv_check, &v->check) == 0;
		}
	}
	v->stopped = (int)stop_signal;
	cleanup(&r);
	return 0;
}

int cmd_kernel(int argc, char **argv, int variant)
{
	(void)variant;
	const char *image = NULL;
	int json = 0, in_place = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--in-place"))
			in_place = 1;
		else if (argv[i][0] == '-' && argv[i][1])
			return fprintf(stderr, "btrfslab kernel: unknown option '%s'\n", argv[i]), 2;
		else if (image)
			return fprintf(stderr, "btrfslab kernel: unexpected argument '%s'\n", argv[i]), 2;
		else
			image = argv[i];
	}
	if (!image)
		return fprintf(stderr, "btrfslab kernel: missing IMAGE\n"), 2;
	if (geteuid() != 0)
		return fprintf(stderr, "btrfslab kernel: needs root (to attach a loop device and mount %s); run it with sudo\n", image), 1;
	struct stat ist;
	if (stat(image, &ist) || !S_ISREG(ist.st_mode))
		return fprintf(stderr, "btrfslab kernel: %s: %s\n", image, errno ? strerror(errno) : "not a regular file"), 1;

	kernel_catch_signals();

	struct kernel_view kv;
	int rc = 1;
	if (kernel_inspect(image, in_place, &kv)) {
		fprintf(stderr, "btrfslab kernel: %s\n", kv.err);
		return 1;
	}
	struct listing l = kv.files;
	const char *mount_err = kv.mount_err;
	struct strbuf check = kv.check;
	int check_ok = kv.check_ok;
	u64 log_root = kv.log_root;
	struct utsname u;
	snprintf(u.release, sizeof(u.release), "%s", kv.release);
	int stopped = kv.stopped;
	if (stopped) {
		fprintf(stderr, "btrfslab kernel: interrupted by signal %d; the loop device and mount are cleaned up\n", stopped);
		rc = 128 + stopped;
		goto out;
	}
	int ok = !mount_err[0] && !l.error[0] && check_ok;
	rc = ok ? 0 : 1;
	struct strbuf o = {0};
	if (json) {
		sb_printf(&o, "{\"image\":");
		json_str(&o, image);
		sb_printf(&o, ",\"kernel\":");
		json_str(&o, u.release);
		sb_printf(&o, ",\"log_pending\":%s,\"mount\":{\"ok\":%s,\"error\":", log_root ? "true" : "false", mount_err[0] ? "false" : "true");
		if (mount_err[0] || l.error[0])
			json_str(&o, mount_err[0] ? mount_err : l.error);
		else
			sb_printf(&o, "null");
		sb_printf(&o, "},\"files\":[");
		for (size_t i = 0; i < l.n; i++) {
			const struct kfile *f = &l.v[i];
			sb_printf(&o, "%s{\"path\":", i ? "," : "");
			json_str(&o, f->path);
			sb_printf(&o, ",\"type\":\"%s\",\"mode\":%u,\"nlink\":%llu,\"size\":%llu", f->type, f->mode, f->nlink, f->size);
			if (!strcmp(f->type, "file"))
				sb_printf(&o, ",\"sha256\":\"%s\"", f->sha);
			if (f->target) {
				sb_printf(&o, ",\"target\":");
				json_str(&o, f->target);
			}
			sb_printf(&o, "}");
		}
		sb_printf(&o, "],\"check\":{\"ok\":%s,\"output\":", check_ok ? "true" : "false");
		json_str(&o, check.s ? check.s : "");
		sb_printf(&o, "},\"ok\":%s}\n", ok ? "true" : "false");
	} else {
		sb_printf(&o, "kernel %s, %s%s\n", u.release, image, in_place ? "" : " (a private copy)");
		sb_printf(&o, "log: %s\n", log_root ? "pending: the mount replayed it" : "none pending");
		if (mount_err[0])
			sb_printf(&o, "mount: failed: %s\n", mount_err);
		else {
			sb_printf(&o, "mount: ok; %zu paths%s%s\n", l.n, l.error[0] ? "; the listing stopped: " : "", l.error);
			for (size_t i = 0; i < l.n; i++) {
				const struct kfile *f = &l.v[i];
				struct strbuf p = {0};
				json_str(&p, f->path);
				sb_printf(&o, "  %-7s %04o %3llu %12llu  %s", f->type, f->mode, f->nlink, f->size, p.s ? p.s : "");
				sb_free(&p);
				if (f->target) {
					struct strbuf t = {0};
					json_str(&t, f->target);
					sb_printf(&o, " -> %s", t.s ? t.s : "");
					sb_free(&t);
				}
				if (!strcmp(f->type, "file"))
					sb_printf(&o, "  sha256 %.16s…", f->sha);
				sb_printf(&o, "\n");
			}
		}
		sb_printf(&o, "btrfs check: %s\n", check_ok ? "ok" : "FAILED");
		if (!check_ok && check.s)
			sb_printf(&o, "%s%s", check.s, check.len && check.s[check.len - 1] == '\n' ? "" : "\n");
	}
	fputs(o.s ? o.s : "", stdout);
	sb_free(&o);
out:
	kernel_view_free(&kv);
	return rc;
}

void kernel_view_free(struct kernel_view *v)
{
	for (size_t i = 0; i < v->files.n; i++) {
		free(v->files.v[i].path);
		free(v->files.v[i].target);
	}
	free(v->files.v);
	sb_free(&v->check);
	memset(v, 0, sizeof(*v));
}

/* ---------------------------------------------------------------------- */
/* The core's own view, in the same shape (for `crashes --kernel`)          */

struct core_walk {
	struct btrfs_fs_info *fs;
	struct btrfs_root *root; /* the tree of the directory being read (subvolumes have their own) */
	struct listing *l;
	char path[MAX_PATH];
	size_t plen;
	int depth;
};

static int core_entry(void *ctx, const char *name, u16 len, u64 ino, u8 type);

static int core_dir(struct core_walk *w, struct btrfs_root *root, u64 dir)
{
	if (w->depth++ > MAX_DEPTH)
		return lfail(w->l, "%s: deeper than %d directories", w->path, MAX_DEPTH);
	struct btrfs_root *was = w->root;
	w->root = root;
	int ret = btrfs_readdir(w->fs, root, dir, core_entry, w);
	w->root = was;
	w->depth--;
	if (ret < 0 && !w->l->error[0])
		lfail(w->l, "%s: %s", w->path, w->fs->err.msg);
	return ret ? -1 : 0;
}

static int core_entry(void *ctx, const char *name, u16 len, u64 ino, u8 type)
{
	struct core_walk *w = ctx;
	struct btrfs_root *root = w->root;
	if (type & BTRFS_FT_EMPTY_SUBVOL) {
		/* where another subvolume was when this one was snapshotted: the
		 * kernel shows an empty directory */
		if (w->l->n >= MAX_ENTRIES || w->plen + 1 + len >= MAX_PATH)
			return lfail(w->l, "%s: too many paths or too long a path", w->path);
		char p[MAX_PATH];
		snprintf(p, sizeof(p), "%s%s%.*s", w->path, w->plen > 1 ? "/" : "", len, name);
		struct stat st;
		memset(&st, 0, sizeof(st));
		st.st_mode = S_IFDIR | 0755;
		st.st_nlink = 1;
		return add_file(w->l, p, &st) ? (lfail(w->l, "out of memory"), 1) : 0;
	}
	if ((type & BTRFS_FT_SUBVOL) && !(root = btrfs_subvol_root(w->fs, ino, &ino)))
		return lfail(w->l, "%s/%.*s: %s", w->path, len, name, w->fs->err.msg), 1;
	if (w->l->n >= MAX_ENTRIES || w->plen + 1 + len >= MAX_PATH)
		return lfail(w->l, "%s: too many paths or too long a path", w->path);
	size_t was = w->plen, at = w->plen;
	if (at > 1)
		w->path[at++] = '/';
	memcpy(w->path + at, name, len);
	w->path[at + len] = 0;
	w->plen = at + len;
	struct btrfs_inode in;
	struct stat st;
	memset(&st, 0, sizeof(st));
	int ret = btrfs_read_inode(w->fs, root, ino, &in);
	if (!ret) {
		st.st_mode = in.mode;
		st.st_nlink = in.nlink;
		st.st_size = (off_t)in.size;
		ret = add_file(w->l, w->path, &st) ? BLAB_ENOMEM : 0;
	}
	if (!ret && (S_ISREG(in.mode) || S_ISLNK(in.mode))) {
		struct kfile *f = &w->l->v[w->l->n - 1];
		struct sha256 s;
		sha256_init(&s);
		static u8 buf[1 << 16];
		char *target = S_ISLNK(in.mode) ? malloc(in.size + 1) : NULL;
		for (u64 off = 0; !ret && off < in.size;) {
			u64 want = in.size - off < sizeof(buf) ? in.size - off : sizeof(buf), got = 0;
			ret = S_ISREG(in.mode) ? btrfs_file_read(w->fs, root, ino, off, buf, want, &got, 1)
					       : btrfs_file_read_any(w->fs, root, ino, off, buf, want, &got);
			if (!ret && !got)
				ret = BLAB_ECORRUPT;
			if (!ret) {
				sha256_update(&s, buf, (size_t)got);
				if (target)
					memcpy(target + off, buf, (size_t)got);
				off += got;
			}
		}
		if (S_ISREG(in.mode))
			sha256_hex(&s, f->sha);
		if (target) {
			target[ret ? 0 : in.size] = 0;
			f->target = target;
		}
	}
	if (!ret && S_ISDIR(in.mode))
		ret = core_dir(w, root, ino);
	w->plen = was;
	w->path[was] = 0;
	if (ret && !w->l->error[0])
		lfail(w->l, "%s: %s", w->path, w->fs->err.msg);
	return ret ? 1 : 0;
}

int core_listing(struct btrfs_fs_info *fs, struct listing *l)
{
	memset(l, 0, sizeof(*l));
	struct btrfs_inode in;
	struct stat st;
	memset(&st, 0, sizeof(st));
	u64 root = BTRFS_FIRST_FREE_OBJECTID; /* the fs tree's root directory */
	if (btrfs_read_inode(fs, fs->fs_root, root, &in))
		return lfail(l, "the root directory: %s", fs->err.msg);
	st.st_mode = in.mode;
	st.st_nlink = in.nlink;
	st.st_size = (off_t)in.size;
	if (add_file(l, "/", &st))
		return lfail(l, "out of memory");
	struct core_walk w = {.fs = fs, .l = l, .path = "/", .plen = 1};
	int ret = core_dir(&w, fs->fs_root, root);
	qsort(l->v, l->n, sizeof(*l->v), cmp_path);
	return ret;
}

int listings_differ(const struct listing *kernel, const struct listing *core, char *out, size_t n)
{
	size_t i = 0, j = 0;
	while (i < kernel->n || j < core->n) {
		int c = i == kernel->n ? 1 : j == core->n ? -1 : strcmp(kernel->v[i].path, core->v[j].path);
		if (c < 0)
			return snprintf(out, n, "%s is in the kernel's replay, not in the core's", kernel->v[i].path), 1;
		if (c > 0)
			return snprintf(out, n, "%s is in the core's replay, not in the kernel's", core->v[j].path), 1;
		const struct kfile *a = &kernel->v[i], *b = &core->v[j];
		const char *what = strcmp(a->type, b->type) ? "type" : a->mode != b->mode ? "mode" : a->nlink != b->nlink ? "link count"
				 : a->size != b->size ? "size" : strcmp(a->sha, b->sha) ? "contents"
				 : (a->target || b->target) && (!a->target || !b->target || strcmp(a->target, b->target)) ? "target" : NULL;
		if (what && strcmp(a->path, "/"))
			return snprintf(out, n, "%s: its %s differs between the kernel's replay and the core's", a->path, what), 1;
		i++;
		j++;
	}
	return 0;
}

void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].target);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
