#include "trace.h"
#include "errors.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const names[TRACE_KIND_COUNT] = {
	[TRACE_OP] = "op", [TRACE_TRANS_START] = "trans_start", [TRACE_CHUNK_ALLOC] = "chunk_alloc",
	[TRACE_BLOCK_ALLOC] = "block_alloc", [TRACE_BLOCK_FREE] = "block_free",
	[TRACE_COW] = "cow",                 [TRACE_SEARCH] = "search",
	[TRACE_ITEM_INSERT] = "item_insert", [TRACE_ITEM_DELETE] = "item_delete",
	[TRACE_SPLIT] = "split",             [TRACE_MERGE] = "merge",
	[TRACE_PUSH] = "push",
	[TRACE_ROOT_GROW] = "root_grow",     [TRACE_ROOT_SHRINK] = "root_shrink",
	[TRACE_BLOCK_WRITE] = "block_write", [TRACE_SUPER_WRITE] = "super_write",
	[TRACE_COMMIT] = "commit",
	[TRACE_FSYNC] = "fsync",             [TRACE_LOG_START] = "log_start",
	[TRACE_LOG_INODE] = "log_inode",     [TRACE_LOG_LOCK] = "log_lock",
	[TRACE_LOG_COPY] = "log_copy",       [TRACE_LOG_RANGE] = "log_range",
	[TRACE_LOG_SYNC] = "log_sync",       [TRACE_REPLAY] = "replay",
};

const char *trace_kind_name(enum trace_kind k)
{
	return (k >= 0 && k < TRACE_KIND_COUNT && names[k]) ? names[k] : "unknown";
}

int trace_emit(struct blab_trace *t, const struct trace_event *e)
{
	if (!t || !t->enabled)
		return 0;
	if (e->kind >= 0 && e->kind < TRACE_KIND_COUNT)
		t->counts[e->kind]++;
	if (t->count_only)
		return 0;
	if (t->len == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct trace_event *n = realloc(t->ev, cap * sizeof(*n));
		if (!n)
			return BLAB_ENOMEM;
		t->ev = n;
		t->cap = cap;
	}
	t->ev[t->len] = *e;
	t->ev[t->len].seq = t->len;
	t->len++;
	return 0;
}

void trace_free(struct blab_trace *t)
{
	free(t->ev);
	t->ev = NULL;
	t->len = t->cap = 0;
}

int trace_event_json(const struct trace_event *e, char *buf, size_t size)
{
	return snprintf(buf, size,
			"{\"seq\":%" PRIu64 ",\"kind\":\"%s\",\"tree\":\"%" PRIu64 "\",\"bytenr\":\"%" PRIu64
			"\",\"level\":%d,\"slot\":%d,\"key\":[\"%" PRIu64 "\",%u,\"%" PRIu64 "\"],\"a\":\"%" PRIu64
			"\",\"b\":\"%" PRIu64 "\",\"c\":\"%" PRIu64 "\"}",
			e->seq, trace_kind_name(e->kind), e->tree, e->bytenr, e->level, e->slot, e->key.objectid,
			e->key.type, e->key.offset, e->a, e->b, e->c);
}
