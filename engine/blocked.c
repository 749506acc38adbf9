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
 *   - if no release could ever wake them, it is a deadlock, a bug, reported
 *     with every stack;
 *   - under a search, the statement simply ends and `choose` skips blocked
 *     threads until another thread has moved;
 *   - in an exact schedule, the schedule cannot be followed: unrealizable,
 *     saying where the thread sleeps and, when it can be told, which held
 *     thread it waits for.
 * A thread that sleeps waiting for the outside (a server's worker in
 * epoll_wait until a client writes, a read on a socket, a sleep) is not
 * blocked: the statement waits for its event or its timeout (see
 * tracer/outside.c).
 *
 * A thread held by cctrace is not blocked, and a thread asleep waiting for
 * one is waiting on the schedule, not deadlocked:
 *   - A thread held at its exit event has nothing left that a schedule can
 *     see, but until it is gone a pthread_join on it sleeps (the kernel
 *     wakes the joiner as the thread dies).  When the threads a statement
 *     runs block and one of them waits for such a thread, that thread is
 *     let go (the trace says so) and the statement goes on.  Otherwise a
 *     generic search loop (`run T until read || write || exit`) could never
 *     get past a join: it used to call the joiner deadlocked, and a bug
 *     after the join could never be found.
 *   - A deadlock is reported only when no release could end it: every live
 *     thread of the program, those the schedule does not control included,
 *     sleeps with no progress, and none is held by the schedule (but a
 *     thread held at its exit that nobody waits for).  A free thread that
 *     still runs may yet unlock what they wait for: while only free threads
 *     run, they are let run (up to the timeout) until they sleep too, a
 *     deadlock, or wake the targets, which then go on.
 *   - A target may wake between the last sample and the interrupt: if it
 *     then stops for an event of its own, or in its own code rather than
 *     inside the call it slept in, it was not blocked, and the wait goes on
 *     (its event given back to be judged).
 *   - What a thread waits for is read from the futex it sleeps on: a word
 *     that is a thread's id is that thread's (pthread_join waits on the
 *     joined thread's tid; PI and robust mutexes keep their owner's), and a
 *     pthread mutex keeps its owner's tid 8 bytes after its word (glibc's
 *     __owner).  A thread blocked in another call (a pipe, wait4) may wait
 *     for a process to end, so the last thread of a process held at its
 *     exit is let go for it too.
 */
#include "engine/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCKED_POLL_MS 5
/* A serial schedule's step runs its thread alone: nothing else could wake
 * it, and most steps that block do so at once (a lock another thread
 * holds).  Its first 10 ms are sampled every millisecond, as the
 * serialized search samples its steps (serial.c): a replay's block was
 * seen in 10 ms, and a minimisation of fsbench_bad, whose end lets 27
 * threads go one after another, spent 130 ms of each 150 ms replay so. */
#define BLOCKED_YOUNG_POLL_MS 1
#define BLOCKED_YOUNG_FOR_MS  10

int64_t blocked_poll_deadline(struct run *r, bool has_targets, int64_t started, int64_t deadline)
{
	int64_t now = tracer_now_ms();
	int64_t soon =
	    now + (r->serial && now - started < BLOCKED_YOUNG_FOR_MS ? BLOCKED_YOUNG_POLL_MS
								     : BLOCKED_POLL_MS);

	if (!has_targets)
		return deadline;
	return deadline < 0 || soon < deadline ? soon : deadline;
}

static bool held_at_exit(struct tr_thread *th)
{
	return tracer_thread_held(th) && tracer_thread_last_event(th) == TR_EV_EXIT;
}

bool spinlock_taken(struct tr_process *p, uint64_t entry, uint64_t lock_addr)
{
	static const uint8_t lock_decl_rdi[3] = {0xf0, 0xff, 0x0f};
	uint8_t code[3];
	uint32_t lock;

	if (tracer_read(p, lock_addr, &lock, sizeof(lock)) < 0 ||
	    tracer_read_code(p, entry, code, sizeof(code)) < 0)
		return false;
	if (memcmp(code, lock_decl_rdi, sizeof(code)) == 0)
		return (int32_t)lock <= 0;
	return lock != 0;
}

/* Held at the entry of pthread_spin_lock on a spinlock that is taken: let
 * go, it would spin, never sleep, so it counts as blocked (a search's
 * spinlock deadlock replays so). */
static bool held_at_taken_spinlock(struct run *r, struct tr_thread *th)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));
	uint64_t entry;

	return pc && pc->syms && sym_function(pc->syms, "pthread_spin_lock", &entry) == 0 &&
	       tracer_thread_pc(th) == entry &&
	       spinlock_taken(tracer_thread_process(th), entry, tracer_regs(th)->rdi);
}

/* Another thread of th's process that has not exited? */
static bool others_alive(struct run *r, struct tr_thread *th)
{
	struct tr_thread *o;

	tr_for_each_thread(o, r->t)
		if (o != th && tracer_thread_process(o) == tracer_thread_process(th) &&
		    !tracer_thread_exited(o))
			return true;
	return false;
}

/* Let go from its exit event and not gone yet.  A thread-group leader
 * stays a zombie until its last thread has gone: that is not news. */
static bool dying(struct run *r, struct tr_thread *th)
{
	if (!tracer_thread_running(th) || tracer_thread_last_event(th) != TR_EV_EXIT)
		return false;
	return tracer_thread_tid(th) != tracer_process_pid(tracer_thread_process(th)) ||
	       !others_alive(r, th);
}

static bool anyone_dying(struct run *r)
{
	struct tr_thread *th;

	tr_for_each_thread(th, r->t)
		if (dying(r, th))
			return true;
	return false;
}

/* A live traced thread with this tid, other than th. */
static struct tr_thread *thread_with_tid(struct run *r, struct tr_thread *th, uint32_t tid)
{
	struct tr_thread *o = tid ? tracer_thread_by_tid(r->t, (pid_t)tid) : NULL;

	return o && o != th && !tracer_thread_exited(o) ? o : NULL;
}

/*
 * A thread in wait4 or waitid waits for a child to end: a held thread of
 * one it may wait for (pid, or any child) is what holds it up, and is
 * named ("p1.t1 is blocked in wait4" left the user to guess which of the
 * held children).  waitid's P_PID is 1, P_ALL 0 (process groups: any).
 */
static struct tr_thread *held_child(struct run *r, struct tr_thread *th, long nr, const uint64_t *a)
{
	pid_t self = tracer_process_pid(tracer_thread_process(th)), want = -1;
	struct tr_thread *o;

	if (nr == TR_SYS_wait4 && (long)a[0] > 0)
		want = (pid_t)a[0];
	else if (nr == TR_SYS_waitid && a[0] == 1)
		want = (pid_t)a[1];
	tr_for_each_thread(o, r->t) {
		struct tr_process *q = tracer_thread_process(o);

		if (tracer_process_parent_pid(q) == self && tracer_process_pid(q) != self &&
		    (want < 0 || tracer_process_pid(q) == want) && tracer_thread_held(o) &&
		    !tracer_thread_exited(o))
			return o;
	}
	return NULL;
}

/* The thread th sleeps waiting for, if its futex tells; NULL otherwise. */
static struct tr_thread *awaited(struct run *r, struct tr_thread *th)
{
	uint64_t a[TRACER_SYSCALL_ARGS];
	long nr = tracer_syscall_args(th, a), op = (long)(a[1] & TR_FUTEX_CMD_MASK);
	uint32_t word;
	int32_t owner;
	struct tr_thread *o;

	/* FUTEX_WAIT, WAIT_BITSET, LOCK_PI, LOCK_PI2 */
	if (nr != TR_SYS_futex || (op != TR_FUTEX_WAIT && op != TR_FUTEX_WAIT_BITSET &&
				   op != TR_FUTEX_LOCK_PI && op != TR_FUTEX_LOCK_PI2))
		return NULL;
	if (tracer_read(tracer_thread_process(th), a[0], &word, sizeof(word)) < 0)
		return NULL;
	/* A join (word and expected value are the thread's tid), a robust
	 * or PI mutex (the owner's tid and flags). */
	o = thread_with_tid(r, th, word & TR_FUTEX_TID_MASK);
	if (o && (op == TR_FUTEX_LOCK_PI || op == TR_FUTEX_LOCK_PI2 || (uint32_t)a[2] == word))
		return o;
	/* A pthread mutex: locked (1) or contended (2), owner at +8. */
	if ((word == TR_MUTEX_LOCKED || word == TR_MUTEX_CONTENDED) &&
	    tracer_read(tracer_thread_process(th), a[0] + TR_MUTEX_OWNER_OFFSET, &owner,
			sizeof(owner)) == 0 &&
	    owner > 0)
		return thread_with_tid(r, th, (uint32_t)owner);
	return NULL;
}

/* Blocked in something other than a futex: it may wait for a process to
 * end (wait4, a pipe whose other end that process holds). */
static bool blocked_outside_futex(struct tr_thread *th)
{
	uint64_t a[TRACER_SYSCALL_ARGS];
	long nr = tracer_syscall_args(th, a);

	return nr >= 0 && nr != TR_SYS_futex;
}

/* The variable a bound thread goes by: the one a wait first gave it (A,
 * not the T of `thread T = choose(A, B)`); NULL if it is not bound. */
static const char *var_name(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);

	if (tc->bound < 0)
		return NULL;
	return r->pol->threads[tc->primary >= 0 ? tc->primary : tc->bound];
}

/* Is o free, asleep in a wait for the outside (its call in *nr)? */
static bool free_and_waiting_outside(struct run *r, struct tr_thread *o, long *nr)
{
	struct tr_kernel_sample now;

	if (!tracer_thread_running(o) || tracer_kernel_sample(o, &now) < 0 || !now.asleep ||
	    !now.awaits_outside || r->outside_blocks)
		return false;
	*nr = now.syscall;
	return true;
}

/* ", waiting for B (p1.t3), which the schedule holds", or "". */
static void describe_wait(struct run *r, struct tr_thread *th, char *buf, size_t len)
{
	struct tr_thread *o = tracer_thread_exited(th) ? NULL : awaited(r, th);
	const char *var;
	const char *how;
	char outside[96];
	uint64_t a[TRACER_SYSCALL_ARGS];
	long nr;

	buf[0] = 0;
	if (!o && !tracer_thread_exited(th) &&
	    ((nr = tracer_syscall_args(th, a)) == TR_SYS_wait4 || nr == TR_SYS_waitid))
		o = held_child(r, th, nr, a);
	var = o ? var_name(r, o) : NULL;
	if (!o)
		return;
	if (held_at_exit(o))
		how = "which the schedule holds at its exit";
	else if (tracer_thread_held(o) &&
		 (run_thread(r, o)->blocked || held_at_taken_spinlock(r, o)))
		how = "which is blocked too";
	else if (tracer_thread_held(o))
		how = "which the schedule holds";
	else if (tracer_thread_last_event(o) == TR_EV_EXIT)
		how = "which is exiting";
	else if (free_and_waiting_outside(r, o, &nr)) {
		snprintf(outside, sizeof(outside),
			 "which waits in %s for the outside, and nothing came in time",
			 tracer_syscall_name(nr) ? tracer_syscall_name(nr) : "a call");
		how = outside;
	} else
		how = var ? "which runs" : "which is free";
	if (var)
		snprintf(buf, len, ", waiting for %s (%s), %s", var, tracer_thread_name(o), how);
	else
		snprintf(buf, len, ", waiting for %s, %s", tracer_thread_name(o), how);
}

void blocked_describe(struct run *r, struct tr_thread *th, char *buf, size_t len)
{
	size_t used = strlen(buf);

	if (used < len)
		describe_wait(r, th, buf + used, len - used);
}

/* Let th go from its exit event: it dies, and whoever joins it wakes. */
static void let_exit(struct run *r, struct tr_thread *th, struct tr_thread *waiter)
{
	struct tr_event ev = {.kind = TR_EV_EXIT, .thread = th, .pc = tracer_regs(th)->rip};
	char label[96];

	snprintf(label, sizeof(label), "let go at its exit: %s waits for it",
		 tracer_thread_name(waiter));
	report_event(r, &(struct current_event){.ev = &ev, .label = label});
	run_thread(r, th)->blocked = false;
	chrome_note_release(r, th);
	tracer_resume(th);
}

/* Let go every thread held at its exit that one of the n blocked waiters
 * may be waiting for.  Returns how many went. */
static int release_awaited_exits(struct run *r, struct tr_thread **waiters, int n)
{
	struct tr_thread *o;
	int i, released = 0;

	for (i = 0; i < n; i++) {
		struct tr_thread *w = waiters[i];

		if (tracer_thread_exited(w))
			continue;
		o = awaited(r, w);
		if (o && held_at_exit(o) && !tracer_event_pending(o)) {
			let_exit(r, o, w);
			released++;
			continue;
		}
		if (o || !blocked_outside_futex(w))
			continue;
		tr_for_each_thread(o, r->t)
			if (held_at_exit(o) && !tracer_event_pending(o) && !others_alive(r, o)) {
				let_exit(r, o, w);
				released++;
			}
	}
	return released;
}

bool syscall_sleeps_for_time(long nr)
{
	return nr == TR_SYS_nanosleep || nr == TR_SYS_clock_nanosleep;
}

/* A wait for a client, a timer or a signal is not blocked by a held
 * thread; but the steps of a serialized search end in a wait for input,
 * or in a sleep for a time (serial.c), and its replay's `until blocked`
 * ends there too. */
static bool waits_for_outside(const struct run *r, const struct tr_kernel_sample *now)
{
	return now->awaits_outside && !r->outside_blocks;
}

/* Is th asleep now, and was it asleep with the same switch count before? */
static bool still_asleep(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);
	struct tr_kernel_sample now;
	bool same;

	if (tracer_kernel_sample(th, &now) < 0 || !now.asleep || waits_for_outside(r, &now)) {
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
	struct tr_thread **waiting = NULL;
	bool all = n > 0;
	int i, nwaiting = 0;

	for (i = 0; i < n; i++) {
		struct thread_ctx *tc = run_thread(r, targets[i]);

		if (tc->matched)
			continue;
		if (!tracer_thread_running(targets[i]) || !still_asleep(r, targets[i]))
			all = false;
	}
	/* A thread let go from its exit is still on its way out: its end may
	 * be what they wait for. */
	if (!all || anyone_dying(r))
		return false;
	waiting = calloc((size_t)n, sizeof(*waiting));
	for (i = 0; waiting && i < n; i++)
		if (!run_thread(r, targets[i])->matched)
			waiting[nwaiting++] = targets[i];
	if (waiting && release_awaited_exits(r, waiting, nwaiting) > 0) {
		for (i = 0; i < n; i++)
			run_thread(r, targets[i])->sampled = false;
		all = false;
	}
	free(waiting);
	return all;
}

static void describe_block(struct run *r, struct tr_thread *th, char *buf, size_t len)
{
	struct proc_ctx *pc = run_proc(r, tracer_thread_process(th));
	struct sym_loc loc = {0};
	char state[48];
	uint64_t pcaddr = tracer_thread_pc(th);
	long nr = tracer_thread_held(th) ? (long)tracer_regs(th)->orig_rax : -1;

	/* stopped in the call: the call it will redo */
	if (nr >= 0 && tracer_syscall_name(nr))
		snprintf(state, sizeof(state), "blocked in %s", tracer_syscall_name(nr));
	else
		tracer_describe_kernel_state(th, state, sizeof(state));
	/* the function alone: a line would read libc's debugging information,
	 * most of a replay's time when it is compressed */
	if (pcaddr && pc && pc->syms)
		sym_describe_function(pc->syms, pcaddr, &loc);
	snprintf(buf, len, "%s (%s)", state, loc.pretty ? loc.pretty : "??");
}

/* A thread the schedule does not hold, asleep with no progress? */
static bool free_sample(struct tr_thread *th, struct tr_kernel_sample *s)
{
	return tracer_kernel_sample(th, s) == 0 && s->asleep;
}

static void pause_ms(int ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000};

	nanosleep(&ts, NULL);
}

/* What a thread says about a deadlock. */
enum verdict {
	V_GONE,	   /* exited, or a zombie leader: nothing */
	V_BLOCKED, /* held, blocked */
	V_FREE,	   /* running and asleep: to be sampled again */
	V_MOVING,  /* held and free to go, running, or dying: no deadlock */
};

/* Held blocked: would its call return now that others have run?  A
 * futex word changed (wakes.c), or the input, the room to write or the
 * child's exit it waits for came (ready.c): a worker held in its write to
 * a full pipe that main has since drained is no part of a deadlock. */
static bool wait_would_end(struct run *r, struct tr_thread *th)
{
	uint64_t args[TRACER_SYSCALL_ARGS];
	long nr;

	if (wakes_wait_ends(r, th))
		return true;
	nr = tracer_syscall_args(th, args);
	return nr >= 0 && nr != TR_SYS_futex && call_would_return(th, nr, args) == 1;
}

static enum verdict verdict_of(struct run *r, struct tr_thread *th)
{
	struct thread_ctx *tc = run_thread(r, th);

	if (tracer_thread_exited(th))
		return V_GONE;
	if (tracer_thread_last_event(th) == TR_EV_EXIT && tracer_thread_running(th))
		return dying(r, th) ? V_MOVING : V_GONE;
	if (held_at_exit(th))
		return V_GONE; /* unless someone waits for it: see below */
	if (tracer_thread_held(th)) {
		if (tc->blocked && wait_would_end(r, th))
			tc->blocked = false;
		return tc->blocked || held_at_taken_spinlock(r, th) ? V_BLOCKED : V_MOVING;
	}
	return free_sample(th, &tc->sample) ? V_FREE : V_MOVING;
}

/* A blocked thread waits for a free one that waits for the outside (a
 * join of a worker blocked in its write to a full pipe that `| less`
 * reads, a lock its owner holds through a wait for a client): that one
 * goes on when the outside comes, and so will it.  A free thread idle
 * for the outside that no blocked thread waits for (a server's worker in
 * epoll_wait) wakes nobody, and makes no such exception. */
static bool waits_for_one_waiting_outside(struct run *r)
{
	struct tr_thread *th, *o;
	long nr;

	tr_for_each_thread(th, r->t) {
		o = tracer_thread_held(th) && run_thread(r, th)->blocked ? awaited(r, th) : NULL;
		if (o && free_and_waiting_outside(r, o, &nr))
			return true;
	}
	return false;
}

/* A blocked thread waits for one held at its exit: letting it go helps. */
static bool waits_for_an_exit(struct run *r)
{
	struct tr_thread *th, *o;

	tr_for_each_thread(th, r->t) {
		o = tracer_thread_held(th) && run_thread(r, th)->blocked ? awaited(r, th) : NULL;
		if (o && held_at_exit(o))
			return true;
	}
	return false;
}

/* The free threads sampled before still sleep in the same call, with no
 * context switch since. */
static bool free_ones_still_asleep(struct run *r)
{
	struct tr_thread *th;

	tr_for_each_thread(th, r->t) {
		struct thread_ctx *tc = run_thread(r, th);
		struct tr_kernel_sample now;

		if (!tracer_thread_running(th) || tracer_thread_last_event(th) == TR_EV_EXIT)
			continue;
		if (!free_sample(th, &now) || now.switches != tc->sample.switches ||
		    now.syscall != tc->sample.syscall)
			return false;
		/* a sleep for a time ends by itself, and the thread may then
		 * release what the blocked ones wait for (sleep, then post) */
		if (syscall_sleeps_for_time(now.syscall) || now.timed)
			return false;
	}
	return true;
}

/*
 * No release could wake them: every live thread sleeps.  Held threads
 * must be blocked ones (a held thread at its exit counts only if someone
 * waits for it); free threads are sampled twice, a few milliseconds apart,
 * and must sleep in the same call with no context switch (a free thread
 * idle in epoll_wait or a sleep holds nothing they could wait for).
 */
static bool is_deadlock(struct run *r)
{
	struct tr_thread *th;
	bool free_ones = false;
	int blocked = 0;

	tr_for_each_thread(th, r->t) {
		switch (verdict_of(r, th)) {
		case V_MOVING:
			return false;
		case V_BLOCKED:
			blocked++;
			break;
		case V_FREE:
			free_ones = true;
			break;
		case V_GONE:
			break;
		}
	}
	if (blocked == 0 || waits_for_an_exit(r) || waits_for_one_waiting_outside(r))
		return false;
	if (free_ones) {
		pause_ms(BLOCKED_POLL_MS);
		return free_ones_still_asleep(r);
	}
	return true;
}

/* One thread's part of blocked_program_stuck: asleep for the program,
 * and (when resampling) in the same call with no switch since. */
static bool sleeps_still(struct run *r, struct tr_thread *th, bool resample)
{
	struct thread_ctx *tc = run_thread(r, th);
	struct tr_kernel_sample now;

	/* a futex wait with no end (a lock, a condition variable, a join),
	 * private to the process: nothing else is taken for a hang (an open
	 * of a FIFO waits for a writer from outside; a process-shared lock
	 * may be another process's to release) */
	if (tracer_thread_held(th) || tracer_thread_last_event(th) == TR_EV_EXIT ||
	    !free_sample(th, &now) ||
	    !tracer_sleeps_for_good(tracer_process_pid(tracer_thread_process(th)), &now))
		return false;
	if (resample) {
		tc->sample = now;
		return true;
	}
	return now.switches == tc->sample.switches && now.syscall == tc->sample.syscall;
}

/* A replay whose end leaves the program hung for real (a minimiser's
 * dropped step may make a deadlock nobody holds): seen at once, not at the
 * timeout. */
bool blocked_program_stuck(struct run *r, int64_t *since, int64_t for_ms)
{
	struct tr_thread *th;
	bool resample = *since < 0, any = false;

	tr_for_each_thread(th, r->t) {
		if (tracer_thread_exited(th))
			continue;
		any = true;
		/* a handler of the program's may yet run (a timer's SIGALRM
		 * that posts a semaphore) */
		if (!sleeps_still(r, th, resample) ||
		    tracer_program_handles_signals(tracer_thread_process(th))) {
			*since = -1;
			return false;
		}
	}
	if (!any)
		return false;
	if (resample) {
		*since = tracer_now_ms();
		return false;
	}
	return tracer_now_ms() - *since >= for_ms;
}

/* The free threads that sleep too, and what they wait for. */
static void report_free_sleepers(struct run *r)
{
	struct tr_thread *th;
	char what[128], waits[160];

	tr_for_each_thread(th, r->t) {
		if (!tracer_thread_running(th) || tracer_thread_last_event(th) == TR_EV_EXIT)
			continue;
		describe_block(r, th, what, sizeof(what));
		describe_wait(r, th, waits, sizeof(waits));
		fprintf(r->opt->report, "  %s (free): %s%s\n", tracer_thread_name(th), what, waits);
	}
}

void report_hang_after_schedule(struct run *r)
{
	r->no_drain = true;
	report_outcome(r, OUTCOME_BUG,
		       "deadlock after the schedule's end: every thread sleeps, and none can wake "
		       "the others");
	if (r->opt->report)
		report_free_sleepers(r);
}

void report_deadlock(struct run *r, const struct stmt *s)
{
	char where[256], waits[160];
	int var;

	r->no_drain = true;
	run_where(r, s, where, sizeof(where));
	report_outcome(r, OUTCOME_BUG,
		       "deadlock: every thread the schedule controls is blocked (%s)", where);
	for (var = 0; var < r->nbindings; var++) {
		struct tr_thread *th = r->bindings[var];

		if (th && run_thread(r, th)->primary == var && tracer_thread_held(th) &&
		    tracer_thread_last_event(th) != TR_EV_EXIT) {
			if (r->opt->report) {
				const char *state = run_thread(r, th)->kernel_state;

				describe_wait(r, th, waits, sizeof(waits));
				if (!state[0] && held_at_taken_spinlock(r, th))
					state = "waits for a spinlock in pthread_spin_lock";
				fprintf(r->opt->report, "  %s = %s: %s%s\n", r->pol->threads[var],
					tracer_thread_name(th), state, waits);
			}
			report_stack(r, th);
		}
	}
	if (r->opt->report)
		report_free_sleepers(r);
}

/* A thread the schedule holds that is neither blocked nor ended. */
static struct tr_thread *held_free_to_go(struct run *r)
{
	struct tr_thread *th;

	tr_for_each_thread(th, r->t)
		if (tracer_thread_held(th) && tracer_thread_last_event(th) != TR_EV_EXIT &&
		    !run_thread(r, th)->blocked)
			return th;
	return NULL;
}

/* A blocked thread among these whose futex word has changed can go on now. */
static bool any_unblocked(struct run *r, struct tr_thread **choices, int n)
{
	bool any = false;
	int i;

	for (i = 0; i < n; i++) {
		struct thread_ctx *tc = run_thread(r, choices[i]);

		if (tc->blocked && tracer_thread_held(choices[i]) &&
		    wakes_wait_ends(r, choices[i])) {
			tc->blocked = false;
			any = true;
		}
	}
	return any;
}

static const char *while_blocked(struct run *r, struct loop_request *req, char *buf, size_t len)
{
	(void)r;
	(void)req;
	snprintf(buf, len, "while threads were blocked");
	return buf;
}

/* A late stop of a thread the schedule holds, or of a blocked one: it
 * stays held. */
static enum loop_verdict resume_free_unblocked(struct run *r, const struct tr_event *ev,
					       struct loop_request *req)
{
	if (run_thread(r, ev->thread)->blocked)
		return LOOP_AGAIN;
	return loop_resume_free(r, ev, req);
}

/* Let the free threads run until until_ms: their stops are resumed, and
 * a crash, the program's end or Ctrl-C ends the run (FLOW_STOP).  While
 * blocked threads are held, only free threads have events to give. */
static enum flow let_free_threads_run(struct run *r, int64_t until_ms)
{
	struct loop_request req = {
	    .deadline_ms = until_ms, .on_event = resume_free_unblocked, .during = while_blocked};

	return loop_run(r, &req);
}

/*
 * No held thread can wake the blocked targets, but free threads still
 * run: let them, up to the timeout, until they sleep too (a deadlock after
 * all: true) or wake a target (false).  Deciding here, at the statement
 * where the targets blocked, and not at a later choose, lets the schedule
 * of a deadlock found by a search (which records this statement, not the
 * choose) replay it.
 */
static bool free_threads_settle(struct run *r, struct tr_thread **targets, int n, enum flow *flow)
{
	int64_t deadline = tracer_now_ms() + r->timeout_ms;

	*flow = FLOW_NEXT;
	while (!held_free_to_go(r) && !waits_for_an_exit(r) && !any_unblocked(r, targets, n) &&
	       tracer_now_ms() < deadline) {
		*flow = let_free_threads_run(r, tracer_now_ms() + BLOCKED_POLL_MS);
		if (*flow == FLOW_STOP)
			return false;
		if (is_deadlock(r))
			return true;
	}
	return false;
}

/* Does the statement accept "blocked" as its end (`run A until ... ||
 * blocked`)?  Judged by the one evaluator, on a blocked event of the first
 * blocked target: -1 if evaluating failed (reported). */
static int accepts_blocked(struct run *r, struct tr_thread **targets, int n, bool *accepts)
{
	struct tr_event ev = {.kind = TR_EV_NONE};
	struct current_event cur = {.ev = &ev, .blocked = true};
	int i;

	*accepts = false;
	for (i = 0; i < n && !run_thread(r, targets[i])->blocked; i++)
		;
	if (i == n || !r->pred) /* no predicate: a step, next or finish */
		return 0;
	ev.thread = targets[i];
	return points_judge(r, &cur, accepts);
}

static void report_blocked(struct run *r, struct tr_thread *th)
{
	struct tr_event ev = {.kind = TR_EV_INTERRUPT, .thread = th, .pc = tracer_regs(th)->rip};
	char label[160];

	snprintf(label, sizeof(label), "blocked: %s", run_thread(r, th)->kernel_state);
	report_event(r, &(struct current_event){.ev = &ev, .label = label});
}

/* Is any target still short of its event blocked? */
static bool any_blocked(struct run *r, struct tr_thread **targets, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!run_thread(r, targets[i])->matched && run_thread(r, targets[i])->blocked)
			return true;
	return false;
}

/* The stop that answers a blocked target's interrupt.  It may have woken
 * between the last sample and the interrupt: then it stopped for an event
 * of its own (given back for the wait to judge) or in its own code, and it
 * is not blocked. */
static void target_stopped(struct run *r, const struct tr_event *ev)
{
	struct thread_ctx *tc = run_thread(r, ev->thread);

	if (ev->kind != TR_EV_INTERRUPT) {
		tc->blocked = false;
		if (tracer_push_back(r->t, ev) < 0)
			report_outcome(r, OUTCOME_ERROR, "out of memory");
	} else if (!interrupted_in_syscall(ev->thread)) {
		tc->blocked = false; /* it was not asleep in the call */
	} else {
		wakes_note_held(r, ev->thread);
	}
}

/* The stops that answer blocked_end's interrupts; others run on. */
static enum loop_verdict interrupted_target(struct run *r, const struct tr_event *ev,
					    struct loop_request *req)
{
	int *pending = req->ctx;

	if (!run_thread(r, ev->thread)->blocked || !tracer_thread_held(ev->thread)) {
		run_resume(r, ev->thread);
		return LOOP_AGAIN;
	}
	target_stopped(r, ev);
	return --*pending > 0 ? LOOP_AGAIN : LOOP_DONE;
}

/* A target that did not stop within the second blocked_end gives it is
 * no blocked thread to judge: its registers are from its last stop, and
 * it runs free.  Said as what it is, not as the schedule's failure. */
static enum flow unanswered_interrupt(struct run *r, struct tr_thread **targets, int n)
{
	int i;

	for (i = 0;
	     i < n && !(run_thread(r, targets[i])->blocked && tracer_thread_running(targets[i]));
	     i++)
		;
	report_outcome(r, OUTCOME_ERROR, "%s did not stop within a second of cctrace's interrupt",
		       i < n ? tracer_thread_name(targets[i]) : "a thread");
	return FLOW_STOP;
}

static enum flow blocked_judge(struct run *r, const struct stmt *s, struct tr_thread **targets,
			       int n, bool *again);

/* Stop the blocked targets where they sleep, and decide what it means.
 * *again: a free thread woke them meanwhile; resume them and wait on. */
enum flow blocked_end(struct run *r, const struct stmt *s, struct tr_thread **targets, int n,
		      bool *again)
{
	int i, pending = 0;
	struct loop_request req = {.deadline_ms = tracer_now_ms() + 1000,
				   .on_event = interrupted_target,
				   .during = while_blocked,
				   .ctx = &pending};

	*again = false;
	for (i = 0; i < n; i++) {
		struct thread_ctx *tc = run_thread(r, targets[i]);

		if (tc->matched)
			continue;
		tc->blocked = true;
		tc->candidate = false;
		/* one waiting for its vfork child stops only once the child has
		 * executed a program: its answer comes then, not now */
		if (tracer_interrupt(targets[i]) == 0 && !tracer_thread_waits_for_vfork(targets[i]))
			pending++;
	}
	if (pending > 0 && loop_run(r, &req) == FLOW_STOP)
		return FLOW_STOP;
	if (pending > 0)
		return unanswered_interrupt(r, targets, n);
	return blocked_judge(r, s, targets, n, again);
}

enum flow blocked_at_entry(struct run *r, const struct stmt *s, struct tr_thread *th, bool *again)
{
	struct thread_ctx *tc = run_thread(r, th);

	*again = false;
	tc->blocked = true;
	tc->candidate = false;
	return blocked_judge(r, s, &th, 1, again);
}

/* The targets are stopped, the blocked ones where they sleep: what it
 * means (the rest of blocked_end). */
static enum flow blocked_judge(struct run *r, const struct stmt *s, struct tr_thread **targets,
			       int n, bool *again)
{
	char what[128], where[256], waits[160] = "";
	enum flow flow = FLOW_NEXT;
	bool accepts;
	int i;

	/* Named once they are stopped: naming reads symbols, which takes time. */
	for (i = 0; i < n; i++) {
		struct thread_ctx *tc = run_thread(r, targets[i]);

		if (tc->blocked && !tc->matched) {
			describe_block(r, targets[i], what, sizeof(what));
			snprintf(tc->kernel_state, sizeof(tc->kernel_state), "%s", what);
		}
	}
	*again = !any_blocked(r, targets, n);
	if (*again)
		return FLOW_NEXT;
	if (is_deadlock(r) || free_threads_settle(r, targets, n, &flow)) {
		report_deadlock(r, s);
		return FLOW_STOP;
	}
	if (flow == FLOW_STOP)
		return FLOW_STOP;
	*again = !any_blocked(r, targets, n);
	if (*again)
		return FLOW_NEXT;
	/* A search goes on (choose skips blocked threads), and so does a
	 * schedule that expects it: `run A until ... || blocked`. */
	if (!r->oracle && accepts_blocked(r, targets, n, &accepts) < 0)
		return FLOW_STOP;
	if (r->oracle || accepts) {
		r->ended_blocked = true;
		for (i = 0; i < n; i++)
			if (run_thread(r, targets[i])->blocked)
				report_blocked(r, targets[i]);
		return FLOW_NEXT;
	}
	run_where(r, s, where, sizeof(where));
	for (i = 0;
	     i < n && (run_thread(r, targets[i])->matched || !run_thread(r, targets[i])->blocked);
	     i++)
		;
	if (i < n)
		describe_wait(r, targets[i], waits, sizeof(waits));
	report_outcome(r, OUTCOME_UNREALIZABLE, "%s is %s%s%s (%s)",
		       i < n ? tracer_thread_name(targets[i]) : "a thread",
		       i < n ? run_thread(r, targets[i])->kernel_state : "the kernel", waits,
		       waits_for_one_waiting_outside(r) ? "" : "; a held thread must go first",
		       where);
	return FLOW_STOP;
}

static void report_no_choice(struct run *r, const struct stmt *s, struct tr_thread **choices, int n,
			     bool timed_out)
{
	char where[256], waits[160];
	int i;

	run_where(r, s, where, sizeof(where));
	for (i = 0; i < n && !run_thread(r, choices[i])->blocked; i++)
		;
	if (i == n)
		i = 0;
	describe_wait(r, choices[i], waits, sizeof(waits));
	if (timed_out)
		report_outcome(r, OUTCOME_UNREALIZABLE,
			       "every thread to choose from is blocked, and nothing woke them "
			       "within %ld ms: %s is %s%s (%s)",
			       (long)r->timeout_ms, tracer_thread_name(choices[i]),
			       run_thread(r, choices[i])->kernel_state, waits, where);
	else
		report_outcome(r, OUTCOME_UNREALIZABLE,
			       "every thread to choose from is blocked: %s is %s%s; a held thread "
			       "must go first (%s)",
			       tracer_thread_name(choices[i]),
			       run_thread(r, choices[i])->kernel_state, waits, where);
}

/*
 * `choose` found every thread it may choose blocked.  Returns true when
 * one may go on now (choose again), false when the run is over: a
 * deadlock, or a wait on a thread only the schedule could release.  While
 * only free threads run, they may yet free them: that is waited for, up to
 * the timeout.
 */
bool blocked_choose_again(struct run *r, const struct stmt *s, struct tr_thread **choices, int n)
{
	int64_t deadline = tracer_now_ms() + r->timeout_ms;

	for (;;) {
		if (release_awaited_exits(r, choices, n) > 0) {
			blocked_forget(r, NULL);
			return true;
		}
		if (any_unblocked(r, choices, n))
			return true;
		if (is_deadlock(r)) {
			report_deadlock(r, s);
			return false;
		}
		if (held_free_to_go(r)) {
			report_no_choice(r, s, choices, n, false);
			return false;
		}
		if (tracer_now_ms() >= deadline) {
			report_no_choice(r, s, choices, n, true);
			return false;
		}
		if (let_free_threads_run(r, tracer_now_ms() + BLOCKED_POLL_MS) == FLOW_STOP)
			return false;
	}
}

/* Something moved: blocked threads may be able to go on now. */
void blocked_forget(struct run *r, struct tr_thread *except)
{
	struct tr_thread *th;

	tr_for_each_thread(th, r->t)
		if (th != except)
			run_thread(r, th)->blocked = false;
}
