/*
 * pctvb.c: PCT with variable bounding (004, section 3, "PCTVB"; the
 * pctvb:D:V strategy).
 *
 * Each run first draws a set S of V of the schedule's watched variables
 * (under `cctrace test`, those profiling found: see vb.c) by selection
 * sampling (every set equally likely; all of them if there are fewer),
 * then its D-1 change points among the pairs (q, j), q in S, j up
 * to k_q, where k_q is the most choice points after an access to q seen in
 * any run so far: the paper's profiling runs are simply the first runs,
 * and the very first run only profiles (nothing is known yet, so it draws
 * nothing).  At the j-th access to q the thread that made it drops to
 * priority i.  Choice points after accesses to other variables never
 * change priorities; the option of highest priority always runs
 * (priority.c, as pct).
 *
 * Draws come from one generator per run, seeded as random.c's; shards
 * split the runs.  The search never runs out.
 */
#include "search/internal.h"

#include <stdlib.h>
#include <string.h>

struct pctvb {
	uint64_t rng;
	struct varset set; /* this run's S */
	int *change;	   /* [nchange]: the access number of each change point */
	int *change_var;   /* [nchange]: its variable */
	int nchange, most; /* this run's change points, of D - 1 at most */
	int *acc_run;	   /* [nvars]: choice points after an access, this run */
	int *acc_max;	   /* [nvars]: the most in any run so far (k_q) */
	struct priorities prio;
};

static int pctvb_init(struct search *s)
{
	struct pctvb *c = calloc(1, sizeof(*c));
	size_t nv = (size_t)s->nvars + 1;

	if (!c)
		return -1;
	s->state = c;
	c->most = s->cfg.param[0] - 1;
	assert(c->most >= 0 && c->most < SEARCH_PARAM_MAX && s->cfg.param[1] >= 1);
	c->change = calloc((size_t)c->most + 1, sizeof(*c->change));
	c->change_var = calloc((size_t)c->most + 1, sizeof(*c->change_var));
	c->acc_run = calloc(nv, sizeof(*c->acc_run));
	c->acc_max = calloc(nv, sizeof(*c->acc_max));
	if (!c->change || !c->change_var || !c->acc_run || !c->acc_max)
		return -1;
	return varset_init(&c->set, s->nvars);
}

static void pctvb_fini(struct search *s)
{
	struct pctvb *c = search_state(s);

	if (!c)
		return;
	varset_free(&c->set);
	prio_free(&c->prio);
	free(c->change);
	free(c->change_var);
	free(c->acc_run);
	free(c->acc_max);
	free(c);
}

/* V of the variables, uniformly (all of them if there are fewer). */
static void draw_set(struct search *s, struct pctvb *c)
{
	int want = s->cfg.param[1] < s->nvars ? s->cfg.param[1] : s->nvars;
	int left = s->nvars, i;

	varset_clear(&c->set);
	for (i = 0; i < s->nvars && want > 0; i++, left--)
		if (rng_below(&c->rng, left) < want) { /* selection sampling */
			varset_add(&c->set, i);
			want--;
		}
}

/* Change point i: the e-th (0-based) of the set's profiled accesses. */
static void place_change(struct pctvb *c, int i, int e)
{
	int m;

	for (m = 0; m < c->set.size; m++) {
		int q = c->set.member[m];

		if (e < c->acc_max[q]) {
			c->change_var[i] = q;
			c->change[i] = e + 1;
			return;
		}
		e -= c->acc_max[q];
	}
	assert(!"change point beyond the profiled accesses");
}

static void pctvb_plan(struct search *s)
{
	struct pctvb *c = search_state(s);
	int i, m, k = 0;

	c->rng = rng_run_seed(s);
	s->trace.len = 0;
	prio_reset(&c->prio);
	memset(c->acc_run, 0, sizeof(*c->acc_run) * (size_t)s->nvars);
	c->nchange = 0;
	varset_clear(&c->set);
	if (s->run == 0)
		return;
	draw_set(s, c);
	for (m = 0; m < c->set.size; m++)
		k += c->acc_max[c->set.member[m]];
	/* Before any access was seen there is nowhere to change priorities:
	 * the run only profiles. */
	c->nchange = k ? c->most : 0;
	for (i = 0; i < c->nchange; i++)
		place_change(c, i, rng_below(&c->rng, k));
}

/* An access to var by thread current: the change points it reaches. */
static int count_access(struct search *s, struct pctvb *c, int current, int var)
{
	int nth = ++c->acc_run[var], i;

	for (i = 0; i < c->nchange && current >= 0; i++) {
		int *prio;

		if (c->change_var[i] != var || c->change[i] != nth)
			continue;
		prio = pct_priority(&c->prio, &c->rng, s->cfg.param[0], current);
		if (!prio)
			return -1;
		*prio = i + 1;
	}
	return 0;
}

static int pctvb_choose(struct search *s, const struct search_point *p)
{
	struct pctvb *c = search_state(s);
	int k;

	if (p->current_var >= 0 && p->current_var < s->nvars &&
	    count_access(s, c, p->current, p->current_var) < 0)
		return SEARCH_ABANDON;
	k = pct_highest(&c->prio, &c->rng, s->cfg.param[0], p);
	return k < 0 ? SEARCH_ABANDON : trace_draw(s, k, p->n);
}

/* What this run profiled. */
static bool pctvb_next_run(struct search *s)
{
	struct pctvb *c = search_state(s);
	int q;

	for (q = 0; q < s->nvars; q++)
		if (c->acc_run[q] > c->acc_max[q])
			c->acc_max[q] = c->acc_run[q];
	return true;
}

const struct strategy_ops search_pctvb = {
    .name = "pctvb",
    .synopsis = "pctvb:D[:V]",
    .nparams = 2,
    .nrequired = 1,
    .min = {1, 1},
    .dflt = {0, 1},
    .usage = "needs a depth D and a number of variables V (default 1), each from 1 to 16, e.g. "
	     "pctvb:2:1",
    .init = pctvb_init,
    .fini = pctvb_fini,
    .shard = rng_shard_by_run_seed,
    .plan = pctvb_plan,
    .choose = pctvb_choose,
    .next_run = pctvb_next_run,
};
