/*
 * fine.c: instruction-level events (read, write, call, syscall, and
 * read(X)/write(X) that the debug registers cannot take) for threads that
 * an unmodified binary gives no hook for.
 *
 * The mechanism, decoding ahead and running the thread at full speed to
 * the next instruction that can matter, is the tracer's stepper
 * (tracer/stepper.c, which explains it).  What is the schedule's stays
 * here: what a wait's predicate needs decoded (the plan), and the judging
 * of each event the stepper finds against the predicate.
 *
 * A predicate that names system calls and nothing else that needs decoding
 * costs less still: the thread is resumed with PTRACE_SYSCALL and stops at
 * system call entries only.
 */
#include "disasm/disasm.h"
#include "engine/internal.h"

/* What the atoms of e need decoded: each atom's row says (atoms.c). */
static void plan_expr(const struct run *r, const struct expr *e, struct atom_plan *pl)
{
	for (; e; e = e->lhs) { /* iterating: along lhs, a chain is as deep as it is long */
		if (e->kind == E_EVENT) {
			if (atom_of(e)->plan)
				atom_of(e)->plan(e, r, pl);
			return;
		}
		plan_expr(r, e->rhs, pl);
	}
}

/* Decide how the candidates of a wait on pred move. */
void fine_plan(struct run *r, const struct expr *pred)
{
	struct atom_plan pl = {0};

	plan_expr(r, pred, &pl);
	r->fine_want = pl.want;
	r->fine_syscalls = pl.syscalls && !pl.want;
	if (pl.want && pl.syscalls)
		r->fine_want |= DIS_WANT_SYSCALL;
	/* Once decoding, every read(X)/write(X) is matched by it, and X may
	 * be a local: stack accesses are looked at too. */
	if (pl.want && pl.lvalues)
		r->fine_want |= DIS_WANT_MEM | DIS_WANT_STACK_MEM;
	tracer_step_plan(r->t, r->fine_want, r->opt->single_step);
}

/* Judge one instruction-level event (a tr_step_judge); 1 if the predicate
 * holds, and then the thread's judged, judged_ev and judged_atom describe
 * it until the caller has reported it (fine_matched_event). */
static int judge(void *ctx, struct tr_thread *th, const struct tr_step_event *fe)
{
	struct run *r = ctx;
	struct thread_ctx *tc = run_thread(r, th);
	struct current_event cur = {.ev = &tc->judged_ev, .fine = &tc->judged};
	bool holds = false;

	tc->judged = *fe;
	tc->judged_ev = (struct tr_event){.kind = TR_EV_STEP, .thread = th, .pc = fe->pc};
	if (run_predicate_holds(r, &cur, &holds) < 0)
		return -1;
	if (holds && r->tap) { /* a profile: note it, and on */
		tap_note(r, &cur);
		holds = false;
	}
	tc->judged_atom = holds ? cur.matched : NULL;
	return holds;
}

/* The event the stepper last had judged true for th, for its report. */
struct current_event fine_matched_event(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);

	return (struct current_event){
	    .ev = &tc->judged_ev, .fine = &tc->judged, .matched = tc->judged_atom};
}

/*
 * Move a held candidate thread on to its next instruction-level event.
 * Returns 1 if an event there satisfied the predicate (the thread stays
 * held), 0 once it is running, -1 when the run is over.
 */
int fine_advance(struct run *r, struct tr_thread *th)
{
	return tracer_step(r->t, th, judge, r);
}

/*
 * A candidate under the stepper stopped.  Its pending accesses happened
 * before this stop and are judged before it.  Returns 1 if one satisfied
 * the predicate, -1 if the run is over.
 */
int fine_settle(struct run *r, struct tr_thread *th)
{
	return tracer_step_settle(r->t, th, judge, r);
}

void fine_unplant(struct run *r)
{
	tracer_step_unplant(r->t);
}

/* After an exec the stepper's breakpoints and scans describe code that is
 * gone. */
void fine_forget_process(struct run *r, struct tr_process *p)
{
	tracer_step_forget_process(r->t, p);
}
