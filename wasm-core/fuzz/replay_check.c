/* Replay a pending log as `btrfslab replay` does: refused when the layout is
 * broken (btrfs_verify_layout) or check finds anything before the replay;
 * an image without a log is skipped.
 * A replay that succeeds and leaves an image check does not pass is a
 * finding (abort). */
#include "fuzz.h"
#include "../src/check.h"
#include "../src/tree-log.h"
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return 0;
	/* no log: nothing to replay (and two checks saved) */
	if (btrfs_super_log_root(fs->super) && !btrfs_verify_writable(fs) && !btrfs_check_clean(fs, "the image") &&
	    !btrfs_replay_log(fs, NULL) && btrfs_check_clean(fs, "the replayed image")) {
		fprintf(stderr, "replay exited 0 with a bad image: %s\n", fs->err.msg);
		abort();
	}
	btrfs_fs_free(fs);
	return 0;
}
