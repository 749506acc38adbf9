/*
 * test_strategies.c: each search strategy through search/search.h, without
 * a process.
 *
 * A synthetic program (struct prog) has a few threads of a few steps, each
 * step touching one watched variable or none.  A run asks the search which
 * thread makes the next step among those that have not ended, passing the
 * thread that ran last and the variable its last step touched, as
 * policy/choose.c does, and writes the schedule as letters ("ABBA": A, then
 * B twice, then A).  The tests assert the exact order of schedules of the
 * exhaustive strategies (worked out by hand in the comments), the coverage
 * of the whole space, the bounds of cb, vb and PCT, reproducibility from
 * the seed, sharding that splits the space exactly, the names and errors
 * of the parser, and that ids, variables and values beyond the old fixed
 * tables (256 ids, 64 variables) work.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"

#define MAXT	  80
#define MAXSTEP	  8
#define MAX_SCHED 96 /* letters of one schedule */
#define MAX_RUNS  8192

struct prog {
	int nthreads;
	int len[MAXT];
	int var[MAXT][MAXSTEP]; /* -1: touches no watched variable */
	int id[MAXT];		/* 0: the thread's index */
	int nvars;
	/* ib: each step's first access, 'r' or 'w' to address var + 1 (0:
	 * none), given to the search as engine_choice.access is */
	char kind[MAXT][MAXSTEP];
};

/* Every run of a search, and what happened in it. */
struct runs {
	char sched[MAX_RUNS][MAX_SCHED];
	char trace[MAX_RUNS][128];
	int preempt[MAX_RUNS];	    /* switches away from a thread that could go on */
	int interfere[MAX_RUNS];    /* reads of what another thread wrote last */
	int chosen[MAX_RUNS];	    /* of those, made by a deviation from round
				     * robin (ib's bound; see run_once) */
	bool bad_preempt[MAX_RUNS]; /* one not right after a watched access */
	int n;
	int abandoned;
	bool exhausted;
};

static struct prog two_by(int steps)
{
	struct prog p = {.nthreads = 2, .len = {steps, steps}};

	memset(p.var, -1, sizeof(p.var));
	return p;
}

static struct search *make(const char *strategy, uint64_t seed, int shard, int nshards, int nvars)
{
	struct search_config cfg = {.seed = seed, .shard = shard, .nshards = nshards};
	char err[256];
	struct search *s;

	cr_assert_eq(search_parse(strategy, &cfg, err, sizeof(err)), 0, "%s: %s", strategy, err);
	s = search_new(&cfg, nvars);
	cr_assert_not_null(s);
	return s;
}

static int id_of(const struct prog *p, int t)
{
	return p->id[t] ? p->id[t] : t;
}

/* One run of p; false if the search abandoned it. */
/* The access thread t's next step makes first (none unless p->kind). */
static struct engine_access next_access(const struct prog *p, int t, int step)
{
	char kind = p->kind[t][step];

	if (!kind || p->var[t][step] < 0)
		return (struct engine_access){0};
	return (struct engine_access){(uint64_t)p->var[t][step] + 1, kind == 'r', kind == 'w'};
}

/* Does a by thread t read what another thread wrote last (writer: by
 * address)? */
static bool reads_other(struct engine_access a, int t, const int writer[MAXSTEP + 2])
{
	return a.addr && a.addr <= MAXSTEP + 1 && a.read && writer[a.addr] >= 0 &&
	       writer[a.addr] != t;
}

static void note_access(struct engine_access a, int t, int writer[MAXSTEP + 2], int *interfere)
{
	if (reads_other(a, t, writer))
		(*interfere)++;
	if (a.addr && a.addr <= MAXSTEP + 1 && a.write)
		writer[a.addr] = t;
}

/* Round robin's option (ib's default): the thread that ran last
 * (current), else the least id after it, wrapping round. */
static int round_robin_default(const int *ids, int n, int current)
{
	int start = current >= 0 ? current : 0, best = 0, i;

	for (i = 1; i < n; i++) {
		bool wrap_i = ids[i] < start, wrap_best = ids[best] < start;

		if (wrap_i != wrap_best ? !wrap_i : ids[i] < ids[best])
			best = i;
	}
	return best;
}

/* The deviations from round robin of a run, as ib counts them. */
struct deviation {
	int mover;     /* deviated, no access seen since (-1: none) */
	int displaced; /* the thread round robin would have run then */
	int waiting;   /* displaced by a mover whose first access read nothing of
			* another thread's: its next read may be chosen (-1: none) */
};

/* Does option k, taken where round robin takes dflt, make a chosen read of
 * another thread's write (ib's count)?  The first access of a thread
 * that deviated from round robin (at the deviation or later), if it
 * reads another thread's write; else the next step of the thread the
 * deviation displaced (which may deviate in turn: that is the same
 * deviation's end), if its read now sees another thread's write. */
static void chosen_read(const struct engine_access *access, const int *opts, int k, int dflt,
			const int writer[MAXSTEP + 2], struct deviation *dv, int *chosen)
{
	bool interferes = reads_other(access[k], opts[k], writer);

	if (opts[k] == dv->waiting) { /* the deviation's end, not one of its own */
		*chosen += interferes;
		dv->waiting = -1;
		return;
	}
	if (k != dflt) {
		dv->mover = opts[k];
		dv->displaced = opts[dflt];
	}
	if (opts[k] == dv->mover && access[k].addr) {
		*chosen += interferes;
		if (!interferes)
			dv->waiting = dv->displaced;
		dv->mover = -1;
	}
}

static bool run_once(struct search *s, const struct prog *p, struct runs *out)
{
	int pos[MAXT] = {0}, last = -1, lastvar = -1, n = out->n, len = 0;
	struct deviation dv = {-1, -1, -1};
	int writer[MAXSTEP + 2];

	memset(writer, -1, sizeof(writer));
	out->preempt[n] = out->interfere[n] = out->chosen[n] = 0; /* an abandoned run left counts */
	out->bad_preempt[n] = false;
	for (;;) {
		int opts[MAXT], ids[MAXT], nopt = 0, current = -1, t, k;
		struct engine_access access[MAXT];

		for (t = 0; t < p->nthreads; t++)
			if (pos[t] < p->len[t]) {
				access[nopt] = next_access(p, t, pos[t]);
				opts[nopt] = t;
				ids[nopt++] = id_of(p, t);
			}
		if (!nopt)
			break;
		for (t = 0; t < nopt; t++)
			if (opts[t] == last)
				current = ids[t];
		k = search_choose(s, &(struct search_point){nopt, ids, current, lastvar, access});
		if (k == SEARCH_ABANDON)
			return false;
		cr_assert(k >= 0 && k < nopt, "option %d of %d", k, nopt);
		if (current >= 0 && opts[k] != last) {
			out->preempt[n]++;
			if (lastvar < 0)
				out->bad_preempt[n] = true;
		}
		last = opts[k];
		chosen_read(access, opts, k, round_robin_default(ids, nopt, current), writer, &dv,
			    &out->chosen[n]);
		note_access(access[k], last, writer, &out->interfere[n]);
		lastvar = p->var[last][pos[last]++];
		cr_assert_lt(len, MAX_SCHED - 1);
		out->sched[n][len++] = (char)('A' + last % 26);
	}
	out->sched[n][len] = 0;
	search_trace(s, out->trace[n], sizeof(out->trace[n]));
	return true;
}

/* Up to max runs of a search over p. */
static void search_runs(const char *strategy, uint64_t seed, int shard, int nshards,
			const struct prog *p, int max, struct runs *out)
{
	struct search *s = make(strategy, seed, shard, nshards, p->nvars);
	int i;

	memset(out, 0, sizeof(*out));
	cr_assert_leq(max, MAX_RUNS);
	for (i = 0; i < max; i++) {
		if (run_once(s, p, out))
			out->n++;
		else
			out->abandoned++;
		if (!search_next_run(s)) {
			out->exhausted = true;
			break;
		}
	}
	search_free(s);
}

static struct runs g_a, g_b, g_c; /* too large for the stack */

static void expect_schedules(const struct runs *r, const char *const *want, int n, const char *what)
{
	int i;

	cr_assert(r->exhausted, "%s did not run out", what);
	cr_assert_eq(r->n, n, "%s: %d runs, expected %d", what, r->n, n);
	for (i = 0; i < n; i++)
		cr_expect_str_eq(r->sched[i], want[i], "%s run %d", what, i + 1);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The sorted schedules of r (and of r2 appended, if not NULL). */
static int sorted(const struct runs *r, const struct runs *r2, char (*out)[MAX_SCHED])
{
	int n = 0, i;

	for (i = 0; i < r->n; i++)
		memcpy(out[n++], r->sched[i], MAX_SCHED);
	for (i = 0; r2 && i < r2->n; i++)
		memcpy(out[n++], r2->sched[i], MAX_SCHED);
	qsort(out, (size_t)n, MAX_SCHED, cmp_str);
	return n;
}

/* Drops repeats from sorted schedules; the number left. */
static int unique(char (*s)[MAX_SCHED], int n)
{
	int i, m = 0;

	for (i = 0; i < n; i++)
		if (m == 0 || strcmp(s[m - 1], s[i]) != 0)
			memmove(s[m++], s[i], MAX_SCHED);
	return m;
}

static char g_sa[MAX_RUNS][MAX_SCHED], g_sb[MAX_RUNS][MAX_SCHED];

/* ------------------------------------------------------------ exhaustive */

/* Two threads of two steps: C(4,2) = 6 schedules, in lexicographic order
 * of the options (A before B). */
Test(strategies, dfs_visits_every_schedule_once_in_order)
{
	static const char *const want[] = {"AABB", "ABAB", "ABBA", "BAAB", "BABA", "BBAA"};
	struct prog p = two_by(2);

	search_runs("dfs", 1, 0, 1, &p, 100, &g_a);
	expect_schedules(&g_a, want, 6, "dfs");
	/* the trace is the option taken among the threads not ended */
	cr_expect_str_eq(g_a.trace[2], "0.1.1.0");
	cr_expect_str_eq(g_a.trace[5], "1.1.0.0");
}

/* bfs: after AABB the queue holds [1] and [0,1]; [1] runs BAAB and queues
 * [1,1], [1,0,1]; [0,1] runs ABAB and queues [0,1,1]; then BBAA, BABA,
 * ABBA. */
Test(strategies, bfs_visits_shorter_prefixes_first)
{
	static const char *const want[] = {"AABB", "BAAB", "ABAB", "BBAA", "BABA", "ABBA"};
	struct prog p = two_by(2);

	search_runs("bfs", 1, 0, 1, &p, 100, &g_a);
	expect_schedules(&g_a, want, 6, "bfs");
}

/* The number of schedules of threads of these lengths (a multinomial), and
 * dfs finds each once, then stops. */
Test(strategies, dfs_covers_the_whole_space_exactly)
{
	struct prog p = {.nthreads = 3, .len = {1, 2, 2}};
	char sched[64][MAX_SCHED];
	int n, i;

	memset(p.var, -1, sizeof(p.var));
	search_runs("dfs", 1, 0, 1, &p, 1000, &g_a);
	cr_assert(g_a.exhausted);
	n = sorted(&g_a, NULL, sched);
	cr_assert_eq(n, 30, "5!/(1! 2! 2!) = 30 schedules, got %d", n);
	for (i = 1; i < n; i++)
		cr_expect_str_neq(sched[i - 1], sched[i], "twice: %s", sched[i]);
	search_runs("bfs", 1, 0, 1, &p, 1000, &g_b);
	cr_assert_eq(sorted(&g_b, NULL, sched), 30);
}

/* cb:0 never preempts: each thread runs to its end.  cb:1: AABB; then
 * the one preemption at the second choice (ABBA); then B first (BBAA) and
 * its preemption (BAAB).  ABAB and BABA need two. */
Test(strategies, cb_bounds_preemptions_and_tries_fewer_first)
{
	static const char *const cb0[] = {"AABB", "BBAA"};
	static const char *const cb1[] = {"AABB", "ABBA", "BBAA", "BAAB"};
	struct prog p = two_by(2);
	int i;

	search_runs("cb:0", 1, 0, 1, &p, 100, &g_a);
	expect_schedules(&g_a, cb0, 2, "cb:0");
	search_runs("cb:1", 1, 0, 1, &p, 100, &g_a);
	expect_schedules(&g_a, cb1, 4, "cb:1");
	/* the trace shows the option taken, not the relative one */
	cr_expect_str_eq(g_a.trace[1], "0.1.1.0");
	search_runs("cb:2", 1, 0, 1, &p, 100, &g_a);
	cr_assert(g_a.exhausted);
	cr_assert_eq(g_a.n, 6);
	p = (struct prog){.nthreads = 3, .len = {3, 3, 2}};
	memset(p.var, -1, sizeof(p.var));
	search_runs("cb:2", 1, 0, 1, &p, MAX_RUNS, &g_a);
	cr_assert(g_a.exhausted);
	for (i = 0; i < g_a.n; i++)
		cr_expect_leq(g_a.preempt[i], 2, "%s", g_a.sched[i]);
}

/* ipb runs the schedules with 0 preemptions (AABB, BBAA), then those with
 * exactly 1 (ABBA, BAAB), then exactly 2 (ABAB, BABA): each bound starts
 * from where the one before left an option out, in the order it did, and
 * runs nothing of the lower bounds again; bound 2 leaves no option out
 * (three preemptions need three steps each), so the search ends there. */
Test(strategies, ipb_runs_each_preemption_bound_in_turn)
{
	static const char *const want[] = {"AABB", "BBAA", "ABBA", "BAAB", "ABAB", "BABA"};
	struct prog p = two_by(2);
	int i;

	search_runs("ipb", 1, 0, 1, &p, 100, &g_a);
	expect_schedules(&g_a, want, 6, "ipb");
	for (i = 0; i < g_a.n; i++)
		cr_expect_eq(g_a.preempt[i], i / 2, "%s", g_a.sched[i]);
}

/* Over three threads, each schedule first shows up in the iteration of its
 * preemptions: first sightings never have fewer than one before them. */
Test(strategies, ipb_meets_schedules_in_order_of_preemptions)
{
	struct prog p = {.nthreads = 3, .len = {2, 2, 1}};
	int i, j, seen = 0, most = 0;

	memset(p.var, -1, sizeof(p.var));
	search_runs("ipb", 1, 0, 1, &p, MAX_RUNS, &g_a);
	cr_assert(g_a.exhausted);
	for (i = 0; i < g_a.n; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(g_a.sched[j], g_a.sched[i]) == 0)
				break;
		if (j < i)
			continue;
		seen++;
		cr_expect_geq(g_a.preempt[i], most, "%s", g_a.sched[i]);
		most = g_a.preempt[i];
	}
	cr_expect_eq(seen, 30, "5!/(2! 2! 1!) = 30 schedules, saw %d", seen);
}

/* Round robin with delays.  Bound 0: the one schedule AABB (A goes on
 * while it can, then B).  Bound 1 adds, without running AABB again: after
 * A, skip A (ABBA: B goes on, then A is next); skip A at the start (BBAA).
 * Bound 2 adds ABAB (skip A, then skip B) and BAAB (skip A, then skip B);
 * bound 3 BABA (skip A, B, A), and leaves nothing out: 1 + 2 + 2 + 1 runs. */
Test(strategies, idb_runs_each_delay_bound_in_turn)
{
	static const char *const want[] = {"AABB", "ABBA", "BBAA", "ABAB", "BAAB", "BABA"};
	struct prog p = two_by(2);

	search_runs("idb", 1, 0, 1, &p, 100, &g_a);
	expect_schedules(&g_a, want, 6, "idb");
}

/* With no delay the scheduler is round robin in id order: a thread that
 * ends hands over to the next id after it, wrapping round (ids 5, 2, 9:
 * the first choice takes the least id, 2, then 5, then 9). */
Test(strategies, idb_without_delays_is_round_robin_by_id)
{
	struct prog p = {.nthreads = 3, .len = {1, 2, 1}, .id = {5, 2, 9}};

	memset(p.var, -1, sizeof(p.var));
	search_runs("idb", 1, 0, 1, &p, 1, &g_a);
	cr_expect_str_eq(g_a.sched[0], "BBAC");
	search_runs("idb", 1, 0, 1, &p, MAX_RUNS, &g_a);
	cr_assert(g_a.exhausted);
	cr_expect_eq(unique(g_sa, sorted(&g_a, NULL, g_sa)), 12, "4!/2! = 12 schedules");
}

/* Three threads over two addresses, each writing one and reading the
 * other (ib has interferences to count). */
static struct prog three_crossing(void)
{
	struct prog p = {.nthreads = 3, .len = {2, 2, 2}};

	memset(p.var, -1, sizeof(p.var));
	p.var[0][0] = p.var[0][1] = p.var[1][0] = 0;
	p.var[1][1] = p.var[2][0] = p.var[2][1] = 1;
	p.kind[0][0] = p.kind[1][1] = p.kind[2][0] = 'w';
	p.kind[0][1] = p.kind[1][0] = p.kind[2][1] = 'r';
	return p;
}

/* (ib runs only the schedules its moves make: tests below.)  An
 * iterative search runs each schedule once over all its bounds (no
 * bound runs a lower one's again), meets them in order of their count, and
 * covers what the exhaustive search does: 6!/(2! 2! 2!) = 90 schedules. */
Test(strategies, iterative_bounds_run_each_schedule_once)
{
	static const char *const iterative[] = {"ipb", "idb"};
	struct prog p = three_crossing();
	size_t i;
	int k, nw;

	search_runs("dfs", 1, 0, 1, &p, MAX_RUNS, &g_b);
	cr_assert(g_b.exhausted);
	nw = unique(g_sb, sorted(&g_b, NULL, g_sb));
	cr_assert_eq(nw, 90);
	for (i = 0; i < sizeof(iterative) / sizeof(iterative[0]); i++) {
		search_runs(iterative[i], 1, 0, 1, &p, MAX_RUNS, &g_a);
		cr_assert(g_a.exhausted);
		cr_expect_eq(g_a.abandoned, 0, "%s", iterative[i]);
		cr_expect_eq(g_a.n, nw, "%s: %d runs for %d schedules", iterative[i], g_a.n, nw);
		cr_expect_eq(unique(g_sa, sorted(&g_a, NULL, g_sa)), g_a.n,
			     "%s ran a schedule twice", iterative[i]);
		for (k = 0; k < nw && k < g_a.n; k++)
			cr_expect_str_eq(g_sa[k], g_sb[k], "%s", iterative[i]);
		for (k = 1; k < g_a.n; k++) {
			if (!strcmp(iterative[i], "ipb"))
				cr_expect_geq(g_a.preempt[k], g_a.preempt[k - 1], "ipb %s",
					      g_a.sched[k]);
		}
	}
}

/* Shards of an iterative search cover the same schedules as the whole,
 * each in one shard. */
Test(strategies, shards_split_the_iterative_bounds)
{
	static const char *const iterative[] = {"ipb", "idb", "ib:16"};
	struct prog p = three_crossing();
	size_t i;
	int sh, nw, np, k;

	for (i = 0; i < sizeof(iterative) / sizeof(iterative[0]); i++) {
		search_runs(iterative[i], 1, 0, 1, &p, MAX_RUNS, &g_a);
		cr_assert(g_a.exhausted);
		nw = unique(g_sa, sorted(&g_a, NULL, g_sa));
		memset(&g_c, 0, sizeof(g_c));
		for (sh = 0; sh < 3; sh++) {
			search_runs(iterative[i], 1, sh, 3, &p, MAX_RUNS, &g_b);
			cr_assert(g_b.exhausted);
			for (k = 0; k < g_b.n; k++)
				memcpy(g_c.sched[g_c.n++], g_b.sched[k], MAX_SCHED);
		}
		cr_expect_eq(g_c.n, g_a.n, "%s: %d runs in shards, %d whole", iterative[i], g_c.n,
			     g_a.n);
		np = unique(g_sb, sorted(&g_c, NULL, g_sb));
		cr_assert_eq(np, nw, "%s: %d in shards, %d whole", iterative[i], np, nw);
		for (k = 0; k < nw; k++)
			cr_expect_str_eq(g_sa[k], g_sb[k], "%s", iterative[i]);
	}
}

/* strategy (ib:K) runs exactly want[0..n-1] over p and ends: round
 * robin first, then runs of one chosen interference each; abandoned
 * moves as many as given. */
static void expect_ib_runs(const char *strategy, const struct prog *p, const char *const *want,
			   int n, int abandoned)
{
	int i;

	search_runs(strategy, 1, 0, 1, p, 100, &g_a);
	expect_schedules(&g_a, want, n, strategy);
	for (i = 0; i < n; i++)
		cr_expect_eq(g_a.chosen[i], i > 0, "%s %s", strategy, g_a.sched[i]);
	cr_expect_eq(g_a.abandoned, abandoned, "%s: %d abandoned", strategy, g_a.abandoned);
}

/* Each thread writes x, then reads it. */
static struct prog write_then_read(void)
{
	struct prog p = two_by(2);

	p.var[0][0] = p.var[0][1] = p.var[1][0] = p.var[1][1] = 0;
	p.kind[0][0] = p.kind[1][0] = 'w';
	p.kind[0][1] = p.kind[1][1] = 'r';
	return p;
}

/* ib:0 is round robin alone: AABB, no read of another thread's write
 * chosen.  Its one move: when A is about to read x, B (whose write
 * interferes with nothing) runs until it has written x, then A reads B's
 * x (ABAB: one chosen interference).  Nothing else is a move: at the
 * start A is about to write, not read (no BAAB, BABA, BBAA), and B's
 * move ends as soon as it wrote (no ABBA).  So ib:1 and ib:16 are the
 * same two runs, and end there. */
Test(strategies, ib_bounds_the_reads_of_another_threads_write)
{
	static const char *const want[] = {"AABB", "ABAB"};
	struct prog p = write_then_read();

	expect_ib_runs("ib:0", &p, want, 1, 0);
	expect_ib_runs("ib:1", &p, want, 2, 0);
	expect_ib_runs("ib:16", &p, want, 2, 0);
}

/* The two kinds of move.  A writes x and y, B reads x: once A has written
 * x, switching to B is a read of A's write (AAB, then ABA).  A reads x, B
 * writes x: before A's read, B runs up to its write, then A reads it (AB,
 * then BA, where A is round robin's again but reads what B wrote because
 * the move ran B first).  If B writes y instead, it ends without writing
 * x: that move is abandoned, and ib:1 is the one run AB. */
Test(strategies, ib_moves_a_value_or_abandons_the_move)
{
	struct prog p = {.nthreads = 2, .len = {2, 1}};

	memset(p.var, -1, sizeof(p.var));
	p.var[0][0] = p.var[1][0] = 0;
	p.var[0][1] = 1;
	p.kind[0][0] = p.kind[0][1] = 'w';
	p.kind[1][0] = 'r';
	expect_ib_runs("ib:1", &p, (const char *const[]){"AAB", "ABA"}, 2, 0);
	p = (struct prog){.nthreads = 2, .len = {1, 1}};
	memset(p.var, -1, sizeof(p.var));
	p.var[0][0] = p.var[1][0] = 0;
	p.kind[0][0] = 'r';
	p.kind[1][0] = 'w';
	expect_ib_runs("ib:1", &p, (const char *const[]){"AB", "BA"}, 2, 0);
	p.var[1][0] = 1; /* B ends without writing x */
	expect_ib_runs("ib:1", &p, (const char *const[]){"AB"}, 1, 1);
}

/* A writes x and y; B's first step makes no access (a thread at its
 * start, or at a lock), its second reads x.  A switch to B is a move if
 * B's first access, a step later, reads another thread's write: after A
 * wrote x (ABBA, one chosen read), not before (the move is abandoned). */
Test(strategies, ib_runs_a_thread_without_an_access_up_to_its_first)
{
	struct prog p = two_by(2);

	p.var[0][0] = p.var[1][1] = 0;
	p.var[0][1] = 1;
	p.kind[0][0] = p.kind[0][1] = 'w';
	p.kind[1][1] = 'r';
	expect_ib_runs("ib:2", &p, (const char *const[]){"AABB", "ABBA"}, 2, 1);
}

/* Three threads of six steps, each writing its own address and reading
 * the next thread's, in turn: 18!/(6! 6! 6!) schedules. */
static struct prog three_in_a_ring(void)
{
	struct prog p = {.nthreads = 3, .len = {6, 6, 6}};
	int t, i;

	for (t = 0; t < 3; t++)
		for (i = 0; i < 6; i++) {
			p.var[t][i] = i % 2 ? (t + 1) % 3 : t;
			p.kind[t][i] = i % 2 ? 'r' : 'w';
		}
	return p;
}

/* Bound 0 is one run however many points the program has; each run of
 * bound k chooses exactly k reads of another thread's write, the bounds
 * in increasing order (ib:1's runs are ib:2's first ones), no schedule
 * twice; bound 1 is at most one move per (choice, other thread) of the
 * round-robin run: six choices with B and C waiting, six with C. */
Test(strategies, ib_runs_exactly_k_chosen_interferences_at_bound_k)
{
	struct prog p = three_in_a_ring();
	int i, n1, count[3] = {0};

	search_runs("ib:0", 1, 0, 1, &p, MAX_RUNS, &g_a);
	expect_schedules(&g_a, (const char *const[]){"AAAAAABBBBBBCCCCCC"}, 1, "ib:0");
	search_runs("ib:1", 1, 0, 1, &p, MAX_RUNS, &g_b);
	cr_assert(g_b.exhausted);
	n1 = g_b.n;
	cr_expect_leq(n1, 1 + 6 * 2 + 6, "%d runs", n1);
	search_runs("ib:2", 1, 0, 1, &p, MAX_RUNS, &g_a);
	cr_assert(g_a.exhausted);
	cr_assert_gt(g_a.n, n1);
	for (i = 0; i < g_a.n; i++) {
		cr_assert_leq(g_a.chosen[i], 2, "%s", g_a.sched[i]);
		cr_expect_eq(g_a.chosen[i],
			     i == 0   ? 0
			     : i < n1 ? 1
				      : 2,
			     "run %d %s", i, g_a.sched[i]);
		count[g_a.chosen[i]]++;
		if (i < n1)
			cr_expect_str_eq(g_a.sched[i], g_b.sched[i], "run %d", i);
	}
	cr_expect_eq(count[0], 1);
	cr_expect_gt(count[1], 0);
	cr_expect_gt(count[2], 0);
	cr_expect_eq(unique(g_sa, sorted(&g_a, NULL, g_sa)), g_a.n, "a schedule ran twice");
	cr_log_info("ib:2 on three_in_a_ring: %d, %d, %d runs; %d abandoned", count[0], count[1],
		    count[2], g_a.abandoned);
}

/* Without access information nothing interferes: ib:K is the one
 * round-robin run, idb's first. */
Test(strategies, ib_without_accesses_is_round_robin)
{
	struct prog p = three_crossing();

	memset(p.kind, 0, sizeof(p.kind));
	search_runs("ib:2", 1, 0, 1, &p, MAX_RUNS, &g_a);
	search_runs("idb", 1, 0, 1, &p, 1, &g_b);
	expect_schedules(&g_a, (const char *const[]){g_b.sched[0]}, 1, "ib:2");
}

/* ------------------------------------------------------------ vb */

/* A's first step touches variable 0, B's variable 1.  Set {0}: AABB; the
 * preemption after A's access (ABBA; B's access to 1 is outside the set,
 * so B goes on); B first (BBAA, forced).  Set {1}: AABB (forced), BBAA,
 * and the preemption after B's access (BAAB). */
Test(strategies, vb_preempts_only_after_accesses_to_its_set)
{
	static const char *const want[] = {"AABB", "ABBA", "BBAA", "AABB", "BBAA", "BAAB"};
	struct prog p = two_by(2);
	int i;

	p.nvars = 2;
	p.var[0][0] = 0;
	p.var[1][0] = 1;
	search_runs("vb:1", 1, 0, 1, &p, 100, &g_a);
	expect_schedules(&g_a, want, 6, "vb:1");
	for (i = 0; i < g_a.n; i++)
		cr_expect_not(g_a.bad_preempt[i], "%s preempts where no variable was touched",
			      g_a.sched[i]);
}

Test(strategies, vb_without_variables_never_preempts)
{
	static const char *const want[] = {"AABB", "BBAA"};
	struct prog p = two_by(2);
	int i;

	search_runs("vb:1", 1, 0, 1, &p, 100, &g_a);
	expect_schedules(&g_a, want, 2, "vb:1 without variables");
	search_runs("vb:2:3", 1, 0, 1, &p, MAX_RUNS, &g_a);
	cr_assert(g_a.exhausted);
	for (i = 0; i < g_a.n; i++)
		cr_expect_eq(g_a.preempt[i], 0, "vb:2:3 run %d: %s", i + 1, g_a.sched[i]);
	cr_expect_eq(unique(g_sa, sorted(&g_a, NULL, g_sa)), 2);
}

/* For two threads and one preemption every permutation of 2 + 1 numbers
 * is used (3! is below the count of Lemma 4.1), so vb:1:2 visits exactly
 * vb:1's schedules, whatever the seed. */
Test(strategies, vb_thread_bounding_covers_the_variable_bounded_schedules)
{
	struct prog p = {.nthreads = 2, .len = {3, 3}, .nvars = 2};
	int na, nb, i, j, seed;

	memset(p.var, -1, sizeof(p.var));
	p.var[0][0] = p.var[1][1] = 0;
	p.var[0][1] = p.var[1][0] = 1;
	search_runs("vb:1", 1, 0, 1, &p, MAX_RUNS, &g_a);
	na = unique(g_sa, sorted(&g_a, NULL, g_sa));
	cr_assert_gt(na, 2);
	for (seed = 1; seed <= 3; seed++) {
		search_runs("vb:1:2", (uint64_t)seed, 0, 1, &p, MAX_RUNS, &g_b);
		cr_assert(g_b.exhausted);
		nb = unique(g_sb, sorted(&g_b, NULL, g_sb));
		cr_assert_eq(nb, na, "seed %d: vb:1:2 %d distinct, vb:1 %d", seed, nb, na);
		for (i = 0; i < na; i++)
			cr_expect_str_eq(g_sa[i], g_sb[i]);
		for (j = 0; j < g_b.n; j++) {
			cr_expect_leq(g_b.preempt[j], 1);
			cr_expect_not(g_b.bad_preempt[j]);
		}
	}
}

/* ------------------------------------------------------------ seeded */

static bool same_runs(const struct runs *a, const struct runs *b)
{
	int i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->sched[i], b->sched[i]) != 0 || strcmp(a->trace[i], b->trace[i]) != 0)
			return false;
	return true;
}

Test(strategies, seeded_strategies_are_reproducible_and_never_run_out)
{
	static const char *const seeded[] = {"random", "pct:1", "pct:3", "pctvb:2:1", "pctvb:3:2"};
	struct prog p = {.nthreads = 3, .len = {3, 2, 3}, .nvars = 2};
	size_t i;

	memset(p.var, -1, sizeof(p.var));
	p.var[0][1] = p.var[2][0] = 0;
	p.var[1][0] = p.var[2][2] = 1;
	for (i = 0; i < sizeof(seeded) / sizeof(seeded[0]); i++) {
		search_runs(seeded[i], 5, 0, 1, &p, 200, &g_a);
		search_runs(seeded[i], 5, 0, 1, &p, 200, &g_b);
		search_runs(seeded[i], 6, 0, 1, &p, 200, &g_c);
		cr_assert(!g_a.exhausted && g_a.n == 200, "%s ran out", seeded[i]);
		cr_expect(same_runs(&g_a, &g_b), "%s: seed 5 twice differs", seeded[i]);
		cr_expect_not(same_runs(&g_a, &g_c), "%s: seeds 5 and 6 agree", seeded[i]);
	}
}

/* 200 uniform runs over 6 schedules miss one with probability below
 * 6 (5/6)^200 < 1e-15; the seed makes it certain either way. */
Test(strategies, random_reaches_every_schedule)
{
	struct prog p = two_by(2);

	search_runs("random", 1, 0, 1, &p, 200, &g_a);
	cr_expect_eq(unique(g_sa, sorted(&g_a, NULL, g_sa)), 6);
}

/* PCT: D-1 priority changes allow at most D-1 preemptions; pct:1 runs each
 * thread to its end in priority order, and both orders occur. */
Test(strategies, pct_preempts_at_most_depth_minus_one_times)
{
	struct prog p = {.nthreads = 3, .len = {4, 4, 4}};
	char name[16];
	int d, i;

	memset(p.var, -1, sizeof(p.var));
	for (d = 1; d <= 4; d++) {
		snprintf(name, sizeof(name), "pct:%d", d);
		search_runs(name, 3, 0, 1, &p, 300, &g_a);
		for (i = 0; i < g_a.n; i++)
			cr_expect_leq(g_a.preempt[i], d - 1, "pct:%d run %d: %s", d, i + 1,
				      g_a.sched[i]);
		if (d == 1)
			cr_expect_eq(unique(g_sa, sorted(&g_a, NULL, g_sa)), 6,
				     "pct:1: one schedule per order of 3 threads");
		else
			cr_expect_gt(unique(g_sa, sorted(&g_a, NULL, g_sa)), 6,
				     "pct:%d never preempted", d);
	}
}

/* pctvb changes priorities only at accesses to its set's variables, and
 * its first run only profiles. */
Test(strategies, pctvb_preempts_only_after_watched_accesses)
{
	struct prog p = {.nthreads = 2, .len = {4, 4}, .nvars = 3};
	int i, preempted = 0;

	memset(p.var, -1, sizeof(p.var));
	p.var[0][1] = p.var[1][2] = 0;
	p.var[0][2] = 1;
	p.var[1][0] = 2;
	search_runs("pctvb:3:1", 9, 0, 1, &p, 300, &g_a);
	cr_expect_eq(g_a.preempt[0], 0, "the profiling run preempted: %s", g_a.sched[0]);
	for (i = 0; i < g_a.n; i++) {
		cr_expect_not(g_a.bad_preempt[i], "run %d: %s", i + 1, g_a.sched[i]);
		cr_expect_leq(g_a.preempt[i], 2);
		preempted += g_a.preempt[i] > 0;
	}
	cr_expect_gt(preempted, 0);
}

/* ------------------------------------------------------------ shards */

/* The runs of 2, 3 and 4 shards of an exhaustive strategy are the whole
 * search's runs (as a multiset: vb:V:T may visit a schedule once per
 * permutation). */
static void expect_shards_add_up(const char *strategy, const struct prog *p)
{
	int nshards, sh, nw, np, k;

	for (nshards = 2; nshards <= 4; nshards++) {
		search_runs(strategy, 1, 0, 1, p, MAX_RUNS, &g_a);
		cr_assert(g_a.exhausted);
		nw = sorted(&g_a, NULL, g_sa);
		memset(&g_c, 0, sizeof(g_c));
		for (sh = 0; sh < nshards; sh++) {
			search_runs(strategy, 1, sh, nshards, p, MAX_RUNS, &g_b);
			cr_assert(g_b.exhausted);
			for (k = 0; k < g_b.n; k++)
				memcpy(g_c.sched[g_c.n++], g_b.sched[k], MAX_SCHED);
		}
		np = sorted(&g_c, NULL, g_sb);
		cr_assert_eq(np, nw, "%s in %d shards: %d runs, whole %d", strategy, nshards, np,
			     nw);
		for (k = 0; k < nw; k++)
			cr_expect_str_eq(g_sa[k], g_sb[k], "%s in %d shards", strategy, nshards);
	}
}

Test(strategies, shards_split_the_exhaustive_space_exactly)
{
	static const char *const exhaustive[] = {"dfs", "bfs", "cb:1", "vb:1", "vb:2"};
	struct prog p = {.nthreads = 3, .len = {2, 2, 1}, .nvars = 2};
	size_t i;

	memset(p.var, -1, sizeof(p.var));
	p.var[0][0] = p.var[2][0] = 0;
	p.var[1][0] = 1;
	for (i = 0; i < sizeof(exhaustive) / sizeof(exhaustive[0]); i++)
		expect_shards_add_up(exhaustive[i], &p);
}

/* vb:V:T shards split each set's permutations.  With two threads the
 * permutations are over the threads from the start; with more, a shard
 * that meets a third thread starts the set over at its own point, so
 * shards and the whole search no longer agree run for run (see
 * search/tbound.c). */
Test(strategies, thread_bounding_shards_split_the_permutations_exactly)
{
	struct prog p = {.nthreads = 2, .len = {3, 2}, .nvars = 2};

	memset(p.var, -1, sizeof(p.var));
	p.var[0][0] = p.var[1][1] = 0;
	p.var[0][1] = p.var[1][0] = 1;
	expect_shards_add_up("vb:1:2", &p);
	expect_shards_add_up("vb:2:2", &p);
}

/* Seeded strategies: run r of shard i of N draws from the seed of run
 * r N + i of the whole search.  For random and pct:1 (no change points)
 * that is the same run; pct:D and pctvb also learn from the runs before,
 * and a shard learns from its own. */
Test(strategies, shards_split_the_seeded_runs_exactly)
{
	static const char *const seeded[] = {"random", "pct:1"};
	struct prog p = {.nthreads = 3, .len = {3, 3, 2}, .nvars = 1};
	size_t i;
	int sh, r;

	memset(p.var, -1, sizeof(p.var));
	p.var[0][1] = p.var[1][1] = 0;
	for (i = 0; i < sizeof(seeded) / sizeof(seeded[0]); i++) {
		search_runs(seeded[i], 11, 0, 1, &p, 90, &g_a);
		for (sh = 0; sh < 3; sh++) {
			search_runs(seeded[i], 11, sh, 3, &p, 30, &g_b);
			for (r = 0; r < 30; r++)
				cr_expect_str_eq(g_b.sched[r], g_a.sched[r * 3 + sh],
						 "%s shard %d/3 run %d", seeded[i], sh + 1, r + 1);
		}
	}
}

/* A shard beyond the options of the first choice has nothing to do. */
Test(strategies, a_shard_with_no_option_abandons_its_run)
{
	struct prog p = two_by(1);

	search_runs("dfs", 1, 2, 3, &p, 10, &g_a);
	cr_expect_eq(g_a.n, 0);
	cr_expect_eq(g_a.abandoned, 1);
	cr_expect(g_a.exhausted);
}

/* ------------------------------------------------------------ values */

/* Three choices of two values each: every run's product of options is 8,
 * so Knuth's estimate is exactly 8 for any strategy; dfs counts in binary. */
Test(strategies, value_choices_and_the_space_estimate)
{
	static const char *const all[] = {"dfs",  "bfs",  "random", "pct:2",
					  "cb:1", "vb:1", "vb:1:2", "pctvb:2:1"};
	static const char *const binary[] = {"0.0.0", "0.0.1", "0.1.0", "0.1.1",
					     "1.0.0", "1.0.1", "1.1.0", "1.1.1"};
	char trace[64];
	size_t i;
	int run, j;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct search *s = make(all[i], 1, 0, 1, 0);

		for (run = 0; run < 8; run++) {
			for (j = 0; j < 3; j++)
				cr_assert_lt(
				    search_choose(s, &(struct search_point){2, NULL, -1, -1}), 2);
			search_trace(s, trace, sizeof(trace));
			if (strcmp(all[i], "dfs") == 0)
				cr_expect_str_eq(trace, binary[run]);
			cr_expect_not(search_diverged(s));
			if (!search_next_run(s))
				break;
		}
		cr_expect_eq(search_space_estimate(s), 8.0, "%s", all[i]);
		search_free(s);
	}
}

/* A replayed choice point with fewer options than before is divergence,
 * and the search keeps a valid option. */
Test(strategies, a_run_with_fewer_options_diverged)
{
	struct search *s = make("dfs", 1, 0, 1, 0);
	int k;

	cr_assert_eq(search_choose(s, &(struct search_point){3, NULL, -1, -1}), 0);
	cr_assert(search_next_run(s));
	cr_assert_eq(search_choose(s, &(struct search_point){3, NULL, -1, -1}), 1);
	cr_assert(search_next_run(s));
	k = search_choose(s, &(struct search_point){2, NULL, -1, -1}); /* was 3 */
	cr_expect_eq(k, 1, "option 2 of 3 becomes the last of 2");
	cr_expect(search_diverged(s));
	search_free(s);
}

/* ------------------------------------------------------------ limits */

/* Thread ids are any non-negative numbers (PCT kept 256 priorities and
 * folded larger ids onto smaller ones). */
Test(strategies, large_thread_ids_keep_their_own_priorities)
{
	struct prog p = {.nthreads = 3, .len = {3, 3, 3}, .id = {1000, 1256, 5000}};
	int i;

	memset(p.var, -1, sizeof(p.var));
	search_runs("pct:1", 4, 0, 1, &p, 200, &g_a);
	for (i = 0; i < g_a.n; i++)
		cr_expect_eq(g_a.preempt[i], 0, "ids 1000 and 1256 shared a priority: %s",
			     g_a.sched[i]);
	cr_expect_eq(unique(g_sa, sorted(&g_a, NULL, g_sa)), 6);
	search_runs("vb:1:2", 4, 0, 1, &p, MAX_RUNS, &g_a);
	cr_expect(g_a.exhausted);
}

/* 80 threads: more than the 64 vb:V:T's permutations were over. */
Test(strategies, thread_bounding_over_many_threads)
{
	struct prog p = {.nthreads = 80, .nvars = 1};
	int t, i;

	memset(p.var, -1, sizeof(p.var));
	for (t = 0; t < p.nthreads; t++) {
		p.len[t] = 1;
		p.var[t][0] = 0;
	}
	search_runs("vb:1:2", 1, 0, 1, &p, 50, &g_a);
	search_runs("vb:1:2", 1, 0, 1, &p, 50, &g_b);
	cr_assert_gt(g_a.n, 1);
	cr_expect(same_runs(&g_a, &g_b));
	for (i = 0; i < g_a.n; i++)
		cr_expect_eq((int)strlen(g_a.sched[i]), 80);
}

/* 70 watched variables (the sets were one 64-bit word): only an access to
 * variable 69 allows a preemption, and vb:1 reaches it in the last set,
 * {69}; vb:2 in every set that holds it. */
Test(strategies, more_than_64_variables)
{
	static const char *const last[] = {"AABB", "ABBA", "BBAA"};
	struct prog p = two_by(2);
	int i, n1, n2;

	p.nvars = 70;
	p.var[0][0] = 69;
	search_runs("vb:1", 1, 0, 1, &p, MAX_RUNS, &g_a);
	cr_assert(g_a.exhausted);
	n1 = 2 * 69 + 3;
	cr_assert_eq(g_a.n, n1, "%d runs", g_a.n);
	for (i = 0; i < 3; i++)
		cr_expect_str_eq(g_a.sched[n1 - 3 + i], last[i]);
	for (i = 0; i < n1 - 3; i++)
		cr_expect_eq(g_a.preempt[i], 0, "run %d: %s", i + 1, g_a.sched[i]);
	search_runs("vb:2", 1, 0, 1, &p, MAX_RUNS, &g_a);
	cr_assert(g_a.exhausted);
	n2 = n1 + 2 * (70 * 69 / 2) + 69; /* 69 pairs hold variable 69 */
	cr_expect_eq(g_a.n, n2, "%d runs, expected %d", g_a.n, n2);
	search_runs("pctvb:2:3", 1, 0, 1, &p, 100, &g_a);
	cr_expect_eq(g_a.n, 100);
}

/* A choice among 4096 values (the language's most) under PCT, whose
 * options count as ids 0 .. n-1. */
Test(strategies, many_values_under_pct)
{
	struct search *s = make("pct:3", 1, 0, 1, 0);
	int run, k;

	for (run = 0; run < 20; run++) {
		k = search_choose(s, &(struct search_point){4096, NULL, -1, -1});
		cr_assert(k >= 0 && k < 4096);
		search_next_run(s);
	}
	search_free(s);
}

/* A trace longer than the buffer stops at a whole number and says how
 * long it is. */
Test(strategies, a_long_trace_is_cut_at_a_whole_choice)
{
	struct search *s = make("dfs", 1, 0, 1, 0);
	char buf[16];
	size_t need;
	int i;

	for (i = 0; i < 1000; i++)
		search_choose(s, &(struct search_point){11, NULL, -1, -1});
	need = search_trace(s, buf, sizeof(buf));
	cr_expect_eq(need, 1999, "1000 zeros and 999 dots");
	cr_expect_str_eq(buf, "0.0.0.0.0.0.0.0");
	search_free(s);
}

/* ------------------------------------------------------------ parsing */

Test(strategies, names_parameters_and_errors)
{
	static const struct {
		const char *text, *name;
	} good[] = {{"dfs", "dfs"},	    {"bfs", "bfs"},	      {"random", "random"},
		    {"pct:3", "pct:3"},	    {"cb:0", "cb:0"},	      {"vb:1", "vb:1"},
		    {"vb:2:3", "vb:2:3"},   {"pctvb:2", "pctvb:2:1"}, {"pctvb:3:2", "pctvb:3:2"},
		    {"pct:16", "pct:16"},   {"ipb", "ipb"},	      {"idb", "idb"},
		    {"pct:3:1", "pct:3:1"}, {"pct:2:0", "pct:2"},     {"random:3", "random:3"}};
	static const struct {
		const char *text, *message;
	} bad[] = {
	    {"pct:17", "strategy 'pct:17' needs a depth from 1 to 16, e.g. pct:3 (pct:3:1: "
		       "children below their creator)"},
	    {"pct", "strategy 'pct' needs a depth from 1 to 16, e.g. pct:3 (pct:3:1: children "
		    "below their creator)"},
	    {"pct:3:1:1", "strategy 'pct:3:1:1' needs a depth from 1 to 16, e.g. pct:3 (pct:3:1: "
			  "children below their creator)"},
	    {"pct:3:9", "strategy 'pct:3:9' needs a depth from 1 to 16, e.g. pct:3 (pct:3:1: "
			"children below their creator)"},
	    {"random:7", "strategy 'random:7' takes no parameter, or 1 (children wait for their "
			 "creator), 2 (a draw by kind) or 3 (both)"},
	    {"dfs:1", "strategy 'dfs:1' takes no parameter"},
	    {"vb:1:1", "strategy 'vb:1:1' needs V from 1 to 16 and an optional thread bound T "
		       "from 2 to 16, e.g. vb:1 or vb:1:2"},
	    {"cb:-1", "strategy 'cb:-1' needs a bound from 0 to 16, e.g. cb:2"},
	    {"pctvb:2:0",
	     "strategy 'pctvb:2:0' needs a depth D and a number of variables V (default 1), "
	     "each from 1 to 16, e.g. pctvb:2:1"},
	    {"nope", "unknown strategy 'nope': use dfs, bfs, random[:C], pct:D[:C], cb:N, "
		     "vb:V[:T], pctvb:D[:V], ipb, idb or ib:K"},
	};
	struct search_config cfg;
	char err[256], name[32];
	size_t i;
	int n;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		cr_assert_eq(search_parse(good[i].text, &cfg, err, sizeof(err)), 0, "%s: %s",
			     good[i].text, err);
		cr_expect_str_eq(search_name(&cfg, name, sizeof(name)), good[i].name);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(search_parse(bad[i].text, &cfg, err, sizeof(err)), -1, "%s",
			     bad[i].text);
		cr_expect_str_eq(err, bad[i].message);
	}
	for (n = 0; search_strategy(n); n++)
		;
	cr_expect_eq(n, 10);
}
