/* fuzz.h — what every libFuzzer target of the core shares: the compact
 * image format of its inputs, and opening one as a filesystem.
 *
 * BLFZ (an image is tens of MB, mostly zeros; an input holds its pages):
 *   OFFSET SIZE DESCRIPTION
 *   0       4  magic "BLFZ"
 *   4       4  N, the number of pages (u32 LE)
 *   8     4*N  page indices in 4 KiB units (u32 LE, ascending)
 *   8+4N  ...  the pages, 4096 bytes each (a short last page is zero-padded)
 * The device is as large as the superblock's total_bytes says, capped at
 * 256 MiB and at least as large as the highest page.
 *
 * Before opening, checksums are made right again (the superblock's, and
 * every nodesize block carrying the filesystem's fsid), so that a mutation
 * reaches the tree checker and the walkers instead of dying at crc32c. */
#ifndef BTRFSLAB_FUZZ_H
#define BTRFSLAB_FUZZ_H
#include "../src/disk-io.h"
#include <stddef.h>
#include <stdint.h>

/* The filesystem in data (BLFZ), or NULL when it does not parse or open. */
struct btrfs_fs_info *fuzz_open(const uint8_t *data, size_t size);

/* Opens data and runs print on it into an output buffer kept between runs
 * (no large allocation per run; freed once it has grown past 64 MiB), then
 * frees the filesystem. What check, dump-tree and dump-json share. */
struct strbuf;
typedef int (*fuzz_print_fn)(struct btrfs_fs_info *fs, struct strbuf *out);
void fuzz_print(const uint8_t *data, size_t size, fuzz_print_fn print);
#endif
