/* Replay a pending log as mount does, then check what it left. */
#include "fuzz.h"
#include "../src/check.h"
#include "../src/print-tree.h"
#include "../src/tree-log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (fs) {
		if (!btrfs_replay_log(fs, NULL)) {
			struct strbuf out = {0};
			btrfs_check_fs(fs, &out, 0);
			sb_free(&out);
		}
		btrfs_fs_free(fs);
	}
	return 0;
}
