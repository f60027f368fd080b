/* write-plan.c — what `btrfslab write` writes (see write-plan.h). */
#include "write-plan.h"
#include "../src/array.h"
#include "../src/ctree.h"
#include "../src/errors.h"
#include <stdlib.h>
#include <string.h>

/* The bytes one stripe of a chunk holds on its device. */
static u64 stripe_bytes(const struct btrfs_chunk_map *m)
{
	u64 n = m->num_stripes ? m->num_stripes : 1;
	if (m->type & BTRFS_BLOCK_GROUP_RAID0)
		return m->length / n;
	if ((m->type & BTRFS_BLOCK_GROUP_RAID10) && m->sub_stripes)
		return m->length / (n / m->sub_stripes ? n / m->sub_stripes : 1);
	return m->length;
}

static void reach_to(u64 *reach, const char **by, u64 start, u64 len, const char *what)
{
	u64 end = len > ~0ULL - start ? ~0ULL : start + len; /* a crafted length saturates: no device holds it */
	if (end > *reach) {
		*reach = end;
		*by = what;
	}
}

struct dev_extent_ctx {
	u64 *reach;
	const char **by;
};

static int dev_extent_reach(void *ctx, const struct btrfs_key *k, const u8 *p, u32 size)
{
	struct dev_extent_ctx *c = ctx;
	if (size >= BTRFS_DEV_EXTENT_SIZE)
		reach_to(c->reach, c->by, k->offset, btrfs_dev_extent_length(p), "its dev extents reach");
	return 0;
}

void write_plan_reach_maps(u64 total_bytes, u64 dev_total_bytes, const struct btrfs_chunk_map *chunks, size_t n, u64 *reach,
			   const char **by)
{
	*reach = total_bytes;
	*by = "its superblock says";
	reach_to(reach, by, 0, dev_total_bytes, "its device item reaches");
	for (size_t i = 0; i < n; i++) {
		const struct btrfs_chunk_map *m = &chunks[i];
		int ns = m->num_stripes < 2 ? m->num_stripes : 2; /* the map holds two at most */
		for (int s = 0; s < ns; s++)
			reach_to(reach, by, m->stripes[s].physical, stripe_bytes(m), "its chunks reach");
	}
}

int write_plan_reach(struct btrfs_fs_info *fs, u64 *reach, const char **by, struct blab_err *err)
{
	write_plan_reach_maps(btrfs_super_total_bytes(fs->super), btrfs_dev_total_bytes(fs->super + BTRFS_SUPER_DEV_ITEM_OFF), fs->chunks,
			      fs->nchunks, reach, by);
	if (!fs->dev_root)
		return 0;
	struct dev_extent_ctx c = {reach, by};
	int ret = btrfs_for_each_item(fs, fs->dev_root, 1, BTRFS_DEV_EXTENT_KEY, dev_extent_reach, &c);
	if (ret < 0) {
		return blab_fail(err, ret, "its device tree could not be read: %s", fs->err.msg);
	}
	return 0;
}

static int add_range(struct write_plan *p, u64 s, u64 e)
{
	if (s >= e)
		return 0;
	if (array_room(&p->r, p->n, &p->cap, sizeof(*p->r), 64))
		return -1;
	p->r[p->n++] = (struct write_range){s, e};
	p->bytes += e - s;
	return 0;
}

int write_plan_make(const struct write_range *data, size_t ndata, u64 limit, struct write_plan *p)
{
	memset(p, 0, sizeof(*p));
	for (int m = 0; m < BTRFS_SUPER_MIRROR_MAX; m++)
		if (btrfs_sb_offset(m) + BTRFS_SUPER_INFO_SIZE <= limit)
			p->supers[p->nsupers++] = btrfs_sb_offset(m);
	u64 pos = 0;
	for (size_t i = 0; i < ndata && pos < limit; i++) {
		u64 s = data[i].start < pos ? pos : data[i].start, e = data[i].end < limit ? data[i].end : limit;
		if (s >= e)
			continue;
		for (int m = 0; m < p->nsupers; m++) {
			u64 so = p->supers[m], se = so + BTRFS_SUPER_INFO_SIZE;
			if (so < e && se > s) { /* the copy is written last: cut out whatever of it is here */
				if (add_range(p, s, so > s ? so : s))
					goto oom;
				s = se < e ? se : e;
			}
		}
		if (add_range(p, s, e))
			goto oom;
		pos = e;
	}
	return 0;
oom:
	write_plan_free(p);
	return -1;
}

void write_plan_free(struct write_plan *p)
{
	free(p->r);
	memset(p, 0, sizeof(*p));
}
