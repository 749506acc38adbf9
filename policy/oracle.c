/*
 * oracle.c: the search strategies behind `cctrace explore`.
 *
 * Every strategy keeps the current run's trace (one entry per choice
 * point: the option taken, how many there were, and for cb the preemptions
 * so far).  Depth-first replays a prefix and extends it with first
 * options; after the run it backtracks to the deepest entry with an option
 * left.  Breadth-first keeps a queue of prefixes instead.  Random and PCT
 * never replay; they draw from a generator seeded per run, so a run is
 * reproducible from its seed.  See oracle.h for what each one means.
 */
#include "policy/oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCT_MAX_IDS 256

struct entry {
	int k, n;
	int cum;	   /* cb: preemptions including this choice */
	bool can_continue; /* cb: the thread that ran last is option 0; any other
			    * option preempts it */
	bool forced;	   /* vb: no preemption allowed here: only option 0 */
};

struct prefix {
	int *k;
	int len;
};

struct oracle {
	struct oracle_config cfg;
	struct entry *trace;
	int len, cap;
	int replay_len; /* entries to replay at the start of the run */
	int index;	/* next entry to use */
	bool diverged;
	bool abandoned;
	/* bfs */
	struct prefix *queue;
	int qhead, qlen, qcap;
	/* random, pct */
	uint64_t rng;
	long run;
	int max_points; /* pct: most choice points seen in a run */
	int change[16]; /* pct: choice-point numbers where priorities drop */
	int nchange;
	int prio[PCT_MAX_IDS];
	int nvars;	     /* vb: watched variables of the schedule */
	uint64_t subset;     /* vb: the variables preemptions may follow */
	double estimate_sum; /* sum over runs of the product of options */
	long estimate_runs;
};

static uint64_t next_random(struct oracle *o)
{
	/* splitmix64: small, fast, good enough for schedules */
	uint64_t z = (o->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int below(struct oracle *o, int n)
{
	return (int)(next_random(o) % (uint64_t)n);
}

int oracle_parse_strategy(const char *text, struct oracle_config *cfg, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		enum strategy kind;
		bool param;
	} table[] = {
	    {"dfs", STRAT_DFS, false}, {"bfs", STRAT_BFS, false}, {"random", STRAT_RANDOM, false},
	    {"pct", STRAT_PCT, true},  {"cb", STRAT_CB, true},	  {"vb", STRAT_VB, true},
	};
	const char *colon = strchr(text, ':');
	size_t len = colon ? (size_t)(colon - text) : strlen(text);
	size_t i;
	char *end;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strlen(table[i].name) != len || strncmp(table[i].name, text, len) != 0)
			continue;
		cfg->kind = table[i].kind;
		cfg->param = 0;
		if (!table[i].param && !colon)
			return 0;
		if (table[i].param && colon) {
			cfg->param = (int)strtol(colon + 1, &end, 10);
			if (*end == 0 &&
			    cfg->param >=
				(cfg->kind == STRAT_PCT || cfg->kind == STRAT_VB ? 1 : 0) &&
			    cfg->param <= 16)
				return 0;
		}
		snprintf(err, errlen, "strategy '%s' %s", text,
			 table[i].param ? "needs a number from 0 to 16, e.g. pct:3, cb:2 or vb:1"
					: "takes no parameter");
		return -1;
	}
	snprintf(err, errlen, "unknown strategy '%s': use dfs, bfs, random, pct:D, cb:N or vb:V",
		 text);
	return -1;
}

const char *oracle_strategy_name(const struct oracle_config *cfg, char *buf, size_t len)
{
	static const char *const names[] = {"dfs", "bfs", "random", "pct", "cb", "vb"};

	if (cfg->kind == STRAT_PCT || cfg->kind == STRAT_CB || cfg->kind == STRAT_VB)
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

	if (o->cfg.nshards == 1 || o->trace[at].n < 2 || o->trace[at].forced)
		return false;
	for (i = 0; i < at; i++)
		if (o->trace[i].n > 1 && !o->trace[i].forced)
			return false;
	return true;
}

/* --- random and pct --- */

static void pct_plan(struct oracle *o)
{
	int i, points = o->max_points > 0 ? o->max_points : 1;

	memset(o->prio, 0, sizeof(o->prio));
	o->nchange = o->cfg.param - 1 < 16 ? o->cfg.param - 1 : 16;
	for (i = 0; i < o->nchange; i++)
		o->change[i] = 1 + below(o, points);
}

static int *pct_prio(struct oracle *o, const int *ids, int i)
{
	int *p = &o->prio[ids ? ids[i] % PCT_MAX_IDS : i];

	if (!*p) /* first sight: a random priority above every change point */
		*p = o->cfg.param + 1 + below(o, 1 << 20);
	return p;
}

static int pct_highest(struct oracle *o, int n, const int *ids)
{
	int i, best = 0;

	for (i = 1; i < n; i++)
		if (*pct_prio(o, ids, i) > *pct_prio(o, ids, best))
			best = i;
	return best;
}

static int pct_choose(struct oracle *o, int n, const int *ids)
{
	int i, point = o->index + 1;

	for (i = 0; i < o->nchange; i++)
		if (o->change[i] == point) /* the thread that would run drops low */
			*pct_prio(o, ids, pct_highest(o, n, ids)) = i + 1;
	return pct_highest(o, n, ids);
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

/* cb bounds preemptions by its parameter; vb by the size of its set (a
 * bug of v variables needs at least v preemptions, 004 section 2, and the
 * search tries the fewest first). */
static bool counts_preemptions(const struct oracle *o)
{
	return o->cfg.kind == STRAT_CB || o->cfg.kind == STRAT_VB;
}

static int preemption_bound(const struct oracle *o)
{
	return o->cfg.kind == STRAT_VB ? __builtin_popcountll(o->subset) : o->cfg.param;
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

void oracle_set_variables(struct oracle *o, int n)
{
	o->nvars = n < 64 ? n : 64;
	o->subset = o->nvars ? 1 : 0; /* the first set of one variable */
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

int oracle_choose(struct oracle *o, int n, const int *ids, int current, int current_var)
{
	struct entry e = {.n = n};
	int k;

	if (o->abandoned || n <= 0)
		return ORACLE_ABANDON;
	if (o->cfg.kind == STRAT_RANDOM || o->cfg.kind == STRAT_PCT) {
		k = o->cfg.kind == STRAT_RANDOM ? below(o, n) : pct_choose(o, n, ids);
		e.k = k;
		push_entry(o, e);
		o->index++;
		return k;
	}
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
		k = r->k;
	} else {
		e.can_continue = continues(ids, n, current);
		/* vb: going on is the only choice unless the thread that ran
		 * last just touched a variable of the set. */
		e.forced =
		    o->cfg.kind == STRAT_VB && e.can_continue &&
		    !(current_var >= 0 && current_var < 64 && (o->subset >> current_var & 1));
		if (push_entry(o, e) < 0)
			return ORACLE_ABANDON;
		if (first_option(o, &o->trace[o->len - 1]) < 0) {
			o->len--;
			o->abandoned = true;
			return ORACLE_ABANDON;
		}
		o->index++;
		k = o->trace[o->len - 1].k;
	}
	if (o->cfg.kind == STRAT_CB || o->cfg.kind == STRAT_VB)
		k = cb_option(ids, n, current, k);
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
	/* vb: this set is done; start over with the next one. */
	if (o->cfg.kind == STRAT_VB && next_subset(o)) {
		o->len = 0;
		return true;
	}
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

static void start_run(struct oracle *o)
{
	o->index = 0;
	o->diverged = false;
	o->abandoned = false;
	if (o->cfg.kind == STRAT_RANDOM || o->cfg.kind == STRAT_PCT) {
		/* Run r of shard s uses seed + r * nshards + s. */
		o->rng = o->cfg.seed +
			 (uint64_t)(o->run * o->cfg.nshards + o->cfg.shard) * 0x9e3779b97f4a7c15ull;
		o->len = 0;
		if (o->cfg.kind == STRAT_PCT)
			pct_plan(o);
	}
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

void oracle_trace(const struct oracle *o, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < o->index && i < o->len && used + 12 < len; i++)
		used +=
		    (size_t)snprintf(buf + used, len - used, "%s%d", i ? "." : "", o->trace[i].k);
}

bool oracle_diverged(const struct oracle *o)
{
	return o->diverged || o->index < o->replay_len;
}
