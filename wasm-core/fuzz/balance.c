/* Balance an image as `btrfslab balance` does: refused when the layout is
 * broken (btrfs_verify_layout), a kernel balance left reloc trees, or check
 * finds anything; else the log replayed and the block groups relocated (the
 * types from the input's last byte: -m, -d, -s or all). A balance that
 * succeeds and leaves an image check does not pass is a finding (abort). */
#include "fuzz.h"
#include "../src/check.h"
#include "../src/relocation.h"
#include "../src/tree-log.h"
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return 0;
	static const u64 masks[] = {BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_SYSTEM, BTRFS_BLOCK_GROUP_DATA,
				    BTRFS_BLOCK_GROUP_SYSTEM, BTRFS_BLOCK_GROUP_TYPE_MASK};
	struct btrfs_replay_stats rs = {0};
	struct btrfs_reloc_stats st = {0};
	if (!btrfs_reloc_trees_left(fs, "balance") && !btrfs_verify_writable(fs) &&
	    !btrfs_check_clean(fs, "the image") && !btrfs_replay_log(fs, &rs) && !btrfs_balance(fs, masks[data[size - 1] & 3], 100, &st) &&
	    btrfs_check_clean(fs, "the balanced image")) {
		fprintf(stderr, "balance exited 0 with a bad image: %s\n", fs->err.msg);
		abort();
	}
	btrfs_fs_free(fs);
	return 0;
}
