#include "space-info.h"
#include "splitmix.h"
#include "mkfs.h"
#include "inode.h"
#include "crc32c.h"
#include "ctree.h"
#include "extent-tree.h"
#include "transaction.h"
#include "volumes.h"
#include <stdio.h>
#include <string.h>

#define MiB (1024ULL * 1024)

u64 btrfs_mkfs_min_size(u32 nodesize)
{
	/* The first MiB, 4 MiB system, 8 MiB metadata and 8 MiB data chunks
	 * need 21 MiB; the kernel's metadata reservations need room for another
	 * metadata chunk, which grows with the nodesize (measured: 50 small
	 * files fail with ENOSPC at 24 MiB with 32K nodes and 48 MiB with 64K). */
	u64 min = 24 * MiB, by_node = (u64)nodesize * 1024;
	return by_node > min ? by_node : min;
}

void btrfs_mkfs_defaults(struct mkfs_options *o)
{
	memset(o, 0, sizeof(*o));
	o->size = 256 * MiB;
	o->nodesize = 16384;
	o->sectorsize = 4096;
}

void btrfs_make_uuid(u64 *state, u8 out[16])
{
	put_le64(out, splitmix64(state));
	put_le64(out + 8, splitmix64(state));
	out[6] = (u8)((out[6] & 0x0f) | 0x40); /* version 4 */
	out[8] = (u8)((out[8] & 0x3f) | 0x80); /* RFC 4122 variant */
}

static struct btrfs_root *create_tree(struct btrfs_fs_info *fs, u64 objectid, int in_root_tree)
{
	struct btrfs_root *r = btrfs_add_root(fs, objectid);
	if (!r)
		return NULL;
	r->in_root_tree = in_root_tree;
	if (!(r->node = btrfs_alloc_tree_block(fs, objectid, 0)))
		return NULL;
	u8 *it = r->item;
	btrfs_set_inode_generation(it, 1);
	btrfs_set_inode_size(it, 3);
	btrfs_set_inode_nlink(it, 1);
	btrfs_set_inode_nbytes(it, fs->nodesize);
	btrfs_set_inode_mode(it, 040755);
	btrfs_set_root_refs(it, 1);
	if (objectid == BTRFS_FS_TREE_OBJECTID || objectid == BTRFS_DATA_RELOC_TREE_OBJECTID)
		btrfs_set_root_dirid(it, BTRFS_FIRST_FREE_OBJECTID);
	return r;
}

static int fail_mkfs(struct btrfs_fs_info *fs, struct blab_err *err)
{
	if (err)
		*err = fs->err;
	int code = fs->err.code ? fs->err.code : BLAB_EINVAL;
	btrfs_fs_free(fs);
	return code;
}

int btrfs_mkfs(const struct mkfs_options *o, struct btrfs_fs_info **out, struct blab_err *err)
{
	u32 ns = o->nodesize;
	if (o->sectorsize != 4096)
		return blab_fail(err, BLAB_EINVAL, "sectorsize %u is not supported: use 4096", o->sectorsize);
	if (ns < 4096 || ns > 65536 || (ns & (ns - 1)))
		return blab_fail(err, BLAB_EINVAL, "nodesize %u is invalid: use a power of two from 4096 to 65536", ns);
	if (ns < o->sectorsize)
		return blab_fail(err, BLAB_EINVAL, "nodesize %u is smaller than sectorsize %u", ns, o->sectorsize);
	if (o->label && strlen(o->label) >= BTRFS_LABEL_SIZE)
		return blab_fail(err, BLAB_EINVAL, "label is %zu bytes: at most %d", strlen(o->label), BTRFS_LABEL_SIZE - 1);
	u64 min = btrfs_mkfs_min_size(ns);
	if (o->size < min)
		return blab_fail(err, BLAB_ETOOSMALL, "size %llu bytes is too small: the minimum is %llu bytes (%llu MiB)",
				 (unsigned long long)o->size, (unsigned long long)min, (unsigned long long)(min / MiB));
	u64 size = o->size / o->sectorsize * o->sectorsize;

	struct btrfs_fs_info *fs = btrfs_fs_alloc();
	if (!fs)
		return blab_fail(err, BLAB_ENOMEM, "mkfs");
	if (o->device) {
		fs->dev = *o->device;
		memset(o->device, 0, sizeof(*o->device));
		size = fs->dev.size;
	} else if (device_init(&fs->dev, size)) {
		blab_fail(&fs->err, BLAB_ENOMEM, "device of %llu bytes", (unsigned long long)size);
		return fail_mkfs(fs, err);
	}
	fs->nodesize = ns;
	fs->meta_chunk = o->meta_chunk;
	fs->sectorsize = o->sectorsize;
	fs->bg_loaded = 1; /* block groups are made here, not read */
	fs->now = o->now;
	u64 rng = o->seed;
	u8 fs_tree_uuid[16];
	btrfs_make_uuid(&rng, fs->fsid);
	btrfs_make_uuid(&rng, fs->chunk_tree_uuid);
	btrfs_make_uuid(&rng, fs->dev_uuid);
	btrfs_make_uuid(&rng, fs_tree_uuid);

	u8 *s = fs->super;
	memcpy(s + BTRFS_SUPER_FSID_OFF, fs->fsid, BTRFS_FSID_SIZE);
	btrfs_set_super_magic(s, BTRFS_MAGIC);
	btrfs_set_super_total_bytes(s, size);
	btrfs_set_super_root_dir_objectid(s, BTRFS_ROOT_TREE_DIR_OBJECTID);
	btrfs_set_super_num_devices(s, 1);
	btrfs_set_super_sectorsize(s, o->sectorsize);
	btrfs_set_super_nodesize(s, ns);
	btrfs_set_super_leafsize(s, ns);
	btrfs_set_super_stripesize(s, o->sectorsize);
	btrfs_set_super_compat_ro_flags(s, BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE | BTRFS_FEATURE_COMPAT_RO_FREE_SPACE_TREE_VALID);
	btrfs_set_super_incompat_flags(s, BTRFS_FEATURE_INCOMPAT_MIXED_BACKREF | BTRFS_FEATURE_INCOMPAT_EXTENDED_IREF |
					      BTRFS_FEATURE_INCOMPAT_SKINNY_METADATA | BTRFS_FEATURE_INCOMPAT_NO_HOLES |
					      (ns > 4096 ? BTRFS_FEATURE_INCOMPAT_BIG_METADATA : 0));
	btrfs_set_super_csum_type(s, BTRFS_CSUM_TYPE_CRC32);
	if (o->label)
		memcpy(s + BTRFS_SUPER_LABEL_OFF, o->label, strlen(o->label));
	u8 *dev = s + BTRFS_SUPER_DEV_ITEM_OFF;
	btrfs_set_dev_devid(dev, 1);
	btrfs_set_dev_total_bytes(dev, size);
	btrfs_set_dev_io_align(dev, o->sectorsize);
	btrfs_set_dev_io_width(dev, o->sectorsize);
	btrfs_set_dev_sector_size(dev, o->sectorsize);
	memcpy(dev + BTRFS_DEV_UUID_OFF, fs->dev_uuid, BTRFS_UUID_SIZE);
	memcpy(dev + BTRFS_DEV_FSID_OFF, fs->fsid, BTRFS_FSID_SIZE);

	btrfs_start_transaction(fs);
	u64 logical;
	static const u64 types[] = {BTRFS_BLOCK_GROUP_SYSTEM, BTRFS_BLOCK_GROUP_METADATA, BTRFS_BLOCK_GROUP_DATA};
	for (int i = 0; i < 3; i++) {
		if (btrfs_alloc_chunk(fs, types[i], btrfs_chunk_size_for(fs, types[i]), &logical))
			return fail_mkfs(fs, err);
	}

	if (!(fs->tree_root = create_tree(fs, BTRFS_ROOT_TREE_OBJECTID, 0)) ||
	    !(fs->chunk_root = create_tree(fs, BTRFS_CHUNK_TREE_OBJECTID, 0)) ||
	    !(fs->extent_root = create_tree(fs, BTRFS_EXTENT_TREE_OBJECTID, 1)) ||
	    !(fs->dev_root = create_tree(fs, BTRFS_DEV_TREE_OBJECTID, 1)) ||
	    !(fs->fs_root = create_tree(fs, BTRFS_FS_TREE_OBJECTID, 1)) ||
	    !(fs->csum_root = create_tree(fs, BTRFS_CSUM_TREE_OBJECTID, 1)) ||
	    !(fs->uuid_root = create_tree(fs, BTRFS_UUID_TREE_OBJECTID, 1)) ||
	    !(fs->fst_root = create_tree(fs, BTRFS_FREE_SPACE_TREE_OBJECTID, 1)) ||
	    !(fs->data_reloc_root = create_tree(fs, BTRFS_DATA_RELOC_TREE_OBJECTID, 1)))
		return fail_mkfs(fs, err);

	/* The fs tree is a subvolume: it has a UUID and creation times. */
	memcpy(fs->fs_root->item + BTRFS_ROOT_UUID_OFF, fs_tree_uuid, BTRFS_UUID_SIZE);
	btrfs_set_timespec_sec(fs->fs_root->item + BTRFS_ROOT_CTIME_OFF, fs->now);
	btrfs_set_timespec_sec(fs->fs_root->item + BTRFS_ROOT_OTIME_OFF, fs->now);

	/* The root tree directory (6) names the default subvolume. */
	if (btrfs_make_root_dir(fs, fs->tree_root, BTRFS_ROOT_TREE_DIR_OBJECTID, ns, 0, NULL))
		return fail_mkfs(fs, err);
	const char *def = "default";
	u8 di[BTRFS_DIR_ITEM_SIZE + 7] = {0};
	btrfs_cpu_key_to_disk(di, &(struct btrfs_key){BTRFS_FS_TREE_OBJECTID, BTRFS_ROOT_ITEM_KEY, (u64)-1});
	btrfs_set_dir_name_len(di, 7);
	btrfs_set_dir_type(di, BTRFS_FT_DIR);
	memcpy(di + BTRFS_DIR_ITEM_SIZE, def, 7);
	struct btrfs_key key = {BTRFS_ROOT_TREE_DIR_OBJECTID, BTRFS_DIR_ITEM_KEY, btrfs_name_hash(def, 7)};
	if (btrfs_insert_item(fs, fs->tree_root, &key, di, sizeof(di)))
		return fail_mkfs(fs, err);
	u8 ref[BTRFS_INODE_REF_SIZE + 7];
	btrfs_set_inode_ref_index(ref, 0);
	btrfs_set_inode_ref_name_len(ref, 7);
	memcpy(ref + BTRFS_INODE_REF_SIZE, def, 7);
	key = (struct btrfs_key){BTRFS_FS_TREE_OBJECTID, BTRFS_INODE_REF_KEY, BTRFS_ROOT_TREE_DIR_OBJECTID};
	if (btrfs_insert_item(fs, fs->tree_root, &key, ref, sizeof(ref)))
		return fail_mkfs(fs, err);

	if (btrfs_make_root_dir(fs, fs->fs_root, BTRFS_FIRST_FREE_OBJECTID, ns, 0, NULL) ||
	    btrfs_make_root_dir(fs, fs->data_reloc_root, BTRFS_FIRST_FREE_OBJECTID, 0, 0, NULL))
		return fail_mkfs(fs, err);

	u8 subvol[8];
	put_le64(subvol, BTRFS_FS_TREE_OBJECTID);
	key = (struct btrfs_key){get_le64(fs_tree_uuid), BTRFS_UUID_KEY_SUBVOL, get_le64(fs_tree_uuid + 8)};
	if (btrfs_insert_item(fs, fs->uuid_root, &key, subvol, sizeof(subvol)))
		return fail_mkfs(fs, err);

	if (btrfs_commit_transaction(fs))
		return fail_mkfs(fs, err);
	btrfs_space_update_global_rsv(fs);
	*out = fs;
	return 0;
}
