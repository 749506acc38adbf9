/*
 * idb.c: iterative delay bounding (the idb strategy; Emmi, Qadeer and
 * Rakamaric, POPL'11, as the SCTBench study runs it): every schedule with
 * 0 delays, then every one with 1, then 2, ...
 *
 * The schedules are a deterministic round-robin scheduler's: the thread
 * that ran last goes on while it can; when it cannot, the next thread in
 * increasing id order (ids are stable: the order threads appeared), going
 * round.  A *delay* skips the thread the scheduler would run next, so
 * taking the k-th thread of that rotation costs k delays.  With 0 delays
 * there is exactly one schedule; unlike a preemption bound, a delay bound
 * also limits which thread runs when the last one blocked or ended, so the
 * number of schedules of bound d does not grow with the number of threads.
 * A choice among values costs k delays for its option k.
 *
 * Each bound is a depth-first search over the rotation's options (trace.c
 * adds the delays along the trace and takes no option beyond the bound);
 * when it is done and an option was left out for the bound, the bound goes
 * up by one and the search starts over (running the lower bounds'
 * schedules again, as ipb does).  It ends when a bound left nothing out.
 *
 * Sharding: as dfs, by the first real choice (a shard's option there costs
 * its delays like any other).
 */
#include "search/internal.h"

static int idb_init(struct search *s)
{
	s->trace.preemption_bound = 0;
	s->trace.delay_cost = true;
	return frontier_enable(&s->trace);
}

static void idb_fini(struct search *s)
{
	(void)s;
}

static int idb_choose(struct search *s, const struct search_point *p)
{
	int k = trace_next(s, p->n, trace_can_continue(p), false);

	return k == SEARCH_ABANDON ? k : trace_round_robin_option(p, k);
}

const struct strategy_ops search_idb = {
    .name = "idb",
    .synopsis = "idb",
    .usage = "takes no parameter",
    .init = idb_init,
    .fini = idb_fini,
    .shard = trace_shard_first_choice,
    .choose = idb_choose,
    .next_run = trace_backtrack_iterating,
};
