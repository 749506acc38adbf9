/*
 * minimize.c: the strengthen/weaken loop of CONCURRIT (000, section 2.4),
 * automated.
 *
 * A found schedule is exact but long: every step the search took is in it.
 * Minimising drops `run`/`step`/`next`/`finish` lines one at a time, last
 * first, and keeps a drop when the shorter schedule still reproduces the
 * bug in every one of R replays; it repeats until no single line can go.
 * A dropped step lets its thread go earlier, free to race the others, so
 * the replays end the schedule three ways in turn: every thread released
 * at once, and the bound ones run one at a time to their end in binding
 * order and in reverse.  A bug that only some orders show keeps its step.
 * Dropping a run of one thread between two of another also removes a
 * preemption, so fewer steps and fewer preemptions come together.  The
 * original is kept beside it as bug-N.full.sched.
 */
#include "search/search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRAIN_MS 10000 /* the engine's default wait timeout */

struct lines {
	char **v;
	int n;
};

static int read_lines(const char *path, struct lines *l)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, **grown;
	size_t cap = 0;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		grown = realloc(l->v, sizeof(*grown) * (size_t)(l->n + 1));
		if (!grown)
			break;
		l->v = grown;
		l->v[l->n++] = strdup(line);
	}
	free(line);
	fclose(f);
	return 0;
}

static void free_lines(struct lines *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int write_lines(const char *path, const struct lines *l, int skip)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f)
		return -1;
	for (i = 0; i < l->n; i++)
		if (i != skip && l->v[i])
			fputs(l->v[i], f);
	return fclose(f);
}

static bool droppable(const char *line)
{
	return line && (strncmp(line, "run ", 4) == 0 || strncmp(line, "step ", 5) == 0 ||
			strncmp(line, "next ", 5) == 0 || strncmp(line, "finish ", 7) == 0);
}

/*
 * What kind of bug a report describes, so that a shorter schedule counts
 * only if it shows the same one (an assert that fails earlier for another
 * reason does not): the "cctrace: bug:" line without thread ids and
 * without the schedule position of an assert.
 */
static void signature(const char *report, char *sig, size_t len)
{
	const char *line = report ? strstr(report, "cctrace: bug: ") : NULL;
	const char *end, *p;
	size_t n = 0;

	sig[0] = 0;
	if (!line)
		return;
	end = strchr(line, '\n');
	if (!end)
		end = line + strlen(line);
	for (p = line; p < end && n + 1 < len; p++) {
		const char *skip = NULL;

		if (strncmp(p, "(tid ", 5) == 0)
			skip = strchr(p, ')');
		else if (strncmp(p, "failed at ", 10) == 0)
			skip = strstr(p, ": assert ");
		if (skip && skip < end) {
			p = skip;
			continue;
		}
		sig[n++] = *p;
	}
	sig[n] = 0;
}

/* Does the schedule at path give the bug `want` (a signature) in each of
 * `replays` runs?  With want empty, it is set from the first run. */
static bool reproduces(const char *path, char *const argv[], const struct engine_options *opt,
		       int replays, char *want, size_t wantlen)
{
	struct engine_options quiet = *opt;
	char err[4096], sig[512];
	bool all = true;
	int i;

	quiet.trace = NULL;
	quiet.trace_json = NULL;
	quiet.brief = true;
	if (!quiet.drain_ms) /* a dropped step may leave it deadlocked for real */
		quiet.drain_ms = opt->timeout_ms > 0 ? opt->timeout_ms : DRAIN_MS;
	for (i = 0; i < replays && all; i++) {
		struct policy *pol = engine_load(path, argv[0], 0, err, sizeof(err));
		char *buf = NULL;
		size_t len = 0;

		/* A shorter schedule lets threads go earlier, where they may
		 * race: it must give the bug however the end plays out. */
		quiet.end_order = i % 3 == 0 ? opt->end_order : i % 3 == 1 ? 1 : -1;
		quiet.report = open_memstream(&buf, &len);
		all = pol && quiet.report && engine_run_program(pol, argv, &quiet) == OUTCOME_BUG;
		if (quiet.report)
			fclose(quiet.report);
		signature(buf, sig, sizeof(sig));
		if (!want[0])
			snprintf(want, wantlen, "%s", sig);
		all = all && strcmp(sig, want) == 0;
		free(buf);
		engine_free(pol);
	}
	return all;
}

int search_minimize(const char *path, char *const argv[], const struct engine_options *opt,
		    int replays, int *removed)
{
	struct lines l = {0};
	char trial[4096], full[4096], want[512] = "";
	bool progress = true;
	int i;

	*removed = 0;
	if (read_lines(path, &l) < 0)
		return -1;
	snprintf(full, sizeof(full), "%.*s.full.sched", (int)(strlen(path) - 6), path);
	write_lines(full, &l, -1);
	snprintf(trial, sizeof(trial), "%s.trial", path);
	if (!reproduces(path, argv, opt, 1, want, sizeof(want)))
		progress = false; /* not reproducible as found: leave it alone */
	while (progress) {
		progress = false;
		for (i = l.n - 1; i >= 0; i--) {
			if (!droppable(l.v[i]) || write_lines(trial, &l, i) < 0)
				continue;
			if (!reproduces(trial, argv, opt, replays, want, sizeof(want)))
				continue;
			free(l.v[i]);
			l.v[i] = NULL;
			(*removed)++;
			progress = true;
		}
	}
	remove(trial);
	i = write_lines(path, &l, -1);
	free_lines(&l);
	return i;
}
