/* test_space.c — the space_infos' counters: after every step of seeded
 * random runs (writes, overwrites, truncates, unlinks, fsyncs, commits,
 * timed threads), data may_use is the delalloc bytes, reserved what ordered
 * extents in flight hold, each inode's metadata reservation what its
 * extents need, metadata may_use their sum with the global reserve. */
#include "test.h"
#include "../../src/scenario.h"
#include "../../src/space-info.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static u64 next(u64 *x)
{
	u64 z = (*x += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static char *random_script(u64 seed)
{
	size_t cap = 1 << 16, len = 0;
	char *s = malloc(cap);
	u64 x = seed;
	len += (size_t)snprintf(s + len, cap - len, "mkfs size=256M\nset device=ssd\nmkdir /d\n");
	for (int i = 0; i < 6; i++)
		len += (size_t)snprintf(s + len, cap - len, "create /d/f%d\n", i);
	/* small files: inline extents at writeback */
	len += (size_t)snprintf(s + len, cap - len, "create /d/s\nwrite /d/s 0 700 1\nA: create /d/t\nA: write /d/t 0 1500 2\nA: fsync /d/t\n");
	for (int step = 0; step < 60 && len + 512 < cap; step++) {
		int f = (int)(next(&x) % 6), k = (int)(next(&x) % 10);
		unsigned long long off = next(&x) % (1 << 20), n = 1 + next(&x) % (300 << 10);
		if (k < 4)
			len += (size_t)snprintf(s + len, cap - len, "write /d/f%d %llu %llu %d\n", f, off, n, step + 1);
		else if (k == 4)
			len += (size_t)snprintf(s + len, cap - len, "truncate /d/f%d %llu\n", f, off / 2);
		else if (k == 5)
			len += (size_t)snprintf(s + len, cap - len, "fsync /d/f%d\n", f);
		else if (k == 6)
			len += (size_t)snprintf(s + len, cap - len, "commit\n");
		else if (k == 7)
			len += (size_t)snprintf(s + len, cap - len, "unlink /d/f%d\ncreate /d/f%d\n", f, f);
		else
			len += (size_t)snprintf(s + len, cap - len, "A: write /d/f%d %llu %llu %d\nA: fsync /d/f%d\nB: write /d/f%d 0 %llu %d\n", f, off,
						n, step + 1, f, (f + 1) % 6, n, step + 2);
	}
	return s;
}

TEST(space_counters_hold_after_every_step)
{
	for (u64 seed = 1; seed <= 12; seed++) {
		char *text = random_script(seed);
		struct scenario_options o = {.seed = seed, .now = 1700000000};
		struct scenario_run *r;
		struct blab_err err = {0};
		CHECK(scenario_begin(text, strlen(text), "space", &o, 0, &r, &err) == 0);
		int ret, steps = 0;
		char msg[256];
		while ((ret = scenario_step(r)) > 0) {
			steps++;
			int bad = btrfs_space_check(scenario_fs(r), msg, sizeof(msg));
			if (bad) {
				printf("  seed %llu, step %d (line %d): %s\n", (unsigned long long)seed, steps, scenario_next_line(r), msg);
				CHECK(bad == 0);
				break;
			}
		}
		CHECK(ret == 0);
		struct scenario_result res;
		CHECK(scenario_end(r, &res, &err) == 0);
		/* after the final commit: nothing delalloc, nothing in flight */
		CHECK(btrfs_space_check(res.fs, msg, sizeof(msg)) == 0);
		CHECK_EQ_U64(res.fs->space.may_use[SPACE_DATA], 0);
		CHECK_EQ_U64(res.fs->space.delalloc_meta, 0);
		CHECK_EQ_U64(res.fs->space.may_use[SPACE_METADATA], res.fs->space.global_rsv);
		btrfs_fs_free(res.fs);
		scenario_result_free(&res);
		free(text);
	}
}

/* The filesystem script s leaves, before any final commit (NULL if it fails). */
static struct btrfs_fs_info *run_uncommitted(const char *s, struct scenario_result *res)
{
	struct scenario_options o = {.seed = 1, .now = 1, .no_final_commit = 1};
	struct blab_err err = {0};
	return scenario_run(s, strlen(s), "t", &o, res, &err) == 0 ? res->fs : NULL;
}

TEST(space_reservation_sizes)
{
	struct scenario_result res;
	struct btrfs_fs_info *fs = run_uncommitted("mkfs size=512M\ncreate /a\nwrite /a 0 10K 1\n", &res);
	CHECK(fs != NULL);
	if (!fs)
		return;
	/* 16 KiB nodes: insert(1) = 256 KiB, modify(1) = 128 KiB; a small file: insert(extent + csum leaf) + modify(1) */
	CHECK_EQ_U64(btrfs_calc_insert_metadata_size(fs, 1), 256 << 10);
	CHECK_EQ_U64(btrfs_calc_metadata_size(fs, 1), 128 << 10);
	CHECK_EQ_U64(fs->space.delalloc_meta, 640 << 10);
	CHECK_EQ_U64(fs->space.may_use[SPACE_DATA], 12 << 10);
	/* global reserve: insert(13) at least */
	CHECK(fs->space.global_rsv >= 13 * (256 << 10));
	CHECK(btrfs_space_fits(fs, SPACE_DATA, 1 << 20, RESERVE_FLUSH_ALL));
	CHECK(!btrfs_space_fits(fs, SPACE_DATA, 1ULL << 30, RESERVE_FLUSH_ALL));
	btrfs_fs_free(fs);
	scenario_result_free(&res);
}

/* btrfs_calc_reclaim_metadata_size adds to the tickets what metadata is
 * overcommitted past a FLUSH_ALL reservation's limit: reserve past it, give
 * back exactly that and the limit is reached, not passed. */
TEST(space_overage_past_the_overcommit_limit)
{
	struct scenario_result res;
	struct btrfs_fs_info *fs = run_uncommitted("mkfs size=512M meta_chunk=8M\n", &res);
	CHECK(fs != NULL);
	if (!fs)
		return;
	CHECK_EQ_U64(btrfs_space_overage(fs, SPACE_METADATA), 0);
	btrfs_space_reserve(fs, SPACE_METADATA, 512ULL << 20);
	u64 over = btrfs_space_overage(fs, SPACE_METADATA);
	CHECK(over > 0 && over < (512ULL << 20));
	btrfs_space_release(fs, SPACE_METADATA, over);
	CHECK_EQ_U64(btrfs_space_overage(fs, SPACE_METADATA), 0);
	CHECK(!btrfs_space_fits(fs, SPACE_METADATA, 1, RESERVE_FLUSH_ALL));
	btrfs_space_release(fs, SPACE_METADATA, 2);
	CHECK(btrfs_space_fits(fs, SPACE_METADATA, 1, RESERVE_FLUSH_ALL));
	/* data never overcommits: nothing to add */
	btrfs_space_reserve(fs, SPACE_DATA, 1ULL << 30);
	CHECK_EQ_U64(btrfs_space_overage(fs, SPACE_DATA), 0);
	btrfs_fs_free(fs);
	scenario_result_free(&res);
}
