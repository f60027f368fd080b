/* Stepping by checkpoint: the state a session gives for a line must be the
 * state a run of the script up to that line gives (device bytes, and the
 * trees as the player draws them, changed blocks not yet written included),
 * and must stay so after both commit. Seeks go in a seeded random order, so
 * that they start from checkpoints, from the last seek, and mid brace range. */
#include "../../src/checkpoint.h"
#include "../../src/disk-io.h"
#include "../../src/print-tree.h"
#include "../../src/transaction.h"
#include "test.h"
#include <stdlib.h>

/* Whether two in-memory devices read the same, page for page. */
static int same_device(const struct blab_device *a, const struct blab_device *b)
{
	if (a->size != b->size)
		return 0;
	static u8 zero[DEVICE_PAGE_SIZE];
	u64 pages = (a->size + DEVICE_PAGE_SIZE - 1) / DEVICE_PAGE_SIZE;
	for (u64 i = 0; i < pages; i++) {
		const u8 *pa = device_page(a, i), *pb = device_page(b, i);
		if (memcmp(pa ? pa : zero, pb ? pb : zero, DEVICE_PAGE_SIZE))
			return 0;
	}
	return 1;
}

static int same_trees(struct btrfs_fs_info *a, struct btrfs_fs_info *b)
{
	struct strbuf x = {0}, y = {0};
	int ok = !btrfs_dump_tree_json(a, &x) && !btrfs_dump_tree_json(b, &y) && x.len == y.len && !memcmp(x.s, y.s, x.len);
	sb_free(&x);
	sb_free(&y);
	return ok;
}

/* The script's first `lines` lines (and its mkfs line, always). */
static size_t prefix_len(const char *text, int lines)
{
	const char *p = text;
	if (lines < 1 && !strncmp(text, "mkfs", 4))
		lines = 1;
	for (int l = 0; l < lines && *p; l++) {
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : p + strlen(p);
	}
	return (size_t)(p - text);
}

static int count_lines(const char *text)
{
	int n = 0;
	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n + (text[0] && text[strlen(text) - 1] != '\n');
}

/* Checks every line of script, in a random order from seed, with a
 * checkpoint every `every` units. */
static void check_script(const char *script, u64 every, u64 seed)
{
	struct scenario_options o = {.seed = 3, .now = 1700000000, .trace = 1};
	struct scenario_session *s;
	struct blab_err err = {0};
	int ret = scenario_session_new(script, strlen(script), "t", &o, every, &s, &err);
	if (ret) {
		test_fail_at(__FILE__, __LINE__, "session: %s", err.msg);
		return;
	}
	/* the session's whole run is the plain run */
	struct scenario_result plain;
	struct scenario_options po = o;
	CHECK(scenario_run(script, strlen(script), "t", &po, &plain, &err) == 0);
	CHECK(same_device(&plain.fs->dev, &scenario_session_result(s)->fs->dev));
	CHECK(plain.fs->trace.len == scenario_session_result(s)->fs->trace.len);
	btrfs_fs_free(plain.fs);
	scenario_result_free(&plain);

	int lines = count_lines(script);
	int order[256];
	CHECK(lines + 2 <= 256);
	for (int i = 0; i < lines + 2; i++)
		order[i] = i;
	for (int i = lines + 1; i > 0; i--) {
		int j = (int)(test_rand(&seed) % (u64)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int n = 0; n < lines + 2; n++) {
		int line = order[n];
		struct scenario_options no = o;
		no.trace = 0;
		no.no_final_commit = 1;
		struct scenario_result ref;
		if (scenario_run(script, prefix_len(script, line), "t", &no, &ref, &err)) {
			test_fail_at(__FILE__, __LINE__, "prefix to line %d: %s", line, err.msg);
			break;
		}
		struct btrfs_fs_info *at, *copy;
		ret = scenario_session_seek(s, line, &at, &err);
		if (ret) {
			test_fail_at(__FILE__, __LINE__, "seek to line %d: %s", line, err.msg);
		} else if (!same_device(&at->dev, &ref.fs->dev) || !same_trees(at, ref.fs)) {
			test_fail_at(__FILE__, __LINE__, "line %d (every %llu): the seek differs from the run to that line", line,
				     (unsigned long long)every);
		} else if ((ret = scenario_session_copy(s, line, &copy, &err))) {
			test_fail_at(__FILE__, __LINE__, "copy at line %d: %s", line, err.msg);
		} else {
			/* both go on alike: commit each */
			if (copy->trans_running)
				CHECK(btrfs_commit_transaction(copy) == 0);
			if (ref.fs->trans_running)
				CHECK(btrfs_commit_transaction(ref.fs) == 0);
			if (!same_device(&copy->dev, &ref.fs->dev))
				test_fail_at(__FILE__, __LINE__, "line %d: after commit the copy differs", line);
			btrfs_fs_free(copy);
		}
		btrfs_fs_free(ref.fs);
		scenario_result_free(&ref);
		if (test_failed_now)
			break;
	}
	scenario_session_free(s);
}

static const char *const SCRIPTS[] = {
	"mkfs nodesize=4K size=64M\n"
	"mkdir /d\n"
	"create /d/f{1..60}\n"
	"# a comment, then a blank line\n"
	"\n"
	"write /d/f3 0 10000 2\n"
	"commit\n"
	"unlink /d/f{10..40}\n"
	"setxattr /d/f5 user.a hello\n"
	"create /d/g{1..30}\n"
	"rename /d/g3 /d/h3\n"
	"truncate /d/f3 4096\n"
	"commit\n"
	"link /d/f5 /d/l5\n"
	"symlink /d/f5 /d/s5\n"
	"rmdir /d\n", /* fails: the run's error is the session's */
	"mkfs nodesize=4K size=64M\n"
	"mkdir /d\n"
	"create /d/old{1..20}\n"
	"write /d/old1 0 20000 3\n"
	"commit\n"
	"create /d/new\n"
	"write /d/new 0 10000 7\n"
	"fsync /d/new\n"
	"unlink /d/old{2..9}\n"
	"fsync /d\n"
	"write /d/old1 4096 100 9\n"
	"crash\n",
	"create /a{1..5}\n" /* no mkfs line */
	"set dir_logging=legacy\n"
	"mkdir /x\n"
	"rename /a1 /x/a1\n"
	"fsync /x/a1\n"
	"commit\n",
};

TEST(checkpoint_seek_equals_the_run_to_that_line)
{
	for (size_t i = 0; i < sizeof(SCRIPTS) / sizeof(SCRIPTS[0]); i++) {
		const char *script = SCRIPTS[i];
		if (i == 0) {
			/* the first fails at its last line: the session says so, as the run does */
			struct scenario_session *s;
			struct blab_err err = {0};
			struct scenario_options o = {.seed = 3, .now = 1};
			CHECK(scenario_session_new(script, strlen(script), "t", &o, 4, &s, &err) == BLAB_ENOTEMPTY);
			CHECK(strstr(err.msg, "t:16: rmdir") != NULL);
			char ok[2048];
			size_t n = prefix_len(script, 15);
			memcpy(ok, script, n);
			ok[n] = 0;
			for (u64 every = 1; every <= 64; every *= 4)
				check_script(ok, every, 1000 + every);
			continue;
		}
		for (u64 every = 1; every <= 64; every *= 4)
			check_script(script, every, 2000 + i * 10 + every);
		if (test_failed_now)
			return;
	}
}

TEST(checkpoint_random_scripts)
{
	u64 seed = 0x5eed0c4ec6ULL;
	const char *env = getenv("BLAB_CHECKPOINT_SEED");
	if (env)
		seed = strtoull(env, NULL, 0);
	printf("  checkpoint_random_scripts seed %llu (BLAB_CHECKPOINT_SEED)\n", (unsigned long long)seed);
	static const char *const ops[] = {"create /d/f%u", "create /d/r%u_{1..%u}", "unlink /d/f%u", "write /d/f%u %u 5000 %u",
					  "commit", "fsync /d/f%u", "fsync /d", "mkdir /d/s%u", "rename /d/f%u /d/s%u/m",
					  "truncate /d/f%u %u", "setxattr /d/f%u user.k v%u", "link /d/f%u /d/k%u"};
	for (int round = 0; round < 6; round++) {
		char script[8192];
		size_t n = (size_t)snprintf(script, sizeof(script), "mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f{1..12}\n");
		for (int i = 0; i < 40; i++) {
			u64 k = test_rand(&seed) % (sizeof(ops) / sizeof(ops[0]));
			unsigned a = (unsigned)(test_rand(&seed) % 12 + 1), b = (unsigned)(test_rand(&seed) % 20 + 1);
			char line[128];
			snprintf(line, sizeof(line), ops[k], a, b, (unsigned)(test_rand(&seed) % 9));
			/* keep lines that the run takes: try the script with it */
			size_t m = (size_t)snprintf(script + n, sizeof(script) - n, "%s\n", line);
			struct scenario_options o = {.seed = 3, .now = 1};
			struct scenario_result res;
			struct blab_err err = {0};
			if (scenario_run(script, n + m, "t", &o, &res, &err) == 0) {
				btrfs_fs_free(res.fs);
				scenario_result_free(&res);
				n += m;
			}
			script[n] = 0;
		}
		check_script(script, 1 + test_rand(&seed) % 16, seed);
		if (test_failed_now) {
			printf("  failing script (seed %llu):\n%s", (unsigned long long)seed, script);
			return;
		}
	}
}

/* Whether dump-json text holds a block at bytenr. */
static int dump_has_block(const struct strbuf *d, u64 bytenr)
{
	char pat[48];
	snprintf(pat, sizeof(pat), "{\"bytenr\":\"%llu\"", (unsigned long long)bytenr);
	return d->s && strstr(d->s, pat) != NULL;
}

/* Stepping event by event: the state right after each event of a command.
 * At a command's `op` event it is the state after the line before (what a
 * seek gives); right after a COW the copy is in its tree, after a split both
 * halves are; the final commit's events are not in a command and say so. */
TEST(checkpoint_state_at_event)
{
	const char *script = "mkfs nodesize=4K size=64M\n"
			     "mkdir /docs\n"
			     "create /docs/n{1..30}\n"
			     "commit\n"
			     "write /docs/n1 0 9000 3\n"
			     "fsync /docs/n1\n"
			     "unlink /docs/n{2..25}\n"
			     "create /docs/after\n";
	struct scenario_options o = {.seed = 3, .now = 1700000000, .trace = 1};
	for (u64 every = 1; every <= 16; every *= 4) {
		struct scenario_session *s;
		struct blab_err err = {0};
		CHECK(scenario_session_new(script, strlen(script), "t", &o, every, &s, &err) == 0);
		const struct blab_trace *t = &scenario_session_result(s)->fs->trace;
		CHECK(t->len > 100);
		int prev_line = 0, cows = 0, splits = 0;
		u64 last_op = 0;
		struct session_stats st;
		scenario_session_stats(s, &st);
		CHECK(st.command_events > 100 && st.command_events < t->len);
		for (size_t i = 0; i < st.command_events; i++) {
			const struct trace_event *e = &t->ev[i];
			int wanted = e->kind == TRACE_OP || e->kind == TRACE_COW || e->kind == TRACE_SPLIT;
			if (!wanted)
				continue;
			struct strbuf d = {0}, ref = {0};
			err = (struct blab_err){0};
			u64 tree = e->kind == TRACE_OP ? 0 : e->tree;
			if (scenario_session_dump_at_event(s, e->seq, tree, 0, &d, &err)) {
				test_fail_at(__FILE__, __LINE__, "event %llu (%s): %s", (unsigned long long)e->seq,
					     trace_kind_name(e->kind), err.msg);
			} else if (e->kind == TRACE_OP) {
				struct btrfs_fs_info *at;
				CHECK(scenario_session_seek(s, prev_line, &at, &err) == 0);
				CHECK(btrfs_dump_tree_json(at, &ref) == 0);
				if (d.len != ref.len || memcmp(d.s, ref.s, d.len))
					test_fail_at(__FILE__, __LINE__, "line %d's op event (every %llu): not the state after line %d",
						     e->slot, (unsigned long long)every, prev_line);
				prev_line = e->slot;
				last_op = e->seq;
			} else if (e->kind == TRACE_COW) {
				cows++;
				if (!dump_has_block(&d, e->a))
					test_fail_at(__FILE__, __LINE__, "COW %llu -> %llu: the copy is not in tree %llu",
						     (unsigned long long)e->bytenr, (unsigned long long)e->a, (unsigned long long)e->tree);
			} else {
				splits++;
				if (!dump_has_block(&d, e->bytenr) || !dump_has_block(&d, e->a))
					test_fail_at(__FILE__, __LINE__, "split %llu | %llu: not both in the tree",
						     (unsigned long long)e->bytenr, (unsigned long long)e->a);
			}
			sb_free(&d);
			sb_free(&ref);
			if (test_failed_now)
				break;
		}
		CHECK(cows > 5 && splits > 0 && last_op > 0);
		/* the final commit's last event is past every command */
		struct strbuf d = {0};
		err = (struct blab_err){0};
		CHECK(scenario_session_dump_at_event(s, t->ev[t->len - 1].seq, 0, 0, &d, &err) == BLAB_EINVAL);
		CHECK_STR_CONTAINS(err.msg, "not in a command of the script");
		sb_free(&d);
		scenario_session_free(s);
		if (test_failed_now)
			return;
	}
}

/* More trees than one 64-bit word of bits: 70 snapshots with quotas on,
 * each changed after it is made. A seek and a copy (btrfs_fs_clone) must
 * carry every tree, and their commits account as the run's do. A few
 * lines only, past the 64th tree: every line would take minutes here. */
TEST(checkpoint_more_trees_than_a_word)
{
	char script[8192];
	size_t n = (size_t)snprintf(script, sizeof(script), "mkfs nodesize=4K size=128M\nmkdir /d\ncreate /d/f{1..80}\n"
							  "write /d/f1 0 20000 3\ncommit\nquota enable\n");
	for (int i = 1; i <= 70 && n < sizeof(script) - 128; i++)
		n += (size_t)snprintf(script + n, sizeof(script) - n, "snapshot / /s%d\nwrite /s%d/d/f%d 0 %d %d\n%s", i, i, i + 1,
				      4096 * (1 + i % 3), i, i % 10 ? "" : "commit\n");
	CHECK(n < sizeof(script) - 128);
	struct scenario_options o = {.seed = 3, .now = 1700000000};
	struct scenario_session *s;
	struct blab_err err = {0};
	if (scenario_session_new(script, n, "t", &o, 32, &s, &err)) {
		test_fail_at(__FILE__, __LINE__, "session: %s", err.msg);
		return;
	}
	CHECK(scenario_session_result(s)->fs->nroots > 70 + 5);
	int lines[] = {count_lines(script), 130};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]) && !test_failed_now; i++) {
		struct scenario_options no = o;
		no.no_final_commit = 1;
		struct scenario_result ref;
		if (scenario_run(script, prefix_len(script, lines[i]), "t", &no, &ref, &err)) {
			test_fail_at(__FILE__, __LINE__, "prefix to line %d: %s", lines[i], err.msg);
			break;
		}
		struct btrfs_fs_info *at, *copy;
		if (scenario_session_seek(s, lines[i], &at, &err))
			test_fail_at(__FILE__, __LINE__, "seek to line %d: %s", lines[i], err.msg);
		else if (!same_device(&at->dev, &ref.fs->dev) || !same_trees(at, ref.fs))
			test_fail_at(__FILE__, __LINE__, "line %d: the seek differs from the run to that line", lines[i]);
		else if (scenario_session_copy(s, lines[i], &copy, &err))
			test_fail_at(__FILE__, __LINE__, "copy at line %d: %s", lines[i], err.msg);
		else {
			CHECK(copy->nroots == ref.fs->nroots);
			if (copy->trans_running)
				CHECK(btrfs_commit_transaction(copy) == 0);
			if (ref.fs->trans_running)
				CHECK(btrfs_commit_transaction(ref.fs) == 0);
			if (!same_device(&copy->dev, &ref.fs->dev))
				test_fail_at(__FILE__, __LINE__, "line %d: after commit the copy differs", lines[i]);
			btrfs_fs_free(copy);
		}
		btrfs_fs_free(ref.fs);
		scenario_result_free(&ref);
	}
	scenario_session_free(s);
}
