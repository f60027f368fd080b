/* dir-item.h — items that hold lists of names: DIR_ITEM and XATTR_ITEM
 * (entries keyed by name hash; names that collide share one item), DIR_INDEX
 * (one entry) and INODE_REF (one entry per link from the same directory). */
#ifndef BTRFSLAB_DIR_ITEM_H
#define BTRFSLAB_DIR_ITEM_H
#include "ctree.h"

struct dir_entry {
	struct btrfs_key location;
	u64 transid;
	u8 type;
	const char *name;
	u16 name_len;
	const u8 *data; /* xattr value */
	u16 data_len;
};

/* Size of a DIR_ITEM-format entry for e. */
u32 btrfs_dir_entry_size(const struct dir_entry *e);
/* Writes e in DIR_ITEM format into out (btrfs_dir_entry_size bytes). */
void btrfs_fill_dir_entry(u8 *out, const struct dir_entry *e);
/* Parses the entry at p (at most room bytes); returns its size or 0 if it
 * overruns. */
u32 btrfs_parse_dir_entry(const u8 *p, u32 room, struct dir_entry *e);

/* name (len bytes) as printable text: bytes outside 0x20..0x7e, and '\\',
 * as \xNN (what `ls`, `extract` and `check` print of a name from an image,
 * which may hold a terminal's escape sequences). Returns out, which must hold
 * 4 * len + 1 bytes. */
char *btrfs_name_escape(const char *name, u16 len, char *out);

/* Appends bytes as one more entry to the item at key, creating it if absent. */
int btrfs_add_name_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key,
			 const u8 *entry, u32 len);
/* Removes len bytes at offset off of the item at key (the whole item when
 * that is all of it). */
int btrfs_remove_name_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, const struct btrfs_key *key, u32 off,
			    u32 len);

/* Finds name among the DIR_ITEM/XATTR_ITEM entries at key (type 84 or 24).
 * 0 with *e (pointing into the leaf) and *off, ENOENT, or an error. */
int btrfs_lookup_dir_entry(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 dir, u8 type, const char *name,
			   u16 len, struct dir_entry *e, u32 *off);
/* Finds the INODE_REF entry (ino, parent) with name: 0 with *index and *off. */
int btrfs_lookup_inode_ref(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 ino, u64 parent, const char *name,
			   u16 len, u64 *index, u32 *off);
#endif
