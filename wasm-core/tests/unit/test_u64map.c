/* The hash map takes every u64 as a key, UINT64_MAX (its empty mark)
 * included: images may hold inodes and blocks of any number. */
#include "../../src/u64map.h"
#include "test.h"
#include <stdint.h>

TEST(u64map_every_key)
{
	struct u64map m;
	u64map_init(&m, sizeof(u64));
	const u64 keys[] = {0, 1, 256, UINT64_MAX, UINT64_MAX - 1, 1ULL << 63};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		CHECK(u64map_get(&m, keys[i]) == NULL);
		u64 *v = u64map_put(&m, keys[i]);
		CHECK(v != NULL && *v == 0);
		if (v)
			*v = i + 100;
	}
	for (u64 k = 1000; k < 3000; k++) /* grow the table past the special key */
		u64map_put(&m, k);
	CHECK(m.len == 6 + 2000);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		u64 *v = u64map_get(&m, keys[i]);
		CHECK(v && *v == i + 100);
	}
	size_t it = 0, n = 0, saw_max = 0;
	u64 k;
	void *v;
	while (u64map_next(&m, &it, &k, &v)) {
		n++;
		saw_max += k == UINT64_MAX;
	}
	CHECK(n == m.len && saw_max == 1);
	CHECK(u64map_del(&m, UINT64_MAX) == 0 && u64map_get(&m, UINT64_MAX) == NULL && u64map_del(&m, UINT64_MAX) == -1);
	CHECK(u64map_get(&m, UINT64_MAX - 1) != NULL && m.len == 6 + 2000 - 1);
	u64map_free(&m);
}
