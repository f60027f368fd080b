/* fsync, crash and replay: what a log brings back, and clear errors for
 * logs that are corrupt or inconsistent (never an abort). */
#include "../../src/check.h"
#include "../../src/ctree.h"
#include "../../src/disk-io.h"
#include "../../src/file.h"
#include "../../src/inode.h"
#include "../../src/print-tree.h"
#include "../../src/scenario.h"
#include "../../src/tree-log.h"
#include "../../src/volumes.h"
#include "test.h"

static const char *const SCRIPT = "mkfs nodesize=4K size=64M\n"
				  "mkdir /d\n"
				  "create /d/old{1..5}\n"
				  "write /d/old1 0 20000 3\n"
				  "commit\n"
				  "create /d/new\n"
				  "write /d/new 0 10000 7\n"
				  "fsync /d/new\n"
				  "unlink /d/old{2..3}\n"
				  "fsync /d\n"
				  "write /d/old1 4096 100 9\n" /* after the last fsync: lost */
				  "crash\n";

/* The crashed image of SCRIPT, opened (log pending). */
static struct btrfs_fs_info *crashed(void)
{
	struct scenario_options o = {.seed = 5, .now = 1};
	struct scenario_result res;
	struct blab_err err = {0};
	if (scenario_run(SCRIPT, strlen(SCRIPT), "t", &o, &res, &err))
		return NULL;
	scenario_result_free(&res);
	return res.fs;
}

static int exists(struct btrfs_fs_info *fs, const char *path)
{
	u64 ino;
	return btrfs_lookup_path(fs, fs->fs_root, path, &ino) == 0;
}

TEST(tree_log_crash_keeps_the_log_and_replay_brings_it_back)
{
	struct btrfs_fs_info *fs = crashed();
	CHECK(fs);
	CHECK(btrfs_super_log_root(fs->super) != 0);
	/* before replay: the last commit */
	CHECK(!exists(fs, "/d/new") && exists(fs, "/d/old2"));
	struct btrfs_replay_stats st = {0};
	CHECK_EQ_U64(btrfs_replay_log(fs, &st), 0);
	CHECK_EQ_U64(btrfs_super_log_root(fs->super), 0);
	CHECK(st.actions[BTRFS_REPLAY_DIR_DELETE] == 2 && st.actions[BTRFS_REPLAY_EXTENT] >= 1);
	CHECK(exists(fs, "/d/new") && !exists(fs, "/d/old2") && !exists(fs, "/d/old3") && exists(fs, "/d/old4"));
	u64 ino, got;
	u8 buf[20000];
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/d/new", &ino) == 0);
	CHECK(btrfs_file_read(fs, fs->fs_root, ino, 0, buf, sizeof(buf), &got, 1) == 0);
	CHECK_EQ_U64(got, 10000);
	for (u64 i = 0; i < got; i++)
		if (buf[i] != scenario_data_byte(7, i))
			CHECK(!"replayed data differs");
	/* old1 was written after the last fsync: it keeps its committed bytes */
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/d/old1", &ino) == 0);
	CHECK(btrfs_file_read(fs, fs->fs_root, ino, 4096, buf, 100, &got, 1) == 0);
	CHECK(buf[0] == scenario_data_byte(3, 4096));
	struct strbuf out = {0};
	CHECK_EQ_U64(btrfs_check_fs(fs, &out, 0), 0);
	sb_free(&out);
	/* a second replay finds no log */
	CHECK_EQ_U64(btrfs_replay_log(fs, NULL), 0);
	btrfs_fs_free(fs);
}

/* Rewrites the superblock in memory and on the device. */
static void rewrite_super(struct btrfs_fs_info *fs)
{
	CHECK(btrfs_write_super_buf(fs, fs->super) == 0);
}

/* The subvolume log tree's (only) leaf of a crashed image. */
static struct extent_buffer *log_leaf(struct btrfs_fs_info *fs)
{
	struct extent_buffer *lr = btrfs_read_tree_block(fs, btrfs_super_log_root(fs->super), 0, BTRFS_TREE_LOG_OBJECTID);
	if (!lr)
		return NULL;
	const u8 *ri = btrfs_item_ptr(lr, 0);
	return btrfs_read_tree_block(fs, btrfs_root_bytenr(ri), btrfs_root_level(ri), BTRFS_TREE_LOG_OBJECTID);
}

static void write_block(struct btrfs_fs_info *fs, struct extent_buffer *eb)
{
	btrfs_csum_tree_block(fs, eb->data);
	CHECK(btrfs_write_logical(fs, eb->start, eb->data, eb->len) == 0);
}

/* Damage done to a crashed filesystem's log, each refused by replay. */
static int root_to_nowhere(struct btrfs_fs_info *fs)
{
	btrfs_set_super_log_root(fs->super, 60ULL << 30); /* in no chunk */
	rewrite_super(fs);
	return 0;
}

static int truncated_leaf(struct btrfs_fs_info *fs)
{
	struct extent_buffer *leaf = log_leaf(fs);
	if (!leaf)
		return -1;
	/* the leaf claims more items than it holds */
	btrfs_set_header_nritems(leaf->data, 400);
	write_block(fs, leaf);
	btrfs_evict_eb(fs, leaf->start);
	return 0;
}

static int item_for_a_missing_inode(struct btrfs_fs_info *fs)
{
	struct extent_buffer *leaf = log_leaf(fs);
	if (!leaf)
		return -1;
	/* the new file's INODE_ITEM becomes a key replay does not read: its
	 * ref and extent then point at an inode that exists nowhere */
	int done = 0;
	for (u32 i = 0; i < btrfs_nritems(leaf) && !done; i++) {
		struct btrfs_key k;
		btrfs_item_key(leaf, (int)i, &k);
		if (k.type == BTRFS_INODE_ITEM_KEY && btrfs_inode_size(btrfs_item_ptr(leaf, (int)i)) == 10000) {
			k.type = 2;
			btrfs_cpu_key_to_disk(btrfs_item_nr(leaf, (int)i), &k);
			done = 1;
		}
	}
	write_block(fs, leaf);
	btrfs_evict_eb(fs, leaf->start);
	return done ? 0 : -1;
}

static int wrong_generation(struct btrfs_fs_info *fs)
{
	/* a log older than the last commit must not be replayed over it */
	btrfs_set_super_generation(fs->super, btrfs_super_generation(fs->super) + 1);
	rewrite_super(fs);
	return 0;
}

TEST(tree_log_damaged_logs_are_refused)
{
	static const struct {
		const char *name;
		int (*damage)(struct btrfs_fs_info *fs);
		const char *msg;
	} cases[] = {
		{"log root in no chunk", root_to_nowhere, "superblock log_root"},
		{"truncated leaf", truncated_leaf, "log tree"},
		{"item for a missing inode", item_for_a_missing_inode, "is in neither the log nor the filesystem"},
		{"log of a later generation", wrong_generation, "a log of the transaction after the last commit"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		printf("  case: %s\n", cases[i].name);
		struct btrfs_fs_info *fs = crashed();
		CHECK(fs);
		CHECK(cases[i].damage(fs) == 0);
		CHECK_EQ_U64(btrfs_replay_log(fs, NULL), BLAB_ECORRUPT);
		CHECK_STR_CONTAINS(fs->err.msg, cases[i].msg);
		btrfs_fs_free(fs);
	}
}

TEST(tree_log_scenario_errors)
{
	struct scenario_options o = {.seed = 5, .now = 1};
	struct scenario_result res;
	struct blab_err err = {0};
	const char *s1 = "mkdir /a\ncrash\nmkdir /b\n";
	CHECK(scenario_run(s1, strlen(s1), "t", &o, &res, &err) == BLAB_EPARSE);
	CHECK_STR_CONTAINS(err.msg, "t:3: mkdir: EPARSE: nothing can follow crash");
	const char *s2 = "set dir_logging=sometimes\n";
	CHECK(scenario_run(s2, strlen(s2), "t", &o, &res, &err) == BLAB_EPARSE);
	CHECK_STR_CONTAINS(err.msg, "dir_logging=index-only or dir_logging=legacy");
	const char *s3 = "fsync /nothing\n";
	CHECK(scenario_run(s3, strlen(s3), "t", &o, &res, &err) == BLAB_ENOENT);
}
