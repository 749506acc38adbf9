/*
 * oracle: resolving `choose` across restarts (internal to policy/).
 *
 * CONCURRIT's oracle (000, section 4): each run asks it for a value at
 * every choice point and tells it when the run ends; it answers so that
 * successive runs cover distinct resolutions.  A trace is the list of
 * (choice, number of options) of one run.  Strategies:
 *   dfs     depth-first over traces (000, Fig. 7)
 *   bfs     breadth-first over trace prefixes
 *   random  uniform choices from a seeded generator
 *   pct:D   PCT (004): random thread priorities and D-1 priority change
 *           points among the choice points, whose number is learnt from
 *           the runs so far
 *   cb:N    depth-first over traces with at most N preemptions, where a
 *           preemption chooses another thread while the one that ran last
 *           could go on; non-preempting choices are tried first
 *   vb:V    variable bounding (004, section 2): for v = 1..V and every set
 *           S of v of the schedule's watched variables, depth-first over
 *           traces that preempt only right after an access to a variable
 *           in S (elsewhere the thread that ran last goes on)
 *   vb:V:T  the same sets with thread bounding (004, section 4): strict
 *           priority scheduling under permutations drawn for thread bound
 *           T, depth-first over whether to preempt at each access to S
 *   pctvb:D:V  PCT with variable bounding (004, section 3): a random set of
 *           V variables per run, D-1 change points among its accesses
 * Sharding splits the options of the first real choice (dfs, bfs, cb) or
 * the seeds (random, pct) so that N shards cover exactly one unsharded run.
 */
#ifndef CCTRACE_POLICY_ORACLE_H
#define CCTRACE_POLICY_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum strategy { STRAT_DFS, STRAT_BFS, STRAT_RANDOM, STRAT_PCT, STRAT_CB, STRAT_VB, STRAT_PCTVB };

struct oracle_config {
	enum strategy kind;
	int param;  /* pct, pctvb: depth D; cb: preemption bound N; vb: V */
	int param2; /* vb: thread bound T (0: none); pctvb: variables V */
	uint64_t seed;
	int shard, nshards; /* 0-based shard of nshards (1 = no sharding) */
};

struct oracle;

/* "dfs", "pct:3", "vb:1:2", "pctvb:2:1", ... into cfg; -1 with a message
 * if malformed. */
int oracle_parse_strategy(const char *text, struct oracle_config *cfg, char *err, size_t errlen);
const char *oracle_strategy_name(const struct oracle_config *cfg, char *buf, size_t len);

struct oracle *oracle_new(const struct oracle_config *cfg);
void oracle_free(struct oracle *o);

#define ORACLE_ABANDON (-1) /* the run lies outside this shard: stop it */

/* How many distinct watched variables the schedule has (vb, pctvb). */
void oracle_set_variables(struct oracle *o, int n);
/* Can the strategy take n watched variables?  -1 with a message if not
 * (vb and pctvb keep variable sets as 64-bit sets); before any run. */
int oracle_check_variables(const struct oracle_config *cfg, int n, char *err, size_t errlen);

/*
 * A choice point: pick one of n options.  For thread choices, ids[i] is a
 * stable identity of option i, current the identity of the thread that
 * ran last (-1 if none) and current_var the watched variable whose access
 * that thread stopped at (-1 if none); ids may be NULL for plain values.
 */
int oracle_choose(struct oracle *o, int n, const int *ids, int current, int current_var);

/* The run is over.  Returns true if there is another run to make. */
bool oracle_next_run(struct oracle *o);

/* The current run's choices as "1.0.2" (empty for none), however many;
 * malloc'd (NULL if out of memory). */
char *oracle_trace(const struct oracle *o);
/* Did the run stop asking before replaying its whole prefix, or ask with a
 * different number of options (uncontrolled nondeterminism)? */
bool oracle_diverged(const struct oracle *o);
/* The number of distinct traces the search space holds, estimated from the
 * runs so far (Knuth's estimator: the mean over runs of the product of the
 * numbers of options along the run).  A search that ran out of traces
 * knows it exactly instead: it is the number of runs. */
double oracle_space_estimate(const struct oracle *o);

#endif
