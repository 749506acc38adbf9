/*
 * bfs.c: breadth-first search over trace prefixes.
 *
 * Like dfs (000, section 4) it replays a prefix and extends it with first
 * options, but after a run every option the run did not take beyond its
 * replayed prefix becomes a new prefix at the back of a queue, and the
 * next run replays the queue's front.  Short traces come first; the number
 * of options of a queued prefix's entries is learnt again as it replays
 * (trace.c), since the queue keeps options only.
 *
 * Sharding: as dfs, by the first real choice (only the options of this
 * shard are queued there).
 */
#include "search/internal.h"

#include <stdlib.h>

struct prefix {
	int *k;
	int len;
};

struct bfs {
	struct prefix *queue; /* a ring: qlen prefixes from qhead */
	int qhead, qlen, qcap;
};

static int bfs_init(struct search *s)
{
	s->state = calloc(1, sizeof(struct bfs));
	return s->state ? 0 : -1;
}

static void bfs_fini(struct search *s)
{
	struct bfs *b = search_state(s);
	int i;

	if (!b)
		return;
	for (i = 0; i < b->qlen; i++)
		free(b->queue[(b->qhead + i) % b->qcap].k);
	free(b->queue);
	free(b);
}

static int bfs_choose(struct search *s, const struct search_point *p)
{
	return trace_next(s, p->n, trace_can_continue(p), false);
}

static int grow_queue(struct bfs *b)
{
	int cap = b->qcap ? b->qcap * 2 : 64, i;
	struct prefix *grown = malloc(sizeof(*grown) * (size_t)cap);

	if (!grown)
		return -1;
	for (i = 0; i < b->qlen; i++)
		grown[i] = b->queue[(b->qhead + i) % b->qcap];
	free(b->queue);
	b->queue = grown;
	b->qcap = cap;
	b->qhead = 0;
	return 0;
}

/* The trace's first len options, then `last`, at the back of the queue.
 * Out of memory, the prefix is lost (the search is smaller, not wrong). */
static void enqueue(struct bfs *b, const struct entry *t, int len, int last)
{
	struct prefix p = {malloc(sizeof(int) * (size_t)(len + 1)), len + 1};
	int i;

	if (!p.k)
		return;
	for (i = 0; i < len; i++)
		p.k[i] = t[i].k;
	p.k[len] = last;
	if (b->qlen == b->qcap && grow_queue(b) < 0) {
		free(p.k);
		return;
	}
	b->queue[(b->qhead + b->qlen++) % b->qcap] = p;
}

static bool bfs_next_run(struct search *s)
{
	struct bfs *b = search_state(s);
	struct trace *t = &s->trace;
	struct prefix p;
	int i, alt;

	for (i = t->replay_len; i < t->len; i++)
		for (alt = t->e[i].k + trace_step(s, i); alt < t->e[i].n; alt += trace_step(s, i))
			enqueue(b, t->e, i, alt);
	if (!b->qlen)
		return false;
	p = b->queue[b->qhead];
	b->qhead = (b->qhead + 1) % b->qcap;
	b->qlen--;
	t->len = 0;
	for (i = 0; i < p.len; i++)
		if (trace_push(s, (struct entry){.k = p.k[i], .n = 0}) < 0)
			break; /* out of memory: a shorter prefix */
	free(p.k);
	return true;
}

const struct strategy_ops search_bfs = {
    .name = "bfs",
    .synopsis = "bfs",
    .usage = "takes no parameter",
    .init = bfs_init,
    .fini = bfs_fini,
    .shard = trace_shard_first_choice,
    .choose = bfs_choose,
    .next_run = bfs_next_run,
};
