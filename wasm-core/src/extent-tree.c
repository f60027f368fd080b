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
#include "qgroup.h"
#include "qgroup.h"
#include <stdlib.h>

/* Allocation policy: the first free range, in block group order, that
 * holds len bytes at an align boundary in a group of this type. */
int btrfs_reserve_extent(struct btrfs_fs_info *fs, u64 type, u64 len, u64 align, u64 *out)
{
	for (size_t b = 0; b < fs->nbgs; b++) {
		struct btrfs_block_group *bg = &fs->bgs[b];
		if ((bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) != type || bg->ro)
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
	if ((type & BTRFS_BLOCK_GROUP_METADATA) && fs->meta_chunk)
		return fs->meta_chunk;
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

int btrfs_alloc_data_chunk_force(struct btrfs_fs_info *fs)
{
	u64 size = btrfs_chunk_size_for(fs, BTRFS_BLOCK_GROUP_DATA), phys, logical;
	if (btrfs_find_free_dev_extent(fs, size, &phys)) {
		/* the largest hole, in stripes: a binary search over what fits */
		u64 lo = 0, hi = size / BTRFS_STRIPE_LEN;
		while (lo < hi) {
			u64 mid = lo + (hi - lo + 1) / 2;
			if (btrfs_find_free_dev_extent(fs, mid * BTRFS_STRIPE_LEN, &phys))
				hi = mid - 1;
			else
				lo = mid;
		}
		if (!lo)
			return 0;
		size = lo * BTRFS_STRIPE_LEN;
	}
	int ret = btrfs_alloc_chunk(fs, BTRFS_BLOCK_GROUP_DATA, size, &logical);
	return ret ? ret : 1;
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
		/* a new chunk of the profile the others of its type have (DUP or single) */
		u64 logical, flags = type;
		for (size_t i = 0; i < fs->nbgs; i++)
			if ((fs->bgs[i].flags & BTRFS_BLOCK_GROUP_TYPE_MASK) == type)
				flags = fs->bgs[i].flags;
		if (btrfs_alloc_chunk(fs, flags, btrfs_chunk_size_for(fs, type), &logical))
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
				       .owner = owner, .generation = fs->generation, .new_extent = 1,
				       .qgroup = !fs->qgroup_skip && btrfs_root_shareable(&(struct btrfs_root){.objectid = owner})};
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
	int ret0;
	fs_trace(fs, (struct trace_event){.kind = TRACE_BLOCK_FREE, .tree = root->objectid, .bytenr = bytenr,
					  .level = btrfs_level(eb)});
	struct delayed_ref_head *h = u64map_get(&fs->delayed_refs, bytenr);
	if (h && h->new_extent) {
		/* never written: its space is free again at once, and it may be
		 * allocated again in this transaction, so it leaves the cache now
		 * (a qgroup record made for it stays: the kernel counts it) */
		if (h->qgroup && (ret0 = btrfs_qgroup_note(fs, bytenr)))
			return ret0;
		btrfs_drop_delayed_ref_head(fs, h);
		btrfs_evict_eb(fs, bytenr);
		return btrfs_free_reserved(fs, bytenr, fs->nodesize);
	}
	h = btrfs_delayed_ref_head(fs, bytenr);
	if (!h)
		return fs->err.code;
	/* keeps the backref changes already queued for it (a parent's copy
	 * this transaction): they must come to nothing with this last one */
	h->num_bytes = fs->nodesize;
	h->ref_mod = -1;
	h->level = btrfs_level(eb);
	h->owner = root->objectid;
	if (!fs->qgroup_skip && btrfs_root_shareable(root))
		h->qgroup = 1;
	int ret = pin(fs, bytenr, fs->nodesize);
	return ret ? ret : queue_evict(fs, bytenr);
}

int btrfs_drop_tree_block_ref(struct btrfs_fs_info *fs, struct btrfs_root *root, struct extent_buffer *eb)
{
	root->bytes_used -= fs->nodesize;
	return btrfs_mod_tree_ref(fs, eb->start, btrfs_level(eb), root->objectid, 0, -1);
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

/* ---- backrefs: an extent item's references, read, changed and written ---- */

/* One reference of an extent: TREE_BLOCK_REF (root), SHARED_BLOCK_REF
 * (parent), EXTENT_DATA_REF (root, objectid, offset; count) or
 * SHARED_DATA_REF (parent; count). */
struct backref {
	u8 type;
	u64 root, objectid, offset, parent;
	u32 count;
	u64 order; /* within a type: the kernel keeps them in descending order of this */
};

struct backrefs {
	struct backref *r;
	int n, cap;
};

/* At most this many references to one extent: a bound on every walk over a
 * hostile extent tree (the kernel's are bounded by the leaf; keyed ones are
 * not, so ours is). */
#define MAX_BACKREFS 65536

static int backrefs_add(struct btrfs_fs_info *fs, struct backrefs *b, struct backref r, u64 bytenr)
{
	if (b->n == MAX_BACKREFS)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "extent %llu has more than %d backrefs", (unsigned long long)bytenr,
				 MAX_BACKREFS);
	if (b->n == b->cap) {
		int cap = b->cap ? b->cap * 2 : 8;
		struct backref *n = realloc(b->r, (size_t)cap * sizeof(*n));
		if (!n)
			return blab_fail(&fs->err, BLAB_ENOMEM, "backrefs");
		b->r = n;
		b->cap = cap;
	}
	b->r[b->n++] = r;
	return 0;
}

static int same_ref(const struct backref *a, const struct backref *b)
{
	return a->type == b->type && a->root == b->root && a->objectid == b->objectid && a->offset == b->offset &&
	       a->parent == b->parent;
}

/* The backref a delayed change is about, for a tree block or a data extent. */
static struct backref ref_of(const struct data_ref *d, int is_data)
{
	if (is_data)
		return d->parent ? (struct backref){.type = BTRFS_SHARED_DATA_REF_KEY, .parent = d->parent}
				 : (struct backref){.type = BTRFS_EXTENT_DATA_REF_KEY, .root = d->root, .objectid = d->objectid, .offset = d->offset};
	return d->parent ? (struct backref){.type = BTRFS_SHARED_BLOCK_REF_KEY, .parent = d->parent}
			 : (struct backref){.type = BTRFS_TREE_BLOCK_REF_KEY, .root = d->root};
}

/* Inline references of an extent item (p, sz; refs start at off), checked. */
static int parse_inline(struct btrfs_fs_info *fs, u64 bytenr, const u8 *p, u32 sz, u32 off, struct backrefs *b)
{
	while (off < sz) {
		u8 type = p[off];
		const u8 *d = p + off + 1;
		u32 need = type == BTRFS_EXTENT_DATA_REF_KEY ? BTRFS_EXTENT_DATA_REF_SIZE
			   : type == BTRFS_SHARED_DATA_REF_KEY ? 8 + BTRFS_SHARED_DATA_REF_SIZE
			   : type == BTRFS_TREE_BLOCK_REF_KEY || type == BTRFS_SHARED_BLOCK_REF_KEY ? 8 : 0;
		if (!need || off + 1 + need > sz)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "extent %llu: inline backref %s at byte %u of its item",
					 (unsigned long long)bytenr, need ? "cut short" : "of an unknown type", off);
		struct backref r = {.type = type, .count = 1};
		if (type == BTRFS_EXTENT_DATA_REF_KEY) {
			r.root = btrfs_extent_data_ref_root(d);
			r.objectid = btrfs_extent_data_ref_objectid(d);
			r.offset = btrfs_extent_data_ref_offset(d);
			r.count = btrfs_extent_data_ref_count(d);
		} else if (type == BTRFS_SHARED_DATA_REF_KEY) {
			r.parent = get_le64(d);
			r.count = btrfs_shared_data_ref_count(d + 8);
		} else if (type == BTRFS_TREE_BLOCK_REF_KEY) {
			r.root = get_le64(d);
		} else {
			r.parent = get_le64(d);
		}
		int ret = backrefs_add(fs, b, r, bytenr);
		if (ret)
			return ret;
		off += 1 + need;
	}
	return 0;
}

struct keyed_ctx {
	struct btrfs_fs_info *fs;
	struct backrefs *b;
	u64 bytenr;
	u8 type;
};

static int keyed_ref(void *ctx, const struct btrfs_key *k, const u8 *d, u32 sz)
{
	struct keyed_ctx *c = ctx;
	struct backref r = {.type = k->type, .count = 1};
	if (k->type == BTRFS_TREE_BLOCK_REF_KEY) {
		r.root = k->offset;
	} else if (k->type == BTRFS_SHARED_BLOCK_REF_KEY) {
		r.parent = k->offset;
	} else if (k->type == BTRFS_EXTENT_DATA_REF_KEY) {
		if (sz < BTRFS_EXTENT_DATA_REF_SIZE)
			return blab_fail(&c->fs->err, BLAB_ECORRUPT, "extent %llu: keyed data backref of %u bytes",
					 (unsigned long long)c->bytenr, sz);
		r.root = btrfs_extent_data_ref_root(d);
		r.objectid = btrfs_extent_data_ref_objectid(d);
		r.offset = btrfs_extent_data_ref_offset(d);
		r.count = btrfs_extent_data_ref_count(d);
	} else {
		if (sz < BTRFS_SHARED_DATA_REF_SIZE)
			return blab_fail(&c->fs->err, BLAB_ECORRUPT, "extent %llu: keyed shared data backref of %u bytes",
					 (unsigned long long)c->bytenr, sz);
		r.parent = k->offset;
		r.count = btrfs_shared_data_ref_count(d);
	}
	return backrefs_add(c->fs, c->b, r, c->bytenr);
}

/* Keyed backrefs of bytenr (items of their own after its extent item). */
static int parse_keyed(struct btrfs_fs_info *fs, u64 bytenr, int is_data, struct backrefs *b)
{
	static const u8 tree_types[] = {BTRFS_TREE_BLOCK_REF_KEY, BTRFS_SHARED_BLOCK_REF_KEY};
	static const u8 data_types[] = {BTRFS_EXTENT_DATA_REF_KEY, BTRFS_SHARED_DATA_REF_KEY};
	const u8 *types = is_data ? data_types : tree_types;
	struct keyed_ctx c = {fs, b, bytenr, 0};
	for (int i = 0; i < 2; i++) {
		int ret = btrfs_for_each_item(fs, fs->extent_root, bytenr, types[i], keyed_ref, &c);
		if (ret)
			return ret;
	}
	return 0;
}

static int cmp_backref(const void *a, const void *b)
{
	const struct backref *x = a, *y = b;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->order > y->order ? -1 : x->order < y->order ? 1 : 0; /* descending, as the kernel keeps them */
}

/* An existing extent item's references (p, sz; inline ones from off):
 * inline, and keyed ones only when the inline ones do not add up to the
 * item's refs (*keyed then: its keyed items are to go with it). The common
 * extent, all inline, costs no search beyond its item. */
static int read_backrefs(struct btrfs_fs_info *fs, u64 bytenr, int is_data, const u8 *p, u32 sz, u32 off, struct backrefs *b,
			 int *keyed)
{
	u64 refs = btrfs_extent_refs(p), inl = 0;
	int ret = parse_inline(fs, bytenr, p, sz, off, b);
	if (ret)
		return ret;
	for (int i = 0; i < b->n; i++)
		inl += b->r[i].count;
	*keyed = inl != refs;
	return *keyed ? parse_keyed(fs, bytenr, is_data, b) : 0;
}

/* Deletes the extent item at key, and its keyed backrefs when it has some. */
static int delete_extent_item(struct btrfs_fs_info *fs, const struct btrfs_key *key, int is_data, int keyed)
{
	int ret = btrfs_delete_item(fs, fs->extent_root, key);
	if (ret || !keyed)
		return ret;
	return is_data ? btrfs_del_items_of(fs, fs->extent_root, key->objectid, BTRFS_EXTENT_DATA_REF_KEY, BTRFS_SHARED_DATA_REF_KEY)
		       : btrfs_del_items_of(fs, fs->extent_root, key->objectid, BTRFS_TREE_BLOCK_REF_KEY, BTRFS_SHARED_BLOCK_REF_KEY);
}

static u32 inline_size(const struct backref *r)
{
	return 1 + (r->type == BTRFS_EXTENT_DATA_REF_KEY ? BTRFS_EXTENT_DATA_REF_SIZE
		    : r->type == BTRFS_SHARED_DATA_REF_KEY ? 8 + BTRFS_SHARED_DATA_REF_SIZE
							      : 8);
}

/* Writes the extent item at key (its head: refs, generation, flags, and for
 * a non-skinny tree block its tree_block_info) with the references in b:
 * inline while the item stays within the kernel's bound (a sixteenth of a
 * leaf), the rest as keyed items. */
static int write_extent_item(struct btrfs_fs_info *fs, const struct btrfs_key *key, u64 gen, u64 flags, const u8 *info,
			     struct backrefs *b)
{
	u64 refs = 0;
	for (int i = 0; i < b->n; i++) {
		struct backref *r = &b->r[i];
		refs += r->count;
		r->order = r->type == BTRFS_EXTENT_DATA_REF_KEY ? data_ref_hash(r->root, r->objectid, r->offset)
			   : r->type == BTRFS_TREE_BLOCK_REF_KEY ? r->root
								 : r->parent;
	}
	qsort(b->r, (size_t)b->n, sizeof(*b->r), cmp_backref);
	u32 max = (fs->nodesize - BTRFS_HEADER_SIZE) / 16 - BTRFS_ITEM_SIZE;
	u32 head = BTRFS_EXTENT_ITEM_SIZE + (info ? BTRFS_TREE_BLOCK_INFO_SIZE : 0), size = head;
	int ninline = 0;
	while (ninline < b->n && size + inline_size(&b->r[ninline]) <= max)
		size += inline_size(&b->r[ninline++]);
	if (ninline == 0 && b->n)
		size += inline_size(&b->r[ninline++]); /* at least one, whatever the bound */
	u8 *item = calloc(1, size);
	if (!item)
		return blab_fail(&fs->err, BLAB_ENOMEM, "extent item");
	btrfs_set_extent_refs(item, refs);
	btrfs_set_extent_generation(item, gen);
	btrfs_set_extent_flags(item, flags);
	if (info)
		memcpy(item + BTRFS_EXTENT_ITEM_SIZE, info, BTRFS_TREE_BLOCK_INFO_SIZE);
	u32 off = head;
	for (int i = 0; i < ninline; i++) {
		const struct backref *r = &b->r[i];
		u8 *d = item + off + 1;
		item[off] = r->type;
		if (r->type == BTRFS_EXTENT_DATA_REF_KEY) {
			btrfs_set_extent_data_ref_root(d, r->root);
			btrfs_set_extent_data_ref_objectid(d, r->objectid);
			btrfs_set_extent_data_ref_offset(d, r->offset);
			btrfs_set_extent_data_ref_count(d, r->count);
		} else if (r->type == BTRFS_SHARED_DATA_REF_KEY) {
			put_le64(d, r->parent);
			btrfs_set_shared_data_ref_count(d + 8, r->count);
		} else {
			put_le64(d, r->type == BTRFS_TREE_BLOCK_REF_KEY ? r->root : r->parent);
		}
		off += inline_size(r);
	}
	int ret = btrfs_insert_item(fs, fs->extent_root, key, item, size);
	free(item);
	for (int i = ninline; i < b->n && !ret; i++) {
		const struct backref *r = &b->r[i];
		struct btrfs_key k = {key->objectid, r->type, r->type == BTRFS_EXTENT_DATA_REF_KEY ? r->order
							      : r->type == BTRFS_TREE_BLOCK_REF_KEY ? r->root
												    : r->parent};
		u8 d[BTRFS_EXTENT_DATA_REF_SIZE];
		u32 dl = 0;
		if (r->type == BTRFS_EXTENT_DATA_REF_KEY) {
			btrfs_set_extent_data_ref_root(d, r->root);
			btrfs_set_extent_data_ref_objectid(d, r->objectid);
			btrfs_set_extent_data_ref_offset(d, r->offset);
			btrfs_set_extent_data_ref_count(d, r->count);
			dl = BTRFS_EXTENT_DATA_REF_SIZE;
		} else if (r->type == BTRFS_SHARED_DATA_REF_KEY) {
			btrfs_set_shared_data_ref_count(d, r->count);
			dl = BTRFS_SHARED_DATA_REF_SIZE;
		}
		ret = btrfs_insert_item(fs, fs->extent_root, &k, d, dl);
		if (ret == BLAB_EEXIST)
			ret = blab_fail(&fs->err, BLAB_ENOTSUP, "extent %llu: two keyed backrefs share the key (%llu %u %llu)",
					(unsigned long long)key->objectid, (unsigned long long)k.objectid, k.type,
					(unsigned long long)k.offset);
	}
	return ret;
}

/* Applies head h's changes to the references in b (data or tree). */
static int apply_mods(struct btrfs_fs_info *fs, struct delayed_ref_head *h, struct backrefs *b)
{
	for (int i = 0; i < h->ndrefs; i++) {
		const struct data_ref *d = &h->drefs[i];
		if (!d->count_mod)
			continue;
		struct backref want = ref_of(d, h->is_data);
		int j = 0;
		while (j < b->n && !same_ref(&b->r[j], &want))
			j++;
		if (j == b->n) {
			int ret = backrefs_add(fs, b, want, h->bytenr);
			if (ret)
				return ret;
			b->r[j].count = 0;
		}
		long long c = (long long)b->r[j].count + d->count_mod;
		if (c < 0 || (!h->is_data && c > 1))
			return blab_fail(&fs->err, BLAB_ECORRUPT, "%s %llu: %s a %s backref (%s %llu) it %s",
					 h->is_data ? "data extent" : "tree block", (unsigned long long)h->bytenr,
					 c < 0 ? "dropping" : "adding", want.parent ? "shared" : "keyed", want.parent ? "parent" : "root",
					 (unsigned long long)(want.parent ? want.parent : want.root), c < 0 ? "does not have" : "already has");
		b->r[j].count = (u32)c;
	}
	int live = 0;
	for (int i = 0; i < b->n; i++)
		if (b->r[i].count)
			b->r[live++] = b->r[i];
	b->n = live;
	return 0;
}

static int run_tree_ref(struct btrfs_fs_info *fs, struct delayed_ref_head *h)
{
	struct btrfs_key key = {h->bytenr, BTRFS_METADATA_ITEM_KEY, (u64)h->level};
	struct backrefs b = {0};
	u64 gen = h->generation, flags = BTRFS_EXTENT_FLAG_TREE_BLOCK;
	u8 info[BTRFS_TREE_BLOCK_INFO_SIZE], *infop = NULL;
	int ret = 0, existed = 0, keyed = 0;
	if (h->new_extent && h->ref_mod > 0) {
		ret = backrefs_add(fs, &b, (struct backref){.type = BTRFS_TREE_BLOCK_REF_KEY, .root = h->owner, .count = 1}, h->bytenr);
	} else if (!h->new_extent) {
		u8 *p;
		u32 sz;
		ret = btrfs_lookup_item(fs, fs->extent_root, &key, &p, &sz, 0);
		if (ret == BLAB_ENOENT) {
			/* a non-skinny item (images without SKINNY_METADATA) */
			key = (struct btrfs_key){h->bytenr, BTRFS_EXTENT_ITEM_KEY, fs->nodesize};
			ret = btrfs_lookup_item(fs, fs->extent_root, &key, &p, &sz, 0);
			if (!ret && sz >= BTRFS_EXTENT_ITEM_SIZE + BTRFS_TREE_BLOCK_INFO_SIZE) {
				memcpy(info, p + BTRFS_EXTENT_ITEM_SIZE, sizeof(info));
				infop = info;
			}
		}
		if (ret == BLAB_ENOENT)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "extent tree has no item for tree block %llu",
					 (unsigned long long)h->bytenr);
		if (ret)
			return ret;
		if (sz < BTRFS_EXTENT_ITEM_SIZE + (infop ? BTRFS_TREE_BLOCK_INFO_SIZE : 0u))
			return blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu: extent item of %u bytes", (unsigned long long)h->bytenr, sz);
		existed = 1;
		gen = btrfs_extent_generation(p);
		flags = btrfs_extent_flags(p);
		ret = read_backrefs(fs, h->bytenr, 0, p, sz, BTRFS_EXTENT_ITEM_SIZE + (infop ? BTRFS_TREE_BLOCK_INFO_SIZE : 0u), &b, &keyed);
	}
	if (!ret)
		ret = apply_mods(fs, h, &b);
	if (!ret && existed)
		ret = delete_extent_item(fs, &key, 0, keyed);
	if (!ret && h->ref_mod < 0) {
		/* freed by its last tree (pinned when it was): no reference is left */
		if (b.n > 1)
			ret = blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu freed while %d trees or blocks still refer to it",
					(unsigned long long)h->bytenr, b.n - 1);
	} else if (!ret && b.n == 0 && existed) {
		/* its last reference dropped by a change of its parents */
		ret = pin(fs, h->bytenr, fs->nodesize);
		if (!ret)
			ret = queue_evict(fs, h->bytenr);
	} else if (!ret && b.n) {
		ret = write_extent_item(fs, &key, gen, flags | h->set_flags, infop, &b);
	}
	free(b.r);
	return ret;
}

static int run_data_ref(struct btrfs_fs_info *fs, struct delayed_ref_head *h)
{
	struct btrfs_key key = {h->bytenr, BTRFS_EXTENT_ITEM_KEY, h->num_bytes};
	struct backrefs b = {0};
	u64 gen = h->generation;
	int existed = 0, ret = 0, keyed = 0;
	if (!h->new_extent) {
		u8 *p;
		u32 sz;
		ret = btrfs_lookup_item(fs, fs->extent_root, &key, &p, &sz, 0);
		if (ret == 0) {
			existed = 1;
			if (sz < BTRFS_EXTENT_ITEM_SIZE)
				return blab_fail(&fs->err, BLAB_ECORRUPT, "data extent %llu: extent item of %u bytes",
						 (unsigned long long)h->bytenr, sz);
			gen = btrfs_extent_generation(p);
			ret = read_backrefs(fs, h->bytenr, 1, p, sz, BTRFS_EXTENT_ITEM_SIZE, &b, &keyed);
		} else if (ret == BLAB_ENOENT) {
			ret = 0;
		}
	}
	if (!ret)
		ret = apply_mods(fs, h, &b);
	if (!ret && existed)
		ret = delete_extent_item(fs, &key, 1, keyed);
	if (!ret && b.n == 0) {
		ret = btrfs_del_csums(fs, h->bytenr, h->num_bytes);
		if (!ret)
			ret = h->new_extent ? btrfs_free_reserved(fs, h->bytenr, h->num_bytes)
					    : existed ? pin(fs, h->bytenr, h->num_bytes) : 0;
	} else if (!ret) {
		ret = write_extent_item(fs, &key, gen, BTRFS_EXTENT_FLAG_DATA, NULL, &b);
	}
	free(b.r);
	return ret;
}

/* The references of tree block bytenr, the queued changes counted: *n may
 * be 0 or less (its last reference dropped in this transaction). */
static int extent_info(struct btrfs_fs_info *fs, u64 bytenr, int level, long long *np, u64 *flags)
{
	struct delayed_ref_head *h = u64map_get(&fs->delayed_refs, bytenr);
	long long n = 0;
	*flags = 0;
	if (h && h->new_extent) {
		n = h->ref_mod > 0;
	} else {
		struct btrfs_key key = {bytenr, BTRFS_METADATA_ITEM_KEY, (u64)level};
		u8 *p;
		u32 sz;
		int ret = btrfs_lookup_item(fs, fs->extent_root, &key, &p, &sz, 0);
		if (ret == BLAB_ENOENT) {
			key = (struct btrfs_key){bytenr, BTRFS_EXTENT_ITEM_KEY, fs->nodesize};
			ret = btrfs_lookup_item(fs, fs->extent_root, &key, &p, &sz, 0);
		}
		if (ret == BLAB_ENOENT)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu (level %d) has no extent item",
					 (unsigned long long)bytenr, level);
		if (ret)
			return ret;
		if (sz < BTRFS_EXTENT_ITEM_SIZE)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu: extent item of %u bytes", (unsigned long long)bytenr, sz);
		n = (long long)btrfs_extent_refs(p);
		*flags = btrfs_extent_flags(p);
	}
	if (h) {
		for (int i = 0; i < h->ndrefs; i++)
			n += h->drefs[i].count_mod;
		*flags |= h->set_flags;
		if (h->ref_mod < 0 && !h->new_extent)
			n--;
	}
	*np = n;
	return 0;
}

int btrfs_tree_block_refs(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 *refs, u64 *flags)
{
	long long n;
	int ret = extent_info(fs, bytenr, level, &n, flags);
	if (!ret)
		*refs = n > 0 ? (u64)n : 0;
	return ret;
}

int btrfs_lookup_extent_info(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 *refs, u64 *flags)
{
	long long n;
	int ret = extent_info(fs, bytenr, level, &n, flags);
	if (ret)
		return ret;
	if (n <= 0)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu is in a tree but has %lld references",
				 (unsigned long long)bytenr, n);
	*refs = (u64)n;
	return 0;
}

/* Each reference a block holds (its children's pointers, or its file
 * extents' disk extents) gains (mod +1) or loses (-1) a backref: keyed by
 * root, or, with full, by this block (btrfs_inc_ref / btrfs_dec_ref). */
int btrfs_mod_refs_of(struct btrfs_fs_info *fs, u64 root, struct extent_buffer *eb, int full, int mod)
{
	u32 nr = btrfs_nritems(eb);
	int level = btrfs_level(eb);
	u64 parent = full ? eb->start : 0;
	for (u32 i = 0; i < nr; i++) {
		int ret = 0;
		if (level) {
			u64 child = btrfs_node_blockptr(eb, (int)i);
			fs_trace(fs, (struct trace_event){.kind = TRACE_BACKREF, .bytenr = child, .level = level - 1, .tree = parent ? 0 : root,
							  .a = parent, .slot = mod});
			ret = btrfs_mod_tree_ref(fs, child, level - 1, root, parent, mod);
		} else {
			struct btrfs_key k;
			btrfs_item_key(eb, (int)i, &k);
			if (k.type != BTRFS_EXTENT_DATA_KEY)
				continue;
			const u8 *fi = btrfs_item_ptr(eb, (int)i);
			if (btrfs_item_size_nr(eb, (int)i) < BTRFS_FILE_EXTENT_SIZE || btrfs_file_extent_type(fi) == BTRFS_FILE_EXTENT_INLINE)
				continue;
			u64 bytenr = btrfs_file_extent_disk_bytenr(fi), len = btrfs_file_extent_disk_num_bytes(fi);
			if (!bytenr)
				continue;
			u64 off = k.offset - btrfs_file_extent_offset(fi);
			fs_trace(fs, (struct trace_event){.kind = TRACE_BACKREF, .bytenr = bytenr, .level = -1, .tree = full ? 0 : root, .a = parent,
							  .slot = mod, .b = full ? 0 : k.objectid, .c = full ? 0 : off});
			ret = full ? btrfs_mod_shared_data_ref(fs, bytenr, len, parent, mod)
				   : btrfs_mod_data_ref(fs, bytenr, len, root, k.objectid, off, mod);
		}
		if (ret)
			return ret;
	}
	return 0;
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
		for (k = 0; k < n && !ret; k++) {
			/* qgroups account what changed: the heads of this transaction */
			if (!(ret = btrfs_qgroup_changed(fs, heads[k].bytenr, heads[k].is_data ? heads[k].num_bytes : 0, heads[k].qgroup)))
				ret = heads[k].is_data ? run_data_ref(fs, &heads[k]) : run_tree_ref(fs, &heads[k]);
		}
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
