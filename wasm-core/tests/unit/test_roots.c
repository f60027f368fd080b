/* Trees past 64: fs->roots grows to BLAB_MAX_ROOTS and refuses one more
 * with an error naming the limit; the sets of trees (bitmap.h) hold any
 * number of them. */
#include "../../src/bitmap.h"
#include "../../src/disk-io.h"
#include "test.h"

TEST(roots_grow_to_the_limit_and_no_further)
{
	struct btrfs_fs_info *fs = btrfs_fs_alloc();
	CHECK(fs != NULL);
	if (!fs)
		return;
	for (u64 i = 0; i < BLAB_MAX_ROOTS; i++)
		if (!btrfs_add_root(fs, BTRFS_FIRST_FREE_OBJECTID + i)) {
			test_fail_at(__FILE__, __LINE__, "tree %llu of %d: %s", (unsigned long long)i, BLAB_MAX_ROOTS, fs->err.msg);
			break;
		}
	CHECK_EQ_U64(fs->nroots, BLAB_MAX_ROOTS);
	CHECK(btrfs_get_root(fs, BTRFS_FIRST_FREE_OBJECTID + BLAB_MAX_ROOTS - 1) == fs->roots[BLAB_MAX_ROOTS - 1]);
	CHECK(btrfs_add_root(fs, 1) == NULL);
	CHECK(fs->err.code == BLAB_ENOSPC);
	CHECK_STR_CONTAINS(fs->err.msg, "more than 4096 trees (BLAB_MAX_ROOTS");
	CHECK_EQ_U64(fs->nroots, BLAB_MAX_ROOTS);
	btrfs_fs_free(fs);
}

TEST(bitmap_sets_across_words)
{
	u64 a[3] = {0}, b[3] = {0};
	size_t bits[] = {0, 63, 64, 130, 191};
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		bitmap_set(a, bits[i]);
	CHECK_EQ_U64(bitmap_weight(a, 3), 5);
	size_t k = 0;
	for (size_t i = bitmap_next(a, 0, 192); i < 192; i = bitmap_next(a, i + 1, 192))
		CHECK_EQ_U64(i, bits[k++]);
	CHECK_EQ_U64(k, 5);
	CHECK_EQ_U64(bitmap_next(a, 131, 150), 150); /* 191 lies past nbits */
	CHECK(bitmap_test(a, 64) && !bitmap_test(a, 65));
	CHECK(!bitmap_equal(a, b, 3));
	bitmap_or(b, a, 3);
	CHECK(bitmap_equal(a, b, 3));
	CHECK_EQ_U64(bitmap_words(0), 1);
	CHECK_EQ_U64(bitmap_words(64), 1);
	CHECK_EQ_U64(bitmap_words(65), 2);
}
