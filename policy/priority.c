/*
 * priority.c: the priority schedulers behind the oracle (004).
 *
 * pct:D     PCT (Burckhardt et al., as 004 section 3 restates it): random
 *           thread priorities above D, and D-1 change points drawn among
 *           the choice points of a run (their number learnt from the runs
 *           so far); at change point i the thread that would run drops to
 *           priority i.  The highest-priority option always runs.
 * pctvb:D:V PCT with variable bounding (004, section 3, "PCTVB"): each run
 *           first draws a set S of V watched variables, then its D-1 change
 *           points among the pairs (q, j), q in S, j up to k_q, where k_q is
 *           the most choice points after an access to q seen in any run so
 *           far (the paper's profiling runs are simply the first runs).  At
 *           the j-th access to q the thread that made it drops to priority
 *           i.  Choice points after other accesses never change priorities.
 * vb:V:T    the thread-bounding permutations of 004 section 4 for the
 *           variable-bounded search: for each variable set S (c = |S|
 *           preemptions), permutations P of tb_n + c numbers; thread j runs
 *           at priority P_j, and the i-th preemption gives the preempted
 *           thread P_{tb_n+i}.  About (T+c+1)! ln(tb_n+c) permutations per
 *           set cover every ordering of T threads with high probability
 *           (Lemma 4.1); when (tb_n+c)! is smaller, all of them are used.
 *           Permutations are drawn without repeats from a generator seeded
 *           by --seed and the set, so a search is reproducible.
 * Every draw comes from one splitmix64 stream per run (pct, pctvb) or per
 * variable set (vb:V:T).
 */
#include "policy/oracle_state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t oracle_random(struct oracle *o)
{
	/* splitmix64: small, fast, good enough for schedules */
	uint64_t z = (o->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int oracle_below(struct oracle *o, int n)
{
	return (int)(oracle_random(o) % (uint64_t)n);
}

bool oracle_var_in_subset(const struct oracle *o, uint64_t subset, int var)
{
	(void)o;
	return var >= 0 && var < MAX_VARS && (subset >> var & 1);
}

/* The default priority of identity j: pct and pctvb draw one at first
 * sight (0 means not drawn yet); vb:V:T's come from the permutation, and
 * threads beyond it rank below all of it. */
static int default_prio(const struct oracle *o, int j)
{
	if (o->cfg.kind == STRAT_VB && o->cfg.param2)
		return j < o->tb_n ? o->tb_rank[j] : -1 - j;
	return 0;
}

/* Option identities have no fixed bound (thread variables, a choose of up
 * to 4096 values): the table grows to hold id. */
static int *prio_slot(struct oracle *o, int id)
{
	if (id < 0)
		return &o->prio_spare;
	if (id >= o->prio_cap) {
		int cap = o->prio_cap ? o->prio_cap : 64;
		int *grown;

		while (cap <= id)
			cap *= 2;
		grown = realloc(o->prio, sizeof(*grown) * (size_t)cap);
		if (!grown) /* a lost priority costs the strategy its odds, not correctness */
			return &o->prio_spare;
		o->prio = grown;
		o->prio_cap = cap;
	}
	for (; o->nprio <= id; o->nprio++)
		o->prio[o->nprio] = default_prio(o, o->nprio);
	return &o->prio[id];
}

/* --- pct --- */

static int *prio_of(struct oracle *o, const int *ids, int i)
{
	int *p = prio_slot(o, ids ? ids[i] : i);

	if (!*p) /* first sight: a random priority above every change point */
		*p = o->cfg.param + 1 + oracle_below(o, 1 << 20);
	return p;
}

static int highest(struct oracle *o, int n, const int *ids)
{
	int i, best = 0;

	for (i = 1; i < n; i++)
		if (*prio_of(o, ids, i) > *prio_of(o, ids, best))
			best = i;
	return best;
}

static int nchanges(const struct oracle *o)
{
	return o->cfg.param - 1 < MAX_CHANGES ? o->cfg.param - 1 : MAX_CHANGES;
}

void pct_plan(struct oracle *o)
{
	int i, points = o->max_points > 0 ? o->max_points : 1;

	o->nprio = 0;
	o->nchange = nchanges(o);
	for (i = 0; i < o->nchange; i++)
		o->change[i] = 1 + oracle_below(o, points);
}

int pct_choose(struct oracle *o, int n, const int *ids)
{
	int i, point = o->index + 1;

	for (i = 0; i < o->nchange; i++)
		if (o->change[i] == point) /* the thread that would run drops low */
			*prio_of(o, ids, highest(o, n, ids)) = i + 1;
	return highest(o, n, ids);
}

/* --- pctvb --- */

/* V of the nvars variables, uniformly (all of them if there are fewer). */
static uint64_t draw_subset(struct oracle *o)
{
	int want = o->cfg.param2 < o->nvars ? o->cfg.param2 : o->nvars, left = o->nvars, i;
	uint64_t s = 0;

	for (i = 0; i < o->nvars && want > 0; i++, left--)
		if (oracle_below(o, left) < want) { /* selection sampling */
			s |= 1ull << i;
			want--;
		}
	return s;
}

void pctvb_plan(struct oracle *o)
{
	int i, q, k = 0;

	o->nprio = 0;
	memset(o->acc_run, 0, sizeof(o->acc_run));
	o->subset = draw_subset(o);
	for (q = 0; q < o->nvars; q++)
		if (oracle_var_in_subset(o, o->subset, q))
			k += o->acc_max[q];
	/* Before any access was seen there is nowhere to change priorities:
	 * the run only profiles. */
	o->nchange = k ? nchanges(o) : 0;
	for (i = 0; i < o->nchange; i++) {
		int e = oracle_below(o, k);

		for (q = 0; q < o->nvars; q++) {
			if (!oracle_var_in_subset(o, o->subset, q))
				continue;
			if (e < o->acc_max[q])
				break;
			e -= o->acc_max[q];
		}
		o->change_var[i] = q;
		o->change[i] = e + 1; /* the (e+1)-th access to q */
	}
}

int pctvb_choose(struct oracle *o, int n, const int *ids, int current, int current_var)
{
	int i;

	if (current_var >= 0 && current_var < MAX_VARS) {
		int nth = ++o->acc_run[current_var];

		for (i = 0; i < o->nchange && current >= 0; i++)
			if (o->change_var[i] == current_var && o->change[i] == nth) {
				*prio_of(o, NULL, current) = i + 1;
			}
	}
	return highest(o, n, ids);
}

void pctvb_learn(struct oracle *o)
{
	int q;

	for (q = 0; q < MAX_VARS; q++)
		if (o->acc_run[q] > o->acc_max[q])
			o->acc_max[q] = o->acc_run[q];
}

/* --- vb:V:T thread bounding --- */

/* vb's preemption bound, one priority each */
static int preemptions_of_set(const struct oracle *o)
{
	return o->cfg.param;
}

long tb_permutations(const struct oracle *o)
{
	int c = preemptions_of_set(o), m = o->tb_n + c, i;
	double all = 1, enough = log((double)(o->tb_n + c));

	for (i = 2; i <= m; i++)
		all *= i;
	for (i = 2; i <= o->cfg.param2 + c + 1; i++)
		enough *= i;
	enough = ceil(enough);
	if (enough > all)
		enough = all;
	return enough > 1e9 ? 1000000000L : (long)enough;
}

static uint64_t hash_ranks(const int *rank, int m)
{
	uint64_t h = 1469598103934665603ull;
	int i;

	for (i = 0; i < m; i++)
		h = (h ^ (uint64_t)rank[i]) * 1099511628211ull;
	return h;
}

static bool used(const struct oracle *o, uint64_t h)
{
	long i;

	for (i = 0; i < o->tb_nused; i++)
		if (o->tb_used[i] == h)
			return true;
	return false;
}

static void remember(struct oracle *o, uint64_t h)
{
	if (o->tb_nused == o->tb_capused) {
		long cap = o->tb_capused ? o->tb_capused * 2 : 64;
		uint64_t *grown = realloc(o->tb_used, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return; /* a repeat costs runs, not correctness */
		o->tb_used = grown;
		o->tb_capused = cap;
	}
	o->tb_used[o->tb_nused++] = h;
}

/* Fisher-Yates until a permutation not used yet for this set. */
static void draw_permutation(struct oracle *o)
{
	int m = o->tb_n + preemptions_of_set(o), i, tries;

	if (m > o->tb_rank_cap)
		return; /* start_set could not make room: abandoned */
	for (tries = 0; tries < 100000; tries++) {
		for (i = 0; i < m; i++)
			o->tb_rank[i] = i;
		for (i = m - 1; i > 0; i--) {
			int j = oracle_below(o, i + 1), t = o->tb_rank[i];

			o->tb_rank[i] = o->tb_rank[j];
			o->tb_rank[j] = t;
		}
		if (!used(o, hash_ranks(o->tb_rank, m)))
			break;
	}
	remember(o, hash_ranks(o->tb_rank, m));
}

static bool advance(struct oracle *o)
{
	if (o->tb_perm + 1 >= tb_permutations(o))
		return false;
	o->tb_perm++;
	draw_permutation(o);
	return true;
}

/* Shards split a set's permutations: permutation p is shard p mod N's.
 * Every shard draws them all, so that they agree on what p is. */
static bool mine(const struct oracle *o)
{
	return o->tb_perm % o->cfg.nshards == o->cfg.shard;
}

static void start_set(struct oracle *o)
{
	int m;

	o->tb_n = o->tb_seen > 2 ? o->tb_seen : 2;
	m = o->tb_n + preemptions_of_set(o);
	if (m > o->tb_rank_cap) {
		int *grown = realloc(o->tb_rank, sizeof(*grown) * (size_t)m);

		if (!grown) { /* out of memory: the runs stop, as for a trace */
			o->abandoned = true;
			return;
		}
		o->tb_rank = grown;
		o->tb_rank_cap = m;
	}
	o->tb_perm = 0;
	o->tb_nused = 0;
	o->rng = o->cfg.seed ^ (o->subset * 0xd1b54a32d192ed03ull);
	draw_permutation(o);
}

bool tb_first_permutation(struct oracle *o)
{
	start_set(o);
	if (o->abandoned)
		return false;
	while (!mine(o))
		if (!advance(o))
			return false;
	return true;
}

bool tb_next_permutation(struct oracle *o)
{
	if (o->tb_seen > o->tb_n) { /* more threads than assumed: start the set over */
		long done = o->tb_perm + 1;

		start_set(o);
		if (o->abandoned)
			return false;
		o->tb_perm = done;
	} else if (!advance(o)) {
		return false;
	}
	while (!mine(o))
		if (!advance(o))
			return false;
	return true;
}

void tb_start_run(struct oracle *o)
{
	o->nprio = 0; /* every slot back to the permutation's */
}

int tb_highest(struct oracle *o, int n, const int *ids, int lowered, int nth)
{
	int i, best = 0, best_prio = 0;

	for (i = 0; i < n; i++) {
		int id = ids ? ids[i] : i;
		int p = id == lowered ? o->tb_rank[o->tb_n + nth] : *prio_slot(o, id);

		if (ids && ids[i] + 1 > o->tb_seen)
			o->tb_seen = ids[i] + 1;
		if (i == 0 || p > best_prio) {
			best = i;
			best_prio = p;
		}
	}
	return best;
}

void tb_preempt(struct oracle *o, int id, int nth)
{
	*prio_slot(o, id) = o->tb_rank[o->tb_n + nth];
}
