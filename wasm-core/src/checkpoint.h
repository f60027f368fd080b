/* checkpoint.h — stepping through a scenario by checkpoint, not by running
 * it again from the start.
 *
 * A session runs a script once, to its end (with its trace, for the player),
 * and keeps on the way a copy of the run every `every` units: a checkpoint
 * (scenario_clone: the filesystem is cloned copy-on-write, so a checkpoint
 * costs the pages and blocks changed since the one before, not a whole
 * image). The state after any line is then a checkpoint at or before it,
 * copied, plus at most `every` units of work. A crash point is a checkpoint
 * plus the power cut that `crash` does; a replay starts from a copy of it.
 *
 * Seeking forward from the last seek continues that run instead of copying
 * a checkpoint, when no checkpoint is nearer. */
#ifndef BTRFSLAB_CHECKPOINT_H
#define BTRFSLAB_CHECKPOINT_H
#include "scenario.h"

struct strbuf;

#define CHECKPOINT_EVERY 256 /* units between checkpoints, at first */
/* What checkpoints may hold: past it, every other one is dropped and the
 * spacing doubles (so a seek's work stays bounded by the spacing, and the
 * memory by about this). */
#define CHECKPOINT_BUDGET (128ULL << 20)

struct scenario_session;

struct session_stats {
	u64 units;        /* units of the whole run */
	u64 command_events; /* events of the run's commands (the final commit's follow) */
	int lines;        /* lines of the script */
	u64 checkpoints;
	u64 every;        /* units between checkpoints now (doubled when thinned out) */
	u64 pages;        /* device pages the checkpoints hold, each counted once */
	u64 blocks;       /* tree blocks (changed since a commit) they hold, each once */
	u64 bytes;        /* what those pages, blocks and page tables cost */
	double run_ms;    /* the first run, checkpoints included */
};

/* Runs text to its end as scenario_run does (o->no_final_commit is ignored:
 * the run ends with its final commit), keeping checkpoints. every 0 means
 * CHECKPOINT_EVERY. The session keeps its own copy of text. Same errors as
 * scenario_run; NULL session then. */
int scenario_session_new(const char *text, size_t len, const char *name, const struct scenario_options *o, u64 every,
			 struct scenario_session **out, struct blab_err *err);
void scenario_session_free(struct scenario_session *s);
/* The run's result at its end (fs with the whole trace), owned by the session. */
struct scenario_result *scenario_session_result(struct scenario_session *s);
/* The filesystem as it is after the script's line `line` (0: after mkfs,
 * before the first command; past the last line: the end, without the final
 * commit), as a run of the script up to that line with no final commit
 * leaves it. The session owns it: it is valid until the next seek and must
 * not be changed (it is where the next seek may continue from). 0, or a
 * negative code with err. */
int scenario_session_seek(struct scenario_session *s, int line, struct btrfs_fs_info **fs, struct blab_err *err);
/* The same state, as a filesystem of the caller's own (to replay or change). */
int scenario_session_copy(struct scenario_session *s, int line, struct btrfs_fs_info **fs, struct blab_err *err);
/* A crash point: the state after line, then a power cut: a copy of its
 * device (pages shared) opened as the next mount opens it, a filesystem of
 * the caller's own with its trace on and empty (for the replay). */
int scenario_session_crash(struct scenario_session *s, int line, struct btrfs_fs_info **fs, struct blab_err *err);
/* A crash point inside a line: the device right after event seq of the
 * run's trace (a block_write or super_write: see crash.h) was emitted,
 * opened as the next mount opens it, as scenario_session_crash gives it.
 * seq may lie in the final commit. 0, or a negative code with err. */
int scenario_session_crash_at_event(struct scenario_session *s, u64 seq, struct btrfs_fs_info **fs, struct blab_err *err);
/* The tree tree_id (0: every tree) as dump-json writes it (leaves cut to
 * max_leaf_entries, 0: whole), right after event seq of the run's trace was
 * emitted: in the middle of a command, between a split and the insert it
 * made room for, or after a COW and before the item lands. The run from the
 * checkpoint before the event, its events counted, stops there (the rest of
 * that unit runs, and the copy is dropped). Events of the final commit are
 * not in a command: an error, as is a seq past the trace. Appends to out. */
int scenario_session_dump_at_event(struct scenario_session *s, u64 seq, u64 tree_id, int max_leaf_entries,
				   struct strbuf *out, struct blab_err *err);
/* Units done by the seeks so far (for the bench: a seek's cost). */
u64 scenario_session_units_run(const struct scenario_session *s);
void scenario_session_stats(const struct scenario_session *s, struct session_stats *st);
#endif
