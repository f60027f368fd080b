/* The core's consistency check, data checksums included. */
#include "fuzz.h"
#include "../src/check.h"
#include "../src/print-tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (fs) {
		static struct strbuf out; /* kept between runs: no large allocation per run */
		out.len = 0;
		out.oom = 0;
		btrfs_check_fs(fs, &out, CHECK_DATA_CSUM);
		if (out.cap > (64u << 20))
			sb_free(&out);
		btrfs_fs_free(fs);
	}
	return 0;
}
