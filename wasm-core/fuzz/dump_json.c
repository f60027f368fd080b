/* Every tree as JSON (what the web app shows). */
#include "fuzz.h"
#include "../src/print-tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (fs) {
		struct strbuf out = {0};
		btrfs_dump_tree_json(fs, &out);
		sb_free(&out);
		btrfs_fs_free(fs);
	}
	return 0;
}
