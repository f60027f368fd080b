/* array.h — growable arrays: room for one more element in an array kept as
 * (pointer, count, capacity), the capacity doubling from first. */
#ifndef BTRFSLAB_ARRAY_H
#define BTRFSLAB_ARRAY_H
#include "errors.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* arrp is the address of the array's pointer (any T **). 0, or BLAB_ENOMEM
 * with the array as it was. */
static inline int array_room(void *arrp, size_t n, size_t *cap, size_t size, size_t first)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : first;
	if (c < *cap || c > SIZE_MAX / size)
		return BLAB_ENOMEM;
	void *old, *grown;
	memcpy(&old, arrp, sizeof(old));
	if (!(grown = realloc(old, c * size)))
		return BLAB_ENOMEM;
	memcpy(arrp, &grown, sizeof(grown));
	*cap = c;
	return 0;
}

/* A copy of the array a (n used of cap), for a clone: NULL when a is NULL
 * or *ret is already an error; on ENOMEM NULL with *ret set. */
static inline void *array_dup(const void *a, size_t n, size_t cap, size_t size, int *ret)
{
	if (!a || *ret)
		return NULL;
	void *d = malloc((cap ? cap : 1) * size);
	if (d)
		memcpy(d, a, n * size);
	else
		*ret = BLAB_ENOMEM;
	return d;
}
#endif
