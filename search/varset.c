/*
 * varset.c: sets of watched variables (vb, pctvb).
 *
 * Variable bounding (004, section 2) enumerates every set of v of the
 * schedule's watched variables, v = 1..V, smallest sets first; pctvb draws
 * one set per run (004, section 3).  A set is kept both as its members in
 * increasing order (to enumerate) and as a bitmap (to test membership at
 * every choice point), both as large as the schedule's variables need.
 *
 * The enumeration is colexicographic: the order of the sets' bitmasks as
 * numbers, so that with at most 64 variables it visits sets in the order
 * Gosper's hack did (and varset_key() is that bitmask), and a search is
 * the same as before the sets could hold more than 64 variables.
 */
#include "search/internal.h"

#include <stdlib.h>
#include <string.h>

static int nwords(int nvars)
{
	return (nvars + 63) / 64;
}

int varset_init(struct varset *v, int nvars)
{
	assert(nvars >= 0);
	memset(v, 0, sizeof(*v));
	v->nvars = nvars;
	if (!nvars)
		return 0;
	v->member = calloc((size_t)nvars, sizeof(*v->member));
	v->bits = calloc((size_t)nwords(nvars), sizeof(*v->bits));
	if (!v->member || !v->bits) {
		varset_free(v);
		return -1;
	}
	return 0;
}

void varset_free(struct varset *v)
{
	free(v->member);
	free(v->bits);
	memset(v, 0, sizeof(*v));
}

void varset_clear(struct varset *v)
{
	if (v->bits)
		memset(v->bits, 0, sizeof(*v->bits) * (size_t)nwords(v->nvars));
	v->size = 0;
}

/* Members must come in increasing order. */
void varset_add(struct varset *v, int var)
{
	assert(var >= 0 && var < v->nvars && v->size < v->nvars);
	assert(v->size == 0 || v->member[v->size - 1] < var);
	v->member[v->size++] = var;
	v->bits[var / 64] |= 1ull << (var % 64);
}

bool varset_has(const struct varset *v, int var)
{
	return var >= 0 && var < v->nvars && (v->bits[var / 64] >> (var % 64) & 1);
}

void varset_first(struct varset *v, int size)
{
	int i;

	assert(size >= 0 && size <= v->nvars);
	varset_clear(v);
	for (i = 0; i < size; i++)
		varset_add(v, i);
}

/* The lowest member that can move up by one without meeting the next
 * moves; the members below it go back to the bottom. */
bool varset_next(struct varset *v)
{
	int j, i, *m = v->member;

	for (j = 0; j < v->size; j++) {
		int limit = j + 1 < v->size ? m[j + 1] : v->nvars;

		if (m[j] + 1 < limit)
			break;
	}
	if (j == v->size)
		return false;
	m[j]++;
	for (i = 0; i < j; i++)
		m[i] = i;
	memset(v->bits, 0, sizeof(*v->bits) * (size_t)nwords(v->nvars));
	for (i = 0; i < v->size; i++)
		v->bits[m[i] / 64] |= 1ull << (m[i] % 64);
	return true;
}

uint64_t varset_key(const struct varset *v)
{
	uint64_t key = v->bits ? v->bits[0] : 0;
	int i;

	for (i = 1; i < nwords(v->nvars); i++)
		key = (key ^ v->bits[i]) * 1099511628211ull; /* FNV-1a's prime */
	return key;
}
