/*
 * blocked.c: threads a schedule runs that cannot get anywhere.
 *
 * `run T until P` can release T into a lock that a held thread owns; T
 * then sleeps in the kernel and P never comes.  Instead of waiting for the
 * timeout, the wait loop samples its targets every few milliseconds: a
 * target asleep in a system call twice in a row, with no context switch in
 * between, is blocked.  When every target still short of P is blocked,
 * they are stopped where they are (the system call restarts when they next
 * run) and the statement ends:
 *   - if every thread the schedule controls is now blocked, it is a
 *     deadlock, a bug, reported with every stack;
 *   - under a search, the statement simply ends and `choose` skips blocked
 *     threads until another thread has moved;
 *   - in an exact schedule, the schedule cannot be followed: unrealizable,
 *     saying where the thread sleeps.
 * A thread that sleeps waiting for the outside (a server's worker in
 * epoll_wait until a client writes, a read on a socket, a sleep) is not
 * blocked: the statement waits for its event or its timeout (see
 * tracer/outside.c).
 */
#include "policy/run.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BLOCKED_POLL_MS 5

int64_t blocked_poll_deadline(struct run *r, bool has_targets, int64_t deadline)
{
	int64_t soon = tracer_now_ms() + BLOCKED_POLL_MS;

	(void)r;
	if (!has_targets)
		return deadline;
	return deadline < 0 || soon < deadline ? soon : deadline;
}

/* Is th asleep now, and was it asleep with the same switch count before? */
static bool still_asleep(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);
	struct tr_kernel_sample now;
	bool same;

	/* A wait for a client or a timer is not blocked by a held thread. */
	if (tracer_kernel_sample(th, &now) < 0 || !now.asleep || now.awaits_outside) {
		tc->sampled = false;
		return false;
	}
	same =
	    tc->sampled && tc->sample.switches == now.switches && tc->sample.syscall == now.syscall;
	tc->sample = now;
	tc->sampled = true;
	return same;
}

bool blocked_targets(struct run *r, struct tr_thread **targets, int n)
{
	bool all = n > 0;
	int i;

	for (i = 0; i < n; i++) {
		struct thread_ctx *tc = run_thread(r, targets[i]);

		if (tc->matched)
			continue;
		if (targets[i]->state != TR_RUNNING || !still_asleep(r, targets[i]))
			all = false;
	}
	return all;
}

static void describe_block(struct run *r, struct tr_thread *th, char *buf, size_t len)
{
	struct proc_ctx *pc = run_proc(r, th->proc);
	struct sym_loc loc = {0};
	char state[48];
	uint64_t pcaddr = tracer_thread_pc(th);

	tracer_describe_kernel_state(th, state, sizeof(state));
	if (pcaddr && pc && pc->syms)
		sym_describe(pc->syms, pcaddr, &loc);
	snprintf(buf, len, "%s (%s)", state, loc.func ? loc.func : "??");
}

/*
 * A held thread that was stopped asleep in futex(FUTEX_WAIT, uaddr, val)
 * redoes that call when it runs again, and the call returns at once if
 * *uaddr is no longer val.  glibc changes the word before every wake (a
 * wake sent while we hold the thread finds nobody in the kernel's queue),
 * so a changed word means the thread would go on: it is not blocked any
 * more.  Without this, a producer that waits in pthread_cond_signal for a
 * consumer we hold to leave its old wait looked like a deadlock.
 */
static bool futex_wait_would_return(struct tr_thread *th)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	long op = (long)(regs->rsi & 0x7f);
	uint32_t word;

	if (regs->orig_rax != 202 /* futex */ || (op != 0 /* WAIT */ && op != 9 /* WAIT_BITSET */))
		return false;
	if (tracer_read(th->proc, regs->rdi, &word, sizeof(word)) < 0)
		return false;
	return word != (uint32_t)regs->rdx;
}

static bool all_controlled_blocked(struct run *r)
{
	int var;

	for (var = 0; var < r->nbindings; var++) {
		struct tr_thread *th = r->bindings[var];
		struct thread_ctx *tc = th ? run_thread(r, th) : NULL;

		if (!th || th->state == TR_EXITED || th->last_event == TR_EV_EXIT)
			continue;
		if (tc->blocked && th->state == TR_HELD && futex_wait_would_return(th))
			tc->blocked = false;
		if (!tc->blocked)
			return false;
	}
	return true;
}

void report_deadlock(struct run *r, const struct stmt *s)
{
	char where[256];
	int var;

	r->no_drain = true;
	run_where(r, s, where, sizeof(where));
	report_outcome(r, OUTCOME_BUG,
		       "deadlock: every thread the schedule controls is blocked (%s)", where);
	for (var = 0; var < r->nbindings; var++) {
		struct tr_thread *th = r->bindings[var];

		if (th && run_thread(r, th)->primary == var && th->state == TR_HELD) {
			if (r->opt->report)
				fprintf(r->opt->report, "  %s = %s: %s\n", r->pol->threads[var],
					th->name, run_thread(r, th)->kernel_state);
			report_stack(r, th);
		}
	}
}

static bool accepts_blocked(struct run *r, struct tr_thread **targets, int n)
{
	char err[512];
	struct tr_event ev = {.kind = TR_EV_NONE};
	struct eval_ctx c;
	int64_t v = 0;
	int i;

	for (i = 0; i < n && !run_thread(r, targets[i])->blocked; i++)
		;
	if (i == n)
		return false;
	ev.thread = targets[i];
	r->event = &ev;
	c = points_eval_ctx(r, targets[i]->proc, err, sizeof(err));
	r->blocked_event = true;
	if (eval_int(&c, r->pred, &v) < 0)
		v = 0;
	r->blocked_event = false;
	r->event = NULL;
	return v != 0;
}

static void report_blocked(struct run *r, struct tr_thread *th)
{
	struct tr_event ev = {.kind = TR_EV_INTERRUPT, .thread = th, .pc = tracer_regs(th)->rip};
	char label[160];

	snprintf(label, sizeof(label), "blocked: %s", run_thread(r, th)->kernel_state);
	r->label = label;
	report_event(r, &ev);
	r->label = NULL;
}

/* Stop the blocked targets where they sleep, and decide what it means. */
enum flow blocked_end(struct run *r, const struct stmt *s, struct tr_thread **targets, int n)
{
	struct tr_event ev;
	char what[128], where[256];
	int i, pending = 0;

	for (i = 0; i < n; i++) {
		struct thread_ctx *tc = run_thread(r, targets[i]);

		if (tc->matched)
			continue;
		describe_block(r, targets[i], what, sizeof(what));
		snprintf(tc->kernel_state, sizeof(tc->kernel_state), "%s", what);
		tc->blocked = true;
		tc->candidate = false;
		if (tracer_interrupt(targets[i]) == 0)
			pending++;
	}
	while (pending > 0 &&
	       tracer_wait(r->t, &ev, tracer_now_ms() + 1000, NULL) == TR_WAIT_EVENT) {
		if (ev.kind == TR_EV_CHILD_EXIT)
			return run_driver_ended(r, &ev);
		if (run_thread(r, ev.thread)->blocked && ev.thread->state == TR_HELD) {
			pending--;
			continue;
		}
		if (ev.kind == TR_EV_PROCESS_EXIT)
			return run_program_ended(r, &ev, "while threads were blocked");
		run_resume(r, ev.thread);
	}
	if (all_controlled_blocked(r)) {
		report_deadlock(r, s);
		return FLOW_STOP;
	}
	/* A search goes on (choose skips blocked threads), and so does a
	 * schedule that expects it: `run A until ... || blocked`. */
	if (r->oracle || accepts_blocked(r, targets, n)) {
		r->ended_blocked = true;
		for (i = 0; i < n; i++)
			if (run_thread(r, targets[i])->blocked)
				report_blocked(r, targets[i]);
		return FLOW_NEXT;
	}
	run_where(r, s, where, sizeof(where));
	for (i = 0; i < n && run_thread(r, targets[i])->matched; i++)
		;
	report_outcome(r, OUTCOME_UNREALIZABLE, "%s is %s; a held thread must go first (%s)",
		       i < n ? targets[i]->name : "a thread",
		       i < n ? run_thread(r, targets[i])->kernel_state : "the kernel", where);
	return FLOW_STOP;
}

/* Something moved: blocked threads may be able to go on now. */
void blocked_forget(struct run *r, struct tr_thread *except)
{
	struct tr_thread *th;

	for (th = tracer_threads(r->t); th; th = th->next)
		if (th != except)
			run_thread(r, th)->blocked = false;
}
