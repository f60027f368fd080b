#include "delalloc-int.h"
#include "space-info.h"
#include "array.h"
#include "crc32c.h"
#include "extent-tree.h"
#include "file.h"
#include "inode.h"
#include "transaction.h"
#include <stdlib.h>
#include <string.h>

#define MAX_DATA_EXTENT (128ULL << 20) /* the kernel's largest uncompressed extent */

static u64 round_down(u64 v, u64 a) { return v / a * a; }
static u64 round_up(u64 v, u64 a) { return (v + a - 1) / a * a; }

int btrfs_delalloc_init(struct btrfs_fs_info *fs)
{
	struct btrfs_data_state *d = calloc(1, sizeof(*d));
	if (!d)
		return BLAB_ENOMEM;
	u64map_init(&d->inodes, sizeof(struct btrfs_inode_cache *));
	d->next_id = 1;
	d->fsync_wait = BTRFS_FSYNC_WAIT_WRITEBACK;
	fs->data = d;
	return 0;
}

static void cache_free(struct btrfs_inode_cache *ic)
{
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&ic->pages, &i, &k, &v))
		free(((struct btrfs_page *)v)->data);
	u64map_free(&ic->pages);
	free(ic->dirty);
	free(ic->mod);
	free(ic);
}

static void oe_free(struct btrfs_ordered_extent *oe)
{
	if (oe) {
		free(oe->sums);
		free(oe);
	}
}

void btrfs_delalloc_free(struct btrfs_fs_info *fs)
{
	struct btrfs_data_state *d = fs->data;
	if (!d)
		return;
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&d->inodes, &i, &k, &v))
		cache_free(*(struct btrfs_inode_cache **)v);
	u64map_free(&d->inodes);
	for (size_t j = 0; j < d->noes; j++)
		oe_free(d->oes[j]);
	free(d->oes);
	free(d);
	fs->data = NULL;
}

static struct btrfs_inode_cache *cache_dup(const struct btrfs_inode_cache *src, u32 ss)
{
	struct btrfs_inode_cache *ic = calloc(1, sizeof(*ic));
	if (!ic)
		return NULL;
	*ic = *src;
	ic->dirty = NULL;
	ic->capdirty = ic->ndirty = 0;
	ic->mod = NULL;
	ic->nmod = ic->capmod = 0;
	u64map_init(&ic->pages, sizeof(struct btrfs_page));
	int ret = 0;
	if (src->ndirty && !(ic->dirty = array_dup(src->dirty, src->ndirty, src->capdirty, sizeof(*ic->dirty), &ret))) {
		cache_free(ic);
		return NULL;
	}
	ic->ndirty = src->ndirty;
	ic->capdirty = src->ndirty ? src->capdirty : 0;
	if (src->nmod && !(ic->mod = array_dup(src->mod, src->nmod, src->capmod, sizeof(*ic->mod), &ret))) {
		cache_free(ic);
		return NULL;
	}
	ic->nmod = src->nmod;
	ic->capmod = src->nmod ? src->capmod : 0;
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&src->pages, &i, &k, &v)) {
		const struct btrfs_page *sp = v;
		struct btrfs_page *p = u64map_put(&ic->pages, k);
		if (!p || !(p->data = malloc(ss))) {
			cache_free(ic);
			return NULL;
		}
		memcpy(p->data, sp->data, ss);
		p->state = sp->state;
	}
	return ic;
}

static struct btrfs_ordered_extent *oe_dup(const struct btrfs_ordered_extent *src, u32 ss)
{
	struct btrfs_ordered_extent *oe = malloc(sizeof(*oe));
	if (!oe)
		return NULL;
	*oe = *src;
	size_t nsums = (size_t)(src->num_bytes / ss);
	if (!(oe->sums = malloc(nsums * 4 + 4))) {
		free(oe);
		return NULL;
	}
	memcpy(oe->sums, src->sums, nsums * 4);
	return oe;
}

int btrfs_delalloc_clone(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src)
{
	struct btrfs_data_state *s = src->data, *d = dst->data;
	d->next_id = s->next_id;
	d->dirty_bytes = s->dirty_bytes;
	d->dirty_seq = s->dirty_seq;
	d->st = s->st;
	d->fsync_wait = s->fsync_wait;
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&s->inodes, &i, &k, &v)) {
		struct btrfs_inode_cache *ic = cache_dup(*(struct btrfs_inode_cache **)v, src->sectorsize), **slot;
		if (!ic)
			return BLAB_ENOMEM;
		if (!(slot = u64map_put(&d->inodes, k))) {
			cache_free(ic);
			return BLAB_ENOMEM;
		}
		*slot = ic;
	}
	for (size_t j = 0; j < s->noes; j++) {
		struct btrfs_ordered_extent *oe = oe_dup(s->oes[j], src->sectorsize);
		if (!oe || array_room(&d->oes, d->noes, &d->capoes, sizeof(*d->oes), 16)) {
			oe_free(oe);
			return BLAB_ENOMEM;
		}
		d->oes[d->noes++] = oe;
	}
	return 0;
}

u64 btrfs_ikey(const struct btrfs_fs_info *fs, const struct btrfs_root *root, u64 ino)
{
	if (ino >> BTRFS_IKEY_SHIFT)
		return 0;
	if (root == fs->fs_root)
		return ino;
	for (size_t i = 0; i < fs->nroots; i++)
		if (fs->roots[i] == root)
			return (u64)(i + 1) << BTRFS_IKEY_SHIFT | ino;
	return 0;
}

struct btrfs_root *btrfs_ikey_root(const struct btrfs_fs_info *fs, u64 key)
{
	u64 slot = key >> BTRFS_IKEY_SHIFT;
	return slot && slot <= fs->nroots ? fs->roots[slot - 1] : fs->fs_root;
}

struct btrfs_inode_cache *btrfs_inode_cache_get(const struct btrfs_fs_info *fs, u64 ino)
{
	struct btrfs_inode_cache **p = fs->data ? u64map_get(&fs->data->inodes, ino) : NULL;
	return p ? *p : NULL;
}

static struct btrfs_inode_cache *cache_make(struct btrfs_fs_info *fs, u64 key, u64 ino, u64 isize)
{
	struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, key), **slot;
	if (ic)
		return ic;
	if (!(ic = calloc(1, sizeof(*ic))))
		return NULL;
	ic->ino = ino;
	ic->key = key;
	ic->isize = isize;
	u64map_init(&ic->pages, sizeof(struct btrfs_page));
	if (!(slot = u64map_put(&fs->data->inodes, key))) {
		cache_free(ic);
		return NULL;
	}
	*slot = ic;
	return ic;
}

u64 btrfs_inode_isize(const struct btrfs_fs_info *fs, u64 ino, u64 item_size)
{
	const struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	return ic ? ic->isize : item_size;
}

void btrfs_read_cached(const struct btrfs_fs_info *fs, u64 ino, u64 off, u8 *buf, u64 len)
{
	const struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	if (!ic || !ic->pages.len || !len)
		return;
	u64 ss = fs->sectorsize;
	for (u64 pg = off / ss; pg * ss < off + len; pg++) {
		const struct btrfs_page *p = u64map_get(&ic->pages, pg);
		if (!p)
			continue;
		u64 s = pg * ss > off ? pg * ss : off, e = (pg + 1) * ss < off + len ? (pg + 1) * ss : off + len;
		memcpy(buf + (s - off), p->data + (s - pg * ss), (size_t)(e - s));
	}
}

u64 btrfs_dirty_bytes(const struct btrfs_fs_info *fs, u64 ino)
{
	if (!ino)
		return fs->data->dirty_bytes;
	const struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	return ic ? ic->dirty_bytes : 0;
}

u64 btrfs_delalloc_clean_bytes(const struct btrfs_fs_info *fs, u64 ino, u64 start, u64 end)
{
	const struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	u64 clean = end > start ? end - start : 0;
	for (size_t i = 0; ic && i < ic->ndirty && clean; i++) {
		u64 s = ic->dirty[i].start > start ? ic->dirty[i].start : start, e = ic->dirty[i].end < end ? ic->dirty[i].end : end;
		if (e > s)
			clean -= e - s;
	}
	return clean;
}

u64 btrfs_data_space_fit(const struct btrfs_fs_info *fs, u64 ino, u64 off, u64 len)
{
	u64 ss = fs->sectorsize, first = off / ss * ss, end = off + len, last = (end + ss - 1) / ss * ss;
	struct btrfs_space_info si;
	btrfs_space_info_get(fs, SPACE_DATA, &si);
	u64 used = btrfs_space_used_all(&si), room = si.total > used ? si.total - used : 0;
	if (btrfs_delalloc_clean_bytes(fs, ino, first, last) <= room)
		return len;
	u64 s = first;
	for (; s < last; s += ss) {
		u64 add = btrfs_delalloc_clean_bytes(fs, ino, s, s + ss);
		if (add > room)
			break;
		room -= add;
	}
	return s > off ? (s < end ? s : end) - off : 0;
}

u64 btrfs_inode_dirtied_at(const struct btrfs_fs_info *fs, u64 ino)
{
	const struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	return ic ? ic->dirtied_at : 0;
}

/* Adds [s, e) to ic's delalloc ranges (merging): the bytes newly dirty. */
static int range_add(struct btrfs_inode_cache *ic, u64 s, u64 e, u64 *added)
{
	size_t i = 0;
	while (i < ic->ndirty && ic->dirty[i].end < s)
		i++;
	size_t j = i;
	u64 ns = s, ne = e, covered = 0;
	while (j < ic->ndirty && ic->dirty[j].start <= e) {
		u64 os = ic->dirty[j].start, oe = ic->dirty[j].end;
		u64 is = os > s ? os : s, ie = oe < e ? oe : e;
		if (ie > is)
			covered += ie - is;
		if (os < ns)
			ns = os;
		if (oe > ne)
			ne = oe;
		j++;
	}
	*added = (e - s) - covered;
	if (j > i) { /* ranges i..j-1 merge into one */
		ic->dirty[i] = (struct btrfs_range){ns, ne};
		memmove(&ic->dirty[i + 1], &ic->dirty[j], (ic->ndirty - j) * sizeof(ic->dirty[0]));
		ic->ndirty -= j - i - 1;
		return 0;
	}
	if (array_room(&ic->dirty, ic->ndirty, &ic->capdirty, sizeof(ic->dirty[0]), 4))
		return BLAB_ENOMEM;
	memmove(&ic->dirty[i + 1], &ic->dirty[i], (ic->ndirty - i) * sizeof(ic->dirty[0]));
	ic->dirty[i] = (struct btrfs_range){s, e};
	ic->ndirty++;
	return 0;
}

/* Removes [s, e) from ic's delalloc ranges (one range holds it). */
static int range_del(struct btrfs_inode_cache *ic, size_t i, u64 s, u64 e)
{
	struct btrfs_range r = ic->dirty[i];
	if (s == r.start && e == r.end) {
		memmove(&ic->dirty[i], &ic->dirty[i + 1], (ic->ndirty - i - 1) * sizeof(r));
		ic->ndirty--;
	} else if (s == r.start) {
		ic->dirty[i].start = e;
	} else if (e == r.end) {
		ic->dirty[i].end = s;
	} else {
		if (array_room(&ic->dirty, ic->ndirty, &ic->capdirty, sizeof(r), 4))
			return BLAB_ENOMEM;
		memmove(&ic->dirty[i + 2], &ic->dirty[i + 1], (ic->ndirty - i - 1) * sizeof(r));
		ic->dirty[i].end = s;
		ic->dirty[i + 1] = (struct btrfs_range){e, r.end};
		ic->ndirty++;
	}
	return 0;
}

void btrfs_pages_set_state(struct btrfs_fs_info *fs, struct btrfs_inode_cache *ic, u64 start, u64 end, u32 from, u32 to)
{
	u64 ss = fs->sectorsize;
	if (!ic->pages.len)
		return;
	for (u64 pg = start / ss; pg * ss < end; pg++) {
		struct btrfs_page *p = u64map_get(&ic->pages, pg);
		if (!p || p->state != from)
			continue;
		if (to) {
			p->state = to;
		} else {
			free(p->data);
			u64map_del(&ic->pages, pg);
		}
	}
}

/* The page at index pg, made (with the file's bytes there) when absent. */
static struct btrfs_page *page_get(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_inode_cache *ic,
				   u64 tree_size, u64 pg, int whole)
{
	struct btrfs_page *p = u64map_get(&ic->pages, pg);
	if (p)
		return p;
	u64 ss = fs->sectorsize;
	u8 *data = malloc(ss);
	if (!data) {
		blab_fail(&fs->err, BLAB_ENOMEM, "page cache");
		return NULL;
	}
	if (whole)
		; /* the write covers it all */
	else if (pg * ss >= ic->isize)
		memset(data, 0, ss);
	else if (btrfs_read_tree_range(fs, root, ic->ino, tree_size, pg * ss, data, ss)) {
		free(data);
		return NULL;
	}
	if (pg * ss < ic->isize && ic->isize < (pg + 1) * ss) /* past EOF reads as zeros */
		memset(data + (ic->isize - pg * ss), 0, (size_t)((pg + 1) * ss - ic->isize));
	if (!(p = u64map_put(&ic->pages, pg))) {
		free(data);
		blab_fail(&fs->err, BLAB_ENOMEM, "page cache");
		return NULL;
	}
	p->data = data;
	p->state = BTRFS_PAGE_UPTODATE;
	return p;
}

u64 btrfs_delalloc_meta_rsv(const struct btrfs_fs_info *fs, u64 ino)
{
	const struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	return ic ? ic->meta_rsv : 0;
}

void btrfs_delalloc_space_sync(struct btrfs_fs_info *fs, u64 ino)
{
	struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	if (!ic)
		return;
	u64 on, ob = btrfs_ordered_bytes(fs, ino, &on);
	btrfs_space_inode_rsv_set(fs, &ic->meta_rsv, btrfs_space_inode_rsv_size(fs, ic->dirty_bytes, ob, on));
}

/* Marks [s, e) (whole pages) of ic dirty. */
static int mark_dirty(struct btrfs_fs_info *fs, struct btrfs_inode_cache *ic, u64 s, u64 e)
{
	u64 added;
	if (range_add(ic, s, e, &added))
		return blab_fail(&fs->err, BLAB_ENOMEM, "delalloc ranges");
	for (u64 pg = s / fs->sectorsize; pg * fs->sectorsize < e; pg++) {
		struct btrfs_page *p = u64map_get(&ic->pages, pg);
		if (p)
			p->state = BTRFS_PAGE_DIRTY;
	}
	if (!ic->dirty_bytes && added) {
		ic->dirtied_at = fs->clock_ns;
		ic->dirtied_seq = ++fs->data->dirty_seq;
	}
	ic->dirty_bytes += added;
	fs->data->dirty_bytes += added;
	/* btrfs_check_data_free_space and btrfs_delalloc_reserve_metadata */
	btrfs_space_reserve(fs, SPACE_DATA, added);
	btrfs_delalloc_space_sync(fs, ic->key);
	return 0;
}

/* Growing a file past the block that holds its end (a write past EOF, an
 * expanding truncate): the rest of that block is zeroed in the cache and the
 * block is dirty, to be written again (the kernel's btrfs_cont_expand and
 * btrfs_truncate_block), when it holds data. */
static int dirty_eof_block(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_inode_cache *ic, u64 tree_size)
{
	u64 ss = fs->sectorsize, pg = ic->isize / ss;
	if (!(ic->isize % ss))
		return 0;
	if (!u64map_get(&ic->pages, pg)) {
		struct file_extent fe;
		int ret = btrfs_find_file_extent(fs, root, ic->ino, pg * ss, (pg + 1) * ss, &fe);
		if (ret == BLAB_ENOENT || (!ret && (fe.type == BTRFS_FILE_EXTENT_INLINE || !fe.disk_bytenr)))
			return 0; /* a hole, or inline data (rewritten whole when it grows) */
		if (ret)
			return ret;
	}
	if (!page_get(fs, root, ic, tree_size, pg, 0))
		return fs->err.code ? fs->err.code : BLAB_ENOMEM;
	return mark_dirty(fs, ic, pg * ss, (pg + 1) * ss);
}

int btrfs_grow_eof(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 item_size, u64 new_size)
{
	u64 key = btrfs_ikey(fs, root, ino);
	if (!key)
		return 0;
	struct btrfs_inode_cache *ic = cache_make(fs, key, ino, item_size);
	if (!ic)
		return blab_fail(&fs->err, BLAB_ENOMEM, "page cache");
	int ret = dirty_eof_block(fs, root, ic, item_size);
	if (!ret)
		ic->isize = new_size;
	return ret;
}

int btrfs_buffered_write(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, const u8 *data, u64 len)
{
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, root, ino, &in);
	if (ret)
		return ret;
	if ((in.mode & S_IFMT_) == S_IFDIR_)
		return blab_fail(&fs->err, BLAB_EISDIR, "inode %llu is a directory", (unsigned long long)ino);
	if ((in.mode & S_IFMT_) != S_IFREG_)
		return blab_fail(&fs->err, BLAB_EINVAL, "inode %llu is not a regular file", (unsigned long long)ino);
	if (off + len < off || off + len > (1ULL << 60))
		return blab_fail(&fs->err, BLAB_EINVAL, "write at %llu of %llu bytes is past the largest file size",
				 (unsigned long long)off, (unsigned long long)len);
	if (!len)
		return 0;
	u64 key = btrfs_ikey(fs, root, ino);
	if (!key)
		return blab_fail(&fs->err, BLAB_EOVERFLOW, "inode %llu: numbers of 2^48 and above have no page cache", (unsigned long long)ino);
	struct btrfs_inode_cache *ic = cache_make(fs, key, ino, in.size);
	if (!ic)
		return blab_fail(&fs->err, BLAB_ENOMEM, "page cache");
	u64 ss = fs->sectorsize, end = off + len;
	u64 new_size = end > ic->isize ? end : ic->isize;
	int inl = 0;
	if (new_size > btrfs_max_inline(fs) && (ret = btrfs_file_has_inline(fs, root, ino, &inl)))
		return ret;
	if (inl && !u64map_get(&ic->pages, 0)) {
		/* the inline data becomes the first page of a regular extent */
		if (!page_get(fs, root, ic, in.size, 0, 0) || (ret = mark_dirty(fs, ic, 0, ss)))
			return fs->err.code ? fs->err.code : BLAB_ENOMEM;
	}
	if (!inl && off > ic->isize && off / ss != ic->isize / ss && (ret = dirty_eof_block(fs, root, ic, in.size)))
		return ret;
	for (u64 pg = off / ss; pg * ss < end; pg++) {
		u64 ps = pg * ss, s = ps > off ? ps : off, e = ps + ss < end ? ps + ss : end;
		struct btrfs_page *p = page_get(fs, root, ic, in.size, pg, s == ps && e == ps + ss);
		if (!p)
			return fs->err.code ? fs->err.code : BLAB_ENOMEM;
		memcpy(p->data + (s - ps), data + (s - off), (size_t)(e - s));
	}
	if ((ret = mark_dirty(fs, ic, round_down(off, ss), round_up(end, ss))))
		return ret;
	ic->isize = new_size;
	fs_trace(fs, (struct trace_event){.kind = TRACE_PAGE_DIRTY, .tree = root->objectid, .a = ino, .b = off, .c = len});
	btrfs_inode_touch(fs, &in, 1);
	return btrfs_update_inode(fs, root, &in);
}

static int add_oe(struct btrfs_fs_info *fs, struct btrfs_ordered_extent *oe)
{
	struct btrfs_data_state *d = fs->data;
	if (array_room(&d->oes, d->noes, &d->capoes, sizeof(*d->oes), 16))
		return BLAB_ENOMEM;
	d->oes[d->noes++] = oe;
	return 0;
}

static void note_modified(struct btrfs_inode_cache *ic, u64 s, u64 e)
{
	if (ic->nmod && ic->mod[ic->nmod - 1].end == s) {
		ic->mod[ic->nmod - 1].end = e;
		return;
	}
	if (ic->nmod > 64) /* too many to list: the whole file */
		ic->mod[0] = (struct btrfs_range){0, (u64)-1}, ic->nmod = 1;
	else if (!array_room(&ic->mod, ic->nmod, &ic->capmod, sizeof(*ic->mod), 4))
		ic->mod[ic->nmod++] = (struct btrfs_range){s, e};
	else
		ic->nmod = 65; /* no memory: too many */
}

size_t btrfs_inode_modified(const struct btrfs_fs_info *fs, u64 ino, u64 *starts, u64 *ends, size_t max)
{
	const struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	if (!ic)
		return 0;
	for (size_t i = 0; i < ic->nmod && i < max && ic->mod; i++) {
		starts[i] = ic->mod[i].start;
		ends[i] = ic->mod[i].end;
	}
	return ic->nmod;
}

void btrfs_inode_modified_clear(struct btrfs_fs_info *fs, u64 ino)
{
	struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	if (ic)
		ic->nmod = 0;
}

/* One extent of [s, e) (dirty pages of ic): reserved, its bio built. */
static int make_ordered(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_inode_cache *ic, u64 s, u64 e,
			struct btrfs_ordered_extent **out)
{
	u64 len = e - s, bytenr, ss = fs->sectorsize;
	int ret;
	for (;;) {
		ret = btrfs_reserve_data(fs, len, &bytenr, len <= (1ULL << 20));
		if (ret != BLAB_ENOSPC || len <= ss)
			break;
		len = round_up(len / 2, ss);
	}
	if (ret)
		return blab_fail(&fs->err, BLAB_ENOSPC, "inode %llu: no space for %llu bytes of file data",
				 (unsigned long long)ic->ino, (unsigned long long)(e - s));
	struct btrfs_ordered_extent *oe = calloc(1, sizeof(*oe));
	if (!oe || !(oe->sums = malloc((size_t)(len / ss) * 4 + 4))) {
		oe_free(oe);
		return blab_fail(&fs->err, BLAB_ENOMEM, "ordered extent");
	}
	struct btrfs_data_state *d = fs->data;
	oe->id = d->next_id++;
	oe->root = root->objectid;
	oe->ino = ic->ino;
	oe->ikey = ic->key;
	oe->file_offset = s;
	oe->num_bytes = len;
	oe->disk_bytenr = bytenr;
	oe->trans = fs->generation;
	/* the bio takes the pages themselves: they stay put (a write waits for their
	 * writeback: stable pages) until io_done copies them to the device */
	u32 zero_crc = 0;
	int have_zero = 0;
	for (u64 pg = s / ss; pg * ss < s + len; pg++) {
		struct btrfs_page *p = u64map_get(&ic->pages, pg);
		if (p) {
			p->state = BTRFS_PAGE_WRITEBACK;
			oe->sums[pg - s / ss] = crc32c(p->data, ss);
			continue;
		}
		if (!have_zero) {
			u8 *z = calloc(1, ss);
			if (!z) {
				oe_free(oe);
				return blab_fail(&fs->err, BLAB_ENOMEM, "ordered extent");
			}
			zero_crc = crc32c(z, ss);
			free(z);
			have_zero = 1;
		}
		oe->sums[pg - s / ss] = zero_crc;
	}
	if (add_oe(fs, oe)) {
		oe_free(oe);
		return blab_fail(&fs->err, BLAB_ENOMEM, "ordered extent");
	}
	note_modified(ic, s, s + len);
	d->st.added++;
	fs_trace(fs, (struct trace_event){.kind = TRACE_ORDERED_ADD, .tree = root->objectid, .bytenr = bytenr, .a = ic->ino,
					  .b = s, .c = len, .slot = (int)oe->id});
	*out = oe;
	return 0;
}

/* Writes the whole file, within max_inline, as an inline extent. */
static int write_inline(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_inode_cache *ic)
{
	u8 buf[4096];
	u64 ss = fs->sectorsize, size = ic->isize;
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, root, ic->ino, &in);
	if (ret)
		return ret;
	if ((ret = btrfs_read_tree_range(fs, root, ic->ino, in.size, 0, buf, size)))
		return ret;
	btrfs_read_cached(fs, ic->key, 0, buf, size);
	if ((ret = btrfs_write_inline(fs, root, ic->ino, buf, size)))
		return ret;
	note_modified(ic, 0, round_up(size, ss) ? round_up(size, ss) : ss);
	btrfs_pages_set_state(fs, ic, 0, round_up(size, ss) ? round_up(size, ss) : ss, BTRFS_PAGE_DIRTY, 0);
	fs_trace(fs, (struct trace_event){.kind = TRACE_WRITE_INLINE, .tree = root->objectid, .a = ic->ino, .c = size});
	return 0;
}

int btrfs_start_delalloc(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 start, u64 end,
			 struct btrfs_ordered_extent ***oes, size_t *n)
{
	struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, btrfs_ikey(fs, root, ino));
	if (!ic || !ic->ndirty)
		return 0;
	u64 ss = fs->sectorsize;
	start = round_down(start, ss);
	end = end > (u64)-1 - ss ? (u64)-1 : round_up(end, ss);
	size_t cap = n ? *n : 0;
	int ret = btrfs_start_transaction(fs);
	if (ret)
		return ret;
	for (size_t i = 0; i < ic->ndirty;) {
		struct btrfs_range r = ic->dirty[i];
		u64 s = r.start > start ? r.start : start, e = r.end < end ? r.end : end;
		if (s >= e) {
			if (r.start >= end)
				break;
			i++;
			continue;
		}
		if (s == 0 && ic->isize <= btrfs_max_inline(fs) && e >= round_up(ic->isize, ss) && ic->ndirty == 1 &&
		    !btrfs_ordered_count(fs, ic->key)) {
			/* the whole file is one small dirty range */
			if ((ret = write_inline(fs, root, ic)))
				return ret;
			u64 bytes = e - s;
			if ((ret = range_del(ic, i, s, e)))
				return blab_fail(&fs->err, ret, "delalloc ranges");
			ic->dirty_bytes -= bytes;
			fs->data->dirty_bytes -= bytes;
			btrfs_space_release(fs, SPACE_DATA, bytes); /* inline: in the fs tree, no data extent */
			continue;
		}
		if (e - s > MAX_DATA_EXTENT)
			e = s + MAX_DATA_EXTENT;
		struct btrfs_ordered_extent *oe = NULL;
		if ((ret = make_ordered(fs, root, ic, s, e, &oe)))
			return ret;
		e = s + oe->num_bytes;
		if ((ret = range_del(ic, i, s, e)))
			return blab_fail(&fs->err, ret, "delalloc ranges");
		ic->dirty_bytes -= e - s;
		fs->data->dirty_bytes -= e - s;
		btrfs_space_data_alloc(fs, e - s);
		if (oes) {
			if (array_room(oes, *n, &cap, sizeof(**oes), 8))
				return blab_fail(&fs->err, BLAB_ENOMEM, "ordered extents");
			(*oes)[(*n)++] = oe;
		}
		/* the same range index: what is left of it, or the next one */
		if (i < ic->ndirty && ic->dirty[i].start < s)
			i++;
	}
	/* an inline extent needs no reservation any more; ordered extents keep theirs */
	btrfs_delalloc_space_sync(fs, ic->key);
	return 0;
}

int btrfs_writeback_and_wait(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 start, u64 end)
{
	int ret = btrfs_start_delalloc(fs, root, ino, start, end, NULL, NULL);
	return ret ? ret : btrfs_wait_ordered(fs, btrfs_ikey(fs, root, ino));
}

struct dirty_entry {
	u64 seq, ino;
};

static int cmp_dirty(const void *a, const void *b)
{
	const struct dirty_entry *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t btrfs_dirty_inodes(const struct btrfs_fs_info *fs, u64 *out, size_t max)
{
	const struct btrfs_data_state *d = fs->data;
	size_t n = 0, i = 0;
	u64 k;
	void *v;
	struct dirty_entry *e = malloc((d->inodes.len + 1) * sizeof(*e));
	if (!e)
		return 0;
	while (u64map_next(&d->inodes, &i, &k, &v)) {
		const struct btrfs_inode_cache *ic = *(struct btrfs_inode_cache **)v;
		if (ic->ndirty)
			e[n++] = (struct dirty_entry){ic->dirtied_seq, ic->key};
	}
	qsort(e, n, sizeof(*e), cmp_dirty);
	if (n > max)
		n = max;
	for (size_t j = 0; j < n; j++)
		out[j] = e[j].ino;
	free(e);
	return n;
}

int btrfs_dirty_inodes_all(const struct btrfs_fs_info *fs, u64 **out, size_t *n)
{
	*out = malloc((fs->data->inodes.len + 1) * sizeof(**out));
	if (!*out)
		return BLAB_ENOMEM;
	*n = btrfs_dirty_inodes(fs, *out, fs->data->inodes.len);
	return 0;
}

int btrfs_sync_data(struct btrfs_fs_info *fs)
{
	u64 *inos;
	size_t n;
	int ret = btrfs_dirty_inodes_all(fs, &inos, &n);
	for (size_t i = 0; !ret && i < n; i++)
		ret = btrfs_start_delalloc(fs, btrfs_ikey_root(fs, inos[i]), btrfs_ikey_ino(inos[i]), 0, (u64)-1, NULL, NULL);
	free(inos);
	return ret ? ret : btrfs_wait_ordered(fs, 0);
}

void btrfs_delalloc_evict_root(struct btrfs_fs_info *fs, const struct btrfs_root *root)
{
	if (root == fs->fs_root)
		return;
	u64 slot = btrfs_ikey(fs, root, 1) >> BTRFS_IKEY_SHIFT, *keys = malloc((fs->data->inodes.len + 1) * sizeof(*keys)), k;
	size_t n = 0, i = 0;
	void *v;
	while (keys && u64map_next(&fs->data->inodes, &i, &k, &v))
		if (k >> BTRFS_IKEY_SHIFT == slot)
			keys[n++] = k;
	for (size_t j = 0; j < n; j++) /* evicting moves the map's entries: the keys are taken first */
		btrfs_delalloc_evict(fs, keys[j]);
	free(keys);
}

void btrfs_delalloc_evict(struct btrfs_fs_info *fs, u64 ino)
{
	struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	if (!ic)
		return;
	fs->data->dirty_bytes -= ic->dirty_bytes;
	btrfs_space_release(fs, SPACE_DATA, ic->dirty_bytes);
	btrfs_space_inode_rsv_set(fs, &ic->meta_rsv, 0);
	u64map_del(&fs->data->inodes, ino);
	cache_free(ic);
}

struct page_entry {
	u64 pg;
	u32 state;
};

static int cmp_page(const void *a, const void *b)
{
	const struct page_entry *x = a, *y = b;
	return x->pg < y->pg ? -1 : x->pg > y->pg;
}

void btrfs_for_each_page(const struct btrfs_fs_info *fs, u64 ino, btrfs_page_fn fn, void *arg)
{
	const struct btrfs_inode_cache *ic = btrfs_inode_cache_get(fs, ino);
	if (!ic || !ic->pages.len)
		return;
	struct page_entry *e = malloc(ic->pages.len * sizeof(*e));
	if (!e)
		return;
	size_t n = 0, i = 0;
	u64 k;
	void *v;
	while (u64map_next(&ic->pages, &i, &k, &v))
		e[n++] = (struct page_entry){k, ((struct btrfs_page *)v)->state};
	qsort(e, n, sizeof(*e), cmp_page);
	for (size_t j = 0; j < n; j++)
		fn(arg, e[j].pg * fs->sectorsize, (int)e[j].state);
	free(e);
}
