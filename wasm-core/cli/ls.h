/* ls.h — `btrfslab ls`: a directory of an image, or with -R every path
 * below it, walked with a heap stack; a directory reached a second time (a
 * cycle in a hostile image) is reported, not entered. */
#ifndef BTRFSLAB_LS_H
#define BTRFSLAB_LS_H
#include "../src/fs.h"
#include <stdio.h>

#define LS_RECURSIVE 1
#define LS_LONG 2

/* Lists path of fs to out; problems go to err. Returns 0, or 1 when
 * something could not be listed. */
int ls_run(struct btrfs_fs_info *fs, const char *path, int flags, FILE *out, FILE *err);
/* "drwxr-xr-x" for mode, into out[11]. */
void ls_mode_string(u32 mode, char *out);
#endif
