/*
 * duration.h: "500ms", "2s", "1m", "1h" (and a bare number of seconds) for
 * the options of every subcommand.
 */
#ifndef CCTRACE_CLI_DURATION_H
#define CCTRACE_CLI_DURATION_H

#include <stdint.h>

/* Returns 0 and sets *ms, or -1 if text is not a duration. */
int parse_duration(const char *text, int64_t *ms);

#endif
