/* Corrupt input gets a clear error, never an abort. */
#include "../../src/disk-io.h"
#include "../../src/tree-checker.h"
#include "../../src/mkfs.h"
#include "test.h"

static struct btrfs_fs_info *fresh(void)
{
	struct mkfs_options o;
	struct btrfs_fs_info *fs = NULL;
	struct blab_err err = {0};
	btrfs_mkfs_defaults(&o);
	o.size = 64ULL << 20;
	o.seed = 7;
	btrfs_mkfs(&o, &fs, &err);
	return fs;
}

/* Takes fs's device away and opens it; fs is freed. */
static struct btrfs_fs_info *open_dev_of(struct btrfs_fs_info *fs, struct blab_err *err)
{
	struct blab_device d = fs->dev;
	memset(&fs->dev, 0, sizeof(fs->dev));
	btrfs_fs_free(fs);
	return btrfs_open(&d, err);
}

TEST(corrupt_bit_flip_in_tree_block)
{
	struct btrfs_fs_info *fs = fresh();
	CHECK(fs);
	u64 root = fs->tree_root->node->start; /* logical == physical in our layout */
	u8 b;
	device_read(&fs->dev, root + 200, &b, 1);
	b ^= 0x10;
	device_write(&fs->dev, root + 200, &b, 1);
	struct blab_err err = {0};
	CHECK(open_dev_of(fs, &err) == NULL);
	CHECK_EQ_U64(err.code, BLAB_ECORRUPT);
	CHECK_STR_CONTAINS(err.msg, "checksum verify failed on logical");
}

TEST(corrupt_superblock_magic_and_csum)
{
	struct btrfs_fs_info *fs = fresh();
	CHECK(fs);
	device_write(&fs->dev, BTRFS_SUPER_INFO_OFFSET + 0x40, "XXXX", 4);
	struct blab_err err = {0};
	CHECK(open_dev_of(fs, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "no btrfs magic");
	fs = fresh();
	CHECK(fs);
	device_write(&fs->dev, BTRFS_SUPER_INFO_OFFSET + 0x100, "\x01", 1);
	CHECK(open_dev_of(fs, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "superblock checksum mismatch");
}

TEST(corrupt_truncated_image)
{
	struct blab_device d;
	CHECK(device_init(&d, 32768) == 0);
	struct blab_err err = {0};
	CHECK(btrfs_open(&d, &err) == NULL);
	CHECK_STR_CONTAINS(err.msg, "too small to hold a superblock");
}

TEST(tree_checker_key_order)
{
	struct btrfs_fs_info *fs = fresh();
	CHECK(fs);
	struct extent_buffer *leaf = fs->fs_root->node;
	/* swap the two item keys of the fs tree leaf (INODE_ITEM, INODE_REF) */
	u8 k0[17], k1[17];
	memcpy(k0, leaf->data + BTRFS_HEADER_SIZE, 17);
	memcpy(k1, leaf->data + BTRFS_HEADER_SIZE + BTRFS_ITEM_SIZE, 17);
	memcpy(leaf->data + BTRFS_HEADER_SIZE, k1, 17);
	memcpy(leaf->data + BTRFS_HEADER_SIZE + BTRFS_ITEM_SIZE, k0, 17);
	CHECK(btrfs_check_block(fs, leaf, 5) == BLAB_ECORRUPT);
	CHECK_STR_CONTAINS(fs->err.msg, "corrupt leaf: root=5 block=");
	CHECK_STR_CONTAINS(fs->err.msg, "slot=1, key out of order, have (256 1 0) expect > (256 12 256)");
	btrfs_fs_free(fs);
}

TEST(tree_checker_overlapping_items)
{
	struct btrfs_fs_info *fs = fresh();
	CHECK(fs);
	struct extent_buffer *leaf = fs->fs_root->node;
	u8 *it1 = leaf->data + BTRFS_HEADER_SIZE + BTRFS_ITEM_SIZE;
	btrfs_set_item_offset(it1, btrfs_item_offset(it1) + 4);
	CHECK(btrfs_check_block(fs, leaf, 5) == BLAB_ECORRUPT);
	CHECK_STR_CONTAINS(fs->err.msg, "slot=1, unexpected item end");
	btrfs_fs_free(fs);
}
