/*
 * tests/search.h: running `cctrace explore` to the first bug and replaying
 * what it found, for the search tests (test_vb.c, test_search_samples.c).
 *
 * search_explore() runs one strategy with a fixed seed, without
 * minimisation, into its own directory, and returns the --json summary's
 * counts; search_replays() replays that directory's bug-1.sched with
 * `cctrace run --expect bug` and returns in how many of n runs the bug
 * came back.
 */
#ifndef CCTRACE_TESTS_SEARCH_H
#define CCTRACE_TESTS_SEARCH_H

#include "tests/harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

struct search_result {
	int code; /* explore's exit status: 1 bug, 0 none */
	long runs, bugs, distinct;
	char dir[64];
};

static inline long search_field(const char *json, const char *name)
{
	const char *at = strstr(json, h_fmt("\"%s\":", name));

	cr_assert_not_null(at, "no %s in '%s'", name, json);
	return atol(at + strlen(name) + 3);
}

/* PROG may carry up to three arguments after spaces ("samples/bbuf2/bbuf2 2
 * 2 4"): split in buf, the program first. */
static inline void search_split(char *buf, size_t len, const char *prog, const char *words[5])
{
	int n = 0;
	char *p;

	snprintf(buf, len, "%s", prog);
	memset(words, 0, 5 * sizeof(*words));
	words[n++] = buf;
	for (p = strchr(buf, ' '); p && n < 4; p = strchr(p, ' ')) {
		*p++ = 0;
		words[n++] = p;
	}
}

static inline struct search_result search_explore(const char *sched, const char *prog,
						  const char *strategy, const char *seed,
						  const char *max_runs)
{
	struct search_result s = {0};
	const char *w[5];
	char buf[256];
	struct h_result r;

	search_split(buf, sizeof(buf), prog, w);
	snprintf(s.dir, sizeof(s.dir), "/tmp/cctrace-search-XXXXXX");
	cr_assert_not_null(mkdtemp(s.dir));
	{
		const char *argv[] = {
		    h_cctrace(), "explore", sched,    "--strategy", strategy,
		    "--seed",	 seed,	    "--runs", max_runs,	    "--no-minimize",
		    "--json",	 "--out",   s.dir,    "--",	    w[0],
		    w[1],	 w[2],	    w[3],     NULL};

		r = h_run(argv, 600);
	}
	cr_assert(r.code == 0 || r.code == 1, "%s on %s: exit %d\n%s%s", strategy, sched, r.code,
		  r.out, r.err);
	s.code = r.code;
	s.runs = search_field(r.out, "runs");
	s.bugs = search_field(r.out, "bugs");
	s.distinct = search_field(r.out, "distinct");
	cr_log_info("%s with %s, seed %s: %ld runs, %ld bugs", sched, strategy, seed, s.runs,
		    s.bugs);
	h_result_free(&r);
	return s;
}

static inline int search_replays(const struct search_result *s, const char *prog, int n)
{
	const char *w[5];
	char buf[256];
	int i, good = 0;

	search_split(buf, sizeof(buf), prog, w);
	for (i = 0; i < n; i++) {
		const char *argv[] = {
		    h_cctrace(), "run", "-q", "--expect", "bug", h_fmt("%s/bug-1.sched", s->dir),
		    "--",	 w[0],	w[1], w[2],	  w[3],	 NULL};
		struct h_result r = h_run(argv, 60);

		good += r.code == 0;
		if (r.code != 0)
			cr_log_warn("replay %d of %s/bug-1.sched: exit %d\n%s", i, s->dir, r.code,
				    r.err);
		h_result_free(&r);
	}
	return good;
}

static inline void search_cleanup(const struct search_result *s)
{
	cr_expect_eq(system(h_fmt("rm -rf %s", s->dir)), 0);
}

#endif
