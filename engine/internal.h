/*
 * run.h: the state of one execution of a schedule (internal to policy/).
 *
 * interp.c walks statements and owns the wait loop, points.c turns the
 * events of a predicate into armed breakpoints and watchpoints in every
 * process and tells which event atom a stop satisfies, report.c writes the
 * trace and the outcome.
 */
#ifndef CCTRACE_POLICY_RUN_H
#define CCTRACE_POLICY_RUN_H

#include "engine/engine.h"
#include "lang/lang.h"
#include "search/search.h"

#define MAX_FRAMES	64

/* Per traced process: its symbols and the addresses the schedule's names
 * resolve to there (resolved on first use, reset on exec). */
struct proc_ctx {
	struct sym_space *syms;
	uint64_t *func_addr; /* [nfuncs]; 0 = not resolved yet, 1 = absent */
	int nfuncs, nlocs;   /* sizes; the shell's tables grow as it goes */
	bool syms_borrowed;  /* from the search's symbol cache: not ours to close */
	struct loc_addrs {
		bool resolved;
		size_t n;
		uint64_t addrs[16];
	} * locs; /* [nlocs] */
};

/* A frame of a function whose return the current wait is waiting for. */
struct ret_frame {
	int func;
	uint64_t ret_addr;
	uint64_t sp_after; /* rsp once it has returned */
};

/* Per traced thread. */
struct thread_ctx {
	int bound;		  /* a thread variable bound to it, -1 if unbound */
	int primary;		  /* the variable a wait or bind first gave it, for replays */
	bool candidate;		  /* may satisfy the current wait */
	bool matched;		  /* satisfied it (and is held) */
	int returned_func;	  /* the func whose return this stop is, -1 if none */
	struct ret_frame *frames; /* grows: a recursion has no fixed depth */
	int nframes, frames_cap;
	char kernel_state[128]; /* captured for reports before threads are stopped */
	char last_event[160];	/* the last scheduling event, as the trace names it */
	bool blocked;		/* ran into the kernel and stayed there (blocked.c) */
	int last_var;		/* watched variable of its last event, -1 if none */
	bool sampled;
	struct tr_kernel_sample sample;
	/* the stepper (fine.c, tracer/stepper.c) */
	bool skip_syscall_entry; /* its system call's entry stop is next, and is not news */
	struct tr_step_event judged; /* the event being judged (r->fine), kept until reported */
	/* in(F): the functions on its stack, unwound once per stop */
	uint64_t stack_stop, stack_pc, stack_sp;
	int nstack;
	const char *stack_funcs[MAX_FRAMES];
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
};

enum flow { FLOW_NEXT, FLOW_STOP };

struct run {
	struct policy *pol;
	struct schedule *sched; /* the statements running, for diagnostics */
	int nbindings;
	bool interactive;    /* a shell session: Ctrl-C holds, not ends */
	bool all_candidates; /* `continue`: bound threads run and match too */
	bool no_deadline;
	const char *label;     /* trace text for step/next/finish events */
	struct search *oracle; /* explore: resolves choose; NULL: first value */
	bool abandoned;	       /* the oracle stopped this run (another shard's) */
	FILE *record;	       /* explore: the run as an exact schedule */
	int64_t *locals;       /* let/for variables */
	int nlocals;
	struct tr_thread *last_run;	   /* the thread the last run/step moved (cb) */
	bool no_drain;			   /* deadlock, driver ended: do not wait for the end */
	bool has_driver;		   /* explore --driver: its exit ends the run */
	bool deferred_trace;		   /* keep raw events; name them only on demand */
	int64_t symbols_us;		   /* time spent opening symbol tables */
	struct symbol_cache *symbol_cache; /* explore: tables kept across runs */
	struct deferred_event {
		double ms;
		struct tr_thread *thread;
		uint64_t pc;
		char what[160];
	} * deferred;
	int ndeferred, deferred_cap;
	bool blocked_event; /* the event being evaluated is "blocked" */
	bool ended_blocked; /* the statement ended with threads blocked */
	struct tracer *t;
	const struct engine_options *opt;
	bool launched;
	struct tr_thread **bindings; /* [pol->nthreads] */
	int64_t timeout_ms;
	int64_t t0_ms;
	enum engine_outcome outcome;
	bool finished;
	/* the wait in progress */
	const struct stmt *stmt;
	const struct expr *pred;
	struct tr_thread **targets; /* the threads a `run` moves (NULL for a `wait`) */
	int ntargets;
	uint64_t *return_funcs;		 /* bit f: the predicate waits for return(funcs[f]) */
	int return_words;		 /* ...in this many words (the shell adds functions) */
	bool any_return;		 /* ...and at least one bit is set */
	const struct tr_event *event;	 /* being evaluated */
	const struct expr *matched_atom; /* first atom the event satisfied */
	uint64_t stops;			 /* events seen; keys per-stop caches */
	unsigned fine_want;		 /* DIS_WANT_* the stepper decodes for; 0: none */
	bool fine_syscalls;		 /* resume candidates to system call entries */
	const struct tr_step_event *fine;	 /* the instruction-level event being judged */
	struct tr_event fine_ev;	 /* ...as the trace shows it */
	struct decoded_lvalue {		 /* read(X)/write(X) matched by decoding */
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
void run_timed_out(struct run *r, const struct stmt *s);
enum flow run_driver_ended(struct run *r, const struct tr_event *ev);
void run_interrupted(struct run *r, int signo);
/* The index of thread variable name, -1 if the schedule has none such. */
int run_var(struct run *r, const char *name);
struct tr_thread *run_binding(struct run *r, const char *name);
/* A thread variable bound to th, NULL if none. */
const char *run_var_of(struct run *r, struct tr_thread *th);
void run_unbind(struct run *r, int var);
void run_bind(struct run *r, int var, struct tr_thread *th);
int run_choose_value(void *hook, const struct expr *e, int n);
/* The wait loop, shared with `continue`. */
enum flow run_wait_for(struct run *r, const struct stmt *s, struct tr_thread **targets,
		       int ntargets, int need, struct tr_thread **matched);

int run_predicate_holds(struct run *r, const struct tr_event *ev, bool *holds);
void run_note_process_event(struct run *r, const struct tr_event *ev);
/* Resume a candidate of the current wait: to its next instruction-level
 * event under the stepper, else plainly.  1 if it matched on the spot. */
int run_move_candidate(struct run *r, struct tr_thread *th);

/* fine.c */
void fine_plan(struct run *r, const struct expr *pred);
int fine_advance(struct run *r, struct tr_thread *th);
int fine_settle(struct run *r, struct tr_thread *th);
void fine_forget(struct run *r, struct tr_thread *th);
void fine_unplant(struct run *r);
void fine_forget_process(struct run *r, struct tr_process *p);

/* blocked.c */
int64_t blocked_poll_deadline(struct run *r, bool has_targets, int64_t deadline);
bool blocked_targets(struct run *r, struct tr_thread **targets, int n);
enum flow blocked_end(struct run *r, const struct stmt *s, struct tr_thread **targets, int n,
		      bool *again);
void blocked_forget(struct run *r, struct tr_thread *except);
void report_deadlock(struct run *r, const struct stmt *s);
/* choose found every thread it may choose blocked: true if one can go on
 * now (choose again), false if the run is over (outcome reported). */
bool blocked_choose_again(struct run *r, const struct stmt *s, struct tr_thread **choices, int n);
/* Append to buf what th sleeps waiting for, if that can be told
 * (", waiting for B (p1.t3), which the schedule holds"). */
void blocked_describe(struct run *r, struct tr_thread *th, char *buf, size_t len);

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

/* step.c */
enum flow exec_step(struct run *r, const struct stmt *s);
enum flow exec_next(struct run *r, const struct stmt *s);
enum flow exec_finish(struct run *r, const struct stmt *s);
enum flow exec_hold(struct run *r, const struct stmt *s);
enum flow exec_bind(struct run *r, const struct stmt *s);

/* A search restarts the same program in the same layout (no ASLR): the
 * symbol tables of a run are good for the next while the file-backed
 * mappings are the same.  One entry; owned by the search. */
struct symbol_cache {
	uint64_t maps_hash;
	struct sym_space *syms;
};
void symbol_cache_free(struct symbol_cache *c);

/* points.c */
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
/* Bookkeeping at a breakpoint stop of a candidate: push a frame at entry
 * of a function whose return is awaited, recognise a return. */
void points_note_break(struct run *r, struct tr_thread *th, const struct tr_event *ev);
/* Frames of functions in the predicate that th is inside now. */
void points_seed_frames(struct run *r, struct tr_thread *th);
int points_event_atom(void *hook, const struct expr *e, bool *out);
/* The access an event made, whether a debug register (ev) or the stepper
 * (fe) found it: false if it was no memory access. */
bool points_event_access(struct run *r, const struct tr_event *ev, const struct tr_step_event *fe,
			 struct tr_step_event *out);
int points_thread_cond(void *hook, const struct expr *e, bool *out);
/* proc(T): the pid of bound thread T's process; -1 if T is not bound. */
int points_thread_value(void *hook, const struct expr *e, int64_t *out);
/* Unwind a held thread (its cached registers written back first). */
int run_backtrace(struct run *r, struct tr_thread *th, struct sym_frame *frames, int max);
struct eval_ctx points_eval_ctx(struct run *r, struct tr_process *p, char *err, size_t errlen);
struct tr_process *run_main_process(struct run *r);

/* report.c */
void report_event(struct run *r, const struct tr_event *ev);
void report_outcome(struct run *r, enum engine_outcome o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void report_stack(struct run *r, struct tr_thread *th);
void report_stack_to(struct run *r, struct tr_thread *th, FILE *f);
void report_deferred_trace(struct run *r, FILE *f);
void report_threads(struct run *r);
double run_elapsed_ms(const struct run *r);

/* --- watchmode.c --- */
/* tracer_hw_watchpoints_fire's answer if it was asked, -2 if not. */
int watchmode_probed(void);

/* --- interp.c --- */
struct run_report;
enum engine_outcome interp_execute(struct policy *pol, struct tracer *t,
				   const struct engine_options *opt, bool launched);

#endif
