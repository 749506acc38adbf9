/*
 * chrome.c: the run as the Trace Event Format (--trace-chrome FILE), which
 * Perfetto (ui.perfetto.dev) and chrome://tracing load.
 *
 * A trace line becomes an instant event ("ph":"i") on the track of its
 * thread; tracks are named p1.t3 by thread_name metadata ("ph":"M") and
 * grouped by process (p1, p2: the pid of the format is the process's
 * creation number, so that two runs look alike).  What makes the picture
 * useful is the time each thread spent held by the schedule: a complete
 * slice ("ph":"X") from the trace line that held it to the moment the
 * schedule let it go, which the engine notes wherever it resumes a held
 * thread (chrome_note_release), or to the end of the run.  The document is
 * written once, at the end of the run, with jansson.
 */
#include "engine/internal.h"

#include <assert.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

struct chrome_event {
	double us; /* since the run started */
	int proc;  /* N of pN.tM */
	pid_t tid;
	char *thread, *what, *func, *file;
	int line;
	double released_us; /* when the schedule let the thread go; < 0: not yet */
};

struct chrome_trace {
	struct chrome_event *ev;
	size_t n, cap;
};

static char *copy(const char *s)
{
	return s ? strdup(s) : NULL;
}

void chrome_note_event(struct run *r, const struct tr_event *ev, const char *what,
		       const struct sym_loc *loc)
{
	struct chrome_trace *c = r->chrome;
	struct chrome_event *e;

	if (!c && !(c = r->chrome = calloc(1, sizeof(*c))))
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct chrome_event *grown = realloc(c->ev, cap * sizeof(*grown));

		if (!grown)
			return;
		c->ev = grown;
		c->cap = cap;
	}
	e = &c->ev[c->n++];
	e->us = run_elapsed_ms(r) * 1000.0;
	e->tid = tracer_thread_tid(ev->thread);
	e->proc = 0;
	sscanf(tracer_thread_name(ev->thread), "p%d.", &e->proc);
	e->thread = copy(tracer_thread_name(ev->thread));
	e->what = copy(what);
	e->func = copy(loc->pretty);
	e->file = copy(loc->file);
	e->line = loc->line;
	e->released_us = -1;
}

void chrome_note_release(struct run *r, struct tr_thread *th)
{
	struct chrome_trace *c = r->chrome;
	pid_t tid = tracer_thread_tid(th);
	size_t i;

	for (i = c ? c->n : 0; i-- > 0;)
		if (c->ev[i].tid == tid) {
			if (c->ev[i].released_us < 0)
				c->ev[i].released_us = run_elapsed_ms(r) * 1000.0;
			return;
		}
}

static json_t *base(const char *ph, const char *name, int proc, pid_t tid)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", json_string(name ? name : "?"));
	json_object_set_new(o, "ph", json_string(ph));
	json_object_set_new(o, "pid", json_integer(proc));
	json_object_set_new(o, "tid", json_integer(tid));
	return o;
}

static json_t *us(double t)
{
	return json_real((double)(long long)(t * 1000.0 + 0.5) / 1000.0);
}

/* thread_name for each thread of the trace, process_name for each
 * process: once each. */
static void names(json_t *out, const struct chrome_trace *c)
{
	size_t i, j;

	for (i = 0; i < c->n; i++) {
		bool seen_thread = false, seen_proc = false;
		json_t *m;

		for (j = 0; j < i; j++) {
			seen_thread |= c->ev[j].tid == c->ev[i].tid;
			seen_proc |= c->ev[j].proc == c->ev[i].proc;
		}
		if (!seen_proc) {
			char name[32];

			snprintf(name, sizeof(name), "p%d", c->ev[i].proc);
			m = base("M", "process_name", c->ev[i].proc, c->ev[i].tid);
			json_object_set_new(m, "args", json_pack("{s:s}", "name", name));
			json_array_append_new(out, m);
		}
		if (seen_thread)
			continue;
		m = base("M", "thread_name", c->ev[i].proc, c->ev[i].tid);
		json_object_set_new(m, "args", json_pack("{s:s}", "name", c->ev[i].thread));
		json_array_append_new(out, m);
	}
}

static json_t *instant(const struct chrome_event *e)
{
	json_t *o = base("i", e->what, e->proc, e->tid), *args = json_object();

	json_object_set_new(o, "ts", us(e->us));
	json_object_set_new(o, "s", json_string("t"));
	json_object_set_new(args, "thread", json_string(e->thread));
	if (e->func)
		json_object_set_new(args, "func", json_string(e->func));
	if (e->file)
		json_object_set_new(args, "where", json_sprintf("%s:%d", e->file, e->line));
	json_object_set_new(o, "args", args);
	return o;
}

/* The slice of the thread held at event i: until the schedule let it go,
 * or to the end of the run. */
static json_t *held(const struct chrome_trace *c, size_t i, double end_us)
{
	double until = c->ev[i].released_us >= 0 ? c->ev[i].released_us : end_us;
	json_t *o;

	o = base("X", "held", c->ev[i].proc, c->ev[i].tid);
	json_object_set_new(o, "ts", us(c->ev[i].us));
	json_object_set_new(o, "dur", us(until > c->ev[i].us ? until - c->ev[i].us : 0));
	json_object_set_new(o, "args", json_pack("{s:s}", "by", c->ev[i].what));
	return o;
}

void chrome_finish(struct run *r)
{
	struct chrome_trace *c = r->chrome;
	json_t *doc, *events;
	double end_us = run_elapsed_ms(r) * 1000.0;
	size_t i;

	if (!r->opt->trace_chrome)
		return;
	if (!c)
		c = &(struct chrome_trace){0};
	events = json_array();
	names(events, c);
	for (i = 0; i < c->n; i++) {
		json_array_append_new(events, held(c, i, end_us));
		json_array_append_new(events, instant(&c->ev[i]));
	}
	doc = json_pack("{s:o, s:s, s:{s:s, s:s}}", "traceEvents", events, "displayTimeUnit", "ms",
			"otherData", "tool", "cctrace", "outcome", engine_outcome_name(r->outcome));
	assert(doc); /* jansson fails only out of memory */
	json_dumpf(doc, r->opt->trace_chrome, JSON_COMPACT | JSON_REAL_PRECISION(17));
	fputc('\n', r->opt->trace_chrome);
	fflush(r->opt->trace_chrome);
	json_decref(doc);
}

void chrome_free(struct run *r)
{
	struct chrome_trace *c = r->chrome;
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->ev[i].thread);
		free(c->ev[i].what);
		free(c->ev[i].func);
		free(c->ev[i].file);
	}
	free(c->ev);
	free(c);
	r->chrome = NULL;
}
