/* delalloc-int.h — the state delalloc.c and ordered-data.c share. */
#ifndef BTRFSLAB_DELALLOC_INT_H
#define BTRFSLAB_DELALLOC_INT_H
#include "delalloc.h"
#include "ordered-data.h"

struct btrfs_page {
	u8 *data; /* sectorsize bytes */
	u32 state; /* enum btrfs_page_state */
	u32 pad;
};

struct btrfs_range {
	u64 start, end;
};

/* What the kernel's in-memory btrfs_inode holds of a file's data. */
struct btrfs_inode_cache {
	u64 ino;
	u64 key;                   /* btrfs_ikey: what fs->data->inodes and its ordered extents know it by */
	u64 isize;                 /* i_size: what writes made it */
	struct u64map pages;       /* page index -> struct btrfs_page */
	struct btrfs_range *dirty; /* delalloc ranges, sorted, apart */
	size_t ndirty, capdirty;
	u64 dirty_bytes;
	u64 dirtied_at, dirtied_seq; /* when the oldest dirty page was dirtied */
	struct btrfs_range *mod;   /* ranges written back since the inode was last logged (the kernel's modified extents) */
	size_t nmod, capmod;
	u64 meta_rsv;              /* its metadata reservation for delalloc and ordered extents (space-info.h) */
};

struct btrfs_data_state {
	struct u64map inodes; /* ino -> struct btrfs_inode_cache * */
	struct btrfs_ordered_extent **oes; /* in flight, oldest first */
	size_t noes, capoes;
	u64 next_id, dirty_bytes, dirty_seq;
	struct btrfs_ordered_stats st;
	int fsync_wait;
};

struct btrfs_inode_cache *btrfs_inode_cache_get(const struct btrfs_fs_info *fs, u64 ino);
/* The cached page at index pg, or NULL. */
static inline const struct btrfs_page *btrfs_page_at(const struct btrfs_inode_cache *ic, u64 pg)
{
	return u64map_get(&ic->pages, pg);
}
/* Pages of [start, end) of ic in state from go to state to (0: dropped). */
void btrfs_pages_set_state(struct btrfs_fs_info *fs, struct btrfs_inode_cache *ic, u64 start, u64 end, u32 from, u32 to);
#endif
