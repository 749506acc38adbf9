/*
 * test_search_samples.c: the samples' search schedules find their bugs
 * within the number of runs recorded for each strategy.
 *
 * samples/bbuf/take-empty.search interleaves the workers of the bounded
 * buffer at the check and the act of try_take (SearchInFuncLS with
 * at(FILE:LINE)).  The counts are deterministic: dfs and bfs replay fixed
 * traces, pct uses seed 1.  A change that makes a strategy need more runs
 * (or miss the bug) fails here; the found schedule must replay 10 of 10.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define BBUF_SEARCH "samples/bbuf/take-empty.search"
#define BBUF	    "samples/bbuf/bbuf"

static long runs_to_bug(const char *strategy, const char *dir)
{
	const char *argv[] = {
	    h_cctrace(),     "explore", BBUF_SEARCH, "--strategy", strategy, "--seed", "1",
	    "--no-minimize", "--json",	"--out",     dir,	   "--",     BBUF,     NULL};
	struct h_result r = h_run(argv, 120);
	const char *runs = strstr(r.out, "\"runs\":"), *bugs = strstr(r.out, "\"bugs\":");
	long n;

	cr_assert_eq(r.code, 1, "%s found no bug:\n%s%s", strategy, r.out, r.err);
	cr_assert(runs && bugs && atol(bugs + 7) == 1, "%s", r.out);
	n = atol(runs + 7);
	printf("bbuf take-empty.search: %s finds the bug in run %ld\n", strategy, n);
	h_result_free(&r);
	return n;
}

Test(search_samples, bbuf_within_the_recorded_runs_and_replays)
{
	static const struct {
		const char *strategy;
		long runs;
	} expected[] = {{"dfs", 6}, {"bfs", 6}, {"cb:1", 3}, {"pct:3", 6}};
	char dir[] = "/tmp/cctrace-bbuf-XXXXXX";
	size_t i;
	int k;

	cr_assert_not_null(mkdtemp(dir));
	for (i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		cr_expect_eq(runs_to_bug(expected[i].strategy, dir), expected[i].runs, "%s",
			     expected[i].strategy);
	for (k = 0; k < 10; k++) {
		const char *replay[] = {h_cctrace(), "run", "-q",
					"--expect",  "bug", h_fmt("%s/bug-1.sched", dir),
					"--",	     BBUF,  NULL};
		struct h_result r = h_run(replay, 30);

		cr_expect_eq(r.code, 0, "replay %d: %s", k, r.err);
		h_result_free(&r);
	}
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}
