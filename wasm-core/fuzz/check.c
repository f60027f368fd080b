/* The core's consistency check, data checksums included. */
#include "fuzz.h"
#include "../src/check.h"

static int check(struct btrfs_fs_info *fs, struct strbuf *out)
{
	return btrfs_check_fs(fs, out, CHECK_DATA_CSUM);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_print(data, size, check);
	return 0;
}
