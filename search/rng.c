/*
 * rng.c: the generator of the seeded strategies (random, pct, pctvb, and
 * vb:V:T's permutations).
 *
 * splitmix64: small, fast, good enough for schedules, and the whole state
 * is one word, so a strategy keeps its own and reseeds it per run (random,
 * pct, pctvb: a run is reproducible from --seed and its number alone) or
 * per variable set (vb:V:T).
 */
#include "search/internal.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += GOLDEN);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int rng_below(uint64_t *state, int n)
{
	assert(n > 0);
	return (int)(rng_next(state) % (uint64_t)n);
}

uint64_t rng_run_seed(const struct search *s)
{
	assert(s->cfg.shard >= 0 && s->cfg.shard < s->cfg.nshards);
	return s->cfg.seed + (uint64_t)(s->run * s->cfg.nshards + s->cfg.shard) * GOLDEN;
}

void rng_shard_by_run_seed(struct search *s)
{
	(void)s;
}
