/*
 * tests/search-diff/driver.c: two versions of the search, driven in
 * lockstep over synthetic programs, must give the same answers.
 *
 * A synthetic program has 2 to 4 threads of 1 to 4 steps; each step may
 * touch one of the watched variables.  At every choice point the options
 * are the threads that have not ended, in order, with their stable ids;
 * `current` is the thread that ran last if it is an option and
 * `current_var` the variable its last step touched, as policy/choose.c
 * passes them.  Some programs also make choices among values between
 * thread choices, and some are nondeterministic: at a choice point a
 * thread may be missing (blocked), or the run may end early (it crashed),
 * from a generator seeded by the program and the run, so both versions see
 * the same program.  For every strategy, seed, shard and program, every
 * answer, every run's trace, the diverged flag, whether there is another
 * run and the space estimate must be equal, run after run, until the
 * search ends or MAX_RUNS.  The strategies' names and parse errors must be
 * equal too.  Exit 1 at the first difference, with where it was.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECLARE(side)                                                                              \
	int side##parse(const char *, char *, size_t, char *, size_t);                             \
	void *side##make(const char *, uint64_t, int, int, int);                                   \
	void side##free(void *);                                                                   \
	int side##choose(void *, int, const int *, int, int);                                      \
	bool side##next_run(void *);                                                               \
	void side##trace(void *, char *, size_t);                                                  \
	bool side##diverged(void *);                                                               \
	double side##estimate(void *);
DECLARE(old_)
DECLARE(new_)

#define MAXT	 4
#define MAXL	 4
#define MAX_RUNS 300

struct program {
	int nthreads, len[MAXT], var[MAXT][MAXL], id[MAXT];
	int nvars;
	int value_every; /* a value choice before every value_every-th point; 0: none */
	int noise;	 /* per mille, per choice point */
	uint64_t seed;
};

struct config {
	const char *strategy;
	uint64_t seed;
	int shard, nshards;
	const struct program *p;
};

static long g_choices, g_runs, g_old_out_of_range;

static uint64_t mix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int below(uint64_t *x, int n)
{
	return (int)(mix(x) % (uint64_t)n);
}

static void program_make(struct program *p, uint64_t *g)
{
	int t, s;

	memset(p, 0, sizeof(*p));
	p->nthreads = 2 + below(g, 3);
	p->nvars = below(g, 4);
	p->value_every = below(g, 3) == 0 ? 2 + below(g, 3) : 0;
	p->noise = below(g, 4) == 0 ? 30 + below(g, 100) : 0;
	p->seed = mix(g);
	for (t = 0; t < p->nthreads; t++) {
		p->len[t] = 1 + below(g, MAXL);
		p->id[t] = below(g, 2) ? t : 3 * t + 1;
		for (s = 0; s < p->len[t]; s++)
			p->var[t][s] = p->nvars && below(g, 3) ? below(g, p->nvars) : -1;
	}
}

static void fail(const struct config *c, long run, int point, const char *what, const char *o,
		 const char *n)
{
	printf("DIFFERENT: %s seed %" PRIu64 " shard %d/%d, program seed %" PRIu64
	       " (%d threads, %d vars, values %d, noise %d), run %ld, point %d: %s: old %s, new "
	       "%s\n",
	       c->strategy, c->seed, c->shard + 1, c->nshards, c->p->seed, c->p->nthreads,
	       c->p->nvars, c->p->value_every, c->p->noise, run, point, what, o, n);
	exit(1);
}

static void same_int(const struct config *c, long run, int point, const char *what, long o, long n)
{
	char a[32], b[32];

	if (o == n)
		return;
	snprintf(a, sizeof(a), "%ld", o);
	snprintf(b, sizeof(b), "%ld", n);
	fail(c, run, point, what, a, b);
}

/* Both versions answer one choice point; -1: the run was abandoned. */
static int ask(const struct config *c, void *o, void *n, long run, int point, int nopt,
	       const int *ids, int current, int var)
{
	int ko = old_choose(o, nopt, ids, current, var),
	    kn = new_choose(n, nopt, ids, current, var);

	g_choices++;
	if (ko >= nopt && kn == nopt - 1 && strcmp(c->strategy, "bfs") == 0) {
		/* The old bfs replayed a queued option beyond a smaller count
		 * (policy/choose.c then read past its options); the new one
		 * takes the last option and calls the run diverged.  Nothing
		 * after this is comparable. */
		g_old_out_of_range++;
		return -2;
	}
	same_int(c, run, point, "option", ko, kn);
	if (kn < -1 || kn >= nopt)
		fail(c, run, point, "option out of range", "", "");
	return ko;
}

/* One run of the program under both searches; -1 if they can no longer
 * be compared. */
static int one_run(const struct config *c, void *o, void *n, long run)
{
	const struct program *p = c->p;
	uint64_t noise = p->seed ^ (uint64_t)(run + 1) * 0xd1b54a32d192ed03ull;
	int pos[MAXT] = {0}, last = -1, lastvar = -1, point, t;

	for (point = 0;; point++) {
		int opts[MAXT], ids[MAXT], nopt = 0, current = -1, k;

		for (t = 0; t < p->nthreads; t++)
			if (pos[t] < p->len[t]) {
				opts[nopt] = t;
				ids[nopt++] = p->id[t];
			}
		if (!nopt)
			return 0;
		if (p->noise && below(&noise, 1000) < p->noise) {
			if (below(&noise, 2))
				return 0; /* the program crashed */
			if (nopt > 1) {	  /* a thread is blocked here */
				int gone = below(&noise, nopt);

				memmove(opts + gone, opts + gone + 1,
					sizeof(int) * (size_t)(nopt - gone - 1));
				memmove(ids + gone, ids + gone + 1,
					sizeof(int) * (size_t)(nopt - gone - 1));
				nopt--;
			}
		}
		if (p->value_every && point % p->value_every == p->value_every - 1) {
			k = ask(c, o, n, run, point, 1 + point % 4, NULL, -1, -1);
			if (k < 0)
				return k == -1 ? 0 : -1;
		}
		for (t = 0; t < nopt; t++)
			if (opts[t] == last)
				current = ids[t];
		k = ask(c, o, n, run, point, nopt, ids, current, lastvar);
		if (k < 0)
			return k == -1 ? 0 : -1;
		last = opts[k];
		lastvar = p->var[last][pos[last]++];
	}
}

static void search_both(const struct config *c)
{
	void *o = old_make(c->strategy, c->seed, c->shard, c->nshards, c->p->nvars);
	void *n = new_make(c->strategy, c->seed, c->shard, c->nshards, c->p->nvars);
	char to[4096], tn[4096];
	long run;

	if (!o || !n)
		fail(c, 0, 0, "make", o ? "ok" : "NULL", n ? "ok" : "NULL");
	for (run = 0; run < MAX_RUNS; run++) {
		bool mo, mn;
		double eo, en;

		if (one_run(c, o, n, run) < 0)
			break;
		old_trace(o, to, sizeof(to));
		new_trace(n, tn, sizeof(tn));
		if (strcmp(to, tn) != 0)
			fail(c, run, -1, "trace", to, tn);
		same_int(c, run, -1, "diverged", old_diverged(o), new_diverged(n));
		mo = old_next_run(o);
		mn = new_next_run(n);
		g_runs++;
		same_int(c, run, -1, "another run", mo, mn);
		eo = old_estimate(o);
		en = new_estimate(n);
		if (eo != en) {
			snprintf(to, sizeof(to), "%.17g", eo);
			snprintf(tn, sizeof(tn), "%.17g", en);
			fail(c, run, -1, "space estimate", to, tn);
		}
		if (!mo)
			break;
	}
	old_free(o);
	new_free(n);
}

static void same_parse(const char *text)
{
	char no[64] = "", nn[64] = "", eo[256] = "", en[256] = "";
	int ro = old_parse(text, no, sizeof(no), eo, sizeof(eo));
	int rn = new_parse(text, nn, sizeof(nn), en, sizeof(en));

	if (ro != rn || strcmp(no, nn) != 0 || strcmp(eo, en) != 0) {
		printf("DIFFERENT: parse '%s': old %d '%s' '%s', new %d '%s' '%s'\n", text, ro, no,
		       eo, rn, nn, en);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const char *const texts[] = {
	    "dfs",	  "bfs",   "random",   "pct:1",	    "pct:3",	 "pct:16",  "pct:17",
	    "pct:0",	  "pct",   "pct:3:1",  "cb:0",	    "cb:2",	 "cb:16",   "cb:-1",
	    "cb",	  "vb:1",  "vb:2",     "vb:1:2",    "vb:2:3",	 "vb:1:1",  "vb:1:0",
	    "vb:0",	  "vb:1:", "vb:1:2:3", "pctvb:2:1", "pctvb:3:1", "pctvb:2", "pctvb:2:0",
	    "pctvb:1:16", "dfs:1", "random:",  "nope",	    "",		 "pct:3x",  "DFS",
	    "pct: 3",	  "cb:+2", "vb:16:16",
	};
	static const char *const strategies[] = {
	    "dfs",  "bfs",  "random", "pct:1",	"pct:2",  "pct:3",     "cb:0",	    "cb:1",
	    "cb:2", "vb:1", "vb:2",   "vb:1:2", "vb:2:3", "pctvb:2:1", "pctvb:3:2",
	};
	static const uint64_t seeds[] = {1, 7};
	static const int shards[][2] = {{0, 1}, {1, 3}, {0, 2}};
	int nprograms = argc > 1 ? atoi(argv[1]) : 60, i, s, e, h;
	long configs = 0;
	uint64_t g = 42;

	for (i = 0; i < (int)(sizeof(texts) / sizeof(texts[0])); i++)
		same_parse(texts[i]);
	for (i = 0; i < nprograms; i++) {
		struct program p;

		program_make(&p, &g);
		for (s = 0; s < (int)(sizeof(strategies) / sizeof(strategies[0])); s++)
			for (e = 0; e < 2; e++)
				for (h = 0; h < 3; h++) {
					struct config c = {strategies[s], seeds[e], shards[h][0],
							   shards[h][1], &p};

					search_both(&c);
					configs++;
				}
	}
	printf("same: %zu strategy texts, %ld searches over %d programs, %ld runs, %ld "
	       "choices; %ld searches cut short where the old bfs answered out of range\n",
	       sizeof(texts) / sizeof(texts[0]), configs, nprograms, g_runs, g_choices,
	       g_old_out_of_range);
	return 0;
}
