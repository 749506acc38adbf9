/*
 * picture.c: DIR/bug-N.html, a picture of the interleaving a search found.
 *
 * A 36-step trace of four threads is hard to follow as a list; drawn as a
 * sequence diagram (one column per thread, time downwards) the order that
 * breaks the program shows at a glance.  Every step is a box with its
 * event, function and file:line; a step that follows a preemption (the
 * search switched away from a thread that could have gone on) is
 * highlighted, since preemptions are what a bug's interleaving is made of;
 * the failing event closes the picture with the outcome message.
 *
 * The page is one file with inline CSS and no script, so it opens anywhere,
 * offline, and is kept beside bug-N.sched as a record.  Everything the
 * program or the schedule named is HTML-escaped.  The data are the events
 * the engine names for a kept trace (run_hooks.trace_event): the same as the
 * human trace in bug-N.txt.
 */
#include "search/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s, bool *failed)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*failed = true;
	return d;
}

static void free_step(struct picture_step *s)
{
	free(s->thread);
	free(s->var);
	free(s->event);
	free(s->func);
	free(s->file);
	free(s->preempted);
}

void picture_add(void *picture, const struct engine_trace_event *ev)
{
	struct picture *p = picture;
	struct picture_step *s;
	bool failed = false;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct picture_step *grown = realloc(p->steps, cap * sizeof(*grown));

		if (!grown) {
			p->incomplete = true;
			return;
		}
		p->steps = grown;
		p->cap = cap;
	}
	s = &p->steps[p->n];
	*s = (struct picture_step){.ms = ev->ms, .line = ev->line};
	s->thread = dup_or_null(ev->thread ? ev->thread : "?", &failed);
	s->var = dup_or_null(ev->var, &failed);
	s->event = dup_or_null(ev->event ? ev->event : "", &failed);
	s->func = dup_or_null(ev->func, &failed);
	s->file = dup_or_null(ev->file, &failed);
	s->preempted = dup_or_null(ev->preempted, &failed);
	if (failed) {
		free_step(s);
		p->incomplete = true;
		return;
	}
	p->n++;
}

void picture_free(struct picture *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free_step(&p->steps[i]);
	free(p->steps);
	memset(p, 0, sizeof(*p));
}

/* Text for markup, HTML or XML alike: the five special characters as
 * entities, and the control characters XML 1.0 cannot hold (even escaped)
 * dropped; newlines and tabs stay.  JUnit reports use it too (cli/junit.c). */
void search_markup_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	for (; *p; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		case '\n':
		case '\t':
			fputc(*p, f);
			break;
		default:
			if (*p >= 0x20 && *p != 0x7f)
				fputc(*p, f);
		}
	}
}

static void html(FILE *f, const char *s)
{
	search_markup_text(f, s);
}

/* The threads in order of their first step; their variable, if any. */
struct columns {
	const char **name, **var;
	size_t n;
};

static int column_of(const struct columns *c, const char *thread)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->name[i], thread) == 0)
			return (int)i;
	return -1;
}

static int collect_columns(const struct picture *p, struct columns *c)
{
	size_t i;

	c->n = 0;
	c->name = calloc(p->n + 2, sizeof(*c->name));
	c->var = calloc(p->n + 2, sizeof(*c->var));
	if (!c->name || !c->var)
		return -1;
	for (i = 0; i < p->n; i++) {
		int k = column_of(c, p->steps[i].thread);

		if (k < 0) {
			k = (int)c->n++;
			c->name[k] = p->steps[i].thread;
		}
		if (p->steps[i].var)
			c->var[k] = p->steps[i].var;
	}
	return 0;
}

/* A crash or failed assert names its thread first ("p1.t1 (tid 42)
 * received ..."): it gets a column even without a step, so that the
 * failing event sits in its thread's column. */
static void add_failing_thread(struct columns *c, const char *message, char *name, size_t len)
{
	int n = 0;

	if (!message || sscanf(message, "bug: p%*u.t%*u%n", &n) != 0 || n == 0)
		return;
	snprintf(name, len, "%.*s", n - 5, message + 5);
	if (column_of(c, name) < 0)
		c->name[c->n++] = name;
}

/* The column of the thread the outcome message names first (a crash or a
 * failed assert says which thread); -1 when it names none (a deadlock of
 * several, the program's exit status). */
static int failing_column(const struct columns *c, const char *message)
{
	const char *best = NULL;
	int k = -1;
	size_t i;

	for (i = 0; message && i < c->n; i++) {
		const char *at = strstr(message, c->name[i]);
		size_t len = strlen(c->name[i]);

		/* p1.t1 must not match inside p1.t12 */
		while (at && (at[len] >= '0' && at[len] <= '9'))
			at = strstr(at + 1, c->name[i]);
		if (at && (!best || at < best)) {
			best = at;
			k = (int)i;
		}
	}
	return k;
}

static const char style[] =
    "body{font:14px/1.35 system-ui,sans-serif;margin:16px;color:#1b1b1b;background:#fff}\n"
    "h1{font-size:18px;margin:0 0 4px}\n"
    "p.about{margin:0 0 12px;color:#555}\n"
    "table{border-collapse:separate;border-spacing:8px 3px}\n"
    "th{position:sticky;top:0;background:#fff;text-align:left;padding:4px 6px;"
    "border-bottom:3px solid var(--c)}\n"
    "th .var{color:#555;font-weight:normal}\n"
    "td{vertical-align:top;min-width:14em;padding:0}\n"
    "td.ms{min-width:0;color:#777;font:12px monospace;text-align:right;padding-top:6px}\n"
    "td.lane{border-left:2px solid #ddd}\n"
    ".box{border:1px solid var(--c);border-left:6px solid var(--c);border-radius:4px;"
    "padding:3px 6px;margin-left:-2px;background:#fafafa}\n"
    ".box .ev{font:13px monospace;font-weight:bold;word-break:break-all}\n"
    ".box .at{font:12px monospace;color:#444}\n"
    ".box.preempt{background:#fff3c4;box-shadow:0 0 0 2px #e0a800}\n"
    ".box .why{font-size:12px;color:#8a5a00}\n"
    ".cut{color:#c77700;font:12px monospace;padding-top:6px}\n"
    "tr.failure td.fail{border:2px solid #c00;background:#ffe5e5;border-radius:4px;"
    "padding:6px;color:#900;font-weight:bold}\n"
    "details{margin-top:16px}pre{background:#f4f4f4;padding:8px;overflow:auto}\n"
    ".legend span{display:inline-block;padding:1px 6px;margin-right:8px;border-radius:3px}\n";

/* A colour per column, distinct for the first eight. */
static const char *const palette[] = {"#1f77b4", "#2ca02c", "#9467bd", "#d62728",
				      "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};

static void write_head(FILE *f, const struct columns *c, const char *title, const char *about)
{
	size_t i;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
	html(f, title);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
	html(f, title);
	fputs("</h1>\n<p class=\"about\">", f);
	html(f, about);
	fputs("</p>\n<p class=\"legend\"><span style=\"background:#fff3c4;box-shadow:0 0 0 2px "
	      "#e0a800\">preemption</span><span style=\"background:#ffe5e5;border:1px solid "
	      "#c00\">failing event</span></p>\n<table>\n<thead><tr><th>ms</th>",
	      f);
	for (i = 0; i < c->n; i++) {
		fprintf(f, "<th class=\"thread\" style=\"--c:%s\" data-thread-column=\"",
			palette[i % (sizeof(palette) / sizeof(palette[0]))]);
		html(f, c->name[i]);
		fputs("\">", f);
		html(f, c->name[i]);
		if (c->var[i]) {
			fputs(" <span class=\"var\">(", f);
			html(f, c->var[i]);
			fputs(")</span>", f);
		}
		fputs("</th>", f);
	}
	fputs("</tr></thead>\n<tbody>\n", f);
}

static void write_box(FILE *f, const struct picture_step *s, size_t col)
{
	fprintf(f, "<div class=\"box%s\" style=\"--c:%s\" data-step>",
		s->preempted ? " preempt" : "",
		palette[col % (sizeof(palette) / sizeof(palette[0]))]);
	fputs("<div class=\"ev\">", f);
	html(f, s->event);
	fputs("</div><div class=\"at\">", f);
	html(f, s->func ? s->func : "??");
	if (s->file) {
		fputc(' ', f);
		html(f, s->file);
		fprintf(f, ":%d", s->line);
	}
	fputs("</div>", f);
	if (s->preempted) {
		fputs("<div class=\"why\">preempts ", f);
		html(f, s->preempted);
		fputs(", which could have gone on</div>", f);
	}
	fputs("</div>", f);
}

static void write_steps(FILE *f, const struct picture *p, const struct columns *c)
{
	size_t i, k;

	for (i = 0; i < p->n; i++) {
		const struct picture_step *s = &p->steps[i];
		int col = column_of(c, s->thread);
		int cut = s->preempted ? column_of(c, s->preempted) : -1;

		fprintf(f, "<tr class=\"step\"><td class=\"ms\">%.3f</td>", s->ms);
		for (k = 0; k < c->n; k++) {
			fputs("<td class=\"lane\">", f);
			if ((int)k == col)
				write_box(f, s, k);
			else if ((int)k == cut)
				fputs("<div class=\"cut\">&#x2190; preempted</div>", f);
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
}

static void write_failure(FILE *f, const struct columns *c, const char *outcome)
{
	int col = failing_column(c, outcome);
	size_t k;

	fputs("<tr class=\"failure\" data-failing-event><td class=\"ms\">end</td>", f);
	if (col < 0 || c->n == 0) {
		fprintf(f, "<td class=\"fail\" colspan=\"%zu\">", c->n ? c->n : 1);
		html(f, outcome);
		fputs("</td></tr>\n", f);
		return;
	}
	for (k = 0; k < c->n; k++) {
		if ((int)k != col) {
			fputs("<td class=\"lane\"></td>", f);
			continue;
		}
		fputs("<td class=\"fail\">", f);
		html(f, outcome);
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
}

int picture_write(const char *path, const struct picture *p, const struct picture_text *text,
		  char *err, size_t errlen)
{
	struct columns c = {0};
	char failing[64];
	FILE *f = NULL;
	int rc = -1;

	if (collect_columns(p, &c) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	add_failing_thread(&c, text->outcome, failing, sizeof(failing));
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	write_head(f, &c, text->title, text->about);
	write_steps(f, p, &c);
	write_failure(f, &c, text->outcome);
	fputs("</tbody>\n</table>\n", f);
	if (p->incomplete)
		fputs("<p>Some steps are missing: cctrace ran out of memory.</p>\n", f);
	if (text->report && *text->report) {
		fputs("<details><summary>report</summary><pre>", f);
		html(f, text->report);
		fputs("</pre></details>\n", f);
	}
	fputs("</body>\n</html>\n", f);
	rc = 0;
out:
	if (f && fclose(f) != 0 && rc == 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		rc = -1;
	}
	free(c.name);
	free(c.var);
	return rc;
}
