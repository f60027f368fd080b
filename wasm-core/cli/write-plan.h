/* write-plan.h — what `btrfslab write` writes: pure functions of the opened
 * image and its data ranges, no device and no I/O (the fuzz target
 * fuzz/write_plan.c calls them as the command does). */
#ifndef BTRFSLAB_CLI_WRITE_PLAN_H
#define BTRFSLAB_CLI_WRITE_PLAN_H
#include "../src/fs.h"
#include <stddef.h>

struct write_range {
	u64 start, end;
};

struct write_plan {
	struct write_range *r; /* the image's data ranges to write, sorted, apart, superblock copies cut out */
	size_t n, cap;
	u64 bytes;             /* their sum */
	u64 supers[BTRFS_SUPER_MIRROR_MAX]; /* superblock offsets the image holds, written last */
	int nsupers;
};

/* How far the filesystem reaches on its device: the largest of the
 * superblock's total_bytes, its device item's total_bytes, the end of every
 * chunk stripe and of every dev extent. A crafted superblock may claim less
 * than its chunks use; the device must hold all of it. *by names what set
 * the reach, with its verb ("its chunks reach"...). 0, or an error (a walk of
 * the device tree failed) with err filled. */
int write_plan_reach(struct btrfs_fs_info *fs, u64 *reach, const char **by, struct blab_err *err);
/* write_plan_reach's part that needs no tree: the superblock's and device
 * item's total_bytes and the chunk maps. */
void write_plan_reach_maps(u64 total_bytes, u64 dev_total_bytes, const struct btrfs_chunk_map *chunks, size_t n, u64 *reach,
			   const char **by);

/* The plan: the data ranges data[0..ndata) (sorted and apart, as SEEK_DATA
 * gives them) clipped to [0, limit), the superblock copies inside limit cut
 * out of them. 0, or -1 when out of memory (p freed). */
int write_plan_make(const struct write_range *data, size_t ndata, u64 limit, struct write_plan *p);
void write_plan_free(struct write_plan *p);
#endif
