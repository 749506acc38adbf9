/*
 * scratch.c: pages cctrace owns inside the target, and system calls made on
 * the target's behalf.
 *
 * Displaced instructions need executable memory within +-2 GiB of the code
 * they came from (rip-relative operands and the jmp back are 32-bit).  The
 * page is mapped by making the target itself call mmap: a held thread's
 * registers are saved, pointed at a `syscall` instruction that already
 * exists in the target's text (any 0f 05 byte pair executes as one when
 * jumped to, so no code is written), single-stepped once, and restored.
 * The hole for the page is picked from /proc/PID/maps, close to the code.
 * At detach the pages are unmapped the same way.
 */
#include "tracer/internal.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE  4096ul
#define REACH (1ul << 30) /* well inside the +-2 GiB a rel32 reaches */

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

struct tr_thread *tr_any_held_thread(struct tr_process *p)
{
	struct tr_thread *th;

	for (th = p->tracer->threads; th; th = th->next)
		if (th->proc == p && th->state == TR_HELD && !tr_has(th, TF_EXITING) &&
		    !tr_has(th, TF_IN_SYSCALL_STOP))
			return th;
	return NULL;
}

bool tr_in_scratch(const struct tr_process *p, uint64_t lo, uint64_t hi)
{
	const struct tr_scratch *s;

	for (s = p->scratch; s; s = s->next)
		if (s->addr < hi && s->addr + PAGE > lo)
			return true;
	return false;
}

/* Not a page of ours, which goes at detach while the place is still used. */
static bool not_scratch(const char *line, unsigned long lo, unsigned long hi, void *p)
{
	return !strstr(line, "[vsyscall]") && !tr_in_scratch(p, lo, hi);
}

/* The first place in p's own code that holds these bytes, 0 if none. */
static uint64_t find_in_code(struct tr_process *p, const void *bytes, size_t len)
{
	char path[64];
	FILE *f = tr_open_maps(p, path, sizeof(path));
	uint64_t found;

	if (!f)
		return 0;
	found = tr_mem_usable(p) ? tr_find_in_code(f, p->mem_fd, not_scratch, p, bytes, len) : 0;
	fclose(f);
	return found;
}

static uint64_t find_syscall_gadget(struct tr_process *p)
{
	if (!p->syscall_gadget)
		p->syscall_gadget = find_in_code(p, "\x0f\x05", 2);
	return p->syscall_gadget;
}

/*
 * glibc's loop that ends a thread (start_thread's, __libc_start_call_main's):
 *
 *	1: xor %edi, %edi; mov %edx, %eax; syscall; jmp 1b
 *
 * A call made through its syscall goes on, should cctrace die during it,
 * to make the call numbered rdx, with fd 0 and the same rsi, again and
 * again, until the guardian takes the thread.  For the calls made while
 * SIGTRAP may kill (before the rescue handler is in place, after it is
 * gone) that is harmless: an mmap's rdx (PROT_READ | PROT_EXEC, 5) makes
 * fstat(0, (void *)4096), which fails with EFAULT, and a munmap's (0)
 * read(0, (void *)4096, 0), which reads nothing; 4096 is below any
 * mmap_min_addr.  A single step's trap flag, which a dying tracer leaves
 * set, would have killed the process.  Executed from our entry, the bytes
 * are that loop wherever they lie.
 */
static const uint8_t exit_loop[] = {0x31, 0xff, 0x89, 0xd0, 0x0f, 0x05, 0xeb, 0xf8};
enum { EXIT_LOOP_SYSCALL = 4, EXIT_LOOP_NONE = 1 /* p->exit_loop: looked for, not found */ };

static uint64_t find_exit_loop(struct tr_process *p)
{
	if (!p->exit_loop) {
		p->exit_loop = find_in_code(p, exit_loop, sizeof(exit_loop));
		if (!p->exit_loop)
			p->exit_loop = EXIT_LOOP_NONE;
	}
	if (p->exit_loop == EXIT_LOOP_NONE)
		return 0;
	for (size_t i = 0; i < sizeof(exit_loop); i++) /* a breakpoint would fault there */
		if (tr_break_find(p, p->exit_loop + i))
			return 0;
	return p->exit_loop + EXIT_LOOP_SYSCALL;
}

/*
 * Stepped out of a stop inside a system call (the fork, clone or exec
 * event of the thread, a new child's first stop), the kernel finishes
 * that system call and reports the step at its exit, before the first
 * instruction: the pc is still the gadget.  The interrupted call is over
 * then, and its result is in rax: the thread must later resume as if
 * returning from it with that result (not restart it, nor lose the pid a
 * fork returned), and our registers must be set again for the real step.
 */
static bool stepped_out_of_syscall(struct tr_thread *th, uint64_t gadget,
				   struct user_regs_struct *saved)
{
	struct user_regs_struct now;

	if (ptrace(PTRACE_GETREGS, th->tid, 0, &now) < 0 || now.rip != gadget)
		return false;
	saved->rax = now.rax;
	saved->orig_rax = (unsigned long)-1;
	return true;
}

/* The injected call is over when the thread stops after the syscall
 * instruction; returns 1 when it did, 0 to step again, -1 when the
 * thread is gone or taken by something else (its news is queued). */
static int injected_step_done(struct tr_thread *th, int status, uint64_t gadget,
			      struct user_regs_struct *saved, const struct user_regs_struct *regs)
{
	int event = status >> 16;

	if (!WIFSTOPPED(status) || event == PTRACE_EVENT_EXEC) {
		/* It died, or another thread's exec replaced the program
		 * (and our registers with it). */
		tr_take_status(th->proc->tracer, th->tid, status);
		return -1;
	}
	if (event == PTRACE_EVENT_EXIT) {
		/* Killed meanwhile: it stops once more, in its exit, which
		 * is shown where it was, not in our call. */
		ptrace(PTRACE_SETREGS, th->tid, 0, saved);
		tr_take_status(th->proc->tracer, th->tid, status);
		return -1;
	}
	if (WSTOPSIG(status) == SIGTRAP && event == 0) {
		if (!stepped_out_of_syscall(th, gadget, saved))
			return 1;
		if (ptrace(PTRACE_SETREGS, th->tid, 0, regs) < 0)
			return -1;
		return 0;
	}
	/* A signal arrived first: keep it for later and step again. */
	if (event == 0)
		th->pending_signal = WSTOPSIG(status);
	return 0;
}

/* The trap-free call's next system-call stop: 1 at its exit, 0 to go on
 * (its entry, a signal kept for later, the exit of a call the thread was
 * stopped in, which stepped_out_of_syscall notes), -1 as
 * injected_step_done. */
static int injected_syscall_stop(struct tr_thread *th, int status, uint64_t gadget,
				 struct user_regs_struct *saved,
				 const struct user_regs_struct *regs)
{
	struct __ptrace_syscall_info info;
	int event = status >> 16;

	if (!WIFSTOPPED(status) || event == PTRACE_EVENT_EXEC || event == PTRACE_EVENT_EXIT)
		return injected_step_done(th, status, gadget, saved, regs);
	if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
		if (event == 0)
			th->pending_signal = WSTOPSIG(status);
		return 0;
	}
	if (ptrace(PTRACE_GET_SYSCALL_INFO, th->tid, sizeof(info), &info) <= 0)
		return -1;
	if (info.op != PTRACE_SYSCALL_INFO_EXIT)
		return 0;
	if (stepped_out_of_syscall(th, gadget, saved))
		return ptrace(PTRACE_SETREGS, th->tid, 0, regs) < 0 ? -1 : 0;
	return 1;
}

/*
 * A trap-free call ends in its system-call exit stop, where registers set
 * are the ones the thread returns to user mode with: a system call the
 * thread was interrupted in would not be restarted (its wrapper would see
 * -ERESTARTSYS), and no signal could be given it on its way.  So it goes
 * on into the code after the call, which keeps it busy in place, and is
 * interrupted there, stopping in the kernel's signal path as the attach's
 * interrupt left it; a signal that stops it first does as well, and is
 * kept for later.  0; -1 as injected_step_done; -2 if it could not be
 * stopped or did not stop in time: it is left running in our code, its
 * registers journaled for the guardian (restored only if cctrace dies).
 */
static int settle_in_signal_path(struct tr_thread *th, uint64_t gadget,
				 struct user_regs_struct *saved,
				 const struct user_regs_struct *regs, int64_t deadline)
{
	int status, rc, event;

	if (ptrace(PTRACE_CONT, th->tid, 0, 0) < 0)
		return -1;
	if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0) {
		tr_mark_running(th); /* busy in our code: the guardian's, should we die */
		return -2;
	}
	for (;;) {
		rc = tr_wait_task(th->proc->pid, th->tid, deadline, false, &status);
		if (rc == TR_TASK_DEADLINE) { /* parked, our registers journaled */
			tr_mark_running(th);
			return -2;
		}
		if (rc != TR_TASK_STATUS) {
			tr_thread_vanished(th, rc);
			return -1;
		}
		event = status >> 16;
		if (!WIFSTOPPED(status) || event == PTRACE_EVENT_EXEC || event == PTRACE_EVENT_EXIT)
			return injected_step_done(th, status, gadget, saved, regs) < 0 ? -1 : 0;
		if (event == PTRACE_EVENT_STOP)
			return 0;
		if (event == 0 && WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			th->pending_signal = WSTOPSIG(status);
			return 0;
		}
		if (ptrace(PTRACE_CONT, th->tid, 0, 0) < 0)
			return -1;
	}
}

/*
 * Through a gadget, stepped over (a trap flag) or, trap_free, followed by
 * its system-call stops.  The second is for the calls made while SIGTRAP
 * has the program's action (before the rescue handler is in place, after
 * it is gone; guardian.c), when a trap flag that a dying cctrace leaves
 * set would kill the process at the call's end.  Its gadget is one whose
 * next instructions keep the thread busy in place (the handler's park
 * loop, libc's exit loop), where the guardian gives it its registers
 * back.
 */
static long inject_through(struct tr_thread *th, uint64_t gadget, bool trap_free, long nr,
			   const long args[6], bool *ok)
{
	struct user_regs_struct saved = th->regs, regs = th->regs;
	uint64_t mask = 0;
	bool unblocked = false;
	int64_t deadline = tracer_now_ms() + TR_STOP_TIMEOUT_MS;
	int status, rc, done;
	long ret = -ENOSYS;

	*ok = false;
	if (!gadget || th->state != TR_HELD)
		return ret;
	/* A signal kept for later is given when the thread is resumed from a
	 * signal-delivery stop, where a step ends and an interrupt does not:
	 * such a thread is stepped (a rare window for a dying cctrace). */
	if (th->pending_signal)
		trap_free = false;
	regs.rax = (unsigned long)nr;
	regs.orig_rax = (unsigned long)-1; /* no syscall restart for the stop we are in */
	regs.rdi = (unsigned long)args[0];
	regs.rsi = (unsigned long)args[1];
	regs.rdx = (unsigned long)args[2];
	regs.r10 = (unsigned long)args[3];
	regs.r8 = (unsigned long)args[4];
	regs.r9 = (unsigned long)args[5];
	regs.rip = gadget;
	/* Should cctrace die now, the guardian gives the thread its own
	 * registers back. */
	tr_guard_inject(th, &saved);
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &regs) < 0)
		goto restore;
	if (!trap_free)
		unblocked = tr_unblock_trap(th->tid, &mask); /* tr_unblock_trap says why */
	for (done = 0; !done;) {
		if (ptrace(trap_free ? PTRACE_SYSCALL : PTRACE_SINGLESTEP, th->tid, 0, 0) < 0)
			goto restore;
		/* Bounded, and not cut short by Ctrl-C: the thread must not
		 * be left inside our call with our registers. */
		rc = tr_wait_task(th->proc->pid, th->tid, deadline, false, &status);
		if (rc != TR_TASK_STATUS) {
			if (rc == TR_TASK_DEADLINE && unblocked) { /* back at its next stop */
				th->step_mask = mask;
				tr_set(th, TF_MASK_SAVED);
			}
			if (rc == TR_TASK_DEADLINE)
				tr_mark_running(th); /* stuck in the call, in the kernel */
			else
				tr_thread_vanished(th, rc);
			/* Stuck or gone: the guardian keeps the saved registers
			 * only while the thread is in our call. */
			if (rc != TR_TASK_DEADLINE)
				tr_guard_inject(th, NULL);
			return ret;
		}
		done = trap_free ? injected_syscall_stop(th, status, gadget, &saved, &regs)
				 : injected_step_done(th, status, gadget, &saved, &regs);
		if (done < 0) {
			if (unblocked && th->state == TR_HELD)
				tr_put_back_mask(th->tid, mask);
			tr_guard_inject(th, NULL);
			return ret;
		}
	}
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &regs) == 0 && regs.rip == gadget + 2) {
		ret = (long)regs.rax;
		*ok = true;
	}
	rc = trap_free ? settle_in_signal_path(th, gadget, &saved, &regs, deadline) : 0;
	if (rc < 0) {
		*ok = false;
		if (rc == -1)
			tr_guard_inject(th, NULL);
		return -ENOSYS;
	}
restore:
	if (unblocked)
		tr_put_back_mask(th->tid, mask);
	ptrace(PTRACE_SETREGS, th->tid, 0, &saved);
	tr_guard_inject(th, NULL);
	th->regs = saved;
	tr_clear(th, TF_REGS_DIRTY);
	if (trap_free && th->pending_signal) {
		/* it came during the call; from the interrupt's stop it would
		 * be dropped: queued again, it comes as if a little later */
		syscall(SYS_tgkill, th->proc->pid, th->tid, th->pending_signal);
		th->pending_signal = 0;
	}
	return ret;
}

long tr_inject_syscall(struct tr_thread *th, long nr, const long args[6], bool *ok)
{
	uint64_t gadget = tr_guard_gadget(th->proc);

	*ok = false;
	if (th->proc->unclaimed > 0) /* it runs: the gadget could be under one */
		tr_break_drop_unclaimed(th->proc);
	if (!gadget)
		gadget = find_syscall_gadget(th->proc);
	if (gadget && (tr_break_find(th->proc, gadget) || tr_break_find(th->proc, gadget + 1))) {
		/* A breakpoint now sits on it: it would fault, not call. */
		th->proc->syscall_gadget = 0;
		gadget = find_syscall_gadget(th->proc);
	}
	return inject_through(th, gadget, false, nr, args, ok);
}

long tr_inject_syscall_parked(struct tr_thread *th, uint64_t gadget, long nr, const long args[6],
			      bool *ok)
{
	return inject_through(th, gadget, true, nr, args, ok);
}

/* The free hole nearest to `near` that leaves a page between it and any
 * neighbour, or 0. */
static uint64_t find_hole(struct tr_process *p, uint64_t near)
{
	char path[64], line[512];
	uint64_t best = 0, prev_end = PAGE * 16, dist, best_dist = ~0ul;
	FILE *f;

	f = tr_open_maps(p, path, sizeof(path));
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		uint64_t cand;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (lo >= prev_end + 3 * PAGE) {
			/* Candidates: just below lo, just above prev_end. */
			cand = near >= lo ? lo - 2 * PAGE : prev_end + PAGE;
			if (near > prev_end && near < lo)
				cand = near & ~(PAGE - 1);
			dist = cand > near ? cand - near : near - cand;
			if (dist < best_dist) {
				best_dist = dist;
				best = cand;
			}
		}
		if (hi > prev_end)
			prev_end = hi;
	}
	fclose(f);
	return best_dist < REACH ? best : 0;
}

/* Why an injected mmap did not give us the page. */
static const char *mmap_failure(struct tr_thread *th, bool ok, long addr)
{
	if (ok)
		return addr < 0 ? strerror((int)-addr) : "the kernel chose another address";
	if (th->state != TR_HELD)
		return "the thread cctrace used did not finish the call in time";
	return "system call injection failed";
}

/*
 * The thread to make p's mmap: one of p's, unless a thread of p is in
 * vfork (posix_spawn, system, popen): that one runs nothing until its
 * child executes a program, and the child runs in p's memory, so the
 * child's thread maps the page there.  Asking p's thread made the call
 * wait out its time and fail, and every breakpoint planted while a vfork
 * child lived with it.
 */
static struct tr_thread *mapping_thread(struct tr_process *p, bool *borrowed)
{
	struct tr_thread *th;

	for (th = p->tracer->threads; th; th = th->next)
		if (th->proc == p && tracer_thread_waits_for_vfork(th) &&
		    th->vfork_child->shares_mm)
			return tr_borrow_thread(th->vfork_child, borrowed);
	return tr_borrow_thread(p, borrowed);
}

/* A call of ours while SIGTRAP may kill p (no rescue handler in place):
 * through libc's exit loop, without a trap flag, if the loop is there. */
static long inject_while_trap_kills(struct tr_thread *th, long nr, const long args[6], bool *ok)
{
	uint64_t loop = tr_guard_trap_kills(th->proc) ? find_exit_loop(th->proc) : 0;

	/* the calls whose rdx the loop may repeat harmlessly (exit_loop) */
	assert((nr == TR_SYS_mmap && args[2] == (PROT_READ | PROT_EXEC)) ||
	       (nr == TR_SYS_munmap && args[2] == 0));
	if (loop)
		return tr_inject_syscall_parked(th, loop, nr, args, ok);
	return tr_inject_syscall(th, nr, args, ok);
}

static struct tr_scratch *map_scratch_page(struct tr_process *p, uint64_t near, char *err,
					   size_t errlen)
{
	unsigned execs = p->execs;
	bool borrowed;
	struct tr_thread *th = mapping_thread(p, &borrowed);
	struct tr_scratch *s = NULL;
	long args[6] = {
	    0,	PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
	    -1, 0};
	long addr = 0;
	bool ok = false;
	int saved_errno;

	if (!th) {
		snprintf(err, errlen, "no thread of pid %d can be stopped to map a scratch page",
			 p->pid);
		return NULL;
	}
	if (tracer_process_exiting(p)) {
		/* Killed while held: stepping a thread into our call
		 * would only let it die there. */
		snprintf(err, errlen, "cannot map a scratch page in pid %d: it is exiting", p->pid);
		errno = ESRCH;
		goto out;
	}
	if (p->execs != execs) {
		/* Stopping it, we met its exec: `near` was in the old program
		 * (ESRCH: the image is gone, as mem.c says it). */
		snprintf(err, errlen, "pid %d executed a new program meanwhile", p->pid);
		errno = ESRCH;
		goto out;
	}
	args[0] = (long)find_hole(p, near);
	if (args[0]) {
		/* Journaled before it exists: should cctrace die during the
		 * call, the guardian unmaps what may be there. */
		s = calloc(1, sizeof(*s));
		if (!s) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		s->addr = (uint64_t)args[0];
		if (tr_guard_scratch(p, s, TR_GUARD_LIVE) < 0) {
			snprintf(err, errlen, "cannot journal a scratch page for the guardian: %s",
				 strerror(errno));
			goto forget;
		}
		addr = inject_while_trap_kills(th, TR_SYS_mmap, args, &ok);
	}
	if (!args[0] || !ok || addr != args[0]) {
		/* A process being killed has no maps left to read, and no
		 * thread that finishes a call. */
		errno = EIO;
		if (tracer_process_exiting(p)) {
			snprintf(err, errlen, "cannot map a scratch page in pid %d: it is exiting",
				 p->pid);
			errno = ESRCH;
		} else if (!args[0])
			snprintf(err, errlen, "no free address range within reach of %#lx",
				 (unsigned long)near);
		else
			snprintf(err, errlen, "cannot map a scratch page in pid %d: %s", p->pid,
				 mmap_failure(th, ok, addr));
		goto forget;
	}
	s->next = p->scratch;
	p->scratch = s;
	goto out;
forget:
	if (s && s->gj)
		tr_guard_scratch(p, s, TR_GUARD_GONE);
	free(s);
	s = NULL;
out:
	saved_errno = errno; /* says whether the image is gone (ESRCH) */
	tr_return_thread(th, borrowed);
	errno = saved_errno;
	return s;
}

static bool reaches(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) < REACH;
}

uint64_t tr_scratch_alloc(struct tr_process *p, uint64_t near, size_t len, char *err, size_t errlen)
{
	struct tr_scratch *s;
	uint64_t at;

	for (s = p->scratch; s; s = s->next)
		if (s->used + len <= PAGE && reaches(s->addr, near))
			break;
	if (!s)
		s = map_scratch_page(p, near, err, errlen);
	if (!s)
		return 0;
	assert(len <= PAGE && s->used + len <= PAGE); /* a slot never crosses its page */
	at = s->addr + s->used;
	s->used += len;
	return at;
}

void tr_scratch_release_all(struct tr_process *p, struct tr_thread *held)
{
	long args[6] = {0, PAGE, 0, 0, 0, 0};
	bool ok;

	while (p->scratch) {
		struct tr_scratch *s = p->scratch;

		if (held && p->alive) {
			args[0] = (long)s->addr;
			inject_while_trap_kills(held, TR_SYS_munmap, args, &ok);
		}
		if (s->gj)
			tr_guard_scratch(p, s, TR_GUARD_GONE);
		p->scratch = s->next;
		free(s);
	}
}
