/*
 * main.c: the cctrace command line.
 *
 *   cctrace run [OPTIONS] SCHEDULE -- PROGRAM [ARGS...]
 *   cctrace attach [OPTIONS] PID SCHEDULE      (--no-children: the pid alone)
 *   cctrace shell [OPTIONS] PID | -- PROGRAM [ARGS...]   (cli/shell.c)
 *   cctrace explore SCHEDULE [OPTIONS] -- PROGRAM [ARGS...]   (cli/explore.c)
 *   cctrace watchpoints
 *
 * Subcommands are a table; each parses its own operands and hands a loaded
 * schedule to policy/.  The exit code is the outcome's (0 completed, 1 bug,
 * 2 unrealizable, 3 error), or with --expect, 0 when the outcome is the
 * expected one and 4 when it is not.  A run that a signal cut short
 * (Ctrl-C, SIGTERM, a closed output pipe...; everything is detached or
 * killed first) exits 128 + the signal's number, as a shell reports a
 * command the signal killed: 130 for Ctrl-C, whatever --expect says, so
 * that a script can tell "interrupted" from "failed".
 */
#include "cli/explore.h"
#include "cli/shell.h"
#include "engine/engine.h"
#include "lang/lang.h"
#include "tracer/tracer.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cli {
	struct engine_options opt;
	int expect; /* an outcome, or -1 */
	const char *trace_json_path;
	const char *watch_why; /* why software watchpoints, NULL if hardware */
};

static void usage(FILE *f)
{
	fputs("usage: cctrace run [OPTIONS] SCHEDULE -- PROGRAM [ARGS...]\n"
	      "       cctrace attach [OPTIONS] PID SCHEDULE\n"
	      "       cctrace shell [OPTIONS] PID | -- PROGRAM [ARGS...]   (see cctrace shell -h)\n"
	      "       cctrace explore SCHEDULE [OPTIONS] -- PROGRAM [ARGS...]  (see cctrace "
	      "explore -h)\n"
	      "       cctrace watchpoints    do debug-register watchpoints trap on this host?\n"
	      "\n"
	      "Drive the threads of a program along a schedule file.\n"
	      "\n"
	      "options:\n"
	      "  --timeout DURATION   default limit of every wait (e.g. 500ms, 2s; default 10s)\n"
	      "  --expect OUTCOME     exit 0 if the outcome is OUTCOME (bug, completed,\n"
	      "                       unrealizable, error) and 4 otherwise\n"
	      "  --fail-on-exit       a non-zero exit status of the program is a bug\n"
	      "  --driver CMD         (run) a client started once the program is under control;\n"
	      "                       the run ends when it exits, non-zero being a bug\n"
	      "  --trace-json FILE    also write the trace as JSON lines to FILE\n"
	      "  -q, --quiet          no trace lines, only the outcome\n"
	      "  --no-pin             do not pin cctrace and driven threads to one CPU\n"
	      "  --no-children        (attach) the pid alone: not the processes descending\n"
	      "                       from it, and the ones it forks are let go at birth\n"
	      "  --include-stack      bare read/write also match accesses through rsp/rbp\n"
	      "  --single-step        find instruction-level events (read, write, call) by\n"
	      "                       single-stepping every instruction instead of decoding\n"
	      "                       ahead (slower; the reference the stepper is tested against)\n"
	      "  --watchpoints MODE   read(X)/write(X) by debug registers (hw), by decoding\n"
	      "                       instructions (sw), or hw where they trap on this host\n"
	      "                       (auto, the default; also $CCTRACE_WATCHPOINTS)\n"
	      "  -h, --help           this text\n"
	      "\n"
	      "exit codes: 0 completed, 1 bug, 2 unrealizable, 3 error, 4 unexpected outcome,\n"
	      "            128+N interrupted by signal N (130: Ctrl-C), after detaching\n",
	      f);
}

static int parse_options(int argc, char **argv, struct cli *c)
{
	char err[256];
	enum {
		O_TIMEOUT = 256,
		O_EXPECT,
		O_FAIL_ON_EXIT,
		O_TRACE_JSON,
		O_NO_PIN,
		O_DRIVER,
		O_INCLUDE_STACK,
		O_SINGLE_STEP,
		O_WATCHPOINTS,
		O_NO_CHILDREN,
	};
	static const struct option longopts[] = {
	    {"timeout", required_argument, NULL, O_TIMEOUT},
	    {"driver", required_argument, NULL, O_DRIVER},
	    {"expect", required_argument, NULL, O_EXPECT},
	    {"fail-on-exit", no_argument, NULL, O_FAIL_ON_EXIT},
	    {"trace-json", required_argument, NULL, O_TRACE_JSON},
	    {"quiet", no_argument, NULL, 'q'},
	    {"no-pin", no_argument, NULL, O_NO_PIN},
	    {"include-stack", no_argument, NULL, O_INCLUDE_STACK},
	    {"single-step", no_argument, NULL, O_SINGLE_STEP},
	    {"watchpoints", required_argument, NULL, O_WATCHPOINTS},
	    {"no-children", no_argument, NULL, O_NO_CHILDREN},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int ch, mode;

	while ((ch = getopt_long(argc, argv, "+qh", longopts, NULL)) != -1) {
		switch (ch) {
		case O_TIMEOUT:
			if (lang_parse_duration(optarg, strlen(optarg), "s", &c->opt.timeout_ms,
						  NULL, 0) < 0) {
				fprintf(stderr,
					"cctrace: bad --timeout '%s': use e.g. 500ms or 2s\n",
					optarg);
				return -1;
			}
			break;
		case O_EXPECT:
			c->expect = engine_outcome_parse(optarg);
			if (c->expect < 0) {
				fprintf(stderr,
					"cctrace: bad --expect '%s': use bug, completed, "
					"unrealizable or error\n",
					optarg);
				return -1;
			}
			break;
		case O_DRIVER:
			c->opt.driver = optarg;
			break;
		case O_FAIL_ON_EXIT:
			c->opt.fail_on_exit = true;
			break;
		case O_TRACE_JSON:
			c->trace_json_path = optarg;
			break;
		case 'q':
			c->opt.trace = NULL;
			break;
		case O_NO_PIN:
			c->opt.pin_cpu = false;
			break;
		case O_INCLUDE_STACK:
			c->opt.include_stack = true;
			break;
		case O_SINGLE_STEP:
			c->opt.single_step = true;
			break;
		case O_WATCHPOINTS:
			mode = engine_watchpoints_parse(optarg);
			if (mode < 0) {
				fprintf(stderr,
					"cctrace: bad --watchpoints '%s': use hw, sw or auto\n",
					optarg);
				return -1;
			}
			c->opt.watchpoints = (enum engine_watchpoints)mode;
			break;
		case O_NO_CHILDREN:
			c->opt.no_children = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (engine_resolve_watchpoints(&c->opt, &c->watch_why, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	return 0;
}

static int open_trace_json(struct cli *c)
{
	if (!c->trace_json_path)
		return 0;
	c->opt.trace_json = fopen(c->trace_json_path, "w");
	if (!c->opt.trace_json) {
		fprintf(stderr, "cctrace: cannot write %s: %s\n", c->trace_json_path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int finish(struct cli *c, enum engine_outcome o)
{
	int sig = tracer_stop_signal(false);

	if (c->opt.trace_json)
		fclose(c->opt.trace_json);
	if (o == OUTCOME_ERROR && sig)
		return 128 + sig;
	if (c->expect >= 0)
		return (int)o == c->expect ? 0 : EXIT_UNEXPECTED;
	return engine_outcome_exit_code(o);
}

static int cmd_run(int argc, char **argv, struct cli *c)
{
	char err[4096];
	struct policy *pol;
	enum engine_outcome o;

	if (argc < 3 || strcmp(argv[1], "--") != 0) {
		fprintf(stderr, "cctrace run: expected SCHEDULE -- PROGRAM [ARGS...]\n");
		return EXIT_ERROR;
	}
	if (c->opt.no_children) {
		fprintf(stderr, "cctrace run: --no-children is for attach: the processes a "
				"launched program forks are part of it and are followed\n");
		return EXIT_ERROR;
	}
	pol = engine_load(argv[0], argv[2], 0, err, sizeof(err));
	if (!pol) {
		fprintf(stderr, "%s\n", err);
		return finish(c, OUTCOME_ERROR);
	}
	if (open_trace_json(c) < 0) {
		engine_free(pol);
		return EXIT_ERROR;
	}
	engine_note_watchpoints(pol, &c->opt, c->watch_why);
	o = engine_run_program(pol, argv + 2, &c->opt);
	engine_free(pol);
	return finish(c, o);
}

static int cmd_attach(int argc, char **argv, struct cli *c)
{
	char err[4096], *end;
	struct policy *pol;
	enum engine_outcome o;
	long pid;

	if (argc != 2) {
		fprintf(stderr, "cctrace attach: expected PID SCHEDULE\n");
		return EXIT_ERROR;
	}
	errno = 0;
	pid = strtol(argv[0], &end, 10);
	if (errno || *end || pid <= 0 || pid > 0x3fffffff) {
		fprintf(stderr, "cctrace attach: '%s' is not a process id\n", argv[0]);
		return EXIT_ERROR;
	}
	pol = engine_load(argv[1], NULL, (pid_t)pid, err, sizeof(err));
	if (!pol) {
		fprintf(stderr, "%s\n", err);
		return finish(c, OUTCOME_ERROR);
	}
	if (open_trace_json(c) < 0) {
		engine_free(pol);
		return EXIT_ERROR;
	}
	engine_note_watchpoints(pol, &c->opt, c->watch_why);
	o = engine_run_attached(pol, (pid_t)pid, &c->opt);
	engine_free(pol);
	return finish(c, o);
}

/* `cctrace watchpoints`: what --watchpoints auto chooses here, and why;
 * exit 0 where the debug registers trap, 1 where they do not (scripts,
 * such as tests/run-all, choose on it). */
static int watchpoints_main(int argc, char **argv)
{
	struct engine_options opt = {.watchpoints = WATCHPOINTS_AUTO};
	const char *why;
	char err[256];

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "cctrace watchpoints: takes no operands\n");
		return EXIT_ERROR;
	}
	if (engine_resolve_watchpoints(&opt, &why, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
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
	int (*fn)(int argc, char **argv, struct cli *c);
	int (*own_main)(int argc, char **argv); /* parses its own options */
} commands[] = {
    {"run", cmd_run, NULL},
    {"attach", cmd_attach, NULL},
    {"shell", NULL, shell_main},
    {"explore", NULL, explore_main},
    {"watchpoints", NULL, watchpoints_main},
};

int main(int argc, char **argv)
{
	struct cli c = {.expect = -1};
	size_t i;

	c.opt.trace = stderr;
	c.opt.report = stderr;
	c.opt.pin_cpu = true;
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_ERROR : 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		if (commands[i].own_main)
			return commands[i].own_main(argc - 1, argv + 1);
		optind = 1;
		if (parse_options(argc - 1, argv + 1, &c) < 0)
			return EXIT_ERROR;
		return commands[i].fn(argc - 1 - optind, argv + 1 + optind, &c);
	}
	fprintf(stderr, "cctrace: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_ERROR;
}
