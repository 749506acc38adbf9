/*
 * wakes.c: futex wakes that reach a thread cctrace holds in its wait.
 *
 * A schedule holds a thread that sleeps in a futex wait by stopping it
 * there (blocked.c): the call is interrupted, and restarts when the thread
 * runs again.  Held, the thread is not in the kernel's queue, so a
 * FUTEX_WAKE that another thread makes meanwhile finds nobody and is lost.
 * When the waker changed the word first, as glibc always does, nothing is
 * lost: the restarted wait sees the change and returns.  A program's own
 * futex calls may wake without a change (a flag kept elsewhere); then the
 * held thread, let go, would sleep for ever in a wait the kernel ended for
 * it: a deadlock cctrace made, and a bug a search found after such a wake
 * (engine/serial.c models it) would not replay.
 *
 * So while a thread is held in a futex wait, the threads a schedule
 * releases run with their system calls watched (an entry stop each, and
 * its exit stop, resumed in the tracer); a wake on the held thread's word
 * wakes it, first held first, up to the wake's count, as the kernel would
 * have: its registers are written at once so that its call returns 0
 * instead of restarting, whenever it runs again: resumed by the schedule,
 * let go at its end or at a detach, or left by a cctrace that was killed;
 * and the wake's own return value counts it (a waker that wakes until
 * someone was woken would otherwise never stop).
 * The watching costs nothing while no thread is held in a wait libc's
 * own synchronisation did not make: a wait inside a lock, a condition
 * variable, a join of libc's (not libc's syscall()) needs none of this,
 * as libc changes the word before it wakes, and a changed word ends the
 * wait (wakes_wait_ends).  Who made a wait is told by where it sleeps
 * (futex_wait_maker), one definition that the search uses too (serial.c's
 * raw_wait and own_wait): libc's own, the program's own futex call (only a
 * wake ends it), or another library's (watched, but a changed word ends it,
 * as the kernel may end it with no wake to see).
 *
 * The serialized search keeps its own table of blocked threads and wakes
 * them itself; this file serves the schedules cctrace replays and runs.
 */
#include "engine/internal.h"

#include "symbols/symbols.h"
#include "tracer/abi.h"

#include <assert.h>
#include <string.h>

bool futex_op_waits(uint64_t op)
{
	return (op & TR_FUTEX_CMD_MASK) == TR_FUTEX_WAIT ||
	       (op & TR_FUTEX_CMD_MASK) == TR_FUTEX_WAIT_BITSET;
}

bool futex_op_wakes(uint64_t op)
{
	switch (op & TR_FUTEX_CMD_MASK) {
	case TR_FUTEX_WAKE:
	case TR_FUTEX_WAKE_BITSET:
	case TR_FUTEX_WAKE_OP:
	case TR_FUTEX_REQUEUE:
	case TR_FUTEX_CMP_REQUEUE:
		return true;
	default:
		return false;
	}
}

void futex_wait_returns_woken(struct tr_thread *th)
{
	struct user_regs_struct regs = *tracer_regs(th);

	regs.orig_rax = (unsigned long long)-1; /* not made, nor restarted */
	regs.rax = 0;
	tracer_set_regs(th, &regs);
}

void futex_wait_times_out(struct tr_thread *th)
{
	struct user_regs_struct regs = *tracer_regs(th);

	regs.orig_rax = (unsigned long long)-1;
	regs.rax = (unsigned long long)-TR_ETIMEDOUT;
	tracer_set_regs(th, &regs);
}

bool futex_entry_sleeps(struct tr_thread *th)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	uint32_t word;

	return regs->orig_rax == TR_SYS_futex && futex_op_waits(regs->rsi) &&
	       tracer_read(tracer_thread_process(th), regs->rdi, &word, sizeof(word)) == 0 &&
	       word == (uint32_t)regs->rdx;
}

/* EINTR counts too: a call the kernel does not restart after a stop,
 * which tracer/wait.c has not turned into a restart (it turns the ones it
 * knows), ended by the interrupt itself.  Taken for a call that returned,
 * the thread was resumed into its next wait and interrupted out of it
 * again, for ever. */
bool interrupted_in_syscall(struct tr_thread *th)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	long rax = (long)regs->rax;

	return (long)regs->orig_rax >= 0 &&
	       (rax == -TR_ERESTARTSYS || rax == -TR_ERESTARTNOINTR || rax == -TR_ERESTARTNOHAND ||
		rax == -TR_ERESTART_RESTARTBLOCK || rax == -TR_EINTR);
}

bool run_searching_serially(const struct run *r)
{
	return r->oracle && r->oracle->serial;
}

/* Is at inside the code of a statically linked executable's own compile
 * units?  -1: the executable is not static (or its units are unknown). */
static int in_static_own_code(struct proc_ctx *pc, uint64_t at)
{
	const struct sym_range *own;
	size_t n, i;

	if (!pc || !pc->syms || sym_static_own_code(pc->syms, &own, &n) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (at >= own[i].lo && at < own[i].hi)
			return 1;
	return 0;
}

/* The file mapped at `at` in p: libc (libc.so, or the executable of a
 * static program outside its own code), the program's text (program_text),
 * or another library. */
static enum wait_maker mapped_maker(struct run *r, struct tr_process *p, uint64_t at,
				    int static_own)
{
	struct text_maps mine;
	const struct text_maps *m = text_maps_of(r, p, &mine);
	enum wait_maker maker = WAIT_ELSEWHERE;
	const char *base;
	int i;

	for (i = 0; m && i < m->n; i++) {
		if (at < m->maps[i].lo || at >= m->maps[i].hi)
			continue;
		base = strrchr(m->maps[i].file, '/');
		base = base ? base + 1 : m->maps[i].file;
		if (strncmp(base, "libc.so", 7) == 0 ||
		    (static_own == 0 && strcmp(m->maps[i].file, m->exe) == 0))
			maker = WAIT_LIBC;
		else if (program_text(m->maps[i].file, m->exe))
			maker = WAIT_OWN;
		break;
	}
	text_maps_free(&mine);
	return maker;
}

/* Who made the futex wait whose syscall instruction is at `at`: the
 * lookup futex_wait_maker keeps per thread and place. */
static enum wait_maker wait_maker_at(struct run *r, struct tr_thread *th, uint64_t at)
{
	struct tr_process *p = tracer_thread_process(th);
	struct proc_ctx *pc = run_proc(r, p);
	struct sym_loc loc = {0};
	int static_own = in_static_own_code(pc, at);
	enum wait_maker maker;

	if (static_own == 1)
		return WAIT_OWN;
	maker = mapped_maker(r, p, at, static_own);
	if (maker != WAIT_LIBC)
		return maker;
	/* libc's syscall() makes the program's own calls */
	if (pc && pc->syms && sym_describe_function(pc->syms, at, &loc) == 0 && loc.func &&
	    strcmp(loc.func, "syscall") == 0)
		return WAIT_OWN;
	return WAIT_LIBC;
}

enum wait_maker futex_wait_maker(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);
	uint64_t rip = tracer_regs(th)->rip;

	if (tc->wait_pc != rip) { /* looked up once per place it waits at */
		tc->wait_pc = rip;
		tc->wait_maker = wait_maker_at(r, th, rip - TR_SYSCALL_INSN_LEN);
	}
	return tc->wait_maker;
}

/* th, held, was stopped asleep in a futex wait that libc's own
 * synchronisation did not make (futex_wait_maker), and no wake has reached
 * it since: wakes on its word are watched for.  *maker: who made it. */
static bool held_in_wait_by(struct run *r, struct tr_thread *th, enum wait_maker *maker)
{
	struct thread_ctx *tc = run_thread(r, th);
	const struct user_regs_struct *regs;

	if (!tracer_thread_held(th) || tracer_thread_exited(th) || tc->woken)
		return false;
	regs = tracer_regs(th);
	if (regs->orig_rax != TR_SYS_futex || !futex_op_waits(regs->rsi) ||
	    !interrupted_in_syscall(th))
		return false;
	*maker = futex_wait_maker(r, th);
	return *maker != WAIT_LIBC;
}

static bool held_in_wait(struct run *r, struct tr_thread *th)
{
	enum wait_maker maker;

	return held_in_wait_by(r, th, &maker);
}

/* ...made by the program's own futex call: only a wake ends it. */
static bool held_in_own_wait(struct run *r, struct tr_thread *th)
{
	enum wait_maker maker;

	return held_in_wait_by(r, th, &maker) && maker == WAIT_OWN;
}

static bool anyone_held_in_wait(struct run *r)
{
	struct tr_thread *th;

	tr_for_each_thread(th, r->t)
		if (held_in_wait(r, th))
			return true;
	return false;
}

void wakes_note_held(struct run *r, struct tr_thread *th)
{
	run_thread(r, th)->held_seq = ++r->held_seq;
}

/* The thread of p held in a wait on the word at uaddr the longest. */
static struct tr_thread *first_held_on(struct run *r, struct tr_process *p, uint64_t uaddr)
{
	struct tr_thread *th, *first = NULL;
	unsigned long first_seq = 0;

	tr_for_each_thread(th, r->t) {
		unsigned long seq = run_thread(r, th)->held_seq;

		if (tracer_thread_process(th) != p || !held_in_wait(r, th) ||
		    tracer_regs(th)->rdi != uaddr || (first && seq >= first_seq))
			continue;
		first = th;
		first_seq = seq;
	}
	return first;
}

/* A wake of up to n waiters on the word at uaddr by a thread of p; how
 * many it woke. */
static long wake_held(struct run *r, struct tr_process *p, uint64_t uaddr, uint64_t n)
{
	struct tr_thread *th;
	long woken = 0;

	for (; n > 0 && (th = first_held_on(r, p, uaddr)) != NULL; n--, woken++) {
		futex_wait_returns_woken(th);
		tracer_sync_regs(th); /* now: cctrace may die before it runs */
		run_thread(r, th)->woken = true;
		run_thread(r, th)->blocked = false; /* it can go on now */
	}
	return woken;
}

bool futex_cleared_at_exit(struct run *r, struct tr_process *p, uint32_t word, uint32_t value)
{
	struct tr_thread *t;

	if (word != 0 || value == 0)
		return false;
	tr_for_each_thread(t, r->t)
		if (tracer_thread_exited(t) && (uint32_t)tracer_thread_tid(t) == value &&
		    tracer_thread_process(t) == p)
			return true;
	return false;
}

/*
 * A held thread stopped asleep in futex(FUTEX_WAIT, uaddr, val) redoes the
 * call when it runs again, and the call returns at once if *uaddr is no
 * longer val: a changed word means the thread would go on, it is not
 * blocked any more.  Without this, a producer that waits in
 * pthread_cond_signal for a consumer we hold to leave its old wait looked
 * like a deadlock.  Not so a wait of the program's own (held_in_wait):
 * the kernel had queued it, and only a wake ends it (wake_held); a waker
 * that wakes before it stores leaves it asleep for ever, and the search
 * finds that deadlock (serial.c's futex_sleeps), which must replay.
 */
bool wakes_wait_ends(struct run *r, struct tr_thread *th)
{
	const struct user_regs_struct *regs = tracer_regs(th);
	uint32_t word;

	if (run_thread(r, th)->woken)
		return true;
	if (regs->orig_rax != TR_SYS_futex || !futex_op_waits(regs->rsi))
		return false;
	if (tracer_read(tracer_thread_process(th), regs->rdi, &word, sizeof(word)) < 0)
		return false;
	if (held_in_own_wait(r, th)) /* the kernel's wake at a thread's exit ends it too */
		return futex_cleared_at_exit(r, tracer_thread_process(th), word,
					     (uint32_t)regs->rdx);
	return word != (uint32_t)regs->rdx;
}

/*
 * A serialized replay runs th, held asleep in a futex wait with a timeout
 * that no wake reached and whose word is unchanged: the search made this
 * step only when no thread could run but by a timeout (serial.c's
 * blocked_options), and its wait returned ETIMEDOUT then.  It does so now,
 * rather than sleeping out the rest of its time (a second at a time in
 * pbzip2) with every other thread held.
 */
bool wakes_times_out_now(struct run *r, struct tr_thread *th)
{
	const struct user_regs_struct *regs = tracer_regs(th);

	/* (wakes_wait_ends: woken, or, for glibc's waits, its word changed) */
	return r->serial && !run_searching_serially(r) && tracer_thread_held(th) &&
	       regs->orig_rax == TR_SYS_futex && futex_op_waits(regs->rsi) && regs->r10 != 0 &&
	       !wakes_wait_ends(r, th) &&
	       (interrupted_in_syscall(th) || (long)regs->rax == -TR_ENOSYS);
}

/*
 * th, held in a wait of the program's own that no wake reached, runs
 * again: its call restarts and, its word changed meanwhile, would return
 * EAGAIN, where the kernel keeps a queued waiter asleep.  The restart is
 * made to compare with the word as it is now (rdx), so it sleeps on, and
 * rdx is put back at the call's exit (tracer_put_back_rdx: an entry and an
 * exit stop, only for such a wait): code that keeps the value it compared
 * in edx across its own syscall instruction sees its own.
 * A timed wait, stopped, restarts through restart_syscall with the value
 * the kernel saved (its restart block, which no register reaches): it is
 * made to redo its futex call instead (ERESTARTNOINTR: the kernel makes
 * orig_rax's call again, with the registers as they are).  FUTEX_WAIT's
 * timeout is relative and starts again, so the wait may last longer than
 * it would have, never shorter; FUTEX_WAIT_BITSET's is a deadline, kept.
 */
static void wait_sleeps_on(struct run *r, struct tr_thread *th)
{
	struct user_regs_struct regs = *tracer_regs(th);
	uint32_t word;

	if (!held_in_own_wait(r, th) ||
	    tracer_read(tracer_thread_process(th), regs.rdi, &word, sizeof(word)) < 0 ||
	    word == (uint32_t)regs.rdx ||
	    futex_cleared_at_exit(r, tracer_thread_process(th), word, (uint32_t)regs.rdx))
		return; /* the last: woken by the kernel, as wakes_wait_ends says */
	tracer_put_back_rdx(th, regs.rdx);
	if ((long)regs.rax == -TR_ERESTART_RESTARTBLOCK)
		regs.rax = (unsigned long long)-TR_ERESTARTNOINTR;
	regs.rdx = word;
	tracer_set_regs(th, &regs);
}

void wakes_before_resume(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);

	sleeps_before_resume(r, th);
	if (wakes_times_out_now(r, th))
		futex_wait_times_out(th);
	else
		wait_sleeps_on(r, th);
	tc->watching_wakes = false;
	tc->woken = false; /* its call returns at once: see wake_held */
}

int wakes_resume(struct run *r, struct tr_thread *th)
{
	wakes_before_resume(r, th);
	return wakes_resume_on(r, th);
}

int wakes_resume_on(struct run *r, struct tr_thread *th)
{
	if (run_searching_serially(r) || !anyone_held_in_wait(r))
		return tracer_resume(th);
	run_thread(r, th)->watching_wakes = true;
	return tracer_resume_syscalls(th);
}

bool wakes_syscall_entry(struct run *r, const struct tr_event *ev)
{
	struct thread_ctx *tc = run_thread(r, ev->thread);
	const struct user_regs_struct *regs = tracer_regs(ev->thread);
	long woken = 0;

	assert(ev->kind == TR_EV_SYSCALL);
	if (run_searching_serially(r))
		return false;
	if (ev->sysno == TR_SYS_futex && futex_op_wakes(regs->rsi))
		woken =
		    wake_held(r, tracer_thread_process(ev->thread), regs->rdi, (uint32_t)regs->rdx);
	if (woken > 0) /* its return counts them: see its exit */
		tracer_add_to_return(ev->thread, woken);
	if (!tc->watching_wakes)
		return false; /* the schedule watches its system calls itself */
	if (woken > 0 || anyone_held_in_wait(r))
		tracer_resume_syscalls(ev->thread);
	else
		tracer_resume(ev->thread);
	return true;
}
