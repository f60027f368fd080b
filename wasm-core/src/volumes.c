#include "volumes.h"
#include "block-group.h"
#include "ctree.h"
#include "array.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int chunk_holds(const void *logical, const void *elem)
{
	u64 x = *(const u64 *)logical;
	const struct btrfs_chunk_map *m = elem;
	return x < m->logical ? -1 : x - m->logical >= m->length;
}

struct btrfs_chunk_map *btrfs_find_chunk(struct btrfs_fs_info *fs, u64 logical)
{
	return fs->nchunks ? bsearch(&logical, fs->chunks, fs->nchunks, sizeof(*fs->chunks), chunk_holds) : NULL;
}

int btrfs_add_chunk_map(struct btrfs_fs_info *fs, const struct btrfs_chunk_map *map)
{
	size_t i = 0;
	while (i < fs->nchunks && fs->chunks[i].logical < map->logical)
		i++;
	if ((i < fs->nchunks && fs->chunks[i].logical < map->logical + map->length) ||
	    (i > 0 && fs->chunks[i - 1].logical + fs->chunks[i - 1].length > map->logical))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "chunk at logical %llu len %llu overlaps another chunk",
				 (unsigned long long)map->logical, (unsigned long long)map->length);
	if (array_room(&fs->chunks, fs->nchunks, &fs->capchunks, sizeof(*fs->chunks), 16))
		return blab_fail(&fs->err, BLAB_ENOMEM, "chunk map");
	memmove(&fs->chunks[i + 1], &fs->chunks[i], (fs->nchunks - i) * sizeof(*map));
	fs->chunks[i] = *map;
	fs->nchunks++;
	return 0;
}

int btrfs_parse_chunk(struct btrfs_fs_info *fs, u64 logical, const u8 *p, u32 size, struct btrfs_chunk_map *map)
{
	if (size < btrfs_chunk_item_size(1))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "chunk at logical %llu: item size %u too small",
				 (unsigned long long)logical, size);
	u16 ns = btrfs_chunk_num_stripes(p);
	if (ns == 0 || size != btrfs_chunk_item_size(ns))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "chunk at logical %llu: %u stripes do not match item size %u",
				 (unsigned long long)logical, ns, size);
	u64 type = btrfs_chunk_type(p);
	memset(map, 0, sizeof(*map));
	map->logical = logical;
	map->length = btrfs_chunk_length(p);
	map->type = type;
	map->stripe_len = btrfs_chunk_stripe_len(p);
	map->io_align = btrfs_chunk_io_align(p);
	map->io_width = btrfs_chunk_io_width(p);
	map->sector_size = btrfs_chunk_sector_size(p);
	map->num_stripes = ns;
	map->sub_stripes = btrfs_chunk_sub_stripes(p);
	if (map->stripe_len != BTRFS_STRIPE_LEN)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "chunk at logical %llu: invalid chunk stripe length: %llu, expect %llu",
				 (unsigned long long)logical, (unsigned long long)map->stripe_len, (unsigned long long)BTRFS_STRIPE_LEN);
	if (!map->length || (map->length & (fs->sectorsize - 1)))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "chunk at logical %llu: bad length %llu",
				 (unsigned long long)logical, (unsigned long long)map->length);
	u64 profile = type & BTRFS_BLOCK_GROUP_PROFILE_MASK;
	if (profile & ~(BTRFS_BLOCK_GROUP_DUP | BTRFS_BLOCK_GROUP_RAID1))
		return blab_fail(&fs->err, BLAB_ENOTSUP,
				 "chunk at logical %llu uses profile 0x%llx: only single, DUP and one-device RAID1 reads are supported",
				 (unsigned long long)logical, (unsigned long long)profile);
	if (ns > 2)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "chunk at logical %llu has %u stripes", (unsigned long long)logical, ns);
	for (u16 i = 0; i < ns; i++) {
		const u8 *s = p + BTRFS_CHUNK_SIZE_BASE + i * BTRFS_STRIPE_SIZE;
		map->stripes[i].devid = btrfs_stripe_devid(s);
		map->stripes[i].physical = btrfs_stripe_offset(s);
		if (map->stripes[i].devid != 1 || memcmp(s + BTRFS_STRIPE_DEV_UUID_OFF, fs->dev_uuid, BTRFS_UUID_SIZE))
			return blab_fail(&fs->err, BLAB_ENOTSUP,
					 "chunk at logical %llu lives on device %llu: multi-device filesystems are not supported",
					 (unsigned long long)logical, (unsigned long long)map->stripes[i].devid);
	}
	return 0;
}

void btrfs_fill_chunk_item(struct btrfs_fs_info *fs, const struct btrfs_chunk_map *map, u8 *out)
{
	memset(out, 0, btrfs_chunk_item_size(map->num_stripes));
	btrfs_set_chunk_length(out, map->length);
	btrfs_set_chunk_owner(out, BTRFS_EXTENT_TREE_OBJECTID);
	btrfs_set_chunk_stripe_len(out, map->stripe_len);
	btrfs_set_chunk_type(out, map->type);
	btrfs_set_chunk_io_align(out, map->io_align);
	btrfs_set_chunk_io_width(out, map->io_width);
	btrfs_set_chunk_sector_size(out, map->sector_size);
	btrfs_set_chunk_num_stripes(out, map->num_stripes);
	btrfs_set_chunk_sub_stripes(out, map->sub_stripes);
	for (u16 i = 0; i < map->num_stripes; i++) {
		u8 *s = out + BTRFS_CHUNK_SIZE_BASE + i * BTRFS_STRIPE_SIZE;
		btrfs_set_stripe_devid(s, map->stripes[i].devid);
		btrfs_set_stripe_offset(s, map->stripes[i].physical);
		memcpy(s + BTRFS_STRIPE_DEV_UUID_OFF, fs->dev_uuid, BTRFS_UUID_SIZE);
	}
}

int btrfs_read_logical(struct btrfs_fs_info *fs, u64 logical, void *buf, u32 len)
{
	struct btrfs_chunk_map *m = btrfs_find_chunk(fs, logical);
	if (!m || logical + len > m->logical + m->length)
		return blab_fail(&fs->err, BLAB_EIO, "logical %llu len %u is not mapped by any chunk",
				 (unsigned long long)logical, len);
	u64 phys = m->stripes[0].physical + (logical - m->logical);
	int ret = device_read(&fs->dev, phys, buf, len);
	if (ret)
		return device_fail(&fs->dev, ret, &fs->err); /* out of range, or the image file could not be read */
	return 0;
}

int btrfs_write_logical(struct btrfs_fs_info *fs, u64 logical, const void *buf, u32 len)
{
	struct btrfs_chunk_map *m = btrfs_find_chunk(fs, logical);
	if (!m || logical + len > m->logical + m->length)
		return blab_fail(&fs->err, BLAB_EIO, "write to unmapped logical %llu", (unsigned long long)logical);
	for (u16 i = 0; i < m->num_stripes; i++) {
		u64 phys = m->stripes[i].physical + (logical - m->logical);
		int ret = device_write(&fs->dev, phys, buf, len);
		if (ret)
			return blab_fail(&fs->err, ret, "write at physical %llu failed", (unsigned long long)phys);
	}
	return 0;
}

int btrfs_read_sys_array(struct btrfs_fs_info *fs)
{
	u32 size = btrfs_super_sys_array_size(fs->super);
	const u8 *arr = fs->super + BTRFS_SUPER_SYS_ARRAY_OFF;
	u32 off = 0;
	if (size > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "superblock: sys_chunk_array_size %u exceeds %u", size,
				 BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
	while (off < size) {
		struct btrfs_key key;
		if (size - off < BTRFS_DISK_KEY_SIZE + BTRFS_CHUNK_SIZE_BASE)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "superblock: sys_chunk_array truncated at offset %u", off);
		btrfs_disk_key_to_cpu(&key, arr + off);
		if (key.type != BTRFS_CHUNK_ITEM_KEY)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "superblock: sys_chunk_array key type %u at offset %u, expect %u",
					 key.type, off, BTRFS_CHUNK_ITEM_KEY);
		off += BTRFS_DISK_KEY_SIZE;
		u16 ns = btrfs_chunk_num_stripes(arr + off);
		u32 isz = btrfs_chunk_item_size(ns);
		if (ns == 0 || isz > size - off)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "superblock: sys_chunk_array chunk at offset %u overruns the array", off);
		struct btrfs_chunk_map map;
		int ret = btrfs_parse_chunk(fs, key.offset, arr + off, isz, &map);
		if (ret)
			return ret;
		ret = btrfs_add_chunk_map(fs, &map);
		if (ret)
			return ret;
		off += isz;
	}
	return 0;
}

int btrfs_write_sys_array(struct btrfs_fs_info *fs)
{
	u8 *arr = fs->super + BTRFS_SUPER_SYS_ARRAY_OFF;
	u32 off = 0;
	memset(arr, 0, BTRFS_SYSTEM_CHUNK_ARRAY_SIZE);
	for (size_t i = 0; i < fs->nchunks; i++) {
		struct btrfs_chunk_map *m = &fs->chunks[i];
		if (!(m->type & BTRFS_BLOCK_GROUP_SYSTEM))
			continue;
		u32 need = BTRFS_DISK_KEY_SIZE + btrfs_chunk_item_size(m->num_stripes);
		if (off + need > BTRFS_SYSTEM_CHUNK_ARRAY_SIZE)
			return blab_fail(&fs->err, BLAB_ENOSPC, "sys_chunk_array is full");
		struct btrfs_key key = {BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, m->logical};
		btrfs_cpu_key_to_disk(arr + off, &key);
		btrfs_fill_chunk_item(fs, m, arr + off + BTRFS_DISK_KEY_SIZE);
		off += need;
	}
	btrfs_set_super_sys_array_size(fs->super, off);
	return 0;
}

/* A device range is usable when it avoids the first MiB and every superblock copy. */
static int range_blocked(u64 start, u64 len, u64 *next)
{
	if (start < 1024 * 1024) {
		*next = 1024 * 1024;
		return 1;
	}
	for (int i = 1; i < BTRFS_SUPER_MIRROR_MAX; i++) {
		u64 sb = btrfs_sb_offset(i);
		if (start < sb + BTRFS_STRIPE_LEN && sb < start + len) {
			*next = sb + BTRFS_STRIPE_LEN;
			return 1;
		}
	}
	return 0;
}

/* Lowest usable device offset for len bytes, skipping chunk stripes and the
 * range [avoid, avoid + len) (the other stripe of a DUP chunk). */
static int find_dev_hole(struct btrfs_fs_info *fs, u64 len, u64 avoid, u64 *physical)
{
	u64 cand = 1024 * 1024;
	for (;;) {
		u64 next;
		int moved = 0;
		if (range_blocked(cand, len, &next)) {
			cand = next;
			moved = 1;
		}
		if (avoid != (u64)-1 && cand < avoid + len && avoid < cand + len) {
			cand = avoid + len;
			moved = 1;
		}
		for (size_t i = 0; i < fs->nchunks; i++) {
			for (u16 s = 0; s < fs->chunks[i].num_stripes; s++) {
				u64 ps = fs->chunks[i].stripes[s].physical, pl = fs->chunks[i].length;
				if (cand < ps + pl && ps < cand + len) {
					cand = ps + pl;
					moved = 1;
				}
			}
		}
		if (cand + len > fs->dev.size || cand + len < cand)
			return BLAB_ENOSPC;
		if (!moved) {
			*physical = cand;
			return 0;
		}
	}
}

int btrfs_find_free_dev_extent(struct btrfs_fs_info *fs, u64 len, u64 *physical)
{
	return find_dev_hole(fs, len, (u64)-1, physical);
}

int btrfs_alloc_chunk(struct btrfs_fs_info *fs, u64 type, u64 length, u64 *logical)
{
	struct btrfs_chunk_map map = {0};
	int dup = (type & BTRFS_BLOCK_GROUP_DUP) != 0;
	u64 start = 1024 * 1024;
	int ret;

	if (fs->nchunks) {
		struct btrfs_chunk_map *last = &fs->chunks[fs->nchunks - 1];
		start = last->logical + last->length;
	}
	map.logical = start;
	map.length = length;
	map.type = type;
	map.stripe_len = BTRFS_STRIPE_LEN;
	map.io_align = (type & BTRFS_BLOCK_GROUP_SYSTEM) ? fs->sectorsize : (u32)BTRFS_STRIPE_LEN;
	map.io_width = map.io_align;
	map.sector_size = fs->sectorsize;
	map.num_stripes = dup ? 2 : 1;
	map.sub_stripes = (type & BTRFS_BLOCK_GROUP_SYSTEM) ? 0 : 1;
	map.pending = 1;
	u64 avoid = (u64)-1;
	for (u16 i = 0; i < map.num_stripes; i++) {
		if (find_dev_hole(fs, length, avoid, &map.stripes[i].physical))
			return blab_fail(&fs->err, BLAB_ENOSPC, "no unallocated device space for a %llu-byte chunk",
					 (unsigned long long)length);
		map.stripes[i].devid = 1;
		avoid = map.stripes[i].physical;
	}
	ret = btrfs_add_chunk_map(fs, &map);
	if (ret)
		return ret;
	ret = btrfs_add_block_group(fs, start, length, type, 0);
	if (ret)
		return ret;
	fs_trace(fs, (struct trace_event){.kind = TRACE_CHUNK_ALLOC, .bytenr = start, .a = length, .b = type,
					  .c = map.stripes[0].physical, .tree = BTRFS_CHUNK_TREE_OBJECTID});
	*logical = start;
	return 0;
}

int btrfs_load_chunk_tree(struct btrfs_fs_info *fs)
{
	struct btrfs_item_cursor c;
	struct btrfs_key from = {BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, 0};
	int ret;
	for (ret = btrfs_cursor_first(fs, fs->chunk_root, &from, &c); ret == 0; ret = btrfs_cursor_next(fs, &c)) {
		if (c.key.type != BTRFS_CHUNK_ITEM_KEY || btrfs_find_chunk(fs, c.key.offset))
			continue;
		struct btrfs_chunk_map map;
		if ((ret = btrfs_parse_chunk(fs, c.key.offset, c.data, c.size, &map)) || (ret = btrfs_add_chunk_map(fs, &map)))
			return ret;
	}
	return ret < 0 ? ret : 0;
}

/* A block group type as dump-tree prints it: "DATA", "METADATA|DUP", "DATA|METADATA". */
const char *btrfs_bg_type_name(u64 t, char *buf, size_t n)
{
	static const struct {
		u64 bit;
		const char *name;
	} bits[] = {{BTRFS_BLOCK_GROUP_DATA, "DATA"},       {BTRFS_BLOCK_GROUP_SYSTEM, "SYSTEM"},   {BTRFS_BLOCK_GROUP_METADATA, "METADATA"},
		    {BTRFS_BLOCK_GROUP_RAID0, "RAID0"},     {BTRFS_BLOCK_GROUP_RAID1, "RAID1"},     {BTRFS_BLOCK_GROUP_DUP, "DUP"},
		    {BTRFS_BLOCK_GROUP_RAID10, "RAID10"},   {BTRFS_BLOCK_GROUP_RAID5, "RAID5"},     {BTRFS_BLOCK_GROUP_RAID6, "RAID6"},
		    {BTRFS_BLOCK_GROUP_RAID1C3, "RAID1C3"}, {BTRFS_BLOCK_GROUP_RAID1C4, "RAID1C4"}};
	size_t at = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (t & bits[i].bit) {
			at += (size_t)snprintf(buf + at, at < n ? n - at : 0, "%s%s", at ? "|" : "", bits[i].name);
			t &= ~bits[i].bit;
		}
	if (t || !at)
		snprintf(buf + (at < n ? at : n - 1), at < n ? n - at : 1, "%s0x%" PRIx64, at ? "|" : "", t);
	return buf;
}
