#include "extent-tree.h"
#include "block-group.h"
#include "ctree.h"
#include "disk-io.h"
#include "volumes.h"
#include <stdlib.h>

u64 btrfs_chunk_size_for(struct btrfs_fs_info *fs, u64 type)
{
	const u64 MiB = 1024 * 1024;
	u64 size = fs->dev.size;
	if (type & BTRFS_BLOCK_GROUP_SYSTEM)
		return 4 * MiB;
	/* Like the kernel: 10% of the device, at least 8 MiB; metadata up to
	 * 256 MiB and data up to 1 GiB. */
	u64 want = size / 10 / MiB * MiB;
	u64 cap = (type & BTRFS_BLOCK_GROUP_DATA) ? 1024 * MiB : 256 * MiB;
	if (want < 8 * MiB)
		want = 8 * MiB;
	if (want > cap)
		want = cap;
	return want;
}

static int queue_ref(struct btrfs_fs_info *fs, struct delayed_tree_ref r)
{
	if (fs->nrefs == fs->caprefs) {
		size_t cap = fs->caprefs ? fs->caprefs * 2 : 64;
		struct delayed_tree_ref *n = realloc(fs->refs, cap * sizeof(*n));
		if (!n)
			return blab_fail(&fs->err, BLAB_ENOMEM, "delayed refs");
		fs->refs = n;
		fs->caprefs = cap;
	}
	fs->refs[fs->nrefs++] = r;
	return 0;
}

struct extent_buffer *btrfs_alloc_tree_block(struct btrfs_fs_info *fs, u64 owner, int level)
{
	u64 type = owner == BTRFS_CHUNK_TREE_OBJECTID ? BTRFS_BLOCK_GROUP_SYSTEM : BTRFS_BLOCK_GROUP_METADATA;
	u64 bytenr;
	int ret = btrfs_reserve_extent(fs, type, fs->nodesize, fs->nodesize, &bytenr);
	if (ret == BLAB_ENOSPC) {
		u64 logical;
		if (btrfs_alloc_chunk(fs, type, btrfs_chunk_size_for(fs, type), &logical))
			return NULL;
		ret = btrfs_reserve_extent(fs, type, fs->nodesize, fs->nodesize, &bytenr);
	}
	if (ret) {
		blab_fail(&fs->err, ret, "no space for a tree block of tree %lld", (long long)owner);
		return NULL;
	}
	struct extent_buffer *eb = btrfs_new_eb(fs, bytenr);
	if (!eb)
		return NULL;
	btrfs_init_tree_block(fs, eb, owner, level);
	struct btrfs_root *root = btrfs_get_root(fs, owner);
	if (root)
		root->bytes_used += fs->nodesize;
	if (queue_ref(fs, (struct delayed_tree_ref){bytenr, owner, fs->generation, level, +1}))
		return NULL;
	fs_trace(fs, (struct trace_event){.kind = TRACE_BLOCK_ALLOC, .tree = owner, .bytenr = bytenr, .level = level,
					  .a = fs->generation});
	return eb;
}

int btrfs_run_delayed_refs(struct btrfs_fs_info *fs)
{
	/* Inserting items may queue more refs (new blocks); take them all. */
	for (size_t i = 0; i < fs->nrefs; i++) {
		struct delayed_tree_ref r = fs->refs[i];
		if (r.action < 0)
			return blab_fail(&fs->err, BLAB_ENOTSUP, "dropping tree block references is not implemented yet");
		u8 item[BTRFS_EXTENT_ITEM_SIZE + BTRFS_EXTENT_INLINE_REF_SIZE] = {0};
		btrfs_set_extent_refs(item, 1);
		btrfs_set_extent_generation(item, r.generation);
		btrfs_set_extent_flags(item, BTRFS_EXTENT_FLAG_TREE_BLOCK);
		btrfs_set_extent_inline_ref_type(item + BTRFS_EXTENT_ITEM_SIZE, BTRFS_TREE_BLOCK_REF_KEY);
		btrfs_set_extent_inline_ref_offset(item + BTRFS_EXTENT_ITEM_SIZE, r.owner);
		struct btrfs_key key = {r.bytenr, BTRFS_METADATA_ITEM_KEY, (u64)r.level};
		int ret = btrfs_insert_item(fs, fs->extent_root, &key, item, sizeof(item));
		if (ret)
			return ret;
	}
	fs->nrefs = 0;
	return 0;
}

int btrfs_write_block_group_items(struct btrfs_fs_info *fs)
{
	for (size_t i = 0; i < fs->nbgs; i++) {
		struct btrfs_block_group *bg = &fs->bgs[i];
		if (!bg->pending && !bg->dirty)
			continue;
		struct btrfs_key key = {bg->start, BTRFS_BLOCK_GROUP_ITEM_KEY, bg->length};
		u8 item[BTRFS_BLOCK_GROUP_ITEM_SIZE];
		btrfs_set_block_group_used(item, bg->used);
		btrfs_set_block_group_chunk_objectid(item, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
		btrfs_set_block_group_flags(item, bg->flags);
		if (bg->pending) {
			int ret = btrfs_insert_item(fs, fs->extent_root, &key, item, sizeof(item));
			if (ret)
				return ret;
		} else {
			u8 *p;
			u32 sz;
			int ret = btrfs_lookup_item(fs, fs->extent_root, &key, &p, &sz, 1);
			if (ret)
				return blab_fail(&fs->err, BLAB_ECORRUPT, "block group item %llu is missing",
						 (unsigned long long)bg->start);
			memcpy(p, item, sizeof(item));
		}
		bg->pending = 0;
		bg->dirty = 0;
	}
	return 0;
}
