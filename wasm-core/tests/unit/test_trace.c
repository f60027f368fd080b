/* The trace schema: every kind declared in trace-events.h has a name, its
 * JSON carries exactly its named fields, enum values cross as names, and
 * the schema lists every kind. */
#include "../../src/trace.h"
#include "test.h"
#include <stdio.h>
#include <string.h>

TEST(trace_json_named_fields)
{
	char buf[TRACE_JSON_MAX];
	struct trace_event e = {.kind = TRACE_COW, .seq = 3, .tree = 5, .bytenr = 100, .a = 200, .b = 9, .c = 8, .level = 1};
	CHECK(trace_event_json(&e, buf, sizeof(buf)) == (int)strlen(buf));
	CHECK(!strcmp(buf, "{\"seq\":3,\"kind\":\"cow\",\"tree\":\"5\",\"from\":\"100\",\"to\":\"200\",\"level\":1,"
			   "\"generation\":\"9\",\"fromGeneration\":\"8\"}"));
	struct trace_event l = {.kind = TRACE_LOCK_ACQUIRE, .tree = 2, .bytenr = 30408704, .level = 0, .slot = 3,
				.a = BTRFS_LOCK_WRITE, .b = 1500};
	trace_event_json(&l, buf, sizeof(buf));
	CHECK(!strcmp(buf, "{\"seq\":0,\"kind\":\"lock_acquire\",\"tree\":\"2\",\"bytenr\":\"30408704\",\"level\":0,"
			   "\"task\":3,\"mode\":\"write\",\"waitNs\":\"1500\",\"atNs\":\"0\"}"));
	l.a = 7; /* past the table: the index, marked */
	trace_event_json(&l, buf, sizeof(buf));
	CHECK(strstr(buf, "\"mode\":\"#7\"") != NULL);
	struct trace_event s = {.kind = TRACE_SEARCH, .key = {UINT64_MAX, 84, 12}, .a = 1};
	trace_event_json(&s, buf, sizeof(buf));
	CHECK(strstr(buf, "\"key\":[\"18446744073709551615\",84,\"12\"],\"found\":true}") != NULL);
	/* snprintf semantics: the length needed, output cut and terminated */
	char small[16];
	int need = trace_event_json(&e, small, sizeof(small));
	CHECK(need > (int)sizeof(small) && strlen(small) == sizeof(small) - 1);
	/* the largest event fits TRACE_JSON_MAX */
	struct trace_event big = {.kind = TRACE_REPLAY, .seq = UINT64_MAX, .tree = UINT64_MAX, .slot = -2147483647 - 1,
				  .level = -2147483647 - 1, .key = {UINT64_MAX, 255, UINT64_MAX}, .a = UINT64_MAX,
				  .b = UINT64_MAX, .c = UINT64_MAX};
	for (int k = 0; k < TRACE_KIND_COUNT; k++) {
		big.kind = (enum trace_kind)k;
		big.bytenr = UINT64_MAX;
		CHECK(trace_event_json(&big, buf, sizeof(buf)) < (int)sizeof(buf));
	}
}

TEST(trace_schema_lists_every_kind)
{
	const char *s = trace_schema_json();
	CHECK(s != NULL);
	if (!s)
		return;
	for (int k = 0; k < TRACE_KIND_COUNT; k++) {
		char want[64];
		snprintf(want, sizeof(want), "{\"kind\":\"%s\",", trace_kind_name((enum trace_kind)k));
		CHECK(strcmp(trace_kind_name((enum trace_kind)k), "unknown") != 0);
		CHECK(strstr(s, want) != NULL);
	}
	CHECK(strstr(s, "\"type\":\"?\"") == NULL); /* every field type known */
	CHECK(strstr(s, "\"replay_action\":[\"pin block\",") != NULL);
	CHECK(strstr(s, "{\"name\":\"mode\",\"type\":\"enum:lock_mode\"}") != NULL);
}
