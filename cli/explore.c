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
#include "cli/junit.h"
#include "cli/options.h"
#include "lang/lang.h"
#include "search/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void report(const char *cmd, const struct explore_summary *sum, const char *dir)
{
	char errors[96] = "";

	if (sum->errors)
		snprintf(errors, sizeof(errors), ", %ld errors", sum->errors);
	if (sum->repeats) /* runs that showed a bug already written */
		snprintf(errors + strlen(errors), sizeof(errors) - strlen(errors),
			 ", %ld repeated a bug", sum->repeats);
	fprintf(stderr,
		"cctrace %s: %ld run%s, %ld bug%s, %ld completed, %ld infeasible, "
		"%ld unrealizable, %ld diverged%s; %s %s\n",
		cmd, sum->runs, plural_s(sum->runs), sum->bugs, plural_s(sum->bugs), sum->completed,
		sum->infeasible, sum->unrealizable, sum->diverged, errors,
		sum->bugs ? "bug-N.sched, .txt and .html in" : "output directory", dir);
}

/* Why a search without a bug ended: a budget is no proof, a space run
 * through is (as far as the strategy goes). */
static void say_why_it_ended(const struct cli_args *a, const struct explore_summary *sum)
{
	if (sum->bugs || sum->interrupted)
		return;
	if (!sum->space_left && a->noperands == 0 && a->to.points == TEST_POINTS_SHARED)
		fprintf(stderr,
			"cctrace %s: every schedule of %s over the points the profile found was "
			"run (an access no profiling run made is no point: --points all takes "
			"every access)\n",
			a->command, sum->strategy[0] ? sum->strategy : "the strategy");
	else if (!sum->space_left && a->eo.nshards > 1)
		fprintf(stderr, "cctrace %s: every schedule of %s in shard %d/%d was run%s\n",
			a->command, sum->strategy[0] ? sum->strategy : "the strategy", a->eo.shard,
			a->eo.nshards,
			sum->runs ? "" : " (it had none: the search has fewer parts)");
	else if (!sum->space_left)
		fprintf(stderr, "cctrace %s: every schedule of %s was run\n", a->command,
			sum->strategy[0] ? sum->strategy : "the strategy");
	else if (a->eo.max_runs && sum->runs >= a->eo.max_runs)
		fprintf(stderr,
			"cctrace %s: the search ended at its budget of %ld run%s (--runs), with "
			"schedules left untried\n",
			a->command, a->eo.max_runs, plural_s(a->eo.max_runs));
	else if (a->eo.max_ms)
		fprintf(stderr,
			"cctrace %s: the search ended at its time limit (--time), with schedules "
			"left untried\n",
			a->command);
}

/* Every run failed to follow the schedule, or --time ran out before the
 * first ended: nothing was explored. */
static bool nothing_explored(const char *cmd, const struct explore_summary *sum, const char *dir,
			     bool serial, long max_steps)
{
	if (!sum->interrupted && sum->runs == 0 && sum->out_of_time) {
		fprintf(stderr,
			"cctrace %s: error: --time ran out before any run ended (a run was cut "
			"short), so nothing was explored; give more time, or end each run with "
			"--driver\n",
			cmd);
		return true;
	}
	/* Without a schedule no run that reached the program's end has tested
	 * nothing: each was ended at --max-steps (an infeasible run, then), or
	 * could not go on, for the reason the last one gives (the program
	 * killed by SIGPIPE under `| head`). */
	if (serial && !sum->interrupted && sum->runs > 0 && sum->completed == 0 &&
	    sum->infeasible + sum->unrealizable + sum->errors == sum->runs) {
		report(cmd, sum, dir);
		if (sum->infeasible == sum->runs)
			fprintf(stderr,
				"cctrace %s: error: no run reached the program's end (each was "
				"ended at --max-steps, %ld scheduling points), so nothing was "
				"tested; a program that runs long between synchronisations needs "
				"a higher --max-steps, one that does not end by itself --driver "
				"to end each run\n",
				cmd, max_steps ? max_steps : ENGINE_SERIAL_MAX_STEPS);
		else
			fprintf(stderr,
				"cctrace %s: error: no run reached the program's end, so nothing "
				"was tested; the last: %s\n",
				cmd, sum->last_failure[0] ? sum->last_failure : "(no report)");
		return true;
	}
	if (sum->interrupted || sum->runs == 0 || sum->unrealizable + sum->errors < sum->runs)
		return false;
	report(cmd, sum, dir);
	fprintf(stderr,
		"cctrace %s: error: no run could follow the schedule (every one was "
		"unrealizable or an error), so nothing was explored; the last: %s\n",
		cmd, sum->last_failure[0] ? sum->last_failure : "(no report)");
	return true;
}

int explore_open_outputs(struct cli_args *a)
{
	if (cli_check_outputs(a) < 0)
		return -1;
	if (a->json) {
		a->eo.json = stdout;
		a->opt.program_stdout_to_stderr = true; /* stdout is the JSON alone */
	}
	if (a->json_path && !(a->eo.json = cli_open_output(a->command, a->json_path)))
		return -1;
	if (a->out_path)
		a->eo.out_dir = a->out_path;
	a->eo.schedule = a->noperands ? a->operands[0] : "(serial)";
	if (a->schedules_path &&
	    !(a->eo.schedules = cli_open_output(a->command, a->schedules_path)))
		return -1;
	if (a->trace_json_path &&
	    !(a->eo.trace_json = cli_open_output(a->command, a->trace_json_path)))
		return -1;
	return 0;
}

void explore_close_outputs(struct cli_args *a)
{
	cli_close_output(a->eo.schedules);
	cli_close_output(a->eo.trace_json);
	if (a->json_path)
		cli_close_output(a->eo.json);
	fflush(stdout);
}

/* The text of DIR/bug-N.EXT, malloc'd; NULL if it cannot be read. */
static char *bug_file(const char *dir, long n, const char *ext)
{
	char *path = NULL, *text = NULL;
	size_t len = 0;
	FILE *f, *mem;
	int c;

	if (asprintf(&path, "%s/bug-%ld.%s", dir, n, ext) < 0)
		return NULL;
	f = fopen(path, "r");
	mem = f ? open_memstream(&text, &len) : NULL;
	while (mem && (c = fgetc(f)) != EOF)
		fputc(c, mem);
	if (mem)
		fclose(mem);
	if (f)
		fclose(f);
	free(path);
	return text;
}

/* One test case per bug found, failed (passed with --expect bug), or one
 * for the whole search when there is none. */
static int write_junit(const struct cli_args *a, const struct explore_summary *sum)
{
	long n, ncases = sum->bugs ? sum->bugs : 1;
	struct junit_case *cases = calloc((size_t)ncases, sizeof(*cases));
	char **texts = calloc((size_t)ncases * 4, sizeof(*texts)), *suite = NULL;
	bool want_bug = a->expect == OUTCOME_BUG;
	int rc = -1;

	/* explore's suite is its schedule's; test's (explore without one)
	 * its program's */
	if (!cases || !texts ||
	    asprintf(&suite, "cctrace %s %s", a->noperands ? "explore" : "test",
		     a->noperands ? a->operands[0] : a->program[0]) < 0)
		goto out;
	for (n = 0; n < sum->bugs; n++) {
		char *report = bug_file(a->eo.out_dir, n + 1, "txt"), *at, **t = &texts[4 * n];

		t[0] = report;
		at = report ? strstr(report, "cctrace: bug: ") : NULL;
		/* the message: the report's outcome line; the text: where the
		 * schedule that replays it is, then the report */
		if (asprintf(&t[1], "bug-%ld", n + 1) < 0 ||
		    asprintf(&t[2], "%.*s", at ? (int)strcspn(at + 9, "\n") : 3,
			     at ? at + 9 : "bug") < 0 ||
		    asprintf(&t[3], "replay: %s/bug-%ld.sched\n\n%s", a->eo.out_dir, n + 1,
			     report ? report : "(the bug's report is gone)") < 0)
			goto out;
		cases[n] = (struct junit_case){
		    .name = t[1],
		    .classname = "explore",
		    .seconds = sum->ms / 1000.0 / (double)ncases,
		    .failure = want_bug ? NULL : t[2],
		    .failure_type = "bug",
		    .failure_text = t[3],
		    .system_out = want_bug ? t[3] : NULL,
		};
	}
	if (!sum->bugs)
		cases[0] = (struct junit_case){
		    .name = a->noperands ? a->operands[0] : a->program[0],
		    .classname = "explore",
		    .seconds = sum->ms / 1000.0,
		    .failure = want_bug ? "no bug found, and --expect bug" : NULL,
		    .failure_type = "completed",
		    .failure_text = sum->interrupted ? "the search was interrupted" : "",
		};
	rc = junit_write("explore", a->junit_path, suite, cases, (size_t)ncases);
out:
	if (rc < 0 && (!cases || !texts || !suite))
		fprintf(stderr, "cctrace %s: out of memory\n", a->command);
	for (n = 0; texts && n < 4 * ncases; n++)
		free(texts[n]);
	free(texts);
	free(cases);
	free(suite);
	return rc;
}

/* The exit code of a search that ran. */
static int exit_code(const struct cli_args *a, const struct explore_summary *sum)
{
	int sig = engine_stop_signal();

	/* a signal during the search's runs, or after them (minimising) */
	if (sig) {
		report(a->command, sum, a->eo.out_dir);
		fprintf(stderr, "cctrace %s: error: interrupted by %s\n", a->command,
			sigabbrev_np(sig));
		return 128 + sig;
	}
	/* no schedule: test's search (explore without one) */
	if (!sum->bugs &&
	    nothing_explored(a->command, sum, a->eo.out_dir, a->noperands == 0, a->to.max_steps))
		return EXIT_ERROR;
	report(a->command, sum, a->eo.out_dir);
	say_why_it_ended(a, sum);
	if (a->expect >= 0)
		return a->expect == (sum->bugs ? OUTCOME_BUG : OUTCOME_COMPLETED) ? 0
										  : EXIT_UNEXPECTED;
	return sum->bugs ? 1 : 0;
}

int explore_exit_code(const struct cli_args *a, const struct explore_summary *sum)
{
	int rc = exit_code(a, sum);

	if (a->junit_path && rc != EXIT_ERROR && write_junit(a, sum) < 0 && rc < 128)
		rc = EXIT_ERROR;
	return rc;
}

int explore_main(struct cli_args *a)
{
	struct explore_summary sum = {0};
	struct policy *pol = NULL;
	char err[4096];
	int rc = EXIT_ERROR;

	/* no schedule: schedule-free testing, as `cctrace test` */
	if (a->noperands == 0 && a->program && a->program[0])
		return test_main(a);
	if (a->noperands != 1 || !a->program || !a->program[0])
		return cli_usage_error("explore", "expected SCHEDULE -- PROGRAM [ARGS...]");
	if (a->to.points != TEST_POINTS_SHARED || a->to.max_steps || a->to.early_timeouts)
		return cli_usage_error(
		    "explore", "--points, --max-steps and --early-timeouts are for a search "
			       "without a schedule (cctrace test)");
	if (a->eo.strategy && search_serialized_only(a->eo.strategy))
		return cli_usage_error(
		    "explore",
		    "strategy '%s' is for a search without a schedule (cctrace "
		    "test): it bounds the reads that see another thread's write, "
		    "which only serialized runs tell",
		    a->eo.strategy);
	if (!a->eo.max_runs && a->eo.strategy &&
	    (strncmp(a->eo.strategy, "random", 6) == 0 || strncmp(a->eo.strategy, "pct", 3) == 0))
		a->eo.max_runs = 100;
	a->eo.progress = !a->quiet;
	if (explore_open_outputs(a) < 0)
		goto out;
	pol = engine_load(a->operands[0], a->program[0], 0, err, sizeof(err));
	if (!pol) {
		cli_print_error(err);
		goto out;
	}
	if (!a->quiet)
		engine_note_warnings(pol, stderr);
	if (!a->quiet)
		engine_note_watchpoints(pol, &(struct engine_options){.trace = stderr},
					a->watch_why);
	if (search_explore_jobs(pol, a->program, &a->opt, &a->eo, &sum, err, sizeof(err)) < 0)
		fprintf(stderr, "cctrace explore: error: %s\n", err);
	else
		rc = explore_exit_code(a, &sum);
out:
	engine_free(pol);
	explore_close_outputs(a);
	return rc;
}
