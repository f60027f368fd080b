/* Files against a byte-array model: seeded random writes (inline, across
 * the inline limit, inside and across extents, past the end) and truncates
 * (partial sectors, growing, shrinking) with commits between. After each
 * commit every file reads back as the model says with checksums verified,
 * the core's check is clean, and a reopened image reads the same. Also the
 * namespace operations' edge cases. */
#include "../../src/check.h"
#include "../../src/disk-io.h"
#include "../../src/file.h"
#include "../../src/inode.h"
#include "../../src/mkfs.h"
#include "../../src/scenario.h"
#include "../../src/transaction.h"
#include "test.h"
#include <stdlib.h>

#define NFILES 4
#define MAXSZ (600 * 1024)

static u64 st;

static struct btrfs_fs_info *new_fs(u32 nodesize)
{
	struct mkfs_options o;
	struct btrfs_fs_info *fs = NULL;
	struct blab_err err = {0};
	btrfs_mkfs_defaults(&o);
	o.nodesize = nodesize;
	o.size = 256ULL << 20;
	o.seed = 3;
	if (btrfs_mkfs(&o, &fs, &err))
		printf("  mkfs: %s\n", err.msg);
	else
		fs->trace.enabled = 0;
	return fs;
}

static int verify_all(struct btrfs_fs_info *fs, u64 *ino, u8 **model, u64 *size)
{
	u8 *buf = malloc(MAXSZ);
	for (int f = 0; f < NFILES; f++) {
		u64 got;
		struct btrfs_inode in;
		if (btrfs_read_inode(fs, fs->fs_root, ino[f], &in) || in.size != size[f]) {
			printf("  file %d: size %llu want %llu\n", f, (unsigned long long)in.size, (unsigned long long)size[f]);
			free(buf);
			return 0;
		}
		if (btrfs_file_read(fs, fs->fs_root, ino[f], 0, buf, MAXSZ, &got, 1) || got != size[f] || memcmp(buf, model[f], got)) {
			printf("  file %d: content differs (%s)\n", f, fs->err.msg);
			free(buf);
			return 0;
		}
	}
	free(buf);
	return test_check_problems(fs) == 0;
}

static int run_files(u32 nodesize, u64 seed, int ops)
{
	struct btrfs_fs_info *fs = new_fs(nodesize);
	if (!fs)
		return 0;
	st = seed * 0x9E3779B97F4A7C15ULL + 7;
	u64 ino[NFILES], size[NFILES] = {0};
	u8 *model[NFILES];
	u8 *data = malloc(MAXSZ);
	btrfs_start_transaction(fs);
	for (int f = 0; f < NFILES; f++) {
		char path[16];
		snprintf(path, sizeof(path), "/f%d", f);
		struct inode_attrs a = {.mode = S_IFREG_ | 0644};
		if (btrfs_create(fs, fs->fs_root, path, &a, &ino[f]))
			return 0;
		model[f] = calloc(1, MAXSZ);
	}
	int ok = 1;
	for (int op = 0; ok && op < ops; op++) {
		int f = (int)(test_rand(&st) % NFILES);
		u64 r = test_rand(&st) % 100;
		if (r < 70) {
			u64 len = r < 30 ? 1 + test_rand(&st) % 3000 : 1 + test_rand(&st) % 150000;
			u64 off = test_rand(&st) % (size[f] + 20000);
			if (off + len > MAXSZ)
				continue;
			for (u64 i = 0; i < len; i++)
				data[i] = scenario_data_byte(seed + (u64)op, off + i);
			if (btrfs_file_write(fs, fs->fs_root, ino[f], off, data, len)) {
				printf("  op %d write: %s\n", op, fs->err.msg);
				ok = 0;
				break;
			}
			memcpy(model[f] + off, data, len);
			if (off + len > size[f])
				size[f] = off + len;
		} else {
			u64 ns = test_rand(&st) % 3 ? test_rand(&st) % (size[f] + 1) : size[f] + test_rand(&st) % 50000;
			if (ns > MAXSZ)
				continue;
			if (btrfs_file_truncate(fs, fs->fs_root, ino[f], ns)) {
				printf("  op %d truncate: %s\n", op, fs->err.msg);
				ok = 0;
				break;
			}
			if (ns < size[f])
				memset(model[f] + ns, 0, size[f] - ns);
			size[f] = ns;
		}
		if ((op + 1) % 25 == 0) {
			if (btrfs_commit_transaction(fs)) {
				printf("  commit: %s\n", fs->err.msg);
				ok = 0;
				break;
			}
			if (!verify_all(fs, ino, model, size)) {
				printf("  after op %d (seed %llu, nodesize %u)\n", op, (unsigned long long)seed, nodesize);
				ok = 0;
			}
			btrfs_start_transaction(fs);
		}
	}
	if (ok && btrfs_commit_transaction(fs))
		ok = 0;
	if (ok) {
		struct blab_device d;
		struct blab_err err = {0};
		struct btrfs_fs_info *r = test_copy_device(&fs->dev, &d) ? NULL : btrfs_open(&d, &err);
		ok = r && verify_all(r, ino, model, size);
		btrfs_fs_free(r);
	}
	for (int f = 0; f < NFILES; f++)
		free(model[f]);
	free(data);
	btrfs_fs_free(fs);
	return ok;
}

TEST(files_random_4k)
{
	for (u64 seed = 1; seed <= 4; seed++)
		CHECK(run_files(4096, seed, 300));
}

TEST(files_random_16k)
{
	for (u64 seed = 10; seed <= 12; seed++)
		CHECK(run_files(16384, seed, 300));
}

static int run_script(const char *text, struct scenario_result *res, struct blab_err *err)
{
	struct scenario_options o = {.seed = 1, .now = 1};
	return scenario_run(text, strlen(text), "t", &o, res, err);
}

TEST(namespace_operations_and_their_errors)
{
	struct scenario_result res;
	struct blab_err err = {0};
	int ret = run_script("mkfs nodesize=4K size=64M\n"
			     "mkdir /a\nmkdir /a/b\ncreate /a/b/f\nwrite /a/b/f 0 10000 5\n"
			     "link /a/b/f /a/g\nlink /a/b/f /top\nsetxattr /a/g user.x one\nsetxattr /a/g user.x two\n"
			     "symlink /a/b/f /a/s\ncommit\n"
			     "rename /a/b /c\nrename /top /a/g\nunlink /a/g\ncreate /c/other\nrename /c/other /c/f\n"
			     "create /d_{1..500}\nunlink /d_{1..499}\nrmdir /a/s\n",
			     &res, &err);
	CHECK(ret == BLAB_ENOTDIR);
	CHECK_STR_CONTAINS(err.msg, "t:19: rmdir: ENOTDIR: /a/s: not a directory");
	ret = run_script("mkfs nodesize=4K size=64M\n"
			 "mkdir /a\nmkdir /a/b\ncreate /a/b/f\nwrite /a/b/f 0 10000 5\n"
			 "link /a/b/f /a/g\nlink /a/b/f /top\nsetxattr /a/g user.x one\nsetxattr /a/g user.x two\n"
			 "symlink /a/b/f /a/s\ncommit\n"
			 "rename /a/b /c\nrename /top /a/g\nunlink /a/g\ncreate /c/other\nrename /c/other /c/f\n"
			 "create /d_{1..500}\nunlink /d_{1..499}\n",
			 &res, &err);
	if (ret)
		printf("  %s\n", err.msg);
	CHECK(ret == 0);
	struct btrfs_fs_info *fs = res.fs;
	u64 ino;
	struct btrfs_inode in;
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/c/f", &ino) == 0);
	CHECK(btrfs_read_inode(fs, fs->fs_root, ino, &in) == 0);
	CHECK_EQ_U64(in.size, 0); /* /c/other replaced the linked file */
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/a/g", &ino) == BLAB_ENOENT);
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/d_500", &ino) == 0);
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/d_499", &ino) == BLAB_ENOENT);
	CHECK(btrfs_lookup_path(fs, fs->fs_root, "/a", &ino) == 0);
	CHECK(btrfs_read_inode(fs, fs->fs_root, ino, &in) == 0);
	CHECK_EQ_U64(in.size, 2 * 1); /* only "s" is left in /a */
	CHECK_EQ_U64(test_check_problems(fs), 0);
	btrfs_fs_free(fs);
}
