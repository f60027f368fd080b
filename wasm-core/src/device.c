/* device.c — pages in a radix table; a lazy device reads them from its source.
 *
 * The table has `levels` levels of nodes of PT_FAN slots (8 KiB each); a page
 * index is split into PT_BITS-bit digits, the most significant first. Levels
 * are as few as the device size needs: 1 up to 64 MiB, 3 for 15 TB, 5 for
 * 2^64 bytes. A leaf slot holds NULL (never written; for a lazy device: not
 * read yet), a page, or PT_ZERO (a lazy device's page known to read as zeros,
 * so that it is not asked for again). No recursion deeper than `levels`. */
#include "device.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PT_BITS 10
#define PT_FAN (1u << PT_BITS)

struct pt_node {
	void *slot[PT_FAN];
};

struct device_table {
	unsigned levels;
	struct pt_node *root;
	u64 held; /* pages allocated */
	int has_src;
	struct device_source src;
	u8 *scratch; /* device_next_page's buffer for source pages it does not keep */
	struct blab_err err;
};

static u8 zero_mark;
#define PT_ZERO ((void *)&zero_mark)

/* A page is DEVICE_PAGE_SIZE bytes followed by its reference count: the
 * tables that hold it (device_clone shares pages; a write to a shared page
 * copies it first). */
#define PAGE_ALLOC (DEVICE_PAGE_SIZE + sizeof(u64))
static u64 *page_refs(u8 *pg) { return (u64 *)(pg + DEVICE_PAGE_SIZE); }

static u8 *page_new(int zero)
{
	u8 *pg = zero ? calloc(1, PAGE_ALLOC) : malloc(PAGE_ALLOC);
	if (pg)
		*page_refs(pg) = 1;
	return pg;
}

static void page_put(u8 *pg)
{
	if (pg && pg != PT_ZERO && !--*page_refs(pg))
		free(pg);
}

static u64 npages_of(u64 size)
{
	return size ? ((size - 1) >> DEVICE_PAGE_SHIFT) + 1 : 0;
}

/* The leaf slot of page pi; with create, missing nodes are made (NULL then
 * means ENOMEM), else NULL when the path does not exist. */
static void **pt_slot(struct device_table *t, u64 pi, int create)
{
	void **slot = (void **)&t->root;
	for (unsigned l = t->levels; l; l--) {
		if (!*slot) {
			if (!create || !(*slot = calloc(1, sizeof(struct pt_node))))
				return NULL;
		}
		struct pt_node *n = *slot;
		slot = &n->slot[(pi >> ((l - 1) * PT_BITS)) & (PT_FAN - 1)];
	}
	return slot;
}

/* The first non-NULL leaf slot at index >= from below node n (at `level`,
 * covering indexes from base): 1 with *at and *slot set, or 0. */
static int pt_next(struct pt_node *n, unsigned level, u64 base, u64 from, u64 *at, void **slot)
{
	unsigned shift = (level - 1) * PT_BITS;
	for (u64 i = from > base ? (from - base) >> shift : 0; n && i < PT_FAN; i++) {
		u64 cb = base + (i << shift);
		if (!n->slot[i])
			continue;
		if (level == 1) {
			*at = cb;
			*slot = n->slot[i];
			return 1;
		}
		if (pt_next(n->slot[i], level - 1, cb, from, at, slot))
			return 1;
	}
	return 0;
}

static void pt_free(struct pt_node *n, unsigned level)
{
	if (!n)
		return;
	for (u32 i = 0; i < PT_FAN; i++) {
		if (level > 1)
			pt_free(n->slot[i], level - 1);
		else
			page_put(n->slot[i]);
	}
	free(n);
}

int device_init(struct blab_device *d, u64 size)
{
	memset(d, 0, sizeof(*d));
	d->size = size;
	if (!size)
		return BLAB_EINVAL;
	d->table = calloc(1, sizeof(*d->table));
	if (!d->table)
		return BLAB_ENOMEM;
	unsigned levels = 1;
	while (levels * PT_BITS < 64 && (npages_of(size) - 1) >> (levels * PT_BITS))
		levels++;
	d->table->levels = levels;
	return 0;
}

int device_init_source(struct blab_device *d, u64 size, const struct device_source *src)
{
	int ret = device_init(d, size);
	if (ret) {
		device_free(d);
		if (src->close)
			src->close(src->ctx);
		return ret;
	}
	d->table->src = *src;
	d->table->has_src = 1;
	return 0;
}

void device_free(struct blab_device *d)
{
	if (d->close)
		d->close(d);
	struct device_table *t = d->table;
	if (t) {
		pt_free(t->root, t->levels);
		if (t->has_src && t->src.close)
			t->src.close(t->src.ctx);
		free(t->scratch);
		free(t);
	}
	d->table = NULL;
	d->size = 0;
}

static int all_zero(const u8 *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Whether the source may hold data in page pi: 1, 0 (wholly a hole), or an error. */
static int source_has_data(struct device_table *t, u64 size, u64 pi)
{
	u64 off = pi << DEVICE_PAGE_SHIFT, data;
	int ret = t->src.next_data(t->src.ctx, off, &data, &t->err);
	if (ret)
		return ret;
	return data < off || (data < size && data - off < DEVICE_PAGE_SIZE);
}

/* Reads page pi from the source into buf, zero past the end of the device. */
static int source_read(struct device_table *t, u64 size, u64 pi, u8 *buf)
{
	u64 off = pi << DEVICE_PAGE_SHIFT;
	size_t n = size - off < DEVICE_PAGE_SIZE ? (size_t)(size - off) : DEVICE_PAGE_SIZE;
	memset(buf + n, 0, DEVICE_PAGE_SIZE - n);
	return t->src.read(t->src.ctx, off, buf, n, &t->err);
}

/* Page pi for reading: *out is its bytes, or NULL for zeros. A lazy
 * device's page is read from the source and kept. 0 or a negative code. */
static int page_get(struct device_table *t, u64 size, u64 pi, u8 **out)
{
	void **slot = pt_slot(t, pi, 0);
	*out = NULL;
	if (slot && *slot) {
		*out = *slot == PT_ZERO ? NULL : *slot;
		return 0;
	}
	if (!t->has_src)
		return 0;
	u8 *pg = NULL;
	int ret = source_has_data(t, size, pi);
	if (ret > 0) {
		if (!(pg = page_new(0)))
			return blab_fail(&t->err, BLAB_ENOMEM, "a page of the device");
		ret = source_read(t, size, pi, pg);
		if (!ret && all_zero(pg, DEVICE_PAGE_SIZE)) {
			page_put(pg);
			pg = NULL;
		}
	}
	if (ret < 0 || !(slot = pt_slot(t, pi, 1))) {
		page_put(pg);
		return ret < 0 ? ret : blab_fail(&t->err, BLAB_ENOMEM, "the page table");
	}
	*slot = pg ? (void *)pg : PT_ZERO;
	t->held += pg != NULL;
	*out = pg;
	return 0;
}

/* Page pi for writing (allocated; a lazy device's page read first unless the
 * write covers it whole). 0 or a negative code. */
static int page_for_write(struct device_table *t, u64 size, u64 pi, int whole, u8 **out)
{
	void **slot = pt_slot(t, pi, 1);
	if (!slot)
		return blab_fail(&t->err, BLAB_ENOMEM, "the page table");
	if (*slot && *slot != PT_ZERO) {
		u8 *have = *slot;
		if (*page_refs(have) > 1) {
			/* shared with a clone: this table gets its own copy */
			u8 *own = page_new(0);
			if (!own)
				return blab_fail(&t->err, BLAB_ENOMEM, "a page of the device");
			memcpy(own, have, DEVICE_PAGE_SIZE);
			page_put(have);
			*slot = own;
		}
		*out = *slot;
		return 0;
	}
	int load = !*slot && t->has_src && !whole;
	u8 *pg = page_new(1);
	if (!pg)
		return blab_fail(&t->err, BLAB_ENOMEM, "a page of the device");
	int ret = load ? source_has_data(t, size, pi) : 0;
	if (ret > 0)
		ret = source_read(t, size, pi, pg);
	if (ret < 0) {
		page_put(pg);
		return ret;
	}
	*slot = pg;
	t->held++;
	*out = pg;
	return 0;
}

/* 0, or BLAB_EIO (recorded) for an access past the end or to a device without pages. */
static int check_range(const struct blab_device *d, u64 off, size_t len)
{
	if (off <= d->size && len <= d->size - off && (d->table || d->io || !len))
		return 0;
	return blab_fail(d->table ? &d->table->err : NULL, BLAB_EIO,
			 "access to %zu bytes at offset %llu is beyond the end of the device (%llu bytes)", len,
			 (unsigned long long)off, (unsigned long long)d->size);
}

int device_read(const struct blab_device *d, u64 off, void *buf, size_t len)
{
	u8 *out = buf;
	int ret = check_range(d, off, len);
	if (ret)
		return ret;
	if (d->io)
		return d->io(d, off, buf, len, 0);
	while (len) {
		u32 po = (u32)(off & (DEVICE_PAGE_SIZE - 1));
		size_t n = DEVICE_PAGE_SIZE - po;
		if (n > len)
			n = len;
		u8 *pg = NULL;
		ret = page_get(d->table, d->size, off >> DEVICE_PAGE_SHIFT, &pg);
		if (ret)
			return ret;
		if (pg)
			memcpy(out, pg + po, n);
		else
			memset(out, 0, n);
		out += n;
		off += n;
		len -= n;
	}
	return 0;
}

int device_write(struct blab_device *d, u64 off, const void *buf, size_t len)
{
	const u8 *in = buf;
	int ret = check_range(d, off, len);
	if (ret)
		return ret;
	if (d->io)
		return d->io(d, off, (void *)buf, len, 1);
	while (len) {
		u32 po = (u32)(off & (DEVICE_PAGE_SIZE - 1));
		size_t n = DEVICE_PAGE_SIZE - po;
		if (n > len)
			n = len;
		int whole = !po && (n == DEVICE_PAGE_SIZE || off + n == d->size);
		u8 *pg = NULL;
		ret = page_for_write(d->table, d->size, off >> DEVICE_PAGE_SHIFT, whole, &pg);
		if (ret)
			return ret;
		memcpy(pg + po, in, n);
		in += n;
		off += n;
		len -= n;
	}
	return 0;
}

const u8 *device_page(const struct blab_device *d, u64 page_index)
{
	u8 *pg = NULL;
	if (d->table && page_index < npages_of(d->size))
		page_get(d->table, d->size, page_index, &pg);
	return pg;
}

int device_next_page(const struct blab_device *d, u64 *page_index, const u8 **page)
{
	struct device_table *t = d->table;
	u64 npages = npages_of(d->size);
	for (u64 i = *page_index; t && i < npages;) {
		u64 at = npages;
		void *p = NULL;
		int held = pt_next(t->root, t->levels, 0, i, &at, &p);
		if (t->has_src && at > i) {
			/* a source page before the next held one? (never one in the table) */
			u64 data;
			int ret = t->src.next_data(t->src.ctx, i << DEVICE_PAGE_SHIFT, &data, &t->err);
			if (ret)
				return ret;
			u64 dp = data < (i << DEVICE_PAGE_SHIFT) ? i : data >> DEVICE_PAGE_SHIFT;
			if (data < d->size && dp < at) {
				if (!t->scratch && !(t->scratch = malloc(DEVICE_PAGE_SIZE)))
					return blab_fail(&t->err, BLAB_ENOMEM, "a page buffer");
				if ((ret = source_read(t, d->size, dp, t->scratch)))
					return ret;
				i = dp + 1;
				if (all_zero(t->scratch, DEVICE_PAGE_SIZE))
					continue;
				*page_index = dp;
				*page = t->scratch;
				return 1;
			}
		}
		if (!held)
			return 0;
		i = at + 1;
		if (p == PT_ZERO)
			continue;
		*page_index = at;
		*page = p;
		return 1;
	}
	return 0;
}

u64 device_pages_held(const struct blab_device *d)
{
	return d->table ? d->table->held : 0;
}

int device_fail(const struct blab_device *d, int code, struct blab_err *err)
{
	if (d->table && d->table->err.code == code && err) {
		*err = d->table->err;
		return code;
	}
	return blab_fail(err, code, "device access failed");
}

int device_load(struct blab_device *d, const u8 *data, u64 len)
{
	int ret = device_init(d, len);
	if (ret)
		return ret;
	for (u64 off = 0; off < len; off += DEVICE_PAGE_SIZE) {
		size_t n = (size_t)(len - off < DEVICE_PAGE_SIZE ? len - off : DEVICE_PAGE_SIZE);
		if (all_zero(data + off, n))
			continue;
		ret = device_write(d, off, data + off, n);
		if (ret) {
			device_free(d);
			return ret;
		}
	}
	return 0;
}

/* A copy of node n (at level) whose pages are shared: NULL on ENOMEM, with
 * the part made so far freed. */
static struct pt_node *pt_clone(const struct pt_node *n, unsigned level)
{
	struct pt_node *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	for (u32 i = 0; i < PT_FAN; i++) {
		void *s = n->slot[i];
		if (!s)
			continue;
		if (level > 1) {
			if (!(c->slot[i] = pt_clone(s, level - 1))) {
				pt_free(c, level);
				return NULL;
			}
		} else {
			if (s != PT_ZERO)
				++*page_refs(s);
			c->slot[i] = s;
		}
	}
	return c;
}

int device_clone(const struct blab_device *d, struct blab_device *out)
{
	memset(out, 0, sizeof(*out));
	const struct device_table *t = d->table;
	if (!t || t->has_src || d->io)
		return BLAB_EINVAL;
	int ret = device_init(out, d->size);
	if (ret)
		return ret;
	if (t->root && !(out->table->root = pt_clone(t->root, t->levels))) {
		device_free(out);
		return BLAB_ENOMEM;
	}
	out->table->held = t->held;
	return 0;
}

u64 device_pages_shared(const struct blab_device *d)
{
	u64 n = 0;
	const u8 *pg;
	for (u64 i = 0; d->table && !d->table->has_src && device_next_page(d, &i, &pg) > 0; i++)
		n += *page_refs((u8 *)pg) > 1;
	return n;
}

static u64 pt_bytes(const struct pt_node *n, unsigned level)
{
	u64 b = sizeof(*n);
	for (u32 i = 0; level > 1 && i < PT_FAN; i++)
		if (n->slot[i])
			b += pt_bytes(n->slot[i], level - 1);
	return b;
}

u64 device_table_bytes(const struct blab_device *d)
{
	return d->table && d->table->root ? pt_bytes(d->table->root, d->table->levels) : 0;
}
