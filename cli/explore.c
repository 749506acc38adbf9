/*
 * explore.c: `cctrace explore`, the command line of systematic search.
 *
 *   cctrace explore [OPTIONS] SCHED -- PROG ARGS
 *
 * The options are the shared table's (cli/options.c); this file opens
 * the outputs they name and hands the loaded schedule to
 * search_explore_jobs (search/jobs.c), which forks the --jobs workers.
 * Exit code: 1 when a bug was found, 0 when the search ended without one,
 * 3 on an error; with --expect, 0 when the search's outcome (bug if it
 * found one, else completed) is the expected one and 4 when it is not;
 * 128+N when signal N (Ctrl-C: 130) stopped it.  A search in which no run
 * could follow the schedule (the first one failed before its first choice
 * point, or every run was unrealizable or an error) explored nothing: that
 * is an error too, with the reason, not "0 bugs" (exit 3 rather than 2,
 * unrealizable, because it says the search itself could not be done, as a
 * schedule that does not load; exit 0 would let a CI job pass with the bug
 * unfound).
 */
#include "cli/explore.h"
#include "cli/options.h"
#include "search/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void report(const struct explore_summary *sum)
{
	char errors[48] = "";

	if (sum->errors)
		snprintf(errors, sizeof(errors), ", %ld errors", sum->errors);
	fprintf(stderr,
		"cctrace explore: %ld runs, %ld bugs, %ld completed, %ld infeasible, "
		"%ld unrealizable, %ld diverged%s%s\n",
		sum->runs, sum->bugs, sum->completed, sum->infeasible, sum->unrealizable,
		sum->diverged, errors, sum->bugs ? "; see the bug-N.sched files" : "");
}

/* Every run failed to follow the schedule: nothing was explored. */
static bool nothing_explored(const struct explore_summary *sum)
{
	if (sum->interrupted || sum->runs == 0 || sum->unrealizable + sum->errors < sum->runs)
		return false;
	report(sum);
	fprintf(stderr,
		"cctrace explore: error: no run could follow the schedule (every one was "
		"unrealizable or an error), so nothing was explored; the last: %s\n",
		sum->last_failure[0] ? sum->last_failure : "(no report)");
	return true;
}

static int open_outputs(struct cli_args *a)
{
	if (a->json)
		a->eo.json = stdout;
	if (a->out_path)
		a->eo.out_dir = a->out_path;
	a->eo.schedule = a->operands[0];
	if (a->schedules_path && !(a->eo.schedules = cli_open_output("explore", a->schedules_path)))
		return -1;
	if (a->trace_json_path &&
	    !(a->eo.trace_json = cli_open_output("explore", a->trace_json_path)))
		return -1;
	return 0;
}

static void close_outputs(struct cli_args *a)
{
	cli_close_output(a->eo.schedules);
	cli_close_output(a->eo.trace_json);
	fflush(stdout);
}

/* The exit code of a search that ran. */
static int exit_code(const struct cli_args *a, const struct explore_summary *sum)
{
	int sig = engine_stop_signal();

	if (sum->interrupted && sig)
		return 128 + sig;
	if (!sum->bugs && nothing_explored(sum))
		return EXIT_ERROR;
	report(sum);
	if (a->expect >= 0)
		return a->expect == (sum->bugs ? OUTCOME_BUG : OUTCOME_COMPLETED) ? 0
										  : EXIT_UNEXPECTED;
	return sum->bugs ? 1 : 0;
}

int explore_main(struct cli_args *a)
{
	struct explore_summary sum = {0};
	struct policy *pol = NULL;
	char err[4096];
	int rc = EXIT_ERROR;

	if (a->noperands != 1 || !a->program || !a->program[0])
		return cli_usage_error("explore", "expected SCHEDULE -- PROGRAM [ARGS...]");
	if (!a->eo.max_runs && a->eo.strategy &&
	    (strncmp(a->eo.strategy, "random", 6) == 0 || strncmp(a->eo.strategy, "pct", 3) == 0))
		a->eo.max_runs = 100;
	a->eo.progress = !a->quiet && isatty(2);
	if (open_outputs(a) < 0)
		goto out;
	pol = engine_load(a->operands[0], a->program[0], 0, err, sizeof(err));
	if (!pol) {
		fprintf(stderr, "%s\n", err);
		goto out;
	}
	if (!a->quiet)
		engine_note_watchpoints(pol, &(struct engine_options){.trace = stderr},
					a->watch_why);
	if (search_explore_jobs(pol, a->program, &a->opt, &a->eo, &sum, err, sizeof(err)) < 0)
		fprintf(stderr, "cctrace explore: error: %s\n", err);
	else
		rc = exit_code(a, &sum);
out:
	engine_free(pol);
	close_outputs(a);
	return rc;
}
