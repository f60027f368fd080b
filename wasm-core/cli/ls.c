#include "ls.h"
#include "dirwalk.h"
#include "../src/file.h"
#include "../src/inode.h"
#include "../src/array.h"
#include <stdarg.h>
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
	size_t root_len;      /* the path of the directory listed */
	struct dir_seen seen; /* directories entered (ls -R) */
};

/* "btrfslab ls: PATH: " and the message; the path escaped (a name from
 * the image never reaches a terminal raw through a message). */
__attribute__((format(printf, 4, 5))) static void say(struct ls *c, const char *path, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("btrfslab ls: ", c->err);
	dir_put_escaped(c->err, path, len);
	fputs(": ", c->err);
	vfprintf(c->err, fmt, ap);
	fputc('\n', c->err);
	va_end(ap);
	c->failed = 1;
}

/* One line: the name (or path), and with -l the inode's fields. */
static void print_entry(struct ls *c, u64 ino, const char *shown, size_t len)
{
	struct btrfs_inode in;
	if (!(c->flags & LS_LONG)) {
		fwrite(shown, 1, len, c->out);
		fputc('\n', c->out);
		return;
	}
	if (xino_read_inode(c->fs, ino, &in)) {
		say(c, shown, len, "%s", c->fs->err.msg);
		return;
	}
	char m[11];
	ls_mode_string(in.mode, m);
	fprintf(c->out, "%s %u %u %u %llu ", m, in.nlink, in.uid, in.gid, (unsigned long long)in.size);
	fwrite(shown, 1, len, c->out);
	if ((in.mode & S_IFMT_) == S_IFLNK_) {
		char target[4096];
		u64 got;
		if (!btrfs_file_read_any(c->fs, xino_root(c->fs, ino), xino_ino(ino), 0, (u8 *)target, sizeof(target) - 1, &got)) {
			fputs(" -> ", c->out);
			fwrite(target, 1, got, c->out);
		}
	}
	fputc('\n', c->out);
}

/* Directory e (in dir, at c->path) met by ls -R: 1 when it is to be entered,
 * 0 when it was entered before (reported: a directory has one name), -1 on
 * ENOMEM. */
static int first_visit(struct ls *c, u64 dir, const struct dir_ent *e)
{
	int r = dir_seen_add(&c->seen, e->ino, dir, e->name, e->len);
	if (r <= 0)
		return r ? -1 : 1;
	struct path_buf first = {0};
	if (path_append(&first, c->path.s, (u16)c->root_len, 1) || dir_seen_path(&c->seen, e->ino, &first, 1)) {
		path_free(&first);
		return -1;
	}
	say(c, c->path.s, c->path.len, "corrupt: directory inode %llu is reached a second time, first as %s (a directory has one name)",
	    (unsigned long long)xino_ino(e->ino), first.s);
	path_free(&first);
	return 0;
}

struct ls_frame {
	u64 dir;
	struct dir_list list;
	size_t next, path_len;
};

static struct ls_frame *push(struct ls *c, struct ls_frame **stack, size_t *depth, size_t *cap, u64 dir, size_t path_len)
{
	if (array_room(stack, *depth, cap, sizeof(**stack), 16))
		return NULL;
	struct ls_frame *f = &(*stack)[(*depth)++];
	memset(f, 0, sizeof(*f));
	f->dir = dir;
	f->path_len = path_len;
	if (dir_list_read(c->fs, dir, &f->list))
		say(c, c->path.s, c->path.len, "%s", c->fs->err.msg);
	return f;
}

/* The entries below dir (whose path is c->path), depth first with a heap
 * stack, each directory entered once; stops at the first failed write. */
static void list_dir(struct ls *c, u64 dir)
{
	struct ls_frame *stack = NULL;
	size_t depth = 0, cap = 0;
	if (!push(c, &stack, &depth, &cap, dir, c->path.len))
		goto oom;
	while (depth && !ferror(c->out)) {
		struct ls_frame *f = &stack[depth - 1];
		if (f->next >= f->list.n) {
			path_cut(&c->path, f->path_len);
			dir_list_free(&f->list);
			depth--;
			continue;
		}
		const struct dir_ent *e = &f->list.e[f->next++];
		if (e->empty) {
			size_t len = c->path.len;
			if ((c->flags & LS_RECURSIVE) && path_append(&c->path, e->name, e->len, 0))
				goto oom;
			if (c->flags & LS_LONG)
				fputs("drwxr-xr-x 1 0 0 0 ", c->out);
			fwrite(c->path.s + ((c->flags & LS_RECURSIVE) ? 0 : c->path.len), 1, (c->flags & LS_RECURSIVE) ? c->path.len : 0, c->out);
			if (!(c->flags & LS_RECURSIVE))
				fwrite(e->name, 1, e->len, c->out);
			fputc('\n', c->out);
			path_cut(&c->path, len);
			continue;
		}
		if (e->subvol && !e->ino) {
			size_t len = c->path.len;
			if (path_append(&c->path, e->name, e->len, 0))
				goto oom;
			say(c, c->path.s, c->path.len, "subvolume %llu: its root item is missing", (unsigned long long)e->subvol);
			path_cut(&c->path, len);
			continue;
		}
		if (!(c->flags & LS_RECURSIVE)) {
			print_entry(c, e->ino, e->name, e->len);
			continue;
		}
		size_t len = c->path.len;
		if (path_append(&c->path, e->name, e->len, 0))
			goto oom;
		print_entry(c, e->ino, c->path.s, c->path.len);
		int enter = e->type == BTRFS_FT_DIR ? first_visit(c, f->dir, e) : 0;
		if (enter < 0 || (enter > 0 && !push(c, &stack, &depth, &cap, e->ino, len)))
			goto oom;
		if (!enter)
			path_cut(&c->path, len);
	}
	goto out;
oom:
	fprintf(c->err, "btrfslab ls: out of memory\n");
	c->failed = 1;
out:
	while (depth)
		dir_list_free(&stack[--depth].list);
	free(stack);
}

int ls_run(struct btrfs_fs_info *fs, const char *path, int flags, FILE *out, FILE *err)
{
	struct ls c = {.fs = fs, .flags = flags, .out = out, .err = err};
	struct btrfs_root *root;
	u64 ino;
	struct btrfs_inode in;
	if (btrfs_lookup_path_subvol(fs, path, &root, &ino) || xino_make(fs, root, ino, &ino) || xino_read_inode(fs, ino, &in)) {
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
	dir_seen_init(&c.seen);
	if (path_append(&c.path, path, (u16)(n > 4096 ? 4096 : n), 0) || dir_seen_add(&c.seen, ino, 0, "", 0) < 0) {
		fprintf(err, "btrfslab ls: out of memory\n");
		c.failed = 1;
	} else {
		c.root_len = c.path.len;
		list_dir(&c, ino);
	}
	dir_seen_free(&c.seen);
	path_free(&c.path);
	return c.failed;
}
