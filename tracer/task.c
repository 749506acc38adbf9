/*
 * task.c: the thread and process tables.
 *
 * Threads and processes live in creation-ordered lists and are never freed
 * before tracer_free(), so a pointer the caller holds stays valid after the
 * thread exits (its state just becomes TR_EXITED).  Names are given in
 * creation order, "p<process>.t<thread>", so that the same program run the
 * same way gets the same names.  Registers are fetched once per stop and
 * written back only if something changed them.
 */
#include "tracer/internal.h"

#include <elf.h>

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct tracer *tracer_new(const struct tracer_options *opt)
{
	struct tracer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (opt)
		t->opt = *opt;
	t->threads_tail = &t->threads;
	t->processes_tail = &t->processes;
	t->cpu = -1;
	tr_signals_install();
	if (t->opt.pin_cpu) {
		int cpu = sched_getcpu();
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (cpu >= 0 && sched_setaffinity(0, sizeof(set), &set) == 0)
			t->cpu = cpu;
	}
	return t;
}

void tracer_free(struct tracer *t)
{
	if (!t)
		return;
	/* First: letting go of the tables is not letting go of the program
	 * (the guardian still acts if nothing was detached). */
	tr_guard_free(t);
	while (t->threads) {
		struct tr_thread *th = t->threads;

		t->threads = th->next;
		free(th);
	}
	while (t->processes) {
		struct tr_process *p = t->processes;

		t->processes = p->next;
		tr_break_remove_all(p, false);
		while (p->scratch) {
			struct tr_scratch *s = p->scratch;

			p->scratch = s->next;
			free(s);
		}
		if (p->mem_fd >= 0)
			close(p->mem_fd);
		free(p->fork_stub);
		free(p);
	}
	free(t->queue);
	free(t);
}

int64_t tracer_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t tracer_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct tr_process *tr_process_new(struct tracer *t, pid_t pid)
{
	struct tr_process *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->index = ++t->next_process_index;
	p->alive = true;
	p->tracer = t;
	p->mem_fd = -1;
	p->dr_generation = 0;
	tr_mem_open(p);
	*t->processes_tail = p;
	t->processes_tail = &p->next;
	tr_guard_process(p); /* without a record, changes to it are refused */
	return p;
}

void tr_process_inherit(struct tr_process *parent, struct tr_process *child)
{
	/* A child of a program we launched is part of that program: it is
	 * killed with it rather than left running. */
	child->launched = parent->launched;
	child->parent_pid = parent->pid;
	child->shares_mm = tr_shares_mm(child->pid, parent->pid);
	child->let_go = parent->tracer->opt.no_children && !parent->launched;
	tr_guard_inherit(parent, child);
	tr_break_inherit(parent, child);
}

struct tr_thread *tr_thread_new(struct tracer *t, struct tr_process *p, pid_t tid)
{
	struct tr_thread *th = calloc(1, sizeof(*th));

	if (!th)
		return NULL;
	assert(tid > 0 && p && p->tracer == t);
	th->tid = tid;
	th->restarts = -1;
	th->proc = p;
	th->state = TR_RUNNING;
	th->dr_generation = -1;
	tr_set(th, TF_DR7_CLEAR); /* the attach paths say otherwise */
	snprintf(th->name, sizeof(th->name), "p%d.t%d", p->index, ++p->next_thread_index);
	*t->threads_tail = th;
	t->threads_tail = &th->next;
	return th;
}

void tr_thread_check(const struct tr_thread *th)
{
	unsigned held_at = th->flags & (TF_AT_BREAK | TF_IN_SYSCALL_STOP | TF_GROUP_STOP);

	assert(th->state == TR_RUNNING || th->state == TR_HELD || th->state == TR_EXITED);
	assert(th->state == TR_HELD || !tr_has(th, TF_HELD_ONLY));
	assert((held_at & (held_at - 1)) == 0); /* at most one */
	assert(th->state != TR_HELD || !tr_has(th, TF_LISTENING));
	assert(!tr_has(th, TF_REPORT_INTERRUPT) || tr_has(th, TF_INTERRUPTING));
	assert(th->state != TR_EXITED || !tr_has(th, TF_LIVE_ONLY));
}

void tr_mark_held(struct tr_thread *th)
{
	assert(th->state != TR_EXITED); /* an exited task reports nothing */
	th->state = TR_HELD;
	tr_clear(th, TF_HELD_ONLY | TF_LISTENING);
	tr_thread_check(th);
}

void tr_mark_running(struct tr_thread *th)
{
	assert(th->state != TR_EXITED);
	th->state = TR_RUNNING;
	tr_clear(th, TF_HELD_ONLY);
	tr_thread_check(th);
}

void tr_mark_exited(struct tr_thread *th)
{
	th->state = TR_EXITED;
	th->step.npending = 0; /* no stop is left to judge them at */
	tr_clear(th, TF_LIVE_ONLY);
	tr_thread_check(th);
}

void tr_thread_gone(struct tr_thread *th)
{
	struct tracer *t = th->proc->tracer;
	struct tr_thread *other;

	tr_mark_exited(th);
	for (other = t->threads; other; other = other->next)
		if (other->proc == th->proc && other->state != TR_EXITED)
			return;
	th->proc->alive = false;
	tr_guard_process_gone(th->proc); /* nothing of ours is left to restore */
}

struct tr_thread *tracer_threads(struct tracer *t)
{
	return t->threads;
}

struct tr_thread *tracer_thread_next(const struct tr_thread *th)
{
	return th->next;
}

pid_t tracer_thread_tid(const struct tr_thread *th)
{
	return th->tid;
}

const char *tracer_thread_name(const struct tr_thread *th)
{
	return th->name;
}

struct tr_process *tracer_thread_process(const struct tr_thread *th)
{
	return th->proc;
}

enum tr_state tracer_thread_state(const struct tr_thread *th)
{
	return th->state;
}

bool tracer_thread_held(const struct tr_thread *th)
{
	return th->state == TR_HELD;
}

bool tracer_thread_running(const struct tr_thread *th)
{
	return th->state == TR_RUNNING;
}

bool tracer_thread_exited(const struct tr_thread *th)
{
	return th->state == TR_EXITED;
}

enum tr_event_kind tracer_thread_last_event(const struct tr_thread *th)
{
	return th->last_event;
}

void *tracer_thread_user(const struct tr_thread *th)
{
	return th->user;
}

void tracer_thread_set_user(struct tr_thread *th, void *user)
{
	th->user = user;
}

struct tr_thread *tracer_thread_by_tid(struct tracer *t, pid_t tid)
{
	struct tr_thread *th;

	for (th = t->threads; th; th = th->next)
		if (th->tid == tid && th->state != TR_EXITED)
			return th;
	return NULL;
}

struct tr_thread *tracer_thread_by_name(struct tracer *t, const char *name)
{
	struct tr_thread *th;

	for (th = t->threads; th; th = th->next)
		if (strcmp(th->name, name) == 0)
			return th;
	return NULL;
}

struct tr_process *tracer_processes(struct tracer *t)
{
	return t->processes;
}

struct tr_process *tracer_process_next(struct tr_process *p)
{
	return p->next;
}

pid_t tracer_process_parent_pid(const struct tr_process *p)
{
	return p->parent_pid;
}

pid_t tracer_process_pid(const struct tr_process *p)
{
	return p->pid;
}

int tracer_process_index(const struct tr_process *p)
{
	return p->index;
}

bool tracer_process_alive(const struct tr_process *p)
{
	return p->alive;
}

uint64_t tracer_process_entry(const struct tr_process *p)
{
	return tr_auxv_value(p->pid, AT_ENTRY);
}

bool tracer_process_vfork_pending(const struct tr_process *p)
{
	return p->vforked && p->shares_mm && p->alive && !tracer_process_exiting(p);
}

bool tracer_thread_waits_for_vfork(const struct tr_thread *th)
{
	return th->vfork_child && tracer_process_vfork_pending(th->vfork_child);
}

bool tracer_process_pristine(const struct tr_process *p)
{
	return p->pristine;
}

/* Killed, or exiting, before it could tell us (its exit stop is not
 * reaped yet, or it was held when the SIGKILL came): do_exit marks it
 * (TR_PF_DYING), and before that a SIGKILL (which exit_group and a fatal
 * signal send every thread) is pending. */
bool tr_task_dying(pid_t pid, pid_t tid)
{
	unsigned long long pending = 0;
	unsigned long flags = 0;
	char state = 0;

	if (tr_task_stat(pid, tid, &state, &flags) < 0)
		return true;
	if (state == 'Z' || state == 'X' || state == 'x' || (flags & TR_PF_DYING))
		return true;
	tr_status_field(pid, tid, "SigPnd", 16, &pending);
	return pending & (1ull << (SIGKILL - 1));
}

/* Is every task of pid dying (or is it gone)?  A leader that called
 * pthread_exit is a zombie while the others run, so one task says nothing. */
bool tr_pid_dying(pid_t pid)
{
	char path[64];
	struct dirent *de;
	bool dying = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return true;
	while (dying && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid > 0 && !tr_task_dying(pid, tid))
			dying = false;
	}
	closedir(d);
	return dying;
}

bool tracer_process_exiting(const struct tr_process *p)
{
	struct tr_thread *th;

	for (th = p->tracer->threads; th; th = th->next)
		if (th->proc == p && th->state != TR_EXITED && !tr_has(th, TF_EXITING) &&
		    !tr_task_dying(p->pid, th->tid))
			return false;
	return true;
}

void *tracer_process_user(const struct tr_process *p)
{
	return p->user;
}

void tracer_process_set_user(struct tr_process *p, void *user)
{
	p->user = user;
}

/* The call the thread is in, as its own: restart_syscall named by the
 * call it continues (tr_thread.restarts). */
static long call_of(const struct tr_thread *th, long nr)
{
	return nr == TR_SYS_restart_syscall && th->restarts >= 0 ? th->restarts : nr;
}

/* A stop inside a call that restart_syscall will continue: remember which. */
static void note_restart(struct tr_thread *th)
{
	if ((long)th->regs.orig_rax >= 0 && (long)th->regs.rax == -TR_ERESTART_RESTARTBLOCK &&
	    (long)th->regs.orig_rax != TR_SYS_restart_syscall)
		th->restarts = (long)th->regs.orig_rax;
}

int tr_fetch_regs(struct tr_thread *th)
{
	assert(th->state == TR_HELD); /* only a stopped task has registers to read */
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &th->regs) < 0)
		return -1;
	tr_clear(th, TF_REGS_DIRTY);
	note_restart(th);
	return 0;
}

int tr_flush_regs(struct tr_thread *th)
{
	assert(!tr_has(th, TF_REGS_DIRTY) || th->state == TR_HELD);
	if (!tr_has(th, TF_REGS_DIRTY))
		return 0;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &th->regs) < 0)
		return -1;
	tr_clear(th, TF_REGS_DIRTY);
	return 0;
}

const struct user_regs_struct *tracer_regs(struct tr_thread *th)
{
	return &th->regs;
}

uint64_t tracer_thread_pending_signals(const struct tr_thread *th)
{
	static const struct tr_status_key keys[] = {{"SigPnd", 16}, {"ShdPnd", 16}};
	unsigned long long pending[2] = {0, 0};

	if (tr_status_fields(th->proc->pid, th->tid, keys, 2, pending) < 0)
		return 0;
	return pending[0] | pending[1];
}

int tracer_fpregs(struct tr_thread *th, struct user_fpregs_struct *out)
{
	if (th->state != TR_HELD)
		return -1;
	return ptrace(PTRACE_GETFPREGS, th->tid, 0, out) < 0 ? -1 : 0;
}

int tracer_set_regs(struct tr_thread *th, const struct user_regs_struct *regs)
{
	if (th->state != TR_HELD)
		return -1;
	th->regs = *regs;
	tr_set(th, TF_REGS_DIRTY);
	return 0;
}

/*
 * PTRACE_LISTEN works only from the event stop that reported the
 * group-stop.  A thread we made take a step since (an injected system
 * call) is in another stop: it is trapped again (PTRACE_INTERRUPT, then
 * PTRACE_CONT, which stops at the trap before any instruction of the
 * program runs) and listens from there.
 */
static int listen_in_group_stop(struct tr_thread *th)
{
	int status;

	if (ptrace(PTRACE_LISTEN, th->tid, 0, 0) == 0 || errno != EIO)
		return errno == EIO ? -1 : (errno ? -1 : 0);
	if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0 || ptrace(PTRACE_CONT, th->tid, 0, 0) < 0)
		return -1;
	if (tr_wait_task(th->proc->pid, th->tid, tracer_now_ms() + TR_STOP_TIMEOUT_MS, false,
			 &status) != TR_TASK_STATUS) {
		errno = ESRCH;
		return -1;
	}
	if (!WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_STOP) {
		/* Something real came first (it was killed): its news. */
		tr_take_status(th->proc->tracer, th->tid, status);
		errno = ESRCH;
		return -1;
	}
	return ptrace(PTRACE_LISTEN, th->tid, 0, 0);
}

/*
 * The kernel delivers the SIGTRAP of a single step (and of an int3) by
 * force_sig_info_to_task(), which, when the thread blocks SIGTRAP,
 * unblocks it and resets its action to SIG_DFL: a program whose own
 * SIGTRAP handler ran while cctrace stepped it (an injected call, a step
 * over a breakpoint: the handler blocks SIGTRAP unless SA_NODEFER) lost
 * that handler, and its next raise(SIGTRAP) after the detach killed it.
 * Unblocked for the step, the trap is a plain ptrace stop.
 */
#define TRAP_BIT (1ull << (SIGTRAP - 1))

bool tr_unblock_trap(pid_t tid, uint64_t *mask)
{
	uint64_t unblocked;

	if (ptrace(PTRACE_GETSIGMASK, tid, sizeof(*mask), mask) < 0 || !(*mask & TRAP_BIT))
		return false;
	unblocked = *mask & ~TRAP_BIT;
	return ptrace(PTRACE_SETSIGMASK, tid, sizeof(unblocked), &unblocked) == 0;
}

void tr_put_back_mask(pid_t tid, uint64_t mask)
{
	ptrace(PTRACE_SETSIGMASK, tid, sizeof(mask), &mask);
}

int tr_continue(struct tr_thread *th, int request)
{
	int sig = th->pending_signal;

	assert(th->state == TR_HELD); /* only a stopped task can be resumed */
	assert(request == PTRACE_CONT || request == PTRACE_SINGLESTEP);
	if (tr_flush_regs(th) < 0 && errno == ESRCH)
		goto gone;
	if (th->proc->unclaimed > 0)
		tr_break_drop_unclaimed(th->proc);
	if (th->proc->tracer->queue_len)
		tr_drop_queued_start(th->proc->tracer, th);
	th->proc->pristine = false;
	if (th->dr_generation != th->proc->dr_generation)
		tr_watch_sync(th);
	if (request == PTRACE_CONT && tr_has(th, TF_GROUP_STOP)) {
		/* Let it stay in its group-stop, still reporting to us: it
		 * runs when the process is continued (SIGCONT).  A signal
		 * it has coming is delivered then. */
		if (listen_in_group_stop(th) < 0 && errno == ESRCH)
			goto gone;
		tr_mark_running(th);
		tr_set(th, TF_LISTENING);
		return 0;
	}
	if (request == PTRACE_CONT && tr_has(th, TF_TRACE_SYSCALLS | TF_PUT_BACK_RDX))
		request = PTRACE_SYSCALL;
	if (request != PTRACE_SYSCALL)
		tr_clear(th, TF_PUT_BACK_RDX); /* a step sees no exit stop: rdx stays */
	/* The program's own SIGILL or SIGTRAP goes to the program's own action;
	 * a single step makes the kernel choose it now and stop in the
	 * handler, where ours goes back (wait.c): its SIGILL and SIGTRAP
	 * would otherwise be the program's until the thread stops again. */
	if (sig == SIGTRAP || sig == SIGILL) {
		tr_guard_before_signal(th);
		if (request == PTRACE_CONT && th->proc->rescue_again_tid == th->tid) {
			request = PTRACE_SINGLESTEP;
			tr_set(th, TF_OWN_SIGNAL);
		}
	}
	if (request == PTRACE_SINGLESTEP && !tr_has(th, TF_MASK_SAVED) &&
	    tr_unblock_trap(th->tid, &th->step_mask))
		tr_set(th, TF_MASK_SAVED);
	if (ptrace(request, th->tid, 0, (void *)(long)sig) < 0) {
		if (errno == ESRCH)
			goto gone;
		return -1;
	}
	th->pending_signal = 0;
	tr_assign(th, TF_STEPPING, request == PTRACE_SINGLESTEP);
	tr_mark_running(th);
	return 0;
gone:
	/* Killed under us (SIGKILL, or its process exec'd); its exit status
	 * will still arrive through waitpid. */
	tr_mark_running(th);
	return 0;
}

static int resume(struct tr_thread *th)
{
	int rc;

	if (th->state != TR_HELD)
		return th->state == TR_RUNNING ? 0 : -1;
	if (tr_has(th, TF_AT_BREAK) && th->pending_signal == 0) {
		rc = tr_break_step_over(th);
		if (rc < 0)
			return -1;
	}
	return tr_continue(th, PTRACE_CONT);
}

/* The stepper's own resume: the accesses it keeps pending are those of
 * the instruction the thread runs first, judged at its next stop. */
int tr_resume_stepping(struct tr_thread *th)
{
	tr_clear(th, TF_TRACE_SYSCALLS);
	th->return_bonus = 0; /* no exit stop will come to add it */
	return resume(th);
}

/* Any other resume lets the thread run code the stepper does not see:
 * what it kept pending would be stale at the next stop. */
int tracer_resume(struct tr_thread *th)
{
	if (th->state == TR_HELD)
		th->step.npending = 0;
	return tr_resume_stepping(th);
}

void tracer_add_to_return(struct tr_thread *th, long n)
{
	assert(th->state == TR_HELD && tr_has(th, TF_IN_SYSCALL_STOP));
	th->return_bonus += n;
}

void tracer_put_back_rdx(struct tr_thread *th, uint64_t rdx)
{
	assert(th->state == TR_HELD);
	if (!tr_has(th, TF_PUT_BACK_RDX)) /* the program's, not one of ours */
		th->put_back_rdx = rdx;
	tr_set(th, TF_PUT_BACK_RDX);
}

int tracer_resume_syscalls(struct tr_thread *th)
{
	if (th->state == TR_EXITED)
		return -1;
	if (th->state == TR_HELD)
		th->step.npending = 0;
	tr_set(th, TF_TRACE_SYSCALLS);
	return resume(th);
}

int tracer_interrupt(struct tr_thread *th)
{
	if (th->state != TR_RUNNING)
		return 0;
	if (!tr_has(th, TF_INTERRUPTING)) {
		if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0)
			return -1;
		tr_set(th, TF_INTERRUPTING);
	}
	tr_set(th, TF_REPORT_INTERRUPT);
	return 0;
}

void tracer_pin(struct tr_thread *th, bool pin)
{
	struct tracer *t = th->proc->tracer;
	cpu_set_t set;

	if (t->cpu < 0 || th->state == TR_EXITED)
		return;
	if (pin) {
		if (tr_has(th, TF_AFFINITY_SAVED))
			return;
		_Static_assert(sizeof(cpu_set_t) <= sizeof(th->saved_affinity), "cpu_set_t");
		if (sched_getaffinity(th->tid, sizeof(cpu_set_t), (cpu_set_t *)th->saved_affinity) <
		    0)
			return;
		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		/* The guardian must know the mask before it changes. */
		if (tr_guard_pin(th, true) == 0 &&
		    sched_setaffinity(th->tid, sizeof(set), &set) == 0)
			tr_set(th, TF_AFFINITY_SAVED);
		return;
	}
	if (!tr_has(th, TF_AFFINITY_SAVED))
		return;
	sched_setaffinity(th->tid, sizeof(cpu_set_t), (cpu_set_t *)th->saved_affinity);
	tr_clear(th, TF_AFFINITY_SAVED);
	tr_guard_pin(th, false);
}

void tr_unpin_inherited(struct tr_thread *child, pid_t parent_pid)
{
	struct tracer *t = child->proc->tracer;
	struct tr_thread *th;
	cpu_set_t now;

	if (t->cpu < 0 || sched_getaffinity(child->tid, sizeof(now), &now) < 0 ||
	    CPU_COUNT(&now) != 1 || !CPU_ISSET(t->cpu, &now))
		return;
	for (th = t->threads; th; th = th->next)
		if (th->proc->pid == parent_pid && tr_has(th, TF_AFFINITY_SAVED)) {
			sched_setaffinity(child->tid, sizeof(cpu_set_t),
					  (cpu_set_t *)th->saved_affinity);
			return;
		}
}

void tracer_describe_kernel_state(struct tr_thread *th, char *buf, size_t len)
{
	char path[64], line[256], state = 0;
	FILE *f;
	long nr;

	if (th->state == TR_EXITED) {
		snprintf(buf, len, th->proc->released ? "let go (--no-children)" : "exited");
		return;
	}
	if (th->state == TR_HELD) {
		snprintf(buf, len, "held");
		return;
	}
	if (!tr_has(th, TF_STARTED)) {
		/* A newborn whose first stop is on its way (the kernel stops
		 * it before its first instruction): /proc shows it in the
		 * clone it leaves by starting, but it waits for nothing. */
		snprintf(buf, len, "new (not started yet)");
		return;
	}
	if (tr_has(th, TF_LISTENING) ||
	    (tr_task_stat(th->proc->pid, th->tid, &state, NULL) == 0 && state == 'T')) {
		/* In a group-stop, which cctrace does not end (SIGCONT
		 * does): the system call it was in is not what keeps it. */
		snprintf(buf, len, "stopped (job control)");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", th->proc->pid, th->tid);
	f = fopen(path, "r");
	if (!f || !fgets(line, sizeof(line), f)) {
		snprintf(buf, len, "running");
		goto out;
	}
	if (strncmp(line, "running", 7) == 0 || sscanf(line, "%ld", &nr) != 1 || nr < 0) {
		snprintf(buf, len, "running");
		goto out;
	}
	nr = call_of(th, nr);
	if (tracer_syscall_name(nr))
		snprintf(buf, len, "blocked in %s", tracer_syscall_name(nr));
	else
		snprintf(buf, len, "blocked in syscall %ld", nr);
out:
	if (f)
		fclose(f);
}

uint64_t tracer_thread_pc(struct tr_thread *th)
{
	char path[64], line[512], *last;
	unsigned long long pc = 0;
	FILE *f;

	/* a thread stopped in a breakpoint's slot is where the instruction
	 * it runs out of line lives */
	if (th->state == TR_HELD)
		return tr_break_home(th->proc, th->regs.rip);
	if (th->state == TR_EXITED)
		return 0;
	/* "nr arg1 ... arg6 sp pc" while blocked in a system call */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", th->proc->pid, th->tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f) && (last = strrchr(line, ' ')))
		pc = strtoull(last + 1, NULL, 16);
	fclose(f);
	return pc ? tr_break_home(th->proc, pc) : 0;
}

int tracer_sync_regs(struct tr_thread *th)
{
	return th->state == TR_HELD ? tr_flush_regs(th) : -1;
}

int tr_task_stat(pid_t pid, pid_t tid, char *state, unsigned long *flags)
{
	char path[64], line[1024], *close_paren;
	unsigned long f = 0;
	int rc = -1;
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	file = fopen(path, "r");
	if (!file)
		return -1;
	/* "tid (comm) S ppid pgrp session tty_nr tpgid flags ..."; comm may
	 * hold spaces and parentheses, so parse from the last ')'. */
	if (fgets(line, sizeof(line), file) && (close_paren = strrchr(line, ')')) &&
	    sscanf(close_paren + 1, " %c %*d %*d %*d %*d %*d %lu", state, &f) == 2) {
		if (flags)
			*flags = f;
		rc = 0;
	}
	fclose(file);
	return rc;
}

int64_t tracer_thread_cpu_ms(const struct tr_thread *th)
{
	char path[64];
	unsigned long long ns;
	FILE *f;
	int got;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", th->proc->pid, th->tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	got = fscanf(f, "%llu", &ns);
	fclose(f);
	return got == 1 ? (int64_t)(ns / 1000000) : -1;
}

char tracer_process_state(pid_t pid)
{
	char state = 0;

	return tr_task_stat(pid, pid, &state, NULL) == 0 ? state : 0;
}

int tr_status_fields(pid_t pid, pid_t tid, const struct tr_status_key *keys, int n,
		     unsigned long long *values)
{
	char path[64], line[256];
	int found = 0, i;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (found < n && fgets(line, sizeof(line), f)) {
		for (i = 0; i < n; i++) {
			size_t klen = strlen(keys[i].key);

			if (strncmp(line, keys[i].key, klen) == 0 && line[klen] == ':') {
				values[i] = strtoull(line + klen + 1, NULL, keys[i].base);
				found++;
				break;
			}
		}
	}
	fclose(f);
	return found == n ? 0 : -1;
}

int tr_status_field(pid_t pid, pid_t tid, const char *key, int base, unsigned long long *value)
{
	return tr_status_fields(pid, tid, &(struct tr_status_key){key, base}, 1, value);
}

/* Both counts in one read of the status file: a kernel sample is taken
 * many times a run. */
static unsigned long context_switches(pid_t pid, pid_t tid)
{
	static const struct tr_status_key keys[] = {{"voluntary_ctxt_switches", 10},
						    {"nonvoluntary_ctxt_switches", 10}};
	unsigned long long counts[2] = {0, 0};

	tr_status_fields(pid, tid, keys, 2, counts);
	return (unsigned long)(counts[0] + counts[1]);
}

/* Is addr in memory another process may share (a MAP_SHARED mapping,
 * System V or POSIX shared memory), where a process cctrace does not
 * trace may wake a futex?  Reads pid's maps; unknown is yes. */
static bool address_is_shared(pid_t pid, uint64_t addr)
{
	char path[64], line[512], perms[8];
	unsigned long long lo, hi;
	bool shared = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) == 3 && addr >= lo &&
		    addr < hi) {
			shared = perms[3] == 's';
			break;
		}
	fclose(f);
	return shared;
}

/* What /proc says of task tid of pid: its state, its call (raw: a
 * restart_syscall as such) with its first four arguments, its context
 * switches.  -1 if it cannot be read. */
static int read_task(pid_t pid, pid_t tid, struct tr_kernel_sample *s, unsigned long long args[4])
{
	char path[64], buf[512], *close_paren, state = 0;
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->syscall = -1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (close_paren = strrchr(buf, ')')))
		state = close_paren[2];
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f) || strncmp(buf, "running", 7) == 0 ||
		    sscanf(buf, "%ld %llx %llx %llx %llx", &s->syscall, &args[0], &args[1],
			   &args[2], &args[3]) < 1)
			s->syscall = -1;
		fclose(f);
	}
	s->asleep = (state == 'S' || state == 'D') && s->syscall >= 0;
	s->switches = context_switches(pid, tid);
	return 0;
}

/* The sample's call is nr (its arguments args): what it waits for. */
static void note_call(struct tr_kernel_sample *s, long nr, const unsigned long long args[4])
{
	s->syscall = nr;
	s->timed = tr_futex_wait_is_timed(nr, args[1], args[3]);
	s->shared = nr == TR_SYS_futex && !(args[1] & 128); /* FUTEX_PRIVATE_FLAG */
	s->futex_addr = args[0];
}

int tracer_kernel_sample(struct tr_thread *th, struct tr_kernel_sample *s)
{
	unsigned long long args[4] = {0, 0, 0, 0};

	if (th->state != TR_RUNNING || tr_has(th, TF_LISTENING)) {
		memset(s, 0, sizeof(*s));
		s->syscall = -1;
		return -1;
	}
	if (read_task(th->proc->pid, th->tid, s, args) < 0)
		return -1;
	if (s->syscall >= 0) {
		note_call(s, call_of(th, s->syscall), args);
		s->awaits_outside = tr_syscall_awaits_outside(th->proc, s->syscall, args[0]);
	}
	return 0;
}

bool tracer_sleeps_for_good(pid_t pid, const struct tr_kernel_sample *s)
{
	return s->asleep && s->syscall == TR_SYS_futex && !s->timed &&
	       !(s->shared && address_is_shared(pid, s->futex_addr));
}

bool tracer_untraced_sleeps_for_good(pid_t pid, unsigned long long *switches)
{
	char path[64];
	struct dirent *d;
	bool all = true, any = false;
	DIR *dir;

	*switches = 0;
	if (tr_pid_handles_signals(pid))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path)))
		return false;
	while (all && (d = readdir(dir))) {
		unsigned long long args[4] = {0, 0, 0, 0};
		struct tr_kernel_sample s;

		if (d->d_name[0] == '.')
			continue;
		any = true;
		all = read_task(pid, (pid_t)atoi(d->d_name), &s, args) == 0;
		if (all && s.syscall >= 0)
			note_call(&s, s.syscall, args);
		all = all && tracer_sleeps_for_good(pid, &s);
		*switches += s.switches;
	}
	closedir(dir);
	return all && any;
}

long tracer_syscall_args(struct tr_thread *th, uint64_t args[TRACER_SYSCALL_ARGS])
{
	unsigned long long a[TRACER_SYSCALL_ARGS] = {0};
	char path[64], buf[512];
	long nr = -1;
	FILE *f;
	int i;

	_Static_assert(TRACER_SYSCALL_ARGS == 6, "x86-64 passes six");
	if (th->state == TR_EXITED)
		return -1;
	if (th->state == TR_HELD) {
		const uint64_t regs[TRACER_SYSCALL_ARGS] = {th->regs.rdi, th->regs.rsi,
							    th->regs.rdx, th->regs.r10,
							    th->regs.r8,  th->regs.r9};

		memcpy(args, regs, sizeof(regs));
		return call_of(th, (long)th->regs.orig_rax);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", th->proc->pid, th->tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f) || strncmp(buf, "running", 7) == 0 ||
	    sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2], &a[3], &a[4],
		   &a[5]) != 7)
		nr = -1;
	fclose(f);
	nr = nr < 0 ? nr : call_of(th, nr);
	for (i = 0; i < TRACER_SYSCALL_ARGS; i++)
		args[i] = a[i];
	return nr;
}
