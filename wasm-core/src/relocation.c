/* relocation.c — balance and relocation of block groups.
 *
 * A block group is relocated as the kernel relocates one: it is made
 * read-only, so that nothing new is allocated in it; every extent in it is
 * then moved. A tree block moves when the path to it in its tree is copied
 * (a search that copies every block on its way down, stopping at the
 * block's level): the copy is allocated in another group, its old extent
 * freed at the commit. When the group is empty its BLOCK_GROUP_ITEM, free
 * space items, CHUNK item and DEV_EXTENTs go, and its chunk's device space
 * is free again.
 *
 * Not modelled yet: blocks of subvolume trees that other trees share (the
 * kernel builds a reloc tree per subvolume, copies the paths there, and
 * swaps pointers between the two trees in merge_reloc_roots), and data
 * extents (the data reloc tree): a block group holding either gives
 * ENOTSUP, naming the block or the group. Empty data groups go. */
#include "relocation.h"
#include "block-group.h"
#include "ctree.h"
#include "disk-io.h"
#include "extent-tree.h"
#include "transaction.h"
#include "volumes.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct tree_block {
	u64 bytenr;
	int level;
};

/* The tree blocks whose extent items lie in bg (and, in *extents, every
 * extent there: what the kernel reports as "found N extents"). */
static int collect_extents(struct btrfs_fs_info *fs, const struct btrfs_block_group *bg, struct tree_block **out, size_t *n,
			   u64 *extents)
{
	struct btrfs_item_cursor c;
	struct btrfs_key from = {bg->start, 0, 0};
	size_t cap = 64, k = 0;
	struct tree_block *v = malloc(cap * sizeof(*v));
	if (!v)
		return blab_fail(&fs->err, BLAB_ENOMEM, "relocating block group %llu", (unsigned long long)bg->start);
	int ret;
	*extents = 0;
	for (ret = btrfs_cursor_first(fs, fs->extent_root, &from, &c); ret == 0; ret = btrfs_cursor_next(fs, &c)) {
		if (c.key.objectid >= bg->start + bg->length)
			break;
		int level;
		if (c.key.type == BTRFS_METADATA_ITEM_KEY) {
			level = (int)c.key.offset;
		} else if (c.key.type == BTRFS_EXTENT_ITEM_KEY) {
			if (c.size < BTRFS_EXTENT_ITEM_SIZE) {
				ret = blab_fail(&fs->err, BLAB_ECORRUPT, "extent item %llu is %u bytes", (unsigned long long)c.key.objectid, c.size);
				break;
			}
			if (!(btrfs_extent_flags(c.data) & BTRFS_EXTENT_FLAG_TREE_BLOCK)) {
				(*extents)++; /* data: moved by the data reloc tree (not modelled) */
				continue;
			}
			/* a non-skinny tree block: the key and level after the item */
			if (c.size < BTRFS_EXTENT_ITEM_SIZE + 18) {
				ret = blab_fail(&fs->err, BLAB_ECORRUPT, "tree block extent item %llu is %u bytes", (unsigned long long)c.key.objectid,
						c.size);
				break;
			}
			level = c.data[BTRFS_EXTENT_ITEM_SIZE + 17];
		} else {
			continue;
		}
		if (level < 0 || level >= BTRFS_MAX_LEVEL) {
			ret = blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu at level %d", (unsigned long long)c.key.objectid, level);
			break;
		}
		(*extents)++;
		if (k == cap) {
			struct tree_block *nv = realloc(v, (cap *= 2) * sizeof(*v));
			if (!nv) {
				ret = blab_fail(&fs->err, BLAB_ENOMEM, "relocating block group %llu", (unsigned long long)bg->start);
				break;
			}
			v = nv;
		}
		v[k++] = (struct tree_block){c.key.objectid, level};
	}
	if (ret < 0) {
		free(v);
		return ret;
	}
	*out = v;
	*n = k;
	return 0;
}

static struct btrfs_root *tree_of(struct btrfs_fs_info *fs, u64 owner)
{
	if (owner == BTRFS_ROOT_TREE_OBJECTID)
		return fs->tree_root;
	if (owner == BTRFS_CHUNK_TREE_OBJECTID)
		return fs->chunk_root;
	return btrfs_get_root(fs, owner);
}

/* One tree block out of the read-only group: the path to it copied. 1
 * when it had moved already (a path copied for another block went through
 * it: the kernel marks those processed and does not count them found). */
static int relocate_tree_block(struct btrfs_fs_info *fs, u64 bytenr, int level, struct btrfs_reloc_stats *st)
{
	u64 refs, flags;
	int ret = btrfs_tree_block_refs(fs, bytenr, level, &refs, &flags);
	if (ret)
		return ret;
	if (!refs)
		return 1;
	struct extent_buffer *eb = btrfs_read_tree_block(fs, bytenr, level, 0);
	if (!eb)
		return fs->err.code;
	u64 owner = btrfs_header_owner(eb->data);
	struct btrfs_root *root = tree_of(fs, owner);
	if (!root || !root->node)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu says its owner is tree %llu, which this filesystem does not have",
				 (unsigned long long)bytenr, (unsigned long long)owner);
	if (btrfs_root_shareable(root) && (refs > 1 || (flags & BTRFS_BLOCK_FLAG_FULL_BACKREF) || !btrfs_root_refs(root->item)))
		return blab_fail(&fs->err, BLAB_ENOTSUP,
				 "tree block %llu (level %d, tree %llu) is shared with other trees or its tree is deleted: relocating it needs "
				 "reloc trees, not modelled yet",
				 (unsigned long long)bytenr, level, (unsigned long long)owner);
	struct btrfs_key key = {0, 0, 0};
	if (btrfs_nritems(eb)) {
		if (level)
			btrfs_node_key(eb, 0, &key);
		else
			btrfs_item_key(eb, 0, &key);
	}
	struct extent_buffer *copy;
	ret = btrfs_cow_path_to(fs, root, bytenr, level, &key, &copy);
	if (ret == 1)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu (level %d) is not where its first key leads in tree %llu",
				 (unsigned long long)bytenr, level, (unsigned long long)owner);
	if (ret)
		return ret;
	fs_trace(fs, (struct trace_event){.kind = TRACE_RELOC_EXTENT, .bytenr = bytenr, .a = copy->start, .level = level, .tree = owner});
	st->tree_blocks++;
	return 0;
}

/* Every item of the free space tree in [start, start + len) deleted. */
static int delete_free_space_items(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	if (!fs->fst_root)
		return 0;
	for (;;) {
		struct btrfs_item_cursor c;
		struct btrfs_key from = {start, 0, 0};
		int ret = btrfs_cursor_first(fs, fs->fst_root, &from, &c);
		if (ret < 0)
			return ret;
		if (ret == 1 || c.key.objectid >= start + len)
			return 0;
		struct btrfs_key k = c.key;
		if ((ret = btrfs_delete_item(fs, fs->fst_root, &k)))
			return ret;
	}
}

/* The empty group's items and its chunk gone, in the running transaction. */
static int remove_block_group(struct btrfs_fs_info *fs, size_t bgi)
{
	struct btrfs_block_group bg = fs->bgs[bgi];
	struct btrfs_chunk_map *m = btrfs_find_chunk(fs, bg.start);
	if (!m || m->logical != bg.start)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "block group %llu has no chunk", (unsigned long long)bg.start);
	struct btrfs_chunk_map map = *m;
	struct btrfs_key bgk = {bg.start, BTRFS_BLOCK_GROUP_ITEM_KEY, bg.length},
			 ck = {BTRFS_FIRST_CHUNK_TREE_OBJECTID, BTRFS_CHUNK_ITEM_KEY, bg.start};
	int ret;
	if ((ret = btrfs_delete_item(fs, fs->extent_root, &bgk)) || (ret = delete_free_space_items(fs, bg.start, bg.length)) ||
	    (ret = btrfs_delete_item(fs, fs->chunk_root, &ck)))
		return ret;
	for (u16 s = 0; s < map.num_stripes; s++) {
		struct btrfs_key dk = {map.stripes[s].devid, BTRFS_DEV_EXTENT_KEY, map.stripes[s].physical};
		if ((ret = btrfs_delete_item(fs, fs->dev_root, &dk)))
			return ret;
	}
	/* the maps: deleting items may have allocated, so find them again */
	for (size_t i = 0; i < fs->nbgs; i++) {
		if (fs->bgs[i].start != bg.start)
			continue;
		free(fs->bgs[i].free);
		memmove(&fs->bgs[i], &fs->bgs[i + 1], (fs->nbgs - i - 1) * sizeof(fs->bgs[0]));
		fs->nbgs--;
		break;
	}
	for (size_t i = 0; i < fs->nchunks; i++) {
		if (fs->chunks[i].logical != bg.start)
			continue;
		memmove(&fs->chunks[i], &fs->chunks[i + 1], (fs->nchunks - i - 1) * sizeof(fs->chunks[0]));
		fs->nchunks--;
		break;
	}
	fs_trace(fs, (struct trace_event){.kind = TRACE_CHUNK_REMOVE, .bytenr = bg.start, .a = bg.length, .b = bg.flags,
					  .c = map.stripes[0].physical, .tree = BTRFS_CHUNK_TREE_OBJECTID});
	return 0;
}

static struct btrfs_block_group *group_at(struct btrfs_fs_info *fs, u64 start, size_t *index)
{
	for (size_t i = 0; i < fs->nbgs; i++)
		if (fs->bgs[i].start == start) {
			*index = i;
			return &fs->bgs[i];
		}
	return NULL;
}

static int commit_and_start(struct btrfs_fs_info *fs)
{
	int ret = btrfs_commit_transaction(fs);
	return ret ? ret : btrfs_start_transaction(fs);
}

int btrfs_relocate_block_group(struct btrfs_fs_info *fs, u64 start, struct btrfs_reloc_stats *st)
{
	size_t bgi;
	struct btrfs_block_group *bg = group_at(fs, start, &bgi);
	if (!bg)
		return blab_fail(&fs->err, BLAB_ENOENT, "no block group starts at %llu", (unsigned long long)start);
	int ret;
	if ((!fs->trans_running && (ret = btrfs_start_transaction(fs))) || (ret = commit_and_start(fs)))
		return ret;
	/* read-only: what moves out goes to the other groups of its type, or to
	 * a new chunk the allocator makes when they are full (as the kernel's
	 * btrfs_inc_block_group_ro, which overcommits metadata) */
	bg = group_at(fs, start, &bgi);
	bg->ro = 1;
	u64 used = bg->used, flags = bg->flags, length = bg->length;
	if ((ret = commit_and_start(fs)))
		return ret;
	struct tree_block *blocks = NULL;
	size_t n = 0;
	u64 extents = 0;
	bg = group_at(fs, start, &bgi);
	if ((ret = collect_extents(fs, bg, &blocks, &n, &extents)))
		return ret;
	fs_trace(fs, (struct trace_event){.kind = TRACE_RELOC_GROUP, .bytenr = start, .a = length, .b = flags, .c = extents});
	if (extents > n) {
		free(blocks);
		return blab_fail(&fs->err, BLAB_ENOTSUP, "block group %llu holds %llu data extents: relocating data (the data reloc tree) is not modelled yet",
				 (unsigned long long)start, (unsigned long long)(extents - n));
	}
	/* in logical order, as the kernel's find_next_extent; found: those not moved already */
	u64 found = extents - n;
	for (size_t i = 0; i < n && ret >= 0; i++)
		if (!(ret = relocate_tree_block(fs, blocks[i].bytenr, blocks[i].level, st)))
			found++;
	ret = ret < 0 ? ret : 0;
	free(blocks);
	fs_trace(fs, (struct trace_event){.kind = TRACE_RELOC_FOUND, .bytenr = start, .a = found});
	if (st->on_group)
		st->on_group(st->ctx, start, flags, found);
	if (ret || (ret = commit_and_start(fs)))
		return ret;
	bg = group_at(fs, start, &bgi);
	if (!bg)
		return blab_fail(&fs->err, BLAB_EIO, "block group %llu went away while it was relocated", (unsigned long long)start);
	if (bg->used)
		return blab_fail(&fs->err, BLAB_EIO, "block group %llu still has %llu bytes in use after relocation (of %llu)",
				 (unsigned long long)start, (unsigned long long)bg->used, (unsigned long long)used);
	if ((ret = remove_block_group(fs, bgi)) || (ret = btrfs_commit_transaction(fs)))
		return ret;
	st->block_groups++;
	st->extents += found;
	return 0;
}

int btrfs_balance(struct btrfs_fs_info *fs, u64 mask, int usage, struct btrfs_reloc_stats *st)
{
	/* the groups as they are now, from the highest logical address down (the
	 * kernel walks the chunk tree backwards, so the chunks balance makes, above
	 * them all, are not balanced again) */
	size_t n = 0;
	u64 *starts = malloc((fs->nbgs + 1) * sizeof(*starts));
	if (!starts)
		return blab_fail(&fs->err, BLAB_ENOMEM, "balance");
	for (size_t i = fs->nbgs; i-- > 0;) {
		const struct btrfs_block_group *bg = &fs->bgs[i];
		if (!(bg->flags & mask & BTRFS_BLOCK_GROUP_TYPE_MASK))
			continue;
		/* usage=N: groups used below N% of their size (usage=0: empty ones) */
		u64 thresh = usage >= 100 ? bg->length : usage <= 0 ? 1 : bg->length / 100 * (u64)usage;
		if (usage < 100 && bg->used >= thresh)
			continue;
		starts[n++] = bg->start;
	}
	int ret = 0;
	for (size_t i = 0; i < n && !ret; i++)
		ret = btrfs_relocate_block_group(fs, starts[i], st);
	free(starts);
	return ret;
}
