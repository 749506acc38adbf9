/*
 * explore.h: the `cctrace explore` subcommand.
 */
#ifndef CCTRACE_CLI_EXPLORE_H
#define CCTRACE_CLI_EXPLORE_H

struct cli_args;

/* The options are parsed (cli_parse); returns the process exit code. */
int explore_main(struct cli_args *a);

#endif
