/*
 * test_blocked.c: threads that a schedule runs into a lock.
 *
 * tests/fixtures/abba takes two locks in opposite orders.  Holding each
 * thread after its first lock and then running them on must end, in
 * milliseconds rather than at the 60 s timeout these schedules set, as a
 * deadlock with both stacks; running only one of them must say which
 * thread is blocked and where; a search must find the deadlock and write a
 * schedule that replays it.  The harness kills anything that runs past 30 s,
 * so a detection that falls back to the timeout fails these tests.
 */
#include "tests/harness.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define ABBA "tests/fixtures/abba"

static struct h_result run_schedule(const char *name, const char *text, const char *extra)
{
	char *path = h_temp_sched(name, text);
	const char *argv[] = {h_cctrace(), "run", extra ? extra : "-q", path, "--", ABBA, NULL};

	return h_run(argv, 30);
}

Test(blocked, deadlock_is_a_bug_with_every_stack)
{
	struct h_result r = run_schedule("deadlock.sched",
					 "timeout 60s\n"
					 "thread A, B = wait 2 distinct enter(take_second)\n"
					 "run A, B until return(take_second)\n",
					 NULL);

	cr_assert(!r.timed_out, "cctrace waited for the timeout:\n%s", r.err);
	cr_expect_eq(r.code, 1, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: bug: deadlock: every thread the schedule controls is "
				"blocked (") != NULL,
		  "%s", r.err);
	cr_expect_eq(h_count_lines(r.err, "  stack of p1.t"), 2, "%s", r.err);
	cr_expect_eq(h_count_lines(r.err, "pthread_mutex_lock+"), 2, "%s", r.err);
	cr_expect(strstr(r.err, "one+") && strstr(r.err, "two+"), "%s", r.err);
	h_result_free(&r);
}

Test(blocked, one_blocked_thread_is_unrealizable_and_named)
{
	struct h_result r = run_schedule("blocked.sched",
					 "timeout 60s\n"
					 "thread A, B = wait 2 distinct enter(take_second)\n"
					 "run A until return(take_second)\n",
					 NULL);

	cr_assert(!r.timed_out, "cctrace waited for the timeout:\n%s", r.err);
	cr_expect_eq(r.code, 2, "%s", r.err);
	cr_expect(strstr(r.err, "is blocked in futex (") != NULL, "%s", r.err);
	cr_expect(strstr(r.err, "a held thread must go first (") != NULL, "%s", r.err);
	h_result_free(&r);
}

Test(blocked, a_schedule_may_accept_blocked_and_go_on)
{
	/* B blocks on the mutex A holds in critical(); A then finishes and
	 * frees it, and B goes on once the schedule ends. */
	char *path = h_temp_sched("accept.sched", "timeout 60s\n"
						  "thread A, B = wait 2 distinct enter(worker)\n"
						  "run A until enter(critical)\n"
						  "run B until enter(critical) || blocked\n"
						  "release A\n");
	const char *argv[] = {
	    h_cctrace(), "run", "--fail-on-exit", path, "--", "tests/fixtures/lockpair", NULL};
	struct h_result r = h_run(argv, 30);

	cr_assert(!r.timed_out, "%s", r.err);
	cr_expect(strstr(r.err, "blocked: blocked in futex") != NULL, "%s", r.err);
	cr_expect(strstr(r.err, "cctrace: completed:") != NULL, "%s", r.err);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "shared 2\n") != NULL, "program output: %s", r.out);
	h_result_free(&r);
}

Test(blocked, search_finds_the_deadlock_and_the_schedule_replays_it)
{
	char dir[] = "/tmp/cctrace-blocked-XXXXXX", *bug, *cmd, *report;
	const char *argv[] = {h_cctrace(), "explore", "tests/schedules/abba-search.sched",
			      "--out",	   dir,	      "--no-minimize",
			      "--",	   ABBA,      NULL};
	struct h_result r;
	int i;

	cr_assert_not_null(mkdtemp(dir));
	r = h_run(argv, 120);
	cr_expect_eq(r.code, 1, "%s", r.err);
	h_result_free(&r);
	bug = h_fmt("%s/bug-1.sched", dir);
	report = h_read_file(h_fmt("%s/bug-1.txt", dir), NULL);
	cr_assert(report && strstr(report, "deadlock") != NULL);
	free(report);
	for (i = 0; i < 10; i++) {
		const char *replay[] = {h_cctrace(), "run", "-q", "--expect", "bug",
					bug,	     "--",  ABBA, NULL};

		r = h_run(replay, 30);
		cr_expect_eq(r.code, 0, "replay %d: %s", i, r.err);
		h_result_free(&r);
	}
	cmd = h_fmt("rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}
