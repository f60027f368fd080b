#include "free-space-tree.h"
#include "ctree.h"

int btrfs_fst_add_new_block_groups(struct btrfs_fs_info *fs)
{
	if (!fs->fst_root)
		return 0;
	for (size_t i = 0; i < fs->nbgs; i++) {
		struct btrfs_block_group *bg = &fs->bgs[i];
		if (!bg->pending)
			continue;
		u8 info[BTRFS_FREE_SPACE_INFO_SIZE];
		btrfs_set_free_space_extent_count(info, (u32)bg->nfree);
		btrfs_set_free_space_flags(info, 0);
		struct btrfs_key key = {bg->start, BTRFS_FREE_SPACE_INFO_KEY, bg->length};
		int ret = btrfs_insert_item(fs, fs->fst_root, &key, info, sizeof(info));
		if (ret)
			return ret;
		for (size_t f = 0; f < bg->nfree; f++) {
			struct btrfs_key ek = {bg->free[f].start, BTRFS_FREE_SPACE_EXTENT_KEY, bg->free[f].len};
			ret = btrfs_insert_item(fs, fs->fst_root, &ek, NULL, 0);
			if (ret)
				return ret;
		}
	}
	return 0;
}
