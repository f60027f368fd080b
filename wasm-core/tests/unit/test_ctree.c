/* The B-tree against a model: seeded random inserts, deletes, extends and
 * truncates with commits between, at 4K and 16K nodes; after every commit
 * the core's check finds nothing, the tree holds exactly the model's items,
 * and an image reopened from the device bytes reads the same. */
#include "../../src/check.h"
#include "../../src/ctree.h"
#include "../../src/disk-io.h"
#include "../../src/extent-tree.h"
#include "../../src/mkfs.h"
#include "../../src/scenario.h"
#include "../../src/transaction.h"
#include "test.h"
#include <stdlib.h>

struct model_item {
	struct btrfs_key key;
	u32 size;
	u8 fill; /* every byte of the item is fill ^ (index & 0xff) */
};

struct model {
	struct model_item *v;
	int n, cap;
};

static u64 rng_state;

static int model_find(struct model *m, const struct btrfs_key *k, int *pos)
{
	int lo = 0, hi = m->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2, c = btrfs_comp_keys(&m->v[mid].key, k);
		if (c == 0) {
			*pos = mid;
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return 0;
}

static void fill_bytes(u8 *p, u32 size, u8 fill)
{
	for (u32 i = 0; i < size; i++)
		p[i] = (u8)(fill ^ (i & 0xff));
}

static int same_bytes(const u8 *p, u32 size, u8 fill)
{
	for (u32 i = 0; i < size; i++)
		if (p[i] != (u8)(fill ^ (i & 0xff)))
			return 0;
	return 1;
}

/* The tree's items equal the model's, in order. */
static int tree_matches(struct btrfs_fs_info *fs, struct btrfs_root *root, struct model *m)
{
	struct btrfs_path path;
	struct btrfs_key start = {0, 0, 0};
	if (btrfs_search_slot(fs, root, &start, &path, 0, 0) < 0)
		return 0;
	int i = 0, ret;
	while ((ret = btrfs_path_next_item(fs, &path)) == 0) {
		struct btrfs_key k;
		btrfs_item_key(path.nodes[0], path.slots[0], &k);
		if (k.objectid < 1000) { /* the root directory's items */
			path.slots[0]++;
			continue;
		}
		if (i >= m->n || btrfs_comp_keys(&k, &m->v[i].key)) {
			printf("  item %d: tree has (%llu %u %llu)\n", i, (unsigned long long)k.objectid, k.type, (unsigned long long)k.offset);
			return 0;
		}
		u32 sz = btrfs_item_size_nr(path.nodes[0], path.slots[0]);
		if (sz != m->v[i].size || !same_bytes(btrfs_item_ptr(path.nodes[0], path.slots[0]), sz, m->v[i].fill)) {
			printf("  item %d: size %u want %u or bytes differ\n", i, sz, m->v[i].size);
			return 0;
		}
		i++;
		path.slots[0]++;
	}
	if (ret < 0 || i != m->n)
		printf("  tree has %d items, model %d\n", i, m->n);
	return ret >= 0 && i == m->n;
}

/* A tree of its own for the B-tree tests (not a subvolume: its items need no meaning). */
#define TEST_TREE 200ULL
static struct btrfs_root *test_tree(struct btrfs_fs_info *fs)
{
	struct btrfs_root *r = btrfs_add_root(fs, TEST_TREE);
	if (!r)
		return NULL;
	r->in_root_tree = 1;
	btrfs_set_root_refs(r->item, 1);
	r->node = btrfs_alloc_tree_block(fs, TEST_TREE, 0);
	return r->node ? r : NULL;
}

/* Key types whose items the tree checker does not interpret: random bytes
 * are valid items of these. */
static u8 opaque_type(u64 r)
{
	static const u8 types[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};
	return types[r % sizeof(types)];
}

static int run_random(u32 nodesize, u64 seed, int ops, int commit_every)
{
	struct mkfs_options o;
	struct btrfs_fs_info *fs = NULL;
	struct blab_err err = {0};
	btrfs_mkfs_defaults(&o);
	o.nodesize = nodesize;
	o.size = 256ULL << 20;
	o.seed = seed;
	if (btrfs_mkfs(&o, &fs, &err)) {
		printf("  mkfs: %s\n", err.msg);
		return 0;
	}
	fs->trace.enabled = 0;
	rng_state = seed * 2654435761u + 1;
	struct model m = {0};
	u32 max_item = nodesize - BTRFS_HEADER_SIZE - BTRFS_ITEM_SIZE;
	u8 *buf = malloc(nodesize);
	int ok = 1;
	btrfs_start_transaction(fs);
	struct btrfs_root *tree = test_tree(fs);
	if (!tree)
		return 0;
	for (int op = 0; ok && op < ops; op++) {
		u64 r = test_rand(&rng_state) % 100;
		if (r < 62 || m.n == 0) { /* insert */
			struct btrfs_key k = {1000 + test_rand(&rng_state) % 5000, opaque_type(test_rand(&rng_state)), test_rand(&rng_state) % 4};
			u32 size = (test_rand(&rng_state) % 50 == 0) ? (u32)(test_rand(&rng_state) % max_item) : (u32)(test_rand(&rng_state) % 120);
			int pos;
			if (model_find(&m, &k, &pos))
				continue;
			u8 fill = (u8)test_rand(&rng_state);
			fill_bytes(buf, size, fill);
			int ret = btrfs_insert_item(fs, tree, &k, buf, size);
			if (ret) {
				printf("  op %d insert: %s\n", op, fs->err.msg);
				ok = 0;
				break;
			}
			if (m.n == m.cap) {
				m.cap = m.cap ? m.cap * 2 : 256;
				m.v = realloc(m.v, (size_t)m.cap * sizeof(*m.v));
			}
			memmove(&m.v[pos + 1], &m.v[pos], (size_t)(m.n - pos) * sizeof(*m.v));
			m.v[pos] = (struct model_item){k, size, fill};
			m.n++;
		} else if (r < 80) { /* delete one or a run */
			int pos = (int)(test_rand(&rng_state) % (u64)m.n);
			struct btrfs_path path;
			int ret = btrfs_search_slot(fs, tree, &m.v[pos].key, &path, -1, 1);
			if (ret != 0) {
				printf("  op %d delete: search returned %d %s\n", op, ret, fs->err.msg);
				ok = 0;
				break;
			}
			int nr = 1 + (int)(test_rand(&rng_state) % 3);
			int avail = (int)btrfs_nritems(path.nodes[0]) - path.slots[0];
			if (nr > avail)
				nr = avail;
			while (pos + nr > m.n)
				nr--;
			if (btrfs_del_items(fs, tree, &path, path.slots[0], nr)) {
				printf("  op %d delete: %s\n", op, fs->err.msg);
				ok = 0;
				break;
			}
			memmove(&m.v[pos], &m.v[pos + nr], (size_t)(m.n - pos - nr) * sizeof(*m.v));
			m.n -= nr;
		} else if (r < 93) { /* extend */
			int pos = (int)(test_rand(&rng_state) % (u64)m.n);
			u32 extra = 1 + (u32)(test_rand(&rng_state) % 200);
			if (m.v[pos].size + extra > max_item)
				continue;
			struct btrfs_path path;
			int ret = btrfs_search_slot(fs, tree, &m.v[pos].key, &path, (int)extra, 1);
			if (ret != 0) {
				printf("  op %d extend: search returned %d %s\n", op, ret, fs->err.msg);
				ok = 0;
				break;
			}
			btrfs_extend_item(fs, &path, extra);
			u32 ns = m.v[pos].size + extra;
			fill_bytes(btrfs_item_ptr(path.nodes[0], path.slots[0]), ns, m.v[pos].fill);
			m.v[pos].size = ns;
		} else { /* truncate, from the end or the front */
			int pos = (int)(test_rand(&rng_state) % (u64)m.n);
			if (!m.v[pos].size)
				continue;
			u32 ns = (u32)(test_rand(&rng_state) % m.v[pos].size);
			struct btrfs_path path;
			if (btrfs_search_slot(fs, tree, &m.v[pos].key, &path, 0, 1) != 0) {
				ok = 0;
				break;
			}
			btrfs_truncate_item(fs, &path, ns, (int)(test_rand(&rng_state) & 1));
			fill_bytes(btrfs_item_ptr(path.nodes[0], path.slots[0]), ns, m.v[pos].fill);
			m.v[pos].size = ns;
		}
		if ((op + 1) % commit_every == 0 || op + 1 == ops) {
			if (btrfs_commit_transaction(fs)) {
				printf("  op %d commit: %s\n", op, fs->err.msg);
				ok = 0;
				break;
			}
			struct strbuf out = {0};
			int errors = btrfs_check_fs(fs, &out, CHECK_DATA_CSUM);
			if (errors) {
				printf("  after op %d (seed %llu, nodesize %u): %d problems\n%s", op, (unsigned long long)seed, nodesize,
				       errors, out.s);
				ok = 0;
			}
			sb_free(&out);
			if (ok && !tree_matches(fs, tree, &m)) {
				printf("  after op %d: tree differs from the model (seed %llu)\n", op, (unsigned long long)seed);
				ok = 0;
			}
			if (ok && op + 1 < ops)
				btrfs_start_transaction(fs);
		}
	}
	if (ok) {
		/* the committed image, read back by the reader */
		struct blab_device d;
		struct btrfs_fs_info *r = test_copy_device(&fs->dev, &d) ? NULL : btrfs_open(&d, &err);
		if (!r) {
			printf("  reopen: %s\n", err.msg);
			ok = 0;
		} else {
			r->trace.enabled = 0;
			struct strbuf out = {0};
			if (btrfs_check_fs(r, &out, CHECK_DATA_CSUM)) {
				printf("  reopened image:\n%s", out.s);
				ok = 0;
			}
			sb_free(&out);
			if (ok && !tree_matches(r, btrfs_get_root(r, TEST_TREE), &m))
				ok = 0;
			if (ok && btrfs_level(btrfs_get_root(r, TEST_TREE)->node) < 1)
				printf("  note: tree stayed one leaf\n");
			btrfs_fs_free(r);
		}
	}
	printf("  seed %llu nodesize %u: %d items, tree level %d\n", (unsigned long long)seed, nodesize, m.n,
	       tree->node ? btrfs_level(tree->node) : -1);
	free(m.v);
	free(buf);
	btrfs_fs_free(fs);
	return ok;
}

TEST(ctree_random_4k)
{
	for (u64 seed = 1; seed <= 3; seed++)
		CHECK(run_random(4096, seed, 6000, 500));
}

TEST(ctree_random_4k_deep)
{
	/* enough items for three levels: node splits, node merges, root growth */
	CHECK(run_random(4096, 7, 40000, 4000));
}

TEST(ctree_random_16k)
{
	CHECK(run_random(16384, 11, 8000, 1000));
}

TEST(ctree_random_64k)
{
	CHECK(run_random(65536, 21, 4000, 2000));
}

TEST(ctree_grow_then_empty)
{
	/* fill deep at 4K, then delete everything: the root shrinks to one leaf */
	struct mkfs_options o;
	struct btrfs_fs_info *fs = NULL;
	struct blab_err err = {0};
	btrfs_mkfs_defaults(&o);
	o.nodesize = 4096;
	o.size = 64ULL << 20;
	CHECK(btrfs_mkfs(&o, &fs, &err) == 0);
	fs->trace.enabled = 0;
	btrfs_start_transaction(fs);
	struct btrfs_root *tree = test_tree(fs);
	CHECK(tree);
	u8 data[100] = {0};
	for (u64 i = 0; i < 5000; i++) {
		struct btrfs_key k = {1000 + i, 1, 0};
		CHECK(btrfs_insert_item(fs, tree, &k, data, sizeof(data)) == 0);
	}
	CHECK(btrfs_commit_transaction(fs) == 0);
	CHECK(btrfs_level(tree->node) >= 2);
	btrfs_start_transaction(fs);
	for (u64 i = 0; i < 5000; i++) {
		struct btrfs_key k = {1000 + (i * 7919) % 5000, 1, 0};
		CHECK(btrfs_delete_item(fs, tree, &k) == 0);
	}
	CHECK(btrfs_commit_transaction(fs) == 0);
	CHECK_EQ_U64(btrfs_level(tree->node), 0);
	CHECK_EQ_U64(btrfs_nritems(tree->node), 0);
	CHECK_EQ_U64(test_check_problems(fs), 0);
	btrfs_fs_free(fs);
}

TEST(ctree_node_level_push_split_merge_are_reached)
{
	/* 30,000 names in 4K blocks, then all but 1,000 removed: leaves and nodes
	 * push, split and merge, the root grows twice and shrinks */
	const char *script = "mkfs nodesize=4K size=256M\nmkdir /d\ncreate /d/f_{1..30000}\nunlink /d/f_{1..29000}\n";
	struct scenario_options o = {.seed = 1, .now = 1, .trace = 1};
	struct scenario_result res;
	struct blab_err err = {0};
	CHECK(scenario_run(script, strlen(script), "nodes", &o, &res, &err) == 0);
	int count[TRACE_KIND_COUNT][3] = {{0}};
	for (size_t i = 0; i < res.fs->trace.len; i++) {
		const struct trace_event *e = &res.fs->trace.ev[i];
		if (e->level >= 0 && e->level < 3)
			count[e->kind][e->level]++;
	}
	CHECK(count[TRACE_PUSH][1] > 0);
	CHECK(count[TRACE_SPLIT][1] > 0);
	CHECK(count[TRACE_MERGE][1] > 0);
	CHECK(count[TRACE_ROOT_GROW][2] > 0);
	CHECK(count[TRACE_PUSH][0] > 0 && count[TRACE_SPLIT][0] > 0 && count[TRACE_MERGE][0] > 0);
	CHECK_EQ_U64(test_check_problems(res.fs), 0);
	btrfs_fs_free(res.fs);
}
