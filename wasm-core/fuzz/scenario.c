/* The scenario language: any text, run from an empty filesystem with a small
 * budget of operations and bytes so each input stays quick. */
#include "../src/scenario.h"
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scenario_options o = {.seed = 1, .now = 1, .max_ops = 256, .max_bytes = 256 << 10};
	struct scenario_result res;
	struct blab_err err = {0};
	if (scenario_run((const char *)data, size, "fuzz", &o, &res, &err) == 0) {
		btrfs_fs_free(res.fs);
		scenario_result_free(&res);
	}
	return 0;
}
