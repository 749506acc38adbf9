/*
 * tap.c: the profile of typestate mode (search/typestate.c), as a hook on
 * an ordinary wait.
 *
 * A profile wants every call of some functions, in every process and
 * thread, with its arguments, return value, place and call stack, and the
 * program otherwise left alone.  The engine already does the hard parts
 * for a wait: resolving a function in the program and its libraries (PLT
 * stubs included) in each process, following forks and execs, keeping
 * return frames so that return(F) is seen, reporting crashes.  So the
 * profile is a schedule (`wait any enter(open) || return(open) || ...`),
 * and with run_hooks.tap set the wait hands each event that satisfies the
 * predicate here instead of matching it: the thread is described and
 * resumed, and the wait goes on until the program ends.  Nothing of the
 * schedule's semantics changes for anyone else.
 *
 * A profile of memory accesses adds `read || write` (limited to some
 * addresses) and `start`: the stepper's events come here too (fine.c's
 * judge), and the hook's answer to each event says whether its thread is
 * to be decoded from then on (run_move_candidate), for a budget of the
 * stepper's stops, so that the threads that do not matter, and the long
 * stretches between the events that do, run at full speed.
 */
#include "disasm/disasm.h"
#include "engine/internal.h"

#include "symbols/symbols.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct tap_read_ctx {
	struct tr_process *proc;
};

static int tap_read(const struct engine_tap_event *ev, uint64_t addr, void *buf, size_t len)
{
	const struct tap_read_ctx *c = ev->priv;

	return tracer_read(c->proc, addr, buf, len);
}

/* The function of the enter(F) / return(F) atom that matched; NULL if the
 * atom was another kind. */
static const char *atom_function(struct run *r, const struct expr *e, bool *is_return)
{
	if (!e || !e->atom || e->slot < 0 || e->slot >= r->pol->nfuncs)
		return NULL;
	if (strcmp(e->atom->name, "enter") == 0)
		*is_return = false;
	else if (strcmp(e->atom->name, "return") == 0)
		*is_return = true;
	else
		return NULL;
	return r->pol->funcs[e->slot];
}

/* The call stack from the caller outwards: frame 0 of the unwind is the
 * called function itself at an entry, so it is skipped there (and kept
 * for an access, which is in it). */
static int tap_stack(struct run *r, struct tr_thread *th, bool skip_callee,
		     struct engine_tap_frame *out, int max)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));
	struct sym_frame frames[MAX_FRAMES];
	int n, i, k = 0;

	if (max <= 0 || !pc || !pc->syms)
		return 0;
	n = run_backtrace(r, th, frames, MAX_FRAMES);
	for (i = skip_callee ? 1 : 0; i < n && k < max; i++) {
		struct sym_loc loc;

		memset(&loc, 0, sizeof(loc));
		/* An outer frame's pc is a return address: describe the call. */
		sym_describe(pc->syms, i ? frames[i].pc - 1 : frames[i].pc, &loc);
		out[k++] =
		    (struct engine_tap_frame){frames[i].pc, loc.func, loc.pretty, loc.func_offset,
					      loc.file,	    loc.line, loc.module};
	}
	return k;
}

/* The line of the first alternative of r->pred that holds at cur, walking
 * the chain of || along its left spine (iteratively: a chain may be as
 * long as the file) and keeping the earliest that holds; 0 if none is
 * told apart (an evaluation failed). */
static int tap_alternative_line(struct run *r, const struct current_event *cur)
{
	struct current_event probe = *cur;
	char err[256];
	struct eval_ctx c = points_event_ctx(r, &probe, err, sizeof(err));
	const struct expr *e = r->pred;
	int line = 0;
	int64_t v;

	for (;; e = e->lhs) {
		const struct expr *alt = e->kind == E_BINARY && e->op == T_OROR ? e->rhs : e;

		probe.matched = NULL;
		if (eval_int(&c, alt, &v) == 0 && v)
			line = alt->loc.line;
		if (alt == e)
			return line;
	}
}

/* The kind of event cur is, and for a call its function; false if the
 * atom that matched is none the tap reports. */
static bool tap_kind(struct run *r, const struct current_event *cur, enum engine_tap_kind *kind,
		     const char **func, bool *is_return)
{
	*func = NULL;
	*is_return = false;
	if (cur->fine && cur->fine->kind == TR_STEP_SYSCALL) {
		*kind = ENGINE_TAP_SYSCALL;
		return true;
	}
	if (cur->fine) {
		*kind = ENGINE_TAP_ACCESS;
		return cur->fine->kind == TR_STEP_ACCESS;
	}
	if (cur->ev->kind == TR_EV_SYSCALL) {
		*kind = ENGINE_TAP_SYSCALL;
		return true;
	}
	if (cur->ev->kind == TR_EV_START) {
		*kind = ENGINE_TAP_START;
		return true;
	}
	*kind = ENGINE_TAP_CALL;
	*func = atom_function(r, cur->matched, is_return);
	return *func != NULL;
}

void tap_note(struct run *r, const struct current_event *cur)
{
	struct tr_thread *th = cur->ev->thread;
	const struct user_regs_struct *regs = tracer_regs(th);
	struct engine_tap_frame frames[MAX_FRAMES];
	struct tap_read_ctx rc = {tracer_thread_process(th)};
	struct engine_tap_event te;
	enum engine_tap_kind kind;
	bool is_return;
	const char *func;
	uint64_t ret = 0;
	int max;

	assert(r->tap && r->tap->tap);
	max = r->tap->tap_frames < MAX_FRAMES ? r->tap->tap_frames : MAX_FRAMES;
	if (!tap_kind(r, cur, &kind, &func, &is_return) || !regs)
		return;
	if (kind == ENGINE_TAP_CALL && !is_return)
		tracer_read(rc.proc, regs->rsp, &ret, sizeof(ret));
	te = (struct engine_tap_event){
	    .kind = kind,
	    .thread = tracer_thread_name(th),
	    .func = func,
	    .is_return = is_return,
	    .args = {regs->rdi, regs->rsi, regs->rdx, regs->rcx, regs->r8, regs->r9},
	    .retval = regs->rax,
	    .pc = cur->fine ? cur->fine->pc : regs->rip,
	    .caller = is_return ? regs->rip : ret,
	    .tls = regs->fs_base,
	    .ms = run_elapsed_ms(r),
	    .frames = frames,
	    .read = tap_read,
	    .priv = &rc,
	};
	if (kind == ENGINE_TAP_SYSCALL) { /* the kernel's registers for them */
		te.sysno = cur->fine ? cur->fine->sysno : cur->ev->sysno;
		te.args[3] = regs->r10;
	} else if (cur->fine) {
		te.addr = cur->fine->addr;
		te.size = cur->fine->span ? cur->fine->span : cur->fine->size;
		te.write = cur->fine->rw & DIS_WRITE;
	}
	te.nframes = kind == ENGINE_TAP_START
			 ? 0
			 : tap_stack(r, th, kind == ENGINE_TAP_CALL && !is_return, frames, max);
	te.line = kind == ENGINE_TAP_CALL ? tap_alternative_line(r, cur) : 0;
	run_thread(r, th)->tap_stepped = r->tap->tap(r->tap->tap_ctx, &te);
	run_thread(r, th)->tap_steps_left = r->tap->tap_step_budget;
}

/* Is th, a candidate of a profile's decoding wait, to be decoded at this
 * move?  Each move is one of the stepper's stops: the budget counts them. */
bool tap_decodes(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);

	if (tc->tap_stepped && r->tap->tap_step_budget && tc->tap_steps_left-- <= 0)
		tc->tap_stepped = false;
	/* The stepper's breakpoints it leaves behind (a hot loop's) would
	 * stop it, and every other free thread, at each pass. */
	if (!tc->tap_stepped)
		tracer_step_unplant_idle(r->t);
	return tc->tap_stepped;
}

long engine_syscall_number(const char *name)
{
	return tracer_syscall_number(name);
}

const char *engine_syscall_name(long nr)
{
	return tracer_syscall_name(nr);
}

int engine_functions_present(const char *program, const char *const *names, int n, bool *present,
			     uint64_t *addrs, char *err, size_t errlen)
{
	struct sym_space *syms = sym_open_program(program, err, errlen);
	uint64_t addr;
	int i;

	if (!syms)
		return -1;
	for (i = 0; i < n; i++) {
		present[i] = sym_function(syms, names[i], &addr) == 0;
		if (addrs)
			addrs[i] = present[i] ? addr : 0;
	}
	sym_close(syms);
	return 0;
}
