/*
 * tests/search-diff/adapter.c: one version of the search behind a fixed
 * set of calls, for tests/search-differential.sh.
 *
 * Compiled once against the revision to compare with (-I REV) and once
 * against the working tree, with SIDE naming the calls (old_, new_); each
 * build is linked with its version's search sources into one object whose
 * other symbols are made local, so both versions live in one program.
 * It speaks the search API of search/search.h, or the oracle API of
 * policy/oracle.h that came before it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CAT2(a, b) a##b
#define CAT(a, b)  CAT2(a, b)
#define FN(name)   CAT(SIDE, name)

#if __has_include("search/search.h")
#include "search/search.h"

int FN(parse)(const char *text, char *name, size_t namelen, char *err, size_t errlen)
{
	struct search_config cfg = {0};

	if (search_parse(text, &cfg, err, errlen) < 0)
		return -1;
	search_name(&cfg, name, namelen);
	return 0;
}

void *FN(make)(const char *text, uint64_t seed, int shard, int nshards, int nvars)
{
	struct search_config cfg = {.seed = seed, .shard = shard, .nshards = nshards};
	char err[256];

	if (search_parse(text, &cfg, err, sizeof(err)) < 0)
		return NULL;
	return search_new(&cfg, nvars);
}

void FN(free)(void *s)
{
	search_free(s);
}

int FN(choose)(void *s, int n, const int *ids, int current, int current_var)
{
	return search_choose(s, &(struct search_point){n, ids, current, current_var});
}

bool FN(next_run)(void *s)
{
	return search_next_run(s);
}

void FN(trace)(void *s, char *buf, size_t len)
{
	search_trace(s, buf, len);
}

bool FN(diverged)(void *s)
{
	return search_diverged(s);
}

double FN(estimate)(void *s)
{
	return search_space_estimate(s);
}

#else
#include "policy/oracle.h"

int FN(parse)(const char *text, char *name, size_t namelen, char *err, size_t errlen)
{
	struct oracle_config cfg = {0};

	if (oracle_parse_strategy(text, &cfg, err, errlen) < 0)
		return -1;
	oracle_strategy_name(&cfg, name, namelen);
	return 0;
}

void *FN(make)(const char *text, uint64_t seed, int shard, int nshards, int nvars)
{
	struct oracle_config cfg = {.seed = seed, .shard = shard, .nshards = nshards};
	struct oracle *o;
	char err[256];

	if (oracle_parse_strategy(text, &cfg, err, sizeof(err)) < 0)
		return NULL;
	o = oracle_new(&cfg);
	if (o)
		oracle_set_variables(o, nvars);
	return o;
}

void FN(free)(void *s)
{
	oracle_free(s);
}

int FN(choose)(void *s, int n, const int *ids, int current, int current_var)
{
	return oracle_choose(s, n, ids, current, current_var);
}

bool FN(next_run)(void *s)
{
	return oracle_next_run(s);
}

void FN(trace)(void *s, char *buf, size_t len)
{
	oracle_trace(s, buf, len);
}

bool FN(diverged)(void *s)
{
	return oracle_diverged(s);
}

double FN(estimate)(void *s)
{
	return oracle_space_estimate(s);
}
#endif
