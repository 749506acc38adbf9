/*
 * engine: running a schedule on a program, launched or attached.
 *
 * Contract.  engine_load() parses a schedule (lang/) and checks it against
 * the program's symbols, so that a misspelt function, an unknown system
 * call or a type error is reported with file:line:col and a caret before
 * anything is launched or attached.  engine_run_program() and
 * engine_run_attached() then execute it and return one outcome; every run
 * ends with that outcome reported on opt->report, and:
 *   - an attached process is always left running, detached, with its code
 *     bytes, debug registers, signal actions and CPU masks as they were, on
 *     every path (end of schedule, timeout, bug, Ctrl-C and every other
 *     catchable signal; tracer/guardian.c covers SIGKILL and crashes);
 *   - a launched program is run to its end after the schedule, still
 *     watched for crashes, or killed on error or Ctrl-C;
 *   - signals meant for the program are delivered, never swallowed.
 * Execution follows CONCURRIT's select/release model: threads bound by
 * `wait` are held unless a `run` lets them go, unbound threads run
 * freely, and when the schedule ends every thread is released.
 *
 * Inside, one event loop (loop.c) is the only caller of tracer_wait, one
 * table (atoms.c) defines every event atom, and struct run
 * (engine/internal.h) is the state of one execution.  Sessions (the
 * shell's) hold a program between statements given as text.
 *
 * A search (search/) restarts the program through engine_run_once() (a
 * fresh launch, or a fork of a template held at the entry point: struct
 * engine_snapshot) and resolves the schedule's `choose` through the hook
 * it passes: that is the engine's only way to the search, which it does
 * not include.
 *
 * This module never calls ptrace; it drives tracer/ and asks symbols/.
 * Not thread-safe: one run at a time per process.
 */
#ifndef CCTRACE_ENGINE_H
#define CCTRACE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum engine_outcome {
	OUTCOME_COMPLETED,    /* the schedule ran to its end and the program behaved */
	OUTCOME_BUG,	      /* fatal signal, failed assert, or bad exit with fail_on_exit */
	OUTCOME_UNREALIZABLE, /* a wait timed out, or the program ended before it could match */
	OUTCOME_ERROR,	      /* schedule, symbol or system error; interrupted */
	OUTCOME_INFEASIBLE,   /* an assume() was false: the search moves on */
};

/* Process exit codes, one per outcome (documented in README). */
#define EXIT_COMPLETED	  0
#define EXIT_BUG	  1
#define EXIT_UNREALIZABLE 2
#define EXIT_ERROR	  3
#define EXIT_UNEXPECTED	  4 /* --expect was given and the outcome differs */
#define EXIT_INFEASIBLE	  5

/* How read(X)/write(X) are watched (--watchpoints, $CCTRACE_WATCHPOINTS). */
enum engine_watchpoints {
	WATCHPOINTS_DEFAULT, /* $CCTRACE_WATCHPOINTS if set, else auto */
	WATCHPOINTS_AUTO,    /* debug registers where a probe shows they trap */
	WATCHPOINTS_HW,	     /* debug registers DR0-DR3 */
	WATCHPOINTS_SW,	     /* the decode-ahead stepper (fine.c) */
};

struct engine_options {
	bool fail_on_exit;   /* a non-zero exit status of the program is a bug... */
	uint64_t ok_exit[4]; /* ...unless its bit is set here (--ok-exit N) */
	bool sanitizer_bugs; /* launched: a sanitizer's report in the program's stderr is
			      * a bug (its stderr is shown when it has ended) */
	bool quiet_program;  /* launched: nothing of the program's stdout and stderr is
			      * shown (a search's own replays); a sanitizer's report is
			      * still read */
	/* launched: the program's stdout is cctrace's stderr, so that stdout
	 * carries --json's summary alone */
	bool program_stdout_to_stderr;
	/* A search's runs and replays of one program: its symbol tables are
	 * kept from one run to the next, as it restarts in the same layout
	 * (engine_symbol_cache_new; opaque, owned by the caller); NULL: each
	 * run opens its own. */
	struct symbol_cache *symbol_cache;
	int64_t timeout_ms; /* default limit of every wait; 0 = 10 s */
	FILE *trace;	    /* human trace, one line per scheduling event; NULL = none */
	FILE *trace_json;   /* the same as JSON lines; NULL = none */
	FILE *trace_chrome; /* run, attach: the Trace Event Format, written at the end */
	FILE *report;	    /* outcome and diagnostics (stderr) */
	bool pin_cpu;	    /* run cctrace and the threads it drives on one CPU */
	bool brief;	    /* outcome lines only, no stacks (replays that only
			     * need the verdict) */
	const char *driver; /* a client started once the program is under control; the
			     * run ends when it exits (non-zero: bug) */
	bool include_stack; /* bare read/write match stack accesses (rsp/rbp) too */
	bool single_step;   /* instruction-level events by PTRACE_SINGLESTEP, not by
			     * decoding ahead (the reference for tests and bench) */
	enum engine_watchpoints watchpoints;
	bool no_children; /* attach: the pid alone, not its descendants, and not the
			   * processes it forks (let go at birth) */
	int end_order;	  /* 0: at the end every thread is let go at once; 1 / -1: the
			   * bound ones one at a time, each until it exits or blocks, in
			   * binding order / its reverse (minimisation's replays) */
	/* A search's runs: a run still going at this time (engine_now_ms's
	 * clock) is ended there, the program killed, and its result says
	 * out_of_time (a wait that never ends would hold --time off for
	 * ever); 0: none. */
	int64_t end_by_ms;
	int64_t drain_ms; /* after the schedule, the program's end is awaited this
			   * long (0: for ever); longer is an unrealizable run, not a
			   * hang (minimisation's replays: a dropped step may leave
			   * the program deadlocked for real) */
	/* engine_run_program, engine_run_attached: not NULL, it gets a
	 * malloc'd copy of the outcome's why (what follows "cctrace: OUTCOME:
	 * "), or NULL; the caller frees it (--junit) */
	char **outcome_message;
	/* engine_run_program: not NULL, set to whether the outcome owes
	 * nothing to the race of threads let go at once at the schedule's
	 * end: it came while the schedule ran (a bug of its steps), or the
	 * end ran the threads one at a time (end_order, `serial`) */
	bool *before_release;
	/* engine_run_program: not NULL, it gets a malloc'd copy of the end
	 * (PROGRAM_STDERR_KEPT bytes, from a line's start) of what the
	 * launched program wrote to its stderr, when that was captured
	 * (sanitizer_bugs) and the run ended in a bug, or NULL (left as it
	 * is): a failed assert's own words, an uncaught exception's what(),
	 * for the bug's report */
	char **program_stderr;
};
#define PROGRAM_STDERR_KEPT 4096

struct policy;

/*
 * Parse and check the schedule at path.  For a launch, program is the path
 * of the executable (its symbols and those of its libraries are read
 * offline); for an attach, pid is the running process (its maps are read;
 * nothing is attached yet).  On error returns NULL with a printable
 * diagnostic in err.
 */
struct policy *engine_load(const char *path, const char *program, pid_t pid, char *err,
			   size_t errlen);
struct symbol_cache;
/* The same for a launch, the program's offline symbols kept in cache
 * (engine_symbol_cache_new) from one load to the next: a minimisation
 * checks one schedule after another against one program. */
struct policy *engine_load_cached(const char *path, const char *program, struct symbol_cache *cache,
				  char *err, size_t errlen);
void engine_free(struct policy *pol);

/* Launch argv and run the schedule on it; the program is then run to its
 * end (or killed on error or Ctrl-C). */
enum engine_outcome engine_run_program(struct policy *pol, char *const argv[],
				       const struct engine_options *opt);

/* Attach to pid, run the schedule, and detach, leaving it running with its
 * code bytes and debug registers as they were. */
enum engine_outcome engine_run_attached(struct policy *pol, pid_t pid,
					const struct engine_options *opt);

/* --- interactive sessions (the shell) ---
 *
 * A session holds a program under control between commands.  It starts
 * with every thread held.  Statements given as text run exactly as in a
 * schedule file (free threads run during a wait and keep running after it),
 * against the same engine, and the ones that moved threads are recorded so
 * that engine_session_save() writes a schedule that replays the session.
 */
struct engine_session;

struct engine_session *engine_session_launch(char *const argv[], const struct engine_options *opt,
					     char *err, size_t errlen);
struct engine_session *engine_session_attach(pid_t pid, const struct engine_options *opt, char *err,
					     size_t errlen);
/* Detach (attached) or kill (launched) and free. */
void engine_session_end(struct engine_session *s);
/* Release every thread and detach, launched programs included, which then
 * run on by themselves; free. */
void engine_session_detach(struct engine_session *s);

enum session_result {
	SESSION_OK,	/* the statements ran */
	SESSION_FAILED, /* a diagnostic is in err; the session goes on */
	SESSION_OVER,	/* the program is gone (exited, crashed): only saving and quitting remain */
};

/* Run schedule statements, e.g. "run A until enter(withdraw)" or
 * "thread A, B = wait 2 distinct enter(f)".  Ctrl-C during a statement
 * stops the threads it let run and returns SESSION_FAILED ("interrupted"). */
enum session_result engine_session_exec(struct engine_session *s, const char *text, char *err,
					size_t errlen);

/* Serve the free threads' stops for ms (at least 1: a wait whose time
 * has passed reaps nothing) while the prompt waits for a line: they run
 * on between commands (a thread meeting a breakpoint a finished command
 * left would wait for the next one otherwise).  A stop signal is left for
 * the prompt.  SESSION_OVER (the report in err) when the program ended or
 * crashed meanwhile. */
enum session_result engine_session_idle(struct engine_session *s, int ms, char *err, size_t errlen);

/* Write the recorded statements as a schedule file whose first line is
 * the `# run:` command that replays it. */
int engine_session_save(struct engine_session *s, const char *path, char *err, size_t errlen);

struct session_thread {
	char name[24]; /* p1.t3 */
	char var[32];  /* schedule variable bound to it, "" if none */
	pid_t tid, pid;
	char state[48]; /* held, running, blocked in futex, exited */
	char func[512]; /* "" if unknown; a longer name ends in "..." */
	char file[64];	/* basename, "" if unknown */
	int line;
	char last_event[64]; /* "enter(withdraw)", "start", ... */
};

/* Fill up to max entries, in creation order; returns how many threads. */
int engine_session_threads(struct engine_session *s, struct session_thread *out, int max);
/* Does the program still run, or stand held at a bug (a deadlock), where
 * its threads can be looked at? */
bool engine_session_program_alive(struct engine_session *s);
/* The thread the last event that ended a wait, run or step happened in,
 * as gdb's current thread: its stable name (p1.t3) in name, and 0; 1 if
 * it has exited since (its name still given); -1 if there is none yet. */
int engine_session_current_thread(struct engine_session *s, char *name, size_t len);
/* T may be a schedule variable or a stable name (p1.t3). */
int engine_session_backtrace(struct engine_session *s, const char *thread, FILE *out, char *err,
			     size_t errlen);
/* Evaluate an expression in the target and print "SHOWN = VALUE" (shown:
 * the text the user typed, expr's columns; NULL: expr). */
int engine_session_print(struct engine_session *s, const char *expr, const char *shown, FILE *out,
			 char *err, size_t errlen);
/* Where a held thread is: the source path as DWARF names it, and line. */
int engine_session_where(struct engine_session *s, const char *thread, char *path, size_t pathlen,
			 int *line, char *err, size_t errlen);

/* User breakpoints and watchpoints, which `continue` stops at.  spec is a
 * function, FILE:LINE, or (watch) an lvalue expression.  Return the new
 * point's number, or -1 with err. */
int engine_session_break(struct engine_session *s, const char *spec, char *err, size_t errlen);
int engine_session_watch(struct engine_session *s, const char *expr, char *err, size_t errlen);
int engine_session_delete(struct engine_session *s, int number, char *err, size_t errlen);
/* "info breakpoints" (watch == false) or "info watchpoints". */
void engine_session_list_points(struct engine_session *s, bool watch, FILE *out);

/* Let every thread run until one reaches a user breakpoint or watchpoint
 * (it is held and reported), or Ctrl-C (all are held); bound threads are
 * held again where they are. */
enum session_result engine_session_continue(struct engine_session *s, char *err, size_t errlen);

/* Names for completion: kind 0 threads (variables and stable names),
 * 1 functions, 2 global variables. */
void engine_session_names(struct engine_session *s, int kind, const char *prefix,
			  void (*cb)(const char *name, void *ctx), void *ctx);

/* --- one run of a schedule, for a search (search/explore.c) ---
 *
 * A search restarts the program many times and resolves the schedule's
 * `choose` differently each time.  The engine knows nothing of how: it asks
 * hooks->choose at every choice point, in program order, and that is the
 * only way it reaches the search.
 */

/* One choice point: n > 0 options.  For a choice among threads, ids[i] is a
 * stable identity >= 0 of option i (its thread variable), current the id of
 * the thread that ran last (-1: none) and current_var the watched variable
 * (0 .. engine_watched_count()-1) whose access it stopped at (-1: none); ids
 * is NULL for a choice among values.  access[i] is the shared access
 * option i makes first when it goes on (serialized runs only: the
 * instruction it is held at; addr 0 when it is held elsewhere, at a
 * synchronisation function or its start); access is NULL when not known. */
struct engine_access {
	uint64_t addr;
	bool read, write; /* a read-modify-write is both */
	/* what the option is about to do (where it is held, whose call, for a
	 * thread at its start where it was created): options of one kind are
	 * alike, as the 99 writers of SCTBench's twostage_100 (random:2) */
	uint64_t kind;
};
/* A step made without a choice (one thread could go): the thread's id
 * and the access it made first. */
struct engine_step {
	int id;
	struct engine_access access;
};
struct engine_choice {
	int n;
	const int *ids;
	int current;
	int current_var;
	const struct engine_access *access;
	/* serialized runs: the steps made without a choice since the last
	 * one, in order (ib counts their reads and writes); else NULL, 0 */
	const struct engine_step *forced;
	int nforced;
	/* engine_serial.describe only (else NULL): every thread's stable
	 * name by id ("p1.t3"), and where the thread that ran last stopped,
	 * as the recorded schedule writes it ("at(worker+0x1c)",
	 * "enter(pthread_mutex_lock)", "blocked", "exit") */
	const char *const *thread_names;
	const char *current_where;
};
/* What choose answers when the run lies outside the search (another
 * shard's): the run stops at once and is not one of the search's. */
#define ENGINE_CHOICE_ABANDON (-1)

/* A template the runs fork from instead of launching the program afresh
 * (engine/snapshot.c): the program held at its entry point, where every
 * run starts, launched by the first run that uses it.  A run forked from
 * it cannot be told from a launched one.  Opaque, owned by the caller;
 * one process's: a forked worker makes its own.  Free kills the
 * template. */
struct engine_snapshot;
struct engine_snapshot *engine_snapshot_new(void);
void engine_snapshot_free(struct engine_snapshot *s);
/* Why runs were launched afresh although s was given (no _Fork in the
 * program, the template could not be made...), or NULL. */
const char *engine_snapshot_fallback(const struct engine_snapshot *s);

/* One line of the human trace as data (run_hooks.trace_event). */
struct engine_trace_event {
	double ms;
	const char *thread; /* p1.t2 */
	const char *var;    /* the schedule variable bound to it at the run's end; NULL: none */
	const char *event;  /* as the trace names it: "enter(withdraw)", "read(balance) ..." */
	const char *func;   /* as shown (a C++ name demangled); NULL: unknown */
	const char *file;   /* NULL: unknown */
	int line;
	/* The thread that ran last was switched away from although it could
	 * have gone on (it was among a choose's options): the first event
	 * after that choice; NULL otherwise. */
	const char *preempted;
};

/* A shared variable profiling found (engine/serialvars.c): a global
 * [lo, hi) (site 0), or the heap objects allocated at call site `site`
 * (the allocation's return address; lo = hi = 0). */
struct engine_var {
	char name[48]; /* "balance", "heap@queue.c:31" */
	uint64_t lo, hi, site;
};
/* The heap variable an access point touched in profiling. */
struct engine_var_point {
	uint64_t pc;
	int var;
};

/* Serialized execution (`cctrace test`; engine/serial.c): the schedule's
 * `serial` statement runs the whole program with one thread at a time,
 * asking choose (ids: the threads' creation order) at every scheduling
 * point where two or more threads could run. */
struct engine_serial {
	const uint64_t *points; /* instructions that are scheduling points */
	size_t npoints;
	bool all_points; /* also every non-stack access in the executable's text */
	/* a thread held in a timed wait (a timed lock, a condition's or a
	 * semaphore's timed wait, a futex wait with a timeout) is a choice
	 * at every choice, to time out there; false: only when no thread can
	 * run otherwise */
	bool early_timeouts;
	bool profile;	/* record which points touch memory two threads share */
	long max_steps; /* a run taking more is a livelock candidate; 0: the default, */
#define ENGINE_SERIAL_MAX_STEPS 100000 /* ...this */
	/* out: the points found shared (profile; malloc'd, grows over runs) */
	uint64_t *shared;
	size_t nshared;
	long steps_out;	       /* steps of the last run */
	long *preemptions_out; /* NULL, or counts context switches away from a thread
				* that could have gone on */
	/* the shared variables (profile: out, grown over runs, malloc'd; the
	 * search's runs: in, to give each choice its current_var) */
	struct engine_var *vars;
	size_t nvars;
	struct engine_var_point *var_points;
	size_t nvar_points;
	/* ask choose after every step, even with one option, with
	 * thread_names and current_where, and leave no spinning thread out
	 * (following a schedule: bug statistics, search/bugstats.c) */
	bool describe;
	/* ask choose after every step, even with one option, and nothing
	 * else (a search that may have to stop a run at any step: ib) */
	bool every_step;
	/* in/out: the executable's locked instructions (lock prefix, xchg
	 * with memory) were found and are among the points: the first run of
	 * a search finds them, for every --points mode */
	bool locked_found;
	/* in/out: pcs where a thread ran long without a point and came back
	 * with its registers changed, a loop that computes and not a spin:
	 * no point is planted there (malloc'd, grown over runs) */
	uint64_t *not_spins;
	size_t nnot_spins;
	/* out (profile; malloc'd, grown over runs): unlocked read-modify-write
	 * instructions on memory another thread writes, which serialized runs
	 * cannot split (a race the search cannot see: said to the user) */
	struct engine_torn {
		uint64_t pc;
		char where[160]; /* "counter.c:12 (worker+0x8)" */
	} * torn;
	size_t ntorn;
};

/* One event the profile taps (run_hooks.tap; engine/tap.c): a call, a
 * thread's start, or a memory access the stepper decoded. */
struct engine_tap_frame {
	uint64_t pc;
	const char *func;     /* NULL: unknown */
	const char *pretty;   /* func as shown (a C++ name demangled); NULL with func */
	uint64_t func_offset; /* pc's offset in func */
	const char *file;     /* basename; NULL: no line information */
	int line;
	const char *module; /* basename of the ELF file; NULL: unknown */
};
enum engine_tap_kind {
	ENGINE_TAP_CALL,    /* enter(F) or return(F) */
	ENGINE_TAP_START,   /* a new thread's first stop (the start atom) */
	ENGINE_TAP_ACCESS,  /* read or write: a load or store the stepper decoded */
	ENGINE_TAP_SYSCALL, /* syscall(N): about to make system call sysno, by an
			     * instruction anywhere (args: its arguments) */
};
struct engine_tap_event {
	enum engine_tap_kind kind;
	const char *thread; /* stable name, p1.t2 */
	const char *func;   /* the function of the enter(F) or return(F) that matched; NULL
			     * for another kind */
	/* an access: where, how many bytes, a store; pc is its instruction's, and
	 * frames[0] the function that made it (not its caller) */
	uint64_t addr, size;
	bool write;
	long sysno; /* a system call's number */
	bool is_return;
	uint64_t args[6]; /* rdi, rsi, rdx, rcx, r8, r9 (at a return: clobbered) */
	uint64_t retval;  /* rax (meaningful at a return) */
	uint64_t pc;
	uint64_t caller; /* the call's return address: where it was called from */
	uint64_t tls;	 /* fs base: pthread_self() of the thread */
	/* The schedule line of the first alternative of the wait's predicate
	 * (A || B || ...) that holds: a generated profile puts the ones it
	 * must tell apart (a call that succeeded) on lines of their own. */
	int line;
	double ms;   /* since the run started */
	int nframes; /* the call stack, innermost first: frames[0] is the caller */
	const struct engine_tap_frame *frames;
	/* Read the process's memory during the call; 0 or -1. */
	int (*read)(const struct engine_tap_event *ev, uint64_t addr, void *buf, size_t len);
	void *priv;
};

/* The x86-64 system call named name, or -1; its name, or NULL (for the
 * typestate profile's calls of libc's syscall()). */
long engine_syscall_number(const char *name);
const char *engine_syscall_name(long nr);

struct run_hooks {
	/* An option in 0 .. c->n-1, or ENGINE_CHOICE_ABANDON. */
	int (*choose)(void *ctx, const struct engine_choice *c);
	void *ctx;
	FILE *record;			  /* the run as an exact schedule; NULL: none */
	struct engine_snapshot *snapshot; /* NULL: every run is launched afresh */
	/* Keep the trace's raw events and name them (on opt->trace) only at
	 * the end, for a bug, or for every run with trace_every_run: naming
	 * costs more than the run.  opt->trace_json is then not written. */
	bool deferred_trace;
	bool trace_every_run;
	bool quiet_driver; /* opt->driver's output goes to /dev/null */
	/* Given each event of a kept trace as data, in order, as it is named
	 * (the same lines go to opt->trace); NULL: none.  The strings live
	 * only for the call. */
	void (*trace_event)(void *trace_ctx, const struct engine_trace_event *ev);
	void *trace_ctx;
	struct engine_serial *serial; /* NULL: `serial` only holds unbound threads */
	/* A profile (typestate): each event that satisfies a wait's predicate
	 * is handed to tap, with its thread held, and the thread resumes; the
	 * wait never matches, so it lasts until the program ends.  tap_frames:
	 * how many frames of the call stack to give (0: none).  NULL: none.
	 * When the predicate needs decoding (read, write), tap's answer says
	 * whether this thread is to be under the stepper from here on: a
	 * thread no event of which asked for it runs at full speed, so that
	 * only the threads that matter pay for decoding. */
	bool (*tap)(void *tap_ctx, const struct engine_tap_event *ev);
	void *tap_ctx;
	int tap_frames;
	/* A thread the tap asked to decode is decoded for at most this many
	 * of the stepper's stops after the tap's latest event of it (then at
	 * full speed until tap asks again): a window after each event that
	 * matters, not a thread's whole life.  0: no limit. */
	long tap_step_budget;
};

struct run_result {
	enum engine_outcome outcome;
	bool abandoned;	  /* hooks->choose said ENGINE_CHOICE_ABANDON */
	bool out_of_time; /* ended at opt->end_by_ms: not a verdict on the program */
	/* where the time went, in ms: launching up to the program's entry,
	 * opening symbol tables, the schedule (symbols excluded), ending */
	double launch_ms, symbols_ms, schedule_ms, finish_ms;
};

/* Launch argv, run pol's schedule on it with the hooks, and end the program
 * as engine_run_program does.  -1 with err when the run could not be made
 * at all (out of memory, the program cannot be launched); 0 otherwise, the
 * outcome in *out and its report on opt->report. */
int engine_run_once(struct policy *pol, char *const argv[], const struct engine_options *opt,
		    const struct run_hooks *hooks, struct run_result *out, char *err,
		    size_t errlen);

/* Which of names[0..n-1] are functions of program or of the libraries it
 * loads (present[i]), and where (addrs[i], if addrs: two names of one
 * function have one address); 0, or -1 with err if its symbols cannot be
 * read. */
int engine_functions_present(const char *program, const char *const *names, int n, bool *present,
			     uint64_t *addrs, char *err, size_t errlen);

/* Is pid, a process cctrace does not trace, hung: every thread asleep in
 * a futex wait only another of its threads could end, and no signal
 * handler of its own?  *switches gets their context switches, to tell
 * that nothing moved between two looks (tracer_untraced_sleeps_for_good). */
bool engine_untraced_sleeps_for_good(pid_t pid, unsigned long long *switches);

/* Standard input for a search's many runs (engine/input.c): each run reads
 * it from the same start.  engine_input_prepare, once before any run: a
 * regular file is rewound before each run, other input (a pipe) is read
 * to its end and kept, a terminal is left alone; -1 with err when it
 * cannot be kept.  A parallel job calls engine_input_private, for an
 * offset of its own.  engine_input_save writes the kept input to path
 * (for a bug's replay); engine_input_kept says whether there is any. */
int engine_input_prepare(char *err, size_t errlen);
int engine_input_private(void);
void engine_input_rewind(void);
bool engine_input_kept(void);
int engine_input_save(const char *path);

struct symbol_cache *engine_symbol_cache_new(void);
void engine_symbol_cache_free(struct symbol_cache *c);
/* How many variables pol's read(X)/write(X) watch. */
int engine_watched_count(const struct policy *pol);
/* The signal (Ctrl-C, SIGTERM...) that asked cctrace to stop, 0 if none. */
int engine_stop_signal(void);
/* Catch them from now on, before the first run (tracer_catch_stop_signals). */
void engine_catch_stop_signals(void);
/* A monotonic clock, in ms. */
int64_t engine_now_ms(void);

/* "hw", "sw" or "auto"; -1 if none of them. */
int engine_watchpoints_parse(const char *name);
/*
 * Settle opt->watchpoints to WATCHPOINTS_HW or WATCHPOINTS_SW: from the
 * environment if it is WATCHPOINTS_DEFAULT, then for auto by probing the
 * debug registers (tracer_hw_watchpoints_fire; call this before anything
 * is traced).  *why (static text) says why software watchpoints are used,
 * or why hardware ones were forced on a host whose probe says they do not
 * trap; NULL otherwise.  -1 with err for a bad $CCTRACE_WATCHPOINTS.
 */
int engine_resolve_watchpoints(struct engine_options *opt, const char **why, char *err,
			       size_t errlen);
/* The checker's warnings about pol's schedule (what it found doubtful but
 * not wrong: a function inlined where return(F) cannot see it), on out. */
void engine_note_warnings(const struct policy *pol, FILE *out);
/* "cctrace: watchpoints: software, ...: why" on opt->trace if why is not
 * NULL and pol watches a variable (or pol is NULL: a shell, which may
 * watch one later): the trace's first line. */
void engine_note_watchpoints(const struct policy *pol, const struct engine_options *opt,
			     const char *why);

/* --- the JSON trace (--trace-json; its schema is docs/json.md) ---
 *
 * One JSON object a line: a header record, then one event record per
 * trace line (report.c writes them during the run), then an outcome
 * record.  The engine writes the events, and for engine_run_program and
 * engine_run_attached the outcome record too; the caller writes the header
 * (it knows the command, and a search's strategy and seed), and a search
 * writes each run's outcome record (it knows the run's number and choices).
 * A change that could break a reader raises ENGINE_TRACE_SCHEMA.
 */
#define ENGINE_TRACE_SCHEMA 1

struct engine_trace_header {
	const char *command;		     /* "run", "attach" or "explore" */
	const char *schedule;		     /* the schedule file */
	char *const *argv;		     /* the program and its arguments; NULL when attached */
	pid_t pid;			     /* attach: the process; 0 otherwise */
	const char *strategy;		     /* explore: the canonical strategy; NULL otherwise */
	uint64_t seed;			     /* explore: the seed */
	enum engine_watchpoints watchpoints; /* as resolved: HW or SW */
	bool early_timeouts;		     /* test: --early-timeouts, which decides the runs */
};

struct engine_trace_outcome {
	enum engine_outcome outcome;
	const char *message; /* what "cctrace: OUTCOME: ..." said; NULL: none */
	long run;	     /* explore: the run's number from 1; 0: not a search */
	long search_run;     /* the same, counted from the search's start (a portfolio's
				rounds count their runs from 1 each) */
	const char *choices; /* explore: the run's choice trace ("0.1.0") */
	bool abandoned;	     /* explore: the run lay outside the search (a shard) */
};

void engine_trace_json_header(FILE *f, const struct engine_trace_header *h);
void engine_trace_json_outcome(FILE *f, const struct engine_trace_outcome *o);

const char *engine_outcome_name(enum engine_outcome o);
int engine_outcome_exit_code(enum engine_outcome o);
/* "bug" -> OUTCOME_BUG; -1 if unknown. */
int engine_outcome_parse(const char *name);

/* The event atoms schedules may use (start, enter(F), read(X), ...), for
 * schedule_parse and schedule_load: one row per atom, in engine/atoms.c. */
struct atom_table;
const struct atom_table *engine_atoms(void);

#endif
