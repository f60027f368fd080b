/* dirwalk.h — the entries of a directory of an image, read whole, and a set
 * of the directories a walk has entered: what `ls -R` and `extract` need to
 * walk a hostile image with their own stack and without loops. */
#ifndef BTRFSLAB_DIRWALK_H
#define BTRFSLAB_DIRWALK_H
#include "../src/inode.h"
#include <stdio.h>

struct dir_ent {
	u64 ino;
	u8 type;
	u16 len;
	char name[BTRFS_NAME_LEN + 1]; /* NUL-terminated copy; may hold NULs of its own */
};

struct dir_list {
	struct dir_ent *e;
	size_t n, cap;
};

/* Reads every entry of directory dir. 0, or an error with fs->err set. */
int dir_list_read(struct btrfs_fs_info *fs, u64 dir, struct dir_list *l);
void dir_list_free(struct dir_list *l);

/* 1 when name (len bytes) is safe to create below a directory: 1..255
 * bytes, no '/', no NUL, neither "." nor "..". */
int dir_name_safe(const char *name, u16 len);
/* name as printable text: bytes outside 0x21..0x7e, and '\\', as \xNN.
 * Returns out (size >= 4 * len + 1). */
char *dir_name_escape(const char *name, u16 len, char *out);

/* A growable path (for messages and printing; never handed to a system
 * call, so it may be longer than PATH_MAX). */
struct path_buf {
	char *s;
	size_t len, cap;
};
/* Appends "/" (unless the path is empty or ends in one) and name, escaped
 * with dir_name_escape when escape is set; 0 or -1 (ENOMEM). */
int path_append(struct path_buf *p, const char *name, u16 len, int escape);
void path_cut(struct path_buf *p, size_t len);
void path_free(struct path_buf *p);
#endif
