/* rootdir.h — mkfs --rootdir: a filesystem holding a copy of a host
 * directory: regular files with their data, directories, symlinks, hard
 * links, device nodes, FIFOs and sockets, with modes, owners, times and
 * extended attributes. Native only. */
#ifndef BTRFSLAB_ROOTDIR_H
#define BTRFSLAB_ROOTDIR_H
#include "fs.h"

struct rootdir_stats {
	u64 inodes, dirs, files, symlinks, specials, hardlinks, xattrs;
	u64 data_bytes;
};

/* Walks src and estimates the image size it needs (data, metadata and room
 * for the kernel to work in). */
int rootdir_estimate(const char *src, u32 nodesize, u64 *size, struct rootdir_stats *st, struct blab_err *err);
/* Copies src into the fs tree of fs (in a running transaction). */
int rootdir_copy(struct btrfs_fs_info *fs, const char *src, struct rootdir_stats *st, struct blab_err *err);
#endif
