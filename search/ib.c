/*
 * ib.c: interference bounding (the ib:K strategy; 003, "Bounded-
 * Interference Sequentialization"): schedules with at most K reads that
 * observe another thread's write, the ones that take data from other
 * threads soonest first.
 *
 * Why: 003 bounds the flow of data between threads rather than the
 * switches of control: a bug that needs one value from another thread at
 * the right read is 1-coupled however many context switches it takes to
 * get there (its Mutual needs 3 switches and 1 non-local read).
 *
 * The count.  003's non-local read is a read whose most recent write to
 * the variable was another thread's (not the initial value, not its own);
 * locks are synchronisation, ordered by lock validity, not reads.  In a
 * serialized run (cctrace test) every step starts at a scheduling point,
 * and engine_choice tells, for each option, the access its step makes
 * first (the shared access it is held at, decoded with its registers), and
 * the same for every step made without a choice since the last one
 * (engine_choice.forced).  This file keeps the thread that last wrote each
 * address so seen (interfere.c), over all those steps; a step that reads
 * an address another thread wrote last is an *interference*.  What it
 * does not see: accesses that are not scheduling points (in libc, or not
 * found shared by profiling), accesses after the first of a step, and
 * overlap (an access is its first byte's address).
 *
 * The search.  Bounding the count and running each bound depth-first
 * (the first version) spent every run of a budget inside bound 0 on a
 * program with many points: the schedules without an interference differ
 * only in the order of steps that take nothing from each other, which
 * changes nothing a thread can see.  So the order of a choice's options
 * says what the choice does to the flow of data: first the default (the
 * thread that ran last, if it can go on within the bound, else the next
 * free thread in round-robin order), then the
 * options that read another thread's write (each one interference, in
 * round-robin order), then the other switches (they may let a write be
 * read later).  Taking option r of that order costs r *deviations*, and
 * the search is iterative deviation bounding (as idb's delays, with
 * frontier.c: bound d runs only the schedules of exactly d deviations):
 * bound 0 is the one default schedule, bound 1 adds each single
 * interference the default schedule could have taken, and so on.  K is a
 * hard bound on the interferences of a run: an interfering option that
 * would make more than K is not offered.  A step made without a choice
 * counts too, but is never refused: a run whose unchosen steps pass K
 * goes on, choosing no interference (a choice whose options all
 * interfere is no choice of data: all are offered, in round-robin order,
 * whatever the count).  The search ends when every bound is done.
 * Without access information (explore with a schedule, or a choice among
 * values) no option interferes, and ib:K is idb over round-robin order.
 *
 * Sharding: as dfs, by the first real choice, at every bound.
 */
#include "search/internal.h"

#include <stdlib.h>

struct ib {
	struct interference seen;
	int interferences; /* this run's, so far */
	int *order;	   /* [options]: the option of each place in the order */
	bool *taken;	   /* [options]: already in order */
	int norder;
};

static int ib_init(struct search *s)
{
	s->state = calloc(1, sizeof(struct ib));
	if (!s->state)
		return -1;
	s->trace.preemption_bound = 0;
	s->trace.delay_cost = true;
	return frontier_enable(&s->trace);
}

static void ib_fini(struct search *s)
{
	struct ib *b = search_state(s);

	if (!b)
		return;
	interference_free(&b->seen);
	free(b->order);
	free(b->taken);
	free(b);
}

static void ib_plan(struct search *s)
{
	struct ib *b = search_state(s);

	interference_reset(&b->seen); /* every run starts with nothing written */
	b->interferences = 0;
}

/* Does option i read what another thread wrote last? */
static bool interferes(struct ib *b, const struct search_point *p, int i)
{
	return p->access && p->ids && interference_reads_other(&b->seen, &p->access[i], p->ids[i]);
}

/* Append to b->order, in round-robin order, the options (not yet in it)
 * whose interference is `interfering`. */
static int append_rotation(struct ib *b, const struct search_point *p, int n, bool interfering,
			   bool *taken)
{
	int r;

	for (r = 0; r < p->n; r++) {
		int i = trace_round_robin_option(p, r);

		if (!taken[i] && interferes(b, p, i) == interfering) {
			b->order[n++] = i;
			taken[i] = true;
		}
	}
	return n;
}

/* Fill b->order with the options offered: the default, the interfering
 * ones within the bound, the other free ones; how many. */
static int order_options(struct search *s, struct ib *b, const struct search_point *p, bool *taken)
{
	int at = trace_option_of(p, p->current), n = 0, nfree = 0, i;

	for (i = 0; i < p->n; i++) {
		taken[i] = false;
		nfree += !interferes(b, p, i);
	}
	if (nfree == 0) /* every option interferes: no choice of data */
		return append_rotation(b, p, 0, true, taken);
	if (at >= 0 && (!interferes(b, p, at) || b->interferences < s->cfg.param[0])) {
		b->order[n++] = at;
		taken[at] = true;
	} else {
		n = append_rotation(b, p, 0, false, taken); /* the first free one... */
		for (i = 1; i < n; i++)
			taken[b->order[i]] = false; /* ...alone */
		n = 1;
	}
	if (b->interferences < s->cfg.param[0])
		n = append_rotation(b, p, n, true, taken);
	return append_rotation(b, p, n, false, taken);
}

/* The steps made without a choice since the last: their interferences
 * and their writes; -1 when out of memory. */
static int forced_steps(struct ib *b, const struct search_point *p)
{
	int i;

	for (i = 0; i < p->nforced; i++) {
		const struct engine_step *st = &p->forced[i];

		b->interferences += interference_reads_other(&b->seen, &st->access, st->id);
		if (interference_note(&b->seen, &st->access, st->id) < 0)
			return -1;
	}
	return 0;
}

static int grow_order(struct ib *b, int n)
{
	int *order;
	bool *taken;

	if (n <= b->norder)
		return 0;
	order = realloc(b->order, sizeof(*order) * (size_t)n);
	if (order)
		b->order = order;
	taken = order ? realloc(b->taken, sizeof(*taken) * (size_t)n) : NULL;
	if (!taken)
		return -1;
	b->taken = taken;
	b->norder = n;
	return 0;
}

static int ib_choose(struct search *s, const struct search_point *p)
{
	struct ib *b = search_state(s);
	int k, abs, n;

	if (!p->ids) /* a choice among values: round robin is their order */
		return trace_next(s, p->n, false, false);
	if (grow_order(b, p->n) < 0 || forced_steps(b, p) < 0)
		return SEARCH_ABANDON;
	n = order_options(s, b, p, b->taken);
	k = trace_next(s, n, trace_can_continue(p), false);
	if (k == SEARCH_ABANDON)
		return k;
	abs = b->order[k];
	b->interferences += interferes(b, p, abs);
	if (p->access && interference_note(&b->seen, &p->access[abs], p->ids[abs]) < 0)
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
