/*
 * test_vb.c: variable bounding (004, section 2) as `explore --strategy vb:V`.
 *
 * tests/fixtures/twovars touches hot six times and cold once per thread,
 * with a lost update on cold.  vb:1 tries preemptions after accesses to
 * {hot} alone (never the bug), then to {cold} alone, where it finds it;
 * with a preemption bound of one per variable set, the whole search is 20
 * runs.  Without watched variables vb has nothing to preempt at: the
 * interleave fixture gives exactly the two runs of no preemption.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static long json_field(const char *json, const char *name)
{
	const char *at = strstr(json, h_fmt("\"%s\":", name));

	cr_assert_not_null(at, "no %s in %s", name, json);
	return atol(at + strlen(name) + 3);
}

static struct h_result explore(const char *sched, const char *prog, const char *dir, bool all)
{
	const char *argv[] = {h_cctrace(), "explore",
			      sched,	   "--strategy",
			      "vb:1",	   "--no-minimize",
			      "--json",	   "--out",
			      dir,	   all ? "--all" : "--json",
			      "--",	   prog,
			      NULL};

	return h_run(argv, 240);
}

Test(vb, finds_the_bug_in_the_second_variable_set_and_replays_it)
{
	char dir[] = "/tmp/cctrace-vb-XXXXXX";
	struct h_result r;
	int i;

	cr_assert_not_null(mkdtemp(dir));
	r = explore("tests/schedules/twovars-all.sched", "tests/fixtures/twovars", dir, false);
	cr_assert_eq(r.code, 1, "%s%s", r.out, r.err);
	cr_expect_eq(json_field(r.out, "runs"), 17, "%s", r.out);
	h_result_free(&r);
	for (i = 0; i < 10; i++) {
		const char *replay[] = {h_cctrace(), "run",
					"-q",	     "--expect",
					"bug",	     h_fmt("%s/bug-1.sched", dir),
					"--",	     "tests/fixtures/twovars",
					NULL};

		r = h_run(replay, 30);
		cr_expect_eq(r.code, 0, "replay %d: %s", i, r.err);
		h_result_free(&r);
	}
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

Test(vb, the_whole_vb1_search_is_small)
{
	char dir[] = "/tmp/cctrace-vb-XXXXXX";
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	r = explore("tests/schedules/twovars-all.sched", "tests/fixtures/twovars", dir, true);
	cr_expect_eq(json_field(r.out, "runs"), 20, "%s", r.out);
	cr_expect_eq(json_field(r.out, "bugs"), 2, "%s", r.out);
	h_result_free(&r);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}

Test(vb, nothing_watched_means_no_preemption)
{
	char dir[] = "/tmp/cctrace-vb-XXXXXX";
	struct h_result r;

	cr_assert_not_null(mkdtemp(dir));
	r = explore("tests/schedules/interleave-all.sched", "tests/fixtures/interleave", dir,
		    false);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect_eq(json_field(r.out, "runs"), 2, "%s", r.out);
	h_result_free(&r);
	cr_expect_eq(system(h_fmt("rm -rf %s", dir)), 0);
}
