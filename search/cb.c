/*
 * cb.c: context bounding: depth-first over traces with at most N
 * preemptions (the cb:N strategy).
 *
 * A preemption chooses another thread while the one that ran last could go
 * on; the first thread choice is free (nothing ran before it), and so is a
 * switch away from a thread that has ended.  Options are ordered relative
 * to the thread that ran last, "go on" first, so that depth-first meets
 * the schedules with fewer preemptions early; trace.c counts the
 * preemptions along the trace and neither extends nor backtracks past the
 * bound.  The trace records the option actually taken, as for every
 * strategy, so equal traces are the same schedule.  A choice among values
 * has no thread that ran last: its options are taken in order and never
 * count as preemptions.
 *
 * Sharding: as dfs, by the first real choice.
 */
#include "search/internal.h"

static int cb_init(struct search *s)
{
	s->trace.preemption_bound = s->cfg.param[0];
	return 0;
}

static void cb_fini(struct search *s)
{
	(void)s;
}

static int cb_choose(struct search *s, const struct search_point *p)
{
	int k = trace_next(s, p->n, trace_can_continue(p), false);

	return k == SEARCH_ABANDON ? k : trace_relative_option(p, k);
}

static bool cb_next_run(struct search *s)
{
	return trace_backtrack(s);
}

const struct strategy_ops search_cb = {
    .name = "cb",
    .synopsis = "cb:N",
    .nparams = 1,
    .nrequired = 1,
    .min = {0},
    .usage = "needs a bound from 0 to 16, e.g. cb:2",
    .init = cb_init,
    .fini = cb_fini,
    .shard = trace_shard_first_choice,
    .choose = cb_choose,
    .next_run = cb_next_run,
};
