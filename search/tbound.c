/*
 * tbound.c: the thread-bounding permutations of vb:V:T (004, section 4).
 *
 * For each variable set S, whose search allows c = V preemptions, the
 * search draws permutations P of tb_n + c numbers: thread j runs at
 * priority P_j, and the i-th preemption gives the preempted thread
 * P_{tb_n+i}.  About (T+c+1)! ln(tb_n+c) permutations per set cover every
 * ordering of T threads with high probability (Lemma 4.1); when (tb_n+c)!
 * is smaller, all of them are used.  tb_n is the number of threads seen so
 * far (at least 2); a set started before more threads showed up starts
 * over with the larger count.
 *
 * Permutations are drawn by Fisher-Yates without repeats (each one's hash
 * is remembered for the set) from a generator seeded by --seed and the
 * set, so a search is reproducible.  Shards split a set's permutations:
 * permutation p belongs to shard p mod N; every shard draws them all, so
 * that they agree on what p is.
 *
 * Thread ids have no limit: a thread beyond the permutation's tb_n runs
 * below every permuted one (priority -1 - id), until a set starts over.
 */
#include "search/internal.h"

#include <math.h>
#include <stdlib.h>

#define MAX_DRAWS                                                                                  \
	100000 /* tries for an unused permutation; a repeat costs                                  \
		* runs, not correctness */

struct tbound {
	uint64_t seed, rng;
	int c, thread_bound;
	int tb_n;    /* threads the permutations are over */
	int tb_seen; /* 1 + the largest thread id seen so far */
	int *rank;   /* [tb_n + c]: the permutation */
	int nrank;
	long perm;	/* index of the current permutation in this set */
	uint64_t *used; /* hashes of the permutations drawn for this set */
	long nused, capused;
	struct priorities prio; /* PRIO_UNSET: the permutation's own */
};

struct tbound *tbound_new(uint64_t seed, int preemptions, int thread_bound)
{
	struct tbound *b = calloc(1, sizeof(*b));

	assert(preemptions >= 0 && thread_bound >= 2);
	if (!b)
		return NULL;
	b->seed = seed;
	b->c = preemptions;
	b->thread_bound = thread_bound;
	return b;
}

void tbound_free(struct tbound *b)
{
	if (!b)
		return;
	free(b->rank);
	free(b->used);
	prio_free(&b->prio);
	free(b);
}

static long permutations(const struct tbound *b)
{
	int m = b->tb_n + b->c, i;
	double all = 1, enough = log((double)(b->tb_n + b->c));

	for (i = 2; i <= m; i++)
		all *= i;
	for (i = 2; i <= b->thread_bound + b->c + 1; i++)
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

static bool used(const struct tbound *b, uint64_t h)
{
	long i;

	for (i = 0; i < b->nused; i++)
		if (b->used[i] == h)
			return true;
	return false;
}

static void remember(struct tbound *b, uint64_t h)
{
	if (b->nused == b->capused) {
		long cap = b->capused ? b->capused * 2 : 64;
		uint64_t *grown = realloc(b->used, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return; /* a repeat costs runs, not correctness */
		b->used = grown;
		b->capused = cap;
	}
	b->used[b->nused++] = h;
}

static void shuffle(struct tbound *b, int m)
{
	int i;

	for (i = 0; i < m; i++)
		b->rank[i] = i;
	for (i = m - 1; i > 0; i--) {
		int j = rng_below(&b->rng, i + 1), t = b->rank[i];

		b->rank[i] = b->rank[j];
		b->rank[j] = t;
	}
}

/* Fisher-Yates until a permutation not used yet for this set; -1 when out
 * of memory. */
static int draw_permutation(struct tbound *b)
{
	int m = b->tb_n + b->c, tries;

	if (m > b->nrank) {
		int *grown = realloc(b->rank, sizeof(*grown) * (size_t)m);

		if (!grown)
			return -1;
		b->rank = grown;
		b->nrank = m;
	}
	for (tries = 0; tries < MAX_DRAWS; tries++) {
		shuffle(b, m);
		if (!used(b, hash_ranks(b->rank, m)))
			break;
	}
	remember(b, hash_ranks(b->rank, m));
	return 0;
}

static bool advance(struct tbound *b)
{
	if (b->perm + 1 >= permutations(b))
		return false;
	b->perm++;
	return draw_permutation(b) == 0;
}

static bool mine(const struct tbound *b, const struct search *s)
{
	return b->perm % s->cfg.nshards == s->cfg.shard;
}

static int start_set(struct tbound *b, uint64_t set_key)
{
	b->tb_n = b->tb_seen > 2 ? b->tb_seen : 2;
	b->perm = 0;
	b->nused = 0;
	b->rng = b->seed ^ (set_key * 0xd1b54a32d192ed03ull);
	return draw_permutation(b);
}

/* From the current permutation on, the first that is this shard's. */
static bool find_mine(struct tbound *b, const struct search *s)
{
	while (!mine(b, s))
		if (!advance(b))
			return false;
	return true;
}

bool tbound_first(struct tbound *b, const struct search *s, uint64_t set_key)
{
	if (start_set(b, set_key) < 0)
		return false;
	return find_mine(b, s);
}

bool tbound_next(struct tbound *b, const struct search *s, uint64_t set_key)
{
	if (b->tb_seen > b->tb_n) { /* more threads than assumed: start the set over */
		long done = b->perm + 1;

		if (start_set(b, set_key) < 0)
			return false;
		b->perm = done;
	} else if (!advance(b)) {
		return false;
	}
	return find_mine(b, s);
}

void tbound_start_run(struct tbound *b)
{
	prio_reset(&b->prio);
}

/* Thread id's priority: set by a preemption this run, or the
 * permutation's. */
static int priority_of(struct tbound *b, int id, int *out)
{
	int *slot = prio_slot(&b->prio, id);

	if (!slot)
		return -1;
	if (*slot != PRIO_UNSET)
		*out = *slot;
	else
		*out = id < b->tb_n ? b->rank[id] : -1 - id;
	return 0;
}

int tbound_highest(struct tbound *b, const struct search_point *p, int lowered, int nth)
{
	int i, best = 0, best_prio = 0;

	assert(p->ids && b->rank);
	assert(lowered < 0 || (nth >= 0 && nth < b->c));
	for (i = 0; i < p->n; i++) {
		int id = p->ids[i], prio;

		if (id == lowered)
			prio = b->rank[b->tb_n + nth];
		else if (priority_of(b, id, &prio) < 0)
			return -1;
		if (id + 1 > b->tb_seen)
			b->tb_seen = id + 1;
		if (i == 0 || prio > best_prio) {
			best = i;
			best_prio = prio;
		}
	}
	return best;
}

int tbound_preempt(struct tbound *b, int id, int nth)
{
	int *slot = prio_slot(&b->prio, id);

	assert(nth >= 0 && nth < b->c);
	if (!slot)
		return -1;
	*slot = b->rank[b->tb_n + nth];
	return 0;
}
