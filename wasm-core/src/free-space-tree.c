#include "free-space-tree.h"
#include "block-group.h"
#include "ctree.h"
#include <stdlib.h>

struct fst_key {
	u64 start, len;
	u8 type;
};

/* The FREE_SPACE_EXTENT/BITMAP keys now in the tree for bg. */
static int existing_items(struct btrfs_fs_info *fs, struct btrfs_block_group *bg, struct fst_key **out, size_t *n,
			  int *have_info)
{
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {bg->start, 0, 0};
	size_t cap = 16, k = 0;
	struct fst_key *v = malloc(cap * sizeof(*v));
	if (!v)
		return blab_fail(&fs->err, BLAB_ENOMEM, "free space items");
	*have_info = 0;
	int ret;
	for (ret = btrfs_cursor_first(fs, fs->fst_root, &from, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		struct btrfs_key ik = cur.key;
		if (ik.objectid >= bg->start + bg->length)
			break;
		if (ik.type == BTRFS_FREE_SPACE_INFO_KEY && ik.objectid == bg->start)
			*have_info = 1;
		else if (ik.type == BTRFS_FREE_SPACE_EXTENT_KEY || ik.type == BTRFS_FREE_SPACE_BITMAP_KEY) {
			if (k == cap) {
				struct fst_key *nv = realloc(v, (cap *= 2) * sizeof(*v));
				if (!nv) {
					free(v);
					return blab_fail(&fs->err, BLAB_ENOMEM, "free space items");
				}
				v = nv;
			}
			v[k++] = (struct fst_key){ik.objectid, ik.offset, ik.type};
		}
	}
	if (ret < 0) {
		free(v);
		return ret;
	}
	*out = v;
	*n = k;
	return 0;
}

static int update_group(struct btrfs_fs_info *fs, size_t bgi)
{
	struct btrfs_block_group *bg = &fs->bgs[bgi];
	struct free_range *want;
	size_t nwant = 0, nhave = 0;
	struct fst_key *have = NULL;
	int have_info = 0, ret;
	u64 start = bg->start, length = bg->length;
	if ((ret = btrfs_bg_free_after_commit(fs, bg, &want, &nwant)))
		return ret;
	if ((ret = existing_items(fs, bg, &have, &nhave, &have_info))) {
		free(want);
		return ret;
	}
	/* both lists are sorted by start: delete what is not wanted, insert what is missing */
	size_t i = 0, j = 0;
	while (!ret && (i < nhave || j < nwant)) {
		if (i < nhave && j < nwant && have[i].type == BTRFS_FREE_SPACE_EXTENT_KEY && have[i].start == want[j].start &&
		    have[i].len == want[j].len) {
			i++, j++;
		} else if (i < nhave && (j == nwant || have[i].start <= want[j].start)) {
			struct btrfs_key k = {have[i].start, have[i].type, have[i].len};
			ret = btrfs_delete_item(fs, fs->fst_root, &k);
			i++;
		} else {
			struct btrfs_key k = {want[j].start, BTRFS_FREE_SPACE_EXTENT_KEY, want[j].len};
			ret = btrfs_insert_item(fs, fs->fst_root, &k, NULL, 0);
			j++;
		}
	}
	free(have);
	free(want);
	if (ret)
		return ret;
	u8 info[BTRFS_FREE_SPACE_INFO_SIZE];
	btrfs_set_free_space_extent_count(info, (u32)nwant);
	btrfs_set_free_space_flags(info, 0);
	struct btrfs_key ik = {start, BTRFS_FREE_SPACE_INFO_KEY, length};
	if (!have_info)
		return btrfs_insert_item(fs, fs->fst_root, &ik, info, sizeof(info));
	u8 *p;
	u32 sz;
	ret = btrfs_lookup_item(fs, fs->fst_root, &ik, &p, &sz, 1);
	if (!ret && sz >= sizeof(info))
		memcpy(p, info, sizeof(info));
	return ret;
}

int btrfs_update_free_space_tree(struct btrfs_fs_info *fs)
{
	for (size_t i = 0; i < fs->nbgs; i++) {
		if (!fs->bgs[i].fst_dirty)
			continue;
		fs->bgs[i].fst_dirty = 0;
		if (!fs->fst_root)
			continue;
		int ret = update_group(fs, i);
		if (ret)
			return ret;
	}
	return 0;
}
