/* bitmap.h — sets of small numbers as arrays of 64-bit words, bit i of the
 * set in word i / 64 (the kernel's include/linux/bitmap.h): which trees
 * reach a block, for qgroups (qgroup.c) and the checker (check.c). A set's
 * width in words is the caller's to carry; every function takes it. */
#ifndef BTRFSLAB_BITMAP_H
#define BTRFSLAB_BITMAP_H
#include "ondisk.h"
#include <stddef.h>

/* Words for a set of numbers below nbits (at least one). */
static inline size_t bitmap_words(size_t nbits) { return nbits ? (nbits + 63) / 64 : 1; }
static inline void bitmap_set(u64 *b, size_t i) { b[i / 64] |= 1ULL << (i % 64); }
static inline int bitmap_test(const u64 *b, size_t i) { return (int)(b[i / 64] >> (i % 64) & 1); }

static inline void bitmap_or(u64 *dst, const u64 *src, size_t words)
{
	for (size_t w = 0; w < words; w++)
		dst[w] |= src[w];
}

static inline int bitmap_equal(const u64 *a, const u64 *b, size_t words)
{
	for (size_t w = 0; w < words; w++)
		if (a[w] != b[w])
			return 0;
	return 1;
}

/* How many numbers the set holds. */
static inline u32 bitmap_weight(const u64 *b, size_t words)
{
	u32 n = 0;
	for (size_t w = 0; w < words; w++)
		n += (u32)__builtin_popcountll(b[w]);
	return n;
}

/* The first number in the set from i on, or nbits when none:
 *   for (size_t i = bitmap_next(b, 0, n); i < n; i = bitmap_next(b, i + 1, n)) */
static inline size_t bitmap_next(const u64 *b, size_t i, size_t nbits)
{
	while (i < nbits) {
		u64 w = b[i / 64] >> (i % 64);
		if (w)
			return i + (size_t)__builtin_ctzll(w) < nbits ? i + (size_t)__builtin_ctzll(w) : nbits;
		i = (i / 64 + 1) * 64;
	}
	return nbits;
}
#endif
