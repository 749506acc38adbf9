/*
 * explore.h: the `cctrace explore` subcommand.
 */
#ifndef CCTRACE_CLI_EXPLORE_H
#define CCTRACE_CLI_EXPLORE_H

struct cli_args;

/* The options are parsed (cli_parse); returns the process exit code. */
int explore_main(struct cli_args *a);
/* The exit code of a search that ran (explore, test), after its summary
 * line on stderr. */
struct explore_summary;
int explore_exit_code(const struct cli_args *a, const struct explore_summary *sum);
/* `cctrace test -- PROG` (cli/test.c). */
int test_main(struct cli_args *a);

#endif
