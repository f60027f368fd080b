/* The core's consistency check, data checksums included. */
#include "fuzz.h"
#include "../src/check.h"
#include "../src/print-tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (fs) {
		struct strbuf out = {0};
		btrfs_check_fs(fs, &out, CHECK_DATA_CSUM);
		sb_free(&out);
		btrfs_fs_free(fs);
	}
	return 0;
}
