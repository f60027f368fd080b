/* Qgroup accounting on a hostile image: quotas on (enabled when the image
 * has none), a level-1 qgroup assigned above the top level, a rescan, then
 * changes committed (a file written, part of it rewritten, a file in a new
 * subvolume). The numbers the commits accounted incrementally must equal
 * what a fresh rescan of the same trees counts: a difference aborts (a
 * finding). Every step may fail with an error on a bad image; none may
 * crash, hang or leak. */
#include "fuzz.h"
#include "../src/delalloc.h"
#include "../src/inode.h"
#include "../src/qgroup.h"
#include "../src/root-tree.h"
#include "../src/transaction.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_file(struct btrfs_fs_info *fs, struct btrfs_root *root, const char *path, u64 off, u64 len, u8 fill)
{
	static u8 buf[65536];
	struct inode_attrs a = {.mode = S_IFREG_ | 0644};
	u64 ino;
	int ret = btrfs_lookup_path(fs, root, path, &ino);
	if (ret == BLAB_ENOENT) {
		fs->err.code = 0;
		ret = btrfs_create(fs, root, path, &a, &ino);
	}
	memset(buf, fill, sizeof(buf));
	return ret ? ret : btrfs_buffered_write(fs, root, ino, off, buf, len < sizeof(buf) ? len : sizeof(buf));
}

static int changes(struct btrfs_fs_info *fs)
{
	int ret = btrfs_start_transaction(fs);
	if (!btrfs_qgroup_enabled(fs) && !ret)
		ret = btrfs_quota_enable(fs);
	u64 id = 1ULL << BTRFS_QGROUP_LEVEL_SHIFT | 77, sv;
	if (!ret && (ret = btrfs_qgroup_create(fs, id)) == BLAB_EEXIST)
		ret = 0;
	if (!ret && (ret = btrfs_qgroup_assign(fs, BTRFS_FS_TREE_OBJECTID, id)) == BLAB_EEXIST)
		ret = 0;
	if (!ret)
		ret = btrfs_qgroup_rescan(fs);
	if (!ret)
		ret = write_file(fs, fs->fs_root, "/fz-a", 0, 65536, 1);
	if (!ret && !(ret = btrfs_sync_data(fs)))
		ret = btrfs_commit_transaction(fs);
	if (!ret)
		ret = btrfs_start_transaction(fs);
	if (!ret)
		ret = write_file(fs, fs->fs_root, "/fz-a", 8192, 4096, 2);
	if (!ret && !(ret = btrfs_create_subvol(fs, fs->fs_root, "/fz-sv", &sv))) {
		struct btrfs_root *r = btrfs_get_root(fs, sv);
		ret = r ? write_file(fs, r, "/f", 0, 12288, 3) : BLAB_ENOENT;
	}
	if (!ret && !(ret = btrfs_sync_data(fs)))
		ret = btrfs_commit_transaction(fs);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return 0;
	if (!changes(fs) && !(btrfs_qgroup_status(fs) & BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT)) {
		size_t n;
		const struct btrfs_qgroup *g = btrfs_qgroups(fs, &n);
		u64 *was = malloc((n ? n : 1) * 3 * sizeof(u64));
		for (size_t i = 0; was && i < n; i++) {
			was[3 * i] = g[i].id;
			was[3 * i + 1] = g[i].rfer;
			was[3 * i + 2] = g[i].excl;
		}
		if (was && !btrfs_start_transaction(fs) && !btrfs_qgroup_rescan(fs)) {
			size_t m;
			g = btrfs_qgroups(fs, &m);
			for (size_t i = 0; i < n && i < m; i++)
				if (m != n || g[i].id != was[3 * i] || g[i].rfer != was[3 * i + 1] || g[i].excl != was[3 * i + 2]) {
					fprintf(stderr, "qgroup %llu/%llu: accounted %llu referenced, %llu exclusive; a rescan counts %llu, %llu\n",
						(unsigned long long)(was[3 * i] >> BTRFS_QGROUP_LEVEL_SHIFT),
						(unsigned long long)(was[3 * i] & ((1ULL << BTRFS_QGROUP_LEVEL_SHIFT) - 1)),
						(unsigned long long)was[3 * i + 1], (unsigned long long)was[3 * i + 2],
						(unsigned long long)g[i].rfer, (unsigned long long)g[i].excl);
					abort();
				}
		}
		free(was);
	}
	btrfs_fs_free(fs);
	return 0;
}
