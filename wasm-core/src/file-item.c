#include "file-item.h"
#include "crc32c.h"
#include "ctree.h"
#include <stdlib.h>

/* Checksums per item: half a leaf at most, so items stay easy to place. */
static u32 max_csums_per_item(const struct btrfs_fs_info *fs)
{
	return (fs->nodesize - BTRFS_HEADER_SIZE) / 2 / 4;
}

int btrfs_csum_file_blocks(struct btrfs_fs_info *fs, u64 bytenr, const u8 *data, u64 len)
{
	u32 ss = fs->sectorsize, per = max_csums_per_item(fs);
	u64 sectors = len / ss;
	u8 *buf = malloc((size_t)per * 4);
	if (!buf)
		return blab_fail(&fs->err, BLAB_ENOMEM, "checksums");
	int ret = 0;
	for (u64 i = 0; i < sectors && !ret; i += per) {
		u32 n = (u32)(sectors - i < per ? sectors - i : per);
		for (u32 j = 0; j < n; j++)
			put_le32(buf + 4 * j, crc32c(data + (i + j) * ss, ss));
		struct btrfs_key key = {BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, bytenr + i * ss};
		ret = btrfs_insert_item(fs, fs->csum_root, &key, buf, n * 4);
	}
	free(buf);
	return ret;
}

int btrfs_find_csum_item(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 bytenr, u64 end, struct btrfs_path *path,
			 u64 *item_start, u64 *item_end)
{
	struct btrfs_key key = {BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, bytenr}, k;
	int ret = btrfs_search_slot(fs, root, &key, path, 0, 0);
	if (ret < 0)
		return ret;
	if (ret > 0 && btrfs_prev_item(fs, path) == 0) {
		btrfs_item_key(path->nodes[0], path->slots[0], &k);
		u64 e = k.offset + (u64)(btrfs_item_size_nr(path->nodes[0], path->slots[0]) / 4) * fs->sectorsize;
		if (k.objectid == BTRFS_EXTENT_CSUM_OBJECTID && k.type == BTRFS_EXTENT_CSUM_KEY && e > bytenr) {
			*item_start = k.offset;
			*item_end = e;
			return 0;
		}
		path->slots[0]++;
	}
	if ((ret = btrfs_path_next_item(fs, path)))
		return ret < 0 ? ret : BLAB_ENOENT;
	btrfs_item_key(path->nodes[0], path->slots[0], &k);
	if (k.objectid != BTRFS_EXTENT_CSUM_OBJECTID || k.type != BTRFS_EXTENT_CSUM_KEY || k.offset >= end)
		return BLAB_ENOENT;
	*item_start = k.offset;
	*item_end = k.offset + (u64)(btrfs_item_size_nr(path->nodes[0], path->slots[0]) / 4) * fs->sectorsize;
	return 0;
}

/* The csum item that covers bytenr or the first one after it, read-only. */
static int find_csum_item(struct btrfs_fs_info *fs, u64 bytenr, u64 end, struct btrfs_key *found, u64 *item_end)
{
	struct btrfs_path path;
	u64 start;
	int ret = btrfs_find_csum_item(fs, fs->csum_root, bytenr, end, &path, &start, item_end);
	if (!ret)
		*found = (struct btrfs_key){BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, start};
	return ret;
}

int btrfs_del_csums(struct btrfs_fs_info *fs, u64 bytenr, u64 len)
{
	u64 end = bytenr + len, ss = fs->sectorsize;
	for (;;) {
		struct btrfs_key k;
		u64 ie;
		int ret = find_csum_item(fs, bytenr, end, &k, &ie);
		if (ret == BLAB_ENOENT)
			return 0;
		if (ret)
			return ret;
		struct btrfs_path path;
		if ((ret = btrfs_search_slot(fs, fs->csum_root, &k, &path, -1, 1)) != 0)
			return ret < 0 ? ret : blab_fail(&fs->err, BLAB_ECORRUPT, "csum item %llu vanished", (unsigned long long)k.offset);
		u64 s = k.offset;
		u8 *p = btrfs_item_ptr(path.nodes[0], path.slots[0]);
		if (s >= bytenr && ie <= end) {
			ret = btrfs_del_items(fs, fs->csum_root, &path, path.slots[0], 1);
		} else if (s < bytenr && ie <= end) {
			btrfs_truncate_item(fs, &path, (u32)((bytenr - s) / ss * 4), 1);
		} else {
			/* the item goes on past end: keep [max(s, ...), ...) parts around the range */
			u32 tail_n = (u32)((ie - end) / ss);
			u8 *tail = malloc((size_t)tail_n * 4);
			if (!tail)
				return blab_fail(&fs->err, BLAB_ENOMEM, "checksums");
			memcpy(tail, p + (end - s) / ss * 4, (size_t)tail_n * 4);
			if (s < bytenr)
				btrfs_truncate_item(fs, &path, (u32)((bytenr - s) / ss * 4), 1);
			else
				ret = btrfs_del_items(fs, fs->csum_root, &path, path.slots[0], 1);
			if (!ret) {
				struct btrfs_key tk = {BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, end};
				ret = btrfs_insert_item(fs, fs->csum_root, &tk, tail, tail_n * 4);
			}
			free(tail);
		}
		if (ret)
			return ret;
	}
}

int btrfs_lookup_csum(struct btrfs_fs_info *fs, u64 bytenr, u32 *csum)
{
	struct btrfs_key k;
	u64 ie;
	int ret = find_csum_item(fs, bytenr, bytenr + 1, &k, &ie);
	if (ret)
		return ret;
	if (k.offset > bytenr)
		return BLAB_ENOENT;
	struct btrfs_path path;
	if ((ret = btrfs_search_slot(fs, fs->csum_root, &k, &path, 0, 0)) != 0)
		return ret < 0 ? ret : BLAB_ENOENT;
	*csum = get_le32(btrfs_item_ptr(path.nodes[0], path.slots[0]) + (bytenr - k.offset) / fs->sectorsize * 4);
	return 0;
}
