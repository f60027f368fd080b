/* Read every regular file reached from the root, with checksums verified.
 * The walk has its own stack and enters each directory once (a hostile
 * image may loop), and reads at most a few MiB per file and in all. */
#include "fuzz.h"
#include "../cli/dirwalk.h"
#include "../src/file.h"
#include "../src/u64map.h"
#include <stdlib.h>

#define READ_PER_FILE (4u << 20)
#define READ_IN_ALL (32u << 20)
#define MAX_DIRS 4096

static u64 read_file(struct btrfs_fs_info *fs, u64 ino, u8 *buf, u64 room)
{
	struct btrfs_inode in;
	u64 off = 0, got;
	if (btrfs_read_inode(fs, fs->fs_root, ino, &in) || (in.mode & S_IFMT_) != S_IFREG_)
		return 0;
	for (; off < in.size && off < READ_PER_FILE && off < room; off += got)
		if (btrfs_file_read(fs, fs->fs_root, ino, off, buf, 1 << 16, &got, 1) || !got)
			break;
	return off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static u8 buf[1 << 16];
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return 0;
	struct u64map seen; /* directories entered, and files read */
	u64map_init(&seen, 1);
	u64 *stack = malloc(MAX_DIRS * sizeof(*stack));
	size_t depth = 0, dirs = 0;
	u64 budget = READ_IN_ALL;
	if (stack) {
		stack[depth++] = BTRFS_FIRST_FREE_OBJECTID;
		u64map_put(&seen, BTRFS_FIRST_FREE_OBJECTID);
	}
	while (depth && dirs++ < MAX_DIRS) {
		struct dir_list l = {0};
		if (dir_list_read(fs, stack[--depth], &l) == 0)
			for (size_t i = 0; i < l.n; i++) {
				if (u64map_get(&seen, l.e[i].ino) || !u64map_put(&seen, l.e[i].ino))
					continue;
				if (l.e[i].type == BTRFS_FT_DIR) {
					if (depth < MAX_DIRS)
						stack[depth++] = l.e[i].ino;
				} else if (budget) {
					u64 n = read_file(fs, l.e[i].ino, buf, budget);
					budget = n < budget ? budget - n : 0;
				}
			}
		dir_list_free(&l);
	}
	free(stack);
	u64map_free(&seen);
	btrfs_fs_free(fs);
	return 0;
}
