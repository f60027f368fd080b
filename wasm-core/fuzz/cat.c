/* Read every regular file of the root directory and one level below, with
 * checksums verified. */
#include "fuzz.h"
#include "../cli/dirwalk.h"
#include "../src/file.h"

static void read_file(struct btrfs_fs_info *fs, u64 ino, u8 *buf)
{
	struct btrfs_inode in;
	if (btrfs_read_inode(fs, fs->fs_root, ino, &in) || (in.mode & S_IFMT_) != S_IFREG_)
		return;
	for (u64 off = 0, got; off < in.size && off < (64u << 20); off += got)
		if (btrfs_file_read(fs, fs->fs_root, ino, off, buf, 1 << 16, &got, 1) || !got)
			return;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static u8 buf[1 << 16];
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return 0;
	struct dir_list top = {0}, sub = {0};
	if (!dir_list_read(fs, BTRFS_FIRST_FREE_OBJECTID, &top))
		for (size_t i = 0; i < top.n; i++) {
			read_file(fs, top.e[i].ino, buf);
			if (top.e[i].type == BTRFS_FT_DIR && !dir_list_read(fs, top.e[i].ino, &sub))
				for (size_t j = 0; j < sub.n; j++)
					read_file(fs, sub.e[j].ino, buf);
		}
	dir_list_free(&top);
	dir_list_free(&sub);
	btrfs_fs_free(fs);
	return 0;
}
