/*
 * wait.c: turning wait statuses into events.
 *
 * Waiting is one blocking waitid() (signals.c), which a stop signal or the
 * deadline can cut short: one place where a stop, a timeout and the
 * user's Ctrl-C all arrive, and one system call per event.
 *
 * Each stop is decoded into one of: an event for the caller (the thread
 * stays held), or bookkeeping done here, after which the thread is resumed
 * at once.  The decoding is table-like: ptrace event first, then the signal,
 * then for SIGTRAP which of our mechanisms (step, debug register) caused
 * it, and for SIGILL whether the pc is on one of our breakpoints.
 */
#include "tracer/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

enum decoded { SILENT_RESUME, REPORT, ALREADY_HANDLED };

static pid_t thread_group_of(pid_t tid)
{
	unsigned long long tgid;

	return tr_status_field(tid, 0, "Tgid", 10, &tgid) == 0 ? (pid_t)tgid : -1;
}

static struct tr_process *process_by_pid(struct tracer *t, pid_t pid)
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
	struct tr_process *p = process_by_pid(t, tgid), *parent;

	if (!p) {
		p = tr_process_new(t, tgid);
		if (!p)
			return NULL;
		parent = process_by_pid(t, parent_of(tgid));
		if (parent)
			tr_process_inherit(parent, p);
	}
	return tr_thread_new(t, p, tid);
}

static bool signal_is_caught(pid_t pid, int sig)
{
	unsigned long long caught = 0, ignored = 0;

	tr_status_field(pid, 0, "SigCgt", 16, &caught);
	tr_status_field(pid, 0, "SigIgn", 16, &ignored);
	return (caught | ignored) & (1ull << (sig - 1));
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

/* The task a clone, fork or vfork event announces joins the tables (its
 * own first stop may have come first).  A clone without CLONE_THREAD makes
 * a process, as fork does: returns whether a process was made. */
static bool new_child_task(struct tracer *t, struct tr_thread *th, bool by_clone,
			   struct tr_event *ev)
{
	unsigned long msg = 0;
	struct tr_thread *child;
	bool new_process;

	ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
	new_process = !by_clone || thread_group_of((pid_t)msg) == (pid_t)msg;
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
		}
	}
	if (child && new_process)
		ev->child = child->proc;
	return new_process;
}

static void process_exec(struct tracer *t, struct tr_thread *th)
{
	struct tr_process *p = th->proc;
	struct tr_thread *other;

	for (other = t->threads; other; other = other->next)
		if (other->proc == p && other != th && other->state != TR_EXITED)
			other->state = TR_EXITED;
	/* The new image has none of our bytes, pages or debug registers. */
	tr_break_remove_all(p, false);
	tr_scratch_release_all(p, NULL);
	tr_guard_exec(p);
	memset(p->watch, 0, sizeof(p->watch));
	p->dr_generation++;
	p->syscall_gadget = 0;
	tr_mem_open(p);
}

/* A SIGILL with the pc on one of our breakpoint bytes is the breakpoint
 * (breakpoint.c); false if the program's own instruction faulted. */
static bool decode_break(struct tr_thread *th, struct tr_event *ev, enum decoded *d)
{
	struct tr_breakpoint *bp = tr_break_find_any(th->proc, th->regs.rip);

	if (!bp || (bp->refs == 0 && bp->insn.kind == DIS_TRAP))
		return false;
	if (bp->refs == 0) {
		/* It met the breakpoint just before we took it out: the
		 * original instruction is back at the pc, so it runs now. */
		*d = SILENT_RESUME;
		return true;
	}
	th->at_break = true;
	ev->kind = TR_EV_BREAK;
	ev->addr = bp->addr;
	*d = REPORT;
	return true;
}

static enum decoded decode_trap(struct tr_thread *th, struct tr_event *ev)
{
	struct tr_process *p = th->proc;
	int slot;

	if (th->stepping) {
		th->stepping = false;
		tr_break_fix_pc_in_slot(th);
		ev->kind = TR_EV_STEP;
		return REPORT;
	}
	if (tr_watch_hit(th, &slot)) {
		uint8_t window[DIS_MAX_INSN];
		struct dis_insn insn;

		if (!p->watch[slot].used)
			return SILENT_RESUME;
		ev->kind = TR_EV_WATCH;
		ev->watch = slot;
		ev->addr = p->watch[slot].addr;
		if (tracer_read_code(p, th->regs.rip - sizeof(window), window, sizeof(window)) == 0)
			dis_access_before(window, sizeof(window), th->regs.rip, &th->regs, ev->addr,
					  &insn, &ev->access);
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

/* PTRACE_O_TRACESYSGOOD stop.  Only entries are news, and only for a
 * thread that asked for them; an exit stop (after an entry the caller let
 * run on with syscall tracing still on) just continues. */
static enum decoded decode_syscall_stop(struct tr_thread *th, struct tr_event *ev)
{
	struct __ptrace_syscall_info info;

	if (!th->trace_syscalls)
		return SILENT_RESUME;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, th->tid, sizeof(info), &info) <= 0 ||
	    info.op != PTRACE_SYSCALL_INFO_ENTRY)
		return SILENT_RESUME;
	th->in_syscall_stop = true;
	ev->kind = TR_EV_SYSCALL;
	ev->sysno = (long)info.entry.nr;
	return REPORT;
}

static enum decoded decode_event_stop(struct tr_thread *th, int sig, struct tr_event *ev)
{
	if (!th->started) {
		th->started = true;
		ev->kind = TR_EV_START;
		return REPORT;
	}
	if (th->interrupting) {
		th->interrupting = false;
		if (!th->report_interrupt)
			return SILENT_RESUME;
		th->report_interrupt = false;
		ev->kind = TR_EV_INTERRUPT;
		return REPORT;
	}
	if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
		/* Group-stop: stay stopped as the program asked, but keep
		 * getting notifications. */
		ptrace(PTRACE_LISTEN, th->tid, 0, 0);
		th->listening = true;
		th->state = TR_RUNNING;
		return ALREADY_HANDLED;
	}
	return SILENT_RESUME;
}

static enum decoded decode_stop(struct tracer *t, struct tr_thread *th, int status,
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
		ev->kind = TR_EV_FORK;
		return REPORT;
	case PTRACE_EVENT_VFORK_DONE:
		return SILENT_RESUME;
	case PTRACE_EVENT_EXEC:
		process_exec(t, th);
		ev->kind = TR_EV_EXEC;
		return REPORT;
	case PTRACE_EVENT_EXIT:
		ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &msg);
		th->exiting = true;
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

static enum decoded decode(struct tracer *t, pid_t tid, int status, struct tr_event *ev)
{
	struct tr_thread *th = tracer_thread_by_tid(t, tid);
	enum decoded d;

	memset(ev, 0, sizeof(*ev));
	if (!th && tr_guard_is(t, tid))
		return ALREADY_HANDLED; /* our guardian, stopped or killed by someone */
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
	th->state = TR_HELD;
	th->listening = false;
	if (tr_fetch_regs(th) < 0 && errno == ESRCH)
		return ALREADY_HANDLED; /* killed while stopping; its exit follows */
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
	}
	return d;
}

enum tr_wait_result tracer_wait(struct tracer *t, struct tr_event *ev, int64_t deadline_ms,
				int *signo)
{
	int status;
	pid_t tid;

	if (t->queue_len) {
		*ev = t->queue[t->queue_head];
		t->queue_head = (t->queue_head + 1) % 64;
		t->queue_len--;
		return TR_WAIT_EVENT;
	}
	for (;;) {
		switch (tr_wait_any(deadline_ms, &tid, &status)) {
		case TR_ANY_REAPED:
			break;
		case TR_ANY_DEADLINE:
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
	struct tr_breakpoint *bp;

	if (th->state != TR_HELD)
		return -1;
	/* Stepping executes the instruction, whether or not the breakpoint
	 * on it has been reported. */
	bp = tr_break_find(th->proc, th->regs.rip);
	if (bp && !bp->slot) {
		/* Emulated: the step is done without running the thread. */
		if (dis_emulate(&bp->insn, &th->regs, tr_peek_fn, tr_poke_fn, th->proc) < 0)
			return -1;
		th->regs_dirty = true;
		th->at_break = false;
		tr_queue_event(
		    th->proc->tracer,
		    &(struct tr_event){.kind = TR_EV_STEP, .thread = th, .pc = th->regs.rip});
		return 0;
	}
	if (bp) {
		th->regs.rip = bp->slot;
		th->regs_dirty = true;
	}
	return tr_continue(th, PTRACE_SINGLESTEP);
}

void tr_queue_event(struct tracer *t, const struct tr_event *ev)
{
	if (t->queue_len == 64)
		return;
	t->queue[(t->queue_head + t->queue_len) % 64] = *ev;
	t->queue_len++;
}

/* Wait for th alone to stop after we interrupted it.  If it stopped for a
 * real event instead, that event is queued for tracer_wait, not lost. */
int tr_wait_for_stop(struct tracer *t, struct tr_thread *th)
{
	struct tr_event ev;
	int status;

	for (;;) {
		if (waitpid(th->tid, &status, __WALL) < 0)
			return -1;
		switch (decode(t, th->tid, status, &ev)) {
		case REPORT:
			if (ev.kind != TR_EV_INTERRUPT)
				tr_queue_event(t, &ev);
			/* fall through */
		case SILENT_RESUME:
			th->interrupting = false;
			th->report_interrupt = false;
			return th->state == TR_HELD ? 0 : -1;
		case ALREADY_HANDLED:
			if (th->state == TR_EXITED)
				return -1;
			if (th->listening)
				return 0;
			break;
		}
	}
}

/*
 * A thread that has passed its exit event never stops again, and a
 * thread-group leader that has (a main thread after pthread_exit, or any
 * thread of a killed server) is reported only once every other thread has
 * gone: waiting for it while we hold the others never returns.  So only
 * threads that can still stop are interrupted and waited for.
 */
static bool can_stop(const struct tr_thread *th)
{
	return th->state == TR_RUNNING && !th->exiting;
}

int tracer_stop_all(struct tracer *t)
{
	struct tr_thread *th;

	for (th = t->threads; th; th = th->next) {
		if (!can_stop(th))
			continue;
		if (!th->interrupting) {
			if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
				continue;
			th->interrupting = true;
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
		if (t->queue[(t->queue_head + i) % 64].thread == th)
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
		if (th->proc != p || th->state != TR_RUNNING || th->exiting || th->listening)
			continue;
		if (!th->interrupting && ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
			continue;
		th->interrupting = true;
		th->report_interrupt = false;
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
