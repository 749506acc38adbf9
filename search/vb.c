/*
 * vb.c: variable bounding (004, section 2), with thread bounding (004,
 * section 4): the vb:V and vb:V:T strategies.
 *
 * vb:V: for v = 1..V and every set S of v of the schedule's watched
 * variables (varset.c, smallest sets first), a depth-first search over
 * traces that preempt only right after an access to a variable in S:
 * elsewhere the thread that ran last goes on (the choice is forced).  V
 * bounds the preemptions too: a bug of v variables needs at least v
 * preemptions (004, section 2) but may need more, like the bank's lost
 * update in withdraw.search: two preemptions, both at balance.  Options
 * are relative to the thread that ran last, as cb's, and preemptions are
 * counted by trace.c.  A choice among values is searched like any other.
 * Without watched variables there is nothing to preempt at: one set, the
 * empty one.  The variables are the schedule's watched ones, or under
 * `cctrace test` those profiling found (engine/serialvars.c: globals, heap
 * objects by allocation site, synchronisation objects, the process's
 * exit); p->current_var says which one the thread that ran last is held
 * at.
 *
 * vb:V:T: the same sets, but the thread that runs is chosen by strict
 * priorities from permutations drawn for thread bound T (tbound.c), and
 * the search is depth-first over whether to preempt at each access to S:
 * a preemption lowers the thread that would go on to the priority of that
 * preemption, and is a choice only if it makes another thread run.  Each
 * set's trace space is searched once per permutation.
 *
 * Sharding: vb:V splits the first real choice of each set's search, as
 * dfs; vb:V:T splits each set's permutations instead (tbound.c), and a
 * shard with no permutation of the first set abandons its first run.
 */
#include "search/internal.h"

#include <stdlib.h>

struct vb {
	struct varset set;
	struct tbound *tb; /* vb:V:T; NULL for vb:V */
	bool have_perm;	   /* vb:V:T: this shard has a permutation to run */
};

static uint64_t set_key(const struct vb *v)
{
	return varset_key(&v->set);
}

static int vb_init(struct search *s)
{
	struct vb *v = calloc(1, sizeof(*v));
	int thread_bound = s->cfg.param[1];

	if (!v)
		return -1;
	s->state = v;
	s->trace.preemption_bound = s->cfg.param[0];
	if (varset_init(&v->set, s->nvars) < 0)
		return -1;
	varset_first(&v->set, s->nvars ? 1 : 0);
	if (!thread_bound)
		return 0;
	v->tb = tbound_new(s->cfg.seed, s->cfg.param[0], thread_bound);
	if (!v->tb)
		return -1;
	v->have_perm = tbound_first(v->tb, s, set_key(v));
	return 0;
}

/* Without a thread bound, as dfs; with one, each shard takes its share of
 * the permutations (tbound.c), in vb_next_run. */
static void vb_shard(struct search *s)
{
	s->trace.split_first = !s->cfg.param[1];
}

static void vb_fini(struct search *s)
{
	struct vb *v = search_state(s);

	if (!v)
		return;
	varset_free(&v->set);
	tbound_free(v->tb);
	free(v);
}

static void vb_plan(struct search *s)
{
	struct vb *v = search_state(s);

	if (!v->tb)
		return;
	tbound_start_run(v->tb);
	if (!v->have_perm)
		s->abandoned = true;
}

/* vb:V:T: the highest-priority option runs.  Right after an access to the
 * set, while preemptions are left, the search may also preempt the thread
 * that would go on: it drops to the priority of this preemption, and the
 * point is only a choice if that makes another thread run. */
static int tb_choose(struct search *s, struct vb *v, const struct search_point *p)
{
	int run = tbound_highest(v->tb, p, -1, 0), before = trace_preemptions(s), k;
	bool may;

	if (run < 0)
		return SEARCH_ABANDON;
	may = p->current >= 0 && trace_option_of(p, p->current) == run &&
	      varset_has(&v->set, p->current_var) && before < s->trace.preemption_bound &&
	      tbound_highest(v->tb, p, p->current, before) != run;
	k = trace_next(s, may ? 2 : 1, may, !may);
	if (k != 1)
		return k == SEARCH_ABANDON ? k : run;
	if (tbound_preempt(v->tb, p->current, before) < 0)
		return SEARCH_ABANDON;
	run = tbound_highest(v->tb, p, -1, 0);
	return run < 0 ? SEARCH_ABANDON : run;
}

static int vb_choose(struct search *s, const struct search_point *p)
{
	struct vb *v = search_state(s);
	bool can_continue;
	int k;

	/* priorities order threads; a choice of values is searched like
	 * any other */
	if (v->tb && p->ids)
		return tb_choose(s, v, p);
	/* going on is the only choice unless the thread that ran last just
	 * touched a variable of the set */
	can_continue = trace_can_continue(p);
	k = trace_next(s, p->n, can_continue, can_continue && !varset_has(&v->set, p->current_var));
	return k == SEARCH_ABANDON ? k : trace_relative_option(p, k);
}

/* The next set of as many variables, or the first of one more. */
static bool next_set(struct search *s, struct vb *v)
{
	int size = v->set.size;

	if (size > 0 && varset_next(&v->set))
		return true;
	if (size + 1 > s->cfg.param[0] || size + 1 > s->nvars)
		return false;
	varset_first(&v->set, size + 1);
	return true;
}

static bool vb_next_run(struct search *s)
{
	struct vb *v = search_state(s);

	if (trace_backtrack(s))
		return true;
	s->trace.len = 0;
	/* vb:V:T: this permutation is done; the set's next one. */
	if (v->tb && (v->have_perm = tbound_next(v->tb, s, set_key(v))))
		return true;
	/* This set is done; start over with the next one. */
	while (next_set(s, v))
		if (!v->tb || (v->have_perm = tbound_first(v->tb, s, set_key(v))))
			return true;
	return false;
}

const struct strategy_ops search_vb = {
    .name = "vb",
    .synopsis = "vb:V[:T]",
    .nparams = 2,
    .nrequired = 1,
    .min = {1, 2},
    .usage = "needs V from 1 to 16 and an optional thread bound T from 2 to 16, e.g. vb:1 or "
	     "vb:1:2",
    .init = vb_init,
    .fini = vb_fini,
    .shard = vb_shard,
    .plan = vb_plan,
    .choose = vb_choose,
    .next_run = vb_next_run,
};
