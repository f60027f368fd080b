/* Every tree as JSON (what the web app shows). */
#include "fuzz.h"
#include "../src/print-tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_print(data, size, btrfs_dump_tree_json);
	return 0;
}
