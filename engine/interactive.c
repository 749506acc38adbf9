/*
 * interactive.c: a program held between commands, for the shell.
 *
 * A session is a run (run.h) that never ends on its own.  Each command's
 * statements are parsed as a small schedule, checked against the live
 * symbols with the session's growing tables of thread variables and
 * points, and executed by the same interpreter a schedule file uses; a
 * statement that cannot be followed (a timeout, Ctrl-C) reports through a
 * buffer instead of ending the session.  The text of every command that
 * ran is kept, in order, so that saving writes a schedule that replays it.
 *
 * User breakpoints and watchpoints are kept as predicate atoms; `continue`
 * is a wait with every thread as a candidate and that disjunction as its
 * predicate.
 *
 * A launched program runs in a process group of its own, so a Ctrl-C
 * typed at the terminal interrupts the session and never reaches it; if
 * it reads the terminal during a command it gets it (tracer/terminal.c),
 * and every command ends by taking it back for the prompt.
 */
#include "engine/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct user_point {
	int number;
	bool watch;
	char *spec; /* as typed: "withdraw", "bank.c:31", "balance" */
	char *atom; /* "enter(withdraw)", "at(bank.c:31)", "write(balance)" */
	struct user_point *next;
};

struct engine_session {
	struct policy pol;
	struct engine_options opt;
	struct tracer *tracer;
	struct run *run;
	bool over;
	char **argv; /* a launched program's command line, for `save` */
	pid_t pid;
	struct schedule **fragments; /* kept: armed points refer to their trees */
	int nfragments;
	char **recorded;
	int nrecorded;
	struct user_point *points;
	int next_point;
	bool let_run; /* a command has run the program: its free threads run on */
};

static struct engine_session *session_new(const struct engine_options *opt)
{
	struct engine_session *s = calloc(1, sizeof(*s));
	/* A launched program in a process group of its own: Ctrl-C is the
	 * session's, and never reaches the program. */
	struct tracer_options topt = {
	    .pin_cpu = opt->pin_cpu, .own_pgrp = true, .no_children = opt->no_children};

	if (!s)
		return NULL;
	s->opt = *opt;
	s->tracer = tracer_new(&topt);
	s->next_point = 1;
	if (!s->tracer) {
		free(s);
		return NULL;
	}
	return s;
}

static int session_start(struct engine_session *s, bool launched)
{
	static struct schedule empty = {.path = "shell"};

	s->pol.sched = &empty;
	s->run = run_new(&s->pol, s->tracer, &s->opt, launched);
	if (!s->run)
		return -1;
	s->run->interactive = true;
	return 0;
}

struct engine_session *engine_session_launch(char *const argv[], const struct engine_options *opt,
					     char *err, size_t errlen)
{
	struct engine_session *s = session_new(opt);
	int n;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (launch_traced(s->tracer, argv, err, errlen) < 0 || session_start(s, true) < 0) {
		tracer_free(s->tracer);
		free(s);
		return NULL;
	}
	for (n = 0; argv[n]; n++)
		;
	s->argv = calloc((size_t)n + 1, sizeof(*s->argv));
	for (n = 0; s->argv && argv[n]; n++)
		s->argv[n] = strdup(argv[n]);
	return s;
}

struct engine_session *engine_session_attach(pid_t pid, const struct engine_options *opt, char *err,
					     size_t errlen)
{
	struct engine_session *s = session_new(opt);

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->pid = pid;
	if (tracer_attach(s->tracer, pid, err, errlen) < 0 || session_start(s, false) < 0) {
		tracer_detach_all(s->tracer);
		tracer_free(s->tracer);
		free(s);
		return NULL;
	}
	if (tracer_attach_note(s->tracer) && opt->report)
		fprintf(opt->report, "cctrace: note: %s\n", tracer_attach_note(s->tracer));
	return s;
}

static void free_strings(char **v, int n)
{
	int i;

	for (i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

static void session_free(struct engine_session *s);

void engine_session_end(struct engine_session *s)
{
	if (!s)
		return;
	s->run->finished = true; /* nothing more to report */
	s->run->interactive = false;
	tracer_terminal_prompt(s->tracer, false);
	tracer_terminal_take(s->tracer);
	if (s->run->launched)
		tracer_kill_launched(s->tracer);
	else
		tracer_detach_all(s->tracer);
	session_free(s);
}

void engine_session_detach(struct engine_session *s)
{
	if (!s)
		return;
	s->run->finished = true;
	s->run->interactive = false;
	tracer_terminal_prompt(s->tracer, false);
	tracer_terminal_take(s->tracer);
	points_flush(s->run);
	tracer_detach_all(s->tracer);
	session_free(s);
}

static void session_free(struct engine_session *s)
{
	struct user_point *p;
	int i;

	run_free(s->run);
	tracer_free(s->tracer);
	for (i = 0; i < s->nfragments; i++)
		schedule_free(s->fragments[i]);
	free(s->fragments);
	free_strings(s->recorded, s->nrecorded);
	for (i = 0; s->argv && s->argv[i]; i++)
		free(s->argv[i]);
	free(s->argv);
	while ((p = s->points)) {
		s->points = p->next;
		free(p->spec);
		free(p->atom);
		free(p);
	}
	s->pol.sched = NULL;
	for (i = 0; i < s->pol.nfuncs; i++)
		free(s->pol.funcs[i]);
	for (i = 0; i < s->pol.nlocs; i++)
		free(s->pol.locs[i].file);
	for (i = 0; i < s->pol.nthreads; i++)
		free(s->pol.threads[i]);
	for (i = 0; i < s->pol.nlocals; i++)
		free(s->pol.locals[i]);
	free(s->pol.locals);
	for (i = 0; i < s->pol.nwatched; i++)
		free(s->pol.watched[i]);
	free(s->pol.watched);
	free(s->pol.funcs);
	free(s->pol.locs);
	free(s->pol.threads);
	free(s);
}

static struct sym_space *live_symbols(struct engine_session *s)
{
	struct proc_ctx *pc = run_proc(s->run, run_main_process(s->run));

	return pc ? pc->syms : NULL;
}

static int keep(void ***list, int *n, void *item)
{
	void **grown = realloc(*list, sizeof(*grown) * (size_t)(*n + 1));

	if (!grown)
		return -1;
	grown[(*n)++] = item;
	*list = grown;
	return 0;
}

/* Parse and check text; the schedule is kept for the session's life. */
static struct schedule *prepare(struct engine_session *s, const char *text, char *err,
				size_t errlen)
{
	struct schedule *sched = schedule_parse("shell", text, engine_atoms(), err, errlen);
	struct sym_space *syms = live_symbols(s);

	if (!sched)
		return NULL;
	if (!syms) {
		snprintf(err, errlen, "no symbols for the program");
		schedule_free(sched);
		return NULL;
	}
	if (lang_check_block(&s->pol, sched, syms, err, errlen) < 0 ||
	    keep((void ***)&s->fragments, &s->nfragments, sched) < 0) {
		schedule_free(sched);
		return NULL;
	}
	return sched;
}

static bool program_gone(struct engine_session *s)
{
	struct tr_process *p;

	for (p = tracer_processes(s->tracer); p; p = tracer_process_next(p))
		if (tracer_process_alive(p))
			return false;
	return true;
}

/* Consume a Ctrl-C typed at the prompt, so it does not stop the next
 * command the moment it starts. */
static void drop_stale_interrupt(void)
{
	tracer_stop_signal(true);
}

/* Run fn (false: it failed) with the run's report going into err instead
 * of stderr, where a failure's report stays.  The session is over once
 * the program is gone, or a failure was a bug of the program's. */
static enum session_result captured(struct engine_session *s,
				    bool (*fn)(struct engine_session *s, void *ctx), void *ctx,
				    char *err, size_t errlen)
{
	FILE *saved = s->opt.report;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	bool ok;

	s->opt.report = mem;
	s->run->finished = false;
	ok = fn(s, ctx);
	s->opt.report = saved;
	if (mem)
		fclose(mem);
	snprintf(err, errlen, "%s", buf && !ok ? buf : "");
	free(buf);
	if (err[0] && err[strlen(err) - 1] == '\n')
		err[strlen(err) - 1] = 0;
	if (program_gone(s) || (!ok && s->run->outcome == OUTCOME_BUG)) {
		s->over = true;
		return SESSION_OVER;
	}
	return ok ? SESSION_OK : SESSION_FAILED;
}

static bool run_schedule(struct engine_session *s, void *sched)
{
	int rc = run_statements(s->run, sched);

	tracer_terminal_take(s->tracer); /* the prompt reads it next */
	return rc >= 0;
}

static bool anyone_running(struct engine_session *s)
{
	struct tr_thread *th;

	for (th = tracer_threads(s->tracer); th; th = tracer_thread_next(th))
		if (tracer_thread_running(th))
			return true;
	return false;
}

static bool serve_free_stops(struct engine_session *s, void *req)
{
	return loop_run(s->run, req) != FLOW_STOP;
}

/*
 * Between commands the free threads run on, as the statements that let
 * them go said: their stops (a breakpoint a finished wait left planted, a
 * new thread, a signal) are served while the prompt waits for a line,
 * instead of holding them until the next command.  The points a finished
 * command planted go first, so that free threads meet none.
 */
enum session_result engine_session_idle(struct engine_session *s, int ms, char *err, size_t errlen)
{
	struct loop_request req = {.deadline_ms = tracer_now_ms() + ms, .idle = true};

	err[0] = 0;
	if (s->over)
		return SESSION_OVER;
	/* Until a command ran it, the program is held as the session found
	 * it (a launched one at its first instruction, its start still to be
	 * told); and a stop signal is the prompt's. */
	if (!s->let_run || engine_stop_signal() || !anyone_running(s))
		return SESSION_OK;
	points_flush(s->run);
	tracer_terminal_prompt(s->tracer, true);
	return captured(s, serve_free_stops, &req, err, errlen);
}

static void record(struct engine_session *s, const char *fmt, const char *text)
{
	char *line = NULL;

	if (asprintf(&line, fmt, text) < 0)
		return;
	if (keep((void ***)&s->recorded, &s->nrecorded, line) < 0)
		free(line);
}

enum session_result engine_session_exec(struct engine_session *s, const char *text, char *err,
					size_t errlen)
{
	struct schedule *sched;
	enum session_result r;

	err[0] = 0;
	if (s->over) {
		snprintf(err, errlen, "the program has ended; only save and quit remain");
		return SESSION_OVER;
	}
	sched = prepare(s, text, err, errlen);
	if (!sched)
		return SESSION_FAILED;
	drop_stale_interrupt();
	tracer_terminal_prompt(s->tracer, false); /* threads that asked for it ask again */
	r = captured(s, run_schedule, sched, err, errlen);
	s->let_run = true;
	record(s, r == SESSION_OK ? "%s" : "# failed: %s", text);
	return r;
}

int engine_session_save(struct engine_session *s, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	if (s->argv) {
		fprintf(f, "# run: cctrace run %s --", path);
		for (i = 0; s->argv[i]; i++)
			fprintf(f, " %s", s->argv[i]);
		fputc('\n', f);
	} else {
		fprintf(f, "# recorded by `cctrace shell %d`; replay: cctrace attach PID %s\n",
			s->pid, path);
	}
	for (i = 0; i < s->nrecorded; i++)
		fprintf(f, "%s\n", s->recorded[i]);
	if (fclose(f) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* --- looking --- */

static struct tr_thread *find_thread(struct engine_session *s, const char *name, char *err,
				     size_t errlen)
{
	struct tr_thread *th = run_binding(s->run, name);

	if (!th)
		th = tracer_thread_by_name(s->tracer, name);
	if (!th)
		snprintf(err, errlen, "no thread '%s' (use a bound name or one such as p1.t2)",
			 name);
	return th;
}

static void fill_thread(struct engine_session *s, struct tr_thread *th, struct session_thread *t)
{
	struct proc_ctx *pc = run_proc(s->run, tracer_thread_process(th));
	struct sym_loc loc = {0};
	uint64_t pcaddr = tracer_thread_pc(th);

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", tracer_thread_name(th));
	run_vars_of(s->run, th, t->var, sizeof(t->var));
	t->tid = tracer_thread_tid(th);
	t->pid = tracer_process_pid(tracer_thread_process(th));
	tracer_describe_kernel_state(th, t->state, sizeof(t->state));
	const char *plt = NULL;

	if (pcaddr && pc && pc->syms && !tracer_thread_exited(th))
		sym_describe(pc->syms, pcaddr, &loc);
	/* a PLT stub has no symbol of its own: named by what it calls */
	if (!loc.pretty && pcaddr && pc && pc->syms && !tracer_thread_exited(th) &&
	    sym_plt_function(pc->syms, pcaddr, &plt) < 0)
		plt = NULL;
	if (snprintf(t->func, sizeof(t->func), "%s%s",
		     loc.pretty ? loc.pretty
		     : plt	? plt
				: "",
		     !loc.pretty && plt ? "@plt" : "") >= (int)sizeof(t->func))
		memcpy(t->func + sizeof(t->func) - 4, "...", 4); /* not cut silently */
	/* code no function covers (a stripped program): MODULE+0xOFF */
	if (!t->func[0] && pcaddr && !tracer_thread_exited(th))
		report_code_name(s->run, tracer_thread_process(th), pcaddr, &loc, t->func,
				 sizeof(t->func));
	snprintf(t->file, sizeof(t->file), "%s", loc.file ? loc.file : "");
	t->line = loc.line;
	snprintf(t->last_event, sizeof(t->last_event), "%.63s", run_thread(s->run, th)->last_event);
}

bool engine_session_program_alive(struct engine_session *s)
{
	return !program_gone(s);
}

int engine_session_threads(struct engine_session *s, struct session_thread *out, int max)
{
	struct tr_thread *th;
	int n = 0;

	for (th = tracer_threads(s->tracer); th; th = tracer_thread_next(th), n++)
		if (n < max)
			fill_thread(s, th, &out[n]);
	return n;
}

int engine_session_current_thread(struct engine_session *s, char *name, size_t len)
{
	struct tr_thread *th = s->run->has_last_event ? s->run->last_event.ev->thread : NULL;

	if (!th)
		return -1;
	snprintf(name, len, "%s", tracer_thread_name(th));
	return tracer_thread_exited(th) ? 1 : 0;
}

int engine_session_backtrace(struct engine_session *s, const char *thread, FILE *out, char *err,
			     size_t errlen)
{
	struct tr_thread *th = find_thread(s, thread, err, errlen);

	if (!th)
		return -1;
	if (!tracer_thread_held(th)) {
		snprintf(err, errlen, "%s is not held (%s); hold it first", tracer_thread_name(th),
			 tracer_thread_exited(th) ? "exited" : "running");
		return -1;
	}
	report_stack_to(s->run, th, out);
	return 0;
}

/*
 * An error in a command the session checks in another form (`print X` as
 * `assert X`, `break F` as `wait any enter(F)`), said of what the user
 * typed: err's "shell:1:COL: error: MSG", source line and caret are
 * rewritten for typed, where the checked form's column checked_at is
 * typed_at (a column in the rewritten words points at typed_at).
 */
static void as_typed(char *err, size_t errlen, int checked_at, const char *typed, int typed_at)
{
	static const char head[] = "shell:1:";
	char *msg = strstr(err, ": error: "), *line_end, *said = NULL;
	int col, at, width = (int)strlen(typed);

	if (strncmp(err, head, strlen(head)) != 0 || !msg ||
	    sscanf(err + strlen(head), "%d", &col) != 1)
		return;
	line_end = strchr(msg, '\n');
	at = col < checked_at ? typed_at : typed_at + (col - checked_at);
	if (at > width + 1)
		at = width + 1;
	if (asprintf(&said, "%s%d%.*s\n    %s\n    %*s^\n", head, at,
		     line_end ? (int)(line_end - msg) : (int)strlen(msg), msg, typed, at - 1,
		     "") < 0)
		return;
	snprintf(err, errlen, "%s", said);
	free(said);
}

int engine_session_print(struct engine_session *s, const char *expr, const char *shown, FILE *out,
			 char *err, size_t errlen)
{
	const int typed_at = (int)strlen("print ") + 1;
	int rc = -1, checked_at = (int)strlen("assert ") + 1;
	char *text = NULL, *text_out = NULL, *typed = NULL;
	const struct expr *whole = NULL;
	struct schedule *sched;
	struct eval_ctx c;
	size_t len = 0;
	FILE *mem;

	if (!shown)
		shown = expr;
	if (asprintf(&typed, "print %s", shown) < 0 || asprintf(&text, "assert %s\n", expr) < 0)
		goto out;
	sched = prepare(s, text, err, errlen);
	free(text);
	/* an aggregate is checked as the object it is, &(X), and shown
	 * whole (the assert takes integers alone) */
	if (!sched && strstr(err, ", not an integer")) {
		if (asprintf(&text, "assert &(%s) != 0\n", expr) < 0)
			goto out;
		sched = prepare(s, text, err, errlen);
		free(text);
		checked_at = (int)strlen("assert &(") + 1;
		if (sched)
			whole = sched->body->cond->lhs->lhs;
	}
	if (!sched)
		goto said;
	s->run->sched = sched;
	c = points_eval_ctx(s->run, run_main_process(s->run), err, errlen);
	/* shown whole first, then written: an error leaves no half line */
	mem = open_memstream(&text_out, &len);
	if (!mem) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rc = eval_show(&c, whole ? whole : sched->body->cond, mem);
	fclose(mem);
	if (rc == 0)
		fprintf(out, "%s = %s\n", shown, text_out);
said:
	if (rc < 0)
		as_typed(err, errlen, checked_at, typed, typed_at);
out:
	free(text_out);
	free(typed);
	return rc;
}

int engine_session_where(struct engine_session *s, const char *thread, char *path, size_t pathlen,
			 int *line, char *err, size_t errlen)
{
	struct tr_thread *th = find_thread(s, thread, err, errlen);
	struct proc_ctx *pc;
	struct sym_loc loc = {0};
	uint64_t addr;

	if (!th)
		return -1;
	addr = tracer_thread_pc(th);
	pc = run_proc(s->run, tracer_thread_process(th));
	if (!addr || !pc || !pc->syms || sym_describe(pc->syms, addr, &loc) < 0 || !loc.path) {
		snprintf(err, errlen, "no source line known for %s", tracer_thread_name(th));
		return -1;
	}
	snprintf(path, pathlen, "%s", loc.path);
	*line = loc.line;
	return 0;
}

/* --- user breakpoints and `continue` --- */

/* FILE:LINE, not a function (which may be C++'s ns::f: no single colon). */
static bool is_line_spec(const char *spec)
{
	const char *c;

	for (c = strchr(spec, ':'); c; c = strchr(c + 1, ':')) {
		if (c[1] != ':')
			return true;
		c++;
	}
	return false;
}

/* err with its first from replaced by to (the rest kept, within errlen). */
static void replace_words(char *err, size_t errlen, const char *from, const char *to)
{
	char *at = strstr(err, from), *said = NULL;

	if (!at || asprintf(&said, "%.*s%s%s", (int)(at - err), err, to, at + strlen(from)) < 0)
		return;
	snprintf(err, errlen, "%s", said);
	free(said);
}

/* An error in `break SPEC` or `watch SPEC`, checked as `wait any ATOM`,
 * said of what the user typed. */
static void said_of_point(char *err, size_t errlen, bool watch, const char *atom, const char *spec)
{
	const char *word = watch ? "watch " : "break ";
	char *typed = NULL;
	/* SPEC's column in "wait any enter(SPEC)", past a quote of its own */
	int checked_at = (int)(strlen("wait any ") + strcspn(atom, "(") + 1 +
			       (atom[strcspn(atom, "(") + 1] == '"' && spec[0] != '"') + 1);

	if (asprintf(&typed, "%s%s", word, spec) < 0)
		return;
	as_typed(err, errlen, checked_at, typed, (int)strlen(word) + 1);
	free(typed);
	/* the words of the message too: the user typed no write(...) */
	replace_words(err, errlen, "write(...) needs", "watch needs");
	replace_words(err, errlen, "location inside at(...)", "location after break");
}

static int add_point(struct engine_session *s, bool watch, const char *spec, char *err,
		     size_t errlen)
{
	struct user_point *p, **tail;
	char *atom = NULL, *text = NULL;
	bool ok;

	/* a name no identifier spells (worker<long>) is written quoted */
	if (asprintf(&atom,
		     watch					   ? "write(%s)"
		     : is_line_spec(spec)			   ? "at(%s)"
		     : spec[0] != '"' && !lang_is_plain_name(spec) ? "enter(\"%s\")"
								   : "enter(%s)",
		     spec) < 0)
		return -1;
	/* Check it the way `continue` will use it. */
	if (asprintf(&text, "wait any %s\n", atom) < 0) {
		free(atom);
		return -1;
	}
	ok = prepare(s, text, err, errlen) != NULL;
	free(text);
	if (!ok) {
		said_of_point(err, errlen, watch, atom, spec);
		free(atom);
		return -1;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		free(atom);
		return -1;
	}
	p->number = s->next_point++;
	p->watch = watch;
	p->spec = strdup(spec);
	p->atom = atom;
	for (tail = &s->points; *tail; tail = &(*tail)->next)
		;
	*tail = p;
	return p->number;
}

int engine_session_break(struct engine_session *s, const char *spec, char *err, size_t errlen)
{
	return add_point(s, false, spec, err, errlen);
}

int engine_session_watch(struct engine_session *s, const char *expr, char *err, size_t errlen)
{
	return add_point(s, true, expr, err, errlen);
}

int engine_session_delete(struct engine_session *s, int number, char *err, size_t errlen)
{
	struct user_point **pp, *p;

	for (pp = &s->points; (p = *pp); pp = &p->next) {
		if (p->number != number)
			continue;
		*pp = p->next;
		free(p->spec);
		free(p->atom);
		free(p);
		return 0;
	}
	snprintf(err, errlen, "no breakpoint or watchpoint number %d", number);
	return -1;
}

void engine_session_list_points(struct engine_session *s, bool watch, FILE *out)
{
	struct user_point *p;
	int n = 0;

	for (p = s->points; p; p = p->next) {
		if (p->watch != watch)
			continue;
		if (!n++)
			fprintf(out, "Num  What\n");
		fprintf(out, "%-4d %s\n", p->number, p->atom);
	}
	if (!n)
		fprintf(out, "no %s\n", watch ? "watchpoints" : "breakpoints");
}

enum session_result engine_session_continue(struct engine_session *s, char *err, size_t errlen)
{
	struct tr_thread *matched[1];
	struct user_point *p;
	struct schedule *sched;
	char *text = NULL, *grown;
	enum flow flow;

	err[0] = 0;
	if (s->over) {
		snprintf(err, errlen, "the program has ended; only save and quit remain");
		return SESSION_OVER;
	}
	for (p = s->points; p; p = p->next) {
		if (asprintf(&grown, "%s%s%s", text ? text : "", text ? " || " : "", p->atom) < 0)
			break;
		free(text);
		text = grown;
	}
	/* With no point, only Ctrl-C or the program's end stops it. */
	if (asprintf(&grown, "wait any %s\n", text ? text : "exit && 0") < 0) {
		free(text);
		return SESSION_FAILED;
	}
	free(text);
	sched = prepare(s, grown, err, errlen);
	free(grown);
	if (!sched)
		return SESSION_FAILED;
	drop_stale_interrupt();
	tracer_terminal_prompt(s->tracer, false);
	s->let_run = true;
	s->run->sched = sched;
	s->run->all_candidates = true;
	s->run->no_deadline = true;
	s->run->finished = false;
	flow = run_wait_for(s->run, sched->body, NULL, 0, 1, matched);
	s->run->all_candidates = false;
	s->run->no_deadline = false;
	tracer_stop_all(s->tracer);
	tracer_terminal_take(s->tracer);
	record(s, "%s", "# continue (not replayable: where threads stopped is up to the OS)");
	/* the report said why (the bug, the end, Ctrl-C): said once */
	if (program_gone(s) || (s->run->finished && s->run->outcome == OUTCOME_BUG)) {
		s->over = true;
		return SESSION_OVER;
	}
	if (flow == FLOW_STOP) {
		if (!s->run->finished)
			snprintf(err, errlen, "interrupted; every thread is held");
		return SESSION_FAILED;
	}
	return SESSION_OK;
}

/* --- completion --- */

void engine_session_names(struct engine_session *s, int kind, const char *prefix,
			  void (*cb)(const char *name, void *ctx), void *ctx)
{
	struct sym_space *syms = live_symbols(s);
	struct tr_thread *th;
	size_t len = strlen(prefix);
	int i;

	if (kind == 0) {
		for (i = 0; i < s->pol.nthreads; i++)
			if (strncmp(s->pol.threads[i], prefix, len) == 0)
				cb(s->pol.threads[i], ctx);
		tr_for_each_thread(th, s->tracer)
			if (!tracer_thread_exited(th) &&
			    strncmp(tracer_thread_name(th), prefix, len) == 0)
				cb(tracer_thread_name(th), ctx);
		return;
	}
	if (syms)
		sym_each_name(syms, kind == 1 ? 0 : 1, prefix, cb, ctx);
}
