/*
 * test.c: `cctrace test -- PROG`, systematic testing without a schedule.
 *
 * Why.  A user with a flaky binary has no schedule to write; the program's
 * own synchronisation and shared accesses are the choice points.  The
 * engine's serialized mode (engine/serial.c) runs one thread at a time and
 * asks the search at each point; this file reuses everything explore has
 * (strategies, --runs/--time/--jobs/--shard, bug files, progress, the
 * JSON summary) by running search_explore on a one-statement schedule,
 * `serial`, with the points to plant in the hooks.
 *
 * Points.  --points sync plants only the synchronisation functions;
 * --points all also every non-stack access of the executable's text;
 * --points shared (the default) first makes a few profiling runs with
 * every access a point, recording which instructions touched memory that
 * two threads touched with one writing (SCTBench's race-detection phase),
 * and then plants those alone: fewer points, shorter runs, shallower bugs
 * for PCT.  The executable's accesses only: libc's internal state is
 * covered by its synchronisation functions.
 */
#include "lang/lang.h"
#include "search/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_PROFILE_RUNS 3

/* Profiling runs choose at random (their own generator: the search's
 * runs do not depend on how many profiling runs there were). */
static int choose_randomly(void *ctx, const struct engine_choice *c)
{
	return rng_below(ctx, c->n);
}

/* What profiling found, for the user (vb and pctvb bound these). */
static void print_profile(const struct explore_options *eo, const struct engine_serial *cfg)
{
	size_t i;

	fprintf(stderr, "cctrace %s: profiling: %zu shared access point%s, %zu variable%s",
		search_command_of(eo), cfg->npoints, plural_s((long)cfg->npoints), cfg->nvars,
		plural_s((long)cfg->nvars));
	for (i = 0; i < cfg->nvars; i++)
		fprintf(stderr, "%s%s", i ? ", " : ": ", cfg->vars[i].name);
	fputc('\n', stderr);
	if (cfg->npoints == 0) /* so that "0 bugs" is read for what it covers */
		fprintf(stderr,
			"cctrace %s: note: no instruction of the program touched memory "
			"that another thread touched; the search switches threads at "
			"synchronisation only (--points all: at every access)\n",
			search_command_of(eo));
}

/* Said even with -q: races its "0 bugs" does not cover. */
static void print_torn(const struct explore_options *eo, const struct engine_serial *cfg)
{
	size_t i;

	for (i = 0; i < cfg->ntorn; i++)
		fprintf(stderr,
			"cctrace %s: warning: %s reads and writes memory another thread writes "
			"in one instruction with no lock prefix: on a multi-core machine a write "
			"between the two is lost, but one thread runs at a time here and no "
			"schedule can split the instruction, so that race is not searched for\n",
			search_command_of(eo), cfg->torn[i].where);
}

static void free_job_args(struct engine_options *quiet, const struct engine_options *opt,
			  char **job_argv, char *const argv[])
{
	if (quiet->driver != opt->driver)
		free((char *)quiet->driver);
	quiet->driver = opt->driver;
	search_free_argv_with_job(job_argv, argv);
}

static int profile(struct policy *pol, char *const argv[], const struct engine_options *opt,
		   const struct explore_options *eo, const struct test_options *to,
		   struct engine_serial *cfg, char *err, size_t errlen)
{
	struct engine_options quiet = *opt;
	uint64_t rng = eo->seed * 0x9e3779b97f4a7c15ull + 1;
	struct engine_serial prof = {
	    .all_points = true, .profile = true, .max_steps = to->max_steps};
	struct run_hooks hooks = {.choose = choose_randomly, .ctx = &rng, .serial = &prof};
	struct run_result res;
	int i, n = to->profile_runs > 0 ? to->profile_runs : DEFAULT_PROFILE_RUNS;
	int64_t t0 = engine_now_ms();
	bool cut = false; /* a run ended at --max-steps */
	FILE *null = fopen("/dev/null", "w");
	/* as the search's first job runs it: a server's port is its own */
	char **job_argv = search_argv_with_job(argv, 1);
	char *const *run_argv = job_argv ? job_argv : argv;

	if (!null) {
		snprintf(err, errlen, "cannot open /dev/null: %s", strerror(errno));
		search_free_argv_with_job(job_argv, argv);
		return -1;
	}
	quiet.driver = search_with_job(opt->driver, 1);
	quiet.trace = NULL;
	quiet.trace_json = NULL;
	quiet.report = null;
	quiet.brief = true;
	/* the search's runs show the program's output, once each: the
	 * profile's would show it again (they end as any run does) */
	quiet.quiet_program = true;
	quiet.end_by_ms = eo->max_ms ? t0 + eo->max_ms : 0;
	if (eo->progress) /* a big program's profile takes a while: say what it is doing */
		fprintf(stderr, "cctrace %s: profiling the shared accesses (%d runs)...\n",
			search_command_of(eo), n);
	/* --time counts the profile too, and ends a run it finds going */
	for (i = 0; i < n && !(i > 0 && eo->max_ms && engine_now_ms() - t0 >= eo->max_ms); i++) {
		if (engine_run_once(pol, run_argv, &quiet, &hooks, &res, err, errlen) < 0) {
			fclose(null);
			free(prof.shared);
			free(prof.vars);
			free(prof.var_points);
			free(prof.not_spins);
			free(prof.torn);
			free_job_args(&quiet, opt, job_argv, argv);
			return -1;
		}
		if (res.outcome == OUTCOME_ERROR)
			break; /* as the next would: the search's first run says why */
		cut |= res.outcome == OUTCOME_INFEASIBLE;
	}
	free_job_args(&quiet, opt, job_argv, argv);
	if (cut) /* its "0 bugs" may be a search that never saw the race */
		fprintf(stderr,
			"cctrace %s: warning: a profiling run reached --max-steps and was ended "
			"before the program: what its threads share after that is no point of the "
			"search (give a higher --max-steps, or --points all)\n",
			search_command_of(eo));
	fclose(null);
	cfg->shared = prof.shared; /* the search plants these, and adds to them */
	cfg->nshared = prof.nshared;
	cfg->points = prof.shared;
	cfg->npoints = prof.nshared;
	cfg->vars = prof.vars; /* vb and pctvb bound these */
	cfg->nvars = prof.nvars;
	cfg->var_points = prof.var_points;
	cfg->nvar_points = prof.nvar_points;
	cfg->not_spins = prof.not_spins; /* loops that compute: probed once */
	cfg->nnot_spins = prof.nnot_spins;
	cfg->torn = prof.torn;
	cfg->ntorn = prof.ntorn;
	if (eo->progress)
		print_profile(eo, cfg);
	print_torn(eo, cfg);
	return 0;
}

/*
 * The default strategy: rounds of PORTFOLIO_CHUNK runs of pct:3:1, pct:3,
 * pct:2:1 and random in turn, each round with a seed of its own, until a
 * bug, the budget's end or an interruption.  Why a portfolio: PCT with
 * depth d finds a bug of depth d with probability at least 1/(n k^(d-1)),
 * so no one depth is best for every bug, and random finds some bugs at
 * once that PCT's priorities make unlikely (queue_bad).  pct:D:1 draws a
 * new thread's priority below its creator's: a program whose main creates
 * N threads before any of them may run far (SCTBench's reorder_N,
 * twostage) no longer pays 1/N for main's rank; plain pct:3 stays for the
 * bugs where children must overtake their creator.  docs/test.md has the
 * measurements.  Short rounds keep the loss small; each round's PCT learns
 * the run's length again in its first run, which is why rounds are not
 * shorter still.
 */
#define PORTFOLIO_CHUNK 10
static const char *const portfolio[] = {"pct:3:1", "pct:3", "pct:2:1", "random"};

static int search_portfolio(struct policy *pol, char *const argv[],
			    const struct engine_options *opt, const struct explore_options *eo,
			    struct explore_summary *sum, char *err, size_t errlen)
{
	struct explore_options round = *eo;
	struct bug_kinds kinds = {0};
	int64_t t0 = engine_now_ms();
	long left = eo->max_runs, k;
	int rc = 0;

	memset(sum, 0, sizeof(*sum));
	round.json = NULL; /* one summary, at the end */
	round.shared_progress = eo->progress ? explore_progress_new(eo) : NULL;
	round.kinds = &kinds; /* --all: a bug an earlier round wrote is a repeat */
	for (k = 0; rc == 0; k++) {
		struct explore_summary part = {0};
		int64_t spent = engine_now_ms() - t0;
		double ms = sum->ms;

		if ((eo->max_runs && left <= 0) || (eo->max_ms && spent >= eo->max_ms))
			break;
		round.strategy = portfolio[k % (long)(sizeof(portfolio) / sizeof(portfolio[0]))];
		round.seed = eo->seed + (uint64_t)k;
		round.max_runs = eo->max_runs && left < PORTFOLIO_CHUNK ? left : PORTFOLIO_CHUNK;
		round.max_ms = eo->max_ms ? eo->max_ms - spent : 0;
		round.run_offset = eo->run_offset + sum->runs + sum->skipped;
		round.bug_offset = eo->bug_offset + sum->bugs;
		rc = search_explore_jobs(pol, argv, opt, &round, &part, err, errlen);
		search_summary_add(sum, &part);
		sum->ms = ms + part.ms; /* rounds follow one another */
		sum->interrupted |= part.interrupted;
		left -= part.runs + part.skipped;
		if ((part.bugs && !eo->all) || part.interrupted || part.runs + part.skipped == 0)
			break;
	}
	search_bug_kinds_free(&kinds);
	if (round.shared_progress && rc == 0)
		explore_progress_end(round.shared_progress, sum);
	explore_progress_free(round.shared_progress);
	snprintf(sum->strategy, sizeof(sum->strategy), "portfolio");
	if (eo->json && rc == 0)
		search_summary_json(eo->json, eo, sum);
	return rc;
}

/* The schedule every run executes: `serial`, in a file of its own. */
static struct policy *serial_policy(const char *program, char *err, size_t errlen)
{
	char path[] = "/tmp/cctrace-test-XXXXXX";
	int fd = mkstemp(path);
	struct policy *pol;

	if (fd < 0 || write(fd, "serial\n", 7) != 7) {
		snprintf(err, errlen, "cannot write a temporary file: %s", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		return NULL;
	}
	close(fd);
	pol = engine_load(path, program, 0, err, errlen);
	unlink(path);
	return pol;
}

/* A program whose symbols cannot be read (a stripped static executable:
 * a dynamic one's libc names its functions) is searched blind: none of
 * its synchronisation functions is a point, and libc's code is profiled
 * as its own.  Said before the search, so that its "0 bugs" is not taken
 * for a search that saw the program. */
static void warn_if_nameless(const struct explore_options *eo, const char *program)
{
	static const char *const libc_exit[] = {"exit"};
	bool present = true;
	char err[256];

	if (engine_functions_present(program, libc_exit, 1, &present, NULL, err, sizeof(err)) ==
		0 &&
	    !present)
		fprintf(stderr,
			"cctrace %s: warning: %s has no symbol table (a stripped static "
			"executable?): its locks and threads have no names, so they are no "
			"scheduling points, and libc's code is searched as its own; test a build "
			"that is not stripped\n",
			search_command_of(eo), program);
}

int search_test(char *const argv[], const struct engine_options *opt,
		const struct explore_options *eo, const struct test_options *to,
		struct explore_summary *sum, char *err, size_t errlen)
{
	struct engine_serial cfg = {.max_steps = to->max_steps,
				    .early_timeouts = to->early_timeouts,
				    .all_points = to->points == TEST_POINTS_ALL};
	struct explore_options local = *eo;
	struct engine_options run_opt = *opt;
	struct policy *pol = serial_policy(argv[0], err, errlen);
	int64_t t0 = engine_now_ms();
	int rc = -1;

	if (!pol)
		return -1;
	/* a typo in --strategy is told before the profile's runs */
	if (eo->strategy && search_parse(eo->strategy, &(struct search_config){0}, err, errlen) < 0)
		goto out;
	if (search_fresh_out_dir(eo, err, errlen) < 0 || engine_input_prepare(err, errlen) < 0)
		goto out;
	warn_if_nameless(eo, argv[0]);
	if (to->points == TEST_POINTS_SHARED &&
	    profile(pol, argv, opt, eo, to, &cfg, err, errlen) < 0)
		goto out;
	if (eo->max_ms) { /* what the profile spent */
		int64_t left = eo->max_ms - (engine_now_ms() - t0);

		if (left <= 0) { /* no time for a run: said, never "0 bugs" */
			memset(sum, 0, sizeof(*sum));
			sum->out_of_time = true;
			sum->ms = (double)(engine_now_ms() - t0);
			sum->jobs = eo->jobs > 1 ? eo->jobs : 1;
			snprintf(sum->strategy, sizeof(sum->strategy), "%s",
				 eo->strategy ? eo->strategy : "portfolio");
			if (eo->json)
				search_summary_json(eo->json, eo, sum);
			rc = 0;
			goto out;
		}
		local.max_ms = left;
	}
	run_opt.fail_on_exit = true;
	run_opt.sanitizer_bugs = true;
	local.serial = &cfg;
	local.clean = false;
	local.out_dir_ready = true; /* each round would find the bugs of those before */
	/* one template and one symbol cache for every round of the
	 * portfolio: a round is 10 runs, and a cache of its own read the
	 * program's symbols again in each */
	if ((!eo->no_snapshot && !eo->snapshot && !(local.snapshot = engine_snapshot_new())) ||
	    (!eo->symbols && !(local.symbols = engine_symbol_cache_new()))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	cfg.every_step = eo->strategy && search_asks_every_step(eo->strategy);
	if (eo->strategy)
		rc = search_explore_jobs(pol, argv, &run_opt, &local, sum, err, errlen);
	else
		rc = search_portfolio(pol, argv, &run_opt, &local, sum, err, errlen);
out:
	if (local.snapshot != eo->snapshot) {
		search_note_snapshot(eo, local.snapshot);
		engine_snapshot_free(local.snapshot);
	}
	if (local.symbols != eo->symbols)
		engine_symbol_cache_free(local.symbols);
	free(cfg.shared);
	free(cfg.vars);
	free(cfg.var_points);
	free(cfg.not_spins);
	free(cfg.torn);
	engine_free(pol);
	return rc;
}
