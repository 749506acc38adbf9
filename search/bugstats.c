/*
 * bugstats.c: bug-N.txt's (preemptions, delays, variables, interferences)
 * of the schedule that is written, not of the run that found it.
 *
 * Why.  The found run of a PCT or random search has many needless context
 * switches; minimisation drops them.  The numbers a person (or a bounded
 * strategy) cares about are the written schedule's: how many preemptions
 * it needs, how many delays a round-robin scheduler would need to reach
 * it, at how many variables it preempts, how many reads see another
 * thread's write.  They depend on which threads were enabled at each
 * step, so the schedule is replayed, not read: one serialized run
 * (engine/serial.c in describe mode, which asks after every step, says
 * where the step stopped, and leaves no spinning thread out, as `cctrace
 * run` does not) that follows the schedule's lines: line `run T
 * until P` (P passed N times with `repeat N`) chooses T until T has stopped
 * at P N times.  Every choice along the lines is counted:
 *   - a preemption: the chosen thread is not the one that ran last, which
 *     was enabled (cb's and ipb's definition);
 *   - delays: the chosen thread's place in the round-robin rotation that
 *     starts at the thread that ran last (idb's: 0 when it goes on);
 *   - variables: the distinct shared variables (serialvars.c) the thread
 *     that ran last was held at when preempted (vb's);
 *   - interferences: steps whose access reads an address another thread
 *     wrote last (interfere.c, as ib counts them), over the whole run: a
 *     bug usually shows in a read after the last line (the assert's).
 *     Each process has its own table: after a fork the same address is
 *     another copy, so a child's read counts only its own threads' writes
 *     (not what the parent wrote before the fork or after it; nor memory
 *     the processes share, MAP_SHARED, which is not told apart).
 * The lines name threads by the stable names their bindings give (`thread
 * p2t1 = p2.t1`), so a schedule of a child process's threads is followed
 * as one of the first process's.
 * After the last line the program runs on as a round-robin scheduler
 * without delays runs it (no preemption, no delay; `cctrace run` lets the
 * threads go free there, so this is one of the ways the replay may end).
 * If the replay leaves the lines (a line's thread is not enabled when its
 * turn comes), the numbers are not given, and bug-N.txt says why.
 */
#include "lang/lang.h"
#include "search/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct line {
	char **threads; /* stable names ("p1.t3") of the threads it runs */
	int nthreads;
	char where[1024]; /* "at(worker+0x1c)", "enter(F)", "exit", "blocked" */
	long count;
};

struct follow {
	struct line *lines;
	int n, cap, at;
	long left; /* arrivals at lines[at].where still to come */
	int lost;  /* the line (1-based) the replay left; 0: none */
	long preemptions, delays, interferences;
	bool *var_seen; /* [nvars] */
	int nvars;
	struct process_writes {
		long process; /* N of the threads "pN.tM" */
		struct interference seen;
	} * writes;
	int nwrites, writes_cap;
};

static void free_follow(struct follow *f)
{
	int i, j;

	for (i = 0; i < f->n; i++) {
		for (j = 0; j < f->lines[i].nthreads; j++)
			free(f->lines[i].threads[j]);
		free(f->lines[i].threads);
	}
	free(f->lines);
	free(f->var_seen);
	for (i = 0; i < f->nwrites; i++)
		interference_free(&f->writes[i].seen);
	free(f->writes);
}

/* The stable name a `thread V = p1.t3` line bound V to; V itself if none. */
static const char *bound_name(const struct stmt *body, const char *var)
{
	const struct stmt *s;

	for (s = body; s; s = s->next)
		if (s->kind == S_BIND && s->n_names == 1 && !strcmp(s->names[0], var))
			return s->target;
	return var;
}

/* `run A, B until P` (inside `repeat N`): one line. */
static int add_line(struct follow *f, const struct stmt *body, const struct stmt *run, long count)
{
	struct line *l;
	int i;

	if (vec_reserve(&f->lines, &f->cap, f->n, sizeof(*f->lines)) < 0)
		return -1;
	l = &f->lines[f->n];
	memset(l, 0, sizeof(*l));
	l->count = count;
	expr_format(run->pred, l->where, sizeof(l->where));
	l->threads = calloc((size_t)run->n_names, sizeof(*l->threads));
	if (!l->threads)
		return -1;
	f->n++;
	for (i = 0; i < run->n_names; i++) {
		l->threads[i] = strdup(bound_name(body, run->names[i]));
		if (!l->threads[i])
			return -1;
		l->nthreads++;
	}
	return 0;
}

/* The lines of a schedule the recorder wrote: bindings, `run` and
 * `repeat N { run }` at its top level, read by the schedule parser. */
static int read_lines(struct follow *f, const struct schedule *sched)
{
	const struct stmt *s;

	for (s = sched->body; s; s = s->next) {
		if (s->kind == S_RUN && add_line(f, sched->body, s, 1) < 0)
			return -1;
		if (s->kind == S_REPEAT && s->body && s->body->kind == S_RUN && !s->body->next &&
		    add_line(f, sched->body, s->body, (long)s->count) < 0)
			return -1;
	}
	return 0;
}

static bool line_runs(const struct line *l, const char *name)
{
	int i;

	for (i = 0; i < l->nthreads; i++)
		if (name && !strcmp(l->threads[i], name))
			return true;
	return false;
}

/* The step that just ended (the thread that ran last, where it stopped)
 * moves the lines on. */
static void account_step(struct follow *f, const struct engine_choice *c)
{
	const struct line *l;

	if (c->current < 0 || f->at >= f->n || f->lost)
		return;
	l = &f->lines[f->at];
	if (!line_runs(l, c->thread_names[c->current]) || !c->current_where ||
	    strcmp(c->current_where, l->where) != 0)
		return;
	if (--f->left > 0)
		return;
	if (++f->at < f->n)
		f->left = f->lines[f->at].count;
}

static int option_of(const struct engine_choice *c, int id)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->ids[i] == id)
			return i;
	return -1;
}

/* The last writers in the memory of the process of thread id (N of its
 * name "pN.tM"); NULL when out of memory. */
static struct interference *writes_of(struct follow *f, const struct engine_choice *c, int id)
{
	const char *name = c->thread_names[id];
	char *end = NULL;
	long process = name && name[0] == 'p' ? strtol(name + 1, &end, 10) : 0;
	int i;

	for (i = 0; i < f->nwrites; i++)
		if (f->writes[i].process == process)
			return &f->writes[i].seen;
	if (vec_reserve(&f->writes, &f->writes_cap, f->nwrites, sizeof(*f->writes)) < 0)
		return NULL;
	f->writes[f->nwrites] = (struct process_writes){.process = process};
	return &f->writes[f->nwrites++].seen;
}

static void count_interference(struct follow *f, const struct engine_choice *c, int k)
{
	struct interference *seen = c->access ? writes_of(f, c, c->ids[k]) : NULL;

	if (seen && interference_reads_other(seen, &c->access[k], c->ids[k]))
		f->interferences++;
	if (seen)
		interference_note(seen, &c->access[k], c->ids[k]);
}

/* Past the lines the program runs to its end as a round-robin scheduler
 * without delays would run it: no preemption, no delay. */
static int continue_round_robin(struct follow *f, const struct engine_choice *c)
{
	struct search_point p = {c->n, c->ids, c->current, c->current_var, c->access};
	int k = trace_round_robin_option(&p, 0);

	count_interference(f, c, k);
	return k;
}

static void count_choice(struct follow *f, const struct engine_choice *c, int k)
{
	struct search_point p = {c->n, c->ids, c->current, c->current_var, c->access};
	int rank;

	if (c->current >= 0 && option_of(c, c->current) >= 0 && c->ids[k] != c->current) {
		f->preemptions++;
		if (c->current_var >= 0 && c->current_var < f->nvars)
			f->var_seen[c->current_var] = true;
	}
	for (rank = 0; rank < c->n && trace_round_robin_option(&p, rank) != k; rank++)
		;
	f->delays += rank;
	count_interference(f, c, k);
}

static int follow_choose(void *ctx, const struct engine_choice *c)
{
	struct follow *f = ctx;
	int i, k = -1, cur = c->current >= 0 ? option_of(c, c->current) : -1;

	assert(c->thread_names);
	account_step(f, c);
	if (f->at >= f->n || f->lost)
		return continue_round_robin(f, c);
	if (cur >= 0 && line_runs(&f->lines[f->at], c->thread_names[c->current]))
		k = cur;
	for (i = 0; k < 0 && i < c->n; i++)
		if (line_runs(&f->lines[f->at], c->thread_names[c->ids[i]]))
			k = i;
	if (k < 0) {
		f->lost = f->at + 1;
		return continue_round_robin(f, c);
	}
	count_choice(f, c, k);
	return k;
}

/* The numbers as bug-N.txt gives them. */
static char *stats_text(const struct follow *f, const struct engine_serial *cfg,
			enum engine_outcome outcome)
{
	char *text = NULL, *names = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&names, &len);
	int i, nv = 0;

	if (!m)
		return NULL;
	for (i = 0; i < f->nvars; i++)
		if (f->var_seen[i])
			fprintf(m, "%s%s", nv++ ? ", " : " (", cfg->vars[i].name);
	fputs(nv ? ")" : "", m);
	fclose(m);
	/* the run may end within the last lines (a deadlock, a crash): the
	 * step that ends it asks nothing */
	if (f->lost)
		i = asprintf(&text,
			     "statistics: not given: replayed under serialized execution, the "
			     "schedule's step %d could not run (its thread was not enabled)\n",
			     f->lost);
	else
		i = asprintf(&text,
			     "preemptions: %ld\ndelays: %ld\nvariables: %d%s\ninterferences: "
			     "%ld\n%s",
			     f->preemptions, f->delays, nv, names, f->interferences,
			     outcome == OUTCOME_BUG ? ""
						    : "(the replay that counted these did not end "
						      "in the bug)\n");
	free(names);
	return i < 0 ? NULL : text;
}

/* Insert text into the file at path before its line starting with mark
 * (at its end if none). */
static void insert_before(const char *path, const char *mark, const char *text)
{
	FILE *f = fopen(path, "r");
	char *old = NULL, *at;
	size_t cap = 0, len = 0;
	ssize_t got;

	if (!f)
		return;
	while ((got = getdelim(&old, &cap, '\0', f)) > 0)
		len += (size_t)got;
	fclose(f);
	if (!old)
		return;
	at = strstr(old, mark);
	if (!at)
		at = old + strlen(old);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%.*s%s%s", (int)(at - old), old, text, at);
		fclose(f);
	}
	free(old);
}

void search_bug_stats(struct policy *pol, char *const argv[], const struct engine_options *opt,
		      const struct explore_options *eo, long n)
{
	struct follow f = {.nvars = (int)eo->serial->nvars};
	/* the search's own: the spin points and loops this replay finds grow
	 * its arrays, as a run of the search would (a copy's would be freed
	 * under it); the three settings of a replay are put back after */
	struct engine_serial *cfg = eo->serial;
	bool describe = cfg->describe, profile = cfg->profile;
	long *preemptions_out = cfg->preemptions_out;
	struct engine_options quiet = *opt;
	struct run_hooks hooks = {.choose = follow_choose, .ctx = &f, .serial = cfg};
	struct run_result res = {0};
	char path[4096], err[1024], *text = NULL;
	FILE *null = fopen("/dev/null", "w");
	struct schedule *sched;
	int rc;

	cfg->describe = true;
	cfg->profile = false;
	cfg->preemptions_out = NULL;
	snprintf(path, sizeof(path), "%s/bug-%ld.sched", eo->out_dir, n);
	sched = schedule_load(path, engine_atoms(), err, sizeof(err));
	f.var_seen = calloc((size_t)f.nvars + 1, sizeof(*f.var_seen));
	if (!sched || !null || !f.var_seen || read_lines(&f, sched) < 0 || f.n == 0)
		goto out;
	f.left = f.lines[0].count;
	quiet.trace = NULL;
	quiet.trace_json = NULL;
	quiet.report = null;
	quiet.brief = true;
	quiet.quiet_program = true;
	rc = engine_run_once(pol, argv, &quiet, &hooks, &res, err, sizeof(err));
	if (rc < 0)
		goto out;
	text = stats_text(&f, cfg, res.outcome);
	snprintf(path, sizeof(path), "%s/bug-%ld.txt", eo->out_dir, n);
	if (text)
		insert_before(path, "found run:", text);
out:
	cfg->describe = describe;
	cfg->profile = profile;
	cfg->preemptions_out = preemptions_out;
	free(text);
	schedule_free(sched);
	if (null)
		fclose(null);
	free_follow(&f);
}
