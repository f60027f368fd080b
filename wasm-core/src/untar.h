/* untar.h — the workload of seed 002: unpacking a source tarball, as a
 * stream of commands (mkdir, create, write) in tar order. `untar random`
 * makes a seeded tree that resembles a source tree: directories of 2-30
 * files and 1-5 subdirectories, 7 levels at most, under src/m000, src/m001,
 * ...; file sizes 92% log-normal (median e^8.6 B = 5.4 KiB, sigma 0.9,
 * clamped to 64 B..64 KiB) and 8% a Pareto tail (alpha 1.2 from 20 KiB,
 * capped at 4 MiB): median about 6 KiB, mean about 14 KiB, 13% at most
 * 2 KiB. The same rules as tests/kernel/seed002-measure.mjs's workload, with
 * our own seeded stream (splitmix64) and quantile tables instead of libm:
 * the same seed gives the same tree natively and in WASM. It stops after
 * `files` files or `bytes` bytes of data, whichever comes first. */
#ifndef BTRFSLAB_UNTAR_H
#define BTRFSLAB_UNTAR_H
#include "ondisk.h"

#define UNTAR_MAX_DEPTH 7
#define UNTAR_PATH_MAX 128

struct untar_frame {
	int nfiles, nsub, i, j;
	size_t len; /* the path's length at this directory */
};

struct untar_gen {
	u64 rng, max_files, max_bytes;
	u64 files, dirs, bytes, top;
	int src_made;
	size_t base_len;
	int depth; /* frames in use (0: between top-level directories) */
	int pending_write; /* the last file created gets its data next */
	u64 write_len, write_off, chunk;
	struct untar_frame f[UNTAR_MAX_DEPTH];
	char path[UNTAR_PATH_MAX];
	size_t len;
};

enum untar_step { UNTAR_END = 0, UNTAR_MKDIR, UNTAR_CREATE, UNTAR_WRITE };

/* Starts a tree under base (an absolute path, "/" for the root). */
void untar_init(struct untar_gen *g, const char *base, u64 seed, u64 max_files, u64 max_bytes);
/* Each file's data in writes of chunk bytes (0: one write; tar writes a
 * record, 10240 bytes by default, at a time). */
void untar_set_chunk(struct untar_gen *g, u64 chunk);
/* The next command: its kind, the path in g->path, and for UNTAR_WRITE the
 * offset and length in *off and *len. */
int untar_next(struct untar_gen *g, u64 *off, u64 *len);
/* A file size drawn from the distribution (for tests). */
u64 untar_file_size(u64 *rng);
#endif
