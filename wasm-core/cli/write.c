/* write.c — `btrfslab write IMAGE DEVICE`: an image onto a real device,
 * carefully.
 *
 * Nothing is written until every check passed: IMAGE opens as a btrfs
 * filesystem (the core's own open: superblock, chunk and root trees);
 * DEVICE is a block device (or an existing regular file), not IMAGE itself
 * (compared by device and inode numbers, so a hard link or a loop device
 * backed by IMAGE is caught too), not mounted and with no mounted
 * partition, held by nothing (no holders, and opened O_EXCL for the whole
 * write), with no other loop device over the same backing file in use, at
 * least as large as the filesystem reaches (its chunks and dev extents, not
 * only what its superblock claims), with no signature libblkid knows
 * (filesystems, RAID and crypto headers, partition tables, probed as
 * wipefs does; unless --force), and a loop device unless --device-ok names
 * it again.
 *
 * Then, in an order that never leaves a half-written filesystem that looks
 * whole: every superblock location on the device (64 KiB, 64 MiB, 256 GiB)
 * is zeroed and flushed; the ranges the image does not use are discarded
 * where the device can (zeroed instead with --zero, else left as they are);
 * the image's data ranges (SEEK_DATA) are written, superblock copies
 * excepted, and flushed; the superblocks are written last and flushed. An
 * interruption (SIGINT, SIGTERM, SIGHUP) or an I/O error stops it there,
 * says how far it got, and leaves no valid superblock behind. Last, what
 * was written is read back past the page cache and compared, 64 KiB at a
 * time; a mismatch names the first bad block.
 *
 * Test hooks, compiled in only with -DBLAB_TEST_HOOKS (the Makefile's
 * build/btrfslab-testhooks; the release binary ignores them), from the
 * environment: BTRFSLAB_WRITE_FAIL_AFTER=BYTES fails the data
 * writes with EIO once that many bytes are written; BTRFSLAB_WRITE_CORRUPT_AT
 * =OFFSET flips a byte on the device after the writes, before the read-back
 * (a device that lies); BTRFSLAB_WRITE_PAUSE_AFTER=BYTES stops once that
 * many data bytes are written, says "paused" on stderr, and waits for a
 * signal (so a test interrupts it at a known point, not after a guessed
 * time). */
#define _GNU_SOURCE
#include "write.h"
#include "write-plan.h"
#include "../src/wallclock.h"
#include "../src/crc32c.h"
#include "../src/array.h"
#include "../src/disk-io.h"
#include "../src/image.h"
#include "../src/ondisk.h"
#include <blkid/blkid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1u << 20)
#define VERIFY_BLOCK (1u << 20)

static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

/* The data ranges of the image file below limit (SEEK_DATA), in *out. 0, or -1 out of memory. */
static int data_ranges(int img, u64 limit, struct write_range **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	for (u64 pos = 0; pos < limit;) {
		off_t d = lseek(img, (off_t)pos, SEEK_DATA);
		if (d < 0)
			break;
		off_t h = lseek(img, d, SEEK_HOLE);
		u64 e = h < 0 || (u64)h > limit ? limit : (u64)h;
		if ((u64)d >= e)
			break;
		if (array_room(out, *n, &cap, sizeof(**out), 64))
			return free(*out), *out = NULL, -1;
		(*out)[(*n)++] = (struct write_range){(u64)d, e};
		pos = e;
	}
	return 0;
}

/* "loop", "dm-3": the kernel's name of block device rdev. */
static int block_name(dev_t rdev, char *out, size_t n)
{
	char link[64], target[256];
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	ssize_t l = readlink(link, target, sizeof(target) - 1);
	if (l < 0)
		return -1;
	target[l] = 0;
	const char *base = strrchr(target, '/');
	snprintf(out, n, "%s", base ? base + 1 : target);
	return 0;
}

/* Whether a filesystem mounted anywhere sits on rdev or a partition of it. */
static int mounted_on(dev_t rdev, char *what, size_t n)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return 0;
	char name[64] = "";
	block_name(rdev, name, sizeof(name));
	char line[4096];
	int found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		char mnt[2048], source[1024];
		if (sscanf(line, "%*u %*u %u:%u %*s %2047s", &maj, &min, mnt) != 3)
			continue;
		dev_t d = makedev(maj, min);
		/* btrfs shows an anonymous device number there: the mount's source names the device */
		const char *sep = strstr(line, " - ");
		struct stat ss;
		if (sep && sscanf(sep + 3, "%*s %1023s", source) == 1 && source[0] == '/' && !stat(source, &ss) && S_ISBLK(ss.st_mode))
			d = ss.st_rdev;
		char dn[64] = "";
		int part = 0;
		if (d != rdev && name[0] && !block_name(d, dn, sizeof(dn))) {
			/* a partition of ours: /sys/class/block/NAME/DN exists */
			char p[256];
			snprintf(p, sizeof(p), "/sys/class/block/%s/%s", name, dn);
			part = access(p, F_OK) == 0;
		}
		if (d == rdev || part) {
			snprintf(what, n, "%s is mounted on %s", part ? dn : name, mnt);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

/* Whether something holds rdev (device-mapper, md, bcache...). */
static int held(dev_t rdev, char *what, size_t n)
{
	char p[128];
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/holders", major(rdev), minor(rdev));
	DIR *d = opendir(p);
	if (!d)
		return 0;
	struct dirent *e;
	int found = 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(what, n, "held by %s", e->d_name);
		found = 1;
	}
	closedir(d);
	return found;
}

/* An attached loop device and the identity (device and inode numbers) of
 * its backing file, as sysfs names it (backing_file, then stat) and as the
 * driver says (LOOP_GET_STATUS64's lo_device and lo_inode): a path may be a
 * hard link, renamed or deleted, the numbers are the file's. */
struct loop_dev {
	char name[32];
	dev_t rdev;
	int have_sys, have_ioctl;
	dev_t sys_dev, ioc_dev;
	ino_t sys_ino, ioc_ino;
};

static int loop_backed_by(const struct loop_dev *l, dev_t dev, ino_t ino)
{
	return (l->have_sys && l->sys_dev == dev && l->sys_ino == ino) || (l->have_ioctl && l->ioc_dev == dev && l->ioc_ino == ino);
}

static int loop_same_backing(const struct loop_dev *a, const struct loop_dev *b)
{
	return (b->have_sys && loop_backed_by(a, b->sys_dev, b->sys_ino)) || (b->have_ioctl && loop_backed_by(a, b->ioc_dev, b->ioc_ino));
}

/* Every attached loop device (a growing array in *out). */
static size_t loop_devices(struct loop_dev **out)
{
	size_t n = 0, cap = 0;
	*out = NULL;
	DIR *d = opendir("/sys/block");
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "loop", 4) || strlen(e->d_name) >= sizeof((*out)->name))
			continue;
		char p[300], b[4096];
		unsigned maj, min;
		snprintf(p, sizeof(p), "/sys/block/%s/dev", e->d_name);
		FILE *f = fopen(p, "r");
		int ok = f && fscanf(f, "%u:%u", &maj, &min) == 2;
		if (f)
			fclose(f);
		if (!ok)
			continue;
		struct loop_dev l = {.rdev = makedev(maj, min)};
		snprintf(l.name, sizeof(l.name), "%s", e->d_name);
		snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file", e->d_name);
		if ((f = fopen(p, "r"))) {
			struct stat st;
			if (fgets(b, sizeof(b), f)) {
				b[strcspn(b, "\n")] = 0;
				if (!stat(b, &st)) {
					l.have_sys = 1;
					l.sys_dev = st.st_dev;
					l.sys_ino = st.st_ino;
				}
			}
			fclose(f);
		}
		snprintf(p, sizeof(p), "/dev/%s", e->d_name);
		int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		struct loop_info64 li;
		if (fd >= 0 && !fstat(fd, &st) && S_ISBLK(st.st_mode) && st.st_rdev == l.rdev && !ioctl(fd, LOOP_GET_STATUS64, &li)) {
			l.have_ioctl = 1;
			l.ioc_dev = (dev_t)li.lo_device;
			l.ioc_ino = (ino_t)li.lo_inode;
		}
		if (fd >= 0)
			close(fd);
		if (!l.have_sys && !l.have_ioctl)
			continue; /* not attached */
		if (array_room(out, n, &cap, sizeof(**out), 16))
			break;
		(*out)[n++] = l;
	}
	closedir(d);
	return n;
}

static const struct loop_dev *loop_of(const struct loop_dev *loops, size_t n, dev_t rdev)
{
	for (size_t i = 0; i < n; i++)
		if (loops[i].rdev == rdev)
			return &loops[i];
	return NULL;
}

/* Whether IMAGE and DEVICE are one and the same storage: the same file
 * (a hard link too), the same block device, a loop device over the other,
 * or two loop devices over one file. why says which. */
static int same_storage(const struct stat *a, const struct stat *b, const struct loop_dev *loops, size_t nloops, char *why, size_t n)
{
	if (S_ISREG(a->st_mode) && S_ISREG(b->st_mode) && a->st_dev == b->st_dev && a->st_ino == b->st_ino)
		return snprintf(why, n, "it is the image itself (the same file: device %u:%u, inode %llu)", major(a->st_dev),
				minor(a->st_dev), (unsigned long long)a->st_ino), 1;
	if (S_ISBLK(a->st_mode) && S_ISBLK(b->st_mode) && a->st_rdev == b->st_rdev)
		return snprintf(why, n, "it is the image itself (the same block device)"), 1;
	for (int k = 0; k < 2; k++) {
		const struct stat *blk = k ? a : b, *other = k ? b : a;
		const struct loop_dev *l = S_ISBLK(blk->st_mode) ? loop_of(loops, nloops, blk->st_rdev) : NULL;
		if (!l)
			continue;
		if (S_ISREG(other->st_mode) && loop_backed_by(l, other->st_dev, other->st_ino))
			return snprintf(why, n, k ? "the image is /dev/%s, a loop device backed by this file" : "it is /dev/%s, a loop device backed by the image file",
					l->name), 1;
		const struct loop_dev *o = S_ISBLK(other->st_mode) ? loop_of(loops, nloops, other->st_rdev) : NULL;
		if (o && loop_same_backing(l, o))
			return snprintf(why, n, "it (/dev/%s) and the image (/dev/%s) are loop devices over the same file", k ? o->name : l->name,
					k ? l->name : o->name), 1;
	}
	return 0;
}

/* The signatures libblkid finds on the device (filesystems, RAID members,
 * crypto headers, partition tables; bad checksums included, as wipefs
 * probes), named in out ("exfat", "a gpt partition table"). The count, or
 * -1 when the device could not be probed. */
static int signatures(int fd, char *out, size_t n)
{
	out[0] = 0;
	blkid_probe pr = blkid_new_probe();
	if (!pr)
		return -1;
	int found = 0;
	if (blkid_probe_set_device(pr, fd, 0, 0)) {
		blkid_free_probe(pr);
		return -1;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	int r;
	while ((r = blkid_do_probe(pr)) == 0) {
		const char *type = NULL, *off = NULL;
		char one[160];
		if (!blkid_probe_lookup_value(pr, "TYPE", &type, NULL)) {
			blkid_probe_lookup_value(pr, "SBMAGIC_OFFSET", &off, NULL);
			snprintf(one, sizeof(one), "%s%s%s%s", type, off ? " (at byte " : "", off ? off : "", off ? ")" : "");
		} else if (!blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL)) {
			snprintf(one, sizeof(one), "a %s partition table", type);
		} else {
			continue;
		}
		size_t l = strlen(out);
		snprintf(out + l, n - l, "%s%s", found ? ", " : "", one);
		found++;
	}
	blkid_free_probe(pr);
	return r < 0 && !found ? -1 : found;
}

static void progress(int tty, u64 done, u64 total, double t0, int final)
{
	static double last;
	double t = wallclock_s();
	if (!tty || (!final && t - last < 0.2))
		return;
	last = t;
	double rate = done / (t - t0 > 1e-6 ? t - t0 : 1e-6);
	double left = rate > 0 ? (double)(total - done) / rate : 0;
	fprintf(stderr, "\r  %.1f of %.1f MiB, %.1f MiB/s, %.0f s left   %s", done / 1048576.0, total / 1048576.0, rate / 1048576.0,
		left, final ? "\n" : "");
}

static int zero_range(int fd, int is_blk, u64 s, u64 e)
{
	if (is_blk) {
		u64 r[2] = {s, e - s};
		if (!ioctl(fd, BLKZEROOUT, r))
			return 0;
	}
	static const u8 z[CHUNK];
	for (u64 o = s; o < e;) {
		size_t n = e - o < CHUNK ? (size_t)(e - o) : CHUNK;
		if (pwrite(fd, z, n, (off_t)o) != (ssize_t)n)
			return -1;
		o += n;
	}
	return 0;
}

/* Discards [s, e) where the device can; 0 also when it cannot (left as it is). */
static void discard_range(int fd, int is_blk, u64 s, u64 e, int *discarded)
{
	if (is_blk) {
		u64 r[2] = {s, e - s};
		if (!ioctl(fd, BLKDISCARD, r))
			*discarded = 1;
	} else if (!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s, (off_t)(e - s))) {
		*discarded = 1;
	}
}

int cmd_write(int argc, char **argv, int variant)
{
	(void)variant;
	const char *image = NULL, *device = NULL, *device_ok = NULL;
	int force = 0, dry = 0, zero = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--force"))
			force = 1;
		else if (!strcmp(a, "--dry-run"))
			dry = 1;
		else if (!strcmp(a, "--zero"))
			zero = 1;
		else if (!strcmp(a, "--device-ok")) {
			if (i + 1 >= argc)
				return fprintf(stderr, "btrfslab write: --device-ok needs the device named again\n"), 2;
			device_ok = argv[++i];
		} else if (a[0] == '-' && a[1])
			return fprintf(stderr, "btrfslab write: unknown option '%s'\n", a), 2;
		else if (!image)
			image = a;
		else if (!device)
			device = a;
		else
			return fprintf(stderr, "btrfslab write: unexpected argument '%s'\n", a), 2;
	}
	if (!image || !device)
		return fprintf(stderr, "btrfslab write: usage: write IMAGE DEVICE [--force] [--device-ok DEVICE] [--dry-run] [--zero]\n"), 2;

	/* the image: a filesystem the core opens */
	struct blab_device idev;
	struct blab_err err = {0};
	if (image_read_file(&idev, image, &err))
		return fprintf(stderr, "btrfslab write: %s\n", err.msg), 1;
	struct btrfs_fs_info *fs = btrfs_open_rw(&idev, &err);
	if (!fs)
		return fprintf(stderr, "btrfslab write: %s is not a filesystem to write: %s\n", image, err.msg), 1;
	u64 claimed = btrfs_super_total_bytes(fs->super), fs_bytes;
	const char *reach_by;
	if (write_plan_reach(fs, &fs_bytes, &reach_by, &err))
		return btrfs_fs_free(fs), fprintf(stderr, "btrfslab write: %s is not a filesystem to write: %s\n", image, err.msg), 1;
	btrfs_fs_free(fs);
	char reach_note[200] = "";
	if (fs_bytes > claimed)
		snprintf(reach_note, sizeof(reach_note), " (%s byte %llu; its superblock says %llu)", reach_by, (unsigned long long)fs_bytes,
			 (unsigned long long)claimed);
	int img = open(image, O_RDONLY | O_CLOEXEC);
	struct stat ist;
	if (img < 0 || fstat(img, &ist))
		return fprintf(stderr, "btrfslab write: %s: %s\n", image, strerror(errno)), 1;
	if (S_ISBLK(ist.st_mode) && ioctl(img, BLKGETSIZE64, &ist.st_size))
		return close(img), fprintf(stderr, "btrfslab write: %s: its size: %s\n", image, strerror(errno)), 1;

	/* the device: every refusal before anything is written */
	struct stat dst;
	if (stat(device, &dst))
		return close(img), fprintf(stderr, "btrfslab write: %s: %s\n", device, strerror(errno)), 1;
	int is_blk = S_ISBLK(dst.st_mode);
	if (!is_blk && !S_ISREG(dst.st_mode))
		return close(img), fprintf(stderr, "btrfslab write: %s is neither a block device nor a regular file\n", device), 1;
	char name[64] = "", why[512];
	struct loop_dev *loops;
	size_t nloops = loop_devices(&loops);
	if (same_storage(&ist, &dst, loops, nloops, why, sizeof(why)))
		return free(loops), close(img), fprintf(stderr, "btrfslab write: refusing %s: %s; writing it would destroy the image as it is read\n",
							device, why), 1;
	if (is_blk) {
		block_name(dst.st_rdev, name, sizeof(name));
		char loopdir[128];
		snprintf(loopdir, sizeof(loopdir), "/sys/dev/block/%u:%u/loop", major(dst.st_rdev), minor(dst.st_rdev));
		int is_loop = access(loopdir, F_OK) == 0;
		struct stat ok;
		if (!is_loop && !(device_ok && !stat(device_ok, &ok) && S_ISBLK(ok.st_mode) && ok.st_rdev == dst.st_rdev))
			return free(loops), close(img), fprintf(stderr,
						   "btrfslab write: %s (%s) is not a loop device: to write to it, name it again with "
						   "--device-ok %s (everything on it will be lost)\n",
						   device, name, device), 1;
		if (mounted_on(dst.st_rdev, why, sizeof(why)))
			return free(loops), close(img), fprintf(stderr, "btrfslab write: refusing %s: %s (unmount it first)\n", device, why), 1;
		if (held(dst.st_rdev, why, sizeof(why)))
			return free(loops), close(img), fprintf(stderr, "btrfslab write: refusing %s: it is in use, %s\n", device, why), 1;
		/* another loop device over the same file is the same storage: in use if it is */
		const struct loop_dev *me = loop_of(loops, nloops, dst.st_rdev);
		for (size_t k = 0; me && k < nloops; k++) {
			const struct loop_dev *o = &loops[k];
			if (o == me || !loop_same_backing(me, o))
				continue;
			char p[64], what[512] = "";
			snprintf(p, sizeof(p), "/dev/%s", o->name);
			int ofd = -1;
			if (!mounted_on(o->rdev, what, sizeof(what)) && !held(o->rdev, what, sizeof(what)) &&
			    (ofd = open(p, O_RDONLY | O_CLOEXEC | O_EXCL | O_NONBLOCK)) < 0 && errno == EBUSY)
				snprintf(what, sizeof(what), "another program holds it open exclusively");
			if (ofd >= 0)
				close(ofd);
			if (what[0]) {
				/* print before freeing: o points into loops */
				fprintf(stderr, "btrfslab write: refusing %s: it is in use: its backing file also backs /dev/%s, and %s\n",
					device, o->name, what);
				return free(loops), close(img), 1;
			}
		}
	} else {
		for (size_t k = 0; k < nloops; k++)
			if (loop_backed_by(&loops[k], dst.st_dev, dst.st_ino)) {
				/* print before freeing: the name is in loops */
				fprintf(stderr, "btrfslab write: refusing %s: it is in use, it backs /dev/%s (detach it first)\n", device,
					loops[k].name);
				return free(loops), close(img), 1;
			}
	}
	free(loops);
	int fd = open(device, O_RDWR | O_CLOEXEC | (is_blk ? O_EXCL : 0));
	if (fd < 0) {
		int e = errno;
		close(img);
		if (e == EBUSY)
			return fprintf(stderr, "btrfslab write: refusing %s: it is in use (another program holds it open exclusively, or it is mounted)\n", device), 1;
		return fprintf(stderr, "btrfslab write: %s: %s\n", device, strerror(e)), 1;
	}
	struct stat fst;
	if (fstat(fd, &fst) || (is_blk ? !S_ISBLK(fst.st_mode) || fst.st_rdev != dst.st_rdev : fst.st_ino != dst.st_ino || fst.st_dev != dst.st_dev))
		return close(fd), close(img), fprintf(stderr, "btrfslab write: %s changed while it was checked: not written\n", device), 1;
	u64 dev_size = (u64)dst.st_size;
	if (is_blk && ioctl(fd, BLKGETSIZE64, &dev_size))
		return close(fd), close(img), fprintf(stderr, "btrfslab write: %s: its size: %s\n", device, strerror(errno)), 1;
	if (dev_size < fs_bytes)
		return close(fd), close(img), fprintf(stderr,
						      "btrfslab write: refusing %s: it holds %llu bytes, the filesystem needs %llu%s\n",
						      device, (unsigned long long)dev_size, (unsigned long long)fs_bytes, reach_note), 1;
	char sig[1024];
	int nsig = signatures(fd, sig, sizeof(sig));
	if (nsig < 0 && !force)
		return close(fd), close(img), fprintf(stderr, "btrfslab write: refusing %s: it could not be probed for signatures; "
							      "--force writes it anyway\n", device), 1;
	if (nsig > 0 && !force)
		return close(fd), close(img), fprintf(stderr,
						      "btrfslab write: refusing %s: it holds %s (a filesystem, RAID or crypto header, or partition "
						      "table, as libblkid finds it); --force overwrites it\n", device, sig), 1;

	struct write_plan p;
	u64 isize = (u64)ist.st_size < fs_bytes ? (u64)ist.st_size : fs_bytes;
	struct write_range *data;
	size_t ndata;
	int planned = data_ranges(img, isize, &data, &ndata) == 0 && write_plan_make(data, ndata, isize, &p) == 0;
	free(data);
	if (!planned)
		return close(fd), close(img), fprintf(stderr, "btrfslab write: out of memory\n"), 1;
	u64 super_bytes = 0;
	for (int m = 0; m < p.nsupers; m++)
		super_bytes += BTRFS_SUPER_INFO_SIZE;
	if (dry) {
		printf("btrfslab write (dry run): nothing written\n");
		printf("  image   %s: a %llu-byte filesystem%s, %llu bytes of data in %zu ranges, %d superblock copies\n", image,
		       (unsigned long long)fs_bytes, reach_note, (unsigned long long)p.bytes, p.n, p.nsupers);
		printf("  device  %s%s%s: %llu bytes, %s%s\n", device, name[0] ? " (" : "", name[0] ? name : "", (unsigned long long)dev_size,
		       is_blk ? "not mounted, not in use, opened exclusively" : "a regular file", name[0] ? ")" : "");
		printf("  checks  passed%s%s%s\n", nsig ? " (--force overwrites: " : "", nsig > 0 ? sig : nsig < 0 ? "a device not probed" : "",
		       nsig ? ")" : "");
		printf("  would   zero the superblock locations, %s the %llu bytes the image does not use, write %llu bytes, "
		       "then the superblocks, then read everything back\n",
		       zero ? "zero" : "discard (where the device can)", (unsigned long long)(dev_size - p.bytes - super_bytes),
		       (unsigned long long)p.bytes);
		write_plan_free(&p);
		close(fd);
		close(img);
		return 0;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
#ifdef BLAB_TEST_HOOKS
	const char *fail_env = getenv("BTRFSLAB_WRITE_FAIL_AFTER"), *corrupt_env = getenv("BTRFSLAB_WRITE_CORRUPT_AT");
	const char *pause_env = getenv("BTRFSLAB_WRITE_PAUSE_AFTER");
#else
	const char *fail_env = NULL, *corrupt_env = NULL, *pause_env = NULL;
#endif
	u64 fail_after = fail_env ? strtoull(fail_env, NULL, 10) : ~0ULL;
	u64 pause_after = pause_env ? strtoull(pause_env, NULL, 10) : ~0ULL;
	int tty = isatty(2);
	double t0 = wallclock_s();
	u64 total = p.bytes + super_bytes, done = 0;
	int rc = 1, discarded = 0, supers_written = 0;
	const char *stage = "zeroing the superblock locations";
	static u8 buf[CHUNK];
	char ioerr[256] = "";

	/* 1. no superblock survives an interruption from here on */
	for (int m = 0; m < BTRFS_SUPER_MIRROR_MAX; m++) {
		u64 o = btrfs_sb_offset(m);
		if (o + BTRFS_SUPER_INFO_SIZE <= dev_size && zero_range(fd, 0, o, o + BTRFS_SUPER_INFO_SIZE)) {
			snprintf(ioerr, sizeof(ioerr), "at byte %llu: %s", (unsigned long long)o, strerror(errno));
			goto stopped;
		}
	}
	if (fdatasync(fd)) {
		snprintf(ioerr, sizeof(ioerr), "flush: %s", strerror(errno));
		goto stopped;
	}
	/* 2. what the image does not use: discarded, or zeroed with --zero */
	stage = zero ? "zeroing what the image does not use" : "discarding what the image does not use";
	{
		u64 at = 0;
		for (size_t i = 0; i <= p.n && !stop_signal; i++) {
			u64 e = i < p.n ? p.r[i].start : dev_size;
			/* the superblock copies are not gaps: they are written below */
			for (int m = 0; m < p.nsupers && at < e; m++) {
				u64 so = p.supers[m];
				if (so >= at && so < e) {
					if (zero ? zero_range(fd, is_blk, at, so) : (discard_range(fd, is_blk, at, so, &discarded), 0))
						goto io;
					at = so + BTRFS_SUPER_INFO_SIZE;
				}
			}
			if (at < e && (zero ? zero_range(fd, is_blk, at, e) : (discard_range(fd, is_blk, at, e, &discarded), 0)))
				goto io;
			at = i < p.n ? p.r[i].end : dev_size;
		}
	}
	/* what other tools look at, whatever the device does with a discard:
	 * the first and last MiB (partition tables, other filesystems'
	 * signatures, a backup GPT) and every superblock location, zeroed (the
	 * image's own data there is written next) */
	stage = "zeroing the device's first and last MiB";
	{
		u64 mib = 1ULL << 20;
		if (zero_range(fd, 0, 0, dev_size < mib ? dev_size : mib) || (dev_size > mib && zero_range(fd, 0, dev_size - mib, dev_size)))
			goto io;
		for (int m = 0; m < BTRFS_SUPER_MIRROR_MAX; m++) {
			u64 o = btrfs_sb_offset(m);
			if (o + BTRFS_SUPER_INFO_SIZE <= dev_size && zero_range(fd, 0, o, o + BTRFS_SUPER_INFO_SIZE))
				goto io;
		}
	}
	/* 3. the data, superblocks excepted */
	stage = "writing the image's data";
	for (size_t i = 0; i < p.n && !stop_signal; i++) {
		for (u64 o = p.r[i].start; o < p.r[i].end && !stop_signal;) {
			size_t n = p.r[i].end - o < CHUNK ? (size_t)(p.r[i].end - o) : CHUNK;
			if (pread(img, buf, n, (off_t)o) != (ssize_t)n) {
				snprintf(ioerr, sizeof(ioerr), "reading %s at byte %llu: %s", image, (unsigned long long)o, strerror(errno));
				goto stopped;
			}
			if (done + n > fail_after) {
				errno = EIO;
				snprintf(ioerr, sizeof(ioerr), "at byte %llu: %s", (unsigned long long)o, strerror(errno));
				goto stopped;
			}
			if (pwrite(fd, buf, n, (off_t)o) != (ssize_t)n) {
				snprintf(ioerr, sizeof(ioerr), "at byte %llu: %s", (unsigned long long)o, strerror(errno));
				goto stopped;
			}
			o += n;
			done += n;
			progress(tty, done, total, t0, 0);
			if (done >= pause_after) {
				pause_after = ~0ULL;
				fprintf(stderr, "btrfslab write: paused after %llu bytes\n", (unsigned long long)done);
				while (!stop_signal)
					usleep(10000);
			}
		}
	}
	if (stop_signal)
		goto stopped;
	if (fdatasync(fd))
		goto io;
	/* 4. the superblocks, last */
	stage = "writing the superblocks";
	sigset_t every, was;
	sigfillset(&every);
	sigprocmask(SIG_BLOCK, &every, &was); /* the superblock copies go together, or not at all */
	for (int m = 0; m < p.nsupers; m++) {
		u64 o = p.supers[m];
		if (pread(img, buf, BTRFS_SUPER_INFO_SIZE, (off_t)o) != BTRFS_SUPER_INFO_SIZE ||
		    pwrite(fd, buf, BTRFS_SUPER_INFO_SIZE, (off_t)o) != BTRFS_SUPER_INFO_SIZE) {
			int e = errno;
			/* a copy may be on the device: none must stay valid */
			for (int k = 0; k <= m; k++)
				zero_range(fd, 0, p.supers[k], p.supers[k] + BTRFS_SUPER_INFO_SIZE);
			fdatasync(fd);
			sigprocmask(SIG_SETMASK, &was, NULL);
			errno = e;
			goto io;
		}
		done += BTRFS_SUPER_INFO_SIZE;
	}
	int synced = fsync(fd);
	sigprocmask(SIG_SETMASK, &was, NULL);
	if (synced)
		goto io;
	supers_written = 1;
	progress(tty, done, total, t0, 1);
	double wrote_s = wallclock_s() - t0;

	if (corrupt_env) { /* the test hook: a device that lies */
		u64 o = strtoull(corrupt_env, NULL, 10);
		u8 c;
		if (pread(fd, &c, 1, (off_t)o) == 1) {
			c ^= 0xff;
			if (pwrite(fd, &c, 1, (off_t)o) != 1 || fdatasync(fd))
				goto io;
		}
	}
	/* 5. read back, past the page cache */
	stage = "reading back";
	if (stop_signal)
		goto stopped;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (is_blk)
		ioctl(fd, BLKFLSBUF, 0);
	{
		static u8 back[VERIFY_BLOCK], want[VERIFY_BLOCK];
		struct write_range all[BTRFS_SUPER_MIRROR_MAX];
		for (int m = 0; m < p.nsupers; m++)
			all[m] = (struct write_range){p.supers[m], p.supers[m] + BTRFS_SUPER_INFO_SIZE};
		for (size_t i = 0; i < p.n + (size_t)p.nsupers; i++) {
			struct write_range r = i < p.n ? p.r[i] : all[i - p.n];
			for (u64 o = r.start; o < r.end; o += VERIFY_BLOCK) {
				size_t n = r.end - o < VERIFY_BLOCK ? (size_t)(r.end - o) : VERIFY_BLOCK;
				if (pread(fd, back, n, (off_t)o) != (ssize_t)n || pread(img, want, n, (off_t)o) != (ssize_t)n)
					goto io;
				if (memcmp(back, want, n)) {
					u64 at = o;
					for (size_t k = 0; k < n; k++)
						if (back[k] != want[k]) {
							at = o + k;
							break;
						}
					fprintf(stderr,
						"btrfslab write: verify failed: the device's block at byte %llu (4 KiB block from %llu) differs from "
						"the image; the device is not a faithful copy\n",
						(unsigned long long)at, (unsigned long long)(at & ~4095ULL));
					goto out;
				}
			}
		}
	}
	printf("btrfslab write: %llu bytes in %zu ranges to %s in %.2f s (%.1f MiB/s), %s; read back and verified\n",
	       (unsigned long long)done, p.n, device, wrote_s, done / 1048576.0 / (wrote_s > 1e-6 ? wrote_s : 1e-6),
	       zero ? "the rest zeroed" : discarded ? "the rest discarded" : "the rest left as it was (the device cannot discard)");
	rc = 0;
	goto out;
io:
	if (!ioerr[0])
		snprintf(ioerr, sizeof(ioerr), "%s", strerror(errno ? errno : EIO));
stopped:
	if (tty)
		fprintf(stderr, "\n");
	if (supers_written)
		fprintf(stderr, "btrfslab write: %s while %s: the image is on the device, superblocks included, but was not read back; "
				"run it again to verify\n", stop_signal ? "interrupted" : ioerr, stage);
	else if (stop_signal)
		fprintf(stderr, "btrfslab write: interrupted by signal %d while %s, after %llu of %llu bytes; the device holds no valid "
				"superblock (they are written last)\n",
			(int)stop_signal, stage, (unsigned long long)done, (unsigned long long)total);
	else
		fprintf(stderr, "btrfslab write: I/O error while %s (%s), after %llu of %llu bytes; the device holds no valid "
				"superblock (they are written last)\n",
			stage, ioerr, (unsigned long long)done, (unsigned long long)total);
	rc = stop_signal ? 128 + (int)stop_signal : 1;
out:
	write_plan_free(&p);
	close(fd);
	close(img);
	return rc;
}
