/*
 * wait.c: turning wait statuses into events.
 *
 * Waiting is one blocking waitid() (signals.c), which a stop signal or the
 * deadline can cut short: one place where a stop, a timeout and the
 * user's Ctrl-C all arrive, and one system call per event.
 *
 * Waiting for one task (a thread we interrupted, a step we made it take)
 * is tr_wait_task: waitpid(WNOHANG) and sigtimedwait() on SIGCHLD, so it
 * has a deadline, a stop signal can end it, and a task that can no longer
 * report is noticed.  That last case is real: a killed thread-group leader
 * is reported only once every other thread of it has been reaped, and
 * they may be sitting in their exit stops waiting for us, so a blocking
 * waitpid on the leader would never return.  Whatever the task reports
 * instead of the stop we wanted (its exit, an exec) is decoded as any
 * event and queued, never dropped.
 *
 * Each stop is decoded into one of: an event for the caller (the thread
 * stays held), or bookkeeping done here, after which the thread is resumed
 * at once.  The decoding is table-like: ptrace event first, then the signal,
 * then for SIGTRAP which of our mechanisms (step, debug register) caused
 * it, and for SIGILL whether the pc is on one of our breakpoints.
 */
#include "tracer/internal.h"

#include <assert.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

enum decoded { SILENT_RESUME, REPORT, ALREADY_HANDLED };

static pid_t thread_group_of(pid_t tid)
{
	unsigned long long tgid;

	return tr_status_field(tid, 0, "Tgid", 10, &tgid) == 0 ? (pid_t)tgid : -1;
}

struct tr_process *tr_process_by_pid(struct tracer *t, pid_t pid)
{
	struct tr_process *p;

	for (p = t->processes; p; p = p->next)
		if (p->pid == pid && p->alive)
			return p;
	return NULL;
}

static pid_t parent_of(pid_t pid)
{
	unsigned long long ppid;

	return tr_status_field(pid, 0, "PPid", 10, &ppid) == 0 ? (pid_t)ppid : -1;
}

/* A task we have not heard of: a new thread or process whose creation
 * event has not been decoded yet (the child's first stop can be reaped
 * before its parent's fork event).  Its first stop is its start.  A new
 * process takes its parent's breakpoints now, before it runs: its text is
 * a copy of the parent's, breakpoints included. */
static struct tr_thread *adopt_task(struct tracer *t, pid_t tid)
{
	pid_t tgid = thread_group_of(tid);
	struct tr_process *p = tr_process_by_pid(t, tgid), *parent;

	if (!p) {
		p = tr_process_new(t, tgid);
		if (!p)
			return NULL;
		parent = tr_process_by_pid(t, parent_of(tgid));
		if (parent)
			tr_process_inherit(parent, p);
	}
	return tr_thread_new(t, p, tid);
}

static bool signal_is_caught(pid_t pid, int sig)
{
	static const struct tr_status_key keys[] = {{"SigCgt", 16}, {"SigIgn", 16}};
	unsigned long long masks[2] = {0, 0};

	tr_status_fields(pid, 0, keys, 2, masks);
	return (masks[0] | masks[1]) & (1ull << (sig - 1));
}

bool tr_pid_handles_signals(pid_t pid)
{
	static const struct tr_status_key keys[] = {{"SigCgt", 16}};
	/* glibc's own (SIGCANCEL, SIGSETXID: 32, 33), the guardian's and a
	 * crash's wake no sleeper */
	static const int quiet[] = {32, 33, SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT};
	unsigned long long caught = 0;
	size_t i;

	tr_status_fields(pid, 0, keys, 1, &caught);
	for (i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		caught &= ~(1ull << (quiet[i] - 1));
	return caught != 0;
}

bool tracer_program_handles_signals(struct tr_process *p)
{
	return tr_pid_handles_signals(p->pid);
}

/* While the guardian's rescue handler holds SIGILL and SIGTRAP, the
 * program's own action is the one it had before. */
static bool program_catches(struct tr_process *p, int sig)
{
	bool caught;

	return tr_guard_signal_action(p, sig, &caught) ? caught : signal_is_caught(p->pid, sig);
}

bool tracer_signal_crashes(int sig)
{
	switch (sig) {
	case SIGSEGV:
	case SIGBUS:
	case SIGILL:
	case SIGFPE:
	case SIGABRT:
	case SIGSYS:
	case SIGTRAP:
	case SIGQUIT:
	case SIGXCPU:
	case SIGXFSZ:
		return true;
	default:
		return false;
	}
}

/* A child let go at its first stop whose parent's fork event had not been
 * decoded yet: that event is for it (once), and must not make it ours. */
static struct tr_process *released_unannounced(struct tracer *t, pid_t pid)
{
	struct tr_process *p;

	for (p = t->processes; p; p = p->next)
		if (p->pid == pid && p->released && !p->fork_seen)
			return p;
	return NULL;
}

/* The thread group of the task parent's clone event announces: told by
 * the clone's flags (CLONE_THREAD), read from the parent held in the
 * call, rather than by the task's status file, three system calls a
 * thread.  -1 if the task is gone already (reaped as a stranger's). */
static pid_t clone_thread_group(struct tr_thread *parent, pid_t child)
{
	uint64_t flags = parent->regs.rdi;

	if (parent->regs.orig_rax == TR_SYS_clone3 &&
	    tracer_read(parent->proc, parent->regs.rdi, &flags, sizeof(flags)) < 0)
		return thread_group_of(child);
	if (parent->regs.orig_rax != TR_SYS_clone && parent->regs.orig_rax != TR_SYS_clone3)
		return thread_group_of(child);
	if (!(flags & CLONE_THREAD))
		return child;
	if (syscall(SYS_tgkill, parent->proc->pid, child, 0) < 0 && errno == ESRCH)
		return -1;
	return parent->proc->pid;
}

/* The task a clone, fork or vfork event announces joins the tables (its
 * own first stop may have come first).  A clone without CLONE_THREAD makes
 * a process, as fork does: returns whether a process was made. */
static bool new_child_task(struct tracer *t, struct tr_thread *th, bool by_clone,
			   struct tr_event *ev)
{
	unsigned long msg = 0;
	struct tr_thread *child;
	struct tr_process *released;
	bool new_process;
	pid_t tgid;

	/* Killed between its stop and now (SIGKILL wakes a stopped task):
	 * no child to name.  The child, if it was made, dies with it. */
	if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg) < 0 || (pid_t)msg <= 0)
		return false;
	released = released_unannounced(t, (pid_t)msg);
	if (released) {
		released->fork_seen = true;
		return true; /* a fork, of a process that is not ours: no ev->child */
	}
	tgid = by_clone ? clone_thread_group(th, (pid_t)msg) : (pid_t)msg;
	new_process = !by_clone || tgid == (pid_t)msg;
	child = tracer_thread_by_tid(t, (pid_t)msg);
	if (!child) {
		if (new_process) {
			struct tr_process *p = tr_process_new(t, (pid_t)msg);

			if (!p)
				return false;
			tr_process_inherit(th->proc, p);
			child = tr_thread_new(t, p, (pid_t)msg);
		} else {
			child = tr_thread_new(t, th->proc, (pid_t)msg);
			/* Gone already (the process is being killed): its end
			 * was reaped before this event, as a stranger's, and
			 * no other news of it will come. */
			if (child && tgid < 0)
				tr_thread_gone(child);
		}
	}
	if (child && new_process) {
		ev->child = child->proc;
		child->proc->fork_seen = true;
	}
	return new_process;
}

/* Let a child process go (no_children), held at its first stop or at its
 * exec: what it inherited of ours (int3 bytes, scratch pages, a pc in a
 * slot, a CPU mask we gave its parent) is taken out first.  Debug registers are not
 * inherited by a fork, and an exec clears them. */
static void let_go(struct tr_thread *th)
{
	struct tr_process *p = th->proc;

	tr_break_fix_pc_in_slot(th);
	tr_flush_regs(th);
	tr_break_remove_all(p, true);
	tr_scratch_release_all(p, th);
	tr_unpin_inherited(th, p->parent_pid);
	ptrace(PTRACE_DETACH, th->tid, 0, (void *)(long)th->pending_signal);
	tr_thread_gone(th);
	p->released = true;
}

/* The first stop of a new process's first thread, under no_children.
 * Returns whether it was let go. */
static bool let_go_at_birth(struct tr_thread *th)
{
	struct tr_process *p = th->proc;

	if (!p->let_go || th->tid != p->pid)
		return false;
	if (p->shares_mm) {
		/* Taking our bytes out of its memory would take them out
		 * of its parent's: it is followed until its exec. */
		p->let_go_at_exec = true;
		return false;
	}
	let_go(th);
	return true;
}

static void process_exec(struct tracer *t, struct tr_thread *th)
{
	struct tr_process *p = th->proc;
	struct tr_thread *other;

	for (other = t->threads; other; other = other->next)
		if (other->proc == p && other != th && other->state != TR_EXITED)
			tr_mark_exited(other);
	/* A thread other than the leader that executes a program takes the
	 * leader's tid, and the leader's exit stop (which the exec caused)
	 * was reported on this entry: it lives on, as the new program. */
	tr_clear(th, TF_EXITING);
	tr_clear(th, TF_STEPPING);
	tr_clear(th, TF_AT_BREAK);
	/* The new image has none of our bytes, pages or debug registers. */
	tr_break_remove_all(p, false);
	tr_scratch_release_all(p, NULL);
	tr_guard_exec(p);
	memset(p->watch, 0, sizeof(p->watch));
	p->dr_generation++;
	p->syscall_gadget = 0;
	p->exit_loop = 0;
	p->shares_mm = false;
	p->execs++;
	/* The old descriptor still reaches the old program's memory, or
	 * nothing: every access goes through the new one from here. */
	tr_mem_open(p);
}

/* The stop of a thread at breakpoint bp, its pc on it. */
static void break_hit(struct tr_thread *th, struct tr_breakpoint *bp, struct tr_event *ev,
		      enum decoded *d)
{
	assert(bp->refs >= 0 && bp->orig != bp->byte && th->regs.rip == bp->addr);
	if (bp->refs == 0) {
		/* It met the breakpoint just before we took it out: the
		 * original instruction is back at the pc, so it runs now. */
		*d = SILENT_RESUME;
		return;
	}
	tr_set(th, TF_AT_BREAK);
	ev->kind = TR_EV_BREAK;
	ev->addr = bp->addr;
	*d = REPORT;
}

/* A SIGILL with the pc on one of our 0xce bytes is the breakpoint
 * (breakpoint.c); false if the program's own instruction faulted. */
static bool decode_break(struct tr_thread *th, struct tr_event *ev, enum decoded *d)
{
	struct tr_breakpoint *bp = tr_break_find_any(th->proc, th->regs.rip);

	if (!bp || bp->byte != TRACER_BREAK_BYTE || (bp->refs == 0 && bp->insn.kind == DIS_TRAP))
		return false;
	break_hit(th, bp, ev, d);
	return true;
}

/* A SIGTRAP just past one of our int3 bytes is the breakpoint: its pc is
 * rewound onto it, where the thread resumes.  False for the program's own
 * int3, wherever it is.  A thread can stand just past an instruction's
 * first byte for another reason (a debug register, a signal sent) only
 * after a 1-byte instruction, or when code jumps over a lock or rep
 * prefix (an old idiom of single-threaded fast paths): then the siginfo
 * must say int3 (SI_KERNEL), at the cost of one more system call. */
static bool may_stand_past_first_byte(const struct tr_breakpoint *bp)
{
	return bp->insn.len == 1 || bp->orig == 0xf0 || bp->orig == 0xf2 || bp->orig == 0xf3;
}

static bool decode_int3(struct tr_thread *th, struct tr_event *ev, enum decoded *d)
{
	struct tr_breakpoint *bp = tr_break_find_any(th->proc, th->regs.rip - 1);
	siginfo_t si;

	if (!bp || bp->byte != TRACER_INT3)
		return false;
	if (may_stand_past_first_byte(bp) &&
	    (ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) < 0 || si.si_code != SI_KERNEL))
		return false;
	th->regs.rip = bp->addr;
	tr_set(th, TF_REGS_DIRTY);
	break_hit(th, bp, ev, d);
	return true;
}

/* Which instruction made the access a debug register caught, and how: the
 * one that ends at rip, or else a rep string op at rip that the trap
 * stopped in the middle of its run.  Unknown (0) if neither explains it. */
static void locate_watched_access(struct tr_thread *th, struct tr_event *ev, unsigned len)
{
	struct tr_process *p = th->proc;
	uint8_t before[DIS_MAX_INSN], at[DIS_MAX_INSN];
	uint64_t rip = th->regs.rip;
	unsigned access = 0, string_access = 0;
	struct dis_insn insn, string;
	int match = -1;

	if (tracer_read_code(p, rip - sizeof(before), before, sizeof(before)) == 0)
		match = dis_access_before(before, sizeof(before), rip, &th->regs, ev->addr, len,
					  &insn, &access);
	if (match < DIS_MATCH_COVERS && tracer_read_code(p, rip, at, sizeof(at)) == 0 &&
	    dis_string_in_progress(at, sizeof(at), rip, &th->regs, ev->addr, len, &string,
				   &string_access) >= 0) {
		insn = string;
		access = string_access;
		match = DIS_MATCH_COVERS;
	}
	if (match < 0)
		return;
	ev->insn_pc = insn.addr;
	ev->access = access;
}

static enum decoded decode_trap(struct tr_thread *th, struct tr_event *ev)
{
	struct tr_process *p = th->proc;
	enum decoded d;
	int slot;

	/* A step runs the instruction from its slot, never our byte. */
	if (tr_has(th, TF_STEPPING)) {
		tr_clear(th, TF_STEPPING);
		tr_break_fix_pc_in_slot(th);
		ev->kind = TR_EV_STEP;
		return REPORT;
	}
	if (decode_int3(th, ev, &d))
		return d;
	if (tr_watch_hit(th, &slot)) {
		if (!p->watch[slot].used)
			return SILENT_RESUME;
		ev->kind = TR_EV_WATCH;
		ev->watch = slot;
		ev->addr = p->watch[slot].addr;
		/* an instruction resumed from a breakpoint ran from its slot */
		tr_break_fix_pc_in_slot(th);
		locate_watched_access(th, ev, (unsigned)p->watch[slot].len);
		return REPORT;
	}
	/* A SIGTRAP the program raised or an int3 of its own: it is the
	 * program's signal, deliver it. */
	th->pending_signal = SIGTRAP;
	ev->kind = TR_EV_SIGNAL;
	ev->signo = SIGTRAP;
	ev->fatal = !program_catches(p, SIGTRAP);
	return REPORT;
}

/* A call's exit stop that tracer_put_back_rdx asked for: rdx as it was. */
static void put_back_rdx(struct tr_thread *th)
{
	if (!tr_has(th, TF_PUT_BACK_RDX))
		return;
	th->regs.rdx = th->put_back_rdx;
	tr_set(th, TF_REGS_DIRTY);
	tr_clear(th, TF_PUT_BACK_RDX);
}

/* PTRACE_O_TRACESYSGOOD stop.  Only entries are news, and only for a
 * thread that asked for them; an exit stop (after an entry the caller let
 * run on with syscall tracing still on) just continues, with the return
 * value tracer_add_to_return asked for and the rdx tracer_put_back_rdx
 * kept.  A thread resumed only for that exit stops at the entry too: it
 * goes on, and its resume stops at the exit (tr_continue). */
static enum decoded decode_syscall_stop(struct tr_thread *th, struct tr_event *ev)
{
	struct __ptrace_syscall_info info;

	if (!tr_has(th, TF_TRACE_SYSCALLS | TF_PUT_BACK_RDX))
		return SILENT_RESUME;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, th->tid, sizeof(info), &info) <= 0)
		return SILENT_RESUME;
	if (info.op == PTRACE_SYSCALL_INFO_EXIT)
		put_back_rdx(th);
	if (!tr_has(th, TF_TRACE_SYSCALLS))
		return SILENT_RESUME;
	if (info.op == PTRACE_SYSCALL_INFO_EXIT && th->return_bonus) {
		if ((long)th->regs.rax >= 0) {
			th->regs.rax += (unsigned long long)th->return_bonus;
			tr_set(th, TF_REGS_DIRTY);
		}
		th->return_bonus = 0;
	}
	if (info.op != PTRACE_SYSCALL_INFO_ENTRY)
		return SILENT_RESUME;
	tr_set(th, TF_IN_SYSCALL_STOP);
	ev->kind = TR_EV_SYSCALL;
	ev->sysno = (long)info.entry.nr;
	return REPORT;
}

static bool stops_job(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * Most waits that our interrupt stops answer a restart code, which the
 * kernel turns into the call made again (or into EINTR if a signal
 * handler runs).  A few answer EINTR at once instead, and would not be
 * made again: epoll_wait, sigwaitinfo and sigtimedwait, semop and
 * semtimedop, io_getevents (signal(7) lists them; "interrupted by a stop
 * signal").  Holding a server's worker would make its event loop see an
 * EINTR no signal caused, and a program that takes EINTR for a signal (or
 * for an error) goes astray; a thread that waits for a signal, interrupted
 * and resumed, would loop back into its wait unseen by a search that asks
 * whether it is still asleep.  So they are given the restart code too,
 * which the kernel then honours the same way.  A timed one starts its
 * time again.  So are the transfers on a socket with a timeout
 * (SO_RCVTIMEO, SO_SNDTIMEO: EINTR, where one without answers a restart
 * code): they answer EINTR only when nothing was transferred, so the
 * call made again is the same call.  Not connect, whose second call is
 * not the first's (EALREADY), nor close and the like, which may have
 * done their work when they answer EINTR.
 */
static bool answers_eintr_when_stopped(long nr)
{
	switch (nr) {
	case TR_SYS_epoll_wait:
	case TR_SYS_epoll_pwait:
	case TR_SYS_epoll_pwait2:
	case TR_SYS_rt_sigtimedwait:
	case TR_SYS_semop:
	case TR_SYS_semtimedop:
	case TR_SYS_io_getevents:
	case TR_SYS_io_pgetevents:
	case TR_SYS_read:
	case TR_SYS_readv:
	case TR_SYS_write:
	case TR_SYS_writev:
	case TR_SYS_recvfrom:
	case TR_SYS_recvmsg:
	case TR_SYS_recvmmsg:
	case TR_SYS_sendto:
	case TR_SYS_sendmsg:
	case TR_SYS_sendmmsg:
	case TR_SYS_accept:
	case TR_SYS_accept4:
		return true;
	default:
		return false;
	}
}

bool tr_mend_interrupted_wait(struct user_regs_struct *regs)
{
	if (!answers_eintr_when_stopped((long)regs->orig_rax) || (long)regs->rax != -TR_EINTR)
		return false;
	regs->rax = (unsigned long long)-TR_ERESTARTNOHAND;
	return true;
}

/* Written at once, not at the resume: should cctrace die now (SIGKILL),
 * the kernel lets the thread go with the registers it has, and the
 * program would see the EINTR. */
static void restart_interrupted_wait(struct tr_thread *th)
{
	if (tr_mend_interrupted_wait(&th->regs)) {
		tr_set(th, TF_REGS_DIRTY);
		tr_flush_regs(th);
	}
}

static enum decoded decode_event_stop(struct tr_thread *th, int sig, struct tr_event *ev)
{
	if (!tr_has(th, TF_STARTED)) {
		/* A newborn's first stop is a trap the kernel set at its
		 * birth; an interrupt sent before the newborn reached it set
		 * the same trap, and no stop of its own follows.  So the
		 * first stop answers an interrupt too (one sent while the
		 * newborn sat in it makes a spare stop later, resumed as news
		 * of nothing).  Kept waiting for, the interrupt was never
		 * sent again: `thread B = p1.t2` of a thread not started yet
		 * held it, and a later wait for it to block timed out. */
		tr_set(th, TF_STARTED);
		tr_clear(th, TF_INTERRUPTING | TF_REPORT_INTERRUPT);
		if (let_go_at_birth(th))
			return ALREADY_HANDLED;
		ev->kind = TR_EV_START;
		return REPORT;
	}
	if (tr_has(th, TF_INTERRUPTING)) {
		bool report = tr_has(th, TF_REPORT_INTERRUPT);

		tr_clear(th, TF_INTERRUPTING | TF_REPORT_INTERRUPT);
		/* The process was stopped by job control (SIGSTOP...): this
		 * stop is its group-stop too, and resuming it must not end
		 * what only SIGCONT may end. */
		tr_assign(th, TF_GROUP_STOP, stops_job(sig));
		restart_interrupted_wait(th);
		if (!report)
			return SILENT_RESUME;
		ev->kind = TR_EV_INTERRUPT;
		return REPORT;
	}
	if (stops_job(sig)) {
		/* Group-stop: stay stopped as the program asked, but keep
		 * getting notifications. */
		ptrace(PTRACE_LISTEN, th->tid, 0, 0);
		tr_mark_running(th);
		tr_set(th, TF_LISTENING);
		return ALREADY_HANDLED;
	}
	return SILENT_RESUME;
}

static enum decoded classify_stop(struct tracer *t, struct tr_thread *th, int status,
				  struct tr_event *ev);

/*
 * Any ptrace stop answers a pending PTRACE_INTERRUPT: the kernel's
 * ptrace_stop() clears the trap it set ("any trap clears pending STOP
 * trap"), so after a breakpoint, a signal, a clone event or a system-call
 * stop of an interrupted thread no PTRACE_EVENT_STOP follows.  Waiting
 * for one left the thread running and unwatched for ever (a step's
 * interrupt answered by its system-call exit stop hung a search: its
 * thread went back to sleep in the kernel while the scheduler waited).
 * So this stop is the interrupt's answer: its own news if it has any,
 * else, when the interrupt was to be reported, the interrupt.  (A stop
 * made before the interrupt was sent leaves the kernel's trap pending:
 * the PTRACE_EVENT_STOP it makes later is resumed as news of nothing.)
 */
static enum decoded decode_stop(struct tracer *t, struct tr_thread *th, int status,
				struct tr_event *ev)
{
	bool interrupted = tr_has(th, TF_INTERRUPTING) && (status >> 16) != PTRACE_EVENT_STOP;
	bool report = interrupted && tr_has(th, TF_REPORT_INTERRUPT);
	enum decoded d;

	if (interrupted)
		tr_clear(th, TF_INTERRUPTING | TF_REPORT_INTERRUPT);
	d = classify_stop(t, th, status, ev);
	if (d == SILENT_RESUME && report && th->state == TR_HELD) {
		ev->kind = TR_EV_INTERRUPT;
		return REPORT;
	}
	return d;
}

static enum decoded classify_stop(struct tracer *t, struct tr_thread *th, int status,
				  struct tr_event *ev)
{
	int sig = WSTOPSIG(status), event = status >> 16;
	unsigned long msg = 0;
	enum decoded d;

	switch (event) {
	case PTRACE_EVENT_CLONE:
		if (!new_child_task(t, th, true, ev))
			return SILENT_RESUME; /* a thread: its start is the news */
		ev->kind = TR_EV_FORK;
		return REPORT;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		new_child_task(t, th, false, ev);
		if (ev->child && event == PTRACE_EVENT_VFORK) {
			ev->child->vforked = true;
			th->vfork_child = ev->child;
		}
		ev->kind = TR_EV_FORK;
		return REPORT;
	case PTRACE_EVENT_VFORK_DONE:
		th->vfork_child = NULL;
		return SILENT_RESUME;
	case PTRACE_EVENT_EXEC:
		process_exec(t, th);
		if (th->proc->let_go_at_exec) {
			let_go(th); /* nothing of ours is left in the new program */
			return ALREADY_HANDLED;
		}
		ev->kind = TR_EV_EXEC;
		return REPORT;
	case PTRACE_EVENT_EXIT:
		ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
		tr_set(th, TF_EXITING);
		ev->kind = TR_EV_EXIT;
		ev->status = (int)msg;
		return REPORT;
	case PTRACE_EVENT_STOP:
		return decode_event_stop(th, sig, ev);
	case 0:
		break;
	default:
		return SILENT_RESUME;
	}
	if (sig == (SIGTRAP | 0x80))
		return decode_syscall_stop(th, ev);
	if (sig == SIGTRAP)
		return decode_trap(th, ev);
	if (sig == SIGILL && decode_break(th, ev, &d))
		return d;
	if (tr_terminal_stop(th, sig))
		return ALREADY_HANDLED;
	th->pending_signal = sig;
	ev->kind = TR_EV_SIGNAL;
	ev->signo = sig;
	ev->fatal = tracer_signal_crashes(sig) && !program_catches(th->proc, sig);
	return REPORT;
}

/* A task is gone for good.  Only the last one of a process is news. */
static enum decoded task_ended(struct tracer *t, struct tr_thread *th, int status,
			       struct tr_event *ev)
{
	struct tr_process *p = th->proc;

	(void)t;
	tr_thread_gone(th);
	if (p->alive)
		return ALREADY_HANDLED;
	ev->kind = TR_EV_PROCESS_EXIT;
	ev->thread = th;
	ev->status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	ev->signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	return REPORT;
}

/* The step into the handler of a signal of the program's own (task.c): the
 * kernel has chosen its action, so ours goes back, and the thread runs on
 * as its continue asked.  Any other stop is decoded as it comes. */
static bool own_signal_delivered(struct tr_thread *th, int status)
{
	if (!tr_has(th, TF_OWN_SIGNAL))
		return false;
	tr_clear(th, TF_OWN_SIGNAL);
	if (WSTOPSIG(status) != SIGTRAP || (status >> 16) != 0 || !tr_has(th, TF_STEPPING))
		return false;
	tr_clear(th, TF_STEPPING);
	tr_guard_after_stop(th);
	return tr_continue(th, PTRACE_CONT) == 0;
}

static enum decoded decode(struct tracer *t, pid_t tid, int status, struct tr_event *ev)
{
	struct tr_thread *th = tracer_thread_by_tid(t, tid);
	enum decoded d;

	memset(ev, 0, sizeof(*ev));
	if (!th && tr_guard_is(t, tid)) { /* our guardian, stopped or killed by someone */
		if (!WIFSTOPPED(status) && !WIFCONTINUED(status))
			tr_guard_died(t, status);
		return ALREADY_HANDLED;
	}
	if (!th && tid == t->child && t->child > 0 && !WIFSTOPPED(status)) {
		t->child = 0;
		ev->kind = TR_EV_CHILD_EXIT;
		ev->status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
		ev->signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		return REPORT;
	}
	if (!th && tid == t->child && t->child > 0)
		return ALREADY_HANDLED; /* the driver stopped by job control: not ours */
	if (!th) {
		if (!WIFSTOPPED(status))
			return ALREADY_HANDLED; /* not ours, or already buried */
		th = adopt_task(t, tid);
		if (!th)
			return ALREADY_HANDLED;
	}
	ev->thread = th;
	if (!WIFSTOPPED(status))
		return task_ended(t, th, status, ev);
	tr_mark_held(th);
	if (tr_has(th, TF_MASK_SAVED)) { /* stepped with SIGTRAP unblocked: its own mask */
		tr_put_back_mask(th->tid, th->step_mask);
		tr_clear(th, TF_MASK_SAVED);
	}
	if (tr_fetch_regs(th) < 0 && errno == ESRCH)
		return ALREADY_HANDLED; /* killed while stopping; its exit follows */
	if (own_signal_delivered(th, status))
		return ALREADY_HANDLED;
	d = decode_stop(t, th, status, ev);
	/* A thread stopped inside a displaced instruction's slot is shown,
	 * and resumes, at the original address. */
	if (d == REPORT && (ev->kind == TR_EV_EXIT || ev->kind == TR_EV_SIGNAL ||
			    ev->kind == TR_EV_INTERRUPT || ev->kind == TR_EV_SYSCALL))
		tr_break_fix_pc_in_slot(th);
	if (d == REPORT) {
		ev->pc = th->regs.rip;
		th->last_event = ev->kind;
		th->last_pc = ev->pc;
		tr_thread_check(th);
	}
	/* at a stop in its own code, where a system call can be injected */
	if (d == REPORT && (ev->kind == TR_EV_BREAK || ev->kind == TR_EV_WATCH ||
			    ev->kind == TR_EV_STEP || ev->kind == TR_EV_INTERRUPT))
		tr_guard_after_stop(th);
	return d;
}

static bool any_alive(const struct tracer *t)
{
	const struct tr_process *p;

	for (p = t->processes; p; p = p->next)
		if (p->alive)
			return true;
	return false;
}

/* Threads the tables think run but the kernel no longer has: their end
 * was reaped unannounced (a race new_child_task closes where it can).
 * Looked for only when a wait times out, so it costs nothing on the way
 * of events.  Is any process still alive after? */
static bool bury_phantoms(struct tracer *t)
{
	struct tr_thread *th;
	char path[64];

	for (th = t->threads; th; th = th->next) {
		if (th->state != TR_RUNNING)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)th->proc->pid, (int)th->tid);
		if (access(path, F_OK) < 0 && errno == ENOENT)
			tr_thread_gone(th);
	}
	return any_alive(t);
}

/* The contract of tracer_wait: an event's thread is held, but for the
 * end of a process (its last thread is gone) or of the watched child. */
static bool event_thread_held(const struct tr_event *ev)
{
	if (ev->kind == TR_EV_PROCESS_EXIT || ev->kind == TR_EV_CHILD_EXIT)
		return true;
	tr_thread_check(ev->thread);
	return ev->thread->state == TR_HELD;
}

enum tr_wait_result tracer_wait(struct tracer *t, struct tr_event *ev, int64_t deadline_ms,
				int *signo)
{
	int status;
	pid_t tid;

	assert(t->queue_len <= t->queue_cap);
	if (t->queue_len) {
		*ev = t->queue[t->queue_head];
		t->queue_head = (t->queue_head + 1) % t->queue_cap;
		t->queue_len--;
		assert(event_thread_held(ev));
		return TR_WAIT_EVENT;
	}
	for (;;) {
		/* Told from the tables, not by ECHILD: a search's template
		 * (tracer/fork.c) is a child of this process too, and keeps
		 * waitid from ever failing, for a forked run and for a fresh
		 * launch (a replay) made while it lives. */
		if (t->processes && !t->child && !any_alive(t))
			return TR_WAIT_NO_TASKS;
		switch (tr_wait_any(deadline_ms, &tid, &status)) {
		case TR_ANY_REAPED:
			break;
		case TR_ANY_DEADLINE:
			if (t->processes && !t->child && !bury_phantoms(t))
				return TR_WAIT_NO_TASKS;
			return TR_WAIT_TIMEOUT;
		case TR_ANY_STOP:
			if (signo)
				*signo = tracer_stop_signal(false);
			return TR_WAIT_INTERRUPTED;
		default:
			return errno == ECHILD ? TR_WAIT_NO_TASKS : TR_WAIT_ERROR;
		}
		switch (decode(t, tid, status, ev)) {
		case REPORT:
			assert(event_thread_held(ev));
			return TR_WAIT_EVENT;
		case SILENT_RESUME:
			tr_continue(ev->thread, PTRACE_CONT);
			break;
		case ALREADY_HANDLED:
			break;
		}
	}
}

int tracer_singlestep(struct tr_thread *th)
{
	if (th->state == TR_HELD)
		th->step.npending = 0; /* as tracer_resume (task.c) */
	return tr_singlestep(th);
}

/* One instruction; the stepper's pending accesses stay (see task.c). */
int tr_singlestep(struct tr_thread *th)
{
	struct tr_breakpoint *bp;

	if (th->state != TR_HELD)
		return -1;
	/* Stepping executes the instruction, whether or not the breakpoint
	 * on it has been reported. */
	bp = tr_break_find(th->proc, th->regs.rip);
	if (bp && !bp->slot) {
		/* Emulated: the step is done without running the thread. */
		if (dis_emulate(&bp->insn, bp->code, &th->regs, tr_peek_fn, tr_poke_fn, th->proc) <
		    0)
			return -1;
		tr_set(th, TF_REGS_DIRTY);
		tr_clear(th, TF_AT_BREAK);
		return tr_queue_event(
		    th->proc->tracer,
		    &(struct tr_event){.kind = TR_EV_STEP, .thread = th, .pc = th->regs.rip});
	}
	if (bp) {
		th->regs.rip = bp->slot;
		tr_set(th, TF_REGS_DIRTY);
	}
	return tr_continue(th, PTRACE_SINGLESTEP);
}

/* Double the ring, unwrapping it so that the oldest event is first. */
static int grow_queue(struct tracer *t)
{
	unsigned cap = t->queue_cap ? 2 * t->queue_cap : 64, i;
	struct tr_event *grown = malloc(sizeof(*grown) * cap);

	if (!grown) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < t->queue_len; i++)
		grown[i] = t->queue[(t->queue_head + i) % t->queue_cap];
	free(t->queue);
	t->queue = grown;
	t->queue_head = 0;
	t->queue_cap = cap;
	return 0;
}

int tr_queue_event(struct tracer *t, const struct tr_event *ev)
{
	if (t->queue_len == t->queue_cap && grow_queue(t) < 0)
		return -1;
	t->queue[(t->queue_head + t->queue_len) % t->queue_cap] = *ev;
	t->queue_len++;
	return 0;
}

/* A thread resumed while its start is still queued: whoever resumed it
 * knew it was there, so its start is news no more, and delivered later
 * it would break tracer_wait's contract (its thread no longer held).
 * Any other event pending for a thread that is resumed is a caller's
 * mistake, which tracer_wait's assertion catches. */
void tr_drop_queued_start(struct tracer *t, const struct tr_thread *th)
{
	unsigned i, kept = 0;

	for (i = 0; i < t->queue_len; i++) {
		struct tr_event *ev = &t->queue[(t->queue_head + i) % t->queue_cap];

		if (ev->thread == th && ev->kind == TR_EV_START)
			continue;
		t->queue[(t->queue_head + kept++) % t->queue_cap] = *ev;
	}
	t->queue_len = kept;
}

int tracer_push_back(struct tracer *t, const struct tr_event *ev)
{
	if (t->queue_len == t->queue_cap && grow_queue(t) < 0)
		return -1;
	t->queue_head = (t->queue_head + t->queue_cap - 1) % t->queue_cap;
	t->queue[t->queue_head] = *ev;
	t->queue_len++;
	return 0;
}

/* Can task tid of pid no longer report a stop?  Gone from /proc, dead, or
 * a zombie: a zombie leader is reported only after its other threads. */
static bool task_cannot_report(pid_t pid, pid_t tid)
{
	char state = 0;

	if (tr_task_stat(pid, tid, &state, NULL) < 0)
		return true;
	return state == 'Z' || state == 'X' || state == 'x';
}

/* Sleep until a SIGCHLD (SIGCHLD blocked by the caller), a handled signal,
 * or ms milliseconds. */
static void await_sigchld(const sigset_t *chld, int64_t ms)
{
	struct timespec ts;

	if (ms < 1)
		ms = 1;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	sigtimedwait(chld, NULL, &ts);
}

int tr_wait_task(pid_t pid, pid_t tid, int64_t deadline_ms, bool interruptible, int *status)
{
	enum { CHECK_MS = 20 }; /* how often a silent task is looked up in /proc */
	int stop_before = tracer_stop_signal(false), rc;
	int64_t now, check_at = tracer_now_ms() + CHECK_MS, until;
	sigset_t chld, old;
	pid_t got;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	for (;;) {
		got = waitpid(tid, status, __WALL | WUNTRACED | WNOHANG);
		if (got == tid) {
			rc = TR_TASK_STATUS;
			break;
		}
		if (got < 0 && errno != EINTR) {
			rc = TR_TASK_UNKNOWN; /* reaped already, or never ours */
			break;
		}
		/* A stop signal that was pending before (the user's Ctrl-C
		 * that started a detach) does not cut short the waits of
		 * the detach itself: their deadline bounds them. */
		if (interruptible && !stop_before && tracer_stop_signal(false)) {
			rc = TR_TASK_STOP;
			break;
		}
		now = tracer_now_ms();
		if (deadline_ms >= 0 && now >= deadline_ms) {
			rc = TR_TASK_DEADLINE;
			break;
		}
		if (now >= check_at) {
			if (task_cannot_report(pid, tid)) {
				rc = TR_TASK_VANISHED;
				break;
			}
			check_at = now + CHECK_MS;
		}
		until = deadline_ms >= 0 && deadline_ms < check_at ? deadline_ms : check_at;
		await_sigchld(&chld, until - now);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void tr_thread_vanished(struct tr_thread *th, int how)
{
	if (how == TR_TASK_UNKNOWN) {
		tr_thread_gone(th);
		return;
	}
	/* Dying: it runs no more user code, and its end, if it still has one
	 * to report, comes through tracer_wait. */
	tr_mark_running(th);
	tr_set(th, TF_EXITING);
	tr_clear(th, TF_INTERRUPTING | TF_REPORT_INTERRUPT);
}

void tr_take_status(struct tracer *t, pid_t tid, int status)
{
	struct tr_event ev;

	if (decode(t, tid, status, &ev) == REPORT)
		tr_queue_event(t, &ev);
}

int tracer_await_gone(struct tr_thread *th, int64_t deadline_ms)
{
	int status, rc;

	if (th->state == TR_EXITED)
		return 0;
	if (th->state != TR_RUNNING || !tr_has(th, TF_EXITING))
		return -1;
	rc = tr_wait_task(th->proc->pid, th->tid, deadline_ms, false, &status);
	if (rc == TR_TASK_VANISHED || rc == TR_TASK_UNKNOWN)
		tr_thread_vanished(th, rc);
	else if (rc == TR_TASK_STATUS)
		tr_take_status(th->proc->tracer, th->tid, status);
	return th->state == TR_EXITED ? 0 : -1;
}

/* Wait for th alone to stop after we interrupted it.  If it stopped for a
 * real event instead, that event is queued for tracer_wait, not lost.  A
 * thread that does not stop within TR_STOP_TIMEOUT_MS (it sleeps in the
 * kernel, uninterruptibly) or dies meanwhile is not waited for. */
int tr_wait_for_stop(struct tracer *t, struct tr_thread *th)
{
	int64_t deadline = tracer_now_ms() + TR_STOP_TIMEOUT_MS;
	struct tr_event ev;
	enum decoded d;
	int status, rc;

	for (;;) {
		rc = tr_wait_task(th->proc->pid, th->tid, deadline, true, &status);
		if (rc == TR_TASK_VANISHED || rc == TR_TASK_UNKNOWN)
			tr_thread_vanished(th, rc);
		if (rc != TR_TASK_STATUS)
			return -1;
		switch ((d = decode(t, th->tid, status, &ev))) {
		case REPORT:
		case SILENT_RESUME:
			tr_clear(th, TF_INTERRUPTING);
			tr_clear(th, TF_REPORT_INTERRUPT);
			/* Without room for it the event would be lost and its
			 * thread held for ever: fail instead. */
			if (d == REPORT && ev.kind != TR_EV_INTERRUPT && tr_queue_event(t, &ev) < 0)
				return -1;
			return th->state == TR_HELD ? 0 : -1;
		case ALREADY_HANDLED:
			if (th->state == TR_EXITED)
				return -1;
			if (tr_has(th, TF_LISTENING))
				return 0;
			break;
		}
	}
}

/*
 * A thread that has passed its exit event never stops again, and a
 * thread-group leader that has (a main thread after pthread_exit, or any
 * thread of a killed server) is reported only once every other thread has
 * gone: waiting for it while we hold the others never returns.  Nor does
 * a thread in vfork, asleep until its child (which we may hold) executes a
 * program or exits.  So only threads that can still stop are interrupted
 * and waited for.
 */
static bool can_stop(const struct tr_thread *th)
{
	return th->state == TR_RUNNING && !tr_has(th, TF_EXITING) &&
	       !tracer_thread_waits_for_vfork(th);
}

int tracer_stop_all(struct tracer *t)
{
	struct tr_thread *th;

	for (th = t->threads; th; th = th->next) {
		if (!can_stop(th))
			continue;
		if (!tr_has(th, TF_INTERRUPTING)) {
			if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
				continue;
			tr_set(th, TF_INTERRUPTING);
		}
	}
	for (th = t->threads; th; th = th->next)
		if (can_stop(th))
			tr_wait_for_stop(t, th);
	return 0;
}

void tracer_watch_child(struct tracer *t, pid_t pid)
{
	t->child = pid;
}

bool tracer_event_pending(struct tr_thread *th)
{
	struct tracer *t = th->proc->tracer;
	unsigned i;

	for (i = 0; i < t->queue_len; i++)
		if (t->queue[(t->queue_head + i) % t->queue_cap].thread == th)
			return true;
	return false;
}

struct tr_thread *tr_borrow_thread(struct tr_process *p, bool *borrowed)
{
	struct tr_thread *th = tr_any_held_thread(p);

	*borrowed = false;
	if (th)
		return th;
	for (th = p->tracer->threads; th; th = th->next) {
		if (th->proc != p || th->state != TR_RUNNING || tr_has(th, TF_EXITING) ||
		    tr_has(th, TF_LISTENING))
			continue;
		if (!tr_has(th, TF_INTERRUPTING) && ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
			continue;
		tr_set(th, TF_INTERRUPTING);
		tr_clear(th, TF_REPORT_INTERRUPT);
		if (tr_wait_for_stop(p->tracer, th) == 0) {
			*borrowed = true;
			return th;
		}
	}
	return NULL;
}

/* Give back a borrowed thread: it runs on unless a real event of its own
 * is queued, in which case it stays held for the caller to see. */
void tr_return_thread(struct tr_thread *th, bool borrowed)
{
	if (borrowed && th->state == TR_HELD && !tracer_event_pending(th))
		tr_continue(th, PTRACE_CONT);
}
