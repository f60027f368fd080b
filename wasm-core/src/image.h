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
#endif
