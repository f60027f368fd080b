/* btrfslab — the command-line face of the core. */
#include "../src/disk-io.h"
#include "../src/image.h"
#include "../src/mkfs.h"
#include "../src/print-tree.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VERSION "0.1.0"

static const char usage_text[] =
	"usage: btrfslab COMMAND [ARGS]\n"
	"\n"
	"commands:\n"
	"  mkfs [--size S] [--nodesize N] [--label L] [--seed N] [--time T] IMAGE\n"
	"        write an empty btrfs filesystem to IMAGE (sizes take K, M, G suffixes)\n"
	"  dump-tree [-t TREE] IMAGE\n"
	"        print the trees of IMAGE as `btrfs inspect-internal dump-tree` does\n"
	"  dump-json IMAGE\n"
	"        print every tree of IMAGE as JSON\n"
	"  help | --help, version | --version\n";

static int fail_err(const char *cmd, const struct blab_err *e)
{
	fprintf(stderr, "btrfslab %s: %s\n", cmd, e->msg[0] ? e->msg : blab_strerror(e->code));
	return 1;
}

/* Parses "123", "64K", "256M", "1G", "2T" (binary units). Returns 0 or -1. */
static int parse_size(const char *s, u64 *out)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	int shift = 0;
	switch (*end) {
	case 0: break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -1;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || (shift && v > (~0ULL >> shift)))
		return -1;
	*out = (u64)v << shift;
	return 0;
}

static const char *opt_value(int argc, char **argv, int *i, const char *cmd)
{
	if (*i + 1 >= argc) {
		fprintf(stderr, "btrfslab %s: option %s needs a value\n", cmd, argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

static int random_seed(u64 *seed)
{
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, seed, sizeof(*seed));
		close(fd);
		if (n == (ssize_t)sizeof(*seed))
			return 0;
	}
	*seed = (u64)time(NULL) ^ ((u64)getpid() << 32);
	return 0;
}

static int cmd_mkfs(int argc, char **argv)
{
	struct mkfs_options o;
	const char *image = NULL, *v;
	int have_seed = 0, have_time = 0;
	btrfs_mkfs_defaults(&o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--size") || !strcmp(a, "-b")) {
			if (!(v = opt_value(argc, argv, &i, "mkfs")))
				return 2;
			if (parse_size(v, &o.size))
				return fprintf(stderr, "btrfslab mkfs: --size: '%s' is not a size (examples: 256M, 1G)\n", v), 2;
		} else if (!strcmp(a, "--nodesize") || !strcmp(a, "-n")) {
			u64 n;
			if (!(v = opt_value(argc, argv, &i, "mkfs")))
				return 2;
			if (parse_size(v, &n) || n > 65536)
				return fprintf(stderr, "btrfslab mkfs: --nodesize: '%s' is not one of 4K, 8K, 16K, 32K, 64K\n", v), 2;
			o.nodesize = (u32)n;
		} else if (!strcmp(a, "--label") || !strcmp(a, "-L")) {
			if (!(o.label = opt_value(argc, argv, &i, "mkfs")))
				return 2;
		} else if (!strcmp(a, "--seed")) {
			if (!(v = opt_value(argc, argv, &i, "mkfs")))
				return 2;
			if (parse_size(v, &o.seed))
				return fprintf(stderr, "btrfslab mkfs: --seed: '%s' is not a number\n", v), 2;
			have_seed = 1;
		} else if (!strcmp(a, "--time")) {
			if (!(v = opt_value(argc, argv, &i, "mkfs")))
				return 2;
			if (parse_size(v, &o.now))
				return fprintf(stderr, "btrfslab mkfs: --time: '%s' is not a number of seconds\n", v), 2;
			have_time = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "btrfslab mkfs: unknown option '%s'\n", a);
			return 2;
		} else if (image) {
			fprintf(stderr, "btrfslab mkfs: unexpected argument '%s' (the image is '%s')\n", a, image);
			return 2;
		} else {
			image = a;
		}
	}
	if (!image)
		return fprintf(stderr, "btrfslab mkfs: missing IMAGE\n%s", usage_text), 2;
	if (!have_seed)
		random_seed(&o.seed);
	if (!have_time) {
		const char *sde = getenv("SOURCE_DATE_EPOCH");
		o.now = sde && !parse_size(sde, &o.now) ? o.now : (u64)time(NULL);
	}
	struct blab_err err = {0};
	struct btrfs_fs_info *fs;
	if (btrfs_mkfs(&o, &fs, &err))
		return fail_err("mkfs", &err);
	int ret = image_write_file(&fs->dev, image, &err);
	btrfs_fs_free(fs);
	return ret ? fail_err("mkfs", &err) : 0;
}

static struct btrfs_fs_info *open_image(const char *cmd, const char *path)
{
	struct blab_device dev;
	struct blab_err err = {0};
	if (image_read_file(&dev, path, &err)) {
		fail_err(cmd, &err);
		return NULL;
	}
	struct btrfs_fs_info *fs = btrfs_open(&dev, &err);
	if (!fs)
		fail_err(cmd, &err);
	else
		fs->trace.enabled = 0;
	return fs;
}

static int parse_tree_id(const char *s, u64 *id)
{
	static const struct {
		const char *name;
		u64 id;
	} names[] = {{"root", 1}, {"extent", 2}, {"chunk", 3}, {"dev", 4}, {"fs", 5}, {"csum", 7}, {"quota", 8},
		     {"uuid", 9}, {"free-space", 10}, {"block-group", 11}, {"data-reloc", (u64)-9}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name)) {
			*id = names[i].id;
			return 0;
		}
	char *end;
	long long v = strtoll(s, &end, 10);
	if (*s && !*end) {
		*id = (u64)v;
		return 0;
	}
	return -1;
}

static int cmd_dump(int argc, char **argv, int json)
{
	const char *cmd = json ? "dump-json" : "dump-tree", *image = NULL;
	u64 tree = 0;
	for (int i = 1; i < argc; i++) {
		if (!json && (!strcmp(argv[i], "-t") || !strcmp(argv[i], "--tree"))) {
			const char *v = opt_value(argc, argv, &i, cmd);
			if (!v)
				return 2;
			if (parse_tree_id(v, &tree))
				return fprintf(stderr, "btrfslab %s: -t: unknown tree '%s'\n", cmd, v), 2;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return fprintf(stderr, "btrfslab %s: unknown option '%s'\n", cmd, argv[i]), 2;
		} else if (image) {
			return fprintf(stderr, "btrfslab %s: unexpected argument '%s'\n", cmd, argv[i]), 2;
		} else {
			image = argv[i];
		}
	}
	if (!image)
		return fprintf(stderr, "btrfslab %s: missing IMAGE\n", cmd), 2;
	struct btrfs_fs_info *fs = open_image(cmd, image);
	if (!fs)
		return 1;
	struct strbuf out = {0};
	int ret = json ? btrfs_dump_tree_json(fs, &out) : btrfs_dump_tree_text(fs, tree, &out);
	if (out.len)
		fwrite(out.s, 1, out.len, stdout);
	if (json)
		putchar('\n');
	if (ret)
		fail_err(cmd, &fs->err);
	sb_free(&out);
	btrfs_fs_free(fs);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return fputs(usage_text, stderr), 2;
	const char *c = argv[1];
	if (!strcmp(c, "help") || !strcmp(c, "--help") || !strcmp(c, "-h"))
		return fputs(usage_text, stdout), 0;
	if (!strcmp(c, "version") || !strcmp(c, "--version"))
		return puts("btrfslab " VERSION), 0;
	if (!strcmp(c, "mkfs"))
		return cmd_mkfs(argc - 1, argv + 1);
	if (!strcmp(c, "dump-tree"))
		return cmd_dump(argc - 1, argv + 1, 0);
	if (!strcmp(c, "dump-json"))
		return cmd_dump(argc - 1, argv + 1, 1);
	fprintf(stderr, "btrfslab: unknown command '%s'\n%s", c, usage_text);
	return 2;
}
