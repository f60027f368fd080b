/* trace.h — the core's typed event stream. Every step a lesson animates is
 * one event; the UI groups events into steps and replays them. Events are
 * kept in memory and serialised as JSON lines (64-bit values as strings). */
#ifndef BTRFSLAB_TRACE_H
#define BTRFSLAB_TRACE_H
#include "ondisk.h"
#include "trace-events.h"
#include <stddef.h>

/* The kinds, their fields and sentences: trace-events.h. */
#define TRACE_KIND_ENUM(ID, name, doc, fields) TRACE_##ID,
enum trace_kind {
	TRACE_EVENTS(TRACE_KIND_ENUM, TRACE_NO_FIELD)
	TRACE_KIND_COUNT
};
#undef TRACE_KIND_ENUM

struct trace_event {
	enum trace_kind kind;
	u64 seq;
	u64 tree;
	u64 bytenr;
	u64 a, b, c;
	int level;
	int slot;
	struct btrfs_key key;
	u64 t; /* virtual time (ns) of a timed run: fs->clock_ns when emitted */
};

struct blab_trace;
/* Called with each event as it is emitted (its seq set), before the next
 * change: the core's state is the state right after the event. */
typedef void (*trace_hook_fn)(void *ctx, struct blab_trace *t, const struct trace_event *e);

struct blab_trace {
	struct trace_event *ev;
	size_t len, cap;
	int enabled;     /* events are counted (and kept unless count_only) */
	int count_only;  /* keep the counts, not the events (metrics of big runs) */
	u64 next_seq;    /* the seq the next event gets (events emitted so far, kept or not) */
	trace_hook_fn hook; /* NULL, or called with each event */
	void *hook_ctx;
	unsigned long long counts[TRACE_KIND_COUNT];
};

/* Name of a kind as it appears in JSON ("cow", "split", ...). */
const char *trace_kind_name(enum trace_kind k);
/* Appends e (seq is assigned: next_seq) and calls the hook, if any.
 * Returns 0 or BLAB_ENOMEM. A disabled or NULL trace accepts and drops
 * events (they get no seq). */
int trace_emit(struct blab_trace *t, const struct trace_event *e);
void trace_free(struct blab_trace *t);
/* Writes event e as one JSON object (no newline) into buf: seq, kind and
 * the kind's named fields (trace-events.h). Returns the length it needs
 * (snprintf semantics); TRACE_JSON_MAX always suffices. */
#define TRACE_JSON_MAX 512
int trace_event_json(const struct trace_event *e, char *buf, size_t size);
/* The schema of every kind, as JSON: {"version":1,"kinds":[{"kind","doc",
 * "fields":[{"name","type"}]}],"enums":{"name":[...]}}, types "u64", "u32",
 * "int", "key", "bool" or "enum:NAME". Made once and kept; NULL when out of memory. */
const char *trace_schema_json(void);
#endif
