/*
 * frontier.c: iterative bounding without running a bound's schedules
 * again (ipb, idb, ib:K).
 *
 * Why.  Starting each bound's depth-first search over from the empty trace
 * runs every schedule of the lower bounds again: about as many runs as all
 * of them took.  Instead, bound b remembers its *frontier*: each place
 * where its search left an option out because it would have exceeded b
 * (the trace's prefix up to that choice, the option, and the bounded count
 * it would have made).  Bound b' then replays each frontier item whose
 * count is b' and continues depth-first below it within b', never
 * backtracking above the item's choice (the trace's floor): everything
 * above was bound b's.
 *
 * Exactness.  A schedule of exactly b' (preemptions, delays or
 * interferences) has a first choice where its count passes b' - 1; the
 * prefix before that choice is within b' - 1, so the search of that bound
 * (or of the item it came from) reached that choice and left the option
 * out, recording the first such option there; bound b' takes that option
 * and the later ones at the choice (the costs grow with the option:
 * trace.c's option_cost), so it runs the schedule, and only from that one
 * item.  Every run of bound b' has its count above b' - 1 from the item's
 * choice on: no schedule is run twice.  Shards: an item lies in the
 * subtree of one shard's option at the shard point, or above the shard
 * point, where the extension still splits; either way a run stays in one
 * shard.
 *
 * Memory.  Items share snapshots of the trace (a stem): one snapshot per
 * trace from which items were recorded, freed with its last item.  So a
 * bound holds about one entry (20 bytes) per choice of each of its runs
 * that left an option out, and one item (24 bytes) per option left out:
 * a bound-1 run of 10,000 choices adds about 0.4 MB for bound 2.  That
 * is the price of never running a schedule twice; it grows, with no
 * limit, as the search does.
 */
#include "search/internal.h"

#include <stdlib.h>
#include <string.h>

struct stem {
	struct entry *e;
	int len, refs;
};

struct item {
	struct stem *stem;
	int depth; /* the choice: entries 0 .. depth-1 replay the stem's */
	int k;	   /* the first option left out there */
	int cum;   /* the count that option makes */
};

struct frontier {
	struct item *items;
	size_t n, cap, next;  /* items; the next one to look at in this bound */
	struct stem *current; /* the snapshot of the trace as it is now, or NULL */
};

static void stem_drop(struct stem *st)
{
	if (st && --st->refs == 0) {
		free(st->e);
		free(st);
	}
}

void frontier_free(struct trace *t)
{
	struct frontier *f = t->frontier;
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->n; i++)
		stem_drop(f->items[i].stem);
	stem_drop(f->current);
	free(f->items);
	free(f);
	t->frontier = NULL;
}

int frontier_enable(struct trace *t)
{
	t->frontier = calloc(1, sizeof(*t->frontier));
	return t->frontier ? 0 : -1;
}

/* The trace changed above its end: a new snapshot for the next item. */
void frontier_trace_changed(struct trace *t)
{
	if (t->frontier) {
		stem_drop(t->frontier->current);
		t->frontier->current = NULL;
	}
}

static struct stem *snapshot(struct trace *t, int depth)
{
	struct frontier *f = t->frontier;
	struct stem *st = f->current;

	if (st && st->len > depth)
		return st;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->e = malloc(sizeof(*st->e) * (size_t)t->len);
	if (!st->e) {
		free(st);
		return NULL;
	}
	memcpy(st->e, t->e, sizeof(*st->e) * (size_t)t->len);
	st->len = t->len;
	st->refs = 1; /* f->current's */
	stem_drop(f->current);
	f->current = st;
	return st;
}

int frontier_note(struct trace *t, int depth, int k, int cum)
{
	struct frontier *f = t->frontier;
	struct stem *st;

	t->bound_met = true;
	if (!f || (t->max_bound >= 0 && cum > t->max_bound))
		return 0; /* no bound of this search would take it */
	assert(depth < t->len && cum > t->preemption_bound);
	st = snapshot(t, depth);
	if (!st)
		return -1;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct item *grown = realloc(f->items, sizeof(*grown) * cap);

		if (!grown)
			return -1;
		f->items = grown;
		f->cap = cap;
	}
	st->refs++;
	f->items[f->n++] = (struct item){st, depth, k, cum};
	return 0;
}

/* Make the trace item's: its stem's prefix, then its option; the search
 * below it may not backtrack above its choice. */
static void replay_item(struct trace *t, struct item *it)
{
	memcpy(t->e, it->stem->e, sizeof(*t->e) * (size_t)(it->depth + 1));
	t->len = it->depth + 1;
	t->e[it->depth].k = it->k;
	t->e[it->depth].cum = it->cum;
	t->floor = it->depth;
	stem_drop(it->stem);
	it->stem = NULL;
	frontier_trace_changed(t);
}

/* The next item of the current bound; false if none is left. */
static bool next_item(struct trace *t)
{
	struct frontier *f = t->frontier;

	for (; f->next < f->n; f->next++) {
		struct item *it = &f->items[f->next];

		if (!it->stem || it->cum != t->preemption_bound)
			continue;
		if (t->cap < it->depth + 1) {
			struct entry *grown =
			    realloc(t->e, sizeof(*grown) * (size_t)(it->depth + 1));

			if (!grown)
				return false;
			t->e = grown;
			t->cap = it->depth + 1;
		}
		replay_item(t, it);
		f->next++;
		return true;
	}
	return false;
}

/* Drop the items used; true if any is left. */
static bool compact(struct frontier *f)
{
	size_t i, m = 0;

	for (i = 0; i < f->n; i++)
		if (f->items[i].stem)
			f->items[m++] = f->items[i];
	f->n = m;
	f->next = 0;
	return m > 0;
}

bool trace_backtrack_iterating(struct search *s)
{
	struct trace *t = &s->trace;

	assert(t->preemption_bound >= 0 && t->frontier);
	if (trace_backtrack(s))
		return true;
	for (;;) {
		if (next_item(t))
			return true;
		if (!compact(t->frontier))
			return false; /* no bound left anything out */
		if (t->max_bound >= 0 && t->preemption_bound >= t->max_bound)
			return false;
		t->preemption_bound++;
	}
}
