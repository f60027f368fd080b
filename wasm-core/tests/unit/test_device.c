/* The device's page table: sparse writes far apart, holes reading as zeros,
 * iteration in ascending order, and a lazy device over a source that is read
 * only where it holds data and never written. */
#include "../../src/device.h"
#include "test.h"
#include <stdlib.h>

#define P DEVICE_PAGE_SIZE

static int zero(const u8 *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Whether iterating d gives exactly the pages want, in order, each passing
 * page_ok (when given). */
typedef int (*page_ok_fn)(const struct blab_device *d, u64 i, const u8 *pg);
static int pages_are(const struct blab_device *d, const u64 *want, size_t nwant, page_ok_fn page_ok)
{
	size_t n = 0;
	const u8 *pg;
	int r;
	for (u64 i = 0; (r = device_next_page(d, &i, &pg)) > 0; i++, n++) {
		if (n >= nwant || i != want[n] || (page_ok && !page_ok(d, i, pg))) {
			printf("  iteration gave page %llu (%zu of %zu wanted)\n", (unsigned long long)i, n, nwant);
			return 0;
		}
	}
	return r == 0 && n == nwant;
}

static int held(const struct blab_device *d, u64 i, const u8 *pg) { return pg == device_page(d, i); }

TEST(device_sparse_pages_far_apart)
{
	struct blab_device d;
	u64 size = 1ULL << 51;
	CHECK(device_init(&d, size) == 0);
	/* offsets written, in no order; one write straddles two pages */
	u64 offs[] = {1ULL << 50, 5, (1ULL << 40) + P - 3, 3ULL << 30, size - 8};
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		CHECK(device_write(&d, offs[i], "ABCDEFGH", 8) == 0);
	CHECK_EQ_U64(device_pages_held(&d), 6);
	char buf[16];
	CHECK(device_read(&d, (1ULL << 40) + P - 3, buf, 8) == 0);
	CHECK(!memcmp(buf, "ABCDEFGH", 8));
	CHECK(device_read(&d, size - 8, buf, 8) == 0);
	CHECK(!memcmp(buf, "ABCDEFGH", 8));
	/* holes: never written, read as zeros, allocate nothing */
	u8 big[3 * P];
	CHECK(device_read(&d, (1ULL << 49) + 7, big, sizeof(big)) == 0);
	CHECK(zero(big, sizeof(big)));
	CHECK(device_page(&d, 12345) == NULL);
	CHECK_EQ_U64(device_pages_held(&d), 6);
	/* out of range */
	CHECK(device_read(&d, size - 4, buf, 8) == BLAB_EIO);
	CHECK(device_write(&d, size, "x", 1) == BLAB_EIO);
	struct blab_err err = {0};
	CHECK(device_fail(&d, BLAB_EIO, &err) == BLAB_EIO);
	CHECK_STR_CONTAINS(err.msg, "beyond the end of the device");
	/* iteration: ascending, each written page once */
	u64 want[] = {0, 3ULL << 14, 1ULL << 24, (1ULL << 24) + 1, 1ULL << 34, (size >> 16) - 1};
	CHECK(pages_are(&d, want, 6, held));
	const u8 *pg;
	u64 from = (1ULL << 24) + 1;
	CHECK(device_next_page(&d, &from, &pg) == 1);
	CHECK_EQ_U64(from, (1ULL << 24) + 1);
	CHECK(!memcmp(pg, "DEFGH", 5));
	device_free(&d);
	CHECK(d.table == NULL);
	device_free(&d); /* twice is harmless */
}

TEST(device_sizes_and_load)
{
	struct blab_device d;
	CHECK(device_init(&d, 0) == BLAB_EINVAL);
	device_free(&d);
	CHECK(device_init(&d, UINT64_MAX) == 0); /* a header, whatever the size */
	CHECK(device_write(&d, UINT64_MAX - 1, "z", 1) == 0);
	u64 i = 0;
	const u8 *pg;
	CHECK(device_next_page(&d, &i, &pg) == 1);
	CHECK_EQ_U64(i, UINT64_MAX >> 16);
	device_free(&d);
	/* a size that is not a whole number of pages; zero pages stay unallocated */
	static u8 img[3 * P + 100];
	img[P + 1] = 1;
	img[3 * P + 99] = 2;
	CHECK(device_load(&d, img, sizeof(img)) == 0);
	CHECK_EQ_U64(device_pages_held(&d), 2);
	u8 b;
	CHECK(device_read(&d, 3 * P + 99, &b, 1) == 0 && b == 2);
	CHECK(device_read(&d, 3 * P + 100, &b, 1) == BLAB_EIO);
	CHECK(device_page(&d, 3)[99] == 2 && device_page(&d, 3)[100] == 0);
	device_free(&d);
}

/* A source of `size` bytes: data (byte = low bits of the offset + 1) in
 * [data_lo, data_hi), holes elsewhere; counts reads; fails reads at bad_off. */
struct fake_src {
	u64 data_lo, data_hi, bad_off;
	int reads, closed;
};

static int fake_read(void *ctx, u64 off, void *buf, size_t len, struct blab_err *err)
{
	struct fake_src *s = ctx;
	s->reads++;
	if (s->bad_off >= off && s->bad_off - off < len)
		return blab_fail(err, BLAB_EIO, "reading fake at offset %llu: Input/output error", (unsigned long long)off);
	for (size_t i = 0; i < len; i++) {
		u64 o = off + i;
		((u8 *)buf)[i] = o >= s->data_lo && o < s->data_hi ? (u8)(o % 251 + 1) : 0;
	}
	return 0;
}

static int fake_next_data(void *ctx, u64 off, u64 *data, struct blab_err *err)
{
	struct fake_src *s = ctx;
	(void)err;
	*data = off < s->data_lo ? s->data_lo : off < s->data_hi ? off : UINT64_MAX;
	return 0;
}

static void fake_close(void *ctx)
{
	((struct fake_src *)ctx)->closed++;
}

/* The lazy device's pages: the whole-page write, and the source's data */
static int source_page_ok(const struct blab_device *d, u64 i, const u8 *pg)
{
	if (i == 100)
		return pg[0] == 7;
	if (i == 103)
		return pg[9] == (103 * (u64)P + 9) % 251 + 1 && zero(pg + 10, P - 10);
	return 1;
}

TEST(device_lazy_source)
{
	u64 size = 1ULL << 44; /* 16 TiB, data in pages 100..102 and the start of 103 */
	struct fake_src s = {100 * (u64)P, 103 * (u64)P + 10, UINT64_MAX, 0, 0};
	struct device_source src = {&s, fake_read, fake_next_data, fake_close};
	struct blab_device d;
	CHECK(device_init_source(&d, size, &src) == 0);
	/* holes read as zeros without a read */
	u8 buf[2 * P];
	CHECK(device_read(&d, 5 * (u64)P + 3, buf, sizeof(buf)) == 0);
	CHECK(zero(buf, sizeof(buf)));
	CHECK(device_read(&d, size - 10, buf, 10) == 0);
	CHECK(s.reads == 0);
	/* data is read once and kept */
	u8 b;
	CHECK(device_read(&d, 101 * (u64)P + 7, &b, 1) == 0);
	CHECK(b == (101 * (u64)P + 7) % 251 + 1);
	CHECK(device_read(&d, 101 * (u64)P + 9, &b, 1) == 0);
	CHECK(s.reads == 1);
	CHECK_EQ_U64(device_pages_held(&d), 1);
	/* a partial write reads the page first; the source is never written */
	CHECK(device_write(&d, 102 * (u64)P + 1, "W", 1) == 0);
	CHECK(s.reads == 2);
	CHECK(device_read(&d, 102 * (u64)P, buf, 3) == 0);
	CHECK(buf[0] == (102 * (u64)P) % 251 + 1 && buf[1] == 'W' && buf[2] == (102 * (u64)P + 2) % 251 + 1);
	/* a write into a hole, a whole-page write: no read */
	CHECK(device_write(&d, (1ULL << 40) + 4, "H", 1) == 0);
	static u8 whole[P];
	memset(whole, 7, sizeof(whole));
	CHECK(device_write(&d, 100 * (u64)P, whole, P) == 0);
	CHECK(s.reads == 2);
	/* iteration: the written pages and the source's data pages, ascending,
	 * the ones not held read into a scratch page and not kept */
	u64 want[] = {100, 101, 102, 103, (1ULL << 40) >> 16};
	CHECK(pages_are(&d, want, 5, source_page_ok));
	CHECK_EQ_U64(device_pages_held(&d), 4);
	/* a read error is a value, with the source's message */
	s.bad_off = 103 * (u64)P + 5;
	u64 i = 103;
	const u8 *pg;
	CHECK(device_next_page(&d, &i, &pg) == BLAB_EIO);
	CHECK(device_read(&d, 103 * (u64)P, buf, 1) == BLAB_EIO);
	CHECK(device_page(&d, 103) == NULL);
	struct blab_err err = {0};
	CHECK(device_fail(&d, BLAB_EIO, &err) == BLAB_EIO);
	CHECK_STR_CONTAINS(err.msg, "reading fake at offset 6750208");
	CHECK(s.closed == 0);
	device_free(&d);
	CHECK(s.closed == 1);
}
