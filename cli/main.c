/*
 * main.c: the cctrace command line.
 *
 *   cctrace run [OPTIONS] SCHEDULE -- PROGRAM [ARGS...]
 *   cctrace attach [OPTIONS] PID SCHEDULE      (--no-children: the pid alone)
 *   cctrace shell [OPTIONS] PID | -- PROGRAM [ARGS...]   (cli/shell.c)
 *   cctrace explore [OPTIONS] SCHEDULE -- PROGRAM [ARGS...]   (cli/explore.c)
 *   cctrace typestate [OPTIONS] -- PROGRAM [ARGS...]   (cli/typestate.c)
 *   cctrace watchpoints
 *   cctrace help [COMMAND], cctrace --version
 *
 * Subcommands are a table; every one parses its options with the one
 * option table (cli/options.c) and hands a loaded schedule to the engine.
 * The exit code is the outcome's (0 completed, 1 bug, 2 unrealizable,
 * 3 error), or with --expect, 0 when the outcome is the expected one and 4
 * when it is not.  A run that a signal cut short (Ctrl-C, SIGTERM, a
 * closed output pipe...; everything is detached or killed first) exits
 * 128 + the signal's number, as a shell reports a command the signal
 * killed: 130 for Ctrl-C, whatever --expect says, so that a script can
 * tell "interrupted" from "failed".
 */
#include "cli/explore.h"
#include "cli/junit.h"
#include "cli/options.h"
#include "cli/shell.h"
#include "cli/typestate.h"
#include "engine/engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Where the trace goes (-o, -q) and the JSON trace (--trace-json).  -q
 * with -o FILE still makes FILE, empty: a stale trace left in it would be
 * read as this run's. */
static int open_outputs(struct cli_args *a)
{
	FILE *out;

	if (cli_check_outputs(a) < 0)
		return -1;
	if (a->out_path) {
		out = cli_open_output(a->command, a->out_path);
		if (!out)
			return -1;
		if (a->quiet)
			cli_close_output(out);
		else
			a->opt.trace = out;
	}
	if (a->trace_json_path) {
		a->opt.trace_json = cli_open_output(a->command, a->trace_json_path);
		if (!a->opt.trace_json)
			return -1;
	}
	if (a->chrome_path) {
		a->opt.trace_chrome = cli_open_output(a->command, a->chrome_path);
		if (!a->opt.trace_chrome)
			return -1;
	}
	return 0;
}

static int finish(struct cli_args *a, enum engine_outcome o)
{
	int sig = engine_stop_signal();

	cli_close_output(a->opt.trace_json);
	cli_close_output(a->opt.trace_chrome);
	if (a->opt.trace != stderr)
		cli_close_output(a->opt.trace);
	if (o == OUTCOME_ERROR && sig)
		return 128 + sig;
	if (a->expect >= 0)
		return (int)o == a->expect ? 0 : EXIT_UNEXPECTED;
	return engine_outcome_exit_code(o);
}

/* --junit: the run as one test case, which passes when the outcome is the
 * expected one (completed without --expect). */
static int write_junit(const struct cli_args *a, const char *schedule, enum engine_outcome o,
		       const char *message, double seconds)
{
	enum engine_outcome want =
	    a->expect >= 0 ? (enum engine_outcome)a->expect : OUTCOME_COMPLETED;
	char *failure = NULL, *suite = NULL;
	int rc = -1;

	if (asprintf(&suite, "cctrace %s %s", a->command, schedule) < 0 ||
	    (o != want &&
	     asprintf(&failure, "expected %s, got %s: %s", engine_outcome_name(want),
		      engine_outcome_name(o), message ? message : "(no message)") < 0)) {
		fprintf(stderr, "cctrace %s: out of memory\n", a->command);
		goto out;
	}
	rc = junit_write(a->command, a->junit_path, suite,
			 &(struct junit_case){
			     .name = schedule,
			     .classname = a->command,
			     .seconds = seconds,
			     .failure = failure,
			     .failure_type = engine_outcome_name(o),
			     .failure_text = message,
			 },
			 1);
out:
	free(suite);
	free(failure);
	return rc;
}

/* The loaded schedule, run on a launched program (argv) or an attached
 * pid.  The JSON trace opens with its header; the engine ends it. */
static int run_loaded(struct cli_args *a, struct policy *pol, const char *schedule, char **argv,
		      pid_t pid)
{
	enum engine_outcome o;
	char *message = NULL;
	int64_t t0;
	int rc, junit_rc;

	if (open_outputs(a) < 0) {
		engine_free(pol);
		return finish(a, OUTCOME_ERROR);
	}
	if (a->opt.trace_json)
		engine_trace_json_header(a->opt.trace_json, &(struct engine_trace_header){
								.command = a->command,
								.schedule = schedule,
								.argv = argv,
								.pid = pid,
								.watchpoints = a->opt.watchpoints,
							    });
	if (!a->quiet)
		engine_note_warnings(pol, stderr);
	engine_note_watchpoints(pol, &a->opt, a->watch_why);
	if (a->junit_path)
		a->opt.outcome_message = &message;
	t0 = engine_now_ms();
	o = argv ? engine_run_program(pol, argv, &a->opt) : engine_run_attached(pol, pid, &a->opt);
	engine_free(pol);
	junit_rc = a->junit_path ? write_junit(a, schedule, o, message,
					       (double)(engine_now_ms() - t0) / 1000.0)
				 : 0;
	free(message);
	rc = finish(a, o);
	return junit_rc < 0 && rc < 128 ? EXIT_ERROR : rc;
}

static int cmd_run(struct cli_args *a)
{
	char err[4096];
	struct policy *pol;

	if (a->noperands != 1 || !a->program || !a->program[0])
		return cli_usage_error("run", "expected SCHEDULE -- PROGRAM [ARGS...]");
	pol = engine_load(a->operands[0], a->program[0], 0, err, sizeof(err));
	if (!pol) {
		cli_print_error(err);
		return finish(a, OUTCOME_ERROR);
	}
	return run_loaded(a, pol, a->operands[0], a->program, 0);
}

static int cmd_attach(struct cli_args *a)
{
	char err[4096], *end;
	struct policy *pol;
	long pid;

	if (a->noperands != 2 || a->program)
		return cli_usage_error("attach", "expected PID SCHEDULE");
	errno = 0;
	pid = strtol(a->operands[0], &end, 10);
	if (errno || *end || pid <= 0 || pid > 0x3fffffff)
		return cli_usage_error("attach", "'%s' is not a process id", a->operands[0]);
	pol = engine_load(a->operands[1], NULL, (pid_t)pid, err, sizeof(err));
	if (!pol) {
		cli_print_error(err);
		return finish(a, OUTCOME_ERROR);
	}
	return run_loaded(a, pol, a->operands[1], NULL, (pid_t)pid);
}

/* `cctrace watchpoints`: what --watchpoints auto chooses here, and why;
 * exit 0 where the debug registers trap, 1 where they do not (scripts,
 * such as tests/run-all, choose on it). */
static int cmd_watchpoints(struct cli_args *a)
{
	struct engine_options opt = {.watchpoints = WATCHPOINTS_AUTO};
	const char *why;
	char err[256];

	if (a->noperands || a->program)
		return cli_usage_error("watchpoints", "takes no operands");
	if (engine_resolve_watchpoints(&opt, &why, err, sizeof(err)) < 0) {
		cli_print_error(err);
		return EXIT_ERROR;
	}
	if (opt.watchpoints == WATCHPOINTS_HW) {
		printf("hw: this host's debug registers trap; read(X)/write(X) use them\n");
		return 0;
	}
	printf("sw: %s; read(X)/write(X) are found by decoding instructions\n", why);
	return 1;
}

static const struct command {
	const char *name;
	int (*fn)(struct cli_args *a);
} commands[] = {
    {"run", cmd_run},
    {"attach", cmd_attach},
    {"shell", shell_main},
    {"explore", explore_main},
    {"watchpoints", cmd_watchpoints},
    {"test", test_main},
    {"typestate", typestate_main},
};

/* `cctrace help [COMMAND]` */
static int help(int argc, char **argv)
{
	/* `help help` and `help --help` are what `help` is: the list */
	if (argc < 3 ||
	    (argc == 3 && (strcmp(argv[2], "help") == 0 || strcmp(argv[2], "--help") == 0 ||
			   strcmp(argv[2], "-h") == 0))) {
		cli_global_help(stdout);
		return 0;
	}
	if (argc > 3)
		return cli_usage_error(NULL, "help takes one command, not %d", argc - 2);
	if (!cli_is_command(argv[2]))
		return cli_unknown_command(argv[2]);
	cli_help(argv[2], stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_args a;
	size_t i;
	int rc;

	setvbuf(stderr, NULL, _IOLBF, 0);
	if (argc < 2) {
		cli_global_help(stderr);
		return EXIT_ERROR;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		cli_global_help(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("cctrace %s\n", CCTRACE_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0)
		return help(argc, argv);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		rc = cli_parse(argv[1], argc - 1, argv + 1, &a);
		if (rc != 0)
			return rc > 0 ? 0 : EXIT_ERROR;
		return commands[i].fn(&a);
	}
	return cli_unknown_command(argv[1]);
}
