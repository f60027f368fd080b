/* Every tree as btrfs inspect-internal dump-tree prints it. */
#include "fuzz.h"
#include "../src/print-tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (fs) {
		struct strbuf out = {0};
		btrfs_dump_tree_text(fs, 0, &out);
		sb_free(&out);
		btrfs_fs_free(fs);
	}
	return 0;
}
