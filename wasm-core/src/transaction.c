#include "transaction.h"
#include "space-info.h"
#include "block-group.h"
#include "ctree.h"
#include "disk-io.h"
#include "extent-tree.h"
#include "free-space-tree.h"
#include "tree-log.h"
#include "volumes.h"
#include "qgroup.h"
#include "relocation.h"

int btrfs_start_transaction(struct btrfs_fs_info *fs)
{
	if (fs->trans_running)
		return 0;
	int ret = btrfs_reloc_trees_left(fs, "writing to the filesystem");
	if (ret)
		return ret;
	fs->generation++;
	fs->trans_running = 1;
	fs_trace(fs, (struct trace_event){.kind = TRACE_TRANS_START, .a = fs->generation});
	return 0;
}

/* CHUNK items and DEV_EXTENTs for chunks allocated in this transaction. */
static int finish_pending_chunks(struct btrfs_fs_info *fs)
{
	u64 dev_used = 0;
	for (size_t i = 0; i < fs->nchunks; i++) {
		struct btrfs_chunk_map *m = &fs->chunks[i];
		dev_used += m->length * m->num_stripes;
		if (!m->pending)
			continue;
		u8 item[BTRFS_CHUNK_SIZE_BASE + 2 * BTRFS_STRIPE_SIZE];
		btrfs_fill_chunk_item(fs, m, item);
		struct btrfs_key key = {BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, m->logical};
		int ret = btrfs_insert_item(fs, fs->chunk_root, &key, item, btrfs_chunk_item_size(m->num_stripes));
		if (ret)
			return ret;
		for (u16 s = 0; s < m->num_stripes; s++) {
			u8 de[BTRFS_DEV_EXTENT_SIZE] = {0};
			btrfs_set_dev_extent_chunk_tree(de, BTRFS_CHUNK_TREE_OBJECTID);
			btrfs_set_dev_extent_chunk_objectid(de, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
			btrfs_set_dev_extent_chunk_offset(de, m->logical);
			btrfs_set_dev_extent_length(de, m->length);
			memcpy(de + BTRFS_DEV_EXTENT_CHUNK_UUID_OFF, fs->chunk_tree_uuid, BTRFS_UUID_SIZE);
			struct btrfs_key dk = {m->stripes[s].devid, BTRFS_DEV_EXTENT_KEY, m->stripes[s].physical};
			ret = btrfs_insert_item(fs, fs->dev_root, &dk, de, sizeof(de));
			if (ret)
				return ret;
		}
		m->pending = 0;
	}
	/* The device item, in the chunk tree and in the superblock. */
	u8 *sdev = fs->super + BTRFS_SUPER_DEV_ITEM_OFF;
	btrfs_set_dev_bytes_used(sdev, dev_used);
	struct btrfs_key key = {BTRFS_DEV_ITEMS_OBJECTID, BTRFS_DEV_ITEM_KEY, 1};
	u8 *p;
	u32 sz;
	int ret = btrfs_lookup_item(fs, fs->chunk_root, &key, &p, &sz, 0);
	if (ret == BLAB_ENOENT)
		return btrfs_insert_item(fs, fs->chunk_root, &key, sdev, BTRFS_DEV_ITEM_SIZE);
	if (ret || btrfs_dev_bytes_used(p) == dev_used)
		return ret;
	ret = btrfs_lookup_item(fs, fs->chunk_root, &key, &p, &sz, 1);
	if (!ret)
		btrfs_set_dev_bytes_used(p, dev_used);
	return ret;
}

static int update_root_items(struct btrfs_fs_info *fs)
{
	/* root items are written where the roots are; copying the root tree's
	 * leaves may move other roots' items, so look each up anew */
	for (size_t i = 0; i < fs->nroots; i++) {
		struct btrfs_root *r = fs->roots[i];
		if (!r->in_root_tree || !r->node)
			continue;
		u8 *it = r->item;
		if (!r->item_dirty && btrfs_root_bytenr(it) == r->node->start &&
		    btrfs_root_generation(it) == btrfs_header_generation(r->node->data))
			continue;
		r->item_dirty = 0;
		btrfs_set_root_bytenr(it, r->node->start);
		btrfs_set_root_level(it, (u8)btrfs_level(r->node));
		btrfs_set_root_generation(it, btrfs_header_generation(r->node->data));
		btrfs_set_root_generation_v2(it, btrfs_header_generation(r->node->data));
		btrfs_set_root_bytes_used(it, r->bytes_used);
		struct btrfs_key key = {r->objectid, BTRFS_ROOT_ITEM_KEY, r->item_offset};
		u8 *p;
		u32 sz;
		int ret = btrfs_lookup_item(fs, fs->tree_root, &key, &p, &sz, 1);
		if (ret == BLAB_ENOENT)
			ret = btrfs_insert_item(fs, fs->tree_root, &key, it, BTRFS_ROOT_ITEM_SIZE);
		else if (ret == 0)
			memcpy(p, it, sz < BTRFS_ROOT_ITEM_SIZE ? sz : BTRFS_ROOT_ITEM_SIZE);
		if (ret)
			return ret;
	}
	return 0;
}

static void fill_backup_root(struct btrfs_fs_info *fs)
{
	int slot = (int)(fs->generation % BTRFS_NUM_BACKUP_ROOTS);
	u8 *b = fs->super + BTRFS_SUPER_ROOTS_OFF + slot * BTRFS_ROOT_BACKUP_SIZE;
	struct btrfs_root *rs[6] = {fs->tree_root, fs->chunk_root, fs->extent_root, fs->fs_root, fs->dev_root, fs->csum_root};
	memset(b, 0, BTRFS_ROOT_BACKUP_SIZE);
	for (int i = 0; i < 6; i++) {
		if (!rs[i] || !rs[i]->node)
			continue;
		put_le64(b + 16 * i, rs[i]->node->start);
		put_le64(b + 16 * i + 8, btrfs_header_generation(rs[i]->node->data));
		b[BTRFS_BACKUP_LEVELS_OFF + i] = (u8)btrfs_level(rs[i]->node);
	}
	put_le64(b + 8 * BACKUP_TOTAL_BYTES, btrfs_super_total_bytes(fs->super));
	put_le64(b + 8 * BACKUP_BYTES_USED, btrfs_super_bytes_used(fs->super));
	put_le64(b + 8 * BACKUP_NUM_DEVICES, btrfs_super_num_devices(fs->super));
}

static int needs_another_pass(struct btrfs_fs_info *fs)
{
	if (fs->delayed_refs.len)
		return 1;
	for (size_t i = 0; i < fs->nchunks; i++)
		if (fs->chunks[i].pending)
			return 1;
	for (size_t i = 0; i < fs->nbgs; i++)
		if (fs->bgs[i].pending || fs->bgs[i].dirty || fs->bgs[i].fst_dirty)
			return 1;
	for (size_t i = 0; i < fs->nroots; i++) {
		struct btrfs_root *r = fs->roots[i];
		if (r->in_root_tree && r->node && (r->item_dirty || btrfs_root_bytenr(r->item) != r->node->start ||
						   btrfs_root_generation(r->item) != btrfs_header_generation(r->node->data)))
			return 1;
	}
	return 0;
}

static int is_dirty(void *ctx, const struct extent_buffer *eb) { return eb->dirty; }

static int any_dirty(const struct btrfs_fs_info *fs)
{
	if (btrfs_for_each_cached_eb(fs, is_dirty, NULL))
		return 1;
	size_t n;
	btrfs_pinned_ranges(fs, &n);
	return n != 0;
}

int btrfs_commit_transaction(struct btrfs_fs_info *fs)
{
	int ret;
	if (!fs->trans_running)
		return 0;
	if (!btrfs_log_running(fs) && !needs_another_pass(fs) && !any_dirty(fs)) {
		/* nothing changed: there is no transaction to commit (a superblock of
		 * a new generation over the same roots would not mount) */
		fs->generation--;
		fs->trans_running = 0;
		return 0;
	}
	/* the committed state will hold everything the log holds */
	if ((ret = btrfs_drop_log(fs)))
		return ret;
	/* qgroups: the extents whose references changed, before and after */
	if ((ret = btrfs_qgroup_account(fs)))
		return ret;
	/* Each pass can change trees again (new blocks, freed blocks): repeat
	 * until a pass changes nothing. Blocks already copied in this
	 * transaction change in place, so this settles in a few passes. */
	for (int pass = 0; needs_another_pass(fs); pass++) {
		if (pass > 64)
			return blab_fail(&fs->err, BLAB_EIO, "commit did not settle after %d passes", pass);
		if ((ret = finish_pending_chunks(fs)) || (ret = btrfs_run_delayed_refs(fs)) ||
		    (ret = btrfs_write_block_group_items(fs)) || (ret = btrfs_update_free_space_tree(fs)) ||
		    (ret = update_root_items(fs)))
			return ret;
	}

	u64 used = 0;
	for (size_t i = 0; i < fs->nbgs; i++)
		used += btrfs_block_group_used_on_disk(fs, &fs->bgs[i]); /* as its item says */
	u8 *s = fs->super;
	btrfs_set_super_generation(s, fs->generation);
	btrfs_set_super_root(s, fs->tree_root->node->start);
	btrfs_set_super_root_level(s, (u8)btrfs_level(fs->tree_root->node));
	btrfs_set_super_chunk_root(s, fs->chunk_root->node->start);
	btrfs_set_super_chunk_root_level(s, (u8)btrfs_level(fs->chunk_root->node));
	btrfs_set_super_chunk_root_generation(s, btrfs_header_generation(fs->chunk_root->node->data));
	btrfs_set_super_bytes_used(s, used);
	if (fs->uuid_root)
		btrfs_set_super_uuid_tree_generation(s, fs->generation);
	if ((ret = btrfs_write_sys_array(fs)))
		return ret;
	fill_backup_root(fs);
	if ((ret = btrfs_write_dirty_blocks(fs)) || (ret = btrfs_write_super(fs)))
		return ret;
	btrfs_unpin_extents(fs);
	btrfs_space_commit(fs);
	for (size_t i = 0; i < fs->nroots; i++)
		fs->roots[i]->force_cow = 0;
	btrfs_qgroup_committed(fs);
	fs_trace(fs, (struct trace_event){.kind = TRACE_COMMIT, .a = fs->generation, .b = fs->tree_root->node->start});
	fs->trans_running = 0;
	return 0;
}
