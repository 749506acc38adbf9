/*
 * trace.c: the trace of a run, replayed and extended (dfs, bfs, cb, vb).
 *
 * CONCURRIT's depth-first search over traces (000, section 4 and Fig. 7):
 * a run replays the prefix the search chose for it, then extends it by
 * taking the first option at every new choice point.  After the run,
 * trace_backtrack() moves to the deepest entry with an option left and
 * cuts the trace there: that prefix is the next run's.  bfs replays
 * prefixes from its own queue through the same trace_next().
 *
 * Preemptions (cb, vb): an entry whose thread that ran last could go on
 * (can_continue) numbers its options relatively, 0 being "go on", so any
 * option k > 0 is a preemption; cum counts them along the trace, and an
 * extension or a backtrack that would exceed the bound is not taken.  A
 * forced entry has only option 0 (vb outside its variable set).
 *
 * Sharding: the first entry with a real choice (more than one option, not
 * forced) is split among the shards, shard i taking options i, i+N, ...;
 * every entry before it has one option, so shards agree on where it is,
 * and together they cover each trace of the unsharded search once.
 *
 * A run that asked with a different number of options than its replayed
 * entry had (the program did not do the same thing twice) is marked
 * diverged and the entry takes the new count.
 */
#include "search/internal.h"

#include <stdlib.h>

int trace_push(struct search *s, struct entry e)
{
	struct trace *t = &s->trace;

	assert(t->len <= t->cap);
	if (t->len == t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;
		struct entry *grown = realloc(t->e, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		t->e = grown;
		t->cap = cap;
	}
	t->e[t->len++] = e;
	frontier_trace_changed(t);
	return 0;
}

void trace_free(struct trace *t)
{
	frontier_free(t);
	free(t->e);
	t->e = NULL;
	t->len = t->cap = 0;
}

int trace_preemptions(const struct search *s)
{
	const struct trace *t = &s->trace;

	return t->index ? t->e[t->index - 1].cum : 0;
}

bool trace_is_shard_point(const struct search *s, int at)
{
	const struct trace *t = &s->trace;
	int i;

	if (s->cfg.nshards == 1 || !t->split_first || t->e[at].n < 2 || t->e[at].forced)
		return false;
	for (i = 0; i < at; i++)
		if (t->e[i].n > 1 && !t->e[i].forced)
			return false;
	return true;
}

int trace_step(const struct search *s, int at)
{
	return trace_is_shard_point(s, at) ? s->cfg.nshards : 1;
}

static bool counts_preemptions(const struct trace *t)
{
	return t->preemption_bound >= 0;
}

/* What option k of e adds to the bounded count: a delay per option
 * skipped (idb), one interference per move (ib: every option but the
 * default), or one preemption for leaving a thread that could go on.  All
 * grow with k, so an option beyond the bound has none after it. */
static int option_cost(const struct trace *t, const struct entry *e, int k)
{
	if (t->delay_cost)
		return k;
	if (t->move_cost)
		return k > 0;
	return e->can_continue && k > 0 ? 1 : 0;
}

/* The first option of the entry just pushed; -1 if it has none in this
 * shard or within the bound. */
static int first_option(struct search *s, struct entry *e)
{
	struct trace *t = &s->trace;
	int before = t->len > 1 ? t->e[t->len - 2].cum : 0;

	e->k = 0;
	e->cum = before;
	if (trace_is_shard_point(s, t->len - 1)) {
		e->k = s->cfg.shard;
		if (e->k >= e->n)
			return -1;
	}
	if (counts_preemptions(t))
		e->cum = before + option_cost(t, e, e->k);
	if (counts_preemptions(t) && e->cum > t->preemption_bound) {
		frontier_note(t, t->len - 1, e->k, e->cum);
		return -1;
	}
	return 0;
}

static int replay(struct search *s, int n)
{
	struct entry *r = &s->trace.e[s->trace.index++];

	if (r->n == 0) {
		r->n = n; /* a bfs prefix learns its sizes as it replays */
	} else if (r->n != n) {
		s->diverged = true;
		r->n = n;
	}
	if (r->k >= n) { /* fewer options than the prefix was made for */
		s->diverged = true;
		r->k = n - 1;
	}
	assert(r->k >= 0);
	return r->k;
}

int trace_next(struct search *s, int n, bool can_continue, bool forced)
{
	return trace_next_entry(
	    s, (struct entry){.n = n, .can_continue = can_continue, .forced = forced});
}

int trace_next_entry(struct search *s, struct entry proto)
{
	struct trace *t = &s->trace;
	int n = proto.n;

	assert(n > 0 && t->index <= t->len);
	if (t->index < t->replay_len)
		return replay(s, n);
	assert(t->index == t->len);
	if (trace_push(s, proto) < 0)
		return SEARCH_ABANDON;
	if (first_option(s, &t->e[t->len - 1]) < 0) {
		t->len--;
		s->abandoned = true;
		return SEARCH_ABANDON;
	}
	t->index++;
	assert(t->e[t->len - 1].k < n);
	return t->e[t->len - 1].k;
}

int trace_draw(struct search *s, int k, int n)
{
	assert(k >= 0 && k < n);
	if (trace_push(s, (struct entry){.k = k, .n = n}) < 0)
		return SEARCH_ABANDON;
	s->trace.index++;
	return k;
}

bool trace_backtrack(struct search *s)
{
	struct trace *t = &s->trace;
	int i;

	for (i = t->len - 1; i >= t->floor; i--) {
		struct entry *e = &t->e[i];
		int before = i ? t->e[i - 1].cum : 0;
		int k = e->k + trace_step(s, i);

		if (k >= e->n || e->forced)
			continue;
		if (counts_preemptions(t)) {
			int cum = before + option_cost(t, e, k);

			if (cum > t->preemption_bound) {
				frontier_note(t, i, k, cum);
				continue;
			}
			e->cum = cum;
		}
		e->k = k;
		t->len = i + 1;
		frontier_trace_changed(t);
		return true;
	}
	return false;
}

int trace_option_of(const struct search_point *p, int id)
{
	int i;

	for (i = 0; p->ids && i < p->n; i++)
		if (p->ids[i] == id)
			return i;
	return -1;
}

bool trace_can_continue(const struct search_point *p)
{
	return p->current >= 0 && trace_option_of(p, p->current) >= 0;
}

int trace_relative_option(const struct search_point *p, int k)
{
	int at = p->current >= 0 ? trace_option_of(p, p->current) : -1, pos;

	assert(k >= 0 && k < p->n);
	if (at < 0)
		return k;
	if (k == 0)
		return at;
	for (pos = 0; pos < p->n; pos++) {
		if (pos == at)
			continue;
		if (--k == 0)
			return pos;
	}
	assert(!"relative option out of range");
	return 0;
}

void trace_shard_first_choice(struct search *s)
{
	s->trace.split_first = true;
}

/* Is id after b in the rotation that starts at `start`? */
static bool rotated_before(int a, int b, int start)
{
	bool wrap_a = a < start, wrap_b = b < start;

	return wrap_a != wrap_b ? !wrap_a : a < b;
}

int trace_round_robin_option(const struct search_point *p, int k)
{
	int start = p->current >= 0 ? p->current : 0, i, j;

	assert(k >= 0 && k < p->n);
	if (!p->ids)
		return k;
	for (i = 0; i < p->n; i++) {
		int rank = 0;

		for (j = 0; j < p->n; j++)
			if (j != i && rotated_before(p->ids[j], p->ids[i], start))
				rank++;
		if (rank == k)
			return i;
	}
	assert(!"round-robin option out of range");
	return 0;
}
