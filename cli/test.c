/*
 * test.c: `cctrace test`, the command line of schedule-free testing.
 *
 *   cctrace test [OPTIONS] -- PROG ARGS
 *   cctrace explore [OPTIONS] -- PROG ARGS     (no schedule: the same)
 *
 * The options are the shared table's (cli/options.c): explore's search
 * options plus --points, --max-steps and --early-timeouts.  The search is
 * search_test (search/test.c); the summary and exit code are explore's
 * (1 bug, 0 none, 3 error or no run could run, 4 --expect not met).
 * Default: a portfolio of pct:1..3 and random (search/test.c says why),
 * 100 runs.
 */
#include "cli/explore.h"
#include "cli/options.h"
#include "engine/engine.h"
#include "search/search.h"

#include <stdio.h>
#include <string.h>

int test_main(struct cli_args *a)
{
	struct explore_summary sum = {0};
	char err[4096];
	int rc;

	if (a->noperands != 0 || !a->program || !a->program[0])
		return cli_usage_error(a->command, "expected -- PROGRAM [ARGS...]");
	if (!a->eo.max_runs && !a->eo.max_ms)
		a->eo.max_runs = 100;
	a->eo.progress = !a->quiet;
	a->eo.command = a->command; /* "explore" too, for `cctrace explore -- PROG` */
	if (explore_open_outputs(a) < 0) {
		explore_close_outputs(a);
		return EXIT_ERROR;
	}
	if (search_test(a->program, &a->opt, &a->eo, &a->to, &sum, err, sizeof(err)) < 0) {
		fprintf(stderr, "cctrace %s: error: %s\n", a->command, err);
		explore_close_outputs(a);
		/* a Ctrl-C during the profile: 130, as anywhere else */
		return engine_stop_signal() ? 128 + engine_stop_signal() : EXIT_ERROR;
	}
	rc = explore_exit_code(a, &sum);
	explore_close_outputs(a);
	return rc;
}
