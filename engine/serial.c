/*
 * serial.c: serialized execution, the scheduler of `cctrace test`.
 *
 * Why.  A schedule names the threads and the events it cares about; a
 * user with a flaky binary knows neither.  Systematic testing (CHESS,
 * Maple, SCTBench's tools) needs no schedule: exactly one thread runs
 * between scheduling points, and at each point a search picks which
 * enabled thread runs next.  Two threads never race for real, so a run is
 * a function of its choices, and the choices that led to a bug replay it.
 *
 * How.  The `serial` statement switches a run into this mode.
 *   - Under `cctrace test` (the run's hooks carry a struct engine_serial),
 *     the statement runs the whole program: every thread of every process
 *     is held at its first instruction; breakpoints go on the entries of
 *     the pthread synchronisation functions and yields (resolved by name in
 *     the program's libraries, which catches calls through the PLT too) and
 *     on the instructions of the executable that access shared memory
 *     (the search's list, or every non-stack access of the executable's
 *     text); the thread the search chose runs alone until its next point,
 *     its exit, or it sleeps in the kernel.  At each point with two or more
 *     enabled threads the search's choose hook picks one.
 *   - A thread is enabled when it is held at a point or at its start, but
 *     not when it stands at the entry of pthread_mutex_lock on a locked
 *     mutex of another thread (the mutex's word is read: no need to let it
 *     sleep and detect that), or of pthread_spin_lock on a taken spinlock
 *     (it would spin in libc with no point to end its step), nor when it sleeps in a futex whose
 * word has not changed since (blocked.c's two-sample test finds the sleep; the thread is then
 * stopped and its futex word watched).  No enabled thread while some are left is a deadlock: a bug,
 * with every stack; unless some sleep in a futex wait with a timeout, which then times out
 * (blocked_options), or at any choice with --early-timeouts (add_early_timeouts).
 *   - Liveness: at most max_steps steps a run ("livelock candidate", an
 *     infeasible run, when exceeded); a thread that calls sched_yield,
 *     nanosleep, usleep or pause, or stops at the same point several times
 *     in a row, is left out of the next choice when another can run
 *     (CHESS's fair scheduling, in its simplest form), so spin loops end.
 *   - Profiling (engine_serial.profile): each stop at an access point
 *     decodes the instruction and records (thread, address, write); at the
 *     end the points whose addresses two threads touched, one of them
 *     writing, are returned: the search then plants only those.
 *   - The run is recorded as a schedule a person can read: consecutive
 *     steps of one thread merged into `run T until P` (P the point it was
 *     switched away at; `repeat N { ... }` when it passed P N times), which
 *     `cctrace run` replays in the same mode: after `serial`, threads that
 *     were never bound stay held at their start (interp.c, loop.c).
 * Without hooks (cctrace run), the statement only turns that holding on.
 */
#include "disasm/disasm.h"
#include "engine/internal.h"
#include "symbols/symbols.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPIN_REPEATS 3	 /* stops at one point in a row that count as a spin */
#define SPIN_MS	     100 /* a step this long without a point: a spin, probed */
/* ...and one this long: a spin whatever changes in its loop (a spin that
 * reads the clock, or counts, changes its registers as a loop that
 * computes does; it no longer runs for ever) */
#define SPIN_PROOF_MS	  2000
#define SPIN_FRAMES	  32   /* frames searched for the executable's spin point */
#define SPIN_WINDOW	  8    /* access points of one turn compared for a spin */
#define POLL_MS		  5    /* how often a running thread is sampled for sleep */
#define GONE_MS		  100  /* a joined thread past its exit: how long it may take to go */
#define BURY_MS		  2000 /* an ending child, for its parent's wait4: a loaded host's reap */
#define POLL_YOUNG_MS	  1    /* ... in the first POLL_YOUNG_FOR_MS of its step */
#define POLL_YOUNG_FOR_MS 10
#define SETTLE_TRIES	  40 /* polls to wait for dying threads before a deadlock */
/* A profile's access point hit this often in one run (a loop over a
 * buffer of the thread's own) stops being one for the rest of the run:
 * each hit is a step, and --max-steps would otherwise end the profile's
 * runs before they saw what the threads share after the loop. */
#define PROFILE_HOT_HITS 5000

/* The synchronisation functions whose entries are scheduling points.
 * yield: the caller gives way (fair scheduling). */
static const struct sync_fn {
	const char *name;
	bool yield;
	bool ends;  /* a point even when libc calls it (main's return) */
	bool waits; /* may sleep in a futex: its step watches system calls */
} sync_fns[] = {
    {"pthread_mutex_lock", false, false, true},
    {"pthread_mutex_trylock", false},
    {"pthread_mutex_unlock", false},
    {"pthread_mutex_timedlock", false, false, true},
    {"pthread_mutex_clocklock", false, false, true},
    {"pthread_rwlock_rdlock", false, false, true},
    {"pthread_rwlock_wrlock", false, false, true},
    {"pthread_rwlock_unlock", false},
    {"pthread_rwlock_tryrdlock", false},
    {"pthread_rwlock_trywrlock", false},
    {"pthread_rwlock_timedrdlock", false, false, true},
    {"pthread_rwlock_timedwrlock", false, false, true},
    {"pthread_rwlock_clockrdlock", false, false, true},
    {"pthread_rwlock_clockwrlock", false, false, true},
    {"pthread_spin_lock", false},
    {"pthread_spin_unlock", false},
    {"pthread_spin_trylock", false},
    {"pthread_cond_wait", false, false, true},
    {"pthread_cond_timedwait", false, false, true},
    /* C++'s condition_variable::wait_for and wait_until (libstdc++ with
     * glibc 2.30 and later), and the other clock variants */
    {"pthread_cond_clockwait", false, false, true},
    {"pthread_cond_signal", false},
    {"pthread_cond_broadcast", false},
    {"sem_wait", false, false, true},
    {"sem_post", false},
    {"sem_trywait", false},
    {"sem_timedwait", false, false, true},
    {"sem_clockwait", false, false, true},
    {"pthread_barrier_wait", false, false, true},
    {"pthread_join", false, false, true},
    {"pthread_timedjoin_np", false, false, true},
    {"pthread_clockjoin_np", false, false, true},
    {"pthread_tryjoin_np", false},
    {"pthread_once", false, false, true},
    {"pthread_create", false},
    /* a new process: a copy of every lock another thread holds at that
     * moment (a child that locks one the parent's other thread held
     * waits for ever), so the others get their turn just before it, as
     * before a thread's creation; clone only without CLONE_VM (no_choice_at) */
    {"fork", false},
    {"vfork", false},
    {"clone", false},
    /* the process's end: the other threads get a chance first (a main
     * that returns without joining ends them all) */
    {"exit", false, true},
    {"_exit", false, true},
    {"pthread_exit", false, true},
    /* a program's own futex calls (syscall(SYS_futex, ...)) and forks
     * (SYS_fork, SYS_clone without CLONE_VM...): a choice then, not
     * otherwise (own_call_chooses) */
    {"syscall", false, false, true},
    {"sched_yield", true},
    {"nanosleep", true},
    {"clock_nanosleep", true},
    {"usleep", true},
    {"pause", true},
    {"sleep", true},
};
#define NSYNC (sizeof(sync_fns) / sizeof(sync_fns[0]))

enum sstate { SS_READY, SS_BLOCKED };

struct sthread {
	struct tr_thread *th;
	enum sstate state;
	uint64_t futex; /* SS_BLOCKED in a futex wait: its word... */
	uint32_t value; /* ...and the value it sleeps on */
	bool in_futex;	/* else blocked in another call: ready once another runs */
	bool woken;	/* in_futex, and a futex wake on its word came: its wait returns 0 */
	bool timed;	/* in_futex, with a timeout: it ends by itself (times_out) */
	/* SS_BLOCKED waiting for input from outside the program (a socket,
	 * epoll, poll, accept): ready when its input is there (ready.c),
	 * or when nothing else can run (waits_for_input) */
	bool outside;
	long sleep_nr;				  /* that call's number... */
	uint64_t sleep_args[TRACER_SYSCALL_ARGS]; /* ...and its arguments */
	long blocked_at;			  /* s->progress when it blocked */
	uint64_t last_pc;			  /* the point of its last stop, 0: none */
	int repeats;				  /* stops in a row at last_pc */
	bool yielding;	     /* left out of the next choice if another can run */
	bool internal;	     /* held at a synchronisation function libc called */
	bool was_blocked;    /* its last step ended blocked */
	long sleeps_skipped; /* sleeps that took no time (sleeps.c) */
	/* in_futex, in a wait that libc's synchronisation functions did not
	 * make: a wake may leave its word as it is (futex_waiter_held) */
	bool raw_wait;
	/* raw_wait, made by the program's own futex call (libc's syscall(), or
	 * an instruction of the program's text: futex_wait_maker): only a
	 * wake ends it (futex_sleeps) */
	bool own_wait;
	int locks_held; /* profile: locks it took and has not let go (locks_taken) */
	uint64_t site;	/* where its creator called pthread_create (0: main) */
	/* where the function it is held at the entry of returns to, read once
	 * per stop (every choice asks for every option's kind) */
	uint64_t entry_return;
	bool entry_return_known;
	/* the access points of its current turn (since another thread ran),
	 * with the value each read: a loop that comes back to one with the
	 * same value re-reads unchanged memory (spin_revisit) */
	struct seen_point {
		uint64_t pc, value;
	} seen[SPIN_WINDOW];
	int nseen, revisits;
};

/* The segment of the current thread not yet written as a step. */
struct segment {
	int thread; /* index in s->threads, -1: none */
	uint64_t pc;
	int sync; /* index in sync_fns of the point, -1: an access */
	enum { SEG_POINT, SEG_BLOCKED, SEG_EXIT, SEG_FORK } end;
	uint64_t *pcs; /* arrivals per pc during the segment */
	long *counts;
	int n, cap;
};

struct profile_hit {
	uint64_t addr;
	uint64_t end; /* past its last byte: accesses that overlap conflict */
	uint64_t pc;
	int thread;
	bool write;
	bool sync; /* a synchronisation function's object, not an access point */
	int key;   /* its variable (serialvars.c), -1: none */
	bool rmw;  /* read and written by one instruction with no lock prefix */
};

struct serial {
	struct run *r;
	struct engine_serial *cfg;
	struct sthread *threads;
	int nthreads, cap;
	bool *bound_var; /* threads[i] has its `thread tI = pN.tM` line written */
	int nbound;	 /* entries of bound_var set */
	uint64_t sync_addr[NSYNC];
	/* sync_addr's entries by address: a choice asks sync_of of every
	 * held thread, a hundred of them in some programs */
	uint8_t sync_sorted[NSYNC];
	/* the text of the libraries defining the synchronisation functions:
	 * a call from there (pthread_create's own locks, gettext's rwlock in
	 * assert) is libc's business, not a choice */
	struct text_range {
		uint64_t lo, hi;
	} * lib_text, *exe_text; /* and the program's (program_text): where a spin point goes */
	int nlib_text, lib_text_cap, nexe_text, exe_text_cap;
	bool planted; /* in the main process */
	int cur;      /* the thread running or that ran last; -1: none */
	int last_ran; /* the thread of the previous step; -1: none */
	/* a process whose thread called exit_group: its other threads die
	 * with it, they are not steps to choose (nor to write) */
	struct tr_process *ending;
	struct tr_process *buried; /* the ending process bury_ending waited for, once */
	uint64_t create_site;	   /* the return address of the last pthread_create */
	long steps;
	/* steps that did not end asleep: a thread asleep in a call other than
	 * a futex wait is tried again only after one of them (two such
	 * threads would otherwise take turns sleeping for ever) */
	long progress;
	struct segment seg;
	/* the step in progress */
	int running;
	enum { STOP_NONE, STOP_POINT, STOP_BLOCKED, STOP_EXIT, STOP_GONE, STOP_FORK } stop;
	uint64_t stop_pc;
	bool interrupting;
	bool probing;	 /* the interrupt is for a step that runs too long */
	bool outside_ok; /* the step may wait for the outside: no other thread could run */
	int64_t step_t0;
	int64_t step_began; /* step_t0 moves on at each probe; this does not */
	int64_t step_cpu;   /* the running thread's CPU time at its step's first
			     * probe (ms), -1 before it */
	/* a pc where the running thread ran SPIN_MS without a point, armed
	 * for the step: a spin if the thread comes back to it with nothing
	 * changed (spin_found) */
	struct spin_candidate {
		struct tr_process *proc;
		uint64_t pc;
		uint64_t state; /* loop_state at its last arrival, if seen */
		bool armed, seen;
	} cand;
	bool sampled;
	struct tr_kernel_sample sample;
	struct profile_hit *hits;
	size_t nhits, hits_cap;
	/* profile: hits per (process, point) this run, open addressing */
	struct hot_point {
		struct tr_process *proc;
		uint64_t pc;
		long hits;
	} * hot;
	size_t nhot, hot_cap;
	int *ids, *options;
	struct engine_access *access; /* [options]: each one's next access */
	struct serial_vars *vars;     /* current_var, and profiling's variables */
	const char **names;	      /* cfg->describe: [nthreads], by id */
	struct engine_step *forced;   /* steps without a choice since the last */
	int nforced, forced_cap;
	char where[1024]; /* cfg->describe: where the last step stopped */
	/* words read while collecting one choice's options (memo_on) */
	struct held_word *memo;
	int nmemo, memo_cap;
	bool memo_on;
};

static int thread_index(struct serial *s, struct tr_thread *th)
{
	int i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].th == th)
			return i;
	if (vec_reserve(&s->threads, &s->cap, s->nthreads, sizeof(*s->threads)) < 0)
		return -1;
	s->threads[s->nthreads] = (struct sthread){.th = th};
	return s->nthreads++;
}

static int sync_of(struct serial *s, uint64_t pc)
{
	size_t lo = 0, hi = NSYNC;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t addr = s->sync_addr[s->sync_sorted[mid]];

		if (addr == pc)
			return pc ? s->sync_sorted[mid] : -1;
		if (addr < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int cmp_sync_addr(const void *a, const void *b, void *serial)
{
	const struct serial *s = serial;
	uint64_t x = s->sync_addr[*(const uint8_t *)a], y = s->sync_addr[*(const uint8_t *)b];

	return (x > y) - (x < y);
}

/* sync_sorted after sync_addr changed. */
static void sort_sync(struct serial *s)
{
	size_t i;

	_Static_assert(NSYNC <= 256, "sync_sorted holds indexes in bytes");
	for (i = 0; i < NSYNC; i++)
		s->sync_sorted[i] = (uint8_t)i;
	qsort_r(s->sync_sorted, NSYNC, sizeof(s->sync_sorted[0]), cmp_sync_addr, s);
}

/* A sleep function's entry: the call returns at once (sleeps.c). */
static bool is_sleep_point(struct serial *s, uint64_t pc)
{
	int sync = sync_of(s, pc);

	return sync >= 0 && sleep_function(sync_fns[sync].name);
}

/* --- the points --- */

static void keep_spin_point(struct engine_serial *cfg, uint64_t pc);

bool serial_access_insn(const struct dis_insn *insn)
{
	return insn->kind == DIS_OTHER && (insn->flags & DIS_F_MEM) && !(insn->flags & DIS_F_STACK);
}

/* A lock prefix, xchg with memory, or a system call instruction (a futex
 * call the program makes itself, as a lock library or a language runtime
 * does): synchronisation the program does itself. */
static bool is_own_sync(const struct dis_insn *insn)
{
	return (insn->flags & DIS_F_LOCKED) != 0 || insn->kind == DIS_SYSCALL;
}

/*
 * A read of memory no one may write, addressed from the pc (a constant
 * in .rodata, a GOT entry): never a race, and no point.  A loop that
 * multiplies by 0.5 reads its constant every turn: it made a point of
 * each, and a program that computed for 100 ms took 100,000 steps, which
 * ended its profile runs before they saw what came after.
 */
static bool reads_constant(const struct dis_insn *insn, const uint8_t *code,
			   const struct text_maps *maps)
{
	int32_t disp;

	if (!maps || !insn->rip_relative || (insn->mem_access & DIS_WRITE))
		return false;
	memcpy(&disp, code + insn->disp_offset, sizeof(disp));
	return text_maps_readonly(maps, insn->addr + insn->len + (uint64_t)(int64_t)disp);
}

/* Every instruction of code[from - lo, to - lo), decoded linearly from
 * from, that is_point says is one, armed (and, keep, kept among the points
 * for the rest of the search), but for reads of constants (maps: its
 * read-only memory; NULL: none told apart).  gcc's text decodes so. */
static int plant_decoded(struct serial *s, struct tr_process *p, const uint8_t *code, uint64_t lo,
			 uint64_t from, uint64_t to, bool (*is_point)(const struct dis_insn *),
			 bool keep, const struct text_maps *maps)
{
	uint64_t at = from;
	struct dis_insn insn;

	while (at < to) {
		if (dis_decode(code + (at - lo), to - at, at, &insn) < 0 || insn.len == 0) {
			at++;
			continue;
		}
		if (is_point(&insn) && !reads_constant(&insn, code + (at - lo), maps)) {
			if (keep)
				keep_spin_point(s->cfg, at);
			if (points_arm_breakpoint(s->r, p, at) < 0)
				return -1;
		}
		at += insn.len;
	}
	return 0;
}

/* The points of [lo, hi), decoded section by section: a decode carried
 * across the zeros between two sections lands inside the next one's
 * instructions, and a point planted there changes what they do
 * (symbols/code.c).  Code no section the symbols know covers (a library
 * loaded since they were read) is decoded from lo. */
static int plant_insns_in(struct serial *s, struct tr_process *p, uint64_t lo, uint64_t hi,
			  bool (*is_point)(const struct dis_insn *), bool keep,
			  const struct text_maps *maps)
{
	struct proc_ctx *pc = run_proc(s->r, p);
	uint8_t *code = malloc(hi - lo + DIS_MAX_INSN);
	const struct sym_range *sec = NULL;
	size_t nsec = 0, i;
	bool covered = false;
	int rc = -1;

	if (!code || tracer_read_code(p, lo, code, hi - lo) < 0)
		goto out;
	memset(code + (hi - lo), 0, DIS_MAX_INSN);
	if (pc && pc->syms && sym_code_sections(pc->syms, &sec, &nsec) < 0)
		goto out;
	for (i = 0; i < nsec; i++) {
		uint64_t from = sec[i].lo > lo ? sec[i].lo : lo,
			 to = sec[i].hi < hi ? sec[i].hi : hi;

		if (from >= to)
			continue;
		covered = true;
		if (plant_decoded(s, p, code, lo, from, to, is_point, keep, maps) < 0)
			goto out;
	}
	if (!covered && plant_decoded(s, p, code, lo, lo, hi, is_point, keep, maps) < 0)
		goto out;
	rc = 0;
out:
	free(code);
	return rc;
}

static bool in_ranges(const struct text_range *t, int n, uint64_t pc)
{
	int i;

	for (i = 0; i < n; i++)
		if (pc >= t[i].lo && pc < t[i].hi)
			return true;
	return false;
}

struct planting {
	struct serial *s;
	struct tr_process *p;
	const struct text_maps *maps; /* plant_program_text: its read-only memory */
};

/*
 * Is file, a mapped ELF object's path, the program's own code: its
 * executable, or a library loaded from outside the system's library
 * directories (the program's build tree, found through its rpath or
 * LD_LIBRARY_PATH; /usr/local and /opt count as the program's)?  Those
 * are profiled for shared accesses, searched for locked instructions and
 * given spin points; libc and the system's other libraries are seen only
 * through their synchronisation functions.  Without the libraries, a race
 * in a project's own libfoo.so had no point and was never found.
 */
bool program_text(const char *file, const char *exe)
{
	static const char *const system_dirs[] = {
	    "/lib/",	 "/lib32/",	"/lib64/",     "/libx32/",
	    "/usr/lib/", "/usr/lib32/", "/usr/lib64/", "/usr/libx32/",
	};
	size_t i;

	if (strcmp(file, exe) == 0)
		return true;
	if (file[0] != '/')
		return false; /* [vdso] and the like */
	for (i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (strncmp(file, system_dirs[i], strlen(system_dirs[i])) == 0)
			return false;
	return true;
}

typedef int (*text_piece_fn)(void *ctx, uint64_t lo, uint64_t hi, const char *file, const char *exe,
			     bool own);

/* A statically linked executable's mapping [lo, hi) in pieces: its own
 * code (sym_static_own_code) and the libc linked in around it. */
static int each_static_piece(const struct sym_range *own, size_t n, uint64_t lo, uint64_t hi,
			     const char *file, text_piece_fn cb, void *ctx)
{
	uint64_t at = lo;
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < n; i++) { /* compile units in address order */
		uint64_t a = own[i].lo > at ? own[i].lo : at, b = own[i].hi < hi ? own[i].hi : hi;

		if (a >= b)
			continue;
		if (a > at)
			rc = cb(ctx, at, a, file, file, false);
		if (rc == 0)
			rc = cb(ctx, a, b, file, file, true);
		at = b;
	}
	return rc == 0 && at < hi ? cb(ctx, at, hi, file, file, false) : rc;
}

/*
 * The executable mappings of a process (text_maps_of), each with whether
 * it is the program's own code (program_text); a statically linked
 * executable's in pieces, its own code apart from the libc in it.  cb may
 * stop the walk with a non-zero return.
 */
static int each_text_mapping(struct run *r, struct tr_process *p, text_piece_fn cb, void *ctx)
{
	struct proc_ctx *pc = run_proc(r, p);
	const struct sym_range *own = NULL;
	size_t nown = 0;
	struct text_maps mine;
	const struct text_maps *m = text_maps_of(r, p, &mine);
	int rc = 0, i;

	if (pc && pc->syms && sym_static_own_code(pc->syms, &own, &nown) < 0)
		own = NULL;
	for (i = 0; m && rc == 0 && i < m->n; i++) {
		const char *file = m->maps[i].file;

		if (own && strcmp(file, m->exe) == 0)
			rc = each_static_piece(own, nown, m->maps[i].lo, m->maps[i].hi, file, cb,
					       ctx);
		else
			rc = cb(ctx, m->maps[i].lo, m->maps[i].hi, file, m->exe,
				program_text(file, m->exe));
	}
	text_maps_free(&mine);
	return rc;
}

/* The program's text (program_text). */
static int plant_program_text(void *ctx, uint64_t lo, uint64_t hi, const char *file,
			      const char *exe, bool own)
{
	struct planting *pl = ctx;

	(void)file;
	(void)exe;
	return own ? plant_insns_in(pl->s, pl->p, lo, hi, serial_access_insn, false, pl->maps) : 0;
}

/* The text of a library that defines a synchronisation function. */
static int note_lib_text(void *ctx, uint64_t lo, uint64_t hi, const char *file, const char *exe,
			 bool own)
{
	struct serial *s = ctx;
	const char *base;
	size_t i;

	if (own) {
		/* the program's own functions are its calls; its text holds
		 * the points of the spins found */
		if (vec_reserve(&s->exe_text, &s->exe_text_cap, s->nexe_text,
				sizeof(*s->exe_text)) < 0)
			return -1;
		s->exe_text[s->nexe_text++] = (struct text_range){lo, hi};
		return 0;
	}
	for (i = 0; i < NSYNC; i++)
		if (s->sync_addr[i] >= lo && s->sync_addr[i] < hi)
			break;
	base = strrchr(file, '/');
	base = base ? base + 1 : file;
	/* the dynamic loader's locks (TLS for a new thread) too, and the libc
	 * linked into a static executable */
	if (i == NSYNC && strncmp(base, "ld-", 3) != 0 && strcmp(file, exe) != 0)
		return 0;
	if (vec_reserve(&s->lib_text, &s->lib_text_cap, s->nlib_text, sizeof(*s->lib_text)) < 0)
		return -1;
	s->lib_text[s->nlib_text++] = (struct text_range){lo, hi};
	return 0;
}

/* The program's own synchronisation instructions (is_own_sync, in its
 * program_text): a point in every mode, found once per search (a linear
 * decoding of its text, as --points all). */
static int plant_own_sync_in(void *ctx, uint64_t lo, uint64_t hi, const char *file, const char *exe,
			     bool own)
{
	struct planting *pl = ctx;

	(void)file;
	(void)exe;
	return own ? plant_insns_in(pl->s, pl->p, lo, hi, is_own_sync, true, NULL) : 0;
}

/* --points all, and the profile: every access of the program's text but
 * the reads of constants. */
static int plant_all_accesses(struct serial *s, struct tr_process *p)
{
	struct text_maps mine;
	const struct text_maps *maps = text_maps_of(s->r, p, &mine);
	int rc = each_text_mapping(s->r, p, plant_program_text, &(struct planting){s, p, maps});

	text_maps_free(&mine);
	return rc;
}

static int plant_points(struct serial *s, struct tr_process *p)
{
	struct proc_ctx *pc = run_proc(s->r, p);
	size_t i;

	if (!pc || !pc->syms)
		return 0;
	if (svars_plant(s->vars, s->r, p, pc->syms) < 0)
		return -1;
	for (i = 0; i < NSYNC; i++) {
		uint64_t addr = 0;

		if (sym_function(pc->syms, sync_fns[i].name, &addr) < 0 || !addr)
			continue;
		s->sync_addr[i] = addr;
		if (points_arm_breakpoint(s->r, p, addr) < 0)
			return -1;
	}
	sort_sync(s);
	for (i = 0; i < s->cfg->npoints; i++)
		if (points_arm_breakpoint(s->r, p, s->cfg->points[i]) < 0)
			return -1;
	if (each_text_mapping(s->r, p, note_lib_text, s) < 0)
		return -1;
	if (!s->cfg->locked_found) {
		s->cfg->locked_found = true;
		if (each_text_mapping(s->r, p, plant_own_sync_in, &(struct planting){s, p}) < 0)
			return -1;
	}
	return s->cfg->all_points ? plant_all_accesses(s, p) : 0;
}

/* --- recording the run as a schedule --- */

static const char *var_of(struct serial *s, int i, char *buf, size_t len)
{
	const char *name = tracer_thread_name(s->threads[i].th); /* p1.t3 */
	int proc = 0, t = 0;

	if (sscanf(name, "p%d.t%d", &proc, &t) == 2 && proc == 1)
		snprintf(buf, len, "t%d", t);
	else
		snprintf(buf, len, "p%dt%d", proc, t);
	return buf;
}

static long seg_count(const struct segment *g, uint64_t pc)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (g->pcs[i] == pc)
			return g->counts[i];
	return 0;
}

static void seg_note(struct segment *g, uint64_t pc)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (g->pcs[i] == pc) {
			g->counts[i]++;
			return;
		}
	if (g->n == g->cap) {
		int cap = g->cap ? g->cap * 2 : 16;
		uint64_t *pcs = realloc(g->pcs, sizeof(*pcs) * (size_t)cap);
		long *counts = pcs ? realloc(g->counts, sizeof(*counts) * (size_t)cap) : NULL;

		if (pcs)
			g->pcs = pcs;
		if (!counts)
			return; /* the count is lost: the replay says so, not a crash */
		g->counts = counts;
		g->cap = cap;
	}
	g->pcs[g->n] = pc;
	g->counts[g->n++] = 1;
}

/* at(NAME+0xOFFSET), NAME quoted where no identifier spells it (a
 * template, a lambda), as the printer writes a parsed one back: replays
 * compare the two texts. */
static void at_offset_text(char *buf, size_t len, const char *name, uint64_t offset)
{
	char *text;

	if (asprintf(&text, "%s+0x%" PRIx64, name, offset) < 0) {
		snprintf(buf, len, "at(%s+0x%" PRIx64 ")", name, offset);
		return;
	}
	lang_at_text(buf, len, text);
	free(text);
}

static void point_text(struct serial *s, char *buf, size_t len, char *note, size_t notelen)
{
	struct segment *g = &s->seg;
	struct tr_thread *th = s->threads[g->thread].th;
	struct proc_ctx *pc = run_proc(s->r, tracer_thread_process(th));
	struct sym_loc loc = {0};
	const char *name;

	note[0] = '\0';
	if (g->end == SEG_BLOCKED) {
		snprintf(buf, len, "blocked");
		return;
	}
	if (g->end == SEG_EXIT) {
		snprintf(buf, len, "exit");
		return;
	}
	if (g->end == SEG_FORK) {
		snprintf(buf, len, "fork");
		return;
	}
	if (g->sync >= 0) {
		snprintf(buf, len, "enter(%s)", sync_fns[g->sync].name);
		return;
	}
	if (pc && pc->syms && sym_describe(pc->syms, g->pc, &loc) == 0 && !loc.func) {
		const char *module; /* a stripped program, a PLT stub */
		uint64_t offset;

		if (sym_module_offset(pc->syms, g->pc, &module, &offset) == 0) {
			snprintf(buf, len, "at(%s+0x%" PRIx64 ")", module, offset);
			return;
		}
	}
	if (!loc.func) {
		/* no module either: the replay will say it cannot follow */
		snprintf(buf, len, "at(0x%" PRIx64 ")", g->pc);
		return;
	}
	name = sym_schedule_name(pc->syms, &loc);
	at_offset_text(buf, len, name, loc.func_offset);
	/* a symbol kept mangled (an overload) is said as shown */
	if (loc.file && strcmp(name, loc.pretty) != 0)
		snprintf(note, notelen, "  # %s, %s:%d", loc.pretty, loc.file, loc.line);
	else if (loc.file)
		snprintf(note, notelen, "  # %s:%d", loc.file, loc.line);
}

/* How a step that stopped so ends in the schedule. */
static int seg_end_of(int stop)
{
	switch (stop) {
	case STOP_POINT:
		return SEG_POINT;
	case STOP_BLOCKED:
		return SEG_BLOCKED;
	case STOP_FORK:
		return SEG_FORK;
	default:
		return SEG_EXIT;
	}
}

/* cfg->describe: where thread i's step stopped, as point_text writes a
 * step's end. */
static void describe_stop(struct serial *s, int i)
{
	struct segment g = {.thread = i,
			    .pc = s->stop_pc,
			    .sync = sync_of(s, s->stop_pc),
			    .end = seg_end_of(s->stop)};
	struct segment saved = s->seg;
	char note[8];

	s->seg = g;
	point_text(s, s->where, sizeof(s->where), note, sizeof(note));
	s->seg = saved;
}

static void flush_segment(struct serial *s)
{
	struct segment *g = &s->seg;
	FILE *f = s->r->record;
	/* a C++ symbol in at(...) may be hundreds of characters long */
	char var[32], what[1024], note[1024];
	long n;

	if (g->thread < 0)
		goto out;
	if (s->cfg->preemptions_out && g->end == SEG_POINT)
		(*s->cfg->preemptions_out)++;
	if (!f)
		goto out;
	var_of(s, g->thread, var, sizeof(var));
	if (!s->bound_var[g->thread]) {
		fprintf(f, "thread %s = %s\n", var, tracer_thread_name(s->threads[g->thread].th));
		s->bound_var[g->thread] = true;
	}
	point_text(s, what, sizeof(what), note, sizeof(note));
	n = g->end == SEG_POINT ? seg_count(g, g->pc) : 1;
	if (n > 1)
		fprintf(f, "repeat %ld { run %s until %s }%s\n", n, var, what, note);
	else
		fprintf(f, "run %s until %s%s\n", var, what, note);
out:
	g->thread = -1;
	g->n = 0;
}

/* The step just made by thread i ended as s->stop says. */
static void record_step(struct serial *s, int i)
{
	struct segment *g = &s->seg;

	if (g->thread != i) {
		flush_segment(s);
		g->thread = i;
	}
	if (s->stop == STOP_POINT) {
		seg_note(g, s->stop_pc);
		g->end = SEG_POINT;
		g->pc = s->stop_pc;
		g->sync = sync_of(s, s->stop_pc);
	} else {
		g->end = seg_end_of(s->stop);
		flush_segment(s); /* nothing merges past a sleep, a vfork or an exit */
	}
}

/* A profiling run's record of one access (a lost one, out of memory,
 * only makes the profile poorer: points are found by a few runs). */
static void add_hit(struct serial *s, struct profile_hit hit)
{
	if (s->nhits == s->hits_cap) {
		size_t cap = s->hits_cap ? s->hits_cap * 2 : 256;
		struct profile_hit *grown = realloc(s->hits, sizeof(*grown) * cap);

		if (!grown)
			return;
		s->hits = grown;
		s->hits_cap = cap;
	}
	s->hits[s->nhits++] = hit;
}
/* --- profiling --- */

static size_t hot_slot(const struct hot_point *hot, size_t cap, struct tr_process *p, uint64_t pc)
{
	size_t i = (size_t)((pc ^ (uintptr_t)p) * 0x9e3779b97f4a7c15ull) & (cap - 1);

	while (hot[i].proc && !(hot[i].proc == p && hot[i].pc == pc))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Count a hit of point pc in p: its count, 0 if it could not be counted. */
static long count_hot(struct serial *s, struct tr_process *p, uint64_t pc)
{
	size_t i;

	if (2 * (s->nhot + 1) > s->hot_cap) {
		size_t cap = s->hot_cap ? 2 * s->hot_cap : 256, k;
		struct hot_point *grown = calloc(cap, sizeof(*grown));

		if (!grown)
			return 0;
		for (k = 0; k < s->hot_cap; k++)
			if (s->hot[k].proc)
				grown[hot_slot(grown, cap, s->hot[k].proc, s->hot[k].pc)] =
				    s->hot[k];
		free(s->hot);
		s->hot = grown;
		s->hot_cap = cap;
	}
	i = hot_slot(s->hot, s->hot_cap, p, pc);
	if (!s->hot[i].proc) {
		s->hot[i] = (struct hot_point){p, pc, 0};
		s->nhot++;
	}
	return ++s->hot[i].hits;
}

static void profile_hit(struct serial *s, struct tr_thread *th, uint64_t pc)
{
	struct tr_process *p = tracer_thread_process(th);
	uint8_t code[DIS_MAX_INSN];
	struct dis_insn insn;
	struct dis_access acc[DIS_MAX_ACCESSES];
	int n, k, i = thread_index(s, th);
	bool unlocked = i < 0 || s->threads[i].locks_held == 0;

	if (count_hot(s, p, pc) == PROFILE_HOT_HITS)
		points_disarm_breakpoint(s->r, p, pc); /* this one is recorded */
	if (tracer_decode_at(p, pc, code, &insn) < 0)
		return;
	n = dis_accesses(&insn, code, tracer_regs(th), acc, DIS_MAX_ACCESSES);
	for (k = 0; k < n; k++) {
		if (acc[k].stack)
			continue;
		uint64_t span =
		    (uint64_t)(acc[k].size ? acc[k].size : 1) * (acc[k].count ? acc[k].count : 1);
		uint64_t start = acc[k].descending ? acc[k].addr + acc[k].size - span : acc[k].addr;

		add_hit(s, (struct profile_hit){start, start + span, pc, i,
						(acc[k].rw & DIS_WRITE) != 0, false,
						svars_key(s->vars, acc[k].addr),
						unlocked && acc[k].rw == (DIS_READ | DIS_WRITE) &&
						    !(insn.flags & DIS_F_LOCKED)});
	}
}

/* The synchronisation functions whose first argument is their object. */
static bool sync_has_object(int sync)
{
	static const char *const prefixes[] = {"pthread_mutex_", "pthread_rwlock_",
					       "pthread_spin_",	 "pthread_cond_",
					       "sem_",		 "pthread_barrier_"};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(sync_fns[sync].name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static bool is_exit(int sync)
{
	return !strcmp(sync_fns[sync].name, "exit") || !strcmp(sync_fns[sync].name, "_exit");
}

static bool another_alive(struct serial *s, struct tr_thread *th)
{
	int i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].th != th && !tracer_thread_exited(s->threads[i].th))
			return true;
	return false;
}

/* +1 for a call that takes a lock (a try or a timed one counted as taken),
 * -1 for one that lets it go, 0 for any other: an unlocked read-modify-
 * write made under a lock is no race (note_torn), however it compiles. */
static int locks_taken(int sync)
{
	const char *name = sync_fns[sync].name;

	if (strstr(name, "unlock"))
		return -1;
	if (!strncmp(name, "pthread_mutex_", 14) || !strncmp(name, "pthread_rwlock_", 15) ||
	    !strncmp(name, "pthread_spin_", 13))
		return strstr(name, "lock") ? 1 : 0;
	return 0;
}

/* A synchronisation function's object, as a write: a lock two threads
 * take is a shared variable (vb, pctvb), but not an access point. */
static void profile_sync_hit(struct serial *s, struct tr_thread *th, uint64_t pc, int sync)
{
	uint64_t obj = tracer_regs(th)->rdi;
	int i = thread_index(s, th);

	if (i >= 0) {
		s->threads[i].locks_held += locks_taken(sync);
		if (s->threads[i].locks_held < 0) /* taken before the profile saw it */
			s->threads[i].locks_held = 0;
	}

	if (is_exit(sync) && another_alive(s, th))
		svars_exit(s->vars, true);
	if (!sync_has_object(sync) || !obj)
		return;
	add_hit(s, (struct profile_hit){obj, obj + 1, pc, thread_index(s, th), true, true,
					svars_key(s->vars, obj)});
}

static int by_addr(const void *a, const void *b)
{
	const struct profile_hit *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int add_shared(struct engine_serial *cfg, uint64_t pc)
{
	size_t i;

	for (i = 0; i < cfg->nshared; i++)
		if (cfg->shared[i] == pc)
			return 0;
	uint64_t *grown = realloc(cfg->shared, sizeof(*grown) * (cfg->nshared + 1));
	if (!grown)
		return -1;
	cfg->shared = grown;
	cfg->shared[cfg->nshared++] = pc;
	return 0;
}

/*
 * An unlocked read-modify-write (`addl $1, counter`, clang's counter++)
 * of memory another thread writes: on a multi-core machine the other's
 * write can fall between its read and its write, and one is lost.  One
 * thread runs at a time here, and no point can split an instruction, so
 * that race is never searched: the search says so (engine_serial.torn)
 * rather than let its "0 bugs" cover it.
 */
static void note_torn(struct serial *s, const struct profile_hit *from,
		      const struct profile_hit *to)
{
	struct proc_ctx *pc = run_proc(s->r, run_main_process(s->r));
	const struct profile_hit *h, *o;
	struct engine_torn *grown;
	struct sym_loc loc = {0};
	size_t i;

	for (h = from; h < to; h++) {
		bool other_writes = false;

		for (o = from; h->rmw && o < to && !other_writes; o++)
			other_writes = o->write && !o->sync && o->thread != h->thread;
		if (!other_writes)
			continue;
		for (i = 0; i < s->cfg->ntorn && s->cfg->torn[i].pc != h->pc; i++)
			;
		if (i < s->cfg->ntorn)
			continue; /* a few instructions: grown one at a time */
		grown = realloc(s->cfg->torn, sizeof(*grown) * (s->cfg->ntorn + 1));
		if (!grown)
			continue;
		s->cfg->torn = grown;
		if (pc && pc->syms)
			sym_describe(pc->syms, h->pc, &loc);
		s->cfg->torn[s->cfg->ntorn] = (struct engine_torn){h->pc};
		if (loc.func && loc.file)
			snprintf(s->cfg->torn[s->cfg->ntorn].where, sizeof(s->cfg->torn[0].where),
				 "%s:%d (%s+0x%lx)", loc.file, loc.line,
				 loc.pretty ? loc.pretty : loc.func,
				 (unsigned long)loc.func_offset);
		else /* a stripped program: MODULE+0xOFF */
			report_code_name(s->r, run_main_process(s->r), h->pc, &loc,
					 s->cfg->torn[s->cfg->ntorn].where,
					 sizeof(s->cfg->torn[0].where));
		s->cfg->ntorn++;
	}
}

/* The points whose bytes two threads touched, one writing.  Accesses are
 * grouped by overlap, not by their first byte: a struct copied in one
 * 8-byte store conflicts with a read of its second int. */
static void profile_finish(struct serial *s)
{
	size_t i = 0, j, k;

	if (s->nhits > 1) /* none: no array to sort */
		qsort(s->hits, s->nhits, sizeof(*s->hits), by_addr);
	while (i < s->nhits) {
		bool two = false, write = false;
		uint64_t end = s->hits[i].end;

		for (j = i; j < s->nhits && s->hits[j].addr < end; j++) {
			two |= s->hits[j].thread != s->hits[i].thread;
			write |= s->hits[j].write;
			if (s->hits[j].end > end)
				end = s->hits[j].end;
		}
		for (k = i; two && write && k < j; k++) {
			if (!s->hits[k].sync)
				add_shared(s->cfg, s->hits[k].pc);
			if (s->hits[k].key >= 0)
				svars_add_shared(s->vars, s->hits[k].key, s->hits[k].pc);
		}
		if (two && write)
			note_torn(s, &s->hits[i], &s->hits[j]);
		i = j;
	}
}

/* --- one step --- */

/*
 * A lock or futex word read while one choice's options are collected:
 * no thread makes a step meanwhile, so a word many threads wait on (a
 * hundred at one mutex in twostage_100) is read once per choice, not once
 * per waiter, which made a choice cost a read per thread.
 */
struct held_word {
	struct tr_process *p;
	uint64_t addr;
	uint32_t word[3];
	int len; /* bytes read; -1: unreadable */
};

static int read_words(struct serial *s, struct tr_process *p, uint64_t addr, uint32_t *words,
		      int len)
{
	struct held_word *w;
	int i;

	assert(len > 0 && len <= (int)sizeof(w->word));
	if (!s->memo_on)
		return tracer_read(p, addr, words, (size_t)len);
	for (i = 0; i < s->nmemo; i++) {
		w = &s->memo[i];
		if (w->p == p && w->addr == addr && (w->len < 0 || w->len >= len)) {
			memcpy(words, w->word, (size_t)len);
			return w->len < 0 ? -1 : 0;
		}
	}
	if (vec_reserve(&s->memo, &s->memo_cap, s->nmemo, sizeof(*s->memo)) < 0)
		return tracer_read(p, addr, words, (size_t)len);
	w = &s->memo[s->nmemo++];
	*w = (struct held_word){.p = p, .addr = addr, .len = (int)sizeof(w->word)};
	if (tracer_read(p, addr, w->word, sizeof(w->word)) < 0) {
		/* a word at the end of a mapping: as asked */
		w->len = tracer_read(p, addr, w->word, (size_t)len) < 0 ? -1 : len;
	}
	memcpy(words, w->word, (size_t)len);
	return w->len < 0 ? -1 : 0;
}

/*
 * Does st, held blocked in a futex wait no wake reached, still sleep?  It
 * was held at the call's entry with its word equal to the value, where the
 * kernel would have queued it: from there only a wake (or a timeout or a
 * signal) ends the wait, never a later change of the word.  A wait the
 * program's own futex call made (own_wait) is kept so: a waker that wakes
 * before it stores (futex_bad, serwakefirst) leaves it asleep for ever.
 * Other waits are let go on a changed word instead: libc's wakes are not
 * watched (futex_waiter_held), and libc changes the word before each, and
 * its waits recheck it; and a wait made elsewhere may be ended by the
 * kernel with no wake to see (a join's on a thread's exit, inside
 * ThreadSanitizer's interceptor: held for good, sertsan's search hung).
 */
static bool futex_sleeps(struct serial *s, struct sthread *st)
{
	uint32_t word;

	if (read_words(s, tracer_thread_process(st->th), st->futex, &word, sizeof(word)) < 0)
		return false;
	/* the kernel's wake as a raw clone's thread exits (rawjoin: a false
	 * deadlock) is the one wake without a FUTEX_WAKE to see */
	if (st->own_wait)
		return !futex_cleared_at_exit(s->r, tracer_thread_process(st->th), word, st->value);
	return word == st->value;
}

/* Is sync (a sync_of, -1: none) the function called name? */
static bool sync_named(int sync, const char *name)
{
	return sync >= 0 && strcmp(sync_fns[sync].name, name) == 0;
}

static bool sync_is(struct serial *s, uint64_t pc, const char *name)
{
	return sync_named(sync_of(s, pc), name);
}

/* Held at the entry of pthread_mutex_lock on a mutex another thread owns?
 * Not on a robust mutex whose owner died holding it: the kernel left its
 * word OWNER_DIED with no owner, and the lock returns EOWNERDEAD (it was
 * taken for held by the dead thread, a false deadlock). */
static bool waits_for_mutex(struct serial *s, struct sthread *st)
{
	const struct user_regs_struct *regs;
	uint32_t lock[3];

	if (!sync_is(s, tracer_thread_pc(st->th), "pthread_mutex_lock"))
		return false;
	regs = tracer_regs(st->th);
	if (read_words(s, tracer_thread_process(st->th), regs->rdi, lock, sizeof(lock)) < 0)
		return false;
	/* glibc: __lock, __count, __owner */
	if ((lock[0] & TR_FUTEX_OWNER_DIED) && !(lock[0] & TR_FUTEX_TID_MASK))
		return false;
	return lock[0] != 0 && lock[2] != (uint32_t)tracer_thread_tid(st->th);
}

/* Held at the entry of pthread_spin_lock on a taken spinlock?  Let go, it
 * would spin in libc while the owner is held, and no point would ever end
 * its step. */
static bool waits_for_spinlock(struct serial *s, struct sthread *st)
{
	uint64_t pc = tracer_thread_pc(st->th);

	return sync_is(s, pc, "pthread_spin_lock") &&
	       spinlock_taken(tracer_thread_process(st->th), pc, tracer_regs(st->th)->rdi);
}

/* Held at the entry of pthread_join on a thread that is not gone?  (A
 * pthread_t is the thread's TCB, its fs_base.)  Then it would only sleep:
 * not enabled, no need to let it and wait for the sleep to be seen.  A
 * thread past its exit event still counts until it is reaped: the kernel
 * clears the word the join waits on only as the thread goes, so a join
 * let go before would sleep in some runs and not in others, and the same
 * seed would not make the same schedule. */
static bool waits_for_join(struct serial *s, struct sthread *st)
{
	uint64_t target;
	int i;

	if (!sync_is(s, tracer_thread_pc(st->th), "pthread_join"))
		return false;
	target = tracer_regs(st->th)->rdi;
	for (i = 0; i < s->nthreads; i++) {
		struct tr_thread *th = s->threads[i].th;

		if (th == st->th || tracer_thread_exited(th) ||
		    tracer_thread_process(th) != tracer_thread_process(st->th))
			continue;
		if (tracer_regs(th)->fs_base != target) /* its registers at its last stop */
			continue;
		if (tracer_thread_last_event(th) == TR_EV_EXIT && !tracer_thread_held(th))
			return tracer_await_gone(th, tracer_now_ms() + GONE_MS) < 0;
		return true;
	}
	return false;
}

/* At a function's entry: where it returns to; 0 if unreadable. */
static uint64_t return_address(struct sthread *st)
{
	uint64_t ret = 0;

	if (st->entry_return_known)
		return st->entry_return;
	if (tracer_read(tracer_thread_process(st->th), tracer_regs(st->th)->rsp, &ret,
			sizeof(ret)) < 0)
		return 0;
	st->entry_return = ret;
	st->entry_return_known = true;
	return ret;
}

/* Is the instruction at pc, where th is held, a system call instruction
 * (one of the program's own points, is_own_sync: in its text, where the
 * decoding is looked up only then)? */
static bool syscall_insn_at(struct serial *s, struct tr_thread *th, uint64_t pc)
{
	uint8_t code[DIS_MAX_INSN];
	struct dis_insn insn;

	return in_ranges(s->exe_text, s->nexe_text, pc) &&
	       tracer_decode_at(tracer_thread_process(th), pc, code, &insn) == 0 &&
	       insn.kind == DIS_SYSCALL;
}

/*
 * Is system call nr, with its first argument arg0, one whose entry is a
 * choice when the program makes it itself (libc's syscall(), its own
 * syscall instruction)?  A futex call (its wait depends on a check made
 * before), and a call that makes a process: the child copies every lock
 * another thread holds at that moment, so the others get their turn just
 * before it, as at glibc's fork (serrawfork).  The raw call is already a
 * point (syscall() is a breakpoint, the program's syscall instructions are
 * planted): deciding here costs no stop.  clone makes a thread with
 * CLONE_VM (no choice, as glibc's clone); clone3's flags are read from its
 * struct clone_args (arg0 points at it, flags first).
 */
static bool own_call_chooses(struct tr_thread *th, uint64_t nr, uint64_t arg0)
{
	uint64_t flags = 0;

	switch (nr) {
	case TR_SYS_futex:
	case TR_SYS_fork:
	case TR_SYS_vfork:
		return true;
	case TR_SYS_clone:
		return !(arg0 & TR_CLONE_VM);
	case TR_SYS_clone3:
		return tracer_read(tracer_thread_process(th), arg0, &flags, sizeof(flags)) == 0 &&
		       !(flags & TR_CLONE_VM);
	default:
		return false;
	}
}

/* Stopped at a synchronisation function that is no choice: syscall() or
 * the program's syscall instruction making a call own_call_chooses leaves
 * out, clone() making a thread, or a function libc itself called (not an
 * end: main's return calls exit from libc, and that is a point). */
static bool no_choice_at(struct serial *s, struct sthread *st, uint64_t pc)
{
	const struct user_regs_struct *regs = tracer_regs(st->th);
	int sync = sync_of(s, pc);

	if (sync_named(sync, "syscall") && !own_call_chooses(st->th, regs->rdi, regs->rsi))
		return true; /* syscall(nr, arg0, ...) */
	if (sync_named(sync, "clone") && (regs->rdx & TR_CLONE_VM))
		return true; /* clone(fn, stack, flags, ...) making a thread */
	if (syscall_insn_at(s, st->th, pc))
		return !own_call_chooses(st->th, regs->rax, regs->rdi);
	if (sync < 0 || sync_fns[sync].ends)
		return false;
	return in_ranges(s->lib_text, s->nlib_text, return_address(st));
}

static bool enabled(struct serial *s, struct sthread *st)
{
	if (tracer_thread_exited(st->th) || !tracer_thread_held(st->th) ||
	    tracer_thread_last_event(st->th) == TR_EV_EXIT)
		return false;
	if (s->ending && tracer_thread_process(st->th) == s->ending)
		return false; /* dies with its process */
	if (tracer_thread_waits_for_vfork(st->th))
		return false;
	if (st->state == SS_BLOCKED) {
		int ready =
		    st->in_futex ? -1 : call_would_return(st->th, st->sleep_nr, st->sleep_args);

		if (st->in_futex ? !st->woken && futex_sleeps(s, st)
				 : ready == 0 || (ready < 0 && st->blocked_at == s->progress))
			return false;
		st->state = SS_READY;
	}
	return !waits_for_mutex(s, st) && !waits_for_spinlock(s, st) && !waits_for_join(s, st);
}

/* The synchronisation function that waits and is on a stack of n frames:
 * a frame of that name, or with INSIDE, one whose name holds it. */
static const char *waiting_function(const struct sym_frame *frames, int n, bool inside)
{
	size_t k;
	int i;

	for (i = 0; i < n; i++)
		for (k = 0; k < NSYNC && frames[i].loc.func; k++)
			if (sync_fns[k].waits &&
			    (inside ? strstr(frames[i].loc.func, sync_fns[k].name) != NULL
				    : strcmp(frames[i].loc.func, sync_fns[k].name) == 0))
				return sync_fns[k].name;
	return NULL;
}

/* "waits for a mutex ..., held by p1.t3": the owner glibc wrote in the
 * mutex (its __owner), as a replay's report names the thread waited for. */
static void describe_mutex_wait(struct serial *s, struct sthread *st, char *buf, size_t len)
{
	uint32_t lock[3];
	struct tr_thread *owner = NULL;

	if (read_words(s, tracer_thread_process(st->th), tracer_regs(st->th)->rdi, lock,
		       sizeof(lock)) == 0)
		owner = tracer_thread_by_tid(s->r->t, (pid_t)lock[2]);
	if (owner)
		snprintf(buf, len, "waits for a mutex in pthread_mutex_lock, held by %s%s",
			 tracer_thread_name(owner),
			 tracer_thread_exited(owner) ? ", which has exited" : "");
	else
		snprintf(buf, len, "waits for a mutex in pthread_mutex_lock");
}

/* What a deadlocked thread waits for, as its report says it: the lock or
 * thread at whose entry it is held, the synchronisation function whose
 * futex it sleeps in (found on its stack), else the kernel's state. */
static void describe_wait(struct serial *s, struct sthread *st, char *buf, size_t len)
{
	struct sym_frame frames[MAX_FRAMES];
	const char *name;
	int n;

	if (waits_for_mutex(s, st)) {
		describe_mutex_wait(s, st, buf, len);
		return;
	}
	if (waits_for_spinlock(s, st)) {
		snprintf(buf, len, "waits for a spinlock in pthread_spin_lock");
		return;
	}
	if (waits_for_join(s, st)) {
		snprintf(buf, len, "waits for a thread in pthread_join");
		return;
	}
	if (st->state == SS_BLOCKED && st->in_futex) {
		n = run_backtrace(s->r, st->th, frames, MAX_FRAMES);
		/* by name, else inside a name (__new_sem_wait_slow64, which
		 * sem_wait tail-calls, leaves no frame of sem_wait) */
		name = waiting_function(frames, n, false);
		if (!name)
			name = waiting_function(frames, n, true);
		if (name) {
			snprintf(buf, len, "sleeps in %s", name);
			return;
		}
		snprintf(buf, len, "sleeps in a futex wait");
		return;
	}
	tracer_describe_kernel_state(st->th, buf, len);
}

/* Keep a spin's point (or a locked instruction) for the rest of the
 * search (the runs after this one plant it from their start, as they
 * plant the shared accesses). */
static void keep_spin_point(struct engine_serial *cfg, uint64_t pc)
{
	/* profiling: shared is the result, points the caller's (or none) */
	bool same = !cfg->profile && (cfg->points == cfg->shared || cfg->npoints == 0);

	if (add_shared(cfg, pc) == 0 && same) {
		cfg->points = cfg->shared;
		cfg->npoints = cfg->nshared;
	}
}

/* The first access other than the stack's that held thread th makes with
 * the instruction at pc (its registers give the address); false: none. */
static bool first_access(struct tr_thread *th, uint64_t pc, struct dis_access *out)
{
	struct dis_access acc[DIS_MAX_ACCESSES];
	int n, k;

	/* an access point's breakpoint keeps its decoding: asked at every
	 * choice, for every held thread, it is not decoded again */
	n = tracer_accesses_at(tracer_thread_process(th), pc, tracer_regs(th), acc,
			       DIS_MAX_ACCESSES);
	for (k = 0; k < n; k++)
		if (!acc[k].stack) {
			*out = acc[k];
			return true;
		}
	return false;
}

/* The value an access point is about to read (8 bytes at its first
 * non-stack access), 0 for a point with no access (a spin point). */
static uint64_t access_value(struct tr_thread *th, uint64_t pc)
{
	struct dis_access acc;
	uint64_t value = 0;

	if (!first_access(th, pc, &acc) ||
	    tracer_read(tracer_thread_process(th), acc.addr, &value, sizeof(value)) < 0)
		return 0;
	return value;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *b = data;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* The arithmetic flags, and DF: not RF or TF, which differ between a
 * thread stopped by an interrupt and one stopped at a breakpoint. */
#define LOOP_FLAGS 0xcd5ull

/* What one turn of a loop at pc changes, if it computes: the general
 * registers but the pc, the vector registers and the memory its
 * instruction reads.  A spin re-reads unchanged memory into the same
 * registers, and comes back to pc with the same state. */
static uint64_t loop_state(struct tr_thread *th, uint64_t pc)
{
	struct user_regs_struct regs = *tracer_regs(th);
	struct user_fpregs_struct fp;
	uint64_t h = 0xcbf29ce484222325ull, value = access_value(th, pc);

	regs.rip = 0;
	regs.eflags &= LOOP_FLAGS;
	h = fnv1a(h, &regs, sizeof(regs));
	if (tracer_fpregs(th, &fp) == 0)
		h = fnv1a(h, fp.xmm_space, sizeof(fp.xmm_space));
	return fnv1a(h, &value, sizeof(value));
}

static bool known_not_spin(const struct engine_serial *cfg, uint64_t pc)
{
	size_t i;

	for (i = 0; i < cfg->nnot_spins; i++)
		if (cfg->not_spins[i] == pc)
			return true;
	return false;
}

static void note_not_spin(struct engine_serial *cfg, uint64_t pc)
{
	uint64_t *grown = realloc(cfg->not_spins, sizeof(*grown) * (cfg->nnot_spins + 1));

	if (grown) { /* none: the pc is only probed again */
		cfg->not_spins = grown;
		cfg->not_spins[cfg->nnot_spins++] = pc;
	}
}

static void drop_spin_candidate(struct serial *s)
{
	if (!s->cand.armed)
		return;
	points_disarm_breakpoint(s->r, s->cand.proc, s->cand.pc);
	s->cand.armed = false;
}

/* The step ends at spin point pc, where th is. */
static enum loop_verdict stop_at_spin(struct serial *s, struct tr_thread *th, uint64_t pc)
{
	s->stop = STOP_POINT;
	s->stop_pc = pc;
	report_event(
	    s->r,
	    &(struct current_event){
		.ev = &(struct tr_event){.kind = TR_EV_BREAK, .thread = th, .pc = pc, .addr = pc},
		.label = "spin"});
	return LOOP_DONE;
}

/*
 * The running thread came back to the candidate pc.  The same state as
 * at its last arrival: a spin, and pc a point for the rest of the search.
 * Another: a loop that computes (a hash, a parse, a long sum), which a
 * point would stop at every turn, millions of times, until --max-steps
 * took the run for a livelock and the profile saw none of what followed;
 * pc is left alone for the rest of the search.
 */
static enum loop_verdict spin_candidate_hit(struct serial *s, struct tr_thread *th)
{
	uint64_t pc = s->cand.pc, state = loop_state(th, pc);

	if (!s->cand.seen) { /* its first arrival: the state to compare with */
		s->cand.seen = true;
		s->cand.state = state;
		run_resume(s->r, th);
		return LOOP_AGAIN;
	}
	if (state != s->cand.state) { /* it computes */
		drop_spin_candidate(s);
		note_not_spin(s->cfg, pc);
		run_resume(s->r, th);
		return LOOP_AGAIN;
	}
	s->cand.armed = false; /* its breakpoint is the point's now */
	keep_spin_point(s->cfg, pc);
	return stop_at_spin(s, th, pc);
}

/* Has the stack a frame in a function of the executable?  The spin point
 * goes there, not in a PLT stub the thread was interrupted in (memcmp@plt):
 * a point in a function reads as a line in the bug's schedule. */
static bool has_function_frame(const struct serial *s, const struct sym_frame *frames, int n)
{
	int k;

	for (k = 0; k < n; k++)
		if (frames[k].loc.func && in_ranges(s->exe_text, s->nexe_text, frames[k].pc))
			return true;
	return false;
}

/* Has the running thread's step run SPIN_PROOF_MS?  Counted in the CPU
 * time it used since the step's first probe (SPIN_MS into it), not in
 * wall time: on a busy host a loop that computes for half a second took
 * several, was taken for a spin, and each of its turns became a step until
 * --max-steps ended every run.  Wall time where /proc cannot say. */
static bool spin_proven(struct serial *s, struct tr_thread *th)
{
	int64_t cpu = tracer_thread_cpu_ms(th);

	if (cpu < 0)
		return tracer_now_ms() - s->step_began >= SPIN_PROOF_MS;
	if (s->step_cpu < 0)
		s->step_cpu = cpu;
	return cpu - s->step_cpu >= SPIN_PROOF_MS - SPIN_MS;
}

/*
 * The running thread made no point for SPIN_MS: it spins in a loop with no
 * point in it (a local, or memory read inside libc), which fair scheduling
 * cannot see, or it computes.  It was interrupted: the innermost pc of its
 * stack in the executable's text (the loop, or the return into it) is
 * watched for the thread's next arrival there (spin_candidate_hit), and
 * becomes a point, now and for the rest of the search, if that shows a
 * spin; the step ends there as at any point, and the same-point rule then
 * sees the spin.  A step that has run SPIN_PROOF_MS is taken for a spin
 * at once (spin_proven).  Inside a system call, or with no frame in the
 * executable, it just goes on.
 */
static enum loop_verdict spin_found(struct serial *s, struct tr_thread *th)
{
	struct sym_frame frames[SPIN_FRAMES];
	struct tr_process *p = tracer_thread_process(th);
	uint64_t pc = 0;
	bool named;
	int n, k;

	s->interrupting = false;
	s->probing = false;
	s->step_t0 = tracer_now_ms();
	n = (long)tracer_regs(th)->orig_rax >= 0 ? 0 : run_backtrace(s->r, th, frames, SPIN_FRAMES);
	named = has_function_frame(s, frames, n);
	for (k = 0; k < n && !pc; k++)
		if (in_ranges(s->exe_text, s->nexe_text, frames[k].pc) &&
		    (frames[k].loc.func || !named))
			pc = frames[k].pc;
	if (pc && !spin_proven(s, th) && !tracer_break_at(p, pc)) {
		/* not a point yet: watched, unless it computes or is watched
		 * already; at pc now, it arrives there as it is resumed */
		if (!known_not_spin(s->cfg, pc) && !(s->cand.armed && s->cand.pc == pc)) {
			drop_spin_candidate(s);
			if (points_arm_breakpoint(s->r, p, pc) < 0)
				return LOOP_STOP;
			s->cand = (struct spin_candidate){.proc = p, .pc = pc, .armed = true};
		}
		pc = 0;
	}
	if (!pc) {
		run_resume(s->r, th);
		return LOOP_AGAIN;
	}
	drop_spin_candidate(s);
	if (points_arm_breakpoint(s->r, p, pc) < 0)
		return LOOP_STOP;
	keep_spin_point(s->cfg, pc);
	if (pc != tracer_regs(th)->rip) {
		run_resume(s->r, th); /* it stops at the point as it returns there */
		return LOOP_AGAIN;
	}
	return stop_at_spin(s, th, pc);
}

/*
 * Is a thread held blocked in a futex wait of its own (raw_wait) that no
 * wake reached yet?  Then every step watches its system calls: a wake
 * made anywhere (libc's syscall(), the program's own syscall instruction,
 * a library) must reach it (wake_waiters).  A wake seen only in the steps
 * that may wait was lost when another kind of step made it: a waiter held
 * asleep while a correct wake came was reported as a deadlock
 * (serfutexasm, run 1).  A wait libc's synchronisation functions made
 * needs none of this: libc changes the word before it wakes, and a
 * changed word lets it go (futex_sleeps); watching every step for them
 * cost sercontrol, whose watcher waits on a condition variable, an eighth
 * of its runs per second.
 */
static bool futex_waiter_held(const struct serial *s)
{
	int i;

	for (i = 0; i < s->nthreads; i++)
		if (s->threads[i].state == SS_BLOCKED && s->threads[i].raw_wait &&
		    !s->threads[i].woken)
			return true;
	return false;
}

/*
 * A futex wake of up to n waiters on the word at uaddr, made by a thread
 * of p: the threads held blocked in a wait on that word, first blocked
 * first, are woken, as the kernel would have woken them had they been
 * asleep in it.  Held, they are not in its queue, and the wake would be
 * lost: harmless for libc's waits (glibc changes the word first, and
 * futex_sleeps lets them go on a changed word), a false deadlock for a
 * program's own, which only a wake ends (futex_sleeps).  A
 * woken thread's wait returns 0 when it runs (wake_returns).  Returns how
 * many it woke, which the wake's own return value counts.
 */
static long wake_waiters(struct serial *s, struct tr_process *p, uint64_t uaddr, uint64_t n)
{
	long woken = 0;

	for (; n > 0; n--) {
		struct sthread *first = NULL;
		int i;

		for (i = 0; i < s->nthreads; i++) {
			struct sthread *st = &s->threads[i];

			if (st->state == SS_BLOCKED && st->in_futex && !st->woken &&
			    st->futex == uaddr && tracer_thread_process(st->th) == p &&
			    (!first || st->blocked_at < first->blocked_at))
				first = st;
		}
		if (!first)
			break;
		first->woken = true;
		woken++;
	}
	return woken;
}

/* st was woken in its futex wait (wake_waiters): the call, which it would
 * make again, returns 0 instead, as a woken wait does. */
static void wake_returns(struct sthread *st)
{
	futex_wait_returns_woken(st->th);
	st->woken = false;
}

/*
 * What a blocked thread may do when no thread is enabled (blocked_options):
 * time out, asleep in a futex wait with a timeout (pthread_cond_timedwait,
 * sem_timedwait, a timed lock) that no wake reached; or wait for input from
 * outside the program (outside) that is not there yet, or that cctrace
 * cannot see (poll, select), from a driver, a client, a terminal.
 */
static bool times_out(const struct sthread *st)
{
	return st->in_futex && st->timed && !st->woken;
}

static bool waits_for_input(const struct sthread *st)
{
	return st->outside;
}

/*
 * The running thread is about to make a system call (its step resumed it
 * with tracer_resume_syscalls).  A futex wait on a word that holds the
 * value it waits for would sleep, as no other thread runs: the step ends
 * blocked here, held at the call's entry (which it makes when it runs
 * again, as a thread interrupted in it restarts it), instead of being
 * seen asleep by two samples of the kernel's state a millisecond apart,
 * which bounded the runs per second of any program that blocks.  Other
 * futex calls (a wake, a wait that returns at once) are watched on; any
 * other call ends the watching, the step's sampling seeing the rest.
 */
static enum loop_verdict syscall_entered(struct serial *s, struct tr_thread *th)
{
	const struct user_regs_struct *regs = tracer_regs(th);

	if (regs->orig_rax != TR_SYS_futex) {
		if (futex_waiter_held(s))
			tracer_resume_syscalls(th); /* its wake may come later */
		else
			tracer_resume(th);
		return LOOP_AGAIN;
	}
	if (futex_entry_sleeps(th)) {
		s->stop = STOP_BLOCKED;
		return LOOP_DONE;
	}
	if (futex_op_wakes(regs->rsi)) {
		long woken =
		    wake_waiters(s, tracer_thread_process(th), regs->rdi, (uint32_t)regs->rdx);

		if (woken > 0)
			tracer_add_to_return(th, woken);
	}
	tracer_resume_syscalls(th);
	return LOOP_AGAIN;
}

static enum loop_verdict step_event(struct run *r, const struct tr_event *ev,
				    struct loop_request *req)
{
	struct serial *s = req->ctx;
	int i = thread_index(s, ev->thread);

	if (i < 0) {
		report_outcome(r, OUTCOME_ERROR, "out of memory");
		return LOOP_STOP;
	}
	if (ev->kind == TR_EV_START) {
		/* a new thread or process: held where it starts, enabled */
		s->threads[i].site = s->create_site;
		if (!s->planted) {
			if (plant_points(s, tracer_thread_process(ev->thread)) < 0)
				return LOOP_STOP;
			snapshot_learn_points(r->snapshot, tracer_thread_process(ev->thread));
		}
		s->planted = true;
		report_event(r, &(struct current_event){.ev = ev});
		return s->running < 0 ? LOOP_DONE : LOOP_AGAIN;
	}
	if (ev->kind == TR_EV_EXIT) {
		if (i == s->running && tracer_regs(ev->thread)->orig_rax == TR_SYS_exit_group)
			s->ending = tracer_thread_process(ev->thread);
		run_resume(r, ev->thread); /* let it die: a join waits for that */
		if (i == s->running) {
			report_event(r, &(struct current_event){.ev = ev});
			s->stop = STOP_EXIT;
			return LOOP_DONE;
		}
		return LOOP_AGAIN;
	}
	if (i != s->running) {
		run_resume(r, ev->thread);
		return LOOP_AGAIN;
	}
	if (ev->kind == TR_EV_FORK && tracer_thread_waits_for_vfork(ev->thread)) {
		/* vfork (posix_spawn, system): the child goes first, as the
		 * parent would only wait for it in the kernel, where no
		 * interrupt reaches it */
		s->stop = STOP_FORK;
		report_event(r, &(struct current_event){.ev = ev});
		return LOOP_DONE;
	}
	if (ev->kind == TR_EV_SYSCALL)
		return syscall_entered(s, ev->thread);
	if (ev->kind == TR_EV_INTERRUPT && s->interrupting && s->probing)
		return spin_found(s, ev->thread);
	if (ev->kind == TR_EV_INTERRUPT && s->interrupting) {
		s->interrupting = false;
		if (!interrupted_in_syscall(ev->thread)) {
			/* its call returned between the last sample and the
			 * interrupt (a wait4 whose child just died): it was
			 * not blocked, and recorded as asleep in that call it
			 * would wait for what it has had */
			s->sampled = false;
			run_resume(r, ev->thread);
			return LOOP_AGAIN;
		}
		s->stop = STOP_BLOCKED;
		return LOOP_DONE;
	}
	if (ev->kind == TR_EV_BREAK) { /* the points, and profiling's allocations */
		int sync = sync_of(s, ev->addr),
		    alloc = svars_break(s->vars, r, ev->thread, ev->addr);

		if (alloc != 0)
			return alloc > 0 ? LOOP_AGAIN : LOOP_STOP;
		if (s->cand.armed && ev->addr == s->cand.pc &&
		    tracer_thread_process(ev->thread) == s->cand.proc)
			return spin_candidate_hit(s, ev->thread);
		s->stop = STOP_POINT;
		s->stop_pc = ev->addr;
		if (sync < 0 && s->cfg->profile)
			profile_hit(s, ev->thread, ev->addr);
		else if (s->cfg->profile)
			profile_sync_hit(s, ev->thread, ev->addr, sync);
		report_event(r, &(struct current_event){
				    .ev = ev, .label = sync >= 0 ? sync_fns[sync].name : "access"});
		return LOOP_DONE;
	}
	run_resume(r, ev->thread);
	return LOOP_AGAIN;
}

/* When to sample the running thread next.  Most steps that block do so
 * at once (a join, a condition wait, a contended lock): sampled every
 * millisecond at first, they are seen blocked in 2 ms instead of 10, the
 * cost that bounded the runs per second of programs that block; a long
 * step is sampled less often, as sampling takes the CPU it runs on. */
static int64_t next_sample_ms(const struct serial *s)
{
	int64_t now = tracer_now_ms();

	return now + (now - s->step_t0 < POLL_YOUNG_FOR_MS ? POLL_YOUNG_MS : POLL_MS);
}

/* Every thread waits for input from outside the program, and the one let
 * wait (outside_ok) has waited --timeout for it: a server with no client,
 * which no schedule of its threads will end. */
static enum loop_verdict outside_wait_too_long(struct run *r, const struct sthread *st, long nr)
{
	report_outcome(r, OUTCOME_ERROR,
		       "every thread waits for input from outside the program, %s in %s for "
		       "%.3g s; give a server its clients with --driver, or wait longer with "
		       "--timeout",
		       tracer_thread_name(st->th), tracer_syscall_name(nr),
		       (double)r->timeout_ms / 1000.0);
	return LOOP_STOP;
}

/*
 * The running thread asleep in the kernel twice in a row, nor in a futex
 * that is about to return: blocked.  A wait for input from outside the
 * program (epoll_wait, poll, accept, a read of a socket) may be a wait
 * for another thread (a server's workers wait in epoll for main to hand
 * them connections, before main has even opened its socket): the step
 * ends, the thread held, as for any sleep, unless no other thread could
 * run (outside_ok).  So does a sleep for a time that is no sleep point
 * (libc's sleep functions take no time, sleeps.c): a system call of the
 * program's own, or a runtime's (ThreadSanitizer's background thread
 * sleeps 100 ms in a loop for ever, and a step that waited each sleep out
 * never ended).  A serialized replay's `until blocked` ends there too
 * (blocked.c's waits_for_outside).
 */
static enum loop_verdict step_deadline(struct run *r, struct loop_request *req)
{
	struct serial *s = req->ctx;
	struct sthread *st;
	struct tr_kernel_sample now;

	req->deadline_ms = next_sample_ms(s);
	if (s->running < 0)
		return LOOP_DONE;
	st = &s->threads[s->running];
	if (s->interrupting || tracer_kernel_sample(st->th, &now) < 0)
		return LOOP_AGAIN;
	if (now.asleep && now.awaits_outside && s->outside_ok &&
	    !syscall_sleeps_for_time(now.syscall) && tracer_now_ms() - s->step_t0 >= r->timeout_ms)
		return outside_wait_too_long(r, st, now.syscall);
	if (!now.asleep || (now.awaits_outside && s->outside_ok)) {
		s->sampled = false;
		if (!now.asleep && tracer_now_ms() - s->step_t0 >= SPIN_MS &&
		    tracer_interrupt(st->th) == 0) {
			s->interrupting = true;
			s->probing = true;
		}
		return LOOP_AGAIN;
	}
	if (!s->sampled || now.switches != s->sample.switches) {
		s->sampled = true;
		s->sample = now;
		return LOOP_AGAIN;
	}
	tracer_interrupt(st->th);
	s->interrupting = true;
	return LOOP_AGAIN;
}

/* The step thread st made ended blocked.  Whose futex wait it sleeps in
 * is told by where it sleeps (futex_wait_maker), as a replay tells it: a
 * step that began at a lock of libc's may sleep in another wait after. */
static void note_blocked(struct serial *s, struct sthread *st)
{
	uint64_t *args = st->sleep_args;
	long nr = tracer_syscall_args(st->th, args);
	enum wait_maker maker = WAIT_LIBC;

	st->state = SS_BLOCKED;
	st->blocked_at = s->progress;
	st->in_futex = nr == TR_SYS_futex && futex_op_waits(args[1]);
	st->timed = st->in_futex && tracer_regs(st->th)->r10 != 0;
	st->outside = !st->in_futex && s->sampled && s->sample.awaits_outside;
	st->woken = false;
	st->futex = args[0];
	st->value = (uint32_t)args[2];
	st->sleep_nr = nr;
	if (st->in_futex)
		maker = futex_wait_maker(s->r, st->th);
	st->raw_wait = st->in_futex && maker != WAIT_LIBC;
	st->own_wait = st->in_futex && maker == WAIT_OWN;
}

/*
 * A spin over several points: in one turn, the thread came back to an
 * access point it stopped at before, seeing the same value, SPIN_REPEATS
 * times (a loop re-reading unchanged memory whose points alternate, which
 * the same-point rule misses).  A loop that writes what it reads, or
 * reads what changes, does not count.
 */
static bool spin_revisit(struct sthread *st, uint64_t pc)
{
	uint64_t value = access_value(st->th, pc);
	int k;

	for (k = 0; k < st->nseen; k++)
		if (st->seen[k].pc == pc && st->seen[k].value == value)
			return ++st->revisits >= SPIN_REPEATS;
	if (st->nseen < SPIN_WINDOW)
		st->seen[st->nseen++] = (struct seen_point){pc, value};
	else
		st->seen[st->revisits % SPIN_WINDOW] = (struct seen_point){pc, value};
	return false;
}

/* Could the step thread st is about to make sleep in a futex: from a
 * synchronisation function that waits, or back into the wait it was
 * blocked in? */
static bool may_wait(struct serial *s, const struct sthread *st)
{
	uint64_t pc = tracer_thread_pc(st->th);
	int sync = sync_of(s, pc);

	return st->was_blocked || (sync >= 0 && sync_fns[sync].waits) ||
	       (syscall_insn_at(s, st->th, pc) && tracer_regs(st->th)->rax == TR_SYS_futex);
}

/* Does the step thread st is about to make have its system calls
 * watched (a stop at each)?  Only when it may wait, or a wake it makes
 * may matter; the others are left to the sampling. */
static bool watches_syscalls(struct serial *s, const struct sthread *st)
{
	return may_wait(s, st) || futex_waiter_held(s);
}

/* Run thread i alone to its next point.  FLOW_STOP: the run is over. */
static enum flow run_step(struct serial *s, int i)
{
	struct loop_request req = {.deadline_ms = tracer_now_ms() + POLL_YOUNG_MS,
				   .on_event = step_event,
				   .on_deadline = step_deadline,
				   .ctx = s};
	struct sthread *st;
	enum flow flow;

	s->running = i;
	s->stop = STOP_NONE;
	s->sampled = false;
	s->interrupting = false;
	s->probing = false;
	s->step_t0 = s->step_began = tracer_now_ms();
	s->step_cpu = -1;
	s->threads[i].entry_return_known = false; /* it moves */
	if (s->threads[i].woken)
		wake_returns(&s->threads[i]);
	/* still blocked: chosen by blocked_options, to time out (its wait
	 * returns ETIMEDOUT, as when its time is up) or to wait for its input */
	s->outside_ok = s->threads[i].state == SS_BLOCKED && waits_for_input(&s->threads[i]);
	if (s->threads[i].state == SS_BLOCKED && times_out(&s->threads[i]))
		futex_wait_times_out(s->threads[i].th);
	s->threads[i].state = SS_READY;
	if (is_sleep_point(s, tracer_thread_pc(s->threads[i].th)))
		sleep_returns_now(s->threads[i].th, &s->threads[i].sleeps_skipped);
	if (watches_syscalls(s, &s->threads[i]))
		tracer_resume_syscalls(s->threads[i].th); /* a futex wait is seen at once */
	else
		tracer_resume(s->threads[i].th);
	flow = loop_run(s->r, &req);
	drop_spin_candidate(s);
	s->running = -1;
	if (flow == FLOW_STOP) {
		/* the run ended in this step (a crash, an assert): the replay
		 * must make the same step, to the thread's end */
		s->stop = STOP_EXIT;
		record_step(s, i);
		return FLOW_STOP;
	}
	st = &s->threads[i]; /* only now: the threads it created grew the table */
	if (s->stop != STOP_BLOCKED)
		s->progress++;
	if (s->stop == STOP_BLOCKED)
		note_blocked(s, st);
	st->was_blocked = s->stop == STOP_BLOCKED;
	st->internal = s->stop == STOP_POINT && no_choice_at(s, st, s->stop_pc);
	if (s->stop == STOP_POINT && !st->internal && sync_is(s, s->stop_pc, "pthread_create"))
		s->create_site = return_address(st);
	if (s->last_ran != i)
		st->nseen = st->revisits = 0; /* a new turn */
	s->last_ran = i;
	if (s->stop == STOP_POINT && !st->internal) {
		st->repeats = st->last_pc == s->stop_pc ? st->repeats + 1 : 1;
		st->last_pc = s->stop_pc;
		int sync = sync_of(s, s->stop_pc);
		st->yielding = (sync >= 0 && sync_fns[sync].yield) || st->repeats >= SPIN_REPEATS ||
			       (sync < 0 && spin_revisit(st, s->stop_pc));
		if (st->yielding)
			st->repeats = st->nseen = st->revisits = 0;
	}
	record_step(s, i);
	if (s->cfg->describe)
		describe_stop(s, i);
	return FLOW_NEXT;
}

/* Take every queued event (new threads) without moving anyone. */
static enum flow settle(struct serial *s, int64_t ms)
{
	struct loop_request req = {
	    .deadline_ms = tracer_now_ms() + ms, .on_event = step_event, .ctx = s};

	s->running = -1;
	return loop_run(s->r, &req);
}

static void report_serial_deadlock(struct serial *s)
{
	struct run *r = s->r;
	int i;

	r->no_drain = true;
	report_outcome(r, OUTCOME_BUG,
		       "deadlock: every thread is blocked (serialized execution, step %ld)",
		       s->steps);
	for (i = 0; i < s->nthreads; i++) {
		struct tr_thread *th = s->threads[i].th;
		char state[128];

		if (tracer_thread_exited(th) || !tracer_thread_held(th))
			continue;
		describe_wait(s, &s->threads[i], state, sizeof(state));
		if (r->opt->report)
			fprintf(r->opt->report, "  %s: %s\n", tracer_thread_name(th), state);
		report_stack(r, th);
	}
	/* the replay ends the same way: every live thread run until blocked */
	if (r->record) {
		char var[32];
		bool first = true;

		flush_segment(s);
		for (i = 0; i < s->nthreads; i++)
			if (!tracer_thread_exited(s->threads[i].th) &&
			    tracer_thread_held(s->threads[i].th) && !s->bound_var[i]) {
				fprintf(r->record, "thread %s = %s\n",
					var_of(s, i, var, sizeof(var)),
					tracer_thread_name(s->threads[i].th));
				s->bound_var[i] = true;
			}
		/* one held at a taken spinlock would spin: it stays held,
		 * which the replay counts as blocked */
		for (i = 0; i < s->nthreads; i++)
			if (!tracer_thread_exited(s->threads[i].th) &&
			    tracer_thread_held(s->threads[i].th) &&
			    !waits_for_spinlock(s, &s->threads[i])) {
				fprintf(r->record, "%s%s", first ? "run " : ", ",
					var_of(s, i, var, sizeof(var)));
				first = false;
			}
		if (!first)
			fprintf(r->record, " until blocked\n");
	}
}

static bool anyone_running(struct serial *s)
{
	int i;

	for (i = 0; i < s->nthreads; i++)
		if (!tracer_thread_exited(s->threads[i].th) &&
		    !tracer_thread_held(s->threads[i].th))
			return true;
	return false;
}

static bool times_out(const struct sthread *st);

/* --early-timeouts: the threads held in a timed wait, after the n enabled
 * ones, as threads that may run: run, their wait times out (step).  Only
 * beside an enabled thread; with none, blocked_options makes them the
 * choices anyway.  CHESS's view of a timeout: the thread that holds the
 * lock may always be slower than the time a waiter gives it. */
static int add_early_timeouts(struct serial *s, int n)
{
	int i;

	for (i = 0; n > 0 && s->cfg->early_timeouts && i < s->nthreads; i++) {
		struct sthread *st = &s->threads[i];

		if (st->state == SS_BLOCKED && times_out(st) && !tracer_thread_exited(st->th) &&
		    tracer_thread_held(st->th))
			s->options[n++] = i;
	}
	return n;
}

/* The enabled threads into s->options (their ids in s->ids); how many. */
static int collect_options(struct serial *s)
{
	int i, n = 0, fair = 0;

	s->memo_on = true;
	s->nmemo = 0;
	for (i = 0; i < s->nthreads; i++)
		if (enabled(s, &s->threads[i]))
			s->options[n++] = i;
	s->memo_on = false;
	n = add_early_timeouts(s, n);
	/* a yielding or spinning thread gives way to the others (not when
	 * following a schedule: its lines say who runs) */
	for (i = 0; i < n && !s->cfg->describe; i++)
		if (!s->threads[s->options[i]].yielding)
			s->options[fair++] = s->options[i];
	if (fair > 0 && fair < n)
		n = fair;
	for (i = 0; i < s->nthreads; i++)
		s->threads[i].yielding = false;
	for (i = 0; i < n; i++)
		s->ids[i] = s->options[i];
	return n;
}

/*
 * No thread is enabled: the held threads blocked in a wait that may end
 * without another thread (due: times_out, waits_for_input) are the options.
 * Neither is an option while another thread can run: no timeout is shorter
 * than the steps of a serialized run (a waiter another thread wakes is
 * woken), and input from outside comes when the program waits for it.
 * pbzip2's consumers, who wait a second at a time for work until main says
 * it is all done, made a false deadlock of main's pthread_cond_destroy
 * before; memcached's workers, waiting in epoll for connections main had
 * not yet accepted, stopped every run.
 */
static int blocked_options(struct serial *s, bool (*due)(const struct sthread *st))
{
	int i, n = 0;

	for (i = 0; i < s->nthreads; i++) {
		struct sthread *st = &s->threads[i];

		if (st->state != SS_BLOCKED || !due(st) || tracer_thread_exited(st->th) ||
		    !tracer_thread_held(st->th))
			continue;
		s->options[n] = s->ids[n] = i;
		n++;
	}
	return n;
}

static int grow_options(struct serial *s)
{
	int *ids = realloc(s->ids, sizeof(*ids) * ((size_t)s->nthreads + 1));
	int *options =
	    ids ? realloc(s->options, sizeof(*options) * ((size_t)s->nthreads + 1)) : NULL;

	if (ids)
		s->ids = ids;
	if (options)
		s->options = options;
	bool *bound =
	    options ? realloc(s->bound_var, sizeof(*bound) * ((size_t)s->nthreads + 1)) : NULL;
	if (!bound)
		return -1;
	s->bound_var = bound;
	struct engine_access *access =
	    realloc(s->access, sizeof(*access) * ((size_t)s->nthreads + 1));
	if (!access)
		return -1;
	s->access = access;
	for (; s->nbound <= s->nthreads; s->nbound++)
		s->bound_var[s->nbound] = false;
	return 0;
}

/* A thread the tracer saw cloned whose first stop has not come yet: the
 * choice waits for it, or the options would depend on how fast the
 * kernel reports it (and the same seed would make another run). */
static bool start_pending(struct serial *s)
{
	struct tr_thread *th;

	tr_for_each_thread(th, s->r->t)
		if (!tracer_thread_exited(th) && tracer_thread_last_event(th) == TR_EV_NONE)
			return true;
	return false;
}

/* A thread of the ending process whose death has not been seen yet. */
static bool ending_pending(struct serial *s)
{
	int i;

	for (i = 0; s->ending && i < s->nthreads; i++)
		if (tracer_thread_process(s->threads[i].th) == s->ending &&
		    !tracer_thread_exited(s->threads[i].th) &&
		    tracer_thread_last_event(s->threads[i].th) != TR_EV_EXIT)
			return true;
	return false;
}

/* Is the ending process the child of a live process of the program (one
 * that may wait4 for it)?  Not the first process, whose end ends the run,
 * seen by the loop. */
static bool ending_has_parent(struct serial *s)
{
	struct tr_process *p;

	tr_for_each_process(p, s->r->t)
		if (tracer_process_alive(p) &&
		    tracer_process_pid(p) == tracer_process_parent_pid(s->ending))
			return true;
	return false;
}

/* Wait for the threads of an ending child process, past their exit events,
 * to be gone, the leader last (the kernel reports it only after the
 * others).  A traced child's zombie is its tracer's until cctrace reaps
 * it: only then is its parent told, so the parent's wait4 returned, or was
 * found ready (ready.c: the child shows 'Z' before), in some runs and not
 * in others, and the same seed did not make the same schedule. */
static void bury_ending(struct serial *s)
{
	int64_t deadline = tracer_now_ms() + BURY_MS;
	int i, leader = -1;

	/* once: a thread that does not go in time would cost every pick */
	if (!s->ending || s->buried == s->ending || !ending_has_parent(s))
		return;
	s->buried = s->ending;
	for (i = 0; i < s->nthreads; i++) {
		struct tr_thread *th = s->threads[i].th;

		if (tracer_thread_process(th) != s->ending || tracer_thread_exited(th) ||
		    tracer_thread_last_event(th) != TR_EV_EXIT)
			continue;
		if (tracer_thread_tid(th) == tracer_process_pid(s->ending))
			leader = i;
		else
			tracer_await_gone(th, deadline);
	}
	if (leader >= 0)
		tracer_await_gone(s->threads[leader].th, deadline);
}

/* The non-stack access thread i makes first when it goes on: the access
 * point it is held at, decoded with its registers (what ib needs to tell
 * which reads see another thread's write).  None (addr 0) when it is held
 * at a synchronisation function, at its start or after blocking. */
static struct engine_access next_access(struct serial *s, int i)
{
	struct sthread *st = &s->threads[i];
	uint64_t pc = tracer_thread_pc(st->th);
	struct dis_access acc;

	if (!pc || pc != st->last_pc || sync_of(s, pc) >= 0 || !first_access(st->th, pc, &acc))
		return (struct engine_access){0};
	return (struct engine_access){acc.addr, (acc.rw & DIS_READ) != 0,
				      (acc.rw & DIS_WRITE) != 0};
}

/* The variable whose access (or synchronisation object) the thread that
 * ran last is held at; -1: none, or no variables. */
static int current_var(struct serial *s)
{
	struct sthread *st;
	struct engine_access a;
	uint64_t pc;
	int sync;

	if (!s->cfg->nvars || s->cur < 0)
		return -1;
	st = &s->threads[s->cur];
	pc = tracer_thread_pc(st->th);
	if (tracer_thread_exited(st->th) || !tracer_thread_held(st->th) || pc != st->last_pc)
		return -1;
	sync = sync_of(s, pc);
	if (sync >= 0 && is_exit(sync))
		return svars_exit(s->vars, false);
	if (sync >= 0)
		return sync_has_object(sync) ? svars_var_at(s->vars, pc, tracer_regs(st->th)->rdi)
					     : -1;
	a = next_access(s, s->cur);
	return svars_var_at(s->vars, pc, a.addr);
}

/* cfg->describe: the threads' names and where the last step stopped. */
static int describe_threads(struct serial *s, struct engine_choice *c)
{
	const char **names = realloc(s->names, sizeof(*names) * ((size_t)s->nthreads + 1));
	int i;

	if (!names)
		return -1;
	s->names = names;
	for (i = 0; i < s->nthreads; i++)
		names[i] = tracer_thread_name(s->threads[i].th);
	c->thread_names = names;
	c->current_where = s->cur >= 0 ? s->where : NULL;
	return 0;
}

/* The one enabled thread goes, unasked; the next choice tells its step
 * (ib counts the reads and writes of every step). */
static int forced_step(struct serial *s)
{
	int i = s->options[0];

	if (vec_reserve(&s->forced, &s->forced_cap, s->nforced, sizeof(*s->forced)) < 0) {
		report_outcome(s->r, OUTCOME_ERROR, "out of memory");
		return -1;
	}
	s->forced[s->nforced++] = (struct engine_step){i, next_access(s, i)};
	return i;
}

/* What an option is about to do, as a key: its pc, with the caller of a
 * synchronisation function, or for a thread at its start the call that
 * created it. */
static uint64_t kind_of(struct serial *s, struct sthread *st)
{
	uint64_t pc = tracer_thread_pc(st->th), more = 0;

	if (tracer_thread_last_event(st->th) == TR_EV_START)
		more = st->site;
	else if (sync_of(s, pc) >= 0)
		more = return_address(st);
	return pc ^ (more * 0x9e3779b97f4a7c15ull);
}

/* Which enabled thread goes next: -1 when the run is over. */
static int pick(struct serial *s)
{
	int n, k, tries = 0;

	/* inside libc: it goes on, as if the point were not there */
	if (s->cur >= 0 && s->threads[s->cur].internal && enabled(s, &s->threads[s->cur]))
		return s->cur;
	while ((start_pending(s) || ending_pending(s)) && tries++ < SETTLE_TRIES)
		if (settle(s, POLL_MS) == FLOW_STOP)
			return -1;
	bury_ending(s);
	tries = 0;
	for (;;) {
		if (grow_options(s) < 0) {
			report_outcome(s->r, OUTCOME_ERROR, "out of memory");
			return -1;
		}
		n = collect_options(s);
		if (n > 0)
			break;
		if (s->nthreads == 0 || (anyone_running(s) && tries++ < SETTLE_TRIES)) {
			if (settle(s, POLL_MS) == FLOW_STOP)
				return -1;
			continue;
		}
		n = blocked_options(s, waits_for_input);
		if (n == 0)
			n = blocked_options(s, times_out);
		if (n > 0)
			break;
		report_serial_deadlock(s);
		return -1;
	}
	if (n == 1 && !s->cfg->describe && !s->cfg->every_step)
		return forced_step(s);
	for (k = 0; k < n; k++) {
		s->access[k] = next_access(s, s->options[k]);
		s->access[k].kind = kind_of(s, &s->threads[s->options[k]]);
	}
	struct engine_choice c = {.n = n,
				  .ids = s->ids,
				  .current = s->cur,
				  .current_var = current_var(s),
				  .access = s->access,
				  .forced = s->forced,
				  .nforced = s->nforced};
	s->nforced = 0; /* told */
	if (s->cfg->describe && describe_threads(s, &c) < 0) {
		report_outcome(s->r, OUTCOME_ERROR, "out of memory");
		return -1;
	}
	k = s->r->oracle->choose(s->r->oracle->ctx, &c);
	if (k == ENGINE_CHOICE_ABANDON) {
		s->r->abandoned = true;
		report_outcome(s->r, OUTCOME_INFEASIBLE, "the run lies outside this shard");
		return -1;
	}
	assert(k >= 0 && k < n);
	return s->options[k];
}

static void free_serial(struct serial *s)
{
	free(s->memo);
	free(s->threads);
	free(s->bound_var);
	free(s->seg.pcs);
	free(s->seg.counts);
	free(s->hits);
	free(s->hot);
	free(s->ids);
	free(s->options);
	free(s->access);
	svars_free(s->vars);
	free(s->names);
	free(s->forced);
	free(s->lib_text);
	free(s->exe_text);
}

static enum flow serial_search(struct run *r, struct engine_serial *cfg)
{
	struct serial s = {
	    .r = r, .cfg = cfg, .cur = -1, .last_ran = -1, .running = -1, .seg = {.thread = -1}};
	long max_steps = cfg->max_steps > 0 ? cfg->max_steps : ENGINE_SERIAL_MAX_STEPS;
	enum flow flow = FLOW_STOP;
	int i;

	s.vars = svars_new(cfg);
	if (!s.vars) {
		report_outcome(r, OUTCOME_ERROR, "out of memory");
		goto out;
	}
	if (settle(&s, 0) == FLOW_STOP)
		goto out;
	while (!r->finished) {
		i = pick(&s);
		if (i < 0)
			break;
		if (++s.steps > max_steps) {
			r->no_drain = true;
			report_outcome(r, OUTCOME_INFEASIBLE,
				       "livelock candidate: %ld steps and the program has not "
				       "ended (--max-steps)",
				       max_steps);
			break;
		}
		s.cur = i;
		if (run_step(&s, i) == FLOW_STOP)
			break;
	}
	flow = FLOW_STOP;
out:
	flush_segment(&s);
	cfg->steps_out = s.steps;
	if (cfg->profile)
		profile_finish(&s);
	free_serial(&s);
	return flow;
}

enum flow exec_serial(struct run *r, const struct stmt *st)
{
	(void)st;
	r->serial = true;
	if (r->record)
		fprintf(r->record, "serial\n");
	if (r->oracle && r->oracle->serial)
		return serial_search(r, r->oracle->serial);
	/* take the queued start events: their threads stay held (serial_keeps) */
	return loop_run(r, &(struct loop_request){.deadline_ms = tracer_now_ms()});
}

bool serial_keeps(struct run *r, struct tr_thread *th)
{
	return r->serial && run_thread(r, th)->bound < 0 &&
	       tracer_thread_last_event(th) == TR_EV_START;
}
