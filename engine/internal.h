/*
 * engine/internal.h: the state of one execution of a schedule, shared by
 * the files of engine/ and by no one else.
 *
 * loop.c is the event loop every wait hands its request to; interp.c walks
 * statements (wait, run, assert, loops); atoms.c defines every event atom
 * (how it is planned, armed, matched and described); points.c arms the
 * atoms of a predicate as breakpoints and watchpoints in every process and
 * judges a stop against it; fine.c judges instruction-level events found by
 * decoding ahead; blocked.c decides what threads asleep in the kernel
 * mean; step.c moves one thread by instructions, lines and frames;
 * choose.c resolves `choose` through the search's hook; report.c writes
 * the trace and the outcome; session.c and interactive.c are the public
 * API and the shell's sessions.
 */
#ifndef CCTRACE_ENGINE_INTERNAL_H
#define CCTRACE_ENGINE_INTERNAL_H

#include "engine/engine.h"
#include "lang/lang.h"
#include "tracer/tracer.h"

#include <sys/stat.h>

#define MAX_FRAMES 64

/* Per traced process: its symbols and the addresses the schedule's names
 * resolve to there (resolved on first use, reset on exec). */
struct proc_ctx {
	struct sym_space *syms;
	uint64_t *func_addr; /* [nfuncs]; 0 = not resolved yet, 1 = absent */
	int nfuncs, nlocs;   /* sizes; the shell's tables grow as it goes */
	bool syms_borrowed;  /* from the search's symbol cache: not ours to close */
	struct loc_addrs {
		bool resolved;
		bool checked; /* at(F+0xOFF): its address is an instruction's first byte */
		size_t n;
		uint64_t *addrs; /* [n]: every copy of the line (inlined, unrolled) */
	} * locs,		 /* [nlocs] */
	    *inlined;		 /* [nfuncs]: the entries of each function's inlined copies */
};

/* A frame of a function whose return the current wait is waiting for. */
struct ret_frame {
	int func;
	uint64_t ret_addr;
	uint64_t sp_after; /* rsp once it has returned */
};

/* Who made a futex wait (futex_wait_maker). */
enum wait_maker { WAIT_LIBC, WAIT_OWN, WAIT_ELSEWHERE };

/* Per traced thread. */
struct thread_ctx {
	int bound;	   /* a thread variable bound to it, -1 if unbound */
	int primary;	   /* the variable a wait or bind first gave it, for replays */
	bool candidate;	   /* may satisfy the current wait */
	bool matched;	   /* satisfied it (and is held) */
	int returned_func; /* the func whose return this stop is, -1 if none */
	/* the func whose inlined copy this stop is the entry of (enter(F) at a
	 * copy), -1 if none, and where: its variables are that copy's, not
	 * those of a copy inlined into it at the same pc */
	int entered_copy;
	uint64_t entered_copy_pc;
	struct ret_frame *frames; /* grows: a recursion has no fixed depth */
	int nframes, frames_cap;
	char kernel_state[128]; /* captured for reports before threads are stopped */
	char last_event[160];	/* the last scheduling event, as the trace names it */
	bool blocked;		/* ran into the kernel and stayed there (blocked.c) */
	/* held in a futex wait (wakes.c): when it was stopped there, whether a
	 * wake reached it since, and whether its own resume watches its system
	 * calls for wakes only */
	unsigned long held_seq;
	bool woken;
	bool watching_wakes;
	long sleeps_skipped;	    /* in a serialized replay (sleeps.c) */
	uint64_t wait_pc;	    /* where its futex wait was last classified... */
	enum wait_maker wait_maker; /* ...and as whose (futex_wait_maker) */
	int last_var;		    /* watched variable of its last event, -1 if none */
	bool sampled;
	struct tr_kernel_sample sample;
	/* the stepper (fine.c, tracer/stepper.c) */
	bool skip_syscall_entry; /* its system call's entry stop is next, and is not news */
	bool tap_stepped;	 /* a profile's tap asked for it to be decoded (tap.c) */
	long tap_steps_left;	 /* of run_hooks.tap_step_budget */
	/* the instruction-level event the stepper last had judged true: the
	 * event, as the trace shows it, and the atom it satisfied */
	struct tr_step_event judged;
	struct tr_event judged_ev;
	const struct expr *judged_atom;
	/* in(F): the functions on its stack, unwound once per stop */
	uint64_t stack_stop, stack_pc, stack_sp;
	int nstack, stack_cap;
	const char **stack_funcs; /* malloc'd */
};

struct armed_bp {
	struct tr_process *proc;
	uint64_t addr;
};

struct armed_watch {
	const struct expr *atom;
	struct tr_process *proc;
	struct tr_thread *thread; /* a local's or __thread variable's: only its events */
	uint64_t addr;
	int slot;
	int size;
	uint64_t armed_value; /* its first 8 bytes when armed: proof of a missed write */
	bool fired;	      /* it has trapped since: the debug registers work */
};

enum flow { FLOW_NEXT, FLOW_STOP };

/* The event a predicate is judged against and then reported, handed to
 * the evaluation (eval_ctx.event, then the atoms' rows) and to the report
 * explicitly, never through the run: what the tracer reported (ev, as the
 * trace shows it) and, if the stepper found it by decoding, its
 * instruction-level event (fine); blocked: the thread sleeps in the kernel
 * (the `blocked` atom).  The evaluation records in it the first atom the
 * event satisfied. */
struct current_event {
	const struct tr_event *ev;
	const struct tr_step_event *fine; /* an instruction-level event, or NULL */
	bool blocked;			  /* "blocked" is being asked about */
	const char *label;		  /* the trace's text for it, instead of an atom's */
	const struct expr *matched;	  /* out: the first atom the event satisfied */
};

/* --- loop.c: the one event loop (the only caller of tracer_wait) --- */
enum loop_verdict {
	LOOP_AGAIN, /* wait on */
	LOOP_DONE,  /* the request is met */
	LOOP_STOP,  /* the run is over; its outcome has been reported */
};

struct run;
struct loop_request {
	int64_t deadline_ms; /* tracer_now_ms() clock, -1: none; handlers may move it */
	/* A thread's stop that the loop did not settle itself (see loop.c);
	 * NULL: loop_resume_free. */
	enum loop_verdict (*on_event)(struct run *r, const struct tr_event *ev,
				      struct loop_request *req);
	/* The deadline passed; NULL: LOOP_DONE. */
	enum loop_verdict (*on_deadline)(struct run *r, struct loop_request *req);
	/* What was going on when the program ended, for the report ("while
	 * ..."), written into buf; NULL: nothing to say. */
	const char *(*during)(struct run *r, struct loop_request *req, char *buf, size_t len);
	/* After the schedule: a crash is reported and the program let die of
	 * it, its end or the loss of every task ends the request. */
	bool drain;
	/* A shell's prompt: a stop signal (Ctrl-C) is the prompt's to take,
	 * and ends the request without a word. */
	bool idle;
	void *ctx; /* the request's own state */
};

/* Wait for events until a handler says the request is met (FLOW_NEXT) or
 * the run is over (FLOW_STOP, outcome reported). */
enum flow loop_run(struct run *r, struct loop_request *req);
/* The default handler: a thread the schedule does not hold is resumed. */
enum loop_verdict loop_resume_free(struct run *r, const struct tr_event *ev,
				   struct loop_request *req);

struct run {
	struct policy *pol;
	int program_stderr;	/* sanitizer_bugs: the file it goes to (stderr.c); -1 */
	struct schedule *sched; /* the statements running, for diagnostics */
	int nbindings;
	bool interactive;    /* a shell session: Ctrl-C holds, not ends */
	bool all_candidates; /* `continue`: bound threads run and match too */
	bool no_deadline;
	/* explore: the search's hooks, which resolve choose; NULL: first value */
	const struct run_hooks *oracle;
	const struct run_hooks *tap; /* a profile: hooks->tap gets every match (tap.c) */
	bool abandoned;		     /* the oracle stopped this run (another shard's) */
	bool out_of_time;	     /* ended at opt->end_by_ms */
	FILE *record;		     /* explore: the run as an exact schedule */
	int64_t *locals;	     /* let/for variables */
	int nlocals;
	struct tr_thread *last_run; /* the thread the last run/step moved (cb) */
	bool serial;		    /* `serial` ran: threads never bound stay held at their start */
	/* the current wait's `blocked` takes in a wait for input from
	 * outside (a serialized replay's `until blocked`: the search held
	 * such a thread as blocked, serial.c's outside) */
	bool outside_blocks;
	bool no_drain;			   /* deadlock, driver ended: do not wait for the end */
	bool has_driver;		   /* explore --driver: its exit ends the run */
	bool deferred_trace;		   /* keep raw events; name them only on demand */
	int64_t symbols_us;		   /* time spent opening symbol tables */
	struct symbol_cache *symbol_cache; /* explore: tables kept across runs */
	/* the template p1 was forked from (snapshot.c), NULL: launched afresh */
	struct engine_snapshot *snapshot;
	/* An event kept raw (report.c's defer_event): its text is made from
	 * these only if the trace is read, as report_event would have made it */
	struct deferred_event {
		double ms;
		uint64_t pc;		   /* where in the code (event_code_pc) */
		struct tr_event ev;	   /* its thread is valid until the run's end */
		struct tr_step_event fine; /* if has_fine */
		const struct expr *atom;   /* the schedule's, which outlives the run */
		bool has_fine, has_label;
		char label[160];	     /* a copy: labels are often on the stack */
		struct tr_thread *preempted; /* engine_trace_event.preempted */
	} * deferred;
	struct tr_thread *preempted; /* a choose preempted it; for the next event */
	int ndeferred, deferred_cap;
	bool ended_blocked;	/* the statement ended with threads blocked */
	unsigned long held_seq; /* threads stopped in a wait so far (wakes.c) */
	struct tracer *t;
	const struct engine_options *opt;
	bool launched;
	struct tr_thread **bindings; /* [pol->nthreads] */
	/* [pol->nthreads]: the `release` that let each variable's thread go,
	 * NULL once it is bound again (a run of it is then a mistake to name) */
	const struct stmt **released_by;
	int64_t timeout_ms;
	int64_t t0_ms;
	enum engine_outcome outcome;
	char *outcome_message;	     /* what report_outcome said after "cctrace: OUTCOME: " */
	struct chrome_trace *chrome; /* --trace-chrome: the events so far (chrome.c) */
	bool finished;
	int exit_status; /* the last process's, when it exited (not by a signal) */
	/* The event that ended the last wait or run (its thread is held there
	 * until something moves it): call fields outside predicates. */
	struct tr_event last_ev;
	struct current_event last_event;
	bool has_last_event;
	/* turns of the schedule's loops so far: every 256th looks for a
	 * Ctrl-C, which a loop that never waits would not see (loop_turn) */
	uint64_t loop_turns;
	/* the wait in progress */
	const struct stmt *stmt;
	const struct expr *pred;
	struct tr_thread **targets; /* the threads a `run` moves (NULL for a `wait`) */
	int ntargets;
	uint64_t *return_funcs; /* bit f: the predicate waits for return(funcs[f]) */
	int return_words;	/* ...in this many words (the shell adds functions) */
	bool any_return;	/* ...and at least one bit is set */
	uint64_t stops;		/* events seen; keys per-stop caches */
	unsigned fine_want;	/* DIS_WANT_* the stepper decodes for; 0: none */
	bool fine_syscalls;	/* resume candidates to system call entries */
	/* a serialized replay's `run T until ... blocked`: T runs with its
	 * system calls watched, and a futex wait that would sleep ends the
	 * step blocked at its entry (interp.c's entry_stop), as the search's
	 * step did (serial.c's syscall_entered) */
	bool entry_blocks;
	struct decoded_lvalue { /* read(X)/write(X) matched by decoding */
		const struct expr *atom;
		struct tr_process *proc;
		struct tr_thread *thread; /* as in armed_watch */
		uint64_t addr, size;
	} * decoded;
	int ndecoded, decoded_cap;
	struct armed_bp *armed;
	int narmed, armed_cap;
	/* Disarming is lazy: the last wait's points stay planted until the
	 * next wait has armed its own, so a loop of waits on the same point
	 * costs no writes to the target.  points_flush() really removes them. */
	struct armed_bp *lingering;
	int nlingering, lingering_cap;
	/* processes that executed a program, and the entry point where their
	 * libraries are all mapped: their symbols are read again there */
	struct armed_bp *exec_entries;
	int nexec_entries, exec_entries_cap;
	struct armed_watch *watches;
	int nwatches, watches_cap;
	struct armed_watch *lingering_watches;
	int nlingering_watches, lingering_watches_cap;
};

/* interp.c */
struct run *run_new(struct policy *pol, struct tracer *t, const struct engine_options *opt,
		    bool launched);
/* 0 when every statement ran, -1 when the run stopped (outcome reported). */
int run_statements(struct run *r, struct schedule *sched);
void run_finish(struct run *r);
void run_free(struct run *r);
void run_where(struct run *r, const struct stmt *s, char *buf, size_t len);
void run_resume(struct run *r, struct tr_thread *th);
void run_release_free(struct run *r);
void run_crash(struct run *r, const struct tr_event *ev);
enum flow run_program_ended(struct run *r, const struct tr_event *ev, const char *during);
/* s's timeout ran out; matched of need threads had reached its predicate
 * (a `wait` for several; 0 and 0 for anything else). */
void run_timed_out(struct run *r, const struct stmt *s, int matched, int need);
enum flow run_driver_ended(struct run *r, const struct tr_event *ev);
void run_interrupted(struct run *r, int signo);
/* The index of thread variable name, -1 if the schedule has none such. */
int run_var(struct run *r, const char *name);
struct tr_thread *run_binding(struct run *r, const char *name);
/* A thread variable bound to th, NULL if none. */
const char *run_var_of(struct run *r, struct tr_thread *th);
/* Every variable bound to th, in declaration order, joined by commas
 * ("A,B": `thread B = A` names it twice), into buf; "" for none. */
void run_vars_of(struct run *r, struct tr_thread *th, char *buf, size_t len);
void run_unbind(struct run *r, int var);
void run_bind(struct run *r, int var, struct tr_thread *th);
int run_choose_value(void *hook, const struct expr *e, int n);
/* The wait loop, shared with `continue`. */
enum flow run_wait_for(struct run *r, const struct stmt *s, struct tr_thread **targets,
		       int ntargets, int need, struct tr_thread **matched);

int run_predicate_holds(struct run *r, struct current_event *cur, bool *holds);
/* fine.c: the event the stepper last had judged true for th. */
struct current_event fine_matched_event(struct run *r, struct tr_thread *th);
void run_note_process_event(struct run *r, const struct tr_event *ev);
bool run_note_entry(struct run *r, const struct tr_event *ev);
/* Resume a candidate of the current wait: to its next instruction-level
 * event under the stepper, else plainly.  1 if it matched on the spot. */
int run_move_candidate(struct run *r, struct tr_thread *th);

/* fine.c */
void fine_plan(struct run *r, const struct expr *pred);
int fine_advance(struct run *r, struct tr_thread *th);
int fine_settle(struct run *r, struct tr_thread *th);
void fine_unplant(struct run *r);
void fine_forget_process(struct run *r, struct tr_process *p);

/* blocked.c */
/* Is the spinlock at lock_addr taken, for the pthread_spin_lock at entry?
 * (glibc's x86-64 assembly, `lock decl (%rdi)` first, takes a positive
 * int as free, as its unlock stores 1; its generic C code a zero one.) */
/* A statement named a thread variable bound to nothing: why, reported. */
void run_report_unbound(struct run *r, const struct stmt *s, const char *name);
bool spinlock_taken(struct tr_process *p, uint64_t entry, uint64_t lock_addr);
/* When to sample the targets of a wait that began at started (ms) next. */
int64_t blocked_poll_deadline(struct run *r, bool has_targets, int64_t started, int64_t deadline);
bool blocked_targets(struct run *r, struct tr_thread **targets, int n);
/* nanosleep, clock_nanosleep: a sleep that ends by itself, not a wait */
bool syscall_sleeps_for_time(long nr);
enum flow blocked_end(struct run *r, const struct stmt *s, struct tr_thread **targets, int n,
		      bool *again);
/* blocked_end for a target already held where it would sleep (a futex
 * wait's entry, entry_blocks): what its block means, as blocked_end says. */
enum flow blocked_at_entry(struct run *r, const struct stmt *s, struct tr_thread *th, bool *again);
void blocked_forget(struct run *r, struct tr_thread *except);
void report_deadlock(struct run *r, const struct stmt *s);
/* After the schedule, every thread let go: true once every live thread has
 * slept in the same call, for the program (not the outside), with no
 * context switch, for for_ms; *since (-1 to start) keeps when that began. */
bool blocked_program_stuck(struct run *r, int64_t *since, int64_t for_ms);
/* The bug such a program is once the schedule has let every thread go. */
void report_hang_after_schedule(struct run *r);
/* choose found every thread it may choose blocked: true if one can go on
 * now (choose again), false if the run is over (outcome reported). */
bool blocked_choose_again(struct run *r, const struct stmt *s, struct tr_thread **choices, int n);
/* Append to buf what th sleeps waiting for, if that can be told
 * (", waiting for B (p1.t3), which the schedule holds"). */
void blocked_describe(struct run *r, struct tr_thread *th, char *buf, size_t len);

/* ready.c: would th's sleeping system call nr (with args) return now, what
 * it waits for being there (input, room to write, a child's exit)?  1 yes,
 * 0 no, -1 cannot tell. */
int call_would_return(struct tr_thread *th, long nr, const uint64_t args[TRACER_SYSCALL_ARGS]);

/* wakes.c: futex wakes that reach a thread held in its wait. */
bool futex_op_waits(uint64_t op);
bool futex_op_wakes(uint64_t op); /* wakes waiters on its first word */
/* A futex word that held the tid value of a thread of p and reads word:
 * was it cleared by that thread's exit (CLONE_CHILD_CLEARTID), which
 * wakes its waiters with no FUTEX_WAKE of the program's to see? */
bool futex_cleared_at_exit(struct run *r, struct tr_process *p, uint32_t word, uint32_t value);
/* th, held in a futex wait or at its entry, returns 0 from it when it runs. */
void futex_wait_returns_woken(struct tr_thread *th);
/* ...or returns ETIMEDOUT, as a timed wait whose time ran out */
void futex_wait_times_out(struct tr_thread *th);
/* th, at a system call's entry stop, is about to make a futex wait on a
 * word that holds the value it waits for: it would sleep, as no other
 * thread runs (a serialized step, the search's or a replay's). */
bool futex_entry_sleeps(struct tr_thread *th);
/* Stopped by an interrupt inside a system call: one it would restart,
 * or one the interrupt ended with EINTR. */
bool interrupted_in_syscall(struct tr_thread *th);
/* Who made the futex wait th stands in or at (just past its syscall
 * instruction), one definition for the search and the replays: libc's
 * own synchronisation (a lock, a condition variable, a join: libc changes
 * the word before each wake, and a changed word ends the wait); the
 * program's own futex call (libc's syscall(), or a syscall instruction in
 * its text, program_text: only a wake ends it); or another library
 * (ThreadSanitizer's runtime, libgomp: its wakes are watched, and a
 * changed word ends it too, as the kernel may end it with no wake to
 * see).  Looked up once per thread and place. */
enum wait_maker futex_wait_maker(struct run *r, struct tr_thread *th);
/* Is the mapped file `file` the program's own text: the executable exe,
 * or a library beside it rather than the system's (serial.c)? */
bool program_text(const char *file, const char *exe);
/* th was just stopped asleep in a system call (the order wakes go in). */
void wakes_note_held(struct run *r, struct tr_thread *th);
/* th, held in a futex wait, would return from it: woken, or its word changed. */
bool wakes_wait_ends(struct run *r, struct tr_thread *th);
/* A serialized replay's th, held in a timed wait nothing ended, would time
 * out at once when it runs (the search times a wait out only when no other
 * thread can run, or at any choice with --early-timeouts). */
bool wakes_times_out_now(struct run *r, struct tr_thread *th);
/* Every resume of a schedule's thread (its state of the last stop is over). */
void wakes_before_resume(struct run *r, struct tr_thread *th);
/* Does the serialized search drive this run?  It models wakes and sleeps itself. */
bool run_searching_serially(const struct run *r);

/* sleeps.c: in a serialized run a sleep takes no time. */
/* name is one of the sleep functions (nanosleep, usleep, ...). */
bool sleep_function(const char *name);
/* th, held at a sleep function's entry, returns from it at once with 0,
 * unless it has skipped its share (*skipped counts them); true if it does. */
bool sleep_returns_now(struct tr_thread *th, long *skipped);
/* A serialized replay keeps a breakpoint at each sleep function of p. */
int sleeps_arm(struct run *r, struct tr_process *p);
/* A serialized replay resumes th: held at a sleep's entry, it returns now. */
void sleeps_before_resume(struct run *r, struct tr_thread *th);
/* Resume th, watching its system calls while another is held in a wait. */
int wakes_resume(struct run *r, struct tr_thread *th);
/* wakes_resume's resume alone, for a thread stopped at a system call's
 * entry, which goes into that call (wakes_before_resume there would time
 * out a timed wait at once): watched while a wake may be owed. */
int wakes_resume_on(struct run *r, struct tr_thread *th);
/* A system call's entry: its wakes delivered; true if the stop was only
 * wakes_resume's, and th is resumed. */
bool wakes_syscall_entry(struct run *r, const struct tr_event *ev);

/* driver.c */
pid_t run_start_driver(struct run *r, const char *cmd, bool quiet);
void run_stop_driver(pid_t pid);

/* choose.c */
enum flow exec_choose_thread(struct run *r, const struct stmt *s);
enum flow exec_let(struct run *r, const struct stmt *s);
enum flow exec_assume(struct run *r, const struct stmt *s);
int run_local_slot(struct run *r, const char *name);
void run_record(struct run *r, const struct stmt *s);
void run_record_end(struct run *r, const struct stmt *s);

/* serial.c */
enum flow exec_serial(struct run *r, const struct stmt *s);
/* An instruction --points all makes a point: one that accesses memory
 * other than the stack. */
bool serial_access_insn(const struct dis_insn *insn);
/* serialvars.c: the shared variables of serialized runs (see there). */
struct serial_vars;
struct serial_vars *svars_new(struct engine_serial *cfg);
void svars_free(struct serial_vars *v);
/* The main process's symbols; profiling: the allocation functions' entries
 * planted.  -1 on error. */
int svars_plant(struct serial_vars *v, struct run *r, struct tr_process *p, struct sym_space *syms);
/* A breakpoint at addr: 1 an allocation's, handled (th resumed), 0 not
 * (or also a point), -1 on error. */
int svars_break(struct serial_vars *v, struct run *r, struct tr_thread *th, uint64_t addr);
/* Profiling: the key of the variable holding addr, -1 if none. */
int svars_key(struct serial_vars *v, uint64_t addr);
/* Profiling: the variable of key is shared, and pc touched it; -1 ENOMEM. */
int svars_add_shared(struct serial_vars *v, int key, uint64_t pc);
/* The "exit" variable (the process's end), added if profiling; -1: none. */
int svars_exit(struct serial_vars *v, bool profiling);
/* The variable (index in cfg->vars) of an access by pc to addr (0:
 * unknown), -1 if none. */
int svars_var_at(struct serial_vars *v, uint64_t pc, uint64_t addr);
/* After `serial`, a thread never bound is held where it started. */
bool serial_keeps(struct run *r, struct tr_thread *th);

/* step.c */
enum flow exec_step(struct run *r, const struct stmt *s);
enum flow exec_next(struct run *r, const struct stmt *s);
enum flow exec_finish(struct run *r, const struct stmt *s);
enum flow exec_hold(struct run *r, const struct stmt *s);
enum flow exec_bind(struct run *r, const struct stmt *s);

/* One executable file mapping of a process (/proc/PID/maps). */
struct text_mapping {
	uint64_t lo, hi;
	char *file;
};
struct text_maps {
	char *exe; /* the process's executable */
	struct text_mapping *maps;
	int n, cap;
	/* every mapping no one may write (text, constants, the GOT after
	 * relocation): a read there is never a race */
	struct text_range_ro {
		uint64_t lo, hi;
	} * readonly;
	int nreadonly, readonly_cap;
};
int text_maps_read(pid_t pid, struct text_maps *out);
void text_maps_free(struct text_maps *m);
bool text_maps_readonly(const struct text_maps *m, uint64_t addr);

/* A search restarts the same program in the same layout (no ASLR): the
 * symbol tables of a run are good for the next while the file-backed
 * mappings are the same.  One entry; owned by the search. */
struct symbol_cache {
	uint64_t maps_hash;
	struct sym_space *syms;
	/* processes of the current run reading syms (their proc_ctx): while
	 * one does, a process of another layout (a child that executed a
	 * program) reads a space of its own instead of replacing it */
	int lent;
	/* A pristine fork of the template (tracer_process_pristine) has the
	 * template's layout: its hash and text mappings are read from /proc
	 * once a search, not in every run (two reads of maps, 50 us a run). */
	uint64_t template_hash; /* 0: not known yet */
	struct text_maps template_texts;
	bool template_texts_read;
	/* engine_load_cached: the program's offline symbols, for checking
	 * schedule after schedule; the file as it was when they were read */
	struct sym_space *offline;
	char *offline_path;
	struct stat offline_stat;
};
/* The text mappings of p: the cache's for a pristine fork, else read into
 * own (text_maps_free it).  NULL if they cannot be read. */
const struct text_maps *text_maps_of(struct run *r, struct tr_process *p, struct text_maps *own);
void symbol_cache_free(struct symbol_cache *c);

/* atoms.c: one row per event atom (see its design comment). */
struct atom_plan {
	unsigned want; /* DIS_WANT_* the stepper must decode for */
	bool syscalls; /* system call entries */
	bool lvalues;  /* read(X)/write(X) */
};
struct atom {
	struct atom_syntax syntax; /* first: an atom expression's ->atom points here */
	/* What the stepper must decode for it; NULL: nothing */
	void (*plan)(const struct expr *e, const struct run *r, struct atom_plan *pl);
	/* Plants what makes the tracer stop for it in process p, in pass 0
	 * then pass 1 (read watches before write ones); NULL: nothing */
	int (*arm)(struct run *r, struct tr_process *p, const struct expr *e, int pass);
	/* Does the tracer's event (at->fine NULL) satisfy it?  NULL: never */
	bool (*match)(struct run *r, const struct expr *e, const struct current_event *at);
	/* Does the stepper's event (at->fine) satisfy it?  NULL: never */
	bool (*match_fine)(struct run *r, const struct expr *e, const struct current_event *at);
	/* What the trace adds after the atom that matched ev; NULL: nothing */
	void (*describe)(const struct expr *e, const struct tr_event *ev, char *buf, size_t len);
	bool tracks_returns; /* return(F): the wait keeps frames of F (points_note_break) */
	unsigned access;     /* read/write: DIS_READ or DIS_WRITE */
};
/* The row of atom expression e. */
const struct atom *atom_of(const struct expr *e);
/* The syntax of the atom called name (NULL if none), for atoms the engine
 * builds itself. */
const struct atom_syntax *atoms_find(const char *name);
bool atom_matches(struct run *r, const struct expr *e, const struct current_event *at);

/* points.c */
/* The mechanisms atoms.c arms and matches with. */
uint64_t points_func_addr(struct run *r, struct tr_process *p, int func); /* 0 if unknown */
/* Is addr the first byte of an instruction of p, decoded from its
 * function's (or section's) start?  0, or -1 after reporting the error,
 * naming the location as what ("at(w+0x5)"). */
int points_check_insn_start(struct run *r, struct tr_process *p, uint64_t addr, const char *what);
/* The entries of func's inlined copies in p (sym_inline_sites); NULL when
 * memory is exhausted. */
struct loc_addrs *points_func_inlined(struct run *r, struct tr_process *p, int func);
/* Is addr where func begins in p: its entry, or an inlined copy's? */
bool points_enters_func(struct run *r, struct tr_process *p, int func, uint64_t addr);
struct loc_addrs *points_loc_addrs(struct run *r, struct tr_process *p, int loc);
int points_arm_breakpoint(struct run *r, struct tr_process *p, uint64_t addr);
/* One that points_arm_breakpoint armed, or that p has from the process it
 * was forked from, removed now (the others stay). */
void points_disarm_breakpoint(struct run *r, struct tr_process *p, uint64_t addr);
/* read(X)/write(X): a watchpoint, or X's place for the stepper. */
int points_arm_access(struct run *r, struct tr_process *p, const struct expr *e);
struct proc_ctx *run_proc(struct run *r, struct tr_process *p);
struct thread_ctx *run_thread(struct run *r, struct tr_thread *th);
int points_arm(struct run *r, const struct expr *pred);
void points_disarm(struct run *r);
void points_flush(struct run *r);
/* A debug-register watch of the current wait that demonstrably missed an
 * access (its variable changed while armed), or that was forced on a host
 * whose probe says they never trap: why, for the unrealizable report.
 * 1 if buf says something, 0 if there is nothing to say. */
int points_silent_watch(struct run *r, char *buf, size_t len);
/* A watchpoint trapped (the event at hand). */
void points_watch_fired(struct run *r, const struct tr_event *ev);
/* Bookkeeping at a breakpoint stop of a candidate: push a frame at entry
 * of a function whose return is awaited, recognise a return. */
void points_note_break(struct run *r, struct tr_thread *th, const struct tr_event *ev);
/* Frames of functions in the predicate that th is inside now. */
void points_seed_frames(struct run *r, struct tr_thread *th);
/* Judge r->pred against the event cur: 0 and *holds (cur->matched set), or
 * -1 with the outcome reported. */
int points_judge(struct run *r, struct current_event *cur, bool *holds);
/* An evaluation context for a predicate judged against cur (in the
 * process and thread of its event). */
struct eval_ctx points_event_ctx(struct run *r, struct current_event *cur, char *err,
				 size_t errlen);
int points_event_atom(void *hook, void *event, const struct expr *e, bool *out);
/* The access an event made, whether a debug register (cur->ev) or the
 * stepper (cur->fine) found it, as X's part of it for the read(X)/write(X)
 * it matched: false if it was no memory access. */
bool points_event_access(struct run *r, const struct current_event *cur, struct tr_step_event *out);
int points_thread_cond(void *hook, void *event, const struct expr *e, bool *out);
/* proc(T): the pid of bound thread T's process; -1 if T is not bound. */
int points_thread_value(void *hook, const struct expr *e, int64_t *out);
/* Unwind a held thread (its cached registers written back first). */
int run_backtrace(struct run *r, struct tr_thread *th, struct sym_frame *frames, int max);
/* Every frame of th's stack, however deep, in *frames (malloc'd, the
 * caller's to free); how many, or -1. */
int run_backtrace_all(struct run *r, struct tr_thread *th, struct sym_frame **frames);
struct eval_ctx points_eval_ctx(struct run *r, struct tr_process *p, char *err, size_t errlen);
struct tr_process *run_main_process(struct run *r);
/* The function pc of p is in (loc: sym_describe's of it), or, in code no
 * function covers (a stripped program), MODULE+0xOFF as at() names it. */
void report_code_name(struct run *r, struct tr_process *p, uint64_t pc, const struct sym_loc *loc,
		      char *buf, size_t len);

/* report.c */
void report_event(struct run *r, const struct current_event *cur);
/* --trace-chrome (chrome.c): keep an event; write the document at the end
 * of the run; free what was kept. */
void chrome_note_event(struct run *r, const struct tr_event *ev, const char *what,
		       const struct sym_loc *loc);
/* The schedule lets th go: the end of the slice its last trace line began. */
void chrome_note_release(struct run *r, struct tr_thread *th);
void chrome_finish(struct run *r);
void chrome_free(struct run *r);
void report_outcome(struct run *r, enum engine_outcome o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void report_stack(struct run *r, struct tr_thread *th);
void report_stack_to(struct run *r, struct tr_thread *th, FILE *f);
void report_deferred_trace(struct run *r, FILE *f, const struct run_hooks *hooks);
void report_threads(struct run *r);
double run_elapsed_ms(const struct run *r);

/* --- tap.c --- */
/* Hand the event that satisfied the predicate to r->tap's hook. */
void tap_note(struct run *r, const struct current_event *cur);
/* In a profile whose wait decodes: is th to be decoded at this move? */
bool tap_decodes(struct run *r, struct tr_thread *th);

/* --- watchmode.c --- */
/* tracer_hw_watchpoints_fire's answer if it was asked, -2 if not. */
int watchmode_probed(void);

/* --- interp.c --- */
struct run_report;
/* stderr.c: the launched program's stderr into a temporary file (its fd,
 * -1 on error) while *saved keeps cctrace's; then put back. */
int stderr_capture_begin(int *saved);
/* tracer_launch, with the environment a traced program needs: its
 * LeakSanitizer off unless $ASAN_OPTIONS or $LSAN_OPTIONS name
 * detect_leaks (it cannot run under ptrace, and fails the program's
 * exit).  Every launch of the engine's goes through here. */
int launch_traced(struct tracer *t, char *const argv[], char *err, size_t errlen);
void stderr_capture_end(int saved);
/* The first line of a sanitizer's report in the file, into line. */
bool stderr_sanitizer_report(int fd, char *line, size_t len);
/* The file to cctrace's stderr, and closed. */
void stderr_forward(int fd);
/* Its last max bytes or fewer, from a line's start (malloc'd), or NULL
 * when it is empty. */
char *stderr_tail(int fd, size_t max);

/* snapshot.c: t's p1 forked from s's template (made by the first call),
 * held at its entry as after tracer_launch, and *program_stderr the run's
 * own stderr when opt->sanitizer_bugs: 1.  0 when the template cannot
 * be used (the caller launches afresh; engine_snapshot_fallback says
 * why); -1 with err when the child could not be taken over. */
int snapshot_launch(struct engine_snapshot *s, struct tracer *t, char *const argv[],
		    const struct engine_options *opt, int *program_stderr, char *err,
		    size_t errlen);
/* The points a serialized run planted at its start in p (its p1, not yet
 * run), planted in the template too, so that the next runs start with
 * them (tracer_adopt).  Not an error when it cannot: the runs plant them. */
void snapshot_learn_points(struct engine_snapshot *s, struct tr_process *p);

/* program_stderr: the file of stderr_capture_begin, or -1; it is
 * forwarded and closed at the end. */
enum engine_outcome interp_execute(struct policy *pol, struct tracer *t,
				   const struct engine_options *opt, bool launched,
				   int program_stderr);

#endif
