/* Every tree as btrfs inspect-internal dump-tree prints it. */
#include "fuzz.h"
#include "../src/print-tree.h"

static int dump_all(struct btrfs_fs_info *fs, struct strbuf *out)
{
	return btrfs_dump_tree_text(fs, 0, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_print(data, size, dump_all);
	return 0;
}
