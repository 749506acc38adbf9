/*
 * tracer: the ptrace engine of cctrace.
 *
 * It owns every traced task.  One struct tr_thread per task (strace's tcb),
 * one struct tr_process per thread group, both opaque: callers see a
 * thread's tid, name, process and state through accessors.  A thread is
 * either running, held (in a ptrace stop that the caller has not resumed
 * yet) or exited; only a held thread's registers can be read or changed,
 * and only a held thread is resumed.  The
 * tracer turns raw wait statuses into a small set of events (a thread
 * started, hit a breakpoint, tripped a watchpoint, got a signal, is about to
 * exit...) and hands each to the caller with the thread held.  The caller
 * decides when to resume it.  Bookkeeping stops (clone notifications,
 * interrupts it asked for itself, group-stops) never reach the caller.
 *
 * Processes the program creates are followed: a child joins the tables
 * before its first instruction, with the parent's breakpoints (made to
 * agree with its copy of the code), and an exec clears a process's
 * breakpoints and scratch pages (the caller plants them again).
 *
 * Breakpoints are one byte: int3 in a program cctrace launched, which dies
 * with cctrace (PTRACE_O_EXITKILL); in one it attached to, a byte that
 * faults (TRACER_BREAK_BYTE; breakpoint.c says why).  A thread resumed
 * from a breakpoint executes
 * the displaced instruction out of line from a scratch slot (or has it
 * emulated), so the int3 stays in place and no other thread that passes the
 * address meanwhile is missed, and the resume costs no extra trap.
 * Watchpoints use DR0-DR3 and are kept in sync in every thread of a process,
 * including threads created later.
 *
 * The stepper (tracer_step) finds a held thread's instruction-level
 * events (memory accesses, calls, system calls) by decoding ahead and
 * running it at full speed to the next one; the caller judges them.
 *
 * Numbers of the x86-64 ABI it reads in traced programs are in abi.h.
 *
 * It knows nothing of schedules, symbols or source lines.  Every exit path
 * of the program goes through tracer_detach_all() or tracer_kill_all(),
 * which put back the original code bytes and debug registers.
 */
#ifndef CCTRACE_TRACER_H
#define CCTRACE_TRACER_H

#include "disasm/disasm.h"
#include "tracer/abi.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct tracer;
struct tr_process;
struct tr_thread; /* one traced task; private (tracer/internal.h) */

/* The byte a breakpoint puts over an instruction of a process cctrace
 * attached to: 0xce, invalid in 64-bit mode, so the thread faults (SIGILL)
 * with its pc on the breakpoint.  In a process it launched: TRACER_INT3
 * (SIGTRAP, the pc one byte further), a third of the fault's cost. */
#define TRACER_BREAK_BYTE 0xce
#define TRACER_INT3	  0xcc

enum tr_state {
	TR_RUNNING, /* resumed; may be blocked in a system call */
	TR_HELD,    /* in a ptrace stop, waiting for tracer_resume() */
	TR_EXITED,  /* gone */
};

enum tr_event_kind {
	TR_EV_NONE,
	TR_EV_START,	    /* first stop of a new thread, or a launched program at its entry */
	TR_EV_BREAK,	    /* hit the breakpoint at addr; the pc is addr */
	TR_EV_WATCH,	    /* watchpoint `watch` fired just after an access to addr */
	TR_EV_STEP,	    /* a single-step finished */
	TR_EV_SIGNAL,	    /* signal-delivery stop; delivered on resume */
	TR_EV_EXIT,	    /* thread about to exit (status is its exit status) */
	TR_EV_PROCESS_EXIT, /* the whole process ended (thread is its last thread) */
	TR_EV_FORK,	    /* thread created a new process, child (fork, vfork, or clone
			     * without CLONE_THREAD); the child's thread gets its own START */
	TR_EV_EXEC,	    /* the process executed a new program */
	TR_EV_INTERRUPT,    /* stopped on the caller's tracer_interrupt() */
	TR_EV_CHILD_EXIT,   /* the untraced child given to tracer_watch_child() ended
			     * (thread is NULL; status or signo as for PROCESS_EXIT) */
	TR_EV_SYSCALL,	    /* about to make system call `sysno` (resumed with
			     * tracer_resume_syscalls); it runs when resumed */
};

enum tr_watch_kind { TR_WATCH_WRITE = 1, TR_WATCH_ACCESS = 3 };

struct tr_event {
	enum tr_event_kind kind;
	struct tr_thread *thread;
	uint64_t pc;
	uint64_t addr;	  /* BREAK: breakpoint address; WATCH: watched address */
	int watch;	  /* WATCH: slot 0..3 */
	unsigned access;  /* WATCH: DIS_READ | DIS_WRITE of the instruction, 0 if unknown */
	uint64_t insn_pc; /* WATCH: the instruction that accessed (pc is after it), 0 if unknown */
	int signo;	  /* SIGNAL; PROCESS_EXIT: killing signal or 0 */
	bool fatal;	  /* SIGNAL: the default action kills and the program has no handler */
	int status;	  /* EXIT / PROCESS_EXIT: exit status */
	struct tr_process *child; /* FORK */
	long sysno;		  /* SYSCALL: the system call number */
};

enum tr_wait_result {
	TR_WAIT_EVENT,
	TR_WAIT_TIMEOUT,
	TR_WAIT_INTERRUPTED, /* a stop signal (SIGINT, SIGTERM, SIGQUIT, SIGPIPE...; see
			      * signals.c) reached cctrace; *signo says which */
	TR_WAIT_NO_TASKS,    /* nothing left to trace */
	TR_WAIT_ERROR,
};

struct tracer_options {
	bool pin_cpu;	  /* run cctrace and the threads it drives on one CPU */
	bool no_children; /* attach: the pid alone, not its descendants, and let the
			   * processes it forks go at birth (their copies of our
			   * breakpoints removed) instead of following them */
	/* A launched program gets a process group of its own, so that the
	 * terminal's Ctrl-C reaches cctrace alone (tracer_terminal_take). */
	bool own_pgrp;
	/* launch: the program's stdout, its stderr, on /dev/null (a search's
	 * own replays, which must not print the program's output again) */
	bool null_stdout, null_stderr;
	/* launch: the program's stdout on cctrace's stderr (stdout is for a
	 * machine-readable summary) */
	bool stdout_to_stderr;
};

struct tracer *tracer_new(const struct tracer_options *opt);
/* Frees the tables; call tracer_detach_all or tracer_kill_all first. */
void tracer_free(struct tracer *t);

/*
 * Start argv under trace (PTRACE_O_EXITKILL), with address-space
 * randomisation off (as gdb does), and run it to its ELF entry point,
 * where the dynamic loader has mapped every needed library.  The
 * main thread p1.t1 is then held, with a TR_EV_START event queued.
 * Returns 0, or -1 with a message in err ("cannot run 'prog': ...").
 */
int tracer_launch(struct tracer *t, char *const argv[], char *err, size_t errlen);

/*
 * A template to fork runs from (fork.c): th, a held thread of a launched
 * single-threaded program, forks (the first time by calling the function
 * at fork_fn, glibc's _Fork; then by a stub that repeats what _Fork did)
 * and comes back held with its registers as they were; so does the
 * child, whose pid goes to *child: a child and tracee of this process
 * (CLONE_PARENT: the template has no children) in no tracer's tables,
 * held with the template's registers, for tracer_adopt().  A statically
 * linked program held at its entry point has run no code, and forks by
 * the stub from the first time: fork_fn may be 0 for it.  0, or -1 with
 * err.
 */
int tracer_fork_held(struct tr_thread *th, uint64_t fork_fn, pid_t *child, char *err,
		     size_t errlen);
/* Take such a child over as t's launched program: the state
 * tracer_launch leaves, p1.t1 held with a TR_EV_START queued.  The
 * template's breakpoints (held by tmpl) are in the child's code: they are
 * the child's too, planted but unclaimed: tracer_break_insert takes one
 * over without a write, and those not taken are removed before the child
 * first runs.  -1 with err (the child is killed). */
int tracer_adopt(struct tracer *t, pid_t pid, const struct tr_thread *tmpl, char *err,
		 size_t errlen);

/*
 * The terminal of a program launched with own_pgrp (terminal.c).  cctrace
 * keeps the foreground of its controlling terminal, so Ctrl-C, Ctrl-\ and
 * Ctrl-Z act on cctrace; the program gets it when it tries to read the
 * terminal or change its modes from the background (SIGTTIN, SIGTTOU),
 * and while it has it those three keys, which the terminal then sends to
 * the program, are passed to cctrace instead of delivered.  Take it back
 * before cctrace reads the terminal again (the shell's prompt) and at the
 * end; the program's modes are kept for its next turn.  A no-op when the
 * program does not have it.
 */
void tracer_terminal_take(struct tracer *t);

/* While the shell's prompt reads the terminal (reading), a free thread's
 * read of it (SIGTTIN, SIGTTOU) gets nothing: the thread is held, unseen,
 * and resumed when the prompt is done, to ask again then. */
void tracer_terminal_prompt(struct tracer *t, bool reading);

/* Catch the stop signals (Ctrl-C, SIGTERM...: tracer_stop_signal) from
 * now on, before any tracer exists (every tracer_new does it too). */
void tracer_catch_stop_signals(void);

/*
 * PTRACE_SEIZE every thread of pid, until no new thread appears, then hold
 * them all (PTRACE_INTERRUPT).  The processes descending from pid (a
 * server's pre-forked workers) are attached the same way, as p2, p3...,
 * in pid order, depth first; one that cannot be traced is skipped.  No
 * events are queued for them.  On failure returns -1 and explains why in
 * err: no such process, permission (uid, ptrace_scope, capabilities),
 * already traced (and by whom).
 */
int tracer_attach(struct tracer *t, pid_t pid, char *err, size_t errlen);

/* Whether pid can be attached at all, before anything is read or written:
 * -1 with the reason in err for no such process, cctrace itself, a thread
 * id, init (pid 1), a kernel thread, or a zombie.  tracer_attach checks it
 * too. */
int tracer_attach_check(pid_t pid, char *err, size_t errlen);

/* After a successful attach, what the user should know that is not an
 * error (the process is stopped by job control, and left so), or NULL. */
const char *tracer_attach_note(const struct tracer *t);

/*
 * Wait for the next event, until deadline_ms on CLOCK_MONOTONIC (or forever
 * if negative).  The event's thread is held when this returns.
 */
enum tr_wait_result tracer_wait(struct tracer *t, struct tr_event *ev, int64_t deadline_ms,
				int *signo);

/* Signals whose default action dumps core (SIGSEGV, SIGABRT, ...): crashes. */
bool tracer_signal_crashes(int sig);

/* The first stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1...:
 * every signal that would otherwise end cctrace and is not a crash) that
 * reached cctrace and was not taken yet (0 if none); take clears it.
 * tracer_wait returns TR_WAIT_INTERRUPTED while one is pending. */
int tracer_stop_signal(bool take);

/* Milliseconds on CLOCK_MONOTONIC, the clock of tracer_wait deadlines. */
int64_t tracer_now_ms(void);
int64_t tracer_now_us(void);

/* Is an event for th queued and not yet returned by tracer_wait? */
bool tracer_event_pending(struct tr_thread *th);
/* Give back an event tracer_wait returned: the next tracer_wait returns
 * it again (its thread stays held).  0, or -1 if out of memory. */
int tracer_push_back(struct tracer *t, const struct tr_event *ev);

int tracer_resume(struct tr_thread *th);
/* th, held at a system call's entry (TR_EV_SYSCALL), and resumed with
 * tracer_resume_syscalls: n is added to what the call returns, if it
 * succeeds.  A futex wake that cctrace delivered to threads it holds
 * counts them, as the kernel would have, had they slept in its queue. */
void tracer_add_to_return(struct tr_thread *th, long n);
/* th, held, has rdx changed for the system call it makes (or restarts)
 * when resumed: at that call's exit rdx is written back to rdx, as the
 * program had it.  Costs the thread an entry and an exit stop, both
 * resumed in the tracer; a single step (no exit stop) or a detach before
 * the call returns leaves the changed rdx. */
void tracer_put_back_rdx(struct tr_thread *th, uint64_t rdx);
/* Resume until the thread is about to make a system call (TR_EV_SYSCALL),
 * or any other event.  tracer_resume() goes back to plain running. */
int tracer_resume_syscalls(struct tr_thread *th);
int tracer_singlestep(struct tr_thread *th);
/* Ask a running thread to stop; a TR_EV_INTERRUPT event follows. */
int tracer_interrupt(struct tr_thread *th);
/* A thread resumed past its exit event: wait for the kernel to have it
 * gone (reaped; its CLONE_CHILD_CLEARTID word cleared, which a join waits
 * on), at most until deadline_ms, consuming no other thread's news.  0
 * when it is gone, -1 when not by then (a group leader waits for the
 * others) or when it is not such a thread. */
int tracer_await_gone(struct tr_thread *th, int64_t deadline_ms);
/* Hold every running thread now (synchronously), without events; returns 0. */
int tracer_stop_all(struct tracer *t);

/* Write cached register changes of a held thread to the kernel now, so that
 * something else reading them through ptrace (an unwinder) sees them. */
int tracer_sync_regs(struct tr_thread *th);

/* Registers of a held thread (cached until it is resumed). */
const struct user_regs_struct *tracer_regs(struct tr_thread *th);
/* A held thread's pc as its program's code has it.  A thread that our
 * interrupt stopped while it ran a displaced instruction out of line (a
 * system call it sleeps in) has its pc in a scratch slot, where no symbol
 * and no unwind table is: this is the instruction's own address, or the
 * one after it.  Only what is shown and unwound uses it; the registers
 * keep the slot, where the thread resumes. */
uint64_t tracer_code_pc(struct tr_thread *th);
int tracer_set_regs(struct tr_thread *th, const struct user_regs_struct *regs);
/* The signals pending for th or for its process (SigPnd | ShdPnd), 0 if
 * they cannot be read. */
uint64_t tracer_thread_pending_signals(const struct tr_thread *th);
/* What descriptor fd of p is: its /proc/PID/fd link ("pipe:[12]",
 * "anon_inode:[signalfd]"), "" if it cannot be read. */
void tracer_fd_kind(const struct tr_process *p, int fd, char *kind, size_t len);
/* A held thread's x87 and SSE registers (PTRACE_GETFPREGS: not cached,
 * read on each call).  -1 if th is not held or the read failed. */
int tracer_fpregs(struct tr_thread *th, struct user_fpregs_struct *out);

/* The state letter of process pid as the kernel shows it (R, S, T, t, Z:
 * a zombie its parent may reap...), 0 if it is gone.  Any process, traced
 * or not: a traced program's child it waits for, say. */
char tracer_process_state(pid_t pid);

/* Has the program a handler of its own for a signal that may come to
 * wake a sleeper (a timer's SIGALRM, SIGUSR1, SIGCHLD, SIGTERM...)? */
bool tracer_program_handles_signals(struct tr_process *p);

/* The pc of a thread: its registers if held, else the user pc the kernel
 * reports for a thread blocked in a system call; 0 if unknown.  In a
 * breakpoint's slot, where the instruction it runs out of line lives. */
uint64_t tracer_thread_pc(struct tr_thread *th);

/* Pin a thread to cctrace's CPU while it is driven, or restore its mask. */
void tracer_pin(struct tr_thread *th, bool pin);

/* What the thread is doing in the kernel: fills buf with e.g. "futex" or
 * "running" from /proc; for reports. */
void tracer_describe_kernel_state(struct tr_thread *th, char *buf, size_t len);

/* A running thread asleep in a system call, and how many times it has
 * been switched out: two samples a few ms apart with the same count mean
 * it is blocked, not just passing through. */
struct tr_kernel_sample {
	bool asleep;		/* state S or D, inside a system call */
	long syscall;		/* its number, -1 if none */
	unsigned long switches; /* voluntary + involuntary context switches */
	bool awaits_outside;	/* the call waits for input or time, not for
				 * another thread: epoll_wait, accept, a read
				 * on a socket, nanosleep (see outside.c) */
	bool timed;		/* a futex wait with a timeout: it ends by itself */
	bool shared;		/* a futex wait not private to the process (a join's
				 * is one; see tracer_sleeps_for_good) */
	uint64_t futex_addr;	/* its word */
};
int tracer_kernel_sample(struct tr_thread *th, struct tr_kernel_sample *s);
/* The time th has run on a CPU, in ms (/proc's schedstat), -1 if unknown:
 * what a step's length means on a busy host, where wall time stretches. */
int64_t tracer_thread_cpu_ms(const struct tr_thread *th);
/* Is s, a sample of a thread of process pid, a sleep only another thread
 * of pid can end: a futex wait with no timeout, on memory no other
 * process shares (MAP_SHARED, shm: one cctrace does not trace may wake
 * it; pid's maps are read then)? */
bool tracer_sleeps_for_good(pid_t pid, const struct tr_kernel_sample *s);
/* The same of every thread of pid, a process cctrace does not trace, which
 * has no signal handler of its own (tracer_program_handles_signals);
 * *switches gets their context switches, to tell that none moved since. */
bool tracer_untraced_sleeps_for_good(pid_t pid, unsigned long long *switches);

/* The system call th is asleep in (running) or was stopped in and redoes
 * when resumed (held), with its arguments; -1 if none. */
#define TRACER_SYSCALL_ARGS 6
long tracer_syscall_args(struct tr_thread *th, uint64_t args[TRACER_SYSCALL_ARGS]);

/* x86-64 system call numbers (TR_SYS_*, abi.h) by name and back; -1 /
 * NULL if unknown. */
long tracer_syscall_number(const char *name);
const char *tracer_syscall_name(long nr);
/* Every known name, for "did you mean" and completion. */
void tracer_each_syscall(void (*cb)(const char *name, void *ctx), void *ctx);

/*
 * A thread as callers see it.  The pointer stays valid until tracer_free,
 * after the thread has exited too; so do its tid, name and process.
 */
pid_t tracer_thread_tid(const struct tr_thread *th);
/* "p1.t3": process and thread creation order, the same every run. */
const char *tracer_thread_name(const struct tr_thread *th);
struct tr_process *tracer_thread_process(const struct tr_thread *th);
enum tr_state tracer_thread_state(const struct tr_thread *th);
bool tracer_thread_held(const struct tr_thread *th);
bool tracer_thread_running(const struct tr_thread *th);
bool tracer_thread_exited(const struct tr_thread *th);
/* The kind of the last event tracer_wait returned for it (TR_EV_NONE). */
enum tr_event_kind tracer_thread_last_event(const struct tr_thread *th);
/* The caller's per-thread data; the tracer never touches it. */
void *tracer_thread_user(const struct tr_thread *th);
void tracer_thread_set_user(struct tr_thread *th, void *user);

/* Iteration over threads and processes, in creation order; exited
 * threads and ended processes included. */
struct tr_thread *tracer_threads(struct tracer *t);
struct tr_thread *tracer_thread_next(const struct tr_thread *th);
#define tr_for_each_thread(th, t)                                                                  \
	for ((th) = tracer_threads(t); (th); (th) = tracer_thread_next(th))
#define tr_for_each_process(p, t) for ((p) = tracer_processes(t); (p); (p) = tracer_process_next(p))
struct tr_thread *tracer_thread_by_name(struct tracer *t, const char *name);
struct tr_thread *tracer_thread_by_tid(struct tracer *t, pid_t tid);
struct tr_process *tracer_processes(struct tracer *t);
struct tr_process *tracer_process_next(struct tr_process *p);
pid_t tracer_process_pid(const struct tr_process *p);
/* The pid of the process that made p (its parent, as wait4 knows it). */
pid_t tracer_process_parent_pid(const struct tr_process *p);
int tracer_process_index(const struct tr_process *p); /* 1 for p1 */
bool tracer_process_alive(const struct tr_process *p);
/* p was made by vfork (posix_spawn, system) and has neither executed a
 * program nor begun to exit: the thread that made it, resumed, would
 * wait in the kernel for that, where no interrupt stops it. */
bool tracer_process_vfork_pending(const struct tr_process *p);
/* The ELF entry point of p's program (AT_ENTRY), 0 if it cannot be read:
 * after an exec, the dynamic loader has mapped the libraries by the time
 * the program's first thread gets there. */
uint64_t tracer_process_entry(const struct tr_process *p);
/* th made such a process (held at its fork event): resumed, it would
 * wait for it in the kernel.  A scheduler lets the child go first. */
bool tracer_thread_waits_for_vfork(const struct tr_thread *th);
/* Every thread of p has exited or is about to (its memory may be gone):
 * a breakpoint that cannot be planted there is no error. */
bool tracer_process_exiting(const struct tr_process *p);
/* p was forked from a template (tracer_adopt) and none of its threads has
 * been resumed since: its file mappings are the template's. */
bool tracer_process_pristine(const struct tr_process *p);
/* The caller's per-process data (e.g. its symbol table). */
void *tracer_process_user(const struct tr_process *p);
void tracer_process_set_user(struct tr_process *p, void *user);

/* Target memory; usable while threads run. Returns 0 or -1. */
int tracer_read(struct tr_process *p, uint64_t addr, void *buf, size_t len);
int tracer_write(struct tr_process *p, uint64_t addr, const void *buf, size_t len);

/* Code as the program has it: tracer_read with our int3 bytes taken out. */
int tracer_read_code(struct tr_process *p, uint64_t addr, void *buf, size_t len);
/* The instruction at addr, its bytes as the program has them in code: the
 * decoding made when a breakpoint was planted there, if one ever was (a
 * point's, at every stop: no read), else read and decoded.  0 or -1. */
int tracer_decode_at(struct tr_process *p, uint64_t addr, uint8_t code[DIS_MAX_INSN],
		     struct dis_insn *insn);
/* The memory accesses the instruction at addr makes run with regs, as
 * dis_accesses gives them: from the whole decoding a breakpoint there
 * keeps (a point's, asked at every choice: no decoding), else decoded. */
int tracer_accesses_at(struct tr_process *p, uint64_t addr, const struct user_regs_struct *regs,
		       struct dis_access *out, int max);

/* Software breakpoints, reference counted per address. */
int tracer_break_insert(struct tr_process *p, uint64_t addr, char *err, size_t errlen);
void tracer_break_remove(struct tr_process *p, uint64_t addr);
bool tracer_break_at(struct tr_process *p, uint64_t addr);
/* Make the live breakpoints of `to`, a held template's process (which
 * runs none of the code), those of `from` now, less those skip(ctx, addr)
 * refuses: the next children of the template start with them planted
 * (tracer_adopt).  0, or -1 with err. */
int tracer_break_mirror(struct tr_process *to, struct tr_process *from,
			bool (*skip)(void *ctx, uint64_t addr), void *ctx, char *err,
			size_t errlen);

/* Hardware watchpoints: len 1, 2, 4 or 8 and addr aligned to len.  Returns
 * the slot (0..3), or -1 with a message (the limit of 4 is named).  The
 * same watch inserted twice shares a slot and needs two removals. */
int tracer_watch_insert(struct tr_process *p, uint64_t addr, int len, enum tr_watch_kind kind,
			char *err, size_t errlen);
void tracer_watch_remove(struct tr_process *p, int slot);

/* Do debug-register watchpoints trap on this host?  Some hosts (AMD under
 * Firecracker) accept DR0-DR7 and never trap.  Probes once per boot with a
 * child of its own (so call it before anything is traced) and caches the
 * answer.  1: they fire; 0: they do not, and why says so; -1: the probe
 * could not run (why says why). */
int tracer_hw_watchpoints_fire(char *why, size_t len);

/*
 * The decode-ahead stepper (stepper.c): a held thread's instruction-level
 * events, found by decoding, without single-stepping through everything.
 * The caller says what it wants (DIS_WANT_* of disasm/disasm.h) and judges
 * each event; the tracer finds them and moves the thread on.
 */
enum tr_step_kind { TR_STEP_NONE, TR_STEP_ACCESS, TR_STEP_CALL, TR_STEP_SYSCALL };
struct tr_step_event {
	enum tr_step_kind kind;
	uint64_t pc;	 /* the instruction */
	uint64_t addr;	 /* ACCESS: first byte */
	uint64_t span;	 /* ACCESS: bytes a rep string instruction covers (0: size) */
	uint64_t value;	 /* ACCESS: the memory's first 8 bytes once accessed */
	uint64_t target; /* CALL: the callee, 0 if unknown */
	unsigned size;	 /* ACCESS: bytes per access */
	unsigned rw;	 /* ACCESS: DIS_READ | DIS_WRITE */
	bool stack;	 /* ACCESS: through rsp/rbp */
	long sysno;	 /* SYSCALL */
};
/* The caller's verdict on an event of th: 1 if it is news (th stays held
 * on it, and the stepper does not show it again), 0 if not, -1 to stop. */
typedef int (*tr_step_judge)(void *ctx, struct tr_thread *th, const struct tr_step_event *ev);
/* What to stop for; single_step: one PTRACE_SINGLESTEP per instruction
 * instead of breakpoints (the reference).  A new want takes out the
 * breakpoints planted for the old one. */
void tracer_step_plan(struct tracer *t, unsigned want, bool single_step);
/* Judge the events of held th at its pc (the accesses it made before, a
 * call or system call about to happen); on none, run it on to the next
 * place one can happen.  1 if an event was news (th stays held), 0 once
 * it runs, -1 if judge said stop. */
int tracer_step(struct tracer *t, struct tr_thread *th, tr_step_judge judge, void *ctx);
/* th stopped: judge the accesses it made since its last step (1: one was
 * news; the rest wait for the next tracer_step, -1: judge said stop). */
int tracer_step_settle(struct tracer *t, struct tr_thread *th, tr_step_judge judge, void *ctx);
/* th is held on the system call the last step reported: its entry stop
 * is coming next, and is not news. */
bool tracer_step_parked_on_syscall(const struct tr_thread *th);
/* Take out the stepper's breakpoints. */
void tracer_step_unplant(struct tracer *t);
/* Remove the stepper's breakpoints that no running thread is heading to:
 * a thread no longer decoded would otherwise stop at each as it passes. */
void tracer_step_unplant_idle(struct tracer *t);
/* p executed a new program: what was planted and scanned in it is gone. */
void tracer_step_forget_process(struct tracer *t, struct tr_process *p);

/* Undo everything in every process and let all threads go.  Safe on any
 * path, including after errors; returns 0 if everything was restored. */
int tracer_detach_all(struct tracer *t);
/* An untraced child of cctrace (a test driver) whose end is an event:
 * tracer_wait reaps every child, so it must know this one. */
void tracer_watch_child(struct tracer *t, pid_t pid);

/* Kill every launched process (attached ones are detached instead). */
void tracer_kill_launched(struct tracer *t);

#endif
