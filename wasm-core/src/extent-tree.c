#include "extent-tree-int.h"
#include "delayed-ref.h"
#include "block-group.h"
#include "crc32c.h"
#include "ctree.h"
#include "disk-io.h"
#include "file-item.h"
#include "volumes.h"
#include "array.h"
#include "tree-log.h"
#include <stdlib.h>

/* Allocation policy: the first free range, in block group order, that
 * holds len bytes at an align boundary in a group of this type. */
int btrfs_reserve_extent(struct btrfs_fs_info *fs, u64 type, u64 len, u64 align, u64 *out)
{
	for (size_t b = 0; b < fs->nbgs; b++) {
		struct btrfs_block_group *bg = &fs->bgs[b];
		if ((bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) != type)
			continue;
		for (size_t i = 0; i < bg->nfree; i++) {
			u64 s = (bg->free[i].start + align - 1) / align * align;
			if (s + len <= bg->free[i].start + bg->free[i].len) {
				int ret = btrfs_add_reserved_bytes(fs, bg, s, len);
				if (ret)
					return ret;
				*out = s;
				return 0;
			}
		}
	}
	return BLAB_ENOSPC;
}

u64 btrfs_chunk_size_for(struct btrfs_fs_info *fs, u64 type)
{
	const u64 MiB = 1024 * 1024;
	u64 size = fs->dev.size;
	if (type & BTRFS_BLOCK_GROUP_SYSTEM)
		return 4 * MiB;
	/* Like the kernel on small devices: 10% of the device, at least 8 MiB;
	 * metadata up to 256 MiB and data up to 1 GiB. */
	u64 want = size / 10 / MiB * MiB;
	u64 cap = (type & BTRFS_BLOCK_GROUP_DATA) ? 1024 * MiB : 256 * MiB;
	if (want < 8 * MiB)
		want = 8 * MiB;
	if (want > cap)
		want = cap;
	return want;
}

int btrfs_pinned_init(struct btrfs_fs_info *fs)
{
	return (fs->pinned = calloc(1, sizeof(*fs->pinned))) ? 0 : BLAB_ENOMEM;
}

void btrfs_pinned_free(struct btrfs_fs_info *fs)
{
	if (fs->pinned) {
		free(fs->pinned->ranges);
		free(fs->pinned->evict);
		free(fs->pinned);
		fs->pinned = NULL;
	}
}

int btrfs_pinned_clone(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src)
{
	const struct btrfs_pinned_extents *s = src->pinned;
	struct btrfs_pinned_extents *d = dst->pinned;
	int ret = 0;
	if ((d->ranges = array_dup(s->ranges, s->n, s->cap, sizeof(*s->ranges), &ret))) {
		d->n = s->n;
		d->cap = s->cap;
	}
	if ((d->evict = array_dup(s->evict, s->nevict, s->capevict, sizeof(*s->evict), &ret))) {
		d->nevict = s->nevict;
		d->capevict = s->capevict;
	}
	return ret ? blab_fail(&dst->err, ret, "pinned extents") : 0;
}

const struct free_range *btrfs_pinned_ranges(const struct btrfs_fs_info *fs, size_t *n)
{
	*n = fs->pinned->n;
	return fs->pinned->ranges;
}

/* Room for one more entry in the list of extents unpinned after commit. */
static int pinned_room(struct btrfs_fs_info *fs)
{
	if (array_room(&fs->pinned->ranges, fs->pinned->n, &fs->pinned->cap, sizeof(*fs->pinned->ranges), 64))
		return blab_fail(&fs->err, BLAB_ENOMEM, "pinned extents");
	return 0;
}

static int pin(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	int ret = pinned_room(fs);
	if (ret)
		return ret;
	fs->pinned->ranges[fs->pinned->n++] = (struct free_range){start, len};
	return btrfs_pin_range(fs, start, len);
}

static int queue_evict(struct btrfs_fs_info *fs, u64 bytenr)
{
	if (array_room(&fs->pinned->evict, fs->pinned->nevict, &fs->pinned->capevict, sizeof(*fs->pinned->evict), 64))
		return blab_fail(&fs->err, BLAB_ENOMEM, "evict list");
	fs->pinned->evict[fs->pinned->nevict++] = bytenr;
	return 0;
}

/* Whether a cached block still belongs to a tree: changed in this
 * transaction, freed by it but still in the committed state (queued for
 * eviction), or a tree's root. Only a lying free space tree or extent tree
 * hands out such a block; reusing it would leave two trees on one buffer
 * and, once one frees it, the other on freed memory. */
static int eb_in_use(const struct btrfs_fs_info *fs, const struct extent_buffer *eb)
{
	if (eb->dirty)
		return 1;
	for (size_t i = 0; i < fs->pinned->nevict; i++)
		if (fs->pinned->evict[i] == eb->start)
			return 1;
	if (fs->tree_root->node == eb || fs->chunk_root->node == eb ||
	    btrfs_log_is_root_node(fs, eb))
		return 1;
	for (size_t i = 0; i < fs->nroots; i++)
		if (fs->roots[i]->node == eb)
			return 1;
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
	struct extent_buffer *eb = btrfs_find_eb(fs, bytenr);
	if (eb && eb_in_use(fs, eb)) {
		/* the kernel's "extent tree corruption detected" */
		blab_fail(&fs->err, BLAB_ECORRUPT,
			  "tree block %llu allocated for tree %lld while a tree still uses it: the free space is corrupt",
			  (unsigned long long)bytenr, (long long)owner);
		return NULL;
	}
	if (!(eb = btrfs_new_eb(fs, bytenr)))
		return NULL;
	btrfs_init_tree_block(fs, eb, owner, level);
	if (owner == BTRFS_TREE_LOG_OBJECTID) {
		/* log blocks get no extent item: replay pins them from the log itself */
		fs_trace(fs, (struct trace_event){.kind = TRACE_BLOCK_ALLOC, .tree = owner, .bytenr = bytenr, .level = level,
						  .a = fs->generation});
		return eb;
	}
	struct btrfs_root *root = btrfs_get_root(fs, owner);
	if (root)
		root->bytes_used += fs->nodesize;
	struct delayed_ref_head *h = btrfs_delayed_ref_head(fs, bytenr);
	if (!h)
		return NULL;
	*h = (struct delayed_ref_head){.bytenr = bytenr, .num_bytes = fs->nodesize, .ref_mod = +1, .level = level,
				       .owner = owner, .generation = fs->generation, .new_extent = 1};
	fs_trace(fs, (struct trace_event){.kind = TRACE_BLOCK_ALLOC, .tree = owner, .bytenr = bytenr, .level = level,
					  .a = fs->generation});
	return eb;
}

int btrfs_free_tree_block(struct btrfs_fs_info *fs, struct btrfs_root *root, struct extent_buffer *eb)
{
	u64 bytenr = eb->start;
	if (root->objectid == BTRFS_TREE_LOG_OBJECTID) {
		/* a log block a log sync wrote may be in the log the superblock
		 * on disk names: pinned until the commit, not reused */
		int written = (btrfs_header_flags(eb->data) & BTRFS_HEADER_FLAG_WRITTEN) != 0;
		fs_trace(fs, (struct trace_event){.kind = TRACE_BLOCK_FREE, .tree = root->objectid, .bytenr = bytenr,
						  .level = btrfs_level(eb)});
		btrfs_evict_eb(fs, bytenr);
		return written ? pin(fs, bytenr, fs->nodesize) : btrfs_free_reserved(fs, bytenr, fs->nodesize);
	}
	root->bytes_used -= fs->nodesize;
	eb->dirty = 0;
	fs_trace(fs, (struct trace_event){.kind = TRACE_BLOCK_FREE, .tree = root->objectid, .bytenr = bytenr,
					  .level = btrfs_level(eb)});
	struct delayed_ref_head *h = u64map_get(&fs->delayed_refs, bytenr);
	if (h && h->new_extent) {
		/* never written: its space is free again at once, and it may be
		 * allocated again in this transaction, so it leaves the cache now */
		btrfs_drop_delayed_ref_head(fs, h);
		btrfs_evict_eb(fs, bytenr);
		return btrfs_free_reserved(fs, bytenr, fs->nodesize);
	}
	h = btrfs_delayed_ref_head(fs, bytenr);
	if (!h)
		return fs->err.code;
	*h = (struct delayed_ref_head){.bytenr = bytenr, .num_bytes = fs->nodesize, .ref_mod = -1, .level = btrfs_level(eb),
				       .owner = root->objectid};
	int ret = pin(fs, bytenr, fs->nodesize);
	return ret ? ret : queue_evict(fs, bytenr);
}

int btrfs_pin_log_block(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	return pin(fs, start, len);
}

int btrfs_pin_log_extent(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	int ret = pinned_room(fs);
	if (!ret)
		ret = btrfs_pin_free_range(fs, start, len);
	if (!ret)
		fs->pinned->ranges[fs->pinned->n++] = (struct free_range){start, len};
	return ret;
}

int btrfs_claim_log_extent(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	for (size_t i = fs->pinned->n; i-- > 0;) {
		if (fs->pinned->ranges[i].start == start && fs->pinned->ranges[i].len == len) {
			fs->pinned->ranges[i] = fs->pinned->ranges[--fs->pinned->n];
			btrfs_claim_pinned_range(fs, start, len);
			return 1;
		}
	}
	return 0;
}

int btrfs_reserve_data(struct btrfs_fs_info *fs, u64 len, u64 *bytenr, int may_alloc_chunk)
{
	int ret = btrfs_reserve_extent(fs, BTRFS_BLOCK_GROUP_DATA, len, fs->sectorsize, bytenr);
	if (ret == BLAB_ENOSPC && may_alloc_chunk) {
		u64 logical, size = btrfs_chunk_size_for(fs, BTRFS_BLOCK_GROUP_DATA);
		while (size < len)
			size *= 2;
		if (btrfs_alloc_chunk(fs, BTRFS_BLOCK_GROUP_DATA, size, &logical))
			return BLAB_ENOSPC;
		ret = btrfs_reserve_extent(fs, BTRFS_BLOCK_GROUP_DATA, len, fs->sectorsize, bytenr);
	}
	return ret;
}

int btrfs_add_new_data_ref(struct btrfs_fs_info *fs, u64 bytenr, u64 len, u64 root, u64 ino, u64 offset)
{
	struct delayed_ref_head *h = btrfs_delayed_ref_head(fs, bytenr);
	if (!h)
		return fs->err.code;
	h->new_extent = 1;
	h->generation = fs->generation;
	fs_trace(fs, (struct trace_event){.kind = TRACE_BLOCK_ALLOC, .tree = root, .bytenr = bytenr, .level = -1, .a = len});
	return btrfs_mod_data_ref(fs, bytenr, len, root, ino, offset, +1);
}

/* ---- running delayed refs ---- */

static u64 data_ref_hash(u64 root, u64 ino, u64 offset)
{
	u8 b[8];
	put_le64(b, root);
	u32 high = crc32c_raw(~0u, b, 8);
	put_le64(b, ino);
	u32 low = crc32c_raw(~0u, b, 8);
	put_le64(b, offset);
	low = crc32c_raw(low, b, 8);
	return ((u64)high << 31) ^ (u64)low;
}

static int run_tree_ref(struct btrfs_fs_info *fs, struct delayed_ref_head *h)
{
	struct btrfs_key key = {h->bytenr, BTRFS_METADATA_ITEM_KEY, (u64)h->level};
	if (h->ref_mod > 0) {
		u8 item[BTRFS_EXTENT_ITEM_SIZE + BTRFS_EXTENT_INLINE_REF_SIZE] = {0};
		btrfs_set_extent_refs(item, 1);
		btrfs_set_extent_generation(item, h->generation);
		btrfs_set_extent_flags(item, BTRFS_EXTENT_FLAG_TREE_BLOCK);
		btrfs_set_extent_inline_ref_type(item + BTRFS_EXTENT_ITEM_SIZE, BTRFS_TREE_BLOCK_REF_KEY);
		btrfs_set_extent_inline_ref_offset(item + BTRFS_EXTENT_ITEM_SIZE, h->owner);
		return btrfs_insert_item(fs, fs->extent_root, &key, item, sizeof(item));
	}
	if (h->ref_mod < 0) {
		int ret = btrfs_delete_item(fs, fs->extent_root, &key);
		if (ret == BLAB_ENOENT) {
			/* a non-skinny item (images without SKINNY_METADATA) */
			key.type = BTRFS_EXTENT_ITEM_KEY;
			key.offset = fs->nodesize;
			ret = btrfs_delete_item(fs, fs->extent_root, &key);
		}
		if (ret == BLAB_ENOENT)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "extent tree has no item for freed tree block %llu",
					 (unsigned long long)h->bytenr);
		return ret;
	}
	return 0;
}

struct dref_entry {
	u64 root, objectid, offset, hash;
	u32 count;
};

static int cmp_dref(const void *a, const void *b)
{
	const struct dref_entry *x = a, *y = b;
	return x->hash > y->hash ? -1 : x->hash < y->hash ? 1 : 0; /* descending hash, as the kernel keeps them */
}

static int run_data_ref(struct btrfs_fs_info *fs, struct delayed_ref_head *h)
{
	struct btrfs_key key = {h->bytenr, BTRFS_EXTENT_ITEM_KEY, h->num_bytes};
	struct dref_entry refs[64];
	int n = 0;
	u64 gen = h->generation;
	int existed = 0;
	if (!h->new_extent) {
		u8 *p;
		u32 sz;
		int ret = btrfs_lookup_item(fs, fs->extent_root, &key, &p, &sz, 0);
		if (ret == 0) {
			existed = 1;
			gen = btrfs_extent_generation(p);
			u32 off = BTRFS_EXTENT_ITEM_SIZE;
			while (off < sz && n < 64) {
				u8 type = p[off];
				if (type == BTRFS_EXTENT_DATA_REF_KEY && off + 1 + BTRFS_EXTENT_DATA_REF_SIZE <= sz) {
					const u8 *d = p + off + 1;
					refs[n++] = (struct dref_entry){btrfs_extent_data_ref_root(d), btrfs_extent_data_ref_objectid(d),
									btrfs_extent_data_ref_offset(d), 0,
									btrfs_extent_data_ref_count(d)};
					off += 1 + BTRFS_EXTENT_DATA_REF_SIZE;
				} else {
					return blab_fail(&fs->err, BLAB_ENOTSUP,
							 "data extent %llu has a shared or keyed backref (type %u): not supported yet",
							 (unsigned long long)h->bytenr, type);
				}
			}
		} else if (ret != BLAB_ENOENT) {
			return ret;
		}
	}
	for (int i = 0; i < h->ndrefs; i++) {
		struct data_ref *d = &h->drefs[i];
		int j = 0;
		while (j < n && !(refs[j].root == d->root && refs[j].objectid == d->objectid && refs[j].offset == d->offset))
			j++;
		if (j == n) {
			if (n == 64)
				return blab_fail(&fs->err, BLAB_ENOTSUP, "data extent %llu has too many backrefs", (unsigned long long)h->bytenr);
			refs[n++] = (struct dref_entry){d->root, d->objectid, d->offset, 0, 0};
		}
		long long c = (long long)refs[j].count + d->count_mod;
		if (c < 0)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "data extent %llu: dropping a reference it does not have",
					 (unsigned long long)h->bytenr);
		refs[j].count = (u32)c;
	}
	u64 total = 0;
	int live = 0;
	for (int i = 0; i < n; i++) {
		total += refs[i].count;
		if (refs[i].count)
			refs[live++] = refs[i];
	}
	n = live;
	if (existed) {
		int ret = btrfs_delete_item(fs, fs->extent_root, &key);
		if (ret)
			return ret;
	}
	if (total == 0) {
		int ret = btrfs_del_csums(fs, h->bytenr, h->num_bytes);
		if (ret)
			return ret;
		if (h->new_extent)
			return btrfs_free_reserved(fs, h->bytenr, h->num_bytes);
		return existed ? pin(fs, h->bytenr, h->num_bytes) : 0;
	}
	for (int i = 0; i < n; i++)
		refs[i].hash = data_ref_hash(refs[i].root, refs[i].objectid, refs[i].offset);
	qsort(refs, (size_t)n, sizeof(refs[0]), cmp_dref);
	u32 size = BTRFS_EXTENT_ITEM_SIZE + (u32)n * (1 + BTRFS_EXTENT_DATA_REF_SIZE);
	u8 item[BTRFS_EXTENT_ITEM_SIZE + 64 * (1 + BTRFS_EXTENT_DATA_REF_SIZE)];
	memset(item, 0, size);
	btrfs_set_extent_refs(item, total);
	btrfs_set_extent_generation(item, gen);
	btrfs_set_extent_flags(item, BTRFS_EXTENT_FLAG_DATA);
	for (int i = 0; i < n; i++) {
		u8 *r = item + BTRFS_EXTENT_ITEM_SIZE + i * (1 + BTRFS_EXTENT_DATA_REF_SIZE);
		r[0] = BTRFS_EXTENT_DATA_REF_KEY;
		btrfs_set_extent_data_ref_root(r + 1, refs[i].root);
		btrfs_set_extent_data_ref_objectid(r + 1, refs[i].objectid);
		btrfs_set_extent_data_ref_offset(r + 1, refs[i].offset);
		btrfs_set_extent_data_ref_count(r + 1, refs[i].count);
	}
	return btrfs_insert_item(fs, fs->extent_root, &key, item, size);
}

static int cmp_head(const void *a, const void *b)
{
	const struct delayed_ref_head *x = a, *y = b;
	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

int btrfs_run_delayed_refs(struct btrfs_fs_info *fs)
{
	while (fs->delayed_refs.len) {
		/* take the current heads; running them may queue new ones */
		size_t n = fs->delayed_refs.len, i = 0, k = 0;
		struct delayed_ref_head *heads = malloc(n * sizeof(*heads));
		if (!heads)
			return blab_fail(&fs->err, BLAB_ENOMEM, "delayed refs");
		u64 key;
		void *v;
		while (u64map_next(&fs->delayed_refs, &i, &key, &v))
			heads[k++] = *(struct delayed_ref_head *)v;
		u64map_clear(&fs->delayed_refs);
		qsort(heads, n, sizeof(*heads), cmp_head);
		int ret = 0;
		for (k = 0; k < n && !ret; k++)
			ret = heads[k].is_data ? run_data_ref(fs, &heads[k]) : run_tree_ref(fs, &heads[k]);
		for (k = 0; k < n; k++)
			free(heads[k].drefs);
		free(heads);
		if (ret)
			return ret;
	}
	return 0;
}

void btrfs_unpin_extents(struct btrfs_fs_info *fs)
{
	for (size_t i = 0; i < fs->pinned->n; i++)
		btrfs_unpin_range(fs, fs->pinned->ranges[i].start, fs->pinned->ranges[i].len);
	fs->pinned->n = 0;
	for (size_t i = 0; i < fs->pinned->nevict; i++)
		btrfs_evict_eb(fs, fs->pinned->evict[i]);
	fs->pinned->nevict = 0;
}
