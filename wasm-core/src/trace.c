#include "sched.h"
#include "tasks.h"
#include "trace.h"
#include "space-info.h"
#include "errors.h"
#include "print-tree.h"
#include "tree-log.h"
#include "array.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIND_NAME(ID, name, doc, fields) [TRACE_##ID] = name,
static const char *const names[TRACE_KIND_COUNT] = {TRACE_EVENTS(KIND_NAME, TRACE_NO_FIELD)};
#undef KIND_NAME

/* The enum tables of trace-events.h: the names the JSON and the page use. */
static const char *const fsync_result[] = {
	[BTRFS_LOG_LOGGED] = "logged",
	[BTRFS_LOG_FULL_COMMIT_NEW_CHUNK] = "full commit: new chunk",
	[BTRFS_LOG_FULL_COMMIT_RENAMED_FROM] = "full commit: directory lost a name to a rename",
	[BTRFS_LOG_FULL_COMMIT_UNLINKED] = "full commit: file renamed or unlinked",
	[BTRFS_LOG_NOTHING] = "nothing to log",
	[BTRFS_LOG_FULL_COMMIT_NEW_LINK] = "full commit: a new hard link",
	[BTRFS_LOG_FULL_COMMIT_LOGGED_NAME_GONE] = "full commit: a logged name was removed",
	[BTRFS_LOG_FULL_COMMIT_SUBVOL] = "full commit: not the top-level subvolume (the model logs it only)",
};
static const char *const replay_pass[] = {
	[BTRFS_REPLAY_PASS_PIN] = "pin",
	[BTRFS_REPLAY_PASS_INODES] = "inodes",
	[BTRFS_REPLAY_PASS_DIR_INDEX] = "dir index",
	[BTRFS_REPLAY_PASS_ALL] = "all",
	[BTRFS_REPLAY_PASS_FIXUP] = "fixup",
};
static const char *const replay_action[BTRFS_REPLAY_ACTION_COUNT] = {
	[BTRFS_REPLAY_PIN_BLOCK] = "pin block",
	[BTRFS_REPLAY_PIN_DATA] = "pin data",
	[BTRFS_REPLAY_INODE_NEW] = "inode new",
	[BTRFS_REPLAY_INODE_OVERWRITE] = "inode overwrite",
	[BTRFS_REPLAY_INODE_KEEP] = "inode keep",
	[BTRFS_REPLAY_XATTR_DELETE] = "xattr delete",
	[BTRFS_REPLAY_DIR_DELETE] = "dir delete",
	[BTRFS_REPLAY_TRUNCATE] = "truncate",
	[BTRFS_REPLAY_UNLINK_CONFLICT] = "unlink conflict",
	[BTRFS_REPLAY_LINK_PRESENT] = "link present",
	[BTRFS_REPLAY_LINK_LATER] = "link later",
	[BTRFS_REPLAY_LINK_NO_INODE] = "link no inode",
	[BTRFS_REPLAY_LINK_ADD] = "link add",
	[BTRFS_REPLAY_UNLINK_OLD_REF] = "unlink old ref",
	[BTRFS_REPLAY_XATTR_SET] = "xattr set",
	[BTRFS_REPLAY_EXTENT_PRESENT] = "extent present",
	[BTRFS_REPLAY_HOLE] = "hole",
	[BTRFS_REPLAY_EXTENT] = "extent",
	[BTRFS_REPLAY_CSUM] = "csum",
	[BTRFS_REPLAY_COUNTS] = "counts",
	[BTRFS_REPLAY_EVICT] = "evict",
};
static const char *const lock_mode[] = {
	[BTRFS_LOCK_READ] = "read",
	[BTRFS_LOCK_WRITE] = "write",
};

struct enum_table {
	const char *const *names;
	size_t len;
};
#define TABLE(a) {a, sizeof(a) / sizeof(a[0])}
static const struct enum_table E_FSYNC_RESULT = TABLE(fsync_result), E_REPLAY_PASS = TABLE(replay_pass),
				 E_REPLAY_ACTION = TABLE(replay_action), E_LOCK_MODE = TABLE(lock_mode),
				 E_WAIT_CAUSE = {sched_wait_names, WAIT_CAUSE_COUNT}, E_WORK = {sched_work_names, WORK_COUNT},
				 E_BIO_OP = {sched_bio_op_names, BIO_OP_COUNT}, E_TASK_KIND = {sched_task_kind_names, TASK_KIND_COUNT},
				 E_TIMED_OP = {timed_op_names, TOP_COUNT}, E_SPACE_KIND = {btrfs_space_kind_names, SPACE_KINDS},
				 E_FLUSH_STATE = {btrfs_flush_state_names, FLUSH_STATES};
#undef TABLE

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
	struct trace_event ev = *e;
	ev.seq = t->next_seq++;
	if (t->hook)
		t->hook(t->hook_ctx, t, &ev);
	if (t->count_only)
		return 0;
	if (array_room(&t->ev, t->len, &t->cap, sizeof(*t->ev), 256))
		return BLAB_ENOMEM;
	t->ev[t->len++] = ev;
	return 0;
}

void trace_free(struct blab_trace *t)
{
	free(t->ev);
	t->ev = NULL;
	t->len = t->cap = 0;
	t->next_seq = 0;
}

/* ---- JSON of one event: a writer per field type ---- */

struct jw {
	char *buf;
	size_t size;
	int len; /* what the whole object needs, written or not */
};

static void jw_printf(struct jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jw_printf(struct jw *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t at = (size_t)w->len;
	int n = vsnprintf(at < w->size ? w->buf + at : NULL, at < w->size ? w->size - at : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		w->len += n;
}

static void field_U64(struct jw *w, const char *name, u64 v)
{
	jw_printf(w, ",\"%s\":\"%" PRIu64 "\"", name, v);
}
static void field_U32(struct jw *w, const char *name, u64 v)
{
	jw_printf(w, ",\"%s\":%" PRIu64, name, v);
}
static void field_INT(struct jw *w, const char *name, int v)
{
	jw_printf(w, ",\"%s\":%d", name, v);
}
static void field_BOOL(struct jw *w, const char *name, u64 v)
{
	jw_printf(w, ",\"%s\":%s", name, v ? "true" : "false");
}
static void field_KEY(struct jw *w, const char *name, struct btrfs_key k)
{
	jw_printf(w, ",\"%s\":[\"%" PRIu64 "\",%u,\"%" PRIu64 "\"]", name, k.objectid, k.type, k.offset);
}
static void field_enum(struct jw *w, const char *name, const struct enum_table *t, u64 v)
{
	if (v < t->len && t->names[v])
		jw_printf(w, ",\"%s\":\"%s\"", name, t->names[v]);
	else
		jw_printf(w, ",\"%s\":\"#%" PRIu64 "\"", name, v);
}
#define DEFINE_ENUM_FIELD(type, schema_name) \
	static void field_##type(struct jw *w, const char *name, u64 v) { field_enum(w, name, &type, v); }
TRACE_ENUMS(DEFINE_ENUM_FIELD)
#undef DEFINE_ENUM_FIELD

int trace_event_json(const struct trace_event *e, char *buf, size_t size)
{
	struct jw w = {buf, size, 0};
	if (size)
		buf[0] = 0;
	jw_printf(&w, "{\"seq\":%" PRIu64 ",\"kind\":\"%s\"", e->seq, trace_kind_name(e->kind));
#define WRITE_FIELD(name, type, member) field_##type(&w, #name, e->member);
#define WRITE_KIND(ID, kname, doc, fields) \
	case TRACE_##ID:                   \
		fields break;
	switch (e->kind) {
		TRACE_EVENTS(WRITE_KIND, WRITE_FIELD)
	default:
		break;
	}
#undef WRITE_KIND
#undef WRITE_FIELD
	jw_printf(&w, "}");
	return w.len;
}

/* ---- the schema ---- */

static const char *type_name(const char *token)
{
	static const struct {
		const char *token, *name;
	} simple[] = {{"U64", "u64"}, {"U32", "u32"}, {"INT", "int"}, {"KEY", "key"}, {"BOOL", "bool"}};
	for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		if (!strcmp(token, simple[i].token))
			return simple[i].name;
#define ENUM_TYPE(type, schema_name) \
	if (!strcmp(token, #type))   \
		return "enum:" schema_name;
	TRACE_ENUMS(ENUM_TYPE)
#undef ENUM_TYPE
	return NULL;
}

static void schema_field(struct strbuf *b, int *first, const char *name, const char *token)
{
	const char *t = type_name(token);
	sb_printf(b, "%s{\"name\":\"%s\",\"type\":\"%s\"}", *first ? "" : ",", name, t ? t : "?");
	*first = 0;
}

static void schema_enum(struct strbuf *b, int *first, const char *name, const struct enum_table *t)
{
	sb_printf(b, "%s\"%s\":[", *first ? "" : ",", name);
	for (size_t i = 0; i < t->len; i++)
		sb_printf(b, "%s\"%s\"", i ? "," : "", t->names[i] ? t->names[i] : "");
	sb_printf(b, "]");
	*first = 0;
}

const char *trace_schema_json(void)
{
	static struct strbuf b; /* made once; the schema never changes */
	if (b.len)
		return b.s;
	int firstk = 1, first;
	sb_printf(&b, "{\"version\":1,\"kinds\":[");
#define SCHEMA_FIELD(name, type, member) schema_field(&b, &first, #name, #type);
#define SCHEMA_KIND(ID, kname, doc, fields)                                                             \
	sb_printf(&b, "%s{\"kind\":\"%s\",\"doc\":\"%s\",\"fields\":[", firstk ? "" : ",", kname, doc); \
	first = 1;                                                                                      \
	fields sb_printf(&b, "]}");                                                                          \
	firstk = 0;
	TRACE_EVENTS(SCHEMA_KIND, SCHEMA_FIELD)
#undef SCHEMA_KIND
#undef SCHEMA_FIELD
	sb_printf(&b, "],\"enums\":{");
	first = 1;
#define SCHEMA_ENUM(type, schema_name) schema_enum(&b, &first, schema_name, &type);
	TRACE_ENUMS(SCHEMA_ENUM)
#undef SCHEMA_ENUM
	/* the names keys are printed with (dump-tree's), for the page's sentences */
	sb_printf(&b, "},\"keyTypes\":{");
	first = 1;
	for (int t = 0; t < 256; t++) {
		char buf[24];
		const char *n = btrfs_key_type_name((u8)t, buf, sizeof(buf));
		if (n == buf)
			continue; /* not a known type */
		sb_printf(&b, "%s\"%d\":\"%s\"", first ? "" : ",", t, n);
		first = 0;
	}
	sb_printf(&b, "},\"objectids\":{");
	u64 id;
	const char *name;
	for (size_t i = 0; btrfs_objectid_name_at(i, &id, &name); i++)
		sb_printf(&b, "%s\"%llu\":\"%s\"", i ? "," : "", (unsigned long long)id, name);
	sb_printf(&b, "}}");
	if (b.oom) {
		sb_free(&b);
		return NULL;
	}
	return b.s;
}
