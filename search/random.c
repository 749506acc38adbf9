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
};

static int random_init(struct search *s)
{
	s->state = calloc(1, sizeof(struct random));
	return s->state ? 0 : -1;
}

static void random_fini(struct search *s)
{
	free(s->state);
}

static void random_plan(struct search *s)
{
	struct random *r = search_state(s);

	r->rng = rng_run_seed(s);
	s->trace.len = 0;
}

static int random_choose(struct search *s, const struct search_point *p)
{
	struct random *r = search_state(s);

	return trace_draw(s, rng_below(&r->rng, p->n), p->n);
}

static bool random_next_run(struct search *s)
{
	(void)s;
	return true;
}

const struct strategy_ops search_random = {
    .name = "random",
    .synopsis = "random",
    .usage = "takes no parameter",
    .init = random_init,
    .fini = random_fini,
    .shard = rng_shard_by_run_seed,
    .plan = random_plan,
    .choose = random_choose,
    .next_run = random_next_run,
};
