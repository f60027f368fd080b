/* relocation.c — balance and relocation of block groups.
 *
 * A block group is relocated as the kernel relocates one: it is made
 * read-only, so that nothing new is allocated in it; every extent in it is
 * then moved. A tree block of a tree no other shares (the extent, csum,
 * root, chunk... trees) moves when the path to it in its tree is copied (a
 * search that copies every block on its way down, stopping at the block's
 * level): the copy is allocated in another group, the old extent freed at
 * the commit.
 *
 * A block of a subvolume tree may be shared by snapshots, and copying the
 * path in each tree would unshare it. So, as the kernel does, each subvolume
 * tree that reaches a block in the group gets a reloc tree (TREE_RELOC,
 * created as a copy of its root, sharing every block below): the path is
 * copied there, once, and a reloc tree that reaches a block another already
 * copied points at that copy. Reloc tree blocks keep their subvolume as
 * owner, carry the RELOC header flag, and have full backrefs (their
 * children are referenced by them). Then merge: the subvolume's root is
 * copied in its own tree, and each pointer where its reloc tree's root
 * points elsewhere is swapped (replace_path: the subvolume takes the new
 * subtree, the reloc tree the old one); the reloc trees are dropped, which
 * frees the old blocks no snapshot still shares. All of it in one
 * transaction (the kernel commits between relocating and merging, with root
 * items for the reloc trees; here they never reach disk).
 *
 * When the group is empty its BLOCK_GROUP_ITEM, free space items, CHUNK item
 * and DEV_EXTENTs go, and its chunk's device space is free again.
 *
 * Data: each extent of a data group is copied, with its checksums, to a new
 * extent (the kernel writes it through the data reloc tree's inode, empty
 * again when relocation ends: the same result), then every leaf pointing at
 * it is copied into the reloc trees like a tree block and its file extents
 * pointed at the new place (replace_file_extents); merge swaps those leaves
 * (or their ancestors) in, and the reloc trees' drop lets the old extents
 * go.
 *
 * Deleted subvolumes the cleaner has not dropped yet are dropped first
 * (btrfs_clean_deleted_snapshots, to the end). The kernel waits so for a
 * drop it found half done at mount (relocation waits on
 * BTRFS_FS_UNFINISHED_DROPS); a subvolume deleted since, it relocates
 * beside the cleaner: its reloc tree is marked dead and not merged, and
 * relocation passes over the group again until the cleaner has freed the
 * old blocks. Here, one task, the cleaner goes first: the same filesystem
 * after, the dead tree's blocks not among those found. */
#include "relocation.h"
#include "root-tree.h"
#include "tree-checker.h"
#include "delayed-ref.h"
#include "qgroup.h"
#include "file-item.h"
#include "block-group.h"
#include "ctree.h"
#include "disk-io.h"
#include "extent-tree.h"
#include "transaction.h"
#include "volumes.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tree_block {
	u64 bytenr;
	int level; /* -1: a data extent */
	u64 len;
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
				level = -1; /* data */
				goto add;
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
		if (level >= BTRFS_MAX_LEVEL) {
			ret = blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu at level %d", (unsigned long long)c.key.objectid, level);
			break;
		}
add:
		(*extents)++;
		if (k == cap) {
			struct tree_block *nv = realloc(v, (cap *= 2) * sizeof(*v));
			if (!nv) {
				ret = blab_fail(&fs->err, BLAB_ENOMEM, "relocating block group %llu", (unsigned long long)bg->start);
				break;
			}
			v = nv;
		}
		v[k++] = (struct tree_block){c.key.objectid, level, level < 0 ? c.key.offset : fs->nodesize};
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

/* ---- reloc trees ---- */

struct reloc_control;
static int replace_file_extents(struct reloc_control *rc, struct extent_buffer *eb, int full, u64 root);

struct reloc_control {
	struct btrfs_fs_info *fs;
	struct btrfs_root **rr; /* the reloc tree of fs->roots[i], or NULL */
	size_t nroots;
	struct u64map moved;    /* old block -> its copy in a reloc tree */
	struct u64map data;     /* a data extent of the group -> its new place */
	u64 start, end;         /* the group */
};

static int reloc_owned_refs(struct btrfs_fs_info *fs, struct extent_buffer *n, u64 parent)
{
	/* allocated keyed by its owner: reloc tree blocks are referenced by their
	 * parent instead (by themselves at the top), and have full backrefs */
	int level = btrfs_level(n), ret;
	if ((ret = btrfs_mod_tree_ref(fs, n->start, level, BTRFS_TREE_RELOC_OBJECTID, 0, -1)) ||
	    (ret = btrfs_mod_tree_ref(fs, n->start, level, 0, parent ? parent : n->start, +1)))
		return ret;
	return btrfs_set_tree_block_flags(fs, n->start, level, BTRFS_BLOCK_FLAG_FULL_BACKREF);
}

static struct extent_buffer *reloc_alloc(struct btrfs_fs_info *fs, const struct extent_buffer *src)
{
	struct extent_buffer *n = btrfs_alloc_tree_block(fs, BTRFS_TREE_RELOC_OBJECTID, btrfs_level(src));
	if (!n)
		return NULL;
	memcpy(n->data, src->data, fs->nodesize);
	btrfs_set_header_bytenr(n->data, n->start);
	btrfs_set_header_generation(n->data, fs->generation);
	/* the owner stays the subvolume's (a reloc tree's copy is one of its
	 * blocks once merged); the RELOC flag says it was made by a reloc tree */
	btrfs_set_header_flags(n->data, (BTRFS_MIXED_BACKREF_REV << BTRFS_BACKREF_REV_SHIFT) | BTRFS_HEADER_FLAG_RELOC);
	n->dirty = 1;
	/* before 4.20 the kernel took the subvolume owning it for the tree making it: a qgroup record */
	if (btrfs_qgroup_swap_mode(fs) == BTRFS_QGROUP_SWAP_FULL && btrfs_qgroup_note(fs, n->start))
		return NULL;
	return n;
}

/* The reloc tree of subvolume r (fs->roots[i]): a copy of its root whose
 * children every one gain a reference by it (create_reloc_root). r's
 * last_snapshot becomes the transaction before, so its own copies from now
 * on look its blocks' references up. */
static struct btrfs_root *reloc_root_of(struct reloc_control *rc, size_t i)
{
	struct btrfs_fs_info *fs = rc->fs;
	if (rc->rr[i])
		return rc->rr[i];
	struct btrfs_root *r = fs->roots[i], *rr = calloc(1, sizeof(*rr));
	if (!rr) {
		blab_fail(&fs->err, BLAB_ENOMEM, "reloc tree of tree %llu", (unsigned long long)r->objectid);
		return NULL;
	}
	struct extent_buffer *n = reloc_alloc(fs, r->node);
	if (!n || reloc_owned_refs(fs, n, 0) || btrfs_mod_refs_of(fs, BTRFS_TREE_RELOC_OBJECTID, n, 1, +1)) {
		free(rr);
		return NULL;
	}
	rr->objectid = BTRFS_TREE_RELOC_OBJECTID;
	rr->item_offset = r->objectid;
	rr->node = n;
	u64map_init(&rr->dir_index, sizeof(u64));
	btrfs_set_root_last_snapshot(r->item, fs->generation - 1);
	r->item_dirty = 1;
	fs_trace(fs, (struct trace_event){.kind = TRACE_RELOC_ROOT, .tree = r->objectid, .bytenr = n->start, .level = btrfs_level(n)});
	return rc->rr[i] = rr;
}

/* eb copied into reloc tree rr, under parent at slot (the update_ref_for_cow
 * of a reloc tree: full backrefs on both sides). */
static int reloc_cow(struct reloc_control *rc, struct btrfs_root *rr, struct extent_buffer *eb, struct extent_buffer *parent, int slot,
		     struct extent_buffer **out)
{
	struct btrfs_fs_info *fs = rc->fs;
	int level = btrfs_level(eb), ret;
	u64 refs, flags, owner = btrfs_header_owner(eb->data), old = eb->start;
	if ((ret = btrfs_lookup_extent_info(fs, eb->start, level, &refs, &flags)))
		return ret;
	struct extent_buffer *n = reloc_alloc(fs, eb);
	if (!n || (ret = reloc_owned_refs(fs, n, parent->start)))
		return n ? ret : fs->err.code;
	u8 *kp = btrfs_key_ptr_nr(parent, slot);
	btrfs_set_key_blockptr(kp, n->start);
	btrfs_set_key_generation(kp, fs->generation);
	parent->dirty = 1;
	fs_trace(fs, (struct trace_event){.kind = TRACE_COW, .tree = rr->objectid, .bytenr = old, .a = n->start, .level = level,
					  .b = fs->generation, .c = btrfs_header_generation(eb->data)});
	if (refs > 1) {
		if (!(flags & BTRFS_BLOCK_FLAG_FULL_BACKREF)) {
			/* its children were referenced keyed by its owner: by it now */
			if ((ret = btrfs_mod_refs_of(fs, owner, eb, 1, +1)) || (ret = btrfs_mod_refs_of(fs, owner, eb, 0, -1)) ||
			    (ret = btrfs_set_tree_block_flags(fs, old, level, BTRFS_BLOCK_FLAG_FULL_BACKREF)))
				return ret;
			fs_trace(fs, (struct trace_event){.kind = TRACE_FULL_BACKREF, .bytenr = old, .level = level, .tree = owner});
		}
		if ((ret = btrfs_mod_refs_of(fs, BTRFS_TREE_RELOC_OBJECTID, n, 1, +1)) ||
		    (ret = btrfs_mod_tree_ref(fs, old, level, 0, parent->start, -1)))
			return ret;
	} else {
		/* only this reloc tree held it (through parent) */
		if ((ret = btrfs_mod_refs_of(fs, BTRFS_TREE_RELOC_OBJECTID, n, 1, +1)) ||
		    (ret = btrfs_mod_refs_of(fs, owner, eb, (flags & BTRFS_BLOCK_FLAG_FULL_BACKREF) != 0, -1)) ||
		    (ret = btrfs_free_tree_block(fs, rr, eb)))
			return ret;
	}
	u64 *m = u64map_put(&rc->moved, old);
	if (!m)
		return blab_fail(&fs->err, BLAB_ENOMEM, "relocation");
	*m = n->start;
	*out = n;
	return 0;
}

/* Block bytenr of the subvolume trees out of the group: the path to it copied
 * in the reloc tree of each subvolume that reaches it, once (a reloc tree
 * whose path meets a block another copied points at that copy). */
static int relocate_shared_block(struct reloc_control *rc, u64 bytenr, int level, const struct btrfs_key *key)
{
	struct btrfs_fs_info *fs = rc->fs;
	int any = 0, ret;
	for (size_t i = 0; i < rc->nroots; i++) {
		struct btrfs_root *r = fs->roots[i];
		if (!btrfs_root_shareable(r) || !r->in_root_tree || !r->node)
			continue;
		if ((ret = btrfs_tree_reaches(fs, r, key, level, bytenr)) < 0)
			return ret;
		if (!ret)
			continue;
		if (!btrfs_root_refs(r->item) && !r->dead_seq)
			return blab_fail(&fs->err, BLAB_ENOTSUP, "tree block %llu (level %d) is in subvolume %llu, whose root item has refs 0 "
							       "but no orphan item (deleted, but never to be dropped by the cleaner): "
							       "btrfs-lab's balance does not relocate such a tree",
					 (unsigned long long)bytenr, level, (unsigned long long)r->objectid);
		if (!btrfs_root_refs(r->item))
			return blab_fail(&fs->err, BLAB_EIO, "tree block %llu (level %d) is in deleted subvolume %llu, which the cleaner "
							    "should have dropped before relocation",
					 (unsigned long long)bytenr, level, (unsigned long long)r->objectid);
		any = 1;
		struct btrfs_root *rr = reloc_root_of(rc, i);
		if (!rr)
			return fs->err.code;
		if (r->node->start == bytenr)
			continue; /* the subvolume's root: merge copies it */
		struct extent_buffer *cur = rr->node;
		while (btrfs_level(cur) > level) {
			int slot;
			if (btrfs_bin_search(cur, key, &slot) && slot > 0)
				slot--;
			u64 child = btrfs_node_blockptr(cur, slot), *to = u64map_get(&rc->moved, child);
			struct extent_buffer *c;
			if (to) {
				/* another reloc tree copied it: point at that copy */
				if ((ret = btrfs_mod_tree_ref(fs, *to, btrfs_level(cur) - 1, 0, cur->start, +1)) ||
				    (ret = btrfs_mod_tree_ref(fs, child, btrfs_level(cur) - 1, 0, cur->start, -1)))
					return ret;
				u8 *kp = btrfs_key_ptr_nr(cur, slot);
				btrfs_set_key_blockptr(kp, *to);
				btrfs_set_key_generation(kp, fs->generation);
				cur->dirty = 1;
				if (!(c = btrfs_read_tree_block(fs, *to, btrfs_level(cur) - 1, 0)))
					return fs->err.code;
			} else {
				if (!(c = btrfs_read_node_slot(fs, cur, slot, 0)))
					return fs->err.code;
				/* made in this relocation: changes in place */
				if (btrfs_header_generation(c->data) != fs->generation || !(btrfs_header_flags(c->data) & BTRFS_HEADER_FLAG_RELOC))
					if ((ret = reloc_cow(rc, rr, c, cur, slot, &c)))
						return ret;
			}
			cur = c;
		}
	}
	if (!any)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu (level %d) of a subvolume tree is reached by no subvolume",
				 (unsigned long long)bytenr, level);
	return 0;
}

/* merge_reloc_root: subvolume r's root copied in r, then each of its
 * pointers its reloc tree's root does not share swapped (replace_path): r
 * takes the reloc tree's new subtree, the reloc tree the old one. */
static int merge_reloc_root(struct reloc_control *rc, struct btrfs_root *r, struct btrfs_root *rr)
{
	struct btrfs_fs_info *fs = rc->fs;
	struct extent_buffer *n, *m = rr->node;
	int ret = btrfs_cow_block(fs, r, r->node, NULL, 0, &n);
	if (ret)
		return ret;
	int level = btrfs_level(n);
	if (!level)
		return rc->data.len ? replace_file_extents(rc, n, 0, r->objectid) : 0; /* a root leaf: its own file extents */
	if (btrfs_nritems(n) != btrfs_nritems(m))
		return blab_fail(&fs->err, BLAB_EIO, "tree %llu changed while it was relocated", (unsigned long long)r->objectid);
	for (u32 s = 0; s < btrfs_nritems(n); s++) {
		u64 nb = btrfs_node_blockptr(n, (int)s), mb = btrfs_node_blockptr(m, (int)s);
		if (nb == mb)
			continue;
		struct btrfs_key nk, mk;
		btrfs_node_key(n, (int)s, &nk);
		btrfs_node_key(m, (int)s, &mk);
		if (btrfs_comp_keys(&nk, &mk))
			return blab_fail(&fs->err, BLAB_EIO, "tree %llu and its reloc tree differ at slot %u", (unsigned long long)r->objectid, s);
		u64 ngen = btrfs_key_generation(btrfs_key_ptr_nr(n, (int)s)), mgen = btrfs_key_generation(btrfs_key_ptr_nr(m, (int)s));
		/* refs: the new subtree keyed by r (its root's pointers are r's), no longer by the reloc root; the old one the other way */
		fs->qgroup_skip = btrfs_qgroup_swap_mode(fs) != BTRFS_QGROUP_SWAP_FULL; /* replace_path's refs skip qgroups since 4.20 */
		ret = btrfs_mod_tree_ref(fs, mb, level - 1, r->objectid, 0, +1);
		if (!ret)
			ret = btrfs_mod_tree_ref(fs, mb, level - 1, 0, m->start, -1);
		if (!ret)
			ret = btrfs_mod_tree_ref(fs, nb, level - 1, 0, m->start, +1);
		if (!ret)
			ret = btrfs_mod_tree_ref(fs, nb, level - 1, r->objectid, 0, -1);
		fs->qgroup_skip = 0;
		if (ret || (ret = btrfs_qgroup_trace_swap(fs, nb, mb, level - 1, btrfs_root_last_snapshot(r->item))))
			return ret;
		btrfs_set_key_blockptr(btrfs_key_ptr_nr(n, (int)s), mb);
		btrfs_set_key_generation(btrfs_key_ptr_nr(n, (int)s), mgen);
		btrfs_set_key_blockptr(btrfs_key_ptr_nr(m, (int)s), nb);
		btrfs_set_key_generation(btrfs_key_ptr_nr(m, (int)s), ngen);
		n->dirty = m->dirty = 1;
		fs_trace(fs, (struct trace_event){.kind = TRACE_RELOC_SWAP, .tree = r->objectid, .bytenr = nb, .a = mb, .level = level - 1});
	}
	return 0;
}

/* ---- data: moved, then the file extents pointing at it ---- */

/* MOVE_DATA_EXTENTS: the extent's bytes and checksums copied to a new extent
 * outside the group (the kernel writes them through the data reloc tree's
 * inode, whose extents are gone again when relocation ends). */
static int move_data_extent(struct reloc_control *rc, u64 bytenr, u64 len)
{
	struct btrfs_fs_info *fs = rc->fs;
	u64 to, ss = fs->sectorsize;
	int ret = btrfs_reserve_data(fs, len, &to, 1);
	if (ret)
		return blab_fail(&fs->err, ret, "no room for data extent %llu (%llu bytes) outside its block group", (unsigned long long)bytenr,
				 (unsigned long long)len);
	u8 *buf = malloc(len);
	u32 *sums = malloc((len / ss + 1) * sizeof(u32));
	if (!buf || !sums) {
		free(buf);
		free(sums);
		return blab_fail(&fs->err, BLAB_ENOMEM, "moving data extent %llu", (unsigned long long)bytenr);
	}
	if (!(ret = btrfs_read_logical(fs, bytenr, buf, (u32)len)))
		ret = btrfs_write_logical(fs, to, buf, (u32)len);
	/* its checksums, run by run (a NODATASUM file's extent has none) */
	for (u64 i = 0, run = 0; !ret && i <= len / ss; i++) {
		u32 c;
		int have = i < len / ss && !btrfs_lookup_csum(fs, bytenr + i * ss, &c);
		if (have) {
			sums[run++] = c;
			continue;
		}
		if (run && (ret = btrfs_insert_csums(fs, to + (i - run) * ss, sums, run)))
			break;
		run = 0;
	}
	free(buf);
	free(sums);
	if (ret)
		return ret;
	struct delayed_ref_head *h = btrfs_delayed_ref_head(fs, to);
	if (!h)
		return fs->err.code;
	h->new_extent = 1;
	h->is_data = 1;
	h->num_bytes = len;
	h->generation = fs->generation;
	u64 *m = u64map_put(&rc->data, bytenr);
	if (!m)
		return blab_fail(&fs->err, BLAB_ENOMEM, "relocation");
	*m = to;
	fs_trace(fs, (struct trace_event){.kind = TRACE_RELOC_EXTENT, .bytenr = bytenr, .a = to, .level = -1, .tree = 0});
	return 0;
}

/* The file extents of leaf eb pointing at moved data point at its new place
 * (replace_file_extents); their references move with them: held by eb
 * itself when full (a reloc tree's copy), else keyed by root. */
static int replace_file_extents(struct reloc_control *rc, struct extent_buffer *eb, int full, u64 root)
{
	struct btrfs_fs_info *fs = rc->fs;
	u32 nr = btrfs_nritems(eb);
	for (u32 s = 0; s < nr; s++) {
		struct btrfs_key k;
		btrfs_item_key(eb, (int)s, &k);
		u8 *fi = btrfs_item_ptr(eb, (int)s);
		if (k.type != BTRFS_EXTENT_DATA_KEY || btrfs_item_size_nr(eb, (int)s) < BTRFS_FILE_EXTENT_SIZE ||
		    btrfs_file_extent_type(fi) == BTRFS_FILE_EXTENT_INLINE)
			continue;
		u64 b = btrfs_file_extent_disk_bytenr(fi), len = btrfs_file_extent_disk_num_bytes(fi), *to = u64map_get(&rc->data, b);
		if (!b || !to)
			continue;
		u64 off = k.offset - btrfs_file_extent_offset(fi);
		int ret = full ? btrfs_mod_shared_data_ref(fs, b, len, eb->start, -1) : btrfs_mod_data_ref(fs, b, len, root, k.objectid, off, -1);
		if (!ret)
			ret = full ? btrfs_mod_shared_data_ref(fs, *to, len, eb->start, +1) : btrfs_mod_data_ref(fs, *to, len, root, k.objectid, off, +1);
		if (ret)
			return ret;
		btrfs_set_file_extent_disk_bytenr(fi, *to);
		eb->dirty = 1;
	}
	return 0;
}

/* Whether leaf eb holds a file extent of data in the group. */
static int points_into(const struct reloc_control *rc, const struct extent_buffer *eb)
{
	u32 nr = btrfs_nritems(eb);
	for (u32 s = 0; s < nr; s++) {
		struct btrfs_key k;
		btrfs_item_key(eb, (int)s, &k);
		const u8 *fi = btrfs_item_ptr(eb, (int)s);
		if (k.type != BTRFS_EXTENT_DATA_KEY || btrfs_item_size_nr(eb, (int)s) < BTRFS_FILE_EXTENT_SIZE ||
		    btrfs_file_extent_type(fi) == BTRFS_FILE_EXTENT_INLINE)
			continue;
		u64 b = btrfs_file_extent_disk_bytenr(fi);
		if (b >= rc->start && b < rc->end)
			return 1;
	}
	return 0;
}

struct leaf_ref {
	u64 bytenr;
	struct btrfs_key key;
};

/* UPDATE_DATA_PTRS, first half: every leaf of every subvolume holding a file
 * extent of the group, each once (the trees share leaves). */
static int leaves_pointing_in(struct reloc_control *rc, struct leaf_ref **out, size_t *n)
{
	struct btrfs_fs_info *fs = rc->fs;
	struct u64map seen;
	u64map_init(&seen, 1);
	size_t cap = 16, k = 0, sp, scap = (size_t)BTRFS_MAX_LEVEL * btrfs_nodeptrs(fs) + 1;
	struct leaf_ref *v = malloc(cap * sizeof(*v));
	struct stack_entry {
		u64 bytenr;
		int level;
	} *stack = malloc(scap * sizeof(*stack));
	int ret = v && stack ? 0 : blab_fail(&fs->err, BLAB_ENOMEM, "relocation");
	for (size_t i = 0; i < rc->nroots && !ret; i++) {
		struct btrfs_root *r = fs->roots[i];
		if (!btrfs_root_shareable(r) || !r->in_root_tree || !r->node)
			continue;
		sp = 0;
		stack[sp].bytenr = r->node->start;
		stack[sp++].level = btrfs_level(r->node);
		while (sp && !ret) {
			u64 b = stack[--sp].bytenr;
			int level = stack[sp].level;
			if (u64map_get(&seen, b))
				continue;
			if (!u64map_put(&seen, b)) {
				ret = blab_fail(&fs->err, BLAB_ENOMEM, "relocation");
				break;
			}
			struct extent_buffer *eb = btrfs_read_tree_block(fs, b, level, 0);
			if (!eb) {
				ret = fs->err.code;
				break;
			}
			if (level) {
				u32 nr = btrfs_nritems(eb);
				for (u32 s = nr; s-- > 0;) {
					if (sp == scap) {
						ret = blab_fail(&fs->err, BLAB_ECORRUPT, "tree %llu: deeper or wider than a tree can be", (unsigned long long)r->objectid);
						break;
					}
					stack[sp].bytenr = btrfs_node_blockptr(eb, (int)s);
					stack[sp++].level = level - 1;
				}
				continue;
			}
			if (!points_into(rc, eb))
				continue;
			if (k == cap) {
				struct leaf_ref *nv = realloc(v, (cap *= 2) * sizeof(*v));
				if (!nv) {
					ret = blab_fail(&fs->err, BLAB_ENOMEM, "relocation");
					break;
				}
				v = nv;
			}
			v[k].bytenr = b;
			v[k].key = (struct btrfs_key){0, 0, 0};
			if (btrfs_nritems(eb))
				btrfs_item_key(eb, 0, &v[k].key);
			k++;
		}
	}
	u64map_free(&seen);
	free(stack);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*n = k;
	return 0;
}

/* One tree block out of the read-only group: the path to it copied. 1
 * when it had moved already (a path copied for another block went through
 * it: the kernel marks those processed and does not count them found). */
static int relocate_tree_block(struct reloc_control *rc, u64 bytenr, int level, struct btrfs_reloc_stats *st)
{
	struct btrfs_fs_info *fs = rc->fs;
	u64 refs, flags;
	if (u64map_get(&rc->moved, bytenr))
		return 1; /* copied into a reloc tree already, on the path to another */
	int ret = btrfs_tree_block_refs(fs, bytenr, level, &refs, &flags);
	if (ret)
		return ret;
	if (!refs)
		return 1;
	struct extent_buffer *eb = btrfs_read_tree_block(fs, bytenr, level, 0);
	if (!eb)
		return fs->err.code;
	u64 owner = btrfs_header_owner(eb->data);
	struct btrfs_root *root = tree_of(fs, owner), gone = {.objectid = owner};
	/* a subvolume's block may outlive its owner: dropped, while a snapshot still shares it */
	if (btrfs_root_shareable(&gone) && (!root || !root->node))
		root = &gone;
	else if (!root || !root->node)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "tree block %llu says its owner is tree %llu, which this filesystem does not have",
				 (unsigned long long)bytenr, (unsigned long long)owner);
	(void)flags;
	struct btrfs_key key = {0, 0, 0};
	if (btrfs_nritems(eb)) {
		if (level)
			btrfs_node_key(eb, 0, &key);
		else
			btrfs_item_key(eb, 0, &key);
	}
	if (btrfs_root_shareable(root)) {
		if ((ret = relocate_shared_block(rc, bytenr, level, &key)))
			return ret;
		u64 *to = u64map_get(&rc->moved, bytenr);
		fs_trace(fs, (struct trace_event){.kind = TRACE_RELOC_EXTENT, .bytenr = bytenr, .a = to ? *to : 0, .level = level, .tree = owner});
		st->tree_blocks++;
		return 0;
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
/* Deletes one of a removed group's items: a missing one is named (an image's
 * chunk without its DEV_EXTENT, say), not a bare ENOENT. */
static int delete_group_item(struct btrfs_fs_info *fs, u64 start, struct btrfs_root *root, const struct btrfs_key *key,
			     const char *what, const char *tree)
{
	int ret = btrfs_delete_item(fs, root, key);
	if (ret == BLAB_ENOENT)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "removing block group %llu: its %s (%llu %u %llu) is not in the %s tree",
				 (unsigned long long)start, what, (unsigned long long)key->objectid, key->type,
				 (unsigned long long)key->offset, tree);
	return ret;
}

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
	if ((ret = delete_group_item(fs, bg.start, fs->extent_root, &bgk, "BLOCK_GROUP_ITEM", "extent")) ||
	    (ret = delete_free_space_items(fs, bg.start, bg.length)) ||
	    (ret = delete_group_item(fs, bg.start, fs->chunk_root, &ck, "CHUNK_ITEM", "chunk")))
		return ret;
	for (u16 s = 0; s < map.num_stripes; s++) {
		struct btrfs_key dk = {map.stripes[s].devid, BTRFS_DEV_EXTENT_KEY, map.stripes[s].physical};
		if ((ret = delete_group_item(fs, bg.start, fs->dev_root, &dk, "DEV_EXTENT", "dev")))
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
	if (btrfs_next_dead_root(fs) && ((ret = btrfs_clean_deleted_snapshots(fs, 1, NULL)) || (ret = btrfs_start_transaction(fs))))
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
	/* in logical order, as the kernel's find_next_extent; found: those not moved already */
	u64 found = 0;
	struct reloc_control rc = {.fs = fs, .nroots = fs->nroots, .rr = calloc(fs->nroots + 1, sizeof(struct btrfs_root *)), .start = start,
				   .end = start + length};
	u64map_init(&rc.moved, sizeof(u64));
	u64map_init(&rc.data, sizeof(u64));
	if (!rc.rr)
		ret = blab_fail(&fs->err, BLAB_ENOMEM, "relocation");
	/* data: MOVE_DATA_EXTENTS, then UPDATE_DATA_PTRS (the leaves pointing at it
	 * copied into reloc trees, their file extents pointed at the new places) */
	for (size_t i = 0; i < n && !ret; i++)
		if (blocks[i].level < 0 && !(ret = move_data_extent(&rc, blocks[i].bytenr, blocks[i].len)))
			found++;
	if (!ret && rc.data.len) {
		struct leaf_ref *leaves = NULL;
		size_t nl = 0;
		int full = btrfs_qgroup_swap_mode(fs) == BTRFS_QGROUP_SWAP_FULL;
		ret = leaves_pointing_in(&rc, &leaves, &nl);
		for (size_t i = 0; i < nl && !ret; i++) {
			fs->qgroup_skip = !full;
			if (!u64map_get(&rc.moved, leaves[i].bytenr))
				ret = relocate_shared_block(&rc, leaves[i].bytenr, 0, &leaves[i].key);
			u64 *to = u64map_get(&rc.moved, leaves[i].bytenr);
			struct extent_buffer *copy = to && !ret ? btrfs_read_tree_block(fs, *to, 0, 0) : NULL;
			if (to && !ret && !copy)
				ret = fs->err.code;
			if (copy && !ret)
				ret = replace_file_extents(&rc, copy, 1, 0);
			fs->qgroup_skip = 0;
		}
		free(leaves);
	}
	/* the reloc trees' reference changes: qgroup records before 4.20, not since */
	int full = btrfs_qgroup_swap_mode(fs) == BTRFS_QGROUP_SWAP_FULL;
	for (size_t i = 0; i < n && ret >= 0; i++) {
		if (blocks[i].level < 0)
			continue;
		fs->qgroup_skip = !full;
		if (!(ret = relocate_tree_block(&rc, blocks[i].bytenr, blocks[i].level, st)))
			found++;
		fs->qgroup_skip = 0;
	}
	ret = ret < 0 ? ret : 0;
	free(blocks);
	/* merge_reloc_roots, then the reloc trees dropped: the old blocks go */
	for (size_t i = 0; i < rc.nroots && rc.rr && !ret; i++)
		if (rc.rr[i])
			ret = merge_reloc_root(&rc, fs->roots[i], rc.rr[i]);
	for (size_t i = 0; i < rc.nroots && rc.rr; i++) {
		if (!rc.rr[i])
			continue;
		if (!ret) {
			/* dropping a reloc tree: traced before 4.20, not since */
			fs->qgroup_skip = !full;
			ret = btrfs_drop_reloc_tree(fs, rc.rr[i], full);
			fs->qgroup_skip = 0;
		}
		u64map_free(&rc.rr[i]->dir_index);
		free(rc.rr[i]);
	}
	free(rc.rr);
	u64map_free(&rc.moved);
	u64map_free(&rc.data);
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
		/* the chunk's own type too: a SYSTEM chunk moves only when asked for
		 * (btrfs_verify_layout refuses a block group that disagrees with it) */
		const struct btrfs_chunk_map *cm = btrfs_find_chunk(fs, bg->start);
		if (cm && (cm->type & BTRFS_BLOCK_GROUP_SYSTEM) && !(mask & BTRFS_BLOCK_GROUP_SYSTEM))
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

int btrfs_reloc_trees_left(struct btrfs_fs_info *fs, const char *what)
{
	if (!fs->nreloc_left)
		return 0;
	char ids[160] = "";
	size_t n = 0, i;
	for (i = 0; i < fs->nreloc_left && n + 32 < sizeof(ids); i++)
		n += (size_t)snprintf(ids + n, sizeof(ids) - n, "%s%llu", i ? ", " : "",
				      (unsigned long long)fs->reloc_left[i].root->item_offset);
	if (i < fs->nreloc_left)
		snprintf(ids + n, sizeof(ids) - n, ", ...");
	return blab_fail(&fs->err, BLAB_ENOTSUP,
			 "%s: the image holds %zu reloc tree%s (TREE_RELOC ROOT_ITEM %s) of a balance the kernel did not finish; "
			 "the kernel finishes it when it next mounts the filesystem read-write (it merges the reloc trees into "
			 "their subvolumes, then resumes the balance, or with -o skip_balance pauses it): mount it once, then try again",
			 what, fs->nreloc_left, fs->nreloc_left == 1 ? "" : "s", ids);
}
