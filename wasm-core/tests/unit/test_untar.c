/* test_untar.c — seed 002's untar tree: the size distribution the kernel
 * measurement's workload draws from, and the tree's shape. */
#include "test.h"
#include "../../src/untar.h"
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;
	return x < y ? -1 : x > y;
}

TEST(untar_sizes_resemble_a_source_tree)
{
	enum { N = 200000 };
	u64 *s = malloc(N * sizeof(*s)), rng = 42, sum = 0, small = 0, mid = 0, big = 0;
	CHECK(s);
	for (int i = 0; i < N; i++) {
		s[i] = untar_file_size(&rng);
		sum += s[i];
		small += s[i] <= 2048;
		mid += s[i] >= 1024 && s[i] <= 20480;
		CHECK(s[i] >= 64 && s[i] <= (4u << 20));
		big += s[i] > (1u << 20) ? s[i] : 0;
	}
	qsort(s, N, sizeof(*s), cmp_u64);
	printf("  median %llu, mean %llu, <= 2 KiB %.1f%%, 1-20 KiB %.1f%%, over 1 MiB %.1f%% of bytes\n", (unsigned long long)s[N / 2],
	       (unsigned long long)(sum / N), 100.0 * small / N, 100.0 * mid / N, 100.0 * big / sum);
	/* the header's figures: median about 6 KiB, mean about 14 KiB, 13% at most 2 KiB, 83% within 1-20 KiB */
	CHECK(s[N / 2] > 5000 && s[N / 2] < 7000);
	CHECK(sum / N > 11000 && sum / N < 18000);
	CHECK(small * 100 > 10 * (u64)N && small * 100 < 16 * (u64)N);
	CHECK(mid * 100 > 78 * (u64)N && mid * 100 < 88 * (u64)N);
	free(s);
}

TEST(untar_walks_a_tree_in_tar_order)
{
	struct untar_gen g;
	untar_init(&g, "/x", 7, 500, 1ULL << 40);
	u64 off, len, files = 0, writes = 0, dirs = 0, bytes = 0;
	int k, last = -1, depth_max = 0;
	char prev[UNTAR_PATH_MAX] = "";
	while ((k = untar_next(&g, &off, &len)) != UNTAR_END) {
		CHECK(!strncmp(g.path, "/x/src", 6));
		if (k == UNTAR_MKDIR) {
			dirs++;
			int d = 0;
			for (const char *p = g.path; *p; p++)
				d += *p == '/';
			depth_max = d > depth_max ? d : depth_max;
		} else if (k == UNTAR_CREATE) {
			files++;
			strcpy(prev, g.path);
		} else {
			CHECK(last == UNTAR_CREATE && !strcmp(prev, g.path) && off == 0); /* a file's data right after it is made */
			writes++;
			bytes += len;
		}
		last = k;
	}
	CHECK_EQ_U64(files, 500);
	CHECK_EQ_U64(writes, 500);
	CHECK_EQ_U64(g.files, 500);
	CHECK_EQ_U64(g.dirs, dirs);
	CHECK_EQ_U64(g.bytes, bytes);
	/* /x/src/m000 and 7 levels at most below src */
	CHECK(depth_max <= 2 + UNTAR_MAX_DEPTH);
	CHECK(files / dirs >= 5 && files / dirs <= 25);
	/* the same seed, the same tree; another seed, another */
	struct untar_gen a, b;
	untar_init(&a, "/", 7, 50, 1ULL << 40);
	untar_init(&b, "/", 8, 50, 1ULL << 40);
	u64 la = 0, lb = 0, sa = 0, sb = 0, oa, ob;
	while (untar_next(&a, &oa, &la) != UNTAR_END)
		sa = sa * 31 + la;
	while (untar_next(&b, &ob, &lb) != UNTAR_END)
		sb = sb * 31 + lb;
	/* in tar's records: each file's bytes in order, 10240 at a time */
	struct untar_gen c;
	untar_init(&c, "/", 7, 50, 1ULL << 40);
	untar_set_chunk(&c, 10240);
	u64 total = 0, expect = 0, pieces = 0;
	while ((k = untar_next(&c, &off, &len)) != UNTAR_END)
		if (k == UNTAR_CREATE)
			expect = 0;
		else if (k == UNTAR_WRITE) {
			CHECK(off == expect && len <= 10240);
			expect += len;
			total += len;
			pieces++;
		}
	CHECK_EQ_U64(total, c.bytes);
	CHECK(pieces > 50);
	CHECK(sa != sb);
	CHECK_STR_CONTAINS(a.path, "/src/m000/");
}
