#include "ls.h"
#include "dirwalk.h"
#include "../src/file.h"
#include "../src/inode.h"
#include <stdlib.h>
#include <string.h>

void ls_mode_string(u32 mode, char *out)
{
	const char *t = "?";
	switch (mode & S_IFMT_) {
	case S_IFDIR_: t = "d"; break;
	case S_IFREG_: t = "-"; break;
	case S_IFLNK_: t = "l"; break;
	case S_IFCHR_: t = "c"; break;
	case S_IFBLK_: t = "b"; break;
	case S_IFIFO_: t = "p"; break;
	case S_IFSOCK_: t = "s"; break;
	}
	static const char rwx[] = "rwxrwxrwx";
	out[0] = t[0];
	for (int i = 0; i < 9; i++)
		out[1 + i] = (mode & (1u << (8 - i))) ? rwx[i] : '-';
	if (mode & 04000)
		out[3] = (mode & 0100) ? 's' : 'S';
	if (mode & 02000)
		out[6] = (mode & 010) ? 's' : 'S';
	if (mode & 01000)
		out[9] = (mode & 01) ? 't' : 'T';
	out[10] = 0;
}

struct ls {
	struct btrfs_fs_info *fs;
	int flags, failed;
	FILE *out, *err;
	struct path_buf path; /* raw names: what is printed */
};

/* One line: the name (or path), and with -l the inode's fields. */
static void print_entry(struct ls *c, u64 ino, const char *shown, size_t len)
{
	struct btrfs_inode in;
	if (!(c->flags & LS_LONG)) {
		fwrite(shown, 1, len, c->out);
		fputc('\n', c->out);
		return;
	}
	if (btrfs_read_inode(c->fs, c->fs->fs_root, ino, &in)) {
		c->failed = 1;
		fprintf(c->err, "btrfslab ls: %.*s: %s\n", (int)len, shown, c->fs->err.msg);
		return;
	}
	char m[11];
	ls_mode_string(in.mode, m);
	fprintf(c->out, "%s %u %u %u %llu ", m, in.nlink, in.uid, in.gid, (unsigned long long)in.size);
	fwrite(shown, 1, len, c->out);
	if ((in.mode & S_IFMT_) == S_IFLNK_) {
		char target[4096];
		u64 got;
		if (!btrfs_file_read_any(c->fs, c->fs->fs_root, ino, 0, (u8 *)target, sizeof(target) - 1, &got)) {
			fputs(" -> ", c->out);
			fwrite(target, 1, got, c->out);
		}
	}
	fputc('\n', c->out);
}

struct ls_frame {
	struct dir_list list;
	size_t next, path_len;
};

/* The entries below dir (whose path is c->path), depth first with a heap
 * stack, each directory entered once. */
static void list_dir(struct ls *c, u64 dir)
{
	struct ls_frame *stack = NULL;
	size_t depth = 0, cap = 0;
	struct u64map seen;
	u64map_init(&seen, 1);
	u64map_put(&seen, dir);
	size_t cut_to = c->path.len; /* where the path ends without the directory entered next */
	for (u64 next_dir = dir; next_dir || depth;) {
		if (next_dir) {
			if (depth == cap) {
				struct ls_frame *s = realloc(stack, (cap = cap ? cap * 2 : 16) * sizeof(*s));
				if (!s) {
					fprintf(c->err, "btrfslab ls: out of memory\n");
					c->failed = 1;
					break;
				}
				stack = s;
			}
			struct ls_frame *f = &stack[depth++];
			memset(f, 0, sizeof(*f));
			f->path_len = cut_to;
			if (dir_list_read(c->fs, next_dir, &f->list)) {
				fprintf(c->err, "btrfslab ls: %s: %s\n", c->path.s, c->fs->err.msg);
				c->failed = 1;
			}
			next_dir = 0;
			continue;
		}
		struct ls_frame *f = &stack[depth - 1];
		if (f->next >= f->list.n) {
			path_cut(&c->path, f->path_len);
			dir_list_free(&f->list);
			depth--;
			continue;
		}
		const struct dir_ent *e = &f->list.e[f->next++];
		if (!(c->flags & LS_RECURSIVE)) {
			print_entry(c, e->ino, e->name, e->len);
			continue;
		}
		size_t len = c->path.len;
		if (path_append(&c->path, e->name, e->len, 0)) {
			fprintf(c->err, "btrfslab ls: out of memory\n");
			c->failed = 1;
			break;
		}
		print_entry(c, e->ino, c->path.s, c->path.len);
		if (e->type == BTRFS_FT_DIR) {
			if (u64map_get(&seen, e->ino)) {
				fprintf(c->err, "btrfslab ls: %s: corrupt: directory inode %llu is reached a second time (a directory has one name)\n",
					c->path.s, (unsigned long long)e->ino);
				c->failed = 1;
			} else if (!u64map_put(&seen, e->ino)) {
				fprintf(c->err, "btrfslab ls: out of memory\n");
				c->failed = 1;
				break;
			} else {
				next_dir = e->ino; /* entered next; its frame cuts the path back to len */
				cut_to = len;
				continue;
			}
		}
		path_cut(&c->path, len);
	}
	while (depth)
		dir_list_free(&stack[--depth].list);
	free(stack);
	u64map_free(&seen);
}

int ls_run(struct btrfs_fs_info *fs, const char *path, int flags, FILE *out, FILE *err)
{
	struct ls c = {.fs = fs, .flags = flags, .out = out, .err = err};
	u64 ino;
	struct btrfs_inode in;
	if (btrfs_lookup_path(fs, fs->fs_root, path, &ino) || btrfs_read_inode(fs, fs->fs_root, ino, &in)) {
		fprintf(err, "btrfslab ls: %s\n", fs->err.msg);
		return 1;
	}
	size_t n = strlen(path);
	if ((in.mode & S_IFMT_) != S_IFDIR_) {
		print_entry(&c, ino, path, n);
		return c.failed;
	}
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (path_append(&c.path, path, (u16)(n > 4096 ? 4096 : n), 0)) {
		fprintf(err, "btrfslab ls: out of memory\n");
		return 1;
	}
	list_dir(&c, ino);
	path_free(&c.path);
	return c.failed;
}
