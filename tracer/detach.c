/*
 * detach.c: leaving every process as it was found.
 *
 * Every exit path of cctrace ends here.  All threads are first brought to a
 * stop (a thread cannot be detached, nor its registers written, while it
 * runs).  Then, per process: threads inside a scratch slot are moved back
 * to the equivalent original pc, debug registers are cleared, the original
 * bytes go back under every breakpoint, SIGILL's and SIGTRAP's own actions
 * come back (guardian.c), the scratch pages are unmapped, and each
 * thread is detached with any signal it still had coming.
 */
#include "tracer/internal.h"

#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

/* Is a SIGTRAP or SIGILL queued for th?  (SigPnd in its status.) */
static bool trap_pending(struct tr_thread *th)
{
	unsigned long long pending = 0;

	tr_status_field(th->proc->pid, th->tid, "SigPnd", 16, &pending);
	return pending & (1ull << (SIGTRAP - 1) | 1ull << (SIGILL - 1));
}

/*
 * A thread that met one of our breakpoints (SIGILL) or tripped a debug
 * register (SIGTRAP) just as we interrupted it stops for the interrupt
 * first, with the signal still queued.  Detached like that, it would take
 * the signal untraced and die.  Let it take the signal while still
 * traced: the stop is decoded as ours (a breakpoint leaves the pc on it)
 * and dropped.
 */
static void absorb_our_traps(struct tracer *t, struct tr_process *p)
{
	struct tr_thread *th;

	for (th = t->threads; th; th = th->next) {
		if (th->proc != p || th->state != TR_HELD || !trap_pending(th))
			continue;
		if (tr_continue(th, PTRACE_CONT) == 0)
			tr_wait_for_stop(t, th);
		if (th->pending_signal == SIGTRAP)
			th->pending_signal = 0;
	}
}

static void restore_thread(struct tr_thread *th)
{
	tr_break_fix_pc_in_slot(th);
	tr_flush_regs(th);
	tr_watch_clear(th);
	tracer_pin(th, false);
}

/* A process that is ending (a fatal signal, exit_group) runs none of our
 * code again: there is nothing to put back, only its threads to let go,
 * some of which may already be gone. */
static void let_go_of_dying(struct tracer *t, struct tr_process *p)
{
	struct tr_thread *th;

	for (th = t->threads; th; th = th->next) {
		if (th->proc != p || th->state == TR_EXITED)
			continue;
		ptrace(PTRACE_DETACH, th->tid, 0, 0);
		tr_mark_exited(th);
	}
	tr_guard_process_gone(p);
	p->alive = false;
}

static int detach_process(struct tracer *t, struct tr_process *p)
{
	struct tr_thread *th;
	int failed = 0;

	if (tr_pid_dying(p->pid)) {
		let_go_of_dying(t, p);
		return 0;
	}
	absorb_our_traps(t, p);
	for (th = t->threads; th; th = th->next)
		if (th->proc == p && th->state == TR_HELD)
			restore_thread(th);
	tr_break_remove_all(p, true);
	tr_guard_unprepare(p, tr_any_held_thread(p)); /* actions back before their page goes */
	tr_scratch_release_all(p, tr_any_held_thread(p));
	for (th = t->threads; th; th = th->next) {
		if (th->proc != p || th->state == TR_EXITED)
			continue;
		/* Past its exit event and let run, it is dying: it never
		 * stops again, so it cannot be detached (ESRCH), and nothing
		 * of ours in it outlives it.  Its end is the kernel's. */
		if (th->state == TR_RUNNING && tr_has(th, TF_EXITING)) {
			tr_mark_exited(th);
			continue;
		}
		/* In vfork: it stops once its child, detached after it, has
		 * executed a program (detach_vfork_parents) */
		if (th->state == TR_RUNNING && tracer_thread_waits_for_vfork(th))
			continue;
		if (ptrace(PTRACE_DETACH, th->tid, 0, (void *)(long)th->pending_signal) < 0)
			failed = -1;
		tr_mark_exited(th);
	}
	if (!failed)
		tr_guard_process_gone(p);
	p->alive = false;
	return failed;
}

/*
 * A thread in vfork sleeps in the kernel until its child executes a
 * program or exits, and cannot be stopped meanwhile; its child, which we
 * hold, runs in its memory.  So the parent's bytes and pages go first,
 * through its other threads, with the child held and out of any slot;
 * then the child is let go, runs to its exec, and the parent's thread
 * wakes into the interrupt sent now, and is let go in its turn.
 */
static int detach_vfork_parents(struct tracer *t)
{
	struct tr_thread *th;
	int rc = 0;

	for (th = t->threads; th; th = th->next) {
		if (th->state != TR_RUNNING || tr_has(th, TF_EXITING) || !th->vfork_child)
			continue;
		if (!tr_has(th, TF_INTERRUPTING) && ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
			continue;
		tr_set(th, TF_INTERRUPTING);
		if (tr_wait_for_stop(t, th) < 0 || th->state != TR_HELD) {
			rc = -1;
			continue;
		}
		restore_thread(th);
		if (ptrace(PTRACE_DETACH, th->tid, 0, (void *)(long)th->pending_signal) < 0)
			rc = -1;
		tr_mark_exited(th);
	}
	return rc;
}

int tracer_detach_all(struct tracer *t)
{
	struct tr_process *p;
	struct tr_thread *th;
	int rc = 0;

	tracer_stop_all(t);
	/* Every thread out of the slots first: a vfork child runs in its
	 * parent's memory, slots and all, and would be left inside one when
	 * its parent's pages went. */
	for (th = t->threads; th; th = th->next)
		if (th->state == TR_HELD && th->proc->alive)
			tr_break_fix_pc_in_slot(th);
	for (p = t->processes; p; p = p->next)
		if (p->alive && detach_process(t, p) < 0)
			rc = -1;
	if (detach_vfork_parents(t) < 0)
		rc = -1;
	/* The guardian stands down only if nothing is left for it to undo. */
	if (rc == 0)
		tr_guard_done(t);
	return rc;
}

static bool launched_alive(struct tracer *t)
{
	struct tr_process *p;

	for (p = t->processes; p; p = p->next)
		if (p->alive && p->launched)
			return true;
	return false;
}

/* Reap in whatever order the kernel reports: a thread-group leader is
 * reported only after its other threads, so waiting for tids in list
 * order could block forever. */
void tracer_kill_launched(struct tracer *t)
{
	struct tr_process *p;
	struct tr_thread *th;
	int status;
	pid_t tid;

	for (p = t->processes; p; p = p->next)
		if (p->alive && p->launched)
			kill(p->pid, SIGKILL);
	/* A thread held at its exit event (PTRACE_EVENT_EXIT) is already
	 * dying and SIGKILL does not wake it: it must be let go. */
	for (th = t->threads; th; th = th->next)
		if (th->state == TR_HELD && th->proc->launched && th->proc->alive &&
		    ptrace(PTRACE_CONT, th->tid, 0, 0) == 0)
			tr_mark_running(th);
	while (launched_alive(t)) {
		tid = waitpid(-1, &status, __WALL);
		if (tid < 0)
			break;
		th = tracer_thread_by_tid(t, tid);
		if (WIFSTOPPED(status)) {
			/* A killed task may still stop once, at PTRACE_EVENT_EXIT. */
			ptrace(PTRACE_CONT, tid, 0, 0);
			continue;
		}
		if (th)
			tr_thread_gone(th);
	}
}
