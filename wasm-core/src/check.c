/*
 * check.c — the core's own consistency check: tree structure, extent
 * accounting, block groups, the free space tree and file system trees.
 * Messages name the tree, block, slot and what is wrong, so that a person
 * can act on them.
 */
#include "check.h"
#include "block-group.h"
#include "ctree.h"
#include "disk-io.h"
#include "extent-tree.h"
#include "print-tree.h"
#include "u64map.h"
#include "bitmap.h"
#include "volumes.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct checker {
	struct btrfs_fs_info *fs;
	struct strbuf *out;
	int errors;
	struct u64map blocks; /* reachable tree block -> struct reached and its set of trees */
	struct u64map index;  /* tree objectid -> its index in fs->roots, plus one */
	size_t words;         /* of a set of trees: fs->nroots bits */
	struct reached *copy; /* room for one struct reached and its set */
};

/* What the walk learned of a tree block. Trees may share blocks (snapshots):
 * a block is read once, and its references counted as the distinct blocks
 * that point at it (or the root item that does), which is what its extent
 * item's refs count. */
struct reached {
	u64 level1;   /* level + 1 */
	u64 owner;    /* its header's owner */
	u64 refs;     /* pointers to it from distinct blocks, and root items */
	u64 roots[];  /* the trees that reach it: bit i for fs->roots[i] (c->words words) */
};

static void problem(struct checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void btrfs_check_vreport(struct strbuf *out, int *errors, const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048]; /* room for two escaped names */
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (++*errors <= 200)
		sb_printf(out, "ERROR: %s%s\n", prefix, buf);
}

static void problem(struct checker *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	btrfs_check_vreport(c->out, &c->errors, "", fmt, ap);
	va_end(ap);
}

#define NO_TREE ((size_t)-1)

/* The index in fs->roots of the tree with this objectid (its first), or NO_TREE. */
static size_t tree_index(const struct checker *c, u64 objectid)
{
	const u64 *i = u64map_get(&c->index, objectid);
	return i ? (size_t)(*i - 1) : NO_TREE;
}

/* Whether tree t (an index, or NO_TREE: none) reaches r. */
static int reaches(const struct reached *r, size_t t) { return t != NO_TREE && bitmap_test(r->roots, t); }

/* Whether the tree objectid reaches r: for TREE_RELOC, any reloc tree a
 * kernel balance left (their indexes follow fs->roots'). */
static int tree_reaches(const struct checker *c, const struct reached *r, u64 objectid)
{
	if (objectid != BTRFS_TREE_RELOC_OBJECTID)
		return reaches(r, tree_index(c, objectid));
	for (size_t j = 0; j < c->fs->nreloc_left; j++)
		if (reaches(r, c->fs->nroots + j))
			return 1;
	return 0;
}

/* Another tree (t) reaches an already checked block: its subtree is marked
 * as reached by that tree too, each block once per tree. */
static void mark_reached(struct checker *c, size_t t, u64 bytenr, int depth)
{
	struct reached *r = u64map_get(&c->blocks, bytenr);
	if (!r || t == NO_TREE || reaches(r, t) || depth > BTRFS_MAX_LEVEL)
		return;
	bitmap_set(r->roots, t);
	if (r->level1 <= 1)
		return;
	struct extent_buffer *eb = btrfs_read_tree_block(c->fs, bytenr, (int)r->level1 - 1, r->owner);
	if (!eb)
		return;
	u32 nr = btrfs_nritems(eb);
	for (u32 i = 0; i < nr; i++) {
		mark_reached(c, t, btrfs_node_blockptr(eb, (int)i), depth + 1);
		if (!(eb = btrfs_find_eb(c->fs, bytenr)))
			return;
	}
}

/* Tree owner (t: its index in fs->roots, NO_TREE: none) from bytenr down.
 * drop (at drop_level): a deleted tree the cleaner is part way through;
 * what lies left of the key was dropped, and is not its own any more. */
static void walk(struct checker *c, u64 owner, size_t t, u64 bytenr, int level, u64 gen, const struct btrfs_key *lo,
		 const struct btrfs_key *hi, int depth, const struct btrfs_key *drop, int drop_level)
{
	struct btrfs_fs_info *fs = c->fs;
	struct reached *seen = u64map_get(&c->blocks, bytenr);
	if (seen) {
		/* a pointer from another block (the caller's, read for the first
		 * time), or another root: one more reference */
		seen->refs++;
		if (seen->level1 != (u64)level + 1)
			problem(c, "tree %lld: block %" PRIu64 " is reached at level %d, elsewhere at level %d", (long long)owner, bytenr,
				level, (int)seen->level1 - 1);
		else if (reaches(seen, t))
			problem(c, "tree %lld: block %" PRIu64 " is referenced twice", (long long)owner, bytenr);
		else
			mark_reached(c, t, bytenr, depth);
		return;
	}
	struct extent_buffer *eb = btrfs_read_tree_block(fs, bytenr, level, owner);
	if (!eb) {
		problem(c, "tree %lld: %s", (long long)owner, fs->err.msg);
		return;
	}
	struct reached *r = u64map_put(&c->blocks, bytenr); /* zeroed: no tree reaches it yet */
	if (r) {
		r->level1 = (u64)level + 1;
		r->owner = btrfs_header_owner(eb->data);
		r->refs = 1;
		if (t != NO_TREE)
			bitmap_set(r->roots, t);
	}
	if (gen && btrfs_header_generation(eb->data) != gen)
		problem(c, "tree %lld: block %" PRIu64 " has generation %" PRIu64 ", its parent expects %" PRIu64, (long long)owner,
			bytenr, btrfs_header_generation(eb->data), gen);
	if (btrfs_header_owner(eb->data) != owner && owner != BTRFS_TREE_RELOC_OBJECTID &&
	    !(owner == BTRFS_FS_TREE_OBJECTID || (owner >= BTRFS_FIRST_FREE_OBJECTID && owner <= BTRFS_LAST_FREE_OBJECTID)))
		problem(c, "tree %lld: block %" PRIu64 " says its owner is %lld", (long long)owner, bytenr,
			(long long)btrfs_header_owner(eb->data));
	if (btrfs_header_generation(eb->data) > btrfs_super_generation(fs->super) + (fs->trans_running ? 1 : 0))
		problem(c, "tree %lld: block %" PRIu64 " generation %" PRIu64 " is newer than the filesystem's %" PRIu64,
			(long long)owner, bytenr, btrfs_header_generation(eb->data), btrfs_super_generation(fs->super));
	u32 nr = btrfs_nritems(eb);
	if (nr == 0 && depth > 0)
		problem(c, "tree %lld: block %" PRIu64 " (level %d) is empty but not the root", (long long)owner, bytenr, level);
	for (u32 i = 0; i < nr; i++) {
		struct btrfs_key k;
		if (level)
			btrfs_node_key(eb, (int)i, &k);
		else
			btrfs_item_key(eb, (int)i, &k);
		if ((lo && btrfs_comp_keys(&k, lo) < 0) || (hi && btrfs_comp_keys(&k, hi) >= 0))
			problem(c, "tree %lld: block %" PRIu64 " slot %u key (%" PRIu64 " %u %" PRIu64 ") is outside the range its parent gives",
				(long long)owner, bytenr, i, k.objectid, k.type, k.offset);
		if (i == 0 && lo && btrfs_comp_keys(&k, lo) != 0)
			problem(c, "tree %lld: block %" PRIu64 " first key (%" PRIu64 " %u %" PRIu64 ") differs from its parent's key (%" PRIu64
				" %u %" PRIu64 ")",
				(long long)owner, bytenr, k.objectid, k.type, k.offset, lo->objectid, lo->type, lo->offset);
	}
	if (!level || depth > BTRFS_MAX_LEVEL)
		return;
	for (u32 i = 0; i < nr; i++) {
		struct btrfs_key k, next;
		btrfs_node_key(eb, (int)i, &k);
		const struct btrfs_key *h = hi;
		if (i + 1 < nr) {
			btrfs_node_key(eb, (int)i + 1, &next);
			h = &next;
		}
		const struct btrfs_key *d = drop;
		if (drop && level > drop_level && h && btrfs_comp_keys(h, drop) <= 0)
			continue; /* wholly left of the path to drop_progress: dropped */
		if (drop && level == drop_level) {
			if (btrfs_comp_keys(&k, drop) < 0)
				continue;
			d = NULL; /* right of it: untouched */
		}
		walk(c, owner, t, btrfs_node_blockptr(eb, (int)i), level - 1, btrfs_key_generation(btrfs_key_ptr_nr(eb, (int)i)), &k,
		     h, depth + 1, d, drop_level);
		eb = btrfs_find_eb(fs, bytenr); /* still cached: blocks are never evicted while reading */
		if (!eb)
			return;
	}
}

/* Whether the node at parent points at bytenr. */
static int points_at(struct checker *c, u64 parent, u64 bytenr)
{
	struct reached *p = u64map_get(&c->blocks, parent);
	if (!p || p->level1 < 2)
		return 0;
	struct extent_buffer *eb = btrfs_read_tree_block(c->fs, parent, (int)p->level1 - 1, p->owner);
	if (!eb)
		return 0;
	for (u32 i = 0; i < btrfs_nritems(eb); i++)
		if (btrfs_node_blockptr(eb, (int)i) == bytenr)
			return 1;
	return 0;
}

/* Whether bytenr is the root block of a reloc tree a kernel balance left
 * (the kernel gives it a full backref whose parent is itself). */
static int is_reloc_root_node(const struct checker *c, u64 bytenr)
{
	for (size_t j = 0; j < c->fs->nreloc_left; j++)
		if (c->fs->reloc_left[j].root->node && c->fs->reloc_left[j].root->node->start == bytenr)
			return 1;
	return 0;
}

struct tree_refs {
	struct checker *c;
	u64 bytenr;
	const struct reached *r;
	u64 n;
};

/* One backref of a tree block: its tree must reach it, or its parent point at it. */
static void tree_backref(struct tree_refs *t, u8 type, u64 offset)
{
	struct checker *c = t->c;
	t->n++;
	if (!t->r)
		return;
	if (type == BTRFS_TREE_BLOCK_REF_KEY) {
		if (!tree_reaches(c, t->r, offset))
			problem(c, "extent tree: tree block %" PRIu64 " has a backref of tree %lld, which does not reach it", t->bytenr,
				(long long)offset);
	} else if (type == BTRFS_SHARED_BLOCK_REF_KEY) {
		if (!points_at(c, offset, t->bytenr) && !(offset == t->bytenr && is_reloc_root_node(c, offset)))
			problem(c, "extent tree: tree block %" PRIu64 " has a shared backref of block %" PRIu64 ", which does not point at it",
				t->bytenr, offset);
	} else {
		problem(c, "extent tree: tree block %" PRIu64 " has a backref of type %u", t->bytenr, type);
	}
}

static int keyed_tree_backref(void *ctx, const struct btrfs_key *k, const u8 *d, u32 sz)
{
	(void)d;
	(void)sz;
	tree_backref(ctx, k->type, k->offset);
	return 0;
}

/* Every reachable tree block has exactly one METADATA_ITEM/EXTENT_ITEM
 * whose references are the blocks and trees that reach it, every tree
 * extent item has a reachable block, and the used bytes of each block group
 * add up. */
static void check_extents(struct checker *c)
{
	struct btrfs_fs_info *fs = c->fs;
	if (btrfs_load_block_groups(fs)) {
		problem(c, "extent tree: %s", fs->err.msg);
		return;
	}
	u64 *used = calloc(fs->nbgs ? fs->nbgs : 1, sizeof(u64));
	struct u64map seen;
	u64map_init(&seen, 1);
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {0, 0, 0};
	int ret = 0;
	for (ret = used ? btrfs_cursor_first(fs, fs->extent_root, &from, &cur) : 1; ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		struct btrfs_key k = cur.key;
		const u8 *p = cur.data;
		u32 sz = cur.size;
		if (k.type == BTRFS_METADATA_ITEM_KEY || k.type == BTRFS_EXTENT_ITEM_KEY) {
			u64 len = k.type == BTRFS_METADATA_ITEM_KEY ? fs->nodesize : k.offset;
			struct btrfs_block_group *bg = btrfs_lookup_block_group(fs, k.objectid);
			if (!bg || k.objectid + len > bg->start + bg->length)
				problem(c, "extent tree: extent %" PRIu64 " len %" PRIu64 " lies outside every block group", k.objectid, len);
			else
				used[bg - fs->bgs] += len;
			if (sz < BTRFS_EXTENT_ITEM_SIZE) {
				problem(c, "extent tree: item (%" PRIu64 " %u %" PRIu64 ") is %u bytes, too small", k.objectid, k.type, k.offset, sz);
			} else if (btrfs_extent_flags(p) & BTRFS_EXTENT_FLAG_TREE_BLOCK) {
				struct reached *lv = u64map_get(&c->blocks, k.objectid);
				u64 flags = btrfs_extent_flags(p), refs = btrfs_extent_refs(p);
				if (!lv)
					problem(c, "extent tree: tree block %" PRIu64 " is accounted but no tree reaches it", k.objectid);
				else if (k.type == BTRFS_METADATA_ITEM_KEY && lv->level1 - 1 != k.offset)
					problem(c, "extent tree: tree block %" PRIu64 " is accounted at level %" PRIu64 " but is at level %" PRIu64,
						k.objectid, k.offset, lv->level1 - 1);
				u8 *s = u64map_put(&seen, k.objectid);
				if (s)
					*s = 1;
				/* copy what the walk learned: reading blocks below may grow the map */
				const struct reached *r0 = lv ? memcpy(c->copy, lv, c->blocks.vsize) : NULL;
				struct tree_refs t = {c, k.objectid, r0, 0};
				u32 off = BTRFS_EXTENT_ITEM_SIZE + (k.type == BTRFS_EXTENT_ITEM_KEY ? BTRFS_TREE_BLOCK_INFO_SIZE : 0);
				while (off + BTRFS_EXTENT_INLINE_REF_SIZE <= sz) {
					tree_backref(&t, p[off], btrfs_extent_inline_ref_offset(p + off));
					off += BTRFS_EXTENT_INLINE_REF_SIZE;
				}
				if (off != sz)
					problem(c, "extent tree: tree block %" PRIu64 ": %u bytes after its inline backrefs", k.objectid, sz - off);
				btrfs_for_each_item(fs, fs->extent_root, k.objectid, BTRFS_TREE_BLOCK_REF_KEY, keyed_tree_backref, &t);
				btrfs_for_each_item(fs, fs->extent_root, k.objectid, BTRFS_SHARED_BLOCK_REF_KEY, keyed_tree_backref, &t);
				if (t.n != refs)
					problem(c, "extent tree: tree block %" PRIu64 " counts %" PRIu64 " references but has %" PRIu64 " backrefs",
						k.objectid, refs, t.n);
				if (r0 && refs != r0->refs)
					problem(c, "extent tree: tree block %" PRIu64 " counts %" PRIu64 " references, but %" PRIu64
						   " blocks or root items point at it",
						k.objectid, refs, r0->refs);
				if (r0 && !(flags & BTRFS_BLOCK_FLAG_FULL_BACKREF) && !tree_reaches(c, r0, r0->owner))
					problem(c, "extent tree: tree block %" PRIu64 " belongs to tree %lld, which does not reach it "
						   "(and it has no FULL_BACKREF)",
						k.objectid, (long long)r0->owner);
				/* after tree_backref read other blocks, cursor data may have moved: it is not used again */
			}
		}
	}
	if (ret < 0)
		problem(c, "extent tree: %s", fs->err.msg);
	size_t i = 0;
	u64 b;
	void *v;
	while (u64map_next(&c->blocks, &i, &b, &v))
		if (!u64map_get(&seen, b))
			problem(c, "extent tree: tree block %" PRIu64 " (tree %lld) has no extent item", b,
				(long long)((struct reached *)v)->owner);
	for (size_t g = 0; used && g < fs->nbgs; g++)
		if (used[g] != fs->bgs[g].used)
			problem(c, "block group %" PRIu64 ": used is %" PRIu64 " but its extents add up to %" PRIu64, fs->bgs[g].start,
				fs->bgs[g].used, used[g]);
	free(used);
	u64map_free(&seen);
}

/* The free space tree records exactly the free space of each block group. */
/* Ranges merged with a block group's superblock copies: the free space tree
 * may record those as free (mkfs.btrfs) or not (the kernel); both are right. */
static size_t with_super(const struct btrfs_block_group *bg, struct free_range *r, size_t n, size_t cap)
{
	for (int i = 0; i < bg->nsb && n < cap; i++)
		r[n++] = bg->sb[i];
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && r[j - 1].start > r[j].start; j--) {
			struct free_range t = r[j];
			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && r[m - 1].start + r[m - 1].len >= r[i].start) {
			u64 e = r[i].start + r[i].len;
			if (e > r[m - 1].start + r[m - 1].len)
				r[m - 1].len = e - r[m - 1].start;
		} else {
			r[m++] = r[i];
		}
	}
	return m;
}

static void check_free_space_tree(struct checker *c)
{
	struct btrfs_fs_info *fs = c->fs;
	if (!fs->fst_root)
		return;
	for (size_t g = 0; g < fs->nbgs; g++) {
		struct btrfs_block_group *bg = &fs->bgs[g];
		struct free_range *want;
		size_t nwant;
		if (btrfs_bg_free_after_commit(fs, bg, &want, &nwant))
			return;
		struct btrfs_item_cursor cur;
		struct btrfs_key key = {bg->start, BTRFS_FREE_SPACE_INFO_KEY, bg->length};
		int ret = btrfs_cursor_first(fs, fs->fst_root, &key, &cur);
		if (ret != 0 || btrfs_comp_keys(&cur.key, &key) || cur.size < BTRFS_FREE_SPACE_INFO_SIZE) {
			problem(c, "free space tree: block group %" PRIu64 " has no FREE_SPACE_INFO", bg->start);
			free(want);
			continue;
		}
		u32 count = btrfs_free_space_extent_count(cur.data);
		u32 flags = btrfs_free_space_flags(cur.data);
		size_t cap = 16, nhave = 0;
		u32 found = 0;
		int bitmaps = 0;
		struct free_range *have = malloc(cap * sizeof(*have));
		while (have && (ret = btrfs_cursor_next(fs, &cur)) == 0) {
			struct btrfs_key k = cur.key;
			if (k.objectid >= bg->start + bg->length || k.type == BTRFS_FREE_SPACE_INFO_KEY)
				break;
			if (k.type == BTRFS_FREE_SPACE_EXTENT_KEY) {
				found++;
				if (nhave + 2 * BTRFS_SUPER_MIRROR_MAX + 1 >= cap) {
					struct free_range *nh = realloc(have, (cap *= 2) * sizeof(*have));
					if (!nh)
						break;
					have = nh;
				}
				have[nhave++] = (struct free_range){k.objectid, k.offset};
			} else if (k.type == BTRFS_FREE_SPACE_BITMAP_KEY) {
				bitmaps = 1; /* bitmaps are btrfs check's to verify */
			}
		}
		if (!(flags & BTRFS_FREE_SPACE_USING_BITMAPS) && !bitmaps && have) {
			if (found != count)
				problem(c, "free space tree: block group %" PRIu64 " info says %u extents, found %u", bg->start, count, found);
			struct free_range *w2 = malloc((nwant + 2 * BTRFS_SUPER_MIRROR_MAX + 1) * sizeof(*w2));
			if (w2) {
				memcpy(w2, want, nwant * sizeof(*w2));
				size_t nw = with_super(bg, w2, nwant, nwant + 2 * BTRFS_SUPER_MIRROR_MAX + 1);
				size_t nh = with_super(bg, have, nhave, cap);
				for (size_t j = 0; j < nw || j < nh; j++) {
					if (j < nw && j < nh && w2[j].start == have[j].start && w2[j].len == have[j].len)
						continue;
					problem(c, "free space tree: block group %" PRIu64 " records free %" PRIu64 "+%" PRIu64
						   " but the free space there is %" PRIu64 "+%" PRIu64,
						bg->start, j < nh ? have[j].start : 0, j < nh ? have[j].len : 0, j < nw ? w2[j].start : 0,
						j < nw ? w2[j].len : 0);
					break;
				}
				free(w2);
			}
		}
		free(have);
		free(want);
	}
}

/* A log tree's blocks from bytenr down (what): none is a block of a
 * committed tree (the log's blocks have no extent items: they are free
 * space until replay), each at the level its parent says, owned by the log. */
static void walk_log(struct checker *c, const char *what, struct u64map *seen, u64 bytenr, int level, int depth)
{
	struct reached *r = u64map_get(&c->blocks, bytenr);
	if (r) {
		problem(c, "%s: block %" PRIu64 " is also a block of tree %lld", what, bytenr, (long long)r->owner);
		return;
	}
	if (u64map_get(seen, bytenr)) {
		problem(c, "%s: block %" PRIu64 " is referenced twice", what, bytenr);
		return;
	}
	u8 *s = u64map_put(seen, bytenr);
	if (s)
		*s = 1;
	struct extent_buffer *eb = btrfs_read_tree_block(c->fs, bytenr, level, BTRFS_TREE_LOG_OBJECTID);
	if (!eb) {
		problem(c, "%s: %s", what, c->fs->err.msg);
		return;
	}
	if (btrfs_header_owner(eb->data) != BTRFS_TREE_LOG_OBJECTID)
		problem(c, "%s: block %" PRIu64 " says its owner is %lld, not the log (-6)", what, bytenr, (long long)btrfs_header_owner(eb->data));
	if (!level || depth > BTRFS_MAX_LEVEL)
		return;
	for (u32 i = 0; i < btrfs_nritems(eb); i++) {
		walk_log(c, what, seen, btrfs_node_blockptr(eb, (int)i), level - 1, depth + 1);
		if (!(eb = btrfs_find_eb(c->fs, bytenr)))
			return;
	}
}

/* The log the superblock names (what a mount would replay): the log root
 * tree at the level the superblock says, and each subvolume's log tree. */
static void check_log(struct checker *c)
{
	struct btrfs_fs_info *fs = c->fs;
	u64 bytenr = btrfs_super_log_root(fs->super);
	if (!bytenr)
		return;
	int level = btrfs_super_log_root_level(fs->super);
	struct u64map seen;
	u64map_init(&seen, 1);
	struct extent_buffer *eb = NULL;
	const struct reached *r = u64map_get(&c->blocks, bytenr);
	if (r)
		problem(c, "log root tree: block %" PRIu64 " is also a block of tree %lld", bytenr, (long long)r->owner);
	else if (level > BTRFS_MAX_LEVEL || !(eb = btrfs_read_tree_block(fs, bytenr, -1, BTRFS_TREE_LOG_OBJECTID)))
		problem(c, "log root tree: %s", level > BTRFS_MAX_LEVEL ? "superblock log_root_level is past the highest level" : fs->err.msg);
	else if (btrfs_level(eb) != level)
		problem(c, "log root tree: superblock says level %d, block %" PRIu64 " is at level %d", level, bytenr, btrfs_level(eb));
	else if (btrfs_header_generation(eb->data) != btrfs_super_generation(fs->super) + 1)
		problem(c, "log root tree: block %" PRIu64 " has generation %" PRIu64 "; a log of the transaction after the last commit has %" PRIu64,
			bytenr, btrfs_header_generation(eb->data), btrfs_super_generation(fs->super) + 1);
	else {
		walk_log(c, "log root tree", &seen, bytenr, level, 0);
		struct btrfs_root lr = {.objectid = BTRFS_TREE_LOG_OBJECTID, .node = btrfs_find_eb(fs, bytenr)};
		struct btrfs_item_cursor cur;
		struct btrfs_key from = {0, 0, 0};
		int ret;
		for (ret = lr.node ? btrfs_cursor_first(fs, &lr, &from, &cur) : 1; ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
			if (cur.key.type != BTRFS_ROOT_ITEM_KEY || cur.size < BTRFS_ROOT_ITEM_V1_SIZE)
				continue;
			char what[64];
			snprintf(what, sizeof(what), "log tree of root %lld", (long long)cur.key.offset);
			struct btrfs_root *sub = btrfs_get_root(fs, cur.key.offset);
			if (!sub || !sub->node || !sub->in_root_tree) {
				problem(c, "%s: no such subvolume", what);
				continue;
			}
			struct btrfs_key k = cur.key;
			walk_log(c, what, &seen, btrfs_root_bytenr(cur.data), btrfs_root_level(cur.data), 0);
			if (btrfs_cursor_first(fs, &lr, &k, &cur) != 0)
				break;
		}
		if (ret < 0)
			problem(c, "log root tree: %s", fs->err.msg);
	}
	u64map_free(&seen);
}

int btrfs_check_fs(struct btrfs_fs_info *fs, struct strbuf *out, int flags)
{
	struct checker c = {.fs = fs, .out = out, .words = bitmap_words(fs->nroots + fs->nreloc_left)};
	u64map_init(&c.blocks, sizeof(struct reached) + c.words * sizeof(u64));
	u64map_init(&c.index, sizeof(u64));
	int oom = !(c.copy = malloc(c.blocks.vsize));
	for (size_t i = 0; i < fs->nroots && !oom; i++) {
		if (u64map_get(&c.index, fs->roots[i]->objectid))
			continue; /* the first of that id is the one it names */
		u64 *ix = u64map_put(&c.index, fs->roots[i]->objectid);
		if (!(oom = !ix))
			*ix = i + 1;
	}
	if (oom) {
		problem(&c, "out of memory for the sets of %zu trees", fs->nroots);
		free(c.copy);
		u64map_free(&c.blocks);
		u64map_free(&c.index);
		return c.errors;
	}
	int trace = fs->trace.enabled;
	fs->trace.enabled = 0;
	/* the root and chunk trees' root blocks are of the generations the superblock gives */
	u64 sg = btrfs_super_generation(fs->super), cg = btrfs_super_chunk_root_generation(fs->super);
	if (!fs->trans_running && btrfs_header_generation(fs->tree_root->node->data) != sg)
		problem(&c, "tree 1: block %" PRIu64 " has generation %" PRIu64 ", the superblock says %" PRIu64, fs->tree_root->node->start,
			btrfs_header_generation(fs->tree_root->node->data), sg);
	if (!fs->trans_running && btrfs_header_generation(fs->chunk_root->node->data) != cg)
		problem(&c, "tree 3: block %" PRIu64 " has generation %" PRIu64 ", the superblock's chunk_root_generation says %" PRIu64,
			fs->chunk_root->node->start, btrfs_header_generation(fs->chunk_root->node->data), cg);
	walk(&c, BTRFS_ROOT_TREE_OBJECTID, tree_index(&c, BTRFS_ROOT_TREE_OBJECTID), fs->tree_root->node->start, btrfs_level(fs->tree_root->node), 0,
	     NULL, NULL, 0, NULL, 0);
	walk(&c, BTRFS_CHUNK_TREE_OBJECTID, tree_index(&c, BTRFS_CHUNK_TREE_OBJECTID), fs->chunk_root->node->start,
	     btrfs_level(fs->chunk_root->node), 0, NULL, NULL, 0, NULL, 0);
	for (size_t i = 0; i < fs->nroots; i++) {
		struct btrfs_root *r = fs->roots[i];
		if (!r->in_root_tree || !r->node)
			continue;
		struct btrfs_key drop;
		btrfs_disk_key_to_cpu(&drop, r->item + BTRFS_ROOT_DROP_PROGRESS_OFF);
		int dl = btrfs_root_drop_level(r->item), dropping = drop.objectid || drop.type || drop.offset;
		if (dropping && (dl < 1 || dl > btrfs_level(r->node))) {
			problem(&c, "tree %llu: drop_level %d, its root at level %d", (unsigned long long)r->objectid, dl, btrfs_level(r->node));
			continue;
		}
		walk(&c, r->objectid, tree_index(&c, r->objectid), r->node->start, btrfs_level(r->node), 0, NULL, NULL, 0, dropping ? &drop : NULL, dl);
	}
	/* the reloc trees a kernel balance left: their blocks and references are
	 * the extent tree's until the kernel merges and drops them */
	for (size_t j = 0; j < fs->nreloc_left; j++) {
		const struct btrfs_reloc_left *l = &fs->reloc_left[j];
		struct btrfs_root *r = l->root, *sub = btrfs_get_root(fs, r->item_offset);
		unsigned long long id = (unsigned long long)r->item_offset;
		if (!sub || !sub->in_root_tree || !btrfs_root_shareable(sub))
			problem(&c, "reloc tree (TREE_RELOC ROOT_ITEM %llu): no subvolume %llu to merge it into", id, id);
		if (!r->node) {
			problem(&c, "reloc tree (TREE_RELOC ROOT_ITEM %llu): %s", id, l->why);
			continue;
		}
		struct btrfs_key drop;
		btrfs_disk_key_to_cpu(&drop, r->item + BTRFS_ROOT_DROP_PROGRESS_OFF);
		/* merging (refs 1), drop_progress is how far it got: the reloc tree still
		 * holds every block, the subvolume's old ones where it swapped; dropped
		 * after the merge (refs 0), what lies left of it is gone */
		int dl = btrfs_root_drop_level(r->item), dropping = !btrfs_root_refs(r->item) && (drop.objectid || drop.type || drop.offset);
		if (dropping && (dl < 1 || dl > btrfs_level(r->node))) {
			problem(&c, "reloc tree (TREE_RELOC ROOT_ITEM %llu): drop_level %d, its root at level %d", id, dl, btrfs_level(r->node));
			continue;
		}
		walk(&c, BTRFS_TREE_RELOC_OBJECTID, fs->nroots + j, r->node->start, btrfs_level(r->node), 0, NULL, NULL, 0,
		     dropping ? &drop : NULL, dl);
	}
	check_extents(&c);
	check_free_space_tree(&c);
	check_log(&c);
	c.errors += btrfs_check_roots(fs, out);
	c.errors += btrfs_check_volumes(fs, out);
	c.errors += btrfs_verify_layout(fs, out); /* what the writers refuse at open */
	c.errors += btrfs_check_inodes(fs, out, flags);
	fs->trace.enabled = trace;
	u64map_free(&c.blocks);
	u64map_free(&c.index);
	free(c.copy);
	if (c.errors > 200)
		sb_printf(out, "... and %d more errors\n", c.errors - 200);
	return c.errors;
}

int btrfs_check_clean(struct btrfs_fs_info *fs, const char *what)
{
	struct strbuf out = {0};
	int n = btrfs_check_fs(fs, &out, 0);
	if (!n) {
		sb_free(&out);
		return 0;
	}
	const char *first = out.s ? out.s : "";
	if (!strncmp(first, "ERROR: ", 7))
		first += 7;
	int len = (int)strcspn(first, "\n");
	blab_fail(&fs->err, BLAB_ECORRUPT, "%s%scheck finds %d error%s, the first: %.*s (btrfslab check lists them)", what ? what : "",
		  what ? ": " : "", n, n == 1 ? "" : "s", len > 300 ? 300 : len, first);
	sb_free(&out);
	return BLAB_ECORRUPT;
}
