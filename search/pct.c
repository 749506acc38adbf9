/*
 * pct.c: PCT, probabilistic concurrency testing (the pct:D strategy).
 *
 * Burckhardt et al.'s scheduler as 004 section 3 restates it: every thread
 * gets a random priority above D when first seen (priority.c), and D-1
 * change points are drawn among the choice points of the run; at change
 * point i the thread that would run drops to priority i.  The option of
 * highest priority always runs.  The number of choice points a run has is
 * learnt from the runs so far (the most any run reached; 1 before the
 * first run ends), where the paper assumes it known.  A bug of depth d <= D
 * is found by a run with probability at least 1/(n k^(d-1)) for n threads
 * and k choice points.
 *
 * pct:D:1 draws a new thread's priority below the thread that created it
 * (the one that ran last when it is first seen), still at random among
 * its siblings.  Plain PCT lets a program's many children outrank their
 * creator: a bug that needs main to create every thread before any runs
 * far, and then two of them in one order (SCTBench's reorder_N: N-1
 * setters created before the checker; twostage_N) costs 1/N for main's
 * rank on top of the change point's 1/k.  With children below their
 * creator that ordering is free, and a preemption of the creator by its
 * child is one change point on the creator.
 *
 * Draws come from one generator per run, seeded as random.c's, so a run is
 * reproducible from --seed and its number, and shards split the runs.  A
 * choice among values treats its options as threads 0 .. n-1.  The search
 * never runs out.
 */
#include "search/internal.h"

#include <stdlib.h>

struct pct {
	uint64_t rng;
	int max_points;	    /* most choice points seen in a run */
	int *change;	    /* [nchange]: choice-point numbers where priorities drop */
	int nchange;	    /* D - 1 */
	bool below_creator; /* pct:D:1 */
	struct priorities prio;
};

static int pct_init(struct search *s)
{
	struct pct *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	s->state = c;
	c->nchange = s->cfg.param[0] - 1;
	c->below_creator = s->cfg.param[1] != 0;
	assert(c->nchange >= 0 && c->nchange < SEARCH_PARAM_MAX);
	c->change = calloc((size_t)c->nchange + 1, sizeof(*c->change));
	return c->change ? 0 : -1;
}

static void pct_fini(struct search *s)
{
	struct pct *c = search_state(s);

	if (!c)
		return;
	prio_free(&c->prio);
	free(c->change);
	free(c);
}

static void pct_plan(struct search *s)
{
	struct pct *c = search_state(s);
	int i, points = c->max_points > 0 ? c->max_points : 1;

	c->rng = rng_run_seed(s);
	s->trace.len = 0;
	prio_reset(&c->prio);
	for (i = 0; i < c->nchange; i++)
		c->change[i] = 1 + rng_below(&c->rng, points);
}

/* pct:D:1: the options not seen yet, created by p->current, get their
 * priority below it (the order of the draws: the options' order). */
static int draw_below_creator(struct pct *c, int floor, const struct search_point *p)
{
	int i, *creator, top;

	if (!p->ids || p->current < 0)
		return 0;
	creator = prio_slot(&c->prio, p->current);
	if (!creator)
		return -1;
	if (*creator == PRIO_UNSET || *creator <= floor + 1)
		return 0; /* not seen (the first thread) or dropped: plain PCT */
	top = *creator;
	for (i = 0; i < p->n; i++) {
		int *prio = prio_slot(&c->prio, p->ids[i]);

		if (!prio)
			return -1;
		if (*prio == PRIO_UNSET)
			*prio = floor + 1 + rng_below(&c->rng, top - floor - 1);
	}
	return 0;
}

static int pct_choose(struct search *s, const struct search_point *p)
{
	struct pct *c = search_state(s);
	int floor = s->cfg.param[0], point = s->trace.index + 1, i, k;

	if (c->below_creator && draw_below_creator(c, floor, p) < 0)
		return SEARCH_ABANDON;

	for (i = 0; i < c->nchange; i++) {
		int *prio;

		if (c->change[i] != point)
			continue;
		/* the thread that would run drops low (its priority is
		 * drawn first if this is its first sight: a lone option) */
		k = pct_highest(&c->prio, &c->rng, floor, p);
		prio =
		    k < 0 ? NULL : pct_priority(&c->prio, &c->rng, floor, p->ids ? p->ids[k] : k);
		if (!prio)
			return SEARCH_ABANDON;
		*prio = i + 1;
	}
	k = pct_highest(&c->prio, &c->rng, floor, p);
	return k < 0 ? SEARCH_ABANDON : trace_draw(s, k, p->n);
}

static bool pct_next_run(struct search *s)
{
	struct pct *c = search_state(s);

	if (s->trace.index > c->max_points)
		c->max_points = s->trace.index;
	return true;
}

const struct strategy_ops search_pct = {
    .name = "pct",
    .synopsis = "pct:D[:C]",
    .nparams = 2,
    .nrequired = 1,
    .min = {1, 0},
    .max = {0, 1}, /* C is a flag */
    .usage = "needs a depth from 1 to 16, e.g. pct:3 (pct:3:1: children below their creator)",
    .init = pct_init,
    .fini = pct_fini,
    .shard = rng_shard_by_run_seed,
    .plan = pct_plan,
    .choose = pct_choose,
    .next_run = pct_next_run,
};
