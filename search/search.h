/*
 * search: the strategies that resolve `choose` across the runs of
 * `cctrace explore`, and the search itself (explore, minimise, jobs).
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
 *   pctvb:D[:V] PCT with variable bounding (004, section 3)          pctvb.c
 *   ipb        iterative preemption bounding: cb:0, then cb:1, ...   ipb.c
 *   idb        iterative delay bounding over round robin            idb.c
 *   ib:K       interference bounding (003): round robin plus exactly
 *              0, 1, ..., K chosen reads of another thread's write  ib.c
 * Sharding: N shards of one search cover exactly the runs of the search
 * unsharded, each run in one shard.  How a strategy splits its space is its
 * own business, stated in its file.
 *
 * The search loop (explore.c), minimisation (minimize.c) and the --jobs
 * fan-out (jobs.c) run the program through engine/engine.h only: one run
 * is engine_run_once(), whose choose hook this module answers; the engine
 * never calls into search/.
 *
 * Adding a strategy: one file defining a `const struct strategy_ops`, one
 * line in strategy.c's table, and its unit test in tests/test_strategies.c.
 * A strategy's state is private to its file; search/internal.h gives it the
 * shared pieces (the replayed trace, the generator, variable sets,
 * priorities).
 */
#ifndef CCTRACE_SEARCH_SEARCH_H
#define CCTRACE_SEARCH_SEARCH_H

#include "engine/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
	/* [n]: the access each option makes first (engine_choice's; ib);
	 * NULL: not known */
	const struct engine_access *access;
	/* the steps made without a choice since the last one (ib) */
	const struct engine_step *forced;
	int nforced;
};

/*
 * A strategy: one row of the table.  Parameters are whole numbers after
 * the name, separated by ':' ("pct:3", "vb:1:2"), each from its minimum to
 * its maximum (0: SEARCH_PARAM_MAX; a flag's is 1, pct:3:9 is refused);
 * the first nrequired must be given, the rest may be (absent ones take
 * their default).  The hooks get the whole search; the
 * strategy keeps its own state in it (search/internal.h).
 *
 * Sharding is a hook: `shard`, called once after init, sets up how this
 * shard takes its part of the space: the first real choice split among
 * shards (trace_shard_first_choice: dfs, bfs, cb, vb:V), per-run seeds
 * (rng_shard_by_run_seed: random, pct, pctvb), or the strategy's own
 * (vb:V:T's permutations, in its next_run).  Reporting is not a hook:
 * every strategy reports the same things, kept by search.c (the options
 * taken, divergence, the space estimate, the canonical name), and a
 * strategy that had more to say would add a field here, not a format.
 */
struct strategy_ops {
	const char *name;
	int nparams, nrequired;
	int min[SEARCH_MAX_PARAMS], max[SEARCH_MAX_PARAMS], dflt[SEARCH_MAX_PARAMS];
	const char *synopsis; /* "vb:V[:T]" */
	const char *usage;    /* completes "strategy 'TEXT' ...", e.g. "needs ..." */
	/* Allocate the state (the number of watched variables is known);
	 * -1 when out of memory.  fini frees it, also after a failed init. */
	int (*init)(struct search *s);
	void (*fini)(struct search *s);
	/* Set up shard cfg.shard of cfg.nshards (also for 1 of 1). */
	void (*shard)(struct search *s);
	/* The start of every run, including the first (optional). */
	void (*plan)(struct search *s);
	int (*choose)(struct search *s, const struct search_point *p);
	/* The run is over (its trace is in the search): is there another? */
	bool (*next_run)(struct search *s);
	/* A serialized run asks choose after every step, even with one
	 * option (engine_serial.every_step): the strategy may have to stop
	 * the run at any step (ib's moves). */
	bool every_step;
	/* It needs what only a serialized run tells (the access each option
	 * makes first): refused for a search over a schedule (ib). */
	bool serialized_only;
};

/* "dfs", "pct:3", "vb:1:2", "pctvb:2:1", ... into cfg (its ops and params;
 * seed and shards are left alone); -1 with a message if malformed. */
int search_parse(const char *text, struct search_config *cfg, char *err, size_t errlen);
/* The canonical text of the configuration's strategy ("pctvb:2:1"). */
const char *search_name(const struct search_config *cfg, char *buf, size_t len);
/* The strategies, in the order of the usage text; NULL after the last. */
const struct strategy_ops *search_strategy(int i);
/* Does the strategy named by text (as search_parse takes it) want to be
 * asked at every step of a serialized run (strategy_ops.every_step)?
 * false if it does not parse. */
bool search_asks_every_step(const char *text);
/* Does it need a serialized run (strategy_ops.serialized_only)?  false if
 * it does not parse. */
bool search_serialized_only(const char *text);

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
/* The run just ended met no choice with more than one option: it is the
 * search's only schedule, which belongs to the first shard alone. */
bool search_made_no_choice(const struct search *s);
/* The number of distinct traces the search space holds, estimated from the
 * runs so far (Knuth's estimator: the mean over runs of the product of the
 * numbers of options along the run).  A search that ran out of traces
 * knows it exactly instead: it is the number of runs. */
double search_space_estimate(const struct search *s);

/* --- systematic search: explore.c, minimize.c, jobs.c ---
 *
 * Runs go through the engine's one-run API (engine_run_once), the search
 * resolving each choose through its hook; nothing here sees the engine's
 * private state.
 */

struct bug_kinds;

struct explore_options {
	const char *strategy; /* dfs, bfs, random, pct:D, cb:N */
	long max_runs;	      /* 0: no limit (dfs and bfs stop when exhausted) */
	int64_t max_ms;	      /* 0: no limit */
	uint64_t seed;
	int shard, nshards;   /* 1-based shard of nshards; 0/0 for all */
	const char *out_dir;  /* where bug-N.sched and bug-N.txt go */
	bool all;	      /* keep going after the first bug */
	bool progress;	      /* a live line on a terminal stderr, else a line every 5 s */
	bool clean;	      /* remove an earlier search's bug-N files from out_dir */
	FILE *json;	      /* a final summary as JSON, or NULL */
	FILE *schedules;      /* one line per run: its choices, or NULL */
	int minimize_replays; /* > 0: minimise each bug, keeping it R of R */
	int64_t minimize_ms;  /* ...for at most this long each (0: no limit) */
	long run_offset;      /* a portfolio's round: the runs of the rounds before it */
	bool verbose;	      /* print the trace and report of every run that is not completed */
	/* the JSON trace of every run (docs/json.md): a header, the events
	 * and an outcome record with the run's number and choices; NULL: none
	 * (runs then only name a bug's trace, which is cheaper) */
	FILE *trace_json;
	const char *schedule; /* the schedule's path, for the JSON trace's header */
	int jobs;	      /* search_explore_jobs: worker processes; 0 or 1: none */
	/* cctrace test: the runs are serialized (engine/serial.c); NULL: not */
	struct engine_serial *serial;
	/* --no-snapshot: every run launches the program afresh, instead of
	 * forking it from a template held at its entry point (the default;
	 * the same runs either way, only faster) */
	bool no_snapshot;
	/* the template, kept by the caller across searches (test's portfolio
	 * rounds); NULL: search_explore makes its own, unless no_snapshot */
	struct engine_snapshot *snapshot;
	/* the runs' symbol tables, kept likewise; NULL: its own */
	struct symbol_cache *symbols;
	/* a portfolio's rounds: one progress line for them all (counting the
	 * rounds before, timing the whole search), which the portfolio ends;
	 * NULL: the search's own */
	struct explore_progress *shared_progress;
	/* a portfolio's rounds: the bugs the rounds before wrote (this one's
	 * first is bug-(bug_offset + 1)), and their kinds, so that a bug seen
	 * again is a repeat, not another file (search/bugkind.c); NULL: the
	 * search's own */
	long bug_offset;
	struct bug_kinds *kinds;
	bool out_dir_ready; /* out_dir was found fresh (search_fresh_out_dir) */
	/* the command its messages name ("explore" for `cctrace explore --
	 * PROG`, which is test); NULL: "test" when serial, else "explore" */
	const char *command;
	/* a job's: told each bug as soon as it is found, before it is
	 * minimised, so that the others stop at once (jobs.c); 0: none */
	int found_fd;
};

struct explore_summary {
	long runs, bugs, completed, infeasible, unrealizable, diverged, errors, skipped;
	/* where the time of the runs went, in ms: launching up to the program's
	 * entry point, opening symbol tables, running the schedule (symbols
	 * excluded), and ending (the program run to its end or killed) */
	double launch_ms, symbols_ms, schedule_ms, finish_ms;
	bool interrupted;
	bool out_of_time;      /* --time ran out inside a run, which is not counted */
	bool space_left;       /* it ended with schedules of its strategy not run */
	long repeats;	       /* runs that showed a bug of a kind already written */
	long distinct;	       /* distinct choice traces among the runs */
	double space_estimate; /* estimated number of traces in the search space */
	double ms;
	char strategy[32]; /* canonical name ("pctvb:2:1") */
	int jobs;	   /* worker processes (1: none) */
	/* the outcome line of the last unrealizable or error run ("" if none):
	 * why, when no run could follow the schedule */
	char last_failure[512];
};

/* Restart argv as many times as the strategy asks, resolving the
 * schedule's choose points differently each time.  Returns 0 when the
 * search ran (bugs or not), -1 on an error that stopped it.  eo->json gets
 * the summary. */
int search_explore(struct policy *pol, char *const argv[], const struct engine_options *opt,
		   const struct explore_options *eo, struct explore_summary *sum, char *err,
		   size_t errlen);

/* search_explore over eo->jobs worker processes (jobs.c): each explores
 * one of J sub-shards of eo's shard (so jobs and shards compose) into
 * OUT/job-N; the first bug stops the others (unless eo->all); every
 * worker's bugs are then numbered into one sequence in OUT, and the
 * summaries added into one, written to eo->json in search_explore's
 * schema.  "{job}" in argv and opt->driver becomes the job's number 1..J
 * (1 with no jobs): a port per worker.  Returns as search_explore. */
int search_explore_jobs(struct policy *pol, char *const argv[], const struct engine_options *opt,
			const struct explore_options *eo, struct explore_summary *sum, char *err,
			size_t errlen);

/* out_dir created if need be and holding no bug-N file of an earlier
 * search (eo->clean removes them); -1 with err naming them otherwise. */
int search_fresh_out_dir(const struct explore_options *eo, char *err, size_t errlen);

/* The summary as one JSON line, one schema with or without jobs
 * (docs/json.md); SEARCH_SUMMARY_SCHEMA is its version. */
#define SEARCH_SUMMARY_SCHEMA 1
/* s as text in HTML or XML: & < > " ' as entities, the control characters
 * XML cannot hold dropped (bug-N.html, JUnit reports). */
void search_markup_text(FILE *f, const char *s);

void search_summary_json(FILE *f, const struct explore_options *eo,
			 const struct explore_summary *sum);

/* --- cctrace test: schedule-free testing (test.c) --- */

enum test_points { TEST_POINTS_SHARED, TEST_POINTS_SYNC, TEST_POINTS_ALL };

struct test_options {
	enum test_points points;
	long max_steps;	     /* 0: the engine's default */
	int profile_runs;    /* --points shared: profiling runs (0: 3) */
	bool early_timeouts; /* a timed wait may time out at any choice */
};

/* Serialized runs of argv with no schedule, the search's strategy choosing
 * the thread at every scheduling point; eo as for search_explore (the bug
 * files are `serial` schedules).  Returns as search_explore. */
int search_test(char *const argv[], const struct engine_options *opt,
		const struct explore_options *eo, const struct test_options *to,
		struct explore_summary *sum, char *err, size_t errlen);

/* Drop steps from the schedule file at path while it still reproduces a
 * bug in replays of replays; the original stays as PATH-without-.sched
 * plus .full.sched.  No trial starts after ms (0: no limit) or Ctrl-C: the
 * steps dropped by then stay dropped, as each drop reproduced. */
struct minimize_limits {
	int replays;
	int64_t ms;
};
struct minimize_result {
	int removed;	/* lines dropped */
	int lines;	/* lines left */
	bool cut_short; /* the time ran out (or Ctrl-C) before every line was tried */
};
int search_minimize(const char *path, char *const argv[], const struct engine_options *opt,
		    const struct minimize_limits *lim, struct minimize_result *res);

/*
 * --- typestate mode, 2ndStrike's method (Gao et al.,
 * ASPLOS'11) on unmodified binaries: `cctrace typestate`.
 *
 * Contract.  A model (tsmodel.c) is data: states, the functions that move
 * an object to a state (OP-transit) and the functions allowed only in some
 * states (OP-limit), each naming which argument or return value is the
 * object.  typestate_run() profiles one ordinary run of the program with
 * the models' functions tapped (engine run_hooks.tap), builds happens-
 * before from the synchronisation it saw, forms candidate pairs
 * (OP-transit in one thread, OP-limit in another, same object, reversal
 * violates the model, not ordered by happens-before; a failed transit
 * moves nothing; an owned state, a held lock, allows only its owner's
 * calls), ranks them, drops
 * those the history says failed before, and re-executes the program once
 * per candidate under a generated schedule that holds the preceding
 * event's thread until the subsequent event has happened.  A bug is
 * reported only when that run ends in outcome bug: the call's own failure
 * (the model's `ok` condition false at its return, e.g. EBADF), a crash, an
 * abort, or the model's check that the limited operation ran on the object
 * in a state that forbids it.  Each bug gets bug-N.txt (the violation, the
 * object, both events with thread, place and stack) and bug-N.sched, which
 * `cctrace run --expect bug` replays.
 */

/* Where an operation finds its object: the return value, an argument
 * register, or element `index` of the int array an argument points to
 * (read at the return: pipe(fds)). */
enum ts_where { TS_RET, TS_ARG };
struct ts_object {
	enum ts_where where;
	int arg;   /* TS_ARG: 1..6 */
	int index; /* TS_ARG: -1 for the register itself, else an int array element */
};

/* The operation of a model's `deref` line: a load or store inside one of
 * its blocks, made by no call (not a C name: no function is called so). */
#define TS_DEREF_FUNC "load/store"

struct ts_op {
	char *func;
	struct ts_object obj;
	bool transit;	  /* moves the object to `to` */
	int to;		  /* transit: the state */
	unsigned allowed; /* limit: bit s set if allowed in state s; 0: not a limit */
	bool waits;	  /* limit: in a state another thread owns, the call waits (a lock) */
	bool at_entry;	  /* transit: takes effect at F's entry (an unlock: another thread
			   * may take the lock before F returns) */
	char *ok;	  /* schedule expression true when the call succeeded; NULL */
	/* transit of a block (its object the return value): its size is
	 * argument size_args[0], times size_args[1] if not 0; 0: no size */
	int size_args[2];
	int line; /* in the model's text */
};

struct ts_model {
	char *name;
	char *source; /* file name or "built-in" */
	char **states;
	int nstates;
	int initial;	  /* the state of an object first met by a limit */
	unsigned owned;	  /* bit s: state s belongs to the thread whose transit made it (HELD) */
	bool int_objects; /* objects are C ints (descriptors): the low 32 bits */
	int64_t *ignore;  /* values that are never objects (-1, NULL) */
	int nignore;
	struct ts_op *ops;
	int nops;
};

struct ts_models {
	struct ts_model *m;
	int n;
};

/* Parse a model file's text (one or more `model NAME` sections) into ms.
 * 0, or -1 with "path:line:col: error: ..." in err. */
int ts_models_parse(struct ts_models *ms, const char *text, const char *path, char *err,
		    size_t errlen);
/* The built-in models "file", "lock", "memory". */
int ts_models_builtin(struct ts_models *ms, const char *name, char *err, size_t errlen);
/* A --model argument: a comma-separated list of built-in names, or a file. */
int ts_models_load(struct ts_models *ms, const char *spec, char *err, size_t errlen);
void ts_models_free(struct ts_models *ms);
/* The text of a built-in model, NULL if unknown (docs, tests). */
const char *ts_builtin_text(const char *name);

struct typestate_options {
	const char *models;  /* --model; NULL: file,lock,memory */
	const char *out_dir; /* --out; NULL: typestate-out */
	int runs;	     /* --runs: most candidates re-executed; 0: all */
	int64_t attempt_ms;  /* limit of one re-execution's waits; 0: 5 s */
	bool ignore_history; /* --ignore-history */
	bool lock_order;     /* mutex unlock->lock edges are happens-before too */
	int instances;	     /* most re-executions of one candidate; 0: 3 */
	FILE *report;	     /* progress and results (stderr) */
	FILE *trace;	     /* --trace: re-executions' traces; NULL */
	const char *driver;  /* --driver: ends each run (a server's client); NULL */
	int64_t max_ms;	     /* --time: the whole, profile included; 0: no limit */
};

/* Find and manifest typestate bugs in argv.  Returns the number of bugs
 * manifested (>= 0), or -1 with err. */
int typestate_run(char *const argv[], const struct typestate_options *o, char *err, size_t errlen);

#endif
