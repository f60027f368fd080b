/* The on-disk format primitives: crc32c, name hashes, accessors, keys. */
#include "../../src/crc32c.h"
#include "../../src/ondisk.h"
#include "test.h"

TEST(crc32c_known_vectors)
{
	CHECK_EQ_U64(crc32c("123456789", 9), 0xE3069283u);
	CHECK_EQ_U64(crc32c("", 0), 0);
	/* unaligned start and a length that is not a multiple of 8 */
	char buf[40] = "x123456789abcdefghijklmnopqrstuvwxyz";
	CHECK_EQ_U64(crc32c(buf + 1, 9), 0xE3069283u);
}

TEST(name_hash_matches_mkfs_btrfs)
{
	/* mkfs.btrfs 6.2 stores "default" under (ROOT_TREE_DIR DIR_ITEM 2378154706) */
	CHECK_EQ_U64(btrfs_name_hash("default", 7), 2378154706u);
}

TEST(little_endian_accessors)
{
	u8 b[16] = {0};
	put_le64(b, 0x0102030405060708ULL);
	CHECK_EQ_U64(b[0], 8);
	CHECK_EQ_U64(b[7], 1);
	CHECK_EQ_U64(get_le64(b), 0x0102030405060708ULL);
	put_le16(b + 8, 0xBEEF);
	CHECK_EQ_U64(get_le16(b + 8), 0xBEEF);
	u8 sb[4096] = {0};
	btrfs_set_super_magic(sb, BTRFS_MAGIC);
	CHECK(memcmp(sb + 0x40, "_BHRfS_M", 8) == 0);
}

TEST(superblock_layout_offsets)
{
	CHECK_EQ_U64(BTRFS_SUPER_SYS_ARRAY_OFF + BTRFS_SYSTEM_CHUNK_ARRAY_SIZE, BTRFS_SUPER_ROOTS_OFF);
	CHECK_EQ_U64(BTRFS_SUPER_ROOTS_OFF + 4 * BTRFS_ROOT_BACKUP_SIZE + 565, BTRFS_SUPER_INFO_SIZE);
	CHECK_EQ_U64(BTRFS_SUPER_DEV_ITEM_OFF + BTRFS_DEV_ITEM_SIZE, BTRFS_SUPER_LABEL_OFF);
	CHECK_EQ_U64(btrfs_sb_offset(1), 64ULL << 20);
	CHECK_EQ_U64(btrfs_sb_offset(2), 256ULL << 30);
}

TEST(key_order)
{
	struct btrfs_key a = {256, BTRFS_INODE_ITEM_KEY, 0}, b = {256, BTRFS_INODE_REF_KEY, 0}, c = {257, 0, 0};
	CHECK(btrfs_comp_keys(&a, &b) < 0);
	CHECK(btrfs_comp_keys(&b, &c) < 0);
	CHECK(btrfs_comp_keys(&c, &a) > 0);
	CHECK(btrfs_comp_keys(&a, &a) == 0);
	u8 dk[17];
	struct btrfs_key r;
	btrfs_cpu_key_to_disk(dk, &b);
	btrfs_disk_key_to_cpu(&r, dk);
	CHECK(btrfs_comp_keys(&r, &b) == 0);
}
