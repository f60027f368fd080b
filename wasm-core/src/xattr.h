/* xattr.h — extended attributes of an inode: set (replacing any of the same
 * name) and list. Names are 1 to BTRFS_NAME_LEN bytes; a name and value must
 * fit half a node. Errors are BLAB_E* codes with fs->err saying why. */
#ifndef BTRFSLAB_XATTR_H
#define BTRFSLAB_XATTR_H
#include "inode.h"

int btrfs_setxattr(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, const char *name, const u8 *value,
		   u16 len);
/* Calls fn for each xattr of ino, in key order; fn returns nonzero to stop
 * (that value is returned). */
typedef int (*xattr_fn)(void *ctx, const char *name, u16 len, const u8 *value, u16 vlen);
int btrfs_listxattr(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, xattr_fn fn, void *ctx);
#endif
