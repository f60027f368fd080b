/* kernel.h — `btrfslab kernel IMAGE`: the real kernel's view of an image. */
#ifndef BTRFSLAB_CLI_KERNEL_H
#define BTRFSLAB_CLI_KERNEL_H
#include "../src/ondisk.h"
#include "../src/print-tree.h"

struct kfile {
	char *path;
	const char *type;
	unsigned mode;
	unsigned long long nlink, size;
	char sha[65];
	char *target;
};

struct listing {
	struct kfile *v;
	size_t n, cap;
	char error[512]; /* why the walk stopped early, if it did */
};

/* What the kernel saw of an image. */
struct kernel_view {
	struct listing files;  /* every path after the mount (and its log replay), sorted */
	char mount_err[512];   /* empty: the mount worked */
	struct strbuf check;   /* btrfs check's output */
	int check_ok;
	u64 log_root;          /* of the image's superblock before the mount (0: none pending) */
	char release[128];     /* uname -r */
	int stopped;           /* a signal came: what was left undone is cleaned up */
	char err[512];         /* kernel_inspect returned -1: why */
};

/* Mounts a private copy of image (image itself with in_place) on a loop
 * device of its own, lists it, unmounts, runs btrfs check, removes it all.
 * 0 with v filled (a failed mount is in v), or -1 with v->err. Root only.
 * Free v with kernel_view_free. */
int kernel_inspect(const char *image, int in_place, struct kernel_view *v);
void kernel_view_free(struct kernel_view *v);

/* The core's view of fs (replayed already) in the same shape: 0, or -1 with l->error. */
struct btrfs_fs_info;
int core_listing(struct btrfs_fs_info *fs, struct listing *l);
/* 1 with a sentence in out when the two listings differ (paths, type, mode,
 * links, size, contents, symlink target; "/" by path only), else 0. */
int listings_differ(const struct listing *kernel, const struct listing *core, char *out, size_t n);
void listing_free(struct listing *l);
/* SIGINT/SIGTERM/SIGHUP stop kernel_inspect (its mount and loop device removed). */
void kernel_catch_signals(void);

/* The command: argv[0] is "kernel". Returns the exit status. */
int cmd_kernel(int argc, char **argv, int variant);
#endif
