/*
 * strategy.c: the table of strategies, and their names and parameters.
 *
 * "NAME" or "NAME:P1[:P2]": each strategy's row says how many parameters
 * it takes, which are required, their least values (SEARCH_PARAM_MAX is
 * the greatest for all: pct's depth, cb's bound and vb's V are exponents of
 * the search, and 16 is already far beyond what finishes) and the defaults
 * of the optional ones.  Nothing else in cctrace knows a strategy's name.
 */
#include "search/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct strategy_ops search_dfs, search_bfs, search_random, search_pct, search_cb,
    search_vb, search_pctvb, search_ipb, search_idb, search_ib;

static const struct strategy_ops *const table[] = {
    &search_dfs, &search_bfs,	&search_random, &search_pct, &search_cb,
    &search_vb,	 &search_pctvb, &search_ipb,	&search_idb, &search_ib,
};

#define NSTRATEGIES (int)(sizeof(table) / sizeof(table[0]))

const struct strategy_ops *search_strategy(int i)
{
	return i >= 0 && i < NSTRATEGIES ? table[i] : NULL;
}

/* The parameters after "NAME:", each within its range; -1 if malformed. */
static int parse_params(const char *text, const struct strategy_ops *ops,
			int param[SEARCH_MAX_PARAMS])
{
	const char *at = text;
	char *end = (char *)text;
	int i;

	for (i = 0; i < ops->nparams; i++)
		param[i] = ops->dflt[i];
	for (i = 0; i < ops->nparams; i++) {
		long v = strtol(at, &end, 10);

		if (end == at || v < ops->min[i] ||
		    v > (ops->max[i] ? ops->max[i] : SEARCH_PARAM_MAX))
			return -1;
		param[i] = (int)v;
		if (*end != ':' || i + 1 == ops->nparams)
			break;
		at = end + 1;
	}
	if (*end || i + 1 < ops->nrequired)
		return -1;
	return 0;
}

static int parse_with(const struct strategy_ops *ops, const char *colon, struct search_config *cfg)
{
	int param[SEARCH_MAX_PARAMS] = {0}, i;

	if (!colon) {
		if (ops->nrequired > 0)
			return -1;
		for (i = 0; i < ops->nparams; i++)
			param[i] = ops->dflt[i];
	} else if (ops->nparams == 0 || parse_params(colon + 1, ops, param) < 0) {
		return -1;
	}
	cfg->ops = ops;
	memcpy(cfg->param, param, sizeof(param));
	return 0;
}

/* "unknown strategy 'x': use dfs, bfs, ... or pctvb:D:V", from the table. */
static void unknown(const char *text, char *err, size_t errlen)
{
	size_t used = (size_t)snprintf(err, errlen, "unknown strategy '%s': use ", text);
	int i;

	for (i = 0; i < NSTRATEGIES && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s%s",
					 i == 0		       ? ""
					 : i + 1 < NSTRATEGIES ? ", "
							       : " or ",
					 table[i]->synopsis);
}

int search_parse(const char *text, struct search_config *cfg, char *err, size_t errlen)
{
	const char *colon = strchr(text, ':');
	size_t len = colon ? (size_t)(colon - text) : strlen(text);
	int i;

	for (i = 0; i < NSTRATEGIES; i++) {
		const struct strategy_ops *ops = table[i];

		if (strlen(ops->name) != len || strncmp(ops->name, text, len) != 0)
			continue;
		if (parse_with(ops, colon, cfg) == 0)
			return 0;
		snprintf(err, errlen, "strategy '%s' %s", text, ops->usage);
		return -1;
	}
	unknown(text, err, errlen);
	return -1;
}

/* A required parameter always shows; an optional one unless it is 0
 * (absent). */
const char *search_name(const struct search_config *cfg, char *buf, size_t len)
{
	const struct strategy_ops *ops = cfg->ops;
	size_t used;
	int i;

	assert(ops);
	used = (size_t)snprintf(buf, len, "%s", ops->name);
	for (i = 0; i < ops->nparams && used < len; i++)
		if (i < ops->nrequired || cfg->param[i])
			used += (size_t)snprintf(buf + used, len - used, ":%d", cfg->param[i]);
	return buf;
}

/* The row of the strategy text names, NULL if it does not parse. */
static const struct strategy_ops *ops_named(const char *text)
{
	struct search_config cfg = {0};
	char err[160];

	return search_parse(text, &cfg, err, sizeof(err)) == 0 ? cfg.ops : NULL;
}

bool search_asks_every_step(const char *text)
{
	const struct strategy_ops *ops = ops_named(text);

	return ops && ops->every_step;
}

bool search_serialized_only(const char *text)
{
	const struct strategy_ops *ops = ops_named(text);

	return ops && ops->serialized_only;
}
