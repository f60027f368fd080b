/* extract.h — copies the files of an image into a new directory, treating
 * the image as hostile (see SECURITY.md): every file is made relative to a
 * directory file descriptor below the target, no symbolic link is ever
 * followed, unsafe names are refused, directories are walked with a heap
 * stack and entered once, holes stay holes, and setuid bits, device nodes
 * and trusted/security xattrs are restored only when asked for. */
#ifndef BTRFSLAB_EXTRACT_H
#define BTRFSLAB_EXTRACT_H
#include "../src/fs.h"
#include <stdio.h>

struct extract_opts {
	int same_permissions; /* restore setuid, setgid and sticky bits */
	int devices;          /* create block and character device nodes */
	int all_xattrs;       /* restore trusted.* and security.* xattrs */
	u64 max_size;         /* bytes of file data written at most; 0: no limit */
};

#define EXTRACT_DEFAULT_MAX_SIZE (16ULL << 30)

/* Extracts the fs tree of fs into target, which must not exist (it is made
 * here, mode 0700 until filled). Problems are reported on err, each naming
 * the path. Returns 0 when everything was extracted (skips asked for by the
 * options are notes), 1 when some entries failed, 2 when nothing could be
 * (target exists, cannot be made, out of memory). */
int extract_tree(struct btrfs_fs_info *fs, const char *target, const struct extract_opts *o, FILE *err);
#endif
