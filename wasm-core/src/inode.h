/* inode.h — inodes and the namespace: inode items, lookups by path, and
 * the operations that change names (create, mkdir, symlink, link, unlink,
 * rmdir, rename); extended attributes are xattr.c's. Paths are absolute inside the
 * filesystem. Errors are BLAB_E* codes with fs->err naming the path. */
#ifndef BTRFSLAB_INODE_H
#define BTRFSLAB_INODE_H
#include "ctree.h"

struct btrfs_timespec {
	u64 sec;
	u32 nsec;
};

struct btrfs_inode {
	u64 ino;
	u64 generation, transid, size, nbytes, rdev, flags, sequence;
	u32 nlink, uid, gid, mode;
	struct btrfs_timespec atime, ctime, mtime, otime;
};

/* Attributes for a new inode. */
struct inode_attrs {
	u32 mode, uid, gid;
	u64 rdev;
	int have_times;
	struct btrfs_timespec atime, ctime, mtime;
};

#define S_IFMT_ 0170000
#define S_IFDIR_ 0040000
#define S_IFREG_ 0100000
#define S_IFLNK_ 0120000
#define S_IFCHR_ 0020000
#define S_IFBLK_ 0060000
#define S_IFIFO_ 0010000
#define S_IFSOCK_ 0140000

u8 btrfs_mode_to_ftype(u32 mode);

int btrfs_read_inode(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_inode *out);
/* Writes in back to its INODE_ITEM (which must exist). */
int btrfs_update_inode(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_inode *in);

/* Resolves an absolute path to an inode number. ENOENT, ENOTDIR. */
int btrfs_lookup_path(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 *ino);
/* Splits an absolute path into its parent directory's inode and its last
 * name (a pointer into path, and its length). EINVAL, ENAMETOOLONG,
 * ENOENT, ENOTDIR. */
int btrfs_resolve_parent(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 *dir, const char **name,
			 u16 *len);
/* Looks up one name in directory dir. */
int btrfs_lookup_name(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, const char *name, u16 len, u64 *ino,
		      u8 *type);

/* Creates name in directory dir: a new inode of attrs (file, dir, special)
 * or, for symlinks, use btrfs_symlink_at. Returns its number in *ino. */
int btrfs_create_at(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, const char *name, u16 len,
		    const struct inode_attrs *a, u64 *ino);
int btrfs_symlink_at(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, const char *name, u16 len,
		     const char *target, const struct inode_attrs *a, u64 *ino);
/* Adds a name for inode ino (not a directory) in dir. */
int btrfs_link_at(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 dir, const char *name, u16 len);

/* Path forms, as the scenario language uses them. */
int btrfs_create(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, const struct inode_attrs *a, u64 *ino);
int btrfs_symlink(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *target, const char *path);
int btrfs_link(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *existing, const char *path);
int btrfs_unlink(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path);
int btrfs_rmdir(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path);
int btrfs_rename(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *from, const char *to);

/* Replay's primitives: a name with a given DIR_INDEX (0: the next free
 * one) with its INODE_REF, DIR_ITEM and the directory's size, no link count
 * change; its removal; deleting an inode that has no names left. */
int btrfs_add_link_index(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u64 ino, u8 type, const char *name,
			 u16 len, u64 index);
int btrfs_remove_link(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u64 ino, const char *name, u16 len);
int btrfs_evict_inode(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino);
/* The root directory objectid (256; the root tree's 6) of a new tree, with
 * its ".." ref naming itself: a directory of one link, nbytes as given; its
 * INODE_ITEM bytes into inode_out (BTRFS_INODE_ITEM_SIZE) unless NULL. */
int btrfs_make_root_dir(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 objectid, u64 nbytes, u64 sequence, u8 *inode_out);
/* A new name at path (in root) for the subvolume subvol: its DIR_ITEM and
 * DIR_INDEX point at (subvol ROOT_ITEM loc_offset: -1 for a snapshot, 0 for
 * a new subvolume, as the kernel writes them), with no INODE_REF (the root
 * tree's ROOT_REF names it instead); the directory's size and times. The
 * directory, name and index used come back. */
int btrfs_add_subvol_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 subvol, u64 loc_offset,
			   u64 *dir, const char **name, u16 *len, u64 *index);
/* The subvolume path names (its parent directory in root, its name, its
 * id): EINVAL when path is not a subvolume's entry. */
int btrfs_find_subvol_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 *dir, const char **name,
			    u16 *len, u64 *subvol);
/* Removes a subvolume's entry (DIR_ITEM and DIR_INDEX index) from dir. */
int btrfs_remove_subvol_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, const char *name, u16 len, u64 index);
/* Paths that cross into subvolumes: a directory entry whose location is a
 * ROOT_ITEM names another subvolume's tree, entered at its root directory.
 * btrfs_lookup_path_subvol walks path from the top-level subvolume across
 * them: the tree and inode it names. btrfs_subvol_root is subvolume
 * subvol's tree and its root directory (NULL, ECORRUPT, when it has none). */
int btrfs_lookup_path_subvol(struct btrfs_fs_info *fs, const char *path, struct btrfs_root **root, u64 *ino);
struct btrfs_root *btrfs_subvol_root(struct btrfs_fs_info *fs, u64 subvol, u64 *dirid);
/* The subvolume whose tree holds the parent of path's last name, and where
 * in path the rest begins (path + *rel is a path in that tree, "" meaning
 * its root: e.g. /snap/d/f in a snapshot at /snap is (snap, "/d/f")); the
 * top level and 0 when no subvolume is crossed. A walk that fails stops
 * there: the operation on the rest says what is wrong. 0 or an error. */
int btrfs_split_subvol_path(struct btrfs_fs_info *fs, const char *path, struct btrfs_root **root, size_t *rel);
/* readdir's type of an entry that names a subvolume (its ino is then the
 * subvolume's id): BTRFS_FT_DIR with this bit. */
#define BTRFS_FT_SUBVOL 0x80
/* ... and of an entry naming a subvolume this tree does not hold (copied
 * into a snapshot): an empty directory, as the kernel shows it (0755, one
 * link, size 0). */
#define BTRFS_FT_EMPTY_SUBVOL 0x40
/* Calls fn for each entry of directory dir in index order; fn returns
 * nonzero to stop (that value is returned). */
typedef int (*readdir_fn)(void *ctx, const char *name, u16 len, u64 ino, u8 type);
int btrfs_readdir(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, readdir_fn fn, void *ctx);
/* Marks in changed now (ctime, and mtime too when data changed) in this
 * transaction; the caller writes it back with btrfs_update_inode. */
void btrfs_inode_touch(struct btrfs_fs_info *fs, struct btrfs_inode *in, int data);
#endif
