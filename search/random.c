/*
 * random.c: uniform random choices.
 *
 * Every choice is drawn uniformly from a generator seeded per run (rng.c):
 * run r of shard i of N uses seed + (r N + i) times the golden ratio, so a
 * run is reproducible from --seed and its number, shards draw disjoint
 * runs, and nothing is replayed.  The search never runs out.
 */
#include "search/internal.h"

#include <stdlib.h>

struct random {
	uint64_t rng;
	bool children_wait; /* random:1 (and 3) */
	bool by_kind;	    /* random:2 (and 3) */
	/* by thread id: the creator a fresh child waits for (-1: none), and
	 * whether the id was seen this run */
	int *creator;
	bool *seen;
	int nids;
	int *eligible; /* [nids]: options that may be drawn */
};

static int random_init(struct search *s)
{
	struct random *r = calloc(1, sizeof(struct random));

	s->state = r;
	if (!r)
		return -1;
	r->children_wait = (s->cfg.param[0] & 1) != 0;
	r->by_kind = (s->cfg.param[0] & 2) != 0;
	return 0;
}

static void random_fini(struct search *s)
{
	struct random *r = search_state(s);

	if (!r)
		return;
	free(r->creator);
	free(r->seen);
	free(r->eligible);
	free(r);
}

static void random_plan(struct search *s)
{
	struct random *r = search_state(s);
	int i;

	r->rng = rng_run_seed(s);
	s->trace.len = 0;
	for (i = 0; i < r->nids; i++) {
		r->creator[i] = -1;
		r->seen[i] = false;
	}
}

/* Room for thread ids up to id (and as many options). */
static int grow_ids(struct random *r, int id)
{
	int n = r->nids ? r->nids : 16, i;

	if (id < r->nids)
		return 0;
	while (n <= id)
		n *= 2;
	int *creator = realloc(r->creator, sizeof(*creator) * (size_t)n);
	if (creator)
		r->creator = creator;
	bool *seen = creator ? realloc(r->seen, sizeof(*seen) * (size_t)n) : NULL;
	if (seen)
		r->seen = seen;
	int *eligible = seen ? realloc(r->eligible, sizeof(*eligible) * (size_t)n) : NULL;
	if (!eligible)
		return -1;
	r->eligible = eligible;
	for (i = r->nids; i < n; i++) {
		r->creator[i] = -1;
		r->seen[i] = false;
	}
	r->nids = n;
	return 0;
}

/* random:1: the options but the fresh children of an option (ids and
 * options have room). */
static int children_wait(struct random *r, const struct search_point *p)
{
	int i, n = 0;

	for (i = 0; i < p->n; i++) {
		int id = p->ids[i];

		if (!r->seen[id]) {
			r->seen[id] = true;
			r->creator[id] = p->current >= 0 && p->current != id ? p->current : -1;
		}
		if (r->creator[id] < 0 || trace_option_of(p, r->creator[id]) < 0)
			r->eligible[n++] = i;
	}
	return n;
}

/* Of the n eligible options, one drawn by kind: a kind uniformly among the
 * kinds there, then an option of it uniformly.  Returns its index in p. */
static int draw_by_kind(struct random *r, const struct search_point *p, int n)
{
	int i, j, kinds = 0, pick, of = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			if (p->access[r->eligible[j]].kind == p->access[r->eligible[i]].kind)
				break;
		kinds += j == i;
	}
	pick = rng_below(&r->rng, kinds);
	for (i = 0, kinds = 0; i < n; i++) {
		for (j = 0; j < i; j++)
			if (p->access[r->eligible[j]].kind == p->access[r->eligible[i]].kind)
				break;
		if (j == i && kinds++ == pick)
			break;
	}
	/* i: the first option of the kind drawn; now one of its kind */
	for (j = 0; j < n; j++)
		of += p->access[r->eligible[j]].kind == p->access[r->eligible[i]].kind;
	pick = rng_below(&r->rng, of);
	for (j = 0; j < n; j++)
		if (p->access[r->eligible[j]].kind == p->access[r->eligible[i]].kind && pick-- == 0)
			return r->eligible[j];
	assert(0);
	return r->eligible[0];
}

static int random_choose(struct search *s, const struct search_point *p)
{
	struct random *r = search_state(s);
	int n, k, i, most;

	if ((!r->children_wait && !r->by_kind) || !p->ids)
		return trace_draw(s, rng_below(&r->rng, p->n), p->n);
	for (i = 0, most = p->n; i < p->n; i++)
		if (p->ids[i] > most)
			most = p->ids[i];
	if (grow_ids(r, most) < 0)
		return SEARCH_ABANDON;
	if (r->children_wait)
		n = children_wait(r, p);
	else
		for (n = 0, i = 0; i < p->n; i++)
			r->eligible[n++] = i;
	assert(n > 0);
	k = r->by_kind && p->access ? draw_by_kind(r, p, n) : r->eligible[rng_below(&r->rng, n)];
	r->creator[p->ids[k]] = -1; /* it has run: fresh no more */
	return trace_draw(s, k, p->n);
}

static bool random_next_run(struct search *s)
{
	(void)s;
	return true;
}

const struct strategy_ops search_random = {
    .name = "random",
    .synopsis = "random[:C]",
    .nparams = 1,
    .nrequired = 0,
    .min = {0},
    .max = {3}, /* C is two flags */
    .usage = "takes no parameter, or 1 (children wait for their creator), 2 (a draw by "
	     "kind) or 3 (both)",
    .init = random_init,
    .fini = random_fini,
    .shard = rng_shard_by_run_seed,
    .plan = random_plan,
    .choose = random_choose,
    .next_run = random_next_run,
};
