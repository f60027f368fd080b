/* ctree.h — the B-tree: keys, items, search, insert, delete, the path. */
#ifndef BTRFSLAB_CTREE_H
#define BTRFSLAB_CTREE_H
#include "fs.h"

struct btrfs_path {
	struct extent_buffer *nodes[BTRFS_MAX_LEVEL];
	int slots[BTRFS_MAX_LEVEL];
	int lowest_level;
};

/* ---- items of a leaf (slot-indexed) ---- */
static inline u8 *btrfs_item_nr(const struct extent_buffer *eb, int slot)
{
	return eb->data + BTRFS_HEADER_SIZE + (size_t)slot * BTRFS_ITEM_SIZE;
}
static inline void btrfs_item_key(const struct extent_buffer *eb, int slot, struct btrfs_key *k)
{
	btrfs_disk_key_to_cpu(k, btrfs_item_nr(eb, slot));
}
static inline u32 btrfs_item_size_nr(const struct extent_buffer *eb, int slot)
{
	return btrfs_item_size(btrfs_item_nr(eb, slot));
}
static inline u32 btrfs_item_offset_nr(const struct extent_buffer *eb, int slot)
{
	return btrfs_item_offset(btrfs_item_nr(eb, slot));
}
/* Pointer to the data of item slot (valid while eb lives). */
static inline u8 *btrfs_item_ptr(const struct extent_buffer *eb, int slot)
{
	return eb->data + BTRFS_HEADER_SIZE + btrfs_item_offset_nr(eb, slot);
}
/* ---- key pointers of a node ---- */
static inline u8 *btrfs_key_ptr_nr(const struct extent_buffer *eb, int slot)
{
	return eb->data + BTRFS_HEADER_SIZE + (size_t)slot * BTRFS_KEY_PTR_SIZE;
}
static inline void btrfs_node_key(const struct extent_buffer *eb, int slot, struct btrfs_key *k)
{
	btrfs_disk_key_to_cpu(k, btrfs_key_ptr_nr(eb, slot));
}
static inline u64 btrfs_node_blockptr(const struct extent_buffer *eb, int slot)
{
	return btrfs_key_blockptr(btrfs_key_ptr_nr(eb, slot));
}
static inline u32 btrfs_nritems(const struct extent_buffer *eb) { return btrfs_header_nritems(eb->data); }
static inline int btrfs_level(const struct extent_buffer *eb) { return btrfs_header_level(eb->data); }

/* Bytes free between the item headers and the item data of a leaf. */
u32 btrfs_leaf_free_space(const struct btrfs_fs_info *fs, const struct extent_buffer *leaf);
/* The bytes an insert at slot of leaf moves aside: the item headers from
 * slot on and their data. */
u32 btrfs_leaf_insert_moves(const struct extent_buffer *leaf, int slot);
/* Binary search of one block: 0 with *slot at key, or 1 with *slot where
 * key would be inserted. */
int btrfs_bin_search(const struct extent_buffer *eb, const struct btrfs_key *key, int *slot);
/* Fills a new empty tree block's header for root at level. */
void btrfs_init_tree_block(struct btrfs_fs_info *fs, struct extent_buffer *eb, u64 owner, int level);
/* Searches root for key. Returns 0 found (path at the item), 1 not found
 * (path at the insert slot; may equal nritems), negative on error.
 * ins_len > 0 asks for room for an item of that size; cow asks for the
 * path to be made writable in the running transaction. */
int btrfs_search_slot(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key,
		      struct btrfs_path *path, int ins_len, int cow);
/* Moves path to the next item if path->slots[0] is past the end of its
 * leaf. Returns 0 when the path is at an item, 1 at the end of the tree. */
int btrfs_path_next_item(struct btrfs_fs_info *fs, struct btrfs_path *path);
/* The item cursor, for "search, then walk items across leaves":
 *     for (ret = btrfs_cursor_first(fs, root, &from, &c); ret == 0; ret = btrfs_cursor_next(fs, &c))
 *             use c.key, c.leaf, c.slot, c.data, c.size (break when past what is wanted)
 *     if (ret < 0) error;
 * first and next return 0 at an item, 1 past the last item, or an error. The
 * search is read-only; the path stays valid while nothing changes root. */
struct btrfs_item_cursor {
	struct btrfs_path path;
	struct btrfs_key key;       /* the item's key */
	struct extent_buffer *leaf; /* its leaf and slot */
	int slot;
	const u8 *data;             /* its data: size bytes inside the leaf */
	u32 size;
};
int btrfs_cursor_first(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *from,
		       struct btrfs_item_cursor *c);
int btrfs_cursor_next(struct btrfs_fs_info *fs, struct btrfs_item_cursor *c);
/* The key of the last item of root before key (read-only): 0 with *out,
 * 1 when there is none, or an error. */
int btrfs_prev_key(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key, struct btrfs_key *out);
/* Deletes every item of root with this objectid and a type from min_type
 * to max_type (a leaf's run at a time). 0, or an error. */
int btrfs_del_items_of(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 objectid, u8 min_type, u8 max_type);
/* Calls fn(ctx, key, data, size) for each item of root with this objectid
 * and type, in key order, until fn returns nonzero (that value is
 * returned). 0 at the end, or an error. */
typedef int (*btrfs_item_fn)(void *ctx, const struct btrfs_key *k, const u8 *p, u32 size);
int btrfs_for_each_item(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 objectid, u8 type, btrfs_item_fn fn,
			void *ctx);
u32 btrfs_nodeptrs(const struct btrfs_fs_info *fs);
/* The one copy-on-write primitive: returns in *out a block of root that may
 * be changed in the running transaction: eb itself when it was allocated in
 * it, else a copy (parent's pointer, or the root, repointed; the old block
 * freed at commit). parent is NULL for the root block. */
/* A subvolume's tree (FS_TREE or 256 and up): its blocks may be shared with
 * snapshots. */
int btrfs_root_shareable(const struct btrfs_root *root);
int btrfs_cow_block(struct btrfs_fs_info *fs, struct btrfs_root *root, struct extent_buffer *eb,
		    struct extent_buffer *parent, int parent_slot, struct extent_buffer **out);
/* Whether key leads, in root, to block bytenr at level (read only): 1, 0,
 * or an error. */
int btrfs_tree_reaches(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key, int level, u64 bytenr);
/* The path from root to block bytenr at level, found by key (its first
 * key), made writable: every block on it copied unless this transaction
 * made it (as a search with cow and lowest_level = level). 0 with *out the
 * block's copy; 1 when key does not lead there (not, or no longer, this
 * tree's block); or an error. */
int btrfs_cow_path_to(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 bytenr, int level, const struct btrfs_key *key,
		      struct extent_buffer **out);
/* Inserts an empty (zeroed) item; path then points at it. */
int btrfs_insert_empty_item(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path,
			    const struct btrfs_key *key, u32 size);
/* Deletes nr items from slot of the leaf at path (from a search with
 * ins_len -1 and cow). Empty blocks are removed, small ones merged into a
 * neighbour, a one-child root shrinks. The path is not valid afterwards. */
int btrfs_del_items(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int slot, int nr);
/* Deletes the item with exactly key; ENOENT when absent. */
int btrfs_delete_item(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key);
/* Grows the item at path by extra bytes at its end (zeroed); the leaf has
 * room (search with ins_len = extra). */
void btrfs_extend_item(struct btrfs_fs_info *fs, struct btrfs_path *path, u32 extra);
/* Shrinks the item at path to new_size, dropping bytes from its end
 * (from_end) or its start. */
void btrfs_truncate_item(struct btrfs_fs_info *fs, struct btrfs_path *path, u32 new_size, int from_end);
/* Moves path to the previous item. 0 at an item, 1 before the first item. */
int btrfs_prev_item(struct btrfs_fs_info *fs, struct btrfs_path *path);
/* Inserts an item of size bytes (copied from data when not NULL, zeroed
 * otherwise). EEXIST if key is there; EOVERFLOW if it cannot fit. */
int btrfs_insert_item(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key,
		      const void *data, u32 size);
/* Looks up key exactly; 0 with *ptr and *size, ENOENT otherwise. With
 * for_update the leaf is made writable (and dirty) first, so the caller may
 * change the item in place. */
int btrfs_lookup_item(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key,
		      u8 **ptr, u32 *size, int for_update);
#endif
