/* transaction.h — transactions: a generation in which blocks are changed
 * copy-on-write, ended by a commit that writes dirty blocks, then the
 * superblock and its mirrors. */
#ifndef BTRFSLAB_TRANSACTION_H
#define BTRFSLAB_TRANSACTION_H
#include "fs.h"

/* Starts a transaction (generation + 1) unless one is running. */
int btrfs_start_transaction(struct btrfs_fs_info *fs);
/* Commits the running transaction: pending chunks, delayed refs, free
 * space tree, block group items, root items, dirty blocks, superblock. */
int btrfs_commit_transaction(struct btrfs_fs_info *fs);
#endif
