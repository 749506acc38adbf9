/*
 * sleeps.c: in a serialized run, a sleep takes no time.
 *
 * Why.  Tests written to make a race likely sleep: a worker sleeps between
 * its read and its write, main sleeps "long enough" before it checks, and
 * pbzip2's writer polls with usleep(50000).  In a serialized run a sleep
 * orders nothing: every other thread is held while the sleeper's step
 * runs, so its time passed with the whole program standing still, and a
 * sleep(1) cost every run a second.
 *
 * How.  The sleep functions (nanosleep, clock_nanosleep, usleep, sleep)
 * are scheduling points of the search (serial.c: each is a yield).  When
 * a thread held at the entry of one runs again, the call returns 0 at
 * once without running, as if its time had passed: the return address is
 * popped into rip and rax is 0.  A serialized replay keeps a breakpoint
 * on each sleep function while it follows its schedule, and a thread
 * resumed from one returns at once in the same way, whether its step
 * ends there or passes it: the search stopped at every sleep, and the
 * replay's written steps need not.
 *   - The clock is not virtual: it does not jump by the sleep's length.  A
 *     loop that waits for the clock (`while (now() < end) usleep(1000)`)
 *     would spin to the step limit; so a thread's first SLEEPS_SKIPPED
 *     sleeps of a run take no time and the rest take theirs.  The count is
 *     the same in the search and its replays, which resume the thread at
 *     the same sleeps in the same order.
 *   - pause() and sched_yield() wait for no time: they run as before.  A
 *     sleep made by a raw system call (syscall(SYS_nanosleep, ...)) is no
 *     scheduling point and takes its time.
 */
#include "engine/internal.h"

#include "symbols/symbols.h"

#include <assert.h>
#include <string.h>

#define SLEEPS_SKIPPED 1000 /* a thread's sleeps a run that take no time */

static const char *const sleep_fns[] = {"nanosleep", "clock_nanosleep", "usleep", "sleep"};
#define NSLEEP (sizeof(sleep_fns) / sizeof(sleep_fns[0]))

bool sleep_function(const char *name)
{
	size_t i;

	for (i = 0; i < NSLEEP; i++)
		if (!strcmp(sleep_fns[i], name))
			return true;
	return false;
}

bool sleep_returns_now(struct tr_thread *th, long *skipped)
{
	struct user_regs_struct regs = *tracer_regs(th);
	uint64_t ret;

	assert(tracer_thread_held(th)); /* at the entry: [rsp] is its return address */
	if (*skipped >= SLEEPS_SKIPPED ||
	    tracer_read(tracer_thread_process(th), regs.rsp, &ret, sizeof(ret)) < 0)
		return false;
	regs.rip = ret;
	regs.rsp += sizeof(ret);
	regs.rax = 0;
	if (tracer_set_regs(th, &regs) < 0)
		return false;
	(*skipped)++;
	return true;
}

/* The entry of sleep function k in p; 0: none. */
static uint64_t sleep_entry(struct run *r, struct tr_process *p, size_t k)
{
	struct proc_ctx *pc = run_proc(r, p);
	uint64_t addr;

	if (!pc || !pc->syms || sym_function(pc->syms, sleep_fns[k], &addr) < 0)
		return 0;
	return addr;
}

static bool replays_serially(const struct run *r)
{
	return r->serial && !run_searching_serially(r);
}

int sleeps_arm(struct run *r, struct tr_process *p)
{
	size_t k;

	for (k = 0; k < NSLEEP && replays_serially(r); k++) {
		uint64_t addr = sleep_entry(r, p, k);

		if (addr && points_arm_breakpoint(r, p, addr) < 0)
			return -1;
	}
	return 0;
}

void sleeps_before_resume(struct run *r, struct tr_thread *th)
{
	uint64_t pc = tracer_thread_pc(th);
	size_t k;

	if (!replays_serially(r) || !tracer_thread_held(th))
		return;
	for (k = 0; k < NSLEEP; k++)
		if (pc == sleep_entry(r, tracer_thread_process(th), k)) {
			sleep_returns_now(th, &run_thread(r, th)->sleeps_skipped);
			return;
		}
}
