/*
 * options.h: the one option table of the cctrace command line.
 *
 * Contract.  Every subcommand that takes options (run, attach, explore,
 * shell, and the ones to come: test, typestate) parses them with
 * cli_parse() from the one table in options.c, where each option has its
 * long name, short form, argument, the subcommands that accept it and its
 * help text; `cctrace CMD --help` is generated from the same rows, so the
 * help cannot drift from what is parsed.  Conventions, as gdb, strace and
 * rr have them:
 *   - options go anywhere before `--`; what follows `--` is the program's;
 *   - a mistake prints "cctrace CMD: message" and "Try 'cctrace CMD
 *     --help' for more information." on stderr, and exits EXIT_ERROR (3);
 *   - `-` as a FILE argument means stdout (cli_open_output).
 * A value is checked as it is parsed (durations, outcomes, numbers), so a
 * bad one is refused before anything runs.
 */
#ifndef CCTRACE_CLI_OPTIONS_H
#define CCTRACE_CLI_OPTIONS_H

#include "engine/engine.h"
#include "search/search.h"

#include <stdbool.h>
#include <stdio.h>

#ifndef CCTRACE_VERSION
#define CCTRACE_VERSION "0.1.0"
#endif

/* The subcommands, as bits of the table's `commands` column. */
enum cli_command {
	CLI_RUN = 1 << 0,
	CLI_ATTACH = 1 << 1,
	CLI_EXPLORE = 1 << 2,
	CLI_SHELL = 1 << 3,
	CLI_TEST = 1 << 4,	/* reserved: the schedule-free test command */
	CLI_TYPESTATE = 1 << 5, /* typestate mode (2ndStrike) */
	CLI_WATCHPOINTS = 1 << 6,
};

/* Everything an option can set; each command reads the part it needs. */
struct cli_args {
	const char *command; /* "run", for messages */
	enum cli_command bit;
	struct engine_options opt;
	struct explore_options eo;
	struct test_options to; /* test: --points, --max-steps */
	int expect;		/* an outcome, or -1 */
	const char *trace_json_path;
	const char *junit_path;	    /* --junit FILE */
	const char *chrome_path;    /* --trace-chrome FILE */
	const char *out_path;	    /* run, attach: -o FILE; explore: -o DIR */
	const char *schedules_path; /* explore --schedules */
	bool json;		    /* explore --json */
	const char *json_path;	    /* explore --json-file */
	bool quiet;		    /* -q */
	bool exit_on_error;	    /* shell --exit-on-error */
	bool help;		    /* -h: printed by cli_parse */
	/* typestate */
	const char *models;    /* --model: built-in names or a FILE.ts */
	char *models_joined;   /* models, when --model came more than once */
	bool ignore_history;   /* --ignore-history */
	bool lock_order;       /* --lock-order */
	long instances;	       /* --instances; 0: the default */
	const char *watch_why; /* why software watchpoints, NULL if hardware */
	/* operands before `--`, and the program after it (NULL: no `--`) */
	char **operands;
	int noperands;
	char **program;
};

/* Defaults for cmd, then the options of argv[1..argc) (argv[0] is the
 * command's name).  0: parsed; 1: --help was printed (exit 0); -1: a
 * mistake was reported (exit EXIT_ERROR). */
int cli_parse(const char *cmd, int argc, char **argv, struct cli_args *a);
/* The usage line and options of cmd, from the table. */
void cli_help(const char *cmd, FILE *f);
/* "cctrace CMD: MESSAGE" and the "Try" line on stderr; EXIT_ERROR. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* path for writing, "-" being stdout; NULL after saying why. */
FILE *cli_open_output(const char *cmd, const char *path);
/* Before anything runs, every file the command will write (-o FILE,
 * --trace-json, --trace-chrome, --junit, --json-file, --schedules): none
 * may be one of its inputs (the schedule, the program) or another output,
 * and --junit's, written at the end, must be writable now.  -1 after
 * saying why. */
int cli_check_outputs(const struct cli_args *a);
/* Close what cli_open_output opened (stdout is flushed, not closed). */
void cli_close_output(FILE *f);
/* An error before anything ran: a schedule's diagnostic (FILE:LINE:COL:
 * error: ..., its line, a caret) as a compiler prints it, anything else
 * as "cctrace: error: ...". */
void cli_print_error(const char *err);
/* The commands, for `cctrace help` and the global usage. */
void cli_global_help(FILE *f);
/* Does the table know cmd (run, attach, explore, shell)? */
bool cli_is_command(const char *cmd);
/* Of the n names name_at(i) gives, the one nearest word, within two
 * edits; NULL if none (a command's, the shell's commands). */
const char *cli_nearest_name(const char *word, size_t n, const char *(*name_at)(size_t i));
/* "unknown command 'rnu'; did you mean 'run'?" (or an option before any
 * command) and the "Try" line; EXIT_ERROR. */
int cli_unknown_command(const char *word);

#endif
