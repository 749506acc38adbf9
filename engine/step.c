/*
 * step.c: moving one thread by machine instructions, source lines and
 * frames, and binding threads by name: the statements the shell records.
 *
 * All of them drive a single bound thread while every other stop is handled
 * as during a wait (free threads run on, crashes and the program's end are
 * reported).  `step` single-steps; `next` single-steps within the current
 * source line but runs over calls at full speed, with a breakpoint at the
 * return address and a check of the stack pointer so that recursion does
 * not stop it early, and over a signal handler a step enters; `finish`
 * runs to the caller's return address the same way.  `hold` and `thread T = p1.t3` stop a running
 * thread where it is.
 *
 * A frame can also be left without returning: longjmp lands at a setjmp's
 * return point above it, and a C++ exception in a catch block above it.  A
 * run to a return address therefore breaks at the longjmp functions too,
 * and steps the thread through the jump to where it lands, and at
 * __cxa_begin_catch, which every catch block calls first, from the frame
 * that catches.  When that frame is the one the run waits to return to,
 * or above it, the frame the run waited on is gone: the thread is held
 * where it landed, or in the catch block.  (gdb uses glibc's and libgcc's
 * SystemTap probes for this; these are dynamic symbols, which every libc
 * and libstdc++ exports.)
 */
#include "disasm/disasm.h"
#include "engine/internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEXT_MAX_STEPS 1000000
/* A longjmp runs some dozens of instructions; past this many steps the
 * thread is let run instead (it is somewhere a jump does not explain). */
#define LONGJMP_MAX_STEPS 100000
/* A signal frame is far bigger (siginfo, ucontext and the FPU state): a
 * step that moves the stack down this much into another function entered
 * a handler. */
#define SIGNAL_FRAME_MIN 256

enum drive_mode { DRIVE_STEP, DRIVE_RUN, DRIVE_ALREADY_MOVING };

/* What a stop_test decides at each stop of the driven thread. */
enum { STOP_FAILED = -1, STOP_GO_ON = 0, STOP_HOLD = 1, STOP_STEP_ONCE = 2 };
typedef int (*stop_test)(struct run *r, struct tr_thread *th, const struct tr_event *ev, void *ctx);

static void move(struct run *r, struct tr_thread *th, enum drive_mode mode)
{
	if (mode == DRIVE_STEP)
		tracer_singlestep(th);
	else if (mode == DRIVE_RUN)
		run_resume(r, th);
}

/* The thread being driven, and how (a request of the event loop's). */
struct drive_state {
	const struct stmt *s;
	struct tr_thread *th;
	enum drive_mode mode;
	stop_test test;
	void *ctx;
	int64_t started, deadline; /* ms */
};

static const char *drive_during(struct run *r, struct loop_request *req, char *buf, size_t len)
{
	(void)r;
	(void)req;
	snprintf(buf, len, "while a thread was being stepped");
	return buf;
}

/* The statement's timeout, or a tick to see whether the thread sleeps in
 * the kernel for good, as a `run` does (blocked.c): on a lock a held
 * thread owns, the step ends at once with why, not at the timeout. */
static enum loop_verdict drive_deadline(struct run *r, struct loop_request *req)
{
	struct drive_state *ds = req->ctx;
	bool again = false;
	enum flow flow;

	if (req->deadline_ms >= ds->deadline) {
		run_timed_out(r, ds->s, 0, 0);
		return LOOP_STOP;
	}
	if (blocked_targets(r, &ds->th, 1)) {
		flow = blocked_end(r, ds->s, &ds->th, 1, &again);
		if (!again)
			return flow == FLOW_STOP ? LOOP_STOP : LOOP_DONE;
		/* woken meanwhile: on, unless it woke into an event of its own */
		if (tracer_thread_held(ds->th) && !tracer_event_pending(ds->th))
			move(r, ds->th, ds->mode == DRIVE_ALREADY_MOVING ? DRIVE_RUN : ds->mode);
	}
	req->deadline_ms = blocked_poll_deadline(r, true, ds->started, ds->deadline);
	return LOOP_AGAIN;
}

static enum loop_verdict driven_stop(struct run *r, const struct tr_event *ev,
				     struct loop_request *req)
{
	struct drive_state *ds = req->ctx;
	char where[256];
	int rc;

	if (ev->thread != ds->th)
		return loop_resume_free(r, ev, req);
	/* A new program: where it starts is as far as a step can go (a
	 * return address in the old image will never be reached). */
	if (ev->kind == TR_EV_EXEC)
		return LOOP_DONE;
	if (ev->kind == TR_EV_EXIT) {
		run_where(r, ds->s, where, sizeof(where));
		report_outcome(r, OUTCOME_UNREALIZABLE, "%s exited while being moved (%s)",
			       tracer_thread_name(ds->th), where);
		/* it ends: held at its exit, a process's last thread kept its
		 * parent waiting for it in the shell's next commands */
		run_resume(r, ds->th);
		return LOOP_STOP;
	}
	rc = ds->test(r, ds->th, ev, ds->ctx);
	if (rc == STOP_FAILED)
		return LOOP_STOP;
	if (rc == STOP_HOLD)
		return LOOP_DONE;
	if (rc == STOP_STEP_ONCE)
		move(r, ds->th, DRIVE_STEP);
	else
		move(r, ds->th, ds->mode == DRIVE_ALREADY_MOVING ? DRIVE_RUN : ds->mode);
	return LOOP_AGAIN;
}

/* Moves th until test holds it, or until deadline (0: the statement's
 * timeout from now). */
static enum flow drive_until(struct run *r, const struct stmt *s, struct tr_thread *th,
			     enum drive_mode mode, stop_test test, void *ctx, int64_t deadline)
{
	int64_t now = tracer_now_ms();
	struct drive_state ds = {
	    s, th, mode, test, ctx, now, deadline ? deadline : now + r->timeout_ms};
	struct loop_request req = {.deadline_ms = blocked_poll_deadline(r, true, now, ds.deadline),
				   .on_event = driven_stop,
				   .on_deadline = drive_deadline,
				   .during = drive_during,
				   .ctx = &ds};

	move(r, th, mode);
	run_release_free(r);
	return loop_run(r, &req);
}

static enum flow drive(struct run *r, const struct stmt *s, struct tr_thread *th,
		       enum drive_mode mode, stop_test test, void *ctx)
{
	return drive_until(r, s, th, mode, test, ctx, 0);
}

static struct tr_thread *held_bound(struct run *r, const struct stmt *s, int i)
{
	struct tr_thread *th = run_binding(r, s->names[i]);
	char where[256];

	run_where(r, s, where, sizeof(where));
	if (!th || tracer_thread_exited(th)) {
		report_outcome(r, OUTCOME_UNREALIZABLE, "thread %s is %s (%s)", s->names[i],
			       th ? "gone" : "not bound", where);
		return NULL;
	}
	if (!tracer_thread_held(th)) {
		report_outcome(r, OUTCOME_ERROR, "thread %s (%s) is running; hold it first (%s)",
			       s->names[i], tracer_thread_name(th), where);
		return NULL;
	}
	return th;
}

static void report_here(struct run *r, struct tr_thread *th, const char *label)
{
	struct tr_event ev = {.kind = TR_EV_STEP, .thread = th, .pc = tracer_regs(th)->rip};

	report_event(r, &(struct current_event){.ev = &ev, .label = label});
}

/* --- step --- */

static int count_steps(struct run *r, struct tr_thread *th, const struct tr_event *ev, void *ctx)
{
	int64_t *left = ctx;

	(void)r;
	(void)th;
	return ev->kind == TR_EV_STEP && --*left == 0;
}

enum flow exec_step(struct run *r, const struct stmt *s)
{
	struct tr_thread *th = held_bound(r, s, 0);
	int64_t left = s->count > 0 ? s->count : 1;
	char label[32];

	if (!th)
		return FLOW_STOP;
	if (drive(r, s, th, DRIVE_STEP, count_steps, &left) == FLOW_STOP)
		return FLOW_STOP;
	snprintf(label, sizeof(label), "step %ld", (long)(s->count > 0 ? s->count : 1));
	report_here(r, th, label);
	return FLOW_NEXT;
}

/* --- running to a return address --- */

struct return_point {
	uint64_t addr;
	uint64_t sp; /* rsp once returned */
};

enum left_by { LEFT_BY_RETURN, LEFT_BY_LONGJMP, LEFT_BY_THROW };

static const char *const longjmp_names[] = {"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"};

struct return_run {
	struct return_point want; /* the return the run waits for */
	struct return_point at;	  /* where it holds the thread: want, or a catch block */
	enum left_by left_by;
	uint64_t longjmps[sizeof(longjmp_names) / sizeof(longjmp_names[0])];
	uint64_t begin_catch;
	uint64_t planted[8]; /* breakpoints to take out: at most want, catch, longjmps */
	int n_planted;
	/* stepping through a longjmp */
	bool jumping, landing;
	uint64_t jump_sp;
	long jump_steps;
};

static bool is_longjmp(const struct return_run *rr, uint64_t addr)
{
	size_t i;

	for (i = 0; i < sizeof(rr->longjmps) / sizeof(rr->longjmps[0]); i++)
		if (rr->longjmps[i] && rr->longjmps[i] == addr)
			return true;
	return false;
}

static int plant(struct run *r, struct tr_thread *th, struct return_run *rr, uint64_t addr)
{
	char err[256];
	int i;

	for (i = 0; i < rr->n_planted; i++)
		if (rr->planted[i] == addr)
			return 0;
	assert(rr->n_planted < (int)(sizeof(rr->planted) / sizeof(rr->planted[0])));
	if (tracer_break_insert(tracer_thread_process(th), addr, err, sizeof(err)) < 0) {
		report_outcome(r, OUTCOME_ERROR, "cannot plant a breakpoint: %s", err);
		return -1;
	}
	rr->planted[rr->n_planted++] = addr;
	return 0;
}

/* One step of the thread through a longjmp: when the instruction it is at
 * is the indirect jmp that follows the stack pointer's move above the
 * longjmp's own frame, the next step lands. */
static int follow_jump(struct return_run *rr, struct tr_thread *th)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	uint8_t code[DIS_MAX_INSN];
	struct dis_insn insn;

	if (rr->landing) {
		rr->jumping = rr->landing = false;
		if (regs->rsp < rr->want.sp)
			return STOP_GO_ON; /* landed below the frame waited for */
		rr->left_by = LEFT_BY_LONGJMP;
		return STOP_HOLD;
	}
	if (++rr->jump_steps > LONGJMP_MAX_STEPS) {
		rr->jumping = false;
		return STOP_GO_ON;
	}
	if (tracer_decode_at(tracer_thread_process(th), regs->rip, code, &insn) == 0 &&
	    insn.kind == DIS_INDIRECT && !(insn.flags & DIS_F_CALL) && regs->rsp > rr->jump_sp)
		rr->landing = true;
	return STOP_STEP_ONCE;
}

/* A catch block at or above the frame waited for: on to it, past
 * __cxa_begin_catch's return. */
static int caught_above(struct run *r, struct tr_thread *th, struct return_run *rr)
{
	uint64_t sp = tracer_regs(th)->rsp, ret;

	if (tracer_read(tracer_thread_process(th), sp, &ret, sizeof(ret)) < 0)
		return STOP_GO_ON;
	if (plant(r, th, rr, ret) < 0)
		return STOP_FAILED;
	rr->at = (struct return_point){ret, sp + 8};
	rr->left_by = LEFT_BY_THROW;
	return STOP_GO_ON;
}

static int returned(struct run *r, struct tr_thread *th, const struct tr_event *ev, void *ctx)
{
	struct return_run *rr = ctx;
	uint64_t sp = tracer_regs(th)->rsp;

	if (rr->jumping)
		return follow_jump(rr, th);
	if (ev->kind != TR_EV_BREAK)
		return STOP_GO_ON;
	if (ev->addr == rr->at.addr && sp == rr->at.sp)
		return STOP_HOLD;
	if (is_longjmp(rr, ev->addr)) {
		rr->jumping = true;
		rr->landing = false;
		rr->jump_sp = sp;
		rr->jump_steps = 0;
		return follow_jump(rr, th);
	}
	/* the return address is pushed: the catching frame's sp is 8 above */
	if (ev->addr == rr->begin_catch && rr->left_by == LEFT_BY_RETURN && sp + 8 >= rr->want.sp)
		return caught_above(r, th, rr);
	return STOP_GO_ON;
}

/* The longjmp functions and __cxa_begin_catch, where they are linked. */
static int plant_escapes(struct run *r, struct tr_thread *th, struct return_run *rr)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));
	size_t i;

	if (!pc || !pc->syms)
		return 0;
	for (i = 0; i < sizeof(longjmp_names) / sizeof(longjmp_names[0]); i++)
		if (sym_function(pc->syms, longjmp_names[i], &rr->longjmps[i]) == 0 &&
		    plant(r, th, rr, rr->longjmps[i]) < 0)
			return -1;
	if (sym_function(pc->syms, "__cxa_begin_catch", &rr->begin_catch) == 0 &&
	    plant(r, th, rr, rr->begin_catch) < 0)
		return -1;
	return 0;
}

/* Runs th until it returns to want, or leaves that frame by a longjmp or a
 * throw; *left_by says which. */
static enum flow run_to_return(struct run *r, const struct stmt *s, struct tr_thread *th,
			       struct return_point want, enum left_by *left_by, int64_t deadline)
{
	struct return_run rr = {.want = want, .at = want};
	enum flow flow = FLOW_STOP;
	int i;

	if (plant(r, th, &rr, want.addr) == 0 && plant_escapes(r, th, &rr) == 0)
		flow = drive_until(r, s, th, DRIVE_RUN, returned, &rr, deadline);
	if (tracer_process_alive(tracer_thread_process(th)))
		for (i = 0; i < rr.n_planted; i++)
			tracer_break_remove(tracer_thread_process(th), rr.planted[i]);
	if (left_by)
		*left_by = rr.left_by;
	return flow;
}

enum flow exec_finish(struct run *r, const struct stmt *s)
{
	struct tr_thread *th = held_bound(r, s, 0);
	struct proc_ctx *pc = th ? run_proc(r, tracer_thread_process(th)) : NULL;
	static const char *const how[] = {[LEFT_BY_RETURN] = "return(%s%s%s)",
					  [LEFT_BY_LONGJMP] = "longjmp out of %s%s%s",
					  [LEFT_BY_THROW] = "throw out of %s%s%s"};
	struct sym_frame frames[2];
	enum left_by left_by;
	const char *name, *quote;
	char label[600], where[256];

	if (!th)
		return FLOW_STOP;
	if (!pc || !pc->syms || run_backtrace(r, th, frames, 2) < 2) {
		run_where(r, s, where, sizeof(where));
		report_outcome(r, OUTCOME_ERROR, "cannot find the caller of %s's frame (%s)",
			       tracer_thread_name(th), where);
		return FLOW_STOP;
	}
	if (run_to_return(r, s, th, (struct return_point){frames[1].pc, frames[1].sp}, &left_by,
			  0) == FLOW_STOP)
		return FLOW_STOP;
	name = frames[0].loc.pretty ? frames[0].loc.pretty : "??";
	/* as the language writes it: quoted when no identifier spells it */
	quote = lang_is_plain_name(name) || !frames[0].loc.pretty ? "" : "\"";
	snprintf(label, sizeof(label), how[left_by], quote, name, quote);
	report_here(r, th, label);
	return FLOW_NEXT;
}

/* --- next --- */

static int one_step(struct run *r, struct tr_thread *th, const struct tr_event *ev, void *ctx)
{
	(void)r;
	(void)th;
	(void)ctx;
	return ev->kind == TR_EV_STEP;
}

static bool is_call(struct tr_thread *th, struct dis_insn *insn)
{
	uint8_t code[DIS_MAX_INSN];
	uint64_t pc = tracer_regs(th)->rip;

	if (tracer_decode_at(tracer_thread_process(th), pc, code, insn) < 0)
		return false;
	return insn->flags & DIS_F_CALL;
}

struct line_pos {
	uint64_t func_start;
	int line;
	uint64_t sp;
};

static void where_is(struct run *r, struct tr_thread *th, struct line_pos *pos)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));
	struct sym_loc loc = {0};
	uint64_t rip = tracer_regs(th)->rip;

	if (pc && pc->syms)
		sym_describe(pc->syms, rip, &loc);
	pos->func_start = loc.func ? rip - loc.func_offset : 0;
	pos->line = loc.line;
	pos->sp = tracer_regs(th)->rsp;
}

/* A new line of the same function, or out of it (returned or jumped). */
static bool left_line(const struct line_pos *from, const struct line_pos *now)
{
	if (now->func_start != from->func_start)
		return true;
	return now->line != 0 && now->line != from->line;
}

enum flow exec_next(struct run *r, const struct stmt *s)
{
	struct tr_thread *th = held_bound(r, s, 0);
	/* the whole statement's, not each step's: a line that loops (over
	 * a sleep, or on itself) ends at the timeout */
	int64_t deadline = tracer_now_ms() + r->timeout_ms;
	static const char *const label[] = {[LEFT_BY_RETURN] = "next",
					    [LEFT_BY_LONGJMP] = "next (longjmp)",
					    [LEFT_BY_THROW] = "next (throw)"};
	enum left_by left_by = LEFT_BY_RETURN;
	struct line_pos from, before, now;
	struct dis_insn insn;
	char where[256];
	enum flow flow;
	long n;

	if (!th)
		return FLOW_STOP;
	where_is(r, th, &from);
	/* before: where each step starts, which is where the last one ended */
	for (n = 0, before = from; n < NEXT_MAX_STEPS; n++, before = now) {
		struct return_point back = {tracer_regs(th)->rip, tracer_regs(th)->rsp};

		if (is_call(th, &insn)) {
			struct return_point rp = {insn.addr + insn.len, tracer_regs(th)->rsp};

			flow = run_to_return(r, s, th, rp, &left_by, deadline);
		} else {
			flow = drive_until(r, s, th, DRIVE_STEP, one_step, NULL, deadline);
		}
		if (flow == FLOW_STOP)
			return FLOW_STOP;
		where_is(r, th, &now);
		/* The step entered a signal handler (another function, its
		 * frame below the signal frame): run over it, to where the
		 * handler's rt_sigreturn gives the thread back. */
		if (now.func_start != before.func_start && now.sp + SIGNAL_FRAME_MIN < before.sp) {
			flow = run_to_return(r, s, th, back, NULL, deadline);
			if (flow == FLOW_STOP)
				return FLOW_STOP;
			where_is(r, th, &now);
		}
		if (left_line(&from, &now))
			break;
	}
	if (n == NEXT_MAX_STEPS) {
		run_where(r, s, where, sizeof(where));
		report_outcome(r, OUTCOME_UNREALIZABLE,
			       "%s stayed on its line for %d steps, calls run over counted as "
			       "one (%s)",
			       tracer_thread_name(th), NEXT_MAX_STEPS, where);
		return FLOW_STOP;
	}
	report_here(r, th, label[left_by]);
	return FLOW_NEXT;
}

/* --- hold, bind --- */

static int any_stop(struct run *r, struct tr_thread *th, const struct tr_event *ev, void *ctx)
{
	(void)r;
	(void)th;
	(void)ev;
	(void)ctx;
	return 1;
}

static enum flow hold_running(struct run *r, const struct stmt *s, struct tr_thread *th)
{
	if (!tracer_thread_running(th))
		return FLOW_NEXT;
	if (tracer_interrupt(th) < 0) {
		report_outcome(r, OUTCOME_ERROR, "cannot stop %s", tracer_thread_name(th));
		return FLOW_STOP;
	}
	return drive(r, s, th, DRIVE_ALREADY_MOVING, any_stop, NULL);
}

enum flow exec_hold(struct run *r, const struct stmt *s)
{
	int i;

	for (i = 0; i < s->n_names; i++) {
		struct tr_thread *th = run_binding(r, s->names[i]);

		if (!th) { /* it did nothing, and said nothing */
			run_report_unbound(r, s, s->names[i]);
			return FLOW_STOP;
		}
		if (hold_running(r, s, th) == FLOW_STOP)
			return FLOW_STOP;
	}
	return FLOW_NEXT;
}

enum flow exec_bind(struct run *r, const struct stmt *s)
{
	struct tr_thread *th = tracer_thread_by_name(r->t, s->target);
	char where[256];
	int var;

	run_where(r, s, where, sizeof(where));
	if (!th || tracer_thread_exited(th)) {
		/* p2... are the children, which --no-children leaves alone */
		report_outcome(r, OUTCOME_UNREALIZABLE, "thread %s %s (%s)%s", s->target,
			       th ? "has exited" : "does not exist", where,
			       !th && r->opt->no_children && strncmp(s->target, "p1.", 3) != 0
				   ? "; --no-children traces the process alone, not its children"
				   : "");
		return FLOW_STOP;
	}
	if (hold_running(r, s, th) == FLOW_STOP)
		return FLOW_STOP;
	var = run_var(r, s->names[0]);
	if (var >= 0)
		run_bind(r, var, th);
	return FLOW_NEXT;
}
