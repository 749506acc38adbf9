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
 * order and in reverse.  A bug that only some orders show keeps its step,
 * and so does one the found schedule's steps made (a crash in a `run`):
 * it must come before the schedule's end, whose race few replays sample.
 * Dropping a run of one thread between two of another also removes a
 * preemption, so fewer steps and fewer preemptions come together.
 * Before the line-by-line passes, chunks (halves, quarters, ...) are tried
 * at once, as delta debugging does.  A `thread T = ...` binding goes too
 * once no line uses T: a binding pins the steps before it (its thread must
 * exist by then); the bindings left move down to their first use where
 * the replays allow, and at the end consecutive steps that are one
 * statement merge into one `repeat N`.  The original is kept beside it as
 * bug-N.full.sched.
 */
#include "search/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRAIN_MS 10000 /* the engine's default wait timeout */
/* A trial's step, and its program let go at the schedule's end, get
 * HANG_TIMES the first replay's time (at least HANG_MIN_MS, at most
 * DRAIN_MS) before they count as hung: a dropped step may leave the
 * program hung for real (pbzip2's consumers poll for ever on the queue
 * main freed), and each such trial waited 10 s. */
#define HANG_TIMES  10
#define HANG_MIN_MS 1000

/* What every trial replays with, and until when trials may run. */
struct trials {
	const char *path; /* the trial schedule */
	char *const *argv;
	const struct engine_options *opt;
	int replays;
	char want[512];		      /* the bug's signature, from the first replay */
	bool want_before_release;     /* and owed nothing to the end's race */
	int64_t deadline_ms;	      /* 0: none */
	int64_t hang_ms;	      /* a trial's waits' limit; 0: the default, 10 s */
	struct symbol_cache *symbols; /* every replay's: one program, one layout */
	bool cut_short;		      /* a trial was refused: the deadline passed, or Ctrl-C */
};

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

/* The lines but those of [skip_lo, skip_hi) that drop() accepts. */
static int write_lines_but(const char *path, const struct lines *l, int skip_lo, int skip_hi,
			   bool (*drop)(const struct lines *l, int i))
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f)
		return -1;
	for (i = 0; i < l->n; i++)
		if (l->v[i] && !(i >= skip_lo && i < skip_hi && drop(l, i)))
			fputs(l->v[i], f);
	return fclose(f);
}

static bool any_line(const struct lines *l, int i)
{
	(void)l;
	(void)i;
	return true;
}

static int write_lines(const char *path, const struct lines *l, int skip)
{
	return write_lines_but(path, l, skip, skip + 1, any_line);
}

static bool is_step(const char *line)
{
	return line && (strncmp(line, "run ", 4) == 0 || strncmp(line, "step ", 5) == 0 ||
			strncmp(line, "next ", 5) == 0 || strncmp(line, "finish ", 7) == 0);
}

/* `thread T = pM.tK`: one name bound to a thread by its creation name. */
static bool simple_binding(const char *line, const char **name, const char **eq)
{
	if (!line || strncmp(line, "thread ", 7) != 0)
		return false;
	*name = line + 7;
	*eq = strstr(*name, " = ");
	return *eq && !memchr(*name, ',', (size_t)(*eq - *name)) && !strstr(*eq, "wait") &&
	       !strstr(*eq, "choose");
}

/* Does a line other than skip name the variable var as a word? */
static bool var_used(const struct lines *l, int skip, const char *var, size_t len)
{
	int i;

	for (i = 0; i < l->n; i++) {
		const char *at = l->v[i];

		if (i == skip || !at || at[0] == '#')
			continue;
		while ((at = strstr(at, var)) != NULL) {
			bool starts = at == l->v[i] || !(isalnum((unsigned char)at[-1]) ||
							 at[-1] == '_' || at[-1] == '.');
			bool ends = !(isalnum((unsigned char)at[len]) || at[len] == '_');

			if (starts && ends && strncmp(at, var, len) == 0)
				return true;
			at += len;
		}
	}
	return false;
}

/* One of the bindings the engine writes after `thread A, B = wait 2
 * distinct P` (choose.c, record_pins), which give each name the thread
 * the found run gave it: without them, which thread is A is the race of
 * which reached P first, and a replay that few trials test may lose it. */
static bool wait_pin(const struct lines *l, int i)
{
	const char *name, *eq, *wait, *wait_eq, *at;
	size_t len;
	int k = i;

	if (!simple_binding(l->v[i], &name, &eq))
		return false;
	len = (size_t)(eq - name);
	while (k > 0 && simple_binding(l->v[k - 1], &at, &wait_eq))
		k--;
	wait = k > 0 ? l->v[k - 1] : NULL;
	if (!wait || strncmp(wait, "thread ", 7) != 0 || !(wait_eq = strstr(wait, " = wait ")))
		return false;
	for (at = wait + 7; at + len <= wait_eq; at++) /* the wait's names, as words */
		if (strncmp(at, name, len) == 0 && (at[-1] == ' ' || at[-1] == ',') &&
		    (at[len] == ',' || at[len] == ' '))
			return true;
	return false;
}

/* A step, or a binding no other line uses: once a thread's steps are
 * gone, its binding only pins when the thread must exist. */
static bool droppable(const struct lines *l, int i)
{
	const char *name, *eq;

	if (is_step(l->v[i]))
		return true;
	return simple_binding(l->v[i], &name, &eq) && !var_used(l, i, name, (size_t)(eq - name)) &&
	       !wait_pin(l, i);
}

/* In a chunk dropped at once, every step and binding may go (a binding
 * still used makes the trial fail to load, at no cost), but a wait's
 * pins, which a few lucky replays do not miss. */
static bool chunk_droppable(const struct lines *l, int i)
{
	const char *name, *eq;

	return is_step(l->v[i]) || (simple_binding(l->v[i], &name, &eq) && !wait_pin(l, i));
}

/* A step line as (count, statement, comment): "repeat 3 { S }  # c" or
 * "S  # c"; false for anything else. */
static bool split_step(const char *line, long *count, char *stmt, size_t len, const char **note)
{
	int used = 0;
	const char *end;

	if (!line || (strncmp(line, "run ", 4) != 0 && strncmp(line, "repeat ", 7) != 0))
		return false;
	*note = strstr(line, "  #");
	if (strncmp(line, "repeat ", 7) == 0) {
		if (sscanf(line, "repeat %ld { %n", count, &used) != 1 || used == 0)
			return false;
		end = strstr(line + used, " }");
	} else {
		*count = 1;
		end = *note ? *note : line + strcspn(line, "\n");
	}
	if (!end || (size_t)(end - (line + used)) >= len)
		return false;
	snprintf(stmt, len, "%.*s", (int)(end - (line + used)), line + used);
	return strncmp(stmt, "run ", 4) == 0;
}

/* Consecutive steps that are one statement, N and M times, become one
 * `repeat N+M { ... }`: the same stops, one line (minimisation leaves
 * them side by side once the other threads' steps between them go). */
static void merge_repeats(struct lines *l)
{
	char a[512], b[512], *merged;
	const char *na, *nb, *note;
	long ca, cb;
	int i, prev = -1;

	for (i = 0; i < l->n; i++) {
		if (!l->v[i])
			continue;
		if (prev >= 0 && split_step(l->v[prev], &ca, a, sizeof(a), &na) &&
		    split_step(l->v[i], &cb, b, sizeof(b), &nb) && strcmp(a, b) == 0) {
			note = nb ? nb : na ? na : "\n";
			if (asprintf(&merged, "repeat %ld { %s }%s", ca + cb, a, note) >= 0) {
				free(l->v[prev]);
				l->v[prev] = NULL;
				free(l->v[i]);
				l->v[i] = merged;
			}
		}
		prev = i;
	}
}

/* A failed assert's values ("  balance = 80"), after its line: the same
 * assert failing with other values (before any step of the race) is
 * another bug. */
static size_t assert_values(const char *from, char *sig, size_t n, size_t len)
{
	const char *line = from, *end;

	while (strncmp(line, "\n  ", 3) == 0 && (end = strchr(line + 1, '\n')) &&
	       memmem(line, (size_t)(end - line), " = ", 3)) {
		size_t take = (size_t)(end - line);

		if (n + take + 1 > len)
			break;
		memcpy(sig + n, line, take);
		n += take;
		line = end;
	}
	sig[n] = 0;
	return n;
}

/*
 * What kind of bug a report describes, so that a shorter schedule counts
 * only if it shows the same one (an assert that fails earlier for another
 * reason, or with other values, does not): the "cctrace: bug:" line
 * without thread ids and without the schedule position of an assert, and
 * an assert's values.
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
	if (memmem(line, (size_t)(end - line), ": assert ", 9) && *end)
		assert_values(end, sig, n, len);
}

/* No replay starts after the deadline or Ctrl-C: a trial cut short does
 * not reproduce, and what was dropped before it stays dropped, as each
 * drop reproduced in every replay. */
static bool out_of_time(struct trials *t)
{
	if ((t->deadline_ms && engine_now_ms() >= t->deadline_ms) || engine_stop_signal())
		t->cut_short = true;
	return t->cut_short;
}

/* Does the schedule at path give the bug t->want (a signature) in each of
 * `replays` runs?  With it empty, it is set from the first run. */
static bool reproduces_as(struct trials *t, const char *path, int replays)
{
	const struct engine_options *opt = t->opt;
	struct engine_options quiet = *opt;
	char err[4096], sig[512];
	struct policy *pol;
	bool all = true, before_release = false;
	int i;

	quiet.trace = NULL;
	quiet.trace_json = NULL;
	quiet.brief = true;
	quiet.quiet_program = true; /* its output was shown once, by the search */
	quiet.symbol_cache = t->symbols;
	quiet.before_release = &before_release;
	/* a dropped step may leave it hung for real, in a wait or after the
	 * schedule: neither waits longer than the bug took to show, ten times */
	if (!quiet.timeout_ms)
		quiet.timeout_ms = t->hang_ms;
	if (!quiet.drain_ms)
		quiet.drain_ms = quiet.timeout_ms ? quiet.timeout_ms : DRAIN_MS;
	/* loaded (and its program's symbols read to check it) once for all
	 * its replays, as `cctrace run` runs one schedule again and again */
	pol = engine_load_cached(path, t->argv[0], t->symbols, err, sizeof(err));
	for (i = 0; i < replays && all; i++) {
		char *buf = NULL;
		size_t len = 0;

		if (out_of_time(t)) {
			all = false;
			break;
		}
		/* A shorter schedule lets threads go earlier, where they may
		 * race: it must give the bug however the end plays out. */
		quiet.end_order = i % 3 == 0 ? opt->end_order : i % 3 == 1 ? 1 : -1;
		quiet.report = open_memstream(&buf, &len);
		all =
		    pol && quiet.report && engine_run_program(pol, t->argv, &quiet) == OUTCOME_BUG;
		if (quiet.report)
			fclose(quiet.report);
		signature(buf, sig, sizeof(sig));
		if (!t->want[0]) {
			snprintf(t->want, sizeof(t->want), "%s", sig);
			t->want_before_release = before_release;
		}
		/* A bug the found schedule's steps made is not left to the
		 * race of the threads its end lets go, which few replays
		 * sample (bbuf: either worker could take the NULL). */
		all =
		    all && strcmp(sig, t->want) == 0 && (before_release || !t->want_before_release);
		free(buf);
	}
	engine_free(pol);
	return all;
}

/* The schedule as found gives the bug once; its time sets hang_ms. */
static bool reproduces_once(struct trials *t, const char *path)
{
	int64_t t0 = engine_now_ms();
	bool ok = reproduces_as(t, path, 1);
	int64_t hang = (engine_now_ms() - t0) * HANG_TIMES;

	t->hang_ms = hang < HANG_MIN_MS ? HANG_MIN_MS : hang > DRAIN_MS ? DRAIN_MS : hang;
	return ok;
}

/* Does the trial schedule still give the bug, R of R times? */
static bool reproduces(struct trials *t)
{
	return reproduces_as(t, t->path, t->replays);
}

/* Does dropping the chunk-droppable lines of [lo, hi) keep the bug?  Then
 * they are gone; how many. */
static int drop_chunk(struct lines *l, int lo, int hi, struct trials *t)
{
	int i, n = 0;

	for (i = lo; i < hi; i++)
		n += l->v[i] && chunk_droppable(l, i);
	if (n < 2 || write_lines_but(t->path, l, lo, hi, chunk_droppable) < 0 || !reproduces(t))
		return 0;
	for (i = lo; i < hi; i++)
		if (l->v[i] && chunk_droppable(l, i)) {
			free(l->v[i]);
			l->v[i] = NULL;
		}
	return n;
}

/* Delta debugging's coarse passes: halves, quarters, ... of the schedule
 * dropped at once, last first.  A bug that needs few steps (fsbench's
 * shows in every schedule) loses most of them in a few trials instead of
 * one trial a line. */
static int drop_chunks(struct lines *l, struct trials *t)
{
	int size, hi, removed = 0;

	for (size = l->n / 2; size >= 4; size /= 2)
		for (hi = l->n; hi > 0; hi -= size)
			removed += drop_chunk(l, hi - size > 0 ? hi - size : 0, hi, t);
	return removed;
}

/* Move line i to just before line j (i < j), or back (undo). */
static void move_line(struct lines *l, int i, int j, bool undo)
{
	char *line;
	int k;

	if (!undo) {
		line = l->v[i];
		for (k = i; k < j - 1; k++)
			l->v[k] = l->v[k + 1];
		l->v[j - 1] = line;
	} else {
		line = l->v[j - 1];
		for (k = j - 1; k > i; k--)
			l->v[k] = l->v[k - 1];
		l->v[i] = line;
	}
}

/* The first line after i that names var, or -1. */
static int first_use(const struct lines *l, int i, const char *var, size_t len)
{
	struct lines one;
	int j;

	for (j = i + 1; j < l->n; j++) {
		one = (struct lines){.v = &l->v[j], .n = 1};
		if (l->v[j] && var_used(&one, -1, var, len))
			return j;
	}
	return -1;
}

/* Each binding moved down to just before the first line that uses its
 * variable, where the replays allow: the steps it separated can then
 * merge into one `repeat` (wronglock_bad: main's creations). */
static void sink_bindings(struct lines *l, struct trials *t)
{
	const char *name, *eq;
	int i, j, k, steps;

	for (i = l->n - 1; i >= 0; i--) {
		if (!simple_binding(l->v[i], &name, &eq))
			continue;
		j = first_use(l, i, name, (size_t)(eq - name));
		for (k = i + 1, steps = 0; j > 0 && k < j; k++)
			steps += l->v[k] && is_step(l->v[k]);
		if (steps == 0)
			continue;
		move_line(l, i, j, false);
		if (write_lines(t->path, l, -1) < 0 || !reproduces(t))
			move_line(l, i, j, true);
	}
}

int search_minimize(const char *path, char *const argv[], const struct engine_options *opt,
		    const struct minimize_limits *lim, struct minimize_result *res)
{
	struct lines l = {0};
	char trial[4096], full[4096];
	struct trials t = {.path = trial,
			   .argv = argv,
			   .opt = opt,
			   .replays = lim->replays,
			   .deadline_ms = lim->ms > 0 ? engine_now_ms() + lim->ms : 0};
	bool progress = true;
	int i;

	*res = (struct minimize_result){0};
	if (read_lines(path, &l) < 0)
		return -1;
	t.symbols = engine_symbol_cache_new(); /* NULL: each replay opens its own */
	snprintf(full, sizeof(full), "%.*s.full.sched", (int)(strlen(path) - 6), path);
	write_lines(full, &l, -1);
	snprintf(trial, sizeof(trial), "%s.trial", path);
	if (!reproduces_once(&t, path))
		progress = false; /* not reproducible as found: leave it alone */
	else
		res->removed += drop_chunks(&l, &t);
	while (progress && !t.cut_short) {
		progress = false;
		for (i = l.n - 1; i >= 0; i--) {
			if (!l.v[i] || !droppable(&l, i) || write_lines(trial, &l, i) < 0)
				continue;
			if (!reproduces(&t))
				continue;
			free(l.v[i]);
			l.v[i] = NULL;
			res->removed++;
			progress = true;
		}
	}
	if (res->removed > 0)
		sink_bindings(&l, &t);
	remove(trial);
	merge_repeats(&l);
	res->cut_short = t.cut_short;
	for (i = 0; i < l.n; i++)
		res->lines += l.v[i] != NULL;
	i = write_lines(path, &l, -1);
	free_lines(&l);
	engine_symbol_cache_free(t.symbols);
	return i;
}
