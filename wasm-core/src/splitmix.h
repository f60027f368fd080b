/* splitmix64: the seeded stream every deterministic choice of the core
 * draws from (the scheduler, mkfs's UUIDs, a timed run's data, untar's
 * tree, the tree locks' acquisition spread). Only integers, so native and
 * WASM draw the same numbers. */
#ifndef BTRFSLAB_SPLITMIX_H
#define BTRFSLAB_SPLITMIX_H

#include "ondisk.h" /* u64 */

/* The next number of the stream whose state is *state (which moves on). */
static inline u64 splitmix64(u64 *state)
{
	u64 z = (*state += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

#endif
