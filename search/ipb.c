/*
 * ipb.c: iterative preemption bounding (the ipb strategy): every schedule
 * with 0 preemptions, then every one with 1, then 2, ... (Musuvathi and
 * Qadeer's iterative context bounding, as SCTBench's IPB).
 *
 * Why: most bugs need few preemptions, and the schedules with few are
 * few, so meeting them first finds a shallow bug in few runs, and a
 * search stopped by its budget has covered every schedule up to some
 * bound.  A preemption is cb's (cb.c): a switch away from the thread that
 * ran last while it could go on.  Each bound is cb:N's depth-first search
 * (trace.c does the counting); when it is done and some option was left
 * out for the bound, the bound goes up by one and the search starts over.
 * The search ends when a whole bound left nothing out.  Starting over
 * runs the schedules of the lower bounds again (about as many runs as all
 * the lower bounds took: the schedules with exactly c preemptions
 * outnumber those with fewer on any program with more than a few
 * scheduling points); nothing here remembers them.
 *
 * Sharding: as dfs, by the first real choice, at every bound.
 */
#include "search/internal.h"

static int ipb_init(struct search *s)
{
	s->trace.preemption_bound = 0;
	return frontier_enable(&s->trace);
}

static void ipb_fini(struct search *s)
{
	(void)s;
}

static int ipb_choose(struct search *s, const struct search_point *p)
{
	int k = trace_next(s, p->n, trace_can_continue(p), false);

	return k == SEARCH_ABANDON ? k : trace_relative_option(p, k);
}

const struct strategy_ops search_ipb = {
    .name = "ipb",
    .synopsis = "ipb",
    .usage = "takes no parameter",
    .init = ipb_init,
    .fini = ipb_fini,
    .shard = trace_shard_first_choice,
    .choose = ipb_choose,
    .next_run = trace_backtrack_iterating,
};
