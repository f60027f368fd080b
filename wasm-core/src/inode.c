#include "delalloc.h"
#include "ordered-data.h"
#include "inode.h"
#include "ctree.h"
#include "crc32c.h"
#include "dir-item.h"
#include "extent-tree.h"
#include "file-item.h"
#include "tree-log.h"
#include "root-tree.h"
#include <stdlib.h>

u8 btrfs_mode_to_ftype(u32 mode)
{
	switch (mode & S_IFMT_) {
	case S_IFREG_: return BTRFS_FT_REG_FILE;
	case S_IFDIR_: return BTRFS_FT_DIR;
	case S_IFCHR_: return BTRFS_FT_CHRDEV;
	case S_IFBLK_: return BTRFS_FT_BLKDEV;
	case S_IFIFO_: return BTRFS_FT_FIFO;
	case S_IFSOCK_: return BTRFS_FT_SOCK;
	case S_IFLNK_: return BTRFS_FT_SYMLINK;
	default: return BTRFS_FT_UNKNOWN;
	}
}

static void get_ts(const u8 *p, struct btrfs_timespec *t)
{
	t->sec = btrfs_timespec_sec(p);
	t->nsec = btrfs_timespec_nsec(p);
}

static void put_ts(u8 *p, const struct btrfs_timespec *t)
{
	btrfs_set_timespec_sec(p, t->sec);
	btrfs_set_timespec_nsec(p, t->nsec);
}

static void fill_inode_item(u8 *p, const struct btrfs_inode *in)
{
	memset(p, 0, BTRFS_INODE_ITEM_SIZE);
	btrfs_set_inode_generation(p, in->generation);
	btrfs_set_inode_transid(p, in->transid);
	btrfs_set_inode_size(p, in->size);
	btrfs_set_inode_nbytes(p, in->nbytes);
	btrfs_set_inode_nlink(p, in->nlink);
	btrfs_set_inode_uid(p, in->uid);
	btrfs_set_inode_gid(p, in->gid);
	btrfs_set_inode_mode(p, in->mode);
	btrfs_set_inode_rdev(p, in->rdev);
	btrfs_set_inode_flags(p, in->flags);
	btrfs_set_inode_sequence(p, in->sequence);
	put_ts(p + BTRFS_INODE_ATIME_OFF, &in->atime);
	put_ts(p + BTRFS_INODE_CTIME_OFF, &in->ctime);
	put_ts(p + BTRFS_INODE_MTIME_OFF, &in->mtime);
	put_ts(p + BTRFS_INODE_OTIME_OFF, &in->otime);
}

int btrfs_read_inode(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_inode *out)
{
	struct btrfs_key key = {ino, BTRFS_INODE_ITEM_KEY, 0};
	u8 *p;
	u32 size;
	int ret = btrfs_lookup_item(fs, root, &key, &p, &size, 0);
	if (ret == BLAB_ENOENT)
		return blab_fail(&fs->err, BLAB_ENOENT, "inode %llu has no INODE_ITEM in tree %lld", (unsigned long long)ino,
				 (long long)root->objectid);
	if (ret)
		return ret;
	if (size < BTRFS_INODE_ITEM_SIZE)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "inode %llu: INODE_ITEM is %u bytes, expect %d", (unsigned long long)ino,
				 size, BTRFS_INODE_ITEM_SIZE);
	out->ino = ino;
	out->generation = btrfs_inode_generation(p);
	out->transid = btrfs_inode_transid(p);
	out->size = btrfs_inode_size(p);
	out->nbytes = btrfs_inode_nbytes(p);
	out->nlink = btrfs_inode_nlink(p);
	out->uid = btrfs_inode_uid(p);
	out->gid = btrfs_inode_gid(p);
	out->mode = btrfs_inode_mode(p);
	out->rdev = btrfs_inode_rdev(p);
	out->flags = btrfs_inode_flags(p);
	out->sequence = btrfs_inode_sequence(p);
	get_ts(p + BTRFS_INODE_ATIME_OFF, &out->atime);
	get_ts(p + BTRFS_INODE_CTIME_OFF, &out->ctime);
	get_ts(p + BTRFS_INODE_MTIME_OFF, &out->mtime);
	get_ts(p + BTRFS_INODE_OTIME_OFF, &out->otime);
	return 0;
}

int btrfs_update_inode(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_inode *in)
{
	struct btrfs_key key = {in->ino, BTRFS_INODE_ITEM_KEY, 0};
	u8 *p;
	u32 size;
	int ret = btrfs_lookup_item(fs, root, &key, &p, &size, 1);
	if (ret)
		return ret == BLAB_ENOENT ? blab_fail(&fs->err, ret, "inode %llu vanished", (unsigned long long)in->ino) : ret;
	fill_inode_item(p, in);
	if (fs->delayed_hook)
		fs->delayed_hook(fs->delayed_ctx, root->objectid, in->ino, 0);
	return 0;
}

/* Marks an inode changed now in this transaction. */
void btrfs_inode_touch(struct btrfs_fs_info *fs, struct btrfs_inode *in, int data)
{
	struct btrfs_timespec now = {fs->now, 0};
	in->ctime = now;
	if (data)
		in->mtime = now;
	in->transid = fs->generation;
	in->sequence++;
}

/* ---- numbers: inodes and directory indexes ---- */

static int highest_objectid(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 *out)
{
	if (!root->highest_objectid) {
		struct btrfs_key key = {BTRFS_LAST_FREE_OBJECTID, 0, 0}, k;
		u64 hi = BTRFS_FIRST_FREE_OBJECTID;
		int ret = btrfs_prev_key(fs, root, &key, &k);
		if (ret < 0)
			return ret;
		if (ret == 0 && k.objectid > hi && k.objectid < BTRFS_LAST_FREE_OBJECTID)
			hi = k.objectid;
		root->highest_objectid = hi;
	}
	*out = root->highest_objectid;
	return 0;
}

static int next_dir_index(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u64 *index)
{
	u64 *next = u64map_get(&root->dir_index, dir);
	if (!next) {
		struct btrfs_key key = {dir, BTRFS_DIR_INDEX_KEY, (u64)-1}, k;
		u64 n = 2; /* 0 and 1 are "." and ".." */
		int ret = btrfs_prev_key(fs, root, &key, &k);
		if (ret < 0)
			return ret;
		if (ret == 0 && k.objectid == dir && k.type == BTRFS_DIR_INDEX_KEY && k.offset + 1 > n)
			n = k.offset + 1;
		if (!(next = u64map_put(&root->dir_index, dir)))
			return blab_fail(&fs->err, BLAB_ENOMEM, "directory indexes");
		*next = n;
	}
	*index = (*next)++;
	return 0;
}

/* ---- lookups ---- */

int btrfs_lookup_name(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, const char *name, u16 len, u64 *ino, u8 *type)
{
	struct dir_entry e;
	u32 off;
	int ret = btrfs_lookup_dir_entry(fs, root, dir, BTRFS_DIR_ITEM_KEY, name, len, &e, &off);
	if (ret)
		return ret;
	if (e.location.type != BTRFS_INODE_ITEM_KEY)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "%.*s is a subvolume: not supported yet", len, name);
	*ino = e.location.objectid;
	if (type)
		*type = e.type;
	return 0;
}

static int is_dir(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, int *yes)
{
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, root, ino, &in);
	if (!ret)
		*yes = (in.mode & S_IFMT_) == S_IFDIR_;
	return ret;
}

/* Walks path from the top of root; *ino is the last component's inode.
 * With cross, a directory entry naming another subvolume leads into that
 * tree at its root directory (*root says which); without, it is an error.
 * ENOENT/ENOTDIR name the component. */
static int walk_path(struct btrfs_fs_info *fs, struct btrfs_root *r, const char *path, int cross, struct btrfs_root **root,
		     u64 *ino)
{
	u64 cur = BTRFS_FIRST_FREE_OBJECTID;
	const char *p = path;
	if (*p != '/')
		return blab_fail(&fs->err, BLAB_EINVAL, "%s: paths must start with /", path);
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		const char *e = p;
		while (*e && *e != '/')
			e++;
		int d;
		int ret = is_dir(fs, r, cur, &d);
		if (ret)
			return ret;
		if (!d)
			return blab_fail(&fs->err, BLAB_ENOTDIR, "%.*s: not a directory", (int)(p - path - 1), path);
		if (e - p > BTRFS_NAME_LEN)
			return blab_fail(&fs->err, BLAB_ENAMETOOLONG, "%.*s: name longer than %d bytes", (int)(e - path), path, BTRFS_NAME_LEN);
		if (e - p == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (e - p == 2 && p[0] == '.' && p[1] == '.')
			return blab_fail(&fs->err, BLAB_EINVAL, "%s: '..' is not supported in paths", path);
		struct dir_entry de;
		u32 off;
		ret = btrfs_lookup_dir_entry(fs, r, cur, BTRFS_DIR_ITEM_KEY, p, (u16)(e - p), &de, &off);
		if (ret == BLAB_ENOENT)
			return blab_fail(&fs->err, BLAB_ENOENT, "%.*s: no such file or directory", (int)(e - path), path);
		if (ret)
			return ret;
		if (de.location.type == BTRFS_ROOT_ITEM_KEY && !cross) {
			return blab_fail(&fs->err, BLAB_ENOTSUP, "%.*s is a subvolume: not supported yet", (int)(e - p), p);
		} else if (de.location.type == BTRFS_ROOT_ITEM_KEY) {
			/* a subvolume: on into its tree, at its root directory; one
			 * this tree does not hold (a copy in a snapshot) is empty */
			int held = btrfs_root_ref_matches(fs, r->objectid, de.location.objectid, cur, p, (u16)(e - p));
			if (held < 0)
				return held;
			if (!held)
				return blab_fail(&fs->err, *e ? BLAB_ENOENT : BLAB_EISDIR,
						 "%.*s: an empty directory where another subvolume was when this one was made", (int)(e - path), path);
			if (!(r = btrfs_subvol_root(fs, de.location.objectid, &cur)))
				return fs->err.code;
		} else if (de.location.type == BTRFS_INODE_ITEM_KEY) {
			cur = de.location.objectid;
		} else {
			return blab_fail(&fs->err, BLAB_ECORRUPT, "%.*s: its directory entry points at key type %u", (int)(e - path), path,
					 de.location.type);
		}
		p = e;
	}
	if (root)
		*root = r;
	*ino = cur;
	return 0;
}

int btrfs_lookup_path(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 *ino)
{
	return walk_path(fs, root, path, 0, NULL, ino);
}

struct btrfs_root *btrfs_subvol_root(struct btrfs_fs_info *fs, u64 subvol, u64 *dirid)
{
	struct btrfs_root *r = btrfs_get_root(fs, subvol);
	if (!r || !r->in_root_tree || !r->node || !btrfs_root_shareable(r)) {
		blab_fail(&fs->err, BLAB_ECORRUPT, "a directory entry names subvolume %llu, which has no root item",
			  (unsigned long long)subvol);
		return NULL;
	}
	*dirid = btrfs_root_dirid(r->item);
	return r;
}

int btrfs_lookup_path_subvol(struct btrfs_fs_info *fs, const char *path, struct btrfs_root **root, u64 *ino)
{
	return walk_path(fs, fs->fs_root, path, 1, root, ino);
}

int btrfs_split_subvol_path(struct btrfs_fs_info *fs, const char *path, struct btrfs_root **root, size_t *rel)
{
	struct btrfs_root *r = fs->fs_root;
	u64 cur = BTRFS_FIRST_FREE_OBJECTID;
	size_t at = 0, n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	*root = r;
	*rel = 0;
	if (path[0] != '/')
		return 0; /* the operation says what is wrong */
	for (;;) {
		while (at < n && path[at] == '/')
			at++;
		size_t e = at;
		while (e < n && path[e] != '/')
			e++;
		if (e >= n || e - at > BTRFS_NAME_LEN)
			return 0; /* the last name: it is the operation's */
		struct dir_entry de;
		u32 off;
		int ret = btrfs_lookup_dir_entry(fs, r, cur, BTRFS_DIR_ITEM_KEY, path + at, (u16)(e - at), &de, &off);
		if (ret == BLAB_ENOENT)
			return 0;
		if (ret)
			return ret;
		if (de.location.type == BTRFS_ROOT_ITEM_KEY) {
			int held = btrfs_root_ref_matches(fs, r->objectid, de.location.objectid, cur, path + at, (u16)(e - at));
			if (held < 0)
				return held;
			if (!held || !(r = btrfs_subvol_root(fs, de.location.objectid, &cur))) {
				fs->err.code = 0;
				return 0; /* an empty directory: nothing can be made in it; the operation says so */
			}
			*root = r;
			*rel = e;
		} else {
			cur = de.location.objectid;
		}
		at = e;
	}
}

int btrfs_resolve_parent(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 *dir, const char **name,
			 u16 *len)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (path[0] != '/')
		return blab_fail(&fs->err, BLAB_EINVAL, "%s: paths must start with /", path);
	size_t s = n;
	while (s > 0 && path[s - 1] != '/')
		s--;
	if (s == n)
		return blab_fail(&fs->err, BLAB_EINVAL, "%s: names the root directory", path);
	if (n - s > BTRFS_NAME_LEN)
		return blab_fail(&fs->err, BLAB_ENAMETOOLONG, "%s: name longer than %d bytes", path, BTRFS_NAME_LEN);
	if ((n - s == 1 && path[s] == '.') || (n - s == 2 && path[s] == '.' && path[s + 1] == '.'))
		return blab_fail(&fs->err, BLAB_EINVAL, "%s: '.' and '..' cannot be created or removed", path);
	char *parent = malloc(s + 1);
	if (!parent)
		return blab_fail(&fs->err, BLAB_ENOMEM, "path");
	size_t pl = s;
	while (pl > 1 && path[pl - 1] == '/')
		pl--;
	memcpy(parent, path, pl);
	parent[pl] = 0;
	int ret = btrfs_lookup_path(fs, root, parent, dir);
	if (!ret) {
		int d;
		ret = is_dir(fs, root, *dir, &d);
		if (!ret && !d)
			ret = blab_fail(&fs->err, BLAB_ENOTDIR, "%s: not a directory", parent);
	}
	free(parent);
	*name = path + s;
	*len = (u16)(n - s);
	return ret;
}

int btrfs_make_root_dir(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 objectid, u64 nbytes, u64 sequence, u8 *inode_out)
{
	u8 inode[BTRFS_INODE_ITEM_SIZE] = {0};
	btrfs_set_inode_generation(inode, fs->generation);
	btrfs_set_inode_transid(inode, fs->generation);
	btrfs_set_inode_nbytes(inode, nbytes);
	btrfs_set_inode_nlink(inode, 1);
	btrfs_set_inode_mode(inode, S_IFDIR_ | 0755);
	btrfs_set_inode_sequence(inode, sequence);
	static const int offs[] = {BTRFS_INODE_ATIME_OFF, BTRFS_INODE_CTIME_OFF, BTRFS_INODE_MTIME_OFF, BTRFS_INODE_OTIME_OFF};
	for (int i = 0; i < 4; i++)
		btrfs_set_timespec_sec(inode + offs[i], fs->now);
	if (inode_out)
		memcpy(inode_out, inode, sizeof(inode));
	struct btrfs_key key = {objectid, BTRFS_INODE_ITEM_KEY, 0};
	int ret = btrfs_insert_item(fs, root, &key, inode, sizeof(inode));
	if (ret)
		return ret;
	u8 ref[BTRFS_INODE_REF_SIZE + 2];
	btrfs_set_inode_ref_index(ref, 0);
	btrfs_set_inode_ref_name_len(ref, 2);
	memcpy(ref + BTRFS_INODE_REF_SIZE, "..", 2);
	key = (struct btrfs_key){objectid, BTRFS_INODE_REF_KEY, objectid};
	return btrfs_insert_item(fs, root, &key, ref, sizeof(ref));
}

/* ---- links ---- */

/* A name of len bytes added to (grow) or gone from directory dir: its size
 * counts each name twice (DIR_ITEM and DIR_INDEX), and its times move. */
static int dir_names_changed(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u16 len, int grow)
{
	struct btrfs_inode d;
	int ret = btrfs_read_inode(fs, root, dir, &d);
	if (ret)
		return ret;
	d.size = grow ? d.size + 2 * (u64)len : d.size - 2 * (u64)len;
	btrfs_inode_touch(fs, &d, 1);
	return btrfs_update_inode(fs, root, &d);
}

/* Adds name -> ino (of type) to dir: INODE_REF, DIR_ITEM, DIR_INDEX, and
 * the directory's size and times. */
int btrfs_add_link_index(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u64 ino, u8 type, const char *name,
			 u16 len, u64 index)
{
	int ret = 0;
	if (index == 0) {
		if ((ret = next_dir_index(fs, root, dir, &index)))
			return ret;
	} else {
		u64 *next = u64map_get(&root->dir_index, dir);
		if (next && *next <= index)
			*next = index + 1;
	}
	u8 ref[BTRFS_INODE_REF_SIZE + BTRFS_NAME_LEN];
	btrfs_set_inode_ref_index(ref, index);
	btrfs_set_inode_ref_name_len(ref, len);
	memcpy(ref + BTRFS_INODE_REF_SIZE, name, len);
	struct btrfs_key key = {ino, BTRFS_INODE_REF_KEY, dir};
	if ((ret = btrfs_add_name_entry(fs, root, &key, ref, BTRFS_INODE_REF_SIZE + len)))
		return ret == BLAB_EOVERFLOW ? blab_fail(&fs->err, BLAB_EOVERFLOW, "too many links to inode %llu in one directory",
							  (unsigned long long)ino)
					     : ret;
	struct dir_entry e = {.location = {ino, BTRFS_INODE_ITEM_KEY, 0}, .transid = fs->generation, .type = type,
			      .name = name, .name_len = len};
	u8 buf[BTRFS_DIR_ITEM_SIZE + BTRFS_NAME_LEN];
	btrfs_fill_dir_entry(buf, &e);
	u32 esz = btrfs_dir_entry_size(&e);
	key = (struct btrfs_key){dir, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(name, len)};
	if ((ret = btrfs_add_name_entry(fs, root, &key, buf, esz)))
		return ret;
	key = (struct btrfs_key){dir, BTRFS_DIR_INDEX_KEY, index};
	if ((ret = btrfs_insert_item(fs, root, &key, buf, esz)))
		return ret;
	if (fs->delayed_hook) {
		fs->delayed_hook(fs->delayed_ctx, root->objectid, dir, 1);
		if (root->objectid == BTRFS_FS_TREE_OBJECTID && (ret = btrfs_log_note_delayed_index(fs, dir, index)))
			return ret;
	}
	return dir_names_changed(fs, root, dir, len, 1);
}

static int add_link(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u64 ino, u8 type, const char *name, u16 len)
{
	return btrfs_add_link_index(fs, root, dir, ino, type, name, len, 0);
}

/* Removes name -> ino from dir (the reverse of add_link). */
int btrfs_remove_link(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u64 ino, const char *name, u16 len)
{
	u64 index = 0;
	u32 off;
	struct dir_entry e;
	int ret = btrfs_lookup_inode_ref(fs, root, ino, dir, name, len, &index, &off);
	if (ret)
		return ret == BLAB_ENOENT ? blab_fail(&fs->err, BLAB_ECORRUPT, "inode %llu has no ref for name %.*s in %llu",
						      (unsigned long long)ino, len, name, (unsigned long long)dir)
					  : ret;
	struct btrfs_key key = {ino, BTRFS_INODE_REF_KEY, dir};
	if ((ret = btrfs_remove_name_entry(fs, root, &key, off, BTRFS_INODE_REF_SIZE + len)))
		return ret;
	if ((ret = btrfs_lookup_dir_entry(fs, root, dir, BTRFS_DIR_ITEM_KEY, name, len, &e, &off)))
		return ret;
	key = (struct btrfs_key){dir, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(name, len)};
	if ((ret = btrfs_remove_name_entry(fs, root, &key, off, btrfs_dir_entry_size(&e))))
		return ret;
	if ((ret = btrfs_log_note_name_removed(fs, dir, key.offset)))
		return ret;
	key = (struct btrfs_key){dir, BTRFS_DIR_INDEX_KEY, index};
	ret = btrfs_delete_item(fs, root, &key);
	if (!ret && fs->delayed_hook) {
		fs->delayed_hook(fs->delayed_ctx, root->objectid, dir, -1);
		if (root->objectid == BTRFS_FS_TREE_OBJECTID)
			ret = btrfs_log_note_delayed_index(fs, dir, index);
	}
	if (ret == BLAB_ENOENT)
		ret = blab_fail(&fs->err, BLAB_ECORRUPT, "directory %llu has no DIR_INDEX %llu for %.*s", (unsigned long long)dir,
				(unsigned long long)index, len, name);
	if (ret)
		return ret;
	return dir_names_changed(fs, root, dir, len, 0);
}

static int check_new_name(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, const char *name, u16 len)
{
	if (len == 0 || len > BTRFS_NAME_LEN || memchr(name, '/', len) || memchr(name, 0, len))
		return blab_fail(&fs->err, BLAB_EINVAL, "'%.*s' is not a valid name", len, name);
	struct dir_entry e;
	u32 off;
	int ret = btrfs_lookup_dir_entry(fs, root, dir, BTRFS_DIR_ITEM_KEY, name, len, &e, &off);
	if (ret == 0)
		return blab_fail(&fs->err, BLAB_EEXIST, "%.*s: file exists", len, name);
	return ret == BLAB_ENOENT ? 0 : ret;
}

int btrfs_find_subvol_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 *dir, const char **name,
			    u16 *len, u64 *subvol)
{
	int ret = btrfs_resolve_parent(fs, root, path, dir, name, len);
	if (ret)
		return ret;
	struct dir_entry e;
	u32 off;
	if ((ret = btrfs_lookup_dir_entry(fs, root, *dir, BTRFS_DIR_ITEM_KEY, *name, *len, &e, &off)) == BLAB_ENOENT)
		return blab_fail(&fs->err, BLAB_ENOENT, "%s: no such file or directory", path);
	if (ret)
		return ret;
	if (e.location.type != BTRFS_ROOT_ITEM_KEY ||
	    btrfs_root_ref_matches(fs, root->objectid, e.location.objectid, *dir, *name, *len) != 1)
		return blab_fail(&fs->err, BLAB_EINVAL, "%s: not a subvolume", path);
	*subvol = e.location.objectid;
	return 0;
}

int btrfs_remove_subvol_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, const char *name, u16 len, u64 index)
{
	struct dir_entry e;
	u32 off;
	int ret = btrfs_lookup_dir_entry(fs, root, dir, BTRFS_DIR_ITEM_KEY, name, len, &e, &off);
	if (ret)
		return ret;
	struct btrfs_key key = {dir, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(name, len)};
	if ((ret = btrfs_remove_name_entry(fs, root, &key, off, btrfs_dir_entry_size(&e))))
		return ret;
	key = (struct btrfs_key){dir, BTRFS_DIR_INDEX_KEY, index};
	if ((ret = btrfs_delete_item(fs, root, &key)) && ret != BLAB_ENOENT)
		return ret;
	return dir_names_changed(fs, root, dir, len, 0);
}

int btrfs_add_subvol_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 subvol, u64 loc_offset,
			   u64 *dir, const char **name, u16 *len, u64 *index)
{
	int ret = btrfs_resolve_parent(fs, root, path, dir, name, len);
	if (ret || (ret = check_new_name(fs, root, *dir, *name, *len)) || (ret = next_dir_index(fs, root, *dir, index)))
		return ret;
	struct dir_entry e = {.location = {subvol, BTRFS_ROOT_ITEM_KEY, loc_offset}, .transid = fs->generation, .type = BTRFS_FT_DIR,
			      .name = *name, .name_len = *len};
	u8 buf[BTRFS_DIR_ITEM_SIZE + BTRFS_NAME_LEN];
	btrfs_fill_dir_entry(buf, &e);
	u32 esz = btrfs_dir_entry_size(&e);
	struct btrfs_key key = {*dir, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(*name, *len)};
	if ((ret = btrfs_add_name_entry(fs, root, &key, buf, esz)))
		return ret;
	key = (struct btrfs_key){*dir, BTRFS_DIR_INDEX_KEY, *index};
	if ((ret = btrfs_insert_item(fs, root, &key, buf, esz)))
		return ret;
	return dir_names_changed(fs, root, *dir, *len, 1);
}

static int new_inode(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct inode_attrs *a, u64 size, u64 nbytes,
		     u64 *ino)
{
	u64 hi;
	int ret = highest_objectid(fs, root, &hi);
	if (ret)
		return ret;
	if (hi + 1 >= BTRFS_LAST_FREE_OBJECTID)
		return blab_fail(&fs->err, BLAB_ENOSPC, "no inode numbers left");
	struct btrfs_inode in = {0};
	in.ino = hi + 1;
	in.generation = in.transid = fs->generation;
	in.size = size;
	in.nbytes = nbytes;
	in.nlink = 1;
	in.mode = a->mode;
	in.uid = a->uid;
	in.gid = a->gid;
	in.rdev = a->rdev;
	struct btrfs_timespec now = {fs->now, 0};
	in.atime = a->have_times ? a->atime : now;
	in.ctime = a->have_times ? a->ctime : now;
	in.mtime = a->have_times ? a->mtime : now;
	in.otime = now;
	u8 item[BTRFS_INODE_ITEM_SIZE];
	fill_inode_item(item, &in);
	struct btrfs_key key = {in.ino, BTRFS_INODE_ITEM_KEY, 0};
	if ((ret = btrfs_insert_item(fs, root, &key, item, sizeof(item))))
		return ret;
	root->highest_objectid = in.ino;
	*ino = in.ino;
	return 0;
}

int btrfs_create_at(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, const char *name, u16 len,
		    const struct inode_attrs *a, u64 *ino)
{
	int ret = check_new_name(fs, root, dir, name, len);
	if (ret)
		return ret;
	u8 type = btrfs_mode_to_ftype(a->mode);
	if (type == BTRFS_FT_UNKNOWN || type == BTRFS_FT_SYMLINK)
		return blab_fail(&fs->err, BLAB_EINVAL, "%.*s: mode 0%o is not a file, directory or special file", len, name, a->mode);
	if ((ret = new_inode(fs, root, a, 0, 0, ino)))
		return ret;
	return add_link(fs, root, dir, *ino, type, name, len);
}

int btrfs_symlink_at(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, const char *name, u16 len,
		     const char *target, const struct inode_attrs *a, u64 *ino)
{
	size_t tl = strlen(target);
	int ret = check_new_name(fs, root, dir, name, len);
	if (ret)
		return ret;
	if (tl == 0 || tl > btrfs_max_symlink(fs))
		return blab_fail(&fs->err, BLAB_ENAMETOOLONG, "%.*s: symlink target of %zu bytes: it must be 1 to %u bytes", len,
				 name, tl, btrfs_max_symlink(fs));
	struct inode_attrs sa = *a;
	sa.mode = S_IFLNK_ | 0777;
	if ((ret = new_inode(fs, root, &sa, tl, tl, ino)))
		return ret;
	if ((ret = btrfs_insert_inline_extent(fs, root, *ino, (const u8 *)target, (u32)tl)))
		return ret;
	return add_link(fs, root, dir, *ino, BTRFS_FT_SYMLINK, name, len);
}

int btrfs_link_at(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 dir, const char *name, u16 len)
{
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, root, ino, &in);
	if (ret)
		return ret;
	if ((in.mode & S_IFMT_) == S_IFDIR_)
		return blab_fail(&fs->err, BLAB_EISDIR, "%.*s: directories cannot be hard linked", len, name);
	if (in.nlink >= 65535)
		return blab_fail(&fs->err, BLAB_EOVERFLOW, "%.*s: too many links", len, name);
	if ((ret = check_new_name(fs, root, dir, name, len)))
		return ret;
	if ((ret = add_link(fs, root, dir, ino, btrfs_mode_to_ftype(in.mode), name, len)))
		return ret;
	if ((ret = btrfs_read_inode(fs, root, ino, &in)))
		return ret;
	in.nlink++;
	btrfs_inode_touch(fs, &in, 0);
	btrfs_log_note_link(fs, ino);
	return btrfs_update_inode(fs, root, &in);
}

/* Deletes every item of an inode with no names left, dropping its data. */
int btrfs_evict_inode(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino)
{
	/* in-flight ordered extents complete first; dirty pages are dropped */
	int ret = btrfs_wait_ordered(fs, btrfs_ikey(fs, root, ino));
	if (ret)
		return ret;
	btrfs_delalloc_evict(fs, btrfs_ikey(fs, root, ino));
	ret = btrfs_drop_file_extents(fs, root, ino, 0, (u64)-1, NULL);
	if (ret)
		return ret;
	return btrfs_del_items_of(fs, root, ino, 0, (u8)-1);
}

/* Drops one link; the inode goes when its last link does. */
static int drop_link(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u64 ino, const char *name, u16 len)
{
	int ret = btrfs_remove_link(fs, root, dir, ino, name, len);
	if (ret)
		return ret;
	struct btrfs_inode in;
	if ((ret = btrfs_read_inode(fs, root, ino, &in)))
		return ret;
	btrfs_log_note_unlink(fs, dir, ino, 0, (in.mode & S_IFMT_) == S_IFDIR_);
	if ((in.mode & S_IFMT_) == S_IFDIR_ || in.nlink <= 1)
		return btrfs_evict_inode(fs, root, ino);
	in.nlink--;
	btrfs_inode_touch(fs, &in, 0);
	return btrfs_update_inode(fs, root, &in);
}

/* ---- path forms ---- */

/* ret, with the path named when it says the name exists. */
static int named_exists(struct btrfs_fs_info *fs, int ret, const char *path)
{
	if (ret == BLAB_EEXIST)
		blab_fail(&fs->err, BLAB_EEXIST, "%s: file exists", path);
	return ret;
}

int btrfs_create(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, const struct inode_attrs *a, u64 *ino)
{
	u64 dir;
	const char *name;
	u16 len;
	int ret = btrfs_resolve_parent(fs, root, path, &dir, &name, &len);
	if (ret)
		return ret;
	return named_exists(fs, btrfs_create_at(fs, root, dir, name, len, a, ino), path);
}

int btrfs_symlink(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *target, const char *path)
{
	u64 dir, ino;
	const char *name;
	u16 len;
	struct inode_attrs a = {.mode = S_IFLNK_ | 0777};
	int ret = btrfs_resolve_parent(fs, root, path, &dir, &name, &len);
	if (ret)
		return ret;
	return named_exists(fs, btrfs_symlink_at(fs, root, dir, name, len, target, &a, &ino), path);
}

int btrfs_link(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *existing, const char *path)
{
	u64 ino, dir;
	const char *name;
	u16 len;
	int ret = btrfs_lookup_path(fs, root, existing, &ino);
	if (ret)
		return ret;
	if ((ret = btrfs_resolve_parent(fs, root, path, &dir, &name, &len)))
		return ret;
	ret = btrfs_link_at(fs, root, ino, dir, name, len);
	if (ret == BLAB_EISDIR)
		return blab_fail(&fs->err, BLAB_EISDIR, "%s: is a directory: directories cannot be hard linked", existing);
	return named_exists(fs, ret, path);
}

static int lookup_child(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 *dir, const char **name,
			u16 *len, u64 *ino, int *isdir)
{
	int ret = btrfs_resolve_parent(fs, root, path, dir, name, len);
	if (ret)
		return ret;
	u8 type;
	ret = btrfs_lookup_name(fs, root, *dir, *name, *len, ino, &type);
	if (ret == BLAB_ENOENT)
		return blab_fail(&fs->err, BLAB_ENOENT, "%s: no such file or directory", path);
	*isdir = type == BTRFS_FT_DIR;
	return ret;
}

/* 0 when directory ino (at path) is empty, else ENOTEMPTY naming path, or an error. */
static int empty_dir(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, const char *path)
{
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, root, ino, &in);
	if (!ret && in.size)
		ret = blab_fail(&fs->err, BLAB_ENOTEMPTY, "%s: directory not empty", path);
	return ret;
}

/* unlink (rmdir 0) or rmdir (rmdir 1) of path. */
static int remove_path(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, int rmdir)
{
	u64 dir, ino;
	const char *name;
	u16 len;
	int d = 0;
	int ret = lookup_child(fs, root, path, &dir, &name, &len, &ino, &d);
	if (ret)
		return ret;
	if (d && !rmdir)
		return blab_fail(&fs->err, BLAB_EISDIR, "%s: is a directory (use rmdir)", path);
	if (!d && rmdir)
		return blab_fail(&fs->err, BLAB_ENOTDIR, "%s: not a directory", path);
	if (rmdir && (ret = empty_dir(fs, root, ino, path)))
		return ret;
	return drop_link(fs, root, dir, ino, name, len);
}

int btrfs_unlink(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path)
{
	return remove_path(fs, root, path, 0);
}

int btrfs_rmdir(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path)
{
	return remove_path(fs, root, path, 1);
}

/* Whether directory anc is dir itself or one of its ancestors. */
static int is_ancestor(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 anc, u64 dir, int *yes)
{
	*yes = 0;
	for (int depth = 0; depth < 4096; depth++) {
		if (dir == anc) {
			*yes = 1;
			return 0;
		}
		if (dir == BTRFS_FIRST_FREE_OBJECTID)
			return 0;
		/* a directory has one INODE_REF: its parent is the key offset */
		struct btrfs_item_cursor cur;
		struct btrfs_key from = {dir, BTRFS_INODE_REF_KEY, 0};
		int ret = btrfs_cursor_first(fs, root, &from, &cur);
		if (ret)
			return ret < 0 ? ret : blab_fail(&fs->err, BLAB_ECORRUPT, "directory %llu has no parent", (unsigned long long)dir);
		struct btrfs_key k = cur.key;
		if (k.objectid != dir || k.type != BTRFS_INODE_REF_KEY)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "directory %llu has no parent", (unsigned long long)dir);
		dir = k.offset;
	}
	return blab_fail(&fs->err, BLAB_ECORRUPT, "directory loop above %llu", (unsigned long long)dir);
}

int btrfs_rename(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *from, const char *to)
{
	u64 sdir, sino, ddir, dino;
	const char *sname, *dname;
	u16 slen, dlen;
	int sd = 0, ret = lookup_child(fs, root, from, &sdir, &sname, &slen, &sino, &sd);
	if (ret)
		return ret;
	if ((ret = btrfs_resolve_parent(fs, root, to, &ddir, &dname, &dlen)))
		return ret;
	if (sd) {
		int inside;
		if ((ret = is_ancestor(fs, root, sino, ddir, &inside)))
			return ret;
		if (inside)
			return blab_fail(&fs->err, BLAB_EINVAL, "%s: cannot move a directory into itself (%s)", from, to);
	}
	u8 dtype;
	ret = btrfs_lookup_name(fs, root, ddir, dname, dlen, &dino, &dtype);
	if (ret && ret != BLAB_ENOENT)
		return ret;
	if (ret == 0) {
		if (dino == sino)
			return 0; /* two names of one inode: nothing to do */
		int dd = dtype == BTRFS_FT_DIR;
		if (sd && !dd)
			return blab_fail(&fs->err, BLAB_ENOTDIR, "%s: not a directory (cannot replace it with directory %s)", to, from);
		if (!sd && dd)
			return blab_fail(&fs->err, BLAB_EISDIR, "%s: is a directory (cannot replace it with %s)", to, from);
		if (dd && (ret = empty_dir(fs, root, dino, to)))
			return ret;
		if ((ret = drop_link(fs, root, ddir, dino, dname, dlen)))
			return ret;
	}
	struct btrfs_inode in;
	if ((ret = btrfs_read_inode(fs, root, sino, &in)))
		return ret;
	if ((ret = btrfs_remove_link(fs, root, sdir, sino, sname, slen)) ||
	    (ret = add_link(fs, root, ddir, sino, btrfs_mode_to_ftype(in.mode), dname, dlen)))
		return ret;
	btrfs_log_note_unlink(fs, sdir, sino, 1, sd);
	if ((ret = btrfs_read_inode(fs, root, sino, &in)))
		return ret;
	btrfs_inode_touch(fs, &in, 0);
	return btrfs_update_inode(fs, root, &in);
}

/* ---- listing ---- */

struct list_ctx {
	struct btrfs_fs_info *fs;
	struct btrfs_root *root;
	readdir_fn dir_fn;
	void *ctx;
};

static int one_dir_index(void *ctx, const struct btrfs_key *k, const u8 *p, u32 size)
{
	struct list_ctx *l = ctx;
	struct dir_entry e;
	if (!btrfs_parse_dir_entry(p, size, &e))
		return blab_fail(&l->fs->err, BLAB_ECORRUPT, "corrupt DIR_INDEX (%llu %llu)", (unsigned long long)k->objectid,
				 (unsigned long long)k->offset);
	if (e.location.type == BTRFS_ROOT_ITEM_KEY) {
		int held = btrfs_root_ref_matches(l->fs, l->root->objectid, e.location.objectid, k->objectid, e.name, e.name_len);
		if (held < 0)
			return held;
		return l->dir_fn(l->ctx, e.name, e.name_len, e.location.objectid,
				 (u8)(e.type | (held ? BTRFS_FT_SUBVOL : BTRFS_FT_EMPTY_SUBVOL)));
	}
	if (e.location.type != BTRFS_INODE_ITEM_KEY)
		return blab_fail(&l->fs->err, BLAB_ECORRUPT, "DIR_INDEX (%llu %llu) points at key type %u", (unsigned long long)k->objectid,
				 (unsigned long long)k->offset, e.location.type);
	return l->dir_fn(l->ctx, e.name, e.name_len, e.location.objectid, e.type);
}

int btrfs_readdir(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, readdir_fn fn, void *ctx)
{
	struct list_ctx l = {.fs = fs, .root = root, .dir_fn = fn, .ctx = ctx};
	return btrfs_for_each_item(fs, root, dir, BTRFS_DIR_INDEX_KEY, one_dir_index, &l);
}
