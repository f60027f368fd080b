/* api.h — the WASM boundary: the one list of functions JavaScript calls.
 * Handles are small positive ints; errors are negative BLAB_E* codes with
 * the message in blab_last_error(). 64-bit values are u64 (BigInt in JS,
 * built with WASM_BIGINT). Returned strings and pages are owned by the core:
 * copy them out before the next call (memory growth moves them). */
#ifndef BTRFSLAB_API_H
#define BTRFSLAB_API_H
#include "ondisk.h"

int blab_mkfs(u64 size, u32 nodesize, const char *label, u64 seed, u64 now);
/* Opens an image from len bytes at data (copied; the caller frees data). */
int blab_open(const u8 *data, u64 len);
void blab_close(int h);
const char *blab_last_error(void);
/* Every tree as JSON, or NULL on error. */
const char *blab_dump_json(int h);
/* One tree in full (tree_id, 0 for all), the rest listed; leaves of more than
 * max_leaf_entries items (when > 0) give only their first and last. */
const char *blab_dump_json_tree(int h, u64 tree_id, int max_leaf_entries);
/* The trace as a JSON array of events, or NULL on error. */
const char *blab_trace_json(int h);
/* The trace schema (trace-events.h) as JSON: the kinds, their named fields
 * and types, and the enum tables (static storage; do not free). */
const char *blab_trace_schema_json(void);
/* The time model's cost table and device profiles (costs.h), as JSON. */
const char *blab_costs_json(void);
/* Runs a scenario script (len bytes at text) from an empty filesystem;
 * returns a handle. flags: BLAB_RUN_TRACE keeps the event trace for
 * blab_trace_json; BLAB_RUN_NO_FINAL_COMMIT leaves the last transaction
 * running (the state in memory after the last line). */
#define BLAB_RUN_TRACE 1
#define BLAB_RUN_NO_FINAL_COMMIT 2
/* BLAB_RUN_KEEP_FAILED: a run that fails still returns a handle on the
 * state the error left (its trace, its trees; not for export), and
 * blab_metrics_json says "failed":{"code","message"}; blab_last_error has
 * the error too. A deadlock's trace ends with its deadlock_edge events. */
#define BLAB_RUN_KEEP_FAILED 4
int blab_run(const char *text, u32 len, u64 seed, u64 now, int flags);
/* A run kept for stepping (checkpoint.h): runs the script to its end as
 * blab_run does (final commit included) and returns a handle showing that
 * end (trace, metrics), with checkpoints every `every` units (0: the
 * default) so that any line's state is cheap to reach. */
int blab_session(const char *text, u32 len, u64 seed, u64 now, int flags, u32 every);
/* A handle showing the state after the script's line `line` of session h
 * (0: after mkfs; past the end: the end before the final commit): the same
 * handle each time, valid until the next seek of h or h's close; read it,
 * do not change it. */
int blab_session_seek(int h, int line);
/* A crash point: a new handle holding the state after `line`, then a power
 * cut (its log, if one was synced, pending), its trace on for a replay. */
int blab_session_crash(int h, int line);
/* A new handle on a copy of handle h's image (pages shared), opened as the
 * next mount opens it (a pending log stays pending), its trace on: a replay
 * on it leaves h as it is. */
int blab_reopen(int h);
/* A crash point inside a line: a new handle holding the device right after
 * event seq of the run's trace (a block or superblock write), opened as the
 * next mount opens it, its trace on for a replay (crash.h). */
int blab_session_crash_event(int h, u64 seq);
/* The tree tree_id (0: every tree) of session h right after the run's
 * event seq (its trace's numbering), in the middle of a command, as
 * blab_dump_json_tree writes it: the state the player shows when stepping
 * event by event. NULL with blab_last_error for the final commit's events
 * or a seq past the trace. */
const char *blab_session_dump_at_event(int h, u64 seq, u64 tree_id, int max_leaf_entries);
/* The session's checkpoints as JSON: units, lines, checkpoints, every,
 * pages, blocks, bytes (their memory), run_ms, units_run (by seeks). */
const char *blab_session_stats_json(int h);
/* Replays handle h's pending log (as mount does) and commits; 0 when there
 * was none. The replay's steps are appended to the handle's trace. */
int blab_replay(int h);
/* The same, stopped after `steps` replay actions and left uncommitted (to
 * show the state at a step of the replay); steps 0 replays all. */
int blab_replay_steps(int h, u32 steps);
/* Metrics of the last blab_run of h as JSON, or NULL. */
const char *blab_metrics_json(int h);
/* The entries of directory path as JSON [{"name","ino","type","mode","size","nlink"}], or NULL. */
const char *blab_ls(int h, const char *path);
/* The contents of file path: a pointer (owned by the core until the next
 * call) with its length in *len, or NULL. */
const u8 *blab_cat(int h, const char *path, u32 *len);
/* The core's check of h: the problems as text ("" when none); *errors gets their count. */
const char *blab_check(int h, int *errors);
u64 blab_image_size(int h);
u32 blab_page_size(void);
/* The page_index-th page of the image, or NULL for a hole (all zeros). */
const u8 *blab_image_page(int h, u64 page_index);
void *blab_alloc(u32 n);
void blab_free(void *p);
#endif
