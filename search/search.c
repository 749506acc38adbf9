/*
 * search.c: the search's public calls, around the strategy's hooks.
 *
 * What every strategy shares is here: a run starts with an empty replay
 * position and the strategy's plan (which may abandon it: a run that is
 * another shard's); every answer is written into the trace as the option
 * actually taken; a run's end feeds the space estimate, cuts the trace to
 * what the run reached, and asks the strategy whether there is another.
 * The hooks are called through the row of the table only; there is no
 * other dispatch on the strategy.
 */
#include "search/internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void start_run(struct search *s)
{
	s->trace.index = 0;
	s->diverged = false;
	s->abandoned = false;
	s->met_choice = false;
	if (s->cfg.ops->plan)
		s->cfg.ops->plan(s);
	s->trace.replay_len = s->trace.len;
}

struct search *search_new(const struct search_config *cfg, int nvars)
{
	struct search *s = calloc(1, sizeof(*s));

	assert(cfg->ops && nvars >= 0);
	if (!s)
		return NULL;
	s->cfg = *cfg;
	if (s->cfg.nshards < 1)
		s->cfg.nshards = 1;
	assert(s->cfg.shard >= 0 && s->cfg.shard < s->cfg.nshards);
	s->nvars = nvars;
	s->trace.preemption_bound = -1;
	s->trace.max_bound = -1;
	if (s->cfg.ops->init(s) < 0) {
		search_free(s); /* fini takes what a failed init left */
		return NULL;
	}
	s->cfg.ops->shard(s);
	start_run(s);
	return s;
}

void search_free(struct search *s)
{
	if (!s)
		return;
	s->cfg.ops->fini(s);
	trace_free(&s->trace);
	free(s);
}

int search_choose(struct search *s, const struct search_point *p)
{
	int k;

	assert(p->n > 0 && p->current >= -1 && p->current_var >= -1);
	if (s->abandoned)
		return SEARCH_ABANDON;
	s->met_choice |= p->n > 1;
	k = s->cfg.ops->choose(s, p);
	assert(k == SEARCH_ABANDON || (k >= 0 && k < p->n));
	assert(s->trace.index <= s->trace.len);
	if (k != SEARCH_ABANDON && s->trace.index > 0)
		s->trace.e[s->trace.index - 1].abs = k;
	return k;
}

static void add_estimate(struct search *s)
{
	double product = 1;
	int i;

	for (i = 0; i < s->trace.index && i < s->trace.len; i++)
		if (s->trace.e[i].n > 0)
			product *= s->trace.e[i].n;
	s->estimate_sum += product;
	s->estimate_runs++;
}

bool search_next_run(struct search *s)
{
	struct trace *t = &s->trace;
	bool more;

	if (!s->abandoned)
		add_estimate(s);
	s->run++;
	/* Entries a shorter run never reached are not part of its trace; but
	 * a run that stopped inside its replayed prefix (it diverged) keeps
	 * the prefix, so that the search moves on to the prefix's next
	 * sibling instead of losing everything after it. */
	if (t->index < t->len && !s->abandoned)
		t->len = t->index > t->replay_len ? t->index : t->replay_len;
	more = s->cfg.ops->next_run(s);
	start_run(s);
	return more;
}

size_t search_trace(const struct search *s, char *buf, size_t len)
{
	size_t used = 0, need = 0;
	int i;

	if (len)
		buf[0] = 0;
	for (i = 0; i < s->trace.index && i < s->trace.len; i++) {
		char one[16];
		int w = snprintf(one, sizeof(one), "%s%d", i ? "." : "", s->trace.e[i].abs);

		need += (size_t)w;
		if (used == need - (size_t)w && used + (size_t)w < len) {
			snprintf(buf + used, len - used, "%s", one);
			used += (size_t)w;
		}
	}
	return need;
}

bool search_made_no_choice(const struct search *s)
{
	return !s->abandoned && !s->met_choice;
}

bool search_diverged(const struct search *s)
{
	return s->diverged || s->trace.index < s->trace.replay_len;
}

double search_space_estimate(const struct search *s)
{
	return s->estimate_runs ? s->estimate_sum / (double)s->estimate_runs : 0;
}
