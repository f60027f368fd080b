/* volumes.h — chunks: the map from logical addresses to device stripes, the
 * system chunk array in the superblock, and chunk/dev-extent allocation. */
#ifndef BTRFSLAB_VOLUMES_H
#define BTRFSLAB_VOLUMES_H
#include "fs.h"

/* The chunk map entry covering logical, or NULL. */
struct btrfs_chunk_map *btrfs_find_chunk(struct btrfs_fs_info *fs, u64 logical);
/* Adds a chunk map entry, keeping the map sorted. Refuses overlap (ECORRUPT). */
int btrfs_add_chunk_map(struct btrfs_fs_info *fs, const struct btrfs_chunk_map *map);
/* Parses one CHUNK item (size bytes at p) into map. Checks stripe count and
 * sizes; multi-device and RAID5/6 profiles give ENOTSUP. */
int btrfs_parse_chunk(struct btrfs_fs_info *fs, u64 logical, const u8 *p, u32 size,
		      struct btrfs_chunk_map *map);
/* Serialises map as a CHUNK item into out (btrfs_chunk_item_size bytes). */
void btrfs_fill_chunk_item(struct btrfs_fs_info *fs, const struct btrfs_chunk_map *map, u8 *out);
/* Reads len bytes at logical (first stripe). */
int btrfs_read_logical(struct btrfs_fs_info *fs, u64 logical, void *buf, u32 len);
/* Writes len bytes at logical to every stripe. */
int btrfs_write_logical(struct btrfs_fs_info *fs, u64 logical, const void *buf, u32 len);
/* Loads the chunk maps from the superblock's sys_chunk_array. */
int btrfs_read_sys_array(struct btrfs_fs_info *fs);
/* Reads the chunk tree into the chunk map (chunks not in sys_chunk_array). */
int btrfs_load_chunk_tree(struct btrfs_fs_info *fs);
/* Rewrites the superblock's sys_chunk_array from the SYSTEM chunk maps. */
int btrfs_write_sys_array(struct btrfs_fs_info *fs);
/* Physical space: the lowest free device range of len bytes that touches no
 * superblock copy and the first MiB. Returns 0 with *physical, or ENOSPC. */
int btrfs_find_free_dev_extent(struct btrfs_fs_info *fs, u64 len, u64 *physical);
/* Allocates a new chunk of type and length (single profile, or DUP when
 * type has BTRFS_BLOCK_GROUP_DUP): chunk map, block group, CHUNK and
 * DEV_EXTENT items when the trees exist. Returns 0 with *logical. */
int btrfs_alloc_chunk(struct btrfs_fs_info *fs, u64 type, u64 length, u64 *logical);
/* A block group or chunk type as dump-tree prints it ("DATA", "METADATA|DUP",
 * "DATA|METADATA"), unknown bits as hex; written into buf (n bytes). */
const char *btrfs_bg_type_name(u64 type, char *buf, size_t n);
#endif
