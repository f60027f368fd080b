/* reflink.h — cloning a file's extents (FICLONE, `cp --reflink`), as the
 * kernel's reflink.c: the destination's file extent items become copies of
 * the source's, pointing at the same data extents, each of which gains a
 * keyed backref (EXTENT_DATA_REF) of the destination's tree, inode and
 * offset. No data is copied; checksums are the extent's own. Inline extents
 * are copied whole. The source and destination may be in different
 * subvolumes of one filesystem. */
#ifndef BTRFSLAB_REFLINK_H
#define BTRFSLAB_REFLINK_H
#include "fs.h"
/* Makes regular file dino (in droot) a clone of sino (in sroot): its old
 * contents dropped, its extents and size the source's. Both are written
 * back first. EINVAL when they are the same file or not regular files. */
int btrfs_clone_file(struct btrfs_fs_info *fs, struct btrfs_root *sroot, u64 sino, struct btrfs_root *droot, u64 dino);
#endif
