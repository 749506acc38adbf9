/*
 * fork.c: a held program made to fork, and its child taken over by another
 * tracer: the template of a search's runs (engine/snapshot.c).
 *
 * Why.  A search restarts the same program hundreds of times; each fresh
 * launch pays fork, exec and the dynamic loader's work.  A template
 * launched once and held at its entry point, forked for each run, pays
 * only the fork, as AFL's fork server does.  What a fork costs beyond the
 * kernel's work is ptrace stops, so they are counted below.
 *
 * The first fork: glibc's _Fork.  The held thread is made to call it (the
 * caller finds it): its registers are saved, rsp moved below the red zone
 * and aligned, a return address of 0 pushed, rip pointed at the function,
 * and the thread resumed watching its system calls.  _Fork and not a raw
 * fork of ours: only glibc knows what its fork must tell the kernel (the
 * word of the thread's descriptor that CLONE_CHILD_SETTID fills, the
 * robust mutex list the child registers again).  The clone it makes is
 * changed on its way in: CLONE_PARENT makes the child cctrace's own, as a
 * freshly launched program is (getppid() is cctrace in both), so the
 * template never has a child to bury, nor a SIGCHLD to be stopped for.
 * Both processes return to address 0 and fault (SIGSEGV at pc 0); each is
 * caught there and its registers set back to the saved ones.
 *
 * The later forks: a fork server.  What _Fork was seen to pass (the clone's
 * arguments, the child's set_robust_list) is written as a stub into a
 * scratch page of the template: clone with those arguments plus
 * CLONE_PARENT and CLONE_PTRACE, then in the parent a hlt, in the child the
 * set_robust_list call and a hlt (a SIGSEGV stop at a known pc).  The
 * template no longer reports its forks (PTRACE_O_TRACEFORK is off for it):
 * CLONE_PTRACE alone makes the child a tracee of cctrace, seized with the
 * template's options, which its first stop sets back to a launch's.  A
 * fork then costs three stops (the parent's hlt, the child's first stop,
 * its hlt), where _Fork with a fork event and a wait4 to bury the last run
 * cost seven.  Signals the template gets meanwhile (a terminal's SIGINT)
 * are swallowed: it runs no code of its own.
 *
 * A statically linked program needs no _Fork, which it holds only if it
 * forks itself.  At its entry point no code of it has run: libc has made
 * no thread descriptor for CLONE_CHILD_SETTID to fill and registered no
 * robust list, as a dynamic program's loader has by then, and the child
 * will do both in its own start-up.  So a clone with SIGCHLD alone is the
 * whole of its fork, and the stub is made with that recipe before the
 * first fork.
 */
#include "tracer/internal.h"

#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#define RED_ZONE 128

#ifndef CLONE_PARENT
#define CLONE_PARENT 0x00008000
#endif
#ifndef CLONE_PTRACE
#define CLONE_PTRACE 0x00002000
#endif
#define CLONE_NO_FORK (0x00000100 | 0x00004000 | 0x00010000) /* VM, VFORK, THREAD */

/* What glibc's _Fork was seen to do, to do it again without it. */
struct fork_recipe {
	uint64_t clone_args[5];	 /* flags, stack, parent_tid, child_tid, tls */
	uint64_t robust_args[2]; /* the child's set_robust_list(head, len) */
	bool clone_seen, robust_seen;
};

/* Where the fork server's code is.  The registers each fork restores are
 * the held template's own (th->regs, valid while it is held). */
struct tr_fork_stub {
	uint64_t code, parent_hlt, child_hlt;
};

/* movabs reg, imm64: REX.W (+B for r8-r15), B8+reg. */
static uint8_t *put_movabs(uint8_t *at, int reg, uint64_t value)
{
	*at++ = reg >= 8 ? 0x49 : 0x48;
	*at++ = (uint8_t)(0xb8 + (reg & 7));
	memcpy(at, &value, sizeof(value));
	return at + sizeof(value);
}

static uint8_t *put_syscall(uint8_t *at, uint32_t nr)
{
	*at++ = 0xb8; /* mov eax, imm32 */
	memcpy(at, &nr, sizeof(nr));
	at += sizeof(nr);
	*at++ = 0x0f;
	*at++ = 0x05;
	return at;
}

enum { RDX = 2, RSI = 6, RDI = 7, R8 = 8, R10 = 10, STUB_MAX = 128 };

/* The fork server's code, assembled at `code` in the template. */
static size_t assemble_stub(const struct fork_recipe *r, uint64_t code, uint8_t *buf,
			    uint64_t *parent_hlt, uint64_t *child_hlt)
{
	uint8_t *at = buf;

	at = put_movabs(at, RDI, r->clone_args[0] | CLONE_PARENT | CLONE_PTRACE);
	at = put_movabs(at, RSI, r->clone_args[1]);
	at = put_movabs(at, RDX, r->clone_args[2]);
	at = put_movabs(at, R10, r->clone_args[3]);
	at = put_movabs(at, R8, r->clone_args[4]);
	at = put_syscall(at, TR_SYS_clone);
	*at++ = 0x48; /* test rax, rax */
	*at++ = 0x85;
	*at++ = 0xc0;
	*at++ = 0x74; /* jz over the parent's hlt */
	*at++ = 0x01;
	*parent_hlt = code + (uint64_t)(at - buf);
	*at++ = 0xf4;
	if (r->robust_seen) {
		at = put_movabs(at, RDI, r->robust_args[0]);
		at = put_movabs(at, RSI, r->robust_args[1]);
		at = put_syscall(at, TR_SYS_set_robust_list);
	}
	*child_hlt = code + (uint64_t)(at - buf);
	*at++ = 0xf4;
	assert(at - buf <= STUB_MAX);
	return (size_t)(at - buf);
}

/* A system call stop's call, if it is an entry into one. */
static long syscall_entry(pid_t tid, uint64_t args[6])
{
	struct __ptrace_syscall_info info;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(info), &info) <= 0 ||
	    info.op != PTRACE_SYSCALL_INFO_ENTRY)
		return -1;
	memcpy(args, info.entry.args, sizeof(info.entry.args));
	return (long)info.entry.nr;
}

/* _Fork's clone, seen on its way in: remembered, and made CLONE_PARENT. */
static int take_clone(pid_t tid, const uint64_t args[6], struct fork_recipe *r)
{
	struct user_regs_struct regs;

	if (r->clone_seen || (args[0] & CLONE_NO_FORK) || (args[0] & 0xff) != SIGCHLD)
		return 0;
	memcpy(r->clone_args, args, sizeof(r->clone_args));
	r->clone_seen = true;
	if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
		return -1;
	regs.rdi |= CLONE_PARENT;
	return ptrace(PTRACE_SETREGS, tid, 0, &regs) < 0 ? -1 : 0;
}

/* Does this stop of tid end at the hlt (or return address 0) it was sent
 * to?  A SIGSEGV there is ours, and swallowed. */
static bool at_hlt(pid_t tid, int status, uint64_t pc, struct user_regs_struct *regs)
{
	return (status >> 16) == 0 && WSTOPSIG(status) == SIGSEGV &&
	       ptrace(PTRACE_GETREGS, tid, 0, regs) == 0 && regs->rip == pc;
}

/* Run task tid to pc (a hlt, or the return address 0), swallowing every
 * other stop: learning what _Fork passes to the kernel on the way when r
 * is given (its system calls are watched then).  0 with its registers
 * there in *regs, or -1 if it ended or did not come back. */
static int run_to(pid_t tid, uint64_t pc, int64_t deadline, struct fork_recipe *r,
		  struct user_regs_struct *regs)
{
	enum __ptrace_request resume = r ? PTRACE_SYSCALL : PTRACE_CONT;
	uint64_t args[6];
	int status;
	long nr;

	for (;;) {
		if (tr_wait_task(tid, tid, deadline, false, &status) != TR_TASK_STATUS ||
		    !WIFSTOPPED(status) || (status >> 16) == PTRACE_EVENT_EXIT)
			return -1;
		if (at_hlt(tid, status, pc, regs))
			return 0;
		if (r && WSTOPSIG(status) == (SIGTRAP | 0x80) &&
		    (nr = syscall_entry(tid, args)) >= 0) {
			if (nr == TR_SYS_clone && take_clone(tid, args, r) < 0)
				return -1;
			if (nr == TR_SYS_set_robust_list && !r->robust_seen) {
				memcpy(r->robust_args, args, sizeof(r->robust_args));
				r->robust_seen = true;
			}
		}
		if (ptrace(resume, tid, 0, 0) < 0)
			return -1;
	}
}

static void kill_child(pid_t kid)
{
	kill(kid, SIGKILL);
	waitpid(kid, NULL, __WALL);
}

/* Write the fork server at code (a scratch page of the template, mapped
 * before the first fork: a child has the template's scratch pages, so
 * they must be its pages too) and stop the template reporting forks. */
static void make_stub(struct tr_thread *th, uint64_t code, const struct fork_recipe *r)
{
	struct tr_fork_stub *stub = calloc(1, sizeof(*stub));
	uint8_t bytes[STUB_MAX];
	size_t len;

	if (!stub)
		return;
	stub->code = code;
	len = assemble_stub(r, code, bytes, &stub->parent_hlt, &stub->child_hlt);
	if (tracer_write(th->proc, code, bytes, len) < 0 ||
	    ptrace(PTRACE_SETOPTIONS, th->tid, 0,
		   (TR_TRACE_OPTIONS | PTRACE_O_EXITKILL) &
		       ~(PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK)) < 0) {
		/* Not an error: every fork goes through _Fork, dearer. */
		free(stub);
		return;
	}
	th->proc->fork_stub = stub;
}

/* The first fork, through _Fork: see fork.c's comment. */
static int fork_via_glibc(struct tr_thread *th, uint64_t fork_fn, pid_t *child, char *err,
			  size_t errlen)
{
	int64_t deadline = tracer_now_ms() + TR_STOP_TIMEOUT_MS;
	const uint64_t ret_addr = 0;
	struct fork_recipe recipe = {0};
	struct user_regs_struct saved, regs;
	uint64_t stub_code;
	char why[256];
	pid_t kid;

	/* Before saved is taken: mapping it may borrow th (and give its
	 * registers back). */
	stub_code = tr_scratch_alloc(th->proc, th->regs.rip, STUB_MAX, why, sizeof(why));
	saved = th->regs;
	regs = saved;
	regs.rsp = ((saved.rsp - RED_ZONE) & ~15ull) - 8; /* as after a call */
	regs.rip = fork_fn;
	regs.orig_rax = (unsigned long)-1;
	if (tracer_write(th->proc, regs.rsp, &ret_addr, sizeof(ret_addr)) < 0 ||
	    ptrace(PTRACE_SETREGS, th->tid, 0, &regs) < 0 ||
	    ptrace(PTRACE_SYSCALL, th->tid, 0, 0) < 0 ||
	    run_to(th->tid, 0, deadline, &recipe, &regs) < 0)
		goto fail;
	ptrace(PTRACE_SETREGS, th->tid, 0, &saved);
	kid = (pid_t)regs.rax;
	if (!recipe.clone_seen || kid <= 0) {
		if (kid > 0)
			kill_child(kid);
		snprintf(err, errlen, "the template's _Fork made no fork cctrace knows (%s)",
			 kid > 0 ? "not through clone" : strerror(kid ? (int)-kid : EINVAL));
		return -1;
	}
	/* The child's first stop is the fork event's (PTRACE_O_TRACEFORK). */
	if (run_to(kid, 0, deadline, &recipe, &regs) < 0 ||
	    ptrace(PTRACE_SETREGS, kid, 0, &saved) < 0) {
		kill_child(kid);
		snprintf(err, errlen, "the template's child %d did not come back from the fork",
			 (int)kid);
		return -1;
	}
	if (recipe.robust_seen && stub_code)
		make_stub(th, stub_code, &recipe);
	*child = kid;
	return 0;
fail:
	ptrace(PTRACE_SETREGS, th->tid, 0, &saved);
	snprintf(err, errlen, "cannot make the template fork: %s", strerror(errno));
	return -1;
}

/* A later fork, through the stub: three stops. */
static int fork_via_stub(struct tr_thread *th, const struct tr_fork_stub *stub, pid_t *child,
			 char *err, size_t errlen)
{
	const struct user_regs_struct *entry = &th->regs;
	struct user_regs_struct regs = *entry;
	int64_t deadline = tracer_now_ms() + TR_STOP_TIMEOUT_MS;
	long rc;
	pid_t kid;

	regs.rip = stub->code;
	regs.orig_rax = (unsigned long)-1;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &regs) < 0 ||
	    ptrace(PTRACE_CONT, th->tid, 0, 0) < 0 ||
	    run_to(th->tid, stub->parent_hlt, deadline, NULL, &regs) < 0) {
		ptrace(PTRACE_SETREGS, th->tid, 0, entry);
		snprintf(err, errlen, "cannot make the template fork: %s", strerror(errno));
		return -1;
	}
	ptrace(PTRACE_SETREGS, th->tid, 0, entry);
	rc = (long)regs.rax;
	if (rc <= 0) {
		snprintf(err, errlen, "the template cannot fork: %s",
			 strerror(rc ? (int)-rc : EINVAL));
		return -1;
	}
	kid = (pid_t)rc;
	/* Its first stop (CLONE_PTRACE) is where it gets a launch's options. */
	if (tr_wait_task(kid, kid, deadline, false, &(int){0}) != TR_TASK_STATUS ||
	    ptrace(PTRACE_SETOPTIONS, kid, 0, TR_TRACE_OPTIONS | PTRACE_O_EXITKILL) < 0 ||
	    ptrace(PTRACE_CONT, kid, 0, 0) < 0 ||
	    run_to(kid, stub->child_hlt, deadline, NULL, &regs) < 0 ||
	    ptrace(PTRACE_SETREGS, kid, 0, entry) < 0) {
		kill_child(kid);
		snprintf(err, errlen, "the template's child %d did not come back from the fork",
			 (int)kid);
		return -1;
	}
	*child = kid;
	return 0;
}

/* A statically linked program (no interpreter) held at its entry point:
 * see fork.c's comment. */
static bool static_at_entry(const struct tr_thread *th)
{
	pid_t pid = th->proc->pid;

	return tr_auxv_value(pid, AT_BASE) == 0 && tr_auxv_value(pid, AT_ENTRY) == th->regs.rip;
}

static int make_static_stub(struct tr_thread *th, char *err, size_t errlen)
{
	const struct fork_recipe bare = {.clone_args = {SIGCHLD}, .clone_seen = true};
	char why[256];
	uint64_t code = tr_scratch_alloc(th->proc, th->regs.rip, STUB_MAX, why, sizeof(why));

	if (code)
		make_stub(th, code, &bare);
	if (!th->proc->fork_stub) {
		snprintf(err, errlen, "cannot write the template's fork server%s%s",
			 code ? "" : ": ", code ? "" : why);
		return -1;
	}
	return 0;
}

int tracer_fork_held(struct tr_thread *th, uint64_t fork_fn, pid_t *child, char *err, size_t errlen)
{
	*child = 0;
	if (th->state != TR_HELD || tr_flush_regs(th) < 0) {
		snprintf(err, errlen, "the template is not held");
		return -1;
	}
	th->pending_signal = 0; /* a signal met meanwhile: not the program's */
	if (!th->proc->fork_stub && static_at_entry(th) && make_static_stub(th, err, errlen) < 0)
		return -1;
	if (th->proc->fork_stub)
		return fork_via_stub(th, th->proc->fork_stub, child, err, errlen);
	if (!fork_fn) {
		snprintf(err, errlen,
			 "the program has no _Fork (glibc 2.34 or later, dynamically linked)");
		return -1;
	}
	return fork_via_glibc(th, fork_fn, child, err, errlen);
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
	p->pristine = true;
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
