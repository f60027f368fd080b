/* test.h — a small self-registering test harness. The same tests build
 * natively (under ASan/UBSan) and to WebAssembly (run by Node), so both
 * builds are held to the same results. The runner prints one line per test
 * and ends with "N passed, N failed". Run one test: unit-tests NAME. */
#ifndef BTRFSLAB_TEST_H
#define BTRFSLAB_TEST_H
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef void (*test_fn)(void);

/* xorshift64: the tests' seeded generator (each test keeps its own state). */
static inline uint64_t test_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A new in-memory device holding the same bytes as src: what a reader
 * opening the image would see. 0 or a negative BLAB_E* code. */
struct blab_device;
int test_copy_device(const struct blab_device *src, struct blab_device *dst);
/* The core's check of fs with data checksums: the number of problems, each
 * printed. */
struct btrfs_fs_info;
int test_check_problems(struct btrfs_fs_info *fs);
void test_register(const char *name, test_fn fn);
extern int test_failed_now;
void test_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define TEST(name)                                                                   \
	static void test_##name(void);                                               \
	__attribute__((constructor)) static void reg_##name(void) { test_register(#name, test_##name); } \
	static void test_##name(void)

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			test_fail_at(__FILE__, __LINE__, "CHECK(%s)", #cond);        \
			return;                                                      \
		}                                                                    \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                           \
	do {                                                                         \
		unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b); \
		if (va_ != vb_) {                                                    \
			test_fail_at(__FILE__, __LINE__, "%s == %s: %llu != %llu", #a, #b, va_, vb_); \
			return;                                                      \
		}                                                                    \
	} while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                              \
	do {                                                                         \
		const char *h_ = (hay), *n_ = (needle);                              \
		if (!h_ || !strstr(h_, n_)) {                                        \
			test_fail_at(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_); \
			return;                                                      \
		}                                                                    \
	} while (0)
#endif
