#include "file-item.h"
#include "crc32c.h"
#include "ctree.h"
#include "delayed-ref.h"
#include <string.h>
#include <stdlib.h>

/* Checksums per item: half a leaf at most, so items stay easy to place. */
static u32 max_csums_per_item(const struct btrfs_fs_info *fs)
{
	return (fs->nodesize - BTRFS_HEADER_SIZE) / 2 / 4;
}

/* Inserts the checksums of sectors [bytenr, ...): from sums, or computed from data. */
static int insert_csums(struct btrfs_fs_info *fs, u64 bytenr, const u32 *sums, const u8 *data, u64 sectors)
{
	u32 ss = fs->sectorsize, per = max_csums_per_item(fs);
	u8 *buf = malloc((size_t)per * 4);
	if (!buf)
		return blab_fail(&fs->err, BLAB_ENOMEM, "checksums");
	int ret = 0;
	for (u64 i = 0; i < sectors && !ret; i += per) {
		u32 n = (u32)(sectors - i < per ? sectors - i : per);
		for (u32 j = 0; j < n; j++)
			put_le32(buf + 4 * j, sums ? sums[i + j] : crc32c(data + (i + j) * ss, ss));
		struct btrfs_key key = {BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, bytenr + i * ss};
		ret = btrfs_insert_item(fs, fs->csum_root, &key, buf, n * 4);
	}
	free(buf);
	return ret;
}

int btrfs_csum_file_blocks(struct btrfs_fs_info *fs, u64 bytenr, const u8 *data, u64 len)
{
	return insert_csums(fs, bytenr, NULL, data, len / fs->sectorsize);
}

int btrfs_insert_csums(struct btrfs_fs_info *fs, u64 bytenr, const u32 *sums, u64 sectors)
{
	return insert_csums(fs, bytenr, sums, NULL, sectors);
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

/* ---------------------------------------------------------------------- */
/* File extent items                                                      */

u32 btrfs_max_inline(const struct btrfs_fs_info *fs)
{
	u32 m = 2048;
	return m < fs->sectorsize - 1 ? m : fs->sectorsize - 1;
}

u32 btrfs_max_symlink(const struct btrfs_fs_info *fs)
{
	u32 m = fs->nodesize - BTRFS_HEADER_SIZE - BTRFS_ITEM_SIZE - BTRFS_FILE_EXTENT_INLINE_DATA_START;
	return m < 4095 ? m : 4095;
}


int btrfs_insert_inline_extent(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, const u8 *data, u32 len)
{
	struct btrfs_path path;
	struct btrfs_key key = {ino, BTRFS_EXTENT_DATA_KEY, 0};
	int ret = btrfs_insert_empty_item(fs, root, &path, &key, BTRFS_FILE_EXTENT_INLINE_DATA_START + len);
	if (ret)
		return ret;
	u8 *p = btrfs_item_ptr(path.nodes[0], path.slots[0]);
	btrfs_set_file_extent_generation(p, fs->generation);
	btrfs_set_file_extent_ram_bytes(p, len);
	btrfs_set_file_extent_type(p, BTRFS_FILE_EXTENT_INLINE);
	memcpy(p + BTRFS_FILE_EXTENT_INLINE_DATA_START, data, len);
	return 0;
}

int btrfs_parse_file_extent(struct btrfs_fs_info *fs, const struct extent_buffer *leaf, int slot, struct file_extent *fe)
{
	const u8 *p = btrfs_item_ptr(leaf, slot);
	u32 size = btrfs_item_size_nr(leaf, slot);
	btrfs_item_key(leaf, slot, &fe->key);
	if (size < BTRFS_FILE_EXTENT_INLINE_DATA_START)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "file extent (%llu EXTENT_DATA %llu) is %u bytes",
				 (unsigned long long)fe->key.objectid, (unsigned long long)fe->key.offset, size);
	fe->type = btrfs_file_extent_type(p);
	fe->compression = btrfs_file_extent_compression(p);
	fe->generation = btrfs_file_extent_generation(p);
	fe->ram_bytes = btrfs_file_extent_ram_bytes(p);
	if (fe->type == BTRFS_FILE_EXTENT_INLINE) {
		fe->inline_len = size - BTRFS_FILE_EXTENT_INLINE_DATA_START;
		fe->num_bytes = fe->ram_bytes;
		fe->disk_bytenr = fe->disk_num_bytes = fe->offset = 0;
		return 0;
	}
	if (size < BTRFS_FILE_EXTENT_SIZE || fe->type > BTRFS_FILE_EXTENT_PREALLOC)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "file extent (%llu EXTENT_DATA %llu): bad type %u or size %u",
				 (unsigned long long)fe->key.objectid, (unsigned long long)fe->key.offset, fe->type, size);
	fe->disk_bytenr = btrfs_file_extent_disk_bytenr(p);
	fe->disk_num_bytes = btrfs_file_extent_disk_num_bytes(p);
	fe->offset = btrfs_file_extent_offset(p);
	fe->num_bytes = btrfs_file_extent_num_bytes(p);
	fe->inline_len = 0;
	return 0;
}

/* The first extent of ino that covers or follows cur and starts before end:
 * 0 with *fe, or ENOENT. */
int btrfs_find_file_extent(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 cur, u64 end, struct file_extent *fe)
{
	struct btrfs_path path;
	struct btrfs_key key = {ino, BTRFS_EXTENT_DATA_KEY, cur};
	int ret = btrfs_search_slot(fs, root, &key, &path, 0, 0);
	if (ret < 0)
		return ret;
	if (ret > 0 && btrfs_prev_item(fs, &path) == 0) {
		struct btrfs_key k;
		btrfs_item_key(path.nodes[0], path.slots[0], &k);
		if (k.objectid == ino && k.type == BTRFS_EXTENT_DATA_KEY) {
			if ((ret = btrfs_parse_file_extent(fs, path.nodes[0], path.slots[0], fe)))
				return ret;
			if (file_extent_end(fe) > cur)
				return 0;
		}
		path.slots[0]++;
	}
	if ((ret = btrfs_path_next_item(fs, &path)))
		return ret < 0 ? ret : BLAB_ENOENT;
	struct btrfs_key k;
	btrfs_item_key(path.nodes[0], path.slots[0], &k);
	if (k.objectid != ino || k.type != BTRFS_EXTENT_DATA_KEY || k.offset >= end)
		return BLAB_ENOENT;
	return btrfs_parse_file_extent(fs, path.nodes[0], path.slots[0], fe);
}

int btrfs_insert_file_extent(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 file_off, const struct file_extent *src,
			     u64 offset, u64 num_bytes)
{
	u8 item[BTRFS_FILE_EXTENT_SIZE] = {0};
	btrfs_set_file_extent_generation(item, src->generation);
	btrfs_set_file_extent_ram_bytes(item, src->ram_bytes);
	btrfs_set_file_extent_compression(item, src->compression);
	btrfs_set_file_extent_type(item, src->type);
	btrfs_set_file_extent_disk_bytenr(item, src->disk_bytenr);
	btrfs_set_file_extent_disk_num_bytes(item, src->disk_num_bytes);
	btrfs_set_file_extent_offset(item, offset);
	btrfs_set_file_extent_num_bytes(item, num_bytes);
	struct btrfs_key key = {ino, BTRFS_EXTENT_DATA_KEY, file_off};
	return btrfs_insert_item(fs, root, &key, item, sizeof(item));
}

int btrfs_drop_file_extents(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 start, u64 end, u64 *dropped)
{
	u64 cur = start, gone = 0;
	int ret;
	while (cur < end) {
		struct file_extent fe;
		ret = btrfs_find_file_extent(fs, root, ino, cur, end, &fe);
		if (ret == BLAB_ENOENT)
			break;
		if (ret)
			return ret;
		u64 ks = fe.key.offset, ke = file_extent_end(&fe);
		int real = fe.type != BTRFS_FILE_EXTENT_INLINE && fe.disk_bytenr != 0;
		struct btrfs_path path;
		if ((ret = btrfs_search_slot(fs, root, &fe.key, &path, -1, 1)) != 0)
			return ret < 0 ? ret : blab_fail(&fs->err, BLAB_ECORRUPT, "file extent of %llu vanished", (unsigned long long)ino);
		u8 *p = btrfs_item_ptr(path.nodes[0], path.slots[0]);
		if (fe.type == BTRFS_FILE_EXTENT_INLINE) {
			if (start <= ks) {
				gone += fe.ram_bytes;
				ret = btrfs_del_items(fs, root, &path, path.slots[0], 1);
			} else if (start < fe.inline_len) {
				gone += fe.ram_bytes - start;
				btrfs_set_file_extent_ram_bytes(p, start);
				btrfs_truncate_item(fs, &path, BTRFS_FILE_EXTENT_INLINE_DATA_START + (u32)start, 1);
			}
		} else if (ks >= start && ke <= end) {
			if (real)
				gone += fe.num_bytes;
			ret = btrfs_del_items(fs, root, &path, path.slots[0], 1);
			if (!ret && real)
				ret = btrfs_mod_data_ref(fs, fe.disk_bytenr, fe.disk_num_bytes, root->objectid, ino, ks - fe.offset, -1);
		} else if (ks < start && ke <= end) {
			if (real)
				gone += ke - start;
			btrfs_set_file_extent_num_bytes(p, start - ks);
		} else if (ks >= start) {
			/* the tail [end, ke) stays, under a new key */
			if (real)
				gone += end - ks;
			ret = btrfs_del_items(fs, root, &path, path.slots[0], 1);
			if (!ret)
				ret = btrfs_insert_file_extent(fs, root, ino, end, &fe, fe.offset + (end - ks), ke - end);
		} else {
			/* the range is inside the extent: the head and the tail stay, the tail as a new item */
			if (real)
				gone += end - start;
			btrfs_set_file_extent_num_bytes(p, start - ks);
			ret = btrfs_insert_file_extent(fs, root, ino, end, &fe, fe.offset + (end - ks), ke - end);
			if (!ret && real)
				ret = btrfs_mod_data_ref(fs, fe.disk_bytenr, fe.disk_num_bytes, root->objectid, ino, ks - fe.offset, +1);
		}
		if (ret)
			return ret;
		cur = ke > cur ? ke : cur + 1;
	}
	if (dropped)
		*dropped = gone;
	return 0;
}
