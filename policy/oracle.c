/*
 * oracle.c: the search strategies behind `cctrace explore`.
 *
 * Every strategy keeps the current run's trace (one entry per choice
 * point: the option taken, how many there were, and for cb the preemptions
 * so far).  Depth-first replays a prefix and extends it with first
 * options; after the run it backtracks to the deepest entry with an option
 * left.  Breadth-first keeps a queue of prefixes instead.  Random and PCT
 * never replay; they draw from a generator seeded per run, so a run is
 * reproducible from its seed.  vb:V:T is depth-first too, but over
 * whether to preempt, with the thread that runs chosen by priorities
 * (priority.c has those); its trace is searched once per permutation.
 * See oracle.h for what each strategy means.
 */
#include "policy/oracle_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "N" or "N:M" after a strategy's name, each within its range. */
static int parse_params(const char *text, struct oracle_config *cfg, int min1, int min2,
			bool second)
{
	char *end;
	long a = strtol(text, &end, 10), b = 0;

	if (end == text || a < min1 || a > 16)
		return -1;
	if (*end == ':' && second) {
		const char *at = end + 1;

		b = strtol(at, &end, 10);
		if (end == at || b < min2 || b > 16)
			return -1;
	}
	if (*end)
		return -1;
	cfg->param = (int)a;
	cfg->param2 = (int)b;
	return 0;
}

int oracle_parse_strategy(const char *text, struct oracle_config *cfg, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		enum strategy kind;
		int min1, min2; /* -1: no parameter */
		bool second;
		const char *usage;
	} table[] = {
	    {"dfs", STRAT_DFS, -1, 0, false, "takes no parameter"},
	    {"bfs", STRAT_BFS, -1, 0, false, "takes no parameter"},
	    {"random", STRAT_RANDOM, -1, 0, false, "takes no parameter"},
	    {"pct", STRAT_PCT, 1, 0, false, "needs a depth from 1 to 16, e.g. pct:3"},
	    {"cb", STRAT_CB, 0, 0, false, "needs a bound from 0 to 16, e.g. cb:2"},
	    {"vb", STRAT_VB, 1, 2, true,
	     "needs V from 1 to 16 and an optional thread bound T from 2 to 16, e.g. vb:1 or "
	     "vb:1:2"},
	    {"pctvb", STRAT_PCTVB, 1, 1, true,
	     "needs a depth D and a number of variables V, each from 1 to 16, e.g. pctvb:2:1"},
	};
	const char *colon = strchr(text, ':');
	size_t len = colon ? (size_t)(colon - text) : strlen(text), i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strlen(table[i].name) != len || strncmp(table[i].name, text, len) != 0)
			continue;
		cfg->kind = table[i].kind;
		cfg->param = cfg->param2 = 0;
		if (table[i].min1 < 0 && !colon)
			return 0;
		if (table[i].min1 >= 0 && colon &&
		    parse_params(colon + 1, cfg, table[i].min1, table[i].min2, table[i].second) ==
			0) {
			if (cfg->kind == STRAT_PCTVB && !cfg->param2)
				cfg->param2 = 1;
			return 0;
		}
		snprintf(err, errlen, "strategy '%s' %s", text, table[i].usage);
		return -1;
	}
	snprintf(err, errlen,
		 "unknown strategy '%s': use dfs, bfs, random, pct:D, cb:N, vb:V[:T] or pctvb:D:V",
		 text);
	return -1;
}

const char *oracle_strategy_name(const struct oracle_config *cfg, char *buf, size_t len)
{
	static const char *const names[] = {"dfs", "bfs", "random", "pct", "cb", "vb", "pctvb"};

	if (cfg->param2)
		snprintf(buf, len, "%s:%d:%d", names[cfg->kind], cfg->param, cfg->param2);
	else if (cfg->kind == STRAT_PCT || cfg->kind == STRAT_CB || cfg->kind == STRAT_VB)
		snprintf(buf, len, "%s:%d", names[cfg->kind], cfg->param);
	else
		snprintf(buf, len, "%s", names[cfg->kind]);
	return buf;
}

static void start_run(struct oracle *o);

struct oracle *oracle_new(const struct oracle_config *cfg)
{
	struct oracle *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->cfg = *cfg;
	if (o->cfg.nshards < 1)
		o->cfg.nshards = 1;
	start_run(o);
	return o;
}

void oracle_free(struct oracle *o)
{
	int i;

	if (!o)
		return;
	for (i = 0; i < o->qlen; i++)
		free(o->queue[(o->qhead + i) % o->qcap].k);
	free(o->queue);
	free(o->trace);
	free(o->tb_used);
	free(o->prio);
	free(o->tb_rank);
	free(o);
}

static int push_entry(struct oracle *o, struct entry e)
{
	if (o->len == o->cap) {
		int cap = o->cap ? o->cap * 2 : 64;
		struct entry *grown = realloc(o->trace, sizeof(*grown) * (size_t)cap);

		if (!grown)
			return -1;
		o->trace = grown;
		o->cap = cap;
	}
	o->trace[o->len++] = e;
	return 0;
}

/* The first entry with more than one option is where shards split. */
static bool is_shard_point(const struct oracle *o, int at)
{
	int i;

	if (o->cfg.nshards == 1 || o->trace[at].n < 2 || o->trace[at].forced ||
	    (o->cfg.kind == STRAT_VB && o->cfg.param2)) /* vb:V:T splits permutations */
		return false;
	for (i = 0; i < at; i++)
		if (o->trace[i].n > 1 && !o->trace[i].forced)
			return false;
	return true;
}

/* --- choose --- */

/* cb orders the options so that continuing the current thread is option 0. */
static int cb_option(const int *ids, int n, int current, int k)
{
	int i, pos = 0;

	if (!ids || current < 0)
		return k;
	for (i = 0; i < n; i++)
		if (ids[i] == current)
			break;
	if (i == n)
		return k;
	if (k == 0)
		return i;
	for (pos = 0; pos < n; pos++) {
		if (pos == i)
			continue;
		if (--k == 0)
			return pos;
	}
	return 0;
}

static bool continues(const int *ids, int n, int current)
{
	int i;

	for (i = 0; ids && current >= 0 && i < n; i++)
		if (ids[i] == current)
			return true;
	return false;
}

/* cb bounds preemptions by its parameter, and so does vb (V bounds both
 * the variables and the preemptions: a bug of v variables needs at least
 * v preemptions, 004 section 2, but may need more, like the bank's lost
 * update in withdraw.search: two preemptions, both at balance). */
static bool counts_preemptions(const struct oracle *o)
{
	return o->cfg.kind == STRAT_CB || o->cfg.kind == STRAT_VB;
}

static int preemption_bound(const struct oracle *o)
{
	return o->cfg.param;
}

static int first_option(struct oracle *o, struct entry *e)
{
	/* e is the entry just pushed: the count so far is its predecessor's. */
	int before = o->len > 1 ? o->trace[o->len - 2].cum : 0;

	e->k = 0;
	e->cum = before;
	if (is_shard_point(o, o->len - 1)) {
		e->k = o->cfg.shard;
		if (e->k >= e->n)
			return -1;
	}
	if (counts_preemptions(o) && e->can_continue && e->k > 0)
		e->cum = before + 1;
	if (counts_preemptions(o) && e->cum > preemption_bound(o))
		return -1;
	return 0;
}

int oracle_check_variables(const struct oracle_config *cfg, int n, char *err, size_t errlen)
{
	if ((cfg->kind != STRAT_VB && cfg->kind != STRAT_PCTVB) || n <= MAX_VARS)
		return 0;
	snprintf(err, errlen,
		 "strategy %s draws its sets from at most %d watched variables; the schedule "
		 "watches %d (use another strategy, or watch fewer)",
		 cfg->kind == STRAT_VB ? "vb" : "pctvb", MAX_VARS, n);
	return -1;
}

void oracle_set_variables(struct oracle *o, int n)
{
	o->nvars = n < MAX_VARS ? n : MAX_VARS;
	o->subset = o->nvars ? 1 : 0; /* the first set of one variable */
	if (o->cfg.kind == STRAT_VB && o->cfg.param2) {
		/* A shard with no permutation of the first set skips its run
		 * and moves on. */
		o->abandoned = !tb_first_permutation(o);
		tb_start_run(o);
	}
}

/* The next set of as many variables (Gosper's hack), or of one more. */
static bool next_subset(struct oracle *o)
{
	uint64_t s = o->subset, c, r;
	int size = __builtin_popcountll(s);

	if (s) {
		c = s & -s;
		r = s + c;
		s = (((r ^ s) >> 2) / c) | r;
		if (o->nvars == 64 || s < (1ull << o->nvars)) {
			o->subset = s;
			return true;
		}
	}
	if (size + 1 > o->cfg.param || size + 1 > o->nvars)
		return false;
	o->subset = (1ull << (size + 1)) - 1;
	return true;
}

/* The trace's option at this choice point: replayed, or the first one of a
 * new entry.  ORACLE_ABANDON if the entry would leave this shard or the
 * preemption bound. */
static int next_entry(struct oracle *o, int n, bool can_continue, bool forced)
{
	if (o->index < o->replay_len) {
		struct entry *r = &o->trace[o->index++];

		if (r->n == 0) {
			r->n = n; /* a bfs prefix learns its sizes as it replays */
		} else if (r->n != n) {
			o->diverged = true;
			r->n = n;
			if (r->k >= n)
				r->k = n - 1;
		}
		return r->k;
	}
	if (push_entry(o, (struct entry){.n = n, .can_continue = can_continue, .forced = forced}) <
	    0)
		return ORACLE_ABANDON;
	if (first_option(o, &o->trace[o->len - 1]) < 0) {
		o->len--;
		o->abandoned = true;
		return ORACLE_ABANDON;
	}
	o->index++;
	return o->trace[o->len - 1].k;
}

static int option_of(const int *ids, int n, int id)
{
	int i;

	for (i = 0; ids && i < n; i++)
		if (ids[i] == id)
			return i;
	return -1;
}

/*
 * vb:V:T: the highest-priority option runs.  Right after an access to the
 * set, while preemptions are left, the search may also preempt the thread
 * that would go on: it drops to the priority of this preemption, and the
 * point is only a choice if that makes another thread run.
 */
static int tb_choose(struct oracle *o, int n, const int *ids, int current, int current_var)
{
	int run = tb_highest(o, n, ids, -1, 0), before = o->index ? o->trace[o->index - 1].cum : 0;
	bool may = current >= 0 && option_of(ids, n, current) == run &&
		   oracle_var_in_subset(o, o->subset, current_var) &&
		   before < preemption_bound(o) && tb_highest(o, n, ids, current, before) != run;
	int k = next_entry(o, may ? 2 : 1, may, !may);

	if (k == ORACLE_ABANDON)
		return k;
	if (k == 1) {
		tb_preempt(o, current, before);
		run = tb_highest(o, n, ids, -1, 0);
	}
	return run;
}

static int choose_option(struct oracle *o, int n, const int *ids, int current, int current_var)
{
	bool can_continue;
	int k;

	switch (o->cfg.kind) {
	case STRAT_RANDOM:
	case STRAT_PCT:
	case STRAT_PCTVB:
		k = o->cfg.kind == STRAT_RANDOM ? oracle_below(o, n)
		    : o->cfg.kind == STRAT_PCT	? pct_choose(o, n, ids)
						: pctvb_choose(o, n, ids, current, current_var);
		if (push_entry(o, (struct entry){.k = k, .n = n}) < 0)
			return ORACLE_ABANDON;
		o->index++;
		return k;
	case STRAT_VB:
		/* priorities order threads; a choice of values is searched
		 * like any other */
		if (o->cfg.param2 && ids)
			return tb_choose(o, n, ids, current, current_var);
		break;
	default:
		break;
	}
	can_continue = continues(ids, n, current);
	/* vb: going on is the only choice unless the thread that ran last
	 * just touched a variable of the set. */
	k = next_entry(o, n, can_continue,
		       o->cfg.kind == STRAT_VB && can_continue &&
			   !oracle_var_in_subset(o, o->subset, current_var));
	if (k != ORACLE_ABANDON && (o->cfg.kind == STRAT_CB || o->cfg.kind == STRAT_VB))
		k = cb_option(ids, n, current, k);
	return k;
}

int oracle_choose(struct oracle *o, int n, const int *ids, int current, int current_var)
{
	int k;

	if (o->abandoned || n <= 0)
		return ORACLE_ABANDON;
	k = choose_option(o, n, ids, current, current_var);
	if (k != ORACLE_ABANDON && o->index > 0)
		o->trace[o->index - 1].abs = k;
	return k;
}

/* --- after a run --- */

static int step_of(const struct oracle *o, int at)
{
	return is_shard_point(o, at) ? o->cfg.nshards : 1;
}

static bool dfs_backtrack(struct oracle *o)
{
	int i;

	for (i = o->len - 1; i >= 0; i--) {
		struct entry *e = &o->trace[i];
		int before = i ? o->trace[i - 1].cum : 0;
		int k = e->k + step_of(o, i);

		if (k >= e->n || e->forced)
			continue;
		if (counts_preemptions(o)) {
			int cum = before + (e->can_continue && k > 0 ? 1 : 0);

			if (cum > preemption_bound(o))
				continue;
			e->cum = cum;
		}
		e->k = k;
		o->len = i + 1;
		return true;
	}
	if (o->cfg.kind != STRAT_VB)
		return false;
	/* vb:V:T: this permutation is done; the set's next one. */
	o->len = 0;
	if (o->cfg.param2 && tb_next_permutation(o))
		return true;
	/* vb: this set is done; start over with the next one. */
	while (next_subset(o))
		if (!o->cfg.param2 || tb_first_permutation(o))
			return true;
	return false;
}

static int enqueue(struct oracle *o, const struct entry *t, int len, int last)
{
	struct prefix p = {malloc(sizeof(int) * (size_t)(len + 1)), len + 1};
	int i;

	if (!p.k)
		return -1;
	for (i = 0; i < len; i++)
		p.k[i] = t[i].k;
	p.k[len] = last;
	if (o->qlen == o->qcap) {
		int cap = o->qcap ? o->qcap * 2 : 64;
		struct prefix *grown = malloc(sizeof(*grown) * (size_t)cap);

		if (!grown) {
			free(p.k);
			return -1;
		}
		for (i = 0; i < o->qlen; i++)
			grown[i] = o->queue[(o->qhead + i) % o->qcap];
		free(o->queue);
		o->queue = grown;
		o->qcap = cap;
		o->qhead = 0;
	}
	o->queue[(o->qhead + o->qlen++) % o->qcap] = p;
	return 0;
}

static bool bfs_next(struct oracle *o)
{
	struct prefix p;
	int i, alt;

	for (i = o->replay_len; i < o->len; i++)
		for (alt = o->trace[i].k + step_of(o, i); alt < o->trace[i].n; alt += step_of(o, i))
			enqueue(o, o->trace, i, alt);
	if (!o->qlen)
		return false;
	p = o->queue[o->qhead];
	o->qhead = (o->qhead + 1) % o->qcap;
	o->qlen--;
	o->len = 0;
	for (i = 0; i < p.len; i++)
		push_entry(o, (struct entry){.k = p.k[i], .n = 0});
	free(p.k);
	return true;
}

/* Strategies that draw every run afresh instead of replaying a prefix. */
static bool is_random(const struct oracle *o)
{
	return o->cfg.kind == STRAT_RANDOM || o->cfg.kind == STRAT_PCT ||
	       o->cfg.kind == STRAT_PCTVB;
}

static void start_run(struct oracle *o)
{
	o->index = 0;
	o->diverged = false;
	o->abandoned = false;
	if (is_random(o)) {
		/* Run r of shard s uses seed + r * nshards + s. */
		o->rng = o->cfg.seed +
			 (uint64_t)(o->run * o->cfg.nshards + o->cfg.shard) * 0x9e3779b97f4a7c15ull;
		o->len = 0;
		if (o->cfg.kind == STRAT_PCT)
			pct_plan(o);
		if (o->cfg.kind == STRAT_PCTVB)
			pctvb_plan(o);
	}
	if (o->cfg.kind == STRAT_VB && o->cfg.param2)
		tb_start_run(o);
	o->replay_len = o->len;
}

static void add_estimate(struct oracle *o)
{
	double product = 1;
	int i;

	for (i = 0; i < o->index && i < o->len; i++)
		if (o->trace[i].n > 0)
			product *= o->trace[i].n;
	o->estimate_sum += product;
	o->estimate_runs++;
}

double oracle_space_estimate(const struct oracle *o)
{
	return o->estimate_runs ? o->estimate_sum / (double)o->estimate_runs : 0;
}

bool oracle_next_run(struct oracle *o)
{
	bool more;

	if (!o->abandoned)
		add_estimate(o);
	o->run++;
	if (o->index > o->max_points)
		o->max_points = o->index;
	/* Entries a shorter run never reached are not part of its trace; but
	 * a run that stopped inside its replayed prefix (it diverged) keeps
	 * the prefix, so that the search moves on to the prefix's next
	 * sibling instead of losing everything after it. */
	if (o->index < o->len && !o->abandoned)
		o->len = o->index > o->replay_len ? o->index : o->replay_len;
	switch (o->cfg.kind) {
	case STRAT_PCTVB:
		pctvb_learn(o);
		more = true;
		break;
	case STRAT_RANDOM:
	case STRAT_PCT:
		more = true;
		break;
	case STRAT_BFS:
		more = bfs_next(o);
		break;
	default:
		more = dfs_backtrack(o);
		break;
	}
	start_run(o);
	return more;
}

char *oracle_trace(const struct oracle *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i;

	if (!f)
		return NULL;
	for (i = 0; i < o->index && i < o->len; i++)
		fprintf(f, "%s%d", i ? "." : "", o->trace[i].abs);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

bool oracle_diverged(const struct oracle *o)
{
	return o->diverged || o->index < o->replay_len;
}
