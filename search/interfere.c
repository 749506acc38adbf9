/*
 * interfere.c: which reads observe another thread's write (003's
 * non-local reads), for ib:K and for the bug statistics (bugstats.c).
 *
 * The table keeps, for each address a step was seen writing, the thread
 * that wrote it last; a step that reads an address whose last writer is
 * another thread makes one interference (003 counts a read, not the bytes
 * it reads).  Addresses are the accesses' first bytes: two accesses
 * overlap only if they start at the same byte (what serialized runs see:
 * the same instructions on the same variables).  A growing array searched
 * linearly: the shared addresses of a run are a few dozen.
 */
#include "search/internal.h"

#include <stdlib.h>

struct writer {
	uint64_t addr;
	int id;
};

void interference_reset(struct interference *x)
{
	x->n = 0;
}

void interference_free(struct interference *x)
{
	free(x->w);
	x->w = NULL;
	x->n = x->cap = 0;
}

static struct writer *writer_of(const struct interference *x, uint64_t addr)
{
	size_t i;

	for (i = 0; i < x->n; i++)
		if (x->w[i].addr == addr)
			return &x->w[i];
	return NULL;
}

bool interference_reads_other(const struct interference *x, const struct engine_access *a, int id)
{
	const struct writer *w;

	if (!a || !a->addr || !a->read)
		return false;
	w = writer_of(x, a->addr);
	return w && w->id != id;
}

int interference_note(struct interference *x, const struct engine_access *a, int id)
{
	struct writer *w;

	if (!a || !a->addr || !a->write)
		return 0;
	w = writer_of(x, a->addr);
	if (w) {
		w->id = id;
		return 0;
	}
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 32;
		struct writer *grown = realloc(x->w, sizeof(*grown) * cap);

		if (!grown)
			return -1;
		x->w = grown;
		x->cap = cap;
	}
	x->w[x->n++] = (struct writer){a->addr, id};
	return 0;
}
