/* uuid-tree.h — the UUID tree: a subvolume's UUID (and a received one's)
 * to its root objectid, so that send/receive and `btrfs subvolume list -u`
 * find subvolumes by UUID. Key (first 8 bytes of the UUID, UUID_KEY_SUBVOL,
 * last 8 bytes), little-endian; data: the objectids (u64 each). */
#ifndef BTRFSLAB_UUID_TREE_H
#define BTRFSLAB_UUID_TREE_H
#include "fs.h"
/* Records uuid -> objectid under type (BTRFS_UUID_KEY_SUBVOL or
 * BTRFS_UUID_KEY_RECEIVED_SUBVOL); an objectid already there is kept once. */
int btrfs_uuid_tree_add(struct btrfs_fs_info *fs, const u8 uuid[BTRFS_UUID_SIZE], u8 type, u64 objectid);
/* Removes uuid -> objectid (the item too when it was the last). */
int btrfs_uuid_tree_remove(struct btrfs_fs_info *fs, const u8 uuid[BTRFS_UUID_SIZE], u8 type, u64 objectid);
#endif
