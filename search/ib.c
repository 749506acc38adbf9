/*
 * ib.c: interference bounding (the ib:K strategy; 003, "Bounded-
 * Interference Sequentialization"): round robin, then the schedules with
 * exactly 1, then 2, ..., then K chosen reads of another thread's write.
 *
 * Why: 003 bounds the flow of data between threads rather than the
 * switches of control: a bug that needs one value from another thread at
 * the right read is 1-coupled however many context switches it takes to
 * get there (its Mutual needs 3 switches and 1 non-local read).
 *
 * The count.  003's non-local read is a read whose most recent write to
 * the variable was another thread's (not the initial value, not its own);
 * locks are synchronisation, ordered by lock validity, not reads.  In a
 * serialized run (cctrace test) every step starts at a scheduling point,
 * and engine_choice tells, for each option, the access its step makes
 * first (the shared access it is held at, decoded with its registers).
 * This file keeps the thread that last wrote each address so seen
 * (interfere.c); a step that reads an address another thread wrote last
 * is an *interference*.  What it does not see: accesses that are not
 * scheduling points (in libc, or not found shared by profiling),
 * accesses after the first of a step, and overlap (an access is its
 * first byte's address).
 *
 * Which interferences are chosen.  Every schedule reads some values of
 * other threads whatever the scheduler does (a worker reads what main
 * initialised; after a thread ends, the next reads what it left), so the
 * bound is not on all of them (b->interferences counts them all; the
 * ones nobody chose are never refused).  The *default* at a choice is
 * round robin's: the thread that ran last goes on; when it blocked or
 * ended, the next in id order (trace_round_robin_option's rotation).  A
 * *chosen* interference is one a deviation from the default makes: the
 * first access of the deviating thread (at the deviation or in the steps
 * it makes after it) when that reads another thread's write; else the
 * next step of the thread the deviation displaced, when its read now sees
 * a write the deviating thread made meanwhile.
 *
 * The search.  Bounding the chosen interferences while allowing, for
 * free, the switches that interfere with nothing (the first version)
 * spent every run of a budget inside bound 0: such switches only reorder
 * steps that take nothing from each other.  So a choice offers the
 * default and *interference moves* only, each making exactly one chosen
 * interference:
 *   (a) a switch to another thread whose next step reads an address a
 *       third thread (not itself) wrote last: that read; or a switch to
 *       a thread held where it makes no access we see (at its start, at
 *       a synchronisation function), which then runs up to its first
 *       access, at most MOVE_STEPS steps: that access must read another
 *       thread's write, else the move is abandoned;
 *   (b) when the default thread D is about to read address a: a switch to
 *       another thread T whose next step interferes not, which then runs
 *       (its steps are the default: it ran last) until its step writes a,
 *       at most MOVE_STEPS steps; then D reads T's write.  T's first
 *       access must not read another thread's write (that is (a)'s).
 * A move is abandoned (the run is not one of the search's:
 * SEARCH_ABANDON) if its thread blocks or ends first, or goes too far.
 * A plain switch that interferes with nothing is not an option.  A choice
 * offers the default, then its (b) moves (aimed at a read about to be
 * made), then its (a) moves, each kind in round-robin order.  Distinct
 * traces are distinct schedules: the choices inside a move have one
 * option each, and the two moves of one thread at one choice differ in
 * whether its first access interferes, so at most one of them runs.
 * Bound 0 is the one round-robin schedule; bound k runs the schedules of
 * exactly k moves (trace.c's move_cost: option 0 costs nothing, any other
 * one; frontier.c runs the bounds in increasing order without running a
 * schedule twice), so a run of bound k has exactly k chosen
 * interferences, and bound k is polynomial in the choices of a run for a
 * fixed k (each of its k moves picks a choice and a thread) where all
 * interleavings are exponential.  The search ends when bound K has run
 * out (trace.max_bound), or earlier when a bound left no move out.
 *
 * A move must be able to stop its run at any step, so the engine asks at
 * every step, one option or more (strategy_ops.every_step); a step made
 * without asking (explore) counts, but ends a move.  The one exception:
 * a run the program itself ends inside a move (a deadlock when the
 * move's thread blocks and nobody else can go, a crash, main's exit)
 * ends as it did, one chosen interference short of its bound: the
 * engine ends it before ib could abandon the move.  Without access
 * information (explore with a schedule, or a choice among values)
 * nothing interferes: ib:K is the one round-robin run.
 *
 * What it cannot reach: a bug that needs a switch moving no value (a lost
 * update whose two loads both see the initial value; main creating a
 * thread early), and a write that T makes only under a lock D holds at
 * its read (T blocks: 003's sequentialization reorders whole critical
 * sections afterwards, with an SMT check, which an online scheduler
 * cannot).
 *
 * Sharding: as dfs, by the first real choice, at every bound.
 */
#include "search/internal.h"

#include <stdlib.h>

/* Most steps a move's thread may make up to its access (a) or its write
 * (b): one further away is out of the move's reach (the move is
 * abandoned), which keeps a wrong guess cheap. */
#define MOVE_STEPS 64

enum move_phase {
	MOVE_NONE,
	MOVE_TO_READ,  /* (a): the mover runs up to its first access */
	MOVE_TO_WRITE, /* (b): the mover runs until its step writes addr */
	MOVE_BACK,     /* (b): the reader reads the mover's write next */
};

struct move {
	enum move_phase phase;
	int mover, reader; /* ids */
	uint64_t addr;
	int steps;     /* the mover's, so far */
	bool accessed; /* (b): the mover made its first access */
};

struct ib {
	struct interference seen;
	int interferences; /* this run's, chosen or not */
	int chosen;	   /* this run's moves */
	struct move move;
	int *offer; /* [2 * options]: the option of each place offered (a
		     * thread without an access may be both an (a) and a (b)) */
	int noffer;
	int nwrite; /* places 1 .. nwrite are (b) moves, then (a) moves */
};

static int ib_init(struct search *s)
{
	s->state = calloc(1, sizeof(struct ib));
	if (!s->state)
		return -1;
	s->trace.preemption_bound = 0;
	s->trace.move_cost = true;
	s->trace.max_bound = s->cfg.param[0];
	return frontier_enable(&s->trace);
}

static void ib_fini(struct search *s)
{
	struct ib *b = search_state(s);

	if (!b)
		return;
	interference_free(&b->seen);
	free(b->offer);
	free(b);
}

static void ib_plan(struct search *s)
{
	struct ib *b = search_state(s);

	interference_reset(&b->seen); /* every run starts with nothing written */
	b->interferences = b->chosen = 0;
	b->move = (struct move){MOVE_NONE, -1, -1, 0, 0, false};
}

/* Does option i read what another thread wrote last? */
static bool interferes(struct ib *b, const struct search_point *p, int i)
{
	return p->access && interference_reads_other(&b->seen, &p->access[i], p->ids[i]);
}

static bool writes(const struct engine_access *a, uint64_t addr)
{
	return a->write && a->addr == addr;
}

/* Is option i held where its next step makes no access we see (at its
 * start, at a synchronisation function)? */
static bool no_access(const struct search_point *p, int i)
{
	return !p->access || !p->access[i].addr;
}

static int abandon(struct search *s)
{
	s->abandoned = true;
	return SEARCH_ABANDON;
}

/* Fill b->offer: the default, the (b) moves, the (a) moves, each kind in
 * round-robin order; how many. */
static int offer_options(struct ib *b, const struct search_point *p)
{
	int dflt = trace_round_robin_option(p, 0), n = 0, r, i;
	bool reads = p->access && p->access[dflt].read && p->access[dflt].addr;

	b->offer[n++] = dflt;
	for (r = 1; reads && r < p->n; r++)
		if (!interferes(b, p, trace_round_robin_option(p, r)))
			b->offer[n++] = trace_round_robin_option(p, r);
	b->nwrite = n - 1;
	for (r = 1; p->access && r < p->n; r++) {
		i = trace_round_robin_option(p, r);
		if (interferes(b, p, i) || no_access(p, i))
			b->offer[n++] = i;
	}
	return n;
}

/* Does option i's step keep the move going?  (a): the mover's first
 * access must read another thread's write, which ends the move.  (b):
 * its first access must not (that would be an (a) move of its own). */
static bool moves_on(struct ib *b, const struct search_point *p, int i)
{
	bool first = !no_access(p, i), other = interferes(b, p, i);

	if (b->move.phase == MOVE_TO_READ && first) {
		b->move.phase = MOVE_NONE;
		return other;
	}
	if (b->move.phase == MOVE_TO_WRITE && first && !b->move.accessed) {
		b->move.accessed = true;
		return !other;
	}
	return true;
}

/* Option i makes its step: count its interference, note its write, move
 * on; SEARCH_ABANDON if the move fails, or when out of memory. */
static int take(struct search *s, struct ib *b, const struct search_point *p, int i)
{
	if (!p->access)
		return i;
	if (!moves_on(b, p, i))
		return abandon(s);
	b->interferences += interferes(b, p, i);
	if (interference_note(&b->seen, &p->access[i], p->ids[i]) < 0)
		return abandon(s);
	if (b->move.phase == MOVE_TO_WRITE && writes(&p->access[i], b->move.addr))
		b->move.phase = MOVE_BACK;
	return i;
}

/* The steps made without asking since the last choice: their
 * interferences and their writes.  -1 when out of memory, 1 when they
 * break a move (it chooses every step of its own). */
static int forced_steps(struct ib *b, const struct search_point *p)
{
	int i;

	for (i = 0; i < p->nforced; i++) {
		const struct engine_step *st = &p->forced[i];

		if (b->move.phase != MOVE_NONE)
			return 1;
		b->interferences += interference_reads_other(&b->seen, &st->access, st->id);
		if (interference_note(&b->seen, &st->access, st->id) < 0)
			return -1;
	}
	return 0;
}

/* A choice inside a move: the mover's next step, or the reader's read;
 * one option. */
static int move_step(struct search *s, struct ib *b, const struct search_point *p)
{
	int i, k;

	if (b->move.phase != MOVE_BACK) {
		i = trace_option_of(p, b->move.mover);
		if (i < 0 || ++b->move.steps > MOVE_STEPS)
			return abandon(s); /* it blocked or ended, or went too far */
	} else {
		i = trace_option_of(p, b->move.reader);
		if (i < 0 || !interferes(b, p, i))
			return abandon(s); /* left out (spinning) */
		b->move.phase = MOVE_NONE;
	}
	k = trace_next(s, 1, false, false);
	return k == SEARCH_ABANDON ? k : take(s, b, p, i);
}

/* Option i was taken as the move at place k of the offer: (a) with no
 * access yet, the mover runs up to its first; (b) the mover is i, the
 * reader the default, whose next step reads the address. */
static void start_move(struct ib *b, const struct search_point *p, int k, int i)
{
	int d = trace_round_robin_option(p, 0);

	if (k <= b->nwrite)
		b->move =
		    (struct move){MOVE_TO_WRITE, p->ids[i], p->ids[d], p->access[d].addr, 1, false};
	else if (no_access(p, i))
		b->move = (struct move){MOVE_TO_READ, p->ids[i], -1, 0, 1, false};
}

static int grow_offer(struct ib *b, int n)
{
	int *offer;

	if (n <= b->noffer)
		return 0;
	offer = realloc(b->offer, sizeof(*offer) * (size_t)n);
	if (!offer)
		return -1;
	b->offer = offer;
	b->noffer = n;
	return 0;
}

static int ib_choose(struct search *s, const struct search_point *p)
{
	struct ib *b = search_state(s);
	int k, i;

	if (!p->ids) /* a choice among values: nothing interferes */
		return trace_next(s, 1, false, false) == SEARCH_ABANDON ? SEARCH_ABANDON : 0;
	if (forced_steps(b, p) != 0 || grow_offer(b, 2 * p->n) < 0)
		return abandon(s);
	if (b->move.phase != MOVE_NONE)
		return move_step(s, b, p);
	k = trace_next(s, offer_options(b, p), false, false);
	if (k == SEARCH_ABANDON)
		return k;
	i = b->offer[k];
	b->chosen += k > 0;
	assert(b->chosen == trace_preemptions(s) || s->diverged); /* a replay clamps k */
	if (k > 0)
		start_move(b, p, k, i);
	return take(s, b, p, i);
}

const struct strategy_ops search_ib = {
    .name = "ib",
    .serialized_only = true,
    .synopsis = "ib:K",
    .nparams = 1,
    .nrequired = 1,
    .min = {0},
    .usage = "needs a bound K from 0 to 16 on the reads that see another thread's write, "
	     "e.g. ib:2",
    .init = ib_init,
    .fini = ib_fini,
    .shard = trace_shard_first_choice,
    .plan = ib_plan,
    .choose = ib_choose,
    .next_run = trace_backtrack_iterating,
    .every_step = true, /* a move must be able to stop its run */
};
