/* tree-log-replay.c — bringing a pending log back into the fs tree, in the
 * kernel's passes (its documentation names them; the rules below are the
 * ones a log must be read by to give back what fsync promised):
 *
 *  0. pin: the log's blocks, and data extents the log refers to that the
 *     extent tree does not know yet, are kept from allocation;
 *  1. inodes: each logged inode item is written (a directory first loses
 *     the names in its authoritative index ranges that the log does not
 *     hold; an xattr the log does not hold goes; a file is cut to its size);
 *  2. directory index entries: names the log adds (DIR_ITEM keys of logs
 *     from older kernels are ignored: DIR_INDEX keys say everything);
 *  3. the rest: inode refs (names, with their old names in that directory
 *     dropped), xattrs, file extents with their checksums;
 *  4. fixup: link counts, directory sizes and byte counts of the inodes
 *     touched are recounted; an inode left without names is deleted.
 * Then the transaction commits and the superblock no longer names a log. */
#include "block-group.h"
#include "crc32c.h"
#include "ctree.h"
#include "dir-item.h"
#include "disk-io.h"
#include "extent-tree.h"
#include "file-item.h"
#include "file.h"
#include "inode.h"
#include "transaction.h"
#include "tree-log-int.h"
#include "tree-checker.h"
#include "array.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct replay {
	struct btrfs_fs_info *fs;
	struct btrfs_root *root; /* the subvolume */
	struct btrfs_root log;   /* its log tree (not in fs->roots) */
	struct extent_buffer **leaves;
	size_t nleaves, capleaves;
	struct u64map fixup; /* inodes whose counts are recounted at the end */
	int pass;
	struct btrfs_replay_stats *st;
	u64 nactions;
};

/* A step-limited replay (for stepping through it) stops between log items. */
static int stopped(const struct replay *r)
{
	return r->st && r->st->stopped;
}

static void ev(struct replay *r, const struct btrfs_key *k, int action, u64 a, u64 b, u64 c)
{
	if (r->st) {
		r->st->actions[action]++;
		if (r->st->stop_after && ++r->nactions >= r->st->stop_after)
			r->st->stopped = 1;
	}
	fs_trace(r->fs, (struct trace_event){.kind = TRACE_REPLAY, .tree = r->root->objectid, .slot = r->pass,
					     .key = k ? *k : (struct btrfs_key){0}, .level = action, .a = a, .b = b, .c = c});
}

/* The error so far, copied: it becomes the tail of a message naming where. */
struct why {
	char msg[BLAB_ERRMSG_MAX];
};
static struct why why_of(const struct btrfs_fs_info *fs)
{
	struct why w;
	snprintf(w.msg, sizeof(w.msg), "%s", fs->err.msg);
	return w;
}

static int fixup(struct replay *r, u64 ino)
{
	if (r->pass == BTRFS_REPLAY_PASS_FIXUP)
		return 0; /* recounted where it is found */
	if (!u64map_put(&r->fixup, ino))
		return blab_fail(&r->fs->err, BLAB_ENOMEM, "replay fixup list");
	return 0;
}

static int inode_exists(struct replay *r, u64 ino, struct btrfs_inode *in)
{
	int ret = btrfs_read_inode(r->fs, r->root, ino, in);
	if (ret == BLAB_ENOENT || ret == BLAB_ECORRUPT) {
		/* a missing inode is an answer here, not a failure */
		r->fs->err.code = 0;
		r->fs->err.msg[0] = 0;
		return 0;
	}
	return ret ? ret : 1;
}

/* The log item with exactly key: 0 with *p, *size; ENOENT; or an error. */
static int log_lookup(struct replay *r, const struct btrfs_key *key, const u8 **p, u32 *size)
{
	struct btrfs_path path;
	int ret = btrfs_search_slot(r->fs, &r->log, key, &path, 0, 0);
	if (ret < 0)
		return ret;
	if (ret > 0)
		return BLAB_ENOENT;
	*p = btrfs_item_ptr(path.nodes[0], path.slots[0]);
	*size = btrfs_item_size_nr(path.nodes[0], path.slots[0]);
	return 0;
}

/* Whether the log's INODE_REF (ino, dir) holds name. */
static int ref_in_log(struct replay *r, u64 ino, u64 dir, const char *name, u16 len)
{
	struct btrfs_key k = {ino, BTRFS_INODE_REF_KEY, dir};
	const u8 *p;
	u32 size;
	if (log_lookup(r, &k, &p, &size))
		return 0;
	for (u32 off = 0; off + BTRFS_INODE_REF_SIZE <= size;) {
		u16 nl = btrfs_inode_ref_name_len(p + off);
		if (nl == len && !memcmp(p + off + BTRFS_INODE_REF_SIZE, name, len))
			return 1;
		off += BTRFS_INODE_REF_SIZE + nl;
	}
	return 0;
}

/* Removes name (pointing at ino) from dir; ino is recounted at the end. */
static int unlink_name(struct replay *r, const struct btrfs_key *why, u64 dir, u64 ino, const char *name, u16 len, int action)
{
	int ret = btrfs_remove_link(r->fs, r->root, dir, ino, name, len);
	if (ret)
		return ret;
	ev(r, why, action, dir, ino, 0);
	return fixup(r, ino);
}

/* Drops whatever dir holds under name unless it is ino. */
static int clear_name(struct replay *r, const struct btrfs_key *why, u64 dir, const char *name, u16 len, u64 ino)
{
	u64 cur;
	int ret = btrfs_lookup_name(r->fs, r->root, dir, name, len, &cur, NULL);
	if (ret == BLAB_ENOENT) {
		r->fs->err.code = 0;
		return 0;
	}
	if (ret)
		return ret;
	if (cur == ino)
		return 1; /* already there */
	return unlink_name(r, why, dir, cur, name, len, BTRFS_REPLAY_UNLINK_CONFLICT);
}

/* Drops the entry dir holds at index when it is not name -> ino. */
static int clear_index(struct replay *r, const struct btrfs_key *why, u64 dir, u64 index, const char *name, u16 len, u64 ino)
{
	struct btrfs_key k = {dir, BTRFS_DIR_INDEX_KEY, index};
	u8 *p;
	u32 size;
	int ret = btrfs_lookup_item(r->fs, r->root, &k, &p, &size, 0);
	if (ret == BLAB_ENOENT) {
		r->fs->err.code = 0;
		return 0;
	}
	if (ret)
		return ret;
	struct dir_entry e;
	if (!btrfs_parse_dir_entry(p, size, &e))
		return blab_fail(&r->fs->err, BLAB_ECORRUPT, "DIR_INDEX %llu of directory %llu is damaged",
				 (unsigned long long)index, (unsigned long long)dir);
	if (e.location.objectid == ino && e.name_len == len && !memcmp(e.name, name, len))
		return 1;
	char nb[BTRFS_NAME_LEN];
	u16 nl = e.name_len;
	memcpy(nb, e.name, nl);
	return unlink_name(r, why, dir, e.location.objectid, nb, nl, BTRFS_REPLAY_UNLINK_CONFLICT);
}

/* ---- pass 0: pin ---- */

static int extent_allocated(struct btrfs_fs_info *fs, u64 bytenr)
{
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {bytenr, BTRFS_EXTENT_ITEM_KEY, 0};
	int ret = btrfs_cursor_first(fs, fs->extent_root, &from, &cur);
	if (ret)
		return ret < 0 ? ret : 0;
	return cur.key.objectid == bytenr && cur.key.type == BTRFS_EXTENT_ITEM_KEY;
}

static int pin_block(struct replay *r, struct extent_buffer *eb)
{
	int ret = btrfs_pin_log_extent(r->fs, eb->start, r->fs->nodesize);
	if (ret)
		return blab_fail(&r->fs->err, ret, "log block %llu: %s", (unsigned long long)eb->start, why_of(r->fs).msg);
	ev(r, NULL, BTRFS_REPLAY_PIN_BLOCK, eb->start, (u64)btrfs_level(eb), 0);
	return 0;
}

/* A log tree walk's step: pins the block and keeps the leaves in order. */
static int read_log_block(struct btrfs_fs_info *fs, struct extent_buffer *eb, void *arg)
{
	struct replay *r = arg;
	int ret = pin_block(r, eb);
	if (ret || btrfs_level(eb))
		return ret;
	if (array_room(&r->leaves, r->nleaves, &r->capleaves, sizeof(*r->leaves), 64))
		return blab_fail(&fs->err, BLAB_ENOMEM, "log leaves");
	r->leaves[r->nleaves++] = eb;
	return 0;
}

/* Reads the log tree under eb (each block once), pins its blocks and keeps
 * its leaves in order. */
static int read_log_tree(struct replay *r, struct extent_buffer *eb)
{
	return btrfs_walk_tree(r->fs, eb, BTRFS_TREE_LOG_OBJECTID, WALK_PRE_ORDER, read_log_block, r);
}

static int pin_logged_data(struct replay *r)
{
	struct btrfs_fs_info *fs = r->fs;
	struct u64map seen;
	u64map_init(&seen, 1);
	int ret = 0;
	for (size_t l = 0; l < r->nleaves && !ret; l++) {
		struct extent_buffer *leaf = r->leaves[l];
		for (u32 i = 0; i < btrfs_nritems(leaf) && !ret; i++) {
			struct btrfs_key k;
			btrfs_item_key(leaf, (int)i, &k);
			if (k.type != BTRFS_EXTENT_DATA_KEY || btrfs_item_size_nr(leaf, (int)i) < BTRFS_FILE_EXTENT_SIZE)
				continue;
			const u8 *p = btrfs_item_ptr(leaf, (int)i);
			if (btrfs_file_extent_type(p) == BTRFS_FILE_EXTENT_INLINE)
				continue;
			u64 bytenr = btrfs_file_extent_disk_bytenr(p), len = btrfs_file_extent_disk_num_bytes(p);
			if (!bytenr || u64map_get(&seen, bytenr))
				continue;
			if (!u64map_put(&seen, bytenr)) {
				ret = blab_fail(&fs->err, BLAB_ENOMEM, "logged extents");
				break;
			}
			int a = extent_allocated(fs, bytenr);
			if (a < 0) {
				ret = a;
				break;
			}
			if (a)
				continue;
			if ((ret = btrfs_pin_log_extent(fs, bytenr, len)))
				ret = blab_fail(&fs->err, ret, "log item (%llu EXTENT_DATA %llu): data extent %llu: %s",
						(unsigned long long)k.objectid, (unsigned long long)k.offset,
						(unsigned long long)bytenr, why_of(fs).msg);
			else
				ev(r, &k, BTRFS_REPLAY_PIN_DATA, bytenr, len, 0);
		}
	}
	u64map_free(&seen);
	return ret;
}

/* ---- pass 1: inodes ---- */

static int replay_xattr_deletes(struct replay *r, const struct btrfs_key *lk, u64 ino)
{
	struct btrfs_fs_info *fs = r->fs;
	for (;;) {
		/* the first fs xattr of ino that the log does not hold */
		struct btrfs_item_cursor cur;
		struct btrfs_key key = {ino, BTRFS_XATTR_ITEM_KEY, 0};
		char name[BTRFS_NAME_LEN + 1];
		u16 nl = 0;
		int found = 0, ret;
		for (ret = btrfs_cursor_first(fs, r->root, &key, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
			const struct btrfs_key k = cur.key;
			if (k.objectid != ino || k.type != BTRFS_XATTR_ITEM_KEY)
				break;
			const u8 *p = cur.data;
			u32 size = cur.size;
			for (u32 off = 0; off < size && !found;) {
				struct dir_entry e;
				u32 n = btrfs_parse_dir_entry(p + off, size - off, &e);
				if (!n)
					return blab_fail(&fs->err, BLAB_ECORRUPT, "xattr item of inode %llu is damaged", (unsigned long long)ino);
				const u8 *lp;
				u32 lsz;
				int inlog = 0;
				if (log_lookup(r, &k, &lp, &lsz) == 0) {
					for (u32 lo = 0; lo < lsz;) {
						struct dir_entry le;
						u32 ln = btrfs_parse_dir_entry(lp + lo, lsz - lo, &le);
						if (!ln)
							break;
						if (le.name_len == e.name_len && !memcmp(le.name, e.name, e.name_len))
							inlog = 1;
						lo += ln;
					}
				}
				if (!inlog) {
					nl = e.name_len;
					memcpy(name, e.name, nl);
					found = 1;
				}
				off += n;
			}
			if (found)
				break;
		}
		if (ret < 0)
			return ret;
		if (!found)
			return 0;
		struct dir_entry e;
		u32 off;
		if ((ret = btrfs_lookup_dir_entry(fs, r->root, ino, BTRFS_XATTR_ITEM_KEY, name, nl, &e, &off)))
			return ret;
		key = (struct btrfs_key){ino, BTRFS_XATTR_ITEM_KEY, btrfs_name_hash(name, nl)};
		if ((ret = btrfs_remove_name_entry(fs, r->root, &key, off, btrfs_dir_entry_size(&e))))
			return ret;
		ev(r, lk, BTRFS_REPLAY_XATTR_DELETE, ino, 0, 0);
	}
}

/* A directory entry of the fs tree, copied out of its leaf. */
struct fs_entry {
	struct btrfs_key key; /* (dir, DIR_INDEX, index) */
	struct btrfs_key location;
	char name[BTRFS_NAME_LEN];
	u16 len;
};

/* The first DIR_INDEX entry of dir with an index in [from, last]: 0 with *e,
 * 1 when there is none, or an error. */
static int next_dir_entry(struct replay *r, u64 dir, u64 from, u64 last, struct fs_entry *e)
{
	struct btrfs_fs_info *fs = r->fs;
	struct btrfs_item_cursor cur;
	struct btrfs_key key = {dir, BTRFS_DIR_INDEX_KEY, from};
	int ret = btrfs_cursor_first(fs, r->root, &key, &cur);
	if (ret)
		return ret;
	e->key = cur.key;
	if (e->key.objectid != dir || e->key.type != BTRFS_DIR_INDEX_KEY || e->key.offset > last)
		return 1;
	struct dir_entry d;
	if (!btrfs_parse_dir_entry(cur.data, cur.size, &d))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "DIR_INDEX %llu of directory %llu is damaged",
				 (unsigned long long)e->key.offset, (unsigned long long)dir);
	e->location = d.location;
	e->len = d.name_len;
	memcpy(e->name, d.name, d.name_len);
	return 0;
}

/* Names in dir's authoritative index ranges that the log does not hold go. */
static int replay_dir_deletes(struct replay *r, const struct btrfs_key *lk, u64 dir)
{
	struct btrfs_fs_info *fs = r->fs;
	struct btrfs_item_cursor lc; /* over the log's ranges; replay changes only the fs tree */
	struct btrfs_key key = {dir, BTRFS_DIR_LOG_INDEX_KEY, 0}, k;
	int ret;
	for (ret = btrfs_cursor_first(fs, &r->log, &key, &lc); ret == 0; ret = btrfs_cursor_next(fs, &lc)) {
		k = lc.key;
		if (k.objectid != dir || k.type != BTRFS_DIR_LOG_INDEX_KEY)
			return 0;
		if (lc.size < 8)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu DIR_LOG_INDEX %llu) is too small",
					 (unsigned long long)dir, (unsigned long long)k.offset);
		u64 first = k.offset, last = get_le64(lc.data);
		struct btrfs_key rk = k;
		if (last < first)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu DIR_LOG_INDEX %llu) ends at %llu, before it starts",
					 (unsigned long long)dir, (unsigned long long)first, (unsigned long long)last);
		struct fs_entry e;
		for (u64 cur = first; (ret = next_dir_entry(r, dir, cur, last, &e)) == 0; cur = e.key.offset + 1) {
			const u8 *lp;
			u32 lsz;
			int keep = 0;
			if (log_lookup(r, &e.key, &lp, &lsz) == 0) {
				struct dir_entry le;
				if (btrfs_parse_dir_entry(lp, lsz, &le) && le.name_len == e.len && !memcmp(le.name, e.name, e.len))
					keep = 1;
			}
			if (!keep && e.location.type == BTRFS_INODE_ITEM_KEY &&
			    (ret = unlink_name(r, &rk, dir, e.location.objectid, e.name, e.len, BTRFS_REPLAY_DIR_DELETE)))
				return ret;
			if (e.key.offset == (u64)-1)
				break;
		}
		if (ret < 0)
			return ret;
	}
	return ret < 0 ? ret : 0;
}

static int replay_inode_item(struct replay *r, const struct btrfs_key *lk, const u8 *item, u32 size)
{
	struct btrfs_fs_info *fs = r->fs;
	if (size < BTRFS_INODE_ITEM_SIZE)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu INODE_ITEM 0) is %u bytes", (unsigned long long)lk->objectid,
				 size);
	u64 ino = lk->objectid;
	u32 mode = btrfs_inode_mode(item);
	int is_dir = (mode & S_IFMT_) == S_IFDIR_;
	int ret = replay_xattr_deletes(r, lk, ino);
	if (ret)
		return ret;
	if (is_dir && (ret = replay_dir_deletes(r, lk, ino)))
		return ret;
	struct btrfs_inode cur;
	int exists = inode_exists(r, ino, &cur);
	if (exists < 0)
		return exists;
	/* an inode never changes type: a log that says so is hostile, and what it
	 * would leave (a directory holding extents, a file holding entries) is refused */
	if (exists && (cur.mode & S_IFMT_) != (mode & S_IFMT_))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu INODE_ITEM 0) gives inode %llu mode 0%o, it has 0%o: an inode never changes type",
				 (unsigned long long)ino, (unsigned long long)ino, mode, cur.mode);
	u8 buf[BTRFS_INODE_ITEM_SIZE];
	memcpy(buf, item, sizeof(buf));
	if (exists) {
		if (btrfs_inode_generation(item) == 0) {
			ev(r, lk, BTRFS_REPLAY_INODE_KEEP, ino, 0, 0);
		} else {
			/* a directory's size follows the names replay leaves it with */
			if (is_dir && (cur.mode & S_IFMT_) == S_IFDIR_)
				btrfs_set_inode_size(buf, cur.size);
			btrfs_set_inode_nbytes(buf, cur.nbytes);
			btrfs_set_inode_nlink(buf, cur.nlink);
			u8 *p;
			u32 sz;
			struct btrfs_key k = {ino, BTRFS_INODE_ITEM_KEY, 0};
			if ((ret = btrfs_lookup_item(fs, r->root, &k, &p, &sz, 1)))
				return ret;
			memcpy(p, buf, BTRFS_INODE_ITEM_SIZE);
			ev(r, lk, BTRFS_REPLAY_INODE_OVERWRITE, ino, btrfs_inode_size(buf), 0);
		}
	} else {
		if (btrfs_inode_generation(buf) == 0)
			btrfs_set_inode_generation(buf, fs->generation);
		btrfs_set_inode_nbytes(buf, 0);
		btrfs_set_inode_nlink(buf, 0); /* counted from its refs at the end */
		if (is_dir)
			btrfs_set_inode_size(buf, 0);
		if ((ret = btrfs_insert_item(fs, r->root, lk, buf, sizeof(buf))))
			return ret;
		if (ino > r->root->highest_objectid && r->root->highest_objectid)
			r->root->highest_objectid = ino;
		ev(r, lk, BTRFS_REPLAY_INODE_NEW, ino, btrfs_inode_size(buf), 0);
	}
	if ((mode & S_IFMT_) == S_IFREG_) {
		struct btrfs_inode now;
		if ((ret = btrfs_read_inode(fs, r->root, ino, &now)))
			return ret;
		u64 from = (now.size + fs->sectorsize - 1) / fs->sectorsize * fs->sectorsize;
		u64 dropped = 0;
		if ((ret = btrfs_drop_file_extents(fs, r->root, ino, from, (u64)-1, &dropped)))
			return ret;
		if (dropped)
			ev(r, lk, BTRFS_REPLAY_TRUNCATE, ino, from, dropped);
	}
	return fixup(r, ino);
}

/* ---- pass 2: directory index entries ---- */

static int replay_dir_index(struct replay *r, const struct btrfs_key *lk, const u8 *p, u32 size)
{
	struct btrfs_fs_info *fs = r->fs;
	struct dir_entry e;
	if (!btrfs_parse_dir_entry(p, size, &e) || e.name_len == 0)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu DIR_INDEX %llu) is damaged", (unsigned long long)lk->objectid,
				 (unsigned long long)lk->offset);
	if (e.location.type != BTRFS_INODE_ITEM_KEY)
		return 0; /* subvolume links are not replayed here */
	u64 dir = lk->objectid, ino = e.location.objectid;
	char name[BTRFS_NAME_LEN];
	u16 nl = e.name_len;
	memcpy(name, e.name, nl);
	struct btrfs_inode d, in;
	int ret = inode_exists(r, dir, &d);
	if (ret <= 0)
		return ret < 0 ? ret : blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu DIR_INDEX %llu): directory %llu does not exist",
						 (unsigned long long)dir, (unsigned long long)lk->offset, (unsigned long long)dir);
	if ((d.mode & S_IFMT_) != S_IFDIR_)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu DIR_INDEX %llu): inode %llu is not a directory (mode 0%o)",
				 (unsigned long long)dir, (unsigned long long)lk->offset, (unsigned long long)dir, d.mode);
	int at_index = clear_index(r, lk, dir, lk->offset, name, nl, ino);
	if (at_index < 0)
		return at_index;
	int named = clear_name(r, lk, dir, name, nl, ino);
	if (named < 0)
		return named;
	if (at_index || named) {
		ev(r, lk, BTRFS_REPLAY_LINK_PRESENT, dir, ino, lk->offset);
		return 0;
	}
	if (ref_in_log(r, ino, dir, name, nl)) {
		ev(r, lk, BTRFS_REPLAY_LINK_LATER, dir, ino, lk->offset);
		return 0; /* the ref adds it in the last pass */
	}
	if ((ret = inode_exists(r, ino, &in)) <= 0) {
		if (ret == 0)
			ev(r, lk, BTRFS_REPLAY_LINK_NO_INODE, dir, ino, lk->offset);
		return ret;
	}
	if ((ret = btrfs_add_link_index(fs, r->root, dir, ino, btrfs_mode_to_ftype(in.mode), name, nl, lk->offset)))
		return ret;
	ev(r, lk, BTRFS_REPLAY_LINK_ADD, dir, ino, lk->offset);
	return fixup(r, ino);
}

/* ---- pass 3: refs, xattrs, extents ---- */

struct ref_name {
	u64 index;
	u16 len;
	const u8 *name;
};

static int parse_refs(const struct btrfs_key *k, const u8 *p, u32 size, struct ref_name *out, int max, u64 *parent, int n_parent)
{
	int n = 0;
	int ext = k->type != BTRFS_INODE_REF_KEY;
	u32 head = ext ? BTRFS_INODE_EXTREF_SIZE : BTRFS_INODE_REF_SIZE;
	for (u32 off = 0; off < size && n < max;) {
		if (off + head > size)
			return -1;
		const u8 *r = p + off;
		u16 nl = ext ? btrfs_inode_extref_name_len(r) : btrfs_inode_ref_name_len(r);
		if (off + head + nl > size || nl == 0 || nl > BTRFS_NAME_LEN)
			return -1;
		out[n] = (struct ref_name){ext ? btrfs_inode_extref_index(r) : btrfs_inode_ref_index(r), nl, r + head};
		parent[n < n_parent ? n : 0] = ext ? btrfs_inode_extref_parent(r) : k->offset;
		n++;
		off += head + nl;
	}
	return n;
}

/* Names ino has in dir in the fs tree that the log's ref item does not. */
static int unlink_old_refs(struct replay *r, const struct btrfs_key *lk, u64 ino, u64 dir, const struct ref_name *keep, int nkeep)
{
	struct btrfs_fs_info *fs = r->fs;
	for (;;) {
		struct btrfs_key k = {ino, BTRFS_INODE_REF_KEY, dir};
		u8 *p;
		u32 size;
		int ret = btrfs_lookup_item(fs, r->root, &k, &p, &size, 0);
		if (ret == BLAB_ENOENT) {
			fs->err.code = 0;
			return 0;
		}
		if (ret)
			return ret;
		char name[BTRFS_NAME_LEN];
		u16 nl = 0;
		int found = 0;
		for (u32 off = 0; off + BTRFS_INODE_REF_SIZE <= size && !found;) {
			u16 l = btrfs_inode_ref_name_len(p + off);
			const u8 *n = p + off + BTRFS_INODE_REF_SIZE;
			int kept = 0;
			for (int i = 0; i < nkeep; i++)
				if (keep[i].len == l && !memcmp(keep[i].name, n, l))
					kept = 1;
			if (!kept) {
				nl = l;
				memcpy(name, n, l);
				found = 1;
			}
			off += BTRFS_INODE_REF_SIZE + l;
		}
		if (!found)
			return 0;
		if ((ret = unlink_name(r, lk, dir, ino, name, nl, BTRFS_REPLAY_UNLINK_OLD_REF)))
			return ret;
	}
}

static int replay_ref(struct replay *r, const struct btrfs_key *lk, const u8 *p, u32 size)
{
	struct btrfs_fs_info *fs = r->fs;
	struct ref_name names[256];
	u64 parents[256];
	int n = parse_refs(lk, p, size, names, 256, parents, 256);
	if (n < 0)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu %s %llu) is damaged", (unsigned long long)lk->objectid,
				 lk->type == BTRFS_INODE_REF_KEY ? "INODE_REF" : "INODE_EXTREF", (unsigned long long)lk->offset);
	u64 ino = lk->objectid;
	struct btrfs_inode in, d;
	int ret = inode_exists(r, ino, &in);
	if (ret <= 0)
		return ret < 0 ? ret : blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu INODE_REF %llu): inode %llu is in neither the log nor the filesystem",
						 (unsigned long long)ino, (unsigned long long)lk->offset, (unsigned long long)ino);
	for (int i = 0; i < n; i++) {
		u64 dir = parents[i];
		if (dir == ino)
			continue; /* a subvolume root's ".." ref to itself */
		if ((ret = inode_exists(r, dir, &d)) < 0)
			return ret;
		if (!ret) {
			/* A name in a directory that exists in neither the log nor the
			 * filesystem (a hard link made in a new directory, the file
			 * fsynced, the directory not): the kernel skips the rest of
			 * the item, and the link count is counted again from the
			 * names there are. */
			return fixup(r, ino);
		}
		const char *name = (const char *)names[i].name;
		u16 nl = names[i].len;
		int named = clear_name(r, lk, dir, name, nl, ino);
		if (named < 0)
			return named;
		if (named) {
			ev(r, lk, BTRFS_REPLAY_LINK_PRESENT, dir, ino, names[i].index);
			continue;
		}
		int at = clear_index(r, lk, dir, names[i].index, name, nl, ino);
		if (at < 0)
			return at;
		if ((ret = btrfs_add_link_index(fs, r->root, dir, ino, btrfs_mode_to_ftype(in.mode), name, nl, names[i].index)))
			return ret;
		ev(r, lk, BTRFS_REPLAY_LINK_ADD, dir, ino, names[i].index);
	}
	if (lk->type == BTRFS_INODE_REF_KEY && lk->offset != ino && (ret = unlink_old_refs(r, lk, ino, lk->offset, names, n)))
		return ret;
	return fixup(r, ino);
}

static int replay_xattr(struct replay *r, const struct btrfs_key *lk, const u8 *p, u32 size)
{
	struct btrfs_fs_info *fs = r->fs;
	struct btrfs_inode in;
	int ret = inode_exists(r, lk->objectid, &in);
	if (ret <= 0)
		return ret < 0 ? ret : blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu XATTR_ITEM %llu): inode %llu does not exist",
						 (unsigned long long)lk->objectid, (unsigned long long)lk->offset,
						 (unsigned long long)lk->objectid);
	ret = btrfs_delete_item(fs, r->root, lk);
	if (ret == BLAB_ENOENT)
		fs->err.code = ret = 0;
	if (ret || (ret = btrfs_insert_item(fs, r->root, lk, p, size)))
		return ret;
	ev(r, lk, BTRFS_REPLAY_XATTR_SET, lk->objectid, 0, 0);
	return 0;
}

/* Whether the csum tree holds a checksum for every sector of [start, start + len):
 * 0, or ECORRUPT naming the first sector without one. */
static int csums_cover(struct replay *r, const struct btrfs_key *lk, u64 start, u64 len)
{
	struct btrfs_fs_info *fs = r->fs;
	u64 end = start + len, cur = start;
	while (cur < end) {
		struct btrfs_path path;
		u64 is, ie;
		int ret = btrfs_find_csum_item(fs, fs->csum_root, cur, end, &path, &is, &ie);
		if (ret && ret != BLAB_ENOENT)
			return ret;
		if (ret || is > cur || ie <= cur)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu EXTENT_DATA %llu) of subvolume %llu: disk bytes %llu to %llu "
				    "have no checksum, in the log or the csum tree",
				    (unsigned long long)lk->objectid, (unsigned long long)lk->offset, (unsigned long long)r->root->objectid,
				    (unsigned long long)cur, (unsigned long long)(ret || is > end ? end : is));
		cur = ie;
	}
	fs->err.code = 0;
	return 0;
}

/* Copies the log's checksums of [start, start + len) into the csum tree. */
static int replay_csums(struct replay *r, const struct btrfs_key *lk, u64 start, u64 len)
{
	struct btrfs_fs_info *fs = r->fs;
	u32 ss = fs->sectorsize;
	int ret;
	u64 end = start + len, cur = start;
	while (cur < end) {
		struct btrfs_path path;
		u64 is, ie;
		if ((ret = btrfs_find_csum_item(fs, &r->log, cur, end, &path, &is, &ie)))
			return ret == BLAB_ENOENT ? 0 : ret;
		if (ie <= is)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "log csum item (EXTENT_CSUM EXTENT_CSUM %llu) of subvolume %llu's log "
				    "runs past 2^64", (unsigned long long)is, (unsigned long long)r->root->objectid);
		u64 s = is > cur ? is : cur, e = ie < end ? ie : end;
		u32 n = (u32)((e - s) / ss);
		/* the log's checksums replace the tree's where the log has them (an
		 * extent logged again from an older transaction comes without) */
		if ((ret = btrfs_del_csums(fs, s, e - s)))
			return ret;
		struct btrfs_key ck = {BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, s};
		if ((ret = btrfs_insert_item(fs, fs->csum_root, &ck, btrfs_item_ptr(path.nodes[0], path.slots[0]) + (s - is) / ss * 4,
					     n * 4)))
			return ret;
		ev(r, lk, BTRFS_REPLAY_CSUM, s, e - s, 0);
		cur = e;
	}
	return 0;
}

static int replay_extent(struct replay *r, const struct btrfs_key *lk, const u8 *p, u32 size)
{
	struct btrfs_fs_info *fs = r->fs;
	u64 ino = lk->objectid, start = lk->offset, end;
	if (size < BTRFS_FILE_EXTENT_INLINE_DATA_START)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu EXTENT_DATA %llu) is %u bytes", (unsigned long long)ino,
				 (unsigned long long)start, size);
	u8 type = btrfs_file_extent_type(p);
	if (type == BTRFS_FILE_EXTENT_INLINE) {
		end = (start + btrfs_file_extent_ram_bytes(p) + fs->sectorsize - 1) / fs->sectorsize * fs->sectorsize;
	} else if (type == BTRFS_FILE_EXTENT_REG || type == BTRFS_FILE_EXTENT_PREALLOC) {
		if (size < BTRFS_FILE_EXTENT_SIZE)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu EXTENT_DATA %llu) is %u bytes", (unsigned long long)ino,
					 (unsigned long long)start, size);
		end = start + btrfs_file_extent_num_bytes(p);
	} else {
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu EXTENT_DATA %llu) has extent type %u",
				 (unsigned long long)ino, (unsigned long long)start, type);
	}
	/* a file offset is a loff_t: the kernel's files end before 2^63 */
	if (end < start || end > (1ULL << 63) - 1 || (start & (fs->sectorsize - 1)))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu EXTENT_DATA %llu) of subvolume %llu: %s", (unsigned long long)ino,
				 (unsigned long long)start, (unsigned long long)r->root->objectid,
				 start & (fs->sectorsize - 1) ? "the file offset is not sector aligned"
							      : "the extent ends past the largest file offset, 2^63-1");
	if (btrfs_file_extent_compression(p) && type != BTRFS_FILE_EXTENT_INLINE)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "log item (%llu EXTENT_DATA %llu): compressed extents are not supported",
				 (unsigned long long)ino, (unsigned long long)start);
	struct btrfs_inode in;
	int ret = inode_exists(r, ino, &in);
	if (ret <= 0)
		return ret < 0 ? ret : blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu EXTENT_DATA %llu): inode %llu does not exist",
						 (unsigned long long)ino, (unsigned long long)start, (unsigned long long)ino);
	u32 fmt = in.mode & S_IFMT_;
	if (fmt != S_IFREG_ && fmt != S_IFLNK_)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu EXTENT_DATA %llu): inode %llu is not a file (mode 0%o)",
				 (unsigned long long)ino, (unsigned long long)start, (unsigned long long)ino, in.mode);
	if (fmt == S_IFLNK_ && (type != BTRFS_FILE_EXTENT_INLINE || start || btrfs_file_extent_ram_bytes(p) > 4096))
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log item (%llu EXTENT_DATA %llu): not a symlink's target (one inline extent at 0 of at most 4096 bytes)",
				 (unsigned long long)ino, (unsigned long long)start);
	/* the same item there already: nothing to do */
	u8 *cur;
	u32 csz;
	if (btrfs_lookup_item(fs, r->root, lk, &cur, &csz, 0) == 0 && csz == size && !memcmp(cur, p, size)) {
		ev(r, lk, BTRFS_REPLAY_EXTENT_PRESENT, ino, start, end - start);
		return 0;
	}
	fs->err.code = 0;
	if ((ret = btrfs_drop_file_extents(fs, r->root, ino, start, end, NULL)))
		return ret;
	u64 bytenr = type == BTRFS_FILE_EXTENT_INLINE ? 0 : btrfs_file_extent_disk_bytenr(p);
	if (type != BTRFS_FILE_EXTENT_INLINE && !bytenr) {
		ev(r, lk, BTRFS_REPLAY_HOLE, ino, start, end - start);
		return fixup(r, ino); /* a hole: nothing stored under NO_HOLES */
	}
	if ((ret = btrfs_insert_item(fs, r->root, lk, p, size)))
		return ret;
	if (bytenr) {
		u64 dlen = btrfs_file_extent_disk_num_bytes(p), off = btrfs_file_extent_offset(p);
		if (btrfs_claim_log_extent(fs, bytenr, dlen))
			ret = btrfs_add_new_data_ref(fs, bytenr, dlen, r->root->objectid, ino, start - off);
		else
			ret = btrfs_mod_data_ref(fs, bytenr, dlen, r->root->objectid, ino, start - off, +1);
		if (ret)
			return ret;
		if (type == BTRFS_FILE_EXTENT_REG && (ret = replay_csums(r, lk, bytenr + off, end - start)))
			return ret;
		if (type == BTRFS_FILE_EXTENT_REG && !(in.flags & 1 /* NODATASUM */) && (ret = csums_cover(r, lk, bytenr + off, end - start)))
			return ret;
	}
	ev(r, lk, BTRFS_REPLAY_EXTENT, ino, start, end - start);
	return fixup(r, ino);
}

/* ---- pass 4: counts ---- */

/* What an inode's items add up to: its names, its directory entries' name
 * bytes (×2, a directory's size) and the bytes its extents store. */
struct tally {
	u32 names;
	u64 dir_size, nbytes;
};

static int tally_inode(struct replay *r, u64 ino, struct tally *t)
{
	struct btrfs_fs_info *fs = r->fs;
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {ino, 0, 0}, k;
	int ret;
	*t = (struct tally){0};
	for (ret = btrfs_cursor_first(fs, r->root, &from, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		k = cur.key;
		if (k.objectid != ino)
			return 0;
		const u8 *p = cur.data;
		u32 size = cur.size;
		if (k.type == BTRFS_INODE_REF_KEY || k.type == BTRFS_INODE_EXTREF_KEY) {
			struct ref_name names[256];
			u64 parents[1];
			int n = parse_refs(&k, p, size, names, 256, parents, 1);
			if (n < 0)
				return blab_fail(&fs->err, BLAB_ECORRUPT, "ref item of inode %llu is damaged", (unsigned long long)ino);
			t->names += (u32)n;
		} else if (k.type == BTRFS_DIR_INDEX_KEY && size >= BTRFS_DIR_ITEM_SIZE) {
			t->dir_size += 2 * (u64)btrfs_dir_name_len(p);
		} else if (k.type == BTRFS_EXTENT_DATA_KEY && size >= BTRFS_FILE_EXTENT_INLINE_DATA_START) {
			if (btrfs_file_extent_type(p) == BTRFS_FILE_EXTENT_INLINE)
				t->nbytes += btrfs_file_extent_ram_bytes(p);
			else if (size >= BTRFS_FILE_EXTENT_SIZE && btrfs_file_extent_disk_bytenr(p))
				t->nbytes += btrfs_file_extent_num_bytes(p);
		}
	}
	return ret < 0 ? ret : 0;
}

static int fixup_inode(struct replay *r, u64 ino)
{
	struct btrfs_fs_info *fs = r->fs;
	struct btrfs_inode in;
	int ret = inode_exists(r, ino, &in);
	if (ret <= 0)
		return ret;
	struct tally t;
	if ((ret = tally_inode(r, ino, &t)))
		return ret;
	u32 nlink = t.names;
	struct btrfs_key k = {ino, BTRFS_INODE_ITEM_KEY, 0};
	int is_dir = (in.mode & S_IFMT_) == S_IFDIR_;
	if (nlink == 0 && ino != BTRFS_FIRST_FREE_OBJECTID) {
		if (is_dir) {
			/* its names go first: each is an inode to recount */
			struct fs_entry e;
			while ((ret = next_dir_entry(r, ino, 0, (u64)-1, &e)) == 0) {
				if ((ret = unlink_name(r, &k, ino, e.location.objectid, e.name, e.len, BTRFS_REPLAY_DIR_DELETE)) ||
				    (ret = fixup_inode(r, e.location.objectid)))
					return ret;
			}
			if (ret < 0)
				return ret;
		}
		if ((ret = btrfs_evict_inode(fs, r->root, ino)))
			return ret;
		ev(r, &k, BTRFS_REPLAY_EVICT, ino, 0, 0);
		return 0;
	}
	int changed = 0;
	if (in.nlink != nlink) {
		in.nlink = is_dir ? 1 : nlink;
		changed = 1;
	}
	if (is_dir && t.dir_size != in.size)
		in.size = t.dir_size, changed = 1;
	else if (!is_dir && t.nbytes != in.nbytes)
		in.nbytes = t.nbytes, changed = 1;
	if (!changed)
		return 0;
	ev(r, &k, BTRFS_REPLAY_COUNTS, ino, in.nlink, is_dir ? in.size : in.nbytes);
	return btrfs_update_inode(fs, r->root, &in);
}

/* ---- the whole replay ---- */

static int each_item(struct replay *r, int pass)
{
	r->pass = pass;
	for (size_t l = 0; l < r->nleaves; l++) {
		struct extent_buffer *leaf = r->leaves[l];
		for (u32 i = 0; i < btrfs_nritems(leaf); i++) {
			struct btrfs_key k;
			btrfs_item_key(leaf, (int)i, &k);
			const u8 *p = btrfs_item_ptr(leaf, (int)i);
			u32 size = btrfs_item_size_nr(leaf, (int)i);
			int ret = 0;
			if (pass == BTRFS_REPLAY_PASS_INODES && k.type == BTRFS_INODE_ITEM_KEY)
				ret = replay_inode_item(r, &k, p, size);
			else if (pass == BTRFS_REPLAY_PASS_DIR_INDEX && k.type == BTRFS_DIR_INDEX_KEY)
				ret = replay_dir_index(r, &k, p, size);
			else if (pass == BTRFS_REPLAY_PASS_ALL) {
				if (k.type == BTRFS_INODE_REF_KEY || k.type == BTRFS_INODE_EXTREF_KEY)
					ret = replay_ref(r, &k, p, size);
				else if (k.type == BTRFS_XATTR_ITEM_KEY)
					ret = replay_xattr(r, &k, p, size);
				else if (k.type == BTRFS_EXTENT_DATA_KEY)
					ret = replay_extent(r, &k, p, size);
			}
			if (ret)
				return ret;
			if (stopped(r))
				return 0;
		}
	}
	return 0;
}

static int replay_one_log(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 bytenr, int level, u64 gen,
			  struct btrfs_replay_stats *st)
{
	struct replay r = {.fs = fs, .root = root, .st = st};
	r.log.objectid = BTRFS_TREE_LOG_OBJECTID;
	u64map_init(&r.fixup, 1);
	int ret = 0;
	r.log.node = btrfs_read_tree_block(fs, bytenr, level, BTRFS_TREE_LOG_OBJECTID);
	if (!r.log.node)
		ret = blab_fail(&fs->err, fs->err.code ? fs->err.code : BLAB_ECORRUPT, "log tree of subvolume %llu at %llu: %s",
				(unsigned long long)root->objectid, (unsigned long long)bytenr, why_of(fs).msg);
	else if (btrfs_header_generation(r.log.node->data) != gen)
		ret = blab_fail(&fs->err, BLAB_ECORRUPT, "log tree of subvolume %llu at %llu has generation %llu, its root item says %llu",
				(unsigned long long)root->objectid, (unsigned long long)bytenr,
				(unsigned long long)btrfs_header_generation(r.log.node->data), (unsigned long long)gen);
	r.pass = BTRFS_REPLAY_PASS_PIN;
	if (!ret)
		ret = read_log_tree(&r, r.log.node);
	if (!ret)
		ret = pin_logged_data(&r);
	for (int pass = BTRFS_REPLAY_PASS_INODES; pass <= BTRFS_REPLAY_PASS_ALL && !ret && !stopped(&r); pass++)
		ret = each_item(&r, pass);
	r.pass = BTRFS_REPLAY_PASS_FIXUP;
	u64 ino;
	void *v;
	for (size_t i = 0; !ret && !stopped(&r) && u64map_next(&r.fixup, &i, &ino, &v);)
		ret = fixup_inode(&r, ino);
	if (st && !ret)
		st->leaves += r.nleaves;
	free(r.leaves);
	u64map_free(&r.fixup);
	return ret;
}

int btrfs_replay_log(struct btrfs_fs_info *fs, struct btrfs_replay_stats *st)
{
	u64 log_root = btrfs_super_log_root(fs->super);
	if (!log_root)
		return 0;
	u64 gen = btrfs_super_generation(fs->super) + 1;
	int ret;
	if (!fs->bg_loaded && (ret = btrfs_load_block_groups(fs)))
		return ret;
	if ((ret = btrfs_start_transaction(fs)))
		return ret;
	struct extent_buffer *lr = btrfs_read_tree_block(fs, log_root, btrfs_super_log_root_level(fs->super), BTRFS_TREE_LOG_OBJECTID);
	if (!lr)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "superblock log_root %llu: %s",
				 (unsigned long long)log_root, why_of(fs).msg);
	if (btrfs_header_generation(lr->data) != gen)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "log root tree at %llu has generation %llu; a log of the transaction after the last commit has %llu",
				 (unsigned long long)log_root, (unsigned long long)btrfs_header_generation(lr->data),
				 (unsigned long long)gen);
	if (btrfs_level(lr) != 0)
		return blab_fail(&fs->err, BLAB_ENOTSUP, "log root tree of level %d (more than one leaf of logged subvolumes)",
				 btrfs_level(lr));
	struct replay pin = {.fs = fs, .root = fs->fs_root, .st = st, .pass = BTRFS_REPLAY_PASS_PIN};
	if ((ret = pin_block(&pin, lr)))
		return ret;
	for (u32 i = 0; i < btrfs_nritems(lr); i++) {
		struct btrfs_key k;
		btrfs_item_key(lr, (int)i, &k);
		if (k.objectid != BTRFS_TREE_LOG_OBJECTID || k.type != BTRFS_ROOT_ITEM_KEY)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "log root tree slot %u: key (%llu %u %llu) is not a log root item", i,
					 (unsigned long long)k.objectid, k.type, (unsigned long long)k.offset);
		if (btrfs_item_size_nr(lr, (int)i) < BTRFS_ROOT_ITEM_V1_SIZE)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "log root item of subvolume %llu is %u bytes", (unsigned long long)k.offset,
					 btrfs_item_size_nr(lr, (int)i));
		struct btrfs_root *root = btrfs_get_root(fs, k.offset);
		if (!root || !root->node)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "the log holds a log tree for subvolume %llu, which does not exist",
					 (unsigned long long)k.offset);
		const u8 *ri = btrfs_item_ptr(lr, (int)i);
		if ((ret = replay_one_log(fs, root, btrfs_root_bytenr(ri), btrfs_root_level(ri), btrfs_root_generation(ri), st)))
			return ret;
		if (st && st->stopped)
			return 0;
	}
	return btrfs_commit_transaction(fs);
}
