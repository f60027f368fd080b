/* dirwalk.h — the entries of a directory of an image, read whole, and a set
 * of the directories a walk has entered: what `ls -R` and `extract` need to
 * walk a hostile image with their own stack and without loops. */
#ifndef BTRFSLAB_DIRWALK_H
#define BTRFSLAB_DIRWALK_H
#include "../src/inode.h"
#include "../src/u64map.h"
#include <stdio.h>

/* A walk's inodes live in several trees once the image has subvolumes: an
 * inode here is an "xino", the index of its tree in fs->roots above bit 48
 * (16 bits: BLAB_MAX_ROOTS trees fit) and the inode number below (an inode
 * numbered 2^48 or more is refused, a bound no real filesystem meets: the
 * kernel numbers inodes one by one from 256). The top-level subvolume's
 * inode ino is xino_make(fs, fs->fs_root, ino). */
#define XINO_SHIFT 48
_Static_assert(BLAB_MAX_ROOTS <= (1 << (64 - XINO_SHIFT)), "a tree's index must fit above XINO_SHIFT");
#define XINO_MASK ((1ULL << XINO_SHIFT) - 1)
/* 0, or EOVERFLOW with fs->err set. */
int xino_make(struct btrfs_fs_info *fs, const struct btrfs_root *root, u64 ino, u64 *out);
struct btrfs_root *xino_root(const struct btrfs_fs_info *fs, u64 x);
static inline u64 xino_ino(u64 x) { return x & XINO_MASK; }
/* btrfs_read_inode of a walk's inode; in->ino is the xino. */
int xino_read_inode(struct btrfs_fs_info *fs, u64 x, struct btrfs_inode *in);

struct dir_ent {
	u64 ino;    /* an xino */
	u64 subvol; /* nonzero: the entry names this subvolume (ino: its root directory, 0 when it has none) */
	int empty;  /* the entry names a subvolume this tree does not hold: an empty directory (ino 0) */
	u8 type;
	u16 len;
	char name[BTRFS_NAME_LEN + 1]; /* NUL-terminated copy; may hold NULs of its own */
};

struct dir_list {
	struct dir_ent *e;
	size_t n, cap;
};

/* Reads every entry of directory dir (an xino). 0, or an error with fs->err set. */
int dir_list_read(struct btrfs_fs_info *fs, u64 dir, struct dir_list *l);
void dir_list_free(struct dir_list *l);

/* 1 when name (len bytes) is safe to create below a directory: 1..255
 * bytes, no '/', no NUL, neither "." nor "..". */
int dir_name_safe(const char *name, u16 len);
/* name as printable text: bytes outside 0x21..0x7e, and '\\', as \xNN.
 * Returns out (size >= 4 * len + 1). */
char *dir_name_escape(const char *name, u16 len, char *out);

/* Writes len bytes of s to f escaped as dir_name_escape does. */
void dir_put_escaped(FILE *f, const char *s, size_t len);

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

/* The directories a walk has entered, each with the entry that named it
 * (its parent directory and name), so that a second arrival at one (a
 * cycle or a second name: corruption in btrfs) can say where the first
 * was. Memory grows with the number of directories, not their depth. */
struct dir_seen {
	struct u64map map; /* ino -> struct dir_seen_ent * */
};
void dir_seen_init(struct dir_seen *s);
/* Records directory ino, named name (len bytes) in parent (0 for the walk's
 * root). 0 when new, 1 when it was already entered, -1 on ENOMEM. */
int dir_seen_add(struct dir_seen *s, u64 ino, u64 parent, const char *name, u16 len);
/* Appends to p the names leading from the walk's root to ino (escaped as
 * path_append does when escape is set). 0 or -1 (ENOMEM). */
int dir_seen_path(const struct dir_seen *s, u64 ino, struct path_buf *p, int escape);
void dir_seen_free(struct dir_seen *s);
#endif
