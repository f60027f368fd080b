/* btrfslab — the command-line face of the core. */
#include "../src/costs.h"
#include "../src/wallclock.h"
#include "../src/check.h"
#include "../src/crash.h"
#include "../src/disk-io.h"
#include "../src/file.h"
#include "../src/inode.h"
#include "../src/scenario.h"
#include "../src/scenario-table.h"
#include "../src/untar.h"
#include "../src/delalloc.h"
#include "../src/transaction.h"
#include "../src/checkpoint.h"
#include "../src/image.h"
#include "../src/mkfs.h"
#include "../src/print-tree.h"
#include "../src/rootdir.h"
#include "../src/transaction.h"
#include "extract.h"
#include "kernel.h"
#include "../src/qgroup.h"
#include "serve.h"
#include "../src/relocation.h"
#include "../src/tree-log.h"
#include "../src/block-group.h"
#include "write.h"
#include "ls.h"
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#define VERSION "0.1.0"

static const char usage_text[] =
	"usage: btrfslab COMMAND [ARGS]\n"
	"\n"
	"commands:\n"
	"  mkfs [--rootdir DIR] [--size S] [--nodesize N] [--label L] [--seed N] [--time T] IMAGE\n"
	"        write a btrfs filesystem to IMAGE, empty or holding a copy of DIR\n"
	"        (sizes take K, M, G suffixes; with --rootdir and no --size it is sized to fit)\n"
	"  run SCRIPT [--image OUT] [--metrics OUT.json] [--trace OUT.jsonl] [--seed N] [--time T]\n"
	"      [--max-ops N] [--max-bytes S] [--max-events N] [--max-memory S] [--max-time SECS]\n"
	"      [--crash-after LINE]\n"
	"        run a scenario script from an empty filesystem ('-' reads standard input;\n"
	"        --metrics - and --trace - write to standard output); a run may do 2000000\n"
	"        operations, write 1G, run 50000000 simulated events, take 4G of memory and\n"
	"        300 seconds of CPU unless --max-ops / --max-bytes / --max-events /\n"
	"        --max-memory / --max-time say otherwise (the error names the line and bound);\n"
	"        --crash-after LINE writes to --image what a power cut after LINE leaves\n"
	"        (the last commit and what fsync wrote), from a checkpoint of the run;\n"
	"        a run that fails writes no image, but its trace and metrics up to the\n"
	"        error (a deadlock's cycle: the trace's deadlock_edge events)\n"
	"  replay IMAGE -o OUT [--trace OUT.jsonl]\n"
	"        replay IMAGE's pending log tree as the kernel does at mount, commit, and\n"
	"        write the result (no log left) to OUT; --trace writes every replay step\n"
	"  balance [-m] [-d] [-s] [usage=N] [--qgroup-swap full|subtree|deferred] IMAGE -o OUT [--trace OUT.jsonl]\n"
	"        btrfs balance start on a copy of IMAGE (a pending log replayed first, as a mount\n"
	"        does): each block group of the types asked for (all when none; -m takes the system\n"
	"        ones too) relocated, highest first, and removed; prints what the kernel logs\n"
	"        (relocating block group N flags T, found N extents) and writes the result to OUT;\n"
	"        with quotas, the qgroup dirty extents it recorded, swaps traced as --qgroup-swap says;\n"
	"        an image holding reloc trees of a balance the kernel left unfinished is refused (the\n"
	"        kernel finishes it at its next read-write mount; nothing here writes to such an image)\n"
	"  crashes SCRIPT [--json] [--kernel] [--all | --sample N [--sample-seed S]] [--export DIR] [--no-check]\n"
	"          [--seed N] [--time T]\n"
	"        a power cut after every tree block or superblock copy the run writes (or a seeded\n"
	"        sample of N of them; past 128, a sample of 128 unless --all): each image replayed,\n"
	"        checked, and what every fsync that had\n"
	"        returned promised (its file's size and contents, its directory's names) verified;\n"
	"        exit status 1 when a promise is broken. --export writes each image tried and\n"
	"        points.json (the crash point, its line, the promises in force) to the new DIR;\n"
	"        --kernel (root) mounts each image tried too: the kernel's replay must list what the core's does\n"
	"  untar-list [--files N] [--bytes S] [--seed N]\n"
	"        the tree `untar random` makes, one line an entry in tar order ('d PATH',\n"
	"        'f PATH SIZE'), for unpacking the same tree elsewhere (the kernel's side)\n"
	"  costs [--json]\n"
	"        every cost of the time model (threads, fio, sleep) with its source, and the device\n"
	"        profiles (nvme, ssd, hdd, loop)\n"
	"  write IMAGE DEVICE [--dry-run] [--force] [--device-ok DEVICE] [--zero]\n"
	"        write IMAGE to a loop device (another block device only when --device-ok names it\n"
	"        again): refuses a mounted or busy device, one too small, one holding a filesystem\n"
	"        (unless --force); writes only the blocks in use, superblocks last, then reads it\n"
	"        all back; the rest discarded where the device can (zeroed with --zero)\n"
	"  serve [--port N] [--app URL] [--origin ORIGIN]... [--max-body S] [--timeout SECONDS]\n"
	"        (root) the companion the app asks the kernel through: 127.0.0.1 only, a random token\n"
	"        in the URL it prints, Origin and Host checked; one `kernel` job at a time\n"
	"  qgroup show [-p] [-r] [-e] [--raw] IMAGE\n"
	"        the quota groups of IMAGE as `btrfs qgroup show --raw` prints them (bytes; -p: parents,\n"
	"        -r / -e: the referenced / exclusive limits, none when unset)\n"
	"  kernel IMAGE [--json] [--in-place]\n"
	"        (root) a private copy of IMAGE (or IMAGE itself with --in-place) on a loop device of\n"
	"        its own, mounted by the kernel (which replays a pending log): every path it lists,\n"
	"        then btrfs check; the mount and loop device always removed\n"
	"  ls [--replay] [-R] [-l] IMAGE [PATH]\n"
	"        list a directory (or every path below it with -R) of any image\n"
	"        (--replay: of the state after replaying its log, nothing written)\n"
	"  cat [--replay] IMAGE PATH\n"
	"        write a file's contents to standard output (checksums verified)\n"
	"  extract [--same-permissions] [--devices] [--all-xattrs] [--max-size S] IMAGE DIR\n"
	"        copy every file of IMAGE into the new directory DIR (modes, owners, times, xattrs);\n"
	"        setuid/setgid bits, device nodes and trusted.*/security.* xattrs only with the\n"
	"        flags; at most S bytes of file data (default 16G, 0 for no limit). See SECURITY.md\n"
	"  check [--check-data-csum] IMAGE\n"
	"        the core's own consistency check\n"
	"  dump-tree [-t TREE] IMAGE\n"
	"        print the trees of IMAGE as `btrfs inspect-internal dump-tree` does\n"
	"  dump-json IMAGE\n"
	"        print every tree of IMAGE as JSON\n"
	"  trace-schema\n"
	"        print the kinds of event --trace writes, with their fields and types, as JSON\n"
	"  help scenario [--json]\n"
	"        the scenario language's commands and settings (as JSON: the table docs/scenario.md is made from)\n"
	"  help | --help | -h, version | --version\n";

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

static int cmd_mkfs(int argc, char **argv, int variant)
{
	struct mkfs_options o;
	const char *image = NULL, *rootdir = NULL, *v;
	int have_seed = 0, have_time = 0, have_size = 0;
	btrfs_mkfs_defaults(&o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--size") || !strcmp(a, "-b")) {
			if (!(v = opt_value(argc, argv, &i, "mkfs")))
				return 2;
			if (parse_size(v, &o.size))
				return fprintf(stderr, "btrfslab mkfs: --size: '%s' is not a size (examples: 256M, 1G)\n", v), 2;
			have_size = 1;
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
		} else if (!strcmp(a, "--rootdir") || !strcmp(a, "-r")) {
			if (!(rootdir = opt_value(argc, argv, &i, "mkfs")))
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
	struct rootdir_stats st;
	if (rootdir && !have_size) {
		if (rootdir_estimate(rootdir, o.nodesize, &o.size, &st, &err))
			return fail_err("mkfs", &err);
		if (o.size < btrfs_mkfs_min_size(o.nodesize))
			o.size = btrfs_mkfs_min_size(o.nodesize);
	}
	if (o.size < btrfs_mkfs_min_size(o.nodesize) || o.nodesize < 4096 || o.nodesize > 65536 || (o.nodesize & (o.nodesize - 1))) {
		struct btrfs_fs_info *none;
		btrfs_mkfs(&o, &none, &err); /* refuses with the reason */
		return fail_err("mkfs", &err);
	}
	/* the image file is the device: file data goes straight to it */
	struct blab_device dev;
	struct image_out out;
	if (image_create_file(&dev, image, o.size, &out, &err))
		return fail_err("mkfs", &err);
	o.device = &dev;
	struct btrfs_fs_info *fs;
	int ret = btrfs_mkfs(&o, &fs, &err);
	if (ret) {
		image_finish_file(&dev, &out, 0, NULL);
		return fail_err("mkfs", &err);
	}
	fs->trace.enabled = 0;
	if (rootdir) {
		btrfs_start_transaction(fs);
		ret = rootdir_copy(fs, rootdir, &st, &err);
		if (!ret && (ret = btrfs_commit_transaction(fs)))
			err = fs->err;
		if (ret == BLAB_ENOSPC && have_size) {
			u64 want;
			struct rootdir_stats s2;
			if (!rootdir_estimate(rootdir, o.nodesize, &want, &s2, &err))
				blab_fail(&err, BLAB_ENOSPC, "%s does not fit in %llu bytes: it needs about %llu (leave out --size to size the image to fit)",
					  rootdir, (unsigned long long)o.size, (unsigned long long)want);
		}
	}
	int fret = image_finish_file(&fs->dev, &out, ret == 0, ret ? NULL : &err);
	btrfs_fs_free(fs);
	return ret || fret ? fail_err("mkfs", &err) : 0;
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

/* open_image for a command that writes an image from this one: the layout
 * validated (btrfs_open_rw), for balance no reloc tree a kernel balance left
 * (the kernel's to finish: said before what check says of them), and the
 * image clean by check; or NULL with the refusal printed. */
static struct btrfs_fs_info *open_image_rw(const char *cmd, const char *path)
{
	struct btrfs_fs_info *fs = open_image(cmd, path);
	if (!fs)
		return NULL;
	if ((!strcmp(cmd, "balance") && btrfs_reloc_trees_left(fs, "balance")) || btrfs_verify_writable(fs) ||
	    btrfs_check_clean(fs, NULL)) {
		fprintf(stderr, "btrfslab %s: %s: refusing the image: %s; nothing written\n", cmd, path, fs->err.msg);
		btrfs_fs_free(fs);
		return NULL;
	}
	return fs;
}

/* Before a writer writes its result: the result clean by check (else a bug
 * of ours, and nothing is written). */
static int result_clean(const char *cmd, struct btrfs_fs_info *fs)
{
	if (!btrfs_check_clean(fs, "the result"))
		return 0;
	fprintf(stderr, "btrfslab %s: %s; nothing written (a btrfs-lab bug: please report it with the image)\n", cmd, fs->err.msg);
	return 1;
}

static int parse_tree_id(const char *s, u64 *id)
{
	static const struct {
		const char *name;
		u64 id;
	} names[] = {{"root", 1}, {"extent", 2}, {"chunk", 3}, {"dev", 4}, {"fs", 5}, {"csum", 7}, {"quota", 8},
		     {"uuid", 9}, {"free-space", 10}, {"free_space", 10}, {"block-group", 11}, {"data-reloc", (u64)-9}, {"tree-reloc", (u64)-8}, {"TREE_RELOC", (u64)-8}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name)) {
			*id = names[i].id;
			return 0;
		}
	/* a number: 0 to 2^64-1, or a negative one as the kernel's (u64)-8 for TREE_RELOC */
	char *end;
	errno = 0;
	u64 v = *s == '-' ? (u64)strtoll(s, &end, 10) : (u64)strtoull(s, &end, 10);
	if (*s && !*end && !errno) {
		*id = v;
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


/* The whole script: path must be a regular file, or "-" for standard
 * input. NULL with a message printed on failure. */
static char *read_script(const char *path, size_t *len)
{
	int fd = 0;
	if (strcmp(path, "-")) {
		struct stat st;
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return fprintf(stderr, "btrfslab run: cannot read %s: %s\n", path, strerror(errno)), NULL;
		if (fstat(fd, &st) < 0) {
			fprintf(stderr, "btrfslab run: cannot read %s: %s\n", path, strerror(errno));
			close(fd);
			return NULL;
		}
		if (!S_ISREG(st.st_mode)) {
			fprintf(stderr, "btrfslab run: %s: %s (SCRIPT must be a regular file or -)\n", path,
				S_ISDIR(st.st_mode) ? "is a directory" : S_ISFIFO(st.st_mode) ? "is a FIFO"
				: S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "is a device" : "is not a regular file");
			close(fd);
			return NULL;
		}
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf)
			break;
		if (n == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "btrfslab run: cannot read %s: %s\n", path, strerror(errno));
			free(buf);
			buf = NULL;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (!buf && errno == ENOMEM)
		fprintf(stderr, "btrfslab run: %s: out of memory\n", path);
	if (fd)
		close(fd);
	*len = n;
	return buf;
}
/* Writes text to path: a regular file (or a new one) atomically through a
 * temporary file and a rename; a device, a pipe or /dev/stdout in place. */
static int write_text(const char *user_path, const char *text, size_t len, const char *cmd)
{
	struct blab_err err = {0};
	char *path, *tmp;
	int special, fd;
	if (image_resolve_output(user_path, &path, &special, &err))
		return fail_err(cmd, &err);
	int ok;
	struct stat ts, os;
	if (!strcmp(user_path, "-") ||
	    (special && stat(path, &ts) == 0 && fstat(1, &os) == 0 && ts.st_dev == os.st_dev && ts.st_ino == os.st_ino)) {
		/* our own standard output (a pipe or socket cannot always be opened
		 * by name); a failed write is reported once, by stdout_done */
		fwrite(text, 1, len, stdout);
		free(path);
		return 0;
	}
	if (special) {
		FILE *f = fopen(path, "wb");
		ok = f && fwrite(text, 1, len, f) == len;
		if (f && fclose(f))
			ok = 0;
		if (!ok)
			fprintf(stderr, "btrfslab %s: cannot write %s: %s\n", cmd, user_path, strerror(errno));
		free(path);
		return ok ? 0 : 1;
	}
	/* a regular file: a temporary file made exclusively beside it, then a rename */
	if (image_temp_file(path, &tmp, &fd, &err)) {
		free(path);
		return fail_err(cmd, &err);
	}
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	ok = done == len;
	if (close(fd) < 0)
		ok = 0;
	if (ok && rename(tmp, path))
		ok = 0;
	if (!ok) {
		fprintf(stderr, "btrfslab %s: cannot write %s: %s\n", cmd, user_path, strerror(errno));
		unlink(tmp);
	}
	image_temp_forget(tmp);
	free(tmp);
	free(path);
	return ok ? 0 : 1;
}

/* The events of a trace, a JSON object a line, into path (written as
 * write_text writes). 0, or 1 after an error it has reported. */
static int write_trace(const char *path, const struct blab_trace *tr, const char *cmd)
{
	struct strbuf t = {0};
	for (size_t i = 0; i < tr->len; i++) {
		char buf[TRACE_JSON_MAX];
		trace_event_json(&tr->ev[i], buf, sizeof(buf));
		sb_printf(&t, "%s\n", buf);
	}
	int rc = t.oom || write_text(path, t.s ? t.s : "", t.len, cmd);
	sb_free(&t);
	return rc;
}

/* A scenario's mkfs rootdir= reads host directories, relative ones from the
 * script's own directory (the working directory for stdin). Returns the
 * directory string to free after the run. */
static char *host_dirs(struct scenario_options *o, const char *script)
{
	o->rootdir_estimate = rootdir_estimate;
	o->rootdir_copy = rootdir_copy;
	const char *slash = strrchr(script, '/');
	if (!strcmp(script, "-") || !slash)
		return NULL;
	char *d = slash == script ? strdup("/") : strndup(script, (size_t)(slash - script));
	o->base_dir = d;
	return d;
}

/* The memory a run may take (its data segment and mappings: RLIMIT_DATA),
 * unless --max-memory says otherwise: past it allocations fail and the run
 * ends with ENOMEM naming its line, and then the bound. */
#define RUN_MAX_MEMORY (4ULL << 30)

static int cmd_run(int argc, char **argv, int variant)
{
	const char *script = NULL, *image = NULL, *metrics = NULL, *trace = NULL, *v;
	struct scenario_options o = {.seed = 1, .now = 1700000000};
	u64 crash_after = 0, max_memory = RUN_MAX_MEMORY;
	int crash = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--image") || !strcmp(a, "--metrics") || !strcmp(a, "--trace") || !strcmp(a, "--seed") ||
		    !strcmp(a, "--time") || !strcmp(a, "--max-ops") || !strcmp(a, "--max-bytes") || !strcmp(a, "--crash-after") ||
		    !strcmp(a, "--max-events") || !strcmp(a, "--max-memory") || !strcmp(a, "--max-time")) {
			if (!(v = opt_value(argc, argv, &i, "run")))
				return 2;
			if (!strcmp(a, "--crash-after")) {
				if (parse_size(v, &crash_after) || crash_after > INT32_MAX)
					return fprintf(stderr, "btrfslab run: --crash-after: '%s' is not a line number\n", v), 2;
				crash = 1;
			} else if (!strcmp(a, "--max-time")) {
				u64 secs;
				if (parse_size(v, &secs) || !secs || secs > 1000000)
					return fprintf(stderr, "btrfslab run: --max-time: '%s' is not a number of seconds (1 to 1000000)\n", v), 2;
				o.max_cpu_s = (double)secs;
			} else if (!strcmp(a, "--image"))
				image = v;
			else if (!strcmp(a, "--metrics"))
				metrics = v;
			else if (!strcmp(a, "--trace"))
				trace = v;
			else if (parse_size(v, !strcmp(a, "--seed") ? &o.seed : !strcmp(a, "--time") ? &o.now
						    : !strcmp(a, "--max-ops") ? &o.max_ops : !strcmp(a, "--max-events") ? &o.max_events
						    : !strcmp(a, "--max-memory") ? &max_memory : &o.max_bytes))
				return fprintf(stderr, "btrfslab run: %s: '%s' is not a number\n", a, v), 2;
		} else if (a[0] == '-' && a[1]) {
			return fprintf(stderr, "btrfslab run: unknown option '%s'\n", a), 2;
		} else if (script) {
			return fprintf(stderr, "btrfslab run: unexpected argument '%s'\n", a), 2;
		} else {
			script = a;
		}
	}
	if (!script)
		return fprintf(stderr, "btrfslab run: missing SCRIPT\n"), 2;
	if (crash && !image)
		return fprintf(stderr, "btrfslab run: --crash-after needs --image (the image the power cut leaves)\n"), 2;
	struct rlimit rl;
	if (!max_memory)
		return fprintf(stderr, "btrfslab run: --max-memory must be above 0\n"), 2;
	if (!getrlimit(RLIMIT_DATA, &rl) && (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > max_memory)) {
		rl.rlim_cur = (rlim_t)max_memory;
		setrlimit(RLIMIT_DATA, &rl);
	}
	size_t len;
	char *text = read_script(script, &len);
	if (!text)
		return 1;
	char *base = host_dirs(&o, script);
	o.trace = trace != NULL;
	o.count_events = metrics != NULL;
	/* a failed run still writes its trace and metrics (a deadlock's cycle is at the trace's end); an image only
	 * after ENOSPC, as unmounting would leave it (its data written back and committed) */
	o.keep_failed = !crash && (trace || metrics || image);
	struct scenario_result res = {0};
	struct blab_err err = {0};
	struct scenario_session *sess = NULL;
	struct btrfs_fs_info *cut = NULL;
	const char *name = strcmp(script, "-") ? script : "<stdin>";
	int ret;
	if (crash) {
		/* the whole run, kept with checkpoints; the image is one of them plus a power cut */
		if (!(ret = scenario_session_new(text, len, name, &o, 0, &sess, &err))) {
			res = *scenario_session_result(sess);
			ret = scenario_session_crash(sess, (int)crash_after, &cut, &err);
		}
	} else {
		ret = scenario_run(text, len, name, &o, &res, &err);
	}
	free(text);
	if (ret == BLAB_ENOMEM)
		snprintf(err.msg + strlen(err.msg), sizeof(err.msg) - strlen(err.msg),
			 " (the run's memory bound is %llu bytes: --max-memory)", (unsigned long long)max_memory);
	if (ret && !res.fs) {
		free(base);
		scenario_session_free(sess);
		return fprintf(stderr, "%s\n", err.msg), 1;
	}
	int rc = 0;
	if (ret) {
		fprintf(stderr, "%s\n", err.msg);
		rc = 1;
		if (image && ret == BLAB_ENOSPC) {
			res.fs->err.code = 0;
			if (btrfs_sync_data(res.fs) || btrfs_commit_transaction(res.fs)) {
				fprintf(stderr, "btrfslab run: no image: the commit after ENOSPC failed: %s\n", res.fs->err.msg);
				image = NULL;
			}
		} else {
			image = NULL;
		}
	}
	if (metrics) {
		char *m = scenario_metrics_json(&res);
		rc |= !m || write_text(metrics, m, strlen(m), "run");
		free(m);
	}
	if (trace)
		rc |= write_trace(trace, &res.fs->trace, "run");
	if (image && image_write_file(cut ? &cut->dev : &res.fs->dev, image, &err)) {
		fail_err("run", &err);
		rc = 1;
	}
	if (sess) {
		btrfs_fs_free(cut);
		scenario_session_free(sess); /* res is the session's */
	} else {
		btrfs_fs_free(res.fs);
		scenario_result_free(&res);
	}
	free(base);
	return rc;
}

static int cmd_untar_list(int argc, char **argv)
{
	u64 files = 1000000, bytes = 1ULL << 30, seed = 1;
	for (int i = 1; i < argc; i++) {
		u64 *v = !strcmp(argv[i], "--files") ? &files : !strcmp(argv[i], "--bytes") ? &bytes : !strcmp(argv[i], "--seed") ? &seed : NULL;
		if (!v || i + 1 == argc || parse_size(argv[i + 1], v))
			return fprintf(stderr, "btrfslab untar-list: usage: untar-list [--files N] [--bytes S] [--seed N]\n"), 2;
		i++;
	}
	if (!files || files > 1000000)
		return fprintf(stderr, "btrfslab untar-list: --files is 1 to 1000000\n"), 2;
	struct untar_gen g;
	untar_init(&g, "/", seed, files, bytes);
	u64 off, len;
	int k;
	while ((k = untar_next(&g, &off, &len)) != UNTAR_END)
		if (k == UNTAR_MKDIR)
			printf("d %s\n", g.path + 1);
		else if (k == UNTAR_CREATE)
			printf("f %s %llu\n", g.path + 1, (unsigned long long)g.write_len);
	return fflush(stdout) ? 1 : 0;
}

static int cmd_replay(int argc, char **argv, int variant)
{
	const char *image = NULL, *out = NULL, *trace = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((!strcmp(a, "-o") || !strcmp(a, "--trace")) && i + 1 < argc) {
			if (!strcmp(a, "-o"))
				out = argv[++i];
			else
				trace = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			return fprintf(stderr, "btrfslab replay: unknown option '%s'\n", a), 2;
		} else if (!image) {
			image = a;
		} else {
			return fprintf(stderr, "btrfslab replay: unexpected argument '%s'\n", a), 2;
		}
	}
	if (!image || !out)
		return fprintf(stderr, "btrfslab replay: usage: replay IMAGE -o OUT [--trace OUT.jsonl]\n"), 2;
	struct btrfs_fs_info *fs = open_image_rw("replay", image);
	if (!fs)
		return 1;
	fs->trace.enabled = trace != NULL;
	u64 log_root = btrfs_super_log_root(fs->super), gen = btrfs_super_generation(fs->super);
	struct btrfs_replay_stats st = {0};
	int rc = 0;
	struct timespec t0 = wallclock_now();
	int failed = btrfs_replay_log(fs, &st);
	double ms = wallclock_ms_since(&t0);
	if (failed) {
		fprintf(stderr, "btrfslab replay: %s: %s; nothing written\n", image, fs->err.msg[0] ? fs->err.msg : blab_errname(failed));
		btrfs_fs_free(fs);
		return 1;
	}
	if (result_clean("replay", fs)) {
		btrfs_fs_free(fs);
		return 1;
	}
	if (trace)
		rc |= write_trace(trace, &fs->trace, "replay");
	struct blab_err err = {0};
	if (image_write_file(&fs->dev, out, &err)) {
		fail_err("replay", &err);
		rc = 1;
	} else if (!log_root) {
		printf("%s: no log to replay; written unchanged to %s\n", image, out);
	} else {
		u64 n = 0;
		for (int i = 0; i < BTRFS_REPLAY_ACTION_COUNT; i++)
			n += st.actions[i];
		printf("%s: replayed the log of transaction %llu (%llu log leaves, %llu steps, %.1f ms); committed as %llu to %s\n",
		       image, (unsigned long long)(gen + 1), (unsigned long long)st.leaves, (unsigned long long)n, ms,
		       (unsigned long long)fs->generation, out);
	}
	btrfs_fs_free(fs);
	return rc;
}

static const char *group_type(u64 flags)
{
	return (flags & BTRFS_BLOCK_GROUP_DATA) ? ((flags & BTRFS_BLOCK_GROUP_METADATA) ? "data|metadata" : "data")
	       : (flags & BTRFS_BLOCK_GROUP_SYSTEM) ? "system"
						    : "metadata";
}

static void print_group(void *ctx, u64 start, u64 flags, u64 extents)
{
	(void)ctx;
	printf("relocating block group %llu flags %s\nfound %llu extents\n", (unsigned long long)start, group_type(flags),
	       (unsigned long long)extents);
}

static int cmd_balance(int argc, char **argv, int variant)
{
	(void)variant;
	const char *image = NULL, *out = NULL, *trace = NULL;
	u64 mask = 0;
	int usage = 100, swap = BTRFS_QGROUP_SWAP_DEFERRED;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((!strcmp(a, "-o") || !strcmp(a, "--trace")) && i + 1 < argc) {
			if (!strcmp(a, "-o"))
				out = argv[++i];
			else
				trace = argv[++i];
		} else if (!strcmp(a, "--qgroup-swap") && i + 1 < argc) {
			const char *m = argv[++i];
			if (!strcmp(m, "full"))
				swap = BTRFS_QGROUP_SWAP_FULL;
			else if (!strcmp(m, "subtree"))
				swap = BTRFS_QGROUP_SWAP_SUBTREE;
			else if (!strcmp(m, "deferred"))
				swap = BTRFS_QGROUP_SWAP_DEFERRED;
			else
				return fprintf(stderr, "btrfslab balance: --qgroup-swap full (before 4.20), subtree (4.20) or deferred (since 5.1), not '%s'\n", m), 2;
		} else if (!strcmp(a, "-m")) {
			mask |= BTRFS_BLOCK_GROUP_METADATA | BTRFS_BLOCK_GROUP_SYSTEM;
		} else if (!strcmp(a, "-d")) {
			mask |= BTRFS_BLOCK_GROUP_DATA;
		} else if (!strcmp(a, "-s")) {
			mask |= BTRFS_BLOCK_GROUP_SYSTEM;
		} else if (!strncmp(a, "usage=", 6)) {
			char *end;
			long v = strtol(a + 6, &end, 10);
			if (!a[6] || *end || v < 0 || v > 100)
				return fprintf(stderr, "btrfslab balance: '%s': usage is a percentage, 0 to 100\n", a), 2;
			usage = (int)v;
		} else if (a[0] == '-' && a[1]) {
			return fprintf(stderr, "btrfslab balance: unknown option '%s'\n", a), 2;
		} else if (!image) {
			image = a;
		} else {
			return fprintf(stderr, "btrfslab balance: unexpected argument '%s'\n", a), 2;
		}
	}
	if (!image || !out)
		return fprintf(stderr, "btrfslab balance: usage: balance [-m] [-d] [-s] [usage=N] IMAGE -o OUT [--trace OUT.jsonl]\n"), 2;
	struct btrfs_fs_info *fs = open_image_rw("balance", image);
	if (!fs)
		return 1;
	fs->trace.enabled = trace != NULL;
	struct btrfs_replay_stats rs = {0};
	struct btrfs_reloc_stats st = {.on_group = print_group};
	int rc = 0;
	btrfs_qgroup_set_swap_mode(fs, swap);
	struct timespec t0 = wallclock_now();
	int failed;
	if ((failed = btrfs_reloc_trees_left(fs, "balance")) || (failed = btrfs_replay_log(fs, &rs)) ||
	    (!fs->bg_loaded && (failed = btrfs_load_block_groups(fs))) ||
	    (failed = btrfs_balance(fs, mask ? mask : BTRFS_BLOCK_GROUP_TYPE_MASK, usage, &st))) {
		fprintf(stderr, "btrfslab balance: %s: %s; nothing written\n", image, fs->err.msg[0] ? fs->err.msg : blab_errname(failed));
		btrfs_fs_free(fs);
		return 1;
	}
	/* the balance's time: up to its last commit, as the kernel's balance ends (the image file written after it is
	 * ours to make, like a copy of the kernel's image, and timed apart) */
	double ms = wallclock_ms_since(&t0);
	if (result_clean("balance", fs)) {
		btrfs_fs_free(fs);
		return 1;
	}
	if (trace)
		rc |= write_trace(trace, &fs->trace, "balance");
	struct blab_err err = {0};
	t0 = wallclock_now();
	if (image_write_file(&fs->dev, out, &err)) {
		fail_err("balance", &err);
		rc = 1;
	} else {
		double write_ms = wallclock_ms_since(&t0);
		if (btrfs_qgroup_enabled(fs))
			printf("qgroup dirty extents %llu (qgroup_swap=%s)\n", (unsigned long long)btrfs_qgroup_dirty_total(fs),
			       swap == BTRFS_QGROUP_SWAP_FULL ? "full" : swap == BTRFS_QGROUP_SWAP_SUBTREE ? "subtree" : "deferred");
		printf("relocated %llu block groups (%llu extents, %llu tree blocks copied) in %.1f ms; written to %s in %.1f ms\n",
		       (unsigned long long)st.block_groups, (unsigned long long)st.extents, (unsigned long long)st.tree_blocks, ms, out,
		       write_ms);
	}
	btrfs_fs_free(fs);
	return rc;
}

/* Writes a regular file's contents to standard output; stops at the first
 * failed write (the caller reports it). */
static int cat_file(struct btrfs_fs_info *fs, const char *path)
{
	u64 ino;
	struct btrfs_root *root;
	struct btrfs_inode in;
	if (btrfs_lookup_path_subvol(fs, path, &root, &ino) || btrfs_read_inode(fs, root, ino, &in))
		return fprintf(stderr, "btrfslab cat: %s\n", fs->err.msg), 1;
	if ((in.mode & S_IFMT_) != S_IFREG_)
		return fprintf(stderr, "btrfslab cat: %s: %s\n", path, (in.mode & S_IFMT_) == S_IFDIR_ ? "is a directory" : "not a regular file"), 1;
	u8 *buf = malloc(1 << 20);
	int rc = buf ? 0 : 1;
	for (u64 off = 0; buf && off < in.size;) {
		u64 got;
		if (btrfs_file_read(fs, root, ino, off, buf, 1 << 20, &got, 1)) {
			fprintf(stderr, "btrfslab cat: %s: %s\n", path, fs->err.msg);
			rc = 1;
			break;
		}
		if (!got || fwrite(buf, 1, got, stdout) != got)
			break; /* a failed write is reported by main */
		off += got;
	}
	free(buf);
	return rc;
}

static int cmd_ls_cat(int argc, char **argv, int cat)
{
	const char *cmd = cat ? "cat" : "ls", *image = NULL, *path = NULL;
	int replay = 0, flags = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--replay")) {
			replay = 1;
		} else if (!cat && a[0] == '-' && a[1] && a[1] != '-' && strspn(a + 1, "Rl") == strlen(a + 1)) {
			flags |= strchr(a, 'R') ? LS_RECURSIVE : 0;
			flags |= strchr(a, 'l') ? LS_LONG : 0;
		} else if (a[0] == '-' && a[1]) {
			return fprintf(stderr, "btrfslab %s: unknown option '%s'\n", cmd, a), 2;
		} else if (!image) {
			image = a;
		} else if (!path) {
			path = a;
		} else {
			return fprintf(stderr, "btrfslab %s: unexpected argument '%s'\n", cmd, a), 2;
		}
	}
	if (!image || (cat && !path))
		return fprintf(stderr, "btrfslab %s: usage: %s\n", cmd, cat ? "cat [--replay] IMAGE PATH" : "ls [--replay] [-R] [-l] IMAGE [PATH]"), 2;
	if (!path)
		path = "/";
	struct btrfs_fs_info *fs = open_image(cmd, image);
	if (!fs)
		return 1;
	int rc;
	if (replay && btrfs_replay_log(fs, NULL)) {
		fprintf(stderr, "btrfslab %s: replaying the log of %s: %s\n", cmd, image, fs->err.msg);
		rc = 1;
	} else {
		rc = cat ? cat_file(fs, path) : ls_run(fs, path, flags, stdout, stderr);
	}
	btrfs_fs_free(fs);
	return rc;
}

static int cmd_extract(int argc, char **argv, int variant)
{
	struct extract_opts o = {.max_size = EXTRACT_DEFAULT_MAX_SIZE};
	const char *image = NULL, *dir = NULL, *usage = "btrfslab extract: usage: extract [--same-permissions] [--devices] "
							  "[--all-xattrs] [--max-size S] IMAGE DIR (DIR must not exist)\n";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--same-permissions"))
			o.same_permissions = 1;
		else if (!strcmp(a, "--devices"))
			o.devices = 1;
		else if (!strcmp(a, "--all-xattrs"))
			o.all_xattrs = 1;
		else if (!strcmp(a, "--max-size")) {
			const char *v = opt_value(argc, argv, &i, "extract");
			if (!v)
				return 2;
			if (parse_size(v, &o.max_size))
				return fprintf(stderr, "btrfslab extract: --max-size: '%s' is not a size (examples: 512M, 4G, 0)\n", v), 2;
		} else if (a[0] == '-' && a[1])
			return fprintf(stderr, "btrfslab extract: unknown option '%s'\n%s", a, usage), 2;
		else if (!image)
			image = a;
		else if (!dir)
			dir = a;
		else
			return fputs(usage, stderr), 2;
	}
	if (!image || !dir)
		return fputs(usage, stderr), 2;
	struct stat st;
	if (lstat(dir, &st) == 0)
		return fprintf(stderr, "btrfslab extract: %s exists: give a directory to create\n", dir), 1;
	struct btrfs_fs_info *fs = open_image("extract", image);
	if (!fs)
		return 1;
	int rc = extract_tree(fs, dir, &o, stderr);
	btrfs_fs_free(fs);
	return rc ? 1 : 0;
}

static int cmd_check(int argc, char **argv, int variant)
{
	int flags = 0;
	const char *image = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check-data-csum"))
			flags |= CHECK_DATA_CSUM;
		else if (argv[i][0] == '-' || image)
			return fprintf(stderr, "btrfslab check: usage: check [--check-data-csum] IMAGE\n"), 2;
		else
			image = argv[i];
	}
	if (!image)
		return fprintf(stderr, "btrfslab check: usage: check [--check-data-csum] IMAGE\n"), 2;
	struct btrfs_fs_info *fs = open_image("check", image);
	if (!fs)
		return 1;
	struct strbuf out = {0};
	int errors = btrfs_check_fs(fs, &out, flags);
	if (out.len)
		fwrite(out.s, 1, out.len, stdout);
	printf("%s: %d error%s found\n", image, errors, errors == 1 ? "" : "s");
	sb_free(&out);
	btrfs_fs_free(fs);
	return errors ? 1 : 0;
}

static int cmd_qgroup(int argc, char **argv, int variant)
{
	(void)variant;
	int columns = 0, bad = 0;
	const char *image = NULL;
	for (int i = 2; i < argc; i++) {
		if (argv[i][0] == '-' && argv[i][1] && argv[i][1] != '-') {
			/* -p, -r, -e, or several at once (-pre), as progs takes them */
			for (const char *f = argv[i] + 1; *f; f++) {
				const char *at = strchr("pre", *f);
				if (at)
					columns |= 1 << (at - "pre"); /* BTRFS_QGROUP_SHOW_PARENTS, _MAX_RFER, _MAX_EXCL */
				else
					bad = 1;
			}
			if (bad)
				image = NULL, i = argc;
		} else if (!strcmp(argv[i], "--raw"))
			; /* bytes: the only way it prints */
		else if (argv[i][0] == '-' || image)
			image = NULL, i = argc;
		else
			image = argv[i];
	}
	if (argc < 3 || strcmp(argv[1], "show") || !image || bad)
		return fprintf(stderr, "btrfslab qgroup: usage: qgroup show [-p] [-r] [-e] [--raw] IMAGE\n"), 2;
	struct btrfs_fs_info *fs = open_image("qgroup", image);
	if (!fs)
		return 1;
	int rc = 0;
	if (!btrfs_qgroup_enabled(fs)) {
		fprintf(stderr, "btrfslab qgroup: %s: quotas are not enabled\n", image);
		rc = 1;
	} else {
		struct strbuf out = {0};
		btrfs_qgroup_show(fs, &out, columns);
		if (btrfs_qgroup_status(fs) & BTRFS_QGROUP_STATUS_FLAG_INCONSISTENT)
			fprintf(stderr, "WARNING: qgroup data inconsistent, rescan recommended\n");
		fwrite(out.s, 1, out.len, stdout);
		sb_free(&out);
	}
	btrfs_fs_free(fs);
	return rc;
}

/* --export of `crashes`: each crash image tried, and a manifest. */
struct crash_export {
	const char *dir;      /* --export DIR, or NULL */
	struct strbuf manifest;
	u64 n;
	int kernel;           /* --kernel */
	char tmp[64];         /* its private directory */
	u64 kernel_tried;
};

/* --kernel: the crash image, mounted by the kernel (its replay), must list
 * what the core's replay of it holds. 1 with err->msg when they differ. */
static int kernel_point(struct crash_export *x, const struct crash_point *p, const char *path, struct blab_err *err)
{
	struct blab_device dev;
	struct btrfs_fs_info *fs;
	struct listing ours;
	if (image_read_file(&dev, path, err) || !(fs = btrfs_open(&dev, err)))
		return blab_fail(err, BLAB_EIO, "crash point %llu: %s", (unsigned long long)p->index, err->msg), 1;
	int ret = btrfs_replay_log(fs, NULL);
	if (ret) {
		snprintf(err->msg, sizeof(err->msg), "the core's replay fails: %s", fs->err.msg);
		btrfs_fs_free(fs);
		return 1;
	}
	ret = core_listing(fs, &ours);
	btrfs_fs_free(fs);
	if (ret) {
		snprintf(err->msg, sizeof(err->msg), "the core's replayed state cannot be listed: %s", ours.error);
		listing_free(&ours);
		return 1;
	}
	struct kernel_view kv;
	if (kernel_inspect(path, 1, &kv)) {
		listing_free(&ours);
		return blab_fail(err, BLAB_EIO, "the kernel: %s", kv.err);
	}
	x->kernel_tried++;
	char why[400];
	int bad = 0;
	if (kv.stopped)
		ret = blab_fail(err, BLAB_EINVAL, "interrupted by signal %d (the mount and loop device are removed)", kv.stopped);
	else if (kv.mount_err[0])
		bad = snprintf(err->msg, sizeof(err->msg), "the kernel cannot mount it: %s", kv.mount_err) > 0;
	else if (!kv.check_ok)
		bad = snprintf(err->msg, sizeof(err->msg), "btrfs check fails after the kernel's replay: %.300s", kv.check.s ? kv.check.s : "") > 0;
	else if (listings_differ(&kv.files, &ours, why, sizeof(why)))
		bad = snprintf(err->msg, sizeof(err->msg), "%s", why) > 0;
	kernel_view_free(&kv);
	listing_free(&ours);
	return ret ? ret : bad;
}

static int export_point(void *ctx, const struct crash_point *p, struct blab_device *image, const char *promises,
			struct blab_err *err)
{
	struct crash_export *x = ctx;
	char path[4096];
	snprintf(path, sizeof(path), "%s/point-%06llu.img", x->dir ? x->dir : x->tmp, (unsigned long long)p->index);
	int ret = image_write_file(image, path, err);
	device_free(image);
	if (ret)
		return ret;
	int bad = x->kernel ? kernel_point(x, p, path, err) : 0;
	if (!x->dir) {
		unlink(path);
		return bad;
	}
	if (bad) /* the kernel differs: the image stays in DIR for a look */
		return bad;
	struct strbuf d = {0};
	crash_point_describe(p, &d);
	sb_printf(&x->manifest, "%s{\"point\":%llu,\"seq\":%llu,\"line\":%d,\"image\":\"point-%06llu.img\",\"at\":",
		  x->n++ ? ",\n" : "", (unsigned long long)p->index, (unsigned long long)p->seq, p->line,
		  (unsigned long long)p->index);
	sb_json_string(&x->manifest, d.s ? d.s : "", d.len);
	sb_printf(&x->manifest, ",\"promises\":%s}", promises);
	sb_free(&d);
	return x->manifest.oom ? blab_fail(err, BLAB_ENOMEM, "crashes --export") : 0;
}

static int cmd_crashes(int argc, char **argv, int variant)
{
	(void)variant;
	const char *script = NULL, *export_dir = NULL, *v;
	struct scenario_options o = {.seed = 1, .now = 1700000000};
	struct crash_walk_options wo = {0};
	struct crash_export x = {0};
	int json = 0, all = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--seed") || !strcmp(a, "--time") || !strcmp(a, "--sample") || !strcmp(a, "--sample-seed") ||
		    !strcmp(a, "--export")) {
			if (!(v = opt_value(argc, argv, &i, "crashes")))
				return 2;
			if (!strcmp(a, "--export"))
				export_dir = v;
			else if (parse_size(v, !strcmp(a, "--seed") ? &o.seed : !strcmp(a, "--time") ? &o.now
					    : !strcmp(a, "--sample") ? &wo.sample : &wo.sample_seed))
				return fprintf(stderr, "btrfslab crashes: %s: '%s' is not a number\n", a, v), 2;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--no-check")) {
			wo.no_check = 1;
		} else if (!strcmp(a, "--all")) {
			all = 1;
		} else if (!strcmp(a, "--kernel")) {
			x.kernel = 1;
		} else if (a[0] == '-' && a[1]) {
			return fprintf(stderr, "btrfslab crashes: unknown option '%s'\n", a), 2;
		} else if (script) {
			return fprintf(stderr, "btrfslab crashes: unexpected argument '%s'\n", a), 2;
		} else {
			script = a;
		}
	}
	if (!script)
		return fprintf(stderr, "btrfslab crashes: missing SCRIPT\n"), 2;
	if (all && wo.sample)
		return fprintf(stderr, "btrfslab crashes: --all and --sample: give one\n"), 2;
	int by_default = !all && !wo.sample;
	if (by_default)
		wo.sample = CRASH_SAMPLE_DEFAULT;
	x.dir = export_dir;
	if (x.kernel) {
		if (geteuid() != 0)
			return fprintf(stderr, "btrfslab crashes: --kernel needs root (each crash image is mounted on a loop device)\n"), 1;
		snprintf(x.tmp, sizeof(x.tmp), "/tmp/btrfslab-crashes-XXXXXX");
		if (!mkdtemp(x.tmp))
			return fprintf(stderr, "btrfslab crashes: a private directory: %s\n", strerror(errno)), 1;
		kernel_catch_signals();
		wo.on_point = export_point;
		wo.ctx = &x;
	}
	if (export_dir) {
		/* a new directory of our own: nothing of anyone else's is overwritten */
		if (mkdir(export_dir, 0700))
			return fprintf(stderr, "btrfslab crashes: --export %s: %s (give a directory that does not exist yet)\n",
				       export_dir, strerror(errno)), 1;
		wo.on_point = export_point;
		wo.ctx = &x;
	}
	size_t len;
	char *text = read_script(script, &len);
	if (!text)
		return 1;
	const char *name = strcmp(script, "-") ? script : "<stdin>";
	struct crash_report rep;
	struct blab_err err = {0};
	char *base = host_dirs(&o, script);
	int ret = crash_walk(text, len, name, &o, &wo, &rep, &err);
	free(text);
	free(base);
	if (x.tmp[0])
		rmdir(x.tmp);
	if (ret) {
		sb_free(&x.manifest);
		return fprintf(stderr, "btrfslab crashes: %s\n", err.msg), 1;
	}
	int rc = rep.nbroken ? 1 : 0;
	if (export_dir) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/points.json", export_dir);
		struct strbuf m = {0};
		sb_printf(&m, "[%s]\n", x.manifest.s ? x.manifest.s : "");
		rc |= m.oom || write_text(path, m.s, m.len, "crashes");
		sb_free(&m);
		sb_free(&x.manifest);
	}
	if (json) {
		struct strbuf out = {0};
		crash_report_json(&rep, &out);
		printf("%s\n", out.s ? out.s : "{}");
		sb_free(&out);
	} else {
		printf("%s: %llu crash points after mkfs (%llu after a tree block, %llu after a superblock copy), %llu tried%s\n",
		       name, (unsigned long long)rep.points, (unsigned long long)rep.blocks, (unsigned long long)rep.supers,
		       (unsigned long long)rep.tried,
		       rep.tried >= rep.points ? ""
		       : by_default ? " (a seeded sample: a walk tries " CRASH_SAMPLE_TEXT " crash points at most unless --all)"
				    : " (a seeded sample)");
		printf("fsync promises made: %llu; broken: %zu%s\n", (unsigned long long)rep.promises, rep.nbroken,
		       wo.no_check ? "" : " (each replayed state checked too)");
		if (x.kernel)
			printf("the kernel mounted %llu of the crash images: its replay listed what the core's did%s\n",
			       (unsigned long long)x.kernel_tried, rep.nbroken ? ", except where said below" : "");
		for (size_t i = 0; i < rep.nbroken; i++) {
			const struct crash_broken *b = &rep.broken[i];
			struct strbuf d = {0};
			crash_point_describe(&b->at, &d);
			if (b->at.line > rep.lines)
				printf("crash point %llu (the final commit, %s): %s\n", (unsigned long long)b->at.index, d.s ? d.s : "", b->what);
			else
				printf("crash point %llu (line %d, %s): %s\n", (unsigned long long)b->at.index, b->at.line, d.s ? d.s : "", b->what);
			sb_free(&d);
		}
	}
	crash_report_free(&rep);
	return rc;
}

/* Standard output, flushed and closed: 0, or 1 with "write error" said. */
static int stdout_done(const char *cmd)
{
	int bad = fflush(stdout) != 0 || ferror(stdout);
	int e = errno;
	if (fclose(stdout) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad)
		fprintf(stderr, "btrfslab %s: write error: %s\n", cmd, strerror(e ? e : EIO));
	return bad;
}

/* Prints a JSON document the core made (malloc'd; NULL when it ran out of memory) and frees it. */
static int put_json(const char *cmd, char *s)
{
	if (!s)
		return fprintf(stderr, "btrfslab %s: out of memory\n", cmd), 1;
	puts(s);
	free(s);
	return 0;
}

/* help scenario [--json]: the scenario language's commands and settings, from their table */
static int cmd_help_scenario(int argc, char **argv)
{
	int json = argc == 3 && !strcmp(argv[2], "--json");
	if (strcmp(argv[1], "scenario") || (argc != 2 && !json))
		return fprintf(stderr, "btrfslab help: usage: help [scenario [--json]]\n"), 2;
	if (json)
		return put_json("help", scenario_table_json());
	printf("scenario commands (one a line; # comments; sizes take K, M, G; arguments may be double-quoted):\n");
	for (const struct scenario_doc *d = scenario_commands; d->name; d++)
		printf("  %s%s%s\n        %s%s\n", d->name, *d->args ? " " : "", d->args, d->what,
		       d->where == SCENARIO_FIRST ? "" : d->where == SCENARIO_SCRIPT ? " (not in a thread)" : "");
	printf("\nsettings (set NAME=VALUE):\n");
	for (const struct scenario_doc *d = scenario_settings; d->name; d++)
		printf("  %s=%s\n        %s\n", d->name, d->args, d->what);
	return 0;
}

static int run_command(int argc, char **argv)
{
	const char *c = argv[1];
	if (!strcmp(c, "help") && argc > 2)
		return cmd_help_scenario(argc - 1, argv + 1);
	if (!strcmp(c, "help") || !strcmp(c, "--help") || !strcmp(c, "-h"))
		return fputs(usage_text, stdout), 0;
	if (!strcmp(c, "version") || !strcmp(c, "--version"))
		return puts("btrfslab " VERSION), 0;
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv, int variant);
		int variant;
	} commands[] = {
		{"mkfs", cmd_mkfs, 0},   {"run", cmd_run, 0},		{"replay", cmd_replay, 0}, {"balance", cmd_balance, 0},
		{"ls", cmd_ls_cat, 0},   {"cat", cmd_ls_cat, 1},	{"extract", cmd_extract, 0},
		{"check", cmd_check, 0}, {"dump-tree", cmd_dump, 0}, {"dump-json", cmd_dump, 1},
		{"crashes", cmd_crashes, 0},	 {"kernel", cmd_kernel, 0}, {"write", cmd_write, 0}, {"serve", cmd_serve, 0},
		{"qgroup", cmd_qgroup, 0},
	};
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(c, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1, commands[i].variant);
	if (!strcmp(c, "untar-list"))
		return cmd_untar_list(argc - 1, argv + 1);
	if (!strcmp(c, "costs")) {
		int json = argc == 3 && !strcmp(argv[2], "--json");
		if (argc != 2 && !json)
			return fprintf(stderr, "btrfslab costs: usage: costs [--json]\n"), 2;
		if (json)
			return put_json("costs", btrfs_costs_json());
		printf("%-18s %12s  %-15s %s\n", "key", "ns", "per", "source");
		for (int i = 0; i < COST_COUNT; i++)
			printf("%-18s %12llu  %-15s %s\n", btrfs_costs[i].key, (unsigned long long)btrfs_costs[i].ns, btrfs_costs[i].unit,
			       btrfs_costs[i].source);
		printf("\n%-6s %4s %4s %4s %10s %14s %10s %10s %8s %4s %6s  %s\n", "device", "cpus", "cpu", "qd", "latency", "bandwidth",
		       "flush", "fua", "seek", "ssd", "jitter", "source");
		for (const struct btrfs_device_profile *d = btrfs_device_profiles; d->name; d++)
			printf("%-6s %4d %3u%% %4d %8lluus %12lluB/s %8lluus %8lluus %6lluus %4s %5u%%  %s\n", d->name, d->cpus, d->cpu_pct,
			       d->queue_depth,
			       (unsigned long long)d->write_latency_ns / 1000, (unsigned long long)d->bandwidth,
			       (unsigned long long)d->flush_ns / 1000, (unsigned long long)d->fua_ns / 1000,
			       (unsigned long long)d->seek_ns / 1000, d->ssd ? "yes" : "no", d->jitter_pct, d->source);
		return 0;
	}
	if (!strcmp(c, "trace-schema")) {
		if (argc != 2)
			return fprintf(stderr, "btrfslab trace-schema: usage: trace-schema (no arguments)\n"), 2;
		const char *schema = trace_schema_json();
		if (!schema)
			return fprintf(stderr, "btrfslab trace-schema: the schema does not fit its buffer\n"), 1;
		return puts(schema), 0;
	}
	fprintf(stderr, "btrfslab: unknown command '%s'\n%s", c, usage_text);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return fputs(usage_text, stderr), 2;
	int rc = run_command(argc, argv);
	if (stdout_done(argv[1]) && !rc)
		rc = 1;
	return rc;
}
