/* device.h — the in-memory block device under the filesystem: a sparse array
 * of 64 KiB pages, zero where never written. */
#ifndef BTRFSLAB_DEVICE_H
#define BTRFSLAB_DEVICE_H
#include "ondisk.h"
#include <stddef.h>

#define DEVICE_PAGE_SHIFT 16
#define DEVICE_PAGE_SIZE (1u << DEVICE_PAGE_SHIFT)

struct blab_device {
	u64 size;
	u64 npages;
	u8 **pages; /* NULL page reads as zeros */
	/* A file-backed device (native only, set up by image.c): reads and
	 * writes go to fd through io, and pages is unused. */
	int fd;
	int (*io)(const struct blab_device *d, u64 off, void *buf, size_t len, int write);
	void (*close)(struct blab_device *d);
};

/* Returns 0, BLAB_ENOMEM, or BLAB_EINVAL for a size of 0. */
int device_init(struct blab_device *d, u64 size);
void device_free(struct blab_device *d);
/* Out-of-range access returns BLAB_EIO. */
int device_read(const struct blab_device *d, u64 off, void *buf, size_t len);
int device_write(struct blab_device *d, u64 off, const void *buf, size_t len);
/* The page holding off, or NULL if it was never written (reads as zeros). */
const u8 *device_page(const struct blab_device *d, u64 page_index);
/* Loads an image from bytes: pages that are all zero stay unallocated. */
int device_load(struct blab_device *d, const u8 *data, u64 len);
#endif
