/*
 * ib.c: interference bounding (the ib:K strategy; 003, "Bounded-
 * Interference Sequentialization"): the schedules in which no read
 * observes another thread's write, then those in which one does, then
 * two, ... up to K.
 *
 * Why: 003 bounds the flow of data between threads rather than the
 * switches of control: a bug that needs one value from another thread at
 * the right read is 1-coupled however many context switches it takes to
 * get there (its Mutual needs 3 switches and 1 non-local read).
 *
 * What the search sees.  In a serialized run (cctrace test) each option
 * at a choice is a thread held at a scheduling point; engine_choice tells
 * the access it makes first when it goes on (the access point it is held
 * at, decoded with its registers).  This file keeps, for the run, the
 * thread that last wrote each address so seen; an option whose first
 * access reads an address another thread wrote last is an *interference*
 * and costs one.  This approximates 003's non-local reads:
 *   - only accesses at the scheduling points count: the executable's
 *     shared accesses the profiling phase kept (--points shared), or every
 *     non-stack access (--points all); accesses between two points, inside
 *     libc or through synchronisation functions are not seen, so a value
 *     passed through a mutex-protected variable whose accesses were not
 *     kept, or through libc, is not counted;
 *   - an access is matched by its first byte's address, not by overlap;
 *   - the read counted is the first access of the step the choice starts,
 *     and the writer is the last thread whose step started with a write to
 *     that address.
 * Without access information (explore with a schedule, or a choice among
 * values) every option is free and ib:K is dfs.
 *
 * Order: at each choice the free options come first (the thread that ran
 * last first, so that few-preemption schedules come early), then the
 * interfering ones; trace.c adds the interferences along the trace and
 * takes no option beyond the bound.  Bound 0 is a depth-first search of
 * its own; when it is done and it left an option out, the bound goes up by
 * one and the search starts over (running the lower bounds' schedules
 * again, as ipb and idb do), until K.
 *
 * The last-writer table is a growing array searched linearly: the
 * addresses are the shared ones the points touch, a few dozen.
 *
 * Sharding: as dfs, by the first real choice, at every bound.
 */
#include "search/internal.h"

#include <stdlib.h>

struct ib {
	struct interference seen;
	int *order; /* [options]: the absolute option of relative option k */
	int norder;
};

static int ib_init(struct search *s)
{
	s->state = calloc(1, sizeof(struct ib));
	if (!s->state)
		return -1;
	s->trace.preemption_bound = 0;
	s->trace.interference_cost = true;
	s->trace.max_bound = s->cfg.param[0];
	return frontier_enable(&s->trace);
}

static void ib_fini(struct search *s)
{
	struct ib *b = search_state(s);

	if (!b)
		return;
	interference_free(&b->seen);
	free(b->order);
	free(b);
}

static void ib_plan(struct search *s)
{
	struct ib *b = search_state(s);

	interference_reset(&b->seen); /* every run starts with nothing written */
}

/* Does option i read what another thread wrote last? */
static bool interferes(struct ib *b, const struct search_point *p, int i)
{
	return p->access && p->ids && interference_reads_other(&b->seen, &p->access[i], p->ids[i]);
}

/* Fill b->order: the thread that ran last (if free), the other free
 * options, then the interfering ones; the number of free ones. */
static int order_options(struct ib *b, const struct search_point *p)
{
	int at = p->ids ? trace_option_of(p, p->current) : -1, n = 0, i, nfree;

	if (at >= 0 && !interferes(b, p, at))
		b->order[n++] = at;
	for (i = 0; i < p->n; i++)
		if (i != at && !interferes(b, p, i))
			b->order[n++] = i;
	nfree = n;
	for (i = 0; i < p->n; i++)
		if (interferes(b, p, i))
			b->order[n++] = i;
	assert(n == p->n);
	return nfree;
}

static int ib_choose(struct search *s, const struct search_point *p)
{
	struct ib *b = search_state(s);
	int k, abs, nfree;

	if (p->n > b->norder) {
		int *grown = realloc(b->order, sizeof(*grown) * (size_t)p->n);

		if (!grown)
			return SEARCH_ABANDON;
		b->order = grown;
		b->norder = p->n;
	}
	nfree = order_options(b, p);
	k = trace_next_entry(
	    s, (struct entry){.n = p->n, .can_continue = trace_can_continue(p), .nfree = nfree});
	if (k == SEARCH_ABANDON)
		return k;
	abs = b->order[k];
	if (p->access && p->ids && interference_note(&b->seen, &p->access[abs], p->ids[abs]) < 0)
		return SEARCH_ABANDON;
	return abs;
}

const struct strategy_ops search_ib = {
    .name = "ib",
    .synopsis = "ib:K",
    .nparams = 1,
    .nrequired = 1,
    .min = {0},
    .usage = "needs a bound K from 0 to 16 on the reads that see another thread's write, "
	     "e.g. ib:2",
    .init = ib_init,
    .fini = ib_fini,
    .shard = trace_shard_first_choice,
    .plan = ib_plan,
    .choose = ib_choose,
    .next_run = trace_backtrack_iterating,
};
