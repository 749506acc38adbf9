/*
 * priority.c: thread priorities for the priority schedulers (pct, pctvb,
 * and vb:V:T through tbound.c).
 *
 * A priority scheduler runs the option of highest priority.  Priorities
 * are kept by a thread's stable id, in a table that grows to the largest id
 * seen: a schedule may name any number of threads, and a value choice's
 * options count as ids 0 .. n-1, whatever their number.
 *
 * PCT (Burckhardt et al., as 004 section 3 restates it) gives every thread
 * a random priority above the D-1 change points when it is first seen
 * (floor + 1 .. floor + 2^20); a change point lowers a thread to its own
 * number, 1 .. D-1, below every initial priority.  Drawing at first sight
 * keeps the draws in the order the program shows its threads, so a run is
 * reproducible from its seed.
 */
#include "search/internal.h"

#include <stdlib.h>

int *prio_slot(struct priorities *t, int id)
{
	assert(id >= 0);
	if (id >= t->n) {
		int n = t->n ? t->n : 16, i;
		int *grown;

		while (n <= id)
			n *= 2;
		grown = realloc(t->p, sizeof(*grown) * (size_t)n);
		if (!grown)
			return NULL;
		for (i = t->n; i < n; i++)
			grown[i] = PRIO_UNSET;
		t->p = grown;
		t->n = n;
	}
	return &t->p[id];
}

void prio_reset(struct priorities *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		t->p[i] = PRIO_UNSET;
}

void prio_free(struct priorities *t)
{
	free(t->p);
	t->p = NULL;
	t->n = 0;
}

int *pct_priority(struct priorities *t, uint64_t *rng, int floor, int id)
{
	int *p = prio_slot(t, id);

	if (p && *p == PRIO_UNSET)
		*p = floor + 1 + rng_below(rng, 1 << 20);
	return p;
}

static int id_of(const struct search_point *p, int i)
{
	return p->ids ? p->ids[i] : i;
}

int pct_highest(struct priorities *t, uint64_t *rng, int floor, const struct search_point *p)
{
	int i, best = 0;

	for (i = 1; i < p->n; i++) {
		/* the order of the draws: option i, then the best so far (a
		 * slot is read before the next draw may grow the table) */
		int *a = pct_priority(t, rng, floor, id_of(p, i)), pa, *b;

		if (!a)
			return -1;
		pa = *a;
		b = pct_priority(t, rng, floor, id_of(p, best));
		if (!b)
			return -1;
		if (pa > *b)
			best = i;
	}
	return best;
}
