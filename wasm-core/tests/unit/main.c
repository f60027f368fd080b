#include "test.h"
#include "../../src/check.h"
#include "../../src/device.h"
#include <stdarg.h>
#include <stdlib.h>

#define MAX_TESTS 512
struct test_case {
	const char *name;
	test_fn fn;
};
static struct test_case tests[MAX_TESTS];
static int ntests;
int test_failed_now;

void test_register(const char *name, test_fn fn)
{
	if (ntests < MAX_TESTS)
		tests[ntests++] = (struct test_case){name, fn};
}

void test_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stdout, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	test_failed_now = 1;
}

int test_copy_device(const struct blab_device *src, struct blab_device *dst)
{
	int ret = device_init(dst, src->size), more = 0;
	const u8 *pg;
	for (u64 i = 0; !ret && (more = device_next_page(src, &i, &pg)) > 0; i++) {
		u64 off = i << DEVICE_PAGE_SHIFT;
		ret = device_write(dst, off, pg, src->size - off < DEVICE_PAGE_SIZE ? (size_t)(src->size - off) : DEVICE_PAGE_SIZE);
	}
	return ret ? ret : more;
}

int test_check_problems(struct btrfs_fs_info *fs)
{
	struct strbuf out = {0};
	int errors = btrfs_check_fs(fs, &out, CHECK_DATA_CSUM);
	if (errors)
		printf("%s", out.s ? out.s : "");
	sb_free(&out);
	return errors;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct test_case *)a)->name, ((const struct test_case *)b)->name);
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	qsort(tests, (size_t)ntests, sizeof(tests[0]), by_name);
	for (int i = 0; i < ntests; i++) {
		if (argc > 1 && strcmp(argv[1], tests[i].name))
			continue;
		test_failed_now = 0;
		tests[i].fn();
		printf("%s %s\n", test_failed_now ? "FAIL" : "ok  ", tests[i].name);
		fflush(stdout);
		if (test_failed_now)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
