/*
 * test_search_samples.c: the sample bugs are found in the number of runs
 * recorded for each strategy (the table in docs/search.md, printed by
 * tests/search-runs.sh), and what each strategy found replays 10 of 10.
 *
 * dfs, bfs, cb and vb replay fixed traces and are deterministic; random,
 * pct and pctvb are for seed 1.  A change that makes a strategy need more
 * runs (or miss the bug) fails here.  The samples:
 *   samples/bank/withdraw.search  SearchInFunc on the lost update (two
 *                                 preemptions there: cb:1 runs out)
 *   samples/bbuf/take-empty.search SearchInFuncLS with at(FILE:LINE)
 *   samples/bbuf2/take-empty.search CONCURRIT's bounded buffer with ERR1:
 *                                 two preemptions (cb:1 runs out, cb:2 and
 *                                 dfs find it)
 *   tests/schedules/twovars-all.sched a bug on the rarely touched variable
 */
#include "tests/search.h"

#define BANK_SEARCH   "samples/bank/withdraw.search"
#define BANK	      "samples/bank/bank"
#define BBUF_SEARCH   "samples/bbuf/take-empty.search"
#define BBUF	      "samples/bbuf/bbuf"
#define BBUF2_SEARCH  "samples/bbuf2/take-empty.search"
#define BBUF2	      "samples/bbuf2/bbuf2"
#define TWOVARS_SCHED "tests/schedules/twovars-all.sched"
#define TWOVARS	      "tests/fixtures/twovars"

struct expectation {
	const char *strategy;
	long runs; /* to the first bug; with no bug, the runs of the whole search */
	bool found;
	bool replay; /* replay the bug 10 times */
};

static void check_sample(const char *sched, const char *prog, const struct expectation *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct search_result s = search_explore(sched, prog, e[i].strategy, "1", "1000");

		printf("%s: %s %s in run %ld\n", sched, e[i].strategy,
		       s.bugs ? "finds the bug" : "ends without the bug", s.runs);
		cr_expect_eq(s.code, e[i].found ? 1 : 0, "%s on %s: exit %d", e[i].strategy, sched,
			     s.code);
		cr_expect_eq(s.runs, e[i].runs, "%s on %s: %ld runs, recorded %ld", e[i].strategy,
			     sched, s.runs, e[i].runs);
		if (s.bugs) { /* a signal of the program, not a deadlock verdict */
			char *report = h_read_file(h_fmt("%s/bug-1.txt", s.dir), NULL);

			cr_expect(report && strstr(report, " received ") &&
				      !strstr(report, "deadlock"),
				  "%s on %s found something else:\n%s", e[i].strategy, sched,
				  report ? report : "(no report)");
			free(report);
		}
		if (s.bugs && e[i].replay)
			cr_expect_eq(search_replays(&s, prog, 10), 10, "%s's bug on %s",
				     e[i].strategy, sched);
		search_cleanup(&s);
	}
}

#define CHECK(sched, prog, ...)                                                                    \
	do {                                                                                       \
		static const struct expectation e[] = {__VA_ARGS__};                               \
		check_sample(sched, prog, e, sizeof(e) / sizeof(e[0]));                            \
	} while (0)

Test(search_samples, bbuf_within_the_recorded_runs_and_replays)
{
	CHECK(BBUF_SEARCH, BBUF, {"dfs", 6, true, true}, {"bfs", 6, true, true},
	      {"cb:1", 3, true, false}, {"pct:3", 6, true, true}, {"random", 3, true, true});
}

Test(search_samples, bbuf2_needs_two_preemptions)
{
	CHECK(BBUF2_SEARCH, BBUF2, {"cb:0", 6, false, false}, {"cb:1", 36, false, false},
	      {"cb:2", 28, true, true}, {"dfs", 57, true, true}, {"random", 15, true, true});
}

Test(search_samples, bank_within_the_recorded_runs_and_replays)
{
	CHECK(BANK_SEARCH, BANK, {"dfs", 14, true, false}, {"cb:1", 8, false, false},
	      {"cb:2", 10, true, true}, {"pct:3", 78, true, true});
}

Test(search_samples, twovars_within_the_recorded_runs)
{
	CHECK(TWOVARS_SCHED, TWOVARS, {"dfs", 50, true, false}, {"pct:2", 2, true, true},
	      {"vb:2", 91, true, true});
}
