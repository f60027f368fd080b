#include "print-tree.h"
#include "tree-checker.h"
#include "ctree.h"
#include "disk-io.h"
#include "tree-log.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		int n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (cap - b->len <= (size_t)n)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->oom = 1;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

void sb_free(struct strbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

static const struct {
	u8 type;
	const char *name;
} key_types[] = {
	{BTRFS_INODE_ITEM_KEY, "INODE_ITEM"}, {BTRFS_INODE_REF_KEY, "INODE_REF"},
	{BTRFS_INODE_EXTREF_KEY, "INODE_EXTREF"}, {BTRFS_XATTR_ITEM_KEY, "XATTR_ITEM"},
	{BTRFS_VERITY_DESC_ITEM_KEY, "VERITY_DESC_ITEM"}, {BTRFS_VERITY_MERKLE_ITEM_KEY, "VERITY_MERKLE_ITEM"},
	{BTRFS_ORPHAN_ITEM_KEY, "ORPHAN_ITEM"}, {BTRFS_DIR_LOG_ITEM_KEY, "DIR_LOG_ITEM"},
	{BTRFS_DIR_LOG_INDEX_KEY, "DIR_LOG_INDEX"}, {BTRFS_DIR_ITEM_KEY, "DIR_ITEM"},
	{BTRFS_DIR_INDEX_KEY, "DIR_INDEX"}, {BTRFS_EXTENT_DATA_KEY, "EXTENT_DATA"},
	{BTRFS_EXTENT_CSUM_KEY, "EXTENT_CSUM"}, {BTRFS_ROOT_ITEM_KEY, "ROOT_ITEM"},
	{BTRFS_ROOT_BACKREF_KEY, "ROOT_BACKREF"}, {BTRFS_ROOT_REF_KEY, "ROOT_REF"},
	{BTRFS_EXTENT_ITEM_KEY, "EXTENT_ITEM"}, {BTRFS_METADATA_ITEM_KEY, "METADATA_ITEM"},
	{BTRFS_EXTENT_OWNER_REF_KEY, "EXTENT_OWNER_REF"},
	{BTRFS_TREE_BLOCK_REF_KEY, "TREE_BLOCK_REF"}, {BTRFS_EXTENT_DATA_REF_KEY, "EXTENT_DATA_REF"},
	{BTRFS_SHARED_BLOCK_REF_KEY, "SHARED_BLOCK_REF"}, {BTRFS_SHARED_DATA_REF_KEY, "SHARED_DATA_REF"},
	{BTRFS_BLOCK_GROUP_ITEM_KEY, "BLOCK_GROUP_ITEM"}, {BTRFS_FREE_SPACE_INFO_KEY, "FREE_SPACE_INFO"},
	{BTRFS_FREE_SPACE_EXTENT_KEY, "FREE_SPACE_EXTENT"}, {BTRFS_FREE_SPACE_BITMAP_KEY, "FREE_SPACE_BITMAP"},
	{BTRFS_DEV_EXTENT_KEY, "DEV_EXTENT"}, {BTRFS_DEV_ITEM_KEY, "DEV_ITEM"},
	{BTRFS_CHUNK_ITEM_KEY, "CHUNK_ITEM"}, {BTRFS_RAID_STRIPE_KEY, "RAID_STRIPE"},
	{BTRFS_QGROUP_STATUS_KEY, "QGROUP_STATUS"}, {BTRFS_QGROUP_INFO_KEY, "QGROUP_INFO"},
	{BTRFS_QGROUP_LIMIT_KEY, "QGROUP_LIMIT"}, {BTRFS_QGROUP_RELATION_KEY, "QGROUP_RELATION"},
	{BTRFS_TEMPORARY_ITEM_KEY, "TEMPORARY_ITEM"}, {BTRFS_PERSISTENT_ITEM_KEY, "PERSISTENT_ITEM"},
	{BTRFS_DEV_REPLACE_KEY, "DEV_REPLACE"}, {BTRFS_UUID_KEY_SUBVOL, "UUID_KEY_SUBVOL"},
	{BTRFS_UUID_KEY_RECEIVED_SUBVOL, "UUID_KEY_RECEIVED_SUBVOL"}, {BTRFS_STRING_ITEM_KEY, "STRING_ITEM"},
};

const char *btrfs_key_type_name(u8 type, char *buf, size_t n)
{
	for (size_t i = 0; i < sizeof(key_types) / sizeof(key_types[0]); i++)
		if (key_types[i].type == type)
			return key_types[i].name;
	snprintf(buf, n, "UNKNOWN.%u", type);
	return buf;
}

static const struct {
	u64 id;
	const char *name;
} objectid_names[] = {
	{BTRFS_ROOT_TREE_OBJECTID, "ROOT_TREE"}, {BTRFS_EXTENT_TREE_OBJECTID, "EXTENT_TREE"},
	{BTRFS_CHUNK_TREE_OBJECTID, "CHUNK_TREE"}, {BTRFS_DEV_TREE_OBJECTID, "DEV_TREE"},
	{BTRFS_FS_TREE_OBJECTID, "FS_TREE"}, {BTRFS_ROOT_TREE_DIR_OBJECTID, "ROOT_TREE_DIR"},
	{BTRFS_CSUM_TREE_OBJECTID, "CSUM_TREE"}, {BTRFS_QUOTA_TREE_OBJECTID, "QUOTA_TREE"},
	{BTRFS_UUID_TREE_OBJECTID, "UUID_TREE"}, {BTRFS_FREE_SPACE_TREE_OBJECTID, "FREE_SPACE_TREE"},
	{BTRFS_BLOCK_GROUP_TREE_OBJECTID, "BLOCK_GROUP_TREE"}, {BTRFS_BALANCE_OBJECTID, "BALANCE"},
	{BTRFS_ORPHAN_OBJECTID, "ORPHAN"}, {BTRFS_TREE_LOG_OBJECTID, "TREE_LOG"},
	{BTRFS_TREE_LOG_FIXUP_OBJECTID, "LOG_FIXUP"}, {BTRFS_TREE_RELOC_OBJECTID, "TREE_RELOC"},
	{BTRFS_DATA_RELOC_TREE_OBJECTID, "DATA_RELOC_TREE"}, {BTRFS_EXTENT_CSUM_OBJECTID, "EXTENT_CSUM"},
	{BTRFS_FREE_SPACE_OBJECTID, "FREE_SPACE"}, {BTRFS_FREE_INO_OBJECTID, "FREE_INO"},
	{BTRFS_MULTIPLE_OBJECTIDS, "MULTIPLE"},
};

int btrfs_objectid_name_at(size_t i, u64 *id, const char **name)
{
	if (i >= sizeof(objectid_names) / sizeof(objectid_names[0]))
		return 0;
	*id = objectid_names[i].id;
	*name = objectid_names[i].name;
	return 1;
}

static void format_objectid(u64 id, u8 type, char *buf, size_t n)
{
	if (type == BTRFS_UUID_KEY_SUBVOL || type == BTRFS_UUID_KEY_RECEIVED_SUBVOL) {
		snprintf(buf, n, "0x%016" PRIx64, id);
		return;
	}
	if (type == BTRFS_DEV_EXTENT_KEY || (type >= BTRFS_EXTENT_ITEM_KEY && type <= BTRFS_BLOCK_GROUP_ITEM_KEY) ||
	    type == BTRFS_FREE_SPACE_INFO_KEY || type == BTRFS_FREE_SPACE_EXTENT_KEY || type == BTRFS_FREE_SPACE_BITMAP_KEY) {
		snprintf(buf, n, "%" PRIu64, id);
		return;
	}
	if (id == BTRFS_DEV_ITEMS_OBJECTID && type == BTRFS_DEV_ITEM_KEY) {
		snprintf(buf, n, "DEV_ITEMS");
		return;
	}
	if (id == BTRFS_FIRST_CHUNK_TREE_OBJECTID && type == BTRFS_CHUNK_ITEM_KEY) {
		snprintf(buf, n, "FIRST_CHUNK_TREE");
		return;
	}
	if (id == BTRFS_DEV_STATS_OBJECTID && type == BTRFS_PERSISTENT_ITEM_KEY) {
		snprintf(buf, n, "DEV_STATS");
		return;
	}
	if (id == (u64)-1) {
		snprintf(buf, n, "-1");
		return;
	}
	for (size_t i = 0; i < sizeof(objectid_names) / sizeof(objectid_names[0]); i++)
		if (objectid_names[i].id == id) {
			snprintf(buf, n, "%s", objectid_names[i].name);
			return;
		}
	snprintf(buf, n, "%" PRIu64, id);
}

void btrfs_format_key(const struct btrfs_key *k, char *buf, size_t n)
{
	char obj[40], tb[24];
	format_objectid(k->objectid, k->type, obj, sizeof(obj));
	const char *tn = btrfs_key_type_name(k->type, tb, sizeof(tb));
	if (k->type == BTRFS_UUID_KEY_SUBVOL || k->type == BTRFS_UUID_KEY_RECEIVED_SUBVOL)
		snprintf(buf, n, "%s %s 0x%016" PRIx64, obj, tn, k->offset);
	else if (k->type == BTRFS_QGROUP_RELATION_KEY)
		snprintf(buf, n, "%" PRIu64 "/%" PRIu64 " %s %" PRIu64 "/%" PRIu64, k->objectid >> 48, (u64)(k->objectid & ((1ULL << 48) - 1)),
			 tn, k->offset >> 48, (u64)(k->offset & ((1ULL << 48) - 1)));
	else if (k->type >= BTRFS_QGROUP_INFO_KEY && k->type <= BTRFS_QGROUP_RELATION_KEY)
		snprintf(buf, n, "%s %s %" PRIu64 "/%" PRIu64, obj, tn, k->offset >> 48, (u64)(k->offset & ((1ULL << 48) - 1)));
	else if (k->type == BTRFS_ROOT_ITEM_KEY && k->objectid == BTRFS_TREE_RELOC_OBJECTID) {
		char sub[40]; /* a reloc tree's: the subvolume it copies, named as an objectid (FS_TREE) */
		format_objectid(k->offset, k->type, sub, sizeof(sub));
		snprintf(buf, n, "%s %s %s", obj, tn, sub);
	} else
		snprintf(buf, n, "%s %s %" PRIu64, obj, tn, k->offset);
}

static void format_uuid(const u8 *u, char *buf)
{
	sprintf(buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
		u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static const char *owner_name(u64 owner, char *buf, size_t n)
{
	for (size_t i = 0; i < sizeof(objectid_names) / sizeof(objectid_names[0]); i++)
		if (objectid_names[i].id == owner && owner != BTRFS_ROOT_TREE_DIR_OBJECTID)
			return objectid_names[i].name;
	snprintf(buf, n, "%" PRIu64, owner);
	return buf;
}

static void header_flags(u64 flags, char *buf, size_t n)
{
	u64 f = flags & ((1ULL << BTRFS_BACKREF_REV_SHIFT) - 1);
	buf[0] = 0;
	if (f & BTRFS_HEADER_FLAG_WRITTEN)
		snprintf(buf, n, "WRITTEN");
	if (f & BTRFS_HEADER_FLAG_RELOC)
		snprintf(buf + strlen(buf), n - strlen(buf), "%sRELOC", buf[0] ? "|" : "");
	if (!buf[0])
		snprintf(buf, n, "none");
}

static void print_block_header(struct btrfs_fs_info *fs, const struct extent_buffer *eb, struct strbuf *out)
{
	const u8 *d = eb->data;
	char on[24], fl[32], fsid[40], cu[40];
	int level = btrfs_header_level(d);
	u32 nr = btrfs_header_nritems(d);
	u64 flags = btrfs_header_flags(d);
	const char *what = level ? "node" : "leaf";
	if (level)
		sb_printf(out, "node %" PRIu64 " level %d items %u free space %u generation %" PRIu64 " owner %s\n", eb->start,
			  level, nr, (fs->nodesize - BTRFS_HEADER_SIZE) / BTRFS_KEY_PTR_SIZE - nr, btrfs_header_generation(d),
			  owner_name(btrfs_header_owner(d), on, sizeof(on)));
	else
		sb_printf(out, "leaf %" PRIu64 " items %u free space %u generation %" PRIu64 " owner %s\n", eb->start, nr,
			  btrfs_leaf_free_space(fs, eb), btrfs_header_generation(d),
			  owner_name(btrfs_header_owner(d), on, sizeof(on)));
	header_flags(flags, fl, sizeof(fl));
	sb_printf(out, "%s %" PRIu64 " flags 0x%" PRIx64 "(%s) backref revision %d\n", what, eb->start,
		  (u64)(flags & ((1ULL << BTRFS_BACKREF_REV_SHIFT) - 1)), fl, (int)(flags >> BTRFS_BACKREF_REV_SHIFT));
	format_uuid(d + BTRFS_HEADER_FSID_OFF, fsid);
	format_uuid(d + BTRFS_HEADER_CHUNK_UUID_OFF, cu);
	sb_printf(out, "fs uuid %s\nchunk uuid %s\n", fsid, cu);
}

/* One line of decoded fields for the common item types (JSON "summary"). */
static void item_summary(const struct btrfs_key *k, const u8 *p, u32 sz, char *buf, size_t n)
{
	buf[0] = 0;
	switch (k->type) {
	case BTRFS_INODE_ITEM_KEY:
		if (sz >= BTRFS_INODE_ITEM_SIZE)
			snprintf(buf, n, "generation %" PRIu64 " size %" PRIu64 " nbytes %" PRIu64 " mode %o links %u",
				 btrfs_inode_generation(p), btrfs_inode_size(p), btrfs_inode_nbytes(p), btrfs_inode_mode(p),
				 btrfs_inode_nlink(p));
		break;
	case BTRFS_INODE_REF_KEY:
		if (sz >= BTRFS_INODE_REF_SIZE) {
			u16 l = btrfs_inode_ref_name_len(p);
			if (l > sz - BTRFS_INODE_REF_SIZE)
				l = (u16)(sz - BTRFS_INODE_REF_SIZE);
			snprintf(buf, n, "index %" PRIu64 " name %.*s", btrfs_inode_ref_index(p), l, p + BTRFS_INODE_REF_SIZE);
		}
		break;
	case BTRFS_DIR_ITEM_KEY:
	case BTRFS_DIR_INDEX_KEY:
		if (sz >= BTRFS_DIR_ITEM_SIZE) {
			struct btrfs_key loc;
			char kb[96];
			btrfs_disk_key_to_cpu(&loc, p);
			btrfs_format_key(&loc, kb, sizeof(kb));
			u16 l = btrfs_dir_name_len(p);
			if (l > sz - BTRFS_DIR_ITEM_SIZE)
				l = (u16)(sz - BTRFS_DIR_ITEM_SIZE);
			snprintf(buf, n, "location (%s) type %u name %.*s", kb, btrfs_dir_type(p), l, p + BTRFS_DIR_ITEM_SIZE);
		}
		break;
	case BTRFS_ROOT_ITEM_KEY:
		if (sz >= BTRFS_ROOT_ITEM_V1_SIZE)
			snprintf(buf, n, "bytenr %" PRIu64 " level %u generation %" PRIu64 " root_dirid %" PRIu64,
				 btrfs_root_bytenr(p), btrfs_root_level(p), btrfs_root_generation(p), btrfs_root_dirid(p));
		break;
	case BTRFS_METADATA_ITEM_KEY:
	case BTRFS_EXTENT_ITEM_KEY:
		if (sz >= BTRFS_EXTENT_ITEM_SIZE)
			snprintf(buf, n, "refs %" PRIu64 " gen %" PRIu64 " flags %s", btrfs_extent_refs(p),
				 btrfs_extent_generation(p),
				 (btrfs_extent_flags(p) & BTRFS_EXTENT_FLAG_TREE_BLOCK) ? "TREE_BLOCK" : "DATA");
		break;
	case BTRFS_BLOCK_GROUP_ITEM_KEY:
		if (sz >= BTRFS_BLOCK_GROUP_ITEM_SIZE)
			snprintf(buf, n, "used %" PRIu64 " flags 0x%" PRIx64, btrfs_block_group_used(p), btrfs_block_group_flags(p));
		break;
	case BTRFS_CHUNK_ITEM_KEY:
		if (sz >= BTRFS_CHUNK_SIZE_BASE + BTRFS_STRIPE_SIZE)
			snprintf(buf, n, "length %" PRIu64 " type 0x%" PRIx64 " stripes %u physical %" PRIu64, btrfs_chunk_length(p),
				 btrfs_chunk_type(p), btrfs_chunk_num_stripes(p), btrfs_stripe_offset(p + BTRFS_CHUNK_SIZE_BASE));
		break;
	case BTRFS_DEV_EXTENT_KEY:
		if (sz >= BTRFS_DEV_EXTENT_SIZE)
			snprintf(buf, n, "chunk_offset %" PRIu64 " length %" PRIu64, btrfs_dev_extent_chunk_offset(p),
				 btrfs_dev_extent_length(p));
		break;
	case BTRFS_DEV_ITEM_KEY:
		if (sz >= BTRFS_DEV_ITEM_SIZE)
			snprintf(buf, n, "devid %" PRIu64 " total_bytes %" PRIu64 " bytes_used %" PRIu64, btrfs_dev_devid(p),
				 btrfs_dev_total_bytes(p), btrfs_dev_bytes_used(p));
		break;
	case BTRFS_FREE_SPACE_INFO_KEY:
		if (sz >= BTRFS_FREE_SPACE_INFO_SIZE)
			snprintf(buf, n, "extent count %u flags %u", btrfs_free_space_extent_count(p), btrfs_free_space_flags(p));
		break;
	case BTRFS_FREE_SPACE_EXTENT_KEY:
		snprintf(buf, n, "free space extent");
		break;
	case BTRFS_UUID_KEY_SUBVOL:
	case BTRFS_UUID_KEY_RECEIVED_SUBVOL:
		if (sz >= 8)
			snprintf(buf, n, "subvol_id %" PRIu64, get_le64(p));
		break;
	default:
		break;
	}
}


/* ---- item bodies, as btrfs-progs' dump-tree prints them ---- */

static void flags_text(u64 flags, const char *const *names, int n, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		if (names[i] && (flags & (1ULL << i)))
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? "|" : "", names[i]);
	if (!len)
		snprintf(buf, size, "none");
}

static void bg_flags_text(u64 f, char *buf, size_t size)
{
	const char *type = (f & BTRFS_BLOCK_GROUP_DATA) && (f & BTRFS_BLOCK_GROUP_METADATA) ? "DATA|METADATA"
			   : (f & BTRFS_BLOCK_GROUP_DATA)				   ? "DATA"
			   : (f & BTRFS_BLOCK_GROUP_METADATA)				   ? "METADATA"
			   : (f & BTRFS_BLOCK_GROUP_SYSTEM)				   ? "SYSTEM"
											   : "UNKNOWN";
	const char *prof = (f & BTRFS_BLOCK_GROUP_DUP)	   ? "DUP"
			   : (f & BTRFS_BLOCK_GROUP_RAID0)  ? "RAID0"
			   : (f & BTRFS_BLOCK_GROUP_RAID1)  ? "RAID1"
			   : (f & BTRFS_BLOCK_GROUP_RAID10) ? "RAID10"
			   : (f & BTRFS_BLOCK_GROUP_RAID5)  ? "RAID5"
			   : (f & BTRFS_BLOCK_GROUP_RAID6)  ? "RAID6"
							    : "single";
	snprintf(buf, size, "%s|%s", type, prof);
}

static void print_time(struct strbuf *out, const char *label, const u8 *ts)
{
	u64 sec = btrfs_timespec_sec(ts);
	time_t t = (time_t)sec;
	struct tm tm;
	char when[64] = "";
	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	sb_printf(out, "\t\t%s %" PRIu64 ".%u (%s)\n", label, sec, btrfs_timespec_nsec(ts), when);
}

static const char *ftype_name(u8 t)
{
	static const char *const n[] = {"UNKNOWN", "FILE", "DIR", "CHRDEV", "BLKDEV", "FIFO", "SOCK", "SYMLINK", "XATTR"};
	return t < 9 ? n[t] : "UNKNOWN";
}

static void print_name(struct strbuf *out, const char *label, const u8 *p, u32 len)
{
	sb_printf(out, "%s%s", *label == ' ' ? "" : "\t\t", label); /* a leading space: same line */
	for (u32 i = 0; i < len; i++)
		sb_printf(out, (p[i] >= 0x20 && p[i] < 0x7f) ? "%c" : "\\x%02x", p[i]);
	sb_printf(out, "\n");
}

/* Prints the body lines of one item; returns 0 or -1 when the type is not decoded here. */
static int print_item_body(struct btrfs_fs_info *fs, const struct btrfs_key *k, const u8 *p, u32 sz, struct strbuf *out)
{
	char kb[128], fl[128], u1[40], u2[40];
	static const char *const inode_flags[] = {"NODATASUM", "NODATACOW", "READONLY", "NOCOMPRESS", "PREALLOC", "SYNC",
						  "IMMUTABLE", "APPEND", "NODUMP", "NOATIME", "DIRSYNC", "COMPRESS"};
	static const char *const root_flags[] = {"RDONLY"};
	switch (k->type) {
	case BTRFS_INODE_ITEM_KEY:
		if (sz < BTRFS_INODE_ITEM_SIZE)
			return -1;
		flags_text(btrfs_inode_flags(p), inode_flags, 12, fl, sizeof(fl));
		sb_printf(out, "\t\tgeneration %" PRIu64 " transid %" PRIu64 " size %" PRIu64 " nbytes %" PRIu64 "\n",
			  btrfs_inode_generation(p), btrfs_inode_transid(p), btrfs_inode_size(p), btrfs_inode_nbytes(p));
		sb_printf(out, "\t\tblock group %" PRIu64 " mode %o links %u uid %u gid %u rdev %" PRIu64 "\n", btrfs_inode_block_group(p),
			  btrfs_inode_mode(p), btrfs_inode_nlink(p), btrfs_inode_uid(p), btrfs_inode_gid(p), btrfs_inode_rdev(p));
		sb_printf(out, "\t\tsequence %" PRIu64 " flags 0x%" PRIx64 "(%s)\n", btrfs_inode_sequence(p), btrfs_inode_flags(p), fl);
		print_time(out, "atime", p + BTRFS_INODE_ATIME_OFF);
		print_time(out, "ctime", p + BTRFS_INODE_CTIME_OFF);
		print_time(out, "mtime", p + BTRFS_INODE_MTIME_OFF);
		print_time(out, "otime", p + BTRFS_INODE_OTIME_OFF);
		return 0;
	case BTRFS_INODE_REF_KEY:
		for (u32 o = 0; o + BTRFS_INODE_REF_SIZE <= sz;) {
			u16 nl = btrfs_inode_ref_name_len(p + o);
			if (o + BTRFS_INODE_REF_SIZE + nl > sz)
				return -1;
			sb_printf(out, "\t\tindex %" PRIu64 " namelen %u", btrfs_inode_ref_index(p + o), nl);
			print_name(out, " name: ", p + o + BTRFS_INODE_REF_SIZE, nl);
			o += BTRFS_INODE_REF_SIZE + nl;
		}
		/* progs prints "index ... name: x" on one line */
		return 0;
	case BTRFS_QGROUP_STATUS_KEY: {
		if (sz < 32)
			return -1;
		u64 f = get_le64(p + 16);
		char fl2[64] = "";
		size_t l = 0;
		static const char *const names[] = {"ON", "RESCAN", "INCONSISTENT"};
		for (int i = 0; i < 3; i++)
			if (f & (1ULL << i))
				l += (size_t)snprintf(fl2 + l, sizeof(fl2) - l, "%s%s", l ? "|" : "", names[i]);
		sb_printf(out, "\t\tversion %" PRIu64 " generation %" PRIu64 " flags %s scan %" PRIu64 "\n", get_le64(p), get_le64(p + 8),
			  l ? fl2 : "0x0", get_le64(p + 24));
		return 0;
	}
	case BTRFS_QGROUP_INFO_KEY:
		if (sz < 40)
			return -1;
		sb_printf(out, "\t\tgeneration %" PRIu64 "\n\t\treferenced %" PRIu64 " referenced_compressed %" PRIu64
			       "\n\t\texclusive %" PRIu64 " exclusive_compressed %" PRIu64 "\n",
			  get_le64(p), get_le64(p + 8), get_le64(p + 16), get_le64(p + 24), get_le64(p + 32));
		return 0;
	case BTRFS_QGROUP_LIMIT_KEY:
		if (sz < 40)
			return -1;
		sb_printf(out, "\t\tflags %" PRIx64 "\n\t\tmax_referenced %" PRIu64 " max_exclusive %" PRIu64
			       "\n\t\trsv_referenced %" PRIu64 " rsv_exclusive %" PRIu64 "\n",
			  get_le64(p), get_le64(p + 8), get_le64(p + 16), get_le64(p + 24), get_le64(p + 32));
		return 0;
	case BTRFS_QGROUP_RELATION_KEY:
		return 0;
	case BTRFS_ROOT_REF_KEY:
	case BTRFS_ROOT_BACKREF_KEY: {
		if (sz < BTRFS_ROOT_REF_SIZE)
			return -1;
		u16 nl = btrfs_root_ref_name_len(p);
		if (nl > sz - BTRFS_ROOT_REF_SIZE)
			nl = (u16)(sz - BTRFS_ROOT_REF_SIZE);
		sb_printf(out, "\t\troot %s key dirid %" PRIu64 " sequence %" PRIu64, k->type == BTRFS_ROOT_REF_KEY ? "ref" : "backref",
			  btrfs_root_ref_dirid(p), btrfs_root_ref_sequence(p));
		print_name(out, " name ", p + BTRFS_ROOT_REF_SIZE, nl);
		return 0;
	}
	case BTRFS_DIR_ITEM_KEY:
	case BTRFS_DIR_INDEX_KEY:
	case BTRFS_XATTR_ITEM_KEY:
		for (u32 o = 0; o + BTRFS_DIR_ITEM_SIZE <= sz;) {
			struct btrfs_key loc;
			btrfs_disk_key_to_cpu(&loc, p + o);
			u16 nl = btrfs_dir_name_len(p + o), dl = btrfs_dir_data_len(p + o);
			if (o + BTRFS_DIR_ITEM_SIZE + nl + dl > sz)
				return -1;
			btrfs_format_key(&loc, kb, sizeof(kb));
			sb_printf(out, "\t\tlocation key (%s) type %s\n", kb, ftype_name(btrfs_dir_type(p + o)));
			sb_printf(out, "\t\ttransid %" PRIu64 " data_len %u name_len %u\n", btrfs_dir_transid(p + o), dl, nl);
			print_name(out, "name: ", p + o + BTRFS_DIR_ITEM_SIZE, nl);
			if (dl)
				print_name(out, "data ", p + o + BTRFS_DIR_ITEM_SIZE + nl, dl);
			o += BTRFS_DIR_ITEM_SIZE + nl + dl;
		}
		return 0;
	case BTRFS_ROOT_ITEM_KEY: {
		if (sz < BTRFS_ROOT_ITEM_SIZE)
			return -1;
		struct btrfs_key dp;
		btrfs_disk_key_to_cpu(&dp, p + BTRFS_ROOT_DROP_PROGRESS_OFF);
		btrfs_format_key(&dp, kb, sizeof(kb));
		flags_text(btrfs_root_flags(p), root_flags, 1, fl, sizeof(fl));
		sb_printf(out, "\t\tgeneration %" PRIu64 " root_dirid %" PRIu64 " bytenr %" PRIu64 " byte_limit %" PRIu64 " bytes_used %" PRIu64 "\n",
			  btrfs_root_generation(p), btrfs_root_dirid(p), btrfs_root_bytenr(p), btrfs_root_byte_limit(p), btrfs_root_bytes_used(p));
		sb_printf(out, "\t\tlast_snapshot %" PRIu64 " flags 0x%" PRIx64 "(%s) refs %u\n", btrfs_root_last_snapshot(p), btrfs_root_flags(p), fl,
			  btrfs_root_refs(p));
		sb_printf(out, "\t\tdrop_progress key (%s) drop_level %u\n", kb, btrfs_root_drop_level(p));
		sb_printf(out, "\t\tlevel %u generation_v2 %" PRIu64 "\n", btrfs_root_level(p), btrfs_root_generation_v2(p));
		format_uuid(p + BTRFS_ROOT_UUID_OFF, u1);
		sb_printf(out, "\t\tuuid %s\n", u1);
		format_uuid(p + BTRFS_ROOT_PARENT_UUID_OFF, u1);
		sb_printf(out, "\t\tparent_uuid %s\n", u1);
		format_uuid(p + BTRFS_ROOT_RECEIVED_UUID_OFF, u1);
		sb_printf(out, "\t\treceived_uuid %s\n", u1);
		sb_printf(out, "\t\tctransid %" PRIu64 " otransid %" PRIu64 " stransid %" PRIu64 " rtransid %" PRIu64 "\n", btrfs_root_ctransid(p),
			  btrfs_root_otransid(p), btrfs_root_stransid(p), btrfs_root_rtransid(p));
		print_time(out, "ctime", p + BTRFS_ROOT_CTIME_OFF);
		print_time(out, "otime", p + BTRFS_ROOT_OTIME_OFF);
		print_time(out, "stime", p + BTRFS_ROOT_STIME_OFF);
		print_time(out, "rtime", p + BTRFS_ROOT_RTIME_OFF);
		return 0;
	}
	case BTRFS_EXTENT_ITEM_KEY:
	case BTRFS_METADATA_ITEM_KEY: {
		if (sz < BTRFS_EXTENT_ITEM_SIZE)
			return -1;
		u64 f = btrfs_extent_flags(p);
		char ef[64] = "";
		size_t l = 0;
		if (f & BTRFS_EXTENT_FLAG_DATA)
			l += (size_t)snprintf(ef + l, sizeof(ef) - l, "DATA");
		if (f & BTRFS_EXTENT_FLAG_TREE_BLOCK)
			l += (size_t)snprintf(ef + l, sizeof(ef) - l, "%sTREE_BLOCK", l ? "|" : "");
		if (f & BTRFS_BLOCK_FLAG_FULL_BACKREF)
			l += (size_t)snprintf(ef + l, sizeof(ef) - l, "%sFULL_BACKREF", l ? "|" : "");
		sb_printf(out, "\t\trefs %" PRIu64 " gen %" PRIu64 " flags %s\n", btrfs_extent_refs(p), btrfs_extent_generation(p), ef);
		u32 o = BTRFS_EXTENT_ITEM_SIZE;
		if (k->type == BTRFS_METADATA_ITEM_KEY) {
			sb_printf(out, "\t\ttree block skinny level %" PRIu64 "\n", k->offset);
		} else if (f & BTRFS_EXTENT_FLAG_TREE_BLOCK) {
			if (sz < o + BTRFS_TREE_BLOCK_INFO_SIZE)
				return -1;
			struct btrfs_key tk;
			btrfs_disk_key_to_cpu(&tk, p + o);
			btrfs_format_key(&tk, kb, sizeof(kb));
			sb_printf(out, "\t\ttree block key (%s) level %u\n", kb, p[o + 17]);
			o += BTRFS_TREE_BLOCK_INFO_SIZE;
		}
		while (o < sz) {
			u8 t = p[o];
			char on[24];
			if (t == BTRFS_TREE_BLOCK_REF_KEY && o + 9 <= sz) {
				sb_printf(out, "\t\ttree block backref root %s\n", owner_name(btrfs_extent_inline_ref_offset(p + o), on, sizeof(on)));
				o += 9;
			} else if (t == BTRFS_SHARED_BLOCK_REF_KEY && o + 9 <= sz) {
				sb_printf(out, "\t\tshared block backref parent %" PRIu64 "\n", btrfs_extent_inline_ref_offset(p + o));
				o += 9;
			} else if (t == BTRFS_EXTENT_DATA_REF_KEY && o + 1 + BTRFS_EXTENT_DATA_REF_SIZE <= sz) {
				const u8 *d = p + o + 1;
				sb_printf(out, "\t\textent data backref root %s objectid %" PRIu64 " offset %" PRIu64 " count %u\n",
					  owner_name(btrfs_extent_data_ref_root(d), on, sizeof(on)), btrfs_extent_data_ref_objectid(d),
					  btrfs_extent_data_ref_offset(d), btrfs_extent_data_ref_count(d));
				o += 1 + BTRFS_EXTENT_DATA_REF_SIZE;
			} else if (t == BTRFS_SHARED_DATA_REF_KEY && o + 13 <= sz) {
				sb_printf(out, "\t\tshared data backref parent %" PRIu64 " count %u\n", btrfs_extent_inline_ref_offset(p + o),
					  get_le32(p + o + 9));
				o += 13;
			} else {
				return -1;
			}
		}
		return 0;
	}
	/* backrefs in items of their own (past what fits inline): the key holds the root or parent */
	case BTRFS_TREE_BLOCK_REF_KEY:
		sb_printf(out, "\t\ttree block backref\n");
		return 0;
	case BTRFS_SHARED_BLOCK_REF_KEY:
		sb_printf(out, "\t\tshared block backref\n");
		return 0;
	case BTRFS_EXTENT_DATA_REF_KEY: {
		if (sz < BTRFS_EXTENT_DATA_REF_SIZE)
			return -1;
		char on[24];
		sb_printf(out, "\t\textent data backref root %s objectid %" PRIu64 " offset %" PRIu64 " count %u\n",
			  owner_name(btrfs_extent_data_ref_root(p), on, sizeof(on)), btrfs_extent_data_ref_objectid(p),
			  btrfs_extent_data_ref_offset(p), btrfs_extent_data_ref_count(p));
		return 0;
	}
	case BTRFS_SHARED_DATA_REF_KEY:
		if (sz < 4)
			return -1;
		sb_printf(out, "\t\tshared data backref count %u\n", get_le32(p));
		return 0;
	case BTRFS_BLOCK_GROUP_ITEM_KEY:
		if (sz < BTRFS_BLOCK_GROUP_ITEM_SIZE)
			return -1;
		bg_flags_text(btrfs_block_group_flags(p), fl, sizeof(fl));
		sb_printf(out, "\t\tblock group used %" PRIu64 " chunk_objectid %" PRIu64 " flags %s\n", btrfs_block_group_used(p),
			  btrfs_block_group_chunk_objectid(p), fl);
		return 0;
	case BTRFS_DEV_EXTENT_KEY:
		if (sz < BTRFS_DEV_EXTENT_SIZE)
			return -1;
		format_uuid(p + BTRFS_DEV_EXTENT_CHUNK_UUID_OFF, u1);
		sb_printf(out, "\t\tdev extent chunk_tree %" PRIu64 "\n\t\tchunk_objectid %" PRIu64 " chunk_offset %" PRIu64 " length %" PRIu64
			       "\n\t\tchunk_tree_uuid %s\n",
			  btrfs_dev_extent_chunk_tree(p), btrfs_dev_extent_chunk_objectid(p), btrfs_dev_extent_chunk_offset(p),
			  btrfs_dev_extent_length(p), u1);
		return 0;
	case BTRFS_DEV_ITEM_KEY:
		if (sz < BTRFS_DEV_ITEM_SIZE)
			return -1;
		format_uuid(p + BTRFS_DEV_UUID_OFF, u1);
		format_uuid(p + BTRFS_DEV_FSID_OFF, u2);
		sb_printf(out, "\t\tdevid %" PRIu64 " total_bytes %" PRIu64 " bytes_used %" PRIu64 "\n", btrfs_dev_devid(p),
			  btrfs_dev_total_bytes(p), btrfs_dev_bytes_used(p));
		sb_printf(out, "\t\tio_align %u io_width %u sector_size %u type %" PRIu64 "\n", btrfs_dev_io_align(p), btrfs_dev_io_width(p),
			  btrfs_dev_sector_size(p), btrfs_dev_type(p));
		sb_printf(out, "\t\tgeneration %" PRIu64 " start_offset %" PRIu64 " dev_group %u\n", btrfs_dev_generation(p),
			  btrfs_dev_start_offset(p), btrfs_dev_group(p));
		sb_printf(out, "\t\tseek_speed %u bandwidth %u\n\t\tuuid %s\n\t\tfsid %s\n", btrfs_dev_seek_speed(p), btrfs_dev_bandwidth(p), u1, u2);
		return 0;
	case BTRFS_CHUNK_ITEM_KEY: {
		if (sz < BTRFS_CHUNK_SIZE_BASE)
			return -1;
		u16 ns = btrfs_chunk_num_stripes(p);
		if (sz < btrfs_chunk_item_size(ns))
			return -1;
		bg_flags_text(btrfs_chunk_type(p), fl, sizeof(fl));
		sb_printf(out, "\t\tlength %" PRIu64 " owner %" PRIu64 " stripe_len %" PRIu64 " type %s\n", btrfs_chunk_length(p),
			  btrfs_chunk_owner(p), btrfs_chunk_stripe_len(p), fl);
		sb_printf(out, "\t\tio_align %u io_width %u sector_size %u\n", btrfs_chunk_io_align(p), btrfs_chunk_io_width(p),
			  btrfs_chunk_sector_size(p));
		sb_printf(out, "\t\tnum_stripes %u sub_stripes %u\n", ns, btrfs_chunk_sub_stripes(p));
		for (u16 i = 0; i < ns; i++) {
			const u8 *st = p + BTRFS_CHUNK_SIZE_BASE + i * BTRFS_STRIPE_SIZE;
			format_uuid(st + BTRFS_STRIPE_DEV_UUID_OFF, u1);
			sb_printf(out, "\t\t\tstripe %u devid %" PRIu64 " offset %" PRIu64 "\n\t\t\tdev_uuid %s\n", i, btrfs_stripe_devid(st),
				  btrfs_stripe_offset(st), u1);
		}
		return 0;
	}
	case BTRFS_FREE_SPACE_INFO_KEY:
		if (sz < BTRFS_FREE_SPACE_INFO_SIZE)
			return -1;
		sb_printf(out, "\t\tfree space info extent count %u flags %u\n", btrfs_free_space_extent_count(p), btrfs_free_space_flags(p));
		return 0;
	case BTRFS_FREE_SPACE_EXTENT_KEY:
		sb_printf(out, "\t\tfree space extent\n");
		return 0;
	case BTRFS_FREE_SPACE_BITMAP_KEY:
		sb_printf(out, "\t\tfree space bitmap\n");
		return 0;
	case BTRFS_TEMPORARY_ITEM_KEY: {
		/* the balance item (objectid BALANCE): a balance running or paused.
		 * OFFSET SIZE: 0 8 flags, then the data, metadata and system
		 * filters (136 bytes each: 0 profiles, 8 usage or usage_min/_max u32,
		 * 16 devid, 24 pstart, 32 pend, 40 vstart, 48 vend, 56 target,
		 * 64 flags, 72 limit or limit_min/_max u32, 80 stripes_min u32,
		 * 84 stripes_max u32, 88 unused), 416 32 unused */
		if (k->objectid != BTRFS_BALANCE_OBJECTID || sz < 8 + 3 * 136)
			return -1;
		sb_printf(out, "\t\ttemporary item objectid BALANCE offset %" PRIu64 "\n\t\tbalance status flags %" PRIu64 "\n", k->offset,
			  get_le64(p));
		static const char *const kinds[] = {"DATA", "METADATA", "SYSTEM"};
		for (int i = 0; i < 3; i++) {
			const u8 *a = p + 8 + i * 136;
			sb_printf(out, "\t\t%s\n\t\tprofiles %" PRIu64 " devid %" PRIu64 " target %" PRIu64 " flags %" PRIu64 "\n", kinds[i],
				  get_le64(a), get_le64(a + 16), get_le64(a + 56), get_le64(a + 64));
			sb_printf(out, "\t\tusage_min %u usage_max %u pstart %" PRIu64 " pend %" PRIu64 "\n", get_le32(a + 8), get_le32(a + 12),
				  get_le64(a + 24), get_le64(a + 32));
			sb_printf(out, "\t\tvstart %" PRIu64 " vend %" PRIu64 " limit_min %u limit_max %u\n", get_le64(a + 40), get_le64(a + 48),
				  get_le32(a + 72), get_le32(a + 76));
			sb_printf(out, "\t\tstripes_min %u stripes_max %u\n", get_le32(a + 80), get_le32(a + 84));
		}
		return 0;
	}
	case BTRFS_DIR_LOG_ITEM_KEY:
	case BTRFS_DIR_LOG_INDEX_KEY:
		if (sz < 8)
			return -1;
		sb_printf(out, "\t\tdir log end %" PRIu64 "\n", get_le64(p));
		return 0;
	case BTRFS_ORPHAN_ITEM_KEY:
		sb_printf(out, "\t\torphan item\n");
		return 0;
	case BTRFS_PERSISTENT_ITEM_KEY:
		if (k->objectid != BTRFS_DEV_STATS_OBJECTID || sz < 40)
			return -1;
		sb_printf(out, "\t\tpersistent item objectid DEV_STATS offset %" PRIu64 "\n\t\tdevice stats\n", k->offset);
		sb_printf(out, "\t\twrite_errs %" PRIu64 " read_errs %" PRIu64 " flush_errs %" PRIu64 " corruption_errs %" PRIu64
			       " generation %" PRIu64 "\n",
			  get_le64(p), get_le64(p + 8), get_le64(p + 16), get_le64(p + 24), get_le64(p + 32));
		return 0;
	case BTRFS_UUID_KEY_SUBVOL:
	case BTRFS_UUID_KEY_RECEIVED_SUBVOL:
		for (u32 o = 0; o + 8 <= sz; o += 8)
			sb_printf(out, "\t\tsubvol_id %" PRIu64 "\n", get_le64(p + o));
		return 0;
	case BTRFS_EXTENT_CSUM_KEY:
		sb_printf(out, "\t\trange start %" PRIu64 " end %" PRIu64 " length %" PRIu64 "\n", k->offset,
			  k->offset + (u64)(sz / 4) * fs->sectorsize, (u64)(sz / 4) * fs->sectorsize);
		return 0;
	case BTRFS_EXTENT_DATA_KEY: {
		if (sz < BTRFS_FILE_EXTENT_INLINE_DATA_START)
			return -1;
		u8 t = btrfs_file_extent_type(p);
		static const char *const comp[] = {"none", "zlib", "lzo", "zstd"};
		u8 c = btrfs_file_extent_compression(p);
		sb_printf(out, "\t\tgeneration %" PRIu64 " type %u (%s)\n", btrfs_file_extent_generation(p), t,
			  t == 0 ? "inline" : t == 1 ? "regular" : t == 2 ? "prealloc" : "unknown");
		if (t == BTRFS_FILE_EXTENT_INLINE) {
			sb_printf(out, "\t\tinline extent data size %u ram_bytes %" PRIu64 " compression %u (%s)\n",
				  sz - BTRFS_FILE_EXTENT_INLINE_DATA_START, btrfs_file_extent_ram_bytes(p), c, c < 4 ? comp[c] : "unknown");
			return 0;
		}
		if (sz < BTRFS_FILE_EXTENT_SIZE)
			return -1;
		sb_printf(out, "\t\textent data disk byte %" PRIu64 " nr %" PRIu64 "\n", btrfs_file_extent_disk_bytenr(p),
			  btrfs_file_extent_disk_num_bytes(p));
		sb_printf(out, "\t\textent data offset %" PRIu64 " nr %" PRIu64 " ram %" PRIu64 "\n", btrfs_file_extent_offset(p),
			  btrfs_file_extent_num_bytes(p), btrfs_file_extent_ram_bytes(p));
		sb_printf(out, "\t\textent compression %u (%s)\n", c, c < 4 ? comp[c] : "unknown");
		return 0;
	}
	default:
		return -1;
	}
}

/* One block: header, then its items (with bodies) or key pointers. */
static void dump_one_block(struct btrfs_fs_info *fs, const struct extent_buffer *eb, struct strbuf *out)
{
	char kb[128];
	struct btrfs_key k;
	u32 nr = btrfs_nritems(eb);
	print_block_header(fs, eb, out);
	for (u32 i = 0; i < nr; i++) {
		if (btrfs_level(eb) == 0) {
			btrfs_item_key(eb, (int)i, &k);
			btrfs_format_key(&k, kb, sizeof(kb));
			sb_printf(out, "\titem %u key (%s) itemoff %u itemsize %u\n", i, kb, btrfs_item_offset_nr(eb, (int)i),
				  btrfs_item_size_nr(eb, (int)i));
			print_item_body(fs, &k, btrfs_item_ptr(eb, (int)i), btrfs_item_size_nr(eb, (int)i), out);
		} else {
			btrfs_node_key(eb, (int)i, &k);
			btrfs_format_key(&k, kb, sizeof(kb));
			sb_printf(out, "\tkey (%s) block %" PRIu64 " gen %" PRIu64 "\n", kb, btrfs_node_blockptr(eb, (int)i),
				  btrfs_key_generation(btrfs_key_ptr_nr(eb, (int)i)));
		}
	}
}

static int dump_text_cb(struct btrfs_fs_info *fs, struct extent_buffer *eb, void *out)
{
	dump_one_block(fs, eb, out);
	return 0;
}

/* A tree breadth first, level by level, as dump-tree prints it by default. */
static int dump_block_text(struct btrfs_fs_info *fs, struct extent_buffer *root, u64 owner, struct strbuf *out)
{
	return btrfs_walk_tree(fs, root, owner, WALK_BREADTH_FIRST, dump_text_cb, out);
}

static const char *tree_title(u64 id)
{
	switch (id) {
	case BTRFS_EXTENT_TREE_OBJECTID: return "extent";
	case BTRFS_DEV_TREE_OBJECTID: return "device";
	case BTRFS_FS_TREE_OBJECTID: return "fs";
	case BTRFS_CSUM_TREE_OBJECTID: return "checksum";
	case BTRFS_QUOTA_TREE_OBJECTID: return "quota";
	case BTRFS_UUID_TREE_OBJECTID: return "uuid";
	case BTRFS_FREE_SPACE_TREE_OBJECTID: return "free space";
	case BTRFS_BLOCK_GROUP_TREE_OBJECTID: return "block group";
	case BTRFS_DATA_RELOC_TREE_OBJECTID: return "data reloc";
	case BTRFS_TREE_RELOC_OBJECTID: return "reloc";
	case BTRFS_TREE_LOG_OBJECTID: return "log";
	default: return "file";
	}
}

/* Roots in the order dump-tree walks them: the root tree's ROOT_ITEMs by key. */
static int sorted_roots(struct btrfs_fs_info *fs, struct btrfs_root **out)
{
	int n = 0;
	for (size_t i = 0; i < fs->nroots; i++)
		if (fs->roots[i]->in_root_tree && fs->roots[i]->node)
			out[n++] = fs->roots[i];
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && out[j - 1]->objectid > out[j]->objectid; j--) {
			struct btrfs_root *t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

int btrfs_dump_tree_text(struct btrfs_fs_info *fs, u64 tree_id, struct strbuf *out)
{
	int ret;
	char kb[96], uu[40];
	if (tree_id == 0 || tree_id == BTRFS_ROOT_TREE_OBJECTID) {
		sb_printf(out, "root tree\n");
		if ((ret = dump_block_text(fs, fs->tree_root->node, BTRFS_ROOT_TREE_OBJECTID, out)))
			return ret;
	}
	if (tree_id == 0 || tree_id == BTRFS_CHUNK_TREE_OBJECTID) {
		sb_printf(out, "chunk tree\n");
		if ((ret = dump_block_text(fs, fs->chunk_root->node, BTRFS_CHUNK_TREE_OBJECTID, out)))
			return ret;
	}
	u64 log_root = btrfs_super_log_root(fs->super);
	if (tree_id == 0 && log_root) {
		/* a pending log (the last fsync's): its root tree, as dump-tree shows it */
		struct extent_buffer *lr = btrfs_read_tree_block(fs, log_root, btrfs_super_log_root_level(fs->super), BTRFS_TREE_LOG_OBJECTID);
		if (!lr)
			return fs->err.code;
		sb_printf(out, "log root tree\n");
		if ((ret = dump_block_text(fs, lr, BTRFS_TREE_LOG_OBJECTID, out)))
			return ret;
	}
	struct btrfs_root **roots = malloc((fs->nroots + 1) * sizeof(*roots));
	if (!roots)
		return blab_fail(&fs->err, BLAB_ENOMEM, "dump-tree");
	int n = sorted_roots(fs, roots);
	int found = tree_id == 0 || tree_id == BTRFS_ROOT_TREE_OBJECTID || tree_id == BTRFS_CHUNK_TREE_OBJECTID;
	for (int i = 0; i < n; i++) {
		if (tree_id && roots[i]->objectid != tree_id)
			continue;
		found = 1;
		struct btrfs_key k = {roots[i]->objectid, BTRFS_ROOT_ITEM_KEY, roots[i]->item_offset}; /* a snapshot's: its transid */
		btrfs_format_key(&k, kb, sizeof(kb));
		/* with -t too, as btrfs-progs: a tree found through the root tree is named by its key */
		sb_printf(out, "%s tree key (%s) \n", tree_title(roots[i]->objectid), kb);
		if ((ret = dump_block_text(fs, roots[i]->node, roots[i]->objectid, out))) {
			free(roots);
			return ret;
		}
	}
	free(roots);
	/* the reloc trees a kernel balance left: after every other tree, as their
	 * key (TREE_RELOC, -8) sorts; with -t TREE_RELOC, only they */
	for (size_t i = 0; (tree_id == 0 || tree_id == BTRFS_TREE_RELOC_OBJECTID) && i < fs->nreloc_left; i++) {
		const struct btrfs_reloc_left *l = &fs->reloc_left[i];
		found = 1;
		struct btrfs_key k = {BTRFS_TREE_RELOC_OBJECTID, BTRFS_ROOT_ITEM_KEY, l->root->item_offset};
		btrfs_format_key(&k, kb, sizeof(kb));
		sb_printf(out, "%s tree key (%s) \n", tree_title(BTRFS_TREE_RELOC_OBJECTID), kb);
		if (!l->root->node)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "reloc tree (TREE_RELOC ROOT_ITEM %llu): %s",
					 (unsigned long long)l->root->item_offset, l->why);
		if ((ret = dump_block_text(fs, l->root->node, BTRFS_TREE_RELOC_OBJECTID, out)))
			return ret;
	}
	if (!found) {
		/* progs prints nothing but the totals; a tree id no tree has is an error here */
		char name[40], num[24];
		format_objectid(tree_id, BTRFS_ROOT_ITEM_KEY, name, sizeof(name));
		snprintf(num, sizeof(num), "%" PRIu64, tree_id);
		return strcmp(name, num) ? blab_fail(&fs->err, BLAB_ENOENT, "no tree %s (%s) in this image", name, num)
					 : blab_fail(&fs->err, BLAB_ENOENT, "no tree with id %s in this image", num);
	}
	if (tree_id == 0 && log_root) {
		/* each subvolume's log tree, named by its item in the log root tree */
		struct extent_buffer *lr = btrfs_read_tree_block(fs, log_root, btrfs_super_log_root_level(fs->super), BTRFS_TREE_LOG_OBJECTID);
		for (u32 i = 0; lr && btrfs_level(lr) == 0 && i < btrfs_nritems(lr); i++) {
			struct btrfs_key k;
			btrfs_item_key(lr, (int)i, &k);
			const u8 *ri = btrfs_item_ptr(lr, (int)i);
			if (k.type != BTRFS_ROOT_ITEM_KEY || btrfs_item_size_nr(lr, (int)i) < BTRFS_ROOT_ITEM_V1_SIZE)
				continue;
			struct extent_buffer *lt = btrfs_read_tree_block(fs, btrfs_root_bytenr(ri), btrfs_root_level(ri), BTRFS_TREE_LOG_OBJECTID);
			if (!lt)
				return fs->err.code;
			btrfs_format_key(&k, kb, sizeof(kb));
			sb_printf(out, "log tree key (%s) \n", kb);
			if ((ret = dump_block_text(fs, lt, BTRFS_TREE_LOG_OBJECTID, out)))
				return ret;
		}
	}
	/* the totals: after every dump but the root tree's and the chunk tree's alone (btrfs-progs) */
	if (tree_id != BTRFS_ROOT_TREE_OBJECTID && tree_id != BTRFS_CHUNK_TREE_OBJECTID) {
		format_uuid(fs->fsid, uu);
		sb_printf(out, "total bytes %" PRIu64 "\nbytes used %" PRIu64 "\nuuid %s\n", btrfs_super_total_bytes(fs->super),
			  btrfs_super_bytes_used(fs->super), uu);
	}
	return out->oom ? blab_fail(&fs->err, BLAB_ENOMEM, "dump") : 0;
}

void sb_json_string(struct strbuf *out, const char *s, size_t n)
{
	sb_printf(out, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			sb_printf(out, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			sb_printf(out, "\\u%04x", c);
		else
			sb_printf(out, "%c", c);
	}
	sb_printf(out, "\"");
}

struct json_walk {
	struct strbuf *out;
	int first, max_leaf_entries;
	u64 blocks;
};

/* One block as JSON (a walk callback, in pre-order). */
static int dump_json_cb(struct btrfs_fs_info *fs, struct extent_buffer *eb, void *arg)
{
	struct json_walk *w = arg;
	struct strbuf *out = w->out;
	int max_leaf_entries = w->max_leaf_entries;
	char kb[128], sum[512];
	struct btrfs_key k;
	u32 nr = btrfs_nritems(eb);
	int level = btrfs_level(eb);
	sb_printf(out, "%s{\"bytenr\":\"%" PRIu64 "\",\"level\":%d,\"generation\":\"%" PRIu64 "\",\"owner\":\"%" PRIu64
		       "\",\"nritems\":%u,\"free\":%u,\"items\":[",
		  w->first ? "" : ",", eb->start, level, btrfs_header_generation(eb->data), btrfs_header_owner(eb->data), nr,
		  level ? (fs->nodesize - BTRFS_HEADER_SIZE) / BTRFS_KEY_PTR_SIZE - nr : btrfs_leaf_free_space(fs, eb));
	w->first = 0;
	int lod = !level && max_leaf_entries > 0 && nr > (u32)max_leaf_entries;
	int written = 0;
	for (u32 i = 0; i < nr; i++) {
		if (lod && i != 0 && i != nr - 1)
			continue;
		if (level) {
			btrfs_node_key(eb, (int)i, &k);
		} else {
			btrfs_item_key(eb, (int)i, &k);
		}
		btrfs_format_key(&k, kb, sizeof(kb));
		sb_printf(out, "%s{\"slot\":%u,\"key\":[\"%" PRIu64 "\",%u,\"%" PRIu64 "\"],\"text\":", written++ ? "," : "", i,
			  k.objectid, k.type, k.offset);
		sb_json_string(out, kb, strlen(kb));
		if (level) {
			sb_printf(out, ",\"blockptr\":\"%" PRIu64 "\",\"gen\":\"%" PRIu64 "\"}", btrfs_node_blockptr(eb, (int)i),
				  btrfs_key_generation(btrfs_key_ptr_nr(eb, (int)i)));
		} else {
			item_summary(&k, btrfs_item_ptr(eb, (int)i), btrfs_item_size_nr(eb, (int)i), sum, sizeof(sum));
			sb_printf(out, ",\"offset\":%u,\"size\":%u,\"summary\":", btrfs_item_offset_nr(eb, (int)i),
				  btrfs_item_size_nr(eb, (int)i));
			sb_json_string(out, sum, strlen(sum));
			/* the fields as dump-tree prints them */
			struct strbuf body = {0};
			print_item_body(fs, &k, btrfs_item_ptr(eb, (int)i), btrfs_item_size_nr(eb, (int)i), &body);
			sb_printf(out, ",\"body\":");
			sb_json_string(out, body.s ? body.s : "", body.len);
			sb_free(&body);
			sb_printf(out, "}");
		}
	}
	sb_printf(out, "]}");
	return 0;
}

static int dump_block_json(struct btrfs_fs_info *fs, struct extent_buffer *root, u64 owner, struct strbuf *out,
			   int max_leaf_entries)
{
	struct json_walk w = {.out = out, .first = 1, .max_leaf_entries = max_leaf_entries};
	return btrfs_walk_tree(fs, root, owner, WALK_PRE_ORDER, dump_json_cb, &w);
}

static int count_cb(struct btrfs_fs_info *fs, struct extent_buffer *eb, void *arg)
{
	(void)fs;
	(void)eb;
	((struct json_walk *)arg)->blocks++;
	return 0;
}

/* Blocks in the tree under eb; 0 when it cannot be walked (the full dump
 * names the problem). */
static u64 count_blocks(struct btrfs_fs_info *fs, struct extent_buffer *eb, u64 owner)
{
	struct json_walk w = {0};
	if (btrfs_walk_tree(fs, eb, owner, WALK_PRE_ORDER, count_cb, &w)) {
		fs->err.code = 0;
		return 0;
	}
	return w.blocks;
}

int btrfs_dump_tree_json(struct btrfs_fs_info *fs, struct strbuf *out)
{
	return btrfs_dump_tree_json_opts(fs, out, 0, 0);
}

int btrfs_dump_tree_json_opts(struct btrfs_fs_info *fs, struct strbuf *out, u64 tree_id, int max_leaf_entries)
{
	struct btrfs_root **roots = malloc((fs->nroots + 2) * sizeof(*roots));
	if (!roots)
		return blab_fail(&fs->err, BLAB_ENOMEM, "dump-tree");
	int n = 0;
	roots[n++] = fs->tree_root;
	roots[n++] = fs->chunk_root;
	n += sorted_roots(fs, roots + n);
	sb_printf(out, "{\"nodesize\":%u,\"generation\":\"%" PRIu64 "\",\"total_bytes\":\"%" PRIu64
		       "\",\"bytes_used\":\"%" PRIu64 "\",\"trees\":[",
		  fs->nodesize, btrfs_super_generation(fs->super), btrfs_super_total_bytes(fs->super),
		  btrfs_super_bytes_used(fs->super));
	for (int i = 0; i < n; i++) {
		char on[24];
		const char *name = roots[i]->objectid == BTRFS_ROOT_TREE_OBJECTID ? "root"
				   : roots[i]->objectid == BTRFS_CHUNK_TREE_OBJECTID ? "chunk"
										 : tree_title(roots[i]->objectid);
		int full = !tree_id || tree_id == roots[i]->objectid;
		sb_printf(out, "%s{\"id\":\"%" PRIu64 "\",\"name\":\"%s\",\"owner\":\"%s\",\"level\":%d,\"block_count\":%" PRIu64
			       ",\"blocks\":[",
			  i ? "," : "", roots[i]->objectid, name, owner_name(roots[i]->objectid, on, sizeof(on)),
			  btrfs_level(roots[i]->node), full ? 0 : count_blocks(fs, roots[i]->node, roots[i]->objectid));
		if (full) {
			int ret = dump_block_json(fs, roots[i]->node, roots[i]->objectid, out, max_leaf_entries);
			if (ret) {
				free(roots);
				return ret;
			}
		}
		sb_printf(out, "]}");
	}
	free(roots);
	/* a pending log (in memory while a transaction runs, or on disk after a
	 * crash): the log root tree and the subvolume's log tree */
	struct extent_buffer *logs[2] = {NULL, NULL};
	if (btrfs_log_roots(fs, &logs[0], &logs[1])) {
		/* in memory */
	} else if (btrfs_super_log_root(fs->super)) {
		logs[0] = btrfs_read_tree_block(fs, btrfs_super_log_root(fs->super), btrfs_super_log_root_level(fs->super),
						BTRFS_TREE_LOG_OBJECTID);
		if (logs[0] && btrfs_level(logs[0]) == 0 && btrfs_nritems(logs[0]) > 0 &&
		    btrfs_item_size_nr(logs[0], 0) >= BTRFS_ROOT_ITEM_V1_SIZE) {
			const u8 *ri = btrfs_item_ptr(logs[0], 0);
			logs[1] = btrfs_read_tree_block(fs, btrfs_root_bytenr(ri), btrfs_root_level(ri), BTRFS_TREE_LOG_OBJECTID);
		}
		fs->err.code = 0; /* a log that cannot be read is left out here; replay names the problem */
	}
	static const char *const log_names[2] = {"log root", "log"};
	for (int i = 0; i < 2; i++) {
		if (!logs[i])
			continue;
		int full = !tree_id || tree_id == BTRFS_TREE_LOG_OBJECTID;
		sb_printf(out, ",{\"id\":\"%" PRIu64 "\",\"name\":\"%s\",\"owner\":\"TREE_LOG\",\"level\":%d,\"block_count\":%" PRIu64
			       ",\"blocks\":[",
			  BTRFS_TREE_LOG_OBJECTID, log_names[i], btrfs_level(logs[i]),
			  full ? 0 : count_blocks(fs, logs[i], BTRFS_TREE_LOG_OBJECTID));
		if (full) {
			int ret = dump_block_json(fs, logs[i], BTRFS_TREE_LOG_OBJECTID, out, max_leaf_entries);
			if (ret)
				return ret;
		}
		sb_printf(out, "]}");
	}
	sb_printf(out, "]}");
	return out->oom ? blab_fail(&fs->err, BLAB_ENOMEM, "dump") : 0;
}
