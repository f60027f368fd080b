/* Extract every file into a fresh directory, then remove it. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "../cli/extract.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

/* Removes what dirfd holds, through fds (paths may be deeper than PATH_MAX). */
static void remove_below(int dirfd)
{
	DIR *d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type == DT_DIR) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			if (sub >= 0) {
				fchmod(sub, 0700);
				remove_below(sub);
			}
			unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
		} else {
			unlinkat(dirfd, e->d_name, 0);
		}
	}
	closedir(d);
}

/* What remove_below could not remove (deeper than the descriptors it may
 * hold open): rm -rf, which walks any depth. path is ours, without quotes. */
static void remove_deep(const char *path)
{
	char cmd[4200];
	if (!strchr(path, '\'') && snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path) < (int)sizeof(cmd) && system(cmd))
		fprintf(stderr, "fuzz extract: cannot remove %s\n", path);
}

static char base[4096];

static void remove_base(void)
{
	remove_deep(base);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!base[0]) { /* $TMPDIR (a tmpfs is much quicker) or /tmp */
		const char *tmp = getenv("TMPDIR");
		snprintf(base, sizeof(base), "%s/btrfslab-fuzz-XXXXXX", tmp && *tmp && strlen(tmp) < 4000 ? tmp : "/tmp");
		if (!mkdtemp(base))
			abort();
		null = fopen("/dev/null", "w");
		atexit(remove_base);
	}
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return 0;
	static unsigned long run;
	char target[sizeof(base) + 32];
	snprintf(target, sizeof(target), "%s/x%lu", base, run++); /* a leftover never blocks the next run */
	struct extract_opts o = {.max_size = 64u << 20};
	extract_tree(fs, target, &o, null);
	btrfs_fs_free(fs);
	int fd = open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd >= 0) {
		fchmod(fd, 0700);
		remove_below(fd);
	}
	if (rmdir(target) && errno != ENOENT)
		remove_deep(target);
	return 0;
}
