/*
 * shell.h: `cctrace shell`, the interactive stepping shell.
 *
 * The shell holds a launched or attached program under a policy session
 * and turns commands typed at a prompt (or read from a pipe, one per line)
 * into schedule statements, so that a session can be saved as a schedule
 * file and replayed with `cctrace run`.  See docs/shell.md.
 */
#ifndef CCTRACE_CLI_SHELL_H
#define CCTRACE_CLI_SHELL_H

struct cli_args;

/* The options are parsed (cli_parse); returns the process exit code. */
int shell_main(struct cli_args *a);

#endif
