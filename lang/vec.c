/*
 * vec.c: growing arrays, so that no table of a run has a silent limit.
 *
 * A table is a pointer, a count and a capacity; vec_reserve makes room for
 * one more element by doubling, and fails only when memory does.
 */
#include "lang/lang.h"

#include <stdlib.h>

int vec_reserve(void *items, int *cap, int n, size_t size)
{
	void **p = items;
	int grown_cap;
	void *grown;

	if (n < *cap)
		return 0;
	grown_cap = *cap ? *cap * 2 : 8;
	while (grown_cap <= n) /* room for index n, however far past cap */
		grown_cap *= 2;
	grown = realloc(*p, size * (size_t)grown_cap);
	if (!grown)
		return -1;
	*p = grown;
	*cap = grown_cap;
	return 0;
}
