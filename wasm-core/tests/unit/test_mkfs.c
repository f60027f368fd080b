/* mkfs: the image it makes reads back through the core's own reader, is
 * deterministic for a seed, and bad options are refused with clear errors. */
#include "../../src/block-group.h"
#include "../../src/crc32c.h"
#include "../../src/ctree.h"
#include "../../src/disk-io.h"
#include "../../src/mkfs.h"
#include "../../src/print-tree.h"
#include "test.h"
#include <stdlib.h>

static struct btrfs_fs_info *make(u32 nodesize, u64 size)
{
	struct mkfs_options o;
	struct btrfs_fs_info *fs = NULL;
	struct blab_err err = {0};
	btrfs_mkfs_defaults(&o);
	o.nodesize = nodesize;
	o.size = size;
	o.seed = 42;
	o.now = 1700000000;
	o.label = "unit";
	if (btrfs_mkfs(&o, &fs, &err))
		printf("  mkfs: %s\n", err.msg);
	return fs;
}

/* Reopens fs's device bytes as a fresh filesystem (the reader's view). */
static struct btrfs_fs_info *reopen(struct btrfs_fs_info *fs, struct blab_err *err)
{
	struct blab_device d;
	return test_copy_device(&fs->dev, &d) ? NULL : btrfs_open(&d, err);
}

static u32 image_crc(struct btrfs_fs_info *fs)
{
	u32 c = ~0u;
	const u8 *pg;
	for (u64 i = 0; device_next_page(&fs->dev, &i, &pg) > 0; i++)
		c = crc32c_raw(crc32c_raw(c, &i, sizeof(i)), pg, DEVICE_PAGE_SIZE);
	return ~c;
}

TEST(mkfs_reads_back_at_every_nodesize)
{
	static const u32 sizes[] = {4096, 8192, 16384, 32768, 65536};
	for (int i = 0; i < 5; i++) {
		struct btrfs_fs_info *fs = make(sizes[i], 128ULL << 20);
		CHECK(fs);
		struct blab_err err = {0};
		struct btrfs_fs_info *r = reopen(fs, &err);
		if (!r)
			printf("  reopen: %s\n", err.msg);
		CHECK(r);
		CHECK_EQ_U64(r->nodesize, sizes[i]);
		CHECK(r->fs_root && r->extent_root && r->csum_root && r->dev_root && r->fst_root && r->data_reloc_root);
		u8 *p;
		u32 sz;
		struct btrfs_key k = {256, BTRFS_INODE_ITEM_KEY, 0};
		CHECK(btrfs_lookup_item(r, r->fs_root, &k, &p, &sz, 0) == 0);
		CHECK_EQ_U64(btrfs_inode_mode(p), 040755);
		CHECK_EQ_U64(btrfs_inode_nlink(p), 1);
		btrfs_fs_free(r);
		btrfs_fs_free(fs);
	}
}

TEST(mkfs_is_deterministic_for_a_seed)
{
	struct btrfs_fs_info *a = make(16384, 64ULL << 20), *b = make(16384, 64ULL << 20);
	CHECK(a && b);
	CHECK_EQ_U64(image_crc(a), image_crc(b));
	btrfs_fs_free(a);
	btrfs_fs_free(b);
}

TEST(mkfs_accounts_every_tree_block)
{
	struct btrfs_fs_info *fs = make(16384, 256ULL << 20);
	CHECK(fs);
	/* 9 trees of one leaf each: root, chunk, extent, dev, fs, csum, uuid, free space, data reloc */
	u64 used = 0;
	for (size_t i = 0; i < fs->nbgs; i++)
		used += fs->bgs[i].used;
	CHECK_EQ_U64(used, 9 * 16384);
	CHECK_EQ_U64(btrfs_super_bytes_used(fs->super), 9 * 16384);
	int metadata_items = 0;
	struct extent_buffer *leaf = fs->extent_root->node;
	for (u32 i = 0; i < btrfs_nritems(leaf); i++) {
		struct btrfs_key k;
		btrfs_item_key(leaf, (int)i, &k);
		if (k.type == BTRFS_METADATA_ITEM_KEY)
			metadata_items++;
	}
	CHECK_EQ_U64(metadata_items, 9);
	btrfs_fs_free(fs);
}

TEST(mkfs_refuses_bad_options)
{
	struct mkfs_options o;
	struct btrfs_fs_info *fs = NULL;
	struct blab_err err = {0};
	btrfs_mkfs_defaults(&o);
	o.size = 1 << 20;
	CHECK(btrfs_mkfs(&o, &fs, &err) == BLAB_ETOOSMALL);
	CHECK_STR_CONTAINS(err.msg, "minimum is 25165824 bytes");
	btrfs_mkfs_defaults(&o);
	o.nodesize = 12288;
	CHECK(btrfs_mkfs(&o, &fs, &err) == BLAB_EINVAL);
	CHECK_STR_CONTAINS(err.msg, "nodesize 12288");
	btrfs_mkfs_defaults(&o);
	char label[300];
	memset(label, 'a', sizeof(label) - 1);
	label[299] = 0;
	o.label = label;
	CHECK(btrfs_mkfs(&o, &fs, &err) == BLAB_EINVAL);
	CHECK_STR_CONTAINS(err.msg, "label");
	CHECK(fs == NULL);
}

TEST(dump_tree_text_lists_every_tree)
{
	struct btrfs_fs_info *fs = make(16384, 256ULL << 20);
	CHECK(fs);
	struct strbuf out = {0};
	CHECK(btrfs_dump_tree_text(fs, 0, &out) == 0);
	CHECK_STR_CONTAINS(out.s, "root tree\nleaf ");
	CHECK_STR_CONTAINS(out.s, "chunk tree\n");
	CHECK_STR_CONTAINS(out.s, "fs tree key (FS_TREE ROOT_ITEM 0) \n");
	CHECK_STR_CONTAINS(out.s, "data reloc tree key (DATA_RELOC_TREE ROOT_ITEM 0) \n");
	CHECK_STR_CONTAINS(out.s, "key (ROOT_TREE_DIR DIR_ITEM 2378154706)");
	CHECK_STR_CONTAINS(out.s, "key (FIRST_CHUNK_TREE CHUNK_ITEM 1048576) itemoff");
	CHECK_STR_CONTAINS(out.s, "bytes used 147456\n");
	sb_free(&out);
	CHECK(btrfs_dump_tree_json(fs, &out) == 0);
	CHECK_STR_CONTAINS(out.s, "\"name\":\"fs\"");
	sb_free(&out);
	btrfs_fs_free(fs);
}

TEST(trace_records_mkfs_steps)
{
	struct btrfs_fs_info *fs = make(16384, 256ULL << 20);
	CHECK(fs);
	int allocs = 0, chunks = 0, commits = 0, supers = 0;
	for (size_t i = 0; i < fs->trace.len; i++) {
		switch (fs->trace.ev[i].kind) {
		case TRACE_BLOCK_ALLOC: allocs++; break;
		case TRACE_CHUNK_ALLOC: chunks++; break;
		case TRACE_COMMIT: commits++; break;
		case TRACE_SUPER_WRITE: supers++; break;
		default: break;
		}
	}
	CHECK_EQ_U64(allocs, 9);
	CHECK_EQ_U64(chunks, 3);
	CHECK_EQ_U64(commits, 1);
	CHECK_EQ_U64(supers, 2); /* 64 KiB and 64 MiB; 256 GiB does not fit */
	btrfs_fs_free(fs);
}
