/*
 * fork.c: a held program made to fork, and its child taken over by another
 * tracer: the template of a search's runs (engine/snapshot.c).
 *
 * Why.  A search restarts the same program hundreds of times; each fresh
 * launch pays fork, exec and the dynamic loader's work (about 1.3 ms of a
 * 4 ms run on SCTBench's account_ok).  A template launched once and held
 * at its entry point, forked for each run, pays only the fork, as AFL's
 * fork server does.
 *
 * How.  The held thread is made to call glibc's _Fork (the caller finds
 * it): its registers are saved, rsp moved below the red zone and aligned,
 * a return address of 0 pushed, rip pointed at the function, and the
 * thread resumed.  _Fork and not a raw fork system call: it makes the
 * kernel write the child's tid into the thread's descriptor
 * (CLONE_CHILD_SETTID) and registers the child's robust mutex list, which
 * glibc caches and a raw fork would leave as the parent's.  Both
 * processes return to address 0 and fault (SIGSEGV at pc 0); each is
 * caught there, the fault swallowed, and its registers set back to the
 * saved ones: the child is then exactly a freshly launched program at its
 * entry, and the parent is the template again.  Signals the template gets
 * meanwhile (SIGCHLD of earlier children, a terminal's SIGINT) are
 * swallowed: it runs no code of its own.  The children it forked are its
 * zombies once their runs have reaped them as tracees: a wait4(WNOHANG)
 * system call made on its behalf before each fork buries one (the last
 * run's), and tracer_bury_children all that are left at the end.
 */
#include "tracer/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define RED_ZONE 128

/* The earlier children of the template, dead and reaped by their runs'
 * tracers, are still its zombies until it waits for them. */
/* One wait4(WNOHANG) made by the template: true if it buried a child.
 * Before each fork one is enough, not until none is left: each run leaves
 * one zombie, so they never pile up, and the call that would find none
 * (an injected system call: two stops) is saved. */
static bool bury_one(struct tr_thread *th)
{
	const long args[6] = {-1, 0, WNOHANG, 0, 0, 0};
	bool ok;

	return tr_inject_syscall(th, SYS_wait4, args, &ok) > 0 && ok;
}

void tracer_bury_children(struct tr_thread *th)
{
	while (bury_one(th))
		;
}

/* Wait for task tid to come back to address 0 (the faulting return from
 * the injected call), swallowing every other stop; the fork event's
 * child goes to *child.  0, or -1 if it ended or did not come back. */
static int run_to_return(pid_t tid, int64_t deadline, pid_t *child)
{
	struct user_regs_struct regs;
	unsigned long msg;
	int status, sig;

	for (;;) {
		if (tr_wait_task(tid, tid, deadline, false, &status) != TR_TASK_STATUS ||
		    !WIFSTOPPED(status))
			return -1;
		sig = 0;
		if ((status >> 16) == PTRACE_EVENT_FORK && child &&
		    ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0)
			*child = (pid_t)msg;
		else if ((status >> 16) == 0 && WSTOPSIG(status) == SIGSEGV &&
			 ptrace(PTRACE_GETREGS, tid, 0, &regs) == 0 && regs.rip == 0)
			return 0;
		else if ((status >> 16) == PTRACE_EVENT_EXIT)
			return -1;
		if (ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig) < 0)
			return -1;
	}
}

int tracer_fork_held(struct tr_thread *th, uint64_t fork_fn, pid_t *child, char *err, size_t errlen)
{
	struct user_regs_struct saved, regs;
	int64_t deadline = tracer_now_ms() + TR_STOP_TIMEOUT_MS;
	const uint64_t ret_addr = 0;
	pid_t kid = 0;

	*child = 0;
	if (th->state != TR_HELD || tr_flush_regs(th) < 0) {
		snprintf(err, errlen, "the template is not held");
		return -1;
	}
	bury_one(th);
	th->pending_signal = 0; /* a SIGCHLD met meanwhile: not the program's */
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &saved) < 0)
		goto fail;
	regs = saved;
	regs.rsp = ((saved.rsp - RED_ZONE) & ~15ull) - 8; /* as after a call */
	regs.rip = fork_fn;
	regs.orig_rax = (unsigned long)-1;
	if (tracer_write(th->proc, regs.rsp, &ret_addr, sizeof(ret_addr)) < 0 ||
	    ptrace(PTRACE_SETREGS, th->tid, 0, &regs) < 0 || ptrace(PTRACE_CONT, th->tid, 0, 0) < 0)
		goto fail;
	if (run_to_return(th->tid, deadline, &kid) < 0)
		goto fail;
	ptrace(PTRACE_SETREGS, th->tid, 0, &saved);
	if (kid <= 0) {
		snprintf(err, errlen, "the template's fork made no child");
		return -1;
	}
	/* Past the child's first stop, to its own return from the call. */
	if (run_to_return(kid, deadline, NULL) < 0 || ptrace(PTRACE_SETREGS, kid, 0, &saved) < 0)
		goto child_fail;
	*child = kid;
	return 0;
child_fail:
	kill(kid, SIGKILL);
	waitpid(kid, NULL, __WALL);
	snprintf(err, errlen, "the template's child %d did not come back from the fork", (int)kid);
	return -1;
fail:
	ptrace(PTRACE_SETREGS, th->tid, 0, &saved);
	snprintf(err, errlen, "cannot make the template fork: %s", strerror(errno));
	return -1;
}

int tracer_adopt(struct tracer *t, pid_t pid, const struct tr_thread *tmpl, char *err,
		 size_t errlen)
{
	struct tr_process *p = tr_process_new(t, pid);
	struct tr_thread *th = p ? tr_thread_new(t, p, pid) : NULL;

	if (!th) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->launched = true;
	if (tmpl)
		tr_break_adopt(tmpl->proc, p);
	tr_mark_held(th);
	tr_set(th, TF_STARTED);
	if (tr_fetch_regs(th) < 0 ||
	    tr_queue_event(
		t, &(struct tr_event){.kind = TR_EV_START, .thread = th, .pc = th->regs.rip}) < 0) {
		snprintf(err, errlen, "cannot take over pid %d: %s", (int)pid, strerror(errno));
		kill(pid, SIGKILL);
		tracer_kill_launched(t);
		return -1;
	}
	th->last_event = TR_EV_START;
	th->last_pc = th->regs.rip;
	return 0;
}
