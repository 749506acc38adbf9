/*
 * typestate.h: the `cctrace typestate` subcommand (search/typestate.c).
 */
#ifndef CCTRACE_CLI_TYPESTATE_H
#define CCTRACE_CLI_TYPESTATE_H

struct cli_args;

/* The options are parsed (cli_parse); returns the process exit code. */
int typestate_main(struct cli_args *a);

#endif
