/* scenario-table.c — the scenario language's commands and settings as data
 * (see scenario-table.h). Add a command or a setting here when scenario.c
 * learns it; tests/cli/docs.test.mjs fails until you do. */
#include "scenario-table.h"
#include "print-tree.h"
#include <stdio.h>
#include <string.h>

const struct scenario_doc scenario_commands[] = {
	{"mkfs", "[nodesize=N] [sectorsize=4096] [size=S] [label=L] [rootdir=DIR] [meta_chunk=S]",
	 "the filesystem the script runs on (optional, first line only); rootdir= starts / as a copy of DIR as mkfs --rootdir "
	 "(native CLI only, a relative DIR from the script's directory); meta_chunk= metadata chunks of S bytes, 256K-1G",
	 SCENARIO_FIRST},
	{"mkdir", "PATH", "create the directory PATH", SCENARIO_BOTH},
	{"create", "PATH", "create the empty file PATH; one brace range in the last component makes many (/d/f_{1..1000}; not in a thread)", SCENARIO_BOTH},
	{"symlink", "TARGET PATH", "create PATH, a symbolic link to TARGET", SCENARIO_BOTH},
	{"write", "PATH OFFSET LENGTH [SEED]", "buffered write of LENGTH deterministic bytes (from SEED, default 1) at OFFSET: dirty pages, delalloc", SCENARIO_BOTH},
	{"truncate", "PATH SIZE", "set the file's size", SCENARIO_BOTH},
	{"link", "EXISTING NEW", "a hard link NEW to EXISTING (in the same subvolume)", SCENARIO_BOTH},
	{"rename", "OLD NEW", "rename OLD to NEW (in the same subvolume), replacing NEW", SCENARIO_BOTH},
	{"unlink", "PATH", "remove a name; one brace range in the last component removes many (not in a thread)", SCENARIO_BOTH},
	{"rmdir", "PATH", "remove the empty directory PATH", SCENARIO_BOTH},
	{"setxattr", "PATH NAME VALUE", "set an extended attribute (a value of at most 65535 bytes)", SCENARIO_BOTH},
	{"clone", "SRC DST", "FICLONE (cp --reflink): DST, made when absent, shares SRC's extents", SCENARIO_SCRIPT},
	{"snapshot", "SRC DST [ro]", "btrfs subvolume snapshot [-r]: SRC a subvolume (/ the top level); committed", SCENARIO_SCRIPT},
	{"subvol", "create PATH | delete PATH [nosync] | set-default PATH | sync",
	 "btrfs subvolume create, delete (the cleaner's drop left to later commits with nosync), set-default, sync (the drops waited for)",
	 SCENARIO_SCRIPT},
	{"quota", "enable | rescan", "btrfs quota enable, btrfs quota rescan (committed)", SCENARIO_SCRIPT},
	{"qgroup", "create L/N | assign CHILD PARENT | limit SIZE|none QGROUP [excl]",
	 "btrfs qgroup create, assign, limit [-e]: writes past a limit fail with EDQUOT", SCENARIO_SCRIPT},
	{"balance", "[-d] [-m] [-s] [usage=N]", "btrfs balance start: block groups relocated and removed (-m takes system groups too)", SCENARIO_SCRIPT},
	{"relocate", "BYTENR", "relocate one block group, by its start", SCENARIO_SCRIPT},
	{"fsync", "PATH", "fsync(2): PATH logged in the log tree, or a commit where a log cannot say it", SCENARIO_BOTH},
	{"commit", "", "write everything back (as syncfs) and commit the transaction", SCENARIO_BOTH},
	{"sync", "", "the same as commit", SCENARIO_BOTH},
	{"crash", "", "end the script as a power cut: the image keeps the last commit and what fsync wrote", SCENARIO_SCRIPT},
	{"set", "NAME=VALUE", "a setting (below)", SCENARIO_SCRIPT},
	{"sleep", "DURATION", "let virtual time pass (5s, 100ms, 20us): the flusher and the transaction kthread run meanwhile", SCENARIO_BOTH},
	{"schedule", "NAME...", "the order the next section's threads start commands (lines add up)", SCENARIO_SCRIPT},
	{"thread", "NAME ... end", "a block of commands run by thread NAME; threads next to each other form a timed section "
	 "(NAME: COMMAND on one line is the same)", SCENARIO_SCRIPT},
	{"end", "", "ends a thread block", SCENARIO_SCRIPT},
	{"fio", "jobs=N size=S bs=B fsync=F rw=write|randwrite [dir=PATH]",
	 "a section of N jobs, each pwriting its own file and fsyncing every F writes, as fio does", SCENARIO_SCRIPT},
	{"bonnie", "files=N dirs=D size=S [fsyncers=K]",
	 "bonnie++ -n -b's file phases (sequential and random create and delete) in one thread; K threads fsyncing meanwhile", SCENARIO_SCRIPT},
	{"untar", "random files=N [bytes=S] [seed=N] [chunk=S] [dir=PATH]", "seed 002's untar of a seeded source-like tree, then syncfs", SCENARIO_SCRIPT},
	{NULL, NULL, NULL, 0},
};

const struct scenario_doc scenario_settings[] = {
	{"dir_logging", "index-only|legacy|5.10|5.17", "how fsync logs a directory: DIR_INDEX keys only (6.1 on) or DIR_ITEM keys too (before 5.17); 5.10 and 5.17 copy every entry of the changed leaves, as those kernels did", 0},
	{"drop_batch", "N", "the cleaner ends its transaction after N blocks of a deleted tree", 0},
	{"qgroup_swap", "full|subtree|deferred", "seed 004: how relocation's swaps are traced for qgroups (before 4.20 / 4.20 / since 5.1, this kernel)", 0},
	{"fsync_wait", "ordered|writeback", "seed 003: fast fsync waits for ordered extents (before 5.10) or writeback only (since)", 0},
	{"device", "nvme|ssd|hdd|loop", "the device profile of the time model (btrfslab costs lists them)", 0},
	{"cpus", "N", "CPUs of the simulated machine, 1 to 256", 0},
	{"sched", "seed|rr", "ties broken from the seeded stream, or first come first served", 0},
	{"seed", "N", "the seed of the run's random stream", 0},
	{"memory", "SIZE", "the machine's memory: dirty = SIZE/5, dirty_background = SIZE/10", 0},
	{"dirty", "SIZE", "dirty page limit: writers are throttled above it", 0},
	{"dirty_background", "SIZE", "dirty pages above which the flusher starts", 0},
	{"commit", "DURATION", "the transaction kthread's commit interval (30s)", 0},
	{"max_events", "N", "lowers the run's bound on simulated events; never past --max-events", 0},
	{"shrink_delalloc", "pages|inodes", "seed 002: reclaim writes back a page budget (since 5.11) or whole inodes (5.10)", 0},
	{"space_rules", "6.18|5.10", "seed 002: reservation sizes, this kernel's or the seed's", 0},
	{"delayed_background", "N", "pending delayed items that wake the delayed-items worker (128), 2 to 1000000", 0},
	{"log_copy", "prealloc|clone|direct", "seed 000: how fsync copies fs leaves (since / before; direct: before v6.1, the deadlock 796787c978ef fixed)", 0},
	{"memory_pressure", "none|moderate|heavy", "allocations stall in direct reclaim", 0},
	{"tree_locks", "tree|path", "one lock a tree (the default), or each block's, taken top-down as btrfs_search_slot does", 0},
	{"cost.KEY", "DURATION", "one row of the cost table (btrfslab costs lists the keys)", 0},
	{"device.flush", "DURATION", "a cache flush, after the writes before it", 0},
	{"device.fua", "DURATION", "extra for a forced-unit-access write (the superblock)", 0},
	{"device.latency", "DURATION", "a request's latency, after its transfer", 0},
	{"device.seek", "DURATION", "a request not where the last one ended (hdd)", 0},
	{"device.jiffy", "DURATION", "1/HZ, the scheduler tick (schedule_timeout(1) ends on the tick after next)", 0},
	{"device.idle_wake", "DURATION", "a request that finds the device idle waits this long to start (a loop device's worker woken)", 0},
	{"device.log_wake", "DURATION", "how long a fsyncer woken at the end of another's log commit waits for a CPU", 0},
	{"device.flush_tail", "DURATION", "how long a slow flush takes", 0},
	{"device.flush_tail_ppm", "N", "flushes in a million that take flush_tail instead (0 to 1000000)", 0},
	{"device.bandwidth", "BYTES", "bytes a second, shared by requests", 0},
	{"device.qd", "N", "queue depth, 1 to 4096", 0},
	{"device.jitter", "PCT", "latency and flush times vary by up to this percentage (0 to 90), from the seeded stream", 0},
	{"device.ssd", "0|1", "mounted with -o ssd: without it a log sync with several fsyncs logging waits a jiffy per batch round", 0},
	{"device.barrier", "0|1", "a flush or FUA write holds back every request after it until done", 0},
	{"device.cpu", "PCT%", "the machine's CPU time, in percent of the cost table's (1 to 1000)", 0},
	{NULL, NULL, NULL, 0},
};

/* Dotted names (device.flush, device.fua) are named once, as device.NAME. */
static const char *join_names(const struct scenario_doc *t, const char *sep, char *buf, size_t cap)
{
	if (!buf[0]) {
		size_t n = 0;
		for (const struct scenario_doc *d = t; d->name && n < cap; d++) {
			const char *dot = strchr(d->name, '.');
			int pl = dot ? (int)(dot - d->name) : 0;
			if (dot && d != t && !strncmp(d[-1].name, d->name, (size_t)pl + 1))
				continue;
			if (dot)
				n += (size_t)snprintf(buf + n, cap - n, "%s%.*s.NAME", n ? sep : "", pl, d->name);
			else
				n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? sep : "", d->name);
		}
	}
	return buf;
}

const char *scenario_command_names(void)
{
	static char buf[512];
	return join_names(scenario_commands, " ", buf, sizeof(buf));
}

const char *scenario_setting_names(void)
{
	static char buf[1024];
	return join_names(scenario_settings, ", ", buf, sizeof(buf));
}

static void doc_json(struct strbuf *b, const struct scenario_doc *t, int commands)
{
	static const char *const where[] = {"first", "script", "both"};
	for (const struct scenario_doc *d = t; d->name; d++) {
		sb_printf(b, "%s{\"name\":", d == t ? "" : ",");
		sb_json_string(b, d->name, strlen(d->name));
		sb_printf(b, ",\"args\":");
		sb_json_string(b, d->args, strlen(d->args));
		sb_printf(b, ",\"what\":");
		sb_json_string(b, d->what, strlen(d->what));
		if (commands)
			sb_printf(b, ",\"where\":\"%s\"", where[d->where]);
		sb_printf(b, "}");
	}
}

char *scenario_table_json(void)
{
	struct strbuf b = {0};
	sb_printf(&b, "{\"commands\":[");
	doc_json(&b, scenario_commands, 1);
	sb_printf(&b, "],\"settings\":[");
	doc_json(&b, scenario_settings, 0);
	sb_printf(&b, "]}");
	if (b.oom) {
		sb_free(&b);
		return NULL;
	}
	return b.s;
}
