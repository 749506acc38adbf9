/*
 * bugkind.c: telling a new bug from one already written.
 *
 * A search that keeps going after its first bug (--all), or whose jobs
 * find bugs side by side, meets the same bug again and again: random
 * reached one assertion in a third of its runs and wrote a file for each.
 * Two runs show the same bug when their reports agree, from the outcome
 * line to the first blank line (the stacks of the threads it names), once
 * what differs from run to run is blanked: thread ids ("(tid 4807)"),
 * addresses (ASLR, the heap) and the step a deadlock came at.  The outcome
 * line alone would not do: every failed assert is "received ABRT in
 * __pthread_kill_implementation", and only the stack tells which assert.
 * The set is a plain list: a search writes few bugs.  Only `cctrace test`
 * tells repeats: each of explore's runs follows the user's own schedule
 * to a choice of theirs, and each bug schedule it finds is written.
 */
#include "search/internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Past the digits at *at. */
static const char *skip_digits(const char *at, int (*is)(int))
{
	while (is((unsigned char)*at))
		at++;
	return at;
}

void search_bug_kind(const char *report, char *buf, size_t len)
{
	const char *at = report ? strstr(report, "cctrace: bug: ") : NULL;
	size_t n = 0;

	assert(len > 0);
	if (!at)
		at = "bug";
	while (*at && !(at[0] == '\n' && at[1] == '\n') && n + 8 < len) {
		if (strncmp(at, " (tid ", 6) == 0 && isdigit((unsigned char)at[6])) {
			at = skip_digits(at + 6, isdigit);
			at += *at == ')';
		} else if (strncmp(at, "step ", 5) == 0 && isdigit((unsigned char)at[5])) {
			at = skip_digits(at + 5, isdigit);
			memcpy(buf + n, "step ?", 6);
			n += 6;
		} else if (at[0] == '0' && at[1] == 'x' && isxdigit((unsigned char)at[2])) {
			at = skip_digits(at + 2, isxdigit);
			buf[n++] = '?';
		} else {
			buf[n++] = *at++;
		}
	}
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--; /* a report ends in "\n", or in "\n\n" and the trace */
	buf[n] = '\0';
}

bool search_bug_kinds_add(struct bug_kinds *set, const char *kind)
{
	size_t i;
	char **grown;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->kinds[i], kind) == 0)
			return false;
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 8;

		grown = realloc(set->kinds, cap * sizeof(*grown));
		if (!grown)
			return true; /* written again rather than lost */
		set->kinds = grown;
		set->cap = cap;
	}
	set->kinds[set->n] = strdup(kind);
	if (set->kinds[set->n])
		set->n++;
	return true;
}

void search_bug_kinds_free(struct bug_kinds *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		free(set->kinds[i]);
	free(set->kinds);
	memset(set, 0, sizeof(*set));
}
