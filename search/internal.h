/*
 * search/internal.h: what a strategy file may use (internal to search/).
 *
 * struct search is the part every strategy shares: the configuration, the
 * current run's trace and the counts behind the space estimate.  A
 * strategy's own state hangs off s->state, allocated by its init and freed
 * by its fini; no other file looks into it.
 *
 * The shared pieces, each in its own file:
 *   trace.c    the trace of a run, replayed and extended depth-first, with
 *              preemption counting and first-choice sharding (dfs, bfs, cb,
 *              vb)
 *   rng.c      splitmix64, and the per-run seed of the seeded strategies
 *   varset.c   sets of watched variables (vb, pctvb)
 *   priority.c thread priorities, drawn lazily (pct, pctvb, vb:V:T)
 *   tbound.c   the thread-bounding permutations of vb:V:T (004, section 4)
 *   frontier.c iterative bounding that never runs a schedule twice (ipb,
 *              idb, ib)
 *   interfere.c  the last writer of each address: reads of another
 *              thread's write (ib, bugstats.c)
 *   bugstats.c bug-N.txt's numbers, on a replay of the written schedule
 *   bugkind.c  a bug's kind, and the kinds a search wrote
 *   text.c     a file's whole text
 */
#ifndef CCTRACE_SEARCH_INTERNAL_H
#define CCTRACE_SEARCH_INTERNAL_H

#include "search/search.h"

#include <assert.h>

/* --- text.c --- */

/* The whole text of the file at path (to free): "" if it cannot be read
 * through, NULL if it cannot be opened (errno says why). */
char *search_read_text(const char *path);
/* path and the directories above it made as needed (mkdir -p); -1 with err. */
int search_make_dir(const char *path, char *err, size_t errlen);

/* --- jobs.c --- */

/* s with "{job}" replaced by job's number; s itself when it has none (or
 * out of memory). */
char *search_with_job(const char *s, int job);
/* argv with {job} replaced, or NULL if it has none (or out of memory);
 * freed with search_free_argv_with_job. */
char **search_argv_with_job(char *const argv[], int job);
void search_free_argv_with_job(char **out, char *const argv[]);

/* Adds s's counts into total (their elapsed ms: the longer of the two,
 * as for parallel workers). */
void search_summary_add(struct explore_summary *total, const struct explore_summary *s);
/* With --verbose, why the runs were launched afresh although a template
 * was asked for (explore.c); nothing when they were forked. */
void search_note_snapshot(const struct explore_options *eo, const struct engine_snapshot *s);

/* --- bugkind.c --- */

/* The bugs a search wrote, by kind. */
struct bug_kinds {
	char **kinds;
	size_t n, cap;
};

/* The kind of the bug report tells (its "cctrace: bug: " line with thread
 * ids and addresses blanked) into buf. */
void search_bug_kind(const char *report, char *buf, size_t len);
/* true if kind is new to set (and now in it); false for a repeat. */
bool search_bug_kinds_add(struct bug_kinds *set, const char *kind);
void search_bug_kinds_free(struct bug_kinds *set);

/* --- explore.c --- */

/* The command a search is, in its messages and bug files: test or explore. */
const char *search_command_of(const struct explore_options *eo);

/* --- explore.c: one progress line over a portfolio's rounds --- */

/* A progress line for a search of several rounds (eo: the search's
 * options: -q, explore or test); NULL when out of memory, and then each
 * round shows its own. */
struct explore_progress *explore_progress_new(const struct explore_options *eo);
/* The search's last line, with total (the rounds added up). */
void explore_progress_end(struct explore_progress *p, const struct explore_summary *total);
void explore_progress_free(struct explore_progress *p);

/* --- trace.c --- */

struct entry {
	int k, n;	   /* the option (relative for cb, vb) of n; n == 0: bfs
			    * prefix not replayed yet */
	int abs;	   /* the option actually returned */
	int cum;	   /* cb, vb: preemptions including this choice */
	bool can_continue; /* the thread that ran last is an option; any other
			    * option preempts it */
	bool forced;	   /* vb: no preemption allowed here: only option 0 */
};

struct trace {
	struct entry *e;
	int len, cap;
	int replay_len; /* entries to replay at the start of the run */
	int index;	/* next entry to use */
	/* Rules the strategy sets in its init: */
	bool split_first;	   /* shards take every nshards-th option of the
				    * first real choice */
	int preemption_bound;	   /* -1: preemptions are not counted */
	bool delay_cost;	   /* idb: option k costs k (delays), not a
				    * preemption */
	bool move_cost;		   /* ib: every option but the first costs one
				    * (an interference move) */
	int max_bound;		   /* iterative bounding stops above it; -1: never */
	bool bound_met;		   /* an option was left out for the bound
				    * (iterative bounding: a higher one has more) */
	int floor;		   /* backtracking stops at this entry (frontier.c) */
	struct frontier *frontier; /* iterative bounding's; NULL: none */
};

struct search {
	struct search_config cfg;
	void *state; /* the strategy's own */
	struct trace trace;
	int nvars; /* watched variables of the schedule */
	long run;  /* runs ended so far */
	bool diverged;
	bool abandoned;
	bool met_choice;     /* the run met a choose with more than one option */
	double estimate_sum; /* sum over runs of the product of options */
	long estimate_runs;
};

static inline void *search_state(struct search *s)
{
	return s->state;
}

/* Append an entry; -1 when out of memory. */
int trace_push(struct search *s, struct entry e);
/* The option at this choice point: the replayed one, or the first option
 * of a new entry.  SEARCH_ABANDON (and s->abandoned) if the new entry
 * would leave this shard or the preemption bound. */
int trace_next(struct search *s, int n, bool can_continue, bool forced);
/* trace_next for an entry made from proto (its n, can_continue, forced
 * and nfree). */
int trace_next_entry(struct search *s, struct entry proto);
/* Record an option drawn afresh (random, pct, pctvb): never replayed. */
int trace_draw(struct search *s, int k, int n);
/* Preemptions of the run so far (before the next entry). */
int trace_preemptions(const struct search *s);
/* The shard hook of the depth-first family (dfs, bfs, cb): shard i of N
 * takes options i, i+N, ... of the first real choice. */
void trace_shard_first_choice(struct search *s);
/* Is entry `at` where shards split?  How far apart are the options one
 * shard takes there (nshards), or anywhere else (1)? */
bool trace_is_shard_point(const struct search *s, int at);
int trace_step(const struct search *s, int at);
/* Depth-first: make the trace the next one to replay, backtracking to the
 * deepest entry with an option left; false if there is none. */
bool trace_backtrack(struct search *s);
/* The run's options relative to the thread that ran last (cb, vb): option
 * 0 goes on with it, then the others in order.  The absolute option of
 * relative option k, and whether the thread that ran last is an option. */
int trace_relative_option(const struct search_point *p, int k);
bool trace_can_continue(const struct search_point *p);
/* The option whose id is id, -1 if none (or a choice among values). */
int trace_option_of(const struct search_point *p, int id);
void trace_free(struct trace *t);

/* --- frontier.c: iterative bounding (ipb, idb, ib) --- */

/* Remember, from now on, where the bound leaves options out (an
 * iterative strategy's init); -1 when out of memory. */
int frontier_enable(struct trace *t);
void frontier_free(struct trace *t);
/* Option k of entry depth, making count cum, exceeds the bound: a
 * frontier item for a higher bound (and bound_met).  -1: out of memory. */
int frontier_note(struct trace *t, int depth, int k, int cum);
/* Entries of the trace changed (frontier.c's snapshot is stale). */
void frontier_trace_changed(struct trace *t);
/* Iterative bounding's next_run: backtrack within the bound, below the
 * current frontier item; then the bound's next item; when the bound has
 * none left, the next bound's first.  False when nothing is left. */
bool trace_backtrack_iterating(struct search *s);
/* The absolute option of round-robin option k (idb): the options in
 * increasing id order, rotated to start at the thread that ran last (or
 * the first id after it); a choice among values keeps its order. */
int trace_round_robin_option(const struct search_point *p, int k);

/* --- interfere.c: reads of another thread's write (ib, bugstats.c) --- */

struct interference {
	struct writer *w; /* the last writer of each address seen written */
	size_t n, cap;
};

void interference_reset(struct interference *x); /* a run starts */
void interference_free(struct interference *x);
/* Does access a (NULL: none) by thread id read what another wrote last? */
bool interference_reads_other(const struct interference *x, const struct engine_access *a, int id);
/* Thread id made access a: its write, if any, is the address's last. */
int interference_note(struct interference *x, const struct engine_access *a, int id);

/* --- bugstats.c: bug-N.txt's numbers, on the schedule written --- */

/* Replay DIR/bug-N.sched (minimised or not) under serialized execution,
 * following it step by step, and write its preemptions, delays,
 * variables and interferences into DIR/bug-N.txt. */
void search_bug_stats(struct policy *pol, char *const argv[], const struct engine_options *opt,
		      const struct explore_options *eo, long n);

/* --- rng.c --- */

uint64_t rng_next(uint64_t *state);
/* Uniform in 0 .. n-1 (n > 0). */
int rng_below(uint64_t *state, int n);
/* Run r of shard i of N draws from seed + (r * N + i) * golden ratio: a run
 * is reproducible from the seed, and shards split the runs. */
uint64_t rng_run_seed(const struct search *s);
/* The shard hook of the seeded strategies (random, pct, pctvb): nothing to
 * set up, since every run draws from rng_run_seed, which is the shard's. */
void rng_shard_by_run_seed(struct search *s);

/* --- varset.c --- */

/* A set of watched variables, by members and by bits. */
struct varset {
	int nvars;
	int *member; /* [size], increasing */
	int size;
	uint64_t *bits; /* [(nvars + 63) / 64] */
};

int varset_init(struct varset *v, int nvars);
void varset_free(struct varset *v);
void varset_clear(struct varset *v);
void varset_add(struct varset *v, int var);
bool varset_has(const struct varset *v, int var);
/* The first set of `size` variables ({0, .., size-1}); the next set of as
 * many in colexicographic order (the order of the sets' bitmasks), false
 * after the last. */
void varset_first(struct varset *v, int size);
bool varset_next(struct varset *v);
/* A 64-bit key of the set: its bitmask when there are at most 64
 * variables. */
uint64_t varset_key(const struct varset *v);

/* --- priority.c --- */

/* Thread priorities by id, grown on demand; PRIO_UNSET until assigned. */
#define PRIO_UNSET INT32_MIN
struct priorities {
	int *p;
	int n;
};

/* The slot of id (>= 0), PRIO_UNSET if never assigned; NULL when out of
 * memory. */
int *prio_slot(struct priorities *t, int id);
void prio_reset(struct priorities *t);
void prio_free(struct priorities *t);
/* The PCT option that runs: the highest priority, drawn on first sight of
 * an id above every change point (floor < p); a value choice's options are
 * ids 0 .. n-1.  -1 when out of memory. */
int pct_highest(struct priorities *t, uint64_t *rng, int floor, const struct search_point *p);
/* The priority of id, drawn if unset; NULL when out of memory. */
int *pct_priority(struct priorities *t, uint64_t *rng, int floor, int id);

/* --- tbound.c --- */

struct tbound;
struct tbound *tbound_new(uint64_t seed, int preemptions, int thread_bound);
void tbound_free(struct tbound *b);
/* Start the permutations of a variable set, or go to its next one; false
 * when the set has none left for this shard. */
bool tbound_first(struct tbound *b, const struct search *s, uint64_t set_key);
bool tbound_next(struct tbound *b, const struct search *s, uint64_t set_key);
/* A run starts: thread j has the permutation's priority P_j. */
void tbound_start_run(struct tbound *b);
/* The option the priorities run, with the thread `lowered` (an id, -1 for
 * none) given the priority of preemption number `nth`; -1 when out of
 * memory. */
int tbound_highest(struct tbound *b, const struct search_point *p, int lowered, int nth);
/* Preemption number nth lowers thread id. */
int tbound_preempt(struct tbound *b, int id, int nth);

/* --- picture.c: DIR/bug-N.html --- */

struct picture_step {
	double ms;
	char *thread, *var, *event, *func, *file, *preempted; /* var, func, file, preempted may
							       * be NULL */
	int line;
};

/* The steps of a kept trace, filled by picture_add (run_hooks.trace_event). */
struct picture {
	struct picture_step *steps;
	size_t n, cap;
	bool incomplete; /* out of memory: steps were dropped */
};

struct picture_text {
	const char *title, *about; /* heading and the line under it */
	const char *outcome;	   /* the failing event: the outcome message */
	const char *report;	   /* the run's whole report, shown folded; may be NULL */
};

void picture_add(void *picture, const struct engine_trace_event *ev);
void picture_free(struct picture *p);
/* A self-contained HTML page at path; -1 with err if it cannot be written. */
int picture_write(const char *path, const struct picture *p, const struct picture_text *text,
		  char *err, size_t errlen);

/* word as a POSIX shell reads it back (explore.c): bare, or in single
 * quotes; for the `# run:` lines pasted into a shell. */
void search_put_shell_word(FILE *f, const char *word);
/* " PATH -- ARGV..." of a `# run:` line, each word so. */
void search_put_replay_tail(FILE *f, const char *path, char *const argv[]);

#endif
