/* Corrupt input never crashes the core. Seeded: bytes of tree blocks are
 * damaged and their checksums recomputed (so the damage reaches the
 * parsers), then the image is opened, checked, listed and read. Every
 * outcome is allowed except a crash; under ASan/UBSan any bad access fails. */
#include "../../src/check.h"
#include "../../src/crc32c.h"
#include "../../src/ctree.h"
#include "../../src/disk-io.h"
#include "../../src/file.h"
#include "../../src/inode.h"
#include "../../src/scenario.h"
#include "test.h"
#include <stdlib.h>

static u64 fz;

/* 300 rounds in the suite; BTRFSLAB_FUZZ_ROUNDS for a longer soak. */
static int fuzz_rounds(void)
{
	const char *e = getenv("BTRFSLAB_FUZZ_ROUNDS");
	return e ? atoi(e) : 300;
}

struct walk_ctx {
	struct btrfs_fs_info *fs;
	int depth;
	u8 buf[8192];
};

static int walk_entry(void *ctx, const char *name, u16 len, u64 ino, u8 type)
{
	struct walk_ctx *w = ctx;
	(void)name;
	(void)len;
	struct btrfs_inode in;
	if (btrfs_read_inode(w->fs, w->fs->fs_root, ino, &in))
		return 0;
	u64 got;
	if ((in.mode & S_IFMT_) == S_IFREG_)
		btrfs_file_read(w->fs, w->fs->fs_root, ino, 0, w->buf, sizeof(w->buf), &got, 1);
	if (type == BTRFS_FT_DIR && w->depth < 32) {
		w->depth++;
		btrfs_readdir(w->fs, w->fs->fs_root, ino, walk_entry, w);
		w->depth--;
	}
	return 0;
}

TEST(fuzz_damaged_tree_blocks_never_crash)
{
	const char *script = "mkfs nodesize=4K size=64M\nmkdir /d\ncreate /d/f_{1..200}\nwrite /d/f_3 0 9000 2\n"
			     "write /d/f_4 0 100 3\nsymlink /x /d/l\nsetxattr /d/f_5 user.a b\nlink /d/f_3 /h\n";
	struct scenario_options o = {.seed = 1, .now = 1};
	struct scenario_result res;
	struct blab_err err = {0};
	CHECK(scenario_run(script, strlen(script), "fuzz", &o, &res, &err) == 0);
	struct btrfs_fs_info *base = res.fs;
	/* the metadata blocks to damage: every tree block of every tree */
	u64 blocks[512];
	int nblocks = 0;
	for (size_t h = 0; h < EB_HASH_SIZE; h++)
		for (struct extent_buffer *eb = base->eb_hash[h]; eb && nblocks < 512; eb = eb->hnext)
			blocks[nblocks++] = eb->start;
	CHECK(nblocks > 10);
	u64 seed = getenv("BTRFSLAB_FUZZ_SEED") ? strtoull(getenv("BTRFSLAB_FUZZ_SEED"), NULL, 10) : 20261122;
	printf("  seed %llu, %d tree blocks\n", (unsigned long long)seed, nblocks);
	fz = seed;
	int opened = 0, refused = 0;
	struct walk_ctx *w = malloc(sizeof(*w));
	for (int iter = 0; iter < fuzz_rounds(); iter++) {
		struct blab_device d;
		CHECK(test_copy_device(&base->dev, &d) == 0);
		if (iter % 4 == 3) {
			/* the superblock: pointers, sizes, the system chunk array */
			u8 sb[BTRFS_SUPER_INFO_SIZE];
			device_read(&d, BTRFS_SUPER_INFO_OFFSET, sb, sizeof(sb));
			int n = 1 + (int)(test_rand(&fz) % 6);
			for (int i = 0; i < n; i++) {
				u32 pos = test_rand(&fz) % 2 ? 0x48 + (u32)(test_rand(&fz) % (0xc9 - 0x48)) : BTRFS_SUPER_SYS_ARRAY_OFF + (u32)(test_rand(&fz) % 200);
				sb[pos] ^= (u8)(1u << (test_rand(&fz) % 8));
			}
			put_le32(sb, crc32c(sb + 32, sizeof(sb) - 32));
			device_write(&d, BTRFS_SUPER_INFO_OFFSET, sb, sizeof(sb));
			struct blab_err e3 = {0};
			struct btrfs_fs_info *f2 = btrfs_open(&d, &e3);
			if (f2) {
				opened++;
				f2->trace.enabled = 0;
				struct strbuf o2 = {0};
				btrfs_check_fs(f2, &o2, CHECK_DATA_CSUM);
				sb_free(&o2);
				btrfs_fs_free(f2);
			} else {
				refused++;
				CHECK(e3.msg[0] != 0);
			}
			continue;
		}
		u64 b = blocks[test_rand(&fz) % (u64)nblocks];
		u8 blk[4096];
		device_read(&d, b, blk, sizeof(blk));
		int flips = 1 + (int)(test_rand(&fz) % 8);
		for (int i = 0; i < flips; i++) {
			u32 pos = 32 + (u32)(test_rand(&fz) % (4096 - 32));
			if (test_rand(&fz) % 3 == 0)
				pos = 96 + (u32)(test_rand(&fz) % 400); /* header fields and item headers */
			blk[pos] ^= (u8)(1u << (test_rand(&fz) % 8));
		}
		put_le32(blk, crc32c(blk + 32, 4096 - 32));
		device_write(&d, b, blk, sizeof(blk));
		struct blab_err e2 = {0};
		struct btrfs_fs_info *fs = btrfs_open(&d, &e2);
		if (!fs) {
			refused++;
			CHECK(e2.msg[0] != 0);
			continue;
		}
		opened++;
		fs->trace.enabled = 0;
		struct strbuf out = {0};
		btrfs_check_fs(fs, &out, CHECK_DATA_CSUM);
		sb_free(&out);
		w->fs = fs;
		w->depth = 0;
		btrfs_readdir(fs, fs->fs_root, BTRFS_FIRST_FREE_OBJECTID, walk_entry, w);
		struct strbuf dump = {0};
		btrfs_dump_tree_text(fs, 0, &dump);
		sb_free(&dump);
		btrfs_fs_free(fs);
	}
	free(w);
	printf("  %d damaged images opened and walked, %d refused with a message\n", opened, refused);
	btrfs_fs_free(base);
}
