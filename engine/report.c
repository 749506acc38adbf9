/*
 * report.c: what a run says.
 *
 * The trace has one line per scheduling event, the moment a thread is held
 * because it satisfied a wait: time, thread, the event as the schedule
 * names it, and where in the source it happened.  --trace-json writes the
 * same records as JSON lines for tools, between a header and an outcome
 * record (docs/json.md), built with jansson: escaping and number formats
 * are the library's, not pasted by hand.  The outcome goes to the report
 * stream (stderr) once, with whatever explains it: the stack of a crashing
 * thread, or where every thread was when a wait timed out.
 */
#include "engine/internal.h"

#include <assert.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double run_elapsed_ms(const struct run *r)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6 - (double)r->t0_ms;
}

static void describe_pc(struct run *r, struct tr_thread *th, uint64_t pc, struct sym_loc *loc)
{
	struct proc_ctx *pc_ctx = run_proc(r, tracer_thread_process(th));

	memset(loc, 0, sizeof(*loc));
	if (pc_ctx && pc_ctx->syms)
		sym_describe(pc_ctx->syms, pc, loc);
}

/* Where pc is, as a stack line or the thread list says it: "F+OFF" (OFF
 * the offset loc gives, plus extra), else, in code no function covers (a
 * stripped program), "MODULE+0xOFF" as a schedule's at() names it. */
static void where_text(struct sym_space *syms, uint64_t pc, const struct sym_loc *loc,
		       uint64_t extra, char *buf, size_t len)
{
	const char *module;
	uint64_t offset;

	if (loc->pretty)
		snprintf(buf, len, "%s+%lu", loc->pretty,
			 (unsigned long)(loc->func_offset + extra));
	else if (syms && sym_module_offset(syms, pc, &module, &offset) == 0)
		snprintf(buf, len, "%s+%#lx", module, (unsigned long)offset);
	else
		snprintf(buf, len, "%#lx", (unsigned long)pc);
}

void report_code_name(struct run *r, struct tr_process *p, uint64_t pc, const struct sym_loc *loc,
		      char *buf, size_t len)
{
	struct proc_ctx *pc_ctx = run_proc(r, p);

	if (loc->pretty)
		snprintf(buf, len, "%s", loc->pretty);
	else
		where_text(pc_ctx ? pc_ctx->syms : NULL, pc, loc, 0, buf, len);
}

/* "[  12.345 ms] p1.t2    enter(F)    F    file.c:12": one trace line. */
static void put_trace_line(struct run *r, FILE *f, double ms, struct tr_thread *th,
			   const char *what, uint64_t pc, const struct sym_loc *loc)
{
	char func[512], where[160] = "";

	report_code_name(r, tracer_thread_process(th), pc, loc, func, sizeof(func));
	if (loc->file)
		snprintf(where, sizeof(where), "%s:%d", loc->file, loc->line);
	fprintf(f, "[%9.3f ms] %-8s %-28s %-24s %s\n", ms, tracer_thread_name(th), what, func,
		where);
}

/* One record of the JSON trace, one line; rec is consumed.  Times are
 * rounded to the microsecond, and printed without binary noise. */
static void put_record(FILE *f, json_t *rec)
{
	assert(rec); /* jansson fails only out of memory */
	json_dumpf(rec, f, JSON_COMPACT | JSON_REAL_PRECISION(15));
	fputc('\n', f);
	json_decref(rec);
}

/* s as a JSON string, or null when there is none (an unknown function). */
static json_t *string_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *hex(uint64_t v)
{
	return json_sprintf("0x%lx", (unsigned long)v);
}

static double rounded_ms(double ms)
{
	return round(ms * 1000.0) / 1000.0;
}

/* The program of an attached pid, as the kernel names it; NULL if gone. */
static json_t *attached_program(pid_t pid)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return json_null();
	path[n] = 0;
	return json_string(path);
}

void engine_trace_json_header(FILE *f, const struct engine_trace_header *h)
{
	json_t *rec = json_object(), *argv = json_array();
	int i;

	assert(h->command && (h->argv || h->pid > 0));
	assert(h->watchpoints == WATCHPOINTS_HW || h->watchpoints == WATCHPOINTS_SW);
	for (i = 0; h->argv && h->argv[i]; i++)
		json_array_append_new(argv, json_string(h->argv[i]));
	json_object_set_new(rec, "type", json_string("header"));
	json_object_set_new(rec, "schema", json_integer(ENGINE_TRACE_SCHEMA));
	json_object_set_new(rec, "command", json_string(h->command));
	json_object_set_new(rec, "schedule", string_or_null(h->schedule));
	json_object_set_new(rec, "program",
			    h->argv ? json_string(h->argv[0]) : attached_program(h->pid));
	json_object_set_new(rec, "argv", h->argv ? argv : (json_decref(argv), json_null()));
	json_object_set_new(rec, "pid", h->pid > 0 ? json_integer(h->pid) : json_null());
	json_object_set_new(rec, "strategy", string_or_null(h->strategy));
	json_object_set_new(rec, "seed",
			    h->strategy ? json_integer((json_int_t)h->seed) : json_null());
	json_object_set_new(rec, "watchpoints",
			    json_string(h->watchpoints == WATCHPOINTS_HW ? "hw" : "sw"));
	json_object_set_new(rec, "early_timeouts",
			    h->strategy ? json_boolean(h->early_timeouts) : json_null());
	put_record(f, rec);
}

void engine_trace_json_outcome(FILE *f, const struct engine_trace_outcome *o)
{
	json_t *rec = json_object();

	json_object_set_new(rec, "type", json_string("outcome"));
	json_object_set_new(rec, "outcome", json_string(engine_outcome_name(o->outcome)));
	json_object_set_new(rec, "exit", json_integer(engine_outcome_exit_code(o->outcome)));
	json_object_set_new(rec, "message", string_or_null(o->message));
	if (o->run > 0 || o->abandoned) {
		json_object_set_new(rec, "run", o->abandoned ? json_null() : json_integer(o->run));
		json_object_set_new(rec, "search_run",
				    o->abandoned ? json_null() : json_integer(o->search_run));
		json_object_set_new(rec, "choices", json_string(o->choices ? o->choices : ""));
		json_object_set_new(rec, "abandoned", json_boolean(o->abandoned));
	}
	put_record(f, rec);
	fflush(f);
}

/* Where an event happened in the code: an access at the instruction that
 * made it (the thread has gone past it: the debug registers trap after
 * the access, the stepper judges it at the next stop), anything else
 * where the thread stands. */
static uint64_t event_code_pc(const struct current_event *cur)
{
	if (cur->fine && cur->fine->kind == TR_STEP_ACCESS)
		return cur->fine->pc;
	if (cur->ev->kind == TR_EV_WATCH && cur->ev->insn_pc)
		return cur->ev->insn_pc;
	return cur->ev->pc;
}

/* The JSON record of one trace line. */
static void event_record(struct run *r, const struct current_event *cur, const char *what,
			 const struct sym_loc *loc)
{
	const struct tr_event *ev = cur->ev;
	json_t *rec = json_object();
	struct tr_step_event access;

	json_object_set_new(rec, "type", json_string("event"));
	json_object_set_new(rec, "ms", json_real(rounded_ms(run_elapsed_ms(r))));
	json_object_set_new(rec, "thread", json_string(tracer_thread_name(ev->thread)));
	json_object_set_new(rec, "tid", json_integer(tracer_thread_tid(ev->thread)));
	json_object_set_new(rec, "event", json_string(what));
	json_object_set_new(rec, "pc", hex(event_code_pc(cur)));
	json_object_set_new(rec, "func", string_or_null(loc->func));
	json_object_set_new(rec, "file", string_or_null(loc->file));
	json_object_set_new(rec, "line", loc->file ? json_integer(loc->line) : json_null());
	if (points_event_access(r, cur, &access)) {
		json_object_set_new(rec, "addr", hex(access.addr));
		json_object_set_new(rec, "size", json_integer(access.size));
		json_object_set_new(rec, "value", hex(access.value));
	}
	put_record(r->opt->trace_json, rec);
}

static void fine_event_text(struct run *r, struct tr_thread *th, const struct tr_step_event *fe,
			    char *buf, size_t len);

static void event_text(struct run *r, const struct current_event *cur, char *buf, size_t len)
{
	const struct tr_event *ev = cur->ev;
	const struct expr *atom = cur->matched;
	static const char *const names[] = {
	    [TR_EV_START] = "start",
	    [TR_EV_BREAK] = "breakpoint",
	    [TR_EV_WATCH] = "watch",
	    [TR_EV_STEP] = "step",
	    [TR_EV_SIGNAL] = "signal",
	    [TR_EV_EXIT] = "exit",
	    [TR_EV_PROCESS_EXIT] = "process-exit",
	    [TR_EV_FORK] = "fork",
	    [TR_EV_EXEC] = "exec",
	    [TR_EV_INTERRUPT] = "interrupt",
	    [TR_EV_SYSCALL] = "syscall",
	};

	if (cur->label)
		snprintf(buf, len, "%s", cur->label);
	else if (atom)
		expr_format(atom, buf, len);
	else
		snprintf(buf, len, "%s", names[ev->kind] ? names[ev->kind] : "event");
	/* which signal, unless the atom that matched says it already */
	if (ev->kind == TR_EV_SIGNAL && !strchr(buf, '(')) {
		if (sigabbrev_np(ev->signo))
			snprintf(buf + strlen(buf), len - strlen(buf), "(%s)",
				 sigabbrev_np(ev->signo));
		else if (ev->signo >= SIGRTMIN && ev->signo <= SIGRTMAX)
			snprintf(buf + strlen(buf), len - strlen(buf), "(RTMIN+%d)",
				 ev->signo - SIGRTMIN);
		else
			snprintf(buf + strlen(buf), len - strlen(buf), "(%d)", ev->signo);
	}
	if (atom && atom_of(atom)->describe)
		atom_of(atom)->describe(atom, ev, buf + strlen(buf), len - strlen(buf));
	/* read(X)/write(X) read the same whether a debug register or the
	 * stepper found the access (watchmode.c): X names the place.  The JSON
	 * trace has the address, size and value of both. */
	if (cur->fine && !(atom && atom->lhs))
		fine_event_text(r, ev->thread, cur->fine, buf + strlen(buf), len - strlen(buf));
}

/* A symbol's name as the trace shows functions: a C++ one demangled. */
static const char *shown_name(struct sym_space *syms, const char *symbol)
{
	struct sym_loc loc;
	uint64_t addr;

	if (sym_function(syms, symbol, &addr) == 0 &&
	    sym_describe_function(syms, addr, &loc) == 0 && loc.pretty)
		return loc.pretty;
	return symbol;
}

/* What an instruction-level event touched or called, after its atom. */
static void fine_event_text(struct run *r, struct tr_thread *th, const struct tr_step_event *fe,
			    char *buf, size_t len)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));
	struct sym_loc callee = {0};
	const char *name;

	switch (fe->kind) {
	case TR_STEP_ACCESS:
		snprintf(buf, len, " %#lx/%u = %#lx", (unsigned long)fe->addr, fe->size,
			 (unsigned long)fe->value);
		break;
	case TR_STEP_CALL:
		if (pc && pc->syms && sym_plt_function(pc->syms, fe->target, &name) == 0)
			snprintf(buf, len, " -> %s@plt", shown_name(pc->syms, name));
		else if (pc && pc->syms &&
			 sym_describe_function(pc->syms, fe->target, &callee) == 0 && callee.func)
			snprintf(buf, len, " -> %s", callee.pretty ? callee.pretty : callee.func);
		else
			snprintf(buf, len, " -> %#lx", (unsigned long)fe->target);
		break;
	case TR_STEP_SYSCALL:
		name = tracer_syscall_name(fe->sysno);
		snprintf(buf, len, " %s", name ? name : "?");
		break;
	case TR_STEP_NONE:
		break;
	}
}

/*
 * A search makes many runs and keeps the trace of few (the bugs).  Finding
 * the source line of a pc in a library can mean decompressing its debug
 * information, which costs more than the run, and even the event's text
 * (an atom formatted, a callee named, three copies of a string) was a
 * fifth of cctrace's own instructions on a short program.  So a deferred
 * trace keeps each event's ingredients, and makes its text and names its
 * place only if report_deferred_trace is called: the same text, since it
 * depends on nothing that changes during the run (the schedule's atoms,
 * the threads and the symbol tables all last until the run's end).
 */
static void keep_label(struct deferred_event *d, const char *label)
{
	size_t n = label ? strnlen(label, sizeof(d->label) - 1) : 0;

	d->has_label = label != NULL;
	memcpy(d->label, label ? label : "", n); /* event_text cuts it there too */
	d->label[n] = '\0';
}

static void defer_event(struct run *r, const struct current_event *cur)
{
	struct deferred_event *d;

	if (r->ndeferred == r->deferred_cap) {
		int cap = r->deferred_cap ? r->deferred_cap * 2 : 64;
		struct deferred_event *grown = realloc(r->deferred, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return;
		r->deferred = grown;
		r->deferred_cap = cap;
	}
	d = &r->deferred[r->ndeferred++];
	d->ms = run_elapsed_ms(r);
	d->pc = event_code_pc(cur);
	d->ev = *cur->ev;
	d->has_fine = cur->fine != NULL;
	if (cur->fine)
		d->fine = *cur->fine;
	d->atom = cur->matched;
	keep_label(d, cur->label);
	d->preempted = r->preempted;
	r->preempted = NULL;
}

/* A kept event's text, as report_event would have made it then. */
static void deferred_text(struct run *r, const struct deferred_event *d, char *buf, size_t len)
{
	const struct current_event cur = {.ev = &d->ev,
					  .fine = d->has_fine ? &d->fine : NULL,
					  .label = d->has_label ? d->label : NULL,
					  .matched = d->atom};

	event_text(r, &cur, buf, len);
}

/* Name the kept events: as trace lines on f, as data to hooks->trace_event
 * (either may be absent). */
void report_deferred_trace(struct run *r, FILE *f, const struct run_hooks *hooks)
{
	struct sym_loc loc;
	char what[160];
	int i;

	for (i = 0; i < r->ndeferred; i++) {
		struct deferred_event *d = &r->deferred[i];
		struct tr_thread *th = d->ev.thread;

		deferred_text(r, d, what, sizeof(what));
		describe_pc(r, th, d->pc, &loc);
		if (f)
			put_trace_line(r, f, d->ms, th, what, d->pc, &loc);
		if (hooks && hooks->trace_event)
			hooks->trace_event(
			    hooks->trace_ctx,
			    &(struct engine_trace_event){
				.ms = d->ms,
				.thread = tracer_thread_name(th),
				.var = run_var_of(r, th),
				.event = what,
				.func = loc.pretty,
				.file = loc.file,
				.line = loc.line,
				.preempted = d->preempted ? tracer_thread_name(d->preempted) : NULL,
			    });
	}
}

void report_event(struct run *r, const struct current_event *cur)
{
	const struct tr_event *ev = cur->ev;
	char what[160];
	struct sym_loc loc;

	if (!r->opt->trace && !r->opt->trace_json && !r->opt->trace_chrome && !r->interactive &&
	    !r->deferred_trace)
		return;
	/* a search's run: no text yet (a shell, which shows each thread's
	 * last event, never defers: only engine_run_once's runs do) */
	if (r->deferred_trace) {
		defer_event(r, cur);
		return;
	}
	event_text(r, cur, what, sizeof(what));
	snprintf(run_thread(r, ev->thread)->last_event,
		 sizeof(run_thread(r, ev->thread)->last_event), "%s", what);
	describe_pc(r, ev->thread, event_code_pc(cur), &loc);
	if (r->opt->trace)
		put_trace_line(r, r->opt->trace, run_elapsed_ms(r), ev->thread, what,
			       event_code_pc(cur), &loc);
	if (r->opt->trace_json)
		event_record(r, cur, what, &loc);
	if (r->opt->trace_chrome)
		chrome_note_event(r, ev, what, &loc);
}

/* A schedule's diagnostic found while it ran ("FILE:L:C: error: what",
 * its line and a caret) is the outcome's text: the outcome says "error"
 * already, and the caret line ends it. */
static void tidy_diagnostic(char *msg)
{
	char *word = (char *)lang_diag_error_word(msg);
	size_t len;

	if (word)
		memmove(word + 2, word + 9, strlen(word + 9) + 1);
	len = strlen(msg);
	while (len > 0 && msg[len - 1] == '\n')
		msg[--len] = '\0';
}

void report_outcome(struct run *r, enum engine_outcome o, const char *fmt, ...)
{
	va_list ap;
	FILE *f = r->opt->report;

	if (r->finished)
		return;
	r->finished = true;
	r->outcome = o;
	va_start(ap, fmt);
	if (vasprintf(&r->outcome_message, fmt, ap) < 0)
		r->outcome_message = NULL; /* out of memory: the JSON record says null */
	va_end(ap);
	if (r->outcome_message)
		tidy_diagnostic(r->outcome_message);
	if (!f)
		return;
	fprintf(f, "cctrace: %s: ", engine_outcome_name(o));
	if (r->outcome_message) {
		fputs(r->outcome_message, f);
	} else {
		va_start(ap, fmt);
		vfprintf(f, fmt, ap);
		va_end(ap);
	}
	fputc('\n', f);
}

void report_stack(struct run *r, struct tr_thread *th)
{
	report_stack_to(r, th, r->opt->report);
}

/* A report shows this many frames of a stack, and says how many more
 * there are (a recursion thousands deep). */
#define FRAMES_SHOWN  256
#define INLINED_SHOWN 16 /* inlined calls shown in one frame, innermost first */

void report_stack_to(struct run *r, struct tr_thread *th, FILE *f)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));
	struct sym_frame *frames = NULL;
	int n, i, shown = 0;

	if (!f || !pc || !pc->syms || !tracer_thread_held(th) || r->opt->brief)
		return;
	n = run_backtrace_all(r, th, &frames);
	/* a thread let go after a bug may be gone by the time it is read */
	fprintf(f, "  stack of %s (tid %d):%s\n", tracer_thread_name(th), tracer_thread_tid(th),
		n > 0			   ? ""
		: tracer_thread_exited(th) ? " gone, it exited meanwhile"
					   : " unreadable");
	for (i = 0; i < n && i < FRAMES_SHOWN; i++) {
		struct sym_loc line, *l = &frames[i].loc;
		uint64_t described = frames[i].pc - (frames[i].exact ? 0 : 1);
		struct sym_inline_frame inl[INLINED_SHOWN];
		int ninl, k;
		char where[512];

		/* Frames name functions only; the line is the call's.  The
		 * offset is the pc's shown, the return address's. */
		if (sym_describe(pc->syms, described, &line) == 0 && line.file) {
			l->file = line.file;
			l->line = line.line;
		}
		/* an optimised build's inlined calls, as gdb shows them: each
		 * at the line of the next one in, the frame at its call */
		ninl = sym_inlined_frames(pc->syms, described, inl, INLINED_SHOWN);
		for (k = 0; k < ninl; k++) {
			fprintf(f, "    #%-2d %#014lx %s (inlined)", shown++,
				(unsigned long)frames[i].pc, inl[k].func);
			if (k == 0 && l->file)
				fprintf(f, " (%s:%d)", l->file, l->line);
			else if (k > 0 && inl[k - 1].call_file)
				fprintf(f, " (%s:%d)", inl[k - 1].call_file, inl[k - 1].call_line);
			fputc('\n', f);
		}
		if (ninl > 0 && inl[ninl - 1].call_file) {
			l->file = inl[ninl - 1].call_file;
			l->line = inl[ninl - 1].call_line;
		}
		where_text(pc->syms, frames[i].pc, l, frames[i].pc - described, where,
			   sizeof(where));
		fprintf(f, "    #%-2d %#014lx %s", shown++, (unsigned long)frames[i].pc, where);
		if (l->file)
			fprintf(f, " (%s:%d)", l->file, l->line);
		else if (l->module && l->pretty)
			fprintf(f, " [%s]", l->module);
		fputc('\n', f);
	}
	if (n > FRAMES_SHOWN)
		fprintf(f, "    ... %d more frames\n", n - FRAMES_SHOWN);
	free(frames);
}

/* A thread that ended plainly and no schedule variable names: a server
 * that ran a thousand short workers would bury the threads that matter. */
static bool plainly_gone(struct run *r, struct tr_thread *th)
{
	const char *state = run_thread(r, th)->kernel_state;

	return tracer_thread_exited(th) && !run_var_of(r, th) &&
	       (!state[0] || strcmp(state, "exited") == 0);
}

/* Those threads in one line: how many, and the first and last names. */
static void report_gone(struct run *r, FILE *f)
{
	struct tr_thread *th, *first = NULL, *last = NULL;
	int n = 0;

	tr_for_each_thread(th, r->t) {
		if (!plainly_gone(r, th))
			continue;
		if (!first)
			first = th;
		last = th;
		n++;
	}
	if (n == 1)
		fprintf(f, "    %-8s      exited\n", tracer_thread_name(first));
	else if (n > 1)
		fprintf(f, "    %d other threads exited (%s ... %s)\n", n,
			tracer_thread_name(first), tracer_thread_name(last));
}

/* Where every thread is; running threads must have been stopped first. */
void report_threads(struct run *r)
{
	FILE *f = r->opt->report;
	struct tr_thread *th;
	struct proc_ctx *syms;
	struct sym_loc loc;
	char state[160], where[512];

	if (!f)
		return;
	fprintf(f, "  threads:\n");
	tr_for_each_thread(th, r->t) {
		const char *var = run_var_of(r, th);

		if (plainly_gone(r, th))
			continue;
		if (tracer_thread_exited(th)) {
			/* "exited", or how else it left (let go, --no-children) */
			fprintf(f, "    %-8s %-4s %s\n", tracer_thread_name(th), var ? var : "",
				run_thread(r, th)->kernel_state[0] ? run_thread(r, th)->kernel_state
								   : "exited");
			continue;
		}
		snprintf(state, sizeof(state), "%s",
			 run_thread(r, th)->kernel_state[0] ? run_thread(r, th)->kernel_state
			 : var				    ? "held"
			 : run_thread(r, th)->matched	    ? "matched, held"
							    : "free");
		if (!tracer_thread_held(th)) {
			/* one that could not be stopped (exiting, in vfork, in
			 * a job-control stop): no registers to say where */
			fprintf(f, "    %-8s %-4s %s, not stopped\n", tracer_thread_name(th),
				var ? var : "", state);
			continue;
		}
		describe_pc(r, th, tracer_code_pc(th), &loc);
		syms = run_proc(r, tracer_thread_process(th));
		where_text(syms ? syms->syms : NULL, tracer_code_pc(th), &loc, 0, where,
			   sizeof(where));
		fprintf(f, "    %-8s %-4s %-18s at %s", tracer_thread_name(th), var ? var : "",
			state, where);
		if (loc.file)
			fprintf(f, " (%s:%d)", loc.file, loc.line);
		fputc('\n', f);
	}
	report_gone(r, f);
}
