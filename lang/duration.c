/*
 * duration.c: the one grammar of durations, for the schedule language
 * (`timeout 1.5s`, read by the lexer) and for the command line (--timeout,
 * --time, which call it through policy.h).
 *
 *   duration := DIGITS [ '.' DIGITS ] UNIT      UNIT := ms | s | m | h
 *
 * The language owns the grammar, so it lives in policy/ and cli/ calls down
 * to it.  Values are whole milliseconds: a fraction is exact or refused
 * (`0.5ms` and `0.0001s` are errors rather than silently rounded), and
 * anything past INT64_MAX ms is refused rather than wrapped.  The caller
 * chooses what a number without a unit means: the command line reads it as
 * seconds, the language never passes one here (a bare number is an integer).
 */
#include "lang/lang.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static int64_t unit_scale(const char *unit, size_t len)
{
	static const struct {
		const char *name;
		int64_t ms;
	} units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == len && !memcmp(unit, units[i].name, len))
			return units[i].ms;
	return 0;
}

/* Adds the fraction digits [s, end) of one unit of SCALE ms to *ms; false if
 * they name a part of a millisecond. */
static bool add_fraction(const char *s, const char *end, int64_t scale, int64_t *ms)
{
	for (; s < end; s++) {
		int d = *s - '0';
		if (scale % 10 != 0) {
			if (d != 0)
				return false;
			continue;
		}
		scale /= 10;
		*ms += d * scale; /* cannot overflow: below one more unit */
	}
	return true;
}

int lang_parse_duration(const char *text, size_t len, const char *bare_unit, int64_t *ms, char *err,
			size_t errlen)
{
	const char *s = text, *end = text + len, *frac = NULL, *frac_end;
	int64_t v = 0, scale;

	if (s == end || !isdigit((unsigned char)*s))
		goto bad;
	for (; s < end && isdigit((unsigned char)*s); s++) {
		if (v > (INT64_MAX - (*s - '0')) / 10)
			goto too_large;
		v = v * 10 + (*s - '0');
	}
	frac_end = s;
	if (s < end && *s == '.') {
		frac = ++s;
		while (s < end && isdigit((unsigned char)*s))
			s++;
		frac_end = s;
		if (frac == frac_end)
			goto bad;
	}
	scale = s == end && bare_unit ? unit_scale(bare_unit, strlen(bare_unit))
				      : unit_scale(s, (size_t)(end - s));
	if (scale == 0)
		goto bad;
	if (v > INT64_MAX / scale - 1)
		goto too_large;
	*ms = v * scale;
	if (frac && !add_fraction(frac, frac_end, scale, ms)) {
		snprintf(err, errlen, "bad duration '%.*s': finer than a millisecond", (int)len,
			 text);
		return -1;
	}
	return 0;
bad:
	snprintf(err, errlen, "bad duration '%.*s': use ms, s, m or h", (int)len, text);
	return -1;
too_large:
	snprintf(err, errlen, "duration too large");
	return -1;
}
