/*
 * guardian.c: an attached program survives the death of cctrace.
 *
 * While cctrace drives a process it has changed it: its code holds our
 * breakpoint bytes, scratch pages hold displaced instructions, debug
 * registers may be armed and threads pinned to one CPU.  A normal exit
 * undoes all that (detach.c), and every catchable signal leads to a
 * normal exit (signals.c).  SIGKILL and a crash of cctrace do not: the
 * kernel lets every thread go at once.  One that runs into a breakpoint
 * then dies of the signal, and so would the process; one that cctrace held
 * at a breakpoint, or had not reaped there yet, has its signal dropped and
 * runs on from its pc.  No other process can win that race, however
 * quickly it reacts.  Three pieces close it.
 *
 * The breakpoint byte faults.  It is 0xce, not int3 (breakpoint.c): the
 * pc of a thread stopped at one is the breakpoint's, so a thread whose
 * stop is dropped meets the same breakpoint again instead of running from
 * the middle of the instruction.
 *
 * The rescue handler.  Before the first byte is written into an attached
 * process, the actions of SIGILL (our breakpoints) and SIGTRAP (a single
 * step's trap flag and debug registers, which outlive the tracer) become a
 * 16-byte handler in a scratch page of ours: `1: pause; jmp 1b`.  While
 * cctrace lives it never runs, because both signals stop in cctrace first
 * and ours are dropped there.  Once cctrace is gone, a thread that meets a
 * breakpoint or trap of ours parks in the handler instead of dying, with
 * its pc and siginfo in its signal frame.  The old actions are read with
 * injected rt_sigaction calls and journaled before the new one is set,
 * and set back at detach.  A SIGILL or SIGTRAP of the program's own gets
 * the program's own actions back before it is delivered; once its thread
 * has stopped again (the action was chosen as it was delivered), the
 * rescue handler goes back (tr_guard_after_stop).
 *
 * The guardian.  tracer_attach() starts it before anything is changed: a
 * child of cctrace, untraced, in a session of its own (a Ctrl-C for
 * cctrace's process group does not reach it), which cctrace's wait
 * ignores and which cctrace reaps when it is done.  It holds a pidfd of
 * cctrace and the read end of a pipe whose write end cctrace closes when
 * it has detached everything, or dies.  It learns what cctrace changes
 * from a journal in a memfd that both map (MAP_SHARED): cctrace writes each
 * entry before the change it describes (a breakpoint is removed first and
 * journaled after), so a death between the two leaves the guardian with
 * an entry too many, never one too few, and every step of the restore is
 * idempotent (a byte is put back only where our byte still is, a page is
 * unmapped only if it is still an anonymous r-x page there, an action
 * only if it is still ours).  Entries are records appended once and then
 * updated in place with one atomic store (a breakpoint planted, dormant
 * or gone; a page mapped or gone; a thread pinned or not, with its own
 * mask; the system call being injected and the registers to give back),
 * so a schedule that plants and removes the same breakpoint a million
 * times does not grow the journal.  The memfd grows by doubling; when it
 * cannot, the change it would describe is refused with an error.
 *
 * When cctrace is gone (the pidfd says so, after the kernel has let go of
 * the threads) without having said it is done, the guardian takes every
 * process of the journal that is still the same process (pid and start
 * time) and something was changed in.  It seizes and interrupts every
 * thread until no new one appears; puts back every original byte; gives a
 * thread parked in the handler its signal back (a pc in a displaced slot
 * mapped to the original code, the trap flag cleared, the signal dropped
 * if it was ours) and makes it rt_sigreturn under a single step, which
 * also restores its FPU state from the frame; drops a signal of ours a
 * thread stopped for after the seize; gives a thread caught inside an
 * injected system call the registers journaled before it; clears DR0-3,
 * DR6 and DR7 in every thread; restores every journaled CPU mask; sets
 * the program's own actions back and unmaps our pages with injected
 * system calls; lets every thread go with any signal of the program's it
 * still had coming; says what it did on stderr and exits.
 *
 * A child the program forked after cctrace died (or just before, not yet
 * journaled) inherits our bytes, pages and handler: it is restored by its
 * parent's records (restore_children).
 *
 * The calls that install the handler are made before SIGTRAP is ours: a
 * single step's trap flag, which a dying tracer leaves set, would kill the
 * process as the call returns.  They are made without one
 * (tr_inject_syscall_parked), the mmap of the handler's page through
 * glibc's loop that ends a thread (scratch.c, exit_loop), the others
 * through the handler's code; a death leaves the thread there, busy in
 * place, for the guardian; so are those of the detach, once SIGTRAP's
 * own action may be back (putting the actions back, the munmaps).  Not
 * covered: a libc without that loop, whose mmap and munmaps are still made
 * with a trap flag, and a thread with a signal kept for later, which only
 * a step can give it (scratch.c, inject_through).
 */
#include "tracer/internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

#define GJ_MAGIC      0x6c616e72756f6a67ull
#define GJ_INITIAL    (64 * 1024)
#define GUARDIAN_NAME "cct-guardian" /* no "cctrace" in it: take_own_name */
#define PAGE	      4096ul
#define EFLAGS_TF     0x100ul

/* ------------------------------------------------------------ journal */

enum gj_kind { GJ_PROC = 1, GJ_BREAK, GJ_SCRATCH, GJ_THREAD };

/* struct sigaction as the rt_sigaction system call takes it (x86-64). */
struct k_sigaction {
	uint64_t handler, flags, restorer, mask;
};

struct gj_header {
	uint64_t magic;
	uint64_t used; /* bytes committed, this header included */
	uint32_t done; /* cctrace has let go of everything */
	uint32_t inject;
	int32_t inject_pid, inject_tid;
	struct user_regs_struct inject_regs; /* the thread's own registers */
	int32_t inject_sig; /* the signal it had coming (its own int3's SIGTRAP...) */
};

struct gj_rec {
	uint32_t kind, size;
	uint64_t proc; /* offset of the process's record */
	uint32_t state;
	uint32_t pad;
};

struct gj_proc {
	struct gj_rec h;
	int32_t pid;
	uint32_t rescue_state;
	uint64_t start_time; /* a reused pid is not ours */
	uint64_t rescue;     /* the handler's code */
	uint32_t watch;	     /* debug registers were armed */
	uint32_t pad;
	struct k_sigaction old[2]; /* SIGILL's and SIGTRAP's actions before ours */
};

struct gj_break {
	struct gj_rec h;
	uint64_t addr, slot;
	uint8_t orig, len;
};

struct gj_scratch {
	struct gj_rec h;
	uint64_t addr, len;
};

struct gj_thread {
	struct gj_rec h;
	int32_t tid;
	uint32_t pinned; /* mask is its own CPU mask */
	unsigned char mask[sizeof(((struct tr_thread *)0)->saved_affinity)];
};

struct tr_guard {
	int fd; /* the memfd */
	void *map;
	size_t size;
	int pipe;  /* write end; closed when cctrace is done or dies */
	pid_t pid; /* the guardian */
};

/* The handler: park in pause(); and its sa_restorer, rt_sigreturn. */
static const uint8_t rescue_code[] = {
    0xb8, 0x22, 0x00, 0x00, 0x00, /* 0: mov $TR_SYS_pause, %eax */
    0x0f, 0x05,			  /* 5: syscall */
    0xeb, 0xf7,			  /* 7: jmp 0 */
    0xb8, 0x0f, 0x00, 0x00, 0x00, /* 9: mov $TR_SYS_rt_sigreturn, %eax */
    0x0f, 0x05,			  /* 14: syscall */
};
enum { RESCUE_SYSCALL = 5, RESCUE_PARK_END = 9, RESCUE_RESTORER = 9, RESCUE_SIGRETURN = 14 };
_Static_assert(TR_SYS_pause == 0x22 && TR_SYS_rt_sigreturn == 0x0f, "rescue_code");

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static struct tr_guard *guard_of(const struct tr_process *p)
{
	return p->launched ? NULL : p->tracer->guard;
}

static void *rec_at(struct tr_guard *g, size_t off)
{
	return (char *)g->map + off;
}

static void store(uint32_t *field, uint32_t value)
{
	__atomic_store_n(field, value, __ATOMIC_RELEASE);
}

static int grow(struct tr_guard *g, size_t need)
{
	size_t size = g->size;
	void *map;

	while (size < need)
		size *= 2;
	if (ftruncate(g->fd, (off_t)size) < 0)
		return -1;
	map = mremap(g->map, g->size, size, MREMAP_MAYMOVE);
	if (map == MAP_FAILED)
		return -1;
	g->map = map;
	g->size = size;
	return 0;
}

/* Append a record (kind, size and proc filled here); its offset, 0 if the
 * journal cannot grow (errno says why). */
static size_t append(struct tr_guard *g, struct gj_rec *rec, size_t size, uint32_t kind,
		     size_t proc)
{
	struct gj_header *h = g->map;
	size_t at = h->used, len = align8(size);

	if (at + len > g->size && grow(g, at + len) < 0)
		return 0;
	h = g->map;
	rec->kind = kind;
	rec->size = (uint32_t)len;
	rec->proc = proc ? proc : at;
	memcpy(rec_at(g, at), rec, size);
	__atomic_store_n(&h->used, at + len, __ATOMIC_RELEASE);
	return at;
}

static void set_state(struct tr_guard *g, size_t off, uint32_t state)
{
	struct gj_rec *r = rec_at(g, off);

	store(&r->state, state);
}

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks. */
static uint64_t start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

int tr_guard_process(struct tr_process *p)
{
	struct tr_guard *g = guard_of(p);
	struct gj_proc rec = {0};

	if (!g)
		return 0;
	rec.pid = p->pid;
	rec.start_time = start_time(p->pid);
	rec.h.state = TR_GUARD_LIVE;
	p->gj = append(g, &rec.h, sizeof(rec), GJ_PROC, 0);
	return p->gj ? 0 : -1;
}

void tr_guard_process_gone(struct tr_process *p)
{
	struct tr_guard *g = guard_of(p);

	if (g && p->gj)
		set_state(g, p->gj, TR_GUARD_GONE);
}

static int record_missing(struct tr_process *p)
{
	if (!guard_of(p))
		return 0;
	if (!p->gj) {
		errno = ENOMEM;
		return -1;
	}
	return 1;
}

int tr_guard_break(struct tr_process *p, struct tr_breakpoint *bp, int state)
{
	struct tr_guard *g = guard_of(p);
	struct gj_break rec = {0};
	int rc = record_missing(p);

	if (rc <= 0)
		return rc;
	if (bp->gj) {
		set_state(g, bp->gj, (uint32_t)state);
		return 0;
	}
	rec.h.state = (uint32_t)state;
	rec.addr = bp->addr;
	rec.slot = bp->slot;
	rec.orig = bp->code[0];
	rec.len = bp->insn.len;
	bp->gj = append(g, &rec.h, sizeof(rec), GJ_BREAK, p->gj);
	return bp->gj ? 0 : -1;
}

int tr_guard_scratch(struct tr_process *p, struct tr_scratch *s, int state)
{
	struct tr_guard *g = guard_of(p);
	struct gj_scratch rec = {0};
	int rc = record_missing(p);

	if (rc <= 0)
		return rc;
	if (s->gj) {
		set_state(g, s->gj, (uint32_t)state);
		return 0;
	}
	rec.h.state = (uint32_t)state;
	rec.addr = s->addr;
	rec.len = PAGE;
	s->gj = append(g, &rec.h, sizeof(rec), GJ_SCRATCH, p->gj);
	return s->gj ? 0 : -1;
}

static struct gj_thread *thread_rec(struct tr_thread *th)
{
	struct tr_guard *g = guard_of(th->proc);
	struct gj_thread rec = {0};

	if (!g || !th->proc->gj)
		return NULL;
	if (!th->gj) {
		rec.h.state = TR_GUARD_LIVE;
		rec.tid = th->tid;
		th->gj = append(g, &rec.h, sizeof(rec), GJ_THREAD, th->proc->gj);
		if (!th->gj)
			return NULL;
	}
	return rec_at(g, th->gj);
}

int tr_guard_pin(struct tr_thread *th, bool pinned)
{
	struct gj_thread *r;

	if (!guard_of(th->proc))
		return 0;
	r = thread_rec(th);
	if (!r)
		return -1;
	if (pinned)
		memcpy(r->mask, th->saved_affinity, sizeof(r->mask));
	store(&r->pinned, pinned);
	return 0;
}

void tr_guard_inject(struct tr_thread *th, const struct user_regs_struct *saved)
{
	struct tr_guard *g = guard_of(th->proc);
	struct gj_header *h;

	if (!g)
		return;
	h = g->map;
	if (!saved) {
		store(&h->inject, 0);
		return;
	}
	store(&h->inject, 0);
	h->inject_pid = th->proc->pid;
	h->inject_tid = th->tid;
	h->inject_regs = *saved;
	h->inject_sig = th->pending_signal;
	store(&h->inject, 1);
}

void tr_guard_watch(struct tr_process *p)
{
	struct tr_guard *g = guard_of(p);
	struct gj_proc *r;

	if (!g || !p->gj)
		return;
	r = rec_at(g, p->gj);
	store(&r->watch, 1);
}

static void set_rescue_state(struct tr_process *p, int state)
{
	struct tr_guard *g = guard_of(p);

	p->rescue_state = state;
	if (g && p->gj)
		store(&((struct gj_proc *)rec_at(g, p->gj))->rescue_state, (uint32_t)state);
}

void tr_guard_inherit(struct tr_process *parent, struct tr_process *child)
{
	struct tr_guard *g = guard_of(child);
	struct gj_proc *r;

	child->rescue = parent->rescue;
	memcpy(child->rescue_old, parent->rescue_old, sizeof(child->rescue_old));
	if (g && child->gj) {
		r = rec_at(g, child->gj);
		memcpy(r->old, parent->rescue_old, sizeof(r->old));
		r->rescue = parent->rescue;
	}
	set_rescue_state(child, parent->rescue_state);
}

void tr_guard_exec(struct tr_process *p)
{
	/* The new image has the default action and none of our pages. */
	p->rescue = 0;
	set_rescue_state(p, TR_RESCUE_NONE);
}

/* ------------------------------------------------- the rescue handler */

/* A call through th; park: the handler's syscall, for the calls made
 * while SIGTRAP may have the program's action, as the handler is installed
 * and taken out (tr_inject_syscall_parked says why), else 0. */
static int inject(struct tr_thread *th, uint64_t park, long nr, long a0, long a1, long a2, long a3)
{
	long args[6] = {a0, a1, a2, a3, 0, 0}, ret;
	bool ok;

	ret = park ? tr_inject_syscall_parked(th, park, nr, args, &ok)
		   : tr_inject_syscall(th, nr, args, &ok);
	if (!ok) {
		errno = EIO;
		return -1;
	}
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return 0;
}

/* The signals the handler takes: our breakpoints' and our traps'. */
static const int rescued[2] = {SIGILL, SIGTRAP};

/* Below the thread's red zone: free stack to pass a sigaction through. */
static uint64_t scratch_stack(const struct tr_thread *th)
{
	return (th->regs.rsp - 1024) & ~15ul;
}

static int read_action(struct tr_process *p, struct tr_thread *th, uint64_t park, int sig,
		       struct k_sigaction *act)
{
	uint64_t sp = scratch_stack(th);

	if (inject(th, park, TR_SYS_rt_sigaction, sig, 0, (long)sp, 8) < 0)
		return -1;
	return tracer_read(p, sp, act, sizeof(*act));
}

static int set_action(struct tr_process *p, struct tr_thread *th, uint64_t park, int sig,
		      const struct k_sigaction *act)
{
	uint64_t sp = scratch_stack(th);

	if (tracer_write(p, sp, act, sizeof(*act)) < 0)
		return -1;
	return inject(th, park, TR_SYS_rt_sigaction, sig, (long)sp, 0, 8);
}

static int install_rescue(struct tr_process *p, struct tr_thread *th, char *err, size_t errlen)
{
	struct tr_guard *g = guard_of(p);
	struct k_sigaction old[2], act;
	struct gj_proc *r;
	uint64_t code;
	int i;

	/* No call here is made with a trap flag while SIGTRAP kills: the
	 * mmap goes through libc's exit loop (scratch.c,
	 * inject_while_trap_kills), the others through the handler's code
	 * (tr_inject_syscall_parked). */
	code = tr_scratch_alloc(p, th->regs.rip, sizeof(rescue_code), err, errlen);
	if (!code)
		return -1;
	if (tracer_write(p, code, rescue_code, sizeof(rescue_code)) < 0)
		goto fail;
	for (i = 0; i < 2; i++)
		if (read_action(p, th, code + RESCUE_SYSCALL, rescued[i], &old[i]) < 0)
			goto fail;
	/* Journaled before either action changes. */
	r = rec_at(g, p->gj);
	memcpy(r->old, old, sizeof(old));
	r->rescue = code;
	memcpy(p->rescue_old, old, sizeof(old));
	p->rescue = code;
	set_rescue_state(p, TR_RESCUE_INSTALLING);
	act = (struct k_sigaction){.handler = code,
				   .flags = SA_SIGINFO | SA_RESTORER | SA_NODEFER | SA_RESTART,
				   .restorer = code + RESCUE_RESTORER};
	/* SIGTRAP's first: from then on a trap flag is caught */
	for (i = 1; i >= 0; i--)
		if (set_action(p, th, code + RESCUE_SYSCALL, rescued[i], &act) < 0)
			goto fail;
	set_rescue_state(p, TR_RESCUE_INSTALLED);
	return 0;
fail:
	snprintf(err, errlen,
		 "cannot set up SIGILL and SIGTRAP in pid %d so that it survives cctrace: %s",
		 p->pid, strerror(errno));
	return -1;
}

int tr_guard_prepare(struct tr_process *p, char *err, size_t errlen)
{
	struct tr_thread *th;
	bool borrowed;
	int rc;

	if (!guard_of(p) || p->rescue_state != TR_RESCUE_NONE)
		return 0;
	if (!p->gj) {
		snprintf(err, errlen, "cannot journal pid %d for the guardian: %s", p->pid,
			 strerror(ENOMEM));
		return -1;
	}
	th = tr_borrow_thread(p, &borrowed);
	if (!th)
		return 0; /* nothing can run, so nothing can fault yet */
	rc = install_rescue(p, th, err, errlen);
	tr_return_thread(th, borrowed);
	if (rc < 0)
		set_rescue_state(p, TR_RESCUE_OFF);
	return rc;
}

static bool installed(const struct tr_process *p)
{
	return p->rescue_state == TR_RESCUE_INSTALLED || p->rescue_state == TR_RESCUE_INSTALLING;
}

/* The program's own actions back, through held thread th. */
static int uninstall(struct tr_process *p, struct tr_thread *th, int then)
{
	struct k_sigaction old;
	int i;

	if (!installed(p))
		return 0;
	/* A vfork child's copy of the actions goes with its exec, which
	 * resets what is caught; and the gadget for the call is in its
	 * parent's page, which its parent's detach may have unmapped: a call
	 * made through it would fault (SIGSEGV, the child killed). */
	if (p->vforked && p->shares_mm) {
		set_rescue_state(p, then);
		p->rescue = 0;
		return 0;
	}
	if (!th || !p->alive)
		return -1;
	for (i = 0; i < 2; i++) {
		memcpy(&old, p->rescue_old[i], sizeof(old));
		/* no trap flag once SIGTRAP's own action may be back */
		if (set_action(p, th, tr_guard_gadget(p), rescued[i], &old) < 0)
			return -1;
	}
	set_rescue_state(p, then);
	p->rescue = 0; /* its page may go now: no more system calls through it */
	return 0;
}

uint64_t tr_guard_gadget(const struct tr_process *p)
{
	return installed(p) && p->rescue ? p->rescue + RESCUE_SYSCALL : 0;
}

bool tr_guard_trap_kills(const struct tr_process *p)
{
	return guard_of(p) && p->rescue_state != TR_RESCUE_INSTALLED;
}

int tr_guard_unprepare(struct tr_process *p, struct tr_thread *held)
{
	return uninstall(p, held, TR_RESCUE_NONE);
}

int tr_guard_before_signal(struct tr_thread *th)
{
	bool was = installed(th->proc);
	int rc = uninstall(th->proc, th, TR_RESCUE_OFF);

	if (was && rc == 0 && !th->proc->vforked)
		th->proc->rescue_again_tid = th->tid;
	return rc;
}

/* The kernel chooses a signal's action as it delivers it, when its thread
 * resumes: only once that thread has stopped again may ours come back,
 * or the program's own SIGTRAP would park in our handler for good. */
void tr_guard_after_stop(struct tr_thread *th)
{
	struct tr_process *p = th->proc;
	char err[256];

	if (!p->rescue_again_tid || p->rescue_again_tid != th->tid ||
	    p->rescue_state != TR_RESCUE_OFF || !p->alive)
		return;
	p->rescue_again_tid = 0;
	set_rescue_state(p, TR_RESCUE_NONE);
	if (install_rescue(p, th, err, sizeof(err)) < 0)
		set_rescue_state(p, TR_RESCUE_OFF);
}

bool tr_guard_signal_action(const struct tr_process *p, int sig, bool *caught)
{
	struct k_sigaction old;
	int i = sig == SIGILL ? 0 : 1;

	if (!installed(p) || (sig != SIGILL && sig != SIGTRAP))
		return false;
	memcpy(&old, p->rescue_old[i], sizeof(old));
	*caught = old.handler != (uint64_t)(uintptr_t)SIG_DFL;
	return true;
}

/* ------------------------------------------------- the guardian process */

struct g_thread {
	pid_t tid;
	bool stopped, gone, dirty;
	int sig; /* to deliver when it is let go */
	struct user_regs_struct regs;
};

struct g_proc {
	const char *j; /* the journal */
	size_t used;
	const struct gj_proc *rec;
	size_t off;
	/* rec's pid, or a child it forked that the journal does not know
	 * (inherited_from: its parent), restored by rec's records: it has
	 * our bytes, pages and handler as its parent had them at the fork */
	pid_t pid, inherited_from;
	int mem;
	struct g_thread *th;
	int n, cap;
	int bytes, parked, trapped, pages, pinned, dr_threads;
	bool failed;
};

static void reset_signals(void)
{
	static const int ignored[] = {SIGINT,  SIGQUIT, SIGHUP,	 SIGPIPE, SIGTSTP,
				      SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2};
	sigset_t none;
	size_t i;
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* stdin and stdout on /dev/null; stderr kept, for the report; every
 * other descriptor but the three we need closed. */
static void close_others(int keep1, int keep2, int keep3)
{
	int null = open("/dev/null", O_RDWR), fd;
	struct dirent *de;
	DIR *d;

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (null > 2)
			close(null);
	}
	d = opendir("/proc/self/fd");
	if (!d)
		return;
	while ((de = readdir(d))) {
		fd = atoi(de->d_name);
		if (fd > 2 && fd != dirfd(d) && fd != keep1 && fd != keep2 && fd != keep3 &&
		    isdigit((unsigned char)de->d_name[0]))
			close(fd);
	}
	closedir(d);
}

static void unpin_self(void)
{
	cpu_set_t all;
	int cpu;

	CPU_ZERO(&all);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &all);
	sched_setaffinity(0, sizeof(all), &all);
}

static const struct gj_rec *next_rec(const struct g_proc *gp, size_t *off)
{
	const struct gj_rec *r;

	if (*off + sizeof(*r) > gp->used)
		return NULL;
	r = (const struct gj_rec *)(gp->j + *off);
	if (r->size < sizeof(*r) || *off + r->size > gp->used)
		return NULL;
	*off += r->size;
	return r;
}

static const struct gj_break *find_break(const struct g_proc *gp, uint64_t addr)
{
	size_t off = align8(sizeof(struct gj_header));
	const struct gj_rec *r;

	while ((r = next_rec(gp, &off)))
		if (r->kind == GJ_BREAK && r->proc == gp->off && r->state != TR_GUARD_GONE &&
		    ((const struct gj_break *)r)->addr == addr)
			return (const struct gj_break *)r;
	return NULL;
}

/* A pc inside one of our displaced slots, moved to the original code. */
static uint64_t out_of_slot(const struct g_proc *gp, uint64_t pc)
{
	size_t off = align8(sizeof(struct gj_header));
	const struct gj_rec *r;

	while ((r = next_rec(gp, &off))) {
		const struct gj_break *b = (const struct gj_break *)r;

		if (r->kind != GJ_BREAK || r->proc != gp->off || !b->slot || pc < b->slot ||
		    pc >= b->slot + DIS_SLOT_SIZE)
			continue;
		return pc == b->slot ? b->addr : b->addr + b->len;
	}
	return pc;
}

static struct g_thread *add_thread(struct g_proc *gp, pid_t tid)
{
	struct g_thread *grown;

	if (gp->n == gp->cap) {
		gp->cap = gp->cap ? gp->cap * 2 : 16;
		grown = realloc(gp->th, sizeof(*grown) * (size_t)gp->cap);
		if (!grown)
			return NULL;
		gp->th = grown;
	}
	memset(&gp->th[gp->n], 0, sizeof(gp->th[0]));
	gp->th[gp->n].tid = tid;
	return &gp->th[gp->n++];
}

static bool known(const struct g_proc *gp, pid_t tid)
{
	int i;

	for (i = 0; i < gp->n; i++)
		if (gp->th[i].tid == tid)
			return true;
	return false;
}

/* Seize and interrupt the threads not seen yet; how many. */
static int seize_new(struct g_proc *gp)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int added = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", gp->pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		struct g_thread *t;

		if (tid <= 0 || known(gp, tid) || ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
			continue;
		t = add_thread(gp, tid);
		if (!t) {
			ptrace(PTRACE_DETACH, tid, 0, 0);
			gp->failed = true;
			break;
		}
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		added++;
	}
	closedir(d);
	return added;
}

static struct g_thread *thread_of(struct g_proc *gp, pid_t tid)
{
	int i;

	for (i = 0; i < gp->n; i++)
		if (gp->th[i].tid == tid)
			return &gp->th[i];
	return NULL;
}

static int waiting_for(const struct g_proc *gp)
{
	int i, n = 0;

	for (i = 0; i < gp->n; i++)
		n += !gp->th[i].stopped && !gp->th[i].gone;
	return n;
}

static void wait_stops(struct g_proc *gp)
{
	int status;

	while (waiting_for(gp) > 0) {
		pid_t tid = waitpid(-1, &status, __WALL);
		struct g_thread *t = tid > 0 ? thread_of(gp, tid) : NULL;

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!t)
			continue;
		if (!WIFSTOPPED(status)) {
			t->gone = true;
			continue;
		}
		t->stopped = true;
		if ((status >> 16) == 0)
			t->sig = WSTOPSIG(status);
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
			t->gone = true;
		else if ((status >> 16) == PTRACE_EVENT_STOP && tr_mend_interrupted_wait(&t->regs))
			t->dirty = true; /* as cctrace does: the program sees nothing */
	}
}

static void seize_all(struct g_proc *gp)
{
	while (seize_new(gp) > 0)
		wait_stops(gp);
}

static bool held(const struct g_thread *t)
{
	return t->stopped && !t->gone;
}

/* t's next state change; other threads' (only ends, as they are all
 * stopped) are noted on the way. */
static int wait_thread(struct g_proc *gp, struct g_thread *t, int *status)
{
	for (;;) {
		pid_t tid = waitpid(-1, status, __WALL);
		struct g_thread *other;

		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0)
			return -1;
		if (tid == t->tid)
			return 0;
		other = thread_of(gp, tid);
		if (other && !WIFSTOPPED(*status))
			other->gone = true;
	}
}

static bool faults(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

/* Single-step t until it stops for the step; its registers are read back.
 * An interrupt still pending may stop it first, and a signal from outside
 * is kept for later; a fault of the stepped instruction is a failure. */
static int step(struct g_proc *gp, struct g_thread *t)
{
	uint64_t mask = 0;
	int status, sig, tries, rc = -1;
	bool unblocked;

	/* SIGTRAP blocked (the program's own handler runs), the step's trap
	 * would reset its action to SIG_DFL (task.c, tr_unblock_trap) */
	unblocked = tr_unblock_trap(t->tid, &mask);
	for (tries = 0; tries < 64; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, t->tid, 0, 0) < 0 ||
		    wait_thread(gp, t, &status) < 0 || !WIFSTOPPED(status)) {
			t->gone = true;
			return -1;
		}
		sig = WSTOPSIG(status);
		if ((status >> 16) == 0 && sig == SIGTRAP) {
			rc = 0;
			break;
		}
		if ((status >> 16) == 0 && faults(sig))
			break;
		if ((status >> 16) == 0)
			t->sig = sig;
	}
	if (unblocked)
		tr_put_back_mask(t->tid, mask);
	if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
		return -1;
	return rc;
}

/* Is a SIGILL or SIGTRAP queued for the thread?  (Its SigPnd.) */
static bool trap_pending(const struct g_proc *gp, const struct g_thread *t)
{
	char path[64], line[256];
	unsigned long long pending = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", gp->pid, t->tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "SigPnd:", 7) == 0)
			pending = strtoull(line + 7, NULL, 16);
	if (f)
		fclose(f);
	return pending & (1ull << (SIGILL - 1) | 1ull << (SIGTRAP - 1));
}

/*
 * A thread that met a breakpoint just as we seized it stops for our
 * interrupt first, with the SIGILL still queued; let go so, it would take
 * it with the program's own action and die.  Let it take the signal while
 * we trace it: it stops at once, before running any code, and the signal
 * is settled as any other (dropped if it was ours).
 */
static void absorb_pending(struct g_proc *gp, struct g_thread *t)
{
	int status, tries;

	for (tries = 0; tries < 4 && held(t) && !t->sig && trap_pending(gp, t); tries++) {
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) < 0 || wait_thread(gp, t, &status) < 0 ||
		    !WIFSTOPPED(status)) {
			t->gone = true;
			return;
		}
		if ((status >> 16) == 0)
			t->sig = WSTOPSIG(status);
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) < 0)
			t->gone = true;
	}
}

static void put_bytes_back(struct g_proc *gp)
{
	size_t off = align8(sizeof(struct gj_header));
	const struct gj_rec *r;

	while ((r = next_rec(gp, &off))) {
		const struct gj_break *b = (const struct gj_break *)r;
		uint8_t now;

		if (r->kind != GJ_BREAK || r->proc != gp->off || r->state == TR_GUARD_GONE)
			continue;
		if (pread(gp->mem, &now, 1, (off_t)b->addr) != 1 || now != TRACER_BREAK_BYTE ||
		    b->orig == TRACER_BREAK_BYTE)
			continue;
		if (pwrite(gp->mem, &b->orig, 1, (off_t)b->addr) == 1)
			gp->bytes++;
		else
			gp->failed = true;
	}
}

/* Was signal sig (si_code code) at pc ours?  A SIGILL is, on one of our
 * breakpoints, live or just taken out (the pc is still on it); a SIGTRAP
 * is, from a single step or a debug register.  Anything else (the
 * program's own bad instruction or int3, a kill) is the program's. */
static bool ours(const struct g_proc *gp, int sig, int code, uint64_t pc)
{
	if (sig == SIGILL)
		return code == ILL_ILLOPN && find_break(gp, pc) != NULL;
	if (sig == SIGTRAP)
		return code == TRAP_TRACE || code == TRAP_HWBKPT || code == TRAP_BRKPT;
	return false;
}

/* Kernel layout of the signal frame's ucontext (x86-64). */
struct k_ucontext {
	uint64_t uc_flags, uc_link;
	stack_t uc_stack;
	struct sigcontext mc;
	uint64_t uc_sigmask;
};
_Static_assert(sizeof(struct k_ucontext) == 304, "k_ucontext");

/* t is parked in the handler: settle its signal in the frame (a pc inside
 * a displaced slot goes back to the original code, a single step's trap
 * flag is cleared), then have it return from the handler under a single
 * step, which also restores its FPU state from the frame. */
static void unpark(struct g_proc *gp, struct g_thread *t)
{
	uint64_t frame = t->regs.rsp, uc_at = frame + 8;
	uint64_t si_at = uc_at + sizeof(struct k_ucontext);
	struct k_ucontext uc;
	int32_t si[3]; /* si_signo, si_errno, si_code */
	bool mine;

	if (pread(gp->mem, &uc, sizeof(uc), (off_t)uc_at) != sizeof(uc) ||
	    pread(gp->mem, si, sizeof(si), (off_t)si_at) != sizeof(si)) {
		gp->failed = true;
		return;
	}
	mine = ours(gp, si[0], si[2], uc.mc.rip);
	uc.mc.rip = out_of_slot(gp, uc.mc.rip);
	uc.mc.eflags &= ~EFLAGS_TF;
	if (pwrite(gp->mem, &uc, sizeof(uc), (off_t)uc_at) != sizeof(uc)) {
		gp->failed = true;
		return;
	}
	t->regs.rip = gp->rec->rescue + RESCUE_SIGRETURN;
	t->regs.rax = TR_SYS_rt_sigreturn;
	t->regs.orig_rax = (unsigned long)-1; /* not a restart of its pause() */
	t->regs.rsp = frame + 8;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs) < 0 || step(gp, t) < 0 ||
	    t->regs.rip != uc.mc.rip) {
		gp->failed = true;
		return;
	}
	t->sig = mine ? 0 : si[0];
	gp->parked++;
}

static bool in_handler(const struct g_proc *gp, uint64_t pc)
{
	return gp->rec->rescue && pc >= gp->rec->rescue && pc < gp->rec->rescue + RESCUE_PARK_END;
}

static void settle_thread(struct g_proc *gp, struct g_thread *t)
{
	const struct gj_header *h = (const struct gj_header *)gp->j;
	siginfo_t si;

	if (h->inject && h->inject_pid == gp->pid && h->inject_tid == t->tid) {
		/* Caught inside an injected call: its own registers back,
		 * and the signal it was to be given (the program's own
		 * SIGTRAP, whose action cctrace was putting back) */
		t->regs = h->inject_regs;
		t->dirty = true;
		t->sig = h->inject_sig;
		return;
	}
	if (in_handler(gp, t->regs.rip)) {
		unpark(gp, t);
		return;
	}
	/* Stopped for a signal since we seized it (a breakpoint met before
	 * the bytes went back, a trap flag left set): dropped if ours. */
	if ((t->sig == SIGILL || t->sig == SIGTRAP) &&
	    ptrace(PTRACE_GETSIGINFO, t->tid, 0, &si) == 0 &&
	    ours(gp, t->sig, si.si_code, t->regs.rip)) {
		t->sig = 0;
		gp->trapped++;
	}
	if (out_of_slot(gp, t->regs.rip) != t->regs.rip) {
		t->regs.rip = out_of_slot(gp, t->regs.rip);
		t->dirty = true;
	}
}

static void clear_debug_registers(struct g_proc *gp, struct g_thread *t)
{
	static const int regs[] = {7, 0, 1, 2, 3, 6};
	size_t i;

	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (ptrace(PTRACE_POKEUSER, t->tid,
			   offsetof(struct user, u_debugreg) + (size_t)regs[i] * sizeof(long),
			   0) < 0)
			gp->failed = true;
	gp->dr_threads++;
}

static void restore_affinity(struct g_proc *gp)
{
	size_t off = align8(sizeof(struct gj_header));
	const struct gj_rec *r;

	while ((r = next_rec(gp, &off))) {
		const struct gj_thread *tr = (const struct gj_thread *)r;

		if (r->kind != GJ_THREAD || r->proc != gp->off || !tr->pinned ||
		    !known(gp, tr->tid))
			continue;
		if (sched_setaffinity(tr->tid, sizeof(cpu_set_t), (const cpu_set_t *)tr->mask) == 0)
			gp->pinned++;
		else
			gp->failed = true;
	}
}

/* A file's code: our pages (the handler's, the displaced instructions')
 * are anonymous, and go at the detach while the gadget is still used. */
static bool file_backed(const char *line, unsigned long lo, unsigned long hi, void *ctx)
{
	(void)lo, (void)hi, (void)ctx;
	return strchr(line, '/') != NULL;
}

/* The first `syscall` (0f 05) in the program's own code. */
static uint64_t find_gadget(struct g_proc *gp)
{
	char path[64];
	uint64_t found;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", gp->pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	found = tr_find_in_code(f, gp->mem, file_backed, NULL, "\x0f\x05", 2);
	fclose(f);
	return found;
}

/* nr(args) made by held thread t, whose registers are then as before. */
static long g_inject(struct g_proc *gp, struct g_thread *t, uint64_t gadget, long nr,
		     const long args[4], bool *ok)
{
	struct user_regs_struct saved = t->regs, regs = t->regs;

	*ok = false;
	regs.rax = (unsigned long)nr;
	regs.orig_rax = (unsigned long)-1;
	regs.rdi = (unsigned long)args[0];
	regs.rsi = (unsigned long)args[1];
	regs.rdx = (unsigned long)args[2];
	regs.r10 = (unsigned long)args[3];
	regs.rip = gadget;
	if (ptrace(PTRACE_SETREGS, t->tid, 0, &regs) < 0 || step(gp, t) < 0)
		return -ENOSYS;
	*ok = t->regs.rip == gadget + 2;
	regs = t->regs;
	t->regs = saved;
	ptrace(PTRACE_SETREGS, t->tid, 0, &saved);
	return (long)regs.rax;
}

static struct g_thread *injector(struct g_proc *gp)
{
	int i;

	for (i = 0; i < gp->n; i++)
		if (held(&gp->th[i]))
			return &gp->th[i];
	return NULL;
}

/* The program's own actions of SIGILL and SIGTRAP back, where ours is
 * still the one in place. */
static void restore_actions(struct g_proc *gp, struct g_thread *t, uint64_t gadget)
{
	static const int sigs[2] = {SIGILL, SIGTRAP};
	uint64_t sp = (t->regs.rsp - 1024) & ~15ul;
	struct k_sigaction now;
	bool ok;
	int i;

	if (gp->rec->rescue_state == TR_RESCUE_NONE || gp->rec->rescue_state == TR_RESCUE_OFF)
		return;
	for (i = 0; i < 2; i++) {
		long query[4] = {sigs[i], 0, (long)sp, 8}, set[4] = {sigs[i], (long)sp, 0, 8};

		if (g_inject(gp, t, gadget, TR_SYS_rt_sigaction, query, &ok) != 0 || !ok ||
		    pread(gp->mem, &now, sizeof(now), (off_t)sp) != sizeof(now)) {
			gp->failed = true;
			return;
		}
		if (now.handler != gp->rec->rescue)
			continue;
		if (pwrite(gp->mem, &gp->rec->old[i], sizeof(now), (off_t)sp) != sizeof(now) ||
		    g_inject(gp, t, gadget, TR_SYS_rt_sigaction, set, &ok) != 0 || !ok)
			gp->failed = true;
	}
}

/* Is [addr, addr + len) still an anonymous r-x mapping of its own? */
static bool still_ours(const struct g_proc *gp, uint64_t addr, uint64_t len)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", gp->pid);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, inode;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s %*s %*s %lu", &lo, &hi, perms, &inode) == 4 &&
		    lo == addr && hi == addr + len && strcmp(perms, "r-xp") == 0 && inode == 0)
			found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/* Unmap our pages; the one holding the gadget last. */
static void unmap_pages(struct g_proc *gp, struct g_thread *t, uint64_t gadget)
{
	int pass;

	for (pass = 0; pass < 2; pass++) {
		size_t off = align8(sizeof(struct gj_header));
		const struct gj_rec *r;

		while ((r = next_rec(gp, &off))) {
			const struct gj_scratch *s = (const struct gj_scratch *)r;
			bool last = gadget >= s->addr && gadget < s->addr + s->len;
			long args[4] = {(long)s->addr, (long)s->len, 0, 0};
			bool ok;

			if (r->kind != GJ_SCRATCH || r->proc != gp->off ||
			    r->state == TR_GUARD_GONE || last != (pass == 1) ||
			    !still_ours(gp, s->addr, s->len))
				continue;
			if (g_inject(gp, t, gadget, TR_SYS_munmap, args, &ok) == 0 && ok)
				gp->pages++;
			else
				gp->failed = true;
		}
	}
}

static void let_go(struct g_proc *gp)
{
	int i;

	for (i = 0; i < gp->n; i++) {
		struct g_thread *t = &gp->th[i];

		if (!held(t))
			continue;
		if (t->dirty)
			ptrace(PTRACE_SETREGS, t->tid, 0, &t->regs);
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->sig);
	}
}

static void report(const struct g_proc *gp, pid_t cctrace)
{
	char forked[48] = "";

	if (gp->inherited_from)
		snprintf(forked, sizeof(forked), " (forked by pid %d)", (int)gp->inherited_from);
	fprintf(stderr,
		"cctrace: guardian: cctrace (pid %d) ended without detaching; pid %d%s %s: "
		"%d code bytes put back, %d threads let go (%d stopped at a trap), "
		"debug registers cleared in %d, %d CPU masks restored, %d pages unmapped\n",
		(int)cctrace, (int)gp->pid, forked, gp->failed ? "partly restored" : "restored",
		gp->bytes, gp->n, gp->parked + gp->trapped, gp->dr_threads, gp->pinned, gp->pages);
}

/* Is anything of ours left in the process? */
static bool touched(const struct g_proc *gp)
{
	const struct gj_header *h = (const struct gj_header *)gp->j;
	size_t off = align8(sizeof(struct gj_header));
	const struct gj_rec *r;

	if (gp->rec->watch || gp->rec->rescue_state == TR_RESCUE_INSTALLING ||
	    gp->rec->rescue_state == TR_RESCUE_INSTALLED || (h->inject && h->inject_pid == gp->pid))
		return true;
	while ((r = next_rec(gp, &off)))
		if (r->proc == gp->off && r->kind != GJ_PROC &&
		    (r->kind == GJ_THREAD ? ((const struct gj_thread *)r)->pinned
					  : r->state != TR_GUARD_GONE))
			return true;
	return false;
}

/* Is pid a process of the journal's own (restored by its own record)? */
static bool journaled(const struct g_proc *gp, pid_t pid)
{
	size_t off = align8(sizeof(struct gj_header));
	const struct gj_rec *r;

	while ((r = next_rec(gp, &off)))
		if (r->kind == GJ_PROC && r->state == TR_GUARD_LIVE &&
		    ((const struct gj_proc *)r)->pid == pid)
			return true;
	return false;
}

/* The children of gp's process that the journal does not know, into
 * kids (at most max): from each thread's /proc children list. */
static int unknown_children(const struct g_proc *gp, pid_t *kids, int max)
{
	char path[96];
	int i, n = 0;

	for (i = 0; i < gp->n; i++) {
		FILE *f;
		long kid;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)gp->pid,
			 (int)gp->th[i].tid);
		f = fopen(path, "r");
		while (f && n < max && fscanf(f, "%ld", &kid) == 1)
			if (!journaled(gp, (pid_t)kid))
				kids[n++] = (pid_t)kid;
		if (f)
			fclose(f);
	}
	return n;
}

static int restore_process(struct g_proc *gp, pid_t cctrace);

/*
 * A child the program forked after cctrace died, or just before, which
 * cctrace never journaled: its memory is its parent's as it was at the
 * fork, with our bytes, pages and handler, and a thread of it that meets
 * a breakpoint parks in the handler for ever (its parent, in waitpid,
 * with it).  It is restored by its parent's records, found while the
 * parent is held (so that it forks no more), and its children after it.
 * A child forked once the parent was restored has nothing of ours.
 */
static int restore_children(struct g_proc *gp, pid_t cctrace)
{
	pid_t kids[64];
	int i, n = unknown_children(gp, kids, 64), rc = 0;

	for (i = 0; i < n; i++) {
		struct g_proc kid = {.j = gp->j,
				     .used = gp->used,
				     .rec = gp->rec,
				     .off = gp->off,
				     .pid = kids[i],
				     .inherited_from = gp->pid,
				     .mem = -1};

		if (restore_process(&kid, cctrace) < 0)
			rc = -1;
	}
	return rc;
}

static int restore_process(struct g_proc *gp, pid_t cctrace)
{
	char path[64];
	struct g_thread *t;
	uint64_t gadget;
	int i;

	if (!touched(gp) || (!gp->inherited_from && start_time(gp->pid) != gp->rec->start_time))
		return 0; /* untouched, gone, or the pid is another process's now */
	/* A process that is ending runs none of our code again, and seizing
	 * its last threads would only keep its parent from reaping it. */
	if (tr_pid_dying(gp->pid))
		return 0;
	seize_all(gp);
	if (gp->n == 0) {
		if (gp->inherited_from || start_time(gp->pid) != gp->rec->start_time)
			return 0; /* it ended meanwhile */
		fprintf(stderr,
			"cctrace: guardian: cctrace (pid %d) ended without detaching, and pid %d "
			"cannot be traced to restore it\n",
			(int)cctrace, (int)gp->pid);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", gp->pid);
	gp->mem = open(path, O_RDWR | O_CLOEXEC);
	if (gp->mem < 0) {
		gp->failed = true;
		goto out;
	}
	put_bytes_back(gp);
	for (i = 0; i < gp->n; i++)
		if (held(&gp->th[i])) {
			absorb_pending(gp, &gp->th[i]);
			settle_thread(gp, &gp->th[i]);
			clear_debug_registers(gp, &gp->th[i]);
			if (gp->th[i].dirty &&
			    ptrace(PTRACE_SETREGS, gp->th[i].tid, 0, &gp->th[i].regs) == 0)
				gp->th[i].dirty = false;
		}
	restore_affinity(gp);
	t = injector(gp);
	gadget = t ? find_gadget(gp) : 0;
	if (t && gp->rec->rescue && still_ours(gp, gp->rec->rescue & ~(PAGE - 1), PAGE))
		gadget = gp->rec->rescue + RESCUE_SIGRETURN;
	if (t && gadget) {
		restore_actions(gp, t, gadget);
		unmap_pages(gp, t, gadget);
	}
	if (restore_children(gp, cctrace) < 0)
		gp->failed = true;
out:
	let_go(gp);
	if (gp->mem >= 0)
		close(gp->mem);
	report(gp, cctrace);
	free(gp->th);
	return gp->failed ? -1 : 0;
}

static int restore_all(int fd, pid_t cctrace)
{
	struct stat st;
	const char *j;
	const struct gj_header *h;
	const struct gj_rec *r;
	size_t off, used;
	int rc = 0;

	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(*h))
		return 1;
	j = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (j == MAP_FAILED)
		return 1;
	h = (const struct gj_header *)j;
	if (h->magic != GJ_MAGIC || h->done)
		return 0;
	used = h->used < (size_t)st.st_size ? h->used : (size_t)st.st_size;
	off = align8(sizeof(*h));
	for (;;) {
		struct g_proc gp = {.j = j, .used = used, .mem = -1};

		r = next_rec(&gp, &off);
		if (!r)
			break;
		if (r->kind != GJ_PROC || r->state != TR_GUARD_LIVE)
			continue;
		gp.rec = (const struct gj_proc *)r;
		gp.pid = gp.rec->pid;
		gp.off = (size_t)((const char *)r - j);
		if (restore_process(&gp, cctrace) < 0)
			rc = 1;
	}
	return rc;
}

static bool journal_done(int fd)
{
	struct gj_header h;

	return pread(fd, &h, sizeof(h), 0) == sizeof(h) && h.done;
}

/*
 * A name of its own, in /proc/PID/comm and /proc/PID/cmdline, with no
 * "cctrace" in it: `pkill -9 cctrace`, `pkill -9 -f cctrace` and `killall
 * cctrace` must not take the guardian with cctrace (they did, and the
 * program was left with our bytes in it).  The command line is the
 * memory of cctrace's own arguments, rewritten in this copy of it.
 */
static void take_own_name(pid_t cctrace)
{
	char title[64], args[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t len = fd >= 0 ? read(fd, args, sizeof(args)) : -1;

	prctl(PR_SET_NAME, GUARDIAN_NAME);
	if (fd >= 0)
		close(fd);
	snprintf(title, sizeof(title), GUARDIAN_NAME " of tracer %d", (int)cctrace);
	if (len <= 0 || (size_t)len >= sizeof(args) || !program_invocation_name ||
	    memcmp(program_invocation_name, args, strlen(args) + 1) != 0)
		return; /* not laid out as the kernel laid it out: left alone */
	memset(program_invocation_name, 0, (size_t)len);
	memcpy(program_invocation_name, title,
	       strlen(title) < (size_t)len - 1 ? strlen(title) : (size_t)len - 1);
}

/* Until cctrace says it is done (then quietly) or is gone (then restore). */
static void guardian_main(int fd, int pidfd, int rd, pid_t cctrace)
{
	struct pollfd pfd[2] = {{pidfd, POLLIN, 0}, {rd, POLLIN, 0}};
	char c;

	setsid();
	take_own_name(cctrace);
	reset_signals();
	unpin_self();
	close_others(fd, pidfd, rd);
	for (;;) {
		if (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, -1) < 0)
			continue;
		if (pfd[0].revents)
			break;
		if (pfd[1].revents && read(rd, &c, 1) <= 0) {
			if (journal_done(fd))
				_exit(0);
			pfd[1].fd = -1; /* it is ending: wait until it is gone */
		}
	}
	_exit(journal_done(fd) ? 0 : restore_all(fd, cctrace));
}

static void guard_close(struct tr_guard *g)
{
	if (g->map)
		munmap(g->map, g->size);
	if (g->fd >= 0)
		close(g->fd);
	if (g->pipe >= 0)
		close(g->pipe);
	free(g);
}

static int spawn(struct tr_guard *g)
{
	int pipefd[2], pidfd;
	pid_t cctrace = getpid();

	pidfd = (int)syscall(SYS_pidfd_open, cctrace, 0);
	if (pidfd < 0)
		return -1;
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		close(pidfd);
		return -1;
	}
	g->pid = fork();
	if (g->pid == 0) {
		close(pipefd[1]);
		guardian_main(g->fd, pidfd, pipefd[0], cctrace);
	}
	close(pipefd[0]);
	close(pidfd);
	if (g->pid < 0) {
		close(pipefd[1]);
		return -1;
	}
	g->pipe = pipefd[1];
	return 0;
}

int tr_guard_start(struct tracer *t, char *err, size_t errlen)
{
	struct tr_guard *g;
	struct gj_header *h;

	if (t->guard)
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		goto fail;
	g->pipe = -1;
	g->size = GJ_INITIAL;
	g->fd = memfd_create("cctrace-journal", MFD_CLOEXEC);
	if (g->fd < 0 || ftruncate(g->fd, (off_t)g->size) < 0)
		goto fail;
	g->map = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (g->map == MAP_FAILED) {
		g->map = NULL;
		goto fail;
	}
	h = g->map;
	h->magic = GJ_MAGIC;
	h->used = align8(sizeof(*h));
	if (spawn(g) < 0)
		goto fail;
	t->guard = g;
	return 0;
fail:
	snprintf(err, errlen,
		 "cannot start the guardian that keeps the program alive if cctrace dies: %s",
		 strerror(errno));
	if (g)
		guard_close(g);
	return -1;
}

/* The guardian exits as soon as it sees the pipe closed: wait for it, but
 * not forever (someone may have stopped it; it then finds itself
 * orphaned, sees "done" and exits).  Unless a wait of the tracer's has
 * reaped it already (it was killed).  A pidfd is readable once the
 * process has exited, which can be a moment before it is a zombie that
 * waitpid may reap: so the waitpid after it blocks (briefly) instead of
 * WNOHANG, which then found nothing now and then and left the guardian
 * to be orphaned. */
static void reap(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd pfd = {fd, POLLIN, 0};
	int64_t deadline = tracer_now_ms() + 5000;
	int ready;

	if (fd < 0)
		return;
	/* poll is never restarted after a handler, and signals do come now:
	 * the deadline's SIGALRM, a second SIGPIPE from a closed trace. */
	do
		ready = poll(&pfd, 1, (int)(deadline - tracer_now_ms()));
	while (ready < 0 && errno == EINTR && tracer_now_ms() < deadline);
	if (ready > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	close(fd);
}

bool tr_guard_is(const struct tracer *t, pid_t pid)
{
	return t->guard && t->guard->pid == pid;
}

/*
 * The guardian died while cctrace still drives the program (someone
 * killed it): a new one takes the same journal, so that a SIGKILL of
 * cctrace later is still undone.  Said on stderr, once per death.
 */
void tr_guard_died(struct tracer *t, int status)
{
	struct tr_guard *g = t->guard;
	const char *how = WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited";
	pid_t old = g->pid;

	if (g->pipe < 0)
		return; /* it was told to go: it went */
	close(g->pipe);
	g->pipe = -1;
	if (spawn(g) < 0) {
		fprintf(stderr,
			"cctrace: warning: the guardian (pid %d) died (%s), and no new one could "
			"be started (%s): if cctrace is killed now, the program keeps our "
			"breakpoints\n",
			(int)old, how, strerror(errno));
		g->pid = 0;
		return;
	}
	fprintf(stderr,
		"cctrace: warning: the guardian (pid %d) died (%s); pid %d guards the "
		"program now\n",
		(int)old, how, (int)g->pid);
}

void tr_guard_done(struct tracer *t)
{
	struct tr_guard *g = t->guard;
	struct gj_header *h;

	if (!g || g->pipe < 0)
		return;
	h = g->map;
	store(&h->done, 1);
	close(g->pipe);
	g->pipe = -1;
}

/* Reaped here, not when it is told: by then it has had time to exit. */
void tr_guard_free(struct tracer *t)
{
	struct tr_guard *g = t->guard;

	if (!g)
		return;
	if (g->pipe < 0)
		reap(g->pid);
	guard_close(g);
	t->guard = NULL;
}
