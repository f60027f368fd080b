/* blab-guest: the guest's own tools, beside busybox, for workloads that need
 * many system calls fast or a time measured around one call. Built static
 * (gcc -static) by scripts/guest/kernel.mjs and put in the initramfs as
 * /bin/blab. Every command prints one line of figures on standard output;
 * an error prints "blab: ..." on standard error and exits 1.
 *
 *   blab create DIR N            DIR/file_1 .. file_N, empty     -> ms
 *   blab cwf DIR N SIZE          create, write SIZE bytes, fsync each file -> ms
 *   blab unlink-step DIR N STEP  unlink DIR/file_i, i = 1, 1+STEP, ... <= N -> ms count
 *   blab fsync PATH              fsync(2) of PATH opened O_RDONLY -> ms (the call alone)
 *   blab capture SRC DST         copy block device SRC to DST (O_DIRECT reads; DST is
 *                                zero to start with, so zero blocks are skipped) -> bytes ms
 *   blab supergen DEV            the btrfs superblock's generation (O_DIRECT read)
 *   blab waitmark DEV N          wait until DEV's last 4 KiB read (O_DIRECT) "BLABMARK" and N
 *                                (the host writes it there when it has done what the guest
 *                                asked on the console, e.g. copied the image) -> ms waited
 *   blab now                     CLOCK_MONOTONIC in ms
 * and the scenario language's file commands, for a scenario done by a kernel:
 *   blab write FILE OFF LEN SEED  the bytes `write FILE OFF LEN SEED` writes (the core's pattern)
 *   blab truncate FILE SIZE       truncate(2)
 *   blab rename FROM TO           rename(2)
 *   blab setxattr PATH NAME VALUE lsetxattr(2)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int die(const char *what, const char *arg)
{
	fprintf(stderr, "blab: %s %s: %s\n", what, arg ? arg : "", strerror(errno));
	return 1;
}

static int number(const char *s, long *out)
{
	char *end;
	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || *end || *out < 0) {
		fprintf(stderr, "blab: '%s' is not a count\n", s);
		return -1;
	}
	return 0;
}

static int do_create(const char *dir, long n, long size)
{
	char path[4096];
	static char buf[1 << 16];
	memset(buf, 'a', sizeof(buf));
	double t = now_ms();
	for (long i = 1; i <= n; i++) {
		snprintf(path, sizeof(path), "%s/file_%ld", dir, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return die("open", path);
		for (long done = 0; done < size;) {
			long k = size - done < (long)sizeof(buf) ? size - done : (long)sizeof(buf);
			ssize_t w = write(fd, buf, k);
			if (w <= 0)
				return die("write", path);
			done += w;
		}
		if (size >= 0 && fsync(fd))
			return die("fsync", path);
		close(fd);
	}
	printf("%.3f\n", now_ms() - t);
	return 0;
}

static int do_unlink_step(const char *dir, long n, long step)
{
	char path[4096];
	long k = 0;
	if (step < 1) {
		fprintf(stderr, "blab: step must be at least 1\n");
		return 1;
	}
	double t = now_ms();
	for (long i = 1; i <= n; i += step, k++) {
		snprintf(path, sizeof(path), "%s/file_%ld", dir, i);
		if (unlink(path))
			return die("unlink", path);
	}
	printf("%.3f %ld\n", now_ms() - t, k);
	return 0;
}

static int do_fsync(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return die("open", path);
	double t = now_ms();
	if (fsync(fd))
		return die("fsync", path);
	double dt = now_ms() - t;
	close(fd);
	printf("%.3f\n", dt);
	return 0;
}

#define CHUNK (1 << 20)

static int all_zero(const uint64_t *p, size_t n)
{
	for (size_t i = 0; i < n / 8; i++)
		if (p[i])
			return 0;
	return 1;
}

static int do_capture(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_DIRECT), out = open(dst, O_WRONLY);
	uint64_t size = 0, copied = 0;
	void *buf;
	if (in < 0)
		return die("open", src);
	if (out < 0)
		return die("open", dst);
	if (ioctl(in, BLKGETSIZE64, &size))
		return die("BLKGETSIZE64", src);
	if (posix_memalign(&buf, 4096, CHUNK))
		return die("memory", "");
	double t = now_ms();
	for (uint64_t off = 0; off < size; off += CHUNK) {
		size_t len = size - off < CHUNK ? size - off : CHUNK;
		ssize_t r = pread(in, buf, len, off);
		if (r != (ssize_t)len)
			return die("read", src);
		if (all_zero(buf, len))
			continue;
		if (pwrite(out, buf, len, off) != (ssize_t)len)
			return die("write", dst);
		copied += len;
	}
	if (fsync(out))
		return die("fsync", dst);
	printf("%llu %.3f\n", (unsigned long long)copied, now_ms() - t);
	return 0;
}

static int do_supergen(const char *dev)
{
	void *buf;
	int fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return die("open", dev);
	if (posix_memalign(&buf, 4096, 4096))
		return die("memory", "");
	if (pread(fd, buf, 4096, 65536) != 4096)
		return die("read", dev);
	if (memcmp((char *)buf + 64, "_BHRfS_M", 8)) {
		fprintf(stderr, "blab: %s: no btrfs superblock at 64 KiB\n", dev);
		return 1;
	}
	uint64_t gen;
	memcpy(&gen, (char *)buf + 72, 8);
	printf("%llu\n", (unsigned long long)gen);
	return 0;
}

static int do_waitmark(const char *dev, long n)
{
	void *buf;
	uint64_t size = 0;
	int fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0)
		return die("open", dev);
	if (ioctl(fd, BLKGETSIZE64, &size) || size < 4096)
		return die("BLKGETSIZE64", dev);
	if (posix_memalign(&buf, 4096, 4096))
		return die("memory", "");
	double t = now_ms();
	for (;;) {
		if (pread(fd, buf, 4096, size - 4096) != 4096)
			return die("read", dev);
		char want[32];
		int k = snprintf(want, sizeof(want), "BLABMARK %ld\n", n);
		if (!memcmp(buf, want, k))
			break;
		if (now_ms() - t > 600e3) {
			fprintf(stderr, "blab: no mark %ld on %s after 600 s\n", n, dev);
			return 1;
		}
		usleep(5000);
	}
	printf("%.3f\n", now_ms() - t);
	return 0;
}

/* the scenario language's data: byte pos of a write with seed is byte
 * (pos & 7) of a splitmix64 mix of seed * golden + (pos >> 3) + golden
 * (tests/kernel/model.mjs dataBytes gives the same bytes) */
static uint64_t pattern_word(uint64_t seed, uint64_t w)
{
	const uint64_t golden = 0x9E3779B97F4A7C15ULL;
	uint64_t z = seed * golden + w + golden;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static int do_write(const char *path, long off, long len, long seed)
{
	static unsigned char buf[1 << 16];
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return die("open", path);
	for (long done = 0; done < len;) {
		long k = len - done < (long)sizeof(buf) ? len - done : (long)sizeof(buf);
		for (long i = 0; i < k; i++) {
			uint64_t pos = (uint64_t)(off + done + i);
			buf[i] = (unsigned char)(pattern_word((uint64_t)seed, pos >> 3) >> ((pos & 7) * 8));
		}
		ssize_t w = pwrite(fd, buf, k, off + done);
		if (w <= 0)
			return die("write", path);
		done += w;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	long a, b;
	const char *cmd = argc > 1 ? argv[1] : "";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "create") && argc == 4)
		return number(argv[3], &a) ? 1 : do_create(argv[2], a, -1);
	if (!strcmp(cmd, "cwf") && argc == 5)
		return number(argv[3], &a) || number(argv[4], &b) ? 1 : do_create(argv[2], a, b);
	if (!strcmp(cmd, "unlink-step") && argc == 5)
		return number(argv[3], &a) || number(argv[4], &b) ? 1 : do_unlink_step(argv[2], a, b);
	if (!strcmp(cmd, "fsync") && argc == 3)
		return do_fsync(argv[2]);
	if (!strcmp(cmd, "capture") && argc == 4)
		return do_capture(argv[2], argv[3]);
	if (!strcmp(cmd, "supergen") && argc == 3)
		return do_supergen(argv[2]);
	if (!strcmp(cmd, "write") && argc == 6) {
		long off, len, seed;
		return number(argv[3], &off) || number(argv[4], &len) || number(argv[5], &seed) ? 1 : do_write(argv[2], off, len, seed);
	}
	if (!strcmp(cmd, "truncate") && argc == 4)
		return number(argv[3], &a) ? 1 : truncate(argv[2], a) ? die("truncate", argv[2]) : 0;
	if (!strcmp(cmd, "rename") && argc == 4)
		return rename(argv[2], argv[3]) ? die("rename", argv[2]) : 0;
	if (!strcmp(cmd, "setxattr") && argc == 5)
		return lsetxattr(argv[2], argv[3], argv[4], strlen(argv[4]), 0) ? die("setxattr", argv[2]) : 0;
	if (!strcmp(cmd, "waitmark") && argc == 4)
		return number(argv[3], &a) ? 1 : do_waitmark(argv[2], a);
	if (!strcmp(cmd, "now") && argc == 2) {
		printf("%.3f\n", now_ms());
		return 0;
	}
	fprintf(stderr, "usage: blab create DIR N | cwf DIR N SIZE | unlink-step DIR N STEP | fsync PATH |\n"
			"       capture SRC DST | supergen DEV | waitmark DEV N | now |\n"
			"       write FILE OFF LEN SEED | truncate FILE SIZE | rename FROM TO | setxattr PATH NAME VALUE\n");
	return 2;
}
