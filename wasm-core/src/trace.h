/* trace.h — the core's typed event stream. Every step a lesson animates is
 * one event; the UI groups events into steps and replays them. Events are
 * kept in memory and serialised as JSON lines (64-bit values as strings). */
#ifndef BTRFSLAB_TRACE_H
#define BTRFSLAB_TRACE_H
#include "ondisk.h"
#include <stddef.h>

enum trace_kind {
	TRACE_OP,            /* a scenario command begins: slot: its line number */
	TRACE_TRANS_START,   /* a: generation */
	TRACE_CHUNK_ALLOC,   /* bytenr: logical start, a: length, b: type flags, c: physical */
	TRACE_BLOCK_ALLOC,   /* tree, bytenr, level, a: generation */
	TRACE_BLOCK_FREE,    /* tree, bytenr */
	TRACE_COW,           /* tree, bytenr: old, a: new, level, b: generation */
	TRACE_SEARCH,        /* tree, bytenr, level, slot, key, a: found (1) or not (0) */
	TRACE_ITEM_INSERT,   /* tree, bytenr, slot, key, a: item size */
	TRACE_ITEM_DELETE,   /* tree, bytenr, slot, key */
	TRACE_SPLIT,         /* tree, bytenr: left, a: right, level, slot: split point */
	TRACE_MERGE,         /* tree, bytenr: into, a: from, level */
	TRACE_PUSH,          /* tree, bytenr: to (a neighbour), a: from, level, slot: items moved */
	TRACE_ROOT_GROW,     /* tree, bytenr: new root, level */
	TRACE_ROOT_SHRINK,   /* tree, bytenr: new root, level */
	TRACE_BLOCK_WRITE,   /* tree, bytenr, a: physical, level, b: generation */
	TRACE_SUPER_WRITE,   /* bytenr: physical, a: generation, b: mirror */
	TRACE_COMMIT,        /* a: generation, b: root tree bytenr */
	TRACE_FSYNC,         /* tree: subvolume, a: inode, b: 0 logged, else why it committed (enum btrfs_log_fallback) */
	TRACE_LOG_START,     /* tree: subvolume, bytenr: log tree root, a: log root tree root, b: generation */
	TRACE_LOG_INODE,     /* tree: subvolume, a: inode, b: 0 all, 1 exists only */
	TRACE_LOG_LOCK,      /* tree: subvolume, bytenr: fs leaf read-locked to copy from, a: its generation */
	TRACE_LOG_COPY,      /* bytenr: source fs leaf (0: made up), a: log leaf, slot, key, b: item size */
	TRACE_LOG_RANGE,     /* key: (dir, DIR_LOG_INDEX or DIR_LOG_ITEM, first), a: last */
	TRACE_LOG_SYNC,      /* bytenr: log root tree root, a: log tree root, b: generation */
	TRACE_REPLAY,        /* slot: pass, key: the log item, level: action, tree: subvolume, a, b: action's inodes, c: index or offset */
	TRACE_KIND_COUNT
};

struct trace_event {
	enum trace_kind kind;
	u64 seq;
	u64 tree;
	u64 bytenr;
	u64 a, b, c;
	int level;
	int slot;
	struct btrfs_key key;
};

struct blab_trace {
	struct trace_event *ev;
	size_t len, cap;
	int enabled;     /* events are counted (and kept unless count_only) */
	int count_only;  /* keep the counts, not the events (metrics of big runs) */
	unsigned long long counts[TRACE_KIND_COUNT];
};

/* Name of a kind as it appears in JSON ("cow", "split", ...). */
const char *trace_kind_name(enum trace_kind k);
/* Appends e (seq is assigned). Returns 0 or BLAB_ENOMEM. A disabled or NULL
 * trace accepts and drops events. */
int trace_emit(struct blab_trace *t, const struct trace_event *e);
void trace_free(struct blab_trace *t);
/* Writes event i as one JSON object (no newline) into buf; returns the
 * length it needs (snprintf semantics). */
int trace_event_json(const struct trace_event *e, char *buf, size_t size);
#endif
