/*
 * explore.h: the `cctrace explore` subcommand.
 */
#ifndef CCTRACE_CLI_EXPLORE_H
#define CCTRACE_CLI_EXPLORE_H

int explore_main(int argc, char **argv);

#endif
