/* u64map.h — an open-addressing hash map from u64 keys to fixed-size values
 * (delayed refs, pinned extents, inodes seen). Any u64 is a key: UINT64_MAX,
 * which marks empty slots, is kept beside the table (an image may hold an
 * inode or block of that number). */
#ifndef BTRFSLAB_U64MAP_H
#define BTRFSLAB_U64MAP_H
#include "ondisk.h"
#include <stddef.h>

struct u64map {
	u64 *keys;
	u8 *vals;
	size_t vsize, cap, len;
	u8 *max_val; /* the value of key UINT64_MAX, when has_max */
	int has_max;
};

void u64map_init(struct u64map *m, size_t vsize);
void u64map_free(struct u64map *m);
/* The value of key, or NULL. */
void *u64map_get(const struct u64map *m, u64 key);
/* The value of key, inserted zeroed if absent; NULL on ENOMEM. */
void *u64map_put(struct u64map *m, u64 key);
int u64map_del(struct u64map *m, u64 key);
/* Iteration: for (size_t i = 0; u64map_next(m, &i, &k, &v);) */
int u64map_next(const struct u64map *m, size_t *i, u64 *key, void **val);
void u64map_clear(struct u64map *m);
/* dst (uninitialised) becomes a copy of src, slot for slot, so that it
 * iterates in the same order. 0, or -1 on ENOMEM (dst then empty). */
int u64map_clone(struct u64map *dst, const struct u64map *src);
#endif
