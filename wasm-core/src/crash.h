/* crash.h — every crash point of a scenario, tried.
 *
 * A power cut can come after any write the core completes, not only where a
 * script says `crash`. The core's writes are synchronous and in order: data
 * as `write` runs, tree blocks at a commit or a log sync, then the
 * superblock copies. A crash point is the moment right after one tree block
 * or one superblock copy is on the device; the image a crash there leaves is
 * the device as it is at that moment (everything written before, nothing
 * after). Crash points are counted from the end of mkfs (before it there is
 * no filesystem to mount).
 *
 * At each crash point the walk copies the device (pages shared), opens it as
 * the next mount does, replays its log, and checks every fsync promise in
 * force there: an fsync that returned before the crash point promised its
 * path (a file: its size and contents; a directory: its names), as long as
 * no later line (up to and including the one running at the crash point)
 * names that path, a path below it or a directory above it, or changes the
 * same inode through another name. An fsync of a path under a directory
 * renamed since the last commit promises nothing (the kernel may bring the
 * directory back under its old name). The core's `check` runs on each
 * replayed state too, unless the walk is told not to.
 *
 * The crash points' event seqs are the seqs of the same run's trace (a
 * session's, and `run --trace`), so the page can name them. */
#ifndef BTRFSLAB_CRASH_H
#define BTRFSLAB_CRASH_H
#include "scenario.h"
#include "trace.h"

struct strbuf;

struct crash_point {
	u64 index;            /* 0, 1, ... in the order the writes happen */
	u64 seq;              /* the block_write or super_write event */
	int line;             /* the script line running (lines + 1: the final commit) */
	enum trace_kind kind; /* TRACE_BLOCK_WRITE or TRACE_SUPER_WRITE */
	u64 tree;             /* block: its tree */
	u64 bytenr;           /* block: logical; superblock copy: physical offset */
	int level;            /* block: its level */
	u64 generation;       /* block: header generation; superblock: its generation */
	int mirror;           /* superblock: which copy */
	int promises;         /* fsync promises in force here */
};

/* One promise a crash point broke. */
struct crash_broken {
	struct crash_point at;
	int promise_line;     /* the fsync's line (0: not a promise: the image did not open or replay, or check failed) */
	char path[256];
	char what[512];       /* what is wrong, in a sentence */
};

/* A walk tries at most this many crash points unless told to try all: each
 * point opens, replays and checks the whole filesystem, so a script's walk
 * costs its points times its size (a directory of 8,000 files: 334 points,
 * 12.6 s of CPU; 128 of them 5). Past it a seeded sample is tried, and the report says how
 * many of how many. */
#define CRASH_SAMPLE_DEFAULT 128
#define CRASH_SAMPLE_TEXT "128"

struct crash_walk_options {
	int no_check;          /* skip the core's check of each replayed state */
	u64 sample;            /* try only this many crash points, chosen by seed (0: all) */
	u64 sample_seed;
	/* Called at each crash point tried, with the crash image (a device the
	 * callee may keep: it owns it) and the promises in force as a JSON
	 * array; returns 0, 1 when it found the crash point broken (err->msg
	 * says how: recorded as a broken promise, the walk goes on), or a
	 * negative error that stops the walk. NULL: none. */
	int (*on_point)(void *ctx, const struct crash_point *p, struct blab_device *image, const char *promises_json,
			struct blab_err *err);
	void *ctx;
	/* Called with each crash image before it is opened (the copy the walk
	 * checks): tests damage it to show that the walk reports what it
	 * finds. Returns 0 or an error that stops the walk. NULL: none. */
	int (*tamper)(void *ctx, const struct crash_point *p, struct blab_device *image);
};

struct crash_report {
	u64 points;            /* crash points of the run */
	u64 tried;
	u64 promises;          /* fsync promises made (some broken later by the script itself, as it may) */
	u64 blocks, supers;    /* crash points after a tree block, after a superblock copy */
	struct crash_broken *broken; /* malloc'd; free with crash_report_free */
	size_t nbroken;
	int lines;             /* lines of the script */
	double ms;
};

/* Runs the script (as scenario_run does, with its final commit) and tries
 * its crash points. 0 with the report filled (broken promises are in the
 * report, not an error), or a negative code with err: the script itself
 * failed, or out of memory, or on_point failed. */
int crash_walk(const char *text, size_t len, const char *name, const struct scenario_options *o,
	       const struct crash_walk_options *wo, struct crash_report *out, struct blab_err *err);
void crash_report_free(struct crash_report *r);
/* A sentence naming a crash point: "after writing FS_TREE leaf 30425088 (gen 9)". */
void crash_point_describe(const struct crash_point *p, struct strbuf *out);
/* The report as JSON (with each broken promise). */
void crash_report_json(const struct crash_report *r, struct strbuf *out);
#endif
