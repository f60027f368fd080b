#include "qgroup.h"
#include "ctree.h"
#include "disk-io.h"
#include "extent-tree.h"
#include "file-item.h"
#include "transaction.h"
#include "u64map.h"
#include "delayed-ref.h"
#include "print-tree.h"
#include "root-tree.h"
#include "array.h"
#include "delalloc.h"
#include "ordered-data.h"
#include "bitmap.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct btrfs_qgroup_state {
	int enabled;
	u64 flags;                    /* QGROUP_STATUS flags */
	int status_dirty;
	struct btrfs_qgroup *g;       /* sorted by id */
	size_t n, cap;
	struct u64map dirty;          /* extents whose references changed: bytenr -> bytes (0: a tree block) */
	u64 (*relations_new)[2];      /* relations to write at commit */
	size_t nrelations_new, caprelations_new;
	u64 last_dirty;               /* extents the last commit accounted */
	/* the kernel's qgroup records (dirty extents) of this transaction, as
	 * btrfs_qgroup_num_dirty_extents counts them at commit: the reference
	 * changes of subvolume trees and what is traced (accounting itself runs
	 * over every changed extent, a superset: the numbers do not depend on it) */
	struct u64map recorded;
	u64 dirty_total;              /* summed over the commits */
	int swap_mode;                /* enum btrfs_qgroup_swap_mode */
	struct u64map swapped;        /* deferred: a swapped-in block -> the block it replaced (level in the top byte), last_snapshot */
	u64 counted_gen;              /* the transaction whose records were counted (its commit is running) */
};

#define QGROUP_ITEM_SIZE 40
#define MAX_QGROUPS 4096

int btrfs_qgroup_init(struct btrfs_fs_info *fs)
{
	if (!(fs->qgroup = calloc(1, sizeof(*fs->qgroup))))
		return BLAB_ENOMEM;
	u64map_init(&fs->qgroup->dirty, sizeof(u64));
	u64map_init(&fs->qgroup->recorded, 1);
	u64map_init(&fs->qgroup->swapped, 2 * sizeof(u64));
	fs->qgroup->swap_mode = BTRFS_QGROUP_SWAP_DEFERRED;
	return 0;
}

void btrfs_qgroup_free(struct btrfs_fs_info *fs)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		free(q->g[i].parents);
	free(q->g);
	free(q->relations_new);
	u64map_free(&q->dirty);
	u64map_free(&q->recorded);
	u64map_free(&q->swapped);
	free(q);
	fs->qgroup = NULL;
}

int btrfs_qgroup_clone(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src)
{
	struct btrfs_qgroup_state *d = dst->qgroup, *s = src->qgroup;
	int ret = 0;
	u64map_free(&d->dirty);
	u64map_free(&d->recorded);
	u64map_free(&d->swapped);
	free(d->relations_new);
	struct u64map keep = d->dirty, keep_rec = d->recorded, keep_sw = d->swapped;
	*d = *s;
	d->dirty = keep;
	d->recorded = keep_rec;
	d->swapped = keep_sw;
	d->relations_new = array_dup(s->relations_new, s->nrelations_new, s->caprelations_new, sizeof(*s->relations_new), &ret);
	if (!d->relations_new)
		d->nrelations_new = d->caprelations_new = 0;
	d->g = array_dup(s->g, s->n, s->cap, sizeof(*s->g), &ret);
	if (!d->g) {
		d->n = d->cap = 0;
		return ret ? ret : 0;
	}
	for (size_t i = 0; i < d->n; i++)
		d->g[i].parents = NULL;
	for (size_t i = 0; i < d->n && !ret; i++)
		if (s->g[i].nparents)
			d->g[i].parents = array_dup(s->g[i].parents, s->g[i].nparents, s->g[i].capparents, sizeof(u64), &ret);
	if (!ret && (u64map_clone(&d->dirty, &s->dirty) || u64map_clone(&d->recorded, &s->recorded) || u64map_clone(&d->swapped, &s->swapped)))
		ret = BLAB_ENOMEM;
	return ret ? blab_fail(&dst->err, ret, "qgroups") : 0;
}

int btrfs_qgroup_enabled(const struct btrfs_fs_info *fs) { return fs->qgroup && fs->qgroup->enabled; }
u64 btrfs_qgroup_status(const struct btrfs_fs_info *fs) { return fs->qgroup ? fs->qgroup->flags : 0; }
u64 btrfs_qgroup_last_dirty(const struct btrfs_fs_info *fs) { return fs->qgroup ? fs->qgroup->last_dirty : 0; }

const struct btrfs_qgroup *btrfs_qgroups(const struct btrfs_fs_info *fs, size_t *n)
{
	*n = fs->qgroup ? fs->qgroup->n : 0;
	return fs->qgroup ? fs->qgroup->g : NULL;
}

const char *btrfs_qgroup_name(u64 id, char *buf, size_t n)
{
	snprintf(buf, n, "%llu/%llu", (unsigned long long)(id >> BTRFS_QGROUP_LEVEL_SHIFT),
		 (unsigned long long)(id & ((1ULL << BTRFS_QGROUP_LEVEL_SHIFT) - 1)));
	return buf;
}

int btrfs_qgroup_parse(const char *s, u64 *id)
{
	char *end;
	unsigned long long a = strtoull(s, &end, 10), b;
	if (end == s || s[0] == '-')
		return BLAB_EINVAL;
	if (*end == '/') {
		const char *t = end + 1;
		b = strtoull(t, &end, 10);
		if (end == t || *end || t[0] == '-' || a > 0xffff || b >= (1ULL << BTRFS_QGROUP_LEVEL_SHIFT))
			return BLAB_EINVAL;
		*id = (u64)a << BTRFS_QGROUP_LEVEL_SHIFT | b;
		return 0;
	}
	if (*end || a >= (1ULL << BTRFS_QGROUP_LEVEL_SHIFT))
		return BLAB_EINVAL;
	*id = a;
	return 0;
}

static struct btrfs_qgroup *find(struct btrfs_fs_info *fs, u64 id)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	size_t lo = 0, hi = q->n; /* q->g is sorted by id */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (q->g[mid].id == id)
			return &q->g[mid];
		if (q->g[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct btrfs_qgroup *add(struct btrfs_fs_info *fs, u64 id)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	struct btrfs_qgroup *g = find(fs, id);
	if (g)
		return g;
	if (q->n >= MAX_QGROUPS) {
		blab_fail(&fs->err, BLAB_ENOTSUP, "more than %d qgroups", MAX_QGROUPS);
		return NULL;
	}
	if (array_room(&q->g, q->n, &q->cap, sizeof(*q->g), 16)) {
		blab_fail(&fs->err, BLAB_ENOMEM, "qgroups");
		return NULL;
	}
	size_t at = q->n;
	while (at && q->g[at - 1].id > id)
		at--;
	memmove(&q->g[at + 1], &q->g[at], (q->n - at) * sizeof(*q->g));
	q->n++;
	q->g[at] = (struct btrfs_qgroup){.id = id, .dirty = 1};
	return &q->g[at];
}

static int add_parent(struct btrfs_fs_info *fs, struct btrfs_qgroup *g, u64 parent)
{
	for (size_t i = 0; i < g->nparents; i++)
		if (g->parents[i] == parent)
			return 0;
	if (array_room(&g->parents, g->nparents, &g->capparents, sizeof(u64), 4))
		return blab_fail(&fs->err, BLAB_ENOMEM, "qgroup relations");
	g->parents[g->nparents++] = parent;
	return 0;
}

/* ---- the quota tree on disk ---- */

int btrfs_qgroup_load(struct btrfs_fs_info *fs)
{
	struct btrfs_root *r = btrfs_get_root(fs, BTRFS_QUOTA_TREE_OBJECTID);
	if (!r || !r->node)
		return 0;
	struct btrfs_qgroup_state *q = fs->qgroup;
	struct btrfs_item_cursor c;
	struct btrfs_key from = {0, 0, 0};
	int ret;
	for (ret = btrfs_cursor_first(fs, r, &from, &c); ret == 0; ret = btrfs_cursor_next(fs, &c)) {
		const struct btrfs_key *k = &c.key;
		const u8 *p = c.data;
		if (k->type == BTRFS_QGROUP_STATUS_KEY) {
			if (c.size < 32)
				return blab_fail(&fs->err, BLAB_ECORRUPT, "quota tree: QGROUP_STATUS of %u bytes", c.size);
			q->enabled = 1;
			q->flags = get_le64(p + 16);
		} else if (k->type == BTRFS_QGROUP_INFO_KEY || k->type == BTRFS_QGROUP_LIMIT_KEY) {
			if (c.size < QGROUP_ITEM_SIZE)
				return blab_fail(&fs->err, BLAB_ECORRUPT, "quota tree: item (0 %u %" PRIu64 ") of %u bytes", k->type, k->offset,
						 c.size);
			struct btrfs_qgroup *g = add(fs, k->offset);
			if (!g)
				return fs->err.code;
			g->dirty = 0;
			if (k->type == BTRFS_QGROUP_INFO_KEY) {
				g->generation = get_le64(p);
				g->rfer = get_le64(p + 8);
				g->excl = get_le64(p + 24);
			} else {
				g->lim_flags = get_le64(p);
				g->max_rfer = get_le64(p + 8);
				g->max_excl = get_le64(p + 16);
				g->rsv_rfer = get_le64(p + 24);
				g->rsv_excl = get_le64(p + 32);
			}
		} else if (k->type == BTRFS_QGROUP_RELATION_KEY && k->objectid < k->offset) {
			struct btrfs_qgroup *g = add(fs, k->objectid);
			if (!g || add_parent(fs, g, k->offset))
				return fs->err.code;
			g->dirty = 0;
		}
	}
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < q->n; i++)
		q->g[i].dirty = 0;
	return 0;
}

/* Writes item (0 type id) of the quota tree with 40 bytes of data. */
static int put_item(struct btrfs_fs_info *fs, struct btrfs_root *r, u8 type, u64 id, const u8 *data, u32 size)
{
	struct btrfs_key key = {0, type, id};
	u8 *p;
	u32 sz;
	int ret = btrfs_lookup_item(fs, r, &key, &p, &sz, 1);
	if (ret == BLAB_ENOENT)
		return btrfs_insert_item(fs, r, &key, data, size);
	if (!ret)
		memcpy(p, data, sz < size ? sz : size);
	return ret;
}

static int write_items(struct btrfs_fs_info *fs)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	for (size_t i = 0; i < q->n; i++)
		if (q->g[i].dirty)
			fs_trace(fs, (struct trace_event){.kind = TRACE_QGROUP_UPDATE, .tree = q->g[i].id, .a = q->g[i].rfer, .b = q->g[i].excl});
	struct btrfs_root *r = btrfs_get_root(fs, BTRFS_QUOTA_TREE_OBJECTID);
	if (!r)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "quotas are on but there is no quota tree");
	u8 b[QGROUP_ITEM_SIZE];
	int ret = 0;
	if (q->status_dirty) {
		memset(b, 0, sizeof(b));
		put_le64(b, 1); /* version */
		put_le64(b + 8, fs->generation);
		put_le64(b + 16, q->flags);
		put_le64(b + 24, (u64)-1); /* rescan progress: done */
		if ((ret = put_item(fs, r, BTRFS_QGROUP_STATUS_KEY, 0, b, sizeof(b))))
			return ret;
		q->status_dirty = 0;
	}
	for (size_t i = 0; i < q->n && !ret; i++) {
		struct btrfs_qgroup *g = &q->g[i];
		if (!g->dirty)
			continue;
		g->generation = fs->generation;
		put_le64(b, g->generation);
		put_le64(b + 8, g->rfer);
		put_le64(b + 16, g->rfer);
		put_le64(b + 24, g->excl);
		put_le64(b + 32, g->excl);
		if ((ret = put_item(fs, r, BTRFS_QGROUP_INFO_KEY, g->id, b, sizeof(b))))
			break;
		put_le64(b, g->lim_flags);
		put_le64(b + 8, g->max_rfer);
		put_le64(b + 16, g->max_excl);
		put_le64(b + 24, g->rsv_rfer);
		put_le64(b + 32, g->rsv_excl);
		if ((ret = put_item(fs, r, BTRFS_QGROUP_LIMIT_KEY, g->id, b, sizeof(b))))
			break;
		g->dirty = 0;
	}
	for (size_t i = 0; i < q->nrelations_new && !ret; i++) {
		u64 c = q->relations_new[i][0], p = q->relations_new[i][1];
		struct btrfs_key k1 = {c, BTRFS_QGROUP_RELATION_KEY, p}, k2 = {p, BTRFS_QGROUP_RELATION_KEY, c};
		if ((ret = btrfs_insert_item(fs, r, &k1, NULL, 0)) == BLAB_EEXIST)
			ret = 0;
		if (!ret && (ret = btrfs_insert_item(fs, r, &k2, NULL, 0)) == BLAB_EEXIST)
			ret = 0;
	}
	q->nrelations_new = 0;
	return ret;
}

/* ---- which trees reach which extents ---- */

/* The qgroups of subvolume root_id: its own and every group above it, each
 * once. Relations read from a hostile image may make cycles or a lattice of
 * any width: the walk adds a group only when it is new, so it ends after at
 * most one visit per qgroup named (no fixed bound on parents: a subvolume
 * may be in any number of groups, as in the kernel). */
struct qgroup_ids {
	u64 *ids;
	size_t n, cap;
	struct u64map seen;
};

static void ids_free(struct qgroup_ids *l)
{
	free(l->ids);
	u64map_free(&l->seen);
}

static int ids_add(struct btrfs_fs_info *fs, struct qgroup_ids *l, u64 id)
{
	size_t had = l->seen.len;
	if (!u64map_put(&l->seen, id) || array_room(&l->ids, l->n, &l->cap, sizeof(u64), 16))
		return blab_fail(&fs->err, BLAB_ENOMEM, "qgroups above a subvolume");
	if (l->seen.len > had)
		l->ids[l->n++] = id;
	return 0;
}

/* 0 (l filled, to be freed with ids_free) or ENOMEM. */
static int groups_of(struct btrfs_fs_info *fs, u64 root_id, struct qgroup_ids *l)
{
	*l = (struct qgroup_ids){0};
	u64map_init(&l->seen, 1);
	if (!find(fs, root_id))
		return 0;
	int ret = ids_add(fs, l, root_id);
	for (size_t at = 0; at < l->n && !ret; at++) {
		struct btrfs_qgroup *g = find(fs, l->ids[at]);
		for (size_t p = 0; g && p < g->nparents && !ret; p++)
			ret = ids_add(fs, l, g->parents[p]);
	}
	return ret;
}

/* The trees qgroups count, numbered densely: bit k of a reach set stands
 * for roots[k], the k-th shareable tree in fs->roots (the fs tree and the
 * subvolumes), so a set is as wide as there are subvolumes, whatever the
 * other trees. groups[gfirst[k] .. gfirst[k + 1]) are the qgroups holding
 * roots[k], its own and those above it, as indexes into q->g (valid while
 * no qgroup is added or removed). Made for one accounting and freed after. */
struct reach_sets {
	size_t n, words;
	struct btrfs_root **roots;
	size_t *gfirst;
	u32 *groups;
	size_t ngroups, capgroups;
	u64 *zero; /* the empty set */
};

static void sets_free(struct reach_sets *s)
{
	free(s->roots);
	free(s->gfirst);
	free(s->groups);
	free(s->zero);
}

/* 0, or ENOMEM (s then still freeable). */
static int sets_init(struct btrfs_fs_info *fs, struct reach_sets *s)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	*s = (struct reach_sets){0};
	for (size_t i = 0; i < fs->nroots; i++)
		s->n += btrfs_root_shareable(fs->roots[i]) != 0;
	s->words = bitmap_words(s->n);
	s->roots = malloc((s->n + 1) * sizeof(*s->roots));
	s->gfirst = malloc((s->n + 1) * sizeof(*s->gfirst));
	s->zero = calloc(s->words, sizeof(u64));
	if (!s->roots || !s->gfirst || !s->zero)
		return blab_fail(&fs->err, BLAB_ENOMEM, "qgroups: the sets of %zu subvolumes", s->n);
	size_t k = 0;
	for (size_t i = 0; i < fs->nroots; i++) {
		if (!btrfs_root_shareable(fs->roots[i]))
			continue;
		struct qgroup_ids l;
		if (groups_of(fs, fs->roots[i]->objectid, &l)) {
			ids_free(&l);
			return fs->err.code;
		}
		s->gfirst[k] = s->ngroups;
		s->roots[k++] = fs->roots[i];
		for (size_t j = 0; j < l.n; j++) {
			struct btrfs_qgroup *g = find(fs, l.ids[j]);
			if (!g)
				continue;
			if (array_room(&s->groups, s->ngroups, &s->capgroups, sizeof(*s->groups), 64)) {
				ids_free(&l);
				return blab_fail(&fs->err, BLAB_ENOMEM, "qgroups: the sets of %zu subvolumes", s->n);
			}
			s->groups[s->ngroups++] = (u32)(g - q->g);
		}
		ids_free(&l);
	}
	s->gfirst[k] = s->ngroups;
	return 0;
}

/* The set at bytenr in map m (of sets s->words wide), added empty if absent:
 * NULL, with fs->err set, on ENOMEM. Points into m until m next grows. */
static u64 *set_at(struct btrfs_fs_info *fs, struct u64map *m, u64 bytenr)
{
	u64 *v = u64map_put(m, bytenr);
	if (!v)
		blab_fail(&fs->err, BLAB_ENOMEM, "qgroup walk");
	return v;
}

/* A tree the cleaner is part way through (drop_progress key at drop_level):
 * the blocks on the path to the key are still its own, and what lies right
 * of the path; what lay left is dropped (its blocks freed, or others' now).
 * k: its bit. */
static int reach_dropping(struct btrfs_fs_info *fs, u64 bytenr, int level, const struct btrfs_key *key, int drop_level, size_t k,
			  struct u64map *mask, struct u64map *lv)
{
	if (drop_level < 1 || drop_level > level)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "a deleted tree's drop_level %d (its root at level %d)", drop_level, level);
	for (int l = level; l >= drop_level; l--) {
		u64 *m = set_at(fs, mask, bytenr);
		if (!m)
			return fs->err.code;
		bitmap_set(m, k);
		struct extent_buffer *eb = btrfs_read_tree_block(fs, bytenr, l, 0);
		if (!eb)
			return fs->err.code;
		int slot;
		if (btrfs_bin_search(eb, key, &slot) && slot > 0)
			slot--;
		u32 nr = btrfs_nritems(eb);
		for (u32 s = (u32)slot + (l > drop_level); s < nr; s++) {
			u64 *cm = set_at(fs, &lv[l - 1], btrfs_node_blockptr(eb, (int)s));
			if (!cm)
				return fs->err.code;
			bitmap_set(cm, k);
		}
		bytenr = btrfs_node_blockptr(eb, slot);
	}
	return 0;
}

/* Every block and data extent the subvolume trees reach, as they are now
 * (commit 0) or as last committed (1): bytenr -> the set of trees (bit k:
 * sets->roots[k]; mask holds sets sets->words wide). sizes: data extent ->
 * its length. Each block is read once: its trees are gathered from all its
 * parents first, level by level down. */
static int reach(struct btrfs_fs_info *fs, const struct reach_sets *sets, int commit, struct u64map *mask, struct u64map *sizes)
{
	size_t words = sets->words;
	struct u64map level[BTRFS_MAX_LEVEL];
	for (int l = 0; l < BTRFS_MAX_LEVEL; l++)
		u64map_init(&level[l], words * sizeof(u64));
	int ret = 0;
	for (size_t k = 0; k < sets->n && !ret; k++) {
		struct btrfs_root *r = sets->roots[k];
		/* a tree dropped in this transaction still counts before (its commit root) */
		if (!commit && !r->in_root_tree)
			continue;
		u64 b = commit ? r->commit_bytenr : r->node ? r->node->start : 0;
		int l = commit ? r->commit_level : r->node ? btrfs_level(r->node) : 0;
		if (!b)
			continue;
		if (l < 0 || l >= BTRFS_MAX_LEVEL) {
			ret = blab_fail(&fs->err, BLAB_ECORRUPT, "tree %llu: root at level %d", (unsigned long long)r->objectid, l);
			break;
		}
		struct btrfs_key dk;
		int dl = r->commit_drop_level;
		if (commit)
			dk = r->commit_drop_progress;
		else {
			btrfs_disk_key_to_cpu(&dk, r->item + BTRFS_ROOT_DROP_PROGRESS_OFF);
			dl = btrfs_root_drop_level(r->item);
		}
		if (dk.objectid || dk.type || dk.offset) {
			ret = reach_dropping(fs, b, l, &dk, dl, k, mask, level);
			continue;
		}
		u64 *m = set_at(fs, &level[l], b);
		if (!m)
			ret = fs->err.code;
		else
			bitmap_set(m, k);
	}
	for (int l = BTRFS_MAX_LEVEL - 1; l >= 0 && !ret; l--) {
		size_t it = 0;
		u64 b;
		void *v;
		/* level[l] does not change while it is read (children go to level[l - 1] or mask): v stays put */
		while (!ret && u64map_next(&level[l], &it, &b, &v)) {
			const u64 *m = v;
			u64 *mm = set_at(fs, mask, b);
			if (!mm) {
				ret = fs->err.code;
				break;
			}
			bitmap_or(mm, m, words);
			struct extent_buffer *eb = btrfs_read_tree_block(fs, b, l, 0);
			if (!eb) {
				ret = fs->err.code;
				break;
			}
			u32 nr = btrfs_nritems(eb);
			for (u32 s = 0; s < nr && !ret; s++) {
				u64 child = 0, len = 0, *cm;
				struct u64map *into = NULL;
				if (l) {
					child = btrfs_node_blockptr(eb, (int)s);
					into = &level[l - 1];
				} else {
					struct btrfs_key k;
					btrfs_item_key(eb, (int)s, &k);
					const u8 *fi = btrfs_item_ptr(eb, (int)s);
					if (k.type != BTRFS_EXTENT_DATA_KEY || btrfs_item_size_nr(eb, (int)s) < BTRFS_FILE_EXTENT_SIZE ||
					    btrfs_file_extent_type(fi) == BTRFS_FILE_EXTENT_INLINE || !btrfs_file_extent_disk_bytenr(fi))
						continue;
					child = btrfs_file_extent_disk_bytenr(fi);
					len = btrfs_file_extent_disk_num_bytes(fi);
					into = mask;
					u64 *sz = u64map_put(sizes, child);
					if (sz)
						*sz = len;
				}
				if (!(cm = set_at(fs, into, child)))
					ret = fs->err.code;
				else
					bitmap_or(cm, m, words);
			}
		}
	}
	for (int l = 0; l < BTRFS_MAX_LEVEL; l++)
		u64map_free(&level[l]);
	return ret;
}

/* How many of the trees in set each qgroup holds: counts[qgroup index]. */
static void count_holders(struct btrfs_fs_info *fs, const struct reach_sets *s, const u64 *set, u32 *counts)
{
	memset(counts, 0, fs->qgroup->n * sizeof(*counts));
	for (size_t k = bitmap_next(set, 0, s->n); k < s->n; k = bitmap_next(set, k + 1, s->n))
		for (size_t j = s->gfirst[k]; j < s->gfirst[k + 1]; j++)
			counts[s->groups[j]]++;
}

/* One extent of size bytes went from the trees in set old to those in new. */
static void account_one(struct btrfs_fs_info *fs, const struct reach_sets *s, const u64 *old, const u64 *new, u64 size, u32 *co,
			u32 *cn)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	count_holders(fs, s, old, co);
	count_holders(fs, s, new, cn);
	u32 no = bitmap_weight(old, s->words), nn = bitmap_weight(new, s->words);
	for (size_t g = 0; g < q->n; g++) {
		int oref = co[g] > 0, nref = cn[g] > 0;
		int oex = oref && co[g] == no, nex = nref && cn[g] == nn;
		struct btrfs_qgroup *qg = &q->g[g];
		if (oref != nref) {
			qg->rfer += nref ? size : (u64)-size;
			qg->dirty = 1;
		}
		if (oex != nex) {
			qg->excl += nex ? size : (u64)-size;
			qg->dirty = 1;
		}
	}
}

/* The extent is accounted at the next commit (num_bytes 0: a tree block). */
static int mark_dirty(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes)
{
	u64 *v = u64map_put(&fs->qgroup->dirty, bytenr);
	if (!v)
		return blab_fail(&fs->err, BLAB_ENOMEM, "qgroup dirty extents");
	*v = num_bytes;
	return 0;
}

int btrfs_qgroup_changed(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes, int recorded)
{
	if (!btrfs_qgroup_enabled(fs))
		return 0;
	int ret = mark_dirty(fs, bytenr, num_bytes);
	/* changes the commit makes after counting are accounted with the next
	 * transaction's, but were the kernel's records of this one */
	return ret || !recorded || fs->qgroup->counted_gen == fs->generation ? ret : btrfs_qgroup_note(fs, bytenr);
}

int btrfs_qgroup_record_extent(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes)
{
	if (!btrfs_qgroup_enabled(fs))
		return 0;
	int ret = mark_dirty(fs, bytenr, num_bytes);
	return ret ? ret : btrfs_qgroup_note(fs, bytenr);
}

int btrfs_qgroup_note(struct btrfs_fs_info *fs, u64 bytenr)
{
	if (!btrfs_qgroup_enabled(fs))
		return 0;
	if (!u64map_put(&fs->qgroup->recorded, bytenr))
		return blab_fail(&fs->err, BLAB_ENOMEM, "qgroup records");
	return 0;
}

int btrfs_qgroup_account(struct btrfs_fs_info *fs)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	if (!btrfs_qgroup_enabled(fs))
		return 0;
	/* the extents whose references changed: those run this transaction, and the queued ones */
	size_t it = 0;
	u64 b;
	void *v;
	while (u64map_next(&fs->delayed_refs, &it, &b, &v)) {
		const struct delayed_ref_head *h = v;
		/* every changed extent is accounted; those the kernel records are counted */
		int ret = btrfs_qgroup_changed(fs, b, h->is_data ? h->num_bytes : 0, h->qgroup);
		if (ret)
			return ret;
	}
	q->last_dirty = q->dirty.len;
	/* the kernel's btrfs_qgroup_num_dirty_extents tracepoint */
	fs_trace(fs, (struct trace_event){.kind = TRACE_QGROUP_DIRTY, .a = fs->generation, .b = q->recorded.len});
	q->dirty_total += q->recorded.len;
	q->counted_gen = fs->generation;
	u64map_clear(&q->recorded);
	u64map_clear(&q->swapped);
	int ret = 0;
	/* inconsistent numbers are still moved (a rescan sets them right): level 0 stays exact */
	if (q->dirty.len) {
		struct reach_sets sets;
		ret = sets_init(fs, &sets);
		struct u64map oldm, newm, sizes;
		u64map_init(&oldm, sets.words * sizeof(u64));
		u64map_init(&newm, sets.words * sizeof(u64));
		u64map_init(&sizes, sizeof(u64));
		u32 *co = calloc(q->n + 1, sizeof(u32)), *cn = calloc(q->n + 1, sizeof(u32));
		if (!ret && (!co || !cn))
			ret = blab_fail(&fs->err, BLAB_ENOMEM, "qgroups");
		if (!ret)
			ret = reach(fs, &sets, 1, &oldm, &sizes);
		if (!ret)
			ret = reach(fs, &sets, 0, &newm, &sizes);
		it = 0;
		while (!ret && u64map_next(&q->dirty, &it, &b, &v)) {
			const u64 *om = u64map_get(&oldm, b), *nm = u64map_get(&newm, b);
			const u64 *o = om ? om : sets.zero, *n = nm ? nm : sets.zero;
			if (bitmap_equal(o, n, sets.words))
				continue;
			u64 size = *(u64 *)v;
			if (!size) {
				u64 *sz = u64map_get(&sizes, b);
				size = sz ? *sz : fs->nodesize;
			}
			fs_trace(fs, (struct trace_event){.kind = TRACE_QGROUP_EXTENT, .bytenr = b, .a = size, .slot = (int)bitmap_weight(o, sets.words),
							  .level = (int)bitmap_weight(n, sets.words)});
			for (size_t k = 0; k < sets.n; k++)
				for (int after = 0; after < 2; after++)
					if (bitmap_test(after ? n : o, k))
						fs_trace(fs, (struct trace_event){.kind = TRACE_QGROUP_ROOT, .bytenr = b, .tree = sets.roots[k]->objectid,
										  .a = (u64)after});
			account_one(fs, &sets, o, n, size, co, cn);
		}
		free(co);
		free(cn);
		u64map_free(&oldm);
		u64map_free(&newm);
		u64map_free(&sizes);
		sets_free(&sets);
	}
	u64map_clear(&q->dirty);
	/* what writes reserved is accounted now: the reservations go (the
	 * kernel frees them as the delayed refs carrying them are accounted) */
	for (size_t i = 0; i < q->n; i++)
		q->g[i].reserved = 0;
	q->status_dirty = 1; /* its generation: this commit's */
	return ret ? ret : write_items(fs);
}

void btrfs_qgroup_committed(struct btrfs_fs_info *fs)
{
	for (size_t i = 0; i < fs->nroots; i++) {
		struct btrfs_root *r = fs->roots[i];
		r->commit_bytenr = r->node ? r->node->start : 0;
		r->commit_level = r->node ? btrfs_level(r->node) : 0;
		btrfs_disk_key_to_cpu(&r->commit_drop_progress, r->item + BTRFS_ROOT_DROP_PROGRESS_OFF);
		r->commit_drop_level = btrfs_root_drop_level(r->item);
	}
}

/* ---- commands ---- */

int btrfs_qgroup_rescan(struct btrfs_fs_info *fs)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	if (!q->enabled)
		return blab_fail(&fs->err, BLAB_EINVAL, "quotas are not enabled (quota enable)");
	int ret = btrfs_commit_transaction(fs);
	if (ret || (ret = btrfs_start_transaction(fs)))
		return ret;
	struct reach_sets sets;
	ret = sets_init(fs, &sets);
	struct u64map m, sizes;
	u64map_init(&m, sets.words * sizeof(u64));
	u64map_init(&sizes, sizeof(u64));
	u32 *co = calloc(q->n + 1, sizeof(u32)), *cn = calloc(q->n + 1, sizeof(u32));
	if (!ret)
		ret = co && cn ? reach(fs, &sets, 0, &m, &sizes) : blab_fail(&fs->err, BLAB_ENOMEM, "qgroups");
	for (size_t g = 0; g < q->n; g++) {
		q->g[g].rfer = q->g[g].excl = 0;
		q->g[g].dirty = 1;
	}
	size_t it = 0;
	u64 b;
	void *v;
	while (!ret && u64map_next(&m, &it, &b, &v)) {
		u64 *sz = u64map_get(&sizes, b);
		account_one(fs, &sets, sets.zero, v, sz ? *sz : fs->nodesize, co, cn);
	}
	free(co);
	free(cn);
	u64map_free(&m);
	u64map_free(&sizes);
	sets_free(&sets);
	q->flags &= ~(BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT | BTRFS_QGROUP_STATUS_FLAG_RESCAN);
	q->status_dirty = 1;
	u64map_clear(&q->dirty); /* counted whole: nothing left to account for this transaction's past */
	return ret ? ret : write_items(fs);
}

int btrfs_quota_enable(struct btrfs_fs_info *fs)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	if (q->enabled)
		return 0;
	int ret = btrfs_commit_transaction(fs);
	if (ret || (ret = btrfs_start_transaction(fs)))
		return ret;
	struct btrfs_root *r = btrfs_get_root(fs, BTRFS_QUOTA_TREE_OBJECTID);
	if (!r) {
		if (!(r = btrfs_add_root(fs, BTRFS_QUOTA_TREE_OBJECTID)))
			return fs->err.code;
		r->in_root_tree = 1;
		if (!(r->node = btrfs_alloc_tree_block(fs, BTRFS_QUOTA_TREE_OBJECTID, 0)))
			return fs->err.code;
		r->bytes_used = fs->nodesize;
		btrfs_set_root_refs(r->item, 1);
		r->item_dirty = 1;
	}
	q->enabled = 1;
	q->flags = BTRFS_QGROUP_STATUS_FLAG_ON;
	q->status_dirty = 1;
	for (size_t i = 0; i < fs->nroots; i++)
		if (btrfs_root_shareable(fs->roots[i]) && fs->roots[i]->in_root_tree && !add(fs, fs->roots[i]->objectid))
			return fs->err.code;
	/* the numbers from the trees as they are (the kernel's rescan after enable) */
	return btrfs_qgroup_rescan(fs);
}

int btrfs_qgroup_create(struct btrfs_fs_info *fs, u64 id)
{
	if (!fs->qgroup->enabled)
		return blab_fail(&fs->err, BLAB_EINVAL, "quotas are not enabled (quota enable)");
	char n[48];
	if (find(fs, id))
		return blab_fail(&fs->err, BLAB_EEXIST, "qgroup %s exists", btrfs_qgroup_name(id, n, sizeof(n)));
	return add(fs, id) ? write_items(fs) : fs->err.code;
}

int btrfs_qgroup_assign(struct btrfs_fs_info *fs, u64 child, u64 parent)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	char a[48], b[48];
	if (!q->enabled)
		return blab_fail(&fs->err, BLAB_EINVAL, "quotas are not enabled (quota enable)");
	struct btrfs_qgroup *c = find(fs, child);
	if (!c || !find(fs, parent))
		return blab_fail(&fs->err, BLAB_ENOENT, "qgroup %s does not exist", btrfs_qgroup_name(c ? parent : child, a, sizeof(a)));
	if ((parent >> BTRFS_QGROUP_LEVEL_SHIFT) <= (child >> BTRFS_QGROUP_LEVEL_SHIFT))
		return blab_fail(&fs->err, BLAB_EINVAL, "qgroup %s is not above %s: a parent's level is higher",
				 btrfs_qgroup_name(parent, a, sizeof(a)), btrfs_qgroup_name(child, b, sizeof(b)));
	if (array_room(&q->relations_new, q->nrelations_new, &q->caprelations_new, sizeof(*q->relations_new), 16))
		return blab_fail(&fs->err, BLAB_ENOMEM, "qgroup relations");
	int ret = add_parent(fs, c, parent);
	if (ret)
		return ret;
	q->relations_new[q->nrelations_new][0] = child;
	q->relations_new[q->nrelations_new++][1] = parent;
	/* the parent's numbers now miss the child's: until a rescan they are wrong, and say so */
	q->flags |= BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT;
	q->status_dirty = 1;
	return write_items(fs);
}

int btrfs_qgroup_limit(struct btrfs_fs_info *fs, u64 id, u64 which, u64 value)
{
	char n[48];
	if (!fs->qgroup->enabled)
		return blab_fail(&fs->err, BLAB_EINVAL, "quotas are not enabled (quota enable)");
	struct btrfs_qgroup *g = find(fs, id);
	if (!g)
		return blab_fail(&fs->err, BLAB_ENOENT, "qgroup %s does not exist", btrfs_qgroup_name(id, n, sizeof(n)));
	u64 *max = which == BTRFS_QGROUP_LIMIT_MAX_EXCL ? &g->max_excl : &g->max_rfer;
	if (value == BTRFS_QGROUP_LIMIT_NONE) {
		g->lim_flags &= ~which;
		*max = 0;
	} else {
		g->lim_flags |= which;
		*max = value;
	}
	g->dirty = 1;
	return write_items(fs);
}

/* ---- limits: what a buffered write reserves ----
 *
 * The kernel checks a qgroup's limits when space is reserved, not when it
 * is accounted: a buffered write reserves each page's data (the sectors not
 * already dirty, qgroup_reserve_data) and then metadata for the inode's
 * outstanding extents (btrfs_delalloc_reserve_metadata: a node a extent,
 * one more while the page's extent is being merged in), and either fails
 * when, for the subvolume's qgroup or any above it with a limit,
 *   referenced + reserved + the new bytes > max_referenced
 * (exclusive alike). On EDQUOT it flushes delalloc, commits (the reserved
 * bytes are then accounted, the reservations gone) and tries the page once
 * more; a write that stops part way returns what it wrote. The kernel
 * writes a page at a time, so the write stops at the last sector that fits
 * after the flush: referenced + the data up to it + one node. The model:
 * reserved = the data bytes writes reserved since the last commit (dropped
 * at the commit), metadata = a node for each outstanding extent of the
 * inodes below the qgroup (an inode's dirty bytes in 128 MiB extents, plus
 * its ordered extents: the space model's count, which takes a file's
 * separate dirty ranges as one extent), plus the one being added. Not
 * modelled: the metadata a transaction start reserves per item (pertrans,
 * freed at commit; it only makes the kernel flush sooner, and a flush moves
 * where extents split, which moves referenced by a sector when a later
 * write rewrites the split sector), and freeing a reservation when dirty
 * pages are truncated before writeback. */

#define QGROUP_MAX_EXTENT (128ULL << 20) /* BTRFS_MAX_EXTENT_SIZE */

int btrfs_qgroup_limited(struct btrfs_fs_info *fs, const struct btrfs_root *root)
{
	if (!btrfs_qgroup_enabled(fs))
		return 0;
	struct qgroup_ids l;
	int limited = 0;
	if (groups_of(fs, root->objectid, &l))
		limited = 1; /* out of memory: the reserving path fails with it */
	for (size_t k = 0; k < l.n && !limited; k++) {
		struct btrfs_qgroup *g = find(fs, l.ids[k]);
		limited = g && (g->lim_flags & (BTRFS_QGROUP_LIMIT_MAX_RFER | BTRFS_QGROUP_LIMIT_MAX_EXCL));
	}
	ids_free(&l);
	return limited;
}

/* Whether qgroup id is root's or above it: 1, 0, or a negative error. */
static int holds_root(struct btrfs_fs_info *fs, u64 id, u64 root)
{
	struct qgroup_ids l;
	int ret = groups_of(fs, root, &l);
	int held = ret ? ret : u64map_get(&l.seen, id) != NULL;
	ids_free(&l);
	return held;
}

/* The outstanding extents of the inodes below qgroup id, the inode with key
 * except (counted by the caller) left out. */
static int outstanding_below(struct btrfs_fs_info *fs, u64 id, u64 except, u64 *out)
{
	u64 *keys = NULL;
	size_t n = 0;
	*out = 0;
	if (btrfs_dirty_inodes_all(fs, &keys, &n))
		return blab_fail(&fs->err, BLAB_ENOMEM, "qgroup reservation");
	for (size_t i = 0; i < n; i++) {
		struct btrfs_root *r = btrfs_ikey_root(fs, keys[i]);
		int held = keys[i] == except || !r ? 0 : holds_root(fs, id, r->objectid);
		if (held < 0) {
			free(keys);
			return held;
		}
		if (!held)
			continue;
		u64 on;
		btrfs_ordered_bytes(fs, keys[i], &on);
		*out += (btrfs_dirty_bytes(fs, keys[i]) + QGROUP_MAX_EXTENT - 1) / QGROUP_MAX_EXTENT + on;
	}
	free(keys);
	return 0;
}

int btrfs_qgroup_reserve_write(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 off, u64 len, u64 *allowed, u64 *by,
			       char *why, size_t nwhy)
{
	*allowed = len;
	*by = 0;
	if (why && nwhy)
		why[0] = 0;
	if (!len || !btrfs_qgroup_enabled(fs))
		return 0;
	u64 ss = fs->sectorsize, key = btrfs_ikey(fs, root, ino), first = off / ss * ss, end = off + len;
	u64 last = (end + ss - 1) / ss * ss;
	struct qgroup_ids l;
	if (groups_of(fs, root->objectid, &l)) {
		ids_free(&l);
		return fs->err.code;
	}
	/* without a limit the write is whole, and still reserves (a limit set before the commit counts it) */
	/* the inode's own outstanding extents (its ordered ones, and its dirty bytes as the write adds to them) */
	u64 own_on, own_dirty = btrfs_dirty_bytes(fs, key);
	btrfs_ordered_bytes(fs, key, &own_on);
	u64 stop = last; /* the first sector that does not fit */
	u64 stop_id = 0, stop_have = 0, stop_max = 0;
	int stop_excl = 0;
	for (size_t k = 0; k < l.n; k++) {
		struct btrfs_qgroup *g = find(fs, l.ids[k]);
		if (!g || !(g->lim_flags & (BTRFS_QGROUP_LIMIT_MAX_RFER | BTRFS_QGROUP_LIMIT_MAX_EXCL)))
			continue;
		u64 others;
		int ret = outstanding_below(fs, g->id, key, &others);
		if (ret) {
			ids_free(&l);
			return ret;
		}
		/* walk the write's sectors while they fit this qgroup */
		u64 newb = 0, s;
		for (s = first; s < stop; s += ss) {
			u64 add = btrfs_delalloc_clean_bytes(fs, key, s, s + ss);
			u64 held = others + own_on + (own_dirty + newb + QGROUP_MAX_EXTENT - 1) / QGROUP_MAX_EXTENT;
			/* data and metadata: the data first, then a node more for the page's extent */
			u64 need = g->reserved + newb + add + (held + 1) * fs->nodesize;
			int over_r = (g->lim_flags & BTRFS_QGROUP_LIMIT_MAX_RFER) && g->rfer + need > g->max_rfer;
			int over_e = (g->lim_flags & BTRFS_QGROUP_LIMIT_MAX_EXCL) && g->excl + need > g->max_excl;
			if (over_r || over_e) {
				stop = s;
				stop_id = g->id;
				stop_excl = !over_r;
				stop_have = (over_r ? g->rfer : g->excl);
				stop_max = over_r ? g->max_rfer : g->max_excl;
				if (why && nwhy) {
					char n[48];
					snprintf(why, nwhy, "qgroup %s's limit of %llu %s bytes (it has %llu, %llu reserved; this sector needs %llu and %llu of metadata)",
						 btrfs_qgroup_name(g->id, n, sizeof(n)), (unsigned long long)stop_max, stop_excl ? "exclusive" : "referenced",
						 (unsigned long long)stop_have, (unsigned long long)(g->reserved + newb), (unsigned long long)add,
						 (unsigned long long)((held + 1) * fs->nodesize));
				}
				break;
			}
			newb += add;
		}
	}
	/* the sectors that fit are reserved in every qgroup above root */
	u64 fit_end = stop < end ? stop : end;
	*allowed = fit_end > off ? fit_end - off : 0;
	*by = stop < last ? stop_id : 0;
	if (*allowed) {
		u64 res = btrfs_delalloc_clean_bytes(fs, key, first, (fit_end + ss - 1) / ss * ss);
		for (size_t k = 0; k < l.n; k++) {
			struct btrfs_qgroup *g = find(fs, l.ids[k]);
			if (g)
				g->reserved += res;
		}
	}
	ids_free(&l);
	return 0;
}

int btrfs_qgroup_subvol_created(struct btrfs_fs_info *fs, u64 id)
{
	if (!btrfs_qgroup_enabled(fs))
		return 0;
	return add(fs, id) ? write_items(fs) : fs->err.code;
}

int btrfs_qgroup_inherit(struct btrfs_fs_info *fs, u64 src, u64 id)
{
	if (!btrfs_qgroup_enabled(fs))
		return 0;
	struct btrfs_qgroup *s = find(fs, src);
	u64 rfer = s ? s->rfer : 0;
	struct btrfs_qgroup *g = add(fs, id);
	if (!g)
		return fs->err.code;
	if (!(s = find(fs, src))) /* add may have moved it */
		return 0;
	/* everything but the two root blocks is shared now */
	g->rfer = rfer;
	g->excl = fs->nodesize;
	s->excl = fs->nodesize;
	s->dirty = g->dirty = 1;
	if (s->nparents) {
		/* the groups above the source lose exclusive bytes the model does not work out */
		fs->qgroup->flags |= BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT;
		fs->qgroup->status_dirty = 1;
	}
	return write_items(fs);
}

static size_t width(size_t a, size_t b) { return a > b ? a : b; }

/* A limit as `qgroup show --raw` prints it: bytes, or "none" when unset. */
static const char *limit_text(u64 flags, u64 flag, u64 max, char *buf, size_t n)
{
	if (!(flags & flag))
		return "none";
	snprintf(buf, n, "%llu", (unsigned long long)max);
	return buf;
}

void btrfs_qgroup_show(struct btrfs_fs_info *fs, struct strbuf *out, int columns)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	int parents = columns & BTRFS_QGROUP_SHOW_PARENTS, mr = columns & BTRFS_QGROUP_SHOW_MAX_RFER,
	    me = columns & BTRFS_QGROUP_SHOW_MAX_EXCL;
	char buf[64], path[4096];
	/* columns as wide as their widest value (at least their heading) */
	size_t wid = 8, wref = 10, wexcl = 9, wpar = 6, wmr = 14, wme = 13;
	for (size_t i = 0; i < q->n; i++) {
		const struct btrfs_qgroup *g = &q->g[i];
		wid = width(wid, strlen(btrfs_qgroup_name(g->id, buf, sizeof(buf))));
		wref = width(wref, (size_t)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)g->rfer));
		wexcl = width(wexcl, (size_t)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)g->excl));
		wmr = width(wmr, strlen(limit_text(g->lim_flags, BTRFS_QGROUP_LIMIT_MAX_RFER, g->max_rfer, buf, sizeof(buf))));
		wme = width(wme, strlen(limit_text(g->lim_flags, BTRFS_QGROUP_LIMIT_MAX_EXCL, g->max_excl, buf, sizeof(buf))));
		size_t pl = 0;
		for (size_t p = 0; p < g->nparents; p++)
			pl += strlen(btrfs_qgroup_name(g->parents[p], buf, sizeof(buf))) + (p ? 1 : 0);
		/* progs counts two more than the list it prints (measured: "1/1234567890" takes 14 columns) */
		wpar = width(wpar, pl ? pl + 2 : 0);
	}
	sb_printf(out, "%-*s    %*s    %*s", (int)wid, "Qgroupid", (int)wref, "Referenced", (int)wexcl, "Exclusive");
	if (mr)
		sb_printf(out, "  %*s", (int)wmr, "Max referenced");
	if (me)
		sb_printf(out, "  %*s", (int)wme, "Max exclusive");
	if (wpar < 10)
		wpar = 10; /* progs pads the parent column to ten */
	if (parents)
		sb_printf(out, " %-*s Path \n", (int)wpar, "Parent");
	else
		sb_printf(out, "   Path \n");
	memset(path, '-', sizeof(path));
	sb_printf(out, "%.*s    %.*s    %.*s", (int)wid, path, (int)wref, path, (int)wexcl, path);
	if (mr)
		sb_printf(out, "  %.*s", (int)wmr, path);
	if (me)
		sb_printf(out, "  %.*s", (int)wme, path);
	if (parents)
		sb_printf(out, " %.*s%*s ---- \n", 6, path, (int)(wpar - 6), "");
	else
		sb_printf(out, "   ---- \n");
	for (size_t i = 0; i < q->n; i++) {
		const struct btrfs_qgroup *g = &q->g[i];
		sb_printf(out, "%-*s    %*llu    %*llu", (int)wid, btrfs_qgroup_name(g->id, buf, sizeof(buf)), (int)wref,
			  (unsigned long long)g->rfer, (int)wexcl, (unsigned long long)g->excl);
		if (mr)
			sb_printf(out, "  %*s", (int)wmr, limit_text(g->lim_flags, BTRFS_QGROUP_LIMIT_MAX_RFER, g->max_rfer, buf, sizeof(buf)));
		if (me)
			sb_printf(out, "  %*s", (int)wme, limit_text(g->lim_flags, BTRFS_QGROUP_LIMIT_MAX_EXCL, g->max_excl, buf, sizeof(buf)));
		if (parents) {
			struct strbuf pl = {0}; /* any number of parents */
			for (size_t p = 0; p < g->nparents; p++)
				sb_printf(&pl, "%s%s", p ? "," : "", btrfs_qgroup_name(g->parents[p], buf, sizeof(buf)));
			sb_printf(out, " %-*s ", (int)wpar, pl.len && pl.s ? pl.s : "-");
			sb_free(&pl);
		} else {
			sb_printf(out, "   ");
		}
		if (g->id == BTRFS_FS_TREE_OBJECTID)
			sb_printf(out, "<toplevel>\n");
		else if (g->id >> BTRFS_QGROUP_LEVEL_SHIFT) {
			size_t members = 0;
			for (size_t k = 0; k < q->n; k++)
				for (size_t p = 0; p < q->g[k].nparents; p++)
					members += q->g[k].parents[p] == g->id && (q->g[k].id >> BTRFS_QGROUP_LEVEL_SHIFT);
			sb_printf(out, "<%zu member qgroup%s>\n", members, members == 1 ? "" : "s");
		} else if (!btrfs_subvol_path(fs, g->id, path, sizeof(path)))
			sb_printf(out, "%s\n", path);
		else
			sb_printf(out, "<stale>\n");
	}
}

/* What one subtree walk recorded: every tree block, every data extent its
 * leaves point at, and how many of those records were new to the
 * transaction (its qgroup_dirty count gains them). */
struct subtree_walk {
	u64 blocks, extents, added;
};

static int walk_record(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes, struct subtree_walk *w)
{
	size_t had = fs->qgroup->recorded.len;
	int ret = btrfs_qgroup_record_extent(fs, bytenr, num_bytes);
	w->added += fs->qgroup->recorded.len > had;
	return ret;
}

static int trace_subtree_walk(struct btrfs_fs_info *fs, u64 bytenr, int level, int depth, struct subtree_walk *w)
{
	w->blocks++;
	int ret = walk_record(fs, bytenr, 0, w);
	if (ret || depth > BTRFS_MAX_LEVEL)
		return ret;
	struct extent_buffer *eb = btrfs_read_tree_block(fs, bytenr, level, 0);
	if (!eb)
		return fs->err.code;
	u32 nr = btrfs_nritems(eb);
	for (u32 s = 0; s < nr && !ret; s++) {
		if (level) {
			ret = trace_subtree_walk(fs, btrfs_node_blockptr(eb, (int)s), level - 1, depth + 1, w);
			if (!(eb = btrfs_find_eb(fs, bytenr)))
				return ret;
			continue;
		}
		struct btrfs_key k;
		btrfs_item_key(eb, (int)s, &k);
		const u8 *fi = btrfs_item_ptr(eb, (int)s);
		if (k.type == BTRFS_EXTENT_DATA_KEY && btrfs_item_size_nr(eb, (int)s) >= BTRFS_FILE_EXTENT_SIZE &&
		    btrfs_file_extent_type(fi) != BTRFS_FILE_EXTENT_INLINE && btrfs_file_extent_disk_bytenr(fi)) {
			w->extents++;
			ret = walk_record(fs, btrfs_file_extent_disk_bytenr(fi), btrfs_file_extent_disk_num_bytes(fi), w);
		}
	}
	return ret;
}

int btrfs_qgroup_trace_subtree(struct btrfs_fs_info *fs, u64 bytenr, int level)
{
	if (!btrfs_qgroup_enabled(fs))
		return 0;
	struct subtree_walk w = {0};
	int ret = trace_subtree_walk(fs, bytenr, level, 0, &w);
	if (!ret)
		fs_trace(fs, (struct trace_event){.kind = TRACE_QGROUP_TRACE_SUBTREE, .bytenr = bytenr, .level = level, .a = w.blocks,
						  .b = w.extents, .c = w.added});
	return ret;
}

int btrfs_qgroup_remove(struct btrfs_fs_info *fs, u64 id)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	if (!q->enabled)
		return 0;
	struct btrfs_root *r = btrfs_get_root(fs, BTRFS_QUOTA_TREE_OBJECTID);
	struct btrfs_qgroup *g = find(fs, id);
	if (!g || !r)
		return 0;
	int ret = 0;
	struct btrfs_key keys[2] = {{0, BTRFS_QGROUP_INFO_KEY, id}, {0, BTRFS_QGROUP_LIMIT_KEY, id}};
	for (int i = 0; i < 2 && !ret; i++)
		if ((ret = btrfs_delete_item(fs, r, &keys[i])) == BLAB_ENOENT)
			ret = 0;
	for (size_t p = 0; p < g->nparents && !ret; p++) {
		struct btrfs_key a = {id, BTRFS_QGROUP_RELATION_KEY, g->parents[p]}, b = {g->parents[p], BTRFS_QGROUP_RELATION_KEY, id};
		if ((ret = btrfs_delete_item(fs, r, &a)) == BLAB_ENOENT)
			ret = 0;
		if (!ret && (ret = btrfs_delete_item(fs, r, &b)) == BLAB_ENOENT)
			ret = 0;
	}
	free(g->parents);
	size_t at = (size_t)(g - q->g);
	memmove(&q->g[at], &q->g[at + 1], (q->n - at - 1) * sizeof(*q->g));
	q->n--;
	return ret;
}

/* ---- relocation's subtree swaps (seed 004) ---- */

void btrfs_qgroup_set_swap_mode(struct btrfs_fs_info *fs, int mode)
{
	if (fs->qgroup)
		fs->qgroup->swap_mode = mode;
}

int btrfs_qgroup_swap_mode(const struct btrfs_fs_info *fs) { return fs->qgroup ? fs->qgroup->swap_mode : BTRFS_QGROUP_SWAP_DEFERRED; }

u64 btrfs_qgroup_dirty_total(const struct btrfs_fs_info *fs) { return fs->qgroup ? fs->qgroup->dirty_total : 0; }

/* The subtree mode's tracing of one swap: the blocks the reloc tree made
 * under the swapped-in block (pointers of a generation after the
 * subvolume's last_snapshot, set when its reloc tree was made: a commit
 * between relocating and merging leaves them new), each with the block it
 * replaced at the same place in the old subtree (found slot by slot: the
 * copies keep their originals' keys); data extents only when data moved (a
 * data block group), not for metadata. */
static int trace_swap_pair(struct btrfs_fs_info *fs, u64 newb, u64 oldb, int level, u64 last_snapshot, int depth)
{
	int ret;
	if ((ret = btrfs_qgroup_record_extent(fs, newb, 0)) || (ret = btrfs_qgroup_record_extent(fs, oldb, 0)))
		return ret;
	fs_trace(fs, (struct trace_event){.kind = TRACE_QGROUP_TRACE_SWAP, .bytenr = oldb, .a = newb, .level = level});
	if (!level || depth > BTRFS_MAX_LEVEL)
		return 0;
	struct extent_buffer *n = btrfs_read_tree_block(fs, newb, level, 0), *o;
	if (!n)
		return fs->err.code;
	u32 nr = btrfs_nritems(n);
	for (u32 s = 0; s < nr; s++) {
		if (!(n = btrfs_read_tree_block(fs, newb, level, 0)) || !(o = btrfs_read_tree_block(fs, oldb, level, 0)))
			return fs->err.code;
		if (btrfs_key_generation(btrfs_key_ptr_nr(n, (int)s)) <= last_snapshot || s >= btrfs_nritems(o))
			continue;
		u64 nc = btrfs_node_blockptr(n, (int)s), oc = btrfs_node_blockptr(o, (int)s);
		if (nc != oc && (ret = trace_swap_pair(fs, nc, oc, level - 1, last_snapshot, depth + 1)))
			return ret;
	}
	return 0;
}

int btrfs_qgroup_trace_swap(struct btrfs_fs_info *fs, u64 oldb, u64 newb, int level, u64 last_snapshot)
{
	if (!btrfs_qgroup_enabled(fs))
		return 0;
	struct btrfs_qgroup_state *q = fs->qgroup;
	int ret;
	switch (q->swap_mode) {
	case BTRFS_QGROUP_SWAP_FULL:
		/* before 4.20: both subtrees, every block down to the leaves and their data */
		if ((ret = btrfs_qgroup_trace_subtree(fs, oldb, level)))
			return ret;
		return btrfs_qgroup_trace_subtree(fs, newb, level);
	case BTRFS_QGROUP_SWAP_SUBTREE:
		return trace_swap_pair(fs, newb, oldb, level, last_snapshot, 0);
	default: {
		/* since 5.1: only remembered, traced if the subvolume copies the
		 * block before the commit (btrfs_qgroup_trace_subtree_after_cow) */
		u64 *v = u64map_put(&q->swapped, newb);
		if (!v)
			return blab_fail(&fs->err, BLAB_ENOMEM, "qgroup swapped blocks");
		v[0] = oldb | ((u64)level << 56);
		v[1] = last_snapshot;
		return 0;
	}
	}
}

int btrfs_qgroup_cow_swapped(struct btrfs_fs_info *fs, u64 bytenr)
{
	struct btrfs_qgroup_state *q = fs->qgroup;
	u64 *v;
	if (!q || !q->swapped.len || !(v = u64map_get(&q->swapped, bytenr)))
		return 0;
	u64 oldb = v[0] & ((1ULL << 56) - 1), last_snapshot = v[1];
	int level = (int)(v[0] >> 56);
	u64map_del(&q->swapped, bytenr);
	return trace_swap_pair(fs, bytenr, oldb, level, last_snapshot, 0);
}
