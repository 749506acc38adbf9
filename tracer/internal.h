/*
 * Private declarations shared by the files of tracer/.
 */
#ifndef CCTRACE_TRACER_INTERNAL_H
#define CCTRACE_TRACER_INTERNAL_H

#include "disasm/disasm.h"
#include "tracer/tracer.h"

#include <stdio.h>

#include <signal.h>

#define TR_MAX_WATCH 4

struct tr_guard;

/*
 * One traced task (strace's struct tcb).  Threads are never freed before
 * tracer_free(), so a pointer the caller holds stays valid (task.c).
 *
 * state is where it is in its life: TR_RUNNING (resumed; also in a
 * group-stop under PTRACE_LISTEN, and dying), TR_HELD (in a ptrace stop we
 * have not resumed) or TR_EXITED (gone for good, or detached).  RUNNING
 * <-> HELD go through tr_mark_held / tr_mark_running, anything -> EXITED
 * through tr_mark_exited.  flags are what we know besides, one TF_ bit
 * each; the invariants, asserted by tr_thread_check at every transition:
 *  - TF_AT_BREAK, TF_IN_SYSCALL_STOP, TF_GROUP_STOP say which stop it is
 *    held in, and TF_REGS_DIRTY that regs must be written back before it
 *    runs: they hold only while HELD, and at most one of the first three.
 *  - TF_LISTENING (in a group-stop under PTRACE_LISTEN) never while HELD.
 *  - TF_REPORT_INTERRUPT only with TF_INTERRUPTING: the stop the caller
 *    asked for is one we requested.
 *  - An EXITED thread has none of the TF_LIVE_ONLY flags; TF_STARTED,
 *    TF_EXITING and TF_AFFINITY_SAVED are history and stay.
 */
enum tr_thread_flag {
	TF_STARTED = 1u << 0,	       /* its first stop has been seen */
	TF_EXITING = 1u << 1,	       /* PTRACE_EVENT_EXIT seen, or dying */
	TF_STEPPING = 1u << 2,	       /* resumed with PTRACE_SINGLESTEP, step not seen yet */
	TF_TRACE_SYSCALLS = 1u << 3,   /* resumed to stop at every system call entry */
	TF_INTERRUPTING = 1u << 4,     /* we sent PTRACE_INTERRUPT, its stop not seen yet */
	TF_REPORT_INTERRUPT = 1u << 5, /* ...on behalf of the caller (TR_EV_INTERRUPT) */
	TF_LISTENING = 1u << 6,	       /* in group-stop under PTRACE_LISTEN */
	TF_AT_BREAK = 1u << 7,	       /* held by a TR_EV_BREAK: resume steps over it */
	TF_IN_SYSCALL_STOP = 1u << 8,  /* held at a system-call-entry stop */
	TF_GROUP_STOP = 1u << 9,       /* held at a stop that was also its group-stop (a
					* job-stopped process): resumed, it listens */
	TF_REGS_DIRTY = 1u << 10,      /* regs changed, not written to the kernel yet */
	TF_AFFINITY_SAVED = 1u << 11,  /* pinned by us; saved_affinity is its own mask */
	TF_DR7_CLEAR = 1u << 12,       /* its DR7 is 0: born traced (a new task has no
					* debug registers), or so written */
	TF_MASK_SAVED = 1u << 13,      /* stepped with SIGTRAP unblocked; step_mask is its
					* own signal mask, put back at its next stop */
	TF_TTY_WAIT = 1u << 14,	       /* asked for the terminal while the prompt read it:
					* held until the prompt is done (terminal.c) */
	TF_OWN_SIGNAL = 1u << 15,      /* stepped into the program's own SIGILL or SIGTRAP
					* handler: its stop puts the rescue handler back */
	TF_PUT_BACK_RDX = 1u << 16,    /* its call's exit stop writes put_back_rdx to rdx
					* (resumed, it stops there) */
};
#define TF_HELD_ONLY (TF_AT_BREAK | TF_IN_SYSCALL_STOP | TF_GROUP_STOP | TF_REGS_DIRTY)
#define TF_LIVE_ONLY                                                                               \
	(TF_HELD_ONLY | TF_STEPPING | TF_TRACE_SYSCALLS | TF_INTERRUPTING | TF_REPORT_INTERRUPT |  \
	 TF_LISTENING | TF_PUT_BACK_RDX)

/* The stepper's news about one thread (stepper.c). */
#define TR_STEP_MAX_PENDING 4
struct tr_step_thread {
	uint64_t parked_before; /* a call/syscall here was the last step's event */
	bool parked_on_syscall; /* ...and it was a system call */
	struct tr_step_event pending[TR_STEP_MAX_PENDING]; /* accesses made since its last stop */
	int npending;
	uint64_t pending_at; /* the pc at which the pending ones are still news */
	uint64_t heading_to; /* the breakpoint it was last set running to, 0: none */
};

struct tr_thread {
	pid_t tid;
	struct tr_process *proc;
	char name[24]; /* "p1.t3": process and thread creation order */
	enum tr_state state;
	unsigned flags; /* enum tr_thread_flag */
	enum tr_event_kind last_event;
	uint64_t last_pc;		   /* pc at the last event */
	void *user;			   /* the caller's (tracer_thread_user) */
	struct tr_thread *next;		   /* all threads, creation order */
	struct user_regs_struct regs;	   /* valid while held */
	int pending_signal;		   /* delivered on next resume */
	uint64_t step_mask;		   /* TF_MASK_SAVED: its own signal mask */
	int dr_generation;		   /* debug registers last written */
	unsigned char saved_affinity[128]; /* cpu_set_t, kept opaque here */
	size_t gj;			   /* its record in the guardian's journal */
	/* The call a restart_syscall of this thread continues: seen at a stop
	 * inside it (ERESTART_RESTARTBLOCK), -1 if none.  A poll, nanosleep
	 * or timed futex wait that a stop interrupted sleeps on as
	 * restart_syscall, which /proc names alone. */
	long restarts;
	/* Added to the return value of the system call it is in, at its exit
	 * stop, if the call succeeded (tracer_add_to_return). */
	long return_bonus;
	/* rdx as the program had it, for TF_PUT_BACK_RDX (tracer_put_back_rdx). */
	uint64_t put_back_rdx;
	/* The process it made by vfork, until its vfork-done stop: resumed
	 * before that process executes a program or exits, it waits for it. */
	struct tr_process *vfork_child;
	struct tr_step_thread step;
};

static inline bool tr_has(const struct tr_thread *th, unsigned flag)
{
	return (th->flags & flag) != 0;
}

static inline void tr_set(struct tr_thread *th, unsigned flag)
{
	th->flags |= flag;
}

static inline void tr_clear(struct tr_thread *th, unsigned flag)
{
	th->flags &= ~flag;
}

static inline void tr_assign(struct tr_thread *th, unsigned flag, bool on)
{
	if (on)
		tr_set(th, flag);
	else
		tr_clear(th, flag);
}

/* Asserts the invariants above (task.c). */
void tr_thread_check(const struct tr_thread *th);
/* th stopped (a wait status said so): it is held, and whatever it was
 * doing while running (listening in a group-stop) is over. */
void tr_mark_held(struct tr_thread *th);
/* th was resumed, or is running again without us (dying, listening): what
 * described its stop no longer holds. */
void tr_mark_running(struct tr_thread *th);
/* th is gone, or no longer ours (detached): only its history is kept. */
void tr_mark_exited(struct tr_thread *th);

/* One breakpoint we own.  `slot` is where its instruction runs out of line,
 * 0 if it is emulated instead (insn.kind says how). */
struct tr_breakpoint {
	uint64_t addr;
	int refs;
	uint8_t orig;		    /* the byte under the breakpoint byte */
	uint8_t byte;		    /* ours: TRACER_INT3 or TRACER_BREAK_BYTE */
	uint8_t code[DIS_MAX_INSN]; /* original bytes of the instruction */
	struct dis_insn insn;
	/* insn's whole decoding, for its accesses (tracer_accesses_at), if it
	 * touches memory; shared with the copies of a fork or an adoption */
	struct dis_kept *kept;
	uint64_t slot;
	size_t gj; /* its record in the guardian's journal, 0 if none */
	/* Planted by the template this process was forked from (refs 0, its
	 * byte in place), not asked for yet: tracer_break_insert claims it
	 * without a write, and what is left unclaimed is taken out before
	 * any thread of the process runs (tr_break_drop_unclaimed). */
	bool unclaimed;
	struct tr_breakpoint *next;
};

/* A page in the target that holds displaced instructions. */
struct tr_scratch {
	uint64_t addr;
	size_t used;
	size_t gj; /* its record in the guardian's journal, 0 if none */
	struct tr_scratch *next;
};

struct tr_watch {
	bool used;
	int refs; /* the same watch inserted again shares the slot */
	uint64_t addr;
	int len;
	enum tr_watch_kind kind;
};

struct tr_process {
	pid_t pid;
	int index; /* creation order, 1-based */
	int next_thread_index;
	bool launched; /* we started it, so we may kill it */
	/* no_children: a child of an attached process is let go at its first
	 * stop, or at its exec if it shares its parent's memory (vfork);
	 * fork_seen tells its parent's fork event, which may come later. */
	bool let_go, let_go_at_exec, fork_seen, released;
	pid_t parent_pid;
	bool alive;
	int mem_fd;    /* /proc/PID/mem of its current program */
	int mem_errno; /* why mem_fd could not be opened */
	/* made by vfork (CLONE_VFORK: posix_spawn, system): the thread that
	 * made it waits in the kernel until it executes a program or exits */
	bool vforked;
	bool shares_mm;		 /* a vfork child: mem_fd is its parent's memory until
				  * it executes a program */
	unsigned execs;		 /* programs it has executed since we met it */
	uint64_t syscall_gadget; /* address of a 0f 05 pair in its text, 0 = not found yet */
	uint64_t exit_loop;	 /* libc's loop that ends a thread (scratch.c); 1: none */
	struct tr_breakpoint *breakpoints;
	/* The same breakpoints by address (breakpoint.c): a stop looks its
	 * pc up, and a choice decodes every held thread's next instruction. */
	struct tr_breakpoint **bp_slots;
	size_t bp_cap, bp_count; /* bp_cap: 0 or a power of two */
	int unclaimed;		 /* breakpoints with .unclaimed */
	struct tr_scratch *scratch;
	struct tr_watch watch[TR_MAX_WATCH];
	int dr_generation;		/* bumped when watch[] changes */
	size_t gj;			/* its record in the guardian's journal, 0 if none */
	int rescue_state;		/* enum tr_rescue: SIGILL's and SIGTRAP's (guardian.c) */
	uint64_t rescue;		/* the rescue handler's code */
	uint64_t rescue_old[2][4];	/* SIGILL's and SIGTRAP's actions before ours */
	pid_t rescue_again_tid;		/* the thread a signal of the program's went to with
					 * the rescue handler off: at its next stop it goes
					 * back (guardian.c) */
	struct tr_fork_stub *fork_stub; /* a template's fork server (fork.c), or NULL */
	bool pristine;			/* forked from a template, no thread resumed since */
	void *user;
	struct tracer *tracer;
	struct tr_process *next;
};

/* The stepper: what it stops for, its breakpoints, the scans it made. */
#define TR_STEP_MAX_BPS	   64
#define TR_STEP_SCAN_CACHE 256
struct tr_stepper {
	unsigned want, planted_want; /* DIS_WANT_*; what the breakpoints are for */
	bool single_step;
	struct tr_step_bp {
		struct tr_process *proc;
		uint64_t addr;
	} bps[TR_STEP_MAX_BPS]; /* oldest first */
	int nbps;
	struct tr_scan_cache {
		struct tr_process *proc;
		uint64_t from, stop;
		unsigned want;
	} scan_cache[TR_STEP_SCAN_CACHE];
};

struct tracer {
	struct tracer_options opt;
	struct tr_thread *threads, **threads_tail;
	struct tr_process *processes, **processes_tail;
	int next_process_index;
	int cpu;		/* the CPU cctrace pinned itself to, -1 if not */
	pid_t child;		/* tracer_watch_child */
	char note[512];		/* tracer_attach_note */
	struct tr_guard *guard; /* attached processes' guardian, NULL if none */
	bool prompt_reads;	/* tracer_terminal_prompt: the terminal is the prompt's */
	/* Events decoded but not yet handed out: launch's START, an emulated
	 * single-step, a stop met while waiting for an interrupt.  A ring that
	 * grows: stopping every thread can meet one event per thread. */
	struct tr_event *queue;
	unsigned queue_head, queue_len, queue_cap;
	struct tr_stepper stepper;
};

/* task.c */
struct tr_process *tr_process_new(struct tracer *t, pid_t pid);
struct tr_thread *tr_thread_new(struct tracer *t, struct tr_process *p, pid_t tid);
void tr_thread_gone(struct tr_thread *th);
/* A new process forked by parent: what it inherits from it (breakpoints,
 * scratch pages, whether we launched it). */
void tr_process_inherit(struct tr_process *parent, struct tr_process *child);
/* A thread at an interrupt stop whose wait answers EINTR there, where a
 * signal with no handler would have had it restarted (wait.c says which
 * calls, and why): its return value made the restart code, so the call is
 * made again.  true if regs were changed. */
bool tr_mend_interrupted_wait(struct user_regs_struct *regs);
/* The live process of that pid, NULL if none. */
struct tr_process *tr_process_by_pid(struct tracer *t, pid_t pid);
/* A field of /proc/PID/status (or of thread tid's, if tid is not 0), read
 * in base; 0, or -1 if the file or the field is missing. */
int tr_status_field(pid_t pid, pid_t tid, const char *key, int base, unsigned long long *value);
/* Several fields of one status file, read once: 0 when all were found. */
struct tr_status_key {
	const char *key;
	int base;
};
int tr_status_fields(pid_t pid, pid_t tid, const struct tr_status_key *keys, int n,
		     unsigned long long *values);
/* State letter (R, S, D, T, t, Z...) and PF_* flags of task tid of pid,
 * from /proc/PID/task/TID/stat; 0, or -1 if it is gone. */
int tr_task_stat(pid_t pid, pid_t tid, char *state, unsigned long *flags);
/* Is task tid of pid gone, a zombie, or on its way out (in do_exit, or a
 * SIGKILL pending) even if it has not reported it yet? */
bool tr_task_dying(pid_t pid, pid_t tid);
bool tr_pid_dying(pid_t pid);
/* In do_exit, to run no user code again: PF_EXITING, and PF_POSTCOREDUMP
 * (the same bit was PF_EXITPIDONE before Linux 5.17), which recent kernels
 * set before the PTRACE_EVENT_EXIT stop while PF_EXITING comes after it. */
#define TR_PF_DYING   0x0000000cul
#define TR_PF_KTHREAD 0x00200000ul /* a kernel thread */

/* A child forked by a thread we had pinned to our CPU has that mask too:
 * give it the mask its parent had before we pinned it. */
void tr_unpin_inherited(struct tr_thread *child, pid_t parent_pid);

/* Does system call nr (first argument arg0) of a thread of pid sleep until
 * something outside the program happens (input, a timer)?  outside.c. */
bool tr_syscall_awaits_outside(const struct tr_process *p, long nr, unsigned long long arg0);
/* tracer_program_handles_signals of any process, traced or not (wait.c). */
bool tr_pid_handles_signals(pid_t pid);
/* A futex wait (futex or futex_waitv, op its operation) with a timeout:
 * it ends by itself. */
bool tr_futex_wait_is_timed(long nr, unsigned long long op, unsigned long long timeout);
int tr_fetch_regs(struct tr_thread *th);
int tr_flush_regs(struct tr_thread *th);
/* Resume with PTRACE_CONT (or SINGLESTEP), flushing regs and signals. */
int tr_continue(struct tr_thread *th, int request);

/* mem.c */
/* Does child still share pid's address space (vfork, clone(CLONE_VM))?
 * True when the kernel cannot tell (no kcmp). */
bool tr_shares_mm(pid_t child, pid_t pid);
/* The process's maps (through a live thread's if its leader has ended). */
FILE *tr_open_maps(struct tr_process *p, char *path, size_t len);
/* Can p's memory descriptor reach p's memory (tracer_read would try)? */
bool tr_mem_usable(struct tr_process *p);
/* Is the executable mapping [lo, hi), maps line `line`, one to search? */
typedef bool (*tr_keep_mapping_fn)(const char *line, unsigned long lo, unsigned long hi, void *ctx);
/* The first copy of bytes in the executable mappings of maps (an open
 * /proc/PID/maps) that keep accepts, read through mem (its /proc/PID/mem);
 * 0 if none.  Shared with the guardian, which has no tracer. */
uint64_t tr_find_in_code(FILE *maps, int mem, tr_keep_mapping_fn keep, void *ctx, const void *bytes,
			 size_t len);
int tr_mem_open(struct tr_process *p);
int tr_peek_fn(void *proc, uint64_t addr, uint64_t *value);
int tr_poke_fn(void *proc, uint64_t addr, uint64_t value);

/* breakpoint.c */
struct tr_breakpoint *tr_break_find(struct tr_process *p, uint64_t addr);
/* Also a dormant one (removed, original byte back). */
struct tr_breakpoint *tr_break_find_any(struct tr_process *p, uint64_t addr);
/* Advance a held thread past the instruction under the breakpoint at its pc
 * without a trap: point it at the slot, or emulate.  Returns 0, 1 if it
 * was not at a breakpoint, -1 on error. */
int tr_break_step_over(struct tr_thread *th);
/* Put the original bytes back and forget every breakpoint (detach/exec). */
void tr_break_remove_all(struct tr_process *p, bool restore_bytes);
/* If th's pc lies in a scratch slot, move it to the equivalent original pc. */
void tr_break_fix_pc_in_slot(struct tr_thread *th);
/* pc, or where the instruction lives that a breakpoint's slot at pc runs
 * out of line (after it: the instruction after it). */
uint64_t tr_break_home(struct tr_process *p, uint64_t pc);
/* Copy the parent's breakpoints and scratch pages to a forked child, whose
 * code bytes are made to agree with the copy. */
void tr_break_inherit(struct tr_process *parent, struct tr_process *child);
/* The same for a child of a held template (tracer_adopt), which has not
 * run since its memory was the template's: nothing to read or make agree;
 * the template's live breakpoints are the child's unclaimed ones. */
void tr_break_adopt(const struct tr_process *tmpl, struct tr_process *child);
/* Take out the unclaimed breakpoints: before the process first runs. */
void tr_break_drop_unclaimed(struct tr_process *p);

/* launch.c: the value of pid's auxiliary vector entry of type (AT_ENTRY...), or 0. */
uint64_t tr_auxv_value(pid_t pid, uint64_t type);

/* scratch.c */
uint64_t tr_scratch_alloc(struct tr_process *p, uint64_t near, size_t len, char *err,
			  size_t errlen);
void tr_scratch_release_all(struct tr_process *p, struct tr_thread *held);
/* A single step with SIGTRAP blocked (the thread runs the program's own
 * SIGTRAP handler) makes the kernel reset the program's SIGTRAP action to
 * SIG_DFL (task.c says why).  tr_unblock_trap unblocks it in stopped
 * thread tid for the step, keeping its mask in *mask, and says whether it
 * did; tr_put_back_mask puts the mask back once the thread has stopped.
 * By tid: the guardian steps threads it has no struct tr_thread for. */
bool tr_unblock_trap(pid_t tid, uint64_t *mask);
void tr_put_back_mask(pid_t tid, uint64_t mask);
/* Does [lo, hi) meet one of p's scratch pages? */
bool tr_in_scratch(const struct tr_process *p, uint64_t lo, uint64_t hi);
long tr_inject_syscall(struct tr_thread *th, long nr, const long args[6], bool *ok);
/* The same through gadget, whose next instructions park the thread,
 * followed by the call's system-call stops rather than a trap flag: while
 * SIGTRAP has the program's action (guardian.c installs ours), a flag a
 * dying cctrace left set would kill the process. */
long tr_inject_syscall_parked(struct tr_thread *th, uint64_t gadget, long nr, const long args[6],
			      bool *ok);
struct tr_thread *tr_any_held_thread(struct tr_process *p);

/* watch.c */
int tr_watch_sync(struct tr_thread *th);
int tr_watch_hit(struct tr_thread *th, int *slot);
void tr_watch_clear(struct tr_thread *th);

/* signals.c */
enum { TR_ANY_REAPED = 1, TR_ANY_DEADLINE = 0, TR_ANY_STOP = -2, TR_ANY_ERROR = -1 };
void tr_signals_install(void);
/* Block until a task changes state (TR_ANY_REAPED, with tid and a wait
 * status), the deadline passes, or a stop signal arrives. */
int tr_wait_any(int64_t deadline_ms, pid_t *tid, int *status);

/* terminal.c */
/* th is in a signal-delivery stop for sig: if the terminal sent it to the
 * program (tracer_terminal_take), deal with it, resume th and return
 * true; false leaves the signal to be delivered as usual. */
bool tr_terminal_stop(struct tr_thread *th, int sig);

/* guardian.c: what cctrace changes in attached processes, journaled for
 * the guardian process before each change (no-ops for launched ones). */
enum tr_guard_state { TR_GUARD_GONE, TR_GUARD_LIVE, TR_GUARD_DORMANT };
enum tr_rescue { TR_RESCUE_NONE, TR_RESCUE_INSTALLING, TR_RESCUE_INSTALLED, TR_RESCUE_OFF };
/* Start the guardian (tracer_attach, before anything is touched). */
int tr_guard_start(struct tracer *t, char *err, size_t errlen);
/* Everything is detached: the guardian exits without doing anything. */
void tr_guard_done(struct tracer *t);
/* Is pid the guardian (a child of cctrace, but no task of the program)? */
bool tr_guard_is(const struct tracer *t, pid_t pid);
/* The guardian's wait status says it is gone: start another. */
void tr_guard_died(struct tracer *t, int status);
void tr_guard_free(struct tracer *t);
int tr_guard_process(struct tr_process *p);
void tr_guard_process_gone(struct tr_process *p);
void tr_guard_inherit(struct tr_process *parent, struct tr_process *child);
void tr_guard_exec(struct tr_process *p);
/* Before the first byte is written into p: the rescue handler for SIGILL
 * and SIGTRAP. */
int tr_guard_prepare(struct tr_process *p, char *err, size_t errlen);
/* At detach, through a held thread: SIGILL's and SIGTRAP's own actions back. */
int tr_guard_unprepare(struct tr_process *p, struct tr_thread *held);
/* th is about to get a SIGILL or SIGTRAP of the program's own: the
 * program's actions back, until th stops again. */
int tr_guard_before_signal(struct tr_thread *th);
/* th stopped after running: a signal of the program's that went to it
 * has been delivered, and the rescue handler goes back. */
void tr_guard_after_stop(struct tr_thread *th);
/* The `syscall` of the rescue handler, 0 if it is not in place.  System
 * calls injected through it are safe should cctrace die meanwhile: the
 * thread then parks in the handler instead of running on with the
 * injected registers. */
uint64_t tr_guard_gadget(const struct tr_process *p);
/* A guardian watches p and SIGTRAP has the program's action, not the
 * rescue handler's: a trap flag a dying cctrace left set would kill it. */
bool tr_guard_trap_kills(const struct tr_process *p);
/* While our handler is in place, whether the program catches sig (SIGILL
 * or SIGTRAP); false if the kernel's answer is the right one. */
bool tr_guard_signal_action(const struct tr_process *p, int sig, bool *caught);
/* State changes; -1 (errno) if the journal cannot record them. */
int tr_guard_break(struct tr_process *p, struct tr_breakpoint *bp, int state);
int tr_guard_scratch(struct tr_process *p, struct tr_scratch *s, int state);
int tr_guard_pin(struct tr_thread *th, bool pinned);
/* A system call is injected into th (saved: its registers), or done (NULL). */
void tr_guard_inject(struct tr_thread *th, const struct user_regs_struct *saved);
void tr_guard_watch(struct tr_process *p);

/* wait.c */
/* How long an interrupted thread may take to stop before we give up on it
 * (it sleeps uninterruptibly in the kernel), and a step to finish. */
#define TR_STOP_TIMEOUT_MS 10000
/* Every task cctrace traces is seized with these (and a launched one with
 * PTRACE_O_EXITKILL too). */
#define TR_TRACE_OPTIONS                                                                           \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC |     \
	 PTRACE_O_TRACEEXIT | PTRACE_O_TRACESYSGOOD)
enum {
	TR_TASK_STATUS = 1,    /* *status is its next wait status */
	TR_TASK_VANISHED = 0,  /* dying or dead, with nothing to report now */
	TR_TASK_UNKNOWN = -1,  /* not a task we can wait for (reaped already) */
	TR_TASK_STOP = -2,     /* a stop signal reached cctrace */
	TR_TASK_DEADLINE = -3, /* nothing before deadline_ms */
};
/* The next wait status of task tid of process pid (a tracee, or our child
 * before it is traced), until deadline_ms (never if negative), or until a
 * stop signal (SIGINT...) if interruptible and none was pending already. */
int tr_wait_task(pid_t pid, pid_t tid, int64_t deadline_ms, bool interruptible, int *status);
/* th could not be waited for (TR_TASK_VANISHED or TR_TASK_UNKNOWN). */
void tr_thread_vanished(struct tr_thread *th, int how);
/* Decode a status a targeted wait collected that was not the one it
 * wanted (an exit, an exec): the event is queued for tracer_wait. */
void tr_take_status(struct tracer *t, pid_t tid, int status);
int tr_wait_for_stop(struct tracer *t, struct tr_thread *th);
/* 0, or -1 (ENOMEM) if the queue could not grow: the event is not lost
 * silently, the caller fails. */
int tr_queue_event(struct tracer *t, const struct tr_event *ev);
void tr_drop_queued_start(struct tracer *t, const struct tr_thread *th);
/* Hold a running thread of p for our own use (its real events are queued). */
struct tr_thread *tr_borrow_thread(struct tr_process *p, bool *borrowed);
void tr_return_thread(struct tr_thread *th, bool borrowed);

/* task.c, wait.c: resume or single-step a held thread keeping the
 * stepper's pending accesses (the public calls drop them). */
int tr_resume_stepping(struct tr_thread *th);
int tr_singlestep(struct tr_thread *th);

#endif
