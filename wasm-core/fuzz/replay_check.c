/* Replay a pending log as `btrfslab replay` does: refused when the layout is
 * broken (btrfs_verify_layout) or check finds anything before the replay.
 * A replay that succeeds and leaves an image check does not pass is a
 * finding (abort). */
#include "fuzz.h"
#include "../src/block-group.h"
#include "../src/check.h"
#include "../src/tree-log.h"
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return 0;
	if (!btrfs_load_block_groups(fs) && !btrfs_verify_layout(fs, NULL) && !btrfs_check_clean(fs, "the image") &&
	    !btrfs_replay_log(fs, NULL) && btrfs_check_clean(fs, "the replayed image")) {
		fprintf(stderr, "replay exited 0 with a bad image: %s\n", fs->err.msg);
		abort();
	}
	btrfs_fs_free(fs);
	return 0;
}
