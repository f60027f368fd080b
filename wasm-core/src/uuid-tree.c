#include "uuid-tree.h"
#include "ctree.h"
#include "dir-item.h"

int btrfs_uuid_tree_add(struct btrfs_fs_info *fs, const u8 uuid[BTRFS_UUID_SIZE], u8 type, u64 objectid)
{
	if (!fs->uuid_root)
		return 0; /* an old filesystem without one: the kernel makes it at mount */
	struct btrfs_key key = {get_le64(uuid), type, get_le64(uuid + 8)};
	u8 *p;
	u32 sz;
	int ret = btrfs_lookup_item(fs, fs->uuid_root, &key, &p, &sz, 0);
	if (ret == 0)
		for (u32 o = 0; o + 8 <= sz; o += 8)
			if (get_le64(p + o) == objectid)
				return 0;
	if (ret && ret != BLAB_ENOENT)
		return ret;
	u8 id[8];
	put_le64(id, objectid);
	return btrfs_add_name_entry(fs, fs->uuid_root, &key, id, sizeof(id));
}

int btrfs_uuid_tree_remove(struct btrfs_fs_info *fs, const u8 uuid[BTRFS_UUID_SIZE], u8 type, u64 objectid)
{
	if (!fs->uuid_root)
		return 0;
	struct btrfs_key key = {get_le64(uuid), type, get_le64(uuid + 8)};
	u8 *p;
	u32 sz;
	int ret = btrfs_lookup_item(fs, fs->uuid_root, &key, &p, &sz, 0);
	if (ret == BLAB_ENOENT)
		return 0;
	if (ret)
		return ret;
	for (u32 o = 0; o + 8 <= sz; o += 8)
		if (get_le64(p + o) == objectid)
			return btrfs_remove_name_entry(fs, fs->uuid_root, &key, o, 8);
	return 0;
}
