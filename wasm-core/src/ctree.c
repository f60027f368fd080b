/*
 * ctree.c — the copy-on-write B-tree.
 *
 * Search descends from the root, copying every block on the path that was
 * written in an earlier transaction (btrfs_cow_block) when the caller asks
 * for a writable path, and splitting full nodes on the way down when it asks
 * for room to insert. Leaves that lack room first push items to their
 * neighbours, then split (twice when a large item lands in the middle).
 * Deletion merges small leaves and nodes into a neighbour and shrinks the
 * root when it is left with one child.
 */
#include "ctree.h"
#include "qgroup.h"
#include "tree-checker.h"
#include "disk-io.h"
#include "extent-tree.h"
#include "volumes.h"
#include <assert.h>
#include <stdlib.h>

static u32 leaf_data_size(const struct btrfs_fs_info *fs) { return fs->nodesize - BTRFS_HEADER_SIZE; }
u32 btrfs_nodeptrs(const struct btrfs_fs_info *fs) { return (fs->nodesize - BTRFS_HEADER_SIZE) / BTRFS_KEY_PTR_SIZE; }

u32 btrfs_leaf_free_space(const struct btrfs_fs_info *fs, const struct extent_buffer *leaf)
{
	u32 nr = btrfs_nritems(leaf);
	u32 data_start = nr ? btrfs_item_offset_nr(leaf, (int)nr - 1) : leaf_data_size(fs);
	return data_start - nr * BTRFS_ITEM_SIZE;
}

/* Bytes used by items [start, start + nr) of a leaf, headers included. */
static u32 leaf_space_used(const struct extent_buffer *leaf, int start, int nr)
{
	u32 s = 0;
	for (int i = start; i < start + nr; i++)
		s += btrfs_item_size_nr(leaf, i) + BTRFS_ITEM_SIZE;
	return s;
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

/* ---------------------------------------------------------------------- */
/* Copy-on-write                                                          */

int btrfs_root_shareable(const struct btrfs_root *root)
{
	return root->objectid == BTRFS_FS_TREE_OBJECTID ||
	       (root->objectid >= BTRFS_FIRST_FREE_OBJECTID && root->objectid <= BTRFS_LAST_FREE_OBJECTID);
}

/* The references after root copied eb (refs references, extent flags
 * flags) into n: who now refers to eb's children, and whether eb is freed.
 * - Shared (refs > 1): root lets go of eb. If root owns it and its children
 *   are referred to by tree (keyed), the keyed references now belong to n,
 *   so eb's children get references by eb itself (full backrefs) for the
 *   other trees, and eb is marked FULL_BACKREF. Otherwise n's children get
 *   keyed references of root.
 * - Not shared: eb is freed. If it was FULL_BACKREF, its children's
 *   references by eb move to keyed references of root, from n. */
static int update_ref_for_cow(struct btrfs_fs_info *fs, struct btrfs_root *root, struct extent_buffer *eb,
			      struct extent_buffer *n, u64 refs, u64 flags)
{
	int ret;
	if (refs > 1) {
		if (btrfs_header_owner(eb->data) == root->objectid && !(flags & BTRFS_BLOCK_FLAG_FULL_BACKREF)) {
			if ((ret = btrfs_mod_refs_of(fs, root->objectid, eb, 1, +1)) ||
			    (ret = btrfs_set_tree_block_flags(fs, eb->start, btrfs_level(eb), BTRFS_BLOCK_FLAG_FULL_BACKREF)))
				return ret;
			fs_trace(fs, (struct trace_event){.kind = TRACE_FULL_BACKREF, .bytenr = eb->start, .level = btrfs_level(eb), .tree = root->objectid});
		} else if ((ret = btrfs_mod_refs_of(fs, root->objectid, n, 0, +1))) {
			return ret;
		}
		fs_trace(fs, (struct trace_event){.kind = TRACE_BACKREF, .bytenr = eb->start, .level = btrfs_level(eb), .tree = root->objectid, .slot = -1});
		return btrfs_drop_tree_block_ref(fs, root, eb);
	}
	if (flags & BTRFS_BLOCK_FLAG_FULL_BACKREF) {
		if ((ret = btrfs_mod_refs_of(fs, root->objectid, n, 0, +1)) || (ret = btrfs_mod_refs_of(fs, root->objectid, eb, 1, -1)))
			return ret;
	}
	return btrfs_free_tree_block(fs, root, eb);
}

int btrfs_cow_block(struct btrfs_fs_info *fs, struct btrfs_root *root, struct extent_buffer *eb,
		    struct extent_buffer *parent, int parent_slot, struct extent_buffer **out)
{
	assert(fs->trans_running);
	/* a reloc tree's block (RELOC flag) may be shared by several subvolumes
	 * since the merge: copied, never changed in place */
	if (btrfs_header_generation(eb->data) == fs->generation && !(btrfs_header_flags(eb->data) & BTRFS_HEADER_FLAG_WRITTEN) &&
	    !(btrfs_header_flags(eb->data) & BTRFS_HEADER_FLAG_RELOC) && !root->force_cow) {
		/* Allocated in this transaction and not yet written: change in place
		 * (a copy of its own if a checkpoint holds these bytes too). A log
		 * block a log sync wrote is copied like a committed one: the
		 * superblock on disk may name the log it is in. */
		int ret = btrfs_eb_unshare(fs, eb);
		if (ret)
			return ret;
		eb->dirty = 1;
		*out = eb;
		return 0;
	}
	int level = btrfs_level(eb);
	/* a block older than the root's last snapshot may be in other trees
	 * too: its references say (btrfs_block_can_be_shared) */
	u64 refs = 1, flags = 0;
	if (btrfs_root_shareable(root) && eb != root->node &&
	    (btrfs_header_generation(eb->data) <= btrfs_root_last_snapshot(root->item) || (btrfs_header_flags(eb->data) & BTRFS_HEADER_FLAG_RELOC))) {
		int ret = btrfs_lookup_extent_info(fs, eb->start, level, &refs, &flags);
		if (ret)
			return ret;
	}
	/* a block relocation swapped in, copied before the commit: its deferred qgroup trace runs now */
	if (btrfs_root_shareable(root) && btrfs_qgroup_cow_swapped(fs, eb->start))
		return fs->err.code;
	struct extent_buffer *n = btrfs_alloc_tree_block(fs, root->objectid, level);
	if (!n)
		return fs->err.code;
	memcpy(n->data, eb->data, fs->nodesize);
	btrfs_set_header_bytenr(n->data, n->start);
	btrfs_set_header_generation(n->data, fs->generation);
	btrfs_set_header_owner(n->data, root->objectid);
	btrfs_set_header_flags(n->data, BTRFS_MIXED_BACKREF_REV << BTRFS_BACKREF_REV_SHIFT);
	n->dirty = 1;
	if (parent) {
		assert(btrfs_node_blockptr(parent, parent_slot) == eb->start);
		u8 *kp = btrfs_key_ptr_nr(parent, parent_slot);
		btrfs_set_key_blockptr(kp, n->start);
		btrfs_set_key_generation(kp, fs->generation);
		parent->dirty = 1;
	} else {
		assert(root->node == eb);
		root->node = n;
	}
	fs_trace(fs, (struct trace_event){.kind = TRACE_COW, .tree = root->objectid, .bytenr = eb->start, .a = n->start,
					  .level = level, .b = fs->generation, .c = btrfs_header_generation(eb->data)});
	int ret = update_ref_for_cow(fs, root, eb, n, refs, flags);
	if (ret)
		return ret;
	*out = n;
	return 0;
}

/* Reads child slot of parent, checked against its key pointer (and copies
 * it when cow). */
static struct extent_buffer *read_child(struct btrfs_fs_info *fs, struct btrfs_root *root, struct extent_buffer *parent,
					int slot, int cow)
{
	struct extent_buffer *c = btrfs_read_node_slot(fs, parent, slot, root->objectid);
	if (!c)
		return NULL;
	if (cow && btrfs_cow_block(fs, root, c, parent, slot, &c))
		return NULL;
	return c;
}

int btrfs_tree_reaches(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key, int level, u64 bytenr)
{
	struct extent_buffer *b = root->node;
	for (int depth = 0; b && btrfs_level(b) > level; depth++) {
		int slot;
		if (depth > BTRFS_MAX_LEVEL)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "tree %llu deeper than %d levels", (unsigned long long)root->objectid,
					 BTRFS_MAX_LEVEL);
		if (btrfs_bin_search(b, key, &slot) && slot > 0)
			slot--;
		if (!(b = btrfs_read_node_slot(fs, b, slot, root->objectid)))
			return fs->err.code;
	}
	return b && btrfs_level(b) == level && b->start == bytenr;
}

int btrfs_cow_path_to(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 bytenr, int level, const struct btrfs_key *key,
		      struct extent_buffer **out)
{
	/* first without changing anything: is the block where key leads at level? */
	int ret = btrfs_tree_reaches(fs, root, key, level, bytenr);
	if (ret <= 0)
		return ret < 0 ? ret : 1;
	struct extent_buffer *b = root->node;
	if (btrfs_cow_block(fs, root, b, NULL, 0, &b))
		return fs->err.code;
	while (btrfs_level(b) > level) {
		int slot;
		if (btrfs_bin_search(b, key, &slot) && slot > 0)
			slot--;
		if (!(b = read_child(fs, root, b, slot, 1)))
			return fs->err.code;
	}
	*out = b;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Keys along the path                                                    */

/* After slot 0 of nodes[level - 1] changed its first key to key, update the
 * key pointers above it. */
static void fixup_low_keys(struct btrfs_path *path, const struct btrfs_key *key, int level)
{
	for (int i = level; i < BTRFS_MAX_LEVEL && path->nodes[i]; i++) {
		int slot = path->slots[i];
		btrfs_cpu_key_to_disk(btrfs_key_ptr_nr(path->nodes[i], slot), key);
		path->nodes[i]->dirty = 1;
		if (slot != 0)
			break;
	}
}

static void first_key(const struct extent_buffer *eb, struct btrfs_key *k)
{
	if (btrfs_level(eb))
		btrfs_node_key(eb, 0, k);
	else
		btrfs_item_key(eb, 0, k);
}

/* Inserts a key pointer into nodes[level] at slot; the node has room. */
static void insert_ptr(struct btrfs_fs_info *fs, struct extent_buffer *node, int slot, const struct btrfs_key *key,
		       u64 blockptr, u64 gen)
{
	u32 nr = btrfs_nritems(node);
	assert(nr < btrfs_nodeptrs(fs));
	assert(slot >= 0 && (u32)slot <= nr);
	memmove(btrfs_key_ptr_nr(node, slot + 1), btrfs_key_ptr_nr(node, slot), (nr - (u32)slot) * BTRFS_KEY_PTR_SIZE);
	u8 *kp = btrfs_key_ptr_nr(node, slot);
	btrfs_cpu_key_to_disk(kp, key);
	btrfs_set_key_blockptr(kp, blockptr);
	btrfs_set_key_generation(kp, gen);
	btrfs_set_header_nritems(node->data, nr + 1);
	node->dirty = 1;
}

/* A new root one level above the current one, holding a pointer to it. */
static int insert_new_root(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int level)
{
	struct extent_buffer *old = root->node;
	assert(path->nodes[level - 1] == old);
	struct extent_buffer *n = btrfs_alloc_tree_block(fs, root->objectid, level);
	if (!n)
		return fs->err.code;
	struct btrfs_key k;
	first_key(old, &k);
	insert_ptr(fs, n, 0, &k, old->start, btrfs_header_generation(old->data));
	root->node = n;
	path->nodes[level] = n;
	path->slots[level] = 0;
	fs_trace(fs, (struct trace_event){.kind = TRACE_ROOT_GROW, .tree = root->objectid, .bytenr = n->start, .level = level});
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Leaves rebuilt from item lists (split, push, merge)                     */

struct item_copy {
	struct btrfs_key key;
	u32 size;
	u8 *data; /* points into a scratch copy */
};

/* Collects items [start, start + nr) of leaf into out, copying their data into buf. */
static u8 *collect_items(const struct extent_buffer *leaf, int start, int nr, struct item_copy *out, u8 *buf)
{
	for (int i = 0; i < nr; i++) {
		btrfs_item_key(leaf, start + i, &out[i].key);
		out[i].size = btrfs_item_size_nr(leaf, start + i);
		memcpy(buf, btrfs_item_ptr(leaf, start + i), out[i].size);
		out[i].data = buf;
		buf += out[i].size;
	}
	return buf;
}

/* Rewrites the items of leaf as exactly items[0..n). They fit. */
static void leaf_fill(struct btrfs_fs_info *fs, struct extent_buffer *leaf, const struct item_copy *items, int n)
{
	u32 end = leaf_data_size(fs);
	u8 *base = leaf->data + BTRFS_HEADER_SIZE;
	memset(base, 0, leaf_data_size(fs));
	for (int i = 0; i < n; i++) {
		assert(end >= items[i].size + (u32)(i + 1) * BTRFS_ITEM_SIZE);
		end -= items[i].size;
		u8 *it = btrfs_item_nr(leaf, i);
		btrfs_cpu_key_to_disk(it, &items[i].key);
		btrfs_set_item_offset(it, end);
		btrfs_set_item_size(it, items[i].size);
		memcpy(base + end, items[i].data, items[i].size);
	}
	btrfs_set_header_nritems(leaf->data, (u32)n);
	leaf->dirty = 1;
}

struct leaf_pair {
	struct item_copy *items;
	u8 *buf;
	int n;
};

static int gather(struct btrfs_fs_info *fs, struct leaf_pair *lp, const struct extent_buffer *a, const struct extent_buffer *b)
{
	int na = (int)btrfs_nritems(a), nb = b ? (int)btrfs_nritems(b) : 0;
	lp->items = malloc(sizeof(*lp->items) * (size_t)(na + nb + 1));
	lp->buf = malloc(2 * (size_t)fs->nodesize);
	if (!lp->items || !lp->buf) {
		free(lp->items);
		free(lp->buf);
		return blab_fail(&fs->err, BLAB_ENOMEM, "leaf rebuild");
	}
	u8 *p = collect_items(a, 0, na, lp->items, lp->buf);
	if (b)
		collect_items(b, 0, nb, lp->items + na, p);
	lp->n = na + nb;
	return 0;
}

static void release(struct leaf_pair *lp)
{
	free(lp->items);
	free(lp->buf);
}

static u32 items_used(const struct item_copy *it, int start, int end)
{
	u32 s = 0;
	for (int i = start; i < end; i++)
		s += it[i].size + BTRFS_ITEM_SIZE;
	return s;
}

/* ---------------------------------------------------------------------- */
/* Making room in a leaf                                                   */

/*
 * Moves items between the leaf at path and a neighbour so that the target
 * (an insertion point at slot needing need bytes or, with extend, the item at
 * slot growing by need) has room. dir +1 moves the leaf's last k items to the
 * head of the right neighbour, -1 its first k items to the tail of the left
 * one; the target moves with them when its slot is in the moved range (an
 * insertion point on the boundary goes to the neighbour). The fewest items
 * that make room move. Returns 0 when it made room (path updated), 1 when it
 * could not, negative on error.
 */
static int push_leaf(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, u32 need, int extend,
		     int dir)
{
	struct extent_buffer *leaf = path->nodes[0], *parent = path->nodes[1];
	if (!parent)
		return 1;
	int pslot = path->slots[1], sslot = pslot + dir;
	if (sslot < 0 || sslot >= (int)btrfs_nritems(parent))
		return 1;
	int n = (int)btrfs_nritems(leaf), slot = path->slots[0];
	struct extent_buffer *sib = read_child(fs, root, parent, sslot, 0);
	if (!sib)
		return fs->err.code;
	u32 sib_free = btrfs_leaf_free_space(fs, sib), leaf_free = btrfs_leaf_free_space(fs, leaf);
	if (sib_free < need)
		return 1; /* not worth rebuilding two leaves for */
	/* As many items as fit move (as the kernel does): a leaf that fills up
	 * again at once would otherwise push a few items for every insert. */
	int best = -1, to_sib = 0;
	u32 moved = 0;
	for (int k = extend ? 1 : 0; k < n; k++) {
		if (k > 0)
			moved += BTRFS_ITEM_SIZE + btrfs_item_size_nr(leaf, dir > 0 ? n - k : k - 1);
		if (moved > sib_free)
			break;
		int t = dir > 0 ? slot >= n - k : (extend ? slot < k : slot <= k);
		if (t ? moved + need <= sib_free : need <= leaf_free + moved) {
			best = k;
			to_sib = t;
		}
	}
	if (best < 0)
		return 1;
	if (btrfs_cow_block(fs, root, sib, parent, sslot, &sib))
		return fs->err.code;
	int k = best, ns = (int)btrfs_nritems(sib);
	struct extent_buffer *left = dir > 0 ? leaf : sib, *right = dir > 0 ? sib : leaf;
	struct leaf_pair lp;
	int ret = gather(fs, &lp, left, right);
	if (ret)
		return ret;
	int boundary = dir > 0 ? n - k : ns + k;
	leaf_fill(fs, left, lp.items, boundary);
	leaf_fill(fs, right, lp.items + boundary, lp.n - boundary);
	release(&lp);
	struct btrfs_key k0;
	btrfs_item_key(right, 0, &k0);
	btrfs_cpu_key_to_disk(btrfs_key_ptr_nr(parent, dir > 0 ? sslot : pslot), &k0);
	parent->dirty = 1;
	if (to_sib) {
		path->nodes[0] = sib;
		path->slots[0] = dir > 0 ? slot - (n - k) : ns + slot;
		path->slots[1] = sslot;
	} else if (dir < 0) {
		path->slots[0] = slot - k;
	}
	/* what it moves or copies: the items that go, and the items beside them
	 * that shift (the neighbour's, pushed right; the leaf's rest, pushed left) */
	u32 went = 0;
	for (int j = 0; j < k; j++)
		went += BTRFS_ITEM_SIZE + btrfs_item_size_nr(sib, dir > 0 ? j : ns + j);
	u32 shifted = dir > 0 ? leaf_data_size(fs) - sib_free : leaf_data_size(fs) - leaf_free - went;
	fs_trace(fs, (struct trace_event){.kind = TRACE_PUSH, .tree = root->objectid, .bytenr = sib->start, .a = leaf->start,
					  .level = 0, .slot = k, .b = went + shifted});
	return 0;
}

/* A new leaf right of nodes[0] in the parent, holding items moved there. */
static struct extent_buffer *new_right_leaf(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path,
					    int pslot_after, const struct btrfs_key *key)
{
	struct extent_buffer *r = btrfs_alloc_tree_block(fs, root->objectid, 0);
	if (!r)
		return NULL;
	insert_ptr(fs, path->nodes[1], pslot_after + 1, key, r->start, fs->generation);
	return r;
}

/*
 * Makes room for the target after pushing failed: the leaf's items [0, m)
 * stay, [m, n) move to a new right leaf, with m as near the middle as lets
 * the target fit on its side. When no m does (a large item inserted in the
 * middle), the item gets an empty leaf of its own between the two halves.
 */
static int split_leaf(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *ins_key,
		      struct btrfs_path *path, u32 need, int extend)
{
	int ret;
	struct extent_buffer *leaf = path->nodes[0];
	if (root->node == leaf && (ret = insert_new_root(fs, root, path, 1)))
		return ret;
	if ((ret = push_leaf(fs, root, path, need, extend, +1)) <= 0 || (ret = push_leaf(fs, root, path, need, extend, -1)) <= 0)
		return ret;

	leaf = path->nodes[0];
	int n = (int)btrfs_nritems(leaf), slot = path->slots[0], pslot = path->slots[1];
	u32 cap = leaf_data_size(fs);
	if (extend && n == 1)
		return blab_fail(&fs->err, BLAB_EOVERFLOW, "item in leaf %llu cannot grow by %u bytes",
				 (unsigned long long)leaf->start, need);
	struct leaf_pair lp;
	if ((ret = gather(fs, &lp, leaf, NULL)))
		return ret;
	int mid = -1, left = 0;
	int lo = extend ? 1 : 0, hi = extend ? n - 1 : n;
	for (int d = 0; mid < 0 && d <= n; d++) {
		for (int sgn = -1; mid < 0 && sgn <= 1; sgn += 2) {
			int m = n / 2 + sgn * d;
			if (m < lo || m > hi || (d == 0 && sgn > 0))
				continue;
			u32 l = items_used(lp.items, 0, m), r = items_used(lp.items, m, n);
			if ((extend ? slot < m : slot <= m) && l + need <= cap)
				mid = m, left = 1;
			else if (slot >= m && r + need <= cap)
				mid = m, left = 0;
		}
	}
	/* No split point fits a large item inserted in the middle: [0, slot)
	 * stays, [slot, n) moves right, and the item gets an empty leaf between. */
	int twice = mid < 0;
	if (twice) {
		assert(!extend && slot > 0 && slot < n);
		mid = slot;
	}
	struct btrfs_key rkey = mid < n ? lp.items[mid].key : *ins_key;
	struct extent_buffer *r = new_right_leaf(fs, root, path, pslot, &rkey);
	struct extent_buffer *m = r && twice ? new_right_leaf(fs, root, path, pslot, ins_key) : NULL;
	if (!r || (twice && !m)) {
		release(&lp);
		return fs->err.code;
	}
	leaf_fill(fs, leaf, lp.items, mid);
	leaf_fill(fs, r, lp.items + mid, n - mid);
	release(&lp);
	if (twice) {
		path->nodes[0] = m;
		path->slots[0] = 0;
		path->slots[1] = pslot + 1;
	} else if (!left) {
		path->nodes[0] = r;
		path->slots[0] = slot - mid;
		path->slots[1] = pslot + 1;
	}
	fs_trace(fs, (struct trace_event){.kind = TRACE_SPLIT, .tree = root->objectid, .bytenr = leaf->start,
					  .a = twice ? m->start : r->start, .level = 0, .slot = mid});
	return 0;
}

/*
 * Before a full node splits, moves key pointers to a neighbour with room
 * (dir -1: the node's first ones to the left neighbour's end; +1: its last
 * ones to the right neighbour's start), half the difference between them.
 * Returns 0 when it moved some (path updated), 1 when it could not.
 */
static int push_node(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int level, int dir)
{
	struct extent_buffer *node = path->nodes[level], *parent = path->nodes[level + 1];
	if (!parent)
		return 1;
	int pslot = path->slots[level + 1], sslot = pslot + dir;
	if (sslot < 0 || sslot >= (int)btrfs_nritems(parent))
		return 1;
	struct extent_buffer *sib = read_child(fs, root, parent, sslot, 0);
	if (!sib)
		return fs->err.code;
	int n = (int)btrfs_nritems(node), ns = (int)btrfs_nritems(sib), max = (int)btrfs_nodeptrs(fs);
	int k = (n - ns) / 2;
	if (k > max - 4 - ns)
		k = max - 4 - ns;
	if (k < 4)
		return 1; /* not worth it: split */
	if (btrfs_cow_block(fs, root, sib, parent, sslot, &sib))
		return fs->err.code;
	int slot = path->slots[level];
	if (dir < 0) {
		memcpy(btrfs_key_ptr_nr(sib, ns), btrfs_key_ptr_nr(node, 0), (size_t)k * BTRFS_KEY_PTR_SIZE);
		memmove(btrfs_key_ptr_nr(node, 0), btrfs_key_ptr_nr(node, k), (size_t)(n - k) * BTRFS_KEY_PTR_SIZE);
	} else {
		memmove(btrfs_key_ptr_nr(sib, k), btrfs_key_ptr_nr(sib, 0), (size_t)ns * BTRFS_KEY_PTR_SIZE);
		memcpy(btrfs_key_ptr_nr(sib, 0), btrfs_key_ptr_nr(node, n - k), (size_t)k * BTRFS_KEY_PTR_SIZE);
	}
	memset(btrfs_key_ptr_nr(node, n - k), 0, (size_t)k * BTRFS_KEY_PTR_SIZE);
	btrfs_set_header_nritems(node->data, (u32)(n - k));
	btrfs_set_header_nritems(sib->data, (u32)(ns + k));
	node->dirty = sib->dirty = 1;
	/* the right one of the pair has a new first key */
	struct extent_buffer *right = dir < 0 ? node : sib;
	struct btrfs_key k0;
	btrfs_node_key(right, 0, &k0);
	btrfs_cpu_key_to_disk(btrfs_key_ptr_nr(parent, dir < 0 ? pslot : sslot), &k0);
	parent->dirty = 1;
	if (dir < 0 && slot < k) {
		path->nodes[level] = sib;
		path->slots[level] = ns + slot;
		path->slots[level + 1] = sslot;
	} else if (dir < 0) {
		path->slots[level] = slot - k;
	} else if (slot >= n - k) {
		path->nodes[level] = sib;
		path->slots[level] = slot - (n - k);
		path->slots[level + 1] = sslot;
	}
	fs_trace(fs, (struct trace_event){.kind = TRACE_PUSH, .tree = root->objectid, .bytenr = sib->start, .a = node->start,
					  .level = level, .slot = k, .b = (u32)(k + ns) * BTRFS_KEY_PTR_SIZE});
	return 0;
}

/* Makes room in a full node: a push to a neighbour, or a split in two
 * (growing the root first if it is the root). */
static int split_node(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int level)
{
	struct extent_buffer *c = path->nodes[level];
	int ret;
	if (root->node != c) {
		if ((ret = push_node(fs, root, path, level, -1)) <= 0 || (ret = push_node(fs, root, path, level, +1)) <= 0)
			return ret;
	}
	if (root->node == c && (ret = insert_new_root(fs, root, path, level + 1)))
		return ret;
	int n = (int)btrfs_nritems(c), mid = (n + 1) / 2;
	struct extent_buffer *s = btrfs_alloc_tree_block(fs, root->objectid, level);
	if (!s)
		return fs->err.code;
	memcpy(btrfs_key_ptr_nr(s, 0), btrfs_key_ptr_nr(c, mid), (size_t)(n - mid) * BTRFS_KEY_PTR_SIZE);
	btrfs_set_header_nritems(s->data, (u32)(n - mid));
	btrfs_set_header_nritems(c->data, (u32)mid);
	memset(btrfs_key_ptr_nr(c, mid), 0, (size_t)(n - mid) * BTRFS_KEY_PTR_SIZE);
	c->dirty = 1;
	struct btrfs_key k;
	btrfs_node_key(s, 0, &k);
	insert_ptr(fs, path->nodes[level + 1], path->slots[level + 1] + 1, &k, s->start, fs->generation);
	if (path->slots[level] >= mid) {
		path->slots[level] -= mid;
		path->nodes[level] = s;
		path->slots[level + 1]++;
	}
	fs_trace(fs, (struct trace_event){.kind = TRACE_SPLIT, .tree = root->objectid, .bytenr = c->start, .a = s->start,
					  .level = level, .slot = mid});
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Search                                                                 */

int btrfs_search_slot(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key,
		      struct btrfs_path *path, int ins_len, int cow)
{
	memset(path, 0, sizeof(*path));
	if (!root)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "a tree this operation needs is missing from the root tree");
	if (!root->node)
		return blab_fail(&fs->err, BLAB_ENOENT, "tree %lld has no root block", (long long)root->objectid);
	if (cow && !fs->trans_running)
		return blab_fail(&fs->err, BLAB_EINVAL, "changing tree %lld outside a transaction", (long long)root->objectid);
	struct extent_buffer *b = root->node;
	if (cow && btrfs_cow_block(fs, root, b, NULL, 0, &b))
		return fs->err.code;
	for (;;) {
		int level = btrfs_level(b), slot;
		int ret = btrfs_bin_search(b, key, &slot);
		path->nodes[level] = b;
		if (level == 0) {
			path->slots[0] = slot;
			fs_trace(fs, (struct trace_event){.kind = TRACE_SEARCH, .tree = root->objectid, .bytenr = b->start,
							  .level = 0, .slot = slot, .key = *key, .a = ret == 0});
			if (ins_len > 0 && btrfs_leaf_free_space(fs, b) < (u32)ins_len) {
				int r = split_leaf(fs, root, key, path, (u32)ins_len, ret == 0);
				if (r)
					return r;
			}
			return ret;
		}
		if (ret && slot > 0)
			slot--;
		path->slots[level] = slot;
		fs_trace(fs, (struct trace_event){.kind = TRACE_SEARCH, .tree = root->objectid, .bytenr = b->start,
						  .level = level, .slot = slot, .key = *key});
		if (ins_len > 0 && btrfs_nritems(b) >= btrfs_nodeptrs(fs) - 3) {
			int r = split_node(fs, root, path, level);
			if (r)
				return r;
			b = path->nodes[level];
			slot = path->slots[level];
		}
		struct extent_buffer *c = read_child(fs, root, b, slot, cow);
		if (!c)
			return fs->err.code;
		b = c;
	}
}

/* From path->nodes[level] at its slot, reads the blocks down to a leaf,
 * each at its first slot (or its last, with to_last). */
static int descend(struct btrfs_fs_info *fs, struct btrfs_path *path, int level, int to_last)
{
	while (level > 0) {
		struct extent_buffer *parent = path->nodes[level];
		struct extent_buffer *c = btrfs_read_node_slot(fs, parent, path->slots[level], btrfs_header_owner(parent->data));
		if (!c)
			return fs->err.code;
		level--;
		path->nodes[level] = c;
		path->slots[level] = to_last ? (int)btrfs_nritems(c) - 1 : 0;
	}
	return 0;
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
	int ret = descend(fs, path, level, 0);
	if (ret)
		return ret;
	return btrfs_nritems(path->nodes[0]) ? 0 : btrfs_path_next_item(fs, path);
}

/* Fills the cursor from its path once btrfs_path_next_item put it at an item. */
static int cursor_at(struct btrfs_item_cursor *c, int ret)
{
	if (ret)
		return ret;
	c->leaf = c->path.nodes[0];
	c->slot = c->path.slots[0];
	btrfs_item_key(c->leaf, c->slot, &c->key);
	c->data = btrfs_item_ptr(c->leaf, c->slot);
	c->size = btrfs_item_size_nr(c->leaf, c->slot);
	return 0;
}

int btrfs_cursor_first(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *from,
		       struct btrfs_item_cursor *c)
{
	int ret = btrfs_search_slot(fs, root, from, &c->path, 0, 0);
	if (ret < 0)
		return ret;
	return cursor_at(c, btrfs_path_next_item(fs, &c->path));
}

int btrfs_cursor_next(struct btrfs_fs_info *fs, struct btrfs_item_cursor *c)
{
	c->path.slots[0]++;
	return cursor_at(c, btrfs_path_next_item(fs, &c->path));
}

int btrfs_prev_key(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key, struct btrfs_key *out)
{
	struct btrfs_path path;
	int ret = btrfs_search_slot(fs, root, key, &path, 0, 0);
	if (ret < 0)
		return ret;
	if ((ret = btrfs_prev_item(fs, &path)) == 0)
		btrfs_item_key(path.nodes[0], path.slots[0], out);
	return ret;
}

int btrfs_del_items_of(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 objectid, u8 min_type, u8 max_type)
{
	for (;;) {
		/* the first remaining item, found read-only ... */
		struct btrfs_item_cursor cur;
		struct btrfs_key from = {objectid, min_type, 0}, k;
		int ret = btrfs_cursor_first(fs, root, &from, &cur);
		if (ret)
			return ret < 0 ? ret : 0;
		k = cur.key;
		if (k.objectid != objectid || k.type > max_type)
			return 0;
		/* ... then a writable path to it, and the run of such items in that leaf goes */
		struct btrfs_path path;
		if ((ret = btrfs_search_slot(fs, root, &k, &path, -1, 1)) != 0)
			return ret < 0 ? ret : blab_fail(&fs->err, BLAB_ECORRUPT, "item (%llu %u %llu) vanished between two searches",
							 (unsigned long long)k.objectid, k.type, (unsigned long long)k.offset);
		struct extent_buffer *leaf = path.nodes[0];
		int slot = path.slots[0], n = 0;
		while (slot + n < (int)btrfs_nritems(leaf)) {
			btrfs_item_key(leaf, slot + n, &k);
			if (k.objectid != objectid || k.type > max_type)
				break;
			n++;
		}
		if ((ret = btrfs_del_items(fs, root, &path, slot, n)))
			return ret;
	}
}

int btrfs_for_each_item(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 objectid, u8 type, btrfs_item_fn fn,
			void *ctx)
{
	struct btrfs_item_cursor c;
	struct btrfs_key from = {objectid, type, 0};
	int ret;
	for (ret = btrfs_cursor_first(fs, root, &from, &c); ret == 0; ret = btrfs_cursor_next(fs, &c)) {
		if (c.key.objectid != objectid || c.key.type != type)
			return 0;
		int r = fn(ctx, &c.key, c.data, c.size);
		if (r)
			return r;
	}
	return ret < 0 ? ret : 0;
}

int btrfs_prev_item(struct btrfs_fs_info *fs, struct btrfs_path *path)
{
	if (path->slots[0] > 0) {
		path->slots[0]--;
		return 0;
	}
	int level = 1;
	while (level < BTRFS_MAX_LEVEL && path->nodes[level] && path->slots[level] == 0)
		level++;
	if (level >= BTRFS_MAX_LEVEL || !path->nodes[level])
		return 1;
	path->slots[level]--;
	int ret = descend(fs, path, level, 1);
	if (ret)
		return ret;
	return path->slots[0] >= 0 ? 0 : btrfs_prev_item(fs, path);
}

/* ---------------------------------------------------------------------- */
/* Insert                                                                 */

u32 btrfs_leaf_insert_moves(const struct extent_buffer *leaf, int slot)
{
	u32 nr = btrfs_nritems(leaf);
	if ((u32)slot >= nr)
		return 0;
	u32 data_after = btrfs_item_offset_nr(leaf, slot) + btrfs_item_size_nr(leaf, slot) - btrfs_item_offset_nr(leaf, (int)nr - 1);
	return (nr - (u32)slot) * BTRFS_ITEM_SIZE + data_after;
}

/* Makes room for an item of size bytes at the path's slot; the leaf has
 * room. Returns the bytes it moved aside (btrfs_leaf_insert_moves). */
static u32 leaf_insert_empty(struct btrfs_fs_info *fs, struct btrfs_path *path, const struct btrfs_key *key, u32 size)
{
	struct extent_buffer *leaf = path->nodes[0];
	int slot = path->slots[0];
	u32 moved = btrfs_leaf_insert_moves(leaf, slot);
	u32 nr = btrfs_nritems(leaf);
	assert(btrfs_leaf_free_space(fs, leaf) >= size + BTRFS_ITEM_SIZE);
	u32 data_end = nr ? btrfs_item_offset_nr(leaf, (int)nr - 1) : leaf_data_size(fs);
	u8 *base = leaf->data + BTRFS_HEADER_SIZE;
	if ((u32)slot < nr) {
		u32 old_end = btrfs_item_offset_nr(leaf, slot) + btrfs_item_size_nr(leaf, slot);
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
	memset(base + data_end - size, 0, size);
	btrfs_set_header_nritems(leaf->data, nr + 1);
	leaf->dirty = 1;
	if (slot == 0)
		fixup_low_keys(path, key, 1);
	return moved;
}

int btrfs_insert_empty_item(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path,
			    const struct btrfs_key *key, u32 size)
{
	if (size > leaf_data_size(fs) - BTRFS_ITEM_SIZE)
		return blab_fail(&fs->err, BLAB_EOVERFLOW, "item (%llu %u %llu) of %u bytes cannot fit in a %u-byte leaf",
				 (unsigned long long)key->objectid, key->type, (unsigned long long)key->offset, size,
				 fs->nodesize);
	int ret = btrfs_search_slot(fs, root, key, path, (int)(size + BTRFS_ITEM_SIZE), 1);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return blab_fail(&fs->err, BLAB_EEXIST, "item (%llu %u %llu) exists in tree %lld",
				 (unsigned long long)key->objectid, key->type, (unsigned long long)key->offset,
				 (long long)root->objectid);
	fs_note_moved(fs, root->objectid, key, leaf_insert_empty(fs, path, key, size));
	fs_trace(fs, (struct trace_event){.kind = TRACE_ITEM_INSERT, .tree = root->objectid, .bytenr = path->nodes[0]->start,
					  .slot = path->slots[0], .key = *key, .a = size});
	return 0;
}

int btrfs_insert_item(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key,
		      const void *data, u32 size)
{
	struct btrfs_path path;
	int ret = btrfs_insert_empty_item(fs, root, &path, key, size);
	if (ret)
		return ret;
	if (data && size)
		memcpy(btrfs_item_ptr(path.nodes[0], path.slots[0]), data, size);
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

/* ---------------------------------------------------------------------- */
/* Resize an item in place                                                */

void btrfs_extend_item(struct btrfs_fs_info *fs, struct btrfs_path *path, u32 extra)
{
	struct extent_buffer *leaf = path->nodes[0];
	int slot = path->slots[0];
	u32 nr = btrfs_nritems(leaf);
	assert(btrfs_leaf_free_space(fs, leaf) >= extra);
	u32 data_end = btrfs_item_offset_nr(leaf, (int)nr - 1);
	u32 old_off = btrfs_item_offset_nr(leaf, slot), old_size = btrfs_item_size_nr(leaf, slot);
	u8 *base = leaf->data + BTRFS_HEADER_SIZE;
	/* items slot..nr-1 hold data [data_end, old_off + old_size); move it down by extra */
	memmove(base + data_end - extra, base + data_end, old_off + old_size - data_end);
	for (u32 i = (u32)slot; i < nr; i++) {
		u8 *it = btrfs_item_nr(leaf, (int)i);
		btrfs_set_item_offset(it, btrfs_item_offset(it) - extra);
	}
	btrfs_set_item_size(btrfs_item_nr(leaf, slot), old_size + extra);
	memset(base + old_off + old_size - extra, 0, extra);
	leaf->dirty = 1;
}

void btrfs_truncate_item(struct btrfs_fs_info *fs, struct btrfs_path *path, u32 new_size, int from_end)
{
	struct extent_buffer *leaf = path->nodes[0];
	int slot = path->slots[0];
	u32 nr = btrfs_nritems(leaf);
	u32 old_off = btrfs_item_offset_nr(leaf, slot), old_size = btrfs_item_size_nr(leaf, slot);
	(void)fs;
	assert(new_size <= old_size);
	u32 cut = old_size - new_size;
	if (!cut)
		return;
	u32 data_end = btrfs_item_offset_nr(leaf, (int)nr - 1);
	u8 *base = leaf->data + BTRFS_HEADER_SIZE;
	/* the item keeps its end; what it keeps ends up at [old_off + cut, old_off + old_size) */
	if (from_end)
		memmove(base + old_off + cut, base + old_off, new_size);
	memmove(base + data_end + cut, base + data_end, old_off - data_end);
	memset(base + data_end, 0, cut);
	for (u32 i = (u32)slot; i < nr; i++) {
		u8 *it = btrfs_item_nr(leaf, (int)i);
		btrfs_set_item_offset(it, btrfs_item_offset(it) + cut);
	}
	btrfs_set_item_size(btrfs_item_nr(leaf, slot), new_size);
	leaf->dirty = 1;
}

/* ---------------------------------------------------------------------- */
/* Delete                                                                 */

static int del_ptr(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int level, int slot);

/* Removes the (empty or merged-away) block nodes[level] from its parent and frees it. */
static int remove_block(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int level,
			struct extent_buffer *eb, int pslot)
{
	int ret = del_ptr(fs, root, path, level + 1, pslot);
	if (ret)
		return ret;
	return btrfs_free_tree_block(fs, root, eb);
}

typedef int (*fits_fn)(struct btrfs_fs_info *fs, const struct extent_buffer *a, const struct extent_buffer *b);

/* The first neighbour of path->nodes[level] in its parent (left, then right)
 * that fits with it in one block, made writable: 0 with the pair in *left and
 * *right and the right one's slot in the parent, 1 when none fits, or an error. */
static int mergeable_sibling(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int level,
			     fits_fn fits, struct extent_buffer **left, struct extent_buffer **right, int *rslot)
{
	struct extent_buffer *eb = path->nodes[level], *parent = path->nodes[level + 1];
	int pslot = path->slots[level + 1];
	for (int dir = -1; dir <= 1; dir += 2) {
		int sslot = pslot + dir;
		if (sslot < 0 || sslot >= (int)btrfs_nritems(parent))
			continue;
		struct extent_buffer *sib = read_child(fs, root, parent, sslot, 0);
		if (!sib)
			return fs->err.code;
		if (!fits(fs, eb, sib))
			continue;
		if (btrfs_cow_block(fs, root, sib, parent, sslot, &sib))
			return fs->err.code;
		*left = dir < 0 ? sib : eb;
		*right = dir < 0 ? eb : sib;
		*rslot = dir < 0 ? pslot : sslot;
		return 0;
	}
	return 1;
}

static int nodes_fit(struct btrfs_fs_info *fs, const struct extent_buffer *a, const struct extent_buffer *b)
{
	return btrfs_nritems(a) + btrfs_nritems(b) <= btrfs_nodeptrs(fs) - 4;
}

/* Merges a node that has become small with a neighbour, when both fit in one. */
static int balance_node(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int level)
{
	struct extent_buffer *node = path->nodes[level], *parent = path->nodes[level + 1], *left, *right;
	if (!parent || btrfs_nritems(node) >= btrfs_nodeptrs(fs) / 4)
		return 0;
	int rslot, ret = mergeable_sibling(fs, root, path, level, nodes_fit, &left, &right, &rslot);
	if (ret)
		return ret > 0 ? 0 : ret;
	int nl = (int)btrfs_nritems(left), nr = (int)btrfs_nritems(right);
	memcpy(btrfs_key_ptr_nr(left, nl), btrfs_key_ptr_nr(right, 0), (size_t)nr * BTRFS_KEY_PTR_SIZE);
	btrfs_set_header_nritems(left->data, (u32)(nl + nr));
	btrfs_set_header_nritems(right->data, 0);
	left->dirty = 1;
	fs_trace(fs, (struct trace_event){.kind = TRACE_MERGE, .tree = root->objectid, .bytenr = left->start,
					  .a = right->start, .level = level});
	/* the right block goes; the path above still points at the parent */
	return remove_block(fs, root, path, level, right, rslot);
}

static int del_ptr(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int level, int slot)
{
	struct extent_buffer *node = path->nodes[level];
	u32 nr = btrfs_nritems(node);
	assert(level > 0 && (u32)slot < nr);
	memmove(btrfs_key_ptr_nr(node, slot), btrfs_key_ptr_nr(node, slot + 1), (nr - (u32)slot - 1) * BTRFS_KEY_PTR_SIZE);
	memset(btrfs_key_ptr_nr(node, (int)nr - 1), 0, BTRFS_KEY_PTR_SIZE);
	btrfs_set_header_nritems(node->data, --nr);
	node->dirty = 1;
	if (nr == 0) {
		assert(root->node != node);
		return remove_block(fs, root, path, level, node, path->slots[level + 1]);
	}
	if (root->node == node) {
		if (nr == 1) {
			/* the root has one child left: the child becomes the root */
			struct extent_buffer *child = read_child(fs, root, node, 0, 0);
			if (!child)
				return fs->err.code;
			root->node = child;
			fs_trace(fs, (struct trace_event){.kind = TRACE_ROOT_SHRINK, .tree = root->objectid, .bytenr = child->start,
							  .level = btrfs_level(child)});
			path->nodes[level] = NULL;
			return btrfs_free_tree_block(fs, root, node);
		}
		return 0;
	}
	if (slot == 0) {
		struct btrfs_key k;
		btrfs_node_key(node, 0, &k);
		fixup_low_keys(path, &k, level + 1);
	}
	return balance_node(fs, root, path, level);
}

static int leaves_fit(struct btrfs_fs_info *fs, const struct extent_buffer *a, const struct extent_buffer *b)
{
	return leaf_space_used(a, 0, (int)btrfs_nritems(a)) + leaf_space_used(b, 0, (int)btrfs_nritems(b)) <=
	       leaf_data_size(fs);
}

/* Merges a leaf that has become small into a neighbour, when both fit. */
static int balance_leaf(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path)
{
	struct extent_buffer *leaf = path->nodes[0], *parent = path->nodes[1], *left, *right;
	if (!parent || leaf_space_used(leaf, 0, (int)btrfs_nritems(leaf)) >= leaf_data_size(fs) / 3)
		return 0;
	int rslot, ret = mergeable_sibling(fs, root, path, 0, leaves_fit, &left, &right, &rslot);
	if (ret)
		return ret > 0 ? 0 : ret;
	struct leaf_pair lp;
	if ((ret = gather(fs, &lp, left, right)))
		return ret;
	leaf_fill(fs, left, lp.items, lp.n);
	leaf_fill(fs, right, NULL, 0);
	release(&lp);
	fs_trace(fs, (struct trace_event){.kind = TRACE_MERGE, .tree = root->objectid, .bytenr = left->start,
					  .a = right->start, .level = 0});
	return remove_block(fs, root, path, 0, right, rslot);
}

int btrfs_del_items(struct btrfs_fs_info *fs, struct btrfs_root *root, struct btrfs_path *path, int slot, int nr)
{
	struct extent_buffer *leaf = path->nodes[0];
	u32 n = btrfs_nritems(leaf);
	assert(slot >= 0 && nr > 0 && (u32)(slot + nr) <= n);
	assert(btrfs_header_generation(leaf->data) == fs->generation);
	for (int i = slot; i < slot + nr; i++) {
		struct btrfs_key k;
		btrfs_item_key(leaf, i, &k);
		fs_trace(fs, (struct trace_event){.kind = TRACE_ITEM_DELETE, .tree = root->objectid, .bytenr = leaf->start,
						  .slot = i, .key = k});
	}
	u32 dsize = 0;
	for (int i = slot; i < slot + nr; i++)
		dsize += btrfs_item_size_nr(leaf, i);
	u32 data_end = btrfs_item_offset_nr(leaf, (int)n - 1);
	u8 *base = leaf->data + BTRFS_HEADER_SIZE;
	struct btrfs_key first;
	btrfs_item_key(leaf, slot, &first);
	if ((u32)(slot + nr) < n) {
		u32 last_off = btrfs_item_offset_nr(leaf, slot + nr - 1);
		/* data of items after the range sits at [data_end, last_off): move it up by dsize */
		memmove(base + data_end + dsize, base + data_end, last_off - data_end);
		for (u32 i = (u32)(slot + nr); i < n; i++) {
			u8 *it = btrfs_item_nr(leaf, (int)i);
			btrfs_set_item_offset(it, btrfs_item_offset(it) + dsize);
		}
		memmove(btrfs_item_nr(leaf, slot), btrfs_item_nr(leaf, slot + nr), (n - (u32)(slot + nr)) * BTRFS_ITEM_SIZE);
		fs_note_moved(fs, root->objectid, &first, (last_off - data_end) + (n - (u32)(slot + nr)) * BTRFS_ITEM_SIZE);
	}
	n -= (u32)nr;
	memset(btrfs_item_nr(leaf, (int)n), 0, (size_t)nr * BTRFS_ITEM_SIZE);
	btrfs_set_header_nritems(leaf->data, n);
	leaf->dirty = 1;
	if (n == 0) {
		if (root->node == leaf)
			return 0;
		return remove_block(fs, root, path, 0, leaf, path->slots[1]);
	}
	if (slot == 0) {
		struct btrfs_key k;
		btrfs_item_key(leaf, 0, &k);
		fixup_low_keys(path, &k, 1);
	}
	return balance_leaf(fs, root, path);
}

int btrfs_delete_item(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key)
{
	struct btrfs_path path;
	int ret = btrfs_search_slot(fs, root, key, &path, -1, 1);
	if (ret < 0)
		return ret;
	if (ret > 0)
		return BLAB_ENOENT;
	return btrfs_del_items(fs, root, &path, path.slots[0], 1);
}
