#include "block-group.h"
#include "ordered-data.h"
#include "ctree.h"
#include "volumes.h"
#include "array.h"
#include "extent-tree.h"
#include <stdlib.h>
#include <string.h>

static int bg_holds(const void *bytenr, const void *elem)
{
	u64 x = *(const u64 *)bytenr;
	const struct btrfs_block_group *bg = elem;
	return x < bg->start ? -1 : x - bg->start >= bg->length;
}

struct btrfs_block_group *btrfs_lookup_block_group(struct btrfs_fs_info *fs, u64 bytenr)
{
	return fs->nbgs ? bsearch(&bytenr, fs->bgs, fs->nbgs, sizeof(*fs->bgs), bg_holds) : NULL;
}

static int ranges_reserve(struct btrfs_block_group *bg, size_t need)
{
	if (bg->nfree + need <= bg->capfree)
		return 0;
	size_t cap = bg->capfree ? bg->capfree * 2 : 8;
	while (cap < bg->nfree + need)
		cap *= 2;
	struct free_range *n = realloc(bg->free, cap * sizeof(*n));
	if (!n)
		return BLAB_ENOMEM;
	bg->free = n;
	bg->capfree = cap;
	return 0;
}

int btrfs_add_block_group(struct btrfs_fs_info *fs, u64 start, u64 length, u64 flags, u64 used)
{
	size_t i = 0;
	if (array_room(&fs->bgs, fs->nbgs, &fs->capbgs, sizeof(*fs->bgs), 16))
		return blab_fail(&fs->err, BLAB_ENOMEM, "block groups");
	while (i < fs->nbgs && fs->bgs[i].start < start)
		i++;
	memmove(&fs->bgs[i + 1], &fs->bgs[i], (fs->nbgs - i) * sizeof(fs->bgs[0]));
	struct btrfs_block_group *bg = &fs->bgs[i];
	memset(bg, 0, sizeof(*bg));
	bg->start = start;
	bg->length = length;
	bg->flags = flags;
	bg->used = used;
	bg->pending = 1;
	bg->fst_dirty = 1; /* a new group's free space goes into the tree */
	fs->nbgs++;
	if (ranges_reserve(bg, 1))
		return blab_fail(&fs->err, BLAB_ENOMEM, "block group free space");
	bg->free[0] = (struct free_range){start, length};
	bg->nfree = 1;
	return 0;
}

/* Removes [start, start+len) from the free ranges of bg; it must lie inside one. */
static int take_range(struct btrfs_block_group *bg, u64 start, u64 len)
{
	for (size_t i = 0; i < bg->nfree; i++) {
		struct free_range *r = &bg->free[i];
		if (start < r->start || start + len > r->start + r->len)
			continue;
		u64 tail_start = start + len, tail_len = r->start + r->len - tail_start;
		if (start == r->start && !tail_len) {
			memmove(r, r + 1, (bg->nfree - i - 1) * sizeof(*r));
			bg->nfree--;
		} else if (start == r->start) {
			r->start = tail_start;
			r->len = tail_len;
		} else if (!tail_len) {
			r->len = start - r->start;
		} else {
			if (ranges_reserve(bg, 1))
				return BLAB_ENOMEM;
			r = &bg->free[i];
			r->len = start - r->start;
			memmove(r + 2, r + 1, (bg->nfree - i - 1) * sizeof(*r));
			r[1] = (struct free_range){tail_start, tail_len};
			bg->nfree++;
		}
		return 0;
	}
	return BLAB_ENOENT;
}

static int give_range(struct btrfs_block_group *bg, u64 start, u64 len)
{
	size_t i = 0;
	while (i < bg->nfree && bg->free[i].start < start)
		i++;
	if ((i < bg->nfree && start + len > bg->free[i].start) ||
	    (i > 0 && bg->free[i - 1].start + bg->free[i - 1].len > start))
		return BLAB_EEXIST;
	int merge_prev = i > 0 && bg->free[i - 1].start + bg->free[i - 1].len == start;
	int merge_next = i < bg->nfree && start + len == bg->free[i].start;
	if (merge_prev && merge_next) {
		bg->free[i - 1].len += len + bg->free[i].len;
		memmove(&bg->free[i], &bg->free[i + 1], (bg->nfree - i - 1) * sizeof(bg->free[0]));
		bg->nfree--;
	} else if (merge_prev) {
		bg->free[i - 1].len += len;
	} else if (merge_next) {
		bg->free[i].start = start;
		bg->free[i].len += len;
	} else {
		if (ranges_reserve(bg, 1))
			return BLAB_ENOMEM;
		memmove(&bg->free[i + 1], &bg->free[i], (bg->nfree - i) * sizeof(bg->free[0]));
		bg->free[i] = (struct free_range){start, len};
		bg->nfree++;
	}
	return 0;
}

int btrfs_add_reserved_bytes(struct btrfs_fs_info *fs, struct btrfs_block_group *bg, u64 start, u64 len)
{
	int ret = take_range(bg, start, len);
	if (ret)
		return blab_fail(&fs->err, ret, "free space of block group %llu", (unsigned long long)bg->start);
	bg->used += len;
	bg->dirty = bg->fst_dirty = 1;
	return 0;
}

static struct btrfs_block_group *bg_of(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	struct btrfs_block_group *bg = btrfs_lookup_block_group(fs, start);
	if (!bg || start + len > bg->start + bg->length)
		return NULL;
	return bg;
}

int btrfs_free_reserved(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	struct btrfs_block_group *bg = bg_of(fs, start, len);
	if (!bg || give_range(bg, start, len))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "freeing extent %llu len %llu that is not allocated",
				 (unsigned long long)start, (unsigned long long)len);
	bg->used -= len;
	bg->dirty = bg->fst_dirty = 1;
	return 0;
}

int btrfs_pin_range(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	struct btrfs_block_group *bg = bg_of(fs, start, len);
	if (!bg || bg->used < len)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "freeing extent %llu len %llu outside the used space of a block group",
				 (unsigned long long)start, (unsigned long long)len);
	bg->used -= len;
	bg->pinned += len;
	bg->dirty = bg->fst_dirty = 1;
	return 0;
}

void btrfs_unpin_range(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	struct btrfs_block_group *bg = bg_of(fs, start, len);
	if (bg) {
		bg->pinned -= len;
		give_range(bg, start, len);
	}
}

int btrfs_pin_free_range(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	struct btrfs_block_group *bg = bg_of(fs, start, len);
	if (!bg)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "extent %llu len %llu is in no block group", (unsigned long long)start,
				 (unsigned long long)len);
	if (take_range(bg, start, len))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "extent %llu len %llu overlaps an allocated extent",
				 (unsigned long long)start, (unsigned long long)len);
	bg->pinned += len;
	return 0;
}

void btrfs_claim_pinned_range(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	struct btrfs_block_group *bg = bg_of(fs, start, len);
	if (!bg)
		return;
	bg->pinned -= len;
	bg->used += len;
	bg->dirty = bg->fst_dirty = 1;
}

int btrfs_exclude_range(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	struct btrfs_block_group *bg = bg_of(fs, start, len);
	if (!bg)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "extent %llu len %llu is outside every block group",
				 (unsigned long long)start, (unsigned long long)len);
	if (take_range(bg, start, len))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "extent %llu len %llu overlaps another extent",
				 (unsigned long long)start, (unsigned long long)len);
	return 0;
}

void btrfs_exclude_range_partial(struct btrfs_fs_info *fs, u64 start, u64 len)
{
	struct btrfs_block_group *bg = bg_of(fs, start, len);
	if (!bg)
		return;
	if (bg->nsb < (int)(sizeof(bg->sb) / sizeof(bg->sb[0])))
		bg->sb[bg->nsb++] = (struct free_range){start, len};
	for (size_t i = 0; i < bg->nfree; i++) {
		u64 fs_ = bg->free[i].start, fe = fs_ + bg->free[i].len;
		u64 s = start > fs_ ? start : fs_, e = start + len < fe ? start + len : fe;
		if (s < e) {
			take_range(bg, s, e - s);
			i = (size_t)-1; /* the list changed: rescan */
		}
	}
}

static int cmp_range(const void *a, const void *b)
{
	const struct free_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int btrfs_bg_free_after_commit(struct btrfs_fs_info *fs, struct btrfs_block_group *bg, struct free_range **out, size_t *n)
{
	size_t cap = bg->nfree + 1, k = 0, npinned;
	const struct free_range *pinned = btrfs_pinned_ranges(fs, &npinned);
	for (size_t i = 0; i < npinned; i++)
		if (pinned[i].start >= bg->start && pinned[i].start < bg->start + bg->length)
			cap++;
	/* extents of ordered extents still in flight: reserved, not yet in the extent tree */
	size_t nres = btrfs_ordered_reserved_ranges(fs, bg->start, bg->length, NULL, 0);
	cap += nres;
	struct free_range *r = malloc(cap * sizeof(*r));
	if (!r)
		return blab_fail(&fs->err, BLAB_ENOMEM, "free space");
	for (size_t i = 0; i < bg->nfree; i++)
		r[k++] = bg->free[i];
	k += btrfs_ordered_reserved_ranges(fs, bg->start, bg->length, r + k, nres);
	for (size_t i = 0; i < npinned; i++)
		if (pinned[i].start >= bg->start && pinned[i].start < bg->start + bg->length)
			r[k++] = pinned[i];
	qsort(r, k, sizeof(*r), cmp_range);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && r[m - 1].start + r[m - 1].len == r[i].start)
			r[m - 1].len += r[i].len;
		else
			r[m++] = r[i];
	}
	*out = r;
	*n = m;
	return 0;
}

/* ---- block group items ---- */

u64 btrfs_block_group_used_on_disk(const struct btrfs_fs_info *fs, const struct btrfs_block_group *bg)
{
	return bg->used - btrfs_ordered_reserved_in(fs, bg->start, bg->length);
}

int btrfs_write_block_group_items(struct btrfs_fs_info *fs)
{
	for (size_t i = 0; i < fs->nbgs; i++) {
		struct btrfs_block_group *bg = &fs->bgs[i];
		if (!bg->pending && !bg->dirty)
			continue;
		struct btrfs_key key = {bg->start, BTRFS_BLOCK_GROUP_ITEM_KEY, bg->length};
		u8 item[BTRFS_BLOCK_GROUP_ITEM_SIZE];
		btrfs_set_block_group_used(item, btrfs_block_group_used_on_disk(fs, bg));
		btrfs_set_block_group_chunk_objectid(item, BTRFS_FIRST_CHUNK_TREE_OBJECTID);
		btrfs_set_block_group_flags(item, bg->flags);
		/* clear first: changing the tree may allocate and dirty this group again */
		int pending = bg->pending;
		bg->pending = 0;
		bg->dirty = 0;
		int ret;
		if (pending) {
			ret = btrfs_insert_item(fs, fs->extent_root, &key, item, sizeof(item));
		} else {
			u8 *p;
			u32 sz;
			ret = btrfs_lookup_item(fs, fs->extent_root, &key, &p, &sz, 1);
			if (ret == BLAB_ENOENT)
				return blab_fail(&fs->err, BLAB_ECORRUPT, "block group item %llu is missing",
						 (unsigned long long)bg->start);
			if (!ret)
				memcpy(p, item, sizeof(item));
		}
		if (ret)
			return ret;
		bg = &fs->bgs[i]; /* a new chunk may have moved the array */
	}
	return 0;
}

/* ---- loading an existing image's allocation state ---- */

int btrfs_load_block_groups(struct btrfs_fs_info *fs)
{
	if (fs->bg_loaded)
		return 0;
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {0, 0, 0};
	int ret;
	/* block group items first: extents are matched against them */
	for (ret = btrfs_cursor_first(fs, fs->extent_root, &from, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		const struct btrfs_key *k = &cur.key;
		if (k->type != BTRFS_BLOCK_GROUP_ITEM_KEY)
			continue;
		if (cur.size < BTRFS_BLOCK_GROUP_ITEM_SIZE)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "block group item %llu too small", (unsigned long long)k->objectid);
		struct btrfs_chunk_map *cm = btrfs_find_chunk(fs, k->objectid);
		if (!cm || cm->logical != k->objectid || cm->length != k->offset)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "block group %llu len %llu does not match a chunk",
					 (unsigned long long)k->objectid, (unsigned long long)k->offset);
		if (btrfs_lookup_block_group(fs, k->objectid))
			return blab_fail(&fs->err, BLAB_ECORRUPT, "block group %llu is listed twice", (unsigned long long)k->objectid);
		if ((ret = btrfs_add_block_group(fs, k->objectid, k->offset, btrfs_block_group_flags(cur.data),
						 btrfs_block_group_used(cur.data))))
			return ret;
		/* find it again: the array is sorted by start */
		struct btrfs_block_group *bg = btrfs_lookup_block_group(fs, k->objectid);
		bg->pending = 0;
		bg->fst_dirty = 0;
	}
	if (ret < 0)
		return ret;
	for (ret = btrfs_cursor_first(fs, fs->extent_root, &from, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		u64 len = cur.key.type == BTRFS_METADATA_ITEM_KEY ? fs->nodesize : cur.key.type == BTRFS_EXTENT_ITEM_KEY ? cur.key.offset : 0;
		if (len && (ret = btrfs_exclude_range(fs, cur.key.objectid, len)))
			return ret;
	}
	if (ret < 0)
		return ret;
	/* superblock copies inside block groups are never free */
	for (int m = 0; m < BTRFS_SUPER_MIRROR_MAX; m++) {
		u64 sb = btrfs_sb_offset(m);
		for (size_t i = 0; i < fs->nchunks; i++) {
			struct btrfs_chunk_map *c = &fs->chunks[i];
			for (u16 s = 0; s < c->num_stripes; s++) {
				u64 p = c->stripes[s].physical;
				if (sb + BTRFS_SUPER_INFO_SIZE <= p || sb >= p + c->length)
					continue;
				u64 logical = c->logical + (sb > p ? sb - p : 0);
				u64 len = BTRFS_STRIPE_LEN;
				if (logical + len > c->logical + c->length)
					len = c->logical + c->length - logical;
				btrfs_exclude_range_partial(fs, logical, len);
			}
		}
	}
	fs->bg_loaded = 1;
	return 0;
}
