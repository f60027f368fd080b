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
/* A device of size bytes backed by a new temporary file beside path: writes
 * go straight to it. path must be absent or a regular file. */
int image_create_file(struct blab_device *dev, const char *path, u64 size, char **tmp_path, struct blab_err *err);
/* Makes a file-backed device's file the image at path (fsync, rename). On
 * failure, or with commit 0, the temporary file is removed instead. */
int image_finish_file(struct blab_device *dev, const char *tmp_path, const char *path, int commit, struct blab_err *err);
/* Where output for path should go: *resolved (malloc'd) is path with
 * symlinks followed; *special is set when it exists and is not a regular
 * file (a device, a pipe, /dev/stdout): such a target is written in place,
 * never replaced. */
int image_resolve_output(const char *path, char **resolved, int *special, struct blab_err *err);
#endif
