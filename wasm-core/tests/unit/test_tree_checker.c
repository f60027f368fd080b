/* The tree checker refuses crafted blocks whose checksums are valid: names
 * longer than BTRFS_NAME_LEN or than their item, a child that is not what
 * its parent's key pointer says; and the scenario's limits hold. */
#include "../../src/crc32c.h"
#include "../../src/ctree.h"
#include "../../src/disk-io.h"
#include "../../src/inode.h"
#include "../../src/print-tree.h"
#include "../../src/scenario.h"
#include "../../src/tree-checker.h"
#include "test.h"
#include <stdlib.h>

static struct btrfs_fs_info *run(const char *script)
{
	struct scenario_options o = {.seed = 1, .now = 1};
	struct scenario_result res;
	struct blab_err err = {0};
	if (scenario_run(script, strlen(script), "t", &o, &res, &err)) {
		printf("  %s\n", err.msg);
		return NULL;
	}
	scenario_result_free(&res);
	return res.fs;
}

/* The fs tree's leaf holding the first item of type at or after ino, copied
 * into a fresh buffer the test may change (then checked as that block). */
static struct extent_buffer *leaf_with(struct btrfs_fs_info *fs, u64 ino, u8 type, int *slot)
{
	struct btrfs_path path;
	struct btrfs_key k = {ino, type, 0};
	if (btrfs_search_slot(fs, fs->fs_root, &k, &path, 0, 0) < 0 || btrfs_path_next_item(fs, &path))
		return NULL;
	*slot = path.slots[0];
	return path.nodes[0];
}

/* Rewrites the u16 at off inside item slot's data, and asks the checker. */
static int check_with_u16(struct btrfs_fs_info *fs, struct extent_buffer *eb, int slot, u32 off, u16 v)
{
	u8 *p = btrfs_item_ptr(eb, slot) + off;
	u16 old = get_le16(p);
	put_le16(p, v);
	int ret = btrfs_check_block(fs, eb, BTRFS_FS_TREE_OBJECTID);
	put_le16(p, old);
	return ret;
}

TEST(tree_checker_refuses_long_names)
{
	struct btrfs_fs_info *fs = run("mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/abc\nsetxattr /d/abc user.x 1\n");
	CHECK(fs);
	if (!fs)
		return;
	u64 ino;
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/d/abc", &ino) == 0);
	int slot;
	struct extent_buffer *eb = leaf_with(fs, ino, BTRFS_INODE_REF_KEY, &slot);
	CHECK(eb && btrfs_check_block(fs, eb, 5) == 0);
	/* an INODE_REF name of 300 bytes (over BTRFS_NAME_LEN) and of 4 (past the item) */
	CHECK(check_with_u16(fs, eb, slot, 8, 300) == BLAB_ECORRUPT);
	CHECK(strstr(fs->err.msg, "invalid inode ref name_len 300, expect 1..255") != NULL);
	CHECK(check_with_u16(fs, eb, slot, 8, 4) == BLAB_ECORRUPT);
	CHECK(strstr(fs->err.msg, "overruns the item") != NULL);
	CHECK(check_with_u16(fs, eb, slot, 8, 0) == BLAB_ECORRUPT);
	/* an xattr name of 65535 and a value running past its item */
	eb = leaf_with(fs, ino, BTRFS_XATTR_ITEM_KEY, &slot);
	CHECK(eb && btrfs_check_block(fs, eb, 5) == 0);
	CHECK(check_with_u16(fs, eb, slot, 27, 65535) == BLAB_ECORRUPT);
	CHECK(strstr(fs->err.msg, "name_len 65535") != NULL);
	CHECK(check_with_u16(fs, eb, slot, 25, 200) == BLAB_ECORRUPT);
	/* a DIR_INDEX name that is 256 bytes long */
	u64 dir;
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/d", &dir) == 0);
	eb = leaf_with(fs, dir, BTRFS_DIR_INDEX_KEY, &slot);
	CHECK(eb && btrfs_check_block(fs, eb, 5) == 0);
	CHECK(check_with_u16(fs, eb, slot, 27, 256) == BLAB_ECORRUPT);
	CHECK(strstr(fs->err.msg, "corrupt leaf: root=5 block=") != NULL);
	/* a DIR_ITEM whose name no longer hashes to its key */
	eb = leaf_with(fs, dir, BTRFS_DIR_ITEM_KEY, &slot);
	CHECK(eb);
	btrfs_item_ptr(eb, slot)[BTRFS_DIR_ITEM_SIZE] ^= 1;
	CHECK(btrfs_check_block(fs, eb, 5) == BLAB_ECORRUPT);
	CHECK(strstr(fs->err.msg, "name hash mismatch") != NULL);
	btrfs_item_ptr(eb, slot)[BTRFS_DIR_ITEM_SIZE] ^= 1;
	btrfs_fs_free(fs);
}

/* A node whose key pointers all lead to one child (checksums valid): the
 * walks stop at the second pointer instead of running forever. */
TEST(tree_checker_refuses_a_shared_child)
{
	struct btrfs_fs_info *fs = run("mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f_{1..400}\n");
	CHECK(fs);
	if (!fs)
		return;
	struct extent_buffer *root = fs->fs_root->node;
	CHECK(btrfs_level(root) >= 1);
	u32 nr = btrfs_nritems(root);
	CHECK(nr >= 2);
	u64 child = btrfs_node_blockptr(root, 0), gen = btrfs_key_generation(btrfs_key_ptr_nr(root, 0));
	for (u32 i = 1; i < nr; i++) {
		btrfs_set_key_blockptr(btrfs_key_ptr_nr(root, (int)i), child);
		btrfs_set_key_generation(btrfs_key_ptr_nr(root, (int)i), gen);
	}
	struct strbuf out = {0};
	CHECK(btrfs_dump_tree_text(fs, BTRFS_FS_TREE_OBJECTID, &out) == BLAB_ECORRUPT);
	CHECK(strstr(fs->err.msg, "first key mismatch") != NULL);
	sb_free(&out);
	/* a listing of /d walks leaves through the same pointers */
	u64 dir;
	fs->err.code = 0;
	int r = btrfs_lookup_path(fs, fs->fs_root, "/d", &dir);
	CHECK(r == 0 || r == BLAB_ECORRUPT);
	btrfs_fs_free(fs);
}

TEST(scenario_limits)
{
	struct scenario_options o = {.seed = 1, .now = 1, .max_ops = 10};
	struct scenario_result res;
	struct blab_err err = {0};
	const char *s1 = "mkdir /d\ncreate /d/a_{1..6}\ncreate /d/b_{1..6}\n";
	CHECK(scenario_run(s1, strlen(s1), "s", &o, &res, &err) == BLAB_EINVAL);
	CHECK(strstr(err.msg, "s:3: create: EINVAL: the script does more than 10 operations") != NULL);
	const char *s2 = "create /f_{0..18446744073709551615}\n";
	CHECK(scenario_run(s2, strlen(s2), "s", &o, &res, &err) == BLAB_EPARSE);
	CHECK(strstr(err.msg, "may hold at most 10 names") != NULL);
	const char *s3 = "create /f_{0..184467440737095516150}\n";
	CHECK(scenario_run(s3, strlen(s3), "s", &o, &res, &err) == BLAB_EPARSE);
	CHECK(strstr(err.msg, "below 2^64") != NULL);
	/* a range ending at 2^64-1 holds exactly its names: no wrap to 0 */
	const char *s4 = "create /f_{18446744073709551613..18446744073709551615}\n";
	o.max_ops = 0;
	int rr = scenario_run(s4, strlen(s4), "s", &o, &res, &err);
	CHECK(rr == 0);
	if (rr == 0) {
		CHECK(res.ops == 3);
		btrfs_fs_free(res.fs);
		scenario_result_free(&res);
	}
	o.max_bytes = 4096;
	const char *s5 = "create /f\nwrite /f 0 4096\nwrite /f 0 1\n";
	CHECK(scenario_run(s5, strlen(s5), "s", &o, &res, &err) == BLAB_EINVAL);
	CHECK(strstr(err.msg, "s:3: write: EINVAL: the script writes more than 4096 bytes") != NULL);
}
