/*
 * check-roots.c — the root tree half of `btrfslab check`: each subvolume's
 * ROOT_REF (in its parent's id) and ROOT_BACKREF (in its own) agree, name a
 * real entry of the parent's directory, and lead up to the top level without
 * a loop; a deleted subvolume (refs 0) has its ORPHAN_ITEM and no names; a
 * root item is not older than its root block, nor newer than the
 * filesystem; the quota tree has its status item.
 */
#include "check.h"
#include "ctree.h"
#include "dir-item.h"
#include "u64map.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rc {
	struct btrfs_fs_info *fs;
	struct strbuf *out;
	int *errors;
	struct u64map parent; /* child subvolume -> the parent its (first) ROOT_BACKREF names */
};

static void rbad(struct rc *c, u64 root, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void rbad(struct rc *c, u64 root, const char *fmt, ...)
{
	char prefix[40] = ""; /* root 0: a message of no one root */
	if (root)
		snprintf(prefix, sizeof(prefix), "root %lld ", (long long)root);
	va_list ap;
	va_start(ap, fmt);
	btrfs_check_vreport(c->out, c->errors, prefix, fmt, ap);
	va_end(ap);
}

static int is_subvol(u64 id) { return id >= BTRFS_FIRST_FREE_OBJECTID && id <= BTRFS_LAST_FREE_OBJECTID; }

struct ref {
	u64 dirid, seq;
	u16 len;
	const char *name;
};

/* Parses a ROOT_REF / ROOT_BACKREF; 0 when it overruns its item. */
static int parse_ref(const u8 *p, u32 sz, struct ref *r)
{
	if (sz < BTRFS_ROOT_REF_SIZE)
		return 0;
	*r = (struct ref){btrfs_root_ref_dirid(p), btrfs_root_ref_sequence(p), btrfs_root_ref_name_len(p), (const char *)p + BTRFS_ROOT_REF_SIZE};
	return BTRFS_ROOT_REF_SIZE + (u32)r->len <= sz;
}

/* Whether directory dirid of the parent tree names child (a subvolume) as r says: its DIR_INDEX and DIR_ITEM. */
static const char *missing_entry(struct rc *c, u64 parent, u64 child, const struct ref *r)
{
	struct btrfs_root *p = btrfs_get_root(c->fs, parent);
	if (!p || !p->node)
		return "the parent tree does not exist";
	struct btrfs_key k = {r->dirid, BTRFS_DIR_INDEX_KEY, r->seq};
	u8 *d;
	u32 sz;
	struct dir_entry e;
	if (btrfs_lookup_item(c->fs, p, &k, &d, &sz, 0) || !btrfs_parse_dir_entry(d, sz, &e) || e.location.objectid != child ||
	    e.location.type != BTRFS_ROOT_ITEM_KEY || e.name_len != r->len || memcmp(e.name, r->name, r->len))
		return "no DIR_INDEX";
	u32 off;
	if (btrfs_lookup_dir_entry(c->fs, p, r->dirid, BTRFS_DIR_ITEM_KEY, r->name, r->len, &e, &off) || e.location.objectid != child ||
	    e.location.type != BTRFS_ROOT_ITEM_KEY)
		return "no DIR_ITEM";
	return NULL;
}

/* One ROOT_REF or ROOT_BACKREF of the root tree. */
static void root_ref(struct rc *c, const struct btrfs_key *k, const u8 *p, u32 sz)
{
	int fwd = k->type == BTRFS_ROOT_REF_KEY;
	const char *what = fwd ? "ROOT_REF" : "ROOT_BACKREF", *other = fwd ? "ROOT_BACKREF" : "ROOT_REF";
	u64 parent = fwd ? k->objectid : k->offset, child = fwd ? k->offset : k->objectid;
	struct ref r;
	char n1[4 * BTRFS_NAME_LEN + 1], n2[4 * BTRFS_NAME_LEN + 1];
	if (!parse_ref(p, sz, &r) || r.len > BTRFS_NAME_LEN) {
		rbad(c, k->objectid, "%s %s %" PRIu64 ": its name overruns the item (%u bytes)", what, fwd ? "to" : "from", k->offset, sz);
		return;
	}
	btrfs_name_escape(r.name, r.len, n1);
	if (parent == child) {
		rbad(c, k->objectid, "%s names itself as its own parent (dir %" PRIu64 " name '%s')", what, r.dirid, n1);
		return;
	}
	if (!fwd) {
		u64 *at = u64map_get(&c->parent, child);
		if (at)
			rbad(c, child, "has a second ROOT_BACKREF, from %" PRIu64 " (the first is from %" PRIu64 ")", parent, *at);
		else if ((at = u64map_put(&c->parent, child)))
			*at = parent;
		const char *why = missing_entry(c, parent, child, &r);
		if (why)
			rbad(c, child, "ROOT_BACKREF from %" PRIu64 " names '%s' in directory %" PRIu64 ", which has no such entry (%s)", parent, n1,
			     r.dirid, why);
	}
	struct btrfs_key ok = fwd ? (struct btrfs_key){child, BTRFS_ROOT_BACKREF_KEY, parent} : (struct btrfs_key){parent, BTRFS_ROOT_REF_KEY, child};
	u8 *q;
	u32 qsz;
	struct ref o;
	if (btrfs_lookup_item(c->fs, c->fs->tree_root, &ok, &q, &qsz, 0)) {
		rbad(c, k->objectid, "%s %s %" PRIu64 " (dir %" PRIu64 " index %" PRIu64 " name '%s') has no matching %s", what, fwd ? "to" : "from",
		     k->offset, r.dirid, r.seq, n1, other);
	} else if (fwd && parse_ref(q, qsz, &o) && o.len <= BTRFS_NAME_LEN &&
		   (o.dirid != r.dirid || o.seq != r.seq || o.len != r.len || memcmp(o.name, r.name, r.len))) {
		rbad(c, parent, "ROOT_REF to %" PRIu64 " says dir %" PRIu64 " index %" PRIu64 " name '%s', its ROOT_BACKREF dir %" PRIu64
				" index %" PRIu64 " name '%s'",
		     child, r.dirid, r.seq, n1, o.dirid, o.seq, btrfs_name_escape(o.name, o.len, n2));
	}
}

/* Subvolume id (alive) leads up to the top level through its backrefs. */
static void check_chain(struct rc *c, u64 id)
{
	size_t cap = c->fs->nroots + 2, n = 0;
	u64 *chain = malloc(cap * sizeof(*chain));
	if (!chain)
		return;
	for (u64 at = id; at != BTRFS_FS_TREE_OBJECTID && n < cap;) {
		for (size_t i = 0; i < n; i++) {
			if (chain[i] != at)
				continue;
			if (i > 0) {
				rbad(c, id, "is not reachable from the top level: its ROOT_BACKREFs lead into a loop at %" PRIu64, at);
			} else {
				/* id is in the loop: named once, by its lowest member */
				u64 low = id;
				for (size_t j = 0; j < n; j++)
					low = chain[j] < low ? chain[j] : low;
				char s[200];
				size_t o = 0;
				for (size_t j = 0; j <= n && o < sizeof(s); j++)
					o += (size_t)snprintf(s + o, sizeof(s) - o, "%s%" PRIu64, j ? " -> " : "", j < n ? chain[j] : at);
				if (low == id)
					rbad(c, id, "ROOT_BACKREF loop: %s (not reachable from the top level)", s);
			}
			free(chain);
			return;
		}
		chain[n++] = at;
		u64 *up = u64map_get(&c->parent, at);
		if (!up)
			break; /* named by the root's own check */
		at = *up;
	}
	free(chain);
}

int btrfs_check_roots(struct btrfs_fs_info *fs, struct strbuf *out)
{
	int errors = 0;
	struct rc c = {.fs = fs, .out = out, .errors = &errors};
	u64map_init(&c.parent, sizeof(u64));
	struct btrfs_item_cursor cur;
	struct btrfs_key from = {0, 0, 0};
	int ret;
	for (ret = btrfs_cursor_first(fs, fs->tree_root, &from, &cur); ret == 0; ret = btrfs_cursor_next(fs, &cur)) {
		if (cur.key.type != BTRFS_ROOT_REF_KEY && cur.key.type != BTRFS_ROOT_BACKREF_KEY)
			continue;
		struct btrfs_key k = cur.key;
		root_ref(&c, &k, cur.data, cur.size);
		/* the lookups may have read other blocks: find the place again */
		if (btrfs_cursor_first(fs, fs->tree_root, &k, &cur) != 0)
			break;
	}
	if (ret < 0)
		rbad(&c, BTRFS_ROOT_TREE_OBJECTID, "%s", fs->err.msg);

	u64 sgen = btrfs_super_generation(fs->super) + (fs->trans_running ? 1 : 0);
	for (size_t i = 0; i < fs->nroots; i++) {
		struct btrfs_root *r = fs->roots[i];
		if (!r->in_root_tree || !r->node)
			continue;
		u64 id = r->objectid, gen = btrfs_root_generation(r->item), bgen = btrfs_header_generation(r->node->data);
		if (gen == 0 || gen < bgen)
			rbad(&c, id, "ROOT_ITEM generation %" PRIu64 " is older than its root block %" PRIu64 " (generation %" PRIu64 ")", gen,
			     r->node->start, bgen);
		else if (gen > sgen)
			rbad(&c, id, "ROOT_ITEM generation %" PRIu64 " is newer than the filesystem's %" PRIu64, gen, sgen);
		if (!is_subvol(id))
			continue;
		struct btrfs_key ok = {BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, id};
		u8 *p;
		u32 sz;
		int orphan = !btrfs_lookup_item(fs, fs->tree_root, &ok, &p, &sz, 0);
		u64 *up = u64map_get(&c.parent, id);
		if (!btrfs_root_refs(r->item)) {
			if (!orphan)
				rbad(&c, id, "has refs 0 but no ORPHAN_ITEM: a deleted subvolume the cleaner would never drop");
			if (up)
				rbad(&c, id, "has refs 0 (deleted) but root %" PRIu64 " still names it (ROOT_BACKREF)", *up);
		} else if (!up) {
			rbad(&c, id, "is not referenced: no ROOT_BACKREF names its parent, no directory leads to it");
		} else {
			check_chain(&c, id);
		}
	}
	struct btrfs_root *q = btrfs_get_root(fs, BTRFS_QUOTA_TREE_OBJECTID);
	if (q && q->node) {
		struct btrfs_key sk = {0, BTRFS_QGROUP_STATUS_KEY, 0};
		u8 *p;
		u32 sz;
		if (btrfs_lookup_item(fs, q, &sk, &p, &sz, 0))
			rbad(&c, 0, "quota tree has no QGROUP_STATUS item: quotas are on with no status, version or flags");
	}
	u64map_free(&c.parent);
	return errors;
}
