/* space-info.c — space_infos and their reservation rules: see space-info.h. */
#include "space-info.h"
#include "delalloc-int.h"
#include "ordered-data.h"
#include "extent-tree.h"
#include <stdio.h>
#include <string.h>

const char *const btrfs_space_kind_names[SPACE_KINDS] = {"data", "metadata", "system"};
const char *const btrfs_flush_state_names[FLUSH_STATES] = {
	"NONE",		     "FLUSH_DELAYED_ITEMS_NR", "FLUSH_DELAYED_ITEMS", "FLUSH_DELAYED_REFS_NR",
	"FLUSH_DELAYED_REFS", "FLUSH_DELALLOC",	       "FLUSH_DELALLOC_WAIT", "FLUSH_DELALLOC_FULL",
	"ALLOC_CHUNK",	     "ALLOC_CHUNK_FORCE",      "RUN_DELAYED_IPUTS",   "COMMIT_TRANS"};

static const u64 kind_flags[SPACE_KINDS] = {BTRFS_BLOCK_GROUP_DATA, BTRFS_BLOCK_GROUP_METADATA, BTRFS_BLOCK_GROUP_SYSTEM};

#define MAX_LEVEL 8                          /* BTRFS_MAX_LEVEL */
#define MAX_EXTENT_SIZE (128ULL << 20)       /* BTRFS_MAX_EXTENT_SIZE */
#define GLOBAL_RSV_MAX (512ULL << 20)

u64 btrfs_calc_insert_metadata_size(const struct btrfs_fs_info *fs, u64 items) { return (u64)fs->nodesize * MAX_LEVEL * 2 * items; }
u64 btrfs_calc_metadata_size(const struct btrfs_fs_info *fs, u64 items) { return (u64)fs->nodesize * MAX_LEVEL * items; }

static u64 unallocated(const struct btrfs_fs_info *fs)
{
	u64 held = 1024 * 1024; /* the first MiB is never allocated */
	for (size_t i = 0; i < fs->nchunks; i++)
		held += fs->chunks[i].length * (fs->chunks[i].num_stripes ? fs->chunks[i].num_stripes : 1);
	return fs->dev.size > held ? fs->dev.size - held : 0;
}

void btrfs_space_info_get(const struct btrfs_fs_info *fs, int kind, struct btrfs_space_info *out)
{
	memset(out, 0, sizeof(*out));
	out->flags = kind_flags[kind];
	for (size_t b = 0; b < fs->nbgs; b++) {
		const struct btrfs_block_group *bg = &fs->bgs[b];
		if ((bg->flags & BTRFS_BLOCK_GROUP_TYPE_MASK) != kind_flags[kind])
			continue;
		out->total += bg->length;
		out->used += bg->used;
		out->pinned += bg->pinned;
		out->flags |= bg->flags & ~BTRFS_BLOCK_GROUP_TYPE_MASK;
	}
	/* the model counts an extent used from its allocation: the part still reserved is not */
	out->reserved = fs->space.reserved[kind];
	out->used = out->used > out->reserved ? out->used - out->reserved : 0;
	out->may_use = fs->space.may_use[kind];
	out->unallocated = unallocated(fs);
}

u64 btrfs_space_used_all(const struct btrfs_space_info *si)
{
	return si->used + si->reserved + si->pinned + si->may_use + si->readonly;
}

/* calc_available_free_space: the unallocated space a metadata reservation
 * may count on (per copy: DUP halves it), less one data chunk's worth (6.7+:
 * min(the data chunk size, 10% of the device, 1 GiB)), then 1/8 of it when
 * the reserver can flush everything, else 1/2. */
static u64 overcommit_avail(const struct btrfs_fs_info *fs, const struct btrfs_space_info *si, int flush)
{
	u64 avail = si->unallocated;
	if (si->flags & BTRFS_BLOCK_GROUP_DUP)
		avail /= 2;
	u64 data_chunk = btrfs_chunk_size_for((struct btrfs_fs_info *)fs, BTRFS_BLOCK_GROUP_DATA);
	if (data_chunk > fs->dev.size / 10)
		data_chunk = fs->dev.size / 10;
	if (data_chunk > (1ULL << 30))
		data_chunk = 1ULL << 30;
	if (avail <= data_chunk)
		return 0;
	avail -= data_chunk;
	return flush == RESERVE_FLUSH_ALL ? avail >> 3 : avail >> 1;
}

int btrfs_space_fits(const struct btrfs_fs_info *fs, int kind, u64 bytes, int flush)
{
	struct btrfs_space_info si;
	btrfs_space_info_get(fs, kind, &si);
	u64 used = btrfs_space_used_all(&si);
	if (used + bytes <= si.total)
		return 1;
	/* data never overcommits */
	return kind != SPACE_DATA && used + bytes < si.total + overcommit_avail(fs, &si, flush);
}

u64 btrfs_space_overage(const struct btrfs_fs_info *fs, int kind)
{
	if (kind == SPACE_DATA)
		return 0;
	struct btrfs_space_info si;
	btrfs_space_info_get(fs, kind, &si);
	u64 used = btrfs_space_used_all(&si), limit = si.total + overcommit_avail(fs, &si, RESERVE_FLUSH_ALL);
	return used > limit ? used - limit : 0;
}

u64 btrfs_calc_delayed_ref_bytes(const struct btrfs_fs_info *fs, u64 n)
{
	u64 bytes = btrfs_calc_insert_metadata_size(fs, n);
	return fs->space.rules == SPACE_RULES_6_18 && fs->fst_root ? 2 * bytes : bytes;
}

u64 btrfs_space_trans_bytes(const struct btrfs_fs_info *fs, u64 items)
{
	u64 bytes = btrfs_calc_insert_metadata_size(fs, items);
	if (fs->space.rules == SPACE_RULES_6_18)
		return bytes + btrfs_calc_delayed_ref_bytes(fs, items);
	return btrfs_space_delayed_refs_full(fs) ? bytes : 2 * bytes;
}

u64 btrfs_space_delayed_refs_pending(const struct btrfs_fs_info *fs)
{
	u64 heads = fs->delayed_refs.len, ran = fs->space.delayed_refs_ran;
	return heads > ran ? heads - ran : 0;
}

u64 btrfs_space_delayed_refs_size(const struct btrfs_fs_info *fs)
{
	return btrfs_calc_delayed_ref_bytes(fs, btrfs_space_delayed_refs_pending(fs));
}

int btrfs_space_delayed_refs_full(const struct btrfs_fs_info *fs)
{
	return fs->space.delayed_refs_rsv >= btrfs_space_delayed_refs_size(fs);
}

void btrfs_space_release_meta(struct btrfs_fs_info *fs, u64 bytes)
{
	u64 size = btrfs_space_delayed_refs_size(fs), have = fs->space.delayed_refs_rsv;
	u64 add = size > have ? size - have : 0;
	if (add > bytes)
		add = bytes;
	fs->space.delayed_refs_rsv += add;
	btrfs_space_release(fs, SPACE_METADATA, bytes - add);
}

void btrfs_space_reserve(struct btrfs_fs_info *fs, int kind, u64 bytes)
{
	fs->space.may_use[kind] += bytes;
}

void btrfs_space_release(struct btrfs_fs_info *fs, int kind, u64 bytes)
{
	fs->space.may_use[kind] -= bytes < fs->space.may_use[kind] ? bytes : fs->space.may_use[kind];
}

void btrfs_space_data_alloc(struct btrfs_fs_info *fs, u64 bytes)
{
	btrfs_space_release(fs, SPACE_DATA, bytes);
	fs->space.reserved[SPACE_DATA] += bytes;
}

void btrfs_space_data_done(struct btrfs_fs_info *fs, u64 bytes)
{
	u64 *r = &fs->space.reserved[SPACE_DATA];
	*r -= bytes < *r ? bytes : *r;
}

/* Checksum leaves for bytes of data: a csum item's 4 bytes a sector, in
 * leaves of nodesize less the header and one item. */
static u64 csum_leaves(const struct btrfs_fs_info *fs, u64 bytes)
{
	u64 per_leaf = (fs->nodesize - BTRFS_HEADER_SIZE - BTRFS_ITEM_SIZE) / 4;
	u64 sectors = (bytes + fs->sectorsize - 1) / fs->sectorsize;
	return (sectors + per_leaf - 1) / per_leaf;
}

u64 btrfs_space_inode_rsv_size(const struct btrfs_fs_info *fs, u64 delalloc_bytes, u64 ordered_bytes, u64 nordered)
{
	u64 extents = (delalloc_bytes + MAX_EXTENT_SIZE - 1) / MAX_EXTENT_SIZE + nordered;
	if (!extents)
		return 0;
	return btrfs_calc_insert_metadata_size(fs, extents + csum_leaves(fs, delalloc_bytes + ordered_bytes)) +
	       btrfs_calc_metadata_size(fs, 1);
}

void btrfs_space_inode_rsv_set(struct btrfs_fs_info *fs, u64 *held, u64 want)
{
	if (want > *held) {
		btrfs_space_reserve(fs, SPACE_METADATA, want - *held);
		fs->space.delalloc_meta += want - *held;
	} else {
		/* btrfs_inode_rsv_release: into the delayed refs reserve first (the
		 * data extent's delayed ref, made at ordered completion, needs it) */
		btrfs_space_release_meta(fs, *held - want);
		fs->space.delalloc_meta -= *held - want < fs->space.delalloc_meta ? *held - want : fs->space.delalloc_meta;
	}
	*held = want;
}

/* btrfs_update_global_block_rsv: the used bytes of the root, extent, csum
 * and free space trees, at least insert(13) (5.9/5.10's floor: 3 roots and
 * an unlink with its delayed refs), at most 512 MiB. */
void btrfs_space_update_global_rsv(struct btrfs_fs_info *fs)
{
	u64 size = 0;
	struct btrfs_root *roots[] = {fs->tree_root, fs->extent_root, fs->csum_root, fs->fst_root};
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (roots[i])
			size += btrfs_root_bytes_used(roots[i]->item);
	u64 floor = btrfs_calc_insert_metadata_size(fs, 13);
	if (size < floor)
		size = floor;
	if (size > GLOBAL_RSV_MAX)
		size = GLOBAL_RSV_MAX;
	if (size > fs->space.global_rsv)
		btrfs_space_reserve(fs, SPACE_METADATA, size - fs->space.global_rsv);
	else
		btrfs_space_release(fs, SPACE_METADATA, fs->space.global_rsv - size);
	fs->space.global_rsv = size;
}

void btrfs_space_commit(struct btrfs_fs_info *fs)
{
	btrfs_space_release(fs, SPACE_METADATA, fs->space.delayed_items_rsv + fs->space.delayed_refs_rsv);
	fs->space.delayed_items_rsv = fs->space.delayed_refs_rsv = 0;
	fs->space.delayed_refs_ran = 0;
	btrfs_space_update_global_rsv(fs);
}

void btrfs_space_migrate(u64 *from, u64 *to, u64 bytes)
{
	if (bytes > *from)
		bytes = *from;
	*from -= bytes;
	*to += bytes;
}

int btrfs_space_check(const struct btrfs_fs_info *fs, char *msg, size_t n)
{
	int problems = 0;
#define PROBLEM(...)                                                                                                          \
	do {                                                                                                                  \
		if (!problems++ && msg)                                                                                        \
			snprintf(msg, n, __VA_ARGS__);                                                                         \
	} while (0)
	u64 delalloc = (fs->data ? fs->data->dirty_bytes : 0) + fs->space.op_data;
	if (fs->space.may_use[SPACE_DATA] != delalloc)
		PROBLEM("data may_use %llu, but %llu bytes are delalloc or about to be", (unsigned long long)fs->space.may_use[SPACE_DATA],
			(unsigned long long)delalloc);
	u64 inflight = btrfs_ordered_bytes(fs, 0, NULL);
	if (fs->space.reserved[SPACE_DATA] != inflight)
		PROBLEM("data reserved %llu, but ordered extents in flight hold %llu", (unsigned long long)fs->space.reserved[SPACE_DATA],
			(unsigned long long)inflight);
	u64 want = fs->space.global_rsv + fs->space.op_meta + fs->space.delayed_items_rsv + fs->space.delayed_refs_rsv, held = 0;
	if (fs->data) {
		size_t i = 0;
		u64 k;
		void *v;
		while (u64map_next(&fs->data->inodes, &i, &k, &v)) {
			const struct btrfs_inode_cache *ic = *(struct btrfs_inode_cache **)v;
			u64 on, ob = btrfs_ordered_bytes(fs, ic->key, &on);
			u64 need = btrfs_space_inode_rsv_size(fs, ic->dirty_bytes, ob, on);
			if (ic->meta_rsv != need)
				PROBLEM("inode %llu holds %llu bytes of metadata reservation, its extents need %llu", (unsigned long long)ic->ino,
					(unsigned long long)ic->meta_rsv, (unsigned long long)need);
			held += ic->meta_rsv;
		}
	}
	if (held != fs->space.delalloc_meta)
		PROBLEM("inodes hold %llu bytes of metadata reservation, the space_info counts %llu", (unsigned long long)held,
			(unsigned long long)fs->space.delalloc_meta);
	want += held;
	if (fs->space.may_use[SPACE_METADATA] != want)
		PROBLEM("metadata may_use %llu, but the global reserve, operations, delayed items and refs, and inodes hold %llu",
			(unsigned long long)fs->space.may_use[SPACE_METADATA], (unsigned long long)want);
	for (int k = 0; k < SPACE_KINDS; k++) {
		struct btrfs_space_info si;
		btrfs_space_info_get(fs, k, &si);
		if (si.used + si.pinned > si.total)
			PROBLEM("%s: used %llu + pinned %llu over total %llu", btrfs_space_kind_names[k], (unsigned long long)si.used,
				(unsigned long long)si.pinned, (unsigned long long)si.total);
	}
#undef PROBLEM
	return problems;
}
