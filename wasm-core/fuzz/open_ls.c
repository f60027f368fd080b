/* Open an image and list every path below its root, long format. */
#include "fuzz.h"
#include "../cli/ls.h"
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (fs) {
		ls_run(fs, "/", LS_RECURSIVE | LS_LONG, null, null);
		btrfs_fs_free(fs);
	}
	return 0;
}
