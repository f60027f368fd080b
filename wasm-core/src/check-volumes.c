/*
 * check-volumes.c — the space half of `btrfslab check`: every chunk has its
 * block group, of the same type and size; every stripe of a chunk has its
 * DEV_EXTENT and every DEV_EXTENT its chunk; a device's extents lie inside
 * it and add up to its bytes_used; the superblock's totals agree.
 */
#include "check.h"
#include "block-group.h"
#include "ctree.h"
#include "u64map.h"
#include "volumes.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

struct vc {
	struct btrfs_fs_info *fs;
	struct strbuf *out;
	int *errors;
};

static void vbad(struct vc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void vbad(struct vc *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	btrfs_check_vreport(c->out, c->errors, "", fmt, ap);
	va_end(ap);
}

/* Chunks against the BLOCK_GROUP_ITEMs of the extent tree (read here, not
 * from the loaded block groups: an image whose block groups do not load is
 * checked too). */
static void chunks_and_block_groups(struct vc *c)
{
	struct btrfs_fs_info *fs = c->fs;
	char a[96], b[96];
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {0, 0, 0};
	int ret;
	for (ret = btrfs_cursor_first(fs, fs->extent_root, &from, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		if (cur.key.type != BTRFS_BLOCK_GROUP_ITEM_KEY || cur.size < BTRFS_BLOCK_GROUP_ITEM_SIZE)
			continue;
		u64 start = cur.key.objectid, len = cur.key.offset, flags = btrfs_block_group_flags(cur.data);
		struct btrfs_chunk_map *m = btrfs_find_chunk(fs, start);
		if (!m || m->logical != start || m->length != len)
			vbad(c, "block group %" PRIu64 " len %" PRIu64 " has no chunk of the same start and length", start, len);
		else if (m->type != flags)
			vbad(c, "block group %" PRIu64 " is typed %s but its chunk is %s", start, btrfs_bg_type_name(flags, a, sizeof(a)),
			     btrfs_bg_type_name(m->type, b, sizeof(b)));
	}
	if (ret < 0)
		vbad(c, "extent tree: %s", fs->err.msg);
	for (size_t i = 0; i < fs->nchunks; i++) {
		const struct btrfs_chunk_map *m = &fs->chunks[i];
		struct btrfs_key k = {m->logical, BTRFS_BLOCK_GROUP_ITEM_KEY, m->length};
		u8 *p;
		u32 sz;
		if (!m->pending && btrfs_lookup_item(fs, fs->extent_root, &k, &p, &sz, 0))
			vbad(c, "chunk %" PRIu64 " len %" PRIu64 " has no block group", m->logical, m->length);
	}
}

/* DEV_EXTENTs against chunks, and against their device's DEV_ITEM. */
static void dev_extents(struct vc *c)
{
	struct btrfs_fs_info *fs = c->fs;
	struct u64map devs; /* devid -> the DEV_ITEM's total_bytes and bytes_used */
	struct u64map sums; /* devid -> bytes of its dev extents */
	u64map_init(&devs, sizeof(u64) * 2);
	u64map_init(&sums, sizeof(u64));
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, 0};
	int ret;
	for (ret = btrfs_cursor_first(fs, fs->chunk_root, &from, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		if (cur.key.objectid != BTRFS_DEV_ITEMS_OBJECTID || cur.key.type != BTRFS_DEV_ITEM_KEY)
			break;
		if (cur.size < 24)
			continue;
		u64 *d = u64map_put(&devs, cur.key.offset);
		if (d) {
			d[0] = btrfs_dev_total_bytes(cur.data);
			d[1] = btrfs_dev_bytes_used(cur.data);
		}
		if (btrfs_dev_bytes_used(cur.data) > btrfs_dev_total_bytes(cur.data))
			vbad(c, "device %" PRIu64 ": bytes_used %" PRIu64 " is beyond its total_bytes %" PRIu64, cur.key.offset,
			     btrfs_dev_bytes_used(cur.data), btrfs_dev_total_bytes(cur.data));
	}
	if (ret < 0)
		vbad(c, "chunk tree: %s", fs->err.msg);
	u64 total = 0;
	size_t i = 0;
	u64 id;
	void *v;
	while (u64map_next(&devs, &i, &id, &v))
		total += ((u64 *)v)[0];
	/* (more than the devices hold is what btrfs check calls a minor mismatch) */
	if (btrfs_super_total_bytes(fs->super) < total)
		vbad(c, "superblock total_bytes %" PRIu64 " is below what its devices hold (%" PRIu64 "): the kernel refuses to mount it",
		     btrfs_super_total_bytes(fs->super), total);

	from = (struct btrfs_key){0, 0, 0};
	for (ret = btrfs_cursor_first(fs, fs->dev_root, &from, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		if (cur.key.type != BTRFS_DEV_EXTENT_KEY)
			continue;
		u64 devid = cur.key.objectid, phys = cur.key.offset;
		if (cur.size < 32) {
			vbad(c, "device %" PRIu64 ": DEV_EXTENT %" PRIu64 " is %u bytes", devid, phys, cur.size);
			continue;
		}
		u64 len = btrfs_dev_extent_length(cur.data), chunk = btrfs_dev_extent_chunk_offset(cur.data);
		u64 *d = u64map_get(&devs, devid), *s = u64map_put(&sums, devid);
		if (s)
			*s += len;
		if (!d)
			vbad(c, "device %" PRIu64 ": dev extent %" PRIu64 " len %" PRIu64 " is on no device the chunk tree lists", devid, phys, len);
		else if (phys + len < phys || phys + len > d[0])
			vbad(c, "device %" PRIu64 ": dev extent %" PRIu64 " len %" PRIu64 " ends past the device's total_bytes %" PRIu64, devid, phys,
			     len, d[0]);
		struct btrfs_chunk_map *m = btrfs_find_chunk(fs, chunk);
		int found = 0;
		for (int j = 0; m && m->logical == chunk && j < m->num_stripes && j < 2; j++)
			found |= m->stripes[j].devid == devid && m->stripes[j].physical == phys && m->length == len;
		if (!found)
			vbad(c, "device %" PRIu64 ": dev extent %" PRIu64 " len %" PRIu64 " names chunk %" PRIu64 ", which has no such stripe", devid,
			     phys, len, chunk);
	}
	if (ret < 0)
		vbad(c, "dev tree: %s", fs->err.msg);
	i = 0;
	while (u64map_next(&devs, &i, &id, &v)) {
		u64 *s = u64map_get(&sums, id), used = s ? *s : 0;
		if (used != ((u64 *)v)[1])
			vbad(c, "device %" PRIu64 ": bytes_used %" PRIu64 " but its dev extents add up to %" PRIu64, id, ((u64 *)v)[1], used);
	}
	/* every stripe of every chunk has its DEV_EXTENT */
	for (size_t k = 0; k < fs->nchunks; k++) {
		const struct btrfs_chunk_map *m = &fs->chunks[k];
		for (int j = 0; !m->pending && j < m->num_stripes && j < 2; j++) {
			struct btrfs_key key = {m->stripes[j].devid, BTRFS_DEV_EXTENT_KEY, m->stripes[j].physical};
			u8 *p;
			u32 sz;
			if (btrfs_lookup_item(fs, fs->dev_root, &key, &p, &sz, 0))
				vbad(c, "chunk %" PRIu64 " stripe %d (device %" PRIu64 " offset %" PRIu64 ") has no DEV_EXTENT", m->logical, j,
				     m->stripes[j].devid, m->stripes[j].physical);
		}
	}
	u64map_free(&devs);
	u64map_free(&sums);
}

int btrfs_check_volumes(struct btrfs_fs_info *fs, struct strbuf *out)
{
	int errors = 0;
	struct vc c = {fs, out, &errors};
	if (!fs->dev_root || !fs->dev_root->node) {
		vbad(&c, "no dev tree");
		return errors;
	}
	/* a running transaction writes the items of its new chunks, block groups
	 * and device totals at its commit: only a committed state is held to them */
	if (fs->trans_running)
		return errors;
	chunks_and_block_groups(&c);
	dev_extents(&c);
	if (fs->bg_loaded) {
		u64 used = 0;
		for (size_t i = 0; i < fs->nbgs; i++)
			used += fs->bgs[i].used;
		if (used != btrfs_super_bytes_used(fs->super))
			vbad(&c, "superblock bytes_used %" PRIu64 " but the block groups use %" PRIu64, btrfs_super_bytes_used(fs->super), used);
	}
	return errors;
}
