/*
 * search: the strategies that resolve `choose` across the runs of
 * `cctrace explore`.
 *
 * This is CONCURRIT's oracle (000, section 4).  Each run asks it for an
 * option at every choice point and tells it when the run is over; it
 * answers so that successive runs cover distinct resolutions.  A run's
 * *trace* is its list of (option, number of options) pairs.
 *
 * Contract.  The caller makes a search with search_new(), then for each run
 * calls search_choose() once per choice point, in program order, and
 * search_next_run() when the run ends, until search_next_run() says there
 * is no run left (or the caller stops: random and the PCTs never run out).
 * A choice point offers n > 0 options; for a choice among threads, ids[i]
 * is a stable identity >= 0 of option i (the same thread has the same id in
 * every run), `current` the id of the thread that ran last (-1: none) and
 * `current_var` the watched variable (0 .. nvars-1) whose access that thread
 * stopped at (-1: none).  The answer is an option in 0 .. n-1, or
 * SEARCH_ABANDON: this run belongs to another shard (or lies outside the
 * strategy's bounds) and must stop at once; it is not one of the search's
 * runs.  The same configuration and the same answers of the program give
 * the same choices, run after run: a search is reproducible from its seed.
 * Nothing here touches a process; the search is plain data.
 *
 * Strategies (each is one file, one row of the table in strategy.c):
 *   dfs        depth-first over traces (000, Fig. 7)                dfs.c
 *   bfs        breadth-first over trace prefixes                    bfs.c
 *   random     uniform choices from a generator seeded per run      random.c
 *   pct:D      PCT (004, section 3): random thread priorities, D-1
 *              priority change points                               pct.c
 *   cb:N       depth-first with at most N preemptions               cb.c
 *   vb:V[:T]   variable bounding (004, section 2), with thread
 *              bounding when T is given (004, section 4)            vb.c
 *   pctvb:D:V  PCT with variable bounding (004, section 3)          pctvb.c
 * Sharding: N shards of one search cover exactly the runs of the search
 * unsharded, each run in one shard.  How a strategy splits its space is its
 * own business, stated in its file.
 *
 * Adding a strategy: one file defining a `const struct strategy_ops`, one
 * line in strategy.c's table, and its unit test in tests/test_strategies.c.
 * A strategy's state is private to its file; search/internal.h gives it the
 * shared pieces (the replayed trace, the generator, variable sets,
 * priorities).
 */
#ifndef CCTRACE_SEARCH_SEARCH_H
#define CCTRACE_SEARCH_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct search;
struct strategy_ops;

#define SEARCH_MAX_PARAMS 2    /* "vb:V:T" */
#define SEARCH_PARAM_MAX  16   /* the largest value of any parameter */
#define SEARCH_ABANDON	  (-1) /* the run lies outside this shard: stop it */

struct search_config {
	const struct strategy_ops *ops;
	int param[SEARCH_MAX_PARAMS]; /* as parsed; 0 when absent */
	uint64_t seed;
	int shard, nshards; /* 0-based shard of nshards (1 = no sharding) */
};

/* One choice point, as the contract above describes it. */
struct search_point {
	int n;
	const int *ids; /* [n], or NULL for a choice among values */
	int current;
	int current_var;
};

/*
 * A strategy: one row of the table.  Parameters are whole numbers after
 * the name, separated by ':' ("pct:3", "vb:1:2"), each from its minimum to
 * SEARCH_PARAM_MAX; the first nrequired must be given, the rest may be
 * (absent ones take their default).  The hooks get the whole search; the
 * strategy keeps its own state in it (search/internal.h).
 *
 * Sharding and reporting are not hooks.  A strategy splits its space
 * among shards through what it shares (init turns on trace.c's split of
 * the first real choice; the seeded ones draw from per-run seeds, rng.c)
 * or in its own next_run (vb:V:T's permutations), and says which in its
 * file.  Every strategy reports the same things, kept by search.c: the
 * options taken, divergence, the space estimate and its canonical name.
 */
struct strategy_ops {
	const char *name;
	int nparams, nrequired;
	int min[SEARCH_MAX_PARAMS], dflt[SEARCH_MAX_PARAMS];
	const char *synopsis; /* "vb:V[:T]" */
	const char *usage;    /* completes "strategy 'TEXT' ...", e.g. "needs ..." */
	/* Allocate the state (the number of watched variables is known);
	 * -1 when out of memory.  fini frees it, also after a failed init. */
	int (*init)(struct search *s);
	void (*fini)(struct search *s);
	/* The start of every run, including the first (optional). */
	void (*plan)(struct search *s);
	int (*choose)(struct search *s, const struct search_point *p);
	/* The run is over (its trace is in the search): is there another? */
	bool (*next_run)(struct search *s);
};

/* "dfs", "pct:3", "vb:1:2", "pctvb:2:1", ... into cfg (its ops and params;
 * seed and shards are left alone); -1 with a message if malformed. */
int search_parse(const char *text, struct search_config *cfg, char *err, size_t errlen);
/* The canonical text of the configuration's strategy ("pctvb:2:1"). */
const char *search_name(const struct search_config *cfg, char *buf, size_t len);
/* The strategies, in the order of the usage text; NULL after the last. */
const struct strategy_ops *search_strategy(int i);

/* A search over a schedule that watches nvars variables (vb, pctvb use
 * them); NULL when out of memory. */
struct search *search_new(const struct search_config *cfg, int nvars);
void search_free(struct search *s);

int search_choose(struct search *s, const struct search_point *p);
/* The run is over.  Returns true if there is another run to make. */
bool search_next_run(struct search *s);

/* The current run's choices as "1.0.2" (empty for none), each the option
 * actually taken.  Stops at a whole number when buf is full; returns the
 * length the whole trace needs, as snprintf does. */
size_t search_trace(const struct search *s, char *buf, size_t len);
/* Did the run stop asking before replaying its whole prefix, or ask with a
 * different number of options (uncontrolled nondeterminism)? */
bool search_diverged(const struct search *s);
/* The number of distinct traces the search space holds, estimated from the
 * runs so far (Knuth's estimator: the mean over runs of the product of the
 * numbers of options along the run).  A search that ran out of traces
 * knows it exactly instead: it is the number of runs. */
double search_space_estimate(const struct search *s);

#endif
