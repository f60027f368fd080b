#include "dirwalk.h"
#include <stdlib.h>
#include <string.h>

static int add_entry(void *ctx, const char *name, u16 len, u64 ino, u8 type)
{
	struct dir_list *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct dir_ent *e = realloc(l->e, cap * sizeof(*e));
		if (!e)
			return BLAB_ENOMEM;
		l->e = e;
		l->cap = cap;
	}
	struct dir_ent *d = &l->e[l->n++];
	d->ino = ino;
	d->type = type;
	d->len = len > BTRFS_NAME_LEN ? BTRFS_NAME_LEN : len; /* the tree checker allows no more */
	memcpy(d->name, name, d->len);
	d->name[d->len] = 0;
	return 0;
}

int dir_list_read(struct btrfs_fs_info *fs, u64 dir, struct dir_list *l)
{
	l->n = 0;
	int ret = btrfs_readdir(fs, fs->fs_root, dir, add_entry, l);
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

char *dir_name_escape(const char *name, u16 len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	char *o = out;
	for (u16 i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c < 0x20 || c > 0x7e || c == '\\') {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		} else {
			*o++ = (char)c;
		}
	}
	*o = 0;
	return out;
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
