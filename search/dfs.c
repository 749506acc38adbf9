/*
 * dfs.c: depth-first search over traces (000, section 4 and Fig. 7).
 *
 * CONCURRIT's SearchAll: each run replays the prefix the search chose and
 * extends it with first options; after the run the search backtracks to
 * the deepest choice with an option left (trace.c does both).  Every trace
 * of the program is visited once, in lexicographic order of the options,
 * and the search knows when it has seen them all.
 *
 * Sharding: shard i of N takes options i, i+N, ... of the first real
 * choice (trace.c); the rest of the search is its own.
 */
#include "search/internal.h"

static int dfs_init(struct search *s)
{
	(void)s;
	return 0;
}

static void dfs_fini(struct search *s)
{
	(void)s;
}

static int dfs_choose(struct search *s, const struct search_point *p)
{
	return trace_next(s, p->n, trace_can_continue(p), false);
}

static bool dfs_next_run(struct search *s)
{
	return trace_backtrack(s);
}

const struct strategy_ops search_dfs = {
    .name = "dfs",
    .synopsis = "dfs",
    .usage = "takes no parameter",
    .init = dfs_init,
    .fini = dfs_fini,
    .shard = trace_shard_first_choice,
    .choose = dfs_choose,
    .next_run = dfs_next_run,
};
