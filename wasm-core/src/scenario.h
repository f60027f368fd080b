/* scenario.h — the scenario language: one command a line, run against a
 * filesystem made for it, with an errno-style error naming the line.
 *
 *   mkfs [nodesize=N] [sectorsize=4096] [size=S] [label=L] [rootdir=DIR]  (optional
 *                     first line; rootdir= copies a host directory into /, as
 *                     mkfs --rootdir, in the native CLI only)
 *   mkdir PATH        create PATH         symlink TARGET PATH
 *   write PATH OFFSET LENGTH [SEED]       (deterministic bytes from SEED)
 *   truncate PATH SIZE                    link EXISTING NEW
 *   rename OLD NEW    unlink PATH         rmdir PATH
 *   setxattr PATH NAME VALUE              commit
 *   fsync PATH        (logs PATH in the log tree; see tree-log.h)
 *   crash             (ends the script as a power cut: the image keeps the
 *                      last commit and what fsync wrote, log included)
 *   set dir_logging=index-only|legacy|5.10|5.17  (how directories are logged)
 *
 * '#' starts a comment; sizes take K/M/G; arguments may be double-quoted.
 * create and unlink take one brace range in the last component:
 * create /d/file_{1..1000}. */
#ifndef BTRFSLAB_SCENARIO_H
#define BTRFSLAB_SCENARIO_H
#include "fs.h"
#include "tree-log.h"
#include "tasks.h"
#include "rootdir.h"

struct scenario_options {
	u64 seed; /* UUIDs */
	u64 now;  /* inode times */
	int trace; /* keep the event trace */
	int count_events; /* count events by kind (for metrics) without keeping them */
	int no_final_commit; /* leave the last transaction running (a step of a player) */
	u64 max_ops;   /* operations a run may do (each name of a brace range is one); 0: SCENARIO_MAX_OPS */
	u64 max_bytes; /* bytes all `write` lines together may write; 0: SCENARIO_MAX_BYTES */
	u64 max_events; /* simulated events timed sections and sleeps may run; 0: SCENARIO_MAX_EVENTS */
	double max_cpu_s; /* seconds of CPU a run may take; 0: SCENARIO_MAX_CPU_S */
	int keep_failed; /* on an error, still return the filesystem as the error left it, with its trace (result.failure) */
	/* mkfs rootdir=DIR, a copy of a host directory (rootdir.h): the native CLI
	 * sets both functions; without them (WASM, the fuzzers) the option is
	 * refused. Relative DIRs are taken from base_dir (the script's
	 * directory; NULL: the working directory). */
	int (*rootdir_estimate)(const char *src, u32 nodesize, u64 *size, struct rootdir_stats *st, struct blab_err *err);
	int (*rootdir_copy)(struct btrfs_fs_info *fs, const char *src, struct rootdir_stats *st, struct blab_err *err);
	const char *base_dir;
};

/* Threads of one timed section, and the length of a thread's name. */
#define SCENARIO_MAX_THREADS 256
#define SCENARIO_NAME_MAX 16

/* The default limits: a script cannot make a run take more than about a
 * minute or more memory than its writes plus the trees of two million
 * inodes. */
#define SCENARIO_MAX_OPS 2000000ULL
#define SCENARIO_MAX_BYTES (1ULL << 30)
/* Simulated events (scheduler steps of timed sections and sleeps): about
 * 20 seconds of CPU at the rate this machine runs them (see SECURITY.md). */
#define SCENARIO_MAX_EVENTS 50000000ULL
/* And whatever the script, five minutes of CPU. */
#define SCENARIO_MAX_CPU_S 300.0

/* One fsync of a run. */
struct scenario_fsync {
	int line;
	double ms; /* time in the core */
	struct btrfs_log_stats st;
};

struct scenario_result {
	struct btrfs_fs_info *fs; /* committed at the end (or, after crash, the image as the crash left it); owned by the caller */
	int lines, ops, commits;
	u64 reloc_groups, reloc_extents; /* balance and relocate: block groups relocated, extents found in them */
	double reloc_ms;                 /* and the time in them (benchmarks) */
	int crashed;               /* the script ended with crash */
	struct scenario_fsync *fsyncs; /* malloc'd; free with scenario_result_free */
	int nfsyncs, capfsyncs;
	double run_ms; /* time in the core, for benchmarks */
	double mkfs_ms; /* the part of it the mkfs line took (with rootdir=, the copy) */
	struct timed_state *timed; /* what timed sections did (malloc'd; NULL when there were none) */
	struct timed_config tcfg;  /* the time settings at the end */
	struct blab_err failure;   /* keep_failed: the error that stopped the run (code 0: none); fs is
				    * then the state it left, uncommitted, to read (its trace, its
				    * trees), not to export */
};

/* Runs the script text (name is used in messages). On error returns a
 * negative code with err->msg like "NAME:LINE: create /a/b: ENOENT: ...";
 * no filesystem is returned then, unless o->keep_failed (then out->fs and
 * out->failure are set as well). */
int scenario_run(const char *text, size_t len, const char *name, const struct scenario_options *o,
		 struct scenario_result *out, struct blab_err *err);
/* A run in steps, for a player that moves through it (checkpoint.h keeps
 * copies of one). A step is a unit: one command, or one name of a brace
 * range. scenario_run is begin, every step, end. */
struct scenario_run;
/* Reads the script up to its first command and makes the filesystem (by the
 * mkfs line when that is the first). copy_text: the run keeps its own copy
 * of text; else text must outlive the run and its clones. Same errors as
 * scenario_run. */
int scenario_begin(const char *text, size_t len, const char *name, const struct scenario_options *o, int copy_text,
		   struct scenario_run **out, struct blab_err *err);
/* Runs the next unit: 1, 0 at the end of the script, or a negative code
 * (then every later step returns it, and scenario_end reports it). */
int scenario_step(struct scenario_run *r);
/* The script line of the next unit (0: the script has ended). */
int scenario_next_line(struct scenario_run *r);
/* The words of the line the next unit starts (its command first), once
 * scenario_next_line has returned it: their count, and *argv. -1 when the
 * next unit is not a line's first (the rest of a brace range: the line's
 * words were given before its first name) or the script has ended. */
int scenario_next_words(struct scenario_run *r, const char *const **argv);
/* Units run so far. */
u64 scenario_units(const struct scenario_run *r);
/* The filesystem as the run stands (owned by the run). */
struct btrfs_fs_info *scenario_fs(const struct scenario_run *r);
/* Runs what is left, makes the final commit (unless o->no_final_commit) and
 * fills out as scenario_run does, or returns the run's error. Frees r. */
int scenario_end(struct scenario_run *r, struct scenario_result *out, struct blab_err *err);
/* Frees a run that will not be ended. */
void scenario_abort(struct scenario_run *r);
/* An independent copy of a run between two units, the filesystem cloned
 * copy-on-write (btrfs_fs_clone): running the same steps on both gives the
 * same filesystem. Shares src's script text. NULL with err on ENOMEM. */
struct scenario_run *scenario_clone(const struct scenario_run *src, struct blab_err *err);
/* Frees what a result owns besides fs. */
void scenario_result_free(struct scenario_result *r);
/* Byte at file offset pos of a `write` with seed (the same in every build
 * and in the tests' models). */
u8 scenario_data_byte(u64 seed, u64 pos);
/* len bytes of it from pos into buf (a word's mix once for its 8 bytes) */
void scenario_data_fill(u64 seed, u64 pos, u8 *buf, u64 len);
/* Metrics of a finished run as JSON (caller frees). */
char *scenario_metrics_json(const struct scenario_result *r);
#endif
