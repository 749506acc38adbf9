/*
 * atoms.c: the event atoms, one row each.
 *
 * An atom (start, enter(F), read(X), syscall(N), ...) has a syntax, which
 * the language needs, and a meaning at run time, which only the engine
 * has: which breakpoints or watchpoints make the tracer stop for it, what
 * the instruction-level stepper must decode for it, and which events
 * satisfy it.  Both live in one row here, so that a new atom is one row
 * (plus its test) and no switch elsewhere names atoms.
 *
 * lang cannot depend on the engine, so the language learns the atoms from
 * the table it is handed: each row begins with a struct atom_syntax (name,
 * how the argument is written, how a named argument resolves), the parser
 * is given the rows as a struct atom_table (engine_atoms), and an atom
 * expression points back at its row's syntax.  atom_of turns that pointer
 * back into the row: the syntax is the row's first member.  What lang does
 * with an argument depends only on its kind (enum atom_arg): a function is
 * resolved against the symbols, a location against the line tables, an
 * lvalue typed and counted against the debug registers, a signal parsed by
 * name; a name (a system call) is resolved by the row's own resolve, which
 * is how the language gets system call numbers without knowing the tracer.
 *
 * A row judges the event it is handed (struct current_event: the tracer's
 * event, the stepper's decoded one if any, whether the thread is blocked),
 * never the run's state: the event loop decides what the current event
 * is, and points_judge hands it to the evaluation through eval_ctx.event.
 *
 * The fields a predicate may read (addr, size, value, func, line) belong to
 * every event, not to an atom: points.c computes them from the event at
 * hand.
 */
#include "disasm/disasm.h"
#include "engine/internal.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

/* return(F): F's entry, where its return address is noted. */
static int arm_function(struct run *r, struct tr_process *p, const struct expr *e, int pass)
{
	return pass == 0 ? points_arm_breakpoint(r, p, points_func_addr(r, p, e->slot)) : 0;
}

/* enter(F): F's entry and its inlined copies' (which no call reaches and
 * no return leaves: enter alone stops there). */
static int arm_entry(struct run *r, struct tr_process *p, const struct expr *e, int pass)
{
	struct loc_addrs *la;
	size_t i;

	if (pass != 0)
		return 0;
	if (arm_function(r, p, e, pass) < 0)
		return -1;
	la = points_func_inlined(r, p, e->slot);
	for (i = 0; la && i < la->n; i++)
		if (points_arm_breakpoint(r, p, la->addrs[i]) < 0)
			return -1;
	return 0;
}

static int arm_location(struct run *r, struct tr_process *p, const struct expr *e, int pass)
{
	struct loc_addrs *la = pass == 0 ? points_loc_addrs(r, p, e->slot) : NULL;
	char what[320];
	size_t i;

	/* at(F+0xOFF) is written by hand too: an offset inside an
	 * instruction would plant a byte in the middle of it */
	if (la && la->n && e->ival == 0 && !la->checked) {
		lang_at_text(what, sizeof(what), e->name);
		if (points_check_insn_start(r, p, la->addrs[0], what) < 0)
			return -1;
		la->checked = true;
	}
	for (i = 0; la && i < la->n; i++)
		if (points_arm_breakpoint(r, p, la->addrs[i]) < 0)
			return -1;
	return 0;
}

/* Read watches go first (pass 0) so that a variable both read and written
 * gets one access watchpoint, not a write one that a read would slip past. */
static int arm_read(struct run *r, struct tr_process *p, const struct expr *e, int pass)
{
	return pass == 0 ? points_arm_access(r, p, e) : 0;
}

static int arm_write(struct run *r, struct tr_process *p, const struct expr *e, int pass)
{
	return pass == 1 ? points_arm_access(r, p, e) : 0;
}

static void plan_access(const struct expr *e, const struct run *r, struct atom_plan *pl)
{
	if (!e->lhs)
		pl->want |= DIS_WANT_MEM | (r->opt->include_stack ? DIS_WANT_STACK_MEM : 0);
	else if (e->ival == WATCH_BY_DECODING || r->opt->watchpoints == WATCHPOINTS_SW)
		pl->want |= DIS_WANT_MEM;
	pl->lvalues |= e->lhs != NULL;
}

static void plan_call(const struct expr *e, const struct run *r, struct atom_plan *pl)
{
	(void)e, (void)r;
	pl->want |= DIS_WANT_CALL;
}

static void plan_syscall(const struct expr *e, const struct run *r, struct atom_plan *pl)
{
	(void)e, (void)r;
	pl->syscalls = true;
}

static bool match_start(struct run *r, const struct expr *e, const struct current_event *at)
{
	(void)r, (void)e;
	return at->ev->kind == TR_EV_START;
}

static bool match_exit(struct run *r, const struct expr *e, const struct current_event *at)
{
	(void)r, (void)e;
	return at->ev->kind == TR_EV_EXIT;
}

static bool match_blocked(struct run *r, const struct expr *e, const struct current_event *at)
{
	(void)r, (void)e;
	return at->blocked;
}

static bool match_fork(struct run *r, const struct expr *e, const struct current_event *at)
{
	(void)r, (void)e;
	return at->ev->kind == TR_EV_FORK;
}

static bool match_exec(struct run *r, const struct expr *e, const struct current_event *at)
{
	(void)r, (void)e;
	return at->ev->kind == TR_EV_EXEC;
}

static bool match_signal(struct run *r, const struct expr *e, const struct current_event *at)
{
	(void)r;
	return at->ev->kind == TR_EV_SIGNAL && (e->ival == 0 || e->ival == at->ev->signo);
}

static bool match_enter(struct run *r, const struct expr *e, const struct current_event *at)
{
	return at->ev->kind == TR_EV_BREAK &&
	       points_enters_func(r, tracer_thread_process(at->ev->thread), e->slot, at->ev->addr);
}

static bool match_return(struct run *r, const struct expr *e, const struct current_event *at)
{
	return at->ev->kind == TR_EV_BREAK &&
	       run_thread(r, at->ev->thread)->returned_func == e->slot;
}

static bool match_location(struct run *r, const struct expr *e, const struct current_event *at)
{
	struct loc_addrs *la;
	size_t i;

	if (at->ev->kind != TR_EV_BREAK)
		return false;
	la = points_loc_addrs(r, tracer_thread_process(at->ev->thread), e->slot);
	for (i = 0; la && i < la->n; i++)
		if (la->addrs[i] == at->ev->addr)
			return true;
	return false;
}

/* A debug register of this atom fired (bare read/write have none). */
static bool match_watch(struct run *r, const struct expr *e, const struct current_event *at)
{
	const struct tr_event *ev = at->ev;
	int i;

	if (!e->lhs || ev->kind != TR_EV_WATCH)
		return false;
	for (i = 0; i < r->nwatches; i++) {
		const struct armed_watch *w = &r->watches[i];

		if (w->atom == e && w->proc == tracer_thread_process(ev->thread) &&
		    w->addr == ev->addr && (!w->thread || w->thread == ev->thread))
			return ev->access == 0 || (ev->access & atom_of(e)->access);
	}
	return false;
}

static bool match_syscall(struct run *r, const struct expr *e, const struct current_event *at)
{
	(void)r;
	return at->ev->kind == TR_EV_SYSCALL && (e->ival < 0 || e->ival == at->ev->sysno);
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* An access the stepper decoded: any (bare), or one that touches X. */
static bool match_fine_access(struct run *r, const struct expr *e, const struct current_event *at)
{
	const struct tr_step_event *fe = at->fine;
	struct tr_process *p = tracer_thread_process(at->ev->thread);
	int i;

	if (fe->kind != TR_STEP_ACCESS || !(fe->rw & atom_of(e)->access))
		return false;
	if (!e->lhs)
		return !fe->stack || r->opt->include_stack;
	for (i = 0; i < r->ndecoded; i++) {
		const struct decoded_lvalue *d = &r->decoded[i];

		if (d->atom == e && d->proc == p && (!d->thread || d->thread == at->ev->thread) &&
		    overlaps(fe->addr, fe->span ? fe->span : fe->size, d->addr, d->size))
			return true;
	}
	return false;
}

/* A call to F directly, or through F's PLT stub. */
static bool calls_function(struct run *r, struct tr_process *p, uint64_t target, int func)
{
	struct proc_ctx *pc = run_proc(r, p);
	const char *name;

	if (!target)
		return false;
	if (target == points_func_addr(r, p, func))
		return true;
	return pc && pc->syms && sym_plt_function(pc->syms, target, &name) == 0 &&
	       strcmp(name, r->pol->funcs[func]) == 0;
}

static bool match_fine_call(struct run *r, const struct expr *e, const struct current_event *at)
{
	return at->fine->kind == TR_STEP_CALL &&
	       (!e->name || calls_function(r, tracer_thread_process(at->ev->thread),
					   at->fine->target, e->slot));
}

static bool match_fine_syscall(struct run *r, const struct expr *e, const struct current_event *at)
{
	(void)r;
	return at->fine->kind == TR_STEP_SYSCALL && (e->ival < 0 || e->ival == at->fine->sysno);
}

/* A bare syscall says which one it was. */
static void describe_syscall(const struct expr *e, const struct tr_event *ev, char *buf, size_t len)
{
	const char *name = tracer_syscall_name(ev->sysno);

	if (ev->kind == TR_EV_SYSCALL && !e->name)
		snprintf(buf, len, " %s", name ? name : "?");
}

struct nearest_syscall {
	const char *typed;
	const char *best;
	unsigned best_d;
};

static void consider_syscall(const char *name, void *ctx)
{
	struct nearest_syscall *n = ctx;
	unsigned d = sym_edit_distance(n->typed, strlen(n->typed), name, strlen(name));

	if (d < n->best_d) {
		n->best_d = d;
		n->best = name;
	}
}

static int64_t syscall_number(const char *name, char *why, size_t whylen)
{
	long n = tracer_syscall_number(name);
	struct nearest_syscall near = {name, NULL, strlen(name) <= 4 ? 2 : 3};

	if (n >= 0)
		return n;
	tracer_each_syscall(consider_syscall, &near);
	if (near.best)
		snprintf(why, whylen, "unknown system call '%s'; did you mean '%s'?", name,
			 near.best);
	else
		snprintf(why, whylen,
			 "unknown system call '%s' (names are those of x86-64 Linux, "
			 "e.g. futex, read, write, close, accept)",
			 name);
	return n;
}

/* The order is the one messages list them in ("events are enter, return, ..."). */
static const struct atom atoms[] = {
    {.syntax = {"start", ATOM_ARG_NONE}, .match = match_start},
    {.syntax = {"exit", ATOM_ARG_NONE}, .match = match_exit},
    {.syntax = {"enter", ATOM_ARG_FUNCTION}, .arm = arm_entry, .match = match_enter},
    {.syntax = {"return", ATOM_ARG_FUNCTION},
     .arm = arm_function,
     .match = match_return,
     .tracks_returns = true},
    {.syntax = {"at", ATOM_ARG_LOCATION}, .arm = arm_location, .match = match_location},
    {.syntax = {"read", ATOM_ARG_LVALUE, .arg_optional = true},
     .plan = plan_access,
     .arm = arm_read,
     .match = match_watch,
     .match_fine = match_fine_access,
     .access = DIS_READ},
    {.syntax = {"write", ATOM_ARG_LVALUE, .arg_optional = true},
     .plan = plan_access,
     .arm = arm_write,
     .match = match_watch,
     .match_fine = match_fine_access,
     .access = DIS_WRITE},
    {.syntax = {"call", ATOM_ARG_FUNCTION, .arg_optional = true},
     .plan = plan_call,
     .match_fine = match_fine_call},
    {.syntax = {"syscall", ATOM_ARG_NAME, .arg_optional = true,
		.arg_what = "a system call name, e.g. futex", .resolve = syscall_number},
     .plan = plan_syscall,
     .match = match_syscall,
     .match_fine = match_fine_syscall,
     .describe = describe_syscall},
    {.syntax = {"signal", ATOM_ARG_SIGNAL, .arg_optional = true}, .match = match_signal},
    {.syntax = {"blocked", ATOM_ARG_NONE}, .match = match_blocked},
    {.syntax = {"fork", ATOM_ARG_NONE}, .match = match_fork},
    {.syntax = {"exec", ATOM_ARG_NONE}, .match = match_exec},
};

static const struct atom_table table = {&atoms[0].syntax, sizeof(atoms[0]),
					sizeof(atoms) / sizeof(atoms[0])};

const struct atom_table *engine_atoms(void)
{
	return &table;
}

const struct atom *atom_of(const struct expr *e)
{
	const struct atom *a = (const struct atom *)(const void *)e->atom;

	assert(e->kind == E_EVENT);
	assert(a >= atoms && a < atoms + sizeof(atoms) / sizeof(atoms[0]));
	return a;
}

const struct atom_syntax *atoms_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(atoms) / sizeof(atoms[0]); i++)
		if (strcmp(atoms[i].syntax.name, name) == 0)
			return &atoms[i].syntax;
	return NULL;
}

bool atom_matches(struct run *r, const struct expr *e, const struct current_event *at)
{
	const struct atom *a = atom_of(e);

	if (at->fine)
		return a->match_fine && a->match_fine(r, e, at);
	return a->match && a->match(r, e, at);
}
