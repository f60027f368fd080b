#include "reflink.h"
#include "ctree.h"
#include "delalloc.h"
#include "delayed-ref.h"
#include "file-item.h"
#include "file.h"
#include "inode.h"
#include "tree-log.h"
#include "transaction.h"
#include <stdlib.h>

static int regular(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_inode *in)
{
	int ret = btrfs_read_inode(fs, root, ino, in);
	if (!ret && (in->mode & S_IFMT_) != S_IFREG_)
		ret = blab_fail(&fs->err, BLAB_EINVAL, "inode %llu is not a regular file", (unsigned long long)ino);
	return ret;
}

int btrfs_clone_file(struct btrfs_fs_info *fs, struct btrfs_root *sroot, u64 sino, struct btrfs_root *droot, u64 dino)
{
	struct btrfs_inode src, dst;
	int ret;
	if (sroot == droot && sino == dino)
		return blab_fail(&fs->err, BLAB_EINVAL, "a file cannot be cloned onto itself");
	if ((ret = btrfs_start_transaction(fs)) || (ret = regular(fs, sroot, sino, &src)) || (ret = regular(fs, droot, dino, &dst)))
		return ret;
	/* what the caches hold goes to disk first: the source's extents are then all of it */
	if ((ret = btrfs_writeback_and_wait(fs, sroot, sino, 0, (u64)-1)) || (ret = btrfs_file_truncate(fs, droot, dino, 0)) ||
	    (ret = regular(fs, sroot, sino, &src)) || (ret = regular(fs, droot, dino, &dst)))
		return ret;
	u64 cur = 0;
	for (;;) {
		struct file_extent fe;
		ret = btrfs_find_file_extent(fs, sroot, sino, cur, (u64)-1, &fe);
		if (ret == BLAB_ENOENT)
			break;
		if (ret)
			return ret;
		if (fe.type == BTRFS_FILE_EXTENT_INLINE) {
			u8 data[4096];
			u32 len = fe.inline_len < sizeof(data) ? fe.inline_len : (u32)sizeof(data);
			if ((ret = btrfs_read_tree_range(fs, sroot, sino, src.size, 0, data, len)) ||
			    (ret = btrfs_insert_inline_extent(fs, droot, dino, data, len)))
				return ret;
			cur = fe.ram_bytes > 0 ? fe.ram_bytes : 1;
			continue;
		}
		if (fe.disk_bytenr) {
			fs_trace(fs, (struct trace_event){.kind = TRACE_BACKREF, .bytenr = fe.disk_bytenr, .level = -1, .tree = droot->objectid,
							  .slot = +1, .b = dino, .c = fe.key.offset - fe.offset});
			if ((ret = btrfs_mod_data_ref(fs, fe.disk_bytenr, fe.disk_num_bytes, droot->objectid, dino, fe.key.offset - fe.offset, +1)))
				return ret;
		}
		if ((ret = btrfs_insert_file_extent(fs, droot, dino, fe.key.offset, &fe, fe.offset, fe.num_bytes)))
			return ret;
		cur = file_extent_end(&fe);
	}
	dst.size = src.size;
	dst.nbytes = src.nbytes;
	btrfs_inode_touch(fs, &dst, 1);
	if ((ret = btrfs_update_inode(fs, droot, &dst)))
		return ret;
	btrfs_delalloc_evict(fs, btrfs_ikey(fs, droot, dino));
	if (droot == fs->fs_root)
		btrfs_log_note_truncate(fs, dino); /* an fsync logs all of its extents, not the ones it wrote */
	return 0;
}
