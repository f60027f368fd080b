/* trace-events.h — every kind of event the core emits, declared once.
 *
 * TRACE_EVENTS(EV, F) lists the kinds as
 *     EV(ID, "name", "one sentence", fields)
 * where fields is a run of F(json name, type, member of struct trace_event).
 * From this one list come enum trace_kind (TRACE_<ID>), the kind names, the
 * JSON of each event (named fields only), and the schema that
 * scripts/gen-trace-types.mjs turns into web/src/model/trace-schema.gen.ts.
 *
 * Field types:
 *   U64   a 64-bit value (a JSON string: numbers lose precision past 2^53)
 *   U32   a count or small number held in a 64-bit member (a JSON number)
 *   INT   an int member (a JSON number)
 *   KEY   the key member ([objectid as a string, type, offset as a string])
 *   BOOL  0 or 1 (JSON false or true)
 *   E_<ENUM>  an index into the named table of trace.c (TRACE_ENUMS below),
 *         written as its name; an index past the table is written "#N"
 *
 * To add a kind: one EV line here, the trace_emit that makes it, and the
 * sentence beside the view that draws it (a file NAME.sentences.ts in web/src/views);
 * then `node scripts/gen-trace-types.mjs` (the web layer's schema test fails
 * until the generated file is current). */
#ifndef BTRFSLAB_TRACE_EVENTS_H
#define BTRFSLAB_TRACE_EVENTS_H

/* How a tree lock is held (the kernel's read and write locks on extent buffers). */
enum btrfs_lock_mode {
	BTRFS_LOCK_READ = 0,
	BTRFS_LOCK_WRITE = 1,
};

/* A field macro that makes nothing (for uses that need the kinds only). */
#define TRACE_NO_FIELD(name, type, member)

/* Enum tables: E(type token, "schema name"). The names are in trace.c. */
#define TRACE_ENUMS(E)                   \
	E(E_FSYNC_RESULT, "fsync_result")   \
	E(E_REPLAY_PASS, "replay_pass")     \
	E(E_REPLAY_ACTION, "replay_action") \
	E(E_LOCK_MODE, "lock_mode")         \
	E(E_WAIT_CAUSE, "wait_cause")       \
	E(E_WORK, "work")                   \
	E(E_BIO_OP, "bio_op")               \
	E(E_TASK_KIND, "task_kind")         \
	E(E_TIMED_OP, "timed_op")           \
	E(E_SPACE_KIND, "space_kind")       \
	E(E_FLUSH_STATE, "flush_state")

#define TRACE_EVENTS(EV, F)                                                                                         \
	EV(OP, "op", "A scenario command begins.", F(line, INT, slot))                                               \
	EV(TRANS_START, "trans_start", "A transaction starts.", F(generation, U64, a))                               \
	EV(CHUNK_ALLOC, "chunk_alloc", "A chunk is allocated: logical range mapped to the device.",                  \
	   F(logical, U64, bytenr) F(length, U64, a) F(type, U64, b) F(physical, U64, c))                          \
	EV(CHUNK_REMOVE, "chunk_remove", "A chunk is removed after relocation emptied its block group: its block group, CHUNK and DEV_EXTENT items go, its device space is free.", \
	   F(logical, U64, bytenr) F(length, U64, a) F(type, U64, b) F(physical, U64, c))                          \
	EV(RELOC_GROUP, "reloc_group", "Relocation of a block group begins: it is read-only, and its extent tree lists this many extents in it.", \
	   F(logical, U64, bytenr) F(length, U64, a) F(type, U64, b) F(extents, U64, c))                           \
	EV(RELOC_FOUND, "reloc_found", "Relocation of a block group has moved its extents: how many it found to move (the kernel's 'found N extents': not those a path copied for another one had moved already).", \
	   F(logical, U64, bytenr) F(extents, U64, a))                                                                \
	EV(RELOC_ROOT, "reloc_root", "A subvolume that reaches the block group gets a reloc tree: a copy of its root (owner TREE_RELOC) sharing every block below.", \
	   F(tree, U64, tree) F(root, U64, bytenr) F(level, INT, level))                                            \
	EV(RELOC_SWAP, "reloc_swap", "Merge swaps a pointer: the subvolume takes the reloc tree's new subtree, the reloc tree the old one (dropped with it).", \
	   F(tree, U64, tree) F(old, U64, bytenr) F(new, U64, a) F(level, INT, level))                              \
	EV(RELOC_EXTENT, "reloc_extent", "A tree block leaves the read-only block group: the path to it in its tree is copied, the copy elsewhere.", \
	   F(tree, U64, tree) F(from, U64, bytenr) F(to, U64, a) F(level, INT, level))                               \
	EV(BLOCK_ALLOC, "block_alloc",                                                                               \
	   "A tree block is allocated (level < 0: a data extent, generation holding its length).",                  \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(level, INT, level) F(generation, U64, a))                    \
	EV(BLOCK_FREE, "block_free", "A tree block is freed (reusable after the commit).",                          \
	   F(tree, U64, tree) F(bytenr, U64, bytenr))                                                               \
	EV(COW, "cow", "A tree block is copied before it changes (the original, of generation fromGeneration, stays on disk until the commit).", \
	   F(tree, U64, tree) F(from, U64, bytenr) F(to, U64, a) F(level, INT, level) F(generation, U64, b)       \
	   F(fromGeneration, U64, c))                                                                                \
	EV(SNAPSHOT, "snapshot", "A snapshot: a new tree whose root is a copy of the source's, so that both point at the same blocks.", \
	   F(tree, U64, tree) F(root, U64, bytenr) F(level, INT, level) F(source, U64, a) F(generation, U64, b))    \
	EV(BACKREF, "backref", "A reference to an extent is queued: added (+1) or dropped (-1), keyed by the tree that holds it or shared (by the block that points at it); level -1: a data extent, objectid and offset its file's.", \
	   F(bytenr, U64, bytenr) F(level, INT, level) F(root, U64, tree) F(parent, U64, a) F(mod, INT, slot)          \
	   F(objectid, U64, b) F(offset, U64, c))                                                                    \
	EV(FULL_BACKREF, "full_backref", "A shared block's children are from now on referenced by the block itself (its extent gets FULL_BACKREF): the tree that owned it let it go.", \
	   F(bytenr, U64, bytenr) F(level, INT, level) F(tree, U64, tree))                                          \
	EV(QGROUP_EXTENT, "qgroup_extent", "Qgroup accounting at commit: an extent whose references changed, with how many subvolume trees reached it before and after (its qgroup_root events name them).", \
	   F(bytenr, U64, bytenr) F(size, U64, a) F(before, INT, slot) F(after, INT, level))                        \
	EV(QGROUP_ROOT, "qgroup_root", "One subvolume tree that reached the extent before (after false) or after the transaction.", \
	   F(bytenr, U64, bytenr) F(root, U64, tree) F(after, BOOL, a))                                              \
	EV(QGROUP_UPDATE, "qgroup_update", "A qgroup's numbers after a commit's accounting (or a rescan, or a snapshot's inheritance).", \
	   F(qgroup, U64, tree) F(referenced, U64, a) F(exclusive, U64, b))                                         \
	EV(QGROUP_DIRTY, "qgroup_dirty", "Qgroup accounting at commit: how many extents the transaction recorded as qgroup-dirty (the kernel's btrfs_qgroup_num_dirty_extents tracepoint: unique extents, each accounted once).", \
	   F(generation, U64, a) F(extents, U64, b))                                                                \
	EV(QGROUP_TRACE_SWAP, "qgroup_trace_swap", "Qgroups trace a block relocation's merge swapped in, with the block it replaced (qgroup_swap=subtree, or deferred when the subvolume copies it before the commit).", \
	   F(old, U64, bytenr) F(new, U64, a) F(level, INT, level))                                                 \
	EV(QGROUP_TRACE_SUBTREE, "qgroup_trace_subtree", "Qgroups trace a whole subtree: the block and every block below it, down to the leaves and the data extents their file extent items point at (qgroup_swap=full at a swap, the old subtree and the new one; a drop letting go of a shared block). blocks: the tree blocks the walk recorded; extents: the file extent items it recorded a data extent for; added: the records new to the transaction (the rest were recorded already): what its next qgroup_dirty count gains by the walk.", \
	   F(bytenr, U64, bytenr) F(level, INT, level) F(blocks, U32, a) F(extents, U32, b) F(added, U32, c))      \
	EV(SUBVOL_DROP, "subvol_drop", "The cleaner has dropped a deleted subvolume's tree: what only it held is freed, what others share lost its reference.", \
	   F(tree, U64, tree))                                                                                       \
	EV(DROP_PROGRESS, "drop_progress", "The cleaner ends a batch of a dead tree's drop: the root item keeps the key it goes on from (drop_progress, at drop_level), for the next batch or for the kernel after a mount.", \
	   F(tree, U64, tree) F(level, INT, level) F(key, KEY, key) F(blocks, U64, a))                              \
	EV(SEARCH, "search", "A search descends through one block, choosing a slot.",                               \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(level, INT, level) F(slot, INT, slot) F(key, KEY, key)      \
	   F(found, BOOL, a))                                                                                        \
	EV(ITEM_INSERT, "item_insert", "An item is inserted into a leaf.",                                           \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(slot, INT, slot) F(key, KEY, key) F(size, U32, a))          \
	EV(ITEM_DELETE, "item_delete", "An item is deleted from a leaf.",                                            \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(slot, INT, slot) F(key, KEY, key))                          \
	EV(SPLIT, "split", "A full block splits: items from slot on move to a new right sibling.",                   \
	   F(tree, U64, tree) F(left, U64, bytenr) F(right, U64, a) F(level, INT, level) F(slot, INT, slot))       \
	EV(MERGE, "merge", "A block is merged into its neighbour.",                                                  \
	   F(tree, U64, tree) F(into, U64, bytenr) F(from, U64, a) F(level, INT, level))                           \
	EV(PUSH, "push", "Items move to a neighbour with room instead of a split.",                                  \
	   F(tree, U64, tree) F(to, U64, bytenr) F(from, U64, a) F(level, INT, level) F(moved, INT, slot))         \
	EV(ROOT_GROW, "root_grow", "The tree grows a level: a new root above the old one.",                         \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(level, INT, level))                                          \
	EV(ROOT_SHRINK, "root_shrink", "The tree loses a level: the only child becomes the root.",                  \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(level, INT, level))                                          \
	EV(BLOCK_WRITE, "block_write", "A tree block is written to the device.",                                     \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(physical, U64, a) F(level, INT, level)                      \
	   F(generation, U64, b))                                                                                    \
	EV(SUPER_WRITE, "super_write", "A superblock copy is written.",                                              \
	   F(physical, U64, bytenr) F(generation, U64, a) F(mirror, U32, b))                                        \
	EV(COMMIT, "commit", "A transaction commits: its generation is on disk.",                                    \
	   F(generation, U64, a) F(rootBytenr, U64, b))                                                             \
	EV(FSYNC, "fsync", "An fsync ends: logged, or why it committed the transaction instead.",                   \
	   F(tree, U64, tree) F(ino, U64, a) F(result, E_FSYNC_RESULT, b))                                          \
	EV(LOG_START, "log_start", "A subvolume's log tree starts.",                                                 \
	   F(tree, U64, tree) F(logRoot, U64, bytenr) F(logRootTree, U64, a) F(generation, U64, b))                \
	EV(LOG_INODE, "log_inode", "An inode is logged (all of it, or only so that it exists).",                    \
	   F(tree, U64, tree) F(ino, U64, a) F(existsOnly, BOOL, b))                                                \
	EV(LOG_LOCK, "log_lock", "An fs tree leaf is read-locked to copy items from it into the log.",              \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(generation, U64, a))                                         \
	EV(LOG_COPY, "log_copy", "An item is copied into a log leaf (from 0: made up, not copied).",                 \
	   F(from, U64, bytenr) F(to, U64, a) F(slot, INT, slot) F(key, KEY, key) F(size, U32, b))                 \
	EV(LOG_RANGE, "log_range", "The log is authoritative for a range of a directory's indexes.",                \
	   F(key, KEY, key) F(last, U64, a))                                                                         \
	EV(LOG_SYNC, "log_sync", "The log is written and a superblock points at it.",                               \
	   F(logRootTree, U64, bytenr) F(logRoot, U64, a) F(generation, U64, b))                                   \
	EV(REPLAY, "replay", "One step of log replay: a pass, an action and the log item it came from.",             \
	   F(tree, U64, tree) F(pass, E_REPLAY_PASS, slot) F(action, E_REPLAY_ACTION, level) F(key, KEY, key)      \
	   F(a, U64, a) F(b, U64, b) F(c, U64, c))                                                                   \
	EV(LOCK_WAIT, "lock_wait", "A task waits for a tree block lock another task holds.",                        \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(level, INT, level) F(task, INT, slot)                       \
	   F(mode, E_LOCK_MODE, a) F(holder, U32, b) F(atNs, U64, t))                                              \
	EV(LOCK_ACQUIRE, "lock_acquire", "A task takes a tree block lock, after waiting waitNs.",                   \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(level, INT, level) F(task, INT, slot)                       \
	   F(mode, E_LOCK_MODE, a) F(waitNs, U64, b) F(atNs, U64, t))                                              \
	EV(LOCK_RELEASE, "lock_release", "A task releases a tree block lock.",                                       \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(level, INT, level) F(task, INT, slot)                       \
	   F(mode, E_LOCK_MODE, a) F(atNs, U64, t))                                                                 \
	EV(TASK_SWITCH, "task_switch", "The modelled CPU switches from one task to another at time atNs.",          \
	   F(from, INT, slot) F(to, U32, a) F(atNs, U64, b))                                                        \
	EV(PAGE_DIRTY, "page_dirty", "A write copies bytes into the page cache: the pages are dirty and delalloc, no extent yet.", \
	   F(tree, U64, tree) F(ino, U64, a) F(offset, U64, b) F(length, U64, c) F(atNs, U64, t))                \
	EV(WRITE_INLINE, "write_inline", "Writeback stores a small file whole as an inline extent.",                 \
	   F(tree, U64, tree) F(ino, U64, a) F(size, U64, c) F(atNs, U64, t))                                      \
	EV(ORDERED_ADD, "ordered_add", "Writeback reserves an extent for dirty pages and makes its ordered extent; the pages go under writeback.", \
	   F(id, INT, slot) F(tree, U64, tree) F(ino, U64, a) F(offset, U64, b) F(length, U64, c)                 \
	   F(diskBytenr, U64, bytenr) F(atNs, U64, t))                                                             \
	EV(ORDERED_IO_DONE, "ordered_io_done", "An ordered extent's bio completed: its data is on the device, its pages leave writeback.", \
	   F(id, INT, slot) F(tree, U64, tree) F(ino, U64, a) F(offset, U64, b) F(length, U64, c)                 \
	   F(diskBytenr, U64, bytenr) F(atNs, U64, t))                                                             \
	EV(ORDERED_LOGGED, "ordered_logged", "A fast fsync logs an ordered extent still in flight, its checksums taken from it.", \
	   F(id, INT, slot) F(tree, U64, tree) F(ino, U64, a) F(offset, U64, b) F(length, U64, c)                 \
	   F(diskBytenr, U64, bytenr) F(atNs, U64, t))                                                             \
	EV(ORDERED_FINISH, "ordered_finish", "An ordered extent completes: its file extent item and checksums are in the trees.", \
	   F(id, INT, slot) F(tree, U64, tree) F(ino, U64, a) F(offset, U64, b) F(length, U64, c)                 \
	   F(diskBytenr, U64, bytenr) F(atNs, U64, t))                                                             \
	EV(TASK_NEW, "task_new", "A task of a timed run begins: a scenario thread or a kernel worker.",             \
	   F(task, INT, slot) F(taskKind, E_TASK_KIND, level) F(index, U32, a) F(atNs, U64, t))                       \
	EV(TASK_OP, "task_op", "A thread starts a command of its script line (or of its fio job).",                 \
	   F(task, INT, slot) F(line, U32, a) F(op, E_TIMED_OP, level) F(ino, U64, bytenr) F(offset, U64, c)     \
	   F(length, U64, b) F(atNs, U64, t))                                                                       \
	EV(TASK_OP_END, "task_op_end", "A thread's command returns after durNs.",                                    \
	   F(task, INT, slot) F(line, U32, a) F(op, E_TIMED_OP, level) F(ino, U64, bytenr) F(durNs, U64, c)      \
	   F(atNs, U64, t))                                                                                          \
	EV(TASK_CPU, "task_cpu", "A task runs on a CPU for durNs doing one kind of work.",                          \
	   F(task, INT, slot) F(work, E_WORK, level) F(durNs, U64, a) F(atNs, U64, t))                            \
	EV(TASK_WAIT, "task_wait", "A task blocks: what it waits for, and which object (lock, ordered extent, transaction).", \
	   F(task, INT, slot) F(cause, E_WAIT_CAUSE, level) F(object, U64, a) F(atNs, U64, t))                    \
	EV(TASK_WAKE, "task_wake", "A blocked task can run again, after waiting waitNs.",                           \
	   F(task, INT, slot) F(cause, E_WAIT_CAUSE, level) F(object, U64, a) F(waitNs, U64, b) F(atNs, U64, t))  \
	EV(BIO_SUBMIT, "bio_submit", "A bio is queued to the device (data, log blocks, commit blocks, flush, superblock).", \
	   F(id, U32, a) F(task, INT, slot) F(op, E_BIO_OP, level) F(logical, U64, bytenr) F(bytes, U64, b)       \
	   F(atNs, U64, t))                                                                                          \
	EV(BIO_DONE, "bio_done", "The device completes a bio, serviceNs after it started.",                         \
	   F(id, U32, a) F(op, E_BIO_OP, level) F(logical, U64, bytenr) F(bytes, U64, b) F(serviceNs, U64, c)    \
	   F(atNs, U64, t))                                                                                          \
	EV(SPACE_INFO, "space_info", "A space_info's counters now (data, metadata): bytes of its chunks, used, reserved, pinned and may_use (reservations).", \
	   F(space, E_SPACE_KIND, level) F(total, U64, a) F(used, U64, b) F(reserved, U64, bytenr) F(pinned, U64, tree)   \
	   F(mayUse, U64, c) F(atNs, U64, t))                                                                        \
	EV(RESERVE_TICKET, "reserve_ticket", "A reservation that did not fit waited on a ticket: granted after waitNs, or failed (error ENOSPC).", \
	   F(task, INT, slot) F(space, E_SPACE_KIND, level) F(bytes, U64, a) F(waitNs, U64, b) F(error, U64, c) F(atNs, U64, t)) \
	EV(TRIGGER_FLUSH, "trigger_flush", "A reservation queued a ticket and woke the reclaim worker.",             \
	   F(task, INT, slot) F(space, E_SPACE_KIND, level) F(bytes, U64, a) F(atNs, U64, t))                      \
	EV(FLUSH_SPACE, "flush_space", "The reclaim worker ran a flush state, asked to reclaim numBytes (all: 2^64-1); granted: tickets granted by it.", \
	   F(space, E_SPACE_KIND, level) F(state, E_FLUSH_STATE, slot) F(numBytes, U64, a) F(granted, U64, b) F(atNs, U64, t)) \
	EV(SHRINK_DELALLOC, "shrink_delalloc", "A pass of shrink_delalloc: its budget (pages, or inodes before the fix) and what it wrote.", \
	   F(mode, U32, level) F(budget, U64, a) F(pages, U64, b) F(inodes, U64, c) F(atNs, U64, t))                 \
	EV(DEADLOCK_EDGE, "deadlock_edge", "The run stops on a deadlock: one event for each wait of the cycle, task waiting to take the lock (mode) that holder holds.", \
	   F(tree, U64, tree) F(bytenr, U64, bytenr) F(level, INT, level) F(task, INT, slot)                       \
	   F(mode, E_LOCK_MODE, a) F(holder, U32, b) F(atNs, U64, t))

#endif
