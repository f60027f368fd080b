#include "space-info.h"
#include "disk-io.h"
#include "qgroup.h"
#include "tree-log.h"
#include "delalloc.h"
#include "crc32c.h"
#include "ctree.h"
#include "tree-checker.h"
#include "extent-tree.h"
#include "volumes.h"
#include "delayed-ref.h"
#include "array.h"
#include "block-group.h"
#include "check.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static size_t eb_hash(u64 bytenr) { return (size_t)((bytenr >> 12) * 0x9E3779B97F4A7C15ULL >> 52) % EB_HASH_SIZE; }

struct extent_buffer *btrfs_find_eb(struct btrfs_fs_info *fs, u64 bytenr)
{
	struct extent_buffer **eb = u64map_get(&fs->eb_index, bytenr);
	return eb ? *eb : NULL;
}

/* eb at the head of its chain, and in the index; -1 on ENOMEM (eb not linked) */
static int eb_link(struct btrfs_fs_info *fs, struct extent_buffer *eb)
{
	struct extent_buffer **slot = u64map_put(&fs->eb_index, eb->start);
	if (!slot)
		return -1;
	*slot = eb;
	size_t h = eb_hash(eb->start);
	eb->hnext = fs->eb_hash[h];
	fs->eb_hash[h] = eb;
	return 0;
}

/* A block's bytes are nodesize bytes followed by a reference count: the
 * extent buffers (of this fs and of its clones, btrfs_fs_clone) that hold
 * them. Whoever changes a block makes it its own first (btrfs_eb_unshare). */
static u64 *eb_data_refs(const struct extent_buffer *eb) { return (u64 *)(eb->data + eb->len); }

static u8 *eb_data_new(u32 len)
{
	u8 *d = calloc(1, (size_t)len + sizeof(u64));
	if (d)
		*(u64 *)(d + len) = 1;
	return d;
}

static void eb_data_put(struct extent_buffer *eb)
{
	if (eb->data && !--*eb_data_refs(eb))
		free(eb->data);
	eb->data = NULL;
}

void btrfs_free_eb(struct extent_buffer *eb)
{
	eb_data_put(eb);
	free(eb);
}

int btrfs_eb_unshare(struct btrfs_fs_info *fs, struct extent_buffer *eb)
{
	if (*eb_data_refs(eb) == 1)
		return 0;
	u8 *own = eb_data_new(eb->len);
	if (!own)
		return blab_fail(&fs->err, BLAB_ENOMEM, "extent buffer for block %llu", (unsigned long long)eb->start);
	memcpy(own, eb->data, eb->len);
	eb_data_put(eb);
	eb->data = own;
	return 0;
}

struct extent_buffer *btrfs_share_eb(struct btrfs_fs_info *fs, const struct extent_buffer *src)
{
	struct extent_buffer *eb = calloc(1, sizeof(*eb));
	if (!eb) {
		blab_fail(&fs->err, BLAB_ENOMEM, "extent buffer for block %llu", (unsigned long long)src->start);
		return NULL;
	}
	eb->start = src->start;
	eb->len = src->len;
	eb->dirty = src->dirty;
	eb->data = src->data;
	++*eb_data_refs(eb);
	if (eb_link(fs, eb)) {
		btrfs_free_eb(eb);
		blab_fail(&fs->err, BLAB_ENOMEM, "extent buffer for block %llu", (unsigned long long)src->start);
		return NULL;
	}
	return eb;
}

static struct extent_buffer *eb_alloc(struct btrfs_fs_info *fs, u64 bytenr)
{
	struct extent_buffer *eb = calloc(1, sizeof(*eb));
	if (!eb || !(eb->data = eb_data_new(fs->nodesize))) {
		free(eb);
		blab_fail(&fs->err, BLAB_ENOMEM, "extent buffer for block %llu", (unsigned long long)bytenr);
		return NULL;
	}
	eb->start = bytenr;
	eb->len = fs->nodesize;
	if (eb_link(fs, eb)) {
		btrfs_free_eb(eb);
		blab_fail(&fs->err, BLAB_ENOMEM, "extent buffer for block %llu", (unsigned long long)bytenr);
		return NULL;
	}
	return eb;
}

struct extent_buffer *btrfs_new_eb(struct btrfs_fs_info *fs, u64 bytenr)
{
	struct extent_buffer *eb = btrfs_find_eb(fs, bytenr);
	if (eb && *eb_data_refs(eb) > 1) {
		u8 *own = eb_data_new(eb->len);
		if (!own) {
			blab_fail(&fs->err, BLAB_ENOMEM, "extent buffer for block %llu", (unsigned long long)bytenr);
			return NULL;
		}
		eb_data_put(eb);
		eb->data = own;
	} else if (eb)
		memset(eb->data, 0, eb->len);
	else if (!(eb = eb_alloc(fs, bytenr)))
		return NULL;
	eb->dirty = 1;
	return eb;
}

void btrfs_csum_tree_block(struct btrfs_fs_info *fs, u8 *data)
{
	u32 c = crc32c(data + BTRFS_CSUM_SIZE, fs->nodesize - BTRFS_CSUM_SIZE);
	memset(data, 0, BTRFS_CSUM_SIZE);
	put_le32(data, c);
}

static const char *tree_name(u64 owner, char *buf, size_t n)
{
	snprintf(buf, n, "%lld", (long long)owner);
	return buf;
}

struct extent_buffer *btrfs_read_tree_block(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 owner)
{
	struct extent_buffer *eb = btrfs_find_eb(fs, bytenr);
	char tn[24];
	if (eb) {
		/* a cached block must still be what the parent expects: a damaged
		 * pointer back up the tree would otherwise loop forever */
		if (level >= 0 && btrfs_header_level(eb->data) != level) {
			blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu (root %lld) has level %u, expect %d",
				  (unsigned long long)bytenr, (long long)owner, btrfs_header_level(eb->data), level);
			return NULL;
		}
		return eb;
	}
	tree_name(owner, tn, sizeof(tn));
	if (bytenr & (fs->sectorsize - 1)) {
		blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu of root %s is not sector aligned", (unsigned long long)bytenr, tn);
		return NULL;
	}
	eb = eb_alloc(fs, bytenr);
	if (!eb)
		return NULL;
	if (btrfs_read_logical(fs, bytenr, eb->data, fs->nodesize))
		goto bad;
	u32 want = get_le32(eb->data), have = crc32c(eb->data + BTRFS_CSUM_SIZE, fs->nodesize - BTRFS_CSUM_SIZE);
	if (want != have) {
		blab_fail(&fs->err, BLAB_ECORRUPT, "checksum verify failed on logical %llu (root %s): found 0x%08x wanted 0x%08x",
			  (unsigned long long)bytenr, tn, have, want);
		goto bad;
	}
	if (btrfs_header_bytenr(eb->data) != bytenr) {
		blab_fail(&fs->err, BLAB_ECORRUPT, "bad tree block start, mirror 1 want %llu have %llu (root %s)",
			  (unsigned long long)bytenr, (unsigned long long)btrfs_header_bytenr(eb->data), tn);
		goto bad;
	}
	if (memcmp(eb->data + BTRFS_HEADER_FSID_OFF, fs->fsid, BTRFS_FSID_SIZE)) {
		blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu (root %s) has a foreign fsid", (unsigned long long)bytenr, tn);
		goto bad;
	}
	if (level >= 0 && btrfs_header_level(eb->data) != level) {
		blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu (root %s) has level %u, expect %d",
			  (unsigned long long)bytenr, tn, btrfs_header_level(eb->data), level);
		goto bad;
	}
	if (btrfs_check_block(fs, eb, owner))
		goto bad;
	return eb;
bad:
	btrfs_evict_eb(fs, bytenr); /* leave nothing half-valid in the cache */
	return NULL;
}

int btrfs_for_each_cached_eb(const struct btrfs_fs_info *fs, int (*fn)(void *ctx, const struct extent_buffer *eb),
			     void *ctx)
{
	int ret = 0;
	for (size_t h = 0; h < EB_HASH_SIZE && !ret; h++)
		for (const struct extent_buffer *eb = fs->eb_hash[h]; eb && !ret; eb = eb->hnext)
			ret = fn(ctx, eb);
	return ret;
}

void btrfs_evict_eb(struct btrfs_fs_info *fs, u64 bytenr)
{
	struct extent_buffer **pp = &fs->eb_hash[eb_hash(bytenr)];
	while (*pp && (*pp)->start != bytenr)
		pp = &(*pp)->hnext;
	struct extent_buffer *eb = *pp;
	if (!eb)
		return;
	*pp = eb->hnext;
	u64map_del(&fs->eb_index, bytenr);
	btrfs_free_eb(eb);
}

static int write_block(struct btrfs_fs_info *fs, struct extent_buffer *eb)
{
	int ret = btrfs_eb_unshare(fs, eb);
	if (ret)
		return ret;
	btrfs_set_header_flags(eb->data, btrfs_header_flags(eb->data) | BTRFS_HEADER_FLAG_WRITTEN);
	btrfs_csum_tree_block(fs, eb->data);
	if ((ret = btrfs_write_logical(fs, eb->start, eb->data, eb->len)))
		return ret;
	eb->dirty = 0;
	fs->blocks_written++;
	struct btrfs_chunk_map *m = btrfs_find_chunk(fs, eb->start);
	fs_trace(fs, (struct trace_event){.kind = TRACE_BLOCK_WRITE, .tree = btrfs_header_owner(eb->data),
					  .bytenr = eb->start, .level = btrfs_header_level(eb->data),
					  .a = m->stripes[0].physical + (eb->start - m->logical),
					  .b = btrfs_header_generation(eb->data)});
	return 0;
}

int btrfs_write_dirty_blocks(struct btrfs_fs_info *fs)
{
	for (size_t h = 0; h < EB_HASH_SIZE; h++) {
		for (struct extent_buffer *eb = fs->eb_hash[h]; eb; eb = eb->hnext) {
			if (!eb->dirty)
				continue;
			int ret = write_block(fs, eb);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int btrfs_write_tree_block(struct btrfs_fs_info *fs, struct extent_buffer *eb)
{
	return eb->dirty ? write_block(fs, eb) : 0;
}

int btrfs_write_super_buf(struct btrfs_fs_info *fs, const u8 *super)
{
	u8 buf[BTRFS_SUPER_INFO_SIZE];
	for (int i = 0; i < BTRFS_SUPER_MIRROR_MAX; i++) {
		u64 off = btrfs_sb_offset(i);
		if (off + BTRFS_SUPER_INFO_SIZE > fs->dev.size)
			break;
		memcpy(buf, super, sizeof(buf));
		btrfs_set_super_bytenr(buf, off);
		u32 c = crc32c(buf + BTRFS_CSUM_SIZE, BTRFS_SUPER_INFO_SIZE - BTRFS_CSUM_SIZE);
		memset(buf, 0, BTRFS_CSUM_SIZE);
		put_le32(buf, c);
		int ret = device_write(&fs->dev, off, buf, sizeof(buf));
		if (ret)
			return blab_fail(&fs->err, ret, "writing superblock mirror %d at %llu", i, (unsigned long long)off);
		fs_trace(fs, (struct trace_event){.kind = TRACE_SUPER_WRITE, .bytenr = off,
						  .a = btrfs_super_generation(super), .b = (u64)i});
	}
	return 0;
}

int btrfs_write_super(struct btrfs_fs_info *fs)
{
	int ret = btrfs_write_super_buf(fs, fs->super);
	if (!ret)
		memcpy(fs->committed_super, fs->super, BTRFS_SUPER_INFO_SIZE);
	return ret;
}

static int read_super(struct btrfs_fs_info *fs)
{
	u8 *s = fs->super;
	if (fs->dev.size < BTRFS_SUPER_INFO_OFFSET + BTRFS_SUPER_INFO_SIZE)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "image is %llu bytes: too small to hold a superblock at 64 KiB",
				 (unsigned long long)fs->dev.size);
	int ret = device_read(&fs->dev, BTRFS_SUPER_INFO_OFFSET, s, BTRFS_SUPER_INFO_SIZE);
	if (ret)
		return device_fail(&fs->dev, ret, &fs->err);
	if (btrfs_super_magic(s) != BTRFS_MAGIC)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "superblock at 65536: no btrfs magic (not a btrfs image)");
	if (btrfs_super_csum_type(s) != BTRFS_CSUM_TYPE_CRC32)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "superblock: checksum type %u is not supported, only crc32c (0)",
				 btrfs_super_csum_type(s));
	u32 want = get_le32(s), have = crc32c(s + BTRFS_CSUM_SIZE, BTRFS_SUPER_INFO_SIZE - BTRFS_CSUM_SIZE);
	if (want != have)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "superblock checksum mismatch: found 0x%08x wanted 0x%08x", have, want);
	fs->nodesize = btrfs_super_nodesize(s);
	fs->sectorsize = btrfs_super_sectorsize(s);
	if (fs->sectorsize != 4096)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "superblock: sectorsize %u is not supported, only 4096", fs->sectorsize);
	if (fs->nodesize < 4096 || fs->nodesize > 65536 || (fs->nodesize & (fs->nodesize - 1)))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "superblock: invalid nodesize %u", fs->nodesize);
	if (btrfs_super_total_bytes(s) > fs->dev.size)
		return blab_fail(&fs->err, BLAB_ECORRUPT,
				 "image is %llu bytes but the filesystem is %llu bytes: the image is truncated",
				 (unsigned long long)fs->dev.size, (unsigned long long)btrfs_super_total_bytes(s));
	if (btrfs_super_num_devices(s) != 1)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "filesystem has %llu devices: only single-device filesystems are supported",
				 (unsigned long long)btrfs_super_num_devices(s));
	if (btrfs_super_incompat_flags(s) & BTRFS_FEATURE_INCOMPAT_METADATA_UUID)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "superblock: the metadata_uuid feature is not supported");
	if (btrfs_super_incompat_flags(s) & BTRFS_FEATURE_INCOMPAT_EXTENT_TREE_V2)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "superblock: extent tree v2 is not supported");
	memcpy(fs->fsid, s + BTRFS_SUPER_FSID_OFF, BTRFS_FSID_SIZE);
	memcpy(fs->dev_uuid, s + BTRFS_SUPER_DEV_ITEM_OFF + BTRFS_DEV_UUID_OFF, BTRFS_UUID_SIZE);
	fs->generation = btrfs_super_generation(s);
	return 0;
}

/* A TREE_RELOC root item (a reloc tree a kernel balance left): kept in
 * fs->reloc_left with its root block read, or with why it cannot be (an
 * unreadable reloc tree is check's and dump-tree's to report; the files
 * are the subvolumes' and stay readable). Fails only out of memory. */
static int load_reloc_root(struct btrfs_fs_info *fs, const struct btrfs_key *k, const u8 *data, u32 size)
{
	struct btrfs_root *r = calloc(1, sizeof(*r));
	if (!r || array_room(&fs->reloc_left, fs->nreloc_left, &fs->capreloc_left, sizeof(*fs->reloc_left), 4)) {
		free(r);
		return blab_fail(&fs->err, BLAB_ENOMEM, "reloc tree of subvolume %llu", (unsigned long long)k->offset);
	}
	struct btrfs_reloc_left *l = &fs->reloc_left[fs->nreloc_left++];
	memset(l, 0, sizeof(*l));
	l->root = r;
	r->objectid = BTRFS_TREE_RELOC_OBJECTID;
	u64map_init(&r->dir_index, sizeof(u64));
	memcpy(r->item, data, size < BTRFS_ROOT_ITEM_SIZE ? size : BTRFS_ROOT_ITEM_SIZE);
	r->in_root_tree = 1;
	r->item_offset = k->offset;
	int level = btrfs_root_level(r->item);
	if (level >= BTRFS_MAX_LEVEL) {
		snprintf(l->why, sizeof(l->why), "its root item gives level %d (at most %d)", level, BTRFS_MAX_LEVEL - 1);
		return 0;
	}
	struct blab_err saved = fs->err;
	r->node = btrfs_read_tree_block(fs, btrfs_root_bytenr(r->item), level, BTRFS_TREE_RELOC_OBJECTID);
	if (!r->node) {
		snprintf(l->why, sizeof(l->why), "%s", fs->err.msg);
		fs->err = saved;
		return 0;
	}
	r->commit_bytenr = r->node->start;
	r->commit_level = btrfs_level(r->node);
	return 0;
}

/* Loads every ROOT_ITEM of the root tree into a struct btrfs_root. */
static int load_roots(struct btrfs_fs_info *fs)
{
	struct btrfs_item_cursor c;
	struct btrfs_key from = {0, BTRFS_ROOT_ITEM_KEY, 0};
	int ret;
	for (ret = btrfs_cursor_first(fs, fs->tree_root, &from, &c); ret == 0; ret = btrfs_cursor_next(fs, &c)) {
		const struct btrfs_key *k = &c.key;
		if (k->objectid == BTRFS_ORPHAN_OBJECTID && k->type == BTRFS_ORPHAN_ITEM_KEY) {
			/* a deleted subvolume, for the cleaner: only one with an orphan item, as
			 * the kernel's btrfs_find_orphan_roots (a root item of refs 0 without one
			 * stays, and a directory may still name it); in key order, as at mount */
			struct btrfs_root *r = btrfs_get_root(fs, k->offset);
			if (r && r->in_root_tree && !btrfs_root_refs(r->item) && btrfs_root_shareable(r) && !r->dead_seq)
				r->dead_seq = ++fs->dead_seq;
			continue;
		}
		if (k->type != BTRFS_ROOT_ITEM_KEY)
			continue;
		if (c.size < BTRFS_ROOT_ITEM_V1_SIZE)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "root item (%llu ROOT_ITEM %llu) too small",
					 (unsigned long long)k->objectid, (unsigned long long)k->offset);
		if (k->objectid == BTRFS_TREE_RELOC_OBJECTID) {
			if ((ret = load_reloc_root(fs, k, c.data, c.size)))
				return ret;
			continue;
		}
		if (k->objectid == BTRFS_TREE_LOG_OBJECTID)
			continue;
		struct btrfs_root *r = btrfs_get_root(fs, k->objectid);
		if (!r && !(r = btrfs_add_root(fs, k->objectid)))
			return fs->err.code;
		memset(r->item, 0, sizeof(r->item));
		memcpy(r->item, c.data, c.size < BTRFS_ROOT_ITEM_SIZE ? c.size : BTRFS_ROOT_ITEM_SIZE);
		r->in_root_tree = 1;
		r->item_offset = k->offset;
		r->node = btrfs_read_tree_block(fs, btrfs_root_bytenr(r->item), btrfs_root_level(r->item), k->objectid);
		if (!r->node)
			return fs->err.code;
		r->commit_bytenr = r->node->start;
		r->commit_level = btrfs_level(r->node);
		btrfs_disk_key_to_cpu(&r->commit_drop_progress, r->item + BTRFS_ROOT_DROP_PROGRESS_OFF);
		r->commit_drop_level = btrfs_root_drop_level(r->item);
	}
	return ret < 0 ? ret : 0;
}

struct btrfs_fs_info *btrfs_open(struct blab_device *dev, struct blab_err *err)
{
	struct btrfs_fs_info *fs = btrfs_fs_alloc();
	if (!fs) {
		device_free(dev);
		blab_fail(err, BLAB_ENOMEM, "opening image");
		return NULL;
	}
	fs->dev = *dev;
	memset(dev, 0, sizeof(*dev));
	if (read_super(fs) || btrfs_read_sys_array(fs))
		goto fail;
	memcpy(fs->committed_super, fs->super, BTRFS_SUPER_INFO_SIZE);
	fs->chunk_root = btrfs_add_root(fs, BTRFS_CHUNK_TREE_OBJECTID);
	fs->tree_root = btrfs_add_root(fs, BTRFS_ROOT_TREE_OBJECTID);
	if (!fs->chunk_root || !fs->tree_root)
		goto fail;
	fs->chunk_root->node = btrfs_read_tree_block(fs, btrfs_super_chunk_root(fs->super),
						     btrfs_super_chunk_root_level(fs->super), BTRFS_CHUNK_TREE_OBJECTID);
	if (!fs->chunk_root->node)
		goto fail;
	memcpy(fs->chunk_tree_uuid, fs->chunk_root->node->data + BTRFS_HEADER_CHUNK_UUID_OFF, BTRFS_UUID_SIZE);
	if (btrfs_load_chunk_tree(fs))
		goto fail;
	fs->tree_root->node = btrfs_read_tree_block(fs, btrfs_super_root(fs->super), btrfs_super_root_level(fs->super),
						    BTRFS_ROOT_TREE_OBJECTID);
	if (!fs->tree_root->node || load_roots(fs))
		goto fail;
	fs->extent_root = btrfs_get_root(fs, BTRFS_EXTENT_TREE_OBJECTID);
	fs->dev_root = btrfs_get_root(fs, BTRFS_DEV_TREE_OBJECTID);
	fs->fs_root = btrfs_get_root(fs, BTRFS_FS_TREE_OBJECTID);
	fs->csum_root = btrfs_get_root(fs, BTRFS_CSUM_TREE_OBJECTID);
	fs->fst_root = btrfs_get_root(fs, BTRFS_FREE_SPACE_TREE_OBJECTID);
	fs->uuid_root = btrfs_get_root(fs, BTRFS_UUID_TREE_OBJECTID);
	fs->data_reloc_root = btrfs_get_root(fs, BTRFS_DATA_RELOC_TREE_OBJECTID);
	if (!fs->extent_root || !fs->fs_root) {
		blab_fail(&fs->err, BLAB_ECORRUPT, "root tree has no %s root item", fs->extent_root ? "FS_TREE" : "EXTENT_TREE");
		goto fail;
	}
	if (btrfs_qgroup_load(fs))
		goto fail;
	btrfs_space_update_global_rsv(fs);
	return fs;
fail:
	if (err)
		*err = fs->err;
	btrfs_fs_free(fs);
	return NULL;
}

struct btrfs_fs_info *btrfs_fs_alloc(void)
{
	struct btrfs_fs_info *fs = calloc(1, sizeof(*fs));
	if (fs) {
		fs->trace.enabled = 1;
		u64map_init(&fs->eb_index, sizeof(struct extent_buffer *));
		if (btrfs_log_init(fs) || btrfs_pinned_init(fs) || btrfs_delalloc_init(fs) || btrfs_qgroup_init(fs)) {
			btrfs_fs_free(fs);
			return NULL;
		}
	}
	return fs;
}

struct btrfs_root *btrfs_get_root(struct btrfs_fs_info *fs, u64 objectid)
{
	for (size_t i = 0; i < fs->nroots; i++)
		if (fs->roots[i]->objectid == objectid)
			return fs->roots[i];
	return NULL;
}

struct btrfs_root *btrfs_add_root(struct btrfs_fs_info *fs, u64 objectid)
{
	if (fs->nroots >= BLAB_MAX_ROOTS) {
		blab_fail(&fs->err, BLAB_ENOSPC, "tree %llu: more than %d trees (BLAB_MAX_ROOTS, the most btrfs-lab holds)",
			  (unsigned long long)objectid, BLAB_MAX_ROOTS);
		return NULL;
	}
	struct btrfs_root *r = NULL;
	if (array_room(&fs->roots, fs->nroots, &fs->caproots, sizeof(*fs->roots), 16) || !(r = calloc(1, sizeof(*r)))) {
		blab_fail(&fs->err, BLAB_ENOMEM, "root %llu", (unsigned long long)objectid);
		return NULL;
	}
	r->objectid = objectid;
	u64map_init(&r->dir_index, sizeof(u64));
	fs->roots[fs->nroots++] = r;
	return r;
}

void btrfs_fs_free(struct btrfs_fs_info *fs)
{
	if (!fs)
		return;
	for (size_t h = 0; h < EB_HASH_SIZE; h++) {
		struct extent_buffer *eb = fs->eb_hash[h];
		while (eb) {
			struct extent_buffer *n = eb->hnext;
			btrfs_free_eb(eb);
			eb = n;
		}
	}
	u64map_free(&fs->eb_index);
	for (size_t i = 0; i < fs->nroots; i++) {
		u64map_free(&fs->roots[i]->dir_index);
		free(fs->roots[i]);
	}
	free(fs->roots);
	for (size_t i = 0; i < fs->nreloc_left; i++) {
		u64map_free(&fs->reloc_left[i].root->dir_index);
		free(fs->reloc_left[i].root);
	}
	free(fs->reloc_left);
	for (size_t i = 0; i < fs->nbgs; i++)
		free(fs->bgs[i].free);
	free(fs->bgs);
	free(fs->chunks);
	btrfs_free_delayed_refs(fs);
	btrfs_log_free(fs);
	btrfs_delalloc_free(fs);
	btrfs_pinned_free(fs);
	btrfs_qgroup_free(fs);
	trace_free(&fs->trace);
	device_free(&fs->dev);
	free(fs);
}

struct btrfs_root *btrfs_clone_root(struct btrfs_fs_info *fs, const struct btrfs_root *src)
{
	struct btrfs_root *r = malloc(sizeof(*r));
	if (!r || (*r = *src, u64map_clone(&r->dir_index, &src->dir_index))) {
		free(r);
		blab_fail(&fs->err, BLAB_ENOMEM, "root %llu", (unsigned long long)src->objectid);
		return NULL;
	}
	r->node = src->node ? btrfs_find_eb(fs, src->node->start) : NULL;
	return r;
}

/* Whether eb is the top block of one of src's trees (a clone keeps those). */
static int is_root_node(const struct btrfs_fs_info *src, const struct extent_buffer *eb)
{
	for (size_t i = 0; i < src->nroots; i++)
		if (src->roots[i]->node == eb)
			return 1;
	for (size_t i = 0; i < src->nreloc_left; i++)
		if (src->reloc_left[i].root->node == eb)
			return 1;
	return btrfs_log_is_root_node(src, eb);
}

/* Shares src's changed blocks and tree tops with fs, chain for chain in the
 * same order (commit writes them in cache order). */
static int share_blocks(struct btrfs_fs_info *fs, const struct btrfs_fs_info *src)
{
	for (size_t h = 0; h < EB_HASH_SIZE; h++) {
		struct extent_buffer **tail = &fs->eb_hash[h];
		for (const struct extent_buffer *eb = src->eb_hash[h]; eb; eb = eb->hnext) {
			if (!eb->dirty && !is_root_node(src, eb))
				continue; /* on the device as it is: read again when needed */
			struct extent_buffer *c = btrfs_share_eb(fs, eb);
			if (!c)
				return fs->err.code;
			/* btrfs_share_eb put it at the head; move it to the tail */
			fs->eb_hash[h] = c->hnext;
			c->hnext = NULL;
			*tail = c;
			tail = &c->hnext;
		}
	}
	return 0;
}

struct btrfs_fs_info *btrfs_fs_clone(const struct btrfs_fs_info *src, struct blab_err *err)
{
	if (src->dev.io || !src->dev.table) {
		blab_fail(err, BLAB_EINVAL, "only a filesystem in memory can be cloned");
		return NULL;
	}
	struct btrfs_fs_info *fs = btrfs_fs_alloc();
	if (!fs) {
		blab_fail(err, BLAB_ENOMEM, "fs_info");
		return NULL;
	}
	/* the scalars and fixed arrays; every pointer is made again below */
	memcpy(fs->super, src->super, sizeof(fs->super));
	memcpy(fs->committed_super, src->committed_super, sizeof(fs->committed_super));
	fs->nodesize = src->nodesize;
	fs->sectorsize = src->sectorsize;
	memcpy(fs->fsid, src->fsid, sizeof(fs->fsid));
	memcpy(fs->chunk_tree_uuid, src->chunk_tree_uuid, sizeof(fs->chunk_tree_uuid));
	memcpy(fs->dev_uuid, src->dev_uuid, sizeof(fs->dev_uuid));
	fs->generation = src->generation;
	fs->drop_batch = src->drop_batch;
	fs->dead_seq = src->dead_seq;
	fs->qgroup_skip = src->qgroup_skip;
	fs->meta_chunk = src->meta_chunk;
	fs->trans_running = src->trans_running;
	fs->bg_loaded = src->bg_loaded;
	fs->now = src->now;
	fs->clock_ns = src->clock_ns; /* timed runs go on from the same instant (the jiffy grid, the commit interval) */
	fs->space = src->space; /* the space_infos' reservations */
	fs->trace.enabled = 0;
	int ret = device_clone(&src->dev, &fs->dev);
	if (!ret)
		ret = share_blocks(fs, src);
	/* an array of src's and its length and capacity (none after a failure) */
#define DUP_VEC(a, n, cap)                                                                 \
	do {                                                                               \
		fs->a = array_dup(src->a, src->n, src->cap, sizeof(*fs->a), &ret);          \
		fs->n = fs->a ? src->n : 0;                                                \
		fs->cap = fs->a ? src->cap : 0;                                            \
	} while (0)
	DUP_VEC(chunks, nchunks, capchunks);
	DUP_VEC(bgs, nbgs, capbgs);
	if (!ret) {
		for (size_t i = 0; i < fs->nbgs; i++)
			fs->bgs[i].free = NULL;
		for (size_t i = 0; i < fs->nbgs && !ret; i++)
			fs->bgs[i].free = array_dup(src->bgs[i].free, src->bgs[i].nfree, src->bgs[i].capfree,
						    sizeof(struct free_range), &ret);
	}
	if (!ret) {
		fs->roots = array_dup(src->roots, src->nroots, src->caproots, sizeof(*fs->roots), &ret);
		fs->caproots = fs->roots ? src->caproots : 0;
	}
	for (size_t i = 0; i < src->nroots && !ret; i++) {
		if (!(fs->roots[i] = btrfs_clone_root(fs, src->roots[i])))
			ret = fs->err.code;
		else
			fs->nroots = i + 1;
	}
	if (!ret && src->nreloc_left) {
		fs->reloc_left = calloc(src->nreloc_left, sizeof(*fs->reloc_left));
		if (!fs->reloc_left)
			ret = blab_fail(&fs->err, BLAB_ENOMEM, "reloc trees");
		for (size_t i = 0; i < src->nreloc_left && !ret; i++) {
			fs->reloc_left[i] = src->reloc_left[i];
			if (!(fs->reloc_left[i].root = btrfs_clone_root(fs, src->reloc_left[i].root)))
				ret = fs->err.code;
			else
				fs->nreloc_left = fs->capreloc_left = i + 1;
		}
	}
	if (!ret) {
		struct btrfs_root **named[] = {&fs->tree_root, &fs->chunk_root, &fs->extent_root, &fs->dev_root, &fs->fs_root,
					       &fs->csum_root, &fs->fst_root, &fs->uuid_root, &fs->data_reloc_root};
		struct btrfs_root *const *from[] = {&src->tree_root, &src->chunk_root, &src->extent_root, &src->dev_root,
						    &src->fs_root, &src->csum_root, &src->fst_root, &src->uuid_root,
						    &src->data_reloc_root};
		for (size_t n = 0; n < sizeof(named) / sizeof(named[0]); n++)
			for (size_t i = 0; i < src->nroots; i++)
				if (src->roots[i] == *from[n])
					*named[n] = fs->roots[i];
	}
	if (!ret)
		ret = btrfs_clone_delayed_refs(fs, src);
	if (!ret)
		ret = btrfs_pinned_clone(fs, src);
#undef DUP_VEC
	if (!ret)
		ret = btrfs_log_clone(fs, src);
	if (!ret)
		ret = btrfs_delalloc_clone(fs, src);
	if (!ret)
		ret = btrfs_qgroup_clone(fs, src);
	if (ret) {
		blab_fail(err, ret, "cloning the filesystem: %s", fs->err.msg[0] ? fs->err.msg : "out of memory");
		btrfs_fs_free(fs);
		return NULL;
	}
	return fs;
}

struct btrfs_fs_info *btrfs_power_cut(struct btrfs_fs_info *fs, struct blab_err *err)
{
	struct blab_device dev = fs->dev;
	struct blab_trace trace = fs->trace;
	memset(&fs->dev, 0, sizeof(fs->dev));
	memset(&fs->trace, 0, sizeof(fs->trace));
	btrfs_fs_free(fs);
	struct btrfs_fs_info *after = btrfs_open(&dev, err);
	if (!after) {
		trace_free(&trace);
		return NULL;
	}
	trace_free(&after->trace);
	after->trace = trace;
	return after;
}

/* ---- what the writers rely on (btrfs_verify_layout) ---- */

struct layout_check {
	struct btrfs_fs_info *fs;
	struct strbuf *out; /* check's report, or NULL: the first problem goes to fs->err */
	int problems;
};

static void layout_problem(struct layout_check *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void layout_problem(struct layout_check *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (v->out) {
		btrfs_check_vreport(v->out, &v->problems, "", fmt, ap);
	} else if (!v->problems++) {
		char msg[BLAB_ERRMSG_MAX];
		vsnprintf(msg, sizeof(msg), fmt, ap);
		blab_fail(&v->fs->err, BLAB_ECORRUPT, "%s", msg);
	}
	va_end(ap);
}

/* The sys_chunk_array's chunks (read_sys_array parsed them, so they are
 * whole): SYSTEM only, as the kernel's btrfs_read_sys_array demands. */
static void verify_sys_array(struct layout_check *v)
{
	struct btrfs_fs_info *fs = v->fs;
	u32 size = btrfs_super_sys_array_size(fs->super), off = 0;
	const u8 *arr = fs->super + BTRFS_SUPER_SYS_ARRAY_OFF;
	char tn[64];
	while (off + BTRFS_DISK_KEY_SIZE + BTRFS_CHUNK_SIZE_BASE <= size) {
		struct btrfs_key key;
		btrfs_disk_key_to_cpu(&key, arr + off);
		const u8 *c = arr + off + BTRFS_DISK_KEY_SIZE;
		u64 type = btrfs_chunk_type(c);
		if ((type & BTRFS_BLOCK_GROUP_TYPE_MASK) != BTRFS_BLOCK_GROUP_SYSTEM)
			layout_problem(v, "superblock: sys_chunk_array chunk at logical %llu has type %s: the array holds SYSTEM chunks only",
				       (unsigned long long)key.offset, btrfs_bg_type_name(type, tn, sizeof(tn)));
		off += BTRFS_DISK_KEY_SIZE + btrfs_chunk_item_size(btrfs_chunk_num_stripes(c));
	}
}

/* The chunk tree's items against the map (the sys_chunk_array's copy wins
 * where both hold a chunk: they must agree). */
static void verify_chunk_tree(struct layout_check *v)
{
	struct btrfs_fs_info *fs = v->fs;
	struct btrfs_item_cursor c;
	struct btrfs_key from = {BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, 0};
	char t1[64], t2[64];
	int ret;
	struct blab_err saved = fs->err;
	for (ret = btrfs_cursor_first(fs, fs->chunk_root, &from, &c); ret == 0; ret = btrfs_cursor_next(fs, &c)) {
		if (c.key.type != BTRFS_CHUNK_ITEM_KEY)
			continue;
		struct btrfs_chunk_map m;
		const struct btrfs_chunk_map *have = btrfs_find_chunk(fs, c.key.offset);
		if (!have || btrfs_parse_chunk(fs, c.key.offset, c.data, c.size, &m))
			continue; /* the open took every chunk it could parse */
		if (have->logical != m.logical || have->length != m.length || have->type != m.type || have->num_stripes != m.num_stripes)
			layout_problem(v, "chunk tree item (FIRST_CHUNK_TREE CHUNK_ITEM %llu): length %llu type %s, but the sys_chunk_array's "
					  "copy has length %llu type %s",
				       (unsigned long long)c.key.offset, (unsigned long long)m.length, btrfs_bg_type_name(m.type, t1, sizeof(t1)),
				       (unsigned long long)have->length, btrfs_bg_type_name(have->type, t2, sizeof(t2)));
		else
			for (u16 s = 0; s < m.num_stripes; s++)
				if (m.stripes[s].physical != have->stripes[s].physical)
					layout_problem(v, "chunk tree item (FIRST_CHUNK_TREE CHUNK_ITEM %llu): stripe %u at physical %llu, but the "
							  "sys_chunk_array's copy has it at %llu",
						       (unsigned long long)c.key.offset, s, (unsigned long long)m.stripes[s].physical,
						       (unsigned long long)have->stripes[s].physical);
	}
	fs->err = saved; /* a chunk the open could not parse was refused there */
}

struct stripe_at {
	u64 physical, end, logical;
	u16 stripe;
};

static int cmp_stripe(const void *a, const void *b)
{
	const struct stripe_at *x = a, *y = b;
	return x->physical < y->physical ? -1 : x->physical > y->physical;
}

/* Each chunk: one known type, its logical range not wrapping, its stripes
 * within total_bytes, no two stripes (of it or of any chunk) sharing a byte. */
static void verify_chunks(struct layout_check *v)
{
	struct btrfs_fs_info *fs = v->fs;
	u64 total = btrfs_super_total_bytes(fs->super);
	int mixed = (btrfs_super_incompat_flags(fs->super) & BTRFS_FEATURE_INCOMPAT_MIXED_GROUPS) != 0;
	char tn[64];
	size_t n = 0;
	struct stripe_at *all = calloc(fs->nchunks * 2 + 1, sizeof(*all));
	if (!all) {
		layout_problem(v, "out of memory for the stripes of %zu chunks", fs->nchunks);
		return;
	}
	for (size_t i = 0; i < fs->nchunks; i++) {
		const struct btrfs_chunk_map *m = &fs->chunks[i];
		u64 t = m->type & BTRFS_BLOCK_GROUP_TYPE_MASK;
		int ok = t == BTRFS_BLOCK_GROUP_DATA || t == BTRFS_BLOCK_GROUP_METADATA || t == BTRFS_BLOCK_GROUP_SYSTEM ||
			 (mixed && t == (BTRFS_BLOCK_GROUP_DATA | BTRFS_BLOCK_GROUP_METADATA));
		if (!ok || (m->type & ~(BTRFS_BLOCK_GROUP_TYPE_MASK | BTRFS_BLOCK_GROUP_PROFILE_MASK)))
			layout_problem(v, "chunk at logical %llu has type %s: one of DATA, METADATA or SYSTEM%s", (unsigned long long)m->logical,
				       btrfs_bg_type_name(m->type, tn, sizeof(tn)), mixed ? " (or DATA|METADATA)" : "");
		if (m->logical + m->length < m->logical)
			layout_problem(v, "chunk at logical %llu length %llu wraps past 2^64", (unsigned long long)m->logical,
				       (unsigned long long)m->length);
		if ((m->type & BTRFS_BLOCK_GROUP_DUP) && m->num_stripes != 2)
			layout_problem(v, "chunk at logical %llu is DUP with %u stripes (2 expected)", (unsigned long long)m->logical, m->num_stripes);
		for (u16 s = 0; s < m->num_stripes; s++) {
			u64 p = m->stripes[s].physical, end = p + m->length;
			if (end < p || end > total)
				layout_problem(v, "chunk at logical %llu: stripe %u at physical %llu length %llu ends past the superblock's "
						  "total_bytes %llu",
					       (unsigned long long)m->logical, s, (unsigned long long)p, (unsigned long long)m->length,
					       (unsigned long long)total);
			all[n++] = (struct stripe_at){p, end < p ? (u64)-1 : end, m->logical, s};
		}
	}
	qsort(all, n, sizeof(*all), cmp_stripe);
	for (size_t i = 1; i < n; i++)
		if (all[i].physical < all[i - 1].end)
			layout_problem(v, "chunk at logical %llu stripe %u (physical %llu) overlaps chunk at logical %llu stripe %u "
					  "(physical %llu to %llu)%s",
				       (unsigned long long)all[i].logical, all[i].stripe, (unsigned long long)all[i].physical,
				       (unsigned long long)all[i - 1].logical, all[i - 1].stripe, (unsigned long long)all[i - 1].physical,
				       (unsigned long long)all[i - 1].end, all[i].logical == all[i - 1].logical ? ": its two copies share bytes" : "");
	free(all);
}

struct root_at {
	u64 bytenr;
	char name[48];
};

static int cmp_root_at(const void *a, const void *b)
{
	const struct root_at *x = a, *y = b;
	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

/* Every tree's root block is its own: a block that is two trees' root is
 * freed by the first one's COW while the other still holds it. */
static void verify_roots_unique(struct layout_check *v)
{
	struct btrfs_fs_info *fs = v->fs;
	size_t n = 0, cap = fs->nroots + fs->nreloc_left + 3;
	struct root_at *all = calloc(cap, sizeof(*all));
	if (!all) {
		layout_problem(v, "out of memory for the root blocks of %zu trees", fs->nroots);
		return;
	}
	all[n].bytenr = btrfs_super_root(fs->super);
	snprintf(all[n++].name, sizeof(all->name), "the superblock's root tree");
	all[n].bytenr = btrfs_super_chunk_root(fs->super);
	snprintf(all[n++].name, sizeof(all->name), "the superblock's chunk tree");
	if (btrfs_super_log_root(fs->super)) {
		all[n].bytenr = btrfs_super_log_root(fs->super);
		snprintf(all[n++].name, sizeof(all->name), "the superblock's log root tree");
	}
	for (size_t i = 0; i < fs->nroots; i++) {
		const struct btrfs_root *r = fs->roots[i];
		if (!r->in_root_tree || !r->node)
			continue;
		all[n].bytenr = r->node->start;
		snprintf(all[n++].name, sizeof(all->name), "ROOT_ITEM of tree %llu", (unsigned long long)r->objectid);
	}
	for (size_t i = 0; i < fs->nreloc_left; i++) {
		const struct btrfs_root *r = fs->reloc_left[i].root;
		if (!r->node)
			continue;
		all[n].bytenr = r->node->start;
		snprintf(all[n++].name, sizeof(all->name), "TREE_RELOC ROOT_ITEM %llu", (unsigned long long)r->item_offset);
	}
	qsort(all, n, sizeof(*all), cmp_root_at);
	for (size_t i = 1; i < n; i++)
		if (all[i].bytenr == all[i - 1].bytenr)
			layout_problem(v, "%s and %s name the same root block %llu: each tree needs its own", all[i - 1].name, all[i].name,
				       (unsigned long long)all[i].bytenr);
	free(all);
}

/* Each loaded block group has its chunk's type and profile. */
static void verify_block_groups(struct layout_check *v)
{
	struct btrfs_fs_info *fs = v->fs;
	const u64 mask = BTRFS_BLOCK_GROUP_TYPE_MASK | BTRFS_BLOCK_GROUP_PROFILE_MASK;
	char t1[64], t2[64];
	for (size_t i = 0; fs->bg_loaded && i < fs->nbgs; i++) {
		const struct btrfs_block_group *bg = &fs->bgs[i];
		const struct btrfs_chunk_map *m = btrfs_find_chunk(fs, bg->start);
		if (m && (bg->flags & mask) != (m->type & mask))
			layout_problem(v, "block group %llu has type %s, its chunk %s", (unsigned long long)bg->start,
				       btrfs_bg_type_name(bg->flags, t1, sizeof(t1)), btrfs_bg_type_name(m->type, t2, sizeof(t2)));
	}
}

int btrfs_verify_layout(struct btrfs_fs_info *fs, struct strbuf *out)
{
	struct layout_check v = {.fs = fs, .out = out};
	verify_sys_array(&v);
	verify_chunk_tree(&v);
	verify_chunks(&v);
	verify_roots_unique(&v);
	verify_block_groups(&v);
	return v.problems;
}

int btrfs_verify_writable(struct btrfs_fs_info *fs)
{
	int ret = btrfs_load_block_groups(fs);
	return ret ? ret : btrfs_verify_layout(fs, NULL) ? fs->err.code : 0;
}

struct btrfs_fs_info *btrfs_open_rw(struct blab_device *dev, struct blab_err *err)
{
	struct btrfs_fs_info *fs = btrfs_open(dev, err);
	if (fs && btrfs_verify_writable(fs)) {
		if (err)
			*err = fs->err;
		btrfs_fs_free(fs);
		return NULL;
	}
	return fs;
}
