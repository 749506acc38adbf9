/*
 * typestate.c: `cctrace typestate`, 2ndStrike (Gao et al., ASPLOS'11) out
 * of process.
 *
 * 1. Profile.  One ordinary run under a generated schedule whose only wait
 *    taps enter(F) and return(F) of every function the models and the
 *    synchronisation need (engine run_hooks.tap): the program runs freely,
 *    each call is recorded with its thread, arguments, return value,
 *    caller and stack.  The raw calls are kept and analysed after the run
 *    (2ndStrike analyses on the fly to save disk; we keep the log in
 *    memory, which is the same algorithm over the same stream).  A return
 *    whose transits' ok condition holds is an alternative of its own on a
 *    line of its own, and the tap says which line held: a failed transit
 *    moves nothing.  When a model names system calls, libc's syscall() is
 *    tapped too and its calls are taken for the system calls they make,
 *    and the profile stops at those system calls, so that one made by a
 *    syscall instruction outside the tapped functions is seen (its result
 *    is not: it is taken to succeed).
 * 1b. Stepping profile (a model with `deref`: memory).  The call profile
 *    says which blocks are shared (freed, and made or used by another
 *    thread than the one that freed it: handed to pthread_create, a call
 *    on an address inside it); a second run taps the calls again and the
 *    loads and stores in those blocks, decoding (the engine's stepper)
 *    only those threads, outside the tapped calls, in windows after each
 *    of their events (run_hooks.tap_step_budget).  It replaces the call
 *    profile, unless it does not end in time.  2ndStrike instruments
 *    pointer dereferences in the program (its section 3.2, the heaviest of
 *    its typestates); an unmodified binary has no hook for them, and
 *    decoding only the threads and windows that matter keeps the cost
 *    near the call profile's.
 * 2. Analysis.  Vector clocks from thread create/join, condition
 *    variables, semaphores and barriers (and mutex unlock->lock with
 *    lock_order: off by default, because the order in which two threads
 *    took a lock in one run is what a different schedule flips, and counting
 *    it as happens-before hides exactly the bugs looked for, pbzip2's among
 *    them); a second set of clocks with the lock handoffs, for the ranking.
 *    Each model's objects (per process) are tracked through their states,
 *    and an owned state (a held lock) through its owner; a transit to a
 *    "creation" (its object is the return value or an array element: open,
 *    malloc, pipe) starts a new generation of the object, so that a reused
 *    descriptor number or address does not pair events of two different
 *    objects, and a sized one (malloc's size) makes a block, so that a
 *    call given an address inside it is on the block.
 * 3. Candidates (2ndStrike's Algorithm 1, both scenarios of its Figure 4):
 *    a limit L in thread T2 and a transit X in T1 != T2 on the same object
 *    and generation, unordered by happens-before, where L was allowed (to
 *    T2: an owned state allows only its owner, or a call that waits for
 *    it) before X and is not after it (L came first) or is allowed after X
 *    and not before it (X came first); and the pairs the profile itself
 *    saw violated, held as they happened (violates()); and, in a model
 *    with owned states, a limit its own thread's latest transit left
 *    forbidden (an unlock of a mutex it had unlocked), observed within one
 *    thread and re-executed as it happened (own_schedule).  Equal pairs (same
 *    functions and roles, same callers) are one candidate with its
 *    instances.  Ranked (2ndStrike gives two metrics and no formula): a
 *    thread's own violations first, then pairs nothing orders, not even
 *    lock handoffs; then fewest
 *    occurrences; then longest distance (in calls) between the two events.
 *    Candidates listed in DIR/typestate-history (ones that failed to
 *    manifest before) are dropped unless ignore_history.
 * 4. Re-execution: per candidate a schedule in the schedule language (so
 *    the same text is the bug's replayable bug-N.sched; see
 *    attempt_schedule): hold the thread of the preceding event at its call
 *    (matched by function, object, caller, caller's caller and instance),
 *    wait for another thread's subsequent event on the same object from the
 *    same caller, run that one through its call, then let the held thread
 *    make its call; with a time limit on every wait.  A load or store is
 *    held at its instruction (at(FUNC+0xOFF)) and then decoded until it
 *    touches the freed block (deref_schedule); a call made by a syscall
 *    instruction is held at its system-call stop and made by one step
 *    (run_through).  A candidate that
 *    does not manifest is tried on its other instances that matter
 *    (pick_instances).  A plain run and the profile have limits too: a bug
 *    of this kind may hang the program.
 * 5. Verdict: only outcome bug counts: the limit's `ok` condition false at
 *    its return (EBADF, EINVAL, EBUSY: the call itself saw the violation),
 *    a crash, an abort, or, for a limit without `ok` or a violation of
 *    ownership the call's result need not show, the model's own check: the
 *    schedule reached the point where the limited call is made on the
 *    object in a state that forbids it.
 */
#include "lang/lang.h"
#include "search/internal.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_ATTEMPT_MS     5000
#define REPLAY_MS	       20000
#define DEFAULT_INSTANCES      3 /* re-executions of one candidate */
#define PLAIN_LIMIT_MS	       60000
#define PLAIN_SLICE_MS	       100 /* how often the plain run looks for Ctrl-C */
#define PROFILE_MARGIN_MS      10000
#define PROFILE_HUNG_MARGIN_MS 3000
/* Before the verdict: how long the program may take to end after it (a
 * violation may leave it hung on a lock in freed memory). */
#define AFTER_BUG    "\ttimeout 2s   # for the program to end after the bug\n"
#define STACK_FRAMES 6
/* The stepping profile decodes a thread for this many of the stepper's
 * stops after each of its events that matters (engine tap_step_budget). */
#define STEP_BUDGET 2000
/* ... and gives it this many times the call profile's time, and more */
#define STEP_LIMIT_FACTOR 5
#define STEP_LIMIT_MS	  2000
#define SYSCALL_WRAPPER	  "syscall" /* libc's syscall(nr, ...) */

/* Synchronisation the vector clocks follow. */
enum ts_sync {
	SYNC_NONE,
	SYNC_CREATE,	/* pthread_create: the child starts after the call */
	SYNC_JOIN,	/* pthread_join: the joined thread ended before it returns */
	SYNC_RELEASE,	/* cond signal, sem_post: at entry, on arg1 */
	SYNC_ACQUIRE,	/* sem_wait: at return, from arg1 */
	SYNC_COND_WAIT, /* cond wait: SYNC_ACQUIRE, and unlocks arg2 at entry, locks it at return */
	SYNC_BARRIER,	/* pthread_barrier_wait: both */
	SYNC_UNLOCK,	/* lock_order only */
	SYNC_LOCK,	/* lock_order only */
};

static const struct {
	const char *name;
	enum ts_sync sync;
} sync_funcs[] = {
    {"pthread_create", SYNC_CREATE},
    {"pthread_join", SYNC_JOIN},
    {"pthread_cond_signal", SYNC_RELEASE},
    {"pthread_cond_broadcast", SYNC_RELEASE},
    {"pthread_cond_wait", SYNC_COND_WAIT},
    {"pthread_cond_timedwait", SYNC_COND_WAIT},
    {"pthread_cond_clockwait", SYNC_COND_WAIT},
    {"sem_post", SYNC_RELEASE},
    {"sem_wait", SYNC_ACQUIRE},
    {"sem_timedwait", SYNC_ACQUIRE},
    {"sem_clockwait", SYNC_ACQUIRE},
    {"pthread_barrier_wait", SYNC_BARRIER},
    {"pthread_mutex_unlock", SYNC_UNLOCK},
    {"pthread_mutex_lock", SYNC_LOCK},
};

struct flat_op {
	struct ts_model *m;
	int model;
	struct ts_op *op;
};

struct fn {
	char *name;
	enum ts_sync sync;
	int *ops; /* flat op indices */
	int nops;
	const char *ok; /* its transits' ok condition (one for all of them); NULL */
	int ok_line;	/* the profile schedule's line of `return(F) && (ok)` */
};

/* One tapped call event. */
struct raw {
	int thread, fn;
	bool ret;
	bool failed;	  /* a return whose transits' ok condition was false */
	bool via_syscall; /* made through libc's syscall(nr, ...): args shifted by one */
	bool via_insn;	  /* a syscall instruction outside the tapped functions (a system-call
			   * stop): caller is its function's start, context its name */
	bool recursive;	  /* on a recursive mutex (is_recursive_mutex): no model's */
	int entry;	  /* a return: the raw index of its entry, -1 if unseen */
	uint64_t args[6]; /* a return: its entry's */
	uint64_t retval, caller, tls, created_tls;
	int64_t *elems; /* a return: per op of fn, argN[K] read then (0 if none) */
	double ms;
	char *where;   /* "reader (fdclose.c:39)": the caller's frame, and its caller's */
	char *context; /* the caller's caller, if in the caller's module: in(F) */
	char *stack;   /* the call stack, one frame a line */
	char *at;      /* an access: FUNC+0xOFF of its instruction, for at() */
};

struct opev {
	int flat, thread, raw, entry_raw, gen;
	int proc;		       /* the N of its thread's pN.tM: objects are per process */
	int64_t obj;		       /* the object: a block's start for an address inside it */
	int64_t value;		       /* what the call was given (an address inside the block) */
	int before, after;	       /* states around it */
	int before_owner, after_owner; /* the thread owning an owned state; -1 */
	int last_transit;	       /* the latest transit on the object before it; -1 */
	/* a transit whose ok condition the profile saw false (a destroy of a
	 * held mutex: EBUSY): it moved nothing, and after is the state it
	 * would have left; see violates() */
	bool failed;
	uint32_t *vc;	   /* happens-before */
	uint32_t *weak_vc; /* happens-before with lock handoffs (the ranking's lock order) */
};

/* One instance of a candidate: opev indices, pre is the event held. */
struct instance {
	int pre, sub;
};

struct candidate {
	/* Instances of one pair of calls (same functions, callers and callers'
	 * callers) are one candidate, tried in the order pick_instances says;
	 * pre and sub are the latest instance's. */
	int pre, sub;
	struct instance *inst; /* every instance, in the profile's order */
	int count, inst_cap;
	long distance;
	bool lock_ordered; /* every instance ordered by lock handoffs in the profile */
	/* a violation the profile saw within one thread (lock pairing): pre is
	 * the thread's own transit, sub its limit that the state forbids */
	bool own;
	/* the profile saw the limit after the transit, in the state it left:
	 * the limit may need the transit's thread to go on (a flag it sets) */
	bool seen_after;
	char *key;
};

struct ts {
	const struct typestate_options *o;
	/* the log of a profile run that itself ended in a bug, NULL if none:
	 * with no candidate that manifests, the result is that bug, not 0 */
	char *profile_bug_log;
	struct ts_models models;
	struct flat_op *flat;
	int nflat;
	struct fn *fns;
	int nfns;
	struct raw *raws;
	int nraws, raws_cap;
	char **threads;
	int nthreads;
	/* per thread during the profile: the entries awaiting their return,
	 * and the accesses kept since its latest call (one like them, by the
	 * same instruction in the same block, is not kept again) */
	struct pending {
		int *raw;
		int n, cap;
		int *accesses;
		int naccesses, accesses_cap;
	} * pending;
	struct opev *evs;
	int nevs, evs_cap;
	struct candidate *cands;
	int ncands, cands_cap;
	char **history;
	int nhistory;
	/* a model names system calls (close, read): libc's syscall() is tapped
	 * too, and a call of it is taken for the system call it makes */
	bool syscalls;
	/* The stepping profile (a model has `deref`): the blocks the call
	 * profile saw more than one thread use, and the threads whose loads and
	 * stores in them are decoded (all but the one that freed each). */
	int deref_fn; /* fns index of TS_DEREF_FUNC; -1 */
	struct span {
		uint64_t start, size;
	} * shared;
	int nshared, shared_cap;
	char **stepped;
	int nstepped, stepped_cap;
	char *dir;
	int64_t t0; /* when typestate_run started: time to the first bug */
	char err[1024];
};

static bool allowed(const struct ts_op *op, int state);
static uint64_t block_size(const struct raw *r, const struct ts_op *op);

static void *grow_array(void *a, int *cap, int need, size_t size)
{
	void *g;
	int c = *cap ? *cap : 16;

	if (need <= *cap)
		return a;
	while (c < need)
		c *= 2;
	g = realloc(a, (size_t)c * size);
	if (!g) {
		fprintf(stderr, "cctrace: out of memory\n");
		abort();
	}
	*cap = c;
	return g;
}

/* --- functions --- */

static int fn_index(struct ts *ts, const char *name)
{
	int i;

	for (i = 0; i < ts->nfns; i++)
		if (strcmp(ts->fns[i].name, name) == 0)
			return i;
	return -1;
}

static int fn_add(struct ts *ts, const char *name)
{
	int i = fn_index(ts, name), cap = ts->nfns;

	if (i >= 0)
		return i;
	ts->fns = grow_array(ts->fns, &cap, ts->nfns + 1, sizeof(*ts->fns));
	ts->fns[ts->nfns] = (struct fn){.name = strdup(name)};
	return ts->nfns++;
}

/* A function's transits share one ok condition: the profile tells one
 * condition apart per function. */
static int note_transit_ok(struct ts *ts, struct fn *f, const struct ts_op *op)
{
	if (!op->transit || !op->ok)
		return 0;
	if (f->ok && strcmp(f->ok, op->ok) != 0) {
		snprintf(ts->err, sizeof(ts->err),
			 "the transits of %s have different ok conditions ('%s', '%s'): give them "
			 "one",
			 f->name, f->ok, op->ok);
		return -1;
	}
	f->ok = op->ok;
	return 0;
}

static int collect_functions(struct ts *ts)
{
	int i, j, cap = 0;
	size_t k;

	for (i = 0; i < ts->models.n; i++)
		for (j = 0; j < ts->models.m[i].nops; j++) {
			struct fn *f;
			int fi;

			ts->flat = grow_array(ts->flat, &cap, ts->nflat + 1, sizeof(*ts->flat));
			ts->flat[ts->nflat] =
			    (struct flat_op){&ts->models.m[i], i, &ts->models.m[i].ops[j]};
			fi = fn_add(ts, ts->models.m[i].ops[j].func);
			f = &ts->fns[fi];
			f->ops = realloc(f->ops, sizeof(int) * (size_t)(f->nops + 1));
			f->ops[f->nops++] = ts->nflat++;
			if (note_transit_ok(ts, f, ts->flat[ts->nflat - 1].op) < 0)
				return -1;
		}
	for (k = 0; k < sizeof(sync_funcs) / sizeof(sync_funcs[0]); k++) {
		/* Lock handoffs are always noted when a model has the profile tap
		 * them anyway (the ranking's lock order), but tapped for their own
		 * sake only with lock_order. */
		if ((sync_funcs[k].sync == SYNC_UNLOCK || sync_funcs[k].sync == SYNC_LOCK) &&
		    !ts->o->lock_order && fn_index(ts, sync_funcs[k].name) < 0)
			continue;
		int fi = fn_add(ts, sync_funcs[k].name); /* may move ts->fns */

		ts->fns[fi].sync = sync_funcs[k].sync;
	}
	for (i = 0; i < ts->nfns && !ts->syscalls; i++)
		ts->syscalls = ts->fns[i].nops && engine_syscall_number(ts->fns[i].name) >= 0;
	if (ts->syscalls)
		fn_add(ts, SYSCALL_WRAPPER);
	return 0;
}

/* An earlier function at addr (another name of the same function, glibc's
 * open and open64), or -1. */
static int same_function(const uint64_t *addrs, const bool *present, int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (present[j] && addrs[j] && addrs[j] == addrs[i])
			return j;
	return -1;
}

/* fns[from]'s model operations become fns[to]'s too. */
static int merge_ops(struct fn *to, const struct fn *from)
{
	int *grown = realloc(to->ops, sizeof(int) * (size_t)(to->nops + from->nops));

	if (!grown && to->nops + from->nops > 0)
		return -1;
	to->ops = grown;
	memcpy(to->ops + to->nops, from->ops, sizeof(int) * (size_t)from->nops);
	to->nops += from->nops;
	if (!to->ok)
		to->ok = from->ok;
	return 0;
}

/* Does an op before k name the same function (a transit and a limit)? */
static bool named_before(const struct ts_model *model, int k)
{
	int i;

	for (i = 0; i < k; i++)
		if (strcmp(model->ops[i].func, model->ops[k].func) == 0)
			return true;
	return false;
}

/* A model none of whose functions the program has finds nothing: said for
 * one a file gave (a misspelt name, another program's model), and an
 * error when no model is left, as a search that tests nothing is not one
 * that found no bug. */
static int check_models_present(struct ts *ts, const char *program, const bool *present)
{
	char names[512];
	int m, k, usable = 0;

	for (m = 0; m < ts->models.n; m++) {
		const struct ts_model *model = &ts->models.m[m];
		bool any = false;
		size_t len = 0;

		names[0] = 0;
		for (k = 0; k < model->nops && !any; k++) {
			int fn = fn_index(ts, model->ops[k].func);

			any = fn >= 0 && present[fn];
			if (len < sizeof(names) && !named_before(model, k))
				len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
							k ? ", " : "", model->ops[k].func);
		}
		usable += any;
		if (!any && strcmp(model->source, "built-in") != 0)
			fprintf(ts->o->report,
				"typestate: warning: model %s (%s) names no function of %s or its "
				"libraries (%s): it can find nothing\n",
				model->name, model->source, program, names);
	}
	if (usable)
		return 0;
	snprintf(ts->err, sizeof(ts->err),
		 "no model names a function of %s or its libraries: nothing to test", program);
	return -1;
}

/* Drop the functions the program and its libraries do not have (a C
 * program has no operator new), and fold each other name of a function
 * into its first: a call entered as open may return as open64, which
 * paired nothing, and the descriptor's creation was lost. */
static int keep_present(struct ts *ts, const char *program)
{
	const char **names = calloc((size_t)ts->nfns, sizeof(*names));
	bool *present = calloc((size_t)ts->nfns, sizeof(*present));
	uint64_t *addrs = calloc((size_t)ts->nfns, sizeof(*addrs));
	int i, j, n = 0, rc = -1, *moved = calloc((size_t)ts->nfns, sizeof(*moved));

	if (!names || !present || !addrs || !moved)
		goto out;
	for (i = 0; i < ts->nfns; i++) /* the deref op is no function: asked for as "" */
		names[i] = strcmp(ts->fns[i].name, TS_DEREF_FUNC) == 0 ? "" : ts->fns[i].name;
	if (engine_functions_present(program, names, ts->nfns, present, addrs, ts->err,
				     sizeof(ts->err)) < 0 ||
	    check_models_present(ts, program, present) < 0)
		goto out;
	for (i = 0; i < ts->nfns; i++) {
		bool deref = strcmp(ts->fns[i].name, TS_DEREF_FUNC) == 0;

		j = present[i] && !deref ? same_function(addrs, present, i) : -1;
		if (j >= 0 && !ts->fns[i].sync && !ts->fns[j].sync) {
			if (merge_ops(&ts->fns[moved[j]], &ts->fns[i]) < 0)
				goto out;
			present[i] = false;
		}
		moved[i] = n;
		if (present[i] || deref) {
			ts->fns[n++] = ts->fns[i];
		} else {
			free(ts->fns[i].name);
			free(ts->fns[i].ops);
		}
	}
	ts->nfns = n;
	ts->deref_fn = fn_index(ts, TS_DEREF_FUNC);
	rc = 0;
out:
	free(names);
	free(present);
	free(addrs);
	free(moved);
	return rc;
}

/* --- the profile --- */

static int thread_index(struct ts *ts, const char *name)
{
	int i, cap = ts->nthreads;

	for (i = 0; i < ts->nthreads; i++)
		if (strcmp(ts->threads[i], name) == 0)
			return i;
	ts->threads = grow_array(ts->threads, &cap, ts->nthreads + 1, sizeof(*ts->threads));
	cap = ts->nthreads;
	ts->pending = grow_array(ts->pending, &cap, ts->nthreads + 1, sizeof(*ts->pending));
	ts->pending[ts->nthreads] = (struct pending){0};
	ts->threads[ts->nthreads] = strdup(name);
	return ts->nthreads++;
}

/* The caller's caller, when it is of the same module: a wrapper's callers
 * are told apart by it (in(F) in the schedule). */
static char *context_of(const struct engine_tap_event *ev)
{
	const struct engine_tap_frame *a = &ev->frames[0], *b = &ev->frames[1];

	if (ev->nframes < 2 || !a->module || !b->module || !b->func ||
	    strcmp(a->module, b->module) != 0)
		return NULL;
	return strdup(b->func);
}

static char *format_stack(const struct engine_tap_event *ev, char **where)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i;

	*where = NULL;
	for (i = 0; f && i < ev->nframes; i++) {
		const struct engine_tap_frame *fr = &ev->frames[i];
		char one[256];

		if (fr->file)
			snprintf(one, sizeof(one), "%s (%s:%d)", fr->pretty ? fr->pretty : "??",
				 fr->file, fr->line);
		else
			snprintf(one, sizeof(one), "%s (0x%" PRIx64 ")",
				 fr->pretty ? fr->pretty : "??", fr->pc);
		if (i == 0)
			*where = strdup(one);
		if (i == 1 && *where) {
			char *two = NULL;

			if (asprintf(&two, "%s < %s", *where, one) >= 0) {
				free(*where);
				*where = two;
			}
		}
		fprintf(f, "      #%d %s\n", i, one);
	}
	if (f)
		fclose(f);
	if (!*where)
		*where = strdup("??");
	return buf;
}

/* The entry this return belongs to: the innermost pending call of fn. */
static int pop_entry(struct ts *ts, int thread, int fn)
{
	struct pending *p = &ts->pending[thread];
	int i, raw;

	for (i = p->n - 1; i >= 0; i--) {
		if (ts->raws[p->raw[i]].fn != fn)
			continue;
		raw = p->raw[i];
		p->n = i;
		return raw;
	}
	return -1;
}

static void read_elements(struct ts *ts, struct raw *r, const struct engine_tap_event *ev)
{
	const struct fn *f = &ts->fns[r->fn];
	int i;

	r->elems = calloc((size_t)f->nops, sizeof(*r->elems));
	for (i = 0; r->elems && i < f->nops; i++) {
		const struct ts_object *o = &ts->flat[f->ops[i]].op->obj;
		int32_t v = -1;

		if (o->where == TS_ARG && o->index >= 0 &&
		    ev->read(ev, r->args[o->arg - 1] + 4 * (uint64_t)o->index, &v, sizeof(v)) == 0)
			r->elems[i] = v;
	}
}

/* A call of syscall(nr, ...) as the call of the system call's function
 * the models name (its arguments one register later), or -1.  A return
 * is the innermost pending one. */
static int through_syscall(struct ts *ts, const struct engine_tap_event *ev, struct pending *p)
{
	const char *name;
	int i;

	if (ev->is_return) {
		for (i = p->n - 1; i >= 0; i--)
			if (ts->raws[p->raw[i]].via_syscall)
				return ts->raws[p->raw[i]].fn;
		return -1;
	}
	name = engine_syscall_name((long)ev->args[0]);
	i = name ? fn_index(ts, name) : -1;
	return i >= 0 && ts->fns[i].nops ? i : -1;
}

/* The shared block holding addr (an index into ts->shared), or -1. */
static int shared_span(const struct ts *ts, uint64_t addr)
{
	int i;

	for (i = 0; i < ts->nshared; i++)
		if (addr >= ts->shared[i].start && addr - ts->shared[i].start < ts->shared[i].size)
			return i;
	return -1;
}

static bool stepped_thread(const struct ts *ts, const char *name)
{
	int i;

	for (i = 0; i < ts->nstepped; i++)
		if (strcmp(ts->stepped[i], name) == 0)
			return true;
	return false;
}

/* Has the thread made an access like ev (same instruction, same block)
 * since its latest call? */
static bool seen_access(const struct ts *ts, const struct pending *p,
			const struct engine_tap_event *ev)
{
	int i;

	for (i = 0; i < p->naccesses; i++) {
		const struct raw *r = &ts->raws[p->accesses[i]];

		if (r->caller == ev->pc && shared_span(ts, r->args[0]) == shared_span(ts, ev->addr))
			return true;
	}
	return false;
}

/* A load or store in a shared block (the stepping profile): a use of it,
 * the deref op's event, unless the thread made one like it since its
 * latest call (a loop over the block is one use), or it is inside a call
 * the profile taps. */
static void on_access(struct ts *ts, const struct engine_tap_event *ev, int thread)
{
	struct pending *p = &ts->pending[thread];
	struct raw *r;

	/* Inside a call the models name (a lock of a mutex in the block), the
	 * call is the use: its own accesses are not another. */
	if (ts->deref_fn < 0 || p->n || shared_span(ts, ev->addr) < 0)
		return;
	if (seen_access(ts, p, ev))
		return;
	ts->raws = grow_array(ts->raws, &ts->raws_cap, ts->nraws + 1, sizeof(*ts->raws));
	r = &ts->raws[ts->nraws];
	*r = (struct raw){.thread = thread,
			  .fn = ts->deref_fn,
			  .entry = -1,
			  .args = {ev->addr, ev->size, ev->write},
			  .caller = ev->pc,
			  .tls = ev->tls,
			  .ms = ev->ms};
	r->stack = format_stack(ev, &r->where);
	/* frames[0] is where the thread stopped, after the access: its
	 * function, and the access's offset from that function's start */
	if (ev->nframes && ev->frames[0].func &&
	    asprintf(&r->at, "%s+0x%" PRIx64, ev->frames[0].func,
		     ev->pc - (ev->frames[0].pc - ev->frames[0].func_offset)) < 0)
		r->at = NULL;
	p->accesses = grow_array(p->accesses, &p->accesses_cap, p->naccesses + 1, sizeof(int));
	p->accesses[p->naccesses++] = ts->nraws++;
}

/* A system call a model names, made by a syscall instruction outside the
 * functions the profile taps (inside them, the call is the event): its
 * entry and, at once, its return (a system-call stop sees no result: the
 * call is taken to succeed). */
static void on_syscall(struct ts *ts, const struct engine_tap_event *ev, int thread)
{
	const char *name = engine_syscall_name(ev->sysno);
	int fn = name ? fn_index(ts, name) : -1, k;
	struct raw *r;

	if (ts->pending[thread].n || fn < 0 || !ts->fns[fn].nops)
		return;
	ts->raws = grow_array(ts->raws, &ts->raws_cap, ts->nraws + 2, sizeof(*ts->raws));
	for (k = 0; k < 2; k++) {
		r = &ts->raws[ts->nraws + k];
		*r = (struct raw){.thread = thread,
				  .fn = fn,
				  .ret = k == 1,
				  .via_insn = true,
				  .entry = k ? ts->nraws : -1,
				  .tls = ev->tls,
				  .ms = ev->ms};
		memcpy(r->args, ev->args, sizeof(r->args));
		r->stack = format_stack(ev, &r->where);
		if (ev->nframes && ev->frames[0].func) {
			r->caller = ev->frames[0].pc - ev->frames[0].func_offset;
			r->context = strdup(ev->frames[0].func);
		}
	}
	ts->pending[thread].naccesses = 0;
	ts->nraws += 2;
}

/*
 * A recursive mutex (PTHREAD_MUTEX_RECURSIVE, std::recursive_mutex) is
 * locked again by its owner and unlocked as often: a model of states
 * without a count saw an unlock "in state READY" and reported a bug in a
 * correct program.  Its calls are left out of every model.  glibc keeps
 * the type in __data.__kind (offset 16), its low two bits.
 */
#define MUTEX_KIND_OFFSET 16
#define MUTEX_KIND_MASK	  3

static bool is_recursive_mutex(const struct engine_tap_event *ev)
{
	int32_t kind;

	return ev->func && strncmp(ev->func, "pthread_mutex_", 14) == 0 && ev->args[0] &&
	       ev->read(ev, ev->args[0] + MUTEX_KIND_OFFSET, &kind, sizeof(kind)) == 0 &&
	       (kind & MUTEX_KIND_MASK) == PTHREAD_MUTEX_RECURSIVE;
}

/* Every event of the profiles; the answer: decode this thread's accesses
 * from here on (the stepping profile's threads). */
static bool on_tap(void *ctx, const struct engine_tap_event *ev)
{
	struct ts *ts = ctx;
	int thread = thread_index(ts, ev->thread);
	struct pending *p = &ts->pending[thread];
	bool step = stepped_thread(ts, ev->thread);
	int fn = ev->kind == ENGINE_TAP_CALL ? fn_index(ts, ev->func) : -1;
	bool via_syscall = fn >= 0 && strcmp(ev->func, SYSCALL_WRAPPER) == 0 && ts->syscalls;
	struct raw *r;

	if (ev->kind == ENGINE_TAP_ACCESS)
		on_access(ts, ev, thread);
	if (ev->kind == ENGINE_TAP_SYSCALL)
		on_syscall(ts, ev, thread);
	if (via_syscall)
		fn = through_syscall(ts, ev, p);
	if (fn < 0)
		return step && !p->n;
	/* A PLT stub and the function it jumps to are both entries of one
	 * call: the same caller, still pending. */
	if (!ev->is_return && p->n && ts->raws[p->raw[p->n - 1]].fn == fn &&
	    ts->raws[p->raw[p->n - 1]].caller == ev->caller)
		return step && !p->n;
	ts->raws = grow_array(ts->raws, &ts->raws_cap, ts->nraws + 1, sizeof(*ts->raws));
	r = &ts->raws[ts->nraws];
	*r = (struct raw){.thread = thread,
			  .fn = fn,
			  .ret = ev->is_return,
			  .entry = -1,
			  .retval = ev->retval,
			  .caller = ev->caller,
			  .tls = ev->tls,
			  .via_syscall = via_syscall,
			  .ms = ev->ms};
	if (via_syscall)
		memcpy(r->args, ev->args + 1, sizeof(r->args) - sizeof(r->args[0]));
	else
		memcpy(r->args, ev->args, sizeof(r->args));
	if (ev->is_return) {
		r->entry = pop_entry(ts, thread, fn);
		if (r->entry >= 0) {
			memcpy(r->args, ts->raws[r->entry].args, sizeof(r->args));
			r->caller = ts->raws[r->entry].caller;
			r->where = strdup(ts->raws[r->entry].where);
			r->stack = strdup(ts->raws[r->entry].stack ? ts->raws[r->entry].stack : "");
		}
		r->recursive = r->entry >= 0 && ts->raws[r->entry].recursive;
		read_elements(ts, r, ev);
		/* syscall() answers -1 when the system call failed */
		r->failed = via_syscall ? (int64_t)ev->retval == -1
					: ts->fns[fn].ok_line && ev->line != ts->fns[fn].ok_line;
		if (ts->fns[fn].sync == SYNC_CREATE)
			ev->read(ev, r->args[0], &r->created_tls, sizeof(r->created_tls));
	} else {
		r->recursive = !via_syscall && is_recursive_mutex(ev);
		r->stack = format_stack(ev, &r->where);
		r->context = context_of(ev);
		p->raw = grow_array(p->raw, &p->cap, p->n + 1, sizeof(*p->raw));
		p->raw[p->n++] = ts->nraws;
	}
	if (!r->where)
		r->where = strdup("??");
	p->naccesses = 0;
	ts->nraws++;
	return step && !p->n; /* inside a tapped call, the call is the use */
}

/* A log's text, "" if there is none. */
static char *read_all(const char *path)
{
	char *text = search_read_text(path);

	return text ? text : strdup("");
}

static int write_text(const char *path, const char *text, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fputs(text, f) >= 0;

	/* fclose even after a failed fputs, and only once */
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static char *path_in(struct ts *ts, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *path_in(struct ts *ts, const char *fmt, ...)
{
	char name[256], *path = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (asprintf(&path, "%s/%s", ts->dir, name) < 0)
		return NULL;
	return path;
}

/* How many lines the memstream f (buf, len) holds so far. */
static int lines_written(FILE *f, char **buf, size_t *len)
{
	int n = 0;
	size_t i;

	fflush(f);
	for (i = 0; i < *len; i++)
		n += (*buf)[i] == '\n';
	return n;
}

/* The stepping profile's further alternatives: every thread's start (the
 * tap says which are decoded), and loads and stores in the shared blocks. */
static void access_alternatives(const struct ts *ts, FILE *f)
{
	int i;

	fputs(" ||\n  start ||\n  ((read || write) && (", f);
	for (i = 0; i < ts->nshared; i++)
		fprintf(f, "%s(addr >= 0x%" PRIx64 " && addr < 0x%" PRIx64 ")",
			i ? " ||\n    " : "", ts->shared[i].start,
			ts->shared[i].start + ts->shared[i].size);
	fputs("))", f);
}

/* The profile's schedule; with_accesses: the stepping profile's. */
static char *profile_schedule(struct ts *ts, bool with_accesses)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i, n = 0;

	fputs("# typestate profile (generated): every call of these functions is tapped,\n"
	      "# and the program runs freely to its end.  A return that satisfies the\n"
	      "# function's ok condition is on a line of its own (the tap says which line).\n"
	      "wait any (",
	      f);
	for (i = 0; i < ts->nfns; i++) {
		struct fn *fn = &ts->fns[i];

		if (i == ts->deref_fn)
			continue; /* no call: the stepper's accesses */
		fprintf(f, "%senter(%s) ||\n  ", n++ ? " ||\n  " : "", fn->name);
		if (fn->ok) {
			fn->ok_line = lines_written(f, &buf, &len) + 1;
			fprintf(f, "(return(%s) && (%s)) ||\n  ", fn->name, fn->ok);
		}
		fprintf(f, "return(%s)", fn->name);
	}
	for (i = 0; ts->syscalls && i < ts->nfns; i++)
		if (ts->fns[i].nops && engine_syscall_number(ts->fns[i].name) >= 0)
			fprintf(f, " ||\n  syscall(%s)", ts->fns[i].name);
	if (with_accesses)
		access_alternatives(ts, f);
	fputs(")\n", f);
	fclose(f);
	return buf;
}

/* When --time runs out (the engine's clock), or 0. */
static int64_t end_by(const struct ts *ts)
{
	return ts->o->max_ms ? ts->t0 + ts->o->max_ms : 0;
}

static bool out_of_time(const struct ts *ts)
{
	return ts->o->max_ms && engine_now_ms() >= end_by(ts);
}

/* Run argv once under the schedule at path, with hooks; the outcome, or
 * -1 with ts->err. */
static int run_schedule(struct ts *ts, const char *path, char *const argv[],
			const struct run_hooks *hooks, FILE *report, int64_t timeout_ms)
{
	struct engine_options opt = {.timeout_ms = timeout_ms,
				     .report = report,
				     .trace = ts->o->trace,
				     .watchpoints = WATCHPOINTS_SW,
				     .driver = ts->o->driver,
				     .end_by_ms = end_by(ts)};
	struct policy *pol = engine_load(path, argv[0], 0, ts->err, sizeof(ts->err));
	struct run_result res;
	int rc;

	if (!pol)
		return -1;
	rc = engine_run_once(pol, argv, &opt, hooks, &res, ts->err, sizeof(ts->err));
	engine_free(pol);
	return rc < 0 ? -1 : (int)res.outcome;
}

/* Did the profile's report say the program ended (rather than timed out)? */
static bool tracer_ended(const char *logpath)
{
	char *text = read_all(logpath);
	bool ended = text && strstr(text, "no thread reached") == NULL;

	free(text);
	return ended;
}

/* The program once without cctrace, for the profile's overhead: its
 * time in ms, or -1 if it could not run or did not end within limit_ms (a
 * bug of the kind looked for may hang it: a lock in freed memory), in
 * which case it is killed. */
/* Is the untraced program hung: every thread asleep for good, and no
 * switch since the last look?  *last keeps the switches seen. */
static bool plain_hung(pid_t pid, unsigned long long *last)
{
	unsigned long long switches = 0;
	bool asleep = engine_untraced_sleeps_for_good(pid, &switches);
	bool still = asleep && switches == *last;

	*last = switches;
	return still;
}

/* The program run alone, for its time: ms, -1 when it did not end within
 * limit_ms, or -2 when it hung (*hung_at_ms, when all its threads were
 * first seen asleep for good; PLAIN_HUNG_MS later is the verdict). */
#define PLAIN_HUNG_MS 1000
static double plain_run_ms(char *const argv[], int64_t limit_ms, int64_t *hung_at_ms)
{
	int64_t t0 = engine_now_ms(), asleep_since = -1;
	unsigned long long switches = ~0ull;
	struct pollfd pfd = {.events = POLLIN};
	double ms = -1;
	pid_t pid, parent = getpid();
	int status, ready = 0;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* it goes with cctrace: a Ctrl-C before cctrace's handlers
		 * exist (no tracer yet) ends cctrace at once */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	pfd.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	/* in slices: a Ctrl-C that came just before the poll would not end
	 * it, and the program would be left running when cctrace exits */
	while (pfd.fd >= 0 && !engine_stop_signal() && engine_now_ms() - t0 < limit_ms &&
	       (ready = poll(&pfd, 1, PLAIN_SLICE_MS)) == 0) {
		/* a hang is seen, not waited out to the limit */
		if (!plain_hung(pid, &switches))
			asleep_since = -1;
		else if (asleep_since < 0)
			asleep_since = engine_now_ms();
		else if (engine_now_ms() - asleep_since >= PLAIN_HUNG_MS)
			break;
	}
	if (pfd.fd < 0 || ready == 1) {
		ms = (double)(engine_now_ms() - t0);
	} else {
		kill(pid, SIGKILL);
		if (asleep_since >= 0 && engine_now_ms() - asleep_since >= PLAIN_HUNG_MS) {
			ms = -2;
			*hung_at_ms = asleep_since - t0;
		}
	}
	waitpid(pid, &status, 0);
	if (pfd.fd >= 0)
		close(pfd.fd);
	return ms;
}

/* One profile run under the schedule text, written to DIR/NAME.sched,
 * its report in DIR/NAME.log; its time in *ms, whether the program ended
 * in *ended, and the run's outcome, or -1 with ts->err. */
static int profile_run(struct ts *ts, char *const argv[], const char *name, char *text,
		       int64_t limit, double *ms, bool *ended)
{
	struct run_hooks hooks = {.tap = on_tap,
				  .tap_ctx = ts,
				  .tap_frames = STACK_FRAMES,
				  .tap_step_budget = STEP_BUDGET};
	char *path = path_in(ts, "%s.sched", name), *logpath = path_in(ts, "%s.log", name);
	int64_t t0;
	int outcome = -1;
	FILE *log;

	if (!text || !path || !logpath || write_text(path, text, ts->err, sizeof(ts->err)) < 0)
		goto out;
	log = fopen(logpath, "we");
	t0 = engine_now_ms();
	outcome = run_schedule(ts, path, argv, &hooks, log ? log : stderr, limit);
	*ms = (double)(engine_now_ms() - t0);
	if (log)
		fclose(log);
	*ended = outcome != OUTCOME_UNREALIZABLE || tracer_ended(logpath);
	if (!*ended)
		fprintf(ts->o->report,
			"typestate: the %s run did not end in time (hung?); what it saw is "
			"analysed\n",
			name);
	if (outcome == OUTCOME_BUG) {
		fprintf(ts->o->report, "typestate: the %s run itself ended in a bug (see %s)\n",
			name, logpath);
		if (!ts->profile_bug_log)
			ts->profile_bug_log = strdup(logpath);
	}
out:
	free(text);
	free(path);
	free(logpath);
	return outcome;
}

/* What a profile saw: the call profile's, kept aside while the stepping
 * profile runs. */
struct seen {
	struct raw *raws;
	int nraws, raws_cap;
	char **threads;
	struct pending *pending;
	int nthreads;
};

static struct seen take_profile(struct ts *ts)
{
	struct seen s = {ts->raws, ts->nraws, ts->raws_cap, ts->threads, ts->pending, ts->nthreads};

	ts->raws = NULL;
	ts->nraws = ts->raws_cap = ts->nthreads = 0;
	ts->threads = NULL;
	ts->pending = NULL;
	return s;
}

static void forget_profile(struct ts *ts);

/* Put s back as what the profile saw; what ts held is forgotten. */
static void restore_profile(struct ts *ts, struct seen s)
{
	forget_profile(ts);
	free(ts->raws);
	free(ts->threads);
	free(ts->pending);
	ts->raws = s.raws;
	ts->nraws = s.nraws;
	ts->raws_cap = s.raws_cap;
	ts->threads = s.threads;
	ts->pending = s.pending;
	ts->nthreads = s.nthreads;
}

/* What the profiles saw, forgotten before the stepping profile. */
static void forget_profile(struct ts *ts)
{
	int i;

	for (i = 0; i < ts->nraws; i++) {
		free(ts->raws[i].elems);
		free(ts->raws[i].where);
		free(ts->raws[i].context);
		free(ts->raws[i].stack);
		free(ts->raws[i].at);
	}
	ts->nraws = 0;
	for (i = 0; i < ts->nthreads; i++) {
		free(ts->threads[i]);
		free(ts->pending[i].raw);
		free(ts->pending[i].accesses);
	}
	ts->nthreads = 0;
}

/* A block the call profile saw made, while learning which are shared. */
struct seen_block {
	uint64_t start, size;
	int model, maker, freer; /* threads; freer: -1 while live */
	bool *used;		 /* [nthreads]: a call on it, or created with it */
};

static const struct ts_op *deref_op(const struct ts_model *m)
{
	int i;

	for (i = 0; i < m->nops; i++)
		if (strcmp(m->ops[i].func, TS_DEREF_FUNC) == 0)
			return &m->ops[i];
	return NULL;
}

/* The newest live block of model holding addr, or NULL. */
static struct seen_block *live_block(struct seen_block *b, int n, int model, uint64_t addr)
{
	int i;

	for (i = n - 1; i >= 0; i--)
		if (b[i].freer < 0 && b[i].model == model && addr >= b[i].start &&
		    addr - b[i].start < b[i].size)
			return &b[i];
	return NULL;
}

/* The thread a pthread_create's return r started (the tls it wrote). */
static int created_thread(const struct ts *ts, const struct raw *r)
{
	int i;

	for (i = 0; i < ts->nraws; i++)
		if (ts->raws[i].tls == r->created_tls && ts->raws[i].thread != r->thread)
			return ts->raws[i].thread;
	return -1;
}

/* Raw i's part in the blocks of models with deref: a sized creation makes
 * one, a transit to a state deref forbids (free) frees it, another call on
 * an address in it or a pthread_create given one uses it. */
static void note_block_event(struct ts *ts, int i, struct seen_block **b, int *n, int *cap)
{
	const struct raw *r = &ts->raws[i];
	const struct fn *f = &ts->fns[r->fn];
	struct seen_block *in;
	int k, t;

	if (f->sync == SYNC_CREATE && r->ret && r->entry >= 0) {
		for (k = 0; k < ts->models.n; k++) {
			in = live_block(*b, *n, k, ts->raws[r->entry].args[3]);
			t = created_thread(ts, r);
			if (in && t >= 0)
				in->used[t] = true;
		}
	}
	for (k = 0; k < f->nops; k++) {
		const struct flat_op *fo = &ts->flat[f->ops[k]];
		const struct ts_op *op = fo->op, *d = deref_op(fo->m);

		if (!d || op == d)
			continue;
		if (op->transit && op->obj.where == TS_RET && op->size_args[0] && r->ret &&
		    r->entry >= 0 && !r->failed) {
			*b = grow_array(*b, cap, *n + 1, sizeof(**b));
			(*b)[(*n)++] = (struct seen_block){
			    r->retval, block_size(r, op),
			    fo->model, r->thread,
			    -1,	       calloc((size_t)ts->nthreads, sizeof(bool))};
		} else if (op->obj.where == TS_ARG && op->obj.index < 0 && !r->ret &&
			   (in = live_block(*b, *n, fo->model, r->args[op->obj.arg - 1]))) {
			if (op->transit && !allowed(d, op->to))
				in->freer = r->thread;
			else if (in->used)
				in->used[r->thread] = true;
		}
	}
}

static void add_stepped(struct ts *ts, const char *name)
{
	if (stepped_thread(ts, name))
		return;
	ts->stepped =
	    grow_array(ts->stepped, &ts->stepped_cap, ts->nstepped + 1, sizeof(*ts->stepped));
	ts->stepped[ts->nstepped++] = strdup(name);
}

/* A freed block another thread than the one that freed it made or used
 * is shared: those threads' loads and stores in it are worth decoding. */
static void note_shared(struct ts *ts, const struct seen_block *b)
{
	int t;
	bool any = false;

	if (b->freer < 0 || !b->used)
		return;
	for (t = 0; t < ts->nthreads; t++) {
		if (t == b->freer || !(b->used[t] || t == b->maker))
			continue;
		add_stepped(ts, ts->threads[t]);
		any = true;
	}
	if (!any)
		return;
	ts->shared = grow_array(ts->shared, &ts->shared_cap, ts->nshared + 1, sizeof(*ts->shared));
	ts->shared[ts->nshared++] = (struct span){b->start, b->size};
}

/* From the call profile: the shared blocks and the threads to decode. */
static void learn_shared(struct ts *ts)
{
	struct seen_block *b = NULL;
	int i, n = 0, cap = 0;

	if (ts->deref_fn < 0)
		return;
	for (i = 0; i < ts->nraws; i++)
		note_block_event(ts, i, &b, &n, &cap);
	for (i = 0; i < n; i++) {
		note_shared(ts, &b[i]);
		free(b[i].used);
	}
	free(b);
}

static void report_profile(struct ts *ts, double calls_ms, double plain, int64_t plain_limit)
{
	fprintf(ts->o->report,
		"typestate: profile: %d calls of %d functions in %d threads; %.0f ms (", ts->nraws,
		ts->nfns, ts->nthreads, calls_ms);
	if (ts->o->driver)
		fprintf(ts->o->report, "until the driver ended)\n");
	else if (plain == -2)
		fprintf(ts->o->report,
			"the program alone hung: every thread slept in a lock wait for good)\n");
	else if (plain < 0)
		fprintf(ts->o->report, "the program alone did not end within %.1f s)\n",
			(double)plain_limit / 1000.0);
	else
		fprintf(ts->o->report, "the program alone: %.0f ms)\n", plain);
}

/* The stepping profile, in place of the call profile's calls (it sees
 * them too, in its own order); if it does not end within its limit (a
 * program that decoding slows too much), the call profile stands. */
static int step_profile(struct ts *ts, char *const argv[], double calls_ms)
{
	int64_t limit = (int64_t)calls_ms * STEP_LIMIT_FACTOR + STEP_LIMIT_MS;
	struct seen calls = take_profile(ts), step;
	double ms = 0;
	bool ended = false;
	int outcome =
	    profile_run(ts, argv, "profile-step", profile_schedule(ts, true), limit, &ms, &ended);
	int i, accesses = 0;

	if (outcome < 0 || !ended) {
		restore_profile(ts, calls);
		if (outcome >= 0)
			fprintf(ts->o->report,
				"typestate: the stepping profile did not end within %lld ms: the "
				"call profile is analysed (loads and stores are not)\n",
				(long long)limit);
		return outcome < 0 ? -1 : 0;
	}
	step = take_profile(ts);
	restore_profile(ts, calls); /* to forget it */
	restore_profile(ts, step);
	for (i = 0; i < ts->nraws; i++)
		accesses += ts->raws[i].fn == ts->deref_fn;
	fprintf(ts->o->report,
		"typestate: stepping profile: %d shared block%s, %d thread%s decoded, %d uses by "
		"loads and stores; %.0f ms\n",
		ts->nshared, ts->nshared == 1 ? "" : "s", ts->nstepped,
		ts->nstepped == 1 ? "" : "s", accesses, ms);
	return 0;
}

static int profile(struct ts *ts, char *const argv[])
{
	/* A server run without its client (--driver) would only wait for
	 * one: no plain run then, and the driver ends the profile's. */
	int64_t left = ts->o->max_ms ? end_by(ts) - engine_now_ms() : PLAIN_LIMIT_MS;
	int64_t plain_limit = left < PLAIN_LIMIT_MS ? (left > 0 ? left : 1) : PLAIN_LIMIT_MS;
	int64_t hung_at = 0;
	double plain = ts->o->driver ? -1 : plain_run_ms(argv, plain_limit, &hung_at), calls_ms = 0;
	/* The profile is slower, and a bug may hang it: a limit, after which
	 * what was seen is analysed as it is.  A program that hung alone
	 * hangs in the profile too, once it has done (slower) what it did
	 * before. */
	int64_t limit = plain == -2 ? hung_at * 20 + PROFILE_HUNG_MARGIN_MS
			: plain < 0 ? PLAIN_LIMIT_MS
				    : (int64_t)plain * 20 + PROFILE_MARGIN_MS;
	bool ended;
	int outcome;

	if (engine_stop_signal()) {
		snprintf(ts->err, sizeof(ts->err), "interrupted");
		return -1;
	}
	outcome =
	    profile_run(ts, argv, "profile", profile_schedule(ts, false), limit, &calls_ms, &ended);
	if (outcome < 0)
		return -1;
	report_profile(ts, calls_ms, plain, plain_limit);
	learn_shared(ts);
	return ts->nshared ? step_profile(ts, argv, calls_ms) : 0;
}

/* --- analysis: vector clocks and object states --- */

struct clocks {
	bool lock_order; /* unlock->lock edges count */
	int n;		 /* threads */
	uint32_t *vc;	 /* [n][n] */
	bool *started;	 /* [n] */
	/* sync objects' clocks: address -> clock */
	struct sync_obj {
		uint64_t addr;
		uint32_t *vc;
	} * objs;
	int nobjs, objs_cap;
	uint32_t **create_snap; /* [nraws]: the parent's clock at a create's entry */
};

static uint32_t *vc_of(struct clocks *c, int t)
{
	return c->vc + (size_t)t * (size_t)c->n;
}

static void vc_join(uint32_t *into, const uint32_t *from, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (from[i] > into[i])
			into[i] = from[i];
}

static uint32_t *sync_clock(struct clocks *c, uint64_t addr)
{
	int i;

	for (i = 0; i < c->nobjs; i++)
		if (c->objs[i].addr == addr)
			return c->objs[i].vc;
	c->objs = grow_array(c->objs, &c->objs_cap, c->nobjs + 1, sizeof(*c->objs));
	c->objs[c->nobjs] = (struct sync_obj){addr, calloc((size_t)c->n, sizeof(uint32_t))};
	return c->objs[c->nobjs++].vc;
}

/* The create whose child is the thread first seen at raw index at: the
 * latest pthread_create entered before it whose return named its tls. */
static int creator_of(struct ts *ts, int at)
{
	int i, best = -1;

	for (i = 0; i < ts->nraws; i++) {
		const struct raw *r = &ts->raws[i];

		if (r->ret && ts->fns[r->fn].sync == SYNC_CREATE && r->entry >= 0 &&
		    r->entry < at && r->created_tls == ts->raws[at].tls &&
		    r->thread != ts->raws[at].thread)
			best = r->entry;
	}
	return best;
}

static void thread_seen(struct ts *ts, struct clocks *c, int t, int at)
{
	int from;

	if (c->started[t])
		return;
	c->started[t] = true;
	vc_of(c, t)[t] = 1;
	from = creator_of(ts, at);
	if (from >= 0 && c->create_snap[from])
		vc_join(vc_of(c, t), c->create_snap[from], c->n);
}

/* The thread that last ran with tls (pthread_join's argument). */
static int thread_by_tls(struct ts *ts, uint64_t tls, int before)
{
	int i;

	for (i = before - 1; i >= 0; i--)
		if (ts->raws[i].tls == tls)
			return ts->raws[i].thread;
	return -1;
}

static void apply_sync(struct ts *ts, struct clocks *c, int i)
{
	const struct raw *r = &ts->raws[i];
	uint32_t *me = vc_of(c, r->thread);
	int joined;

	switch (ts->fns[r->fn].sync) {
	case SYNC_CREATE:
		if (!r->ret) {
			c->create_snap[i] = malloc(sizeof(uint32_t) * (size_t)c->n);
			if (c->create_snap[i])
				memcpy(c->create_snap[i], me, sizeof(uint32_t) * (size_t)c->n);
		}
		break;
	case SYNC_JOIN:
		joined = r->ret ? thread_by_tls(ts, r->args[0], i) : -1;
		if (joined >= 0)
			vc_join(me, vc_of(c, joined), c->n);
		break;
	case SYNC_UNLOCK:
		if (!c->lock_order)
			break;
		/* fall through */
	case SYNC_RELEASE:
		if (!r->ret)
			vc_join(sync_clock(c, r->args[0]), me, c->n);
		break;
	case SYNC_LOCK:
		if (!c->lock_order)
			break;
		/* fall through */
	case SYNC_ACQUIRE:
		if (r->ret)
			vc_join(me, sync_clock(c, r->args[0]), c->n);
		break;
	case SYNC_COND_WAIT:
		if (r->ret)
			vc_join(me, sync_clock(c, r->args[0]), c->n);
		if (r->ret && c->lock_order)
			vc_join(me, sync_clock(c, r->args[1]), c->n);
		if (!r->ret && c->lock_order)
			vc_join(sync_clock(c, r->args[1]), me, c->n);
		break;
	case SYNC_BARRIER:
		if (r->ret)
			vc_join(me, sync_clock(c, r->args[0]), c->n);
		else
			vc_join(sync_clock(c, r->args[0]), me, c->n);
		break;
	case SYNC_NONE:
		break;
	}
	me[r->thread]++;
}

/* Object states, per model and object value. */
struct objstate {
	int model, proc;
	int64_t obj;
	int state, gen;
	int owner;	  /* the thread whose transit made an owned state; -1 */
	int last_transit; /* opev index; -1 */
};

struct objects {
	struct objstate *a;
	int n, cap;
	/* blocks made by sized transits, oldest first: an address inside
	 * one is that block (the newest that holds it) */
	struct block {
		int model;
		uint64_t start, size;
	} * blocks;
	int nblocks, blocks_cap;
};

static void add_block(struct objects *os, int model, uint64_t start, uint64_t size)
{
	os->blocks = grow_array(os->blocks, &os->blocks_cap, os->nblocks + 1, sizeof(*os->blocks));
	os->blocks[os->nblocks++] = (struct block){model, start, size};
}

/* The start of the newest block of model holding addr; addr if none. */
static int64_t block_of(const struct objects *os, int model, int64_t addr)
{
	int i;

	for (i = os->nblocks - 1; i >= 0; i--) {
		const struct block *b = &os->blocks[i];

		if (b->model == model && (uint64_t)addr >= b->start &&
		    (uint64_t)addr - b->start < b->size)
			return (int64_t)b->start;
	}
	return addr;
}

static struct objstate *object(struct objects *os, const struct ts_model *m, int model, int proc,
			       int64_t obj)
{
	int i;

	for (i = os->n - 1; i >= 0; i--)
		if (os->a[i].model == model && os->a[i].proc == proc && os->a[i].obj == obj)
			return &os->a[i];
	os->a = grow_array(os->a, &os->cap, os->n + 1, sizeof(*os->a));
	os->a[os->n] = (struct objstate){model, proc, obj, m->initial, 0, -1, -1};
	return &os->a[os->n++];
}

static bool ignored(const struct ts_model *m, int64_t v)
{
	int i;

	for (i = 0; i < m->nignore; i++)
		if (m->ignore[i] == v)
			return true;
	return false;
}

/* The object of op k (the k-th of r's function) at raw r, or false. */
static bool object_value(const struct ts *ts, const struct raw *r, int k, int64_t *out)
{
	const struct flat_op *fo = &ts->flat[ts->fns[r->fn].ops[k]];
	const struct ts_object *o = &fo->op->obj;
	uint64_t v;

	/* a system-call stop sees no result: no object made by one (an open) */
	if (r->via_insn && (o->where == TS_RET || o->index >= 0))
		return false;
	if (o->where == TS_RET)
		v = r->retval;
	else if (o->index >= 0)
		v = r->elems ? (uint64_t)r->elems[k] : (uint64_t)-1;
	else
		v = r->args[o->arg - 1];
	*out = fo->m->int_objects ? (int64_t)(int32_t)v : (int64_t)v;
	return !ignored(fo->m, *out);
}

/* The size of the block a sized transit at return r made. */
static uint64_t block_size(const struct raw *r, const struct ts_op *op)
{
	uint64_t n = r->args[op->size_args[0] - 1];

	return op->size_args[1] ? n * r->args[op->size_args[1] - 1] : n;
}

static uint32_t *vc_copy(struct clocks *c, int t)
{
	uint32_t *vc = malloc(sizeof(uint32_t) * (size_t)c->n);

	if (vc)
		memcpy(vc, vc_of(c, t), sizeof(uint32_t) * (size_t)c->n);
	vc_of(c, t)[t]++;
	return vc;
}

static void add_opev(struct ts *ts, struct clocks *c, int i, int k, int64_t value,
		     struct objects *os, bool failed)
{
	const struct raw *r = &ts->raws[i];
	const struct flat_op *fo = &ts->flat[ts->fns[r->fn].ops[k]];
	/* the object is new: the return value (open, malloc) or written to an array (pipe) */
	bool creates = fo->op->transit && (fo->op->obj.where == TS_RET || fo->op->obj.index >= 0);
	int proc = atoi(ts->threads[r->thread] + 1); /* pN.tM */
	int64_t obj = creates || fo->m->int_objects ? value : block_of(os, fo->model, value);
	struct objstate *st;
	struct opev *e;

	if (creates && fo->op->size_args[0])
		add_block(os, fo->model, (uint64_t)value, block_size(r, fo->op));
	st = object(os, fo->m, fo->model, proc, obj);
	if (creates)
		st->gen++; /* a creation: a new object under an old number */
	ts->evs = grow_array(ts->evs, &ts->evs_cap, ts->nevs + 1, sizeof(*ts->evs));
	e = &ts->evs[ts->nevs++];
	*e = (struct opev){.flat = ts->fns[r->fn].ops[k],
			   .thread = r->thread,
			   .raw = i,
			   .entry_raw = r->ret ? r->entry : i,
			   .gen = st->gen,
			   .obj = obj,
			   .proc = proc,
			   .value = value,
			   .before = st->state,
			   .after = st->state,
			   .before_owner = st->owner,
			   .after_owner = st->owner,
			   .last_transit = st->last_transit,
			   .failed = failed};
	if (fo->op->transit) { /* failed: what it would have left; the object is as it was */
		e->after = fo->op->to;
		e->after_owner = (fo->m->owned >> fo->op->to) & 1u ? r->thread : -1;
	}
	if (fo->op->transit && !failed) {
		st->state = e->after;
		st->owner = e->after_owner;
		st->last_transit = ts->nevs - 1;
	}
	e->vc = vc_copy(&c[0], r->thread);
	e->weak_vc = vc_copy(&c[1], r->thread);
}

/* Limits take effect at their entry (a held thread has not made the call
 * yet), transits at their return (the object has changed); an object from
 * the return value or an array is known only at the return. */
static void apply_ops(struct ts *ts, struct clocks *c, int i, struct objects *os)
{
	const struct raw *r = &ts->raws[i];
	const struct fn *f = &ts->fns[r->fn];
	int k;

	if (r->recursive)
		return; /* is_recursive_mutex says why */
	for (k = 0; k < f->nops; k++) {
		const struct ts_op *op = ts->flat[f->ops[k]].op;
		bool at_return =
		    (op->transit && !op->at_entry) || op->obj.where == TS_RET || op->obj.index >= 0;
		int64_t obj;

		if (at_return != r->ret)
			continue;
		if (r->ret && r->entry < 0)
			continue; /* entered before the profile could see it */
		if (!object_value(ts, r, k, &obj))
			continue;
		/* a failed close or destroy moves nothing, but another order
		 * may let it succeed */
		add_opev(ts, c, i, k, obj, os, op->transit && r->ret && r->failed);
	}
}

static bool clocks_init(struct clocks *c, const struct ts *ts, bool lock_order)
{
	*c = (struct clocks){.lock_order = lock_order, .n = ts->nthreads ? ts->nthreads : 1};
	c->vc = calloc((size_t)c->n * (size_t)c->n, sizeof(uint32_t));
	c->started = calloc((size_t)c->n, sizeof(bool));
	c->create_snap = calloc((size_t)ts->nraws + 1, sizeof(*c->create_snap));
	return c->vc && c->started && c->create_snap;
}

static void clocks_free(struct clocks *c, const struct ts *ts)
{
	int i;

	for (i = 0; i < c->nobjs; i++)
		free(c->objs[i].vc);
	for (i = 0; c->create_snap && i < ts->nraws; i++)
		free(c->create_snap[i]);
	free(c->create_snap);
	free(c->objs);
	free(c->vc);
	free(c->started);
}

/* Two sets of clocks: c[0] is happens-before (lock handoffs only with
 * lock_order), c[1] always counts the lock handoffs the profile saw, for
 * the ranking. */
static void analyse(struct ts *ts)
{
	struct clocks c[2] = {{0}};
	struct objects os = {0};
	int i, k;

	if (!clocks_init(&c[0], ts, ts->o->lock_order) || !clocks_init(&c[1], ts, true))
		goto out;
	for (i = 0; i < ts->nraws; i++) {
		for (k = 0; k < 2; k++)
			thread_seen(ts, &c[k], ts->raws[i].thread, i);
		apply_ops(ts, c, i, &os);
		for (k = 0; k < 2; k++)
			apply_sync(ts, &c[k], i);
	}
out:
	clocks_free(&c[0], ts);
	clocks_free(&c[1], ts);
	free(os.a);
	free(os.blocks);
}

/* --- candidates --- */

static bool happens_before(const struct opev *a, const struct opev *b)
{
	return a->vc && b->vc && a->vc[a->thread] <= b->vc[a->thread];
}

/* Ordered in the profile by a chain of lock handoffs (not happens-before
 * unless lock_order: another run may hand the locks over the other way,
 * but is less likely to). */
static bool lock_ordered(const struct opev *a, const struct opev *b)
{
	const struct opev *x = a->raw < b->raw ? a : b, *y = x == a ? b : a;

	return x->weak_vc && y->weak_vc && x->weak_vc[x->thread] <= y->weak_vc[x->thread];
}

static bool allowed(const struct ts_op *op, int state)
{
	return (op->allowed >> state) & 1u;
}

/* Is l's operation allowed to its thread in state (owned by owner, -1 if
 * the state is not owned)?  A state another thread owns allows only a
 * call that waits for it (a lock); the owner's calls are judged by the
 * state (an unlock by the holder, not a second lock). */
static bool allowed_to(const struct ts *ts, const struct opev *l, int state, int owner)
{
	const struct ts_op *op = ts->flat[l->flat].op;

	if (owner >= 0 && owner != l->thread)
		return op->waits;
	return allowed(op, state);
}

/* Does e's model make its objects (open's descriptor, malloc's block)?
 * Then an object it never saw made was made where it could not see. */
static bool creates_objects(const struct ts *ts, const struct opev *e)
{
	const struct ts_model *m = ts->flat[e->flat].m;
	int i;

	for (i = 0; i < m->nops; i++)
		if (m->ops[i].transit &&
		    (m->ops[i].obj.where == TS_RET || m->ops[i].obj.index >= 0))
			return true;
	return false;
}

/* Does an order of x (a transit) and l (a limit) violate the model?  0:
 * no; 1: reversing the profile's order does (the one that came first is
 * held); 2: the profile's order itself did (l after x, which left the
 * object in a state that forbids l: the run was unlucky, or another
 * thread's unlock of a lock x's thread holds), and l is held until x has
 * happened again; 3: the profile's order did, l first (a destroy of a
 * lock x's thread held until x, its unlock), and x is held until l.
 * Case 2 only for an object whose creation the profile saw, if its model
 * creates objects, or a state x's thread owns: a block freed twice
 * without a malloc in between that the profile saw was allocated again
 * where it could not see (libc's own allocations). */
static int violates(const struct ts *ts, const struct opev *x, const struct opev *l)
{
	bool before = allowed_to(ts, l, x->before, x->before_owner),
	     after = allowed_to(ts, l, x->after, x->after_owner);
	/* x left the object in the state l met, which forbids l */
	bool met = l->last_transit >= 0 && &ts->evs[l->last_transit] == x &&
		   !allowed_to(ts, l, l->before, l->before_owner);

	/* x failed for the state it met (a destroy of a mutex another thread
	 * held, EBUSY).  Made before an earlier l, it meets the state l met,
	 * which may let it succeed, and l meets the state x would leave. */
	if (x->failed)
		return l->raw < x->raw && allowed_to(ts, l, l->before, l->before_owner) && !after
			   ? 1
			   : 0;

	if (l->raw < x->raw && before && !after)
		return 1; /* l first: allowed before x, not after it */
	if (l->raw < x->raw)
		/* the profile's order itself did: l met the state x left */
		return !before && after && x->last_transit == l->last_transit &&
			       !allowed_to(ts, l, l->before, l->before_owner)
			   ? 3
			   : 0;
	if (after && !before)
		return 1;
	return !after && met && (l->gen > 0 || x->after_owner >= 0 || !creates_objects(ts, x)) ? 2
											       : 0;
}

/* "unlock->READY" for a transit (a function may be both a transit and a
 * limit: the pair's roles are part of what it is), "unlock" for a limit. */
static const char *event_name(const struct ts *ts, const struct opev *e, char *buf, size_t len)
{
	const struct flat_op *fo = &ts->flat[e->flat];

	if (!fo->op->transit)
		return fo->op->func;
	snprintf(buf, len, "%s->%s", fo->op->func, fo->m->states[fo->op->to]);
	return buf;
}

static char *candidate_key(const struct ts *ts, const struct opev *pre, const struct opev *sub,
			   bool own)
{
	char a[256], b[256], *key = NULL;

	if (asprintf(&key, "%s%s %s@%s %s@%s", own ? "own " : "", ts->flat[pre->flat].m->name,
		     event_name(ts, pre, a, sizeof(a)), ts->raws[pre->entry_raw].where,
		     event_name(ts, sub, b, sizeof(b)), ts->raws[sub->entry_raw].where) < 0)
		return NULL;
	return key;
}

static void add_instance(struct candidate *c, int pre, int sub)
{
	c->inst = grow_array(c->inst, &c->inst_cap, c->count + 1, sizeof(*c->inst));
	c->inst[c->count++] = (struct instance){pre, sub};
}

static void add_candidate(struct ts *ts, int pre, int sub, bool own, bool seen_after)
{
	char *key = candidate_key(ts, &ts->evs[pre], &ts->evs[sub], own);
	long distance = labs((long)ts->evs[sub].raw - (long)ts->evs[pre].raw);
	bool ordered = lock_ordered(&ts->evs[pre], &ts->evs[sub]);
	int i;

	if (!key)
		return;
	for (i = 0; i < ts->ncands; i++) {
		if (strcmp(ts->cands[i].key, key) == 0) {
			add_instance(&ts->cands[i], pre, sub);
			if (ts->evs[pre].raw > ts->evs[ts->cands[i].pre].raw) {
				ts->cands[i].pre = pre;
				ts->cands[i].sub = sub;
			}
			if (distance > ts->cands[i].distance)
				ts->cands[i].distance = distance;
			ts->cands[i].lock_ordered &= ordered;
			ts->cands[i].seen_after |= seen_after;
			free(key);
			return;
		}
	}
	ts->cands = grow_array(ts->cands, &ts->cands_cap, ts->ncands + 1, sizeof(*ts->cands));
	ts->cands[ts->ncands] = (struct candidate){.pre = pre,
						   .sub = sub,
						   .distance = distance,
						   .lock_ordered = ordered,
						   .own = own,
						   .seen_after = seen_after,
						   .key = key};
	add_instance(&ts->cands[ts->ncands++], pre, sub);
}

static void pair(struct ts *ts, int a, int b)
{
	const struct opev *x = &ts->evs[a], *l = &ts->evs[b];

	if (!ts->flat[x->flat].op->transit || ts->flat[l->flat].op->transit ||
	    !ts->flat[l->flat].op->allowed)
		return;
	if (x->thread == l->thread || x->obj != l->obj || x->gen != l->gen || x->proc != l->proc ||
	    ts->flat[x->flat].model != ts->flat[l->flat].model)
		return;
	if (happens_before(x, l) || happens_before(l, x))
		return;
	switch (violates(ts, x, l)) {
	case 0:
		return;
	case 1:
		if (l->raw < x->raw)
			add_candidate(ts, b, a, false, false);
		else
			add_candidate(ts, a, b, false, false);
		return;
	case 2:
		add_candidate(ts, b, a, false, true); /* as it happened: l waits for x */
		return;
	default:
		add_candidate(ts, a, b, false, false); /* as it happened: x waits for l */
	}
}

static int by_object(const void *pa, const void *pb, void *ctx)
{
	const struct ts *ts = ctx;
	const struct opev *a = &ts->evs[*(const int *)pa], *b = &ts->evs[*(const int *)pb];
	int ma = ts->flat[a->flat].model, mb = ts->flat[b->flat].model;

	if (ma != mb)
		return ma < mb ? -1 : 1;
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->obj != b->obj)
		return a->obj < b->obj ? -1 : 1;
	if (a->gen != b->gen)
		return a->gen < b->gen ? -1 : 1;
	return a->raw < b->raw ? -1 : a->raw > b->raw;
}

static bool same_object(const struct ts *ts, const struct opev *a, const struct opev *b)
{
	return ts->flat[a->flat].model == ts->flat[b->flat].model && a->proc == b->proc &&
	       a->obj == b->obj && a->gen == b->gen;
}

static int by_rank(const void *pa, const void *pb)
{
	const struct candidate *a = pa, *b = pb;

	if (a->own != b->own) /* seen violated: no reordering needed */
		return a->own ? -1 : 1;
	if (a->lock_ordered != b->lock_ordered)
		return a->lock_ordered ? 1 : -1;
	if (a->count != b->count)
		return a->count < b->count ? -1 : 1;
	if (a->distance != b->distance)
		return a->distance > b->distance ? -1 : 1;
	return a->pre < b->pre ? -1 : a->pre > b->pre;
}

/* Instances in the profile's order of their held events. */
static int by_held_event(const void *pa, const void *pb, void *ctx)
{
	const struct ts *ts = ctx;
	const struct instance *a = pa, *b = pb;
	int ra = ts->evs[a->pre].raw, rb = ts->evs[b->pre].raw;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return (ts->evs[a->sub].raw > ts->evs[b->sub].raw) -
	       (ts->evs[a->sub].raw < ts->evs[b->sub].raw);
}

/* The state l's call met, and the transit that left it (-1 if none),
 * before any transit of l's own call (an unlock moves its mutex to READY
 * at its entry, where its limit is judged too). */
static int state_met(const struct ts *ts, const struct opev *l, int *state, int *owner)
{
	const struct opev *x = l->last_transit >= 0 ? &ts->evs[l->last_transit] : NULL;

	*state = l->before;
	*owner = l->before_owner;
	if (x && x->raw == l->raw) {
		*state = x->before;
		*owner = x->before_owner;
		return x->last_transit;
	}
	return l->last_transit;
}

/* Violations the profile observed within one thread, in a model with
 * owned states (lock pairing: a second lock by the holder, an unlock of a
 * mutex it had unlocked already): a limit the thread's own latest transit
 * on the object left in a state that forbids it.  They are candidates
 * held as they happened: the thread goes from its transit to the limit. */
static void find_own_violations(struct ts *ts)
{
	int i, x, state, owner;

	for (i = 0; i < ts->nevs; i++) {
		const struct opev *l = &ts->evs[i];
		const struct flat_op *fo = &ts->flat[l->flat];

		if (fo->op->transit || !fo->op->allowed || !fo->m->owned)
			continue;
		x = state_met(ts, l, &state, &owner);
		if (x < 0 || ts->evs[x].thread != l->thread || (owner >= 0 && owner != l->thread) ||
		    allowed_to(ts, l, state, owner))
			continue;
		add_candidate(ts, x, i, true, false);
	}
}

static void find_candidates(struct ts *ts)
{
	int *order = malloc(sizeof(int) * (size_t)(ts->nevs + 1));
	int i, j, start = 0;

	if (!order)
		return;
	for (i = 0; i < ts->nevs; i++)
		order[i] = i;
	qsort_r(order, (size_t)ts->nevs, sizeof(int), by_object, ts);
	for (i = 1; i <= ts->nevs; i++) {
		if (i < ts->nevs && same_object(ts, &ts->evs[order[start]], &ts->evs[order[i]]))
			continue;
		for (j = start; j < i; j++) {
			int k;

			if (!ts->flat[ts->evs[order[j]].flat].op->transit)
				continue;
			for (k = start; k < i; k++)
				if (k != j)
					pair(ts, order[j], order[k]);
		}
		start = i;
	}
	free(order);
	find_own_violations(ts);
	for (i = 0; i < ts->ncands; i++)
		qsort_r(ts->cands[i].inst, (size_t)ts->cands[i].count, sizeof(struct instance),
			by_held_event, ts);
	if (ts->ncands)
		qsort(ts->cands, (size_t)ts->ncands, sizeof(*ts->cands), by_rank);
}

/* --- history --- */

static char *history_path(struct ts *ts)
{
	return path_in(ts, "typestate-history");
}

static void load_history(struct ts *ts)
{
	char *path = history_path(ts), *line = NULL;
	size_t len = 0;
	FILE *f = path ? fopen(path, "r") : NULL;
	ssize_t n;
	int cap = 0;

	while (f && (n = getline(&line, &len, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		ts->history = grow_array(ts->history, &cap, ts->nhistory + 1, sizeof(char *));
		ts->history[ts->nhistory++] = strdup(line);
	}
	if (f)
		fclose(f);
	free(line);
	free(path);
}

static bool in_history(const struct ts *ts, const char *key)
{
	int i;

	for (i = 0; i < ts->nhistory; i++)
		if (strcmp(ts->history[i], key) == 0)
			return true;
	return false;
}

static void remember_failure(struct ts *ts, const char *key)
{
	char *path = history_path(ts);
	FILE *f = path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, "%s\n", key);
		fclose(f);
	}
	free(path);
}

/* --- re-execution --- */

/* The function a schedule waits for: the model's, or libc's syscall()
 * that made it. */
static const char *call_name(const struct ts *ts, const struct opev *e)
{
	return ts->raws[e->entry_raw].via_syscall ? SYSCALL_WRAPPER : ts->flat[e->flat].op->func;
}

/* `arg1 == 3` for an object found in an argument register at the call's
 * entry; "" when the object is known only at the return. */
static void object_condition(const struct ts *ts, const struct opev *e, char *buf, size_t len)
{
	const struct flat_op *fo = &ts->flat[e->flat];
	const struct ts_object *o = &fo->op->obj;

	buf[0] = '\0';
	if (o->where != TS_ARG || o->index >= 0)
		return;
	int arg = o->arg + ts->raws[e->entry_raw].via_syscall;

	if (arg > 6)
		return; /* syscall()'s seventh argument is on the stack */
	if (fo->m->int_objects)
		snprintf(buf, len, " && (arg%d & 0xffffffff) == %" PRIu32, arg, (uint32_t)e->value);
	else
		snprintf(buf, len, " && arg%d == 0x%" PRIx64, arg, (uint64_t)e->value);
}

/* The limit's ok condition with errno read in thread var. */
static void ok_condition(const char *ok, const char *var, FILE *f)
{
	const char *p = ok;

	while (*p) {
		const char *q = strstr(p, "errno");

		if (!q) {
			fputs(p, f);
			return;
		}
		fwrite(p, 1, (size_t)(q - p), f);
		/* the word errno, not a part of another name (last_errno_seen) */
		if ((q > ok && (isalnum((unsigned char)q[-1]) || q[-1] == '_' || q[-1] == '.')) ||
		    isalnum((unsigned char)q[5]) || q[5] == '_')
			fputs("errno", f);
		else
			fprintf(f, "%s.errno", var);
		p = q + 5;
	}
}

static bool is_deref(const struct ts *ts, const struct opev *e)
{
	return ts->raws[e->entry_raw].fn == ts->deref_fn;
}

/* What e does to its object's state, and where it is called from: the
 * lines under each of a bug's two events. */
static void describe_states(const struct ts *ts, const struct opev *e, FILE *f)
{
	const struct flat_op *fo = &ts->flat[e->flat];

	fprintf(f, "\n  %s %s -> %s%s\n  call stack:\n%s", fo->op->transit ? "transit" : "limit",
		fo->m->states[e->before], fo->m->states[e->after],
		e->failed ? " (in the profile it failed in that state, and moved nothing)" : "",
		ts->raws[e->entry_raw].stack);
}

static void describe_event(const struct ts *ts, const struct opev *e, FILE *f)
{
	const struct flat_op *fo = &ts->flat[e->flat];
	const struct raw *r = &ts->raws[e->entry_raw];

	if (is_deref(ts, e)) {
		fprintf(f, "a %" PRIu64 "-byte %s at 0x%" PRIx64 " in %s, at %s (%s)", r->args[1],
			r->args[2] ? "store" : "load", r->args[0], ts->threads[e->thread],
			r->at ? r->at : "??", r->where);
		return;
	}
	if (fo->m->int_objects)
		fprintf(f, "%s(%" PRId64 ")", fo->op->func, e->value);
	else
		fprintf(f, "%s(0x%" PRIx64 ")", fo->op->func, (uint64_t)e->value);
	fprintf(f, " in %s, called from %s", ts->threads[e->thread], ts->raws[e->entry_raw].where);
}

/* How many calls like e (same operation, thread, caller and, where the
 * schedule can tell it at the entry, object) its thread made before it:
 * the schedule lets the held thread go past that many (2ndStrike keeps
 * looking for the preceding event when its first instance leads nowhere). */
static int occurrence(const struct ts *ts, const struct opev *e)
{
	const struct ts_object *o = &ts->flat[e->flat].op->obj;
	bool by_object = o->where == TS_ARG && o->index < 0;
	int i, n = 0;

	for (i = 0; i < ts->nevs && &ts->evs[i] != e; i++) {
		const struct opev *p = &ts->evs[i];

		if (p->flat == e->flat && p->thread == e->thread &&
		    ts->raws[p->entry_raw].caller == ts->raws[e->entry_raw].caller &&
		    (!by_object || p->obj == e->obj))
			n++;
	}
	return n;
}

/* The call of e: its function, object, caller and the caller's caller
 * (malloc'd; NULL if out of memory). */
static char *call_predicate(const struct ts *ts, const struct opev *e, const char *obj)
{
	const struct raw *r = &ts->raws[e->entry_raw];
	char *text = NULL, nr[64] = "";
	int n;

	if (r->fn == ts->deref_fn) /* its instruction, before it runs */
		return r->at && asprintf(&text, "at(%s)", r->at) >= 0 ? text : NULL;
	if (r->via_syscall)
		snprintf(nr, sizeof(nr), " && arg1 == %ld",
			 engine_syscall_number(ts->flat[e->flat].op->func));
	if (r->via_insn && r->context) /* its system-call stop, in its function */
		n = asprintf(&text, "syscall(%s)%s && in(%s)", ts->flat[e->flat].op->func, obj,
			     r->context);
	else if (r->via_insn)
		n = asprintf(&text, "syscall(%s)%s", ts->flat[e->flat].op->func, obj);
	else if (r->context)
		n = asprintf(&text, "enter(%s)%s%s && caller == 0x%" PRIx64 " && in(%s)",
			     call_name(ts, e), nr, obj, r->caller, r->context);
	else
		n = asprintf(&text, "enter(%s)%s%s && caller == 0x%" PRIx64, call_name(ts, e), nr,
			     obj, r->caller);
	return n < 0 ? NULL : text;
}

/* The thread var, held at e's call, makes it: to its return, or for a
 * syscall instruction held at its system-call stop, one step (the system
 * call runs; retval is then its result). */
static void run_through(const struct ts *ts, const struct opev *e, const char *var, const char *why,
			FILE *f)
{
	if (ts->raws[e->entry_raw].via_insn)
		fprintf(f, "\tstep %s   # %s: the system call runs\n", var, why);
	else
		fprintf(f, "\trun %s until return(%s)   # %s\n", var, call_name(ts, e), why);
}

/* What the two threads do once both are held at their calls: a is the
 * preceding event's thread, b the subsequent's; moved: b's transit has
 * run already. */
static void schedule_body(struct ts *ts, const struct candidate *c, const char *a, const char *b,
			  bool moved, FILE *f)
{
	const struct opev *pre = &ts->evs[c->pre], *sub = &ts->evs[c->sub];
	bool limit_first = !ts->flat[pre->flat].op->transit;
	const struct opev *limit = limit_first ? pre : sub;
	const struct opev *x = limit_first ? sub : pre;
	const struct ts_op *lop = ts->flat[limit->flat].op;
	const char *lvar = limit_first ? a : b;
	/* the state the limited call meets: x's new one if it waits for x */
	int state = limit_first ? x->after : x->before;
	int owner = limit_first ? x->after_owner : x->before_owner;
	/* another thread's lock: the call's result need not show it (an
	 * unlock of a mutex another thread holds succeeds) */
	bool by_owner = allowed(lop, state) && owner >= 0 && owner != limit->thread;

	if (limit_first && !moved)
		run_through(ts, sub, b, "the object changes state", f);
	/* a syscall instruction's result is the kernel's (-errno), not the
	 * libc function's the ok condition speaks of */
	if (lop->ok && !by_owner && !ts->raws[limit->entry_raw].via_insn) {
		fprintf(f,
			"\trun %s until return(%s)   # the limited call, the object in a state "
			"that forbids it\n%s\tassert ",
			lvar, call_name(ts, limit), AFTER_BUG);
		ok_condition(lop->ok, lvar, f);
		fputs("   # did the call itself see it?\n", f);
		return;
	}
	fprintf(f,
		"\t# The model's own check: %s is about to call %s on the object in a state "
		"that forbids it.\n%s\tassert false\n",
		lvar, lop->func, AFTER_BUG);
}

/* The re-execution of a load or store of a block (limit) against another
 * thread's free of it (x): whichever comes first is held, the load at its
 * instruction (at(FUNC+0xOFF), its first time there), the free at its
 * call; the free runs to its return, then the loading thread is decoded
 * until it touches the freed block: that it did is the model's own check
 * (a load of freed memory seldom faults). */
static void deref_body(const struct ts *ts, const struct opev *x, const struct opev *limit,
		       const char *xv, const char *lv, FILE *f)
{
	const struct raw *r = &ts->raws[limit->entry_raw];
	uint64_t start = (uint64_t)limit->obj, size = 0;
	int i;

	for (i = 0; i < ts->nshared; i++)
		if (ts->shared[i].start == start)
			size = ts->shared[i].size;
	if (!size)
		size = r->args[0] - start + r->args[1]; /* at least up to the access */
	fprintf(f, "\trun %s until return(%s)   # the block is freed\n", xv, call_name(ts, x));
	fprintf(f,
		"\trun %s until (read || write) && addr >= 0x%" PRIx64 " && addr < 0x%" PRIx64
		"   # a load or store in the freed block\n",
		lv, start, start + size);
	fprintf(f,
		"\t# The model's own check: %s touched the block after it was freed.\n%s\tassert "
		"false\n",
		lv, AFTER_BUG);
}

static void deref_schedule(struct ts *ts, const struct candidate *c, const char *pa, const char *pb,
			   FILE *f)
{
	const struct opev *pre = &ts->evs[c->pre], *sub = &ts->evs[c->sub];
	bool limit_first = is_deref(ts, pre);
	const struct opev *limit = limit_first ? pre : sub, *x = limit_first ? sub : pre;
	const char *lp = limit_first ? pa : pb, *xp = limit_first ? pb : pa;

	fprintf(f,
		"thread X = wait any ((%s) ||\n    (%s))   # the first of the two, held\n"
		"if (caller == 0x%" PRIx64
		") {   # X is to free the block: the load is not reached "
		"yet\n\tthread Y = wait any %s\n",
		lp, xp, ts->raws[x->entry_raw].caller, lp);
	deref_body(ts, x, limit, "X", "Y", f);
	fprintf(f, "} else {\n\tthread Y = wait any %s\n", xp);
	deref_body(ts, x, limit, "Y", "X", f);
	fputs("}\nrelease all\n", f);
}

/* Does an op of m before op k name the same function and argument? */
static bool same_call_before(const struct ts_model *m, int k)
{
	int i;

	for (i = 0; i < k; i++)
		if (strcmp(m->ops[i].func, m->ops[k].func) == 0 && m->ops[i].obj.where == TS_ARG &&
		    m->ops[i].obj.index < 0 && m->ops[i].obj.arg == m->ops[k].obj.arg)
			return true;
	return false;
}

/* A violation within one thread (candidate.own): the thread is held at
 * its own transit (its instance), makes it, and runs to its next call on
 * the object; if that is the limit, nothing of its own came between, and
 * reaching it is the model's own check (glibc's default mutex answers
 * nothing to an unlock of an unlocked mutex, and hangs on a second lock).
 * Another call of its own first (a lock that makes the unlock right)
 * ends the schedule with no verdict. */
static void own_schedule(struct ts *ts, const struct candidate *c, const char *pa, const char *pb,
			 FILE *f)
{
	const struct opev *x = &ts->evs[c->pre], *l = &ts->evs[c->sub];
	const struct ts_model *m = ts->flat[l->flat].m;
	int i, n = occurrence(ts, x);

	if (n > 0)
		fprintf(f, "repeat %d { wait any %s }   # its earlier instances go by\n", n, pa);
	fprintf(f, "thread X = wait any %s   # the thread's own transit\n", pa);
	run_through(ts, x, "X", "the object changes state", f);
	fprintf(f, "run X until ((%s)", pb);
	for (i = 0; i < m->nops; i++) { /* any other call of its own on the object */
		const struct ts_op *op = &m->ops[i];

		if (op->obj.where == TS_ARG && op->obj.index < 0 && fn_index(ts, op->func) >= 0 &&
		    strcmp(op->func, TS_DEREF_FUNC) != 0 && !same_call_before(m, i))
			fprintf(f, " ||\n    (enter(%s) && arg%d == 0x%" PRIx64 ")", op->func,
				op->obj.arg, (uint64_t)l->value);
	}
	fprintf(f,
		")\nif (caller == 0x%" PRIx64 ") {   # its limited call, nothing of its own on the "
		"object since\n\t# The model's own check: X is about to call %s on the object in a "
		"state that forbids it.\n%s\tassert false\n}\nrelease all\n",
		ts->raws[l->entry_raw].caller, ts->flat[l->flat].op->func, AFTER_BUG);
}

/*
 * The re-execution of candidate c.  The preceding event's earlier
 * instances in its thread are only waited for (the thread goes on), then
 * one wait holds whichever of the two calls comes first, and a second the
 * other: a subsequent event that comes while the preceding thread is still
 * on its way is caught, not missed between two statements (both calls stay
 * planted from one wait to the next, and a thread stopped on a planted
 * point between two waits is seen by the next).  The first one's caller
 * tells which it was; two threads making the same call cannot both be
 * taken for the two events.
 */
static char *attempt_schedule(struct ts *ts, const struct candidate *c, char *const argv[],
			      const char *name, int64_t timeout_ms)
{
	const struct opev *pre = &ts->evs[c->pre], *sub = &ts->evs[c->sub];
	char pre_obj[96], sub_obj[96], *pa, *pb, *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char *path_of_bug = path_in(ts, "%s", name);
	int n;

	object_condition(ts, pre, pre_obj, sizeof(pre_obj));
	object_condition(ts, sub, sub_obj, sizeof(sub_obj));
	pa = call_predicate(ts, pre, pre_obj);
	pb = call_predicate(ts, sub, sub_obj);
	if (!f || !pa || !pb || !path_of_bug) {
		if (f)
			fclose(f);
		free(buf);
		free(pa);
		free(pb);
		free(path_of_bug);
		return NULL;
	}
	fputs("# run: cctrace run", f); /* exit 1 while the bug shows, as explore's */
	search_put_replay_tail(f, path_of_bug, argv);
	fprintf(f, "\n# typestate (%s): in the profile, ", ts->flat[pre->flat].m->name);
	describe_event(ts, pre, f);
	fputs("\n#   and ", f);
	describe_event(ts, sub, f);
	fputs(c->own
		  ? "\n#   in this order, one thread's own calls: the second met the object in a "
		    "state\n#   the first left, which its model forbids.\n"
		  : "\n#   are not ordered; the first is held until the second has happened, so "
		    "that the\n#   limited call meets the object in a state its model forbids.\n",
	      f);
	fprintf(f, "timeout %lldms\n", (long long)timeout_ms);
	if (is_deref(ts, pre) || is_deref(ts, sub)) {
		deref_schedule(ts, c, pa, pb, f);
		goto done;
	}
	if (c->own) {
		own_schedule(ts, c, pa, pb, f);
		goto done;
	}
	n = occurrence(ts, pre);
	if (n > 0)
		fprintf(f,
			"# Its earlier instances go by.  The subsequent call is planted too\n"
			"# (and never matches here): a thread reaching it between two\n"
			"# statements stops on the planted point and the next wait sees it.\n"
			"repeat %d { wait any (%s) || ((%s) && false) }\n",
			n, pa, pb);
	fprintf(
	    f,
	    "thread X = wait any ((%s) ||\n    (%s))   # the first of the two, held at its call\n",
	    pa, pb);
	/* A system-call stop has no caller (no return address on top of the
	 * stack): told apart as not the preceding call. */
	if (ts->raws[sub->entry_raw].via_insn && !ts->raws[pre->entry_raw].via_insn)
		fprintf(f, "if (caller != 0x%" PRIx64 ") {   # X made the subsequent call\n",
			ts->raws[pre->entry_raw].caller);
	else
		fprintf(f, "if (caller == 0x%" PRIx64 ") {   # X made the subsequent call\n",
			ts->raws[sub->entry_raw].caller);
	/* The limited call came before the transit's thread reached its
	 * call: the order wanted, with nothing to wait for.  Or the transit
	 * wanted first came first.  Where the profile saw the
	 * limit after it, the transit runs now and its thread goes on, for
	 * the limit may come only after something it does next (a flag it
	 * sets): held at its call, it waited for ever.  Otherwise it is held
	 * at its call until the limited call comes. */
	if (ts->flat[pre->flat].op->transit) {
		fputs("\t# the preceding call is not reached yet: the object is as before it\n", f);
	} else if (c->seen_after) {
		run_through(ts, sub, "X", "the object changes state, in the order wanted", f);
		fputs("\trelease X   # what it does next may be what lets the limited call come\n",
		      f);
		fprintf(f, "\tthread Y = wait any %s\n", pa);
	} else {
		fprintf(f, "\tthread Y = wait any %s\n", pa);
	}
	schedule_body(ts, c, "Y", "X", !ts->flat[pre->flat].op->transit && c->seen_after, f);
	fprintf(f, "} else {\n\tthread Y = wait any %s\n", pb);
	schedule_body(ts, c, "X", "Y", false, f);
	fputs("}\nrelease all\n", f);
done:
	fclose(f);
	free(pa);
	free(pb);
	free(path_of_bug);
	return buf;
}

static void write_bug(struct ts *ts, const struct candidate *c, int n, const char *log)
{
	const struct opev *pre = &ts->evs[c->pre], *sub = &ts->evs[c->sub];
	const struct flat_op *pf = &ts->flat[pre->flat];
	const struct opev *x = pf->op->transit ? pre : sub, *l = x == pre ? sub : pre;
	const struct ts_model *m = pf->m;
	char *path = path_in(ts, "bug-%d.txt", n);
	FILE *f = path ? fopen(path, "w") : NULL;

	if (!f) {
		free(path);
		return;
	}
	/* the state the limit meets: x's new one if it comes after x (held
	 * until x, or the thread's own order) */
	bool after_x = l == pre || c->own;
	int owner = after_x ? x->after_owner : x->before_owner;

	fprintf(f, "typestate violation (model %s): %s on %s%" PRIx64 " in state %s", m->name,
		ts->flat[l->flat].op->func, m->int_objects ? "" : "0x", l->obj,
		m->states[after_x ? x->after : x->before]);
	if (owner >= 0)
		fprintf(f, " (held by %s)", ts->threads[owner]);
	fputs(", which allows it only in", f);
	for (int s = 0; s < m->nstates; s++)
		if (allowed(ts->flat[l->flat].op, s))
			fprintf(f, " %s%s", m->states[s],
				(m->owned >> s) & 1u ? " (held by the caller)" : "");
	fprintf(f, "\nobject: %s%" PRIx64 " (%s)%s\n", m->int_objects ? "" : "0x",
		(uint64_t)pre->obj, m->int_objects ? "as a number" : "an address",
		pre->value != pre->obj || sub->value != sub->obj
		    ? "; a call given an address inside the block is on the block"
		    : "");
	fprintf(f, "\nthe held event (the preceding one; the re-execution holds its thread before "
		   "the call):\n  ");
	describe_event(ts, pre, f);
	describe_states(ts, pre, f);
	fprintf(f, "\nthe subsequent event (made to happen while the other is held):\n  ");
	describe_event(ts, sub, f);
	describe_states(ts, sub, f);
	fprintf(f, "\ncandidate: seen %d time%s, %ld calls apart\n", c->count,
		c->count == 1 ? "" : "s", c->distance);
	fprintf(f, "replay: cctrace run bug-%d.sched -- ...\n\nthe re-execution:\n%s", n, log);
	fclose(f);
	free(path);
}

static int64_t attempt_ms(const struct ts *ts)
{
	return ts->o->attempt_ms ? ts->o->attempt_ms : DEFAULT_ATTEMPT_MS;
}

/* The limit of a bug-N.sched's waits: generous. */
static int64_t replay_ms(const struct ts *ts)
{
	return attempt_ms(ts) * 4 > REPLAY_MS ? attempt_ms(ts) * 4 : REPLAY_MS;
}

/* One candidate: 1 if the bug manifested, 0 if not, -1 on error. */
static int attempt(struct ts *ts, const struct candidate *cand, char *const argv[], int bugs, int k,
		   int nth, struct instance in)
{
	struct candidate one = *cand, *c = &one;
	char name[64], *text, *path, *logpath, *log;
	struct run_hooks hooks = {0};
	FILE *report;
	int outcome;

	one.pre = in.pre;
	one.sub = in.sub;
	snprintf(name, sizeof(name), "bug-%d.sched", bugs + 1);
	text = attempt_schedule(ts, c, argv, name, attempt_ms(ts));
	/* attempt-K.sched, then attempt-K.2.sched for its second instance... */
	if (nth) {
		path = path_in(ts, "attempt-%d.%d.sched", k, nth + 1);
		logpath = path_in(ts, "attempt-%d.%d.log", k, nth + 1);
	} else {
		path = path_in(ts, "attempt-%d.sched", k);
		logpath = path_in(ts, "attempt-%d.log", k);
	}
	if (!text || !path || !logpath || write_text(path, text, ts->err, sizeof(ts->err)) < 0) {
		outcome = -1;
		goto out;
	}
	report = fopen(logpath, "we");
	outcome = run_schedule(ts, path, argv, &hooks, report ? report : stderr, 0);
	if (report)
		fclose(report);
	if (outcome == OUTCOME_BUG) {
		char *bug = path_in(ts, "%s", name);

		/* The replay knows the bug is there: a busier machine may take
		 * longer to reach the second call than the search's limit. */
		char *replay = attempt_schedule(ts, c, argv, name, replay_ms(ts));

		/* attempt-K.sched stays: the report in bug-N.txt cites it */
		log = read_all(logpath);
		if (bug && replay)
			write_text(bug, replay, ts->err, sizeof(ts->err));
		free(replay);
		write_bug(ts, c, bugs + 1, log);
		free(log);
		free(bug);
	}
out:
	free(text);
	free(path);
	free(logpath);
	if (outcome < 0)
		return -1;
	return outcome == OUTCOME_BUG;
}

static bool same_stacks(const struct ts *ts, struct instance a, struct instance b)
{
	const struct raw *ap = &ts->raws[ts->evs[a.pre].entry_raw],
			 *as = &ts->raws[ts->evs[a.sub].entry_raw],
			 *bp = &ts->raws[ts->evs[b.pre].entry_raw],
			 *bs = &ts->raws[ts->evs[b.sub].entry_raw];

	return ap->caller == bp->caller && as->caller == bs->caller &&
	       strcmp(ap->stack ? ap->stack : "", bp->stack ? bp->stack : "") == 0 &&
	       strcmp(as->stack ? as->stack : "", bs->stack ? bs->stack : "") == 0;
}

static bool picked(const struct instance *out, int n, struct instance in)
{
	int i;

	for (i = 0; i < n; i++)
		if (out[i].pre == in.pre && out[i].sub == in.sub)
			return true;
	return false;
}

/* The instances of c worth a re-execution, at most max, into out: the
 * latest of each distinct pair of call stacks (where the two calls were
 * made from), latest first (the one nearest the other event: earlier ones
 * tend to be ordered by something the profile did not see), then the
 * first instance (2ndStrike goes on looking for the preceding event after
 * a timeout; the schedule matches an instance by its number in its
 * thread).  Returns how many. */
static int pick_instances(const struct ts *ts, const struct candidate *c, struct instance *out,
			  int max)
{
	int i, j, n = 0;

	for (i = c->count - 1; i >= 0 && n < max; i--) {
		for (j = 0; j < n && !same_stacks(ts, out[j], c->inst[i]); j++)
			;
		if (j == n)
			out[n++] = c->inst[i];
	}
	if (n < max && !picked(out, n, c->inst[0]))
		out[n++] = c->inst[0];
	return n;
}

/* Re-execute c once per instance pick_instances gives, until one
 * manifests: 1, 0, or -1 on an error. */
static int attempt_instances(struct ts *ts, const struct candidate *c, char *const argv[], int bugs,
			     int k)
{
	int max = ts->o->instances > 0 ? ts->o->instances : DEFAULT_INSTANCES;
	struct instance *pick = malloc(sizeof(*pick) * (size_t)max);
	int i, n, rc = 0;

	if (!pick) {
		snprintf(ts->err, sizeof(ts->err), "out of memory");
		return -1;
	}
	n = pick_instances(ts, c, pick, max);
	for (i = 0; i < n && rc == 0 && !engine_stop_signal(); i++)
		rc = attempt(ts, c, argv, bugs, k, i, pick[i]);
	free(pick);
	return rc;
}

static int reexecute(struct ts *ts, char *const argv[])
{
	int i, tried = 0, bugs = 0, pruned = 0, rc;

	for (i = 0; i < ts->ncands; i++) {
		const struct candidate *c = &ts->cands[i];
		int64_t t0;

		if (!ts->o->ignore_history && in_history(ts, c->key)) {
			pruned++;
			continue;
		}
		if (ts->o->runs && tried >= ts->o->runs)
			break;
		if (out_of_time(ts) && !tried) {
			snprintf(
			    ts->err, sizeof(ts->err),
			    "--time ran out before the first of %d candidates was re-executed: "
			    "nothing was tested; give more time",
			    ts->ncands - pruned);
			return -1;
		}
		if (out_of_time(ts)) {
			fprintf(ts->o->report,
				"typestate: --time ran out: %d candidate%s not re-executed\n",
				ts->ncands - i, ts->ncands - i == 1 ? "" : "s");
			break;
		}
		tried++;
		t0 = engine_now_ms();
		rc = attempt_instances(ts, c, argv, bugs, i + 1);
		if (rc < 0)
			return -1;
		if (engine_stop_signal()) {
			snprintf(ts->err, sizeof(ts->err), "interrupted");
			return -1;
		}
		fprintf(ts->o->report, "typestate: candidate %d/%d: %s: %s (%lld ms)\n", i + 1,
			ts->ncands, c->key, rc ? "manifested" : "not manifested",
			(long long)(engine_now_ms() - t0));
		if (rc) {
			if (!bugs)
				fprintf(ts->o->report,
					"typestate: first bug manifested %.1f s after the start "
					"(profile, analysis and %d re-execution%s)\n",
					(double)(engine_now_ms() - ts->t0) / 1000.0, tried,
					tried == 1 ? "" : "s");
			bugs++;
			fprintf(ts->o->report,
				"typestate: bug %d: %s/bug-%d.txt, replay with %s/bug-%d.sched\n",
				bugs, ts->dir, bugs, ts->dir, bugs);
		} else {
			remember_failure(ts, c->key);
		}
	}
	fprintf(ts->o->report,
		"typestate: %d candidate%s, %d pruned by the history, %d re-executed, %d bug%s\n",
		ts->ncands, ts->ncands == 1 ? "" : "s", pruned, tried, bugs, bugs == 1 ? "" : "s");
	return bugs;
}

/* --- the whole --- */

static void ts_free(struct ts *ts)
{
	int i;

	free(ts->profile_bug_log);
	forget_profile(ts);
	for (i = 0; i < ts->nstepped; i++)
		free(ts->stepped[i]);
	free(ts->stepped);
	free(ts->shared);
	for (i = 0; i < ts->nfns; i++) {
		free(ts->fns[i].name);
		free(ts->fns[i].ops);
	}
	for (i = 0; i < ts->nevs; i++) {
		free(ts->evs[i].vc);
		free(ts->evs[i].weak_vc);
	}
	for (i = 0; i < ts->ncands; i++) {
		free(ts->cands[i].key);
		free(ts->cands[i].inst);
	}
	for (i = 0; i < ts->nhistory; i++)
		free(ts->history[i]);
	free(ts->history);
	free(ts->cands);
	free(ts->evs);
	free(ts->threads);
	free(ts->pending);
	free(ts->fns);
	free(ts->raws);
	free(ts->flat);
	free(ts->dir);
	ts_models_free(&ts->models);
}

/* DIR/profile.txt: every call the profile saw, for the curious and for
 * debugging a model. */
static void list_profile(struct ts *ts)
{
	char *path = path_in(ts, "profile.txt");
	FILE *f = path ? fopen(path, "w") : NULL;
	int i;

	for (i = 0; f && i < ts->nraws; i++) {
		const struct raw *r = &ts->raws[i];

		fprintf(f, "%d\t%.3f\t%s\t%s %s(0x%" PRIx64 ", 0x%" PRIx64 ")", i, r->ms,
			ts->threads[r->thread], r->ret ? "return" : "enter", ts->fns[r->fn].name,
			r->args[0], r->args[1]);
		if (r->ret)
			fprintf(f, " = 0x%" PRIx64, r->retval);
		fprintf(f, "%s\tfs=0x%" PRIx64 "\t%s\n",
			r->via_syscall ? " via syscall()"
			: r->via_insn  ? " by a syscall instruction"
				       : "",
			r->tls, r->where);
	}
	if (f)
		fclose(f);
	free(path);
}

static void list_candidates(struct ts *ts)
{
	char *path = path_in(ts, "candidates.txt");
	FILE *f = path ? fopen(path, "w") : NULL;
	int i;

	for (i = 0; f && i < ts->ncands; i++)
		fprintf(f, "%d\t%d\t%ld\t%s\t%s\n", i + 1, ts->cands[i].count,
			ts->cands[i].distance,
			ts->cands[i].lock_ordered ? "lock-ordered" : "unordered", ts->cands[i].key);
	if (f)
		fclose(f);
	free(path);
}

int typestate_run(char *const argv[], const struct typestate_options *o, char *err, size_t errlen)
{
	struct ts ts = {.o = o, .t0 = engine_now_ms(), .deref_fn = -1};
	struct stat st;
	int rc = -1;

	/* a Ctrl-C during the plain run, before any tracer, is told too */
	engine_catch_stop_signals();
	if (ts_models_load(&ts.models, o->models ? o->models : "file,lock,memory", ts.err,
			   sizeof(ts.err)) < 0)
		goto fail;
	ts.dir = strdup(o->out_dir ? o->out_dir : "typestate-out");
	if (!ts.dir) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (search_make_dir(ts.dir, err, errlen) < 0)
		goto out;
	/* before anything runs: a file of that name is no directory */
	if (stat(ts.dir, &st) < 0) {
		snprintf(err, errlen, "cannot use the output directory '%s': %s", ts.dir,
			 strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "the output directory '%s' is a file, not a directory",
			 ts.dir);
		goto out;
	}
	if (collect_functions(&ts) < 0 || keep_present(&ts, argv[0]) < 0)
		goto fail;
	if (engine_input_prepare(ts.err, sizeof(ts.err)) < 0)
		goto fail;
	if (profile(&ts, argv) < 0)
		goto fail;
	list_profile(&ts);
	analyse(&ts);
	find_candidates(&ts);
	list_candidates(&ts);
	fprintf(o->report, "typestate: %d model event%s, %d candidate%s (%s/candidates.txt)\n",
		ts.nevs, plural_s(ts.nevs), ts.ncands, plural_s(ts.ncands), ts.dir);
	if (!ts.ncands && out_of_time(&ts)) { /* never "0 bugs" for what was not tested */
		snprintf(ts.err, sizeof(ts.err),
			 "--time ran out during the profile, which found no candidate: nothing was "
			 "tested; give more time%s",
			 o->driver ? "" : " (a server needs --driver to be profiled)");
		goto fail;
	}
	load_history(&ts);
	rc = reexecute(&ts, argv);
	if (rc == 0 && ts.profile_bug_log) {
		fprintf(o->report,
			"typestate: no candidate manifested, but the program ended in a bug in the "
			"profile run itself (%s): that is the result, not 0 bugs; it has no "
			"schedule to replay it (cctrace test may find one)\n",
			ts.profile_bug_log);
		rc = 1;
	}
	if (rc >= 0)
		goto out;
fail:
	snprintf(err, errlen, "%s", ts.err);
	rc = -1;
out:
	ts_free(&ts);
	return rc;
}
