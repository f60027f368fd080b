/* image.h — images in and out: a filesystem's device as a file. Native
 * only (the WASM build hands pages to JavaScript instead). */
#ifndef BTRFSLAB_IMAGE_H
#define BTRFSLAB_IMAGE_H
#include "fs.h"

/* Writes the device to path atomically: a temporary file beside it, then a
 * rename, so a failure leaves no half-written image. path must be absent or
 * a regular file. Unwritten ranges stay holes. */
int image_write_file(const struct blab_device *dev, const char *path, struct blab_err *err);
/* Reads path (a regular file or block device) into dev. */
int image_read_file(struct blab_device *dev, const char *path, struct blab_err *err);
/* A new file beside path, made exclusively (O_EXCL) under an unpredictable
 * name (DIR/.NAME.XXXXXX), mode 0644 less the umask: *tmp (malloc'd) and
 * *fd. Links are never followed to make it. */
int image_temp_file(const char *path, char **tmp, int *fd, struct blab_err *err);
/* tmp is renamed or removed: a signal no longer removes it. Until then a
 * SIGTERM, SIGINT or SIGHUP does (its default action kept otherwise). */
void image_temp_forget(const char *tmp);
/* An image being made in place of path: the temporary file beside it and
 * the path it will be renamed to (both malloc'd). */
struct image_out {
	char *tmp, *path;
};
/* A device of size bytes backed by a new temporary file beside path: writes
 * go straight to it. path must be absent or a regular file. */
int image_create_file(struct blab_device *dev, const char *path, u64 size, struct image_out *out, struct blab_err *err);
/* Makes a file-backed device's file the image at out->path (fsync, rename).
 * On failure, or with commit 0, the temporary file is removed instead.
 * Frees what out holds. */
int image_finish_file(struct blab_device *dev, struct image_out *out, int commit, struct blab_err *err);
/* Where output for path should go: *resolved (malloc'd) is path with
 * symlinks followed; *special is set when it exists and is not a regular
 * file (a device, a pipe, /dev/stdout): such a target is written in place,
 * never replaced. */
int image_resolve_output(const char *path, char **resolved, int *special, struct blab_err *err);
#endif
