/* delayed-ref.c — the queue of reference changes waiting for commit: one
 * head per extent, keyed by bytenr (extent-tree.c runs them at commit). */
#include "delayed-ref.h"
#include <stdlib.h>

struct delayed_ref_head *btrfs_delayed_ref_head(struct btrfs_fs_info *fs, u64 bytenr)
{
	if (!fs->delayed_refs.vsize)
		u64map_init(&fs->delayed_refs, sizeof(struct delayed_ref_head));
	struct delayed_ref_head *h = u64map_put(&fs->delayed_refs, bytenr);
	if (!h)
		blab_fail(&fs->err, BLAB_ENOMEM, "delayed refs");
	else if (!h->bytenr)
		h->bytenr = bytenr;
	return h;
}

void btrfs_drop_delayed_ref_head(struct btrfs_fs_info *fs, struct delayed_ref_head *h)
{
	u64 b = h->bytenr;
	free(h->drefs);
	u64map_del(&fs->delayed_refs, b);
}

void btrfs_free_delayed_refs(struct btrfs_fs_info *fs)
{
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&fs->delayed_refs, &i, &k, &v))
		free(((struct delayed_ref_head *)v)->drefs);
	u64map_free(&fs->delayed_refs);
}

int btrfs_clone_delayed_refs(struct btrfs_fs_info *dst, const struct btrfs_fs_info *src)
{
	if (u64map_clone(&dst->delayed_refs, &src->delayed_refs))
		return blab_fail(&dst->err, BLAB_ENOMEM, "delayed refs");
	size_t i = 0;
	u64 k;
	void *v;
	int ret = 0;
	while (u64map_next(&dst->delayed_refs, &i, &k, &v)) {
		struct delayed_ref_head *h = v;
		struct data_ref *d = NULL;
		if (h->drefs && !ret && (d = malloc((size_t)(h->capdrefs ? h->capdrefs : 1) * sizeof(*d))))
			memcpy(d, h->drefs, (size_t)h->ndrefs * sizeof(*d));
		else if (h->drefs)
			ret = blab_fail(&dst->err, BLAB_ENOMEM, "delayed refs");
		h->drefs = d; /* NULL after a failure: the head owns nothing of src's */
	}
	return ret;
}

/* The change to backref (root, objectid, offset, parent) of head h, added to. */
static int mod_ref(struct btrfs_fs_info *fs, struct delayed_ref_head *h, struct data_ref ref)
{
	for (int i = 0; i < h->ndrefs; i++) {
		struct data_ref *r = &h->drefs[i];
		if (r->root == ref.root && r->objectid == ref.objectid && r->offset == ref.offset && r->parent == ref.parent) {
			r->count_mod += ref.count_mod;
			return 0;
		}
	}
	if (h->ndrefs == h->capdrefs) {
		int cap = h->capdrefs ? h->capdrefs * 2 : 2;
		struct data_ref *n = realloc(h->drefs, (size_t)cap * sizeof(*n));
		if (!n)
			return blab_fail(&fs->err, BLAB_ENOMEM, "delayed refs");
		h->drefs = n;
		h->capdrefs = cap;
	}
	h->drefs[h->ndrefs++] = ref;
	return 0;
}

/* Whether a reference change by tree root (or by a parent block: the tree
 * working on it is a subvolume's, or a reloc tree's) is a qgroup record: the
 * kernel records those of subvolume trees (btrfs_init_tree_ref's
 * skip_qgroup), not a reloc tree's since 4.20. */
static void note_qgroup(struct btrfs_fs_info *fs, struct delayed_ref_head *h, u64 root, u64 parent)
{
	if (!fs->qgroup_skip && (parent || root == BTRFS_FS_TREE_OBJECTID ||
				 (root >= BTRFS_FIRST_FREE_OBJECTID && root <= BTRFS_LAST_FREE_OBJECTID)))
		h->qgroup = 1;
}

int btrfs_mod_data_ref(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes, u64 root, u64 ino, u64 offset, int mod)
{
	struct delayed_ref_head *h = btrfs_delayed_ref_head(fs, bytenr);
	if (!h)
		return fs->err.code;
	note_qgroup(fs, h, root, 1);
	h->is_data = 1;
	h->num_bytes = num_bytes;
	return mod_ref(fs, h, (struct data_ref){.root = root, .objectid = ino, .offset = offset, .count_mod = mod});
}

int btrfs_mod_shared_data_ref(struct btrfs_fs_info *fs, u64 bytenr, u64 num_bytes, u64 parent, int mod)
{
	struct delayed_ref_head *h = btrfs_delayed_ref_head(fs, bytenr);
	if (!h)
		return fs->err.code;
	note_qgroup(fs, h, 0, parent);
	h->is_data = 1;
	h->num_bytes = num_bytes;
	return mod_ref(fs, h, (struct data_ref){.parent = parent, .count_mod = mod});
}

int btrfs_mod_tree_ref(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 root, u64 parent, int mod)
{
	struct delayed_ref_head *h = btrfs_delayed_ref_head(fs, bytenr);
	if (!h)
		return fs->err.code;
	h->num_bytes = fs->nodesize;
	h->level = level;
	note_qgroup(fs, h, root, parent);
	return mod_ref(fs, h, (struct data_ref){.root = parent ? 0 : root, .parent = parent, .count_mod = mod});
}

int btrfs_set_tree_block_flags(struct btrfs_fs_info *fs, u64 bytenr, int level, u64 flags)
{
	struct delayed_ref_head *h = btrfs_delayed_ref_head(fs, bytenr);
	if (!h)
		return fs->err.code;
	h->num_bytes = fs->nodesize;
	h->level = level;
	h->set_flags |= flags;
	return 0;
}
