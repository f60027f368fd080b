#include "api.h"
#include "disk-io.h"
#include "mkfs.h"
#include "print-tree.h"
#include <stdlib.h>

#define MAX_HANDLES 64

static struct btrfs_fs_info *handles[MAX_HANDLES];
static struct blab_err last_err;
static struct strbuf out;

static int put_handle(struct btrfs_fs_info *fs)
{
	for (int i = 1; i < MAX_HANDLES; i++)
		if (!handles[i]) {
			handles[i] = fs;
			return i;
		}
	btrfs_fs_free(fs);
	return blab_fail(&last_err, BLAB_ENOSPC, "too many open filesystems (%d)", MAX_HANDLES - 1);
}

static struct btrfs_fs_info *get(int h)
{
	if (h <= 0 || h >= MAX_HANDLES || !handles[h]) {
		blab_fail(&last_err, BLAB_EINVAL, "no open filesystem with handle %d", h);
		return NULL;
	}
	return handles[h];
}

int blab_mkfs(u64 size, u32 nodesize, const char *label, u64 seed, u64 now)
{
	struct mkfs_options o;
	struct btrfs_fs_info *fs;
	btrfs_mkfs_defaults(&o);
	o.size = size;
	o.nodesize = nodesize;
	o.label = label && *label ? label : NULL;
	o.seed = seed;
	o.now = now;
	int ret = btrfs_mkfs(&o, &fs, &last_err);
	return ret ? ret : put_handle(fs);
}

int blab_open(const u8 *data, u64 len)
{
	struct blab_device dev;
	if (!data || !len)
		return blab_fail(&last_err, BLAB_EINVAL, "empty image");
	if (device_load(&dev, data, len))
		return blab_fail(&last_err, BLAB_ENOMEM, "image of %llu bytes", (unsigned long long)len);
	struct btrfs_fs_info *fs = btrfs_open(&dev, &last_err);
	return fs ? put_handle(fs) : last_err.code;
}

void blab_close(int h)
{
	if (get(h)) {
		btrfs_fs_free(handles[h]);
		handles[h] = NULL;
	}
}

const char *blab_last_error(void) { return last_err.msg; }

const char *blab_dump_json(int h)
{
	struct btrfs_fs_info *fs = get(h);
	if (!fs)
		return NULL;
	out.len = 0;
	out.oom = 0;
	if (btrfs_dump_tree_json(fs, &out)) {
		last_err = fs->err;
		return NULL;
	}
	sb_printf(&out, "%c", 0);
	return out.oom ? NULL : out.s;
}

const char *blab_trace_json(int h)
{
	struct btrfs_fs_info *fs = get(h);
	if (!fs)
		return NULL;
	out.len = 0;
	out.oom = 0;
	sb_printf(&out, "[");
	for (size_t i = 0; i < fs->trace.len; i++) {
		char buf[512];
		trace_event_json(&fs->trace.ev[i], buf, sizeof(buf));
		sb_printf(&out, "%s%s", i ? "," : "", buf);
	}
	sb_printf(&out, "]%c", 0);
	if (out.oom) {
		blab_fail(&last_err, BLAB_ENOMEM, "trace");
		return NULL;
	}
	return out.s;
}

u64 blab_image_size(int h)
{
	struct btrfs_fs_info *fs = get(h);
	return fs ? fs->dev.size : 0;
}

u32 blab_page_size(void) { return DEVICE_PAGE_SIZE; }

const u8 *blab_image_page(int h, u64 page_index)
{
	struct btrfs_fs_info *fs = get(h);
	return fs ? device_page(&fs->dev, page_index) : NULL;
}

void *blab_alloc(u32 n) { return malloc(n ? n : 1); }
void blab_free(void *p) { free(p); }
