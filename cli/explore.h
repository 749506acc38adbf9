/*
 * explore.h: the `cctrace explore` subcommand.
 */
#ifndef CCTRACE_CLI_EXPLORE_H
#define CCTRACE_CLI_EXPLORE_H

struct cli_args;

/* The options are parsed (cli_parse); returns the process exit code. */
int explore_main(struct cli_args *a);
/* The exit code of a search that ran (explore, test), after its summary
 * line on stderr and its --junit report. */
struct explore_summary;
int explore_exit_code(const struct cli_args *a, const struct explore_summary *sum);
/* The outputs a search writes besides its bug files (--json, --json-file,
 * --schedules, --trace-json), explore's and test's alike: -1 when one
 * cannot be opened (said); closed by explore_close_outputs. */
int explore_open_outputs(struct cli_args *a);
void explore_close_outputs(struct cli_args *a);
/* `cctrace test -- PROG` (cli/test.c). */
int test_main(struct cli_args *a);

#endif
