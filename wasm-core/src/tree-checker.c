/* tree-checker.c — judges every tree block read from an image before use.
 * The rules are the kernel's tree-checker rules as the public format docs
 * state them; see tree-checker.h for what a caller may rely on. */
#include "tree-checker.h"
#include "crc32c.h"
#include "ctree.h"
#include "disk-io.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

u64 btrfs_max_generation(const struct btrfs_fs_info *fs)
{
	u64 g = btrfs_super_generation(fs->super);
	return (fs->generation > g ? fs->generation : g) + 1;
}

/* "corrupt leaf: root=R block=B slot=S, <what>" in fs->err; returns ECORRUPT. */
__attribute__((format(printf, 5, 6))) static int corrupt(struct btrfs_fs_info *fs, const struct extent_buffer *eb, u64 owner,
							 long slot, const char *fmt, ...)
{
	char what[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	const char *kind = btrfs_header_level(eb->data) ? "node" : "leaf";
	if (slot < 0)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "corrupt %s: root=%lld block=%llu, %s", kind, (long long)owner,
				 (unsigned long long)eb->start, what);
	return blab_fail(&fs->err, BLAB_ECORRUPT, "corrupt %s: root=%lld block=%llu slot=%ld, %s", kind, (long long)owner,
			 (unsigned long long)eb->start, slot, what);
}

static int key_order(struct btrfs_fs_info *fs, const struct extent_buffer *eb, u64 owner, u32 slot, const struct btrfs_key *k,
		     const struct btrfs_key *prev)
{
	return corrupt(fs, eb, owner, slot, "key out of order, have (%llu %u %llu) expect > (%llu %u %llu)",
		       (unsigned long long)k->objectid, k->type, (unsigned long long)k->offset,
		       (unsigned long long)prev->objectid, prev->type, (unsigned long long)prev->offset);
}

/* ---------------------------------------------------------------------- */
/* Items                                                                  */

struct item_ctx {
	struct btrfs_fs_info *fs;
	const struct extent_buffer *eb;
	u64 owner;
	u32 slot;
	struct btrfs_key key;
	const u8 *p;
	u32 size;
};

#define ITEM_BAD(c, ...) corrupt((c)->fs, (c)->eb, (c)->owner, (long)(c)->slot, __VA_ARGS__)

static int want_size(const struct item_ctx *c, const char *type, u32 want)
{
	if (c->size != want)
		return ITEM_BAD(c, "invalid %s item size, have %u expect %u", type, c->size, want);
	return 0;
}

static int not_future(const struct item_ctx *c, const char *what, u64 gen)
{
	u64 max = btrfs_max_generation(c->fs);
	if (gen > max)
		return ITEM_BAD(c, "invalid %s, have %llu expect <= %llu", what, (unsigned long long)gen, (unsigned long long)max);
	return 0;
}

/* DIR_ITEM, DIR_INDEX, XATTR_ITEM: a list of entries filling the item. */
static int check_dir_item(const struct item_ctx *c)
{
	int is_xattr = c->key.type == BTRFS_XATTR_ITEM_KEY;
	u32 off = 0, n = 0;
	while (off < c->size) {
		const u8 *e = c->p + off;
		if (c->size - off < BTRFS_DIR_ITEM_SIZE)
			return ITEM_BAD(c, "dir item header at %u overruns the item of %u bytes", off, c->size);
		u32 name_len = btrfs_dir_name_len(e), data_len = btrfs_dir_data_len(e);
		u8 type = btrfs_dir_type(e);
		if (name_len == 0 || name_len > BTRFS_NAME_LEN)
			return ITEM_BAD(c, "invalid dir item name_len %u, expect 1..%d", name_len, BTRFS_NAME_LEN);
		if ((u64)BTRFS_DIR_ITEM_SIZE + name_len + data_len > c->size - off)
			return ITEM_BAD(c, "dir item name_len %u + data_len %u overruns the item (%u bytes left)", name_len,
					data_len, c->size - off - BTRFS_DIR_ITEM_SIZE);
		if (is_xattr != (type == BTRFS_FT_XATTR) || type > BTRFS_FT_XATTR || type == BTRFS_FT_UNKNOWN)
			return ITEM_BAD(c, "invalid dir item type %u for key type %u", type, c->key.type);
		if (!is_xattr && data_len)
			return ITEM_BAD(c, "dir item has data_len %u, expect 0", data_len);
		if (is_xattr && data_len > c->fs->nodesize - BTRFS_HEADER_SIZE - BTRFS_ITEM_SIZE - BTRFS_DIR_ITEM_SIZE)
			return ITEM_BAD(c, "xattr value of %u bytes is larger than a leaf can hold", data_len);
		if (!is_xattr) {
			u8 lt = btrfs_disk_key_type(e);
			if (lt != BTRFS_INODE_ITEM_KEY && lt != BTRFS_ROOT_ITEM_KEY)
				return ITEM_BAD(c, "dir item location key type %u, expect INODE_ITEM or ROOT_ITEM", lt);
		}
		if (c->key.type != BTRFS_DIR_INDEX_KEY &&
		    btrfs_name_hash((const char *)e + BTRFS_DIR_ITEM_SIZE, name_len) != c->key.offset)
			return ITEM_BAD(c, "name hash mismatch with key, have 0x%016llx expect 0x%016llx",
					(unsigned long long)btrfs_name_hash((const char *)e + BTRFS_DIR_ITEM_SIZE, name_len),
					(unsigned long long)c->key.offset);
		off += BTRFS_DIR_ITEM_SIZE + name_len + data_len;
		n++;
	}
	if (n == 0)
		return ITEM_BAD(c, "empty dir item");
	if (c->key.type == BTRFS_DIR_INDEX_KEY && n != 1)
		return ITEM_BAD(c, "dir index item holds %u entries, expect 1", n);
	return 0;
}

/* INODE_REF (index, name_len, name)... and INODE_EXTREF (parent, index,
 * name_len, name)...: entries filling the item. */
static int check_inode_ref(const struct item_ctx *c)
{
	int ext = c->key.type == BTRFS_INODE_EXTREF_KEY;
	u32 head = ext ? BTRFS_INODE_EXTREF_SIZE : BTRFS_INODE_REF_SIZE, off = 0;
	if (c->size == 0)
		return ITEM_BAD(c, "empty inode %sref item", ext ? "ext" : "");
	while (off < c->size) {
		if (c->size - off < head)
			return ITEM_BAD(c, "inode %sref header at %u overruns the item of %u bytes", ext ? "ext" : "", off, c->size);
		u32 nl = ext ? btrfs_inode_extref_name_len(c->p + off) : btrfs_inode_ref_name_len(c->p + off);
		if (nl == 0 || nl > BTRFS_NAME_LEN)
			return ITEM_BAD(c, "invalid inode %sref name_len %u, expect 1..%d", ext ? "ext" : "", nl, BTRFS_NAME_LEN);
		if (nl > c->size - off - head)
			return ITEM_BAD(c, "inode %sref name_len %u overruns the item (%u bytes left)", ext ? "ext" : "", nl,
					c->size - off - head);
		off += head + nl;
	}
	return 0;
}

static int check_inode_item(const struct item_ctx *c)
{
	if (want_size(c, "inode", BTRFS_INODE_ITEM_SIZE) || not_future(c, "inode generation", btrfs_inode_generation(c->p)) ||
	    not_future(c, "inode transid", btrfs_inode_transid(c->p)))
		return BLAB_ECORRUPT;
	u32 mode = btrfs_inode_mode(c->p), fmt = mode & 0170000;
	if (fmt != 0040000 && fmt != 0100000 && fmt != 0120000 && fmt != 0020000 && fmt != 0060000 && fmt != 0010000 &&
	    fmt != 0140000)
		return ITEM_BAD(c, "invalid inode mode 0%o: unknown file type", mode);
	if (fmt == 0040000 && btrfs_inode_nlink(c->p) > 1)
		return ITEM_BAD(c, "invalid nlink: has %u expect no more than 1 for dir", btrfs_inode_nlink(c->p));
	return 0;
}

static int check_file_extent(const struct item_ctx *c)
{
	if (c->size < BTRFS_FILE_EXTENT_INLINE_DATA_START)
		return ITEM_BAD(c, "invalid file extent item size, have %u expect >= %u", c->size,
				BTRFS_FILE_EXTENT_INLINE_DATA_START);
	u8 type = btrfs_file_extent_type(c->p);
	if (type > BTRFS_FILE_EXTENT_PREALLOC)
		return ITEM_BAD(c, "invalid file extent type %u", type);
	if (btrfs_file_extent_compression(c->p) > 3)
		return ITEM_BAD(c, "invalid file extent compression %u", btrfs_file_extent_compression(c->p));
	if (btrfs_file_extent_encryption(c->p) || btrfs_file_extent_other_encoding(c->p))
		return ITEM_BAD(c, "file extent has encryption %u / other encoding %u, expect 0",
				btrfs_file_extent_encryption(c->p), btrfs_file_extent_other_encoding(c->p));
	if (not_future(c, "file extent generation", btrfs_file_extent_generation(c->p)))
		return BLAB_ECORRUPT;
	if (type == BTRFS_FILE_EXTENT_INLINE) {
		if (c->key.offset)
			return ITEM_BAD(c, "inline extent at file offset %llu, expect 0", (unsigned long long)c->key.offset);
		if (!btrfs_file_extent_compression(c->p) &&
		    c->size != BTRFS_FILE_EXTENT_INLINE_DATA_START + btrfs_file_extent_ram_bytes(c->p))
			return ITEM_BAD(c, "invalid inline extent: item size %u, ram_bytes %llu", c->size,
					(unsigned long long)btrfs_file_extent_ram_bytes(c->p));
		return 0;
	}
	if (want_size(c, "file extent", BTRFS_FILE_EXTENT_SIZE))
		return BLAB_ECORRUPT;
	u32 mask = c->fs->sectorsize - 1;
	if ((c->key.offset & mask) || (btrfs_file_extent_num_bytes(c->p) & mask) || (btrfs_file_extent_disk_bytenr(c->p) & mask) ||
	    (btrfs_file_extent_disk_num_bytes(c->p) & mask) || (btrfs_file_extent_offset(c->p) & mask))
		return ITEM_BAD(c, "file extent fields not aligned to the sector size %u", c->fs->sectorsize);
	if (!btrfs_file_extent_num_bytes(c->p))
		return ITEM_BAD(c, "file extent of 0 bytes");
	if (c->key.offset + btrfs_file_extent_num_bytes(c->p) < c->key.offset)
		return ITEM_BAD(c, "file extent end overflows");
	return 0;
}

static int check_root_item(const struct item_ctx *c)
{
	if (c->size != BTRFS_ROOT_ITEM_SIZE && c->size != BTRFS_ROOT_ITEM_V1_SIZE)
		return ITEM_BAD(c, "invalid root item size, have %u expect %u or %u", c->size, BTRFS_ROOT_ITEM_V1_SIZE,
				BTRFS_ROOT_ITEM_SIZE);
	if (btrfs_root_level(c->p) >= BTRFS_MAX_LEVEL)
		return ITEM_BAD(c, "invalid root level %u, expect < %d", btrfs_root_level(c->p), BTRFS_MAX_LEVEL);
	if (btrfs_root_bytenr(c->p) & (c->fs->sectorsize - 1))
		return ITEM_BAD(c, "invalid root bytenr %llu, not sector aligned", (unsigned long long)btrfs_root_bytenr(c->p));
	return not_future(c, "root generation", btrfs_root_generation(c->p));
}

/* ROOT_REF / ROOT_BACKREF: dirid u64, sequence u64, name_len u16, name. */
static int check_root_ref(const struct item_ctx *c)
{
	if (c->size < 18)
		return ITEM_BAD(c, "invalid root ref item size %u, expect >= 18", c->size);
	u32 nl = get_le16(c->p + 16);
	if (nl == 0 || nl > BTRFS_NAME_LEN || c->size != 18 + nl)
		return ITEM_BAD(c, "invalid root ref name_len %u for an item of %u bytes", nl, c->size);
	return 0;
}

static int check_chunk(const struct item_ctx *c)
{
	if (c->size < BTRFS_CHUNK_SIZE_BASE + BTRFS_STRIPE_SIZE)
		return ITEM_BAD(c, "invalid chunk item size %u", c->size);
	u32 ns = btrfs_chunk_num_stripes(c->p);
	if (ns == 0 || c->size != btrfs_chunk_item_size((int)ns))
		return ITEM_BAD(c, "invalid chunk item size %u for %u stripes", c->size, ns);
	if (!btrfs_chunk_length(c->p) || (btrfs_chunk_length(c->p) & (c->fs->sectorsize - 1)))
		return ITEM_BAD(c, "invalid chunk length %llu", (unsigned long long)btrfs_chunk_length(c->p));
	return 0;
}

/* EXTENT_ITEM / METADATA_ITEM: refs, generation, flags, [tree block info],
 * then inline refs that end exactly at the item's end. */
static int check_extent_item(const struct item_ctx *c)
{
	if (c->size < BTRFS_EXTENT_ITEM_SIZE)
		return ITEM_BAD(c, "invalid extent item size %u, expect >= %u", c->size, BTRFS_EXTENT_ITEM_SIZE);
	if (not_future(c, "extent generation", btrfs_extent_generation(c->p)))
		return BLAB_ECORRUPT;
	u32 off = BTRFS_EXTENT_ITEM_SIZE;
	if (c->key.type == BTRFS_EXTENT_ITEM_KEY && (btrfs_extent_flags(c->p) & BTRFS_EXTENT_FLAG_TREE_BLOCK))
		off += BTRFS_TREE_BLOCK_INFO_SIZE;
	if (off > c->size)
		return ITEM_BAD(c, "extent item of %u bytes has no room for its tree block info", c->size);
	while (off < c->size) {
		u8 t = c->p[off];
		u32 len;
		switch (t) {
		case BTRFS_TREE_BLOCK_REF_KEY:
		case BTRFS_SHARED_BLOCK_REF_KEY:
		case BTRFS_EXTENT_OWNER_REF_KEY: len = BTRFS_EXTENT_INLINE_REF_SIZE; break;
		case BTRFS_EXTENT_DATA_REF_KEY: len = 1 + BTRFS_EXTENT_DATA_REF_SIZE; break;
		case BTRFS_SHARED_DATA_REF_KEY: len = BTRFS_EXTENT_INLINE_REF_SIZE + BTRFS_SHARED_DATA_REF_SIZE; break;
		default: return ITEM_BAD(c, "invalid inline ref type %u at %u", t, off);
		}
		if (len > c->size - off)
			return ITEM_BAD(c, "inline ref of type %u at %u overruns the item of %u bytes", t, off, c->size);
		off += len;
	}
	return 0;
}

static int check_free_space_bitmap(const struct item_ctx *c)
{
	u64 bits = c->key.offset / c->fs->sectorsize;
	if (bits == 0 || bits > (u64)c->fs->nodesize * 8 || c->size != (bits + 7) / 8)
		return ITEM_BAD(c, "invalid free space bitmap item size %u for %llu bytes", c->size,
				(unsigned long long)c->key.offset);
	return 0;
}

int btrfs_check_item(struct btrfs_fs_info *fs, const struct extent_buffer *eb, u32 slot, u64 owner)
{
	struct item_ctx c = {.fs = fs, .eb = eb, .owner = owner, .slot = slot};
	btrfs_item_key(eb, (int)slot, &c.key);
	c.p = btrfs_item_ptr(eb, (int)slot);
	c.size = btrfs_item_size_nr(eb, (int)slot);
	switch (c.key.type) {
	case BTRFS_INODE_ITEM_KEY: return check_inode_item(&c);
	case BTRFS_INODE_REF_KEY:
	case BTRFS_INODE_EXTREF_KEY: return check_inode_ref(&c);
	case BTRFS_DIR_ITEM_KEY:
	case BTRFS_DIR_INDEX_KEY:
	case BTRFS_XATTR_ITEM_KEY: return check_dir_item(&c);
	case BTRFS_EXTENT_DATA_KEY: return check_file_extent(&c);
	case BTRFS_EXTENT_CSUM_KEY:
		if (c.size == 0 || c.size % 4 || c.key.objectid != BTRFS_EXTENT_CSUM_OBJECTID || (c.key.offset & (fs->sectorsize - 1)))
			return ITEM_BAD(&c, "invalid csum item: size %u (expect a multiple of 4), key (%lld %u %llu)", c.size,
					(long long)c.key.objectid, c.key.type, (unsigned long long)c.key.offset);
		return 0;
	case BTRFS_ROOT_ITEM_KEY: return check_root_item(&c);
	case BTRFS_ROOT_REF_KEY:
	case BTRFS_ROOT_BACKREF_KEY: return check_root_ref(&c);
	case BTRFS_EXTENT_ITEM_KEY:
	case BTRFS_METADATA_ITEM_KEY: return check_extent_item(&c);
	case BTRFS_TREE_BLOCK_REF_KEY:
	case BTRFS_SHARED_BLOCK_REF_KEY:
	case BTRFS_FREE_SPACE_EXTENT_KEY:
	case BTRFS_ORPHAN_ITEM_KEY: return want_size(&c, "empty", 0);
	case BTRFS_EXTENT_DATA_REF_KEY: return want_size(&c, "extent data ref", BTRFS_EXTENT_DATA_REF_SIZE);
	case BTRFS_SHARED_DATA_REF_KEY: return want_size(&c, "shared data ref", BTRFS_SHARED_DATA_REF_SIZE);
	case BTRFS_BLOCK_GROUP_ITEM_KEY: return want_size(&c, "block group", BTRFS_BLOCK_GROUP_ITEM_SIZE);
	case BTRFS_DEV_EXTENT_KEY: return want_size(&c, "dev extent", BTRFS_DEV_EXTENT_SIZE);
	case BTRFS_DEV_ITEM_KEY: return want_size(&c, "dev", BTRFS_DEV_ITEM_SIZE);
	case BTRFS_CHUNK_ITEM_KEY: return check_chunk(&c);
	case BTRFS_FREE_SPACE_INFO_KEY: return want_size(&c, "free space info", BTRFS_FREE_SPACE_INFO_SIZE);
	case BTRFS_FREE_SPACE_BITMAP_KEY: return check_free_space_bitmap(&c);
	case BTRFS_DIR_LOG_ITEM_KEY:
	case BTRFS_DIR_LOG_INDEX_KEY: return want_size(&c, "dir log", 8);
	case BTRFS_UUID_KEY_SUBVOL:
	case BTRFS_UUID_KEY_RECEIVED_SUBVOL:
		if (c.size == 0 || c.size % 8)
			return ITEM_BAD(&c, "invalid uuid item size %u, expect a multiple of 8", c.size);
		return 0;
	default: return 0; /* types the core does not read */
	}
}

/* ---------------------------------------------------------------------- */
/* Blocks                                                                 */

static int check_node(struct btrfs_fs_info *fs, const struct extent_buffer *eb, u64 owner)
{
	const u8 *d = eb->data;
	u32 nr = btrfs_header_nritems(d), max = (fs->nodesize - BTRFS_HEADER_SIZE) / BTRFS_KEY_PTR_SIZE;
	if (nr == 0 || nr > max)
		return corrupt(fs, eb, owner, -1, "invalid nritems %u, expect 1..%u", nr, max);
	struct btrfs_key prev = {0}, k;
	u64 maxgen = btrfs_max_generation(fs);
	for (u32 i = 0; i < nr; i++) {
		const u8 *kp = d + BTRFS_HEADER_SIZE + i * BTRFS_KEY_PTR_SIZE;
		btrfs_disk_key_to_cpu(&k, kp);
		if (i && btrfs_comp_keys(&prev, &k) >= 0)
			return key_order(fs, eb, owner, i, &k, &prev);
		u64 ptr = btrfs_key_blockptr(kp);
		if (!ptr || (ptr & (fs->sectorsize - 1)))
			return corrupt(fs, eb, owner, i, "invalid block pointer %llu", (unsigned long long)ptr);
		if (btrfs_key_generation(kp) > maxgen)
			return corrupt(fs, eb, owner, i, "key pointer generation %llu is newer than the filesystem's %llu",
				       (unsigned long long)btrfs_key_generation(kp), (unsigned long long)maxgen);
		prev = k;
	}
	return 0;
}

static int check_leaf(struct btrfs_fs_info *fs, const struct extent_buffer *eb, u64 owner)
{
	const u8 *d = eb->data;
	u32 nr = btrfs_header_nritems(d), space = fs->nodesize - BTRFS_HEADER_SIZE;
	if (nr > space / BTRFS_ITEM_SIZE)
		return corrupt(fs, eb, owner, -1, "invalid nritems %u", nr);
	struct btrfs_key prev = {0}, k;
	u32 prev_off = space;
	for (u32 i = 0; i < nr; i++) {
		const u8 *it = d + BTRFS_HEADER_SIZE + i * BTRFS_ITEM_SIZE;
		btrfs_disk_key_to_cpu(&k, it);
		u32 off = btrfs_item_offset(it), sz = btrfs_item_size(it);
		if (i && btrfs_comp_keys(&prev, &k) >= 0)
			return key_order(fs, eb, owner, i, &k, &prev);
		if ((u64)off + sz != prev_off)
			return corrupt(fs, eb, owner, i, "unexpected item end, have %llu expect %u", (unsigned long long)off + sz,
				       prev_off);
		if ((u64)off + sz > space || off < (i + 1) * BTRFS_ITEM_SIZE)
			return corrupt(fs, eb, owner, i, "item data [%u, %llu) overlaps the item headers or leaf end", off,
				       (unsigned long long)off + sz);
		prev = k;
		prev_off = off;
	}
	/* only once the layout is sound may the items themselves be read */
	for (u32 i = 0; i < nr; i++)
		if (btrfs_check_item(fs, eb, i, owner))
			return BLAB_ECORRUPT;
	return 0;
}

int btrfs_check_block(struct btrfs_fs_info *fs, const struct extent_buffer *eb, u64 owner)
{
	int level = btrfs_header_level(eb->data);
	if (level >= BTRFS_MAX_LEVEL)
		return corrupt(fs, eb, owner, -1, "invalid level %d, must be < %d", level, BTRFS_MAX_LEVEL);
	u64 gen = btrfs_header_generation(eb->data), maxgen = btrfs_max_generation(fs);
	if (gen > maxgen)
		return corrupt(fs, eb, owner, -1, "block generation %llu is newer than the filesystem's %llu",
			       (unsigned long long)gen, (unsigned long long)maxgen);
	return level ? check_node(fs, eb, owner) : check_leaf(fs, eb, owner);
}

struct extent_buffer *btrfs_read_node_slot(struct btrfs_fs_info *fs, const struct extent_buffer *parent, int slot,
					   u64 owner)
{
	const u8 *kp = btrfs_key_ptr_nr(parent, slot);
	struct extent_buffer *c = btrfs_read_tree_block(fs, btrfs_key_blockptr(kp), btrfs_level(parent) - 1, owner);
	u64 cowner = c ? btrfs_header_owner(c->data) : 0;
	int subvols = (owner == BTRFS_FS_TREE_OBJECTID || (owner >= BTRFS_FIRST_FREE_OBJECTID && owner <= BTRFS_LAST_FREE_OBJECTID)) &&
		      (cowner == BTRFS_FS_TREE_OBJECTID || (cowner >= BTRFS_FIRST_FREE_OBJECTID && cowner <= BTRFS_LAST_FREE_OBJECTID));
	if (c && c->dirty && owner && cowner != owner && !subvols) {
		/* another tree's new block: the free space handed out a block this
		 * tree still points at (subvolume trees share blocks: a merged reloc
		 * tree's copy keeps the subvolume that owned the original) */
		corrupt(fs, c, owner, -1, "block %llu below slot %d of node %llu belongs to tree %lld",
			(unsigned long long)c->start, slot, (unsigned long long)parent->start,
			(long long)btrfs_header_owner(c->data));
		return NULL;
	}
	if (!c || c->dirty) /* a block changed in this transaction is the core's own */
		return c;
	u64 want = btrfs_key_generation(kp);
	if (btrfs_header_generation(c->data) != want) {
		blab_fail(&fs->err, BLAB_ECORRUPT, "parent transid verify failed on logical %llu (root %lld): wanted %llu found %llu",
			  (unsigned long long)c->start, (long long)owner, (unsigned long long)want,
			  (unsigned long long)btrfs_header_generation(c->data));
		return NULL;
	}
	struct btrfs_key pk, ck;
	btrfs_disk_key_to_cpu(&pk, kp);
	if (btrfs_nritems(c) == 0) {
		corrupt(fs, c, owner, -1, "empty block below slot %d of node %llu", slot, (unsigned long long)parent->start);
		return NULL;
	}
	if (btrfs_level(c))
		btrfs_node_key(c, 0, &ck);
	else
		btrfs_item_key(c, 0, &ck);
	if (btrfs_comp_keys(&pk, &ck)) {
		blab_fail(&fs->err, BLAB_ECORRUPT,
			  "tree first key mismatch detected, bytenr=%llu parent_transid=%llu key expected=(%llu,%u,%llu) has=(%llu,%u,%llu) (root %lld, slot %d of node %llu)",
			  (unsigned long long)c->start, (unsigned long long)want, (unsigned long long)pk.objectid, pk.type,
			  (unsigned long long)pk.offset, (unsigned long long)ck.objectid, ck.type, (unsigned long long)ck.offset,
			  (long long)owner, slot, (unsigned long long)parent->start);
		return NULL;
	}
	return c;
}

/* ---------------------------------------------------------------------- */
/* Walks                                                                  */

static int seen_once(struct btrfs_fs_info *fs, struct u64map *seen, const struct extent_buffer *parent, int slot,
		     const struct extent_buffer *c, u64 owner)
{
	if (u64map_get(seen, c->start))
		return blab_fail(&fs->err, BLAB_ECORRUPT,
				 "corrupt tree %lld: block %llu is reached a second time (slot %d of node %llu): a block has one parent",
				 (long long)owner, (unsigned long long)c->start, slot, (unsigned long long)parent->start);
	if (!u64map_put(seen, c->start))
		return blab_fail(&fs->err, BLAB_ENOMEM, "tree walk");
	return 0;
}

static int walk_breadth_first(struct btrfs_fs_info *fs, struct extent_buffer *root, u64 owner, btrfs_walk_fn fn, void *arg,
			      struct u64map *seen)
{
	size_t cap = 64, head = 0, tail = 0;
	struct extent_buffer **q = malloc(cap * sizeof(*q));
	if (!q)
		return blab_fail(&fs->err, BLAB_ENOMEM, "tree walk");
	q[tail++] = root;
	int ret = 0;
	while (head < tail && !ret) {
		struct extent_buffer *eb = q[head++];
		if ((ret = fn(fs, eb, arg)))
			break;
		for (u32 i = 0; btrfs_level(eb) && i < btrfs_nritems(eb); i++) {
			struct extent_buffer *c = btrfs_read_node_slot(fs, eb, (int)i, owner);
			if (!c || seen_once(fs, seen, eb, (int)i, c, owner)) {
				ret = fs->err.code ? fs->err.code : BLAB_ECORRUPT;
				break;
			}
			if (tail == cap) {
				struct extent_buffer **nq = realloc(q, (cap *= 2) * sizeof(*q));
				if (!nq) {
					ret = blab_fail(&fs->err, BLAB_ENOMEM, "tree walk");
					break;
				}
				q = nq;
			}
			q[tail++] = c;
		}
	}
	free(q);
	return ret;
}

static int walk_depth_first(struct btrfs_fs_info *fs, struct extent_buffer *root, u64 owner, int post, btrfs_walk_fn fn,
			    void *arg, struct u64map *seen)
{
	struct extent_buffer *stack[BTRFS_MAX_LEVEL + 1];
	u32 next[BTRFS_MAX_LEVEL + 1];
	int top = 0, ret;
	stack[0] = root;
	next[0] = 0;
	if (!post && (ret = fn(fs, root, arg)))
		return ret;
	while (top >= 0) {
		struct extent_buffer *eb = stack[top];
		if (btrfs_level(eb) == 0 || next[top] >= btrfs_nritems(eb)) {
			if (post && (ret = fn(fs, eb, arg)))
				return ret;
			top--;
			continue;
		}
		int slot = (int)next[top]++;
		struct extent_buffer *c = btrfs_read_node_slot(fs, eb, slot, owner);
		if (!c || seen_once(fs, seen, eb, slot, c, owner))
			return fs->err.code ? fs->err.code : BLAB_ECORRUPT;
		if (top + 1 > BTRFS_MAX_LEVEL) /* levels strictly decrease, so this cannot be reached */
			return blab_fail(&fs->err, BLAB_ECORRUPT, "tree %lld is deeper than %d levels", (long long)owner, BTRFS_MAX_LEVEL);
		stack[++top] = c;
		next[top] = 0;
		if (!post && (ret = fn(fs, c, arg)))
			return ret;
	}
	return 0;
}

int btrfs_walk_tree(struct btrfs_fs_info *fs, struct extent_buffer *root, u64 owner, enum btrfs_walk_order order,
		    btrfs_walk_fn fn, void *arg)
{
	struct u64map seen;
	u64map_init(&seen, 1);
	int ret = order == WALK_BREADTH_FIRST ? walk_breadth_first(fs, root, owner, fn, arg, &seen)
					      : walk_depth_first(fs, root, owner, order == WALK_POST_ORDER, fn, arg, &seen);
	u64map_free(&seen);
	return ret;
}
