/* device.h — the block device under the filesystem: 64 KiB pages, zero where
 * never written, held in a radix table whose memory follows the pages present
 * (not the device size: a 15 TB device with three pages costs a few KiB).
 *
 * Three kinds of device share this interface:
 *   in memory     device_init / device_load: every page lives in the table.
 *   lazy overlay  device_init_source (native images, image.c): pages are read
 *                 from a read-only source on first access and kept; writes go
 *                 to the table, never to the source.
 *   write-through image_create_file: reads and writes go to fd through io,
 *                 and the table is unused.
 * An in-memory device can be cloned (device_clone): the copies share pages
 * until one of them writes to a page, copy-on-write.
 * The struct may be copied by value to move it (btrfs_open does): the table
 * and the source are heap objects it points to; only one copy may be used. */
#ifndef BTRFSLAB_DEVICE_H
#define BTRFSLAB_DEVICE_H
#include "errors.h"
#include "ondisk.h"
#include <stddef.h>

#define DEVICE_PAGE_SHIFT 16
#define DEVICE_PAGE_SIZE (1u << DEVICE_PAGE_SHIFT)

struct device_table; /* device.c: the radix table, the source, the last error */

/* A read-only store under a lazy device (an image file). */
struct device_source {
	void *ctx;
	/* Reads len bytes at off into buf: 0, or BLAB_EIO with a message in err
	 * naming the file and offset. */
	int (*read)(void *ctx, u64 off, void *buf, size_t len, struct blab_err *err);
	/* Sets *data to the first offset >= off that may hold data (UINT64_MAX
	 * when only holes follow; off itself when holes are unknown). 0 or
	 * BLAB_EIO with a message in err. */
	int (*next_data)(void *ctx, u64 off, u64 *data, struct blab_err *err);
	void (*close)(void *ctx); /* called once by device_free */
};

struct blab_device {
	u64 size;
	struct device_table *table;
	/* write-through (image.c's image_create_file) */
	int fd;
	int (*io)(const struct blab_device *d, u64 off, void *buf, size_t len, int write);
	void (*close)(struct blab_device *d);
};

/* Returns 0, BLAB_ENOMEM, or BLAB_EINVAL for a size of 0. Allocates no more
 * than a small header whatever the size. */
int device_init(struct blab_device *d, u64 size);
/* A lazy device of size bytes over src (copied; the device owns src->ctx
 * from now on, and closes it on failure too). Same returns. */
int device_init_source(struct blab_device *d, u64 size, const struct device_source *src);
void device_free(struct blab_device *d);
/* Out-of-range access returns BLAB_EIO; so does a source that cannot be
 * read (device_fail gives the message). Writes never reach a source. */
int device_read(const struct blab_device *d, u64 off, void *buf, size_t len);
int device_write(struct blab_device *d, u64 off, const void *buf, size_t len);
/* The page at page_index (DEVICE_PAGE_SIZE bytes, zero past the end of the
 * device), loaded from the source if need be, or NULL when it reads as zeros
 * or could not be read (device_fail then says why). The pointer lives as long
 * as the device. */
const u8 *device_page(const struct blab_device *d, u64 page_index);
/* Iterates, in ascending order, over the pages that may hold data: written
 * pages and the source's data ranges (an all-zero source page is skipped;
 * holes are never read). Sets *page_index to the first such index >=
 * *page_index and *page to its DEVICE_PAGE_SIZE bytes, valid until the next
 * call on d. Returns 1, 0 when there is none, or BLAB_EIO. Usage:
 *   for (u64 i = 0; (r = device_next_page(d, &i, &pg)) > 0; i++) ... */
int device_next_page(const struct blab_device *d, u64 *page_index, const u8 **page);
/* Pages held in memory (written or cached from the source, zero ones not
 * counted): what the device costs. */
u64 device_pages_held(const struct blab_device *d);
/* For a code returned by a device function: records the failure's message
 * (e.g. "EIO: reading /x.img at offset 65536: Input/output error") in err
 * and returns code, as blab_fail does: `return device_fail(d, ret, err);` */
int device_fail(const struct blab_device *d, int code, struct blab_err *err);
/* A copy of an in-memory device (not a lazy or write-through one: EINVAL)
 * that shares its pages: a page is copied when either device writes to it
 * while the other still holds it. Costs the page table, not the pages.
 * Returns 0 or BLAB_ENOMEM / BLAB_EINVAL. */
int device_clone(const struct blab_device *d, struct blab_device *out);
/* Pages of d that some clone holds too (counted once per device). */
u64 device_pages_shared(const struct blab_device *d);
/* Bytes of the page table itself (its nodes, not the pages). */
u64 device_table_bytes(const struct blab_device *d);
/* Loads an image from bytes: pages that are all zero stay unallocated. */
int device_load(struct blab_device *d, const u8 *data, u64 len);
#endif
