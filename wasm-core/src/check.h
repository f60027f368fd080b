/* check.h — `btrfslab check`: the core's own consistency check. */
#ifndef BTRFSLAB_CHECK_H
#define BTRFSLAB_CHECK_H
#include "fs.h"
#include "print-tree.h"

/* Checks every tree's structure, the extent tree against the reachable tree
 * blocks, block group used bytes, and the free space tree. Problems are
 * written to out, one "ERROR: ..." line each. Returns the number found. */
#define CHECK_DATA_CSUM 1 /* also read every data sector and verify its checksum */
int btrfs_check_fs(struct btrfs_fs_info *fs, struct strbuf *out, int flags);
/* The file system part: returns the number of problems found (written to out). */
int btrfs_check_inodes(struct btrfs_fs_info *fs, struct strbuf *out, int flags);
/* The root tree: subvolume references, deleted subvolumes, root items, the quota tree. */
int btrfs_check_roots(struct btrfs_fs_info *fs, struct strbuf *out);
/* Chunks, block groups, dev extents and devices, and the superblock's totals
 * (after btrfs_load_block_groups). */
int btrfs_check_volumes(struct btrfs_fs_info *fs, struct strbuf *out);
/* 0 when btrfs_check_fs finds nothing; else ECORRUPT in fs->err naming what
 * (the image, or a command's result; NULL: nothing), the count and the first problem. What
 * balance and replay ask of their input, and of their output before it is
 * written. */
int btrfs_check_clean(struct btrfs_fs_info *fs, const char *what);
/* Counts one problem in *errors and writes "ERROR: " prefix message to out,
 * for the first 200 problems (both check passes report this way). */
#include <stdarg.h>
void btrfs_check_vreport(struct strbuf *out, int *errors, const char *prefix, const char *fmt, va_list ap);
#endif
