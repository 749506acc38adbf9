/*
 * signals.c: how a signal sent to cctrace (Ctrl-C, SIGTERM, kill -QUIT, a
 * closed output pipe...) and a wait's deadline reach a blocking wait.
 *
 * Each controlled event is one ptrace stop, so its wait must cost one
 * system call: a blocking waitid().  What must be able to cut it short is
 * a stop signal or the deadline (SIGALRM from an interval timer).  Their
 * handlers set a flag and, if the thread is inside the waiting region,
 * siglongjmp() out of it; testing the flags after entering the region and
 * jumping out of it leaves no window in which a signal is noticed too late.
 * A signal that lands just after waitid() reaped a task does not lose the
 * task: waitid() writes the reaped pid into a siginfo that outlives the
 * jump, and it is checked first.  Everywhere else the handlers only set
 * the flag (SA_RESTART), and the flag stays set until someone takes it.
 *
 * Every signal whose default action would end cctrace and that can be
 * caught without hiding a crash is a stop signal: SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGUSR1/2, SIGPIPE (the output went away: `| head -1`), SIGXCPU,
 * SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT and the real-time
 * signals.  Dying on one of them would leave every attached thread with
 * our int3s in its code; stopping lets the caller detach.  With SIGPIPE
 * caught, a write to a closed pipe fails with EPIPE instead of killing us.
 * The signals of a crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
 * SIGSYS, SIGTRAP) keep their default (and the sanitizers' handlers): no
 * clean detach can run in a process that just faulted.  Those, and
 * SIGKILL, are the guardian's (guardian.c).
 *
 * Only one handler runs at a time (sa_mask holds every signal above, no
 * SA_NODEFER).  Otherwise two signals pending at once, say SIGINT and the
 * deadline's SIGALRM, get two frames stacked before either runs; the
 * later frame (SIGALRM) runs first, jumps out, and the SIGINT handler's
 * frame is discarded unrun: the interrupt is lost.  With the mask, the
 * second signal stays pending until the first handler is done; after a
 * jump (which keeps the handler's mask) the waiting code unblocks them,
 * and a signal still pending is taken then, outside the waiting region,
 * where it only sets its flag.
 *
 * The alarm is re-armed only for a deadline earlier than the armed one:
 * a schedule that starts a wait per event does not pay a timer call per
 * event; an alarm that comes too early just resumes the wait.
 */
#include "tracer/internal.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t alarm_fired;
static volatile sig_atomic_t waiting;
static sigjmp_buf wait_jump;
static int64_t alarm_at = -1;
static siginfo_t reaped; /* written by waitid, read after a jump: static */
static sigset_t handled; /* every signal on_signal handles */

/* The deadline's SIGALRM is the kernel's (an interval timer: SI_KERNEL);
 * one sent by a person or a program (kill -ALRM: SI_USER) ends cctrace,
 * as the signal would have, and is not taken for a wait's timeout. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGALRM && si && si->si_code == SI_KERNEL)
		alarm_fired = 1;
	else if (!stop_signal)
		stop_signal = sig; /* the first one is the reason */
	if (waiting) {
		waiting = 0;
		siglongjmp(wait_jump, 1);
	}
}

/* The stop signals of the design comment; SIGALRM is the deadline. */
static void fill_handled(sigset_t *set)
{
	static const int sigs[] = {SIGINT,    SIGTERM, SIGHUP,	SIGQUIT, SIGUSR1,
				   SIGUSR2,   SIGPIPE, SIGALRM, SIGXCPU, SIGXFSZ,
				   SIGVTALRM, SIGPROF, SIGIO,	SIGPWR,	 SIGSTKFLT};
	size_t i;
	int sig;

	sigemptyset(set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(set, sigs[i]);
	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(set, sig);
}

/* A child of fork (a --jobs worker) inherits the note of an armed alarm
 * but not the timer (fork clears it), and would wait for ever for an
 * alarm nobody set: it starts with none. */
static void forget_alarm_in_child(void)
{
	alarm_fired = 0;
	alarm_at = -1;
}

void tr_signals_install(void)
{
	static bool installed;
	struct sigaction sa;
	int sig;

	if (installed)
		return;
	installed = true;
	pthread_atfork(NULL, NULL, forget_alarm_in_child);
	fill_handled(&handled);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sa.sa_mask = handled;
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&handled, sig) == 1)
			sigaction(sig, &sa, NULL);
	sigprocmask(SIG_UNBLOCK, &handled, NULL);
}

void tracer_catch_stop_signals(void)
{
	tr_signals_install();
}

int tracer_stop_signal(bool take)
{
	int sig = stop_signal;

	if (take)
		stop_signal = 0;
	return sig;
}

static void arm_alarm(int64_t deadline_ms)
{
	struct itimerval it = {{0, 0}, {0, 0}};
	int64_t left = deadline_ms - tracer_now_ms();

	if (alarm_at >= 0 && alarm_at <= deadline_ms && !alarm_fired)
		return; /* an earlier alarm is coming: it will resume the wait */
	if (left < 1)
		left = 1;
	it.it_value.tv_sec = left / 1000;
	it.it_value.tv_usec = (left % 1000) * 1000;
	alarm_fired = 0;
	alarm_at = deadline_ms;
	setitimer(ITIMER_REAL, &it, NULL);
}

/* A wait status, rebuilt from what waitid() says about the same change. */
static int status_of(const siginfo_t *info)
{
	switch (info->si_code) {
	case CLD_EXITED:
		return (info->si_status & 0xff) << 8;
	case CLD_KILLED:
		return info->si_status & 0x7f;
	case CLD_DUMPED:
		return (info->si_status & 0x7f) | 0x80;
	default: /* CLD_TRAPPED, CLD_STOPPED: si_status holds event << 8 | signal */
		return (info->si_status << 8) | 0x7f;
	}
}

/* One attempt: 1 reaped, 0 cut short by a signal, -1 error. */
static int wait_once(pid_t *tid, int *status)
{
	volatile int rc = 0;

	memset(&reaped, 0, sizeof(reaped));
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (sigsetjmp(wait_jump, 0) == 0) {
		waiting = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (!stop_signal && !alarm_fired)
			rc = waitid(P_ALL, 0, &reaped, WEXITED | WSTOPPED | __WALL) < 0 ? -1 : 1;
		waiting = 0;
	} else {
		/* Jumped out of a handler, whose mask is still ours: a signal
		 * that came meanwhile is delivered now, and only noted. */
		sigprocmask(SIG_UNBLOCK, &handled, NULL);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (reaped.si_pid != 0) {
		*tid = reaped.si_pid;
		*status = status_of(&reaped);
		return 1;
	}
	if (rc < 0 && errno != EINTR)
		return -1;
	return 0;
}

int tr_wait_any(int64_t deadline_ms, pid_t *tid, int *status)
{
	int rc;

	for (;;) {
		if (deadline_ms >= 0) {
			/* A stop that came with the deadline wins: it was
			 * asked for, the timeout is only the clock. */
			if (tracer_now_ms() >= deadline_ms)
				return stop_signal ? TR_ANY_STOP : TR_ANY_DEADLINE;
			arm_alarm(deadline_ms);
		}
		rc = wait_once(tid, status);
		if (rc != 0)
			return rc > 0 ? TR_ANY_REAPED : TR_ANY_ERROR;
		if (stop_signal)
			return TR_ANY_STOP;
		if (alarm_fired) {
			alarm_fired = 0;
			alarm_at = -1;
		}
	}
}
