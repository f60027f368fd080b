/* mkfs.h — a new, empty filesystem in the running core. */
#ifndef BTRFSLAB_MKFS_H
#define BTRFSLAB_MKFS_H
#include "fs.h"

struct mkfs_options {
	u64 size;          /* device bytes */
	u32 nodesize;      /* 4096..65536, power of two */
	u32 sectorsize;    /* 4096 */
	const char *label; /* may be NULL; at most 255 bytes */
	u64 seed;          /* UUIDs are derived from it: same seed, same image */
	u64 now;           /* seconds since the epoch, for times */
	u64 meta_chunk;    /* metadata chunks of this many bytes (0: the kernel's size for the device) */
	struct blab_device *device; /* optional: a device to use (taken over), else one in memory */
};

/* The smallest device mkfs accepts for nodesize. */
u64 btrfs_mkfs_min_size(u32 nodesize);
/* Fills o with defaults (size 256 MiB, nodesize 16 KiB). */
void btrfs_mkfs_defaults(struct mkfs_options *o);
/* Makes a new filesystem and commits it. On success *out owns it; on error
 * returns a negative code with *err describing what is wrong. */
int btrfs_mkfs(const struct mkfs_options *o, struct btrfs_fs_info **out, struct blab_err *err);
/* A version 4 UUID from a splitmix64 stream (state moves on): the same seed
 * gives the same UUIDs. */
void btrfs_make_uuid(u64 *state, u8 out[16]);
#endif
