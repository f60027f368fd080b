#include "costs.h"
#include "print-tree.h" /* struct strbuf */
#include <string.h>


/* Sources:
 *   seed 003 — "btrfs: make fast fsyncs wait only for writeback" (5.10),
 *     ../shared/seeds/003: ordered extent completion takes 100 to 200 us with
 *     no contention on the csum and fs trees; its fio table (i7-8700, NVMe).
 *   loop — this machine's loop device and kernel, measured by
 *     bench/loop-profile.mjs (dd with O_DIRECT on a loop device, and the
 *     btrfs tracepoints ordered_extent_add/remove on a filesystem on it).
 *   tree-log — the per-unit costs the fsync log model has used since lesson 2
 *     (tree-log.c's counts of inodes, searches, items, bytes, leaves, blocks).
 *   estimate — an order of magnitude for a 2020s CPU, set so that the seed's
 *     fio table is reproduced (bench/seed003.bench.mjs prints how well). */
const struct btrfs_cost btrfs_costs[COST_COUNT] = {
	[COST_SYSCALL] = {"syscall", "syscall", 1500, "call", "estimate: entry, fdget, file locks, return"},
	[COST_PAGE_COPY] = {"page_copy", "page copy", 10000, "4 KiB page", "fitted to seed 003's fio table: page cache copy with btrfs's delalloc space reservation and extent bits"},
	[COST_WRITEBACK_EXTENT] = {"writeback_extent", "writeback extent", 12000, "extent", "estimate: extent reservation, ordered extent, extent map"},
	[COST_WRITEBACK_PAGE] = {"writeback_page", "writeback page", 700, "4 KiB page", "estimate: crc32c of a page (SSE4.2) and bio building"},
	[COST_LOG_INODE] = {"log_inode", "log inode", 1600, "inode", "tree-log"},
	[COST_LOG_SEARCH] = {"log_search", "log search", 450, "descent", "tree-log"},
	[COST_LOG_ITEM] = {"log_item", "log item", 200, "item", "tree-log"},
	[COST_LOG_KIB] = {"log_kib", "log bytes", 4096, "KiB", "tree-log (0.004 us a byte)"},
	[COST_LOG_SHIFT_KIB] = {"log_shift_kib", "log shift", 256, "KiB", "tree-log (0.00025 us a byte)"},
	[COST_LOG_FS_LEAF] = {"log_fs_leaf", "log fs leaf", 500, "leaf", "tree-log"},
	[COST_LOG_CSUM_LOOKUP] = {"log_csum_lookup", "log csum lookup", 5000, "csum item",
				   "estimate from measurements here (loop profile, 25%): a read-locked search's leaf 340-570 ns and its "
				   "node steps (docs/seed000-locks.md), about 1 us a csum tree search (5 us here); before 5.10 an fsync looks each "
				   "logged extent's checksums up this way (since, in-flight ones come from their ordered extents)"},
	[COST_LOG_BLOCK] = {"log_block", "log block", 6000, "block", "tree-log"},
	[COST_FINISH_FS] = {"finish_fs", "finish: fs tree", 5000, "ordered extent",
			 "measured here (loop profile, 25%): a completion holds the fs leaf 0.6-3.6 us, 4 KiB or 64 KiB alike "
			 "(node tests/kernel/seed003-locks.mjs rand|seq 1 32, p50s); 5 us. Seed 003: a completion takes 100-200 us "
			 "alone (here: 64 KiB 5 + 16 x 12 + 3 + 89 = 289 us, 4 KiB 109 us)"},
	[COST_FINISH_FS_PAGE] = {"finish_fs_page", "finish: fs tree, per page", 12000, "4 KiB page",
			      "fitted to seed 003's fio tables (bench/seed003.bench.mjs, sequential 64 KiB and random 4 KiB): "
			      "with tree_locks=tree, the contention that makes a 64 KiB completion slower as jobs are added; the "
			      "kernel here shows no per-page part in the fs leaf's hold, and 0.2-0.45 us a page outside the locks "
			      "(loop; node tests/kernel/seed003-locks.mjs rand|seq 1 32)"},
	[COST_FINISH_CSUM] = {"finish_csum", "finish: csum tree", 3000, "ordered extent",
			       "measured here (loop profile, 25%): a completion holds the csum leaf 0.5-1.1 us, 4 KiB or 64 KiB "
			       "alike (node tests/kernel/seed003-locks.mjs rand|seq 1 32, p50s); 3 us"},
	[COST_FINISH_REST] = {"finish_rest", "finish: rest", 89000, "ordered extent",
			       "fitted to seed 003's fio table (bench/seed003.bench.mjs): a completion's time outside the tree locks "
			       "(the kernel here: most of a completion's 6-9 us, 4 KiB, is outside them); with finish_fs, _fs_page and _csum a 4 KiB "
			       "completion takes what it took before they were measured (109 us), so tree_locks=path runs keep their timing"},
	[COST_META_OP] = {"meta_op", "namespace op", 15000, "operation", "estimate: a few B-tree inserts under the fs tree's lock"},
	[COST_COMMIT] = {"commit", "commit", 300000, "commit", "estimate: delayed refs, root items, free space tree"},
	[COST_INODE_UPDATE] = {"inode_update", "inode update", 20000, "write", "fitted to seed 003's fio table (bench/seed003.bench.mjs): btrfs_update_inode of a dirtied inode, into its delayed node (under the node's mutex, no tree lock)"},
	[COST_WAKEUP] = {"wakeup", "wakeup", 38000, "wakeup", "fitted to seed 003's fio table (bench/seed003.bench.mjs): scheduler latency of a woken task"},
	[COST_LOG_TREE] = {"log_tree", "log tree lock", 165000, "fsync",
			   "fitted to seed 003's fio table (bench/seed003.bench.mjs): the log tree's write lock an fsync holds, "
			   "logging its inode and one extent (log_extent for each extent more)"},
	[COST_EB_ALLOC] = {"eb_alloc", "extent buffer allocation", 2000, "allocation",
			   "estimate: struct extent_buffer from its slab and 4 pages (16 KiB) from the page allocator, no reclaim"},
	[COST_RECLAIM_MODERATE] = {"reclaim_moderate", "direct reclaim (moderate)", 1000000, "stall, 1 allocation in 20",
				   "estimate: an allocation that enters direct reclaim waits for LRU scanning and writeback of a few "
				   "pages, about a millisecond; seed 000 only says 'may be slow in case we are under memory pressure'"},
	[COST_RECLAIM_HEAVY] = {"reclaim_heavy", "direct reclaim (heavy)", 5000000, "stall, 1 allocation in 4",
				"estimate: with the dataset twice the memory (seed 000's bonnie++ run), reclaim stalls of several "
				"milliseconds; each is drawn between half and twice this from the seeded stream"},
	[COST_COMMIT_BLOCK] = {"commit_block", "commit block", 3000, "block", "estimate: checksum and submit one tree block"},
	[COST_DELAYED_ITEM] = {"delayed_item", "delayed item", 200, "item",
			       "estimate: one item of a batch inserted into a leaf already found, as a log item costs (tree-log); "
			       "a delayed inode item update costs inode_update"},
	[COST_LOCK_ACQUIRE] = {"lock_acquire", "tree lock acquisition", 340, "lock",
			       "measured here (loop profile, 25%): btrfs_tree_lock and btrfs_tree_read_lock's diff_ns, p50 80-90 ns "
			       "for the fs and log trees under seed 000's fsync/create workload (tests/kernel/seed000-measure.mjs), "
			       "almost all uncontended: the rwsem and the tracepoint's clock reads; the median of a spread "
			       "measured the same way (one process: p90 1.6-3x, p99 7-11x, p99.9 37-40x the median), which "
			       "locking.c draws each acquisition from"},
	[COST_SEARCH_LEVEL] = {"search_level", "search: a node", 1600, "node",
			       "measured here (loop profile, 25%): a search's hold of the fs tree's root (level 1) until its "
			       "leaf is locked, medians 400-960 ns read-locked and 420-750 ns write-locked, for creates, "
			       "setxattrs, fsyncs and ordered extent completion (docs/seed000-locks.md); 400 ns, the child's "
			       "lock_acquire besides"},
	[COST_LEAF_READ] = {"leaf_read", "search: leaf, read-locked", 1600, "search",
			    "measured here (loop profile, 25%): read-locked fs leaf holds, medians 340-570 ns "
			    "(docs/seed000-locks.md); 400 ns. With tree_locks=path the rest of an operation's time is spent "
			    "unlocked"},
	[COST_LEAF_WRITE] = {"leaf_write", "search: leaf, write-locked", 2800, "search",
			     "measured here (loop profile, 25%): write-locked fs and csum leaf holds, medians 330 ns "
			     "(a completion's inode item) to 1,280 ns (a create's inode item and ref) (docs/seed000-locks.md); "
			     "700 ns. With tree_locks=path the rest of an operation's time is spent unlocked"},
	[COST_LOCK_PROBE] = {"lock_probe", "search: root probe", 320, "write-locked search",
			     "measured here (loop profile, 25%): the read lock btrfs_search_slot takes on the root to read its "
			     "level before write-locking it, held p50 87 ns on the fs tree and 80 ns on the log tree, p90 "
			     "180-200 ns (one fsyncer, tests/kernel/seed000-measure.mjs 1 0 300, the read lock/unlock pairs right "
			     "before a write lock of the same block); 80 ns"},
	[COST_COW] = {"cow", "tree block COW or split", 22000, "block",
		      "measured here (loop profile, 25%): an fsync's COW of the log tree's written root and leaf: old block "
		      "write-locked, its new copy locked 1.5-2.9 us later, the old one let go 3-4 us after that, 5.4-5.9 us in "
		      "all (one fsyncer, tests/kernel/seed000-measure.mjs 1 0 300); a leaf split (a new block allocated and half "
		      "the items moved into it) taken as the same; 5.5 us"},
	[COST_WRITEBACK_LOCK] = {"writeback_lock", "tree block writeback lock", 680, "block",
				 "measured here (loop profile, 25%): a log sync write-locks each log block it writes out, held "
				 "0.15-0.17 us (one fsyncer, tests/kernel/seed000-measure.mjs 1 0 300); 170 ns"},
	[COST_LOG_EXTENT] = {"log_extent", "log extent", 80000, "extent past 1st",
			      "measured here (loop profile, 25%): an fsync's logging, from its first log tree COW to its first log "
			      "block write, p50 19-33 us for one 64 KiB extent and 200-334 us for 16 random 4 KiB ones: 12-20 us for "
			      "each extent past the first, more as the log grows (16 MiB files: 16 us on a quiet machine, 20 on a "
			      "busy one; 4 MiB: 12-13 us), less where extents share log leaves (4 extents 136-163 us, 64 510-640 us; "
			      "node tests/kernel/seed003-phases.mjs seq 1, rand 16, rand 4, rand 64); 20 us"},
	[COST_LEAF_SHIFT_KIB] = {"leaf_shift_kib", "leaf shift", 1100, "KiB",
				 "measured here (loop profile, 25%): a create inserts its name (DIR_ITEM) at its hash's place in "
				 "the directory's leaf and holds that leaf 0.8, 1.3, 2.1, 3.0 and 3.7 us (p10, p25, p50, p75, p90; one "
				 "creator, 2,000 files, 16 KiB nodes, seed 000's tree-lock tracepoints beside the syscalls), where its "
				 "inode's items, appended at the tree's end, hold theirs 0.45 us; what the model's inserts move aside "
				 "for the same creates (the item headers after the slot and their data) gives those holds at 275 ns "
				 "a KiB (docs/seed000-locks.md); 1,100 ns"},
	[COST_LEAF_CLONE] = {"leaf_clone", "log leaf clone", 10000, "leaf",
			     "measured here (loop profile, 25%): an fsync holds an fs leaf it copies items from 2.7-2.9 us (p50) "
			     "when another task held it last, 0.2-0.3 us when it searches it again itself (2 fsyncers, 2 "
			     "creators; 1.1 such holds an fsync; docs/seed000-locks.md): the whole leaf copied into the clone or "
			     "the preallocated buffer (copy_extent_buffer_full), its lines in the other CPU's cache; 2.5 us"},
	[COST_RECLAIM_WAKE] = {"reclaim_wake", "reclaim worker wake", 80000, "ticket",
			       "measured here (loop profile, 25%): a create's ticket (btrfs_trigger_flush) to the async reclaim "
			       "worker's wakeup, p50 20.5 us (p10 1.8, p90 22.6; 297 tickets, 2 fsyncers and 2 creators, "
			       "sched_wakeup beside btrfs_trigger_flush), the wakeup row's latency after it; the ticket granted "
			       "and its task running 60 us (p50) after the trigger; 20 us"},
};

const struct btrfs_device_profile btrfs_device_profiles[] = {
	{"nvme", 12, 64, 25000, 2000000000ULL, 621000, 317000, 0, 1, 4000000, 26, 1, 100, 0, 0, 0, 0,
	 "seed 003's machine: i7-8700 (12 threads), NVMe, mounted -o ssd; flush, FUA and jitter fitted to its fio table"},
	{"ssd", 4, 32, 60000, 500000000ULL, 2000000, 100000, 0, 1, 4000000, 30, 1, 100, 0, 0, 0, 0, "estimate: a SATA SSD"},
	{"hdd", 4, 4, 100000, 150000000ULL, 10000000, 4000000, 8000000, 0, 4000000, 30, 1, 100, 0, 0, 0, 0, "estimate: a 7200 rpm disk"},
	{"loop", 2, 128, 5000, 1100000000ULL, 300000, 150000, 0, 0, 4000000, 30, 1, 25, 30000, 55000, 3300, 1700000,
	 "loop: this machine (2 CPUs, HZ=250), a buffered loop device over a file on ext4, rotational (no -o ssd), "
	 "measured by bench/loop-profile.mjs: a 64 KiB direct write 50-65 us at QD1 (1.1 GB/s; 1-4 MiB writes reach 1.8-2.1 GB/s), "
	 "a flush after a write to new space 330 us, a FUA overwrite (write and flush) 140 us; "
	 "CPU 25% of the table's: a 64 KiB buffered pwrite takes 60 us here (33% of the table's), "
	 "an ordered extent's completion 15-25 us (6-10%); "
	 "its one worker thread, asleep when idle: a 4 KiB data write that finds it idle completes 38-64 us after it is "
	 "issued, where a log block queued behind others is served in 6-7 us (block_rq_issue/complete and the worker's "
	 "sched_switch, two fsyncers, docs/seed000-locks.md): 30 us to wake it; "
	 "an fsync woken at the end of another's log commit waits for a CPU (it is put on the committer's CPU in 57-78% of "
	 "commits, and the committer goes on running): sched_waking to sched_switch 22-33, 49-68 and 76-136 us (p10, p50, "
	 "p90, nine runs; 2 fsyncers and 2 creators, the scheduler alone traced, tests/kernel/seed000-measure.mjs measureKernelWakes, "
	 "printed by bench/seed000.bench.mjs beside the model's), the wakeup row's latency on top: 55 us; "
	 "a flush now and then slow (the backing file's fsync on ext4): of 7,944 flushes in four runs of that workload "
	 "(block_rq_issue to block_rq_complete, the same script), 26 over 4x the median (p50 256-284 us), taking 1.72 ms "
	 "on average; each one holds up both fsyncers' commits, and makes the kernel's fsync p99 (1.8 ms in the run with "
	 "one, 5.1-8.0 with 3-18): 3,300 in a million take 1.7 ms"},
	{NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
};

int btrfs_cost_by_key(const char *key)
{
	for (int i = 0; i < COST_COUNT; i++)
		if (!strcmp(btrfs_costs[i].key, key))
			return i;
	return -1;
}

const struct btrfs_device_profile *btrfs_device_profile(const char *name)
{
	for (const struct btrfs_device_profile *p = btrfs_device_profiles; p->name; p++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

char *btrfs_costs_json(void)
{
	struct strbuf b = {0};
	sb_printf(&b, "{\"costs\":[");
	for (int i = 0; i < COST_COUNT; i++) {
		const struct btrfs_cost *c = &btrfs_costs[i];
		sb_printf(&b, "%s{\"key\":\"%s\",\"name\":", i ? "," : "", c->key);
		sb_json_string(&b, c->name, strlen(c->name));
		sb_printf(&b, ",\"ns\":%llu,\"unit\":", (unsigned long long)c->ns);
		sb_json_string(&b, c->unit, strlen(c->unit));
		sb_printf(&b, ",\"source\":");
		sb_json_string(&b, c->source, strlen(c->source));
		sb_printf(&b, "}");
	}
	sb_printf(&b, "],\"devices\":[");
	for (const struct btrfs_device_profile *p = btrfs_device_profiles; p->name; p++) {
		sb_printf(&b,
			  "%s{\"name\":\"%s\",\"cpus\":%d,\"queueDepth\":%d,\"writeLatencyNs\":%llu,\"bandwidth\":%llu,"
			  "\"flushNs\":%llu,\"fuaNs\":%llu,\"seekNs\":%llu,\"ssd\":%s,\"jiffyNs\":%llu,\"jitterPct\":%u,\"flushBarrier\":%s,\"cpuPct\":%u,\"idleWakeNs\":%llu,\"logWakeNs\":%llu,\"flushTailPpm\":%u,\"flushTailNs\":%llu,\"source\":",
			  p == btrfs_device_profiles ? "" : ",", p->name, p->cpus, p->queue_depth,
			  (unsigned long long)p->write_latency_ns, (unsigned long long)p->bandwidth, (unsigned long long)p->flush_ns,
			  (unsigned long long)p->fua_ns, (unsigned long long)p->seek_ns, p->ssd ? "true" : "false",
			  (unsigned long long)p->jiffy_ns, p->jitter_pct, p->flush_barrier ? "true" : "false", p->cpu_pct,
			  (unsigned long long)p->idle_wake_ns, (unsigned long long)p->log_wake_ns, p->flush_tail_ppm,
			  (unsigned long long)p->flush_tail_ns);
		sb_json_string(&b, p->source, strlen(p->source));
		sb_printf(&b, "}");
	}
	sb_printf(&b, "]}");
	if (b.oom) {
		sb_free(&b);
		return NULL;
	}
	return b.s;
}
