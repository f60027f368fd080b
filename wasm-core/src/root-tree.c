#include "root-tree.h"
#include "ctree.h"
#include "disk-io.h"
#include "extent-tree.h"
#include "inode.h"
#include "uuid-tree.h"
#include "qgroup.h"
#include "delayed-ref.h"
#include "delalloc.h"
#include "mkfs.h"
#include "dir-item.h"
#include "crc32c.h"
#include "transaction.h"
#include <stdio.h>
#include <stdlib.h>

int btrfs_find_free_root_objectid(struct btrfs_fs_info *fs, u64 *out)
{
	u64 hi = BTRFS_FIRST_FREE_OBJECTID - 1;
	struct btrfs_key key = {BTRFS_LAST_FREE_OBJECTID, 0, 0}, k;
	int ret = btrfs_prev_key(fs, fs->tree_root, &key, &k);
	if (ret < 0)
		return ret;
	if (ret == 0 && k.objectid > hi)
		hi = k.objectid;
	for (size_t i = 0; i < fs->nroots; i++) /* made in this transaction, items not yet written */
		if (fs->roots[i]->objectid > hi && fs->roots[i]->objectid < BTRFS_LAST_FREE_OBJECTID)
			hi = fs->roots[i]->objectid;
	if (hi + 1 >= BTRFS_LAST_FREE_OBJECTID)
		return blab_fail(&fs->err, BLAB_ENOSPC, "no subvolume ids left");
	*out = hi + 1;
	return 0;
}

int btrfs_add_root_ref(struct btrfs_fs_info *fs, u64 parent, u64 child, u64 dirid, u64 index, const char *name, u16 len)
{
	u8 ref[BTRFS_ROOT_REF_SIZE + BTRFS_NAME_LEN];
	btrfs_set_root_ref_dirid(ref, dirid);
	btrfs_set_root_ref_sequence(ref, index);
	btrfs_set_root_ref_name_len(ref, len);
	memcpy(ref + BTRFS_ROOT_REF_SIZE, name, len);
	struct btrfs_key key = {parent, BTRFS_ROOT_REF_KEY, child};
	int ret = btrfs_insert_item(fs, fs->tree_root, &key, ref, BTRFS_ROOT_REF_SIZE + len);
	if (ret)
		return ret;
	key = (struct btrfs_key){child, BTRFS_ROOT_BACKREF_KEY, parent};
	return btrfs_insert_item(fs, fs->tree_root, &key, ref, BTRFS_ROOT_REF_SIZE + len);
}

int btrfs_root_ref_matches(struct btrfs_fs_info *fs, u64 parent, u64 child, u64 dirid, const char *name, u16 len)
{
	struct btrfs_key key = {parent, BTRFS_ROOT_REF_KEY, child};
	u8 *p;
	u32 sz;
	int ret = btrfs_lookup_item(fs, fs->tree_root, &key, &p, &sz, 0);
	if (ret == BLAB_ENOENT)
		return 0;
	if (ret)
		return ret;
	return sz >= BTRFS_ROOT_REF_SIZE && btrfs_root_ref_dirid(p) == dirid && btrfs_root_ref_name_len(p) == len &&
	       sz >= BTRFS_ROOT_REF_SIZE + (u32)len && !memcmp(p + BTRFS_ROOT_REF_SIZE, name, len);
}

/* A UUID drawn from the filesystem's own (seeded) identity, the subvolume
 * and the transaction: the same script gives the same image. */
static void subvol_uuid(const struct btrfs_fs_info *fs, u64 id, u8 out[BTRFS_UUID_SIZE])
{
	u64 s = get_le64(fs->fsid) ^ get_le64(fs->fsid + 8) ^ (id * 0x100000001B3ULL) ^ (fs->generation << 20);
	btrfs_make_uuid(&s, out);
}

int btrfs_create_snapshot(struct btrfs_fs_info *fs, struct btrfs_root *src, struct btrfs_root *dst, const char *path, int readonly,
			  u64 *id)
{
	if (!btrfs_root_shareable(src) || !src->node || !src->in_root_tree)
		return blab_fail(&fs->err, BLAB_EINVAL, "tree %llu is not a subvolume", (unsigned long long)src->objectid);
	u64 objectid;
	int ret = btrfs_find_free_root_objectid(fs, &objectid);
	if (ret)
		return ret;
	/* the source's node, made this transaction's, is what both roots point through */
	struct extent_buffer *node = src->node;
	if ((ret = btrfs_cow_block(fs, src, node, NULL, 0, &node)))
		return ret;
	int level = btrfs_level(node);
	struct extent_buffer *copy = btrfs_alloc_tree_block(fs, objectid, level);
	if (!copy)
		return fs->err.code;
	memcpy(copy->data, node->data, fs->nodesize);
	btrfs_set_header_bytenr(copy->data, copy->start);
	btrfs_set_header_generation(copy->data, fs->generation);
	btrfs_set_header_owner(copy->data, objectid);
	btrfs_set_header_flags(copy->data, BTRFS_MIXED_BACKREF_REV << BTRFS_BACKREF_REV_SHIFT);
	copy->dirty = 1;
	if ((ret = btrfs_mod_refs_of(fs, objectid, copy, 0, +1)))
		return ret;
	/* the source may now share every block it has */
	btrfs_set_root_last_snapshot(src->item, fs->generation);
	src->item_dirty = 1;
	src->force_cow = 1;

	struct btrfs_root *r = btrfs_add_root(fs, objectid);
	if (!r)
		return fs->err.code;
	memcpy(r->item, src->item, sizeof(r->item));
	r->node = copy;
	r->commit_bytenr = copy->start; /* for qgroups, it was there before: what it shares stays shared */
	r->commit_level = level;
	r->in_root_tree = 1;
	r->item_offset = fs->generation;
	r->item_dirty = 1;
	r->bytes_used = src->bytes_used;
	u8 *it = r->item;
	btrfs_set_root_refs(it, 1);
	btrfs_set_root_flags(it, readonly ? BTRFS_ROOT_SUBVOL_RDONLY : 0);
	btrfs_set_root_last_snapshot(it, fs->generation);
	btrfs_set_root_drop_level(it, 0);
	memset(it + BTRFS_ROOT_DROP_PROGRESS_OFF, 0, BTRFS_DISK_KEY_SIZE);
	memcpy(it + BTRFS_ROOT_PARENT_UUID_OFF, src->item + BTRFS_ROOT_UUID_OFF, BTRFS_UUID_SIZE);
	subvol_uuid(fs, objectid, it + BTRFS_ROOT_UUID_OFF);
	memset(it + BTRFS_ROOT_RECEIVED_UUID_OFF, 0, BTRFS_UUID_SIZE);
	btrfs_set_root_otransid(it, fs->generation);
	btrfs_set_root_stransid(it, 0);
	btrfs_set_root_rtransid(it, 0);
	btrfs_set_timespec_sec(it + BTRFS_ROOT_OTIME_OFF, fs->now);
	btrfs_set_timespec_nsec(it + BTRFS_ROOT_OTIME_OFF, 0);
	memset(it + BTRFS_ROOT_STIME_OFF, 0, 2 * BTRFS_TIMESPEC_SIZE); /* stime, rtime */

	/* its name, after the copy: a snapshot does not hold its own entry */
	u64 dir, index;
	const char *name;
	u16 len;
	if ((ret = btrfs_add_subvol_entry(fs, dst, path, objectid, (u64)-1, &dir, &name, &len, &index)) ||
	    (ret = btrfs_add_root_ref(fs, dst->objectid, objectid, dir, index, name, len)) ||
	    (ret = btrfs_uuid_tree_add(fs, it + BTRFS_ROOT_UUID_OFF, BTRFS_UUID_KEY_SUBVOL, objectid)))
		return ret;
	if ((ret = btrfs_qgroup_inherit(fs, src->objectid, objectid)))
		return ret;
	fs_trace(fs, (struct trace_event){.kind = TRACE_SNAPSHOT, .tree = objectid, .bytenr = copy->start, .level = level,
					  .a = src->objectid, .b = fs->generation});
	*id = objectid;
	return 0;
}

int btrfs_create_subvol(struct btrfs_fs_info *fs, struct btrfs_root *dst, const char *path, u64 *id)
{
	u64 objectid;
	int ret = btrfs_find_free_root_objectid(fs, &objectid);
	if (ret)
		return ret;
	struct extent_buffer *leaf = btrfs_alloc_tree_block(fs, objectid, 0);
	if (!leaf)
		return fs->err.code;
	struct btrfs_root *r = btrfs_add_root(fs, objectid);
	if (!r)
		return fs->err.code;
	r->node = leaf;
	r->in_root_tree = 1;
	r->item_dirty = 1;
	r->bytes_used = fs->nodesize;
	r->highest_objectid = BTRFS_FIRST_FREE_OBJECTID;
	/* its root directory: as a new directory, with ".." naming itself */
	u8 inode[BTRFS_INODE_ITEM_SIZE];
	if ((ret = btrfs_make_root_dir(fs, r, BTRFS_FIRST_FREE_OBJECTID, 0, 1, inode)))
		return ret;
	u8 *it = r->item;
	memset(it, 0, sizeof(r->item));
	memcpy(it, inode, BTRFS_INODE_ITEM_SIZE); /* the root item's own inode: as a directory's */
	btrfs_set_root_dirid(it, BTRFS_FIRST_FREE_OBJECTID);
	btrfs_set_root_refs(it, 1);
	btrfs_set_root_ctransid(it, fs->generation);
	btrfs_set_root_otransid(it, fs->generation);
	btrfs_set_timespec_sec(it + BTRFS_ROOT_CTIME_OFF, fs->now);
	btrfs_set_timespec_sec(it + BTRFS_ROOT_OTIME_OFF, fs->now);
	subvol_uuid(fs, objectid, it + BTRFS_ROOT_UUID_OFF);
	u64 dir, index;
	const char *name;
	u16 len;
	if ((ret = btrfs_add_subvol_entry(fs, dst, path, objectid, 0, &dir, &name, &len, &index)) ||
	    (ret = btrfs_add_root_ref(fs, dst->objectid, objectid, dir, index, name, len)) ||
	    (ret = btrfs_uuid_tree_add(fs, it + BTRFS_ROOT_UUID_OFF, BTRFS_UUID_KEY_SUBVOL, objectid)) ||
	    (ret = btrfs_qgroup_subvol_created(fs, objectid)))
		return ret;
	*id = objectid;
	return 0;
}

/* The name of directory dir of root, from the root's top ("a/b"), into out
 * (n bytes): 0, or 1 when it cannot be made (a broken chain). */
static int dir_path(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, char *out, size_t n)
{
	char tmp[4096];
	size_t at = sizeof(tmp) - 1;
	tmp[at] = 0;
	for (int depth = 0; dir != btrfs_root_dirid(root->item) && depth < 256; depth++) {
		struct btrfs_item_cursor c;
		struct btrfs_key from = {dir, BTRFS_INODE_REF_KEY, 0};
		if (btrfs_cursor_first(fs, root, &from, &c) || c.key.objectid != dir || c.key.type != BTRFS_INODE_REF_KEY ||
		    c.size < BTRFS_INODE_REF_SIZE)
			return 1;
		u16 nl = btrfs_inode_ref_name_len(c.data);
		if ((u32)nl + BTRFS_INODE_REF_SIZE > c.size || (size_t)nl + 2 > at)
			return 1;
		at -= nl;
		memcpy(tmp + at, c.data + BTRFS_INODE_REF_SIZE, nl);
		tmp[--at] = '/';
		dir = c.key.offset;
	}
	if (dir != btrfs_root_dirid(root->item))
		return 1;
	snprintf(out, n, "%s", tmp + at + (tmp[at] == '/'));
	return 0;
}

int btrfs_subvol_path(struct btrfs_fs_info *fs, u64 id, char *out, size_t n)
{
	char acc[4096] = "";
	for (int depth = 0; id != BTRFS_FS_TREE_OBJECTID && depth < 64; depth++) {
		struct btrfs_item_cursor c;
		struct btrfs_key from = {id, BTRFS_ROOT_BACKREF_KEY, 0};
		if (btrfs_cursor_first(fs, fs->tree_root, &from, &c) || c.key.objectid != id || c.key.type != BTRFS_ROOT_BACKREF_KEY ||
		    c.size < BTRFS_ROOT_REF_SIZE)
			return 1;
		u16 nl = btrfs_root_ref_name_len(c.data);
		if ((u32)nl + BTRFS_ROOT_REF_SIZE > c.size)
			return 1;
		u64 parent = c.key.offset, dirid = btrfs_root_ref_dirid(c.data);
		char name[256], dp[4096], next[4096];
		memcpy(name, c.data + BTRFS_ROOT_REF_SIZE, nl);
		name[nl] = 0;
		struct btrfs_root *pr = btrfs_get_root(fs, parent);
		if (!pr || dir_path(fs, pr, dirid, dp, sizeof(dp)))
			return 1;
		snprintf(next, sizeof(next), "%s%s%s%s%s", dp, dp[0] ? "/" : "", name, acc[0] ? "/" : "", acc);
		memcpy(acc, next, sizeof(acc));
		id = parent;
	}
	if (id != BTRFS_FS_TREE_OBJECTID)
		return 1;
	snprintf(out, n, "%s", acc);
	return 0;
}

int btrfs_delete_subvol(struct btrfs_fs_info *fs, struct btrfs_root *parent, const char *path, u64 *id)
{
	u64 dir, subvol;
	const char *name;
	u16 len;
	int ret = btrfs_find_subvol_entry(fs, parent, path, &dir, &name, &len, &subvol);
	if (ret)
		return ret;
	struct btrfs_root *r = btrfs_get_root(fs, subvol);
	if (!r || !r->in_root_tree)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "%s: subvolume %llu has no root item", path, (unsigned long long)subvol);
	/* subvolumes inside it must go first (the kernel's ENOTEMPTY) */
	struct btrfs_key k = {subvol, BTRFS_ROOT_REF_KEY, 0}, next;
	ret = btrfs_prev_key(fs, fs->tree_root, &(struct btrfs_key){subvol, BTRFS_ROOT_REF_KEY, (u64)-1}, &next);
	if (ret < 0)
		return ret;
	if (ret == 0 && next.objectid == subvol && next.type == BTRFS_ROOT_REF_KEY)
		return blab_fail(&fs->err, BLAB_ENOTEMPTY, "%s: subvolume %llu holds subvolume %llu: delete that first", path,
				 (unsigned long long)subvol, (unsigned long long)next.offset);
	(void)k;
	u64 def;
	if ((ret = btrfs_default_subvol(fs, &def)))
		return ret;
	if (def == subvol)
		return blab_fail(&fs->err, BLAB_EPERM, "%s: deleting default subvolume %llu is not allowed (set-default another first)", path,
				 (unsigned long long)subvol);
	/* its name, refs and UUID go; the root item stays (refs 0) with an
	 * orphan item, for the cleaner that drops the tree */
	u8 *p;
	u32 sz;
	struct btrfs_key ref = {parent->objectid, BTRFS_ROOT_REF_KEY, subvol};
	if ((ret = btrfs_lookup_item(fs, fs->tree_root, &ref, &p, &sz, 0)))
		return ret;
	u64 index = sz >= BTRFS_ROOT_REF_SIZE ? btrfs_root_ref_sequence(p) : 0;
	struct btrfs_key back = {subvol, BTRFS_ROOT_BACKREF_KEY, parent->objectid};
	if ((ret = btrfs_remove_subvol_entry(fs, parent, dir, name, len, index)) || (ret = btrfs_delete_item(fs, fs->tree_root, &ref)) ||
	    (ret = btrfs_delete_item(fs, fs->tree_root, &back)) ||
	    (ret = btrfs_uuid_tree_remove(fs, r->item + BTRFS_ROOT_UUID_OFF, BTRFS_UUID_KEY_SUBVOL, subvol)))
		return ret;
	btrfs_set_root_refs(r->item, 0);
	btrfs_set_root_flags(r->item, btrfs_root_flags(r->item) | BTRFS_ROOT_SUBVOL_DEAD);
	r->item_dirty = 1;
	r->dead_seq = ++fs->dead_seq;
	struct btrfs_key orphan = {BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, subvol};
	if ((ret = btrfs_insert_item(fs, fs->tree_root, &orphan, NULL, 0)) && ret != BLAB_EEXIST)
		return ret;
	*id = subvol;
	return 0;
}

static const char default_name[] = "default";
#define DEFAULT_LEN 7

/* The "default" entry: *off into the item at key, 0 or ECORRUPT. */
static int find_default(struct btrfs_fs_info *fs, struct dir_entry *e, u32 *off)
{
	int ret = btrfs_lookup_dir_entry(fs, fs->tree_root, BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_DIR_ITEM_KEY, default_name, DEFAULT_LEN, e, off);
	if (ret == BLAB_ENOENT)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "the root tree has no \"default\" entry in directory %llu", (unsigned long long)BTRFS_ROOT_TREE_DIR_OBJECTID);
	return ret;
}

int btrfs_default_subvol(struct btrfs_fs_info *fs, u64 *id)
{
	struct dir_entry e;
	u32 off;
	int ret = find_default(fs, &e, &off);
	if (ret)
		return ret;
	*id = e.location.objectid;
	return 0;
}

int btrfs_set_default_subvol(struct btrfs_fs_info *fs, u64 id)
{
	struct btrfs_root *r = btrfs_get_root(fs, id);
	if (!r || !r->in_root_tree || !btrfs_root_shareable(r) || !btrfs_root_refs(r->item))
		return blab_fail(&fs->err, BLAB_ENOENT, "subvolume %llu does not exist", (unsigned long long)id);
	struct dir_entry e;
	u32 off, size;
	u8 *p;
	int ret = find_default(fs, &e, &off);
	if (ret)
		return ret;
	struct btrfs_key item = {BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(default_name, DEFAULT_LEN)};
	if ((ret = btrfs_lookup_item(fs, fs->tree_root, &item, &p, &size, 1)))
		return ret;
	/* only the location changes: its transid and type stay as mkfs wrote them */
	btrfs_cpu_key_to_disk(p + off, &(struct btrfs_key){id, BTRFS_ROOT_ITEM_KEY, r->item_offset});
	btrfs_set_super_incompat_flags(fs->super, btrfs_super_incompat_flags(fs->super) | BTRFS_FEATURE_INCOMPAT_DEFAULT_SUBVOL);
	return 0;
}

/* ---- the cleaner: btrfs_drop_snapshot ----
 *
 * A dead tree is walked depth first along a path, as the kernel walks it
 * (walk_down_tree / walk_up_tree and their _proc steps): a block only this
 * tree holds (refs 1) is entered, its children let go of, then freed; a
 * block others share (refs > 1) loses this tree's reference and is not
 * entered. Before a shared block this tree owns loses it, its subtree's
 * blocks this tree owns are turned to full backrefs (the UPDATE_BACKREF
 * stage): their children were referenced "by whoever holds me, keyed by my
 * owner", and the owner is going. After each block the walk leaves, the key
 * it goes on from is drop_progress (at drop_level): a batch ends there, the
 * root item saves it, and the next batch (or the kernel, mounting the image)
 * goes on from that key. */

enum { DROP_REFERENCE = 1, UPDATE_BACKREF = 2 };

struct walk_control {
	struct btrfs_fs_info *fs;
	struct btrfs_root *root;
	u64 node[BTRFS_MAX_LEVEL]; /* the path: the block at each level (0: none) */
	int slot[BTRFS_MAX_LEVEL];
	u64 refs[BTRFS_MAX_LEVEL], flags[BTRFS_MAX_LEVEL];
	int level, top;
	int stage, shared_level, update_ref;
	struct btrfs_key update_progress;
	struct btrfs_key drop_progress;
	int drop_level;
	u64 origin; /* the tree's origin generation: blocks no younger are its source's */
	u64 let_go; /* blocks freed or let go of in this batch */
	int trace;  /* qgroups: trace the subtrees of shared blocks let go of (not for a reloc tree) */
};

static struct extent_buffer *wc_block(struct walk_control *w, int level)
{
	return btrfs_read_tree_block(w->fs, w->node[level], level, 0);
}

static int wc_lookup(struct walk_control *w, u64 bytenr, int level)
{
	int ret = btrfs_lookup_extent_info(w->fs, bytenr, level, &w->refs[level], &w->flags[level]);
	if (!ret && !w->refs[level])
		ret = blab_fail(&w->fs->err, BLAB_ECORRUPT, "tree %llu: block %llu (level %d) has no references while the tree is dropped",
				(unsigned long long)w->root->objectid, (unsigned long long)bytenr, level);
	return ret;
}

/* The tree lets go of one reference to block bytenr at level, held through
 * the block parent_bytenr points from (by bytenr when that one has full
 * backrefs, else keyed by the tree, which must then own it). */
static int wc_drop_ref(struct walk_control *w, u64 bytenr, int level, const struct extent_buffer *holder, int holder_full)
{
	struct btrfs_fs_info *fs = w->fs;
	u64 parent = holder_full ? holder->start : 0;
	if (!holder_full && btrfs_header_owner(holder->data) != w->root->objectid)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "tree %llu: block %llu is owned by tree %llu and has no full backrefs",
				 (unsigned long long)w->root->objectid, (unsigned long long)holder->start,
				 (unsigned long long)btrfs_header_owner(holder->data));
	fs_trace(fs, (struct trace_event){.kind = TRACE_BACKREF, .bytenr = bytenr, .level = level, .tree = parent ? 0 : w->root->objectid,
					  .a = parent, .slot = -1});
	w->root->bytes_used -= fs->nodesize;
	w->let_go++;
	int ret = btrfs_mod_tree_ref(fs, bytenr, level, w->root->objectid, parent, -1);
	/* what only others hold under it now may be theirs alone */
	return ret || !w->trace ? ret : btrfs_qgroup_trace_subtree(fs, bytenr, level);
}

/* At the block the path is at: 1 when the walk does not go below it. */
static int walk_down_proc(struct walk_control *w)
{
	int level = w->level, ret;
	struct extent_buffer *eb = wc_block(w, level);
	if (!eb)
		return w->fs->err.code;
	if (w->stage == UPDATE_BACKREF && btrfs_header_owner(eb->data) != w->root->objectid)
		return 1; /* another tree's block: its backrefs are not ours to change */
	if ((w->stage == DROP_REFERENCE && w->refs[level] != 1) ||
	    (w->stage == UPDATE_BACKREF && !(w->flags[level] & BTRFS_BLOCK_FLAG_FULL_BACKREF)))
		if ((ret = wc_lookup(w, eb->start, level)))
			return ret;
	if (w->stage == DROP_REFERENCE)
		return w->refs[level] > 1;
	if (!(w->flags[level] & BTRFS_BLOCK_FLAG_FULL_BACKREF)) {
		/* its children: referenced by this block from now on, not by the tree */
		if ((ret = btrfs_mod_refs_of(w->fs, w->root->objectid, eb, 1, +1)) ||
		    (ret = btrfs_mod_refs_of(w->fs, w->root->objectid, eb, 0, -1)) ||
		    (ret = btrfs_set_tree_block_flags(w->fs, eb->start, level, BTRFS_BLOCK_FLAG_FULL_BACKREF)))
			return ret;
		fs_trace(w->fs, (struct trace_event){.kind = TRACE_FULL_BACKREF, .bytenr = eb->start, .level = level, .tree = w->root->objectid});
		w->flags[level] |= BTRFS_BLOCK_FLAG_FULL_BACKREF;
	}
	return 0;
}

/* The child at the path's slot: 0 when the path went down into it, 1 when
 * it was passed over (in DROP_REFERENCE, a shared child losing this tree's
 * reference). */
static int do_walk_down(struct walk_control *w)
{
	struct btrfs_fs_info *fs = w->fs;
	int level = w->level, ret;
	struct extent_buffer *eb = wc_block(w, level);
	if (!eb)
		return fs->err.code;
	int slot = w->slot[level];
	u64 child = btrfs_node_blockptr(eb, slot), gen = btrfs_key_generation(btrfs_key_ptr_nr(eb, slot));
	if (w->stage == UPDATE_BACKREF && gen <= w->origin)
		return 1; /* older than the tree: its source's, with backrefs of its own */
	if ((ret = wc_lookup(w, child, level - 1)))
		return ret;
	if (w->stage == DROP_REFERENCE) {
		if (w->refs[level - 1] > 1) {
			struct btrfs_key key;
			btrfs_node_key(eb, slot, &key);
			if ((level == 1 && (w->flags[0] & BTRFS_BLOCK_FLAG_FULL_BACKREF)) || !w->update_ref || gen <= w->origin ||
			    btrfs_comp_keys(&key, &w->update_progress) < 0)
				goto skip;
			w->stage = UPDATE_BACKREF;
			w->shared_level = level - 1;
		}
	} else if (level == 1 && (w->flags[0] & BTRFS_BLOCK_FLAG_FULL_BACKREF)) {
		goto skip;
	}
	struct extent_buffer *c = btrfs_read_tree_block(fs, child, level - 1, 0);
	if (!c)
		return fs->err.code;
	w->level = level - 1;
	w->node[level - 1] = child;
	w->slot[level - 1] = 0;
	return 0;
skip:
	w->refs[level - 1] = w->flags[level - 1] = 0;
	if (w->stage == DROP_REFERENCE && (ret = wc_drop_ref(w, child, level - 1, eb, (w->flags[level] & BTRFS_BLOCK_FLAG_FULL_BACKREF) != 0)))
		return ret;
	return 1;
}

static int walk_down_tree(struct walk_control *w)
{
	while (w->level >= 0) {
		int ret = walk_down_proc(w);
		if (ret)
			return ret < 0 ? ret : 0;
		if (!w->level)
			break;
		struct extent_buffer *eb = wc_block(w, w->level);
		if (!eb)
			return w->fs->err.code;
		if (w->slot[w->level] >= (int)btrfs_nritems(eb))
			break;
		if ((ret = do_walk_down(w)) < 0)
			return ret;
		if (ret > 0)
			w->slot[w->level]++;
	}
	return 0;
}

/* The key after the path's slot, looking from level up (0), or 1: none. */
static int next_key(struct walk_control *w, int level, struct btrfs_key *key)
{
	for (int l = level; l <= w->top; l++) {
		struct extent_buffer *eb = wc_block(w, l);
		if (eb && w->slot[l] + 1 < (int)btrfs_nritems(eb)) {
			btrfs_node_key(eb, w->slot[l] + 1, key);
			return 0;
		}
	}
	return 1;
}

/* Leaving the block the path is at: 1 when the walk must go down into it
 * again (its last other holder let go while its backrefs were turned). */
static int walk_up_proc(struct walk_control *w)
{
	struct btrfs_fs_info *fs = w->fs;
	int level = w->level, ret;
	struct extent_buffer *eb = wc_block(w, level);
	if (!eb)
		return fs->err.code;
	if (w->stage == UPDATE_BACKREF) {
		if (level < w->shared_level)
			goto out;
		if (next_key(w, level + 1, &w->update_progress))
			w->update_ref = 0; /* nothing right of it left to turn */
		w->stage = DROP_REFERENCE;
		w->shared_level = -1;
		w->slot[level] = 0;
		if ((ret = wc_lookup(w, eb->start, level)))
			return ret;
		if (w->refs[level] == 1)
			return 1;
	}
	if (w->refs[level] == 1) {
		if (!level && (ret = btrfs_mod_refs_of(fs, w->root->objectid, eb, (w->flags[0] & BTRFS_BLOCK_FLAG_FULL_BACKREF) != 0, -1)))
			return ret;
		w->let_go++;
		if ((ret = btrfs_free_tree_block(fs, w->root, eb)))
			return ret;
	} else {
		const struct extent_buffer *holder = level == w->top ? eb : wc_block(w, level + 1);
		if (!holder)
			return fs->err.code;
		int full = (w->flags[level == w->top ? level : level + 1] & BTRFS_BLOCK_FLAG_FULL_BACKREF) != 0;
		if ((ret = wc_drop_ref(w, eb->start, level, holder, full)))
			return ret;
	}
out:
	w->refs[level] = w->flags[level] = 0;
	return 0;
}

/* 1 when the whole tree is done. */
static int walk_up_tree(struct walk_control *w)
{
	int level = w->level;
	struct extent_buffer *eb = wc_block(w, level);
	if (!eb)
		return w->fs->err.code;
	w->slot[level] = (int)btrfs_nritems(eb);
	while (level <= w->top && w->node[level]) {
		w->level = level;
		if (!(eb = wc_block(w, level)))
			return w->fs->err.code;
		if (w->slot[level] + 1 < (int)btrfs_nritems(eb)) {
			w->slot[level]++;
			return 0;
		}
		int ret = walk_up_proc(w);
		if (ret)
			return ret < 0 ? ret : 0;
		w->node[level] = 0;
		level++;
	}
	return 1;
}

/* The path to drop_progress (at drop_level), from the root item: where the
 * last batch stopped. */
static int resume_walk(struct walk_control *w)
{
	struct btrfs_fs_info *fs = w->fs;
	int ret;
	if (w->drop_level < 1 || w->drop_level > w->top)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "tree %llu: drop_level %d (the tree has levels 0-%d)", (unsigned long long)w->root->objectid,
				 w->drop_level, w->top);
	for (int l = w->top; l >= w->drop_level; l--) {
		struct extent_buffer *eb = wc_block(w, l);
		if (!eb)
			return fs->err.code;
		if ((ret = wc_lookup(w, eb->start, l)))
			return ret;
		int slot, found = !btrfs_bin_search(eb, &w->drop_progress, &slot);
		if (l == w->drop_level && !found)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "tree %llu: drop_progress key (%llu %u %llu) is not in block %llu at drop_level %d",
					 (unsigned long long)w->root->objectid, (unsigned long long)w->drop_progress.objectid, w->drop_progress.type,
					 (unsigned long long)w->drop_progress.offset, (unsigned long long)eb->start, l);
		if (!found && slot > 0)
			slot--;
		w->slot[l] = slot;
		if (l > w->drop_level) {
			if (w->refs[l] != 1)
				return blab_fail(&fs->err, BLAB_ECORRUPT, "tree %llu: block %llu above drop_progress is shared (%llu refs)",
						 (unsigned long long)w->root->objectid, (unsigned long long)eb->start, (unsigned long long)w->refs[l]);
			w->node[l - 1] = btrfs_node_blockptr(eb, slot);
		}
	}
	w->level = w->drop_level;
	return 0;
}

/* The walk over r from its drop_progress: whole set when it is all gone. */
static int drop_tree(struct btrfs_fs_info *fs, struct btrfs_root *r, u64 budget, int update_ref, int trace, int *whole_out)
{
	struct walk_control *w = calloc(1, sizeof(*w));
	if (!w)
		return blab_fail(&fs->err, BLAB_ENOMEM, "dropping tree %llu", (unsigned long long)r->objectid);
	w->fs = fs;
	w->root = r;
	w->top = btrfs_level(r->node);
	w->node[w->top] = r->node->start;
	w->level = w->top;
	w->stage = DROP_REFERENCE;
	w->shared_level = -1;
	w->update_ref = update_ref;
	w->trace = trace;
	w->origin = r->item_offset;
	btrfs_disk_key_to_cpu(&w->drop_progress, r->item + BTRFS_ROOT_DROP_PROGRESS_OFF);
	w->drop_level = btrfs_root_drop_level(r->item);
	int ret, whole = 0;
	if (w->drop_progress.objectid || w->drop_progress.type || w->drop_progress.offset)
		ret = resume_walk(w);
	else
		ret = wc_lookup(w, r->node->start, w->top);
	while (!ret) {
		if ((ret = walk_down_tree(w)))
			break;
		if ((ret = walk_up_tree(w)) < 0)
			break;
		if (ret > 0) {
			ret = 0;
			whole = 1;
			break;
		}
		if (w->stage == DROP_REFERENCE) {
			struct extent_buffer *eb = wc_block(w, w->level);
			if (!eb) {
				ret = fs->err.code;
				break;
			}
			w->drop_level = w->level;
			btrfs_node_key(eb, w->slot[w->level], &w->drop_progress);
		}
		if (budget && w->let_go >= budget)
			break;
	}
	if (!ret && !whole) {
		/* the batch ends: the next goes on from here */
		btrfs_cpu_key_to_disk(r->item + BTRFS_ROOT_DROP_PROGRESS_OFF, &w->drop_progress);
		btrfs_set_root_drop_level(r->item, (u8)w->drop_level);
		r->item_dirty = 1;
		fs_trace(fs, (struct trace_event){.kind = TRACE_DROP_PROGRESS, .tree = r->objectid, .level = w->drop_level, .key = w->drop_progress,
						  .a = w->let_go});
	}
	free(w);
	*whole_out = whole;
	return ret;
}

int btrfs_drop_reloc_tree(struct btrfs_fs_info *fs, struct btrfs_root *rr, int trace)
{
	int whole = 0;
	int ret = rr->node ? drop_tree(fs, rr, 0, 0, trace, &whole) : 0;
	if (!ret && rr->node && !whole)
		ret = blab_fail(&fs->err, BLAB_EIO, "reloc tree of tree %llu not dropped whole", (unsigned long long)rr->item_offset);
	rr->node = NULL;
	return ret;
}

int btrfs_drop_snapshot(struct btrfs_fs_info *fs, struct btrfs_root *r, u64 budget, int *done)
{
	*done = 0;
	if (!r->node) {
		*done = 1;
		return 0;
	}
	btrfs_delalloc_evict_root(fs, r);
	int whole = 0, ret = drop_tree(fs, r, budget, 1, 1, &whole);
	if (ret || !whole)
		return ret;
	struct btrfs_key item = {r->objectid, BTRFS_ROOT_ITEM_KEY, r->item_offset}, orphan = {BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY,
														 r->objectid};
	if ((ret = btrfs_delete_item(fs, fs->tree_root, &item)) || ((ret = btrfs_delete_item(fs, fs->tree_root, &orphan)) && ret != BLAB_ENOENT))
		return ret;
	fs_trace(fs, (struct trace_event){.kind = TRACE_SUBVOL_DROP, .tree = r->objectid});
	/* the tree is gone; its slot stays (others' page cache keys name slots) */
	r->node = NULL;
	r->in_root_tree = 0;
	r->item_dirty = 0;
	*done = 1;
	return 0;
}

struct btrfs_root *btrfs_next_dead_root(struct btrfs_fs_info *fs)
{
	struct btrfs_root *best = NULL;
	for (size_t i = 0; i < fs->nroots; i++) {
		struct btrfs_root *r = fs->roots[i];
		if (r->dead_seq && r->in_root_tree && r->node && (!best || r->dead_seq < best->dead_seq))
			best = r;
	}
	return best;
}

int btrfs_clean_deleted_snapshots(struct btrfs_fs_info *fs, int all, u64 *commits)
{
	struct btrfs_root *dead;
	int ret = 0;
	while (!ret && (dead = btrfs_next_dead_root(fs))) {
		u64 id = dead->objectid;
		int done;
		if ((!fs->trans_running && (ret = btrfs_start_transaction(fs))) || (ret = btrfs_drop_snapshot(fs, dead, fs->drop_batch, &done)) ||
		    (ret = btrfs_commit_transaction(fs)))
			break;
		if (commits)
			++*commits;
		if (done) {
			if ((ret = btrfs_start_transaction(fs)) || (ret = btrfs_qgroup_remove(fs, id)) || (ret = btrfs_commit_transaction(fs)))
				break;
			if (commits)
				++*commits;
		}
		if (!all)
			break;
	}
	return ret;
}
