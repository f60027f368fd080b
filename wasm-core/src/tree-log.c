/* tree-log.c — fsync: copying an inode's changes into the log tree. See
 * tree-log.h for what is logged; the rules here are the kernel's, as its
 * documentation and its logs (docs/log-tree-observed.md) show them:
 *
 *  - Only fs-tree leaves changed in the running transaction hold changes, so
 *    a directory's entries are copied from those leaves only, and only
 *    entries made in this transaction. Where entries are gone, a range item
 *    (DIR_LOG_INDEX, or DIR_LOG_ITEM for DIR_ITEM keys) marks the part of
 *    the index space for which the log is authoritative: replay deletes
 *    whatever the fs tree has there and the log does not.
 *  - A new entry's inode is logged too (directories fully, others just so
 *    that they exist), so that replay can link it.
 *  - A new inode's new parent directories are logged so that they exist.
 *  - index-only mode copies DIR_INDEX keys; legacy copies DIR_ITEM keys as
 *    well, and walks new entries in DIR_ITEM (name hash) order. */
#include "tree-log-int.h"
#include "tree-checker.h"
#include "block-group.h"
#include "ctree.h"
#include "disk-io.h"
#include "extent-tree.h"
#include "file-item.h"
#include "inode.h"
#include "transaction.h"
#include "volumes.h"
#include "array.h"
#include "delalloc.h"
#include "ordered-data.h"
#include "costs.h"
#include <stdlib.h>
#include <string.h>

/* log_inode's answer when only a commit can make the change durable */
#define NEED_FULL_COMMIT 1

struct log_ctx {
	struct btrfs_fs_info *fs;
	struct btrfs_root *root; /* the subvolume */
	struct btrfs_root *log;
	struct btrfs_log_stats *st;
	u64 *pending; /* inodes still to log (EXISTS or ALL): ino << 1 | all */
	size_t npending, cappending;
	u64 last_fs_leaf; /* the fs leaf last read-locked, for the trace */
	u8 *buf;          /* nodesize bytes: an item on its way from the fs tree to the log */
	/* the file ranges this fast fsync relogged (log_modified_ranges, each
	 * grown over the log items it replaced); 64: unknown, or all of them */
	u64 mod_s[64], mod_e[64];
	size_t nmod;
};

/* ---- per-inode state ---- */

static struct btrfs_log_inode_state *inode_state(struct btrfs_fs_info *fs, u64 ino)
{
	struct btrfs_log_inode_state *s = u64map_put(&fs->log->inodes, ino);
	if (!s)
		blab_fail(&fs->err, BLAB_ENOMEM, "log state");
	return s;
}

int btrfs_log_note_delayed_index(struct btrfs_fs_info *fs, u64 dir, u64 offset)
{
	struct btrfs_log_state *l = fs->log;
	if (l->ndidx && l->didx[0].gen != fs->generation)
		l->ndidx = 0; /* a commit flushed them all */
	if (array_room(&l->didx, l->ndidx, &l->capdidx, sizeof(*l->didx), 64))
		return blab_fail(&fs->err, BLAB_ENOMEM, "delayed directory index items");
	l->didx[l->ndidx++] = (struct btrfs_delayed_index){dir, offset, fs->generation, 0};
	return 0;
}

void btrfs_log_delayed_flushed(struct btrfs_fs_info *fs, u64 dir)
{
	struct btrfs_log_state *l = fs->log;
	for (size_t i = 0; l && i < l->ndidx; i++)
		if (!dir || l->didx[i].dir == dir)
			l->didx[i].flushed = 1;
}

/* Whether the kernel's leaf of dir's DIR_INDEX keys (lo, hi] has changed in
 * this transaction, given that the model's has: not when every change of
 * dir's index there this transaction is a delayed item still queued. */
static int index_leaf_changed(const struct btrfs_fs_info *fs, u64 dir, u64 lo, u64 hi)
{
	const struct btrfs_log_state *l = fs->log;
	int queued = 0;
	for (size_t i = 0; i < l->ndidx; i++) {
		const struct btrfs_delayed_index *d = &l->didx[i];
		if (d->gen != fs->generation || d->dir != dir || d->offset <= lo || d->offset > hi)
			continue;
		if (d->flushed)
			return 1;
		queued = 1;
	}
	return !queued;
}

/* index_leaf_changed for leaf, whose first DIR_INDEX key of dir follows
 * offset lo: a leaf holding other keys too may have changed for them. */
static int index_leaf_cloned(const struct btrfs_fs_info *fs, u64 dir, const struct extent_buffer *leaf, u64 lo)
{
	struct btrfs_key first, last;
	int n = (int)btrfs_nritems(leaf);
	btrfs_item_key(leaf, 0, &first);
	btrfs_item_key(leaf, n - 1, &last);
	if (first.objectid != dir || first.type != BTRFS_DIR_INDEX_KEY || last.objectid != dir || last.type != BTRFS_DIR_INDEX_KEY)
		return 1;
	return index_leaf_changed(fs, dir, lo, last.offset);
}

void btrfs_log_note_unlink(struct btrfs_fs_info *fs, u64 dir, u64 ino, int for_rename, int is_dir)
{
	struct btrfs_log_inode_state *s = inode_state(fs, ino);
	if (s)
		s->last_unlink_trans = fs->generation;
	/* The log may hold the inode with that name (its INODE_REF): a replay
	 * would bring the name back. The kernel deletes it from the log; the
	 * core commits instead at the directory's next fsync. */
	if (s && s->logged_trans == fs->generation) {
		struct btrfs_log_inode_state *d = inode_state(fs, dir);
		if (d)
			d->logged_name_gone_trans = fs->generation;
	}
	/* A directory that lost a name to a rename, or a subdirectory, cannot say
	 * where it went: its fsync commits instead. */
	if (for_rename || is_dir) {
		struct btrfs_log_inode_state *d = inode_state(fs, dir);
		if (d)
			d->last_unlink_trans = fs->generation;
	}
}

void btrfs_log_note_link(struct btrfs_fs_info *fs, u64 ino)
{
	struct btrfs_log_inode_state *s = inode_state(fs, ino);
	if (s)
		s->last_link_trans = fs->generation;
}

void btrfs_log_note_truncate(struct btrfs_fs_info *fs, u64 ino)
{
	struct btrfs_log_inode_state *s = inode_state(fs, ino);
	if (s)
		s->full_sync_trans = fs->generation, s->needs_full = 1;
}

int btrfs_log_note_name_removed(struct btrfs_fs_info *fs, u64 dir, u64 name_hash)
{
	if (array_room(&fs->log->deleted, fs->log->ndeleted, &fs->log->capdeleted, sizeof(*fs->log->deleted), 64))
		return blab_fail(&fs->err, BLAB_ENOMEM, "removed names");
	fs->log->deleted[fs->log->ndeleted++] = (struct btrfs_key){dir, 0, name_hash};
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	const struct btrfs_key *x = a, *y = b;
	if (x->objectid != y->objectid)
		return x->objectid < y->objectid ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* ---- the log trees ---- */

struct btrfs_root *btrfs_log_tree_root(const struct btrfs_fs_info *fs)
{
	return fs->log ? fs->log->tree : NULL;
}

static struct btrfs_root *new_log_root(struct btrfs_fs_info *fs)
{
	struct btrfs_root *r = calloc(1, sizeof(*r));
	if (!r) {
		blab_fail(&fs->err, BLAB_ENOMEM, "log root");
		return NULL;
	}
	r->objectid = BTRFS_TREE_LOG_OBJECTID;
	u64map_init(&r->dir_index, sizeof(u64));
	r->node = btrfs_alloc_tree_block(fs, BTRFS_TREE_LOG_OBJECTID, 0);
	if (!r->node) {
		u64map_free(&r->dir_index);
		free(r);
		return NULL;
	}
	return r;
}

static int start_log(struct btrfs_fs_info *fs)
{
	if (fs->log->tree)
		return 0;
	if (!(fs->log->root_tree = new_log_root(fs)))
		return fs->err.code;
	if (!(fs->log->tree = new_log_root(fs)))
		return fs->err.code;
	fs_trace(fs, (struct trace_event){.kind = TRACE_LOG_START, .tree = fs->fs_root->objectid,
					  .bytenr = fs->log->tree->node->start, .a = fs->log->root_tree->node->start,
					  .b = fs->generation});
	return 0;
}

/* A walk step: writes a dirty log block, counted in stats. */
static int write_log_block(struct btrfs_fs_info *fs, struct extent_buffer *eb, void *stats)
{
	int dirty = eb->dirty, ret = btrfs_write_tree_block(fs, eb);
	if (!ret && dirty && stats)
		((struct btrfs_log_stats *)stats)->blocks_written++;
	return ret;
}

/* Calls fn on every block of the tree under eb (children first). */
static int walk_blocks(struct btrfs_fs_info *fs, struct extent_buffer *eb, btrfs_walk_fn fn, void *arg)
{
	return btrfs_walk_tree(fs, eb, BTRFS_TREE_LOG_OBJECTID, WALK_POST_ORDER, fn, arg);
}

static int free_log_block(struct btrfs_fs_info *fs, struct extent_buffer *eb, void *arg)
{
	(void)arg;
	u64 start = eb->start;
	/* a block a log sync wrote may be what the superblock on disk names
	 * until this commit's superblock is written: pinned till then, never
	 * reused by the commit's own writes (crash.h found that) */
	int written = (btrfs_header_flags(eb->data) & BTRFS_HEADER_FLAG_WRITTEN) != 0;
	btrfs_evict_eb(fs, start);
	fs_trace(fs, (struct trace_event){.kind = TRACE_BLOCK_FREE, .tree = BTRFS_TREE_LOG_OBJECTID, .bytenr = start});
	return written ? btrfs_pin_log_block(fs, start, fs->nodesize) : btrfs_free_reserved(fs, start, fs->nodesize);
}

static void free_root(struct btrfs_root *r)
{
	if (!r)
		return;
	u64map_free(&r->dir_index);
	free(r);
}

int btrfs_drop_log(struct btrfs_fs_info *fs)
{
	int ret = 0;
	struct btrfs_root *rs[2] = {fs->log->tree, fs->log->root_tree};
	for (int i = 0; i < 2; i++)
		if (rs[i] && rs[i]->node && !ret)
			ret = walk_blocks(fs, rs[i]->node, free_log_block, NULL);
	free_root(fs->log->tree);
	free_root(fs->log->root_tree);
	fs->log->tree = fs->log->root_tree = NULL;
	u64map_clear(&fs->log->inodes);
	u64map_clear(&fs->log->csums);
	fs->log->ndeleted = 0;
	fs->log->ndidx = 0;
	btrfs_set_super_log_root(fs->super, 0);
	btrfs_set_super_log_root_level(fs->super, 0);
	return ret;
}

int btrfs_log_init(struct btrfs_fs_info *fs)
{
	if (!(fs->log = calloc(1, sizeof(*fs->log))))
		return BLAB_ENOMEM;
	u64map_init(&fs->log->inodes, sizeof(struct btrfs_log_inode_state));
	u64map_init(&fs->log->csums, sizeof(u64));
	return 0;
}

int btrfs_log_running(const struct btrfs_fs_info *fs)
{
	return fs->log->tree != NULL;
}

int btrfs_log_is_root_node(const struct btrfs_fs_info *fs, const struct extent_buffer *eb)
{
	const struct btrfs_log_state *l = fs->log;
	return (l->tree && l->tree->node == eb) || (l->root_tree && l->root_tree->node == eb);
}

int btrfs_log_roots(const struct btrfs_fs_info *fs, struct extent_buffer **root_tree, struct extent_buffer **tree)
{
	if (!fs->log->root_tree || !fs->log->tree)
		return 0;
	*root_tree = fs->log->root_tree->node;
	*tree = fs->log->tree->node;
	return 1;
}

int btrfs_dir_logging(const struct btrfs_fs_info *fs)
{
	return fs->log->dir_logging;
}

void btrfs_set_dir_logging(struct btrfs_fs_info *fs, int mode)
{
	fs->log->dir_logging = mode;
}

int btrfs_log_clone(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src)
{
	dst->log->dir_logging = src->log->dir_logging;
	if ((src->log->tree && !(dst->log->tree = btrfs_clone_root(dst, src->log->tree))) ||
	    (src->log->root_tree && !(dst->log->root_tree = btrfs_clone_root(dst, src->log->root_tree))))
		return dst->err.code;
	u64map_free(&dst->log->inodes);
	u64map_free(&dst->log->csums);
	if (u64map_clone(&dst->log->inodes, &src->log->inodes) || u64map_clone(&dst->log->csums, &src->log->csums))
		return blab_fail(&dst->err, BLAB_ENOMEM, "the log's inodes");
	int ret = 0;
	struct btrfs_log_state *d = dst->log;
	const struct btrfs_log_state *l = src->log;
	if ((d->deleted = array_dup(l->deleted, l->ndeleted, l->capdeleted, sizeof(*l->deleted), &ret))) {
		d->ndeleted = l->ndeleted;
		d->capdeleted = l->capdeleted ? l->capdeleted : 1;
	}
	if ((d->didx = array_dup(l->didx, l->ndidx, l->capdidx, sizeof(*l->didx), &ret))) {
		d->ndidx = l->ndidx;
		d->capdidx = l->capdidx ? l->capdidx : 1;
	}
	if (ret)
		return blab_fail(&dst->err, BLAB_ENOMEM, "the log's deleted names and delayed index items");
	return 0;
}

void btrfs_log_free(struct btrfs_fs_info *fs)
{
	if (!fs->log)
		return;
	free_root(fs->log->tree);
	free_root(fs->log->root_tree);
	fs->log->tree = fs->log->root_tree = NULL;
	u64map_free(&fs->log->inodes);
	u64map_free(&fs->log->csums);
	free(fs->log->deleted);
	free(fs->log->didx);
	free(fs->log);
	fs->log = NULL;
}

/* ---- copying items ---- */

static void count_item(struct log_ctx *c, const struct btrfs_key *k, u32 size)
{
	if (!c->st)
		return;
	c->st->items[k->type]++;
	c->st->items_total++;
	c->st->bytes += size + BTRFS_ITEM_SIZE;
}

/* Inserts (or replaces) one item in the log. */
static int log_insert(struct log_ctx *c, const struct btrfs_key *k, const u8 *data, u32 size, u64 src_leaf)
{
	struct btrfs_fs_info *fs = c->fs;
	struct btrfs_path path;
	int ret = btrfs_search_slot(fs, c->log, k, &path, (int)(size + BTRFS_ITEM_SIZE), 1);
	if (ret < 0)
		return ret;
	if (c->st)
		c->st->log_searches++;
	if (ret == 0) {
		/* the same key logged earlier in this transaction: replace it */
		if ((ret = btrfs_del_items(fs, c->log, &path, path.slots[0], 1)))
			return ret;
		if ((ret = btrfs_search_slot(fs, c->log, k, &path, (int)(size + BTRFS_ITEM_SIZE), 1)) < 0)
			return ret;
	}
	struct extent_buffer *leaf = path.nodes[0];
	if (c->st)
		c->st->shifted += btrfs_leaf_insert_moves(leaf, path.slots[0]);
	if ((ret = btrfs_insert_empty_item(fs, c->log, &path, k, size)))
		return ret;
	memcpy(btrfs_item_ptr(path.nodes[0], path.slots[0]), data, size);
	path.nodes[0]->dirty = 1;
	count_item(c, k, size);
	fs_trace(fs, (struct trace_event){.kind = TRACE_LOG_COPY, .tree = BTRFS_TREE_LOG_OBJECTID, .bytenr = src_leaf,
					  .a = path.nodes[0]->start, .slot = path.slots[0], .key = *k, .b = size});
	return 0;
}

/* Deletes every log item of objectid ino (its earlier logging in this
 * transaction) before it is logged again. */
static int drop_logged_inode(struct log_ctx *c, u64 ino, u8 min_type, u8 max_type)
{
	return btrfs_del_items_of(c->fs, c->log, ino, min_type, max_type);
}

/* A leaf read-locked to copy from; clone: one the kernel clones first
 * (before seed 000's fix). */
static void lock_leaf(struct log_ctx *c, const struct extent_buffer *leaf, int clone)
{
	if (c->last_fs_leaf == leaf->start)
		return;
	c->last_fs_leaf = leaf->start;
	if (c->st) {
		c->st->fs_leaves_read++;
		c->st->fs_leaves_cloned += clone != 0;
	}
	fs_trace(c->fs, (struct trace_event){.kind = TRACE_LOG_LOCK, .tree = c->root->objectid, .bytenr = leaf->start,
					     .a = btrfs_header_generation(leaf->data)});
}

static int push_pending(struct log_ctx *c, u64 ino, int all)
{
	if (array_room(&c->pending, c->npending, &c->cappending, sizeof(*c->pending), 64))
		return blab_fail(&c->fs->err, BLAB_ENOMEM, "inodes to log");
	c->pending[c->npending++] = ino << 1 | (u64)(all != 0);
	return 0;
}

/* Data checksums of [bytenr, bytenr + len) from the csum tree into the log. */
static int log_csums(struct log_ctx *c, u64 bytenr, u64 len, u64 src_leaf)
{
	struct btrfs_fs_info *fs = c->fs;
	u64 *done = u64map_get(&fs->log->csums, bytenr); /* disk extents whose checksums are in the log */
	if (done)
		return 0;
	if (!(done = u64map_put(&fs->log->csums, bytenr)))
		return blab_fail(&fs->err, BLAB_ENOMEM, "logged checksums");
	*done = len;
	u32 ss = fs->sectorsize;
	u64 end = bytenr + len, cur = bytenr;
	while (cur < end) {
		struct btrfs_path path;
		u64 istart, iend;
		int ret = btrfs_find_csum_item(fs, fs->csum_root, cur, end, &path, &istart, &iend);
		if (ret)
			return ret == BLAB_ENOENT ? 0 : ret;
		u64 s = istart > cur ? istart : cur, e = iend < end ? iend : end;
		u32 n = (u32)((e - s) / ss);
		if (c->st)
			c->st->csum_items++;
		/* c->buf is free again: the extent item that named these checksums is in the log */
		memcpy(c->buf, btrfs_item_ptr(path.nodes[0], path.slots[0]) + (s - istart) / ss * 4, (size_t)n * 4);
		struct btrfs_key lk = {BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, s};
		/* counted as cloned, as before; the kernel reads the checksums into a
		 * list (btrfs_lookup_csums_list) and clones no csum leaf */
		lock_leaf(c, path.nodes[0], 1);
		if ((ret = log_insert(c, &lk, c->buf, n * 4, src_leaf)))
			return ret;
		cur = e;
	}
	return 0;
}

/* Whether oe, still in flight, is in this transaction's log already and
 * this fsync left its file extent item there: the kernel's
 * btrfs_get_ordered_extents_for_logging takes no ordered extent marked
 * BTRFS_ORDERED_LOGGED (the fsync that logged it set the flag), so a later
 * fsync neither logs it again nor counts it. Where this fsync relogged a
 * range over it (a write since), it goes in again, as the range's extents. */
static int logged_intact(const struct log_ctx *c, const struct btrfs_ordered_extent *oe)
{
	if (!(oe->flags & BTRFS_ORDERED_LOGGED) || oe->logged_trans != c->fs->generation || c->nmod >= 64)
		return 0;
	for (size_t i = 0; i < c->nmod; i++)
		if (c->mod_s[i] < oe->file_offset + oe->num_bytes && oe->file_offset < c->mod_e[i])
			return 0;
	return 1;
}

/* An ordered extent still in flight (its bio done, its completion not yet):
 * its file extent item and its checksums, from the ordered extent itself. */
static int log_ordered(struct log_ctx *c, struct btrfs_ordered_extent *oe)
{
	struct btrfs_fs_info *fs = c->fs;
	u8 fe[BTRFS_FILE_EXTENT_SIZE] = {0};
	btrfs_set_file_extent_generation(fe, fs->generation);
	btrfs_set_file_extent_type(fe, BTRFS_FILE_EXTENT_REG);
	btrfs_set_file_extent_disk_bytenr(fe, oe->disk_bytenr);
	btrfs_set_file_extent_disk_num_bytes(fe, oe->num_bytes);
	btrfs_set_file_extent_num_bytes(fe, oe->num_bytes);
	btrfs_set_file_extent_ram_bytes(fe, oe->num_bytes);
	struct btrfs_key k = {oe->ino, BTRFS_EXTENT_DATA_KEY, oe->file_offset};
	int ret = log_insert(c, &k, fe, sizeof(fe), 0);
	if (ret)
		return ret;
	oe->flags |= BTRFS_ORDERED_LOGGED;
	oe->logged_trans = fs->generation;
	if (c->st)
		c->st->ordered_logged++;
	fs_trace(fs, (struct trace_event){.kind = TRACE_ORDERED_LOGGED, .tree = oe->root, .bytenr = oe->disk_bytenr,
					  .a = oe->ino, .b = oe->file_offset, .c = oe->num_bytes, .slot = (int)oe->id});
	u64 *done = u64map_get(&fs->log->csums, oe->disk_bytenr);
	if (done)
		return 0;
	if (!(done = u64map_put(&fs->log->csums, oe->disk_bytenr)))
		return blab_fail(&fs->err, BLAB_ENOMEM, "logged checksums");
	*done = oe->num_bytes;
	u64 sectors = oe->num_bytes / fs->sectorsize, per = (fs->nodesize - BTRFS_HEADER_SIZE) / 2 / 4;
	for (u64 i = 0; i < sectors && !ret; i += per) {
		u32 n = (u32)(sectors - i < per ? sectors - i : per);
		for (u32 j = 0; j < n; j++)
			put_le32(c->buf + 4 * j, oe->sums[i + j]);
		struct btrfs_key lk = {BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, oe->disk_bytenr + i * fs->sectorsize};
		ret = log_insert(c, &lk, c->buf, n * 4, 0);
	}
	return ret;
}

static int clip_pieces(struct log_ctx *c, struct btrfs_key *k, u8 *buf, u64 src, u64 end, struct btrfs_ordered_extent **oes,
		       size_t n);

/* Logs an fs tree extent item (in buf, key k) but for the parts in-flight
 * ordered extents of the inode replace: 1 when nothing of it is left to log. */
static int clip_to_ordered(struct log_ctx *c, struct btrfs_key *k, u8 *buf, u64 src, u64 end)
{
	struct btrfs_fs_info *fs = c->fs;
	size_t n = btrfs_ordered_of(fs, k->objectid, k->offset, end, NULL, 0);
	if (!n)
		return 0;
	if (btrfs_file_extent_type(buf) == BTRFS_FILE_EXTENT_INLINE)
		return 1;
	struct btrfs_ordered_extent **oes = malloc(n * sizeof(*oes));
	if (!oes)
		return blab_fail(&fs->err, BLAB_ENOMEM, "ordered extents");
	btrfs_ordered_of(fs, k->objectid, k->offset, end, oes, n);
	int r = clip_pieces(c, k, buf, src, end, oes, n);
	free(oes);
	return r;
}

static int clip_pieces(struct log_ctx *c, struct btrfs_key *k, u8 *buf, u64 src, u64 end, struct btrfs_ordered_extent **oes,
		       size_t n)
{
	/* the pieces of [k->offset, end) outside every ordered extent, logged one by one
	 * (from a copy of the item: logging a piece's checksums reuses buf) */
	u8 item[BTRFS_FILE_EXTENT_SIZE];
	memcpy(item, buf, sizeof(item));
	u64 cur = k->offset;
	while (cur < end) {
		u64 next_start = end, next_end = end;
		for (size_t i = 0; i < n; i++) {
			u64 os = oes[i]->file_offset, oe_end = os + oes[i]->num_bytes;
			if (oe_end <= cur)
				continue;
			if (os <= cur) {
				next_start = cur;
				next_end = oe_end;
				break;
			}
			if (os < next_start) {
				next_start = os;
				next_end = oe_end;
			}
		}
		if (next_start > cur) {
			u8 piece[BTRFS_FILE_EXTENT_SIZE];
			memcpy(piece, item, sizeof(piece));
			u64 delta = cur - k->offset;
			if (btrfs_file_extent_disk_bytenr(piece))
				btrfs_set_file_extent_offset(piece, btrfs_file_extent_offset(piece) + delta);
			btrfs_set_file_extent_num_bytes(piece, next_start - cur);
			struct btrfs_key pk = {k->objectid, BTRFS_EXTENT_DATA_KEY, cur};
			int ret = log_insert(c, &pk, piece, sizeof(piece), src);
			u64 db = btrfs_file_extent_disk_bytenr(piece);
			if (!ret && db)
				ret = log_csums(c, db, btrfs_file_extent_disk_num_bytes(piece), src);
			if (ret)
				return ret < 0 ? ret : -ret;
		}
		cur = next_end > next_start ? next_end : end;
	}
	return 1;
}

/* A hole item (disk_bytenr 0) for [start, end). */
static int log_hole(struct log_ctx *c, u64 ino, u64 start, u64 end)
{
	u8 fe[BTRFS_FILE_EXTENT_SIZE] = {0};
	btrfs_set_file_extent_generation(fe, c->fs->generation);
	btrfs_set_file_extent_type(fe, BTRFS_FILE_EXTENT_REG);
	btrfs_set_file_extent_num_bytes(fe, end - start);
	btrfs_set_file_extent_ram_bytes(fe, end - start);
	struct btrfs_key k = {ino, BTRFS_EXTENT_DATA_KEY, start};
	return log_insert(c, &k, fe, sizeof(fe), 0);
}

/* Whether ino is logged in full: all its extents (new in this transaction
 * and not yet logged in full in it, or truncated since its last full log). */
static int needs_full_log(const struct btrfs_fs_info *fs, const struct btrfs_log_inode_state *s, const struct btrfs_inode *in)
{
	u64 trans = fs->generation;
	return (in->generation == trans && s->full_logged_trans != trans) || (s->full_sync_trans == trans && s->needs_full);
}

/* Whether a regular file logged before in this transaction (and not in
 * need of a full log) logs only what was written back since: the kernel's
 * fast fsync of modified extents. */
static int incremental_log(const struct btrfs_fs_info *fs, const struct btrfs_log_inode_state *s, const struct btrfs_inode *in,
			   int all)
{
	u64 st[65], en[65];
	return all && (in->mode & S_IFMT_) == S_IFREG_ && s->logged_trans == fs->generation && !needs_full_log(fs, s, in) &&
	       btrfs_inode_modified(fs, in->ino, st, en, 65) <= 64;
}

/* The ranges of ino written back since its last log: the log's extent items
 * there go, and the fs tree's (or in-flight ordered extents') come in. */
static int log_modified_ranges(struct log_ctx *c, u64 ino)
{
	struct btrfs_fs_info *fs = c->fs;
	u64 st[64], en[64];
	size_t n = btrfs_inode_modified(fs, ino, st, en, 64);
	int ret = 0;
	for (size_t i = 0; i < n && !ret; i++) {
		u64 s = st[i], e = en[i];
		struct file_extent fe;
		/* what the log holds there goes whole: the range grows to cover it */
		for (u64 cur = s; cur < e && !ret;) {
			if ((ret = btrfs_find_file_extent(fs, c->log, ino, cur, e, &fe))) {
				ret = ret == BLAB_ENOENT ? 0 : ret;
				break;
			}
			u64 fe_end = file_extent_end(&fe) > fe.key.offset ? file_extent_end(&fe) : fe.key.offset + 1;
			if (fe.key.offset < s)
				s = fe.key.offset;
			if (fe_end > e)
				e = fe_end;
			ret = btrfs_delete_item(fs, c->log, &fe.key);
			cur = fe_end;
		}
		if (c->nmod < 64) {
			c->mod_s[c->nmod] = s;
			c->mod_e[c->nmod++] = e;
		}
		/* then the fs tree's extents over the whole range */
		for (u64 cur = s; cur < e && !ret;) {
			if ((ret = btrfs_find_file_extent(fs, c->root, ino, cur, e, &fe))) {
				ret = ret == BLAB_ENOENT ? 0 : ret;
				break;
			}
			u64 fe_end = file_extent_end(&fe) > fe.key.offset ? file_extent_end(&fe) : fe.key.offset + 1;
			u8 *p;
			u32 sz;
			if ((ret = btrfs_lookup_item(fs, c->root, &fe.key, &p, &sz, 0)))
				break;
			if (sz > fs->nodesize) {
				ret = blab_fail(&fs->err, BLAB_ECORRUPT, "inode %llu: file extent item of %u bytes",
						(unsigned long long)ino, sz);
				break;
			}
			memcpy(c->buf, p, sz);
			struct btrfs_key k = fe.key;
			int r = clip_to_ordered(c, &k, c->buf, 0, fe_end);
			if (r < 0) {
				ret = r;
				break;
			}
			if (!r && (ret = log_insert(c, &k, c->buf, sz, 0)))
				break;
			if (!r && fe.type != BTRFS_FILE_EXTENT_INLINE && fe.disk_bytenr)
				ret = log_csums(c, fe.disk_bytenr, fe.disk_num_bytes, 0);
			cur = fe_end;
		}
	}
	return ret;
}

/* Copies the inode item, refs, xattrs and (mode ALL) file extents of ino. */
static int copy_inode_items(struct log_ctx *c, u64 ino, int all, const struct btrfs_inode *in)
{
	struct btrfs_fs_info *fs = c->fs;
	u64 trans = fs->generation;
	int is_reg = (in->mode & S_IFMT_) == S_IFREG_ || (in->mode & S_IFMT_) == S_IFLNK_;
	struct btrfs_log_inode_state *s = inode_state(fs, ino);
	if (!s)
		return fs->err.code;
	int full = needs_full_log(fs, s, in);
	int incremental = incremental_log(fs, s, in, all);
	c->nmod = incremental ? 0 : 64; /* not incremental: the inode's log items went, every ordered extent goes in again */
	u64 sector = fs->sectorsize, size_end = (btrfs_inode_isize(fs, ino, in->size) + sector - 1) / sector * sector, covered = 0;
	struct btrfs_item_cursor cur;
	struct btrfs_key key = {ino, BTRFS_INODE_ITEM_KEY, 0}, k;
	int ret = 0, more;
	u8 *buf = c->buf;
	for (more = btrfs_cursor_first(fs, c->root, &key, &cur); more == 0; more = btrfs_cursor_next(fs, &cur)) {
		if ((k = cur.key).objectid != ino)
			break;
		u32 size = cur.size;
		switch (k.type) {
		case BTRFS_INODE_ITEM_KEY:
		case BTRFS_INODE_REF_KEY:
		case BTRFS_INODE_EXTREF_KEY:
		case BTRFS_XATTR_ITEM_KEY:
			break;
		case BTRFS_EXTENT_DATA_KEY:
			if (!all || !is_reg)
				continue;
			if (incremental)
				goto done; /* the ranges written back since its last log, below */
			if (!full && btrfs_file_extent_generation(cur.data) != trans)
				continue;
			break;
		default:
			continue; /* directory entries are logged by log_dir_items */
		}
		lock_leaf(c, cur.leaf, 1);
		memcpy(buf, cur.data, size);
		u64 src = cur.leaf->start;
		if (k.type == BTRFS_INODE_ITEM_KEY && !all) {
			/* "it exists": replay creates it if missing and leaves an existing one alone */
			btrfs_set_inode_generation(buf, 0);
			btrfs_set_inode_size(buf, 0);
		} else if (k.type == BTRFS_INODE_ITEM_KEY) {
			/* the size writes made (i_size), not the one completed extents reached */
			btrfs_set_inode_size(buf, btrfs_inode_isize(fs, ino, in->size));
		}
		u64 ext_bytenr = 0, ext_len = 0, ext_start = k.offset, ext_end = 0;
		if (k.type == BTRFS_EXTENT_DATA_KEY) {
			u8 t = btrfs_file_extent_type(buf);
			if (t == BTRFS_FILE_EXTENT_INLINE) {
				/* an inline extent fills its sector: a hole after it starts at the next one */
				ext_end = (k.offset + btrfs_file_extent_ram_bytes(buf) + sector - 1) / sector * sector;
			} else {
				ext_bytenr = btrfs_file_extent_disk_bytenr(buf);
				ext_len = btrfs_file_extent_disk_num_bytes(buf);
				ext_end = k.offset + btrfs_file_extent_num_bytes(buf);
			}
		}
		if (k.type == BTRFS_EXTENT_DATA_KEY && full && s->full_sync_trans == trans && ext_start > covered)
			if ((ret = log_hole(c, ino, covered, ext_start)))
				break;
		if (k.type == BTRFS_EXTENT_DATA_KEY && !full && (ret = clip_to_ordered(c, &k, buf, src, ext_end))) {
			if (ret < 0)
				break;
			ret = 0;
			continue; /* logged in pieces, or replaced whole by ordered extents */
		}
		/* the path is kept across the insert: log inserts touch only log blocks */
		if ((ret = log_insert(c, &k, buf, size, src)))
			break;
		if (k.type == BTRFS_EXTENT_DATA_KEY) {
			if (ext_end > covered)
				covered = ext_end;
			if (ext_bytenr && (ret = log_csums(c, ext_bytenr, ext_len, src)))
				break;
		}
	}
done:
	if (more < 0)
		ret = more;
	if (!ret && all && is_reg && full && s->full_sync_trans == trans && covered < size_end)
		ret = log_hole(c, ino, covered, size_end);
	if (!ret && incremental)
		ret = log_modified_ranges(c, ino);
	if (!ret && all && is_reg && full) {
		s = inode_state(fs, ino);
		if (!s)
			return fs->err.code;
		s->full_logged_trans = trans;
		s->needs_full = 0;
	}
	if (!ret && all && is_reg)
		btrfs_inode_modified_clear(fs, ino);
	if (!ret && all && is_reg && !full) {
		/* the kernel's btrfs_get_ordered_extents_for_logging: extents still in
		 * flight are logged from their ordered extents */
		size_t n = btrfs_ordered_of(fs, ino, 0, (u64)-1, NULL, 0);
		struct btrfs_ordered_extent **oes = n ? malloc(n * sizeof(*oes)) : NULL;
		if (n && !oes)
			return blab_fail(&fs->err, BLAB_ENOMEM, "ordered extents");
		btrfs_ordered_of(fs, ino, 0, (u64)-1, oes, n);
		u64 logged = 0;
		for (size_t i = 0; i < n && !ret; i++) {
			if (!(oes[i]->flags & BTRFS_ORDERED_IO_DONE))
				continue; /* not written yet: fsync waits for writeback first */
			if (logged_intact(c, oes[i]))
				continue; /* an earlier fsync logged it, and the log still holds it */
			logged++;
			ret = log_ordered(c, oes[i]);
		}
		free(oes);
		btrfs_ordered_count_logged(fs, logged);
	}
	return ret;
}

static int insert_range(struct log_ctx *c, u64 dir, u8 range_type, u64 first, u64 last)
{
	u8 v[8];
	put_le64(v, last);
	struct btrfs_key k = {dir, range_type, first};
	if (c->st)
		c->st->ranges++;
	fs_trace(c->fs, (struct trace_event){.kind = TRACE_LOG_RANGE, .tree = BTRFS_TREE_LOG_OBJECTID, .key = k, .a = last});
	return log_insert(c, &k, v, sizeof(v), 0);
}

/* Copies directory entries of type (DIR_INDEX or DIR_ITEM) made in this
 * transaction and writes the ranges the log is authoritative for; new
 * entries' inodes are queued when collect is set. With logged, entries at
 * offsets up to *logged are in the log already (copied by an earlier logging
 * of the directory in this transaction; index offsets only grow) and are not
 * copied again, though their leaves are still read; *logged becomes the
 * highest new offset seen. With whole_leaves (the 5.10 and 5.17 modes) every
 * entry of a changed leaf is copied, new or not, and the ranges follow the
 * runs of changed leaves alone, from offset 0, for both key types. */
static int log_dir_items(struct log_ctx *c, u64 dir, u8 type, int collect, u64 *logged, int whole_leaves)
{
	struct btrfs_fs_info *fs = c->fs;
	u64 trans = fs->generation;
	u8 range_type = type == BTRFS_DIR_INDEX_KEY ? BTRFS_DIR_LOG_INDEX_KEY : BTRFS_DIR_LOG_ITEM_KEY;
	/* DIR_ITEM offsets are name hashes: a gap between two of them says
	 * nothing, so the names removed in this transaction mark their own
	 * one-hash ranges instead */
	int hashed = type == BTRFS_DIR_ITEM_KEY && !whole_leaves;
	/* the offset of the last entry the log leaves alone; DIR_INDEX starts at 2 */
	int have_old = type == BTRFS_DIR_INDEX_KEY && !whole_leaves;
	u64 last_old = 1;
	int prev_changed = 0;
	u64 prev_leaf = 0;
	u64 cur_leaf = 0, prev_off = 0, leaf_lo = 0; /* the offset before the leaf's first, for index_leaf_cloned */
	struct btrfs_item_cursor cur;
	struct btrfs_key key = {dir, type, 0}, k;
	int ret = 0, more;
	u8 *buf = c->buf;
	for (more = btrfs_cursor_first(fs, c->root, &key, &cur); more == 0; more = btrfs_cursor_next(fs, &cur)) {
		struct extent_buffer *leaf = cur.leaf;
		k = cur.key;
		if (k.objectid != dir || k.type != type)
			break;
		if (leaf->start != cur_leaf) {
			cur_leaf = leaf->start;
			leaf_lo = prev_off;
		}
		prev_off = k.offset;
		int changed = btrfs_header_generation(leaf->data) == trans;
		if (hashed && !changed)
			continue; /* DIR_ITEM keys: ranges come from removed names, below */
		int first_in_leaf = leaf->start != prev_leaf;
		prev_leaf = leaf->start;
		u64 from = have_old ? last_old + 1 : 0;
		if (!changed) {
			/* an unchanged leaf: nothing in it is logged; where a run of
			 * changed leaves ends, the range before it closes */
			if (first_in_leaf && prev_changed && k.offset > from)
				if ((ret = insert_range(c, dir, range_type, from, k.offset - 1)))
					break;
			prev_changed = 0;
			have_old = 1;
			last_old = k.offset;
			continue;
		}
		prev_changed = 1;
		lock_leaf(c, leaf, type == BTRFS_DIR_ITEM_KEY || index_leaf_cloned(fs, dir, leaf, leaf_lo));
		u32 size = cur.size;
		const u8 *p = cur.data;
		/* new when any entry in the item is (DIR_ITEMs may hold several) */
		int is_new = whole_leaves;
		for (u32 off = 0; off + BTRFS_DIR_ITEM_SIZE <= size;) {
			const u8 *e = p + off;
			if (btrfs_dir_transid(e) == trans)
				is_new = 1;
			off += BTRFS_DIR_ITEM_SIZE + btrfs_dir_name_len(e) + btrfs_dir_data_len(e);
		}
		if (!is_new && hashed)
			continue;
		if (!is_new) {
			if (k.offset > from)
				if ((ret = insert_range(c, dir, range_type, from, k.offset - 1)))
					break;
			have_old = 1;
			last_old = k.offset;
			continue;
		}
		if (logged && k.offset <= *logged)
			continue; /* copied by an earlier logging of the directory in this transaction */
		if (logged)
			*logged = k.offset;
		memcpy(buf, p, size);
		u64 src = leaf->start;
		if ((ret = log_insert(c, &k, buf, size, src)))
			break;
		if (collect) {
			for (u32 off = 0; off + BTRFS_DIR_ITEM_SIZE <= size;) {
				const u8 *e = buf + off;
				struct btrfs_key loc;
				btrfs_disk_key_to_cpu(&loc, e);
				if (btrfs_dir_transid(e) == trans && loc.type == BTRFS_INODE_ITEM_KEY)
					if ((ret = push_pending(c, loc.objectid, btrfs_dir_type(e) == BTRFS_FT_DIR)))
						break;
				off += BTRFS_DIR_ITEM_SIZE + btrfs_dir_name_len(e) + btrfs_dir_data_len(e);
			}
			if (ret)
				break;
		}
	}
	if (more < 0)
		ret = more;
	if (!ret && hashed) {
		if (fs->log->ndeleted) /* qsort(NULL, 0) is undefined */
			qsort(fs->log->deleted, fs->log->ndeleted, sizeof(*fs->log->deleted), cmp_key);
		for (size_t i = 0; i < fs->log->ndeleted && !ret; i++) {
			const struct btrfs_key *d = &fs->log->deleted[i];
			if (d->objectid == dir && !(i && d->objectid == d[-1].objectid && d->offset == d[-1].offset))
				ret = insert_range(c, dir, range_type, d->offset, d->offset);
		}
	} else if (!ret) {
		u64 from = have_old ? last_old + 1 : 0;
		if (!(have_old && last_old == (u64)-1))
			ret = insert_range(c, dir, range_type, from, (u64)-1);
	}
	return ret;
}

/* Logs one inode: ALL (fsync of it, or a new directory below a logged one)
 * or EXISTS (so that replay can link it). */
static int log_inode(struct log_ctx *c, u64 ino, int all)
{
	struct btrfs_fs_info *fs = c->fs;
	struct btrfs_log_inode_state *s = inode_state(fs, ino);
	if (!s)
		return fs->err.code;
	if (!all && s->logged_trans == fs->generation)
		return 0; /* logged already in this transaction */
	struct btrfs_inode in;
	int ret = btrfs_read_inode(fs, c->root, ino, &in);
	if (ret)
		return ret;
	int is_dir = (in.mode & S_IFMT_) == S_IFDIR_;
	/* a symlink's target is its data (an inline extent): logged whole, as
	 * the kernel does, or a replay of a new one leaves it empty */
	if ((in.mode & S_IFMT_) == S_IFLNK_)
		all = 1;
	if (is_dir && all && s->last_unlink_trans == fs->generation)
		return NEED_FULL_COMMIT; /* moved here by a rename: its old name cannot be logged away */
	fs_trace(fs, (struct trace_event){.kind = TRACE_LOG_INODE, .tree = c->root->objectid, .a = ino, .b = (u64)!all});
	if (c->st)
		c->st->inodes_logged++;
	int mode = fs->log->dir_logging;
	int legacy = mode != BTRFS_DIR_LOGGING_INDEX_ONLY; /* no incremental logging of directories */
	int whole = mode == BTRFS_DIR_LOGGING_LEAVES_5_10 || mode == BTRFS_DIR_LOGGING_LEAVES_5_17;
	int dir_items = mode == BTRFS_DIR_LOGGING_LEGACY || mode == BTRFS_DIR_LOGGING_LEAVES_5_10;
	/* a directory whose entries were logged in this transaction keeps them
	 * in the log, and its ranges: only entries made since are copied, as the
	 * kernel does since v6.1 ("btrfs: don't drop dir index range items when
	 * logging a directory"; last_dir_index_offset). A name it lost since
	 * whose inode was logged makes its fsync commit instead (log_dentry's
	 * LOGGED_NAME_GONE), so no stale entry of the log is replayed. */
	int dir_incremental = is_dir && all && !legacy && s->dir_logged_trans == fs->generation;
	if (s->logged_trans == fs->generation) {
		/* logged before in this transaction: its items are copied again (a
		 * file's extents only where it was written back since) */
		u8 max = is_dir && (!all || dir_incremental) ? BTRFS_XATTR_ITEM_KEY : 255;
		if (incremental_log(fs, s, &in, all))
			max = BTRFS_EXTENT_DATA_KEY - 1;
		if ((ret = drop_logged_inode(c, ino, 0, max)))
			return ret;
	}
	if ((ret = copy_inode_items(c, ino, all, &in)))
		return ret;
	s = inode_state(fs, ino); /* the map may have grown */
	if (!s)
		return fs->err.code;
	s->logged_trans = fs->generation;
	if (is_dir && all) {
		if (dir_items && (ret = log_dir_items(c, ino, BTRFS_DIR_ITEM_KEY, 1, NULL, whole)))
			return ret;
		u64 logged = dir_incremental ? s->last_dir_index : 0;
		if ((ret = log_dir_items(c, ino, BTRFS_DIR_INDEX_KEY, !dir_items, legacy ? NULL : &logged, whole)))
			return ret;
		if (!legacy && (s = inode_state(fs, ino))) {
			s->dir_logged_trans = fs->generation;
			s->last_dir_index = logged;
		}
	}
	return 0;
}

/* The directory ino is linked from (its one INODE_REF), or 0. */
static int parents_of(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 *out, int max, int *n)
{
	*n = 0;
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {ino, BTRFS_INODE_REF_KEY, 0};
	int ret;
	for (ret = btrfs_cursor_first(fs, root, &from, &cur); ret == 0 && *n < max; ret = btrfs_cursor_next(fs, &cur)) {
		if (cur.key.objectid != ino || cur.key.type != BTRFS_INODE_REF_KEY)
			return 0;
		out[(*n)++] = cur.key.offset;
	}
	return ret < 0 ? ret : 0;
}

/* New directories above a new inode are logged so that they exist. */
static int log_new_ancestors(struct log_ctx *c, u64 ino)
{
	struct btrfs_fs_info *fs = c->fs;
	u64 parents[16];
	int n;
	int ret = parents_of(fs, c->root, ino, parents, 16, &n);
	for (int i = 0; i < n && !ret; i++) {
		u64 dir = parents[i];
		for (int depth = 0; depth < 4096 && dir != BTRFS_FIRST_FREE_OBJECTID; depth++) {
			struct btrfs_inode d;
			if ((ret = btrfs_read_inode(fs, c->root, dir, &d)))
				return ret;
			if (d.generation != fs->generation)
				break;
			if ((ret = log_inode(c, dir, 0)))
				return ret;
			u64 up[1];
			int m;
			if ((ret = parents_of(fs, c->root, dir, up, 1, &m)) || m == 0)
				break;
			dir = up[0];
		}
	}
	return ret;
}

/* Writes the log's dirty blocks and a superblock that points at it. */
static int sync_log(struct log_ctx *c)
{
	struct btrfs_fs_info *fs = c->fs;
	u8 ri[BTRFS_ROOT_ITEM_SIZE] = {0};
	/* the root item's inode: a directory, as the kernel writes it for log trees */
	btrfs_set_inode_generation(ri, 1);
	btrfs_set_inode_size(ri, 3);
	btrfs_set_inode_nlink(ri, 1);
	btrfs_set_inode_nbytes(ri, fs->nodesize);
	btrfs_set_inode_mode(ri, S_IFDIR_ | 0755);
	btrfs_set_root_generation(ri, fs->generation);
	btrfs_set_root_generation_v2(ri, fs->generation);
	btrfs_set_root_bytenr(ri, c->log->node->start);
	btrfs_set_root_level(ri, (u8)btrfs_level(c->log->node));
	struct btrfs_key k = {BTRFS_TREE_LOG_OBJECTID, BTRFS_ROOT_ITEM_KEY, c->root->objectid};
	u8 *p;
	u32 sz;
	int ret = btrfs_lookup_item(fs, fs->log->root_tree, &k, &p, &sz, 1);
	if (ret == 0)
		memcpy(p, ri, sz < sizeof(ri) ? sz : sizeof(ri));
	else if (ret == BLAB_ENOENT)
		ret = btrfs_insert_item(fs, fs->log->root_tree, &k, ri, sizeof(ri));
	if (ret)
		return ret;
	struct btrfs_root *rs[2] = {c->log, fs->log->root_tree};
	for (int i = 0; i < 2; i++) {
		struct extent_buffer *eb = rs[i]->node;
		if ((ret = walk_blocks(fs, eb, write_log_block, c->st)))
			return ret;
	}
	u8 sb[BTRFS_SUPER_INFO_SIZE];
	memcpy(sb, fs->committed_super, sizeof(sb));
	btrfs_set_super_log_root(sb, fs->log->root_tree->node->start);
	btrfs_set_super_log_root_level(sb, (u8)btrfs_level(fs->log->root_tree->node));
	fs_trace(fs, (struct trace_event){.kind = TRACE_LOG_SYNC, .tree = BTRFS_TREE_LOG_OBJECTID,
					  .bytenr = fs->log->root_tree->node->start, .a = c->log->node->start,
					  .b = fs->generation});
	return btrfs_write_super_buf(fs, sb);
}

static int tree_shape(struct btrfs_fs_info *fs, struct extent_buffer *eb, void *arg)
{
	(void)fs;
	struct btrfs_log_stats *st = arg;
	if (btrfs_level(eb) == 0)
		st->leaves++;
	else
		st->nodes++;
	return 0;
}

/* The modelled cost of an fsync, in microseconds: what the kernel's
 * logging spends its time on, per unit of work this core counts (costs.c's
 * log rows): looking up and locking an inode, searching the log tree for
 * each insert, copying an item and its bytes, moving items aside inside a
 * leaf, and checksumming and submitting each log block. */
static double modelled_cost(const struct btrfs_log_stats *st)
{
	return btrfs_log_cost_ns(st) / 1000.0;
}

u64 btrfs_log_cost_ns(const struct btrfs_log_stats *st)
{
	return btrfs_cost(COST_LOG_INODE, st->inodes_logged) + btrfs_cost(COST_LOG_SEARCH, st->log_searches) +
	       btrfs_cost(COST_LOG_ITEM, st->items_total) + btrfs_cost(COST_LOG_KIB, st->bytes) / 1024 +
	       btrfs_cost(COST_LOG_SHIFT_KIB, st->shifted) / 1024 + btrfs_cost(COST_LOG_FS_LEAF, st->fs_leaves_read) +
	       btrfs_cost(COST_LOG_BLOCK, st->blocks_written);
}

/* Whether this transaction allocated a chunk: the committed chunk tree
 * cannot map what lies in it, so a log may not point there. */
static int chunk_allocated(const struct btrfs_fs_info *fs)
{
	for (size_t i = 0; i < fs->nchunks; i++)
		if (fs->chunks[i].pending)
			return 1;
	return 0;
}

/* Logging found that only a commit makes the change durable: says why
 * (btrfs_sync_file commits). */
static int commit_instead(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_log_stats *st, int why)
{
	st->fallback = why;
	fs_trace(fs, (struct trace_event){.kind = TRACE_FSYNC, .tree = root->objectid, .a = ino, .b = (u64)why});
	return 0;
}

static int log_dentry(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_log_stats *st, int sync);

int btrfs_log_dentry_safe(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_log_stats *st)
{
	return log_dentry(fs, root, ino, st, 1);
}

int btrfs_log_dentry_nosync(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_log_stats *st)
{
	return log_dentry(fs, root, ino, st, 0);
}

int btrfs_sync_log(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_log_stats *st)
{
	if (!fs->log->tree)
		return 0;
	struct log_ctx c = {.fs = fs, .root = root, .log = fs->log->tree, .st = st};
	return sync_log(&c);
}

int btrfs_log_needs_full_sync(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino)
{
	struct btrfs_inode in;
	if (btrfs_read_inode(fs, root, ino, &in))
		return 1;
	struct btrfs_log_inode_state *s = inode_state(fs, ino);
	return !s || needs_full_log(fs, s, &in);
}

static int log_dentry(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, struct btrfs_log_stats *st, int sync)
{
	struct btrfs_inode in;
	int ret;
	if ((ret = btrfs_read_inode(fs, root, ino, &in)))
		return ret;
	int is_dir = (in.mode & S_IFMT_) == S_IFDIR_;
	struct btrfs_log_inode_state *s = inode_state(fs, ino);
	if (!s)
		return fs->err.code;
	int fallback = BTRFS_LOG_LOGGED;
	if (chunk_allocated(fs))
		fallback = BTRFS_LOG_FULL_COMMIT_NEW_CHUNK;
	if (!fallback && s->last_unlink_trans == fs->generation)
		fallback = is_dir ? BTRFS_LOG_FULL_COMMIT_RENAMED_FROM : BTRFS_LOG_FULL_COMMIT_UNLINKED;
	if (!fallback && !is_dir && in.nlink > 1 && s->last_link_trans == fs->generation)
		fallback = BTRFS_LOG_FULL_COMMIT_NEW_LINK;
	if (!fallback && is_dir && s->logged_name_gone_trans == fs->generation)
		fallback = BTRFS_LOG_FULL_COMMIT_LOGGED_NAME_GONE;
	/* nothing since the last commit, unless ordered extents are still in flight:
	 * their completion (which would mark the inode changed) is not waited for by a
	 * fast fsync (the kernel's skip_inode_logging) */
	if (!fallback && in.transid < fs->generation && s->logged_trans != fs->generation && !btrfs_ordered_count(fs, ino))
		fallback = BTRFS_LOG_NOTHING;
	fs_trace(fs, (struct trace_event){.kind = TRACE_FSYNC, .tree = root->objectid, .a = ino, .b = (u64)fallback});
	st->fallback = fallback;
	if (fallback)
		return 0;
	if ((ret = start_log(fs)))
		return ret;
	struct log_ctx c = {.fs = fs, .root = root, .log = fs->log->tree, .st = st, .buf = malloc(fs->nodesize)};
	if (!c.buf)
		return blab_fail(&fs->err, BLAB_ENOMEM, "log copy");
	ret = log_inode(&c, ino, 1);
	/* new inodes named by the logged entries, directories in full */
	for (size_t i = 0; i < c.npending && !ret; i++)
		ret = log_inode(&c, c.pending[i] >> 1, (int)(c.pending[i] & 1));
	if (!ret && in.generation == fs->generation)
		ret = log_new_ancestors(&c, ino);
	free(c.pending);
	free(c.buf);
	if (ret == NEED_FULL_COMMIT)
		return commit_instead(fs, root, ino, st, BTRFS_LOG_FULL_COMMIT_RENAMED_FROM);
	/* the log's own blocks may have needed a new chunk */
	if (!ret && chunk_allocated(fs))
		return commit_instead(fs, root, ino, st, BTRFS_LOG_FULL_COMMIT_NEW_CHUNK);
	if (!ret && sync)
		ret = sync_log(&c);
	if (ret)
		return ret;
	struct extent_buffer *lr = fs->log->tree->node;
	st->level = (u64)btrfs_level(lr);
	walk_blocks(fs, lr, tree_shape, st);
	st->cost = modelled_cost(st);
	return 0;
}
