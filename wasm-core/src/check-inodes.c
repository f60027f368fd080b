/*
 * check-inodes.c — the file system half of `btrfslab check`: in every
 * subvolume, link counts against names, directory sizes, DIR_INDEX /
 * DIR_ITEM / INODE_REF agreeing with each other, file extents in order and
 * adding up to nbytes, data checksums present, and data extent references
 * counted against the extent tree.
 */
#include "check.h"
#include "crc32c.h"
#include "ctree.h"
#include "dir-item.h"
#include "disk-io.h"
#include "file-item.h"
#include "inode.h"
#include "u64map.h"
#include "volumes.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ic {
	struct btrfs_fs_info *fs;
	struct btrfs_root *root;
	struct strbuf *out;
	int *errors;
	struct u64map *drefs; /* data extent bytenr -> references counted, and the disk_num_bytes they give (u64[2]) */
	struct u64map *leaves; /* leaf bytenr -> the subvolume whose walk counts its file extents */
	u64 leaf;              /* the leaf of the item being walked */
	struct u64map entries; /* inode -> DIR_INDEX entries naming it, in this subvolume */
	struct u64map name_counts; /* inode -> its names (INODE_REF/EXTREF entries) */
	int flags;
	/* the inode being walked */
	u64 ino;
	int have_item;
	struct btrfs_inode in;
	u64 names, dir_bytes, ext_end, ext_bytes;
	u64 parent_names; /* names in a directory other than itself (not a root's "..") */
	int odd_extents, odd_entries; /* file extents / directory entries on an inode of a kind that has none: reported */
};

/* What an inode of this mode is, for messages. */
static const char *kind_of(u32 mode)
{
	switch (mode & S_IFMT_) {
	case S_IFREG_: return "regular file";
	case S_IFDIR_: return "directory";
	case S_IFLNK_: return "symlink";
	case S_IFCHR_: return "character device";
	case S_IFBLK_: return "block device";
	case S_IFIFO_: return "FIFO";
	case S_IFSOCK_: return "socket";
	default: return "inode of no known type";
	}
}

/* The longest symlink target (the kernel's PATH_MAX less its NUL). */
#define SYMLINK_MAX 4095

static void bad(struct ic *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(struct ic *c, const char *fmt, ...)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "root %lld inode %" PRIu64 ": ", (long long)c->root->objectid, c->ino);
	va_list ap;
	va_start(ap, fmt);
	btrfs_check_vreport(c->out, c->errors, prefix, fmt, ap);
	va_end(ap);
}

static void finish_inode(struct ic *c)
{
	if (!c->ino)
		return;
	u64 *n = u64map_put(&c->name_counts, c->ino);
	if (n)
		*n = c->parent_names;
	if (!c->have_item) {
		bad(c, "has items but no INODE_ITEM");
		return;
	}
	u32 fmt = c->in.mode & S_IFMT_;
	if (fmt == S_IFDIR_) {
		if (c->names != 1)
			bad(c, "directory has %" PRIu64 " names, expect exactly 1", c->names);
		if (c->in.size != c->dir_bytes)
			bad(c, "directory size is %" PRIu64 " but its entries' names add up to %" PRIu64, c->in.size, c->dir_bytes);
	} else if (c->in.nlink != c->names) {
		bad(c, "link count is %u but %" PRIu64 " name%s refer%s to it", c->in.nlink, c->names, c->names == 1 ? "" : "s",
		    c->names == 1 ? "s" : "");
	}
	if ((fmt == S_IFREG_ || fmt == S_IFLNK_) && c->in.nbytes != c->ext_bytes)
		bad(c, "nbytes is %" PRIu64 " but its extents hold %" PRIu64, c->in.nbytes, c->ext_bytes);
	/* the kernel reads size bytes of target; mkfs.btrfs stores a trailing NUL too */
	if (fmt == S_IFLNK_ && c->ext_bytes < c->in.size)
		bad(c, "symlink of size %" PRIu64 " has only %" PRIu64 " bytes of target", c->in.size, c->ext_bytes);
}

static void start_inode(struct ic *c, u64 ino)
{
	finish_inode(c);
	c->ino = ino;
	c->have_item = 0;
	c->names = c->dir_bytes = c->ext_end = c->ext_bytes = c->parent_names = 0;
	c->odd_extents = c->odd_entries = 0;
}

/* A name from the image as check prints it (escaped as ls does; a longer
 * name than any the tree checker lets through is cut). */
#define ESC_MAX (4 * BTRFS_NAME_LEN + 1)
static const char *esc(char *buf, const char *name, u16 len)
{
	return btrfs_name_escape(name, len > BTRFS_NAME_LEN ? BTRFS_NAME_LEN : len, buf);
}

/* The DIR_INDEX (dir, index) and the DIR_ITEM of name in dir both point at ino. */
static void check_name(struct ic *c, u64 dir, u64 index, const char *name, u16 len)
{
	struct btrfs_key k = {dir, BTRFS_DIR_INDEX_KEY, index};
	u8 *p;
	u32 sz;
	struct dir_entry e;
	char n1[ESC_MAX], n2[ESC_MAX];
	if (btrfs_lookup_item(c->fs, c->root, &k, &p, &sz, 0) || !btrfs_parse_dir_entry(p, sz, &e))
		bad(c, "name '%s' in directory %" PRIu64 " has no DIR_INDEX %" PRIu64, esc(n1, name, len), dir, index);
	else if (e.name_len != len || memcmp(e.name, name, len) || e.location.objectid != c->ino)
		bad(c, "DIR_INDEX %" PRIu64 " of directory %" PRIu64 " names '%s' -> %" PRIu64 ", the inode ref says '%s'", index, dir,
		    esc(n1, e.name, e.name_len), e.location.objectid, esc(n2, name, len));
	else if (c->have_item && e.type != btrfs_mode_to_ftype(c->in.mode))
		bad(c, "DIR_INDEX %" PRIu64 " of directory %" PRIu64 " names '%s' with file type %u, but the inode is a %s", index, dir,
		    esc(n1, name, len), e.type, kind_of(c->in.mode));
	u32 off;
	if (btrfs_lookup_dir_entry(c->fs, c->root, dir, BTRFS_DIR_ITEM_KEY, name, len, &e, &off))
		bad(c, "name '%s' in directory %" PRIu64 " has no DIR_ITEM", esc(n1, name, len), dir);
	else if (e.location.objectid != c->ino)
		bad(c, "DIR_ITEM '%s' of directory %" PRIu64 " points at %" PRIu64, esc(n1, name, len), dir, e.location.objectid);
}

/* A symlink's target: one inline extent at 0, at most SYMLINK_MAX bytes, no NUL
 * in its first i_size bytes (what readlink returns). */
static void check_symlink(struct ic *c, const struct btrfs_key *k, const u8 *p, u32 sz)
{
	if (btrfs_file_extent_type(p) != BTRFS_FILE_EXTENT_INLINE || k->offset) {
		bad(c, "symlink has a non-inline extent at %" PRIu64 " (a target is one inline extent at 0)", k->offset);
		return;
	}
	if (c->in.size > SYMLINK_MAX) {
		bad(c, "symlink target of %" PRIu64 " bytes is over the %d a symlink may hold", c->in.size, SYMLINK_MAX);
		return;
	}
	if (btrfs_file_extent_compression(p))
		return;
	u32 have = sz - BTRFS_FILE_EXTENT_INLINE_DATA_START, n = c->in.size < have ? (u32)c->in.size : have;
	const u8 *nul = memchr(p + BTRFS_FILE_EXTENT_INLINE_DATA_START, 0, n);
	if (nul)
		bad(c, "symlink target holds a NUL byte at offset %u of its %" PRIu64, (unsigned)(nul - p - BTRFS_FILE_EXTENT_INLINE_DATA_START),
		    c->in.size);
}

/* A directory entry naming a subvolume, as the ROOT_REF from this tree
 * says: the subvolume is alive. (An entry no ROOT_REF of this tree matches
 * is a snapshot's copy of its source's: an empty directory, as the kernel
 * shows it, whatever became of that subvolume.) */
static void subvol_entry(struct ic *c, const struct btrfs_key *k, const struct dir_entry *e)
{
	char n1[ESC_MAX];
	u64 child = e->location.objectid;
	struct btrfs_key rk = {c->root->objectid, BTRFS_ROOT_REF_KEY, child};
	u8 *p;
	u32 sz;
	if (btrfs_lookup_item(c->fs, c->fs->tree_root, &rk, &p, &sz, 0) || sz < BTRFS_ROOT_REF_SIZE ||
	    btrfs_root_ref_dirid(p) != k->objectid || btrfs_root_ref_sequence(p) != k->offset)
		return;
	struct btrfs_root *sub = btrfs_get_root(c->fs, child);
	if (!sub || !sub->in_root_tree || !btrfs_root_refs(sub->item))
		bad(c, "DIR_INDEX %" PRIu64 " names subvolume %" PRIu64 " ('%s'), which is %s", k->offset, child, esc(n1, e->name, e->name_len),
		    sub && sub->in_root_tree ? "deleted (refs 0)" : "not there (no ROOT_ITEM)");
}

static void item(struct ic *c, const struct btrfs_key *k, const u8 *p, u32 sz)
{
	switch (k->type) {
	case BTRFS_INODE_ITEM_KEY:
		if (sz < BTRFS_INODE_ITEM_SIZE) {
			bad(c, "INODE_ITEM is %u bytes", sz);
			return;
		}
		c->have_item = 1;
		btrfs_read_inode(c->fs, c->root, k->objectid, &c->in);
		break;
	case BTRFS_INODE_REF_KEY:
		for (u32 o = 0; o + BTRFS_INODE_REF_SIZE <= sz;) {
			u16 nl = btrfs_inode_ref_name_len(p + o);
			if (o + BTRFS_INODE_REF_SIZE + nl > sz) {
				bad(c, "INODE_REF to %" PRIu64 " overruns its item", k->offset);
				break;
			}
			c->names++;
			c->parent_names += k->offset != c->ino;
			if (k->offset != c->ino)
				check_name(c, k->offset, btrfs_inode_ref_index(p + o), (const char *)p + o + BTRFS_INODE_REF_SIZE, nl);
			o += BTRFS_INODE_REF_SIZE + nl;
		}
		break;
	case BTRFS_INODE_EXTREF_KEY:
		for (u32 o = 0; o + BTRFS_INODE_EXTREF_SIZE <= sz;) {
			u16 nl = btrfs_inode_extref_name_len(p + o);
			if (o + BTRFS_INODE_EXTREF_SIZE + nl > sz)
				break;
			c->names++;
			c->parent_names += btrfs_inode_extref_parent(p + o) != c->ino;
			check_name(c, btrfs_inode_extref_parent(p + o), btrfs_inode_extref_index(p + o),
				   (const char *)p + o + BTRFS_INODE_EXTREF_SIZE, nl);
			o += BTRFS_INODE_EXTREF_SIZE + nl;
		}
		break;
	case BTRFS_DIR_ITEM_KEY:
	case BTRFS_DIR_INDEX_KEY:
		if (c->have_item && (c->in.mode & S_IFMT_) != S_IFDIR_ && !c->odd_entries++)
			bad(c, "a %s holds directory entries (%" PRIu64 " %s %" PRIu64 ")", kind_of(c->in.mode), k->objectid,
			    k->type == BTRFS_DIR_ITEM_KEY ? "DIR_ITEM" : "DIR_INDEX", k->offset);
		/* fall through */
	case BTRFS_XATTR_ITEM_KEY:
		for (u32 o = 0; o < sz;) {
			struct dir_entry e;
			u32 n = btrfs_parse_dir_entry(p + o, sz - o, &e);
			if (!n) {
				bad(c, "item (%u %" PRIu64 ") has an entry that overruns it", k->type, k->offset);
				break;
			}
			if (k->type == BTRFS_DIR_INDEX_KEY && e.location.type == BTRFS_ROOT_ITEM_KEY)
				subvol_entry(c, k, &e);
			if (k->type == BTRFS_DIR_INDEX_KEY && e.location.type == BTRFS_INODE_ITEM_KEY) {
				u64 *cnt = u64map_put(&c->entries, e.location.objectid);
				if (cnt)
					(*cnt)++;
			}
			if (k->type != BTRFS_XATTR_ITEM_KEY) {
				c->dir_bytes += e.name_len;
				char n1[ESC_MAX];
				if (k->type == BTRFS_DIR_ITEM_KEY && btrfs_name_hash(e.name, e.name_len) != k->offset)
					bad(c, "DIR_ITEM '%s' is filed under hash %" PRIu64 ", its name hashes to %" PRIu64, esc(n1, e.name, e.name_len),
					    k->offset, (u64)btrfs_name_hash(e.name, e.name_len));
			}
			o += n;
		}
		break;
	case BTRFS_EXTENT_DATA_KEY: {
		if (sz < BTRFS_FILE_EXTENT_INLINE_DATA_START) {
			bad(c, "EXTENT_DATA %" PRIu64 " is %u bytes", k->offset, sz);
			return;
		}
		if (k->offset < c->ext_end)
			bad(c, "extent at %" PRIu64 " overlaps the one before, which ends at %" PRIu64, k->offset, c->ext_end);
		u32 fmt = c->have_item ? c->in.mode & S_IFMT_ : S_IFREG_;
		if (fmt != S_IFREG_ && fmt != S_IFLNK_ && !c->odd_extents++)
			bad(c, "a %s holds file extent (%" PRIu64 " EXTENT_DATA %" PRIu64 ")", kind_of(c->in.mode), k->objectid, k->offset);
		if (fmt == S_IFLNK_)
			check_symlink(c, k, p, sz);
		if (btrfs_file_extent_type(p) == BTRFS_FILE_EXTENT_INLINE) {
			if (k->offset)
				bad(c, "inline extent at offset %" PRIu64 ", not 0", k->offset);
			c->ext_bytes += btrfs_file_extent_ram_bytes(p);
			c->ext_end = k->offset + btrfs_file_extent_ram_bytes(p);
			return;
		}
		if (sz < BTRFS_FILE_EXTENT_SIZE) {
			bad(c, "EXTENT_DATA %" PRIu64 " is %u bytes", k->offset, sz);
			return;
		}
		u64 bytenr = btrfs_file_extent_disk_bytenr(p), num = btrfs_file_extent_num_bytes(p);
		c->ext_end = k->offset + num;
		if (!bytenr)
			return; /* a hole */
		c->ext_bytes += num;
		/* a leaf that trees share holds one reference per file extent, for all
		 * of them: counted by the first tree that reaches it */
		u64 *by = u64map_get(c->leaves, c->leaf);
		if (!by && (by = u64map_put(c->leaves, c->leaf)))
			*by = c->root->objectid;
		u64 *n = by && *by == c->root->objectid ? u64map_put(c->drefs, bytenr) : NULL, dlen = btrfs_file_extent_disk_num_bytes(p);
		if (n) {
			(*n)++;
			if (!n[1])
				n[1] = dlen;
			else if (n[1] != dlen)
				bad(c, "EXTENT_DATA %" PRIu64 ": data extent %" PRIu64 " of disk_num_bytes %" PRIu64 ", another file extent gives %" PRIu64,
				    k->offset, bytenr, dlen, n[1]);
		}
		if (!btrfs_file_extent_compression(p) && (btrfs_file_extent_offset(p) + num < num || btrfs_file_extent_offset(p) + num > dlen))
			bad(c, "EXTENT_DATA %" PRIu64 ": offset %" PRIu64 " and %" PRIu64 " bytes reach past its data extent %" PRIu64
			       " of %" PRIu64 " bytes",
			    k->offset, btrfs_file_extent_offset(p), num, bytenr, dlen);
		if (btrfs_file_extent_type(p) == BTRFS_FILE_EXTENT_REG && !(c->have_item && (c->in.flags & 1 /* NODATASUM */))) {
			u64 ss = c->fs->sectorsize, s = bytenr + btrfs_file_extent_offset(p);
			u8 sec[4096];
			for (u64 b = s / ss * ss; b < s + num; b += ss) {
				u32 csum;
				if (btrfs_lookup_csum(c->fs, b, &csum)) {
					bad(c, "data at logical %" PRIu64 " (file offset %" PRIu64 ") has no checksum", b, k->offset + (b - s));
					break;
				}
				if ((c->flags & CHECK_DATA_CSUM) && ss <= sizeof(sec)) {
					if (btrfs_read_logical(c->fs, b, sec, (u32)ss)) {
						bad(c, "data at logical %" PRIu64 " cannot be read: %s", b, c->fs->err.msg);
						break;
					}
					if (crc32c(sec, ss) != csum) {
						bad(c, "data csum mismatch at logical %" PRIu64 " (file offset %" PRIu64 "): have 0x%08x want 0x%08x", b,
						    k->offset + (b - s), crc32c(sec, ss), csum);
						break;
					}
				}
			}
		}
		break;
	}
	default:
		break;
	}
}

static void walk_root(struct ic *c)
{
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {0, 0, 0};
	int ret;
	for (ret = btrfs_cursor_first(c->fs, c->root, &from, &cur); ret == 0; ret = btrfs_cursor_next(c->fs, &cur)) {
		const struct btrfs_key *k = &cur.key;
		if (k->objectid < BTRFS_FIRST_FREE_OBJECTID || k->objectid > BTRFS_LAST_FREE_OBJECTID)
			continue;
		if (k->objectid != c->ino)
			start_inode(c, k->objectid);
		c->leaf = cur.leaf->start;
		item(c, k, cur.data, cur.size);
	}
	finish_inode(c);
	c->ino = 0;
	if (ret < 0)
		bad(c, "%s", c->fs->err.msg);
	/* every DIR_INDEX entry is one of its inode's names: more entries than
	 * names is a second name nobody recorded (for a directory, a cycle) */
	size_t i = 0;
	u64 ino;
	void *v;
	while (u64map_next(&c->entries, &i, &ino, &v)) {
		u64 *names = u64map_get(&c->name_counts, ino), entries = *(u64 *)v;
		c->ino = ino;
		if (!names)
			bad(c, "%" PRIu64 " directory entr%s point%s at it, but it does not exist", entries, entries == 1 ? "y" : "ies",
			    entries == 1 ? "s" : "");
		else if (entries > *names)
			bad(c, "%" PRIu64 " director%s name%s it, but it has %" PRIu64 " name%s in a directory%s", entries,
			    entries == 1 ? "y" : "ies", entries == 1 ? "s" : "", *names, *names == 1 ? "" : "s",
			    ino == BTRFS_FIRST_FREE_OBJECTID ? " (a subvolume's root directory has none)" : "");
	}
	c->ino = 0;
}

/* A deleted tree (refs 0) waiting for the cleaner, or part way dropped:
 * no inode of it is reachable, so only the data references it still holds
 * count, those right of its drop_progress (what lies left was dropped).
 * tag: what marks the leaves this tree counts (its objectid, or a reloc
 * tree's own mark). */
static void count_dead_refs(struct ic *c, u64 tag)
{
	struct btrfs_item_cursor cur;
	struct btrfs_key from;
	btrfs_disk_key_to_cpu(&from, c->root->item + BTRFS_ROOT_DROP_PROGRESS_OFF);
	if (c->root->objectid == BTRFS_TREE_RELOC_OBJECTID && btrfs_root_refs(c->root->item))
		from = (struct btrfs_key){0, 0, 0}; /* merging: drop_progress is how far, it holds all it did */
	int ret;
	for (ret = btrfs_cursor_first(c->fs, c->root, &from, &cur); ret == 0; ret = btrfs_cursor_next(c->fs, &cur)) {
		if (cur.key.type != BTRFS_EXTENT_DATA_KEY || cur.size < BTRFS_FILE_EXTENT_SIZE ||
		    btrfs_file_extent_type(cur.data) == BTRFS_FILE_EXTENT_INLINE || !btrfs_file_extent_disk_bytenr(cur.data))
			continue;
		u64 *by = u64map_get(c->leaves, cur.leaf->start);
		if (!by && (by = u64map_put(c->leaves, cur.leaf->start)))
			*by = tag;
		u64 *n = by && *by == tag ? u64map_put(c->drefs, btrfs_file_extent_disk_bytenr(cur.data)) : NULL;
		if (n)
			(*n)++;
	}
	if (ret < 0)
		bad(c, "%s", c->fs->err.msg);
}

/* One data extent's backrefs, each checked against what it names. */
struct dref {
	struct btrfs_fs_info *fs;
	struct strbuf *out;
	int *errors;
	struct u64map *leaves;
	u64 bytenr, len;
};

static void dref_bad(struct dref *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dref_bad(struct dref *d, const char *fmt, ...)
{
	char prefix[96];
	snprintf(prefix, sizeof(prefix), "data extent %" PRIu64 " len %" PRIu64 ": ", d->bytenr, d->len);
	va_list ap;
	va_start(ap, fmt);
	btrfs_check_vreport(d->out, d->errors, prefix, fmt, ap);
	va_end(ap);
}

/* Whether this file extent item refers to the extent at bytenr. */
static int refers_to(const struct btrfs_item_cursor *cur, u64 bytenr)
{
	return cur->key.type == BTRFS_EXTENT_DATA_KEY && cur->size >= BTRFS_FILE_EXTENT_SIZE &&
	       btrfs_file_extent_type(cur->data) != BTRFS_FILE_EXTENT_INLINE && btrfs_file_extent_disk_bytenr(cur->data) == bytenr;
}

/* EXTENT_DATA_REF (root, ino, offset): root is a file tree, and (when it is
 * alive: a dropped tree's leaves may be gone) holds a file extent of ino at
 * offset (its key less its extent offset) that refers to the extent. How
 * many is not compared: a leaf shared by snapshots may hold some of them
 * under a shared backref instead; the total is (check_data_refs). */
static void data_ref(struct dref *d, const u8 *r)
{
	u64 id = btrfs_extent_data_ref_root(r), ino = btrfs_extent_data_ref_objectid(r), off = btrfs_extent_data_ref_offset(r);
	if (id == BTRFS_TREE_RELOC_OBJECTID && d->fs->nreloc_left)
		return; /* a reloc tree a kernel balance left: check.c walks them */
	struct btrfs_root *root = btrfs_get_root(d->fs, id);
	int file_tree = id == BTRFS_FS_TREE_OBJECTID || id == BTRFS_DATA_RELOC_TREE_OBJECTID ||
			(id >= BTRFS_FIRST_FREE_OBJECTID && id <= BTRFS_LAST_FREE_OBJECTID);
	if (!root || !root->in_root_tree || !root->node || !file_tree) {
		dref_bad(d, "backref of root %lld inode %" PRIu64 " offset %" PRIu64 ", but there is no %sroot %lld", (long long)id, ino, off,
			 root && root->node ? "file tree " : "", (long long)id);
		return;
	}
	if (!btrfs_root_refs(root->item))
		return;
	/* a file extent's key is off plus its offset into the extent, which is
	 * below the extent's uncompressed length (at most 128 KiB when compressed) */
	u64 span = d->len > (128u << 10) ? d->len : (128u << 10), found = 0;
	struct btrfs_key from = {ino, BTRFS_EXTENT_DATA_KEY, off};
	struct btrfs_item_cursor cur;
	int ret;
	for (ret = btrfs_cursor_first(d->fs, root, &from, &cur); ret == 0 && !found; ret = btrfs_cursor_next(d->fs, &cur)) {
		if (cur.key.objectid != ino || cur.key.type != BTRFS_EXTENT_DATA_KEY || cur.key.offset - off >= span)
			break;
		found = refers_to(&cur, d->bytenr) && cur.key.offset - btrfs_file_extent_offset(cur.data) == off;
	}
	if (ret < 0)
		dref_bad(d, "backref of root %lld inode %" PRIu64 ": %s", (long long)id, ino, d->fs->err.msg);
	else if (!found)
		dref_bad(d, "backref of root %lld inode %" PRIu64 " offset %" PRIu64 ", but root %lld has no such file extent", (long long)id, ino,
			 off, (long long)id);
}

/* SHARED_DATA_REF (parent): a leaf some tree reaches holds a file extent referring to the extent. */
static void shared_data_ref(struct dref *d, u64 parent)
{
	struct extent_buffer *eb = u64map_get(d->leaves, parent) ? btrfs_find_eb(d->fs, parent) : NULL;
	u32 n = 0;
	for (u32 i = 0; eb && i < btrfs_nritems(eb) && !n; i++) {
		struct btrfs_item_cursor cur = {.data = btrfs_item_ptr(eb, (int)i), .size = btrfs_item_size_nr(eb, (int)i)};
		btrfs_item_key(eb, (int)i, &cur.key);
		n = refers_to(&cur, d->bytenr);
	}
	if (!n)
		dref_bad(d, "shared backref of block %" PRIu64 ", which is no leaf of file extents referring to it", parent);
}

static int keyed_data_ref(void *ctx, const struct btrfs_key *k, const u8 *p, u32 sz)
{
	if (k->type == BTRFS_EXTENT_DATA_REF_KEY && sz >= BTRFS_EXTENT_DATA_REF_SIZE)
		data_ref(ctx, p);
	else if (k->type == BTRFS_SHARED_DATA_REF_KEY)
		shared_data_ref(ctx, k->offset);
	return 0;
}

/* Data extents: the references counted in file trees equal the extent tree's,
 * and each backref names a file extent that refers to it. */
static void check_data_refs(struct btrfs_fs_info *fs, struct u64map *drefs, struct u64map *leaves, struct strbuf *out, int *errors)
{
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {0, 0, 0};
	struct u64map seen;
	u64map_init(&seen, 1);
	int ret;
	for (ret = btrfs_cursor_first(fs, fs->extent_root, &from, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		struct btrfs_key k = cur.key;
		const u8 *p = cur.data;
		if (k.type == BTRFS_EXTENT_ITEM_KEY && cur.size >= BTRFS_EXTENT_ITEM_SIZE &&
		    (btrfs_extent_flags(p) & BTRFS_EXTENT_FLAG_DATA)) {
			u64 *n = u64map_get(drefs, k.objectid);
			u64 have = n ? *n : 0;
			if (n && n[1] && n[1] != k.offset && ++*errors <= 200)
				sb_printf(out, "ERROR: data extent %" PRIu64 " len %" PRIu64 ": its file extents give disk_num_bytes %" PRIu64 "\n",
					  k.objectid, k.offset, n[1]);
			if (have != btrfs_extent_refs(p) && ++*errors <= 200)
				sb_printf(out, "ERROR: data extent %" PRIu64 " len %" PRIu64 ": the extent tree counts %" PRIu64
					       " references, file extents make %" PRIu64 "\n",
					  k.objectid, k.offset, btrfs_extent_refs(p), have);
			u8 *s = u64map_put(&seen, k.objectid);
			if (s)
				*s = 1;
			/* the backrefs: inline ones in a copy (the lookups below may read
			 * other blocks), then keyed ones; the cursor is found again after */
			u8 item[512];
			u32 sz = cur.size < sizeof(item) ? cur.size : (u32)sizeof(item);
			memcpy(item, p, sz);
			struct dref d = {fs, out, errors, leaves, k.objectid, k.offset};
			for (u32 off = BTRFS_EXTENT_ITEM_SIZE; off + BTRFS_EXTENT_INLINE_REF_SIZE <= sz;) {
				u8 type = btrfs_extent_inline_ref_type(item + off);
				if (type == BTRFS_EXTENT_DATA_REF_KEY && off + 1 + BTRFS_EXTENT_DATA_REF_SIZE <= sz) {
					data_ref(&d, item + off + 1);
					off += 1 + BTRFS_EXTENT_DATA_REF_SIZE;
				} else if (type == BTRFS_SHARED_DATA_REF_KEY && off + BTRFS_EXTENT_INLINE_REF_SIZE + BTRFS_SHARED_DATA_REF_SIZE <= sz) {
					shared_data_ref(&d, btrfs_extent_inline_ref_offset(item + off));
					off += BTRFS_EXTENT_INLINE_REF_SIZE + BTRFS_SHARED_DATA_REF_SIZE;
				} else {
					break; /* the tree checker refuses what is left */
				}
			}
			btrfs_for_each_item(fs, fs->extent_root, k.objectid, BTRFS_EXTENT_DATA_REF_KEY, keyed_data_ref, &d);
			btrfs_for_each_item(fs, fs->extent_root, k.objectid, BTRFS_SHARED_DATA_REF_KEY, keyed_data_ref, &d);
			if (btrfs_cursor_first(fs, fs->extent_root, &k, &cur) != 0)
				break;
		}
	}
	size_t i = 0;
	u64 b;
	void *v;
	while (u64map_next(drefs, &i, &b, &v))
		if (!u64map_get(&seen, b) && ++*errors <= 200)
			sb_printf(out, "ERROR: data extent %" PRIu64 " is used by %" PRIu64 " file extent(s) but has no extent item\n", b,
				  *(u64 *)v);
	u64map_free(&seen);
}

int btrfs_check_inodes(struct btrfs_fs_info *fs, struct strbuf *out, int flags)
{
	int errors = 0;
	struct u64map drefs, leaves;
	u64map_init(&drefs, 2 * sizeof(u64));
	u64map_init(&leaves, sizeof(u64));
	for (size_t i = 0; i < fs->nroots; i++) {
		struct btrfs_root *r = fs->roots[i];
		int subvol = r->objectid == BTRFS_FS_TREE_OBJECTID || r->objectid == BTRFS_DATA_RELOC_TREE_OBJECTID ||
			     (r->objectid >= BTRFS_FIRST_FREE_OBJECTID && r->objectid <= BTRFS_LAST_FREE_OBJECTID);
		if (!subvol || !r->node || !r->in_root_tree)
			continue;
		struct ic c = {.fs = fs, .root = r, .out = out, .errors = &errors, .drefs = &drefs, .leaves = &leaves, .flags = flags};
		u64map_init(&c.entries, sizeof(u64));
		u64map_init(&c.name_counts, sizeof(u64));
		if (btrfs_root_refs(r->item) || r->objectid == BTRFS_DATA_RELOC_TREE_OBJECTID)
			walk_root(&c);
		else
			count_dead_refs(&c, r->objectid);
		u64map_free(&c.entries);
		u64map_free(&c.name_counts);
	}
	/* reloc trees a kernel balance left: the leaves they copied hold data references
	 * too (each its own: the mark is not an objectid a subvolume can have) */
	for (size_t j = 0; j < fs->nreloc_left; j++) {
		if (!fs->reloc_left[j].root->node)
			continue; /* check.c names it */
		struct ic c = {.fs = fs, .root = fs->reloc_left[j].root, .out = out, .errors = &errors, .drefs = &drefs, .leaves = &leaves,
			       .flags = flags};
		count_dead_refs(&c, BTRFS_TREE_RELOC_OBJECTID - 1 - BLAB_MAX_ROOTS - j);
	}
	check_data_refs(fs, &drefs, &leaves, out, &errors);
	u64map_free(&drefs);
	u64map_free(&leaves);
	return errors;
}
