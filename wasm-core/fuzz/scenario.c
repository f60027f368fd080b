/* The scenario language: any text, run from an empty filesystem with a
 * budget of operations and bytes (2,000 and 1 MiB) so each input stays quick.
 * The filesystem is the core's own making, so it must also be sound: a run
 * never meets corruption, a pending log (a script ending in crash) replays,
 * and check (data checksums too) finds nothing. Any of these failing aborts,
 * which libFuzzer reports as a crash. */
#include "../src/check.h"
#include "../src/print-tree.h"
#include "../src/scenario.h"
#include "../src/tree-log.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scenario_options o = {.seed = 1, .now = 1, .max_ops = 2000, .max_bytes = 1 << 20};
	struct scenario_result res;
	struct blab_err err = {0};
	int ret = scenario_run((const char *)data, size, "fuzz", &o, &res, &err);
	if (ret == BLAB_ECORRUPT) {
		fprintf(stderr, "scenario: the core's own filesystem is corrupt: %s\n", err.msg);
		abort();
	}
	if (ret)
		return 0;
	struct btrfs_fs_info *fs = res.fs;
	if (res.crashed && (ret = btrfs_replay_log(fs, NULL))) {
		fprintf(stderr, "scenario: replay of the core's own log failed: %s\n", fs->err.msg);
		abort();
	}
	static struct strbuf out; /* kept between runs */
	out.len = 0;
	out.oom = 0;
	int errors = btrfs_check_fs(fs, &out, CHECK_DATA_CSUM);
	if (errors) {
		fprintf(stderr, "scenario: check found %d errors in the core's own filesystem:\n%.*s\n", errors,
			(int)(out.len > 4000 ? 4000 : out.len), out.s);
		abort();
	}
	btrfs_fs_free(fs);
	scenario_result_free(&res);
	return 0;
}
