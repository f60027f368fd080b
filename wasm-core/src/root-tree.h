/* root-tree.h — subvolumes in the root tree: their ROOT_ITEMs, the
 * ROOT_REF / ROOT_BACKREF pair that names each one in its parent, and the
 * making of a snapshot (the kernel's create_pending_snapshot, run in the
 * transaction that commits it).
 *
 * A snapshot of root S is a new root whose node is a copy of S's node: both
 * point at the same children, so each child gains a reference (keyed by the
 * new root). Nothing else is copied. S's last_snapshot becomes this
 * transaction: a block of S at or below that generation may be shared, and
 * copying it later asks the extent tree how many refer to it
 * (update_ref_for_cow in ctree.c). */
#ifndef BTRFSLAB_ROOT_TREE_H
#define BTRFSLAB_ROOT_TREE_H
#include "fs.h"

/* The next free subvolume id: one above the highest in the root tree (256
 * at least), as the kernel's free objectid of the root tree. */
int btrfs_find_free_root_objectid(struct btrfs_fs_info *fs, u64 *out);

/* ROOT_REF (parent ROOT_REF child) and ROOT_BACKREF (child ROOT_BACKREF
 * parent): the directory dirid in parent, the entry's index, its name. */
int btrfs_add_root_ref(struct btrfs_fs_info *fs, u64 parent, u64 child, u64 dirid, u64 index, const char *name, u16 len);

/* 1 when parent's ROOT_REF to child names it as (dirid, name): its
 * directory entry leads into child. 0 when not: an entry copied into a
 * snapshot names a subvolume that is not the snapshot's, and is an empty
 * directory there (the kernel shows one). Or an error. */
int btrfs_root_ref_matches(struct btrfs_fs_info *fs, u64 parent, u64 child, u64 dirid, const char *name, u16 len);

/* A snapshot of src named path (a new name in subvolume dst), in the
 * running transaction; the caller commits it. readonly sets the root's
 * RDONLY flag. The new root's id in *id. */
int btrfs_create_snapshot(struct btrfs_fs_info *fs, struct btrfs_root *src, struct btrfs_root *dst, const char *path, int readonly,
			  u64 *id);
/* A new, empty subvolume named path in subvolume dst (btrfs subvolume
 * create): a tree of one leaf holding its root directory, its ROOT_ITEM,
 * ROOT_REF and ROOT_BACKREF, UUID, and the entry. The new root's id in *id. */
int btrfs_create_subvol(struct btrfs_fs_info *fs, struct btrfs_root *dst, const char *path, u64 *id);
/* btrfs subvolume delete: the subvolume named path (in parent) loses its
 * name, ROOT_REF and ROOT_BACKREF and UUID entry; its root item stays with
 * refs 0, flagged dead, and an ORPHAN item names it for the cleaner. ENOTEMPTY
 * when it holds subvolumes. Its id in *id. */
int btrfs_delete_subvol(struct btrfs_fs_info *fs, struct btrfs_root *parent, const char *path, u64 *id);
/* The cleaner (btrfs_drop_snapshot), in the running transaction: every
 * block only this tree holds is freed with the references it holds; blocks
 * other trees share lose this tree's reference (those it owns turned to
 * full backrefs first). It goes on from the root item's drop_progress, and
 * stops after budget blocks (0: no limit) at a key it saves there for the
 * next call; *done when the tree is gone, with its root and orphan items. */
int btrfs_drop_snapshot(struct btrfs_fs_info *fs, struct btrfs_root *root, u64 budget, int *done);
/* The cleaner (btrfs_clean_one_deleted_snapshot): the first deleted tree's
 * next batch (fs->drop_batch blocks, 0: all) in the running transaction,
 * committed; a tree it finishes loses its qgroup in the next transaction
 * (as the kernel cleans up a dropped subvolume's qgroup). all: until no
 * deleted tree is left, as btrfs subvolume sync waits. Commits made are
 * added to *commits when it is not NULL. */
int btrfs_clean_deleted_snapshots(struct btrfs_fs_info *fs, int all, u64 *commits);
/* A reloc tree (not in the root tree) dropped whole, in the running
 * transaction, as the kernel drops one after merging it: its blocks' shared
 * children lose its references, nothing is turned to full backrefs (they
 * have them); trace: qgroups trace the subtrees of shared blocks it lets go
 * of (the kernel did before 4.20). */
int btrfs_drop_reloc_tree(struct btrfs_fs_info *fs, struct btrfs_root *rr, int trace);
/* The deleted tree the cleaner drops next (the first deleted), or NULL. */
struct btrfs_root *btrfs_next_dead_root(struct btrfs_fs_info *fs);
/* btrfs subvolume set-default: the root tree directory's (6) "default"
 * entry, which mkfs points at (5 ROOT_ITEM -1), names subvolume id by its
 * ROOT_ITEM key as the root tree holds it ((256 ROOT_ITEM 0) for a
 * subvolume, (257 ROOT_ITEM <its generation>) for a snapshot, (5 ROOT_ITEM
 * 0) for the top level), and the superblock gains the DEFAULT_SUBVOL
 * incompat flag: the kernel's set-default ioctl, in the running transaction.
 * ENOENT when id is no live subvolume, ECORRUPT when the entry is missing. */
int btrfs_set_default_subvol(struct btrfs_fs_info *fs, u64 id);
/* The subvolume the "default" entry names (what a mount without subvol=
 * opens): 5 until set-default. 0 or an error. */
int btrfs_default_subvol(struct btrfs_fs_info *fs, u64 *id);
/* Where subvolume id is, from the top level ("d/snap"), into out: 0, or 1
 * when its chain of ROOT_BACKREFs and directory names is broken. */
int btrfs_subvol_path(struct btrfs_fs_info *fs, u64 id, char *out, size_t n);
#endif
