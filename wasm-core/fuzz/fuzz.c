#include "fuzz.h"
#include "../src/print-tree.h"
#include "../src/crc32c.h"
#include <stdlib.h>
#include <string.h>

#define PAGE 4096u
#define MAX_DEVICE (256ull << 20)

static void fix_csums(struct blab_device *d)
{
	u8 sb[BTRFS_SUPER_INFO_SIZE];
	if (device_read(d, BTRFS_SUPER_INFO_OFFSET, sb, sizeof(sb)))
		return;
	u32 nodesize = btrfs_super_nodesize(sb);
	if (nodesize >= 4096 && nodesize <= 65536 && !(nodesize & (nodesize - 1))) {
		u8 *b = malloc(nodesize);
		for (u64 off = 0; b && off + nodesize <= d->size; off += nodesize) {
			u64 i = off >> DEVICE_PAGE_SHIFT;
			const u8 *pg;
			if (device_next_page(d, &i, &pg) <= 0)
				break;
			/* skip the hole up to the block holding the next page (blocks
			 * stay nodesize-aligned) */
			u64 next = (i << DEVICE_PAGE_SHIFT) & ~(u64)(nodesize - 1);
			if (next > off) {
				off = next - nodesize;
				continue;
			}
			if (device_read(d, off, b, nodesize) || memcmp(b + BTRFS_HEADER_FSID_OFF, sb + BTRFS_SUPER_FSID_OFF, BTRFS_FSID_SIZE))
				continue;
			/* a superblock copy (the mirror at 64 MiB) is summed over 4 KiB */
			u32 len = get_le64(b + 64) == BTRFS_MAGIC ? BTRFS_SUPER_INFO_SIZE : nodesize;
			put_le32(b, crc32c(b + BTRFS_CSUM_SIZE, len - BTRFS_CSUM_SIZE));
			memset(b + 4, 0, BTRFS_CSUM_SIZE - 4);
			device_write(d, off, b, len);
		}
		free(b);
	}
	put_le32(sb, crc32c(sb + BTRFS_CSUM_SIZE, BTRFS_SUPER_INFO_SIZE - BTRFS_CSUM_SIZE));
	memset(sb + 4, 0, BTRFS_CSUM_SIZE - 4);
	device_write(d, BTRFS_SUPER_INFO_OFFSET, sb, sizeof(sb));
}

struct btrfs_fs_info *fuzz_open(const uint8_t *data, size_t size)
{
	if (size < 8 || memcmp(data, "BLFZ", 4))
		return NULL;
	u32 n = get_le32(data + 4);
	if (n == 0 || n > (MAX_DEVICE / PAGE) || 8 + 4 * (size_t)n > size)
		return NULL;
	const u8 *idx = data + 8, *pages = data + 8 + 4 * (size_t)n;
	size_t room = size - 8 - 4 * (size_t)n;
	u64 highest = 0;
	for (u32 i = 0; i < n; i++) {
		u64 p = get_le32(idx + 4 * i);
		if ((i && p <= get_le32(idx + 4 * (i - 1))) || (p + 1) * PAGE > MAX_DEVICE)
			return NULL;
		highest = (p + 1) * PAGE;
	}
	u64 dev_size = highest;
	for (u32 i = 0; i < n; i++) /* the superblock's total_bytes, when its page is there */
		if (get_le32(idx + 4 * i) == BTRFS_SUPER_INFO_OFFSET / PAGE && (size_t)(i + 1) * PAGE <= room) {
			u64 t = btrfs_super_total_bytes(pages + (size_t)i * PAGE);
			if (t > dev_size)
				dev_size = t > MAX_DEVICE ? MAX_DEVICE : t;
		}
	struct blab_device dev;
	if (device_init(&dev, dev_size))
		return NULL;
	u8 page[PAGE];
	for (u32 i = 0; i < n; i++) {
		size_t at = (size_t)i * PAGE, have = at < room ? room - at : 0;
		memset(page, 0, PAGE);
		memcpy(page, pages + at, have < PAGE ? have : PAGE);
		if (device_write(&dev, (u64)get_le32(idx + 4 * i) * PAGE, page, PAGE)) {
			device_free(&dev);
			return NULL;
		}
	}
	fix_csums(&dev);
	struct blab_err err = {0};
	struct btrfs_fs_info *fs = btrfs_open(&dev, &err);
	if (fs)
		fs->trace.enabled = 0;
	return fs;
}

void fuzz_print(const uint8_t *data, size_t size, fuzz_print_fn print)
{
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return;
	static struct strbuf out;
	out.len = 0;
	out.oom = 0;
	print(fs, &out);
	if (out.cap > (64u << 20))
		sb_free(&out);
	btrfs_fs_free(fs);
}
