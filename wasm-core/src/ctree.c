#include "ctree.h"
#include "disk-io.h"
#include "volumes.h"

u32 btrfs_leaf_free_space(const struct btrfs_fs_info *fs, const struct extent_buffer *leaf)
{
	u32 nr = btrfs_nritems(leaf);
	u32 data_start = nr ? btrfs_item_offset_nr(leaf, (int)nr - 1) : fs->nodesize - BTRFS_HEADER_SIZE;
	return data_start - nr * BTRFS_ITEM_SIZE;
}

int btrfs_bin_search(const struct extent_buffer *eb, const struct btrfs_key *key, int *slot)
{
	int lo = 0, hi = (int)btrfs_nritems(eb);
	int leaf = btrfs_level(eb) == 0;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		struct btrfs_key k;
		if (leaf)
			btrfs_item_key(eb, mid, &k);
		else
			btrfs_node_key(eb, mid, &k);
		int c = btrfs_comp_keys(&k, key);
		if (c < 0)
			lo = mid + 1;
		else if (c > 0)
			hi = mid;
		else {
			*slot = mid;
			return 0;
		}
	}
	*slot = lo;
	return 1;
}

void btrfs_init_tree_block(struct btrfs_fs_info *fs, struct extent_buffer *eb, u64 owner, int level)
{
	u8 *d = eb->data;
	memset(d, 0, eb->len);
	memcpy(d + BTRFS_HEADER_FSID_OFF, fs->fsid, BTRFS_FSID_SIZE);
	memcpy(d + BTRFS_HEADER_CHUNK_UUID_OFF, fs->chunk_tree_uuid, BTRFS_UUID_SIZE);
	btrfs_set_header_bytenr(d, eb->start);
	btrfs_set_header_flags(d, BTRFS_MIXED_BACKREF_REV << BTRFS_BACKREF_REV_SHIFT);
	btrfs_set_header_generation(d, fs->generation);
	btrfs_set_header_owner(d, owner);
	btrfs_set_header_level(d, (u8)level);
	eb->dirty = 1;
}

int btrfs_search_slot(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key,
		      struct btrfs_path *path, int ins_len, int cow)
{
	(void)ins_len;
	(void)cow;
	memset(path, 0, sizeof(*path));
	struct extent_buffer *eb = root->node;
	if (!eb)
		return blab_fail(&fs->err, BLAB_ENOENT, "tree %lld has no root block", (long long)root->objectid);
	for (;;) {
		int level = btrfs_level(eb), slot;
		int ret = btrfs_bin_search(eb, key, &slot);
		path->nodes[level] = eb;
		if (level == 0) {
			path->slots[0] = slot;
			fs_trace(fs, (struct trace_event){.kind = TRACE_SEARCH, .tree = root->objectid, .bytenr = eb->start,
							  .level = 0, .slot = slot, .key = *key, .a = ret == 0});
			return ret;
		}
		if (ret && slot > 0)
			slot--;
		path->slots[level] = slot;
		fs_trace(fs, (struct trace_event){.kind = TRACE_SEARCH, .tree = root->objectid, .bytenr = eb->start,
						  .level = level, .slot = slot, .key = *key, .a = 0});
		struct extent_buffer *child = btrfs_read_tree_block(fs, btrfs_node_blockptr(eb, slot), level - 1, root->objectid);
		if (!child)
			return fs->err.code;
		eb = child;
	}
}

int btrfs_path_next_item(struct btrfs_fs_info *fs, struct btrfs_path *path)
{
	if (path->slots[0] < (int)btrfs_nritems(path->nodes[0]))
		return 0;
	int level = 1;
	for (;;) {
		if (level >= BTRFS_MAX_LEVEL || !path->nodes[level])
			return 1;
		if (path->slots[level] + 1 < (int)btrfs_nritems(path->nodes[level]))
			break;
		level++;
	}
	path->slots[level]++;
	while (level > 0) {
		struct extent_buffer *parent = path->nodes[level];
		struct extent_buffer *c = btrfs_read_tree_block(fs, btrfs_node_blockptr(parent, path->slots[level]), level - 1,
								btrfs_header_owner(parent->data));
		if (!c)
			return fs->err.code;
		level--;
		path->nodes[level] = c;
		path->slots[level] = 0;
	}
	return btrfs_nritems(path->nodes[0]) ? 0 : btrfs_path_next_item(fs, path);
}

/* Makes room for an item of size bytes at slot of a leaf with enough free space. */
static void leaf_insert_empty(struct btrfs_fs_info *fs, struct extent_buffer *leaf, int slot,
			      const struct btrfs_key *key, u32 size)
{
	u32 nr = btrfs_nritems(leaf);
	u32 data_end = nr ? btrfs_item_offset_nr(leaf, (int)nr - 1) : fs->nodesize - BTRFS_HEADER_SIZE;
	u8 *base = leaf->data + BTRFS_HEADER_SIZE;
	if ((u32)slot < nr) {
		u32 old_end = btrfs_item_offset_nr(leaf, slot) + btrfs_item_size_nr(leaf, slot);
		/* shift item data of slots >= slot down by size */
		memmove(base + data_end - size, base + data_end, old_end - data_end);
		for (u32 i = (u32)slot; i < nr; i++) {
			u8 *it = btrfs_item_nr(leaf, (int)i);
			btrfs_set_item_offset(it, btrfs_item_offset(it) - size);
		}
		memmove(btrfs_item_nr(leaf, slot + 1), btrfs_item_nr(leaf, slot), (nr - (u32)slot) * BTRFS_ITEM_SIZE);
		data_end = old_end;
	}
	u8 *it = btrfs_item_nr(leaf, slot);
	btrfs_cpu_key_to_disk(it, key);
	btrfs_set_item_offset(it, data_end - size);
	btrfs_set_item_size(it, size);
	btrfs_set_header_nritems(leaf->data, nr + 1);
	leaf->dirty = 1;
}

int btrfs_insert_item(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key,
		      const void *data, u32 size)
{
	struct btrfs_path path;
	int ret = btrfs_search_slot(fs, root, key, &path, (int)(size + BTRFS_ITEM_SIZE), 1);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return blab_fail(&fs->err, BLAB_EEXIST, "item (%llu %u %llu) exists in tree %lld",
				 (unsigned long long)key->objectid, key->type, (unsigned long long)key->offset,
				 (long long)root->objectid);
	struct extent_buffer *leaf = path.nodes[0];
	if (btrfs_leaf_free_space(fs, leaf) < size + BTRFS_ITEM_SIZE)
		return blab_fail(&fs->err, BLAB_EOVERFLOW, "leaf %llu of tree %lld has no room for a %u-byte item",
				 (unsigned long long)leaf->start, (long long)root->objectid, size);
	leaf_insert_empty(fs, leaf, path.slots[0], key, size);
	u8 *dst = btrfs_item_ptr(leaf, path.slots[0]);
	if (data)
		memcpy(dst, data, size);
	else
		memset(dst, 0, size);
	fs_trace(fs, (struct trace_event){.kind = TRACE_ITEM_INSERT, .tree = root->objectid, .bytenr = leaf->start,
					  .slot = path.slots[0], .key = *key, .a = size});
	return 0;
}

int btrfs_lookup_item(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key, u8 **ptr,
		      u32 *size, int for_update)
{
	struct btrfs_path path;
	int ret = btrfs_search_slot(fs, root, key, &path, 0, for_update);
	if (ret < 0)
		return ret;
	if (ret > 0)
		return BLAB_ENOENT;
	if (for_update)
		path.nodes[0]->dirty = 1;
	*ptr = btrfs_item_ptr(path.nodes[0], path.slots[0]);
	*size = btrfs_item_size_nr(path.nodes[0], path.slots[0]);
	return 0;
}

int btrfs_load_chunk_tree(struct btrfs_fs_info *fs)
{
	struct btrfs_path path;
	struct btrfs_key key = {BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, 0};
	int ret = btrfs_search_slot(fs, fs->chunk_root, &key, &path, 0, 0);
	if (ret < 0)
		return ret;
	while ((ret = btrfs_path_next_item(fs, &path)) == 0) {
		struct btrfs_key k;
		struct extent_buffer *leaf = path.nodes[0];
		btrfs_item_key(leaf, path.slots[0], &k);
		if (k.type == BTRFS_CHUNK_ITEM_KEY && !btrfs_find_chunk(fs, k.offset)) {
			struct btrfs_chunk_map map;
			ret = btrfs_parse_chunk(fs, k.offset, btrfs_item_ptr(leaf, path.slots[0]),
						btrfs_item_size_nr(leaf, path.slots[0]), &map);
			if (ret)
				return ret;
			ret = btrfs_add_chunk_map(fs, &map);
			if (ret)
				return ret;
		}
		path.slots[0]++;
	}
	return ret < 0 ? ret : 0;
}
