/* xattr.c — extended attributes: XATTR_ITEMs keyed by the name's hash,
 * several names sharing one item when their hashes collide. */
#include "xattr.h"
#include "crc32c.h"
#include "dir-item.h"
#include <stdlib.h>
#include <string.h>

int btrfs_setxattr(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, const char *name, const u8 *value, u16 len)
{
	size_t nl = strlen(name);
	if (nl == 0 || nl > BTRFS_NAME_LEN)
		return blab_fail(&fs->err, BLAB_EINVAL, "xattr name '%s' must be 1 to %d bytes", name, BTRFS_NAME_LEN);
	if (BTRFS_DIR_ITEM_SIZE + nl + len > fs->nodesize / 2)
		return blab_fail(&fs->err, BLAB_EOVERFLOW, "xattr %s: value of %u bytes is too large for %u-byte nodes", name, len,
				 fs->nodesize);
	struct dir_entry e;
	u32 off;
	int ret = btrfs_lookup_dir_entry(fs, root, ino, BTRFS_XATTR_ITEM_KEY, name, (u16)nl, &e, &off);
	struct btrfs_key key = {ino, BTRFS_XATTR_ITEM_KEY, btrfs_name_hash(name, nl)};
	if (ret == 0)
		ret = btrfs_remove_name_entry(fs, root, &key, off, btrfs_dir_entry_size(&e));
	else if (ret == BLAB_ENOENT)
		ret = 0;
	if (ret)
		return ret;
	struct dir_entry ne = {.transid = fs->generation, .type = BTRFS_FT_XATTR, .name = name, .name_len = (u16)nl,
			       .data = value, .data_len = len};
	u8 *buf = malloc(btrfs_dir_entry_size(&ne));
	if (!buf)
		return blab_fail(&fs->err, BLAB_ENOMEM, "xattr");
	btrfs_fill_dir_entry(buf, &ne);
	ret = btrfs_add_name_entry(fs, root, &key, buf, btrfs_dir_entry_size(&ne));
	free(buf);
	if (ret)
		return ret;
	struct btrfs_inode in;
	if ((ret = btrfs_read_inode(fs, root, ino, &in)))
		return ret;
	btrfs_inode_touch(fs, &in, 0);
	return btrfs_update_inode(fs, root, &in);
}

struct xattr_list {
	struct btrfs_fs_info *fs;
	xattr_fn fn;
	void *ctx;
};

static int one_xattr_item(void *ctx, const struct btrfs_key *k, const u8 *p, u32 size)
{
	struct xattr_list *l = ctx;
	for (u32 o = 0; o < size;) {
		struct dir_entry e;
		u32 n = btrfs_parse_dir_entry(p + o, size - o, &e);
		if (!n)
			return blab_fail(&l->fs->err, BLAB_ECORRUPT, "corrupt XATTR_ITEM of inode %llu", (unsigned long long)k->objectid);
		int r = l->fn(l->ctx, e.name, e.name_len, e.data, e.data_len);
		if (r)
			return r;
		o += n;
	}
	return 0;
}

int btrfs_listxattr(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, xattr_fn fn, void *ctx)
{
	struct xattr_list l = {.fs = fs, .fn = fn, .ctx = ctx};
	return btrfs_for_each_item(fs, root, ino, BTRFS_XATTR_ITEM_KEY, one_xattr_item, &l);
}
