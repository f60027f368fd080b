#include "dir-item.h"
#include "crc32c.h"

u32 btrfs_dir_entry_size(const struct dir_entry *e) { return BTRFS_DIR_ITEM_SIZE + e->name_len + e->data_len; }

void btrfs_fill_dir_entry(u8 *out, const struct dir_entry *e)
{
	btrfs_cpu_key_to_disk(out, &e->location);
	btrfs_set_dir_transid(out, e->transid);
	btrfs_set_dir_data_len(out, e->data_len);
	btrfs_set_dir_name_len(out, e->name_len);
	btrfs_set_dir_type(out, e->type);
	memcpy(out + BTRFS_DIR_ITEM_SIZE, e->name, e->name_len);
	if (e->data_len)
		memcpy(out + BTRFS_DIR_ITEM_SIZE + e->name_len, e->data, e->data_len);
}

u32 btrfs_parse_dir_entry(const u8 *p, u32 room, struct dir_entry *e)
{
	if (room < BTRFS_DIR_ITEM_SIZE)
		return 0;
	btrfs_disk_key_to_cpu(&e->location, p);
	e->transid = btrfs_dir_transid(p);
	e->type = btrfs_dir_type(p);
	e->name_len = btrfs_dir_name_len(p);
	e->data_len = btrfs_dir_data_len(p);
	u32 size = BTRFS_DIR_ITEM_SIZE + e->name_len + e->data_len;
	if (size > room)
		return 0;
	e->name = (const char *)p + BTRFS_DIR_ITEM_SIZE;
	e->data = p + BTRFS_DIR_ITEM_SIZE + e->name_len;
	return size;
}

int btrfs_add_name_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key, const u8 *entry,
			 u32 len)
{
	struct btrfs_path path;
	int ret = btrfs_search_slot(fs, root, key, &path, (int)(len + BTRFS_ITEM_SIZE), 1);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		u32 old = btrfs_item_size_nr(path.nodes[0], path.slots[0]);
		if (old + len > fs->nodesize - BTRFS_HEADER_SIZE - BTRFS_ITEM_SIZE)
			return blab_fail(&fs->err, BLAB_EOVERFLOW, "item (%llu %u %llu) is full", (unsigned long long)key->objectid,
					 key->type, (unsigned long long)key->offset);
		btrfs_extend_item(fs, &path, len);
		memcpy(btrfs_item_ptr(path.nodes[0], path.slots[0]) + old, entry, len);
		return 0;
	}
	return btrfs_insert_item(fs, root, key, entry, len);
}

int btrfs_remove_name_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key, u32 off,
			    u32 len)
{
	struct btrfs_path path;
	int ret = btrfs_search_slot(fs, root, key, &path, -1, 1);
	if (ret < 0)
		return ret;
	if (ret > 0)
		return blab_fail(&fs->err, BLAB_ENOENT, "item (%llu %u %llu) is missing", (unsigned long long)key->objectid,
				 key->type, (unsigned long long)key->offset);
	u32 size = btrfs_item_size_nr(path.nodes[0], path.slots[0]);
	if (off + len > size)
		return blab_fail(&fs->err, BLAB_ECORRUPT, "entry past the end of item (%llu %u %llu)",
				 (unsigned long long)key->objectid, key->type, (unsigned long long)key->offset);
	if (len == size)
		return btrfs_del_items(fs, root, &path, path.slots[0], 1);
	u8 *p = btrfs_item_ptr(path.nodes[0], path.slots[0]);
	memmove(p + off, p + off + len, size - off - len);
	btrfs_truncate_item(fs, &path, size - len, 1);
	return 0;
}

int btrfs_lookup_dir_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u8 type, const char *name, u16 len,
			   struct dir_entry *e, u32 *off)
{
	struct btrfs_key key = {dir, type, btrfs_name_hash(name, len)};
	u8 *p;
	u32 size;
	int ret = btrfs_lookup_item(fs, root, &key, &p, &size, 0);
	if (ret)
		return ret;
	for (u32 o = 0; o < size;) {
		u32 n = btrfs_parse_dir_entry(p + o, size - o, e);
		if (!n)
			return blab_fail(&fs->err, BLAB_ECORRUPT, "corrupt dir item (%llu %u %llu): entry overruns the item",
					 (unsigned long long)dir, type, (unsigned long long)key.offset);
		if (e->name_len == len && !memcmp(e->name, name, len)) {
			*off = o;
			return 0;
		}
		o += n;
	}
	return BLAB_ENOENT;
}

int btrfs_lookup_inode_ref(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 parent, const char *name,
			   u16 len, u64 *index, u32 *off)
{
	struct btrfs_key key = {ino, BTRFS_INODE_REF_KEY, parent};
	u8 *p;
	u32 size;
	int ret = btrfs_lookup_item(fs, root, &key, &p, &size, 0);
	if (ret)
		return ret;
	for (u32 o = 0; o + BTRFS_INODE_REF_SIZE <= size;) {
		u16 nl = btrfs_inode_ref_name_len(p + o);
		if (o + BTRFS_INODE_REF_SIZE + nl > size)
			break;
		if (nl == len && !memcmp(p + o + BTRFS_INODE_REF_SIZE, name, len)) {
			*index = btrfs_inode_ref_index(p + o);
			*off = o;
			return 0;
		}
		o += BTRFS_INODE_REF_SIZE + nl;
	}
	return BLAB_ENOENT;
}

char *btrfs_name_escape(const char *name, u16 len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	char *o = out;
	for (u16 i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c > 0x7e || c == '\\') {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		} else {
			*o++ = (char)c;
		}
	}
	*o = 0;
	return out;
}
