/*
 * duration.c: one reading of durations for every subcommand.
 */
#include "cli/duration.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int parse_duration(const char *text, int64_t *ms)
{
	static const struct {
		const char *unit;
		int64_t ms;
	} units[] = {{"ms", 1}, {"s", 1000}, {"", 1000}, {"m", 60000}, {"h", 3600000}};
	char *end;
	long v;
	size_t i;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || v < 0 || end == text)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			*ms = (int64_t)v * units[i].ms;
			return 0;
		}
	}
	return -1;
}
