/* Extract every file into a fresh directory, then remove it. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "../cli/extract.h"
#include <dirent.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char base[64];
	static FILE *null;
	if (!base[0]) {
		snprintf(base, sizeof(base), "/tmp/btrfslab-fuzz-XXXXXX");
		if (!mkdtemp(base))
			abort();
		null = fopen("/dev/null", "w");
	}
	struct btrfs_fs_info *fs = fuzz_open(data, size);
	if (!fs)
		return 0;
	char target[96];
	snprintf(target, sizeof(target), "%s/x", base);
	struct extract_opts o = {.max_size = 64u << 20};
	extract_tree(fs, target, &o, null);
	btrfs_fs_free(fs);
	int fd = open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd >= 0) {
		fchmod(fd, 0700);
		remove_below(fd);
	}
	rmdir(target);
	return 0;
}
