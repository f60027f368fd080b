#include "device.h"
#include "errors.h"
#include <stdlib.h>

int device_init(struct blab_device *d, u64 size)
{
	d->fd = 0;
	d->io = NULL;
	d->close = NULL;
	d->size = size;
	d->npages = (size + DEVICE_PAGE_SIZE - 1) >> DEVICE_PAGE_SHIFT;
	d->pages = NULL;
	if (!size)
		return BLAB_EINVAL;
	if (d->npages > SIZE_MAX / sizeof(u8 *))
		return BLAB_ENOMEM;
	d->pages = calloc((size_t)d->npages, sizeof(u8 *));
	return d->pages ? 0 : BLAB_ENOMEM;
}

void device_free(struct blab_device *d)
{
	if (d->close)
		d->close(d);
	if (d->pages)
		for (u64 i = 0; i < d->npages; i++)
			free(d->pages[i]);
	free(d->pages);
	d->pages = NULL;
	d->size = d->npages = 0;
}

static int in_range(const struct blab_device *d, u64 off, size_t len)
{
	return off <= d->size && len <= d->size - off;
}

int device_read(const struct blab_device *d, u64 off, void *buf, size_t len)
{
	u8 *out = buf;
	if (!in_range(d, off, len))
		return BLAB_EIO;
	if (d->io)
		return d->io(d, off, buf, len, 0);
	while (len) {
		u64 pi = off >> DEVICE_PAGE_SHIFT;
		u32 po = (u32)(off & (DEVICE_PAGE_SIZE - 1));
		size_t n = DEVICE_PAGE_SIZE - po;
		if (n > len)
			n = len;
		if (d->pages[pi])
			memcpy(out, d->pages[pi] + po, n);
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
	if (!in_range(d, off, len))
		return BLAB_EIO;
	if (d->io)
		return d->io(d, off, (void *)buf, len, 1);
	while (len) {
		u64 pi = off >> DEVICE_PAGE_SHIFT;
		u32 po = (u32)(off & (DEVICE_PAGE_SIZE - 1));
		size_t n = DEVICE_PAGE_SIZE - po;
		if (n > len)
			n = len;
		if (!d->pages[pi]) {
			d->pages[pi] = calloc(1, DEVICE_PAGE_SIZE);
			if (!d->pages[pi])
				return BLAB_ENOMEM;
		}
		memcpy(d->pages[pi] + po, in, n);
		in += n;
		off += n;
		len -= n;
	}
	return 0;
}

const u8 *device_page(const struct blab_device *d, u64 page_index)
{
	return page_index < d->npages && d->pages ? d->pages[page_index] : NULL;
}

static int all_zero(const u8 *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
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
