#include "dirwalk.h"
#include "../src/array.h"
#include "../src/dir-item.h"
#include <stdlib.h>
#include <string.h>

int xino_make(struct btrfs_fs_info *fs, const struct btrfs_root *root, u64 ino, u64 *out)
{
	u64 idx = 0;
	while (idx < fs->nroots && fs->roots[idx] != root)
		idx++;
	if (ino > XINO_MASK || idx >= fs->nroots)
		return blab_fail(&fs->err, BLAB_EOVERFLOW, "inode %llu of tree %lld: numbers of 2^48 and above are not walked",
				 (unsigned long long)ino, (long long)root->objectid);
	*out = idx << XINO_SHIFT | ino;
	return 0;
}

struct btrfs_root *xino_root(const struct btrfs_fs_info *fs, u64 x)
{
	u64 idx = x >> XINO_SHIFT;
	return idx < fs->nroots ? fs->roots[idx] : fs->fs_root;
}

int xino_read_inode(struct btrfs_fs_info *fs, u64 x, struct btrfs_inode *in)
{
	int ret = btrfs_read_inode(fs, xino_root(fs, x), xino_ino(x), in);
	if (!ret)
		in->ino = x;
	return ret;
}

struct list_ctx {
	struct btrfs_fs_info *fs;
	struct btrfs_root *root;
	struct dir_list *l;
};

static int add_entry(void *ctx, const char *name, u16 len, u64 ino, u8 type)
{
	struct list_ctx *c = ctx;
	struct dir_list *l = c->l;
	if (array_room(&l->e, l->n, &l->cap, sizeof(*l->e), 16))
		return BLAB_ENOMEM;
	struct dir_ent *d = &l->e[l->n];
	memset(d, 0, sizeof(*d));
	if (type & BTRFS_FT_EMPTY_SUBVOL) {
		d->subvol = ino;
		d->empty = 1;
		type = BTRFS_FT_DIR;
	} else if (type & BTRFS_FT_SUBVOL) {
		/* a subvolume: its root directory, in its own tree */
		u64 dirid;
		struct btrfs_root *r = btrfs_subvol_root(c->fs, ino, &dirid);
		d->subvol = ino;
		type = BTRFS_FT_DIR;
		if (!r || xino_make(c->fs, r, dirid, &d->ino)) {
			c->fs->err.code = 0;
			d->ino = 0;
		}
	} else if (xino_make(c->fs, c->root, ino, &d->ino)) {
		return c->fs->err.code;
	}
	l->n++;
	d->type = type;
	d->len = len > BTRFS_NAME_LEN ? BTRFS_NAME_LEN : len; /* the tree checker allows no more */
	memcpy(d->name, name, d->len);
	d->name[d->len] = 0;
	return 0;
}

int dir_list_read(struct btrfs_fs_info *fs, u64 dir, struct dir_list *l)
{
	l->n = 0;
	struct list_ctx c = {fs, xino_root(fs, dir), l};
	int ret = btrfs_readdir(fs, c.root, xino_ino(dir), add_entry, &c);
	if (ret == BLAB_ENOMEM)
		return blab_fail(&fs->err, BLAB_ENOMEM, "reading directory %llu", (unsigned long long)dir);
	return ret < 0 ? ret : 0;
}

void dir_list_free(struct dir_list *l)
{
	free(l->e);
	memset(l, 0, sizeof(*l));
}

int dir_name_safe(const char *name, u16 len)
{
	if (len == 0 || len > BTRFS_NAME_LEN || memchr(name, '/', len) || memchr(name, 0, len))
		return 0;
	return !(name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')));
}

char *dir_name_escape(const char *name, u16 len, char *out) { return btrfs_name_escape(name, len, out); }

void dir_put_escaped(FILE *f, const char *s, size_t len)
{
	char buf[4 * 64 + 1];
	for (size_t i = 0; i < len; i += 64) {
		u16 n = (u16)(len - i < 64 ? len - i : 64);
		fputs(dir_name_escape(s + i, n, buf), f);
	}
}

int path_append(struct path_buf *p, const char *name, u16 len, int escape)
{
	size_t need = p->len + 1 + (escape ? 4 * (size_t)len : len) + 1;
	if (need > p->cap) {
		size_t cap = p->cap ? p->cap : 256;
		while (cap < need)
			cap *= 2;
		char *s = realloc(p->s, cap);
		if (!s)
			return -1;
		p->s = s;
		p->cap = cap;
	}
	if (p->len && p->s[p->len - 1] != '/')
		p->s[p->len++] = '/';
	if (escape) {
		dir_name_escape(name, len, p->s + p->len);
		p->len += strlen(p->s + p->len);
	} else {
		memcpy(p->s + p->len, name, len);
		p->len += len;
		p->s[p->len] = 0;
	}
	return 0;
}

void path_cut(struct path_buf *p, size_t len)
{
	if (p->s && len <= p->len) {
		p->len = len;
		p->s[len] = 0;
	}
}

void path_free(struct path_buf *p)
{
	free(p->s);
	memset(p, 0, sizeof(*p));
}

struct dir_seen_ent {
	u64 parent;
	u16 len;
	char name[];
};

void dir_seen_init(struct dir_seen *s)
{
	u64map_init(&s->map, sizeof(struct dir_seen_ent *));
}

int dir_seen_add(struct dir_seen *s, u64 ino, u64 parent, const char *name, u16 len)
{
	if (u64map_get(&s->map, ino))
		return 1;
	struct dir_seen_ent *e = malloc(sizeof(*e) + len), **slot;
	if (!e || !(slot = u64map_put(&s->map, ino))) {
		free(e);
		return -1;
	}
	e->parent = parent;
	e->len = len;
	memcpy(e->name, name, len);
	*slot = e;
	return 0;
}

/* Each entry's parent was recorded before it, so following parents ends. */
int dir_seen_path(const struct dir_seen *s, u64 ino, struct path_buf *p, int escape)
{
	struct dir_seen_ent **chain = NULL, **slot;
	size_t n = 0, cap = 0;
	int ret = 0;
	for (u64 at = ino; (slot = u64map_get(&s->map, at)) && (*slot)->len; at = (*slot)->parent) {
		if (n == cap) {
			struct dir_seen_ent **c = realloc(chain, (cap = cap ? cap * 2 : 16) * sizeof(*c));
			if (!c) {
				free(chain);
				return -1;
			}
			chain = c;
		}
		chain[n++] = *slot;
	}
	while (n && !ret) {
		n--;
		ret = path_append(p, chain[n]->name, chain[n]->len, escape);
	}
	free(chain);
	return ret;
}

void dir_seen_free(struct dir_seen *s)
{
	size_t i = 0;
	u64 k;
	void *v;
	while (u64map_next(&s->map, &i, &k, &v))
		free(*(struct dir_seen_ent **)v);
	u64map_free(&s->map);
}
